//! Compiles the vendored rule sets, gitleaks' (`data/gitleaks/gitleaks.toml`),
//! Nosey Parker's (`data/noseyparker/rules.json`) and Kingfisher's
//! (`data/kingfisher/rules.json`), into one Rust table,
//! checking on the way that every regex the sanitizer will run compiles
//! with the `regex` crate and that every rule has literal anchors for the
//! engine's one pass: a rule that fails either stops the build with the
//! rule's id, so no rule is ever skipped silently.

#[path = "src/vendored/anchors.rs"]
mod anchors;
#[path = "src/vendored/translate.rs"]
mod translate;

use std::fmt::Write as _;
use std::path::PathBuf;

use regex::Regex;

const CONFIG: &str = "data/gitleaks/gitleaks.toml";
const NOSEYPARKER: &str = "data/noseyparker/rules.json";
const KINGFISHER: &str = "data/kingfisher/rules.json";
/// gate's own secret rules, whose kinds a Kingfisher rule must not take.
const OWN_RULES: &str = "src/rules.rs";

/// The engine's window around a keyword (`src/vendored/mod.rs`): how far
/// back a match may start and how far forward it may reach, for a rule
/// whose pattern does not say.
const BACK: usize = 256;
const FORWARD: usize = 2048;

/// The farthest a match of a rule that starts at its keyword may reach: a
/// base64-encoded PEM key runs past 2 KiB.
const LONG_FORWARD: usize = 16 * 1024;

/// Nosey Parker's rule sets the sanitizer runs: its default set and its
/// password hashes. `np.assets` finds public identifiers (bucket names,
/// client ids), which are not secrets.
const NP_RULESETS: &[&str] = &["default", "np.hashes"];

/// Nosey Parker rules a gate detector reports better: JWTs (gate decodes
/// both segments) and PEM private keys (gate's detector handles truncated
/// keys and empty blocks).
const NP_SUPERSEDED: &[&str] = &["np.jwt.1", "np.pem.1"];

/// Nosey Parker rules with no literal an anchor could be, each with why it
/// is left out rather than given a pass over the text of its own.
const NP_UNANCHORED: &[(&str, &str)] = &[(
    "np.salesforce.1",
    "its only literals are `00` and `!` (`00` + 13 characters + `!` + 96), which every number would hit",
)];

/// The capture groups of Nosey Parker rules that say whose credential it
/// is rather than being it: a username or login, a host, a key or client
/// id, a setting's name. They stay in the text, as gate's own rules keep a
/// URL's user and host; every other group is a secret. Read off each
/// pattern (and its examples); `build.rs` checks every entry names a group
/// the rule has.
const NP_PUBLIC_GROUPS: &[(&str, &[usize])] = &[
    ("np.auth0.1", &[1, 2]),
    ("np.aws.6", &[1]),
    ("np.azure.1", &[1]),
    ("np.azure.2", &[1, 2]),
    ("np.blynk.8", &[1]),
    ("np.blynk.9", &[1]),
    ("np.generic.3", &[1]),
    ("np.generic.4", &[1]),
    ("np.generic.7", &[1]),
    ("np.generic.8", &[1, 2]),
    ("np.generic.9", &[1]),
    ("np.generic.10", &[1]),
    ("np.generic.13", &[1]),
    ("np.generic.14", &[1]),
    ("np.gitalk.1", &[1]),
    ("np.google.6", &[1]),
    ("np.kubernetes.2", &[1]),
    ("np.mongodb.1", &[1, 3]),
    ("np.netrc.1", &[1, 2]),
    ("np.odbc.1", &[1]),
    ("np.phpmailer.1", &[1, 2]),
    ("np.postgres.1", &[1, 3]),
    ("np.psexec.1", &[1]),
    ("np.vmware.1", &[1]),
];

/// Kingfisher's confidence levels the sanitizer runs: those Kingfisher
/// reports by default (`--confidence medium`). Its `low` rules are generic
/// password and secret assignments, which gate's own keyed detector
/// (`src/keyed.rs`) covers with references and placeholders kept.
const KF_CONFIDENCE: &[&str] = &["medium", "high"];

/// Kingfisher rules a gate detector reports better, as for Nosey Parker:
/// JWTs, PEM private keys (also the encrypted and PGP forms), and URLs with
/// a password (FTP, MongoDB, MySQL, PostgreSQL, AMQP, any scheme), which
/// gate's URL detector redacts whatever the scheme while keeping the user
/// and host.
const KF_SUPERSEDED: &[&str] = &[
    "kingfisher.jwt.1",
    "kingfisher.privkey.1",
    "kingfisher.privkey.2",
    "kingfisher.ftp.1",
    "kingfisher.mongodb.3",
    "kingfisher.mysql.1",
    "kingfisher.postgres.1",
    "kingfisher.rabbitmq.1",
    "kingfisher.uri.1",
];

/// Kingfisher rules left out, each with why: most have no literal an
/// anchor could be, and are left out rather than given a pass over the
/// text of their own.
const KF_LEFT_OUT: &[(&str, &str)] = &[
    (
        "kingfisher.plaintext.1",
        "its pattern is in `(?x)` mode, which ignores its spaces, so it matches no `ConvertTo-SecureString` \
         line, its own example included",
    ),
    (
        "kingfisher.discord.2",
        "a bot token by shape alone (24, 6 and 27 characters joined by dots); gate's own Discord bot token \
         rule finds it",
    ),
    (
        "kingfisher.reallysimplesystems.1",
        "its only literals are `ey`, twice, which ordinary words hit",
    ),
    (
        "kingfisher.salesforce.1",
        "its only literals are `00` and `!`, as in Nosey Parker's rule it copies",
    ),
    (
        "kingfisher.twilio.1",
        "its only literals are `SK` and `AC`; gitleaks' twilio-api-key and gate's own Twilio rules find \
         these keys",
    ),
];

/// The capture groups of Kingfisher rules that say whose credential it is
/// (an account or user name, a client id, a host) rather than being it, as
/// [`NP_PUBLIC_GROUPS`] for Nosey Parker. Kingfisher reports its first
/// group as the secret; gate redacts every other group too but these.
const KF_PUBLIC_GROUPS: &[(&str, &[usize])] = &[
    ("kingfisher.azure.1", &[1]),
    ("kingfisher.blynk.9", &[1, 3]),
    ("kingfisher.google.6", &[1]),
    ("kingfisher.odbc.1", &[1]),
    ("kingfisher.psexec.1", &[1]),
];

/// gitleaks rules a vendored rule's kind is never folded into: a rule
/// this general finds the examples of many vendors' rules.
const TOO_GENERAL: &[&str] = &["generic-api-key"];

/// A rule already in the table, as a later rule set's kinds are folded
/// into it: the id its vendor is read from, the kind it reports, its
/// compiled pattern and its secret group (0: the first non-empty one).
struct Known {
    id: String,
    kind: String,
    re: Regex,
    group: usize,
}

fn main() {
    println!("cargo:rerun-if-changed={CONFIG}");
    println!("cargo:rerun-if-changed={NOSEYPARKER}");
    println!("cargo:rerun-if-changed={KINGFISHER}");
    println!("cargo:rerun-if-changed={OWN_RULES}");
    println!("cargo:rerun-if-changed=src/vendored/translate.rs");
    println!("cargo:rerun-if-changed=src/vendored/anchors.rs");
    let text = std::fs::read_to_string(CONFIG).unwrap_or_else(|e| panic!("cannot read {CONFIG}: {e}"));
    let config: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{CONFIG} is not valid TOML: {e}"));
    let mut errors = Vec::new();
    let mut out = String::from(
        "// Generated by build.rs from data/gitleaks/gitleaks.toml, data/noseyparker/rules.json \
         and data/kingfisher/rules.json; do not edit.\n\n",
    );

    let global = config.get("allowlist").and_then(|v| v.as_table());
    let _ = writeln!(
        out,
        "pub(crate) static GLOBAL_ALLOWLIST: Allowlist = {};",
        allowlist("global allowlist", global, &mut errors)
    );

    let rules = config
        .get("rules")
        .and_then(|v| v.as_array())
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut known: Vec<Known> = Vec::new();
    out.push_str("pub(crate) static RULES: &[Rule] = &[\n");
    for rule in rules {
        let Some(rule) = rule.as_table() else { continue };
        let id = str_field(rule, "id").unwrap_or_default();
        let Some(regex) = str_field(rule, "regex") else {
            // A path-only rule (`pkcs12-file`) has nothing to match in text.
            let _ = writeln!(out, "    // `{id}`: path only, no content to match.");
            continue;
        };
        let translated = translate::go_to_rust(&translate::widen_suffix(&regex));
        let compiled = translate::check(&id, "regex", &translated)
            .map_err(|e| errors.push(e))
            .ok();
        let keywords = strings(rule, "keywords");
        if keywords.is_empty() {
            errors.push(format!(
                "gitleaks rule `{id}` has no keywords, so it would need a pass over the text of its own"
            ));
        }
        let entropy = rule
            .get("entropy")
            .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
            .unwrap_or(0.0);
        let group = rule.get("secretGroup").and_then(|v| v.as_integer()).unwrap_or(0);
        if let Some(re) = compiled {
            known.push(Known {
                id: id.clone(),
                kind: id.clone(),
                re,
                group: group as usize,
            });
        }
        let mut lists = String::new();
        for a in rule
            .get("allowlists")
            .and_then(|v| v.as_array())
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let _ = write!(lists, "{}, ", allowlist(&id, a.as_table(), &mut errors));
        }
        let _ = writeln!(
            out,
            "    Rule {{ id: {id:?}, origin: {id:?}, regex: {translated:?}, keywords: &{keywords:?}, entropy: {entropy:?}, back: {BACK}, forward: {FORWARD}, secret_group: {group}, every_group: false, public_groups: &[], allowlists: &[{lists}] }},"
        );
    }
    let np_patterns = noseyparker(&mut known, &mut out, &mut errors);
    let mut taken = own_kinds(&mut errors);
    taken.extend(known.iter().map(|k| k.kind.clone()));
    kingfisher(&known, &taken, &np_patterns, &mut out, &mut errors);
    out.push_str("];\n");

    if !errors.is_empty() {
        panic!("the vendored rules do not all compile:\n{}", errors.join("\n"));
    }
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("vendored_rules.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", dest.display()));
}

/// Appends Nosey Parker's rules to the table. Their patterns are already
/// the `regex` crate's dialect; their keywords are derived from the pattern
/// (`anchors`); every capture group is a secret but those
/// [`NP_PUBLIC_GROUPS`] lists (a username beside its password, a key id
/// beside its key). A rule whose examples' secrets a gitleaks rule of the
/// same vendor finds, secret for secret, reports that rule's kind, so one
/// credential has one name; any other takes a kind made from its name
/// (`Tavily API Key` is `tavily-api-key`). Adds the rules it runs to
/// `known` and returns every Nosey Parker pattern, run or not, comments
/// removed.
fn noseyparker(known: &mut Vec<Known>, out: &mut String, errors: &mut Vec<String>) -> Vec<String> {
    let rules = &json_rules(NOSEYPARKER);
    check_listed(
        "NP_PUBLIC_GROUPS",
        NP_PUBLIC_GROUPS.iter().map(|(id, _)| *id),
        rules,
        errors,
    );
    let patterns = rules
        .iter()
        .map(|r| translate::strip_comments(r["pattern"].as_str().unwrap_or_default()))
        .collect();
    let gitleaks_rules = known.len();
    for rule in rules {
        let id = rule["id"].as_str().unwrap_or_default();
        let in_set = rule["rulesets"].as_array().is_some_and(|sets| {
            sets.iter()
                .any(|s| s.as_str().is_some_and(|s| NP_RULESETS.contains(&s)))
        });
        if !in_set || NP_SUPERSEDED.contains(&id) || NP_UNANCHORED.iter().any(|(u, _)| *u == id) {
            continue;
        }
        let public: &[usize] = NP_PUBLIC_GROUPS.iter().find(|(r, _)| *r == id).map_or(&[], |(_, g)| g);
        if let Some(k) = emit(rule, 0.0, public, &known[..gitleaks_rules], Fold::Run, out, errors) {
            known.push(k);
        }
    }
    patterns
}

/// Appends Kingfisher's rules to the table, as Nosey Parker's are, with
/// Kingfisher's `min_entropy` as the secret's threshold: those of the
/// confidence Kingfisher reports by default ([`KF_CONFIDENCE`]) that it
/// reports at all (`visible`), but a rule whose pattern is a Nosey Parker
/// pattern (Kingfisher began as its fork; that rule is already in the
/// table, or left out for its reason) and those [`KF_SUPERSEDED`] and
/// [`KF_LEFT_OUT`] list. A rule whose examples' secrets a gitleaks or
/// Nosey Parker rule of the same vendor finds, secret for secret, is not
/// run either ([`Fold::Skip`]): that rule already finds them, and the
/// Kingfisher rule would only add its own idea of the shape's edges, which
/// that kind's negative examples do not hold. Nor is a rule whose name
/// makes a kind already `taken` (gate's own, gitleaks', Nosey Parker's):
/// both vendors call it the same credential, the rule in the table is
/// tested against that credential's negatives, and Kingfisher's variant
/// (a Telegram token without its `A`, an AWS secret key cut out of a longer
/// token) widens it where those negatives say it should not.
fn kingfisher(known: &[Known], taken: &[String], np_patterns: &[String], out: &mut String, errors: &mut Vec<String>) {
    let rules = &json_rules(KINGFISHER);
    check_listed(
        "KF_PUBLIC_GROUPS",
        KF_PUBLIC_GROUPS.iter().map(|(id, _)| *id),
        rules,
        errors,
    );
    check_listed("KF_SUPERSEDED", KF_SUPERSEDED.iter().copied(), rules, errors);
    check_listed("KF_LEFT_OUT", KF_LEFT_OUT.iter().map(|(id, _)| *id), rules, errors);
    for rule in rules {
        let id = rule["id"].as_str().unwrap_or_default();
        let confident = rule["confidence"].as_str().is_some_and(|c| KF_CONFIDENCE.contains(&c));
        let pattern = translate::strip_comments(rule["pattern"].as_str().unwrap_or_default());
        if !confident
            || rule["visible"] == serde_json::Value::Bool(false)
            || KF_SUPERSEDED.contains(&id)
            || KF_LEFT_OUT.iter().any(|(u, _)| *u == id)
            || np_patterns.contains(&pattern)
            || taken.contains(&slug(rule["name"].as_str().unwrap_or(id)))
        {
            continue;
        }
        let entropy = rule["min_entropy"].as_f64().unwrap_or(0.0);
        let public: &[usize] = KF_PUBLIC_GROUPS.iter().find(|(r, _)| *r == id).map_or(&[], |(_, g)| g);
        emit(rule, entropy, public, known, Fold::Skip, out, errors);
    }
}

/// The `rules` array of the JSON rule set at `path`; a file that cannot be
/// read or parsed stops the build with its path.
fn json_rules(path: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let mut data: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not valid JSON: {e}"));
    match data["rules"].take() {
        serde_json::Value::Array(rules) => rules,
        _ => Vec::new(),
    }
}

/// The kinds of gate's own secret rules: the first argument of each
/// `r("kind", …)` in [`OWN_RULES`]; none found is an error, since then
/// every Kingfisher rule named as one of them would run under its kind.
fn own_kinds(errors: &mut Vec<String>) -> Vec<String> {
    let text = std::fs::read_to_string(OWN_RULES).unwrap_or_else(|e| panic!("cannot read {OWN_RULES}: {e}"));
    let call = Regex::new(r#"\br\(\s*"([a-z0-9-]+)""#).expect("the pattern compiles");
    let kinds: Vec<String> = call.captures_iter(&text).map(|c| c[1].to_owned()).collect();
    if kinds.is_empty() {
        errors.push(format!("no `r(\"kind\", …)` rule found in {OWN_RULES}"));
    }
    kinds
}

/// What [`emit`] does with a rule whose kind folds into a known rule's.
#[derive(Clone, Copy, PartialEq)]
enum Fold {
    /// Runs it under that rule's kind.
    Run,
    /// Leaves it out: the known rule finds its secrets.
    Skip,
}

/// Errors for the ids a list of `list_name` names that are not rules of
/// `rules`.
fn check_listed<'a>(
    list_name: &str,
    listed: impl Iterator<Item = &'a str>,
    rules: &[serde_json::Value],
    errors: &mut Vec<String>,
) {
    for id in listed {
        if !rules.iter().any(|r| r["id"].as_str() == Some(id)) {
            errors.push(format!("{list_name} names `{id}`, which is not a rule of its set"));
        }
    }
}

/// Appends one rule of a keyword-less set (Nosey Parker's, Kingfisher's:
/// id, name, pattern, examples) to the table: its pattern checked, its
/// anchors derived, every capture group a secret but `public`, its kind
/// folded into a `known` rule's where that one finds the same secrets
/// (then run or left out as `fold` says). Returns the rule as the next
/// set's kinds may fold into it, or `None` when it is not in the table.
fn emit(
    rule: &serde_json::Value,
    entropy: f64,
    public: &[usize],
    known: &[Known],
    fold: Fold,
    out: &mut String,
    errors: &mut Vec<String>,
) -> Option<Known> {
    let id = rule["id"].as_str().unwrap_or_default();
    let pattern = translate::strip_comments(rule["pattern"].as_str().unwrap_or_default());
    let pattern = pattern.as_str();
    let re = translate::check(id, "pattern", pattern)
        .map_err(|e| errors.push(e))
        .ok()?;
    let anchors = match anchors::anchors(pattern) {
        Ok(Some(a)) => a,
        Ok(None) => {
            errors.push(format!(
                "rule `{id}` has no literal of {} bytes or more that every match holds, \
                 so it would need a pass over the text of its own",
                anchors::MIN_ANCHOR
            ));
            return None;
        }
        Err(e) => {
            errors.push(format!("rule `{id}` does not parse: {e}"));
            return None;
        }
    };
    let examples: Vec<&str> = rule["examples"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    if let Some(g) = public.iter().find(|&&g| g == 0 || g >= re.captures_len()) {
        errors.push(format!("rule `{id}` has no capture group {g} to keep"));
    }
    let name = rule["name"].as_str().unwrap_or(id);
    let keywords = &anchors.literals;
    // A match of a prefix-anchored rule starts at its keyword; any
    // match, so any reach from its keyword either way, is at most its
    // longest match long, and an unbounded one (a base64 PEM key) may
    // run far.
    let back = match (anchors.prefix, anchors.max_len) {
        (true, _) => 0,
        (false, Some(n)) => n.min(LONG_FORWARD),
        (false, None) => BACK,
    };
    let forward = match (anchors.prefix, anchors.max_len) {
        (_, Some(n)) => n.min(LONG_FORWARD),
        (true, None) => LONG_FORWARD,
        (false, None) => FORWARD,
    };
    let folded = same_kind(id, &re, &examples, known);
    if folded.is_some() && fold == Fold::Skip {
        return None;
    }
    let kind = folded.unwrap_or_else(|| slug(name));
    let _ = writeln!(
        out,
        "    Rule {{ id: {kind:?}, origin: {id:?}, regex: {pattern:?}, keywords: &{keywords:?}, back: {back}, forward: {forward}, entropy: {entropy:?}, secret_group: 0, every_group: true, public_groups: &{public:?}, allowlists: &[] }},"
    );
    Some(Known {
        id: id.to_owned(),
        kind,
        re,
        group: 0,
    })
}

/// The kind of the `known` rule of the same vendor (its id names the
/// vendor of the id `SET.VENDOR.N`) that finds, in each of `re`'s examples,
/// the very secrets `re` finds there (the same span, give or take a few
/// bytes), if there are such secrets and such a rule. A rule of another
/// name that finds them too is a general one (`curl-auth-header`, any
/// 40 hex digits), not the same kind.
fn same_kind(rule_id: &str, re: &Regex, examples: &[&str], known: &[Known]) -> Option<String> {
    let vendor = rule_id.split('.').nth(1).unwrap_or_default();
    let names: Vec<&str> = std::iter::once(vendor)
        .chain(VENDOR_SYNONYMS.iter().filter(|(v, _)| *v == vendor).map(|(_, s)| *s))
        .collect();
    let secrets: Vec<(&str, usize, usize)> = examples
        .iter()
        .flat_map(|ex| {
            re.captures_iter(ex).flat_map(move |c| {
                let groups: Vec<_> = c.iter().skip(1).flatten().filter(|m| !m.is_empty()).collect();
                let spans = if groups.is_empty() {
                    c.get(0).into_iter().collect()
                } else {
                    groups
                };
                spans.into_iter().map(move |m| (*ex, m.start(), m.end()))
            })
        })
        .collect();
    if secrets.is_empty() {
        return None;
    }
    known
        .iter()
        .find(|k| {
            !TOO_GENERAL.contains(&k.kind.as_str())
                && names.iter().any(|n| k.id.replace('-', "").contains(n))
                && secrets.iter().all(|&(ex, s, e)| {
                    k.re.captures_iter(ex).any(|c| {
                        let m = if k.group > 0 {
                            c.get(k.group)
                        } else {
                            c.iter().skip(1).flatten().find(|m| !m.is_empty()).or_else(|| c.get(0))
                        };
                        m.is_some_and(|m| {
                            m.start() <= s && m.end() >= e && (m.end() - m.start()) - (e - s) <= SAME_SPAN_SLACK
                        })
                    })
                })
        })
        .map(|k| k.kind.clone())
}

/// Vendors whose gitleaks rules go by another name.
const VENDOR_SYNONYMS: &[(&str, &str)] = &[("google", "gcp")];

/// How many bytes longer than a Nosey Parker secret a gitleaks secret may
/// be and still be the same one (`glc_` before a Grafana token).
const SAME_SPAN_SLACK: usize = 8;

/// A kind made from a rule's name: lowercase words joined by `-`, without
/// a version range in brackets (`Hashicorp Vault Service Token (< v1.10)`
/// and its `(>= v1.10)` twin are one kind).
fn slug(name: &str) -> String {
    let name = match name.find('(') {
        Some(open) if name[open..].contains(['<', '>']) => &name[..open],
        _ => name,
    };
    let mut kind = String::new();
    for word in name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !kind.is_empty() {
            kind.push('-');
        }
        kind.push_str(&word.to_ascii_lowercase());
    }
    kind
}

fn str_field(t: &toml::Table, key: &str) -> Option<String> {
    t.get(key).and_then(|v| v.as_str()).map(str::to_owned)
}

fn strings(t: &toml::Table, key: &str) -> Vec<String> {
    t.get(key)
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// An `Allowlist { .. }` expression for a rule's (or the global) allowlist.
fn allowlist(id: &str, a: Option<&toml::Table>, errors: &mut Vec<String>) -> String {
    let Some(a) = a else {
        return "Allowlist { target: Target::Secret, all: false, needs_path: false, regexes: &[], stopwords: &[] }"
            .into();
    };
    let target = match a.get("regexTarget").and_then(|v| v.as_str()) {
        Some("match") => "Target::Match",
        Some("line") => "Target::Line",
        _ => "Target::Secret",
    };
    let all = a.get("condition").and_then(|v| v.as_str()) == Some("AND");
    let needs_path = !strings(a, "paths").is_empty() || !strings(a, "commits").is_empty();
    let mut regexes = Vec::new();
    for r in strings(a, "regexes") {
        let t = translate::go_to_rust(&r);
        if let Err(e) = translate::check(id, "allowlist regex", &t) {
            errors.push(e);
        }
        regexes.push(t);
    }
    let stopwords: Vec<String> = strings(a, "stopwords").iter().map(|s| s.to_lowercase()).collect();
    format!(
        "Allowlist {{ target: {target}, all: {all}, needs_path: {needs_path}, regexes: &{regexes:?}, stopwords: &{stopwords:?} }}"
    )
}
