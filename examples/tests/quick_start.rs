//! The README's quick start is this package's `quick-start` binary: the
//! README's code block is the binary's source, and what the binary prints
//! ends with the README's output block, so neither can drift from the other.

use std::process::Command;

const README: &str = include_str!("../../README.md");
const SOURCE: &str = include_str!("../src/bin/quick-start.rs");

/// The first fenced block of `lang` after the heading `## Quick start`.
fn quick_start_block(lang: &str) -> &'static str {
    let section = README
        .split_once("\n## Quick start\n")
        .expect("the README has a Quick start section")
        .1;
    let section = section.split_once("\n## ").map_or(section, |(s, _)| s);
    let fence = format!("```{lang}\n");
    let start = section.find(&fence).expect("a fenced block") + fence.len();
    let len = section[start..].find("```\n").expect("a closed block");
    &section[start..start + len]
}

#[test]
fn the_readme_quick_start_is_the_binary_source() {
    let code = SOURCE
        .split_once("\n\n")
        .expect("the binary's doc paragraph, then the README's code")
        .1;
    assert_eq!(code, quick_start_block("rust"));
}

#[test]
fn the_quick_start_prints_what_the_readme_shows() {
    // A directory of its own: the quick start opens `sqlite:gate.db` in the
    // current directory.
    let dir = std::env::temp_dir().join(format!("gate-quick-start-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_quick-start"))
        .current_dir(&dir)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let (manifest, decisions) = stdout.split_once('\n').expect("the manifest's line first");
    assert!(manifest.contains(r#""name":"lookup_customer""#), "{manifest}");
    assert_eq!(decisions, quick_start_block("text"));
}
