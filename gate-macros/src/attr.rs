//! Parsing of `#[tool(...)]` and `#[arg(...)]` arguments.
//!
//! Only syntax lives here (which keys exist, what kind of value each takes);
//! rules about combinations of keys are in `check.rs`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, Lit, LitStr, Meta, Token};

use crate::ctxt::Ctxt;

/// The keys `#[tool]` accepts, in the order the "unknown key" message lists them.
pub(crate) const TOOL_KEYS: &[&str] = &[
    "read_only",
    "idempotent",
    "destructive",
    "external",
    "name",
    "description",
    "title",
    "discovery",
    "widen",
    "scopes",
];
/// The keys `#[arg]` accepts.
pub(crate) const ARG_KEYS: &[&str] = &["default", "key", "rename"];

/// A flag's presence, kept as its span so errors can point at it.
pub(crate) type Flag = Option<Span>;

/// What `#[tool(...)]` said.
#[derive(Default)]
pub(crate) struct ToolAttrs {
    pub(crate) read_only: Flag,
    pub(crate) idempotent: Flag,
    pub(crate) destructive: Flag,
    pub(crate) external: Flag,
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) discovery: Option<LitStr>,
    pub(crate) widen: Option<LitStr>,
    pub(crate) scopes: Option<Vec<LitStr>>,
}

/// What `#[arg(...)]` said.
#[derive(Default)]
pub(crate) struct ArgAttrs {
    pub(crate) default: Flag,
    pub(crate) key: Flag,
    pub(crate) rename: Option<LitStr>,
}

/// The edit distance between two short strings, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// "unknown key" text that lists the valid keys and suggests the closest.
pub(crate) fn unknown_key_message(attr: &str, key: &str, valid: &[&str]) -> String {
    let closest = valid
        .iter()
        .map(|v| (distance(key, v), *v))
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

fn parse_list(cx: &mut Ctxt, tokens: TokenStream) -> Vec<Meta> {
    match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => list.into_iter().collect(),
        Err(e) => {
            cx.syn_error(e);
            Vec::new()
        }
    }
}

/// Parses the arguments of `#[tool(...)]`.
pub(crate) fn parse_tool_attrs(cx: &mut Ctxt, tokens: TokenStream) -> ToolAttrs {
    let mut attrs = ToolAttrs::default();
    for meta in parse_list(cx, tokens) {
        match key_name(&meta).as_str() {
            "read_only" => set_flag(cx, &mut attrs.read_only, &meta, "tool"),
            "idempotent" => set_flag(cx, &mut attrs.idempotent, &meta, "tool"),
            "destructive" => set_flag(cx, &mut attrs.destructive, &meta, "tool"),
            "external" => set_flag(cx, &mut attrs.external, &meta, "tool"),
            "name" => set_string(cx, &mut attrs.name, &meta, "tool"),
            "description" => set_string(cx, &mut attrs.description, &meta, "tool"),
            "title" => set_string(cx, &mut attrs.title, &meta, "tool"),
            "discovery" => set_string(cx, &mut attrs.discovery, &meta, "tool"),
            "widen" => set_string(cx, &mut attrs.widen, &meta, "tool"),
            "scopes" => set_string_list(cx, &mut attrs.scopes, &meta),
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
        assert!(unknown_key_message("tool", "x", TOOL_KEYS).ends_with("discovery, widen, scopes"));
    }
}
