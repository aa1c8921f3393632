//! gitleaks' own examples, rule by rule: every true positive a gitleaks
//! rule's Go source lists (`tps`) must be found by that rule, and every
//! false positive (`fps`) must not be. The expected columns come from
//! gitleaks (`data/gitleaks/examples.json`, extracted from the pinned
//! release by `data/gitleaks/extract_examples.py`), not from this crate.
//!
//! Two deliberate differences from gitleaks are checked rather than
//! skipped. A rule that gitleaks restricts to some file paths (`.tf`,
//! `nuget.config`...) runs on all text here, since a tool's text has no
//! path: a false positive that gitleaks rejects only for its path is
//! expected to be found. And the kinds gate's own detectors report instead
//! of gitleaks' rule (`jwt`, `private-key`) must still keep every true
//! positive from the model, under whichever kind the full sanitizer finds.
//!
//! Each rule is checked alone (every other kind switched off), as gitleaks
//! validates each rule with a single-rule detector: a false positive of
//! one rule may well be another rule's true positive.

use serde_json::Value;
use std::collections::BTreeMap;
use toolgate_sanitize::{Category, Sanitizer};

#[path = "support/one_kind.rs"]
mod one_kind;
use one_kind::only;

const EXAMPLES: &str = include_str!("../data/gitleaks/examples.json");

fn examples() -> BTreeMap<String, Value> {
    let v: Value = serde_json::from_str(EXAMPLES).expect("examples.json parses");
    v["rules"]
        .as_object()
        .expect("a rules object")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Examples on which gate deliberately disagrees with gitleaks, each with
/// its reason; the test checks that they do differ, so none is skipped.
const DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "mailchimp-api-key",
        "MailchimpSDK.initialize(token: 3012a5754bbd716926f99c028f7ea428-us18)",
        "gitleaks' rule needs the word mailchimp before `=`/`:`; gate's also finds a bare \
         `<32 hex>-usNN`, a shape nothing else has, and this example holds one",
    ),
    (
        "anthropic-api-key",
        "sk-ant-api03-abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234fghijklmnopby56aaaogaopaaaabc123xyzBB",
        "gitleaks' rule wants the key to end in `AA`; Nosey Parker's rule of the same kind takes \
         any 95 characters after `sk-ant-apiNN-`, and a key of that shape is not left for the model",
    ),
];

/// The gitleaks rules whose kind a gate detector reports instead.
const SUPERSEDED: &[&str] = &["jwt", "private-key"];

fn found(s: &Sanitizer, kind: &str, text: &str) -> bool {
    s.sanitize(text)
        .findings
        .iter()
        .any(|f| f.kind == kind && f.category == Category::Secret)
}

#[test]
fn every_gitleaks_rule_finds_its_true_positives_and_not_its_false_ones() {
    let kinds = Sanitizer::builtin_kinds();
    let mut failures = Vec::new();
    let (mut tps, mut fps, mut rules) = (0, 0, 0);
    let full = Sanitizer::builder()
        .max_len(usize::MAX)
        .build()
        .expect("default builds");
    for (id, ex) in examples() {
        if !kinds.contains(&id.as_str()) {
            continue;
        }
        rules += 1;
        let s = only(&id);
        let superseded = SUPERSEDED.contains(&id.as_str());
        let path = ex["path"].as_str().map(|p| regex::Regex::new(p).expect("path regex"));
        let pos = ex["tps"].as_array().expect("tps");
        let neg = ex["fps"].as_array().expect("fps");
        assert!(!pos.is_empty(), "{id}: no true positive to test");
        for tp in pos {
            tps += 1;
            let text = tp["text"].as_str().expect("text");
            let kept = if superseded {
                full.sanitize(text)
                    .findings
                    .iter()
                    .any(|f| f.category == Category::Secret)
            } else {
                found(&s, &id, text)
            };
            if !kept {
                failures.push(format!("{id}: missed {text:?}"));
            }
        }
        for fp in neg {
            fps += 1;
            let text = fp.as_str().expect("fp text");
            let only_by_path = match (&path, ex["fp_paths"][text].as_str()) {
                (Some(re), Some(p)) => !re.is_match(p),
                _ => false,
            };
            let differs = DIFFERENCES.iter().any(|(k, t, _)| *k == id && *t == text);
            if found(&s, &id, text) != (only_by_path || differs) {
                failures.push(format!("{id}: flagged {text:?}"));
            }
        }
    }
    assert!(rules >= 200, "only {rules} rules had examples");
    assert!(
        failures.is_empty(),
        "{} of {tps} true and {fps} false positives wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_rule_matching_a_prefix_takes_the_whole_token() {
    // gitleaks' `slack-legacy-workspace-token` matches `xoxa-2-511111111`
    // of this token; the rest of it is the same secret.
    let t = "slackToken=\"xoxa-2-511111111-31111111111-3111111111111-e039d02840a0b9379c\"";
    let out = only("slack-legacy-workspace-token").sanitize(t);
    assert_eq!(out.text, "slackToken=\"[redacted:slack-legacy-workspace-token]\"");
}

#[test]
fn a_short_group_of_a_pattern_is_not_the_secret() {
    // `microsoft-teams-webhook` has no secret group, and its first group
    // is a four-character piece of a UUID: the whole URL is redacted.
    let t = "post to https://mycompany.webhook.office.com/webhookb2/hcf1y7j4-9nff-osdj-ango-wi3oed66v01i@k7xshgz3-t6xz-52as-7wcp-tlfv0pmxdj1d/IncomingWebhook/1h4gqs5unmcieodhiujvr1chh9lwhmxv/qb74du62-m9d2-p6yw-9j04-5uc4s9mlz5vs failed";
    let out = only("microsoft-teams-webhook").sanitize(t);
    assert_eq!(out.text, "post to [redacted:microsoft-teams-webhook] failed");
}
