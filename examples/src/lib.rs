//! Runnable gate agents: the invoice agent and its MCP server.
//!
//! (The example toolbox whose manifests are tested in every dialect is the
//! `gate-catalog` crate, which the `gate` command prints.)
#![forbid(unsafe_code)]

pub mod invoice;
