//! The decision log: one record per runtime decision, stored next to the ledger
//! so `gate report` can tell from one store whether rejections work (how often a
//! rejection is followed by a valid call) and what repair costs.
//!
//! Failure class and action are plain strings because the runtime owns their
//! enums; this crate only counts them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::time::Timestamp;

/// One decision of the runtime.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// When the decision was made.
    pub at: Timestamp,
    /// The task.
    pub task_id: String,
    /// The user.
    pub user: String,
    /// The provider's call id.
    pub call_id: String,
    /// The tool called (as sent by the model, possibly unknown).
    pub tool: String,
    /// Failure class (`structural`, `ambiguous`, `outcome_unknown`, … or `none`).
    pub class: String,
    /// Action taken (`return`, `reject`, `retry`, `fail`).
    pub action: String,
    /// Attempt number of this call within the task.
    pub attempt: i64,
    /// Repair attempts used by the task so far.
    pub attempts_used: i64,
    /// Tokens spent on repair by this decision.
    pub repair_tokens: i64,
    /// Wall-clock latency this decision added, in milliseconds.
    pub latency_added_ms: i64,
    /// Hash of the text sent to the model.
    pub message_hash: String,
    /// The intent key, when the call had one.
    pub intent_key: Option<String>,
}

/// Which decision records to list. Empty fields match everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecisionQuery {
    /// Only this task.
    pub task_id: Option<String>,
    /// Only this user.
    pub user: Option<String>,
    /// Only records at or after this time.
    pub since: Option<Timestamp>,
    /// Only records strictly before this time.
    pub until: Option<Timestamp>,
    /// At most this many records (oldest first).
    pub limit: Option<u32>,
}

/// The numbers `gate report` prints.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionReport {
    /// Records summarised.
    pub total: u64,
    /// Count per failure class.
    pub by_class: BTreeMap<String, u64>,
    /// Count per action.
    pub by_action: BTreeMap<String, u64>,
    /// Count per (class, action), keyed `"class/action"`.
    pub by_class_action: BTreeMap<String, u64>,
    /// Decisions whose action is `reject`.
    pub rejections: u64,
    /// Rejections whose next decision in the same task is a valid call
    /// (action `return` or `retry`: the call passed validation).
    pub rejections_followed_by_valid_call: u64,
    /// `rejections_followed_by_valid_call / rejections`, `None` without rejections.
    pub rejection_success_share: Option<f64>,
    /// Repair tokens per task.
    pub repair_tokens_per_task: BTreeMap<String, i64>,
    /// Mean repair tokens over tasks, `None` without tasks.
    pub mean_repair_tokens_per_task: Option<f64>,
    /// Added latency per task, in milliseconds.
    pub latency_added_ms_per_task: BTreeMap<String, i64>,
}

fn is_action(action: &str, name: &str) -> bool {
    action.eq_ignore_ascii_case(name)
}

impl DecisionReport {
    /// Summarises `records`, which must be in log order (oldest first), as
    /// [`crate::Ledger::list_decisions`] returns them.
    pub fn from_records(records: &[DecisionRecord]) -> Self {
        let mut r = DecisionReport::default();
        let mut by_task: BTreeMap<&str, Vec<&DecisionRecord>> = BTreeMap::new();
        for d in records {
            r.total += 1;
            *r.by_class.entry(d.class.clone()).or_default() += 1;
            *r.by_action.entry(d.action.clone()).or_default() += 1;
            *r.by_class_action
                .entry(format!("{}/{}", d.class, d.action))
                .or_default() += 1;
            let tokens = r.repair_tokens_per_task.entry(d.task_id.clone()).or_default();
            *tokens = tokens.saturating_add(d.repair_tokens);
            let lat = r.latency_added_ms_per_task.entry(d.task_id.clone()).or_default();
            *lat = lat.saturating_add(d.latency_added_ms);
            by_task.entry(d.task_id.as_str()).or_default().push(d);
        }
        for decisions in by_task.values() {
            for (i, d) in decisions.iter().enumerate() {
                if !is_action(&d.action, "reject") {
                    continue;
                }
                r.rejections += 1;
                if let Some(next) = decisions.get(i + 1)
                    && (is_action(&next.action, "return") || is_action(&next.action, "retry"))
                {
                    r.rejections_followed_by_valid_call += 1;
                }
            }
        }
        if r.rejections > 0 {
            r.rejection_success_share = Some(r.rejections_followed_by_valid_call as f64 / r.rejections as f64);
        }
        if !r.repair_tokens_per_task.is_empty() {
            let sum: f64 = r.repair_tokens_per_task.values().map(|v| *v as f64).sum();
            r.mean_repair_tokens_per_task = Some(sum / r.repair_tokens_per_task.len() as f64);
        }
        r
    }
}
