//! Compile-time behaviour of the macros: every mistake has a clear error on
//! the offending token (`tests/ui/fail`, one mistake per file, named after
//! it), and every supported shape compiles (`tests/ui/pass`).
//!
//! `TRYBUILD=overwrite cargo test --test ui` regenerates the `.stderr` files.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
