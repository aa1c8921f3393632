//! The `gate` command: provider manifests, argument checks, sanitizing, the
//! cost model, transcript replay, reconciliation and reports.
//!
//! Each subcommand is a thin shell over a library function, so everything it
//! does is also available (and tested) as an API. Exit status: 0 success, 1 a
//! negative result (a manifest that cannot be expressed, a rejected call), 2
//! bad input to the command itself.
#![forbid(unsafe_code)]

mod manifest;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// gate: typed LLM tools that fail safely.
#[derive(Parser)]
#[command(name = "gate", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print tool definitions in a provider's format.
    Manifest(manifest::Args),
}

/// Reads a file, or standard input for `-`.
pub(crate) fn read_input(path: &str) -> Result<String, String> {
    if path == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| format!("cannot read standard input: {e}"))
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read `{path}`: {e}"))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Manifest(args) => manifest::run(args),
    }
}
