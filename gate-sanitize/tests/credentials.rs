//! Credentials from another scanner's tests: every positive case of Yelp's
//! detect-secrets plugin tests (`tests/corpus/credentials/`, see
//! `tests/corpus/PROVENANCE.md`) must be redacted. Its `ip_public` cases are
//! left out: a public IP address is not a credential, and gate keeps it.

use serde_json::Value;
use toolgate_sanitize::{Category, Sanitizer};

#[test]
fn every_detect_secrets_positive_is_redacted() {
    let s = Sanitizer::default();
    let mut missed = Vec::new();
    let mut all = 0;
    for line in include_str!("corpus/credentials/detect_secrets.jsonl").lines() {
        let v: Value = serde_json::from_str(line).expect("JSON lines");
        if v["secret"] != Value::Bool(true) || v["plugin"] == "ip_public" {
            continue;
        }
        all += 1;
        let text = v["text"].as_str().expect("text");
        if !s.sanitize(text).findings.iter().any(|f| f.category == Category::Secret) {
            missed.push(format!("{}: {text:?}", v["plugin"]));
        }
    }
    assert!(all >= 60, "{all} cases");
    assert!(
        missed.is_empty(),
        "{} of {all} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}
