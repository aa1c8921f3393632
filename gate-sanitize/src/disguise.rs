//! Disguised secrets: credentials split by zero-width characters, wrapped
//! in base64, or laid out by escapes, decoded once and scanned.
//!
//! `AKIA\u{200b}IOSF…` reads as an AWS key to a model and to a human but
//! matches no rule, and neither does a base64-encoded
//! `password=hunter22!`; nor does a token at the start of a line of a file
//! that a JSON error carries as one string (`"…\nsk_live_…"`), where the
//! `n` of the escape glues to the token and hides its word boundary. All
//! three are cheap to undo:
//!
//! * if the text holds `\n`, `\r` or `\t` escapes, the detectors run once
//!   more over a copy of the same length where each escape is a space and
//!   the character it stands for, so that tokens start and lines end where
//!   they do in the text the string holds, and what they find is at the
//!   same place in the original;
//! * if the text holds zero-width characters (U+200B–U+200D, U+2060,
//!   U+FEFF, the soft hyphen U+00AD), the detectors run once more over the
//!   text without them, and what they find is mapped back onto the
//!   original, zero-width characters included;
//! * every run of base64 (standard or URL-safe) of at least
//!   [`MIN_BASE64`] characters that decodes to printable UTF-8 is decoded
//!   and the decoded text scanned; a secret or an instruction in it
//!   removes the whole run, reported under the inner finding's kind.
//!
//! Decoding happens once: text found inside base64 is not decoded again.
//! Runs do not overlap and each byte is decoded at most once, so both
//! passes are linear, and text with neither costs one byte scan.

use crate::Category;
use crate::candidate::Cand;
use crate::tokens::base64url_decode;

/// The shortest base64 run worth decoding: 18 decoded bytes, enough for
/// the shortest credentials that have a shape.
pub(crate) const MIN_BASE64: usize = 24;

/// Runs longer than this are data (an image, an archive), not a wrapped
/// credential, and are not decoded.
const MAX_BASE64: usize = 1 << 20;

fn is_zero_width(c: char) -> bool {
    matches!(
        c,
        '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{ad}'
    )
}

/// Adds what the detectors find in `text` once its zero-width characters
/// are dropped.
pub(crate) fn zero_width(detect_plain: impl Fn(&str) -> Vec<Cand>, text: &str, cands: &mut Vec<Cand>) {
    // Every zero-width character starts with one of these bytes.
    if !text.bytes().any(|b| matches!(b, 0xC2 | 0xE2 | 0xEF)) || !text.chars().any(is_zero_width) {
        return;
    }
    let mut stripped = String::with_capacity(text.len());
    // Byte `i` of `stripped` is byte `map[i]` of `text`.
    let mut map = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if !is_zero_width(c) {
            stripped.push(c);
            map.extend(i..i + c.len_utf8());
        }
    }
    for c in detect_plain(&stripped) {
        if c.start >= c.end || c.end > map.len() {
            continue;
        }
        let (start, end) = (map[c.start], map[c.end - 1] + 1);
        // A span with no zero-width character inside was found already.
        if end - start > c.end - c.start {
            cands.push(Cand { start, end, ..c });
        }
    }
}

/// Adds what the detectors find in `text` with its `\n`, `\r` and `\t`
/// escapes laid out (see the module's documentation). An escaped
/// backslash (`\\n`, a Windows path's `\\new`) is no escape.
pub(crate) fn escaped_layout(detect_plain: impl Fn(&str) -> Vec<Cand>, text: &str, cands: &mut Vec<Cand>) {
    let bytes = text.as_bytes();
    let mut laid_out: Option<Vec<u8>> = None;
    let mut i = 0;
    // `str::find` with a char looks for it a word at a time.
    while let Some(at) = text[i..].find('\\') {
        let start = i + at;
        let mut end = start;
        while end < bytes.len() && bytes[end] == b'\\' {
            end += 1;
        }
        // A run of backslashes escapes the character after it only when
        // the run is odd: `\\n` is an escaped backslash, then `n`.
        let real = match bytes.get(end) {
            Some(b'n') => Some(b'\n'),
            Some(b'r') => Some(b'\r'),
            Some(b't') => Some(b'\t'),
            _ => None,
        };
        if let Some(real) = real
            && (end - start) % 2 == 1
        {
            let copy = laid_out.get_or_insert_with(|| bytes.to_vec());
            copy[end - 1] = b' ';
            copy[end] = real;
        }
        i = end;
    }
    let Some(copy) = laid_out else { return };
    // Only ASCII bytes were replaced by ASCII bytes: still UTF-8.
    let Ok(copy) = String::from_utf8(copy) else { return };
    cands.extend(detect_plain(&copy));
}

fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

/// Adds a candidate for every base64 run whose decoded text holds a
/// secret or an instruction.
pub(crate) fn base64(detect_plain: impl Fn(&str) -> Vec<Cand>, text: &str, cands: &mut Vec<Cand>) {
    // Most results (a number, a short word) cannot hold a run that long.
    if text.len() < MIN_BASE64 {
        return;
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !is_base64(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_base64(bytes[i]) {
            i += 1;
        }
        let mut end = i;
        while end < bytes.len() && end - i < 2 && bytes[end] == b'=' {
            end += 1;
        }
        let len = i - start;
        if !(MIN_BASE64..=MAX_BASE64).contains(&len) {
            i = end.max(i);
            continue;
        }
        if let Some(kind) = hidden_finding(&detect_plain, &text[start..i]) {
            cands.push(Cand { start, end, ..kind });
        }
        i = end.max(i);
    }
}

/// The first secret or instruction in the decoded text of `run`, if it
/// decodes to printable UTF-8.
fn hidden_finding(detect_plain: impl Fn(&str) -> Vec<Cand>, run: &str) -> Option<Cand> {
    // Mixed letters and digits: a long word or a path segment is not base64.
    let b = run.as_bytes();
    if !(b.iter().any(u8::is_ascii_digit) || b.iter().any(|&c| matches!(c, b'+' | b'/')))
        || !b.iter().any(u8::is_ascii_uppercase)
        || !b.iter().any(u8::is_ascii_lowercase)
    {
        return None;
    }
    let decoded = base64url_decode(run)?;
    let decoded = String::from_utf8(decoded).ok()?;
    if decoded
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return None;
    }
    detect_plain(&decoded)
        .into_iter()
        .find(|c| matches!(c.category, Category::Secret | Category::Instruction))
}
