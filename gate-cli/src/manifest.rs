//! `gate manifest`: the example toolbox, or any tool list, in any provider's format.

use std::process::ExitCode;

use toolgate::manifest::{render, tool_definition};
use toolgate::{Dialect, ToolSpec};

use crate::{UsageError, load_readable_tools};

/// Arguments of `gate manifest`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 the manifest was printed; 1 a tool (each is named on standard error) \
                        or the whole list cannot be expressed in the format; 2 bad input. With \
                        --skip-unsupported: 0 when at least one tool was converted (or the list is empty), \
                        1 when none could be or the converted tools exceed a limit of the whole request."
)]
pub(crate) struct Args {
    /// Target format: openai, openai-strict, openai-responses, anthropic,
    /// anthropic-strict, gemini, gemini-json, mcp, mcp-2025-11-25.
    #[arg(long, value_parser = parse_dialect)]
    format: Dialect,
    /// A tool list in any of those formats (or MCP `tools/list` output) to
    /// convert; `-` reads standard input. Without it, the example toolbox.
    #[arg(long)]
    tools: Option<String>,
    /// Convert the tools the format can express and leave out the others
    /// (and any tool that cannot be read), each listed with its reason on
    /// standard error.
    #[arg(long)]
    skip_unsupported: bool,
}

fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse().map_err(|e: toolgate::manifest::UnknownDialect| e.to_string())
}

pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    // A tool gate cannot read at all is refused like one the format cannot
    // express: without --skip-unsupported it is bad input, with it it is
    // left out and listed.
    let (toolbox, mut refused) = match args.tools.as_deref() {
        Some(path) => {
            let (toolbox, unreadable) = load_readable_tools(path)?;
            if let Some(problem) = unreadable.first()
                && !args.skip_unsupported
            {
                return Err(UsageError(format!(
                    "`{path}`: {problem} (--skip-unsupported converts the tools that can be read and lists the \
                     others)"
                )));
            }
            (toolbox, unreadable)
        }
        None => (toolgate_catalog::toolbox(), Vec::new()),
    };
    let format = args.format;
    let mut expressible: Vec<&ToolSpec> = Vec::new();
    for spec in toolbox.specs() {
        match tool_definition(spec, format) {
            Ok(_) => expressible.push(spec),
            Err(e) => refused.push(e.to_string()),
        }
    }
    let total = expressible.len() + refused.len();
    if !refused.is_empty() && !args.skip_unsupported {
        for e in &refused {
            eprintln!("gate manifest: {e}");
        }
        if expressible.is_empty() {
            eprintln!("gate manifest: none of the {total} tools can be expressed in {format}");
            return Ok(ExitCode::FAILURE);
        }
        eprintln!(
            "gate manifest: {} of {total} tools cannot be expressed in {format}; --skip-unsupported converts the \
             other {} and lists the ones it leaves out",
            refused.len(),
            expressible.len()
        );
        return Ok(ExitCode::FAILURE);
    }
    for e in &refused {
        eprintln!("gate manifest: skipped {e}");
    }
    if expressible.is_empty() && total > 0 {
        eprintln!("gate manifest: none of the {total} tools can be expressed in {format}; nothing to print");
        return Ok(ExitCode::FAILURE);
    }
    // The whole list again: limits on a request as a whole (Anthropic
    // strict's tool count) apply to the tools that are left.
    match render(expressible, format) {
        Ok(manifest) => {
            if !refused.is_empty() {
                eprintln!(
                    "gate manifest: converted {} of {total} tools to {format}; skipped {} (listed above)",
                    total - refused.len(),
                    refused.len()
                );
            }
            outln!("{}", serde_json::to_string_pretty(&manifest)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("gate manifest: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}
