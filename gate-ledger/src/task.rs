//! Task state in the store: what a task has been through, so that any worker
//! resumes it exactly where it was, and the per-user repair-token windows
//! that every worker of the store shares.
//!
//! gate's promises about a task (never the same rejection twice, a rejection
//! cap, a repair budget, nothing runs after a failure) are promises about its
//! history, so the history is stored, not kept in a process. A task is one
//! row ([`TaskRecord`]) written with a compare-and-set on its revision, so two
//! workers driving the same task cannot overwrite each other; the loser
//! reloads and decides again.
//!
//! Everything one decision writes (the task's new state, its decision record,
//! the repair tokens it reserved, the outcome of the call it decided on) is
//! committed in one [`TaskTransaction`]: a repair is either handed out and
//! recorded with its tokens, or neither, a crash in between cannot leak a
//! reservation, and a side effect's outcome costs no commit of its own.

use serde::{Deserialize, Serialize};
use toolgate_budget::{Reservation, TaskBudgetState, TokenLimit, TokensExhausted};

use crate::approval::ApprovalRecord;
use crate::decision::DecisionRecord;
use crate::error::LedgerError;
use crate::failure::FailureReport;
use crate::flow::FlowState;
use crate::future::BoxFuture;
use crate::record::{Finish, Lease, LedgerRecord};
use crate::time::Timestamp;

/// What rules 1 to 4 of the policy look at, as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskState {
    /// Rejections given in the task.
    pub rejections: u32,
    /// Hashes of the rejection messages given in the current repair episode
    /// (since the task's last successful call): never the same one twice.
    pub episode_rejections: Vec<String>,
    /// Fingerprints (tool and canonical arguments) of calls that failed and
    /// must not be resent unchanged.
    pub failed_calls: Vec<String>,
    /// Corrections given since the last successful call.
    pub corrections_in_step: u32,
    /// What the task's own budgets have spent.
    pub budget: TaskBudgetState,
    /// The context the model last read and wrote, in tokens: what a repair replays.
    pub context_tokens: u64,
    /// Whether `context_tokens` comes from the provider's usage (not estimates).
    pub usage_reported: bool,
    /// Repair tokens reserved in the user's window and not yet settled with
    /// the provider's real usage.
    pub pending_tokens: Vec<Reservation>,
    /// The task's repair tokens as of its last decision record, so each
    /// record carries what that decision spent.
    pub logged_repair_tokens: u64,
    /// The same for added latency, in milliseconds.
    pub logged_latency_ms: u64,
    /// The model was last given a repair (a rejection or a correction): the
    /// latency of its next turn is latency the repair added.
    pub repair_turn_pending: bool,
    /// The task's approval requests: the identical call finds its request
    /// here (waiting, approved, declined), and the requests decided since
    /// the task last asked are those not yet delivered.
    pub approvals: Vec<OpenApproval>,
    /// What the information-flow guard knows of what the task read.
    pub flow: FlowState,
}

/// An approval request a task made: which request, for which call, and
/// whether its decision reached the task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenApproval {
    /// The request's id ([`ApprovalRecord::id`]).
    pub id: String,
    /// The fingerprint of the call it is for (tool and canonical arguments):
    /// the identical call finds its request by it.
    pub call_fp: String,
    /// The decision reached the task: the approved call ran (or replayed),
    /// or the denial was given as the call's result.
    #[serde(default)]
    pub delivered: bool,
}

/// One task as the store keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The user the task runs for; `(user, task_id)` is unique.
    pub user: String,
    /// The task.
    pub task_id: String,
    /// Bumped by every write; a write names the revision it read (0: none yet).
    pub revision: i64,
    /// Token of the write that produced this revision: a writer whose
    /// acknowledgement was lost sees from it that its write landed.
    pub writer: String,
    /// The task's history.
    pub state: TaskState,
    /// Set when the task failed; kept after it was reopened.
    pub failure: Option<FailureReport>,
    /// A failed task runs nothing until a person reopens it.
    pub terminal: bool,
    /// When a person last reopened the task.
    pub reopened_at: Option<Timestamp>,
    /// Last write.
    pub updated_at: Timestamp,
}

impl TaskRecord {
    /// A task that has never been stored.
    pub fn new(user: impl Into<String>, task_id: impl Into<String>) -> Self {
        TaskRecord {
            user: user.into(),
            task_id: task_id.into(),
            revision: 0,
            writer: String::new(),
            state: TaskState::default(),
            failure: None,
            terminal: false,
            reopened_at: None,
            updated_at: Timestamp::default(),
        }
    }

    /// What a person's reopening does: the terminal flag is lifted and a new
    /// repair episode starts; what the task spent stays spent.
    pub(crate) fn reopened(mut self, now: Timestamp, writer: String) -> Self {
        self.terminal = false;
        self.reopened_at = Some(now);
        self.state.corrections_in_step = 0;
        self.state.episode_rejections.clear();
        self.writer = writer;
        self
    }
}

/// Task state and token windows in the store.
///
/// Reads and maintenance are plain calls; everything a decision writes goes
/// through [`begin`](Self::begin) and one [`TaskTransaction`].
pub trait TaskStore: Send + Sync {
    /// The stored task, if it was ever written.
    fn load_task<'a>(
        &'a self,
        user: &'a str,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, LedgerError>>;

    /// Starts a transaction: everything written through it commits together
    /// or not at all, and the token windows it touches stay locked to other
    /// transactions until then.
    fn begin(&self) -> BoxFuture<'_, Result<Box<dyn TaskTransaction<'_> + '_>, LedgerError>>;

    /// Tasks that failed and were not reopened: what needs a person, tasks
    /// whose failure needs reconciliation first, then oldest failure first.
    fn list_failed_tasks(&self, limit: u32) -> BoxFuture<'_, Result<Vec<TaskRecord>, LedgerError>>;

    /// Reopens a failed task (a person resolved it): later calls run again.
    /// Reopening a task that is not terminal is a no-op returning it; an
    /// unknown task is `is_not_found()`.
    fn reopen_task<'a>(&'a self, user: &'a str, task_id: &'a str) -> BoxFuture<'a, Result<TaskRecord, LedgerError>>;

    /// Repair tokens that count in `user`'s window under `limit` now.
    fn repair_tokens_used<'a>(
        &'a self,
        user: &'a str,
        limit: &'a TokenLimit,
    ) -> BoxFuture<'a, Result<u64, LedgerError>>;

    /// Commits `settlement` in one round trip, where the store can: the
    /// writes a [`TaskTransaction`] would make, with the same conditions
    /// (the intent's lease, the task's revision), all or nothing. It saves
    /// the round trips of a transaction (`BEGIN`, one per write, `COMMIT`)
    /// for the decision that needs no read between its writes, which is
    /// every side effect's outcome. When a condition does not hold, nothing
    /// is written and the answer is [`SettledAtOnce::NotApplied`]: the
    /// caller then runs the transaction, which tells which condition failed
    /// and why (or recognises its own earlier write). Stores without such a
    /// statement answer `NotApplied` at once; SQLite (one batch on one
    /// connection) and PostgreSQL (one statement) have one.
    fn settle_at_once<'a>(&'a self, settlement: Settlement<'a>) -> BoxFuture<'a, Result<SettledAtOnce, LedgerError>> {
        let _ = settlement;
        Box::pin(async { Ok(SettledAtOnce::NotApplied) })
    }
}

/// The writes of a decision that reads nothing between them, for
/// [`TaskStore::settle_at_once`].
#[derive(Clone, Copy, Debug)]
pub struct Settlement<'a> {
    /// The intent the decided call held, and how it ended, written as
    /// [`TaskTransaction::finish_intent`] writes it.
    pub intent: Option<(&'a Lease, &'a Finish)>,
    /// The task's new state, written as [`TaskTransaction::save_task`]
    /// writes it (if it is still at `revision`).
    pub task: Option<&'a TaskRecord>,
    /// The decision record, appended once per id.
    pub decision: Option<&'a DecisionRecord>,
}

/// How [`TaskStore::settle_at_once`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettledAtOnce {
    /// Everything committed; the task's revision after it, if the task was written.
    Landed(Option<i64>),
    /// Nothing was written: a condition did not hold, or the store has no
    /// one-statement commit for these writes. A transaction tells which.
    NotApplied,
}

/// The writes of one decision, committed together.
///
/// Dropping a transaction without [`commit`](Self::commit) rolls it back.
pub trait TaskTransaction<'a>: Send {
    /// Reserves `tokens` in `user`'s window under `limit` if it holds them:
    /// the inner `Err` is the window's refusal, the outer one a store failure.
    fn reserve_tokens<'b>(
        &'b mut self,
        user: &'b str,
        limit: &'b TokenLimit,
        tokens: u64,
    ) -> BoxFuture<'b, Result<Result<Reservation, TokensExhausted>, LedgerError>>;

    /// Settles `reservations` with the provider's `actual` usage (see
    /// [`TokenWindow::settle`](toolgate_budget::TokenWindow::settle)); returns the
    /// tokens the user may still reserve.
    fn settle_tokens<'b>(
        &'b mut self,
        user: &'b str,
        limit: &'b TokenLimit,
        reservations: &'b [Reservation],
        actual: u64,
    ) -> BoxFuture<'b, Result<u64, LedgerError>>;

    /// Writes `record` if the stored task is still at `record.revision` (0: it
    /// was never stored), as revision + 1 by `record.writer`; returns the new
    /// revision. A task changed by another writer is `is_stale()`.
    fn save_task<'b>(&'b mut self, record: &'b TaskRecord) -> BoxFuture<'b, Result<i64, LedgerError>>;

    /// Moves the intent `lease` holds to how it finished, as
    /// [`Ledger::finish`](crate::Ledger::finish) does, committed with the
    /// rest of the transaction: a call's outcome, the task's new state and
    /// the decision record land together or not at all. A refusal (the lease
    /// was lost, the record moved on) leaves the transaction usable, so the
    /// caller can commit the rest without it.
    fn finish_intent<'b>(
        &'b mut self,
        lease: &'b Lease,
        how: &'b Finish,
    ) -> BoxFuture<'b, Result<LedgerRecord, LedgerError>>;

    /// Appends a decision record (once per id).
    fn append_decision<'b>(&'b mut self, record: &'b DecisionRecord) -> BoxFuture<'b, Result<(), LedgerError>>;

    /// Appends `records` in order (each once per id). SQL stores send them
    /// as multi-row inserts; the default appends one at a time.
    fn append_decisions<'b>(&'b mut self, records: &'b [DecisionRecord]) -> BoxFuture<'b, Result<(), LedgerError>> {
        Box::pin(async move {
            for record in records {
                self.append_decision(record).await?;
            }
            Ok(())
        })
    }

    /// Stores a new approval request (its id is new: a request is never
    /// overwritten), committed with the task's state and the decision record
    /// that announced it.
    fn insert_approval<'b>(&'b mut self, request: &'b ApprovalRecord) -> BoxFuture<'b, Result<(), LedgerError>>;

    /// Commits everything.
    fn commit(self: Box<Self>) -> BoxFuture<'a, Result<(), LedgerError>>;
}

/// The refusal of a task write that lost a compare-and-set.
pub(crate) fn task_changed(record: &TaskRecord, stored: i64) -> LedgerError {
    LedgerError::stale(format!(
        "task {:?} of user {:?} is at revision {stored}, not {}: another worker changed it",
        record.task_id, record.user, record.revision
    ))
}
