//! Short, deterministic, single-line renderings of what the model sent.
//!
//! Everything echoed back is cut to a short prefix and escaped so that one
//! violation stays one line, and so that a rejection never repeats more of a
//! value than the model needs to recognise it (the sanitizer runs on top).

use crate::tree::Tree;

/// Longest value prefix echoed back, in characters.
pub const MAX_ECHO_CHARS: usize = 40;

/// The first `n` characters of `s` (no ellipsis).
pub(crate) fn truncate_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Escapes control characters and cuts at [`MAX_ECHO_CHARS`] with `…`, for
/// names that appear between backticks (field and tool names).
pub(crate) fn short_name(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == MAX_ECHO_CHARS {
            out.push('…');
            break;
        }
        match c {
            '`' => out.push('\''),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A quoted, escaped, truncated string literal: `"abc"` or `"abcd…"`.
pub(crate) fn quoted(s: &str) -> String {
    let count = s.chars().count();
    if count <= MAX_ECHO_CHARS {
        serde_json::to_string(s).unwrap_or_default()
    } else {
        let prefix = truncate_chars(s, MAX_ECHO_CHARS);
        let q = serde_json::to_string(&prefix).unwrap_or_default();
        format!("{}…\" ({count} characters)", &q[..q.len() - 1])
    }
}

/// What was sent: type plus a short rendering (`integer 12345`,
/// `string "abc"`, `object with 2 fields`).
pub(crate) fn got(t: &Tree) -> String {
    match t {
        Tree::Null => "null".to_string(),
        Tree::Bool(b) => format!("boolean {b}"),
        Tree::Num(n) => format!("{} {}", t.type_name(), n.render()),
        Tree::Str(s) => format!("string {}", quoted(s)),
        Tree::Arr(items) => match items.len() {
            1 => "array of 1 item".to_string(),
            n => format!("array of {n} items"),
        },
        Tree::Obj(fields) => match fields.len() {
            0 => "empty object".to_string(),
            1 => "object with 1 field".to_string(),
            n => format!("object with {n} fields"),
        },
    }
}

/// One JSON Pointer segment (RFC 6901 escaping), shortened for display.
pub(crate) fn pointer_segment(key: &str) -> String {
    short_name(&key.replace('~', "~0").replace('/', "~1"))
}

/// Pluralizes simple English nouns for counts in messages.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A pattern for display: cut at 80 characters, control characters escaped.
pub(crate) fn short_pattern(p: &str) -> String {
    let mut out = String::new();
    for (i, c) in p.chars().enumerate() {
        if i == 80 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}
