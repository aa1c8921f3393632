//! `toolbox![f, path::g]`: the tools at those paths, in that order.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Path, Token};

use super::duplicate_name_check;
use crate::ctxt::Ctxt;
use crate::lookup;

/// `toolbox![f, path::g]`
pub(crate) fn toolbox(input: TokenStream) -> TokenStream {
    use syn::parse::Parser;
    let mut cx = Ctxt::default();
    let paths = match syn::punctuated::Punctuated::<Path, Token![,]>::parse_terminated.parse2(input) {
        Ok(p) => p,
        Err(e) => return e.to_compile_error(),
    };
    let mut aliases = Vec::new();
    let mut tools = Vec::new();
    for (index, path) in paths.iter().enumerate() {
        let Some(last) = path.segments.last() else {
            continue;
        };
        if !last.arguments.is_empty() {
            cx.error_spanned_by(&last.arguments, "tool paths take no generic arguments");
            continue;
        }
        let alias = format_ident!("__GateTool{}", index);
        let tool = tool_lookup(path);
        aliases.push(quote!(type #alias = #tool;));
        tools.push((quote!(#alias), quote!(#path).to_string().replace(' ', "")));
    }
    if cx.has_errors() {
        return cx.into_compile_errors();
    }
    let checks = duplicate_name_check(
        tools
            .iter()
            .map(|(t, label)| (quote!(<#t as ::gate::__private::ToolboxEntry>), label.clone())),
    );
    let constructors = tools
        .iter()
        .map(|(t, _)| quote!(<#t as ::gate::__private::ToolboxEntry>::shared()));
    quote! {{
        #(#aliases)*
        #checks
        ::gate::__private::Toolbox::__from_unique(::std::vec![#(#constructors),*])
    }}
}

/// The type of the tool at `path`, resolved once: through the lookup macro
/// `#[tool]` put under the function's own name (see `lookup.rs`), or by the
/// hidden struct's path for a name the prelude's macros hold.
fn tool_lookup(path: &Path) -> TokenStream {
    let mut prefix = path.clone();
    let Some(last) = prefix.segments.pop().map(syn::punctuated::Pair::into_value) else {
        return TokenStream::new();
    };
    if !lookup::has_alias(&last.ident) {
        let mut hidden = path.clone();
        if let Some(segment) = hidden.segments.last_mut() {
            segment.ident = lookup::tool_struct_ident(&segment.ident);
            segment.ident.set_span(last.ident.span());
        }
        return quote!(#hidden);
    }
    let prefix = if prefix.segments.is_empty() {
        prefix.leading_colon.map(|c| quote!(#c)).unwrap_or_default()
    } else {
        quote!(#prefix)
    };
    let name = &last.ident;
    quote!(#prefix #name!(#prefix))
}
