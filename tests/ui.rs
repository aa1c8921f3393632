//! Compile-time behaviour of the macros: every mistake has a clear error on
//! the offending token (`tests/ui/fail`, one mistake per file, named after
//! it), and every supported shape compiles (`tests/ui/pass`).
//!
//! The `.stderr` files hold rustc's own wording around ours (notes, spans,
//! `help:` lines), which changes between compiler releases; they are
//! rustc 1.95's, the toolchain CI runs, so the comparison runs only there
//! (as serde and thiserror pin theirs). The shapes that must compile are
//! checked on every toolchain.
//!
//! `TRYBUILD=overwrite cargo test --test ui` regenerates the `.stderr` files.

#[test]
#[rustversion::attr(
    not(stable(1.95)),
    ignore = "the .stderr files are rustc 1.95's wording; run them with that toolchain"
)]
fn mistakes_are_reported_on_the_offending_token() {
    trybuild::TestCases::new().compile_fail("tests/ui/fail/*.rs");
}

#[test]
fn supported_shapes_compile() {
    trybuild::TestCases::new().pass("tests/ui/pass/*.rs");
}
