//! The failure report: what a human needs to finish the job.
//!
//! A `Fail` is loud. Its report is logged, stored with the decision log and
//! shown by `gate reconcile`; it names the intent key so the person can look
//! the operation up in the downstream system, and it says what to check next.

use serde::Serialize;

use super::class::FailureClass;
use super::policy::FailReason;

/// Everything about a failed task that a human needs to resume it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailureReport {
    /// The task.
    pub task_id: String,
    /// The user the task ran for.
    pub user: String,
    /// The call that ended the task.
    pub call_id: String,
    /// The tool it called.
    pub tool: String,
    /// SHA-256 of the call's canonical arguments (never the arguments themselves).
    pub arguments_fingerprint: String,
    /// The intent key, to find the operation downstream.
    pub intent_key: Option<String>,
    /// The ledger state of the intent (`outcome_unknown`, `failed_permanent`, ...), if it was claimed.
    pub ledger_state: Option<String>,
    /// The failure class of the last error.
    pub class: Option<FailureClass>,
    /// Why the task stopped.
    pub reason: FailReason,
    /// Repairs (rejections and retries) used by the task.
    pub attempts: u32,
    /// Tokens spent on repair by the task.
    pub repair_tokens: u64,
    /// Wall-clock latency added by retries, in milliseconds.
    pub latency_added_ms: u64,
    /// The last error, sanitized.
    pub last_error: String,
    /// What a human should check first.
    pub next_check: String,
    /// What the model is told.
    pub model_text: String,
}

/// What to check next, by reason.
pub(crate) fn next_check(reason: FailReason, tool: &str, intent_key: Option<&str>) -> String {
    let key = intent_key.unwrap_or("(none)");
    match reason {
        FailReason::OutcomeUnknown => format!(
            "Look up intent key {key} in the system behind `{tool}`: if the operation happened, run `gate reconcile resolve {key} --outcome succeeded`; if not, `--outcome not-executed` lets the task run again."
        ),
        FailReason::InProgress => format!(
            "Another worker holds intent {key}; wait for it to finish or its lease to expire, then resume the task."
        ),
        FailReason::KeyReused => format!(
            "Intent {key} was already used with different arguments for `{tool}`; check which arguments the user meant."
        ),
        FailReason::LedgerUnavailable => {
            "The ledger store was unreachable, so the call was not run; check the store and resume the task.".to_owned()
        }
        FailReason::Internal => {
            format!("`{tool}` failed internally; the operator log has the cause. Fix the tool, then resume the task.")
        }
        FailReason::NotActionable | FailReason::RejectionCap => format!(
            "The model could not produce valid arguments for `{tool}`; check the tool's description and schema against what the model sent."
        ),
        FailReason::UnsafeToRetry => format!(
            "`{tool}` failed ambiguously and is not safe to retry; check its backend for the cause before running it again."
        ),
        FailReason::CorrectionDidNotHelp => format!(
            "A correction did not fix `{tool}`; check that its discovery tool and widen hint point the model the right way."
        ),
        FailReason::AttemptBudget | FailReason::TokenBudget | FailReason::LatencyBudget => {
            format!(
                "The task ran out of its repair budget at `{tool}`; check why calls kept failing before raising the budget."
            )
        }
    }
}
