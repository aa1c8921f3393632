//! Prints the sanitizer's figures on the corpora kept in this crate, the
//! rows of the table in docs/sanitizer.md: credentials removed (gitleaks' own true
//! positives), real benign messages passed unchanged, stack traces removed
//! with their error line kept, and injected instructions neutralized when
//! quoted in an error and when unquoted in an upstream body. The tests
//! assert the goals; this prints the counts.
//!
//! Run with `cargo run --release -p toolgate-sanitize --example figures`
//! (`FIGURES_VERBOSE=1` lists the credentials that were not removed).

use serde_json::Value;
use toolgate_sanitize::{Category, STACK_TRACE_PLACEHOLDER, Sanitizer};

#[path = "../tests/support/neutralized.rs"]
mod support;
use support::neutralized;

fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect()
}

fn main() {
    let s = Sanitizer::builder().max_len(usize::MAX).build().expect("builds");
    // `FIGURES_VERBOSE=1` lists every credential that was not removed.
    let verbose = std::env::var_os("FIGURES_VERBOSE").is_some();

    // Credentials: every true positive of every gitleaks rule the
    // sanitizer runs (or replaces with its own detector).
    let ex: Value = serde_json::from_str(include_str!("../data/gitleaks/examples.json")).expect("examples");
    let kinds = Sanitizer::builtin_kinds();
    let placeholder = regex::Regex::new(r"\[redacted:[a-z0-9-]+\]").expect("valid");
    let (mut removed, mut all) = (0, 0);
    for (id, rule) in ex["rules"].as_object().expect("rules") {
        if !kinds.contains(&id.as_str()) {
            continue;
        }
        for tp in rule["tps"].as_array().expect("tps") {
            all += 1;
            let text = tp["text"].as_str().expect("text");
            let out = s.sanitize(text);
            // A placeholder names the kind, which may repeat the secret's
            // prefix (`[redacted:aws-amazon-bedrock-api-key-…]`).
            let visible = placeholder.replace_all(&out.text, "");
            let found = out.findings.iter().any(|f| f.category == Category::Secret);
            // Where the secret is known, none of its 8-byte pieces may
            // survive (a piece also found elsewhere in the text, such as
            // `rubygems` in `rubygemsToken=`, may appear that often).
            let gone = tp["secret"].as_str().is_none_or(|secret| {
                let b = secret.len();
                b < 8
                    || (0..=b - 8).all(|i| {
                        !secret.is_char_boundary(i)
                            || !secret.is_char_boundary(i + 8)
                            || visible.matches(&secret[i..i + 8]).count() < text.matches(&secret[i..i + 8]).count()
                    })
            });
            if found && gone {
                removed += 1;
            } else if verbose {
                eprintln!("kept {id}: {text:?} -> {:?}", out.text);
            }
        }
    }
    println!("credentials removed (gitleaks tps): {removed} / {all}");

    // detect-secrets' plugin test cases: its positives must be removed
    // (public IP addresses are not credentials, and gate keeps them).
    let (mut ds_removed, mut ds_all) = (0, 0);
    for v in jsonl(include_str!("../tests/corpus/credentials/detect_secrets.jsonl")) {
        if v["secret"] != Value::Bool(true) || v["plugin"] == "ip_public" {
            continue;
        }
        ds_all += 1;
        let text = v["text"].as_str().expect("text");
        let out = s.sanitize(text);
        if out.findings.iter().any(|f| f.category == Category::Secret) {
            ds_removed += 1;
        } else if verbose {
            eprintln!("kept {}: {text:?}", v["plugin"]);
        }
    }
    println!("credentials removed (detect-secrets positives): {ds_removed} / {ds_all}");
    let (mut ds_kept, mut ds_neg) = (0, 0);
    for v in jsonl(include_str!("../tests/corpus/credentials/detect_secrets.jsonl")) {
        if v["secret"] != Value::Bool(false) || v["plugin"] == "ip_public" {
            continue;
        }
        ds_neg += 1;
        let text = v["text"].as_str().expect("text");
        let out = s.sanitize(text);
        if out.text == text {
            ds_kept += 1;
        } else if verbose {
            eprintln!("changed {}: {text:?} -> {:?}", v["plugin"], out.text);
        }
    }
    println!("detect-secrets negatives unchanged (another scanner's near misses): {ds_kept} / {ds_neg}");

    let benign: Vec<String> = [
        include_str!("../tests/corpus/benign/git.jsonl"),
        include_str!("../tests/corpus/benign/kubectl.jsonl"),
        include_str!("../tests/corpus/benign/curl.jsonl"),
        include_str!("../tests/corpus/benign/openssh.jsonl"),
        include_str!("../tests/corpus/benign/urllib3.jsonl"),
    ]
    .iter()
    .flat_map(|t| jsonl(t))
    .map(|v| v.as_str().expect("string").to_string())
    .collect();
    let kept = benign.iter().filter(|m| s.sanitize(m).text == **m).count();
    println!("real benign messages unchanged: {kept} / {}", benign.len());

    let (mut ok, mut traces) = (0, 0);
    for v in jsonl(include_str!("../tests/corpus/traces/fluent.jsonl")) {
        let (name, text) = (v["name"].as_str().expect("name"), v["text"].as_str().expect("text"));
        if name == "ARBITRARY_TEXT" || name.starts_with("JAVA_EXC_PART") {
            continue;
        }
        traces += 1;
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let message = if name.starts_with("PYTHON") {
            lines[lines.len() - 1]
        } else if name.starts_with("DART") {
            lines[1]
        } else {
            lines[0]
        };
        let head: String = message.trim().chars().take(20).collect();
        let out = s.sanitize(text).text;
        if out.contains(STACK_TRACE_PLACEHOLDER) && out.contains(&head) {
            ok += 1;
        }
    }
    println!("stack traces removed, error line kept: {ok} / {traces}");

    for (name, text) in [
        (
            "promptinject",
            include_str!("../tests/corpus/injection/promptinject.jsonl"),
        ),
        (
            "latentinjection",
            include_str!("../tests/corpus/injection/latentinjection.jsonl"),
        ),
    ] {
        let items: Vec<String> = jsonl(text)
            .into_iter()
            .map(|v| v.as_str().expect("s").to_string())
            .collect();
        let (mut q, mut qa, mut u, mut ua) = (0, 0, 0, 0);
        for i in &items {
            let line = i.replace('\n', " ");
            for t in [
                format!("invalid value for field \"name\": \"{line}\""),
                format!("customer '{line}' not found"),
                format!(
                    "{{\"error\": \"unknown product\", \"query\": \"{}\"}}",
                    line.replace('"', "\\\"")
                ),
            ] {
                qa += 1;
                q += usize::from(neutralized(&s.sanitize(&t).text, i));
            }
            for t in [
                format!("upstream returned 502 Bad Gateway: {i}"),
                format!("HTTP 403 Forbidden\n{i}\nrequest id 8812"),
            ] {
                ua += 1;
                u += usize::from(neutralized(&s.sanitize(&t).text, i));
            }
        }
        println!("{name}: quoted in an error {q} / {qa}, unquoted in an upstream body {u} / {ua}");
    }
}
