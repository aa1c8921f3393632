//! Runnable gate agents, and the example toolbox whose manifests are tested in
//! every dialect.
//!
//! [`catalog`] is a toolbox whose argument types cover every shape a Rust tool
//! is likely to take (integers of every width, floats, options, vectors,
//! nested structs, unit and tagged enums, maps, tuples, `serde_json::Value`,
//! dates as formatted strings, recursive types), so that each manifest rule is
//! exercised by a real schemars output rather than a hand-written one.
//!
//! [`sim`] is the policy simulation behind the README's numbers; the
//! `policy_sim` example prints its table and a test checks its invariants,
//! both through this library.
#![forbid(unsafe_code)]

pub mod catalog;
pub mod invoice;
pub mod sim;
