//! `#[tools]` on an impl block: each `#[tool]` method becomes a tool sharing
//! `self`, and the type gets `into_toolbox`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl, Path, Type};

use super::fallback::fallback;
use super::tool::generate;
use super::{Target, duplicate_name_check, strip_param_helpers, tool_struct_ident};
use crate::ast::ToolFn;
use crate::attr;
use crate::check::{self, Site};
use crate::ctxt::Ctxt;
use crate::facade::Private;

/// `#[tools] impl S { #[tool(...)] fn ... }`
pub(crate) fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let krate = attr::parse_tools_attrs(&mut cx, args);
    let private = Private::resolve(krate.as_ref());
    // `#[name::tool]` on a method may use the manifest's name even when the
    // impl's `crate = …` points at a re-export.
    let facade_in_manifest = Private::resolve(None);
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
        let Some(index) = method
            .attrs
            .iter()
            .position(|a| is_tool_attr(a.path(), &private, &facade_in_manifest))
        else {
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
        // Errors of earlier methods stay theirs: only this method's own
        // errors send it to the fallback.
        let errors_before = cx.error_count();
        let attrs = attr::parse_tool_attrs(&mut cx, tokens.clone());
        // A method's own `crate = …` wins over the impl's.
        let private = attrs
            .krate
            .as_ref()
            .map_or_else(|| private.clone(), |path| Private::resolve(Some(path)));
        let model = ToolFn::from_syn(&mut cx, &method.sig, &method.attrs);
        check::check(&mut cx, &model, &attrs, *span, Site::Method);
        let target = Target::Method {
            self_ty: &self_ty,
            type_ident: &type_ident,
            ident: &method.sig.ident,
        };
        generated.push(if cx.error_count() > errors_before {
            fallback(&target, &attrs, &private)
        } else {
            generate(&model, &attrs, &target, &private)
        });
        tool_idents.push((tool_struct_ident(&target), method.sig.ident.clone()));
    }
    let checks = duplicate_name_check(tool_idents.iter().map(|(t, m)| (quote!(#t), m.to_string())), &private);
    let constructors = tool_idents.iter().map(|(t, _)| quote!(::std::sync::Arc::new(#t(::std::sync::Arc::clone(&shared))) as ::std::sync::Arc<dyn #private::Tool>));
    let errors = cx.into_compile_errors();
    quote! {
        #block
        #(#generated)*
        impl #self_ty {
            /// Every `#[tool]` method of this impl as a toolbox; the tools share `self`.
            pub fn into_toolbox(self) -> #private::Toolbox {
                #checks
                let shared = ::std::sync::Arc::new(self);
                #private::Toolbox::__from_unique(::std::vec![#(#constructors),*])
            }
        }
        #errors
    }
}

/// Whether an attribute inside `#[tools]` is `#[tool]`, written as `tool`,
/// or under the facade's name (`toolgate::tool`, `::toolgate::tool`, or the
/// name a renamed dependency or `crate = …` gives it).
fn is_tool_attr(path: &Path, private: &Private, facade_in_manifest: &Private) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [tool] => path.leading_colon.is_none() && tool == "tool",
        [krate, tool] => {
            tool == "tool"
                && [
                    Some("toolgate".to_owned()),
                    facade_in_manifest.facade_name(),
                    private.facade_name(),
                ]
                .contains(&Some(krate.clone()))
        }
        _ => false,
    }
}
