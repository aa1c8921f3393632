//! Usage reports: what a model turn cost, as the task's state records it.
//!
//! The provider's real token usage replaces the estimate of the context a
//! repair would replay, and settles the reservations repairs made in the
//! user's token window; the latency of a turn that answered a repair counts
//! in the task's latency budget. This file works out the write a report
//! needs from the task's state; the task commits it (`Task::record_turn`).

use std::time::Duration;

use toolgate_budget::{Budget, Reservation};
use toolgate_ledger::{TaskRecord, TaskState, new_owner_token};

use super::budget::task_budget;

/// The provider's usage of a turn, `tokens` in and out, as the context a
/// repair would replay. Kept in memory whether or not anything is written.
pub(super) fn note_context(state: &mut TaskState, tokens: Option<u64>) {
    if let Some(actual) = tokens {
        state.context_tokens = actual;
        state.usage_reported = true;
    }
}

/// What a turn's report writes: the task's new record, the reservations it
/// settles and the usage they settle to.
pub(super) struct TurnWrite {
    pub(super) task: TaskRecord,
    pub(super) settles: Vec<Reservation>,
    pub(super) actual: u64,
}

/// The write a turn that took `latency` and used `tokens` needs on the
/// task `stored`, under `limits`; `None` when it changes nothing stored
/// (no reservation to settle, no repair turn to time).
pub(super) fn turn_write(
    limits: &Budget,
    stored: &TaskRecord,
    tokens: Option<u64>,
    latency: Option<Duration>,
) -> Option<TurnWrite> {
    let settles = match tokens {
        Some(_) => stored.state.pending_tokens.clone(),
        None => Vec::new(),
    };
    let repair_latency = latency.filter(|_| stored.state.repair_turn_pending);
    if settles.is_empty() && repair_latency.is_none() {
        return None;
    }
    let mut task = stored.clone();
    task.writer = new_owner_token();
    let mut budget = task_budget(limits, &task.state, None);
    if let Some(spent) = repair_latency {
        budget.record_latency(spent);
        task.state.repair_turn_pending = false;
    }
    let actual = tokens.unwrap_or(0);
    if !settles.is_empty() {
        let estimated = settles.iter().fold(0u64, |sum, r| sum.saturating_add(r.tokens));
        task.state.pending_tokens.clear();
        budget.settle_tokens(estimated, actual);
    }
    task.state.budget = budget.state();
    Some(TurnWrite { task, settles, actual })
}
