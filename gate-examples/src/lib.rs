//! Runnable gate agents: the invoice agent, its MCP server, and `gate-load`.
//!
//! (The example toolbox whose manifests are tested in every dialect is in
//! gate-cli, the command that prints it.)
//!
//! [`sim`] is the policy simulation behind the README's numbers; the
//! `policy_sim` example prints its table and a test checks its invariants,
//! both through this library.
#![forbid(unsafe_code)]

pub mod invoice;
pub mod sim;
