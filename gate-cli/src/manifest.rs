//! `gate manifest`: the example toolbox, or any tool list, in any provider's format.

use std::process::ExitCode;

use gate::manifest::import_tools;
use gate::{Dialect, Toolbox};

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

fn load(path: &str) -> Result<Toolbox, String> {
    let text = crate::read_input(path)?;
    let document: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("`{path}` is not JSON: {e}"))?;
    let mut toolbox = Toolbox::new();
    for tool in import_tools(&document).map_err(|e| format!("`{path}`: {e}"))? {
        toolbox.add(tool).map_err(|e| format!("`{path}`: {e}"))?;
    }
    Ok(toolbox)
}

pub(crate) fn run(args: Args) -> ExitCode {
    let toolbox = match args.tools.as_deref() {
        Some(path) => match load(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("gate manifest: {e}");
                return ExitCode::from(2);
            }
        },
        None => gate_examples::catalog::toolbox(),
    };
    match toolbox.manifest(args.format) {
        Ok(manifest) => {
            println!("{}", serde_json::to_string_pretty(&manifest).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gate manifest: {e}");
            ExitCode::FAILURE
        }
    }
}
