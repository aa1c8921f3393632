//! The `gate` binary: the command line read by [`gate_cli::Cli`] and run by
//! [`gate_cli::run`].

use clap::Parser;

fn main() -> std::process::ExitCode {
    gate_cli::run(gate_cli::Cli::parse())
}
