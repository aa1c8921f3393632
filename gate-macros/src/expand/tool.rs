//! `#[tool]` on a function, and the code every tool gets (`generate`),
//! which `#[tools]` reuses for methods.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, ItemFn, LitStr, Type};

use super::fallback::fallback;
use super::{
    Target, args_struct_ident, opt_str, strip_param_helpers, tool_name, tool_struct_decl, tool_struct_ident,
    toolbox_entry,
};
use crate::ast::{ParamKind, ToolFn, context_type};
use crate::attr::{self, ToolAttrs};
use crate::check::{self, Site};
use crate::ctxt::Ctxt;
use crate::facade::Private;
use crate::lookup;

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
    let private = Private::resolve(attrs.krate.as_ref());
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
        (true, None) => fallback(&target, &attrs, &private),
        (false, _) => generate(&model, &attrs, &target, &private),
    };
    // Emitted even when the tool has errors, so `toolbox!` still finds it.
    let alias = match model.receiver {
        Some(_) => TokenStream::new(),
        None => lookup::alias(&original.vis, &original.sig.ident),
    };
    let errors = cx.into_compile_errors();
    quote!(#func #generated #alias #errors)
}

/// The expression giving the tool's output schema: a probe on the declared
/// return type, with a method's `Self` spelled out (the generated items live
/// outside the impl). A return type that cannot be named there (`impl
/// Trait`, a borrowed lifetime other than `'static`) has no schema.
fn output_schema(model: &ToolFn<'_>, target: &Target<'_>, private: &Private) -> TokenStream {
    let ty = match model.output {
        None => quote!(()),
        Some(ty) => quote!(#ty),
    };
    let self_ty = match target {
        Target::Method { self_ty, .. } => Some(quote!(#self_ty)),
        Target::Free { .. } => None,
    };
    match nameable(ty, self_ty.as_ref()) {
        Some(ty) => quote! {{
            #[allow(unused_imports)]
            use #private::{OutputOfResult as _, OutputOfValue as _, OutputUntyped as _};
            (&&#private::OutputProbe::<#ty>::new()).output_schema()
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

/// The real expansion, written as the list of items it generates, each
/// built by a function of its own (as serde_derive builds each impl): the
/// argument struct and its `Deserialize` and `JsonSchema` impls, the tool
/// struct and its name, its `toolbox!` entry, its `MacroTool` impl.
pub(super) fn generate(model: &ToolFn<'_>, attrs: &ToolAttrs, target: &Target<'_>, private: &Private) -> TokenStream {
    let tool_ident = tool_struct_ident(target);
    let args_ident = args_struct_ident(target);
    let name = tool_name(attrs, target);
    // The argument struct is generic over its field types, so its
    // `Deserialize` and `JsonSchema` impls cannot fail; it is named as
    // `Args<<T as ToolArg>::Checked, …>` only in `MacroTool::Args`. A type that is not a valid argument fails
    // there, once, in `ValidArg`'s words, and becomes an error type that
    // silences every use in the generic `Tool` impl.
    let type_params: Vec<Ident> = (0..model.args().count()).map(|i| format_ident!("__T{}", i)).collect();

    let args_struct = args_struct(model, target, &args_ident, &type_params);
    let args_deserialize_impl = args_deserialize(model, &args_ident, &type_params, private);
    let args_schema_impl = args_schema(model, &args_ident, &type_params, private);
    let tool_struct = tool_struct_decl(target, &tool_ident);
    let entry = toolbox_entry(target, &tool_ident, private);
    let macro_tool = macro_tool_impl(model, attrs, target, &tool_ident, &args_ident, &name, private);

    quote! {
        #args_struct

        #args_deserialize_impl
        #args_schema_impl

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #tool_struct

        impl #tool_ident {
            #[doc(hidden)]
            pub const NAME: &'static str = #name;
        }

        #entry
        #macro_tool
    }
}

/// The hidden argument struct: one field per argument, each of its own
/// type parameter, with the parameter's doc comment.
fn args_struct(model: &ToolFn<'_>, target: &Target<'_>, args_ident: &Ident, type_params: &[Ident]) -> TokenStream {
    let vis = match target {
        Target::Free { vis, .. } => quote!(#vis),
        Target::Method { .. } => quote!(),
    };
    let fields = model.args().zip(type_params).map(|((p, _, docs), param)| {
        let ident = p.ident;
        let doc = docs.as_ref().map(|d| quote!(#[doc = #d]));
        quote!(#doc #ident: #param)
    });
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #args_ident<#(#type_params),*> {
            #(#fields),*
        }
    }
}

/// The argument struct's `JsonSchema`: an object with one property per
/// argument, each documented and marked required unless it has a default.
fn args_schema(model: &ToolFn<'_>, args_ident: &Ident, type_params: &[Ident], private: &Private) -> TokenStream {
    let args_name = args_ident.to_string();
    let properties = model.args().zip(type_params).map(|((p, a, docs), param)| {
        let json_name = p.json_name();
        // As the derive reads a `#[doc = "…"]`: one leading space dropped.
        let doc = docs
            .as_deref()
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .unwrap_or_default();
        let has_default = a.default.is_some();
        quote! {
            #private::add_arg_property::<#param>(&mut schema, generator, #json_name, #doc, #has_default);
        }
    });
    // The schema needs only each field's `JsonSchema` (the `Default` of a
    // defaulted field is bound where the arguments are deserialized).
    let schema_bounds = type_params
        .iter()
        .map(|param| quote!(#param: #private::schemars::JsonSchema));
    quote! {
        impl<#(#schema_bounds),*> #private::schemars::JsonSchema for #args_ident<#(#type_params),*> {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#args_name)
            }
            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(::core::concat!(::core::module_path!(), "::", #args_name))
            }
            fn json_schema(generator: &mut #private::schemars::SchemaGenerator) -> #private::schemars::Schema {
                let mut schema = #private::args_object_schema();
                #(#properties)*
                schema
            }
        }
    }
}

/// The tool struct's `MacroTool` impl: its argument type, its spec, where
/// the built spec is kept, its defaults, its output schema and its `run`.
fn macro_tool_impl(
    model: &ToolFn<'_>,
    attrs: &ToolAttrs,
    target: &Target<'_>,
    tool_ident: &Ident,
    args_ident: &Ident,
    name: &LitStr,
    private: &Private,
) -> TokenStream {
    let checked_types: Vec<TokenStream> = model
        .args()
        .map(|(p, _, _)| {
            let ty = p.ty;
            let private = private.at(ty.span());
            quote_spanned!(ty.span()=> <#ty as #private::ToolArg>::Checked)
        })
        .collect();
    // rustc reports an argument type that is not valid on `type Args` as a
    // whole, so that item is spanned on the parameter list: the one error
    // points at the signature and names the type. (Spanned on the type
    // itself, the projection failed in a function body; the bodies that
    // used it are generic now, written once in `__private`.)
    let params_span = model.sig.paren_token.span.join();
    let self_at_params = Ident::new(&tool_ident.to_string(), params_span);
    let args_at_params = Ident::new(&args_ident.to_string(), params_span);
    // `run` names the user's own types: a `Checked` projection in its
    // signature would be a second error (tried).
    let user_types = model.args().map(|(p, _, _)| p.ty);
    // The bodies keep the macro's own spans, so lints see generated code.
    let spec_value = macro_spec(model, attrs, target, name, private);
    let spec_cell = quote! {
        static SPEC: ::std::sync::OnceLock<#private::ToolSpec> = ::std::sync::OnceLock::new();
        &SPEC
    };
    let add_defaults = add_defaults(model, private);
    let output_schema = output_schema(model, target, private);
    let run_body = run_body(model, target, private);
    let private_at = private.at(params_span);
    quote_spanned! {params_span=>
        impl #private_at::MacroTool for #self_at_params {
            type Args = #args_at_params<#(#checked_types),*>;
            const SPEC: #private_at::MacroSpec<'static> = #spec_value;
            fn spec_cell() -> &'static ::std::sync::OnceLock<#private_at::ToolSpec> {
                #spec_cell
            }
            #add_defaults
            fn output_schema() -> ::core::option::Option<#private_at::serde_json::Value> {
                #output_schema
            }
            fn run(&self, __args: #args_at_params<#(#user_types),*>) -> #private_at::PreparedCall<'_>
            {
                #run_body
            }
        }
    }
}

/// The `MacroSpec` literal: everything the attribute and the signature say,
/// by name.
fn macro_spec(
    model: &ToolFn<'_>,
    attrs: &ToolAttrs,
    target: &Target<'_>,
    name: &LitStr,
    private: &Private,
) -> TokenStream {
    let description = attrs
        .description
        .clone()
        .unwrap_or_else(|| LitStr::new(model.docs.as_deref().unwrap_or_default(), Span::call_site()));
    let title = opt_str(&attrs.title);
    let discovery = opt_str(&attrs.discovery);
    let widen = opt_str(&attrs.widen);
    let scopes = attrs.scopes.clone().unwrap_or_default();
    let effects = effects(attrs, private);
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
    let display = match target {
        Target::Free { ident, .. } => ident.unraw().to_string(),
        Target::Method { type_ident, ident, .. } => format!("{}::{}", type_ident.unraw(), ident.unraw()),
    };
    quote! {
        #private::MacroSpec {
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
        }
    }
}

/// `Effects::new()` with a call for each flag the attribute sets.
fn effects(attrs: &ToolAttrs, private: &Private) -> TokenStream {
    let mut effects = quote!(#private::Effects::new());
    for (flag, method) in [
        (attrs.read_only, "read_only"),
        (attrs.idempotent, "idempotent"),
        (attrs.writes, "writes"),
        (attrs.destructive, "destructive"),
        (attrs.external, "external"),
        (attrs.keyed, "keyed"),
        (attrs.approval, "approval"),
        (attrs.private, "private"),
        (attrs.untrusted, "untrusted"),
        (attrs.trusted, "trusted"),
    ] {
        if flag.is_some() {
            let method = Ident::new(method, Span::call_site());
            effects = quote!(#effects.#method());
        }
    }
    effects
}

/// `MacroTool::add_defaults`, writing each `#[arg(default)]` value into the
/// argument schema, or nothing: the trait's default writes nothing, and
/// most tools have no defaults.
fn add_defaults(model: &ToolFn<'_>, private: &Private) -> TokenStream {
    let defaults: Vec<TokenStream> = model
        .args()
        .filter(|(_, a, _)| a.default.is_some())
        .map(|(p, a, _)| {
            let ty = p.ty;
            let json_name = p.json_name();
            let attr_span = a.default.unwrap_or_else(Span::call_site);
            let private_at = private.at(attr_span);
            let fits = quote_spanned! {attr_span=>
                #private_at::default_fits({
                    #[allow(unused_imports)]
                    use #private_at::{DefaultOnOption as _, DefaultOnValue as _};
                    (&&#private::DefaultProbe::<#ty>::new()).target()
                });
            };
            quote! {
                #fits
                #private::set_default(schema, #json_name, {
                    #[allow(unused_imports)]
                    use #private::{DefaultUnknown as _, DefaultViaSerialize as _};
                    (&#private::DefaultProbe::<#ty>::new()).default_json()
                });
            }
        })
        .collect();
    if defaults.is_empty() {
        return TokenStream::new();
    }
    quote! {
        fn add_defaults(schema: &mut #private::serde_json::Value) {
            #(#defaults)*
        }
    }
}

/// `MacroTool::run`'s body: the call of the user's function on the parsed
/// arguments and the context, awaited if it is async, and its return value
/// converted to the tool's output.
fn run_body(model: &ToolFn<'_>, target: &Target<'_>, private: &Private) -> TokenStream {
    let call_args = model.params.iter().map(|p| match &p.kind {
        ParamKind::Arg { .. } => {
            let ident = p.ident;
            quote!(__args.#ident)
        }
        // Through `CallContext`, spanned on the type: whether it is gate's
        // `Ctx` is the type system's call, whatever the spelling.
        ParamKind::Ctx { .. } => match (p.ty, context_type(p.ty)) {
            (Type::Reference(_), Some(ty)) => {
                let private = private.at(ty.span());
                quote_spanned!(ty.span()=> <#ty as #private::CallContext>::borrowed(__ctx))
            }
            (_, Some(ty)) => {
                let private = private.at(ty.span());
                quote_spanned!(ty.span()=> <#ty as #private::CallContext>::owned(__ctx))
            }
            // Refused by the checks already; expansion stops before this.
            (_, None) => quote!(__ctx),
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
    // Chosen by the returned value's type, so an alias of `Result` is a
    // result too; spanned on the return type, where a part that does not
    // fit is reported.
    let convert = match model.output {
        None => quote!(#private::IntoToolOutput::into_output(__ret)),
        Some(ty) => {
            let private = private.at(ty.span());
            quote_spanned! {ty.span()=> {
                #[allow(unused_imports)]
                use #private::{ReturnOfResult as _, ReturnOfValue as _};
                (&&#private::ReturnProbe::of(&__ret)).convert(__ret)
            }}
        }
    };
    quote! {
        #private::PreparedCall::new(__args, move |__owned_ctx, __args| async move {
            let __ctx = &__owned_ctx;
            let __ret = #invoke;
            #convert
        })
    }
}

/// The argument struct's `Deserialize`: an object of the declared names,
/// nothing else (serde's `deny_unknown_fields`), each at most once; an
/// absent `Option` is `None`, an absent `#[arg(default)]` its type's
/// `Default`, any other absent argument serde's "missing field" error.
/// Written here rather than derived: serde's derive also writes a field
/// enum, its visitor and a sequence visitor per struct, which no tool call
/// uses (arguments are a JSON object) and which a crate of a hundred tools
/// would type-check and compile a hundred times.
fn args_deserialize(model: &ToolFn<'_>, args_ident: &Ident, type_params: &[Ident], private: &Private) -> TokenStream {
    let slots: Vec<Ident> = (0..type_params.len()).map(|i| format_ident!("__arg{}", i)).collect();
    let bounds = model.args().zip(type_params).map(|((_, a, _), param)| match a.default {
        Some(_) => quote!(#param: _serde::Deserialize<'de> + ::core::default::Default),
        None => quote!(#param: _serde::Deserialize<'de>),
    });
    let bounds: Vec<TokenStream> = bounds.collect();
    let names: Vec<String> = model.args().map(|(p, _, _)| p.json_name()).collect();
    let reads = names.iter().zip(&slots).zip(type_params).map(|((name, slot), param)| {
        quote! {
            #name => {
                if #slot.is_some() {
                    return ::core::result::Result::Err(<__A::Error as _serde::de::Error>::duplicate_field(#name));
                }
                #slot = ::core::option::Option::Some(__map.next_value::<#param>()?);
            }
        }
    });
    let finals = model.args().zip(&names).zip(&slots).map(|(((p, a, _), name), slot)| {
        let ident = p.ident;
        match a.default {
            Some(_) => quote!(#ident: #slot.unwrap_or_default()),
            None => quote! {
                #ident: match #slot {
                    ::core::option::Option::Some(__value) => __value,
                    ::core::option::Option::None => #private::missing_arg(#name)?,
                }
            },
        }
    });
    quote! {
        // The lints serde's derive silences in what it writes, for the same
        // reasons: fully qualified paths on purpose, in the user's crate.
        #[allow(non_camel_case_types, non_upper_case_globals, unused_qualifications, clippy::absolute_paths)]
        const _: () = {
            use #private::serde as _serde;
            #[automatically_derived]
            impl<'de, #(#bounds),*> _serde::Deserialize<'de> for #args_ident<#(#type_params),*> {
                fn deserialize<__D: _serde::Deserializer<'de>>(__deserializer: __D) -> ::core::result::Result<Self, __D::Error> {
                    const __FIELDS: &[&str] = &[#(#names),*];
                    struct __Visitor<#(#type_params),*>(::core::marker::PhantomData<fn() -> (#(#type_params,)*)>);
                    #[automatically_derived]
                    impl<'de, #(#bounds),*> _serde::de::Visitor<'de> for __Visitor<#(#type_params),*> {
                        type Value = #args_ident<#(#type_params),*>;
                        fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                            __f.write_str("an object of the tool's arguments")
                        }
                        fn visit_map<__A: _serde::de::MapAccess<'de>>(self, mut __map: __A) -> ::core::result::Result<Self::Value, __A::Error> {
                            #(let mut #slots: ::core::option::Option<#type_params> = ::core::option::Option::None;)*
                            while let ::core::option::Option::Some(__key) = __map.next_key::<#private::ArgKey<'de>>()? {
                                match __key.as_str() {
                                    #(#reads)*
                                    __other => {
                                        return ::core::result::Result::Err(<__A::Error as _serde::de::Error>::unknown_field(__other, __FIELDS));
                                    }
                                }
                            }
                            ::core::result::Result::Ok(#args_ident { #(#finals),* })
                        }
                    }
                    __deserializer.deserialize_map(__Visitor(::core::marker::PhantomData))
                }
            }
        };
    }
}
