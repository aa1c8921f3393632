//! Code generation for `#[tool]`, `#[tools]` and `toolbox!`.
//!
//! For a tool `f` this emits the user's function unchanged (minus the
//! parameter attributes the macro consumed), a hidden argument struct
//! `__gate_args_f` deriving `Deserialize` and `JsonSchema`, and a hidden unit
//! struct `__gate_tool_f` implementing `Tool`. The hidden names are
//! lower-case and prefixed, so they never collide with the user's types
//! (`fn customer` next to `struct Customer` compiles). Everything generated
//! reaches other crates through `::gate::__private`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, ImplItem, ItemFn, ItemImpl, LitStr, Path, Token, Type, Visibility};

use crate::ast::{Output, ParamKind, ToolFn, is_param_helper};
use crate::attr::{self, ToolAttrs};
use crate::check::{self, Site};
use crate::ctxt::Ctxt;

/// How the generated tool reaches the user's code.
enum Target<'a> {
    /// `f(args…)`.
    Free { vis: &'a Visibility, ident: &'a Ident },
    /// `Type::f(&self.0, args…)`, with `self` shared through an `Arc`.
    Method {
        self_ty: &'a Type,
        type_ident: &'a Ident,
        ident: &'a Ident,
    },
}

fn tool_struct_ident(target: &Target<'_>) -> Ident {
    match target {
        Target::Free { ident, .. } => format_ident!("__gate_tool_{}", ident.unraw()),
        Target::Method { type_ident, ident, .. } => {
            format_ident!("__gate_tool_{}_{}", type_ident.unraw(), ident.unraw())
        }
    }
}

fn args_struct_ident(target: &Target<'_>) -> Ident {
    match target {
        Target::Free { ident, .. } => format_ident!("__gate_args_{}", ident.unraw()),
        Target::Method { type_ident, ident, .. } => {
            format_ident!("__gate_args_{}_{}", type_ident.unraw(), ident.unraw())
        }
    }
}

/// Removes `#[arg]`, `#[ctx]` and parameter doc comments, which only this
/// macro understands (rustc rejects doc comments on parameters).
fn strip_param_helpers(sig: &mut syn::Signature) {
    for input in sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(p) = input {
            p.attrs.retain(|a| !is_param_helper(a));
        }
    }
}

/// `#[tool(...)] fn ...`
pub(crate) fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            cx.error_at(Span::call_site(), "`#[tool]` goes on a function; for methods, put `#[tools]` on the impl block and `#[tool]` on each method");
            let errors = cx.into_compile_errors();
            return quote!(#item #errors);
        }
    };
    let attrs = attr::parse_tool_attrs(&mut cx, args);
    let original = func.clone();
    let model = ToolFn::from_syn(&mut cx, &original.sig, &original.attrs);
    check::check(&mut cx, &model, &attrs, Span::call_site(), Site::Free);
    strip_param_helpers(&mut func.sig);
    let target = Target::Free {
        vis: &original.vis,
        ident: &original.sig.ident,
    };
    let generated = match (cx.has_errors(), model.receiver) {
        // A method inside a plain impl: no items can be generated there.
        (true, Some(_)) => TokenStream::new(),
        (true, None) => fallback(&target, &attrs),
        (false, _) => generate(&model, &attrs, &target),
    };
    let errors = cx.into_compile_errors();
    quote!(#func #generated #errors)
}

/// `#[tools] impl S { #[tool(...)] fn ... }`
pub(crate) fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    if !args.is_empty() {
        cx.error_spanned_by(
            &args,
            "`#[tools]` takes no arguments; put `#[tool(...)]` on each method",
        );
    }
    let mut block: ItemImpl = match syn::parse2(item.clone()) {
        Ok(b) => b,
        Err(_) => {
            cx.error_at(
                Span::call_site(),
                "`#[tools]` goes on an inherent impl block (`#[tools] impl MyTools { ... }`)",
            );
            let errors = cx.into_compile_errors();
            return quote!(#item #errors);
        }
    };
    if let Some((_, trait_path, _)) = &block.trait_ {
        cx.error_spanned_by(
            trait_path,
            "`#[tools]` goes on an inherent impl block, not a trait impl",
        );
    }
    if !block.generics.params.is_empty() {
        cx.error_spanned_by(
            &block.generics,
            "`#[tools]` impl blocks cannot be generic: each tool needs one schema",
        );
    }
    let self_ty = (*block.self_ty).clone();
    let type_ident = match &self_ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.clone()),
        _ => None,
    };
    let Some(type_ident) = type_ident else {
        cx.error_spanned_by(&self_ty, "`#[tools]` needs a named type (`impl MyTools`)");
        let errors = cx.into_compile_errors();
        return quote!(#item #errors);
    };

    // Take each `#[tool]` attribute off its method, then model the method.
    let mut found = Vec::new();
    for impl_item in block.items.iter_mut() {
        let ImplItem::Fn(method) = impl_item else { continue };
        let Some(index) = method.attrs.iter().position(|a| a.path().is_ident("tool")) else {
            continue;
        };
        let tool_attr = method.attrs.remove(index);
        let tokens = match &tool_attr.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            _ => TokenStream::new(),
        };
        found.push((method.clone(), tokens, tool_attr.span()));
        strip_param_helpers(&mut method.sig);
    }
    if found.is_empty() && block.trait_.is_none() {
        cx.error_at(Span::call_site(), "`#[tools]` impl has no `#[tool]` methods");
    }
    let mut generated = Vec::new();
    let mut tool_idents = Vec::new();
    for (method, tokens, span) in &found {
        let attrs = attr::parse_tool_attrs(&mut cx, tokens.clone());
        let model = ToolFn::from_syn(&mut cx, &method.sig, &method.attrs);
        let errors_before = cx.has_errors();
        check::check(&mut cx, &model, &attrs, *span, Site::Method);
        let target = Target::Method {
            self_ty: &self_ty,
            type_ident: &type_ident,
            ident: &method.sig.ident,
        };
        generated.push(if cx.has_errors() || errors_before {
            fallback(&target, &attrs)
        } else {
            generate(&model, &attrs, &target)
        });
        tool_idents.push((tool_struct_ident(&target), method.sig.ident.clone()));
    }
    let checks = duplicate_name_checks(tool_idents.iter().map(|(t, m)| (quote!(#t), m.to_string())).collect());
    let constructors = tool_idents.iter().map(|(t, _)| quote!(::std::sync::Arc::new(#t(::std::sync::Arc::clone(&shared))) as ::std::sync::Arc<dyn ::gate::__private::Tool>));
    let errors = cx.into_compile_errors();
    quote! {
        #block
        #(#generated)*
        impl #self_ty {
            /// Every `#[tool]` method of this impl as a toolbox; the tools share `self`.
            pub fn into_toolbox(self) -> ::gate::__private::Toolbox {
                #checks
                let shared = ::std::sync::Arc::new(self);
                ::gate::__private::Toolbox::__from_unique(::std::vec![#(#constructors),*])
            }
        }
        #errors
    }
}

/// `toolbox![f, path::g]`
pub(crate) fn toolbox(input: TokenStream) -> TokenStream {
    use syn::parse::Parser;
    let paths = match syn::punctuated::Punctuated::<Path, Token![,]>::parse_terminated.parse2(input) {
        Ok(p) => p,
        Err(e) => return e.to_compile_error(),
    };
    let mut tools = Vec::new();
    for path in &paths {
        let mut hidden = path.clone();
        let Some(last) = hidden.segments.last_mut() else {
            continue;
        };
        if !last.arguments.is_empty() {
            return syn::Error::new_spanned(&last.arguments, "tool paths take no generic arguments").to_compile_error();
        }
        last.ident = format_ident!("__gate_tool_{}", last.ident.unraw(), span = last.ident.span());
        tools.push((hidden, quote!(#path).to_string().replace(' ', "")));
    }
    let checks = duplicate_name_checks(tools.iter().map(|(p, label)| (quote!(#p), label.clone())).collect());
    let constructors = tools
        .iter()
        .map(|(p, _)| quote!(::std::sync::Arc::new(#p) as ::std::sync::Arc<dyn ::gate::__private::Tool>));
    quote! {{
        #checks
        ::gate::__private::Toolbox::__from_unique(::std::vec![#(#constructors),*])
    }}
}

/// A `const` assertion per pair of tools, so two tools with one name are a
/// compile error naming both rather than a run-time surprise.
fn duplicate_name_checks(tools: Vec<(TokenStream, String)>) -> TokenStream {
    let mut checks = Vec::new();
    for (i, (a, label_a)) in tools.iter().enumerate() {
        for (b, label_b) in &tools[i + 1..] {
            let message = LitStr::new(
                &format!("`{label_a}` and `{label_b}` have the same tool name; tool names must be unique in a toolbox"),
                Span::call_site(),
            );
            checks.push(quote! {
                if ::gate::__private::str_eq(#a::NAME, #b::NAME) { ::core::panic!(#message) }
            });
        }
    }
    if checks.is_empty() {
        return TokenStream::new();
    }
    quote!(const _: () = { #(#checks)* };)
}

fn opt_str(lit: &Option<LitStr>) -> TokenStream {
    match lit {
        Some(l) => quote!(::core::option::Option::Some(#l)),
        None => quote!(::core::option::Option::None),
    }
}

fn tool_name(attrs: &ToolAttrs, target: &Target<'_>) -> LitStr {
    let ident = match target {
        Target::Free { ident, .. } | Target::Method { ident, .. } => ident,
    };
    attrs
        .name
        .clone()
        .unwrap_or_else(|| LitStr::new(&ident.unraw().to_string(), ident.span()))
}

/// The expression giving the tool's output schema: a probe on the declared
/// return type, with a method's `Self` spelled out (the generated items live
/// outside the impl). A return type that cannot be named there (`impl
/// Trait`, a borrowed lifetime other than `'static`) has no schema.
fn output_schema(model: &ToolFn<'_>, target: &Target<'_>) -> TokenStream {
    let ty = match &model.output {
        Output::Value(None) => quote!(()),
        Output::Value(Some(ty)) | Output::Result(ty) | Output::ResultAlias(ty) => quote!(#ty),
    };
    let self_ty = match target {
        Target::Method { self_ty, .. } => Some(quote!(#self_ty)),
        Target::Free { .. } => None,
    };
    match nameable(ty, self_ty.as_ref()) {
        Some(ty) => quote! {{
            #[allow(unused_imports)]
            use ::gate::__private::{OutputOfResult as _, OutputOfValue as _, OutputUntyped as _};
            (&&::gate::__private::OutputProbe::<#ty>::new()).output_schema()
        }},
        None => quote!(::core::option::Option::None),
    }
}

/// `tokens` with `Self` replaced by `self_ty`, or `None` when they hold
/// `impl`, a non-`'static` lifetime, or `Self` outside a method.
fn nameable(tokens: TokenStream, self_ty: Option<&TokenStream>) -> Option<TokenStream> {
    use proc_macro2::{Group, TokenTree};
    let mut out = Vec::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tree) = iter.next() {
        match tree {
            TokenTree::Ident(ident) if ident == "impl" => return None,
            TokenTree::Ident(ident) if ident == "Self" => out.extend(self_ty?.clone()),
            TokenTree::Punct(p) if p.as_char() == '\'' => match iter.next() {
                Some(TokenTree::Ident(lifetime)) if lifetime == "static" => {
                    out.push(TokenTree::Punct(p));
                    out.push(TokenTree::Ident(lifetime));
                }
                _ => return None,
            },
            TokenTree::Group(group) => {
                let inner = nameable(group.stream(), self_ty)?;
                let mut rebuilt = Group::new(group.delimiter(), inner);
                rebuilt.set_span(group.span());
                out.push(TokenTree::Group(rebuilt));
            }
            other => out.push(other),
        }
    }
    Some(out.into_iter().collect())
}

/// The real expansion: argument struct, tool struct, `Tool` impl.
fn generate(model: &ToolFn<'_>, attrs: &ToolAttrs, target: &Target<'_>) -> TokenStream {
    let tool_ident = tool_struct_ident(target);
    let args_ident = args_struct_ident(target);
    let name = tool_name(attrs, target);
    let description = attrs
        .description
        .clone()
        .unwrap_or_else(|| LitStr::new(model.docs.as_deref().unwrap_or_default(), Span::call_site()));
    let title = opt_str(&attrs.title);
    let discovery = opt_str(&attrs.discovery);
    let widen = opt_str(&attrs.widen);
    let scopes = attrs.scopes.clone().unwrap_or_default();
    let mut effects = quote!(::gate::__private::Effects::new());
    for (flag, method) in [
        (attrs.read_only, "read_only"),
        (attrs.idempotent, "idempotent"),
        (attrs.writes, "writes"),
        (attrs.destructive, "destructive"),
        (attrs.external, "external"),
        (attrs.keyed, "keyed"),
    ] {
        if flag.is_some() {
            let method = Ident::new(method, Span::call_site());
            effects = quote!(#effects.#method());
        }
    }
    // `check.rs` refused a malformed, zero or overlong timeout already.
    let timeout_ms = match attrs.timeout.as_ref().and_then(|t| t.millis) {
        Some(ms) => quote!(::core::option::Option::Some(#ms)),
        None => quote!(::core::option::Option::None),
    };
    let key_args: Vec<String> = model
        .args()
        .filter(|(_, a, _)| a.key.is_some())
        .map(|(p, _, _)| p.json_name())
        .collect();

    // The argument struct is generic over its field types, so its derived
    // impls cannot fail; it is used only as `Args<<T as ToolArg>::Checked, …>`
    // with each projection spanned on the user's type. A type that is not a
    // valid argument fails there, once, with ToolArg's message, and becomes an
    // error type that silences every later use.
    let type_params: Vec<Ident> = (0..model.args().count()).map(|i| format_ident!("__T{}", i)).collect();
    let fields = model.args().zip(&type_params).map(|((p, a, docs), param)| {
        let ident = p.ident;
        let doc = docs.as_ref().map(|d| quote!(#[doc = #d]));
        let default = a.default.map(|_| quote!(#[serde(default)]));
        let rename = a.rename.as_ref().map(|r| quote!(#[serde(rename = #r)]));
        quote!(#doc #default #rename #ident: #param)
    });
    let checked_types = model.args().map(|(p, _, _)| {
        let ty = p.ty;
        quote_spanned!(ty.span()=> <#ty as ::gate::__private::ToolArg>::Checked)
    });
    let args_type = quote!(#args_ident<#(#checked_types),*>);
    let defaults = model.args().filter(|(_, a, _)| a.default.is_some()).map(|(p, _, _)| {
        let ty = p.ty;
        let json_name = p.json_name();
        quote! {
            ::gate::__private::set_default(&mut schema, #json_name, {
                #[allow(unused_imports)]
                use ::gate::__private::{DefaultUnknown as _, DefaultViaSerialize as _};
                (&::gate::__private::DefaultProbe::<#ty>::new()).default_json()
            });
        }
    });
    let arg_checks = model.args().map(|(p, _, _)| {
        let ty = p.ty;
        quote_spanned!(ty.span()=> ::gate::__private::assert_tool_arg::<#ty>();)
    });
    // Derives copy bounds declared here into their impls; `#[arg(default)]`
    // fields need `Default`, which schemars' derive does not infer.
    let type_param_decls = model
        .args()
        .zip(&type_params)
        .map(|((_, a, _), param)| match a.default {
            Some(_) => quote!(#param: ::core::default::Default),
            None => quote!(#param),
        });
    let call_args = model.params.iter().map(|p| match &p.kind {
        ParamKind::Arg { .. } => {
            let ident = p.ident;
            quote!(__args.#ident)
        }
        ParamKind::Ctx { .. } => match p.ty {
            Type::Reference(_) => quote!(__ctx),
            _ => quote!(::core::clone::Clone::clone(__ctx)),
        },
    });
    let call_args: Vec<TokenStream> = call_args.collect();
    let invoke = match target {
        Target::Free { ident, .. } => quote!(#ident(#(#call_args),*)),
        Target::Method { self_ty, ident, .. } => quote!(<#self_ty>::#ident(&self.0, #(#call_args),*)),
    };
    let invoke = if model.sig.asyncness.is_some() {
        quote!(#invoke.await)
    } else {
        invoke
    };
    let convert = match &model.output {
        Output::Value(None) => quote!(::gate::__private::ToolOutput::into_output(__ret)),
        Output::Value(Some(ty)) => quote_spanned!(ty.span()=> ::gate::__private::ToolOutput::into_output(__ret)),
        Output::Result(whole) => quote_spanned!(whole.span()=> ::gate::__private::result_into(__ret)),
        Output::ResultAlias(ty) => quote_spanned!(ty.span()=> ::gate::__private::ToolResult::into_result(__ret)),
    };
    let display = match target {
        Target::Free { ident, .. } => ident.unraw().to_string(),
        Target::Method { type_ident, ident, .. } => format!("{}::{}", type_ident.unraw(), ident.unraw()),
    };
    let vis = match target {
        Target::Free { vis, .. } => quote!(#vis),
        Target::Method { .. } => quote!(),
    };
    let tool_struct = tool_struct_decl(target, &tool_ident);
    let output_schema = output_schema(model, target);

    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #[derive(::gate::__private::serde::Deserialize, ::gate::__private::schemars::JsonSchema)]
        #[serde(crate = "::gate::__private::serde", deny_unknown_fields)]
        #[schemars(crate = "::gate::__private::schemars")]
        #vis struct #args_ident<#(#type_param_decls),*> {
            #(#fields),*
        }

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #tool_struct

        impl #tool_ident {
            #[doc(hidden)]
            pub const NAME: &'static str = #name;
            const _ARGS_ARE_VALID: () = { #(#arg_checks)* };
        }

        impl ::gate::__private::Tool for #tool_ident {
            fn spec(&self) -> &::gate::__private::ToolSpec {
                static SPEC: ::std::sync::OnceLock<::gate::__private::ToolSpec> = ::std::sync::OnceLock::new();
                SPEC.get_or_init(|| ::gate::__private::spec(
                    ::gate::__private::MacroSpec {
                        name: #name,
                        description: #description,
                        title: #title,
                        effects: #effects,
                        scopes: &[#(#scopes),*],
                        discovery: #discovery,
                        widen: #widen,
                        key_args: &[#(#key_args),*],
                        timeout_ms: #timeout_ms,
                        origin: ::core::concat!(::core::module_path!(), "::", #display),
                    },
                    {
                        let mut schema = ::gate::__private::args_schema::<#args_type>();
                        #(#defaults)*
                        schema
                    },
                ).with_output_schema(#output_schema))
            }

            fn call<'a>(
                &'a self,
                __ctx: &'a ::gate::__private::Ctx,
                __arguments: &'a str,
            ) -> ::gate::__private::ToolFuture<'a> {
                let __args: #args_type = match ::gate::__private::parse_args(__arguments) {
                    ::core::result::Result::Ok(args) => args,
                    ::core::result::Result::Err(error) => return ::gate::__private::ready_err(error),
                };
                ::std::boxed::Box::pin(async move {
                    let __ret = #invoke;
                    #convert
                })
            }

            fn prepare<'a>(
                &'a self,
                __validator: &::gate::__private::Validator,
                __arguments: &str,
            ) -> ::core::option::Option<
                ::core::result::Result<::gate::__private::PreparedCall<'a>, ::gate::__private::Rejection>,
            > {
                ::gate::__private::prepared::<#args_type, _>(__validator, __arguments, move |__owned_ctx, __args| {
                    ::std::boxed::Box::pin(async move {
                        let __ctx = &__owned_ctx;
                        let __ret = #invoke;
                        #convert
                    })
                })
            }
        }
    }
}

/// The hidden struct a tool is: a unit struct with the function's visibility
/// for free functions, a private wrapper of the shared `self` for methods.
fn tool_struct_decl(target: &Target<'_>, tool_ident: &Ident) -> TokenStream {
    match target {
        Target::Free { vis, .. } => quote!(#vis struct #tool_ident;),
        Target::Method { self_ty, .. } => quote!(struct #tool_ident(::std::sync::Arc<#self_ty>);),
    }
}

/// What is emitted when the tool has errors: the names `toolbox!` and
/// `#[tools]` refer to still exist, so one mistake stays one error.
fn fallback(target: &Target<'_>, attrs: &ToolAttrs) -> TokenStream {
    let tool_ident = tool_struct_ident(target);
    let name = tool_name(attrs, target);
    let tool_struct = tool_struct_decl(target, &tool_ident);
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #tool_struct
        impl #tool_ident {
            #[doc(hidden)]
            pub const NAME: &'static str = #name;
        }
        impl ::gate::__private::Tool for #tool_ident {
            fn spec(&self) -> &::gate::__private::ToolSpec {
                ::core::unreachable!("this tool failed to compile")
            }
            fn call<'a>(&'a self, _: &'a ::gate::__private::Ctx, _: &'a str) -> ::gate::__private::ToolFuture<'a> {
                ::core::unreachable!("this tool failed to compile")
            }
        }
    }
}
