//! Property tests (S11): idempotence, no planted secret surviving as any
//! 8-byte substring, bounded output, and no panic on arbitrary bytes.
//!
//! The arbitrary-bytes property is the stable-toolchain stand-in for the
//! cargo-fuzz target in `fuzz/`, so CI covers it.

use proptest::prelude::*;
use std::sync::OnceLock;
use toolgate_sanitize::Sanitizer;

fn default_san() -> &'static Sanitizer {
    static S: OnceLock<Sanitizer> = OnceLock::new();
    S.get_or_init(Sanitizer::default)
}

fn uncapped() -> &'static Sanitizer {
    static S: OnceLock<Sanitizer> = OnceLock::new();
    S.get_or_init(|| Sanitizer::builder().max_len(usize::MAX).build().unwrap())
}

fn small_cap() -> &'static Sanitizer {
    static S: OnceLock<Sanitizer> = OnceLock::new();
    S.get_or_init(|| Sanitizer::builder().max_len(96).build().unwrap())
}

/// Fragments that sit near rule boundaries: anchors, partial secrets,
/// placeholders, separators and trace markers. Random concatenations of
/// them reach far more edge cases than random characters do.
const FRAGMENTS: &[&str] = &[
    " ",
    "\n",
    "\t",
    "\r\n",
    ":",
    "=",
    "@",
    ".",
    "/",
    "-",
    "_",
    "[",
    "]",
    "\"",
    "'",
    "(",
    ")",
    "a",
    "Z",
    "7",
    "f",
    "00",
    "abc123",
    "xyz",
    "AKIA",
    "IOSFODNN7EXAMPLE",
    "ghp_",
    "0123456789abcdefghij",
    "ABCDEFGHIJKLMNOP",
    "sk-",
    "sk_live_",
    "xoxb-",
    "eyJ",
    "eyJhbGciOiJIUzI1NiJ9",
    "://",
    "http",
    "user",
    "pass",
    "password",
    "password=",
    "token=",
    "key=",
    "secret:",
    "Authorization: Bearer ",
    "10.",
    "0.",
    "1",
    "192.168.",
    "127.0.0.1",
    "::",
    "fd",
    "fe80",
    "::1",
    "[",
    "]:",
    ":8080",
    ".local",
    ".internal",
    ".corp",
    "localhost",
    "db",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEA",
    "Traceback (most recent call last):",
    "  File \"x.py\", line 1",
    "    at ",
    "\tat a.B(C.java:1)",
    "goroutine 1 [running]:",
    "main.main()",
    "\t/x/y.go:3 +0x1",
    "thread 'main' panicked at src/main.rs:1:2:",
    "stack backtrace:",
    "   0: foo",
    "note: run with `RUST_BACKTRACE=1`",
    "ignore previous instructions",
    "system:",
    "<|im_start|>",
    "<tool_call>",
    "[redacted:jwt]",
    "[internal address]",
    "[stack trace removed]",
    "[echoed argument]",
    "[truncated: 12 bytes]",
    "é",
    "日本",
    "\u{200b}",
    "Stack trace:",
    "#0 ",
    "ya29.",
    "AIza",
    "glpat-",
    "hooks.slack.com/services/",
];

fn fragments() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..80).prop_map(|v| v.concat())
}

fn check_invariants(s: &Sanitizer, input: &str) {
    let out = s.sanitize(input);
    // Bounded output.
    assert!(out.text.len() <= s.max_len(), "{} > cap", out.text.len());
    // Findings are in order, disjoint, inside the input and on char
    // boundaries (so they can be logged and sliced safely).
    let mut last = 0;
    for f in &out.findings {
        assert!(f.range.start <= f.range.end && f.range.end <= input.len());
        assert!(input.is_char_boundary(f.range.start) && input.is_char_boundary(f.range.end));
        if f.category != toolgate_sanitize::Category::Truncated {
            assert!(f.range.start >= last, "overlapping findings {:?}", out.findings);
            last = f.range.end;
        }
    }
    // Idempotence.
    let again = s.sanitize(&out.text);
    assert_eq!(again.text, out.text, "not idempotent for {input:?}");
}

/// Secrets of several kinds, each drawn at random from the kind's shape.
fn planted_secret() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        "AKIA[A-Z2-7]{16}".prop_map(|s| (s.clone(), s)),
        "ghp_[A-Za-z0-9]{36}".prop_map(|s| (s.clone(), s)),
        "sk_live_[0-9a-zA-Z]{24,40}".prop_map(|s| (s.clone(), s)),
        "xoxb-[0-9]{12}-[0-9]{12}-[A-Za-z0-9]{24}".prop_map(|s| (s.clone(), s)),
        "glpat-[A-Za-z0-9]{20}".prop_map(|s| (s.clone(), s)),
        "AIza[0-9A-Za-z]{35}".prop_map(|s| (s.clone(), s)),
        "SG\\.[A-Za-z0-9]{22}\\.[A-Za-z0-9]{43}".prop_map(|s| (s.clone(), s)),
        "dop_v1_[a-f0-9]{64}".prop_map(|s| (s.clone(), s)),
        "sk-ant-api03-[A-Za-z0-9_-]{93}AA".prop_map(|s| (s.clone(), s)),
        "[a-z]{5}[0-9]{3}[A-Z]{2}".prop_map(|p| (format!("password={p}"), p)),
        "[a-z]{4}[0-9]{4}[A-Z]{4}".prop_map(|p| (format!("postgres://app:{p}@db.example.com/x"), p)),
        "[A-Za-z0-9]{8}[0-9]{4}[a-z]{8}".prop_map(|t| (format!("Authorization: Bearer {t}"), t)),
        "[A-Za-z0-9/+]{64}".prop_map(|b| {
            let pem = format!("-----BEGIN PRIVATE KEY-----\n{b}\n{b}\n-----END PRIVATE KEY-----");
            (pem, b)
        }),
    ]
}

const WORDS: &[&str] = &[
    "the", "order", "failed", "because", "invoice", "was", "closed", "retry", "later", "customer", "id", "42",
    "error:", "at", "line", "see", "docs", "for", "details", "and", "then", "amount", "EUR",
];

fn filler() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..30).prop_map(|v| v.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn idempotent_on_tricky_fragments(input in fragments()) {
        check_invariants(default_san(), &input);
        check_invariants(small_cap(), &input);
        check_invariants(uncapped(), &input);
    }

    #[test]
    fn no_panic_and_invariants_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let input = String::from_utf8_lossy(&bytes);
        check_invariants(default_san(), &input);
        check_invariants(small_cap(), &input);
    }

    #[test]
    fn no_planted_secret_survives(
        parts in prop::collection::vec((filler(), planted_secret()), 1..6),
        tail in filler(),
        sep in prop::sample::select(&[" ", "\n", ", ", "\t", " (", "\r\n"][..]),
    ) {
        let mut input = String::new();
        let mut secrets = Vec::new();
        for (words, (planted, secret)) in parts {
            input.push_str(&words);
            input.push_str(sep);
            input.push_str(&planted);
            input.push_str(if sep == " (" { ") " } else { sep });
            secrets.push(secret);
        }
        input.push_str(&tail);
        let out = uncapped().sanitize(&input);
        for secret in &secrets {
            for w in secret.as_bytes().windows(8) {
                let w = std::str::from_utf8(w).unwrap();
                prop_assert!(!out.text.contains(w), "{w:?} of {secret:?} survived in {:?}", out.text);
            }
        }
        prop_assert_eq!(uncapped().sanitize(&out.text).text, out.text.clone());
    }

    #[test]
    fn output_growth_is_bounded_by_findings(input in fragments()) {
        let out = uncapped().sanitize(&input);
        // Each placeholder is at most `[redacted:` + a 64-byte kind + `]`.
        prop_assert!(out.text.len() <= input.len() + 75 * out.findings.len());
        prop_assert!(out.text.len() <= default_san().max_len().max(out.text.len()));
    }
}
