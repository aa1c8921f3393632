//! Rules that span more than one attribute or parameter.
//!
//! One function per rule, each with the reason it exists. Every rule records
//! its errors in the context and returns, so all of them run and the user sees
//! every mistake at once.

use proc_macro2::Span;
use syn::{Ident, LitStr, Type};

use crate::ast::{ParamKind, ToolFn, type_name};
use crate::attr::ToolAttrs;
use crate::ctxt::Ctxt;

/// Where a `#[tool]` function lives, which decides what receivers it may have.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    /// A free function.
    Free,
    /// A method inside `#[tools] impl`.
    Method,
}

/// Runs every rule.
pub(crate) fn check(cx: &mut Ctxt, f: &ToolFn<'_>, attrs: &ToolAttrs, attr_span: Span, site: Site) {
    effects_are_declared(cx, attrs, attr_span);
    read_only_is_not_destructive(cx, attrs);
    name_is_portable(cx, attrs, &f.sig.ident);
    description_is_present(cx, f, attrs);
    discovery_is_another_tool(cx, attrs, &f.sig.ident);
    texts_are_not_empty(cx, attrs);
    signature_is_supported(cx, f);
    receiver_fits_site(cx, f, site);
    ctx_is_single_and_typed(cx, f);
    args_are_owned_values(cx, f);
    arg_names_are_portable_and_unique(cx, f);
    default_is_not_on_option(cx, f);
}

/// gate decides retry safety from declared effects, so a tool that declares
/// none cannot be handled safely; the message says what each flag means.
fn effects_are_declared(cx: &mut Ctxt, attrs: &ToolAttrs, attr_span: Span) {
    if attrs.read_only.is_none()
        && attrs.idempotent.is_none()
        && attrs.destructive.is_none()
        && attrs.external.is_none()
    {
        cx.error_at(
            attr_span,
            "declare the tool's effects: `#[tool(read_only)]` if it changes nothing, `idempotent` if repeating a call has no further effect, `destructive` if it deletes or overwrites, `external` if it reaches systems outside yours (combine as needed); gate retries only read_only or idempotent tools",
        );
    }
}

/// A read-only tool cannot destroy anything; both flags together means one is wrong.
fn read_only_is_not_destructive(cx: &mut Ctxt, attrs: &ToolAttrs) {
    if let (Some(_), Some(destructive)) = (attrs.read_only, attrs.destructive) {
        cx.error_at(
            destructive,
            "a tool cannot be both `read_only` and `destructive`: read_only means it changes nothing; remove one",
        );
    }
}

/// The name must be accepted by every provider (OpenAI and Anthropic forbid
/// dots, Gemini wants a leading letter or `_`, all cap the length at 64).
fn name_is_portable(cx: &mut Ctxt, attrs: &ToolAttrs, ident: &Ident) {
    let (name, span) = match &attrs.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (syn::ext::IdentExt::unraw(ident).to_string(), ident.span()),
    };
    if !is_portable_name(&name, true) {
        cx.error_at(span, format!("tool name `{name}` must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$ to be accepted by OpenAI, Anthropic, Gemini and MCP"));
    }
}

/// Models choose tools by their descriptions; a tool without one is a tool
/// the model will misuse.
fn description_is_present(cx: &mut Ctxt, f: &ToolFn<'_>, attrs: &ToolAttrs) {
    match &attrs.description {
        Some(d) if d.value().trim().is_empty() => cx.error_spanned_by(d, "`description` is empty; say what the tool does and when to use it"),
        Some(_) => {}
        None if f.docs.is_none() => cx.error_spanned_by(
            &f.sig.ident,
            "tool has no description: add a doc comment (`/// Look up a customer by email.`) or `#[tool(description = \"...\")]`; the model reads it to choose the tool",
        ),
        None => {}
    }
}

/// A tool that names itself as its discovery tool sends the model in a loop.
fn discovery_is_another_tool(cx: &mut Ctxt, attrs: &ToolAttrs, ident: &Ident) {
    let Some(discovery) = &attrs.discovery else { return };
    let own = attrs
        .name
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| syn::ext::IdentExt::unraw(ident).to_string());
    if discovery.value() == own {
        cx.error_spanned_by(
            discovery,
            format!("`discovery` names `{own}` itself; name the tool that lists valid inputs (e.g. `list_customers`)"),
        );
    } else if !is_portable_name(&discovery.value(), true) {
        cx.error_spanned_by(
            discovery,
            format!(
                "`discovery` names `{}`, which is not a valid tool name",
                discovery.value()
            ),
        );
    }
}

/// An empty hint or title is shown to the model or user as nothing at all.
fn texts_are_not_empty(cx: &mut Ctxt, attrs: &ToolAttrs) {
    for (key, lit) in [("widen", &attrs.widen), ("title", &attrs.title)] {
        if let Some(lit) = lit.as_ref().filter(|l| l.value().trim().is_empty()) {
            cx.error_spanned_by(lit, format!("`{key}` is empty; remove it or say something"));
        }
    }
    for scope in attrs.scopes.iter().flatten() {
        if scope.value().trim().is_empty() {
            cx.error_spanned_by(scope, "a scope may not be empty");
        }
    }
}

/// Generic, unsafe and foreign-ABI functions have no single schema or cannot
/// be called safely from generated code.
fn signature_is_supported(cx: &mut Ctxt, f: &ToolFn<'_>) {
    let sig = f.sig;
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            "tool functions cannot be generic: the schema must be known at compile time; use concrete types",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        cx.error_spanned_by(
            unsafety,
            "tool functions cannot be `unsafe`: the model's arguments cannot uphold safety preconditions",
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "tool functions cannot have a foreign ABI");
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, "tool functions cannot be variadic");
    }
}

/// Free tools have no `self`; methods share their impl's state through `&self`
/// (the toolbox holds it in an `Arc`, so `&mut self` or `self` cannot work).
fn receiver_fits_site(cx: &mut Ctxt, f: &ToolFn<'_>, site: Site) {
    match (site, f.receiver) {
        (Site::Free, Some(r)) => cx.error_spanned_by(r, "a `#[tool]` method needs `#[tools]` on its impl block, which turns the impl's tools into a toolbox sharing `self`"),
        (Site::Method, None) => cx.error_spanned_by(&f.sig.ident, "a `#[tool]` inside `#[tools] impl` must take `&self`; move associated functions out of the impl"),
        (Site::Method, Some(r)) if r.reference.is_none() || r.mutability.is_some() => cx.error_spanned_by(
            r,
            "tool methods take `&self`: the toolbox shares `self` between concurrent calls; put mutable state behind a Mutex",
        ),
        _ => {}
    }
}

/// The context is handed over by the runtime, once, as `&Ctx` or `Ctx`; a
/// context parameter without `#[ctx]` would end up in the schema.
fn ctx_is_single_and_typed(cx: &mut Ctxt, f: &ToolFn<'_>) {
    let mut seen = false;
    for p in &f.params {
        let is_ctx_type = type_name(p.ty).is_some_and(|n| n == "Ctx");
        match &p.kind {
            ParamKind::Ctx { span } => {
                if seen {
                    cx.error_at(*span, "only one parameter can be `#[ctx]`");
                }
                seen = true;
                let shape_ok = match p.ty {
                    Type::Reference(r) => r.mutability.is_none() && matches!(&*r.elem, Type::Path(_)),
                    Type::Path(_) => true,
                    _ => false,
                };
                if !is_ctx_type || !shape_ok {
                    cx.error_spanned_by(
                        p.ty,
                        "the `#[ctx]` parameter must have type `&gate::Ctx` or `gate::Ctx`",
                    );
                }
            }
            ParamKind::Arg { .. } if is_ctx_type => {
                cx.error_spanned_by(
                    p.ident,
                    "this parameter looks like the call context: mark it `#[ctx]` so it is not part of the schema",
                );
            }
            ParamKind::Arg { .. } => {}
        }
    }
}

/// Arguments are deserialized from the model's JSON and outlive no buffer:
/// they must be owned.
fn args_are_owned_values(cx: &mut Ctxt, f: &ToolFn<'_>) {
    for (p, _, _) in f.args() {
        if let Type::Reference(r) = p.ty
            && type_name(p.ty).is_none_or(|n| n != "Ctx")
        {
            cx.error_spanned_by(r, "tool arguments are deserialized from the model's JSON and must be owned: use `String` for `&str`, `Vec<T>` for `&[T]`");
        }
        if let Type::ImplTrait(t) = p.ty {
            cx.error_spanned_by(
                t,
                "tool arguments need a concrete type for their schema, not `impl Trait`",
            );
        }
    }
}

/// Property names become JSON keys in every provider; Gemini is the
/// strictest (letters, digits, `_`), and two parameters may not share one.
fn arg_names_are_portable_and_unique(cx: &mut Ctxt, f: &ToolFn<'_>) {
    let mut seen: Vec<String> = Vec::new();
    for (p, attrs, _) in f.args() {
        let name = p.json_name();
        let span = attrs
            .rename
            .as_ref()
            .map(|r| r.span())
            .unwrap_or_else(|| p.ident.span());
        if !is_portable_name(&name, false) {
            cx.error_at(span, format!("argument name `{name}` must match ^[A-Za-z_][A-Za-z0-9_]{{0,63}}$ to be accepted by every provider (Gemini allows no `-` or `.`)"));
        }
        if seen.contains(&name) {
            cx.error_at(span, format!("two arguments are named `{name}`; rename one"));
        }
        seen.push(name);
    }
}

/// `Option<T>` is already optional; `#[arg(default)]` on it means the author
/// expected something else to happen.
fn default_is_not_on_option(cx: &mut Ctxt, f: &ToolFn<'_>) {
    for (p, attrs, _) in f.args() {
        if let Some(span) = attrs.default
            && type_name(p.ty).is_some_and(|n| n == "Option")
        {
            cx.error_at(
                span,
                "`Option` arguments are already optional (absent means `None`); remove `#[arg(default)]`",
            );
        }
    }
}

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` for tools; without `-` for properties.
/// gate-core's `is_portable_tool_name` is the run-time twin of this rule.
fn is_portable_name(name: &str, allow_dash: bool) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (allow_dash && c == '-'))
}
