//! Short, deterministic, single-line renderings for rejection texts.
//!
//! Two kinds of text end up in a rejection, and they follow opposite rules.
//!
//! - **What the model sent** (a received value, an unknown key, a tool name
//!   that does not exist) is cut to [`MAX_ECHO_CHARS`] with `…` and escaped,
//!   so one violation stays one line and a rejection never repeats more of a
//!   value than the model needs to recognise it (the sanitizer runs on top).
//! - **Targets** (allowed enum members and `const` values, declared field
//!   names, tool names) are **never truncated**: the model cannot hit a
//!   target it cannot read, and `"Priority support for enterprise accoun…"`
//!   is a value no call can send. Targets are rendered exactly, as JSON
//!   literals or between backticks (a name that backticks cannot hold
//!   exactly, with a backtick or a control character in it, is shown as a
//!   JSON string literal instead).
//!
//! A *list* of targets (the values of an enum, the fields of an object, the
//! tools of a toolbox) is listed whole, in its declared order, while it fits
//! in [`LIST_BUDGET_CHARS`]. Past the budget the values closest to what was
//! sent (by the same similarity as "did you mean") come first, as many as
//! fit, and the list ends with an honest count of the rest
//! (`… and 1940 more not listed`). A value is never cut in the middle: the first one is
//! listed even if it alone is longer than the budget, and a value that would
//! cross the budget is left out whole and counted.

use crate::tree::Tree;

/// Longest prefix of a *sent* value echoed back, in characters. Targets
/// (allowed values, field and tool names) are never cut; see the module docs.
pub const MAX_ECHO_CHARS: usize = 40;

/// Budget, in characters, for a list of targets in a rejection: the allowed
/// values of an enum, the allowed fields of an object, or (for the whole
/// message) the tool names of an unknown-tool rejection. A list that fits is
/// shown whole; a longer one shows the closest values first, each whole, as
/// many as fit, then how many were left out.
pub const LIST_BUDGET_CHARS: usize = 1000;

/// The first `n` characters of `s` (no ellipsis).
pub(crate) fn truncate_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Escapes control characters (and backticks, as `'`), cutting at `limit`
/// characters with `…` when one is given.
fn escape_name(s: &str, limit: Option<usize>) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if Some(i) == limit {
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

/// Escapes control characters and cuts at [`MAX_ECHO_CHARS`] with `…`, for
/// names the model *sent* that appear between backticks (unknown field and
/// tool names). Never for targets: see [`code`].
pub(crate) fn short_name(s: &str) -> String {
    escape_name(s, Some(MAX_ECHO_CHARS))
}

/// A target name (a declared field or a tool), whole: `` `name` ``, or a
/// JSON string literal when backticks cannot show it exactly (empty, or
/// containing a backtick or a control character).
pub(crate) fn code(s: &str) -> String {
    if !s.is_empty() && !s.contains('`') && !s.chars().any(char::is_control) {
        format!("`{s}`")
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

/// An allowed value (enum member, `const`), whole, as one line of JSON.
pub(crate) fn target_value(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// An allowed string, whole, as a JSON string literal.
pub(crate) fn target_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The length in characters of `items` joined with `", "`.
pub(crate) fn joined_len<S: AsRef<str>>(items: &[S]) -> usize {
    let chars: usize = items.iter().map(|s| s.as_ref().chars().count()).sum();
    chars + 2 * items.len().saturating_sub(1)
}

/// How many of `items`, from the front, fit in `budget` characters when
/// joined with `", "`: the longest such prefix, but at least one item (a
/// target is listed whole even when it alone is over the budget).
pub(crate) fn fitting_prefix<S: AsRef<str>>(items: &[S], budget: usize) -> usize {
    let mut used = 0;
    for (i, s) in items.iter().enumerate() {
        let add = s.as_ref().chars().count() + if i == 0 { 0 } else { 2 };
        if i > 0 && used + add > budget {
            return i;
        }
        used += add;
    }
    items.len()
}

/// What the model sent, as a quoted, escaped, truncated string literal:
/// `"abc"` or `"abcd…" (57 characters)`. Never for targets: see [`target_str`].
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

/// One JSON Pointer segment (RFC 6901 escaping) for a key the model sent
/// that the schema does not declare, shortened for display.
pub(crate) fn pointer_segment(key: &str) -> String {
    short_name(&key.replace('~', "~0").replace('/', "~1"))
}

/// One JSON Pointer segment (RFC 6901 escaping) for a declared property
/// name: a target, so escaped but never cut.
pub(crate) fn pointer_target(key: &str) -> String {
    escape_name(&key.replace('~', "~0").replace('/', "~1"), None)
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
