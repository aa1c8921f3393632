//! The `#[tool]`, `#[tools]` and `toolbox!` macros of gate.
//!
//! Use them through the `gate` crate, which documents them. This file only
//! dispatches: `attr.rs` parses attribute arguments, `ast.rs` builds a
//! borrowed model of the function, `check.rs` holds the rules that span
//! several attributes, `expand.rs` generates code, and `ctxt.rs` collects every
//! error so one compile shows them all.
#![forbid(unsafe_code)]

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;

use proc_macro::TokenStream;

/// Turns a function into an LLM tool. Documented on `gate::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an impl block into tools that share `self`.
/// Documented on `gate::tools`.
#[proc_macro_attribute]
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tools(args.into(), item.into()).into()
}

/// Collects `#[tool]` functions into a `Toolbox`. Documented on `gate::toolbox`.
#[proc_macro]
pub fn toolbox(input: TokenStream) -> TokenStream {
    expand::toolbox(input.into()).into()
}
