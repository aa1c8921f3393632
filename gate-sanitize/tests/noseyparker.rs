//! Nosey Parker's own examples, rule by rule: every example a Nosey Parker
//! rule lists must be found under that rule's kind, with every secret its
//! pattern captures gone from the text, and every negative example must not
//! be reported as that kind. The expected columns are Nosey Parker's
//! (`data/noseyparker/rules.json`, converted from the pinned commit by
//! `data/noseyparker/vendor.py`), not this crate's.
//!
//! Each rule's kind is checked alone (every other kind switched off); a
//! kind gitleaks also has runs both rules, as the full sanitizer does.
//! Which groups are secrets is the pattern's business: the test finds them
//! with Nosey Parker's own pattern and only skips the groups that name whose
//! credential it is (a username, a host), which gate keeps.

use std::collections::BTreeMap;
use std::ops::Range;

use regex::Regex;
use serde_json::Value;
use toolgate_sanitize::baseline::vendored_rules;

#[path = "support/one_kind.rs"]
mod one_kind;
use one_kind::only;
use toolgate_sanitize::{Category, Sanitizer};

const RULES: &str = include_str!("../data/noseyparker/rules.json");

/// Examples on which gate deliberately disagrees with Nosey Parker, each
/// with its reason; the test checks that they do differ, so none is
/// skipped. A positive listed here is kept, a negative listed here is
/// found.
const DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "np.aws.2",
        "aws_secret_access_key:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "one character forty times is a placeholder (gitleaks' global allowlist)",
    ),
    (
        "np.aws.2",
        "aws_secret_access_key => aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "one character forty times is a placeholder (gitleaks' global allowlist)",
    ),
    (
        "np.psexec.1",
        ":: satmodel2\n%RUNTIMEDIR%\\PsExec.exe \\\\satmodel2 -u SATMODEL2\\MTCPB -p %nothing% -i 2 -c -f %TEMP%\\psexec_helper.bat %RUNTIMEDIR% .\\JavaOnly_runNode2.cmd\n%RUNTIMEDIR%\\pslist.exe \\\\satmodel2 java\nif %ERRORLEVEL% NEQ 0 goto done\n",
        "`%nothing%` is a variable reference, not the password it will hold",
    ),
    (
        "np.generic.5",
        "password = super$ecret\n",
        "gate's own generic-password rule takes bare and single-quoted values too; Nosey Parker's takes double quotes only",
    ),
    (
        "np.generic.5",
        "password = 'super$ecret'\n",
        "gate's own generic-password rule takes bare and single-quoted values too; Nosey Parker's takes double quotes only",
    ),
    (
        "np.generic.10",
        "<add key=\"ConnectionString_B2B\" value=\"Server=awsbman-t,1433;Database=B2B;User ID=b2buser;Password=#gets0m3;Trusted_Connection=False\" />\n",
        "gitleaks' global allowlist `(?i)^true|false|null$` allows any value holding `false`, and every \
         vendored rule passes it; the password inside is still removed, by the ODBC rule",
    ),
    (
        "np.slack.2",
        "export SLACK_TOKEN=\"xoxb-0000000000-0000000000000-xxxxxxxxxxxxxxxxxxxxxxxx\"",
        "zeros and x's are the documentation's placeholder (gitleaks' rule of the same kind allows it)",
    ),
];

/// The groups of a rule that are not secrets, as `build.rs` keeps them;
/// written out again here so that a change to either is a failing test.
const PUBLIC_GROUPS: &[(&str, &[usize])] = &[
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

/// Nosey Parker's pattern as the `regex` crate reads it: without its
/// `(?#…)` comments.
fn pattern(p: &str) -> Regex {
    let comments = Regex::new(r"\(\?#[^)]*\)").expect("comment regex");
    Regex::new(&comments.replace_all(p, "")).expect("Nosey Parker patterns compile")
}

/// Where the secrets `re` captures in `text` are, public groups left out.
fn secrets(re: &Regex, public: &[usize], text: &str) -> Vec<Range<usize>> {
    re.captures_iter(text)
        .flat_map(|c| {
            if c.len() == 1 {
                return c.get(0).map(|m| m.range()).into_iter().collect();
            }
            (1..c.len())
                .filter(|g| !public.contains(g))
                .filter_map(|g| c.get(g))
                .filter(|m| !m.is_empty())
                .map(|m| m.range())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether every secret lies inside a secret finding of `s`.
fn covered(s: &Sanitizer, text: &str, secrets: &[Range<usize>]) -> bool {
    let out = s.sanitize(text);
    secrets.iter().all(|r| {
        out.findings
            .iter()
            .any(|f| f.category == Category::Secret && f.range.start <= r.start && f.range.end >= r.end)
    })
}

#[test]
fn every_noseyparker_rule_finds_its_examples_and_not_its_negative_ones() {
    let data: Value = serde_json::from_str(RULES).expect("rules.json parses");
    let by_id: BTreeMap<&str, &Value> = data["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| Some((r["id"].as_str()?, r)))
        .collect();
    let examples = |origin: &str, key: &str| -> Vec<&str> {
        by_id
            .get(origin)
            .and_then(|r| r[key].as_array())
            .map_or(Vec::new(), |a| a.iter().filter_map(Value::as_str).collect())
    };
    let rules = vendored_rules();
    let full = Sanitizer::builder()
        .max_len(usize::MAX)
        .build()
        .expect("default builds");
    let mut failures = Vec::new();
    let (mut positives, mut negatives, mut by_others, mut checked) = (0, 0, 0, 0);
    for &(origin, kind) in &rules {
        let Some(rule) = by_id.get(origin) else { continue };
        checked += 1;
        let s = only(kind);
        let re = pattern(rule["pattern"].as_str().expect("pattern"));
        let public = PUBLIC_GROUPS
            .iter()
            .find(|(r, _)| *r == origin)
            .map_or(&[][..], |(_, g)| g);
        for text in examples(origin, "examples") {
            positives += 1;
            let spans = secrets(&re, public, text);
            assert!(
                !spans.is_empty(),
                "{origin}: its pattern finds nothing in its example {text:?}"
            );
            let differs = DIFFERENCES.iter().any(|(r, t, _)| *r == origin && *t == text);
            let alone = s.sanitize(text).findings.iter().any(|f| f.kind == kind) && covered(&s, text, &spans);
            // Another detector may report the secret under its own kind
            // (a base64 run holding a PEM key is decoded and removed
            // whole); it still never reaches the model.
            let by_other = !alone && covered(&full, text, &spans);
            by_others += usize::from(by_other);
            if (alone || by_other) == differs {
                failures.push(format!("{origin} ({kind}): missed {text:?}"));
            }
        }
        // Another rule of the same kind may find this very text (Nosey
        // Parker's two Vault token formats, its username-and-password
        // rules for quoted and bare values): by its own pattern, that is
        // no false positive.
        let siblings: Vec<Regex> = rules
            .iter()
            .filter(|(o, k)| *k == kind && *o != origin)
            .filter_map(|(o, _)| by_id.get(o)?["pattern"].as_str().map(pattern))
            .collect();
        for text in examples(origin, "negative_examples") {
            negatives += 1;
            let flagged = s.sanitize(text).findings.iter().any(|f| f.kind == kind);
            let differs = DIFFERENCES.iter().any(|(r, t, _)| *r == origin && *t == text);
            let by_sibling = siblings.iter().any(|re| re.is_match(text));
            if flagged && !by_sibling && !differs || !flagged && differs {
                failures.push(format!("{origin} ({kind}): flagged {text:?}"));
            }
        }
    }
    println!(
        "{checked} rules, {positives} examples ({by_others} removed by another detector), {negatives} negative examples"
    );
    assert!(checked >= 150, "only {checked} Nosey Parker rules run");
    assert!(
        failures.is_empty(),
        "{} of {positives} examples and {negatives} negative examples wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
