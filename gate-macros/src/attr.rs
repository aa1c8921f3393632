//! Parsing of `#[tool(...)]` and `#[arg(...)]` arguments.
//!
//! Only syntax lives here (which keys exist, what kind of value each takes);
//! rules about combinations of keys are in `check.rs`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, Lit, LitStr, Meta, Path, Token};

use crate::ctxt::Ctxt;

/// The keys `#[tool]` accepts, in the order the "unknown key" message lists them.
pub(crate) const TOOL_KEYS: &[&str] = &[
    "read_only",
    "idempotent",
    "writes",
    "destructive",
    "external",
    "keyed",
    "approval",
    "private",
    "untrusted",
    "trusted",
    "name",
    "description",
    "title",
    "discovery",
    "widen",
    "scopes",
    "timeout",
    "crate",
];
/// The keys `#[arg]` accepts.
pub(crate) const ARG_KEYS: &[&str] = &["default", "key", "rename"];

/// A flag's presence, kept as its span so errors can point at it.
pub(crate) type Flag = Option<Span>;

/// The effect flags of `#[tool]`, which `ToolAttrs::effects_in_order` lists
/// in the order the user wrote them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum EffectFlag {
    ReadOnly,
    Idempotent,
    Writes,
    Destructive,
    External,
    Keyed,
    Approval,
    Private,
    Untrusted,
    Trusted,
}

/// A `timeout = "..."` literal and the milliseconds it says.
pub(crate) struct Timeout {
    pub(crate) lit: LitStr,
    /// `None` when the literal is malformed (already reported).
    /// Saturates at `u64::MAX`, so an overlong timeout is a `check.rs` error.
    pub(crate) millis: Option<u64>,
}

/// What `#[tool(...)]` said.
#[derive(Default)]
pub(crate) struct ToolAttrs {
    pub(crate) read_only: Flag,
    pub(crate) idempotent: Flag,
    pub(crate) writes: Flag,
    pub(crate) destructive: Flag,
    pub(crate) external: Flag,
    pub(crate) keyed: Flag,
    pub(crate) approval: Flag,
    pub(crate) private: Flag,
    pub(crate) untrusted: Flag,
    pub(crate) trusted: Flag,
    /// The effect flags as written, so a conflict is reported on the later one.
    pub(crate) effects_in_order: Vec<EffectFlag>,
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) discovery: Option<LitStr>,
    pub(crate) widen: Option<LitStr>,
    pub(crate) scopes: Option<Vec<LitStr>>,
    pub(crate) timeout: Option<Timeout>,
    /// `crate = "path"`: where the facade is, when the user's manifest
    /// cannot say (a crate that re-exports it).
    pub(crate) krate: Option<Path>,
}

impl ToolAttrs {
    /// The span of a flag that was given.
    pub(crate) fn flag(&self, flag: EffectFlag) -> Flag {
        match flag {
            EffectFlag::ReadOnly => self.read_only,
            EffectFlag::Idempotent => self.idempotent,
            EffectFlag::Writes => self.writes,
            EffectFlag::Destructive => self.destructive,
            EffectFlag::External => self.external,
            EffectFlag::Keyed => self.keyed,
            EffectFlag::Approval => self.approval,
            EffectFlag::Private => self.private,
            EffectFlag::Untrusted => self.untrusted,
            EffectFlag::Trusted => self.trusted,
        }
    }
}

/// What `#[arg(...)]` said.
#[derive(Default)]
pub(crate) struct ArgAttrs {
    pub(crate) default: Flag,
    pub(crate) key: Flag,
    pub(crate) rename: Option<LitStr>,
}

/// "unknown key" text that lists the valid keys and suggests the closest.
pub(crate) fn unknown_key_message(attr: &str, key: &str, valid: &[&str]) -> String {
    let closest = valid
        .iter()
        .map(|v| (strsim::levenshtein(key, v), *v))
        .min()
        .filter(|(d, _)| *d <= 2);
    let hint = closest
        .map(|(_, v)| format!("; did you mean `{v}`?"))
        .unwrap_or_default();
    format!(
        "unknown `#[{attr}]` key `{key}`{hint} valid keys are: {}",
        valid.join(", ")
    )
}

fn key_name(meta: &Meta) -> String {
    meta.path()
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| quote::quote!(#meta).to_string())
}

/// Sets a flag, refusing a value and a second occurrence.
fn set_flag(cx: &mut Ctxt, slot: &mut Flag, meta: &Meta, attr: &str) {
    let name = key_name(meta);
    if !matches!(meta, Meta::Path(_)) {
        cx.error_spanned_by(
            meta,
            format!("`{name}` is a flag and takes no value: write `#[{attr}({name})]`"),
        );
        // Still counted as given, so its absence causes no second error.
    } else if slot.is_some() {
        cx.error_spanned_by(meta, format!("duplicate `#[{attr}]` key `{name}`"));
        return;
    }
    slot.get_or_insert(meta.span());
}

/// Sets a string value, refusing other literals and a second occurrence.
fn set_string(cx: &mut Ctxt, slot: &mut Option<LitStr>, meta: &Meta, attr: &str) {
    let name = key_name(meta);
    let Meta::NameValue(nv) = meta else {
        cx.error_spanned_by(meta, format!("`{name}` needs a value: `#[{attr}({name} = \"...\")]`"));
        return;
    };
    let Expr::Lit(ExprLit {
        lit: Lit::Str(value), ..
    }) = &nv.value
    else {
        cx.error_spanned_by(
            &nv.value,
            format!("`{name}` takes a string literal, e.g. `{name} = \"...\"`"),
        );
        return;
    };
    if slot.is_some() {
        cx.error_spanned_by(meta, format!("duplicate `#[{attr}]` key `{name}`"));
        return;
    }
    *slot = Some(value.clone());
}

fn set_string_list(cx: &mut Ctxt, slot: &mut Option<Vec<LitStr>>, meta: &Meta) {
    let Meta::NameValue(nv) = meta else {
        cx.error_spanned_by(meta, "`scopes` needs a list: `scopes = [\"crm:read\"]`");
        return;
    };
    let Expr::Array(ExprArray { elems, .. }) = &nv.value else {
        cx.error_spanned_by(
            &nv.value,
            "`scopes` takes a list of string literals: `scopes = [\"crm:read\"]`",
        );
        return;
    };
    let mut scopes = Vec::new();
    for elem in elems {
        match elem {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => scopes.push(s.clone()),
            other => cx.error_spanned_by(other, "each scope must be a string literal"),
        }
    }
    if slot.is_some() {
        cx.error_spanned_by(meta, "duplicate `#[tool]` key `scopes`");
        return;
    }
    *slot = Some(scopes);
}

/// The forms `timeout` accepts, quoted by every message about a bad one.
pub(crate) const TIMEOUT_FORMS: &str =
    "a whole number followed by `ms`, `s` or `m`, e.g. `timeout = \"500ms\"`, `\"10s\"` or `\"2m\"`";

/// Parses a `timeout` literal (`"500ms"`, `"10s"`, `"2m"`) into milliseconds,
/// or says what is wrong with it. Only the syntax is checked here; a zero or
/// overlong value parses (saturating at `u64::MAX`) and is refused by
/// `check.rs`.
pub(crate) fn parse_duration_ms(text: &str) -> Result<u64, String> {
    let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, rest) = text.split_at(digits_end);
    if text.trim().is_empty() {
        return Err(format!("`timeout` is empty; write {TIMEOUT_FORMS}"));
    }
    if digits.is_empty() {
        return Err(format!(
            "`timeout = \"{text}\"` does not start with a whole number; write {TIMEOUT_FORMS}"
        ));
    }
    if let Some(fraction) = rest.strip_prefix(['.', ',']) {
        let hint = if fraction.starts_with(|c: char| c.is_ascii_digit()) {
            "use a smaller unit instead of a fraction (`\"1500ms\"`, not `\"1.5s\"`)"
        } else {
            "a duration has no decimal point"
        };
        return Err(format!(
            "`timeout = \"{text}\"` is not a whole number: {hint}; write {TIMEOUT_FORMS}"
        ));
    }
    let unit = rest.trim();
    let factor: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "" => {
            return Err(format!(
                "`timeout = \"{text}\"` has no unit; write `\"{digits}ms\"`, `\"{digits}s\"` or `\"{digits}m\"`"
            ));
        }
        other => {
            return Err(format!(
                "`timeout = \"{text}\"` has the unknown unit `{other}`; write {TIMEOUT_FORMS}"
            ));
        }
    };
    if unit.len() != rest.len() {
        return Err(format!(
            "`timeout = \"{text}\"` has a space in it; write `\"{digits}{unit}\"`"
        ));
    }
    let number = digits
        .bytes()
        .fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d - b'0')));
    Ok(number.saturating_mul(factor))
}

/// Sets `timeout`, refusing anything but a string literal and a second
/// occurrence, and parsing the literal.
fn set_timeout(cx: &mut Ctxt, slot: &mut Option<Timeout>, meta: &Meta) {
    let Meta::NameValue(nv) = meta else {
        cx.error_spanned_by(meta, "`timeout` needs a value: `#[tool(timeout = \"10s\")]`");
        return;
    };
    let lit = match &nv.value {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => s,
        Expr::Lit(ExprLit { lit: Lit::Int(n), .. }) => {
            let n = n.base10_digits();
            cx.error_spanned_by(
                &nv.value,
                format!("`timeout` takes a string literal with a unit: `timeout = \"{n}s\"` or `\"{n}ms\"`"),
            );
            return;
        }
        other => {
            cx.error_spanned_by(other, format!("`timeout` takes a string literal: {TIMEOUT_FORMS}"));
            return;
        }
    };
    if slot.is_some() {
        cx.error_spanned_by(meta, "duplicate `#[tool]` key `timeout`");
        return;
    }
    let millis = match parse_duration_ms(&lit.value()) {
        Ok(ms) => Some(ms),
        Err(message) => {
            cx.error_spanned_by(lit, message);
            None
        }
    };
    *slot = Some(Timeout {
        lit: lit.clone(),
        millis,
    });
}

fn parse_list(cx: &mut Ctxt, tokens: TokenStream) -> Vec<Meta> {
    match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => list.into_iter().collect(),
        Err(e) => {
            cx.syn_error(e);
            Vec::new()
        }
    }
}

/// Sets a path given as a string literal (`crate = "my_sdk::toolgate"`, as
/// serde's `crate` key is written), refusing anything that is not a path.
fn set_path(cx: &mut Ctxt, slot: &mut Option<Path>, meta: &Meta, attr: &str) {
    let mut literal = None;
    set_string(cx, &mut literal, meta, attr);
    let Some(literal) = literal else { return };
    match literal.parse::<Path>() {
        Ok(path) => *slot = Some(path),
        Err(_) => cx.error_spanned_by(
            &literal,
            format!(
                "`{}` takes the path the facade is reachable at, e.g. `{} = \"my_sdk::toolgate\"`",
                key_name(meta),
                key_name(meta)
            ),
        ),
    }
}

/// Parses the arguments of `#[tools(...)]`: only `crate = "path"`, which
/// every method's generated code then uses.
pub(crate) fn parse_tools_attrs(cx: &mut Ctxt, tokens: TokenStream) -> Option<Path> {
    let mut krate = None;
    for meta in parse_list(cx, tokens) {
        match key_name(&meta).as_str() {
            "crate" => set_path(cx, &mut krate, &meta, "tools"),
            _ => cx.error_spanned_by(
                &meta,
                "`#[tools]` takes only `crate = \"path\"`; put `#[tool(...)]` on each method",
            ),
        }
    }
    krate
}

/// Parses the arguments of `#[tool(...)]`.
pub(crate) fn parse_tool_attrs(cx: &mut Ctxt, tokens: TokenStream) -> ToolAttrs {
    let mut attrs = ToolAttrs::default();
    for meta in parse_list(cx, tokens) {
        let flag = match key_name(&meta).as_str() {
            "read_only" => Some((&mut attrs.read_only, EffectFlag::ReadOnly)),
            "idempotent" => Some((&mut attrs.idempotent, EffectFlag::Idempotent)),
            "writes" => Some((&mut attrs.writes, EffectFlag::Writes)),
            "destructive" => Some((&mut attrs.destructive, EffectFlag::Destructive)),
            "external" => Some((&mut attrs.external, EffectFlag::External)),
            "keyed" => Some((&mut attrs.keyed, EffectFlag::Keyed)),
            "approval" => Some((&mut attrs.approval, EffectFlag::Approval)),
            "private" => Some((&mut attrs.private, EffectFlag::Private)),
            "untrusted" => Some((&mut attrs.untrusted, EffectFlag::Untrusted)),
            "trusted" => Some((&mut attrs.trusted, EffectFlag::Trusted)),
            _ => None,
        };
        if let Some((slot, flag)) = flag {
            let first = slot.is_none();
            set_flag(cx, slot, &meta, "tool");
            if first {
                attrs.effects_in_order.push(flag);
            }
            continue;
        }
        match key_name(&meta).as_str() {
            "name" => set_string(cx, &mut attrs.name, &meta, "tool"),
            "description" => set_string(cx, &mut attrs.description, &meta, "tool"),
            "title" => set_string(cx, &mut attrs.title, &meta, "tool"),
            "discovery" => set_string(cx, &mut attrs.discovery, &meta, "tool"),
            "widen" => set_string(cx, &mut attrs.widen, &meta, "tool"),
            "scopes" => set_string_list(cx, &mut attrs.scopes, &meta),
            "timeout" => set_timeout(cx, &mut attrs.timeout, &meta),
            "crate" => set_path(cx, &mut attrs.krate, &meta, "tool"),
            other => cx.error_spanned_by(meta.path(), unknown_key_message("tool", other, TOOL_KEYS)),
        }
    }
    attrs
}

/// Parses the arguments of one `#[arg(...)]`, adding to what earlier ones said.
pub(crate) fn parse_arg_attrs(cx: &mut Ctxt, attr: &syn::Attribute, into: &mut ArgAttrs) {
    let tokens = match &attr.meta {
        Meta::List(list) => list.tokens.clone(),
        other => {
            cx.error_spanned_by(
                other,
                "`#[arg]` needs keys: `#[arg(default)]`, `#[arg(key)]` or `#[arg(rename = \"...\")]`",
            );
            return;
        }
    };
    for meta in parse_list(cx, tokens) {
        match key_name(&meta).as_str() {
            "default" => set_flag(cx, &mut into.default, &meta, "arg"),
            "key" => set_flag(cx, &mut into.key, &meta, "arg"),
            "rename" => set_string(cx, &mut into.rename, &meta, "arg"),
            other => cx.error_spanned_by(meta.path(), unknown_key_message("arg", other, ARG_KEYS)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_keys_only() {
        assert!(unknown_key_message("tool", "nmae", TOOL_KEYS).contains("did you mean `name`?"));
        assert!(!unknown_key_message("tool", "zzzzzz", TOOL_KEYS).contains("did you mean"));
        assert!(unknown_key_message("tool", "x", TOOL_KEYS).ends_with("widen, scopes, timeout, crate"));
        assert!(unknown_key_message("tool", "write", TOOL_KEYS).contains("did you mean `writes`?"));
    }

    #[test]
    fn durations_in_each_unit() {
        assert_eq!(parse_duration_ms("500ms"), Ok(500));
        assert_eq!(parse_duration_ms("10s"), Ok(10_000));
        assert_eq!(parse_duration_ms("2m"), Ok(120_000));
        assert_eq!(parse_duration_ms("010s"), Ok(10_000));
    }

    #[test]
    fn zero_and_huge_durations_parse_for_check_to_refuse() {
        assert_eq!(parse_duration_ms("0s"), Ok(0));
        assert_eq!(parse_duration_ms("99999999999999999999999m"), Ok(u64::MAX));
        assert_eq!(parse_duration_ms("18446744073709551615s"), Ok(u64::MAX));
    }

    #[track_caller]
    fn refused(text: &str, says: &str) {
        match parse_duration_ms(text) {
            Ok(ms) => panic!("{text:?} parsed as {ms} ms"),
            Err(message) => assert!(message.contains(says), "{text:?}: {message}"),
        }
    }

    #[test]
    fn malformed_durations_say_what_is_wrong() {
        refused("", "is empty");
        refused("   ", "is empty");
        refused("10", "has no unit; write `\"10ms\"`, `\"10s\"` or `\"10m\"`");
        refused("10h", "unknown unit `h`");
        refused("10 sec", "unknown unit `sec`");
        refused("10S", "unknown unit `S`");
        refused("10sec", "unknown unit `sec`");
        refused("10 s", "has a space in it; write `\"10s\"`");
        refused("10s ", "has a space in it; write `\"10s\"`");
        refused("1.5s", "use a smaller unit instead of a fraction");
        refused("1,5s", "not a whole number");
        refused("10.s", "no decimal point");
        refused("s", "does not start with a whole number");
        refused("-5s", "does not start with a whole number");
        refused("+5s", "does not start with a whole number");
        refused(" 10s", "does not start with a whole number");
        refused("ten seconds", "does not start with a whole number");
    }

    #[test]
    fn every_malformed_message_shows_the_valid_forms() {
        for text in ["", "10h", "1.5s", "s", "10 sec"] {
            let message = parse_duration_ms(text).unwrap_err();
            assert!(message.contains("`\"10s\"`"), "{text:?}: {message}");
        }
    }
}
