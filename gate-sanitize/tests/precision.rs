//! Precision: real error and diagnostic messages from other projects
//! (git, kubectl, curl, OpenSSH, urllib3; `tests/corpus/PROVENANCE.md`)
//! that talk about passwords, keys, tokens, hosts and certificates without
//! holding any. Every one must come out of the default sanitizer unchanged.

use toolgate_sanitize::Sanitizer;

const CORPORA: &[(&str, &str)] = &[
    ("git", include_str!("corpus/benign/git.jsonl")),
    ("kubectl", include_str!("corpus/benign/kubectl.jsonl")),
    ("curl", include_str!("corpus/benign/curl.jsonl")),
    ("openssh", include_str!("corpus/benign/openssh.jsonl")),
    ("urllib3", include_str!("corpus/benign/urllib3.jsonl")),
];

/// Every message of every corpus, with the corpus' name.
pub fn messages() -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (name, text) in CORPORA {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let m: String = serde_json::from_str(line).expect("one JSON string per line");
            out.push((*name, m));
        }
    }
    out
}

#[test]
fn real_benign_error_messages_pass_unchanged() {
    let s = Sanitizer::default();
    let all = messages();
    assert!(all.len() >= 1000, "only {} messages", all.len());
    let changed: Vec<String> = all
        .iter()
        .filter_map(|(name, m)| {
            let out = s.sanitize(m);
            (out.text != *m).then(|| format!("{name}: {m:?}\n   -> {:?}", out.text))
        })
        .collect();
    assert!(
        changed.is_empty(),
        "{} of {} benign messages changed:\n{}",
        changed.len(),
        all.len(),
        changed.join("\n")
    );
}
