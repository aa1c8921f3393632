//! The display rules every rejection text keeps, shared by the renderings
//! (`render`) and the suggestions (`suggest`): what the model sent is cut
//! to [`MAX_ECHO_CHARS`], a target is shown whole, and a list of targets
//! stays within [`LIST_BUDGET_CHARS`] (the rules themselves are argued in
//! `render`'s module docs).
//!
//! `render` words rejections with suggestions in them and `suggest` lists
//! names the way `render` shows them, so these helpers live in neither.

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
pub(crate) fn escape_name(s: &str, limit: Option<usize>) -> String {
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
