//! Where the generated code finds gate: the path of the facade crate's
//! hidden `__private` module, as the user's crate can name it.
//!
//! A proc macro cannot use `$crate`, and the facade's name in the user's
//! crate is whatever their `Cargo.toml` says: `toolgate`, or another name for
//! a renamed dependency (`agent_tools = { package = "toolgate", … }`). So the
//! path is found the way the ecosystem finds it (`proc-macro-crate` reads the
//! user's manifest), and the attributes take `crate = "path"` (as serde's
//! derives do) for the one case a manifest cannot answer: a crate that
//! re-exports the facade and is the only one its users depend on.
//! `toolbox!` needs neither: the facade wraps it in a `macro_rules!` that
//! passes `$crate` in.

use proc_macro_crate::FoundCrate;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote};
use syn::Path;

/// The facade's package name on crates.io.
const FACADE: &str = "toolgate";

/// The path to the facade's `__private` module, ready to interpolate
/// (`#private::Tool`).
#[derive(Clone)]
pub(crate) struct Private(TokenStream);

impl Private {
    /// The path written in a `crate = "…"` key if there is one, otherwise
    /// the name the user's manifest gives the facade. Inside the facade's own
    /// tests, examples and doctests (the manifest is the facade's own) that
    /// name is `toolgate`, the library's name.
    pub(crate) fn resolve(explicit: Option<&Path>) -> Self {
        if let Some(path) = explicit {
            return Private(quote!(#path::__private));
        }
        let name = match proc_macro_crate::crate_name(FACADE) {
            Ok(FoundCrate::Name(name)) => name,
            // `Itself`, or no manifest names it (a crate that only depends on a
            // re-export without `crate = …`): `::toolgate`, whose error, if it
            // does not resolve, names the crate the code looked for.
            Ok(FoundCrate::Itself) | Err(_) => FACADE.to_owned(),
        };
        let name = format_ident!("{}", name);
        Private(quote!(::#name::__private))
    }

    /// The path `toolbox!` was handed by the facade's `macro_rules!` wrapper
    /// (`$crate`), which names the facade wherever it is used.
    pub(crate) fn under(facade: TokenStream) -> Self {
        Private(quote!(#facade::__private))
    }

    /// The same path with every token at `span`, for code that is spanned on
    /// the user's tokens so that rustc reports an error there.
    pub(crate) fn at(&self, span: Span) -> TokenStream {
        self.0
            .clone()
            .into_iter()
            .map(|mut token| {
                token.set_span(span);
                token
            })
            .collect::<TokenStream>()
    }

    /// The last segment of the facade's path (`toolgate`, or the name a
    /// renamed dependency gives it), by which `#[tools]` recognizes
    /// `#[name::tool]` on a method.
    pub(crate) fn facade_name(&self) -> Option<String> {
        let tokens: Vec<TokenTree> = self.0.clone().into_iter().collect();
        // `… :: name :: __private`: the ident before the last `::`.
        tokens
            .iter()
            .rev()
            .filter_map(|t| match t {
                TokenTree::Ident(ident) => Some(ident.to_string()),
                _ => None,
            })
            .nth(1)
    }
}

impl ToTokens for Private {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(self.0.clone());
    }
}
