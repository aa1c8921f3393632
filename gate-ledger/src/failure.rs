//! The failure report: what a human needs to finish the job.
//!
//! A `Fail` is loud. Its report is logged, stored with the task it ended and
//! listed by `gate reconcile list`; it names the intent key so the person can
//! look the operation up in the downstream system, and it says what to check
//! next. The runtime writes it (its texts are the runtime's); the store keeps
//! it, which is why the type lives here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::record::State;
use crate::time::Timestamp;
use crate::vocab::{FailureClass, FailureReason};

/// Everything about a failed task that a human needs to resume it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureReport {
    /// When the task failed.
    pub at: Timestamp,
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
    /// The ledger state of the intent, if it was claimed.
    pub ledger_state: Option<State>,
    /// The failure class of the last error.
    pub class: Option<FailureClass>,
    /// Why the task stopped.
    pub reason: FailureReason,
    /// Repairs (rejections and retries) used by the task.
    pub attempts: u32,
    /// Tokens spent on repair by the task.
    pub repair_tokens: u64,
    /// Wall-clock latency added by retries, in milliseconds.
    pub latency_added_ms: u64,
    /// The last error, sanitized.
    pub last_error: String,
    /// What the tool returned, when it ran but its outcome could not be
    /// recorded ([`FailureReason::OutcomeNotRecorded`]): the value a person
    /// records with `gate reconcile resolve`.
    pub outcome: Option<Value>,
    /// What a human should check first.
    pub next_check: String,
    /// What the model is told.
    pub model_text: String,
}
