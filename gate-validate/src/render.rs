//! Short, deterministic, single-line renderings for rejection texts, and the
//! English the model reads for what was expected: a value list, a type's
//! constraints, the allowed fields. [`crate::diagnose`] finds what is wrong
//! and where; the words are chosen here, from the schema rules and values it
//! hands over, so the wording can change without touching the analysis.
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

use serde_json::Value;

use crate::display::{LIST_BUDGET_CHARS, MAX_ECHO_CHARS, code, escape_name, short_name, truncate_chars};
use crate::schema::{
    ArrRules, Bound, NumRules, StrRules, T_ARRAY, T_BOOL, T_INTEGER, T_NULL, T_NUMBER, T_OBJECT, T_STRING, render_f64,
};
use crate::suggest;
use crate::tree::Tree;

/// An allowed value (enum member, `const`), whole, as one line of JSON.
fn target_value(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// An allowed string, whole, as a JSON string literal.
pub(crate) fn target_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
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
fn short_pattern(p: &str) -> String {
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

/// The text an allowed value is compared with for "closest first": a
/// string itself, anything else its JSON.
fn value_key(v: &Value, rendered: &str) -> String {
    match v {
        Value::String(s) => s.clone(),
        _ => rendered.to_string(),
    }
}

/// The same for what was sent; nothing for arrays and objects.
fn sent_key(t: &Tree) -> Option<String> {
    match t {
        Tree::Str(s) => Some(s.clone()),
        Tree::Null => Some("null".into()),
        Tree::Bool(b) => Some(b.to_string()),
        Tree::Num(n) => Some(n.render()),
        Tree::Arr(_) | Tree::Obj(_) => None,
    }
}

/// `one of "a", "b", "c"`: the allowed values, each whole (they are targets;
/// see the module docs). All of them in schema order while they fit in
/// [`LIST_BUDGET_CHARS`]; past it, the closest to what was `sent` first, as
/// many as fit, and how many more there are.
pub(crate) fn one_of_values(values: &[Value], sent: Option<&Tree>) -> String {
    if values.len() == 1 {
        return target_value(&values[0]);
    }
    let rendered: Vec<String> = values.iter().map(target_value).collect();
    let owned_keys: Vec<String> = values.iter().zip(&rendered).map(|(v, r)| value_key(v, r)).collect();
    let keys: Vec<&str> = owned_keys.iter().map(String::as_str).collect();
    let sent = sent.and_then(sent_key);
    let l = suggest::listing(&rendered, &keys, sent.as_deref(), LIST_BUDGET_CHARS, false);
    let shown = l.joined(&rendered);
    if l.more == 0 {
        format!("one of {shown}")
    } else if l.closest_first {
        format!(
            "one of {} values, closest first: {shown}, … and {} more not listed",
            values.len(),
            l.more
        )
    } else {
        format!(
            "one of {} values: {shown}, … and {} more not listed",
            values.len(),
            l.more
        )
    }
}

/// ` of 3 to 8 characters and matching ^[a-z]+$`: a string's rules, in
/// words, to follow `string`; nothing for a string without rules.
pub(crate) fn string_constraints(rules: Option<&StrRules>) -> String {
    let Some(r) = rules else {
        return String::new();
    };
    let mut parts = Vec::new();
    match (r.min_length, r.max_length) {
        (Some(a), Some(b)) if a == b => parts.push(format!("of exactly {}", plural(a, "character", "characters"))),
        (Some(a), Some(b)) => parts.push(format!("of {a} to {b} characters")),
        (Some(a), None) => parts.push(format!("of at least {}", plural(a, "character", "characters"))),
        (None, Some(b)) => parts.push(format!("of at most {}", plural(b, "character", "characters"))),
        (None, None) => {}
    }
    if let Some((p, _)) = &r.pattern {
        parts.push(format!("matching {}", short_pattern(p)));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" {}", parts.join(" and "))
    }
}

/// Orders two bounds by value, whether integer or float.
fn bound_order(a: Bound, b: Bound) -> std::cmp::Ordering {
    match (a, b) {
        (Bound::Int(x), Bound::Int(y)) => x.cmp(&y),
        _ => {
            let f = |b: Bound| match b {
                Bound::Int(i) => i as f64,
                Bound::Float(f) => f,
            };
            f(a).total_cmp(&f(b))
        }
    }
}

/// ` ≥ 0`, ` from 0 to 255`, ` > 0 and ≤ 10`: the tightest bounds, in words,
/// to follow `integer` or `number`; nothing for a number without rules.
pub(crate) fn number_constraints(rules: Option<&NumRules>) -> String {
    let Some(r) = rules else {
        return String::new();
    };
    // (bound, inclusive)
    let mut lo: Option<(Bound, bool)> = None;
    let mut hi: Option<(Bound, bool)> = None;
    let mut tighten_lo = |b: Bound, inc: bool| {
        if lo.is_none_or(|(c, ci)| match bound_order(b, c) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => ci && !inc,
            std::cmp::Ordering::Less => false,
        }) {
            lo = Some((b, inc));
        }
    };
    if let Some((_, l, _)) = r.int_format {
        // 64-bit ranges are what "integer" already means to a model; only
        // narrower formats are worth spelling out.
        if l > i64::MIN as i128 {
            tighten_lo(Bound::Int(l), true);
        }
    }
    if let Some(b) = r.minimum {
        tighten_lo(b, true);
    }
    if let Some(b) = r.exclusive_minimum {
        tighten_lo(b, false);
    }
    let mut tighten_hi = |b: Bound, inc: bool| {
        if hi.is_none_or(|(c, ci)| match bound_order(b, c) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Equal => ci && !inc,
            std::cmp::Ordering::Greater => false,
        }) {
            hi = Some((b, inc));
        }
    };
    if let Some((_, _, h)) = r.int_format
        && h < i64::MAX as i128
    {
        tighten_hi(Bound::Int(h), true);
    }
    if let Some(b) = r.maximum {
        tighten_hi(b, true);
    }
    if let Some(b) = r.exclusive_maximum {
        tighten_hi(b, false);
    }
    let mut s = match (lo, hi) {
        (Some((a, true)), Some((b, true))) => format!(" from {} to {}", a.render(), b.render()),
        (Some((a, ai)), Some((b, bi))) => format!(
            " {} {} and {} {}",
            if ai { "≥" } else { ">" },
            a.render(),
            if bi { "≤" } else { "<" },
            b.render()
        ),
        (Some((a, ai)), None) => format!(" {} {}", if ai { "≥" } else { ">" }, a.render()),
        (None, Some((b, bi))) => format!(" {} {}", if bi { "≤" } else { "<" }, b.render()),
        (None, None) => String::new(),
    };
    if let Some(m) = r.multiple_of {
        s.push_str(&format!(" that is a multiple of {}", render_f64(m)));
    }
    s
}

/// ` of at most 3 items with no repeated items`: an array's rules, in words,
/// to follow `array`; nothing for an array without rules.
pub(crate) fn array_constraints(rules: Option<&ArrRules>) -> String {
    let Some(r) = rules else {
        return String::new();
    };
    let mut s = match (r.min_items, r.max_items) {
        (Some(a), Some(b)) if a == b => format!(" of exactly {}", plural(a, "item", "items")),
        (Some(a), Some(b)) => format!(" of {a} to {b} items"),
        (Some(a), None) => format!(" of at least {}", plural(a, "item", "items")),
        (None, Some(b)) => format!(" of at most {}", plural(b, "item", "items")),
        (None, None) => String::new(),
    };
    if r.unique_items {
        s.push_str(" with no repeated items");
    }
    s
}

/// The wording of a field the schema does not declare: what is allowed
/// there, what was sent and the hint, given the object's declared field
/// `names`, the `key` sent and its `value`. `already_listed` says the allowed
/// fields were already listed for this object, so one line lists them and
/// later ones point back.
pub(crate) fn unknown_field(names: &[&str], key: &str, value: &Tree, already_listed: bool) -> UnknownFieldText {
    let rendered: Vec<String> = names.iter().map(|k| code(k)).collect();
    let l = suggest::listing(&rendered, names, Some(key), LIST_BUDGET_CHARS, false);
    let shown = l.joined(&rendered);
    let allowed = if names.is_empty() {
        "no fields are allowed here".to_string()
    } else if l.more == 0 {
        format!("allowed fields: {shown}")
    } else {
        format!(
            "allowed fields ({} in all), closest first: {shown}, … and {} more not listed",
            names.len(),
            l.more
        )
    };
    let suggestion = suggest::did_you_mean(key, names.iter().copied());
    let lists_allowed = suggestion.is_none() && !already_listed && !names.is_empty();
    let hint = match suggestion {
        Some(m) => format!("did you mean {}?", code(m)),
        None if already_listed && !names.is_empty() => "remove it (the allowed fields are listed above)".to_string(),
        None => allowed.clone(),
    };
    UnknownFieldText {
        expected: allowed,
        got: format!("field `{}` with {}", short_name(key), got(value)),
        hint,
        lists_allowed,
    }
}

/// The three texts of an unknown-field violation, as [`unknown_field`]
/// words them.
pub(crate) struct UnknownFieldText {
    /// The allowed fields, or that none are.
    pub expected: String,
    /// The field sent and what it held.
    pub got: String,
    /// A likely intended name, a pointer to the list above, or the list.
    pub hint: String,
    /// The hint is the list of allowed fields, so later unknown fields of
    /// the same object can point back to it.
    pub lists_allowed: bool,
}

/// `object with 1 to 3 fields`: what an object breaking `minProperties` or
/// `maxProperties` should have held.
pub(crate) fn property_count(min: Option<u64>, max: Option<u64>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("object with {a} to {b} fields"),
        (Some(a), None) => format!("object with at least {}", plural(a, "field", "fields")),
        (None, Some(b)) => format!("object with at most {}", plural(b, "field", "fields")),
        (None, None) => "object".into(),
    }
}

/// The JSON types in the set `t`, each with its bit, in the order messages
/// name them; `integer` is left out where `number` already covers it.
pub(crate) fn type_names(t: u8) -> impl Iterator<Item = (u8, &'static str)> {
    [
        (T_OBJECT, "object"),
        (T_ARRAY, "array"),
        (T_STRING, "string"),
        (T_NUMBER, "number"),
        (T_INTEGER, "integer"),
        (T_BOOL, "boolean"),
        (T_NULL, "null"),
    ]
    .into_iter()
    .filter(move |&(b, _)| t & b != 0 && !(b == T_INTEGER && t & T_NUMBER != 0))
}

// The phrases of a violation: what was expected and what was sent, in the
// words `diagnose` hands each kind of violation.

/// Expected by a schema that accepts anything.
pub(crate) const ANY_VALUE: &str = "any value";
/// Expected by a schema that accepts nothing (`false`, `not: {}`).
pub(crate) const NO_VALUE: &str = "no value at all";
/// Expected by a schema nested too deep to describe in one line.
pub(crate) const DOCUMENTED_SHAPE: &str = "a value of the documented shape";
/// Sent past the nesting limit.
pub(crate) const DEEPER_VALUE: &str = "a deeper value";
/// Expected of an array with `uniqueItems`.
pub(crate) const UNIQUE_ITEMS: &str = "array of unique items";
/// Expected of an object whose field came twice.
pub(crate) const EACH_FIELD_ONCE: &str = "each field once";
/// Expected of a required field whose schema has no description.
pub(crate) const A_VALUE: &str = "a value";
/// Sent for a required field that is missing.
pub(crate) const NOTHING: &str = "nothing";

/// Expected past the nesting limit.
pub(crate) fn nesting_limit(levels: u32) -> String {
    format!("nesting of at most {levels} schema levels")
}

/// Expected of a `oneOf` that more than one alternative matched.
pub(crate) fn exactly_one_of(alternatives: &str) -> String {
    format!("a value matching exactly one of: {alternatives}")
}

/// Sent to a `oneOf`: a value that `n` alternatives matched.
pub(crate) fn matching_several(sent: &str, n: usize) -> String {
    format!("{sent} matching {n} of them")
}

/// Expected by a `not`.
pub(crate) fn anything_except(forbidden: &str) -> String {
    format!("anything except {forbidden}")
}

/// Expected by `multipleOf`.
pub(crate) fn multiple_of(factor: f64) -> String {
    format!("a multiple of {}", crate::schema::render_f64(factor))
}

/// Added to a sent string of the wrong length.
pub(crate) fn of_length(chars: u64) -> String {
    format!(" of {}", plural(chars, "character", "characters"))
}

/// Sent: an array of the wrong size.
pub(crate) fn array_of(items: u64) -> String {
    format!("array of {}", plural(items, "item", "items"))
}

/// Sent: an item equal to an earlier one.
pub(crate) fn repeating(sent: &str, earlier: usize) -> String {
    format!("{sent} repeating item {earlier}")
}

/// Sent: a field given twice.
pub(crate) fn field_again(key: &str) -> String {
    format!("field `{}` again", short_name(key))
}

/// The hint for a missing field sent under a near name.
pub(crate) fn sent_as(key: &str) -> String {
    format!("it may have been sent as `{}`", short_name(key))
}

/// The hint for a near miss of a target.
pub(crate) fn did_you_mean(target: &str) -> String {
    format!("did you mean {}?", target_str(target))
}

/// Sent: an object with the wrong number of fields.
pub(crate) fn fields_sent(count: u64) -> String {
    plural(count, "field", "fields")
}
