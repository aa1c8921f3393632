//! The decision log: one record per runtime decision, stored next to the ledger
//! so `gate report` can tell from one store whether rejections work (how often a
//! rejection is followed by a valid call), why tasks failed and what repair
//! costs.
//!
//! Class, action and fail reason are the typed vocabulary of [`crate::vocab`];
//! the report's metrics are defined here, once, and every view of them (text,
//! JSON, the HTML page) reads them from [`DecisionReport`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::decision_id::DecisionId;
use crate::error::LedgerError;
use crate::future::BoxFuture;
use crate::time::Timestamp;
use crate::vocab::{Action, FailureClass, FailureReason};

/// The decision log of a store: appended by the runtime, read by
/// `gate report`. A decision that must be durable with the task's state
/// goes through a [`TaskTransaction`](crate::TaskTransaction) instead;
/// this is the log on its own (a successful read's record, a report).
pub trait DecisionLog: Send + Sync {
    /// Appends one decision to the log. The store takes the record: a
    /// store in memory keeps it as it is.
    fn append_decision(&self, decision: DecisionRecord) -> BoxFuture<'_, Result<(), LedgerError>>;

    /// Decision records matching `query`, oldest first.
    fn list_decisions<'a>(
        &'a self,
        query: &'a DecisionQuery,
    ) -> BoxFuture<'a, Result<Vec<DecisionRecord>, LedgerError>>;

    /// The `gate report` summary of the records matching `query`.
    fn report<'a>(&'a self, query: &'a DecisionQuery) -> BoxFuture<'a, Result<DecisionReport, LedgerError>> {
        Box::pin(async move {
            let records = self.list_decisions(query).await?;
            Ok(DecisionReport::from_records(&records))
        })
    }
}

/// One decision of the runtime.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// Unique id of the decision; writing the same id twice stores it once, so
    /// a write retried after a lost acknowledgement cannot duplicate it.
    pub id: DecisionId,
    /// When the decision was made.
    pub at: Timestamp,
    /// The task. Shared, not copied: every record of a task holds the
    /// task's one string (a read-only call's record is built and dropped on
    /// the fast path, where a copy per record was an allocation and a free).
    pub task_id: Arc<str>,
    /// The user, shared with the task like [`task_id`](Self::task_id).
    pub user: Arc<str>,
    /// The provider's call id.
    pub call_id: String,
    /// The tool called (as sent by the model, possibly unknown). Shared
    /// like [`task_id`](Self::task_id): the toolbox's name of a known tool.
    pub tool: Arc<str>,
    /// The failure class; `None` when nothing failed (a returned or replayed
    /// result) or the call never got as far as failing (a task that had
    /// already failed, a store that could not be reached).
    pub class: Option<FailureClass>,
    /// What gate did.
    pub action: Action,
    /// Why the task failed, for [`Action::Fail`].
    pub fail_reason: Option<FailureReason>,
    /// Attempt number of this call within the task.
    pub attempt: i64,
    /// Repair attempts used by the task so far.
    pub attempts_used: i64,
    /// Tokens spent on repair by this decision.
    pub repair_tokens: i64,
    /// Wall-clock latency this decision added, in milliseconds.
    pub latency_added_ms: i64,
    /// SHA-256 (hex) of the text gate wrote for the model: a rejection, a
    /// correction, a failure. Empty when the step returned the tool's result
    /// (fresh or replayed): that text is the tool's own, as long as the tool
    /// makes it, and hashing it on every successful call would cost what no
    /// one reads.
    pub message_hash: String,
    /// The intent key, when the call had one: the key a side effect was
    /// claimed under, or the declared intent's. A read-only call outside a
    /// declared intent has none (nothing is claimed for it).
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

/// What followed rejections: the report's measure of whether rejection
/// messages are actionable.
///
/// For each rejection, the follow-up is the next decision **of the same tool
/// in the same task** (log order). A rejected tool name that never passed
/// validation anywhere in the log is a hallucinated name: the model fixes it
/// by calling a *different*, real tool, so its follow-up is the task's next
/// decision whatever its tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FollowUps {
    /// The next call passed validation (it was returned, replayed or retried).
    pub valid: u64,
    /// The next call was rejected again.
    pub rejected_again: u64,
    /// The task failed next.
    pub failed: u64,
    /// Nothing followed in the log.
    pub nothing: u64,
}

impl FollowUps {
    /// The rejections these follow-ups count.
    pub fn rejections(&self) -> u64 {
        self.valid + self.rejected_again + self.failed + self.nothing
    }

    /// `valid / rejections`, `None` without rejections.
    pub fn valid_share(&self) -> Option<f64> {
        let n = self.rejections();
        (n > 0).then(|| self.valid as f64 / n as f64)
    }

    fn count(&mut self, next: Option<Action>) {
        match next {
            None => self.nothing += 1,
            Some(a) if a.passed_validation() => self.valid += 1,
            Some(Action::Reject) => self.rejected_again += 1,
            Some(_) => self.failed += 1,
        }
    }
}

/// Sums one task's decisions (in log order); `None` for no decisions.
fn summarize(decisions: &[&DecisionRecord]) -> Option<TaskSummary> {
    let count = |action: Action| decisions.iter().filter(|d| d.action == action).count() as u64;
    let last = decisions.last()?;
    Some(TaskSummary {
        user: last.user.to_string(),
        task_id: last.task_id.to_string(),
        decisions: decisions.len() as u64,
        rejections: count(Action::Reject),
        fails: count(Action::Fail),
        repair_tokens: decisions
            .iter()
            .fold(0i64, |sum, d| sum.saturating_add(d.repair_tokens)),
        latency_added_ms: decisions
            .iter()
            .fold(0i64, |sum, d| sum.saturating_add(d.latency_added_ms)),
        last_at: last.at,
        last_action: last.action,
    })
}

/// How often one failure class met one action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassActionCount {
    /// The class (`None`: no failure).
    pub class: Option<FailureClass>,
    /// The action.
    pub action: Action,
    /// Decisions with both.
    pub count: u64,
}

/// One task's decisions, summed. A task is a user and a task id: two users'
/// tasks with the same id are two tasks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSummary {
    /// The user.
    pub user: String,
    /// The task.
    pub task_id: String,
    /// Decisions recorded.
    pub decisions: u64,
    /// Of which rejections.
    pub rejections: u64,
    /// Of which fails.
    pub fails: u64,
    /// Repair tokens the task spent.
    pub repair_tokens: i64,
    /// Wall-clock latency its repairs added, in milliseconds.
    pub latency_added_ms: i64,
    /// When its last decision was made.
    pub last_at: Timestamp,
    /// What its last decision was.
    pub last_action: Action,
}

/// The numbers `gate report` prints.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionReport {
    /// Records summarised.
    pub total: u64,
    /// Count per action.
    pub by_action: BTreeMap<Action, u64>,
    /// Count per failure class (decisions without a failure are not counted here).
    pub by_class: BTreeMap<FailureClass, u64>,
    /// Count per (class, action), most frequent first.
    pub by_class_action: Vec<ClassActionCount>,
    /// Fail decisions per reason.
    pub fails_by_reason: BTreeMap<FailureReason, u64>,
    /// What followed the rejections, over the whole log.
    pub rejection_follow_ups: FollowUps,
    /// The same per rejected tool name.
    pub rejection_follow_ups_by_tool: BTreeMap<String, FollowUps>,
    /// Every task in the log, by user and task id.
    pub tasks: Vec<TaskSummary>,
    /// Mean repair tokens over tasks, `None` without tasks.
    pub mean_repair_tokens_per_task: Option<f64>,
}

impl DecisionReport {
    /// Summarises `records`, which must be in log order (oldest first), as
    /// [`DecisionLog::list_decisions`] returns them.
    pub fn from_records(records: &[DecisionRecord]) -> Self {
        let mut r = DecisionReport::default();
        let mut pairs: BTreeMap<(Option<FailureClass>, Action), u64> = BTreeMap::new();
        let mut by_task: BTreeMap<(&str, &str), Vec<&DecisionRecord>> = BTreeMap::new();
        for d in records {
            r.total += 1;
            *r.by_action.entry(d.action).or_default() += 1;
            if let Some(class) = d.class {
                *r.by_class.entry(class).or_default() += 1;
            }
            *pairs.entry((d.class, d.action)).or_default() += 1;
            if let (Action::Fail, Some(reason)) = (d.action, d.fail_reason) {
                *r.fails_by_reason.entry(reason).or_default() += 1;
            }
            by_task.entry((&*d.user, &*d.task_id)).or_default().push(d);
        }
        let mut pairs: Vec<ClassActionCount> = pairs
            .into_iter()
            .map(|((class, action), count)| ClassActionCount { class, action, count })
            .collect();
        pairs.sort_by_key(|p| std::cmp::Reverse(p.count));
        r.by_class_action = pairs;
        let validated: BTreeSet<&str> = records
            .iter()
            .filter(|d| d.action.passed_validation())
            .map(|d| &*d.tool)
            .collect();
        for decisions in by_task.values() {
            r.tasks.extend(summarize(decisions));
            // Backwards through the task, remembering per tool the action of
            // the nearest later decision: one pass over the log.
            let mut next_of_tool: HashMap<&str, Action> = HashMap::new();
            let mut next_in_task: Option<Action> = None;
            for d in decisions.iter().rev() {
                if d.action == Action::Reject {
                    let next = if validated.contains(&*d.tool) {
                        next_of_tool.get(&*d.tool).copied()
                    } else {
                        next_in_task
                    };
                    r.rejection_follow_ups.count(next);
                    r.rejection_follow_ups_by_tool
                        .entry(d.tool.to_string())
                        .or_default()
                        .count(next);
                }
                next_of_tool.insert(&*d.tool, d.action);
                next_in_task = Some(d.action);
            }
        }
        if !r.tasks.is_empty() {
            let sum: f64 = r.tasks.iter().map(|t| t.repair_tokens as f64).sum();
            r.mean_repair_tokens_per_task = Some(sum / r.tasks.len() as f64);
        }
        r
    }

    /// The task `task_id` of `user`, if it is in the log.
    pub fn task(&self, user: &str, task_id: &str) -> Option<&TaskSummary> {
        self.tasks.iter().find(|t| t.user == user && t.task_id == task_id)
    }

    /// Rejections in the log.
    pub fn rejections(&self) -> u64 {
        self.rejection_follow_ups.rejections()
    }

    /// Decisions with `action`.
    pub fn count(&self, action: Action) -> u64 {
        self.by_action.get(&action).copied().unwrap_or(0)
    }
}
