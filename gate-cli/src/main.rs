//! The `gate` binary: the command line read by [`toolgate_cli::Cli`] and run
//! by [`toolgate_cli::run`].

use clap::Parser;

fn main() -> std::process::ExitCode {
    toolgate_cli::run(toolgate_cli::Cli::parse())
}
