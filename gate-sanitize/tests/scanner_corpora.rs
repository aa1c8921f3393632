//! Other scanners' credentials, measured the way a model would meet them:
//! inside an upstream error body that a tool passes on. Each case is put in
//! three bodies (plain text, a JSON error, a multi-line log) and sanitized;
//! a positive counts as removed only when no secret of it is left in any of
//! the three, a negative counts as kept when its bodies come back
//! unchanged. The corpora (see `tests/corpus/PROVENANCE.md`):
//!
//! - secretlint's rule snapshots (`corpus/credentials/secretlint.jsonl`):
//!   the held-out measure, since gate vendors none of secretlint's rules;
//!   its secrets are the ranges secretlint reports.
//! - Kingfisher's rule examples (`data/kingfisher/rules.json`): its
//!   secrets are found with Kingfisher's own pattern, never with gate's
//!   rules (a group that only names whose credential it is, a username or
//!   a host, is not a secret: see [`IDENTIFIER_KEYS`]). gate vendors these
//!   rules, so this is a development figure, no longer a held-out one.
//! - Yelp's detect-secrets plugin tests (`corpus/credentials/detect_secrets.jsonl`)
//!   and the vendored sets' own negatives: kept or not.
//!
//! The rates are figures, not a pass/fail list: the floors below are what
//! the sanitizer reaches today, to be raised as it improves.
//! `FIGURES_VERBOSE=1` prints every miss.

use regex::bytes::{Regex, RegexBuilder};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::OnceLock;
use toolgate_sanitize::{Category, Sanitizer};

/// The least share of usable Kingfisher positives removed in all three
/// bodies. The goal is 95%; this floor sits a few points below today's
/// figure, so a regression fails and an improvement should raise it.
const KINGFISHER_REMOVED_FLOOR: f64 = 0.90;

/// The least number of Kingfisher positives the measure may rest on, so an
/// empty or unreadable corpus cannot pass.
const KINGFISHER_MIN_USABLE: usize = 500;

/// The least share of detect-secrets negatives kept unchanged in all three
/// bodies. The goal is 80%; this floor sits a bit below today's figure.
const DETECT_SECRETS_KEPT_FLOOR: f64 = 0.60;

/// Secrets shorter than this many bytes are not looked for in the output:
/// a short capture (a region, a port) also occurs in benign text.
const MIN_SECRET_LEN: usize = 6;

/// How many characters of an example a verbose miss line shows.
const SHOWN_CHARS: usize = 200;

/// The ways a tool's error carries an upstream body.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// One line of text: `upstream returned 502 Bad Gateway: BODY`.
    Plain,
    /// A JSON error object with the body as an escaped string field.
    Json,
    /// A multi-line log excerpt with the body between two markers.
    Log,
}

/// Every shape, in the order the figures are printed.
const SHAPES: [Shape; 3] = [Shape::Plain, Shape::Json, Shape::Log];

impl Shape {
    /// `body` as a tool's error would carry it in this shape.
    fn wrap(self, body: &str) -> String {
        match self {
            Shape::Plain => format!("upstream returned 502 Bad Gateway: {body}"),
            Shape::Json => format!(
                r#"{{"error":{{"code":500,"message":"config rejected","detail":{}}}}}"#,
                json_string(body)
            ),
            Shape::Log => format!("ERROR request failed\n--- response body ---\n{body}\n--- end ---"),
        }
    }

    /// Whether `secret` is still in `output`, a sanitized body of this
    /// shape: as it is, or (in JSON) as its escaped form.
    fn leaks(self, output: &str, secret: &str) -> bool {
        if output.contains(secret) {
            return true;
        }
        match self {
            Shape::Json => {
                let quoted = json_string(secret);
                output.contains(&quoted[1..quoted.len() - 1])
            }
            Shape::Plain | Shape::Log => false,
        }
    }
}

/// `text` as a JSON string literal, quotes included.
fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

/// The sanitizer under measure, built once: every built-in rule and no
/// length cap, so truncation never passes for removal.
fn sanitizer() -> &'static Sanitizer {
    static S: OnceLock<Sanitizer> = OnceLock::new();
    S.get_or_init(|| {
        Sanitizer::builder()
            .max_len(usize::MAX)
            .build()
            .expect("the default configuration builds")
    })
}

/// Whether `FIGURES_VERBOSE=1` asks for every miss.
fn verbose() -> bool {
    std::env::var_os("FIGURES_VERBOSE").is_some_and(|v| v == "1")
}

/// The first [`SHOWN_CHARS`] characters of `text`, quoted on one line.
fn shown(text: &str) -> String {
    let cut: String = text.chars().take(SHOWN_CHARS).collect();
    format!("{cut:?}")
}

/// `pattern` compiled as Kingfisher compiles a rule (`RuleSyntax::as_regex`
/// in its `src/rules/rule.rs`): its `(?#...)` and trailing `# words`
/// comments stripped, over bytes, without Unicode classes, with a 16 MiB
/// size limit.
fn kingfisher_regex(pattern: &str) -> Result<Regex, regex::Error> {
    static COMMENTS: OnceLock<regex::Regex> = OnceLock::new();
    let comments =
        COMMENTS.get_or_init(|| regex::Regex::new(r"(?m)(\(\?#[^)]*\))|(\s\#[\sa-zA-Z]*$)").expect("comments pattern"));
    RegexBuilder::new(&comments.replace_all(pattern, ""))
        .unicode(false)
        .size_limit(16 << 20)
        .build()
}

/// The secrets `re` finds in `text`: the non-empty capture groups of every
/// match (the whole match when the pattern has no group), of at least
/// [`MIN_SECRET_LEN`] bytes. A capture that cuts a character is narrowed to
/// the whole characters inside it, so a leak of it is still seen.
fn secrets<'t>(re: &Regex, text: &'t str) -> Vec<&'t str> {
    let mut found = Vec::new();
    for caps in re.captures_iter(text.as_bytes()) {
        let groups: Vec<_> = if caps.len() > 1 {
            caps.iter().skip(1).flatten().collect()
        } else {
            caps.get(0).into_iter().collect()
        };
        for m in groups {
            let (mut start, mut end) = (m.start(), m.end());
            while start < end && !text.is_char_boundary(start) {
                start += 1;
            }
            while end > start && !text.is_char_boundary(end) {
                end -= 1;
            }
            if end - start >= MIN_SECRET_LEN && !names_whose(&text[..start]) {
                found.push(&text[start..end]);
            }
        }
    }
    found
}

/// Words after which a captured group says whose credential it is (a
/// username, a login, a host, an account or client id) rather than being
/// it: gate keeps those, as it keeps a URL's user and host, so they are not
/// looked for in the output.
const IDENTIFIER_KEYS: &[&str] = &[
    "user",
    "username",
    "user id",
    "userid",
    "user_id",
    "uid",
    "login",
    "machine",
    "host",
    "hostname",
    "server",
    "accountname",
    "account",
    "client_id",
    "clientid",
    "client id",
    "-u",
    "-user",
    "@",
    "://",
];

/// Whether the text before a group ends with an identifier's key, give
/// or take the quotes and `=`/`:` between them.
fn names_whose(before: &str) -> bool {
    // `user:secret`, as in a URL: what follows the colon is the password.
    if before.ends_with(':') && before[..before.len() - 1].ends_with(|c: char| c.is_ascii_alphanumeric()) {
        return false;
    }
    let tail = before.trim_end_matches(|c: char| c.is_whitespace() || "\"'=:>(,".contains(c));
    let tail = tail.to_ascii_lowercase();
    IDENTIFIER_KEYS.iter().any(|k| {
        tail.ends_with(k)
            && tail[..tail.len() - k.len()]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric() || k.starts_with(['@', ':', '-']))
    })
}

/// Cases counted shape by shape and in all shapes at once.
#[derive(Default)]
struct Tally {
    /// Cases measured.
    total: usize,
    /// Cases that passed, per shape of [`SHAPES`].
    per_shape: [usize; 3],
    /// Cases that passed in every shape.
    all: usize,
}

impl Tally {
    /// Counts one case from whether it passed in each shape.
    fn add(&mut self, passed: [bool; 3]) {
        self.total += 1;
        for (n, p) in self.per_shape.iter_mut().zip(passed) {
            *n += usize::from(p);
        }
        self.all += usize::from(passed.iter().all(|&p| p));
    }

    /// The share of cases that passed in every shape.
    fn rate(&self) -> f64 {
        self.all as f64 / self.total.max(1) as f64
    }

    /// Prints the counts, `what` naming what passing means.
    fn print(&self, corpus: &str, what: &str) {
        let pct = |n: usize| 100.0 * n as f64 / self.total.max(1) as f64;
        println!(
            "{corpus}: {} of {} {what} in all shapes ({:.1}%)",
            self.all,
            self.total,
            pct(self.all)
        );
        for (shape, &n) in SHAPES.iter().zip(&self.per_shape) {
            println!("  {shape:?}: {n} ({:.1}%)", pct(n));
        }
    }
}

/// The shapes of [`SHAPES`] for which `flags` is true.
fn shapes_where(flags: [bool; 3]) -> Vec<Shape> {
    SHAPES
        .into_iter()
        .zip(flags)
        .filter(|&(_, f)| f)
        .map(|(s, _)| s)
        .collect()
}

/// The shapes in which `text` did not come back unchanged.
fn changed_shapes(text: &str) -> [bool; 3] {
    SHAPES.map(|shape| {
        let body = shape.wrap(text);
        sanitizer().sanitize(&body).text != body
    })
}

#[test]
fn the_shapes_alone_pass_unchanged() {
    // Otherwise a negative would be counted as changed for the wrapper.
    assert_eq!(changed_shapes("ok"), [false; 3]);
}

#[test]
fn kingfisher_examples_in_error_bodies() {
    let mut patterns: HashMap<&str, Option<Regex>> = HashMap::new();
    let (mut positives, mut negatives) = (Tally::default(), Tally::default());
    let (mut no_compile, mut no_match, mut too_short) = (0, 0, 0);
    let data: Value = serde_json::from_str(include_str!("../data/kingfisher/rules.json")).expect("rules parse");
    let corpus = data["rules"].as_array().expect("rules").iter().flat_map(|r| {
        [("examples", true), ("negative_examples", false)]
            .into_iter()
            .flat_map(move |(key, positive)| {
                r[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(move |t| (r, t, positive))
            })
    });
    for (v, text, positive) in corpus {
        let rule = v["id"].as_str().expect("id");
        if !positive {
            let changed = changed_shapes(text);
            negatives.add(changed.map(|c| !c));
            if verbose() && changed.iter().any(|&c| c) {
                println!(
                    "changed negative {rule} in {:?}: {}",
                    shapes_where(changed),
                    shown(text)
                );
            }
            continue;
        }
        let pattern = v["pattern"].as_str().expect("pattern");
        let compiled = patterns.entry(pattern).or_insert_with(|| {
            kingfisher_regex(pattern)
                .inspect_err(|e| {
                    if verbose() {
                        println!("unusable {rule}: {}", shown(&e.to_string()));
                    }
                })
                .ok()
        });
        let Some(re) = compiled else {
            no_compile += 1;
            continue;
        };
        let found = secrets(re, text);
        if found.is_empty() {
            if verbose() {
                println!("unusable {rule}: no secret in {}", shown(text));
            }
            if re.is_match(text.as_bytes()) {
                too_short += 1;
            } else {
                no_match += 1;
            }
            continue;
        }
        let removed = SHAPES.map(|shape| {
            let out = sanitizer().sanitize(&shape.wrap(text)).text;
            !found.iter().any(|s| shape.leaks(&out, s))
        });
        positives.add(removed);
        if verbose() && !removed.iter().all(|&r| r) {
            println!(
                "missed {rule} in {:?}: {}",
                shapes_where(removed.map(|r| !r)),
                shown(text)
            );
        }
    }
    positives.print("kingfisher positives", "removed");
    negatives.print("kingfisher negatives", "kept");
    println!(
        "kingfisher negatives kept in plain text: {} of {}",
        negatives.per_shape[0], negatives.total
    );
    println!(
        "kingfisher unusable positives: {} (pattern does not compile: {no_compile}, \
         does not match its example: {no_match}, no capture of {MIN_SECRET_LEN}+ bytes: {too_short})",
        no_compile + no_match + too_short
    );
    assert!(
        positives.total >= KINGFISHER_MIN_USABLE,
        "only {} usable positives",
        positives.total
    );
    assert!(
        positives.rate() >= KINGFISHER_REMOVED_FLOOR,
        "{:.3} removed, below the floor {KINGFISHER_REMOVED_FLOOR}",
        positives.rate()
    );
}

/// The least share of secretlint's reported credentials removed in all
/// three bodies: the held-out measure, since gate vendors none of
/// secretlint's rules. The goal is 95%; this floor sits a few points below
/// today's figure.
const SECRETLINT_REMOVED_FLOOR: f64 = 0.79;

/// The least share of the lines of secretlint's passing cases that get no
/// credential finding in any of the three bodies. The goal is 80%; this
/// floor sits a few points below today's figure. (Kept whole, the share is
/// lower: an internal host such as `localhost:27017` is still removed, and
/// so is long prose quoted in a JSON body.)
const SECRETLINT_KEPT_FLOOR: f64 = 0.87;

/// What must be gone from the output for a credential secretlint reports
/// (`reported`) to count as removed: the password of a URL that carries
/// one, between its `:` and `@` (gate keeps the scheme, user and host),
/// every line of a multi-line report but its armour (`-----BEGIN …`) and
/// short ones, else the whole report.
fn secretlint_secrets(reported: &str) -> Vec<String> {
    if let Some((_, rest)) = reported.split_once("://")
        && let Some((userinfo, _)) = rest.rsplit_once('@')
        && let Some((_, password)) = userinfo.split_once(':')
    {
        return vec![format!(":{password}@")];
    }
    if reported.contains('\n') {
        return reported
            .lines()
            .map(str::trim)
            .filter(|l| l.len() >= 16 && !l.starts_with("-----"))
            .map(str::to_owned)
            .collect();
    }
    vec![reported.to_owned()]
}

#[test]
fn secretlint_cases_in_error_bodies() {
    let (mut positives, mut negatives, mut no_secret) = (Tally::default(), Tally::default(), Tally::default());
    for line in include_str!("corpus/credentials/secretlint.jsonl").lines() {
        let v: Value = serde_json::from_str(line).expect("JSON lines");
        let (rule, text) = (v["rule"].as_str().expect("rule"), v["text"].as_str().expect("text"));
        let reported: Vec<&str> = v["secrets"]
            .as_array()
            .expect("secrets")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if reported.is_empty() {
            let changed = changed_shapes(text);
            negatives.add(changed.map(|c| !c));
            no_secret.add(SHAPES.map(|shape| {
                let out = sanitizer().sanitize(&shape.wrap(text));
                !out.findings.iter().any(|f| f.category == Category::Secret)
            }));
            if verbose() && changed.iter().any(|&c| c) {
                println!(
                    "changed secretlint negative {rule} in {:?}: {}",
                    shapes_where(changed),
                    shown(text)
                );
            }
            continue;
        }
        let outputs = SHAPES.map(|shape| sanitizer().sanitize(&shape.wrap(text)).text);
        for r in reported {
            let parts = secretlint_secrets(r);
            let removed = std::array::from_fn(|i| !parts.iter().any(|p| SHAPES[i].leaks(&outputs[i], p)));
            positives.add(removed);
            if verbose() && !removed.iter().all(|&r| r) {
                println!(
                    "missed secretlint {rule} in {:?}: {}",
                    shapes_where(removed.map(|r| !r)),
                    shown(r)
                );
            }
        }
    }
    positives.print("secretlint positives", "removed");
    negatives.print("secretlint negatives", "kept");
    // What else changed them is not a credential finding: an internal
    // host (`localhost:27017`), long prose quoted in JSON.
    no_secret.print("secretlint negatives", "without a credential finding");
    assert!(positives.total >= 100, "only {} positives", positives.total);
    assert!(negatives.total >= 200, "only {} negatives", negatives.total);
    assert!(
        positives.rate() >= SECRETLINT_REMOVED_FLOOR,
        "{:.3} removed, below the floor {SECRETLINT_REMOVED_FLOOR}",
        positives.rate()
    );
    assert!(
        no_secret.rate() >= SECRETLINT_KEPT_FLOOR,
        "{:.3} without a credential finding, below the floor {SECRETLINT_KEPT_FLOOR}",
        no_secret.rate()
    );
}

#[test]
fn detect_secrets_negatives_in_error_bodies() {
    let mut kept = Tally::default();
    for line in include_str!("corpus/credentials/detect_secrets.jsonl").lines() {
        let v: Value = serde_json::from_str(line).expect("JSON lines");
        if v["secret"] != Value::Bool(false) || v["plugin"] == "ip_public" {
            continue;
        }
        let text = v["text"].as_str().expect("text");
        let changed = changed_shapes(text);
        kept.add(changed.map(|c| !c));
        if verbose() && changed.iter().any(|&c| c) {
            println!(
                "changed negative {} in {:?}: {}",
                v["plugin"],
                shapes_where(changed),
                shown(text)
            );
        }
    }
    kept.print("detect-secrets negatives", "kept");
    assert!(kept.total >= 40, "only {} negatives", kept.total);
    assert!(
        kept.rate() >= DETECT_SECRETS_KEPT_FLOOR,
        "{:.3} kept, below the floor {DETECT_SECRETS_KEPT_FLOOR}",
        kept.rate()
    );
}

/// The least share of the vendored rule sets' own negative examples the
/// full sanitizer passes unchanged in the plain shape, per set. The goal is
/// 80%; these floors sit a little below today's figures. Most of what is
/// changed is a near miss of one rule that is still credential-shaped to
/// another (a GitLab token one character short, a random 40-character
/// value under a vendor's name): each set's rule-by-rule test
/// (`gitleaks.rs`, `noseyparker.rs`) checks that the rule itself stays
/// quiet on it.
const VENDORED_NEGATIVES_KEPT_FLOORS: [f64; 2] = [0.52, NOSEYPARKER_NEGATIVES_KEPT_FLOOR];

/// See [`VENDORED_NEGATIVES_KEPT_FLOORS`].
const NOSEYPARKER_NEGATIVES_KEPT_FLOOR: f64 = 0.62;

#[test]
fn vendored_rule_sets_negatives_in_error_bodies() {
    let gitleaks: Value =
        serde_json::from_str(include_str!("../data/gitleaks/examples.json")).expect("gitleaks examples parse");
    let noseyparker: Value =
        serde_json::from_str(include_str!("../data/noseyparker/rules.json")).expect("Nosey Parker rules parse");
    let sets: [(&str, Vec<&str>); 2] = [
        (
            "gitleaks false positives",
            gitleaks["rules"]
                .as_object()
                .expect("rules")
                .values()
                .flat_map(|r| r["fps"].as_array().into_iter().flatten().filter_map(Value::as_str))
                .collect(),
        ),
        (
            "Nosey Parker negative examples",
            noseyparker["rules"]
                .as_array()
                .expect("rules")
                .iter()
                .flat_map(|r| {
                    r["negative_examples"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                })
                .collect(),
        ),
    ];
    for ((name, texts), floor) in sets.into_iter().zip(VENDORED_NEGATIVES_KEPT_FLOORS) {
        let body = |t: &str| SHAPES[0].wrap(t);
        let kept = texts
            .iter()
            .filter(|t| sanitizer().sanitize(&body(t)).text == body(t))
            .count();
        let rate = kept as f64 / texts.len() as f64;
        println!("{name}: {kept} of {} kept ({:.1}%)", texts.len(), 100.0 * rate);
        if verbose() {
            for t in texts.iter().filter(|t| sanitizer().sanitize(&body(t)).text != body(t)) {
                println!("changed {name}: {}", shown(t));
            }
        }
        assert!(texts.len() >= 100, "{name}: only {} texts", texts.len());
        assert!(rate >= floor, "{name}: {rate:.3} kept, below the floor {floor}");
    }
}
