//! `gate check`: validate tool calls against a tool list, as gate would
//! before running them.

use std::collections::HashMap;
use std::process::ExitCode;

use serde_json::{Value, json};
use toolgate::validate::{Validator, unknown_tool};

use crate::input::Lines;
use crate::{UsageError, load_toolbox};

/// Arguments of `gate check`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The tool list, in any provider's format.
    #[arg(long)]
    tools: String,
    /// Calls as JSON lines `{"name": ..., "arguments": ...}` (arguments as a
    /// JSON string or object); `-` or nothing reads standard input. Read as a
    /// stream, one line at a time; a line longer than 4 MiB is an error.
    calls: Option<String>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    let toolbox = load_toolbox(&args.tools)?;
    let mut validators = HashMap::new();
    for spec in toolbox.specs() {
        let validator = Validator::new(spec.input_schema())
            .map_err(|e| UsageError(format!("tool `{}`: schema cannot be validated: {e}", spec.name())))?;
        validators.insert(spec.name().to_owned(), validator);
    }
    let names = toolbox.names();
    let mut lines = Lines::open(args.calls.as_deref().unwrap_or("-"))?;
    let mut any_rejected = false;
    while let Some((n, bytes)) = lines.next_line()? {
        let line = std::str::from_utf8(bytes).map_err(|e| {
            UsageError(format!(
                "call on line {n}: not UTF-8 text: invalid byte at offset {} of the line",
                e.valid_up_to()
            ))
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let call: Value =
            serde_json::from_str(line).map_err(|e| UsageError(format!("call on line {n}: not JSON: {e}")))?;
        let name = call
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| UsageError(format!("call on line {n}: missing \"name\"")))?;
        let arguments = match call.get("arguments") {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => "{}".to_owned(),
        };
        let verdict = match validators.get(name) {
            None => {
                let unknown = unknown_tool(name, &names);
                json!({"ok": false, "violations": [{"path": "", "expected": "the name of a tool", "got": name}], "message": unknown.message()})
            }
            Some(validator) => match validator.validate(&arguments) {
                Ok(_) => json!({"ok": true}),
                Err(rejection) => {
                    let violations: Vec<Value> = rejection
                        .violations()
                        .iter()
                        .map(|v| json!({"path": v.path, "expected": v.expected, "got": v.got}))
                        .collect();
                    json!({"ok": false, "violations": violations, "message": rejection.message(name)})
                }
            },
        };
        any_rejected |= verdict["ok"] == false;
        outln!("{verdict}");
    }
    Ok(if any_rejected {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
