//! The macros under a renamed dependency: every case here compiles against
//! this package's Cargo.toml, where the facade is `agent_tools`, so a macro
//! that wrote `::toolgate::…` would fail to resolve it. `pass` cases compile
//! and run; the `fail` case shows where a wrong `crate = "…"` is reported.
//!
//! `TRYBUILD=overwrite cargo test -p gate-renamed` regenerates the
//! `.stderr` file (rustc 1.95's wording, like the facade's own UI tests).

#[test]
fn the_macros_find_a_renamed_facade() {
    trybuild::TestCases::new().pass("tests/ui/pass/*.rs");
}

#[test]
#[rustversion::attr(
    not(stable(1.95)),
    ignore = "the .stderr files are rustc 1.95's wording; run them with that toolchain"
)]
fn a_wrong_crate_path_is_reported_on_the_path() {
    trybuild::TestCases::new().compile_fail("tests/ui/fail/*.rs");
}
