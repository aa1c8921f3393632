//! Runnable gate agents: the invoice agent and its MCP server.
//!
//! (The example toolbox whose manifests are tested in every dialect is the
//! `gate-catalog` crate, which the `gate` command prints.)
//!
//! [`sim`] is the policy simulation behind the README's numbers; the
//! `policy_sim` example prints its table and a test checks its invariants,
//! both through this library.
#![forbid(unsafe_code)]

pub mod invoice;
pub mod sim;
