//! `gate sanitize`: a text as the model would see it after gate's sanitizer.

use std::process::ExitCode;

use serde_json::Value;
use toolgate::sanitize::Sanitizer;

use crate::UsageError;
use crate::input::read_bytes;

/// Arguments of `gate sanitize`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The text to sanitize (at most 64 MiB); `-` or nothing reads standard
    /// input. Bytes that are not UTF-8 (a tool's error body may hold binary
    /// garbage) are replaced with U+FFFD, and said so.
    file: Option<String>,
    /// Print the findings (kinds and byte ranges, never the secrets) as JSON,
    /// with `invalid_utf8_replaced`, the number of bytes that were not UTF-8.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    let bytes = read_bytes(args.file.as_deref().unwrap_or("-"))?;
    let (text, replaced) = lossy(&bytes);
    let sanitized = Sanitizer::default().sanitize(&text);
    if args.json {
        let mut report = serde_json::to_value(sanitized.report())?;
        if let Value::Object(map) = &mut report {
            map.insert("invalid_utf8_replaced".into(), replaced.into());
        }
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        if replaced > 0 {
            eprintln!(
                "gate sanitize: {replaced} byte(s) that are not UTF-8 were replaced with U+FFFD before sanitizing"
            );
        }
        out!("{}", sanitized.text);
        if !sanitized.text.ends_with('\n') {
            outln!();
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `bytes` as text with each run of invalid UTF-8 replaced by one U+FFFD, as
/// [`String::from_utf8_lossy`] does, and how many bytes were replaced.
fn lossy(bytes: &[u8]) -> (String, usize) {
    let mut text = String::with_capacity(bytes.len());
    let mut replaced = 0;
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            text.push(char::REPLACEMENT_CHARACTER);
            replaced += chunk.invalid().len();
        }
    }
    (text, replaced)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_matches_from_utf8_lossy_and_counts_the_bytes_it_replaced() {
        for (bytes, replaced) in [
            (&b"plain"[..], 0),
            (b"a\xffb", 1),
            (b"\xf0\x9f\x98", 3),
            (b"\xc3(\xff\xfe)", 3),
            (b"", 0),
        ] {
            let (text, n) = lossy(bytes);
            assert_eq!(text, String::from_utf8_lossy(bytes), "{bytes:?}");
            assert_eq!(n, replaced, "{bytes:?}");
        }
    }
}
