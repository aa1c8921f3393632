//! Stack traces from a corpus not written for gate: every exception
//! fixture of Google's fluent-plugin-detect-exceptions
//! (`tests/corpus/traces/fluent.jsonl`, see `tests/corpus/PROVENANCE.md`)
//! loses its frames and keeps its error line, and the fixture of ordinary
//! text (`ARBITRARY_TEXT`) passes unchanged.
//!
//! The error line is where each language puts the message: the last line
//! of a Python traceback, the line after `Unhandled exception:` in Dart,
//! the first line everywhere else. `JAVA_EXC_PART1`/`PART2` are halves of
//! `JAVA_EXC`, which is tested whole.

use serde_json::Value;
use toolgate_sanitize::{Category, STACK_TRACE_PLACEHOLDER, Sanitizer};

const FIXTURES: &str = include_str!("corpus/traces/fluent.jsonl");

fn error_line(name: &str, text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let line = if name.starts_with("PYTHON") {
        lines[lines.len() - 1]
    } else if name.starts_with("DART") {
        lines[1]
    } else {
        lines[0]
    };
    line.trim().to_string()
}

#[test]
fn every_fixture_loses_its_frames_and_keeps_its_error_line() {
    let s = Sanitizer::builder().max_len(usize::MAX).build().unwrap();
    let (mut ok, mut all, mut failures) = (0, 0, Vec::new());
    for line in FIXTURES.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let (name, text) = (v["name"].as_str().unwrap(), v["text"].as_str().unwrap());
        let out = s.sanitize(text);
        if name == "ARBITRARY_TEXT" {
            assert_eq!(out.text, text);
            continue;
        }
        if name.starts_with("JAVA_EXC_PART") {
            continue;
        }
        all += 1;
        let message = error_line(name, text);
        // Other detectors may still redact inside the message (an
        // internal address in Go's `http: panic serving [::1]:…`), so its
        // first twenty characters stand for it.
        let head: String = message.chars().take(20).collect();
        let removed = out.text.contains(STACK_TRACE_PLACEHOLDER)
            && out.findings.iter().any(|f| f.category == Category::StackTrace);
        if removed && out.text.contains(&head) {
            ok += 1;
        } else {
            failures.push(format!("{name}: {:?}", out.text));
        }
    }
    assert!(all >= 38, "{all} fixtures");
    assert!(failures.is_empty(), "{ok}/{all}:\n{}", failures.join("\n"));
}
