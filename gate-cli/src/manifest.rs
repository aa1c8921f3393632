//! `gate manifest`: the example toolbox, or any tool list, in any provider's format.

use std::process::ExitCode;

use gate::Dialect;

use crate::{UsageError, load_toolbox};

/// Arguments of `gate manifest`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Target format: openai, openai-strict, openai-responses, anthropic,
    /// anthropic-strict, gemini, gemini-json, mcp, mcp-2025-11-25.
    #[arg(long, value_parser = parse_dialect)]
    format: Dialect,
    /// A tool list in any of those formats (or MCP `tools/list` output) to
    /// convert; `-` reads standard input. Without it, the example toolbox.
    #[arg(long)]
    tools: Option<String>,
}

fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse().map_err(|e: gate::manifest::UnknownDialect| e.to_string())
}

pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    let toolbox = match args.tools.as_deref() {
        Some(path) => load_toolbox(path)?,
        None => crate::catalog::toolbox(),
    };
    match toolbox.manifest(args.format) {
        Ok(manifest) => {
            outln!("{}", serde_json::to_string_pretty(&manifest)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("gate manifest: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}
