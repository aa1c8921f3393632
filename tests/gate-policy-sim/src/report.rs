//! What a run produces, the one value the example prints and the test
//! checks: a [`Row`] per mix and policy, and the [`Report`] holding them
//! with the assumptions behind them in sentences. The run (`run.rs`) fills
//! it and the table (`table.rs`) prints it; it is a file of its own so that
//! neither of the two needs the other.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::params::{Mix, Params, PydanticMessages};
use super::policy::Policy;

/// One line of the table: one policy on one mix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The failure mix.
    pub mix: Mix,
    /// The policy.
    pub policy: Policy,
    /// Tasks run.
    pub tasks: u64,
    /// Faults injected into those tasks (the same for every policy of a mix).
    pub faults: u64,
    /// Tasks whose every step got its result.
    pub completed: u64,
    /// Tasks that stopped with gate's `Fail` and its `FailureReport`.
    pub failed_with_report: u64,
    /// Tasks that stopped because the loop gave up or a tool raised: an
    /// error, but no report and no record of what the tools did.
    pub failed_unreported: u64,
    /// Repair tokens of all tasks.
    pub repair_tokens_total: u64,
    /// Mean repair tokens per task.
    pub repair_tokens_mean: f64,
    /// 95th percentile of repair tokens per task (nearest rank).
    pub repair_tokens_p95: u64,
    /// Charges that ran although the same charge had already run.
    pub duplicate_charges: u64,
    /// Charges that ran in tasks that failed without any record of them.
    pub unrecorded_charges: u64,
    /// gate: charges left `outcome_unknown` in the ledger for `gate reconcile`.
    pub charges_to_reconcile: u64,
    /// gate: why tasks failed.
    pub fail_reasons: BTreeMap<String, u64>,
    /// gate: tasks where `task.repair_tokens()` differs from the simulation's
    /// own count under the same formula (0 means the two meters agree).
    pub metering_mismatches: u64,
}

/// The whole run: parameters, derived token sizes, and one row per mix and policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The parameters.
    pub params: Params,
    /// Tokens of the simulated tools' OpenAI manifest (chars / 4).
    pub tool_definition_tokens: u64,
    /// Tokens every task starts with: system prompt, tool definitions, user message.
    pub base_context_tokens: u64,
    /// The assumptions, as printed under the table.
    pub assumptions: Vec<String>,
    /// One row per mix and policy.
    pub rows: Vec<Row>,
}

/// The assumptions behind the numbers, one sentence each.
pub fn assumptions(report: &Report) -> Vec<String> {
    let p = &report.params;
    let mut mixes = String::new();
    for mix in Mix::ALL {
        let r = mix.rates();
        let _ = write!(
            mixes,
            "{}{} (invalid args {}, unknown tool {}, ambiguous read {}, write timeout {})",
            if mixes.is_empty() { "" } else { "; " },
            mix.name(),
            r.invalid_args,
            r.unknown_tool,
            r.ambiguous_read,
            r.write_timeout
        );
    }
    vec![
        format!(
            "{} tasks per mix and policy, seed {}; each task is {} steps: {} `lookup_customer` calls (read_only, discovery `list_customers`, widen hint `search_customers`), then one `charge` (destructive, external: not idempotent).",
            p.tasks,
            p.seed,
            p.steps,
            p.steps.saturating_sub(1)
        ),
        format!(
            "Faults are drawn per step, at most one, from the same seeded schedule for every policy: {mixes}. Each fault hits the step's first call; an ambiguous read persists until a call resolves it; the timeout happens after the backend charged."
        ),
        format!(
            "Model: after a rejection naming the field path and expected type, or listing the valid tool names, it fixes the call with p_fix_specific = {}; after a raw error with p_fix_raw = {}. A failed fix is the same kind of mistake with another value.",
            p.p_fix_specific, p.p_fix_raw
        ),
        format!(
            "Model: after gate's correction (call the discovery tool / widen the search as hinted) its next call succeeds with p_correct = {}; after a raw ambiguous error its resend (another guess) succeeds with p_blind = {}. After a timeout the naive model resends the charge (nothing told it the charge happened).",
            p.p_correct, p.p_blind
        ),
        format!(
            "Tokens under context replay, the same formula for every policy: a repair round trip costs the context the model re-reads (system prompt {} + tool definitions {} + user message, {} in all, plus every call, result and feedback so far, including the failed call and its feedback); texts count chars/4. gate's figure is its own `task.repair_tokens()`, with the context reported through `task.record_usage` before every model turn; first attempts and successful calls are not repair.",
            p.system_prompt_tokens, report.tool_definition_tokens, report.base_context_tokens
        ),
        format!(
            "gate: the real runtime (validator, memory ledger, sanitizer) with max {} repairs and {} rejections per task, one correction per step, default token and latency budgets; one user per task, so the per-user token window never binds.",
            p.gate_max_repairs, p.gate_rejection_cap
        ),
        format!(
            "naive-retry-3: every error text goes back raw (serde's message for bad arguments, `unknown tool` for a bad name, the error's text for 403/empty/timeout) and the failed call is retried up to {} times; then the loop gives up.",
            p.naive_retries
        ),
        format!(
            "pydantic-ai-style: pydantic-ai's defaults: argument validation errors and unknown tool names get its retry prompt (which names `loc`, `msg` and input, or the available tools: modelled as {} messages), at most {} time(s) in a row per tool name, {} requests per run; any other exception a tool raises (403, empty result, timeout) ends the run. Tools do not raise `ModelRetry` themselves.",
            match p.pydantic_messages {
                PydanticMessages::Specific => "specific",
                PydanticMessages::Raw => "raw",
            },
            p.pydantic_retries,
            p.pydantic_request_limit
        ),
        "A duplicate charge is a charge that ran although the task's charge had already run; an unrecorded charge ran in a task that failed with no record of it (gate's timed-out charges are recorded `outcome_unknown` for `gate reconcile`).".to_owned(),
    ]
}
