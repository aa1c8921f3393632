//! The `#[tool]`, `#[tools]` and `toolbox!` macros of gate.
//!
//! Use them through the `gate` crate, which documents them. This file only
//! dispatches: `attr.rs` parses attribute arguments, `ast.rs` builds a
//! borrowed model of the function, `check.rs` holds the rules that span
//! several attributes, `expand/` generates code (a file per macro),
//! `lookup.rs` lets `toolbox!` find a tool by the function's own name, and
//! `ctxt.rs` collects every error so one compile shows them all.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod facade;
mod lookup;

use proc_macro::TokenStream;

/// Turns a function into an LLM tool. Documented on `toolgate::tool`.
///
/// Keys, in the order an unknown key's message lists them (`attr.rs`
/// parses them, `check.rs` holds the rules between them):
/// - `read_only`: changes nothing; conflicts with `writes`, `destructive`, `keyed`;
/// - `idempotent`: repeating a call has no further effect;
/// - `writes`: changes state additively, not idempotent (creates a ticket, sends a message); conflicts with `idempotent`;
/// - `destructive`: deletes or overwrites (implies `writes`; both together are accepted);
/// - `external`: reaches systems outside the operator's (a modifier: not an effect alone);
/// - `keyed`: forwards `ctx.intent_key()` downstream as the idempotency key (a modifier; needs `#[ctx]`);
/// - `approval`: every call waits for a person's approval before it runs (a modifier);
/// - `private`: the results hold the user's private data (a CRM record, an inbox, a balance; a modifier);
/// - `untrusted`: the results hold text third parties wrote (emails received, web pages, reviews; a modifier); conflicts with `trusted`;
/// - `trusted`: an `external` `read_only` tool's results are not third-party text (a modifier; only on an `external` `read_only` tool, whose results are untrusted without it);
/// - `name`, `description`, `title`, `discovery`, `widen`: string literals;
/// - `scopes = ["crm:read"]`: string literals;
/// - `timeout = "10s"`: a whole number of `ms`, `s` or `m`, from 1 ms to 24 hours, emitted in milliseconds;
/// - `crate = "path"`: where the facade is, for a crate that re-exports it (found from the user's Cargo.toml otherwise).
///
/// At least one of `read_only`, `idempotent`, `writes`, `destructive` is required.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an impl block into tools that share `self`.
/// Documented on `toolgate::tools`.
#[proc_macro_attribute]
pub fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tools(args.into(), item.into()).into()
}

/// Collects `#[tool]` functions into a `Toolbox`. Called by `toolgate::toolbox!`,
/// which passes `$crate` first (`toolbox!($crate; f, g)`); documented there.
#[proc_macro]
pub fn toolbox(input: TokenStream) -> TokenStream {
    expand::toolbox(input.into()).into()
}
