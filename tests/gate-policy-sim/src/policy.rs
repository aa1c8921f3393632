//! The policies under comparison, one task at a time: gate itself, a naive
//! retry loop, and a pydantic-ai-style loop with pydantic-ai's texts. Each
//! gets the same planned calls and fault schedule and is charged tokens by the
//! same formula, so their rows differ only by what the policy decides.

use std::sync::Mutex;

use serde::Serialize;
use serde_json::{Value, json};
use toolgate::FailureReason;
use toolgate::budget::estimate_tokens;
use toolgate::{Gate, Step, ToolCall, ToolError};

use super::model::{Call, Next, Planned, first_call, react_structural, render};
use super::params::{Params, PydanticMessages};
use super::world::{
    Basis, ChargeArgs, Fault, LookupArgs, SearchArgs, TOOL_NAMES, World, charge_receipt, customer, customer_list, lock,
};

/// A policy under comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// The real runtime, `toolgate::Gate`, decides.
    Gate,
    /// Every error fed back raw, each failed call retried up to 3 times.
    #[serde(rename = "naive-retry-3")]
    NaiveRetry3,
    /// Validation errors and unknown tools retried once, tool exceptions end the run.
    PydanticAiStyle,
}

impl Policy {
    /// Every policy, in table order.
    pub const ALL: [Policy; 3] = [Policy::Gate, Policy::NaiveRetry3, Policy::PydanticAiStyle];

    /// The name in the table.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Gate => "gate",
            Policy::NaiveRetry3 => "naive-retry-3",
            Policy::PydanticAiStyle => "pydantic-ai-style",
        }
    }
}

/// How one task ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum End {
    Completed,
    /// gate's `Fail`, with its report's reason.
    FailedWithReport(FailureReason),
    /// The loop gave up or raised: an error, but no report and no record of side effects.
    FailedUnreported,
}

/// One task's result.
#[derive(Clone, Debug)]
pub(super) struct TaskResult {
    pub(super) end: End,
    pub(super) repair_tokens: u64,
    /// The same formula computed by the simulation (equals `repair_tokens` for gate).
    pub(super) sim_repair_tokens: u64,
    pub(super) charges: u32,
}

/// The context every task starts with: system prompt, tool definitions, user message.
pub(super) fn base_context(params: &Params, tool_tokens: u64) -> u64 {
    params.system_prompt_tokens
        + tool_tokens
        + estimate_tokens("Please look up my account and pay my open invoice with the card on file.")
}

/// Plays one task against the real runtime: gate decides, the model reacts
/// to the step it gets.
pub(super) async fn gate_task(
    gate: &Gate,
    world: &Mutex<World>,
    params: &Params,
    base: u64,
    task_no: u64,
    steps: &[Planned],
) -> TaskResult {
    let mut task = gate.task(format!("user-{task_no}"));
    let mut ctx = base;
    let mut repair = 0u64;
    let mut call_no = 0u32;
    let mut end = End::Completed;
    'task: for (step_no, &planned) in steps.iter().enumerate() {
        let Planned { kind, fault, .. } = planned;
        lock(world).begin_step(fault);
        let mut next = first_call(planned);
        let mut variant = 0u32;
        loop {
            let call = render(task_no, step_no as u32, kind, next);
            call_no += 1;
            // The model's turn reads the whole context; report it as the
            // provider would, so gate prices a repair by context replay.
            task.record_usage(ctx, 0).await;
            let step = task
                .handle(ToolCall::new(format!("call_{call_no}"), &call.name, &call.args))
                .await;
            ctx += call.tokens();
            match step {
                Step::Return(out) => {
                    ctx += estimate_tokens(&out.text);
                    if next == Next::Discover {
                        // The valid identifiers are in hand: look one up.
                        variant += 1;
                        next = Next::Valid(variant);
                        continue;
                    }
                    break;
                }
                Step::Reject(feedback) => {
                    ctx += estimate_tokens(&feedback.text);
                    repair += ctx;
                    let mut w = lock(world);
                    next = react_structural(&mut w.rng, next, variant, params.p_fix_specific);
                }
                Step::Retry(feedback) => {
                    ctx += estimate_tokens(&feedback.text);
                    repair += ctx;
                    lock(world).basis = Basis::Corrected;
                    next = if fault == Fault::Empty {
                        Next::Widen
                    } else {
                        Next::Discover
                    };
                }
                Step::Fail(report) => {
                    end = End::FailedWithReport(report.reason);
                    break 'task;
                }
                // A step the simulated tools cannot earn (they declare no
                // approval): counted as a task the loop could not finish.
                _ => {
                    end = End::FailedUnreported;
                    break 'task;
                }
            }
        }
    }
    TaskResult {
        end,
        repair_tokens: task.repair_tokens(),
        sim_repair_tokens: repair,
        charges: lock(world).charges,
    }
}

/// What a naive loop's tool dispatch produced.
pub(super) enum Outcome {
    Ok(String),
    Structural(String),
    Ambiguous(String),
    Timeout(String),
}

/// A dispatcher without gate: look the name up, deserialize the arguments
/// with serde, call the backend, turn any error into its text.
pub(super) fn dispatch(world: &Mutex<World>, call: &Call) -> Outcome {
    let tool_error = |e: ToolError| match e {
        ToolError::Timeout => Outcome::Timeout(format!("Error: {e}")),
        other => Outcome::Ambiguous(format!("Error: {other}")),
    };
    match call.name.as_str() {
        "lookup_customer" => match serde_json::from_str::<LookupArgs>(&call.args) {
            Err(e) => Outcome::Structural(format!("Error: {e}")),
            Ok(args) => match lock(world).read() {
                Ok(()) => Outcome::Ok(customer(&args.email).to_string()),
                Err(e) => tool_error(e),
            },
        },
        "list_customers" => Outcome::Ok(customer_list().to_string()),
        "search_customers" => match serde_json::from_str::<SearchArgs>(&call.args) {
            Err(e) => Outcome::Structural(format!("Error: {e}")),
            Ok(args) => match lock(world).read() {
                Ok(()) => Outcome::Ok(json!([customer(&format!("ann@{}", args.domain))]).to_string()),
                Err(e) => tool_error(e),
            },
        },
        "charge" => match serde_json::from_str::<ChargeArgs>(&call.args) {
            Err(e) => Outcome::Structural(format!("Error: {e}")),
            Ok(args) => match lock(world).charge() {
                Ok(()) => Outcome::Ok(charge_receipt(&args.customer_id, args.amount_cents).to_string()),
                Err(e) => tool_error(e),
            },
        },
        other => Outcome::Structural(format!("Error: unknown tool `{other}`")),
    }
}

/// naive-retry-3: every error goes back to the model as its raw text and the
/// failed call is retried up to `naive_retries` times, whatever it was.
pub(super) fn naive_task(
    world: &Mutex<World>,
    params: &Params,
    base: u64,
    task_no: u64,
    steps: &[Planned],
) -> TaskResult {
    let mut ctx = base;
    let mut repair = 0u64;
    let mut end = End::Completed;
    'task: for (step_no, &planned) in steps.iter().enumerate() {
        let Planned { kind, fault, .. } = planned;
        lock(world).begin_step(fault);
        let mut next = first_call(planned);
        let mut variant = 0u32;
        let mut retries_left = params.naive_retries;
        loop {
            let call = render(task_no, step_no as u32, kind, next);
            ctx += call.tokens();
            let outcome = dispatch(world, &call);
            let text = match &outcome {
                Outcome::Ok(text) => {
                    ctx += estimate_tokens(text);
                    break;
                }
                Outcome::Structural(t) | Outcome::Ambiguous(t) | Outcome::Timeout(t) => t.clone(),
            };
            if retries_left == 0 {
                end = End::FailedUnreported;
                break 'task;
            }
            retries_left -= 1;
            ctx += estimate_tokens(&text);
            repair += ctx;
            let mut w = lock(world);
            match outcome {
                Outcome::Structural(_) => next = react_structural(&mut w.rng, next, variant, params.p_fix_raw),
                Outcome::Ambiguous(_) => {
                    // Nothing says what to change: the model tries another guess.
                    w.basis = Basis::Blind;
                    variant += 1;
                    next = Next::Valid(variant);
                }
                // Nothing says the charge happened: the model sends it again.
                Outcome::Timeout(_) | Outcome::Ok(_) => {}
            }
        }
    }
    TaskResult {
        end,
        repair_tokens: repair,
        sim_repair_tokens: repair,
        charges: lock(world).charges,
    }
}

/// pydantic-ai's retry prompt for a validation error: `ValidationError.errors()`
/// as indented JSON, then "Fix the errors and try again."
pub(super) fn pydantic_validation_message(call: &Call) -> String {
    let args: Value = serde_json::from_str(&call.args).unwrap_or(Value::Null);
    let error = match call.name.as_str() {
        "charge" => json!({
            "type": "int_parsing",
            "loc": ["amount_cents"],
            "msg": "Input should be a valid integer, unable to parse string as an integer",
            "input": args.get("amount_cents").cloned().unwrap_or(Value::Null),
        }),
        "search_customers" => json!({
            "type": "string_type",
            "loc": ["domain"],
            "msg": "Input should be a valid string",
            "input": args.get("domain").cloned().unwrap_or(Value::Null),
        }),
        _ => json!({
            "type": "string_type",
            "loc": ["email"],
            "msg": "Input should be a valid string",
            "input": args.get("email").cloned().unwrap_or(Value::Null),
        }),
    };
    let errors = serde_json::to_string_pretty(&json!([error])).unwrap_or_default();
    format!("1 validation errors: {errors}\n\nFix the errors and try again.")
}

/// pydantic-ai's retry prompt for an unknown tool name.
pub(super) fn pydantic_unknown_tool_message(name: &str) -> String {
    let available: Vec<String> = TOOL_NAMES.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "Unknown tool name: '{name}'. Available tools: {}\n\nFix the errors and try again.",
        available.join(", ")
    )
}

/// pydantic-ai-style: argument validation errors and unknown tool names go
/// back to the model (pydantic-ai's retry prompt), at most `pydantic_retries`
/// times in a row per tool name; any other exception a tool raises ends the
/// run. This is pydantic-ai's default behaviour for tools that raise on HTTP
/// errors and timeouts instead of raising `ModelRetry`.
pub(super) fn pydantic_task(
    world: &Mutex<World>,
    params: &Params,
    base: u64,
    task_no: u64,
    steps: &[Planned],
) -> TaskResult {
    let p_fix = match params.pydantic_messages {
        PydanticMessages::Specific => params.p_fix_specific,
        PydanticMessages::Raw => params.p_fix_raw,
    };
    let mut ctx = base;
    let mut repair = 0u64;
    let mut end = End::Completed;
    let mut requests = 0u32;
    // pydantic-ai carries a tool's retry count only while that tool keeps failing.
    let mut last_failed: Option<(String, u32)> = None;
    'task: for (step_no, &planned) in steps.iter().enumerate() {
        let Planned { kind, fault, .. } = planned;
        lock(world).begin_step(fault);
        let mut next = first_call(planned);
        let variant = 0u32;
        loop {
            requests += 1;
            if requests > params.pydantic_request_limit {
                end = End::FailedUnreported;
                break 'task;
            }
            let call = render(task_no, step_no as u32, kind, next);
            ctx += call.tokens();
            let prompt = match dispatch(world, &call) {
                Outcome::Ok(text) => {
                    ctx += estimate_tokens(&text);
                    last_failed = None;
                    break;
                }
                Outcome::Structural(_) if !TOOL_NAMES.contains(&call.name.as_str()) => {
                    pydantic_unknown_tool_message(&call.name)
                }
                Outcome::Structural(_) => pydantic_validation_message(&call),
                Outcome::Ambiguous(_) | Outcome::Timeout(_) => {
                    end = End::FailedUnreported;
                    break 'task;
                }
            };
            let used = match &last_failed {
                Some((name, n)) if *name == call.name => *n,
                _ => 0,
            };
            if used >= params.pydantic_retries {
                // UnexpectedModelBehavior: "Tool '…' exceeded max retries count of 1".
                end = End::FailedUnreported;
                break 'task;
            }
            last_failed = Some((call.name.clone(), used + 1));
            ctx += estimate_tokens(&prompt);
            repair += ctx;
            let mut w = lock(world);
            next = react_structural(&mut w.rng, next, variant, p_fix);
        }
    }
    TaskResult {
        end,
        repair_tokens: repair,
        sim_repair_tokens: repair,
        charges: lock(world).charges,
    }
}
