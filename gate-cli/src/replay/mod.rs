//! `gate replay`: run a recorded conversation's tool calls and results through
//! the policy, to see what gate would have decided.
//!
//! The transcript is JSON lines, one event per line:
//!
//! ```text
//! {"task": "t1", "user": "u1"}                          starts a task (optional; one is started for you)
//! {"usage": {"input_tokens": 4000, "output_tokens": 60}} the provider's usage of the last model turn
//! {"call": {"id": "c1", "name": "lookup_customer", "arguments": "{\"email\":\"a@b.c\"}"}, "result": {...}}
//! {"call": {...}, "error": {"kind": "timeout"}}
//! ```
//!
//! `arguments` may be a JSON string (exactly as the model wrote it) or an
//! object. Error kinds: forbidden (with optional `body`), not_found, empty,
//! unreadable, denied (optional `reason`), timeout, connection_lost (`sent`),
//! rate_limited (`retry_after_ms`), unavailable, upstream_failed
//! (`status`, 502 or 504), rejected (`reason`), internal.
//! When gate retries a call internally, the tool answers with the same
//! recorded outcome again.

use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gate::runtime::Action;
use gate::{DynamicTool, FailureClass, Gate, Step, ToolCall, ToolError, Toolbox};
use serde_json::{Value, json};

use crate::{UsageError, load_toolbox, read_input, runtime};

/// Arguments of `gate replay`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The tool list, in any provider's format (MCP annotations give effects;
    /// without them tools are treated as unsafe to retry).
    #[arg(long)]
    tools: String,
    /// The transcript (JSON lines).
    transcript: String,
    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,
}

type Recorded = Arc<Mutex<HashMap<String, Result<Value, Value>>>>;

fn tool_error(error: &Value) -> ToolError {
    let text = |key: &str| error.get(key).and_then(Value::as_str).map(str::to_owned);
    match error.get("kind").and_then(Value::as_str).unwrap_or("internal") {
        "forbidden" => ToolError::Forbidden { body: text("body") },
        "not_found" => ToolError::NotFound,
        "empty" => ToolError::Empty,
        "unreadable" => ToolError::Unreadable,
        "denied" => ToolError::Denied { reason: text("reason") },
        "timeout" => ToolError::Timeout,
        "connection_lost" => ToolError::ConnectionLost {
            sent: error.get("sent").and_then(Value::as_bool).unwrap_or(true),
        },
        "rate_limited" => ToolError::RateLimited {
            retry_after: error
                .get("retry_after_ms")
                .and_then(Value::as_u64)
                .map(Duration::from_millis),
        },
        "unavailable" => ToolError::Unavailable,
        "upstream_failed" => ToolError::UpstreamFailed {
            status: error
                .get("status")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(502),
        },
        "rejected" => ToolError::rejected(text("reason").unwrap_or_else(|| "rejected".into())),
        other => ToolError::internal(format!("recorded internal error ({other})")),
    }
}

/// The tool list with handlers that answer from the transcript.
fn replaying(toolbox: &Toolbox, recorded: &Recorded) -> Result<Toolbox, UsageError> {
    let mut out = Toolbox::new();
    for tool in toolbox.iter() {
        let recorded = recorded.clone();
        let replayed = DynamicTool::new(tool.spec().clone()).with_handler(move |ctx, _| {
            let answer = recorded.lock().map(|r| r.get(ctx.call_id()).cloned()).ok().flatten();
            async move {
                match answer {
                    Some(Ok(value)) => Ok(value),
                    Some(Err(error)) => Err(tool_error(&error)),
                    None => Err(ToolError::internal("the transcript has no result for this call")),
                }
            }
        });
        out.add(replayed)?;
    }
    Ok(out)
}

pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    let toolbox = load_toolbox(&args.tools)?;
    let transcript = read_input(&args.transcript)?;
    let recorded: Recorded = Arc::default();
    let tools = replaying(&toolbox, &recorded)?;
    runtime()?.block_on(async {
        let gate = Gate::builder(tools).store("memory:").seed(0).build().await?;
        let mut task = gate.task_with_id("replay", "task-1");
        let mut actions: BTreeMap<Action, u64> = BTreeMap::new();
        let mut calls = 0u64;
        let mut tasks = 1u64;
        let mut repair_tokens = 0u64;
        for (n, line) in transcript.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let event: Value = serde_json::from_str(line)
                .map_err(|e| UsageError(format!("transcript line {}: not JSON: {e}", n + 1)))?;
            if let Some(id) = event.get("task").and_then(Value::as_str) {
                repair_tokens += task.repair_tokens();
                let user = event.get("user").and_then(Value::as_str).unwrap_or("replay");
                task = gate.task_with_id(user, id);
                tasks += 1;
                continue;
            }
            if let Some(usage) = event.get("usage") {
                let get = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
                task.record_usage(get("input_tokens"), get("output_tokens")).await;
                continue;
            }
            let Some(call) = event.get("call") else {
                return Err(UsageError(format!("transcript line {}: expected \"call\", \"usage\" or \"task\"", n + 1)));
            };
            let id = call.get("id").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| format!("line-{}", n + 1));
            let name = call.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            let arguments = match call.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => "{}".to_owned(),
            };
            let outcome = match (event.get("result"), event.get("error")) {
                (_, Some(error)) => Err(error.clone()),
                (Some(result), None) => Ok(result.clone()),
                (None, None) => Ok(Value::Null),
            };
            if let Ok(mut r) = recorded.lock() {
                r.insert(id.clone(), outcome);
            }
            let before = task.repair_tokens();
            let step = task.handle(ToolCall::new(&id, &name, arguments)).await;
            calls += 1;
            *actions.entry(step.action()).or_default() += 1;
            let class = match &step {
                Step::Reject(f) | Step::Retry(f) => Some(f.class),
                Step::Fail(r) => r.class,
                Step::Return(out) if out.is_error => Some(FailureClass::Definitive),
                Step::Return(_) => None,
            };
            let class = class.map_or("none", FailureClass::as_str);
            let spent = task.repair_tokens().saturating_sub(before);
            if args.json {
                outln!("{}", json!({"call_id": id, "tool": name, "class": class, "decision": step.action(), "repair_tokens": spent, "text": step.model_text()}));
            } else {
                outln!("{id:<12} {name:<20} class={class:<23} decision={:<21} repair_tokens={spent}", step.action().as_str());
            }
        }
        repair_tokens += task.repair_tokens();
        let summary = json!({"calls": calls, "tasks": tasks, "repair_tokens": repair_tokens, "decisions": actions.iter().map(|(a, n)| (a.to_string(), json!(n))).collect::<serde_json::Map<_, _>>()});
        if args.json {
            outln!("{}", json!({"summary": summary}));
        } else {
            let list: Vec<String> = actions.iter().map(|(a, n)| format!("{a}={n}")).collect();
            outln!("summary: {calls} calls in {tasks} task(s), {}, {repair_tokens} repair tokens", list.join(" "));
        }
        Ok(ExitCode::SUCCESS)
    })
}
