//! `gate sanitize`: a text as the model would see it after gate's sanitizer.

use std::process::ExitCode;

use gate::Sanitizer;

use crate::UsageError;
use crate::input::read_text;

/// Arguments of `gate sanitize`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The text to sanitize; `-` or nothing reads standard input.
    file: Option<String>,
    /// Print the findings (kinds and byte ranges, never the secrets) as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    let text = read_text(args.file.as_deref().unwrap_or("-"))?;
    let sanitized = Sanitizer::default().sanitize(&text);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&sanitized.report())?);
    } else {
        out!("{}", sanitized.text);
        if !sanitized.text.ends_with('\n') {
            outln!();
        }
    }
    Ok(ExitCode::SUCCESS)
}
