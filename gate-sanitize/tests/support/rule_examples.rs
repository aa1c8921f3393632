//! A keyword-less rule set's own examples, rule by rule, as scanners test
//! their rules: shared by the tests of Nosey Parker's and Kingfisher's
//! sets, whose rules list examples and negative examples the same way (id,
//! pattern, `examples`, `negative_examples`).
//!
//! Each rule's kind is checked alone (every other kind switched off); a
//! kind another set also has runs both rules, as the full sanitizer does.
//! Which groups are secrets is the pattern's business: the check finds
//! them with the vendor's own pattern and only skips the groups that name
//! whose credential it is (a username, a host), which gate keeps.

use std::collections::BTreeMap;
use std::ops::Range;

use regex::Regex;
use serde_json::Value;
use toolgate_sanitize::baseline::vendored_rules;
use toolgate_sanitize::{Category, Sanitizer};

use crate::one_kind::only;

/// One rule set's examples and what gate does differently.
pub struct RuleSet {
    /// The set's name, for the failure message.
    pub name: &'static str,
    /// The vendored `rules.json`.
    pub rules: &'static str,
    /// The groups of a rule that are not secrets, written out again here
    /// (not read from `build.rs`) so that a change to either fails.
    pub public_groups: &'static [(&'static str, &'static [usize])],
    /// Examples on which gate deliberately disagrees with the vendor, each
    /// with its reason: `(rule, example, reason)`. The check asserts that
    /// they do differ, so none is skipped: a positive listed is kept, a
    /// negative listed is found.
    pub differences: &'static [(&'static str, &'static str, &'static str)],
    /// Words that make a secret a placeholder wherever they occur in it,
    /// in any case: gitleaks' global stopwords, which gate applies to every
    /// vendored rule. An example whose every secret holds one is not
    /// counted.
    pub stopwords: &'static [&'static str],
    /// The least number of the set's rules the sanitizer must run.
    pub min_rules: usize,
}

/// The Shannon entropy of `s` in bits per byte, as scanners compute a
/// rule's `min_entropy`.
fn entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in s.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// The vendor's pattern as the `regex` crate reads it: without its `(?#…)`
/// comments.
fn pattern(p: &str) -> Regex {
    let comments = Regex::new(r"\(\?#[^)]*\)").expect("comment regex");
    Regex::new(&comments.replace_all(p, "")).expect("vendored patterns compile")
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

/// Checks every rule of `set` the sanitizer runs: each example is found
/// under the rule's kind with every secret its pattern captures gone, each
/// negative example is not reported as that kind. An example the rule's
/// pattern does not match must be listed in `differences` (the vendor's
/// example is wrong). Panics with every wrong
/// example at once.
pub fn check(set: &RuleSet) {
    let data: Value = serde_json::from_str(set.rules).expect("rules.json parses");
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
    let differs = |origin: &str, text: &str| set.differences.iter().any(|(r, t, _)| *r == origin && *t == text);
    let rules = vendored_rules();
    let full = Sanitizer::builder()
        .max_len(usize::MAX)
        .build()
        .expect("default builds");
    let mut failures = Vec::new();
    let (mut positives, mut negatives, mut by_others, mut checked) = (0, 0, 0, 0);
    let (mut below_entropy, mut placeholders) = (0, 0);
    for &(origin, kind) in &rules {
        let Some(rule) = by_id.get(origin) else { continue };
        checked += 1;
        let s = only(kind);
        let re = pattern(rule["pattern"].as_str().expect("pattern"));
        let public = set
            .public_groups
            .iter()
            .find(|(r, _)| *r == origin)
            .map_or(&[][..], |(_, g)| g);
        // The vendor drops a match whose secret is below its rule's
        // entropy: such an example is not one the vendor reports.
        let min_entropy = rule["min_entropy"].as_f64();
        for text in examples(origin, "examples") {
            let spans = secrets(&re, public, text);
            if spans.is_empty() {
                if !differs(origin, text) {
                    failures.push(format!("{origin}: its pattern finds nothing in its example {text:?}"));
                }
                continue;
            }
            if min_entropy.is_some_and(|min| spans.iter().all(|r| entropy(&text[r.clone()]) <= min)) {
                below_entropy += 1;
                continue;
            }
            // gate's rule keeps such a secret as a placeholder; another
            // detector (a keyed `token = …`) may still take it, so the
            // example says nothing either way.
            if spans.iter().all(|r| {
                let secret = text[r.clone()].to_ascii_lowercase();
                set.stopwords.iter().any(|w| secret.contains(w))
            }) {
                placeholders += 1;
                continue;
            }
            positives += 1;
            let alone = s.sanitize(text).findings.iter().any(|f| f.kind == kind) && covered(&s, text, &spans);
            // Another detector may report the secret under its own kind
            // (a base64 run holding a PEM key is decoded and removed
            // whole); it still never reaches the model.
            let by_other = !alone && covered(&full, text, &spans);
            by_others += usize::from(by_other);
            if (alone || by_other) == differs(origin, text) {
                failures.push(format!("{origin} ({kind}): missed {text:?}"));
            }
        }
        // Another rule of the same kind may find this very text (two
        // formats of one vendor's token, username-and-password rules for
        // quoted and bare values): by its own pattern, that is no false
        // positive.
        let siblings: Vec<Regex> = rules
            .iter()
            .filter(|(o, k)| *k == kind && *o != origin)
            .filter_map(|(o, _)| by_id.get(o)?["pattern"].as_str().map(pattern))
            .collect();
        for text in examples(origin, "negative_examples") {
            negatives += 1;
            let flagged = s.sanitize(text).findings.iter().any(|f| f.kind == kind);
            let by_sibling = siblings.iter().any(|re| re.is_match(text));
            let listed = differs(origin, text);
            if flagged && !by_sibling && !listed || !flagged && listed {
                failures.push(format!("{origin} ({kind}): flagged {text:?}"));
            }
        }
    }
    println!(
        "{}: {checked} rules, {positives} examples ({by_others} removed by another detector; \
         not counted: {below_entropy} below their rule's entropy, {placeholders} holding a stopword), \
         {negatives} negative examples",
        set.name
    );
    assert!(checked >= set.min_rules, "only {checked} {} rules run", set.name);
    assert!(
        failures.is_empty(),
        "{} of {positives} examples and {negatives} negative examples wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
