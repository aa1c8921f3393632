//! How `toolbox![two]` finds the tool `#[tool] fn two` generated.
//!
//! A macro cannot see other items, so `toolbox!` can only write a path and
//! let rustc resolve it. Writing the hidden struct's path (`__gate_tool_two`)
//! makes a typo (`tow`) fail on a name the user never wrote, twice, with
//! suggestions to write `__gate_tool_two` or to `cargo add` it. Instead,
//! `#[tool]` also puts the user's own name in the macro namespace: a hidden
//! `macro_rules!` re-exported as `two`, which expands to the struct's path
//! after whatever prefix it is given. `toolbox![billing::two]` calls
//! `billing::two!(billing::)` once, so the path resolves exactly as the
//! function's does (modules, `use`, globs, other crates), and a typo is one
//! rustc error on `tow` itself, suggesting the tool's real name.
//!
//! The macro namespace is chosen because it is the one a function name does
//! not already hold and that holds no crates or types: a type named `time`
//! would break `time::…` paths in the user's module, a macro named `time`
//! breaks nothing. The one exception is a name that the standard prelude
//! already gives a macro (`write`, `file`, `test`, …): shadowing it would
//! break the user's `write!`, so such tools get no alias and `toolbox!`
//! names their struct directly.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{Ident, Visibility};

/// The macros and macro attributes of the standard prelude, which a tool's
/// alias must not shadow.
const PRELUDE_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "bench",
    "cfg",
    "cfg_accessible",
    "cfg_eval",
    "column",
    "compile_error",
    "concat",
    "concat_idents",
    "const_format_args",
    "dbg",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "derive",
    "env",
    "eprint",
    "eprintln",
    "file",
    "format",
    "format_args",
    "format_args_nl",
    "global_allocator",
    "include",
    "include_bytes",
    "include_str",
    "is_x86_feature_detected",
    "line",
    "log_syntax",
    "matches",
    "module_path",
    "option_env",
    "panic",
    "print",
    "println",
    "stringify",
    "test",
    "test_case",
    "thread_local",
    "todo",
    "trace_macros",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
];

/// Whether a tool function's name gets a macro-namespace alias.
pub(crate) fn has_alias(ident: &Ident) -> bool {
    !PRELUDE_MACROS.contains(&ident.unraw().to_string().as_str())
}

/// The hidden struct of the free tool `ident`.
pub(crate) fn tool_struct_ident(ident: &Ident) -> Ident {
    format_ident!("__gate_tool_{}", ident.unraw())
}

/// The alias `#[tool]` emits beside the function `ident` (nothing for a
/// name in [`PRELUDE_MACROS`]).
///
/// A `pub` function's alias must reach other crates, which only
/// `#[macro_export]` allows; such a macro lands at the crate root, so its
/// hidden name carries the definition site to stay unique there (two tools
/// `search` in two modules). Other visibilities re-export a local
/// `macro_rules!` with the function's own visibility.
pub(crate) fn alias(vis: &Visibility, ident: &Ident) -> TokenStream {
    if !has_alias(ident) {
        return TokenStream::new();
    }
    let tool_struct = tool_struct_ident(ident);
    let exported = matches!(vis, Visibility::Public(_));
    let macro_ident = if exported {
        format_ident!(
            "__gate_lookup_{}_{:x}",
            ident.unraw(),
            site_hash(ident),
            span = ident.span()
        )
    } else {
        format_ident!("__gate_lookup_{}", ident.unraw(), span = ident.span())
    };
    let export = exported.then(|| quote!(#[macro_export]));
    // The alias is the function's own ident, so rustc's "similarly named
    // macro defined here" points at the user's function.
    let alias = ident;
    quote_spanned! {Span::call_site()=>
        #[doc(hidden)]
        #[allow(unused_macros)]
        #export
        macro_rules! #macro_ident {
            ($($prefix:tt)*) => { $($prefix)* #tool_struct };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis use #macro_ident as #alias;
    }
}

/// A hash of where `ident` was written (its span, whose debug form holds the
/// source position and the macro expansion it came from), so the exported
/// lookup macro of each tool has a name of its own.
fn site_hash(ident: &Ident) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    format!("{:?}", ident.span()).hash(&mut hasher);
    ident.to_string().hash(&mut hasher);
    hasher.finish()
}
