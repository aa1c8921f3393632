//! `gate replay`: run a recorded conversation's tool calls and results through
//! the policy, to see what gate would have decided.
//!
//! A transcript is gate's own JSON lines or a provider's log as it was kept
//! (see [`transcript`] for the formats): OpenAI Chat `messages` with
//! `tool_calls` and `role: tool` results, or Anthropic `messages` with
//! `tool_use` and `tool_result` blocks. gate's own format, one event per line:
//!
//! ```text
//! {"task": "t1", "user": "u1"}                          starts a task (optional; one is started for you)
//! {"user_message": "Pay the invoice from bob@example.com"} what the user wrote (trusted input)
//! {"usage": {"input_tokens": 4000, "output_tokens": 60}} the provider's usage of a model turn
//! {"call": {"id": "c1", "name": "lookup_customer", "arguments": "{\"email\":\"a@b.c\"}"}, "result": {...}}
//! {"call": {...}, "error": {"kind": "timeout"}}
//! {"call": {...}, "error": "Error: customer not found"}  an unlabelled error, read by the rules
//! ```
//!
//! `arguments` may be a JSON string (exactly as the model wrote it) or an
//! object. Error kinds: forbidden (with optional `body`), not_found, empty,
//! unreadable, denied (optional `reason`), timeout, connection_lost (`sent`),
//! rate_limited (`retry_after_ms`), unavailable, upstream_failed
//! (`status`, 502 or 504), rejected (`reason`), internal. An error without a
//! kind, and every error of a provider transcript, is read from its text by
//! the rules of [`classify`].
//!
//! Each call's tool answers with the recorded result; when gate retries a
//! call internally, it answers with the same result again. Per call the
//! replay prints how the result was read, the class and decision, the repair
//! tokens gate spent and those the transcript spent: the tokens of the model
//! turn that answered a failed call by calling a tool again (the model's own
//! repair; a turn answering several failed calls counts once, on the first).
//! gate's figure per call is its estimate when it chose the repair; the
//! summary's total is settled, as in a live run, by the usage of the turn
//! that answered it.
//!
//! The information-flow guard ([`toolgate::guard`]) is applied as in a live
//! run: the user's messages are trusted input, each result is labelled by
//! its tool's declared flags in `--tools` (`private`, `untrusted`, an
//! `external` read), and each call's row shows the guard's verdict (`runs`,
//! `needs_approval`, or `not_asked`: the tool only reads inside, or the
//! task has read no labelled result) and its reason. A replay
//! has no person to ask: a call the guard would hold is refused, so it does
//! not run and its recorded result is not read, as it would not have been;
//! with `--held approve` it is approved at once, as a person who agrees
//! would, and runs (the row shows the call's result and the verdict).

mod classify;
mod transcript;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolgate::Action;
use toolgate::guard::{Guard, Verdict};
use toolgate::{DynamicTool, FailureClass, Gate, Step, ToolError, Toolbox};

use crate::input::read_text;
use crate::{UsageError, load_toolbox, runtime};
use transcript::{Event, Format};

/// Arguments of `gate replay`.
#[derive(clap::Args)]
#[command(after_help = r#"Examples:
  gate manifest --format mcp > tools.json
  gate replay --tools tools.json transcript.jsonl
  gate replay --tools tools.json --format openai --json chat.json
  gate replay --tools tools.json --guard strict --held approve transcript.jsonl
  echo '{"call": {"id": "c1", "name": "pay", "arguments": {}}, "error": {"kind": "timeout"}}' | gate replay --tools tools.json -"#)]
pub(crate) struct Args {
    /// The tool list, in any provider's format (MCP annotations give effects;
    /// without them tools are treated as unsafe to retry).
    #[arg(long)]
    tools: String,
    /// The transcript: gate's JSON lines, or an OpenAI Chat or Anthropic
    /// `messages` log (one JSON document, or one conversation per line).
    transcript: String,
    /// The transcript's format.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    format: Format,
    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,
    /// The information-flow guard's policy.
    #[arg(long, value_enum, default_value_t = GuardPolicy::Trifecta)]
    guard: GuardPolicy,
    /// What becomes of a call the guard holds: refused (it does not run),
    /// or approved at once, as a person who agrees would (it runs, and its
    /// result is read).
    #[arg(long, value_enum, default_value_t = Held::Refuse)]
    held: Held,
}

/// `--held`: what a replay does with a call that needs a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Held {
    /// Nobody is there: the call is refused and does not run.
    Refuse,
    /// A person approves it (as `replay`): the call runs.
    Approve,
}

/// `--guard`: the policies of [`toolgate::guard::Guard`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum GuardPolicy {
    /// Follow the data: hold a call steered by untrusted text, or carrying
    /// private data out after untrusted text was read.
    Trifecta,
    /// Hold every state-changing or external call after untrusted text.
    Strict,
    /// Hold nothing.
    Off,
}

impl GuardPolicy {
    fn guard(self) -> Guard {
        match self {
            GuardPolicy::Trifecta => Guard::trifecta(),
            GuardPolicy::Strict => Guard::strict(),
            GuardPolicy::Off => Guard::off(),
        }
    }
}

/// A call's guard verdict as a row shows it: the verdict's name and, when
/// the call is held, the reason's short name and sentence.
fn guard_columns(verdict: Option<&Verdict>, tool: &str) -> (&'static str, Value) {
    match verdict {
        None => ("not_asked", Value::Null),
        Some(Verdict::Runs) => ("runs", Value::Null),
        Some(Verdict::NeedsApproval(reason)) => (
            "needs_approval",
            json!({"kind": reason.as_str(), "text": reason.describe(tool)}),
        ),
    }
}

type Answers = Arc<Mutex<HashMap<String, Result<Value, classify::Recorded>>>>;

/// The tool list with handlers that answer from the transcript.
fn replaying(toolbox: &Toolbox, answers: &Answers) -> Result<Toolbox, UsageError> {
    let mut out = Toolbox::new();
    for tool in toolbox.iter() {
        let answers = answers.clone();
        let replayed = DynamicTool::new(tool.spec().clone()).with_handler(move |ctx, _| {
            let answer = answers.lock().map(|a| a.get(ctx.call_id()).cloned()).ok().flatten();
            async move {
                match answer {
                    Some(Ok(value)) => Ok(value),
                    Some(Err(error)) => Err(error.to_tool_error()),
                    None => Err(ToolError::internal("the transcript has no result for this call")),
                }
            }
        });
        out.add(replayed)?;
    }
    Ok(out)
}

/// The repair tokens the transcript spent, per call in order.
fn transcript_repairs(events: &[Event]) -> Vec<u64> {
    let mut claimed = HashSet::new();
    let mut spent = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let Event::Call(logged) = event else { continue };
        let answered_by = events[i + 1..]
            .iter()
            .position(|e| matches!(e, Event::Turn { .. }))
            .map(|p| p + i + 1)
            .filter(|_| logged.reading.is_error())
            .filter(|&turn| matches!(events.get(turn + 1), Some(Event::Call(_))))
            .filter(|&turn| claimed.insert(turn));
        spent.push(match answered_by.map(|turn| &events[turn]) {
            Some(Event::Turn {
                input_tokens,
                output_tokens,
            }) => input_tokens.saturating_add(*output_tokens),
            _ => 0,
        });
    }
    spent
}

pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    let toolbox = load_toolbox(&args.tools)?;
    let conversations = transcript::read(&read_text(&args.transcript)?, args.format)?;
    let answers: Answers = Arc::default();
    let tools = replaying(&toolbox, &answers)?;
    runtime()?.block_on(async {
        let builder = Gate::builder(tools).store("memory:").seed(0).guard(args.guard.guard());
        let builder = match args.held {
            Held::Refuse => builder.guard_refuses(),
            Held::Approve => builder,
        };
        let gate = builder.build().await?;
        let mut actions: BTreeMap<Action, u64> = BTreeMap::new();
        let mut verdicts: BTreeMap<&str, u64> = BTreeMap::new();
        let (mut calls, mut repair_tokens, mut transcript_tokens) = (0u64, 0u64, 0u64);
        for (n, conversation) in conversations.iter().enumerate() {
            let (id, user) = conversation
                .task
                .clone()
                .unwrap_or_else(|| (format!("task-{}", n + 1), "replay".to_owned()));
            let mut task = gate.task_with_id(&user, &id);
            let mut spent_by_transcript = transcript_repairs(&conversation.events).into_iter();
            for event in &conversation.events {
                let logged = match event {
                    Event::Turn {
                        input_tokens,
                        output_tokens,
                    } => {
                        task.record_usage(*input_tokens, *output_tokens).await;
                        continue;
                    }
                    Event::User(text) => {
                        task.user_message(text).await?;
                        continue;
                    }
                    Event::Call(logged) => logged,
                };
                if let Ok(mut a) = answers.lock() {
                    a.insert(logged.call.id.clone(), logged.outcome.clone());
                }
                let verdict = task.guard_verdict(&logged.call).await?;
                let (guard, guard_reason) = guard_columns(verdict.as_ref(), &logged.call.name);
                *verdicts.entry(guard).or_default() += 1;
                let before = task.repair_tokens();
                let mut step = task.handle(logged.call.clone()).await;
                if let (Held::Approve, Step::AwaitingApproval(pending)) = (args.held, &step) {
                    gate.approvals()
                        .approve(&pending.approval_id, "replay", Some("--held approve"))
                        .await?;
                    // The identical call runs the approved request, once.
                    step = task.handle(logged.call.clone()).await;
                }
                calls += 1;
                *actions.entry(step.action()).or_default() += 1;
                let class = step.failure_class().map_or("none", FailureClass::as_str);
                let spent = task.repair_tokens().saturating_sub(before);
                let theirs = spent_by_transcript.next().unwrap_or(0);
                transcript_tokens += theirs;
                let (call_id, name, read_as) = (&logged.call.id, &logged.call.name, logged.reading.describe());
                if args.json {
                    outln!(
                        "{}",
                        json!({"task": id, "call_id": call_id, "tool": name, "read_as": read_as, "class": class, "decision": step.action(), "guard": guard, "guard_reason": guard_reason, "repair_tokens": spent, "transcript_repair_tokens": theirs, "text": step.model_text()})
                    );
                } else {
                    outln!(
                        "{call_id:<14} {name:<18} read_as={read_as:<22} class={class:<23} decision={:<21} guard={guard:<14} repair_tokens={spent} transcript_repair_tokens={theirs}",
                        step.action().as_str()
                    );
                    if let Some(text) = guard_reason.get("text").and_then(Value::as_str) {
                        outln!("{:<14} guard: {text}", "");
                    }
                }
            }
            repair_tokens += task.repair_tokens();
        }
        let tasks = conversations.len();
        let summary = json!({"calls": calls, "tasks": tasks, "repair_tokens": repair_tokens, "transcript_repair_tokens": transcript_tokens, "decisions": actions.iter().map(|(a, n)| (a.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(), "guard": args.guard.guard().name(), "guard_verdicts": verdicts});
        if args.json {
            outln!("{}", json!({"summary": summary}));
        } else {
            let list: Vec<String> = actions.iter().map(|(a, n)| format!("{a}={n}")).collect();
            let held = verdicts.get("needs_approval").copied().unwrap_or(0);
            outln!(
                "summary: {calls} calls in {tasks} task(s), {}, {repair_tokens} repair tokens (the transcript spent {transcript_tokens}), {held} held by the {} guard",
                list.join(" "),
                args.guard.guard().name()
            );
        }
        Ok(ExitCode::SUCCESS)
    })
}
