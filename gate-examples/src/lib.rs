//! Runnable gate agents: the invoice agent, its MCP server, and `gate-load`.
//!
//! (The example toolbox whose manifests are tested in every dialect is in
//! gate-cli, the command that prints it.)
#![forbid(unsafe_code)]

pub mod invoice;
