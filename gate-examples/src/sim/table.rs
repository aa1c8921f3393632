//! The report as a reader sees it: the assumptions in sentences and the
//! markdown table, kept apart from the counting so the wording can change
//! without touching a number.

use std::fmt::Write as _;

use super::params::{Mix, PydanticMessages};
use super::policy::Policy;
use super::run::Report;

pub(super) fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "–".to_owned()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
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

/// The table as markdown, with its assumptions and gate's failure reasons.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(
        "| mix | policy | completed | failed, with report | failed, no report | repair tokens/task (mean) | p95 | duplicate charges | unrecorded charges |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in &report.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {} |",
            row.mix.name(),
            row.policy.name(),
            pct(row.completed, row.tasks),
            pct(row.failed_with_report, row.tasks),
            pct(row.failed_unreported, row.tasks),
            row.repair_tokens_mean,
            row.repair_tokens_p95,
            row.duplicate_charges,
            row.unrecorded_charges,
        );
    }
    out.push_str("\nWhy gate failed tasks (each with a `FailureReport`):\n\n");
    for row in report.rows.iter().filter(|r| r.policy == Policy::Gate) {
        let reasons: Vec<String> = row.fail_reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            out,
            "- {}: {}{}",
            row.mix.name(),
            if reasons.is_empty() {
                "none".to_owned()
            } else {
                reasons.join(", ")
            },
            if row.charges_to_reconcile > 0 {
                format!(" ({} charges queued for `gate reconcile`)", row.charges_to_reconcile)
            } else {
                String::new()
            }
        );
    }
    out.push_str("\nAssumptions:\n\n");
    for a in &report.assumptions {
        let _ = writeln!(out, "- {a}");
    }
    out
}
