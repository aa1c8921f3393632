//! Code generation for `#[tool]`, `#[tools]` and `toolbox!`, one file per
//! macro (`tool.rs`, `tools.rs`, `toolbox.rs`) and one for what a tool with
//! errors becomes (`fallback.rs`); this file holds what they share.
//!
//! For a tool `f` the expansion is the user's function unchanged (minus the
//! parameter attributes the macro consumed), a hidden argument struct
//! `__gate_args_f` whose `Deserialize` and `JsonSchema` impls `tool.rs`
//! writes out rather than derives (see `args_deserialize` for why), a hidden
//! unit struct `__gate_tool_f` implementing `__private::MacroTool` (its facts and
//! the one body that calls `f`; `Tool` itself is implemented once, generically,
//! over every `MacroTool`, so its bodies are checked once per crate, not once
//! per tool), and the lookup macro through
//! which `toolbox!` finds it by the name `f` (`lookup.rs`). The hidden names
//! are lower-case and prefixed, so they never collide with the user's types
//! (`fn customer` next to `struct Customer` compiles). Everything generated
//! reaches other crates through the facade's `__private` module, at the
//! path `facade.rs` finds.

mod fallback;
mod tool;
mod toolbox;
mod tools;

pub(crate) use tool::tool;
pub(crate) use toolbox::toolbox;
pub(crate) use tools::tools;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{Ident, LitStr, Type, Visibility};

use crate::ast::is_param_helper;
use crate::attr::ToolAttrs;
use crate::facade::Private;
use crate::lookup;

/// How the generated tool reaches the user's code.
pub(super) enum Target<'a> {
    /// `f(args…)`.
    Free { vis: &'a Visibility, ident: &'a Ident },
    /// `Type::f(&self.0, args…)`, with `self` shared through an `Arc`.
    Method {
        self_ty: &'a Type,
        type_ident: &'a Ident,
        ident: &'a Ident,
    },
}

pub(super) fn tool_struct_ident(target: &Target<'_>) -> Ident {
    match target {
        Target::Free { ident, .. } => lookup::tool_struct_ident(ident),
        Target::Method { type_ident, ident, .. } => {
            format_ident!("__gate_tool_{}_{}", type_ident.unraw(), ident.unraw())
        }
    }
}

pub(super) fn args_struct_ident(target: &Target<'_>) -> Ident {
    match target {
        Target::Free { ident, .. } => format_ident!("__gate_args_{}", ident.unraw()),
        Target::Method { type_ident, ident, .. } => {
            format_ident!("__gate_args_{}_{}", type_ident.unraw(), ident.unraw())
        }
    }
}

/// Removes `#[arg]`, `#[ctx]` and parameter doc comments, which only this
/// macro understands (rustc rejects doc comments on parameters).
pub(super) fn strip_param_helpers(sig: &mut syn::Signature) {
    for input in sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(p) = input {
            p.attrs.retain(|a| !is_param_helper(a));
        }
    }
}

/// One const assertion listing every tool's name with the path the user
/// wrote, so two tools with one name are a compile error naming both rather
/// than a run-time surprise. The list is linear in the number of tools; the
/// comparison runs once, in `assert_unique_names`.
pub(super) fn duplicate_name_check(
    tools: impl Iterator<Item = (TokenStream, String)>,
    private: &Private,
) -> TokenStream {
    let entries: Vec<TokenStream> = tools.map(|(tool, label)| quote!((#tool::NAME, #label))).collect();
    if entries.len() < 2 {
        return TokenStream::new();
    }
    quote!(const _: () = #private::assert_unique_names(&[#(#entries),*]);)
}

pub(super) fn opt_str(lit: &Option<LitStr>) -> TokenStream {
    match lit {
        Some(l) => quote!(::core::option::Option::Some(#l)),
        None => quote!(::core::option::Option::None),
    }
}

pub(super) fn tool_name(attrs: &ToolAttrs, target: &Target<'_>) -> LitStr {
    let ident = match target {
        Target::Free { ident, .. } | Target::Method { ident, .. } => ident,
    };
    attrs
        .name
        .clone()
        .unwrap_or_else(|| LitStr::new(&ident.unraw().to_string(), ident.span()))
}

/// How `toolbox!` reads a free tool's struct (methods are collected by
/// `into_toolbox` instead).
pub(super) fn toolbox_entry(target: &Target<'_>, tool_ident: &Ident, private: &Private) -> TokenStream {
    match target {
        Target::Free { .. } => quote! {
            impl #private::ToolboxEntry for #tool_ident {
                const NAME: &'static str = Self::NAME;
                fn shared() -> ::std::sync::Arc<dyn #private::Tool> {
                    ::std::sync::Arc::new(#tool_ident)
                }
            }
        },
        Target::Method { .. } => TokenStream::new(),
    }
}

/// The hidden struct a tool is: a unit struct with the function's visibility
/// for free functions, a private wrapper of the shared `self` for methods.
pub(super) fn tool_struct_decl(target: &Target<'_>, tool_ident: &Ident) -> TokenStream {
    match target {
        Target::Free { vis, .. } => quote!(#vis struct #tool_ident;),
        Target::Method { self_ty, .. } => quote!(struct #tool_ident(::std::sync::Arc<#self_ty>);),
    }
}

/// Error accumulation below trybuild: what each macro emits for input with
/// several mistakes, counted as `compile_error!` invocations.
#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    /// How many errors an expansion reports.
    fn errors(expansion: &TokenStream) -> usize {
        expansion.to_string().matches("compile_error").count()
    }

    #[test]
    fn a_tool_reports_every_mistake_at_once() {
        let out = super::tool(
            quote!(read_only, writes, nmae = "x"),
            quote! {
                fn lookup<T>(#[arg(bogus)] email: &str) -> String { String::new() }
            },
        );
        // `writes` beside `read_only`, the unknown key, the unknown `#[arg]`
        // key, the borrowed argument, the generic and the missing description.
        assert_eq!(errors(&out), 6, "{out}");
        let text = out.to_string();
        assert!(text.contains("fn lookup"), "the user's function is kept: {text}");
        assert!(
            text.contains("__gate_lookup_lookup"),
            "the lookup alias is kept: {text}"
        );
    }

    #[test]
    fn a_bad_method_does_not_send_later_methods_to_the_fallback() {
        let out = super::tools(
            TokenStream::new(),
            quote! {
                impl Crm {
                    /// Broken: no effect declared.
                    #[tool]
                    fn broken(&self) -> u8 { 1 }
                    /// Fine.
                    #[tool(read_only)]
                    fn fine(&self) -> u8 { 2 }
                }
            },
        );
        assert_eq!(errors(&out), 1, "{out}");
        let text = out.to_string();
        assert!(
            text.contains("__gate_args_Crm_fine"),
            "the good method is generated: {text}"
        );
        assert!(
            !text.contains("__gate_args_Crm_broken"),
            "the bad one falls back: {text}"
        );
    }

    #[test]
    fn tools_accepts_the_qualified_attribute() {
        let out = super::tools(
            TokenStream::new(),
            quote! {
                impl Crm {
                    /// Look up.
                    #[toolgate::tool(read_only)]
                    fn lookup(&self) -> u8 { 1 }
                }
            },
        );
        assert_eq!(errors(&out), 0, "{out}");
        assert!(out.to_string().contains("__gate_args_Crm_lookup"), "{out}");
    }

    #[test]
    fn toolbox_reports_every_bad_path() {
        let out = super::toolbox(quote!(a::<u8>, b, c::<()>));
        assert_eq!(errors(&out), 2, "{out}");
    }

    #[test]
    fn toolbox_finds_tools_by_their_own_names() {
        let text = super::toolbox(quote!(one, billing::two, write)).to_string();
        assert!(text.contains("one ! ()"), "{text}");
        assert!(text.contains("billing :: two ! (billing ::)"), "{text}");
        // A prelude macro's name has no alias: the struct is named directly.
        assert!(text.contains("__gate_tool_write"), "{text}");
    }
}
