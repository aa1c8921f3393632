//! `toolbox![f, path::g]`: the tools at those paths, in that order.
//!
//! The facade's `toolbox!` is a `macro_rules!` that calls this one as
//! `__toolbox!($crate; f, path::g)`, so the generated code names the facade
//! by `$crate`, which resolves whatever the user calls the dependency.

use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::{Path, Token};

use super::duplicate_name_check;
use crate::ctxt::Ctxt;
use crate::facade::Private;
use crate::lookup;

/// `$crate; f, path::g`
pub(crate) fn toolbox(input: TokenStream) -> TokenStream {
    use syn::parse::Parser;
    let mut cx = Ctxt::default();
    let (private, input) = split_facade(input);
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
            .map(|(t, label)| (quote!(<#t as #private::ToolboxEntry>), label.clone())),
        &private,
    );
    let constructors = tools
        .iter()
        .map(|(t, _)| quote!(<#t as #private::ToolboxEntry>::shared()));
    quote! {{
        #(#aliases)*
        #checks
        #private::Toolbox::__from_unique(::std::vec![#(#constructors),*])
    }}
}

/// The facade's path (the tokens before the first `;`, `$crate` from the
/// facade's wrapper) and the tool paths after it. Without a `;` (the macro
/// called directly rather than through the facade), the facade is found as
/// the attributes find it.
fn split_facade(input: TokenStream) -> (Private, TokenStream) {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let separator = tokens
        .iter()
        .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'));
    match separator {
        Some(at) => (
            Private::under(tokens[..at].iter().cloned().collect()),
            tokens[at + 1..].iter().cloned().collect(),
        ),
        None => (Private::resolve(None), tokens.into_iter().collect()),
    }
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
