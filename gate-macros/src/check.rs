//! Rules that span more than one attribute or parameter.
//!
//! One function per rule, each with the reason it exists. Every rule records
//! its errors in the context and returns, so all of them run and the user sees
//! every mistake at once.

use proc_macro2::Span;
use syn::{Ident, LitStr, Type};

use crate::ast::{ParamKind, ToolFn, context_type, type_name};
use crate::attr::{EffectFlag, TIMEOUT_FORMS, ToolAttrs};
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
    read_only_does_not_write(cx, attrs);
    read_only_is_not_keyed(cx, attrs);
    writes_is_not_idempotent(cx, attrs);
    untrusted_is_not_trusted(cx, attrs);
    trusted_is_an_external_read(cx, attrs);
    keyed_takes_the_context(cx, f, attrs);
    timeout_is_not_zero(cx, attrs);
    timeout_is_at_most_a_day(cx, attrs);
    name_is_portable(cx, attrs, &f.sig.ident);
    description_is_present(cx, f, attrs);
    discovery_is_another_tool(cx, attrs, &f.sig.ident);
    texts_are_not_empty(cx, attrs);
    signature_is_supported(cx, f);
    receiver_fits_site(cx, f, site);
    ctx_is_single_and_typed(cx, f);
    args_are_owned_values(cx, f);
    arg_names_are_portable_and_unique(cx, f);
}

/// gate decides retry safety from declared effects, so a tool that declares
/// none cannot be handled safely; the message says what each flag means.
/// `external`, `keyed`, `approval`, `private`, `untrusted` and `trusted` only
/// modify an effect (where the tool reaches, how its downstream deduplicates,
/// who must agree first, what its results hold), so they do not count alone.
fn effects_are_declared(cx: &mut Ctxt, attrs: &ToolAttrs, attr_span: Span) {
    if attrs.read_only.is_some() || attrs.idempotent.is_some() || attrs.writes.is_some() || attrs.destructive.is_some()
    {
        return;
    }
    let modifiers: Vec<&str> = [
        (attrs.external, "`external`"),
        (attrs.keyed, "`keyed`"),
        (attrs.approval, "`approval`"),
        (attrs.private, "`private`"),
        (attrs.untrusted, "`untrusted`"),
        (attrs.trusted, "`trusted`"),
    ]
    .into_iter()
    .filter_map(|(flag, name)| flag.map(|_| name))
    .collect();
    let lead = match modifiers.as_slice() {
        [] => "declare the tool's effects".to_owned(),
        [one] => format!("{one} only modifies an effect; also declare the tool's effect"),
        many => format!(
            "{} only modify an effect; also declare the tool's effect",
            many.join(" and ")
        ),
    };
    cx.error_at(
        attr_span,
        format!("{lead}: `#[tool(read_only)]` if it changes nothing, `idempotent` if repeating a call has no further effect, `writes` if it changes state additively, not idempotent (creates a ticket, sends a message), `destructive` if it deletes or overwrites; add `external` if it reaches systems outside yours and `keyed` if it forwards `ctx.intent_key()` to a downstream that deduplicates by it; gate retries only read_only or idempotent tools, and resends a keyed one with the same intent key"),
    );
}

/// The span of whichever of two given flags the user wrote second, or `None`
/// unless both were given: a conflict is reported on the flag that
/// contradicts what came before it.
fn second_of(attrs: &ToolAttrs, a: EffectFlag, b: EffectFlag) -> Option<Span> {
    let (span_a, span_b) = (attrs.flag(a)?, attrs.flag(b)?);
    let position = |flag| attrs.effects_in_order.iter().position(|f| *f == flag);
    Some(if position(a) > position(b) { span_a } else { span_b })
}

/// A read-only tool cannot destroy anything; both flags together means one is wrong.
fn read_only_is_not_destructive(cx: &mut Ctxt, attrs: &ToolAttrs) {
    if let Some(span) = second_of(attrs, EffectFlag::ReadOnly, EffectFlag::Destructive) {
        cx.error_at(
            span,
            "a tool cannot be both `read_only` and `destructive`: read_only means it changes nothing; remove one",
        );
    }
}

/// `read_only` tools are retried freely, `writes` tools never: a tool that is
/// both would be retried into a second write.
fn read_only_does_not_write(cx: &mut Ctxt, attrs: &ToolAttrs) {
    if let Some(span) = second_of(attrs, EffectFlag::ReadOnly, EffectFlag::Writes) {
        cx.error_at(
            span,
            "a tool cannot be both `read_only` and `writes`: read_only means it changes nothing and writes that each call changes something; remove `writes` if the tool only reads, `read_only` if it changes state",
        );
    }
}

/// `keyed` says a downstream deduplicates the tool's effect by the intent
/// key; a read-only tool has no effect, so one of the two flags is a mistake.
fn read_only_is_not_keyed(cx: &mut Ctxt, attrs: &ToolAttrs) {
    if let Some(span) = second_of(attrs, EffectFlag::ReadOnly, EffectFlag::Keyed) {
        cx.error_at(
            span,
            "a `read_only` tool cannot be `keyed`: it has no effect for a downstream to deduplicate (read_only tools are retried anyway); remove `keyed`, or `read_only` if the tool changes state",
        );
    }
}

/// `writes` means "a second call makes a second change", the opposite of
/// `idempotent`; gate would have to both retry and never retry the tool.
///
/// `writes` with `destructive` is accepted (it is what `destructive` alone
/// says: destructive implies writes, and `Effects::is_writes` is true of it).
fn writes_is_not_idempotent(cx: &mut Ctxt, attrs: &ToolAttrs) {
    if let Some(span) = second_of(attrs, EffectFlag::Writes, EffectFlag::Idempotent) {
        cx.error_at(
            span,
            "a tool cannot be both `writes` and `idempotent`: writes means a second call makes a second change; an idempotent write is just `idempotent`, so remove `writes` (or `idempotent` if calling it twice makes two)",
        );
    }
}

/// `untrusted` says third parties write the tool's results and `trusted`
/// that they do not; the information-flow guard cannot follow both, so one
/// of the two flags is a mistake.
fn untrusted_is_not_trusted(cx: &mut Ctxt, attrs: &ToolAttrs) {
    if let Some(span) = second_of(attrs, EffectFlag::Untrusted, EffectFlag::Trusted) {
        cx.error_at(
            span,
            "a tool cannot be both `untrusted` and `trusted`: untrusted says third parties write its results and trusted that they do not; remove one",
        );
    }
}

/// `trusted` lifts the one label gate infers by itself: an `external`
/// `read_only` tool's results are untrusted unless it says `trusted`. Any
/// other tool's results are trusted already, so `trusted` there changes
/// nothing and would mislead a reader into thinking it does.
fn trusted_is_an_external_read(cx: &mut Ctxt, attrs: &ToolAttrs) {
    let Some(trusted) = attrs.trusted else { return };
    if attrs.external.is_none() || attrs.read_only.is_none() {
        cx.error_at(
            trusted,
            "`trusted` only applies to an `external` `read_only` tool, whose results are untrusted without it; other tools' results are trusted already, so remove `trusted` (or declare the tool `read_only, external` if it only reads from outside)",
        );
    }
}

/// `keyed` promises that the tool hands `ctx.intent_key()` to its downstream
/// as the idempotency key; without the context it has no key to hand over,
/// and a resent call would take effect twice.
fn keyed_takes_the_context(cx: &mut Ctxt, f: &ToolFn<'_>, attrs: &ToolAttrs) {
    let Some(keyed) = attrs.keyed else { return };
    if !f.params.iter().any(|p| matches!(p.kind, ParamKind::Ctx { .. })) {
        cx.error_at(
            keyed,
            "a `keyed` tool forwards `ctx.intent_key()` to its downstream as the idempotency key, so it needs the call context: add the parameter `#[ctx] ctx: &Ctx` and pass `ctx.intent_key()` on (or remove `keyed`)",
        );
    }
}

/// A zero timeout would cancel every call before it starts (and
/// `ToolSpec::with_timeout` refuses it at run time).
fn timeout_is_not_zero(cx: &mut Ctxt, attrs: &ToolAttrs) {
    if let Some(timeout) = attrs.timeout.as_ref().filter(|t| t.millis == Some(0)) {
        cx.error_spanned_by(
            &timeout.lit,
            format!("a zero `timeout` would cancel every call before it starts; write {TIMEOUT_FORMS}, or remove `timeout` for the gate's default"),
        );
    }
}

/// The longest `timeout` the macro accepts: 24 hours.
pub(crate) const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// A timeout beyond a day is almost certainly a slip (an extra zero, `m`
/// meant as `ms`), and no model's turn waits that long for a call.
fn timeout_is_at_most_a_day(cx: &mut Ctxt, attrs: &ToolAttrs) {
    if let Some(timeout) = attrs
        .timeout
        .as_ref()
        .filter(|t| t.millis.is_some_and(|ms| ms > MAX_TIMEOUT_MS))
    {
        cx.error_spanned_by(
            &timeout.lit,
            format!(
                "`timeout = \"{}\"` is longer than the maximum of 24 hours (`\"1440m\"`); write {TIMEOUT_FORMS}",
                timeout.lit.value()
            ),
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

/// The context is handed over by the runtime, once, as `&Ctx` or `Ctx`.
/// Here only the shape is checked (a shared reference or a plain path);
/// whether the type is gate's `Ctx` the generated code asks the type
/// system, so an import under another name works and a type of one's own
/// named `Ctx` is refused. A parameter spelled `Ctx` without `#[ctx]` would
/// end up in the schema: that one is a guess from the spelling, said as one.
fn ctx_is_single_and_typed(cx: &mut Ctxt, f: &ToolFn<'_>) {
    let mut seen = false;
    for p in &f.params {
        match &p.kind {
            ParamKind::Ctx { span } => {
                if seen {
                    cx.error_at(*span, "only one parameter can be `#[ctx]`");
                }
                seen = true;
                if context_type(p.ty).is_none() {
                    cx.error_spanned_by(
                        p.ty,
                        "the `#[ctx]` parameter must have type `&toolgate::Ctx` or `toolgate::Ctx`",
                    );
                }
            }
            ParamKind::Arg { .. } if type_name(p.ty).is_some_and(|n| n == "Ctx") => {
                cx.error_spanned_by(
                    p.ident,
                    "this parameter looks like the call context: mark it `#[ctx]` so it is not part of the schema (a type of your own named `Ctx` can be an argument under another name: `use my::Ctx as MyCtx`)",
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

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` for tools; without `-` for properties.
/// gate-core's `is_portable_tool_name` is the run-time twin of this rule.
fn is_portable_name(name: &str, allow_dash: bool) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (allow_dash && c == '-'))
}
