//! The error collector.
//!
//! Like serde_derive's `Ctxt`: every rule records its error here instead of
//! returning early, so a user with three mistakes sees three errors in one
//! compile, each under the token that caused it.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    /// Records an error spanned on `tokens`.
    pub(crate) fn error_spanned_by(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors
            .push(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records an error at a span.
    pub(crate) fn error_at(&mut self, span: proc_macro2::Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// Records a parse error from syn.
    pub(crate) fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    pub(crate) fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// How many errors have been recorded, so a caller can tell whether one
    /// item among several added any.
    pub(crate) fn error_count(&self) -> usize {
        self.errors.len()
    }

    /// All errors as `compile_error!` invocations.
    pub(crate) fn into_compile_errors(self) -> TokenStream {
        self.errors.into_iter().map(|e| e.to_compile_error()).collect()
    }
}
