//! A borrowed model of a tool function, built from syn's syntax tree.
//!
//! Expansion reads this model, never raw syntax, so every shape the macro
//! supports is spelled out here (and every shape it refuses is refused while
//! building it, with the error on the offending token).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, Pat, ReturnType, Signature, Type};

use crate::attr::{self, ArgAttrs};
use crate::ctxt::Ctxt;

/// A function (or method) annotated with `#[tool]`.
pub(crate) struct ToolFn<'a> {
    pub(crate) sig: &'a Signature,
    pub(crate) docs: Option<String>,
    pub(crate) params: Vec<Param<'a>>,
    pub(crate) receiver: Option<&'a syn::Receiver>,
    /// The declared return type; `None` for `()`. Whether it is a
    /// `Result` is left to the type system (a spelling can be an alias).
    pub(crate) output: Option<&'a Type>,
}

/// One parameter of a tool function.
pub(crate) struct Param<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    pub(crate) kind: ParamKind,
}

/// Whether a parameter comes from the model or from the runtime.
pub(crate) enum ParamKind {
    /// An argument the model sends: in the schema.
    Arg { attrs: ArgAttrs, docs: Option<String> },
    /// `#[ctx]`: the call context, never in the schema.
    Ctx { span: Span },
}

/// Joins `///` lines the way rustdoc shows them: one leading space dropped per
/// line, surrounding blank lines trimmed.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').unwrap_or(&line).trim_end().to_owned())
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// True for the attributes this macro consumes from parameters.
pub(crate) fn is_param_helper(attr: &Attribute) -> bool {
    attr.path().is_ident("arg") || attr.path().is_ident("ctx") || attr.path().is_ident("doc")
}

impl<'a> ToolFn<'a> {
    /// Builds the model, recording every unsupported shape in `cx`.
    pub(crate) fn from_syn(cx: &mut Ctxt, sig: &'a Signature, attrs: &'a [Attribute]) -> Self {
        let mut params = Vec::new();
        let mut receiver = None;
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => receiver = Some(r),
                FnArg::Typed(pat_type) => {
                    let ident = match &*pat_type.pat {
                        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => &p.ident,
                        other => {
                            cx.error_spanned_by(other, "tool parameters must be plain names (`email: String`); patterns cannot become argument names");
                            continue;
                        }
                    };
                    let is_ctx = pat_type.attrs.iter().any(|a| a.path().is_ident("ctx"));
                    let mut arg_attrs = ArgAttrs::default();
                    let mut arg_attr_span = None;
                    for a in pat_type.attrs.iter().filter(|a| a.path().is_ident("arg")) {
                        arg_attr_span.get_or_insert(a.span());
                        attr::parse_arg_attrs(cx, a, &mut arg_attrs);
                    }
                    for a in pat_type.attrs.iter().filter(|a| a.path().is_ident("ctx")) {
                        if !matches!(a.meta, syn::Meta::Path(_)) {
                            cx.error_spanned_by(a, "`#[ctx]` takes no arguments");
                        }
                    }
                    let kind = if is_ctx {
                        if let Some(span) = arg_attr_span {
                            cx.error_at(span, "`#[arg]` does not apply to the `#[ctx]` parameter: it is not an argument the model sends");
                        }
                        ParamKind::Ctx { span: pat_type.span() }
                    } else {
                        ParamKind::Arg {
                            attrs: arg_attrs,
                            docs: doc_text(&pat_type.attrs),
                        }
                    };
                    params.push(Param {
                        ident,
                        ty: &pat_type.ty,
                        kind,
                    });
                }
            }
        }
        ToolFn {
            sig,
            docs: doc_text(attrs),
            params,
            receiver,
            output: match &sig.output {
                ReturnType::Default => None,
                ReturnType::Type(_, ty) => Some(&**ty),
            },
        }
    }

    /// The parameters the model sends.
    pub(crate) fn args(&self) -> impl Iterator<Item = (&Param<'a>, &ArgAttrs, &Option<String>)> {
        self.params.iter().filter_map(|p| match &p.kind {
            ParamKind::Arg { attrs, docs, .. } => Some((p, attrs, docs)),
            ParamKind::Ctx { .. } => None,
        })
    }
}

impl Param<'_> {
    /// The property name in the schema (after `rename`).
    pub(crate) fn json_name(&self) -> String {
        match &self.kind {
            ParamKind::Arg {
                attrs: ArgAttrs { rename: Some(r), .. },
                ..
            } => r.value(),
            _ => syn::ext::IdentExt::unraw(self.ident).to_string(),
        }
    }
}

/// The type a `#[ctx]` parameter names, for the check that it is gate's
/// `Ctx`: `T` of `&T` or `T` itself, when `T` is a path; `None` for any
/// other shape (`&mut Ctx`, a tuple), which cannot be the context.
pub(crate) fn context_type(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(r) if r.mutability.is_none() && matches!(&*r.elem, Type::Path(_)) => Some(&r.elem),
        Type::Path(_) => Some(ty),
        _ => None,
    }
}

/// The last path segment's name of a type (`Ctx` for `toolgate::Ctx`), looking
/// through references.
pub(crate) fn type_name(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| &s.ident),
        Type::Reference(r) => type_name(&r.elem),
        Type::Paren(p) => type_name(&p.elem),
        Type::Group(g) => type_name(&g.elem),
        _ => None,
    }
}
