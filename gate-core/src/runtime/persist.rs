//! Store writes the runtime cannot do without, retried while the store fails.
//!
//! A store under load drops connections, and a write whose answer was lost
//! may or may not have landed. Every write here is safe to send again: ledger
//! transitions compare `(state, attempt, owner)` and recognise their own
//! earlier write, a task write names the revision it read and carries a
//! writer token, and a decision record has a unique id. So a write that fails
//! as *unavailable* is sent again, with backoff, until it lands or the gate's
//! store patience runs out; any other error is an answer and is returned at
//! once. One write is sent once on purpose ([`finish_alone`]): an intent's
//! finish after the store already failed for the whole patience.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;
use toolgate_budget::{Reservation, TokenLimit, TokensExhausted};
use toolgate_ledger::{
    ApprovalRecord, DecisionRecord, Finish, Lease, LedgerError, SettledAtOnce, Settlement, Storage, TaskRecord,
    TaskTransaction,
};

const FIRST_DELAY: Duration = Duration::from_millis(5);
const MAX_DELAY: Duration = Duration::from_millis(500);

/// The pause between two sends of the same write: exponential from 5 ms to
/// 0.5 s, half to all of it at random so workers dropped together do not come
/// back together, never past the deadline.
struct Pause {
    deadline: Instant,
    delay: Duration,
}

impl Pause {
    fn new(patience: Duration) -> Self {
        Pause {
            deadline: Instant::now() + patience,
            delay: FIRST_DELAY,
        }
    }

    /// Waits before sending `what` again after `error`; false when the error
    /// is an answer rather than an unavailable store, or the patience is spent.
    async fn again(&mut self, error: &LedgerError, what: &str) -> bool {
        if !error.is_unavailable() {
            return false;
        }
        let sleep = self.delay.mul_f64(0.5 + rand::random::<f64>() / 2.0);
        if Instant::now() + sleep > self.deadline {
            return false;
        }
        tracing::debug!(target: "gate::store", error = %error, "{what} failed; sending it again");
        tokio::time::sleep(sleep).await;
        self.delay = (self.delay * 2).min(MAX_DELAY);
        true
    }
}

/// Runs `op` until it returns something other than an unavailable store, or
/// until `patience` is spent; returns the last answer.
pub(super) async fn retrying<T, F, Fut>(patience: Duration, what: &str, mut op: F) -> Result<T, LedgerError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, LedgerError>>,
{
    let mut pause = Pause::new(patience);
    loop {
        match op().await {
            Err(e) if pause.again(&e, what).await => {}
            other => return other,
        }
    }
}

/// Sends an intent's finish once on its own, when the decision about it
/// could not be committed: the store just failed for the whole patience, so
/// it is not waited for again. A write the store does not take is logged:
/// the lease then runs out and the sweep moves the intent on conservatively
/// (an unknown outcome for a tool that is not idempotent). True if it landed.
pub(super) async fn finish_alone(store: &dyn Storage, lease: &Lease, finish: Finish) -> bool {
    match store.finish(lease, finish).await {
        Ok(_) => true,
        Err(e) => {
            tracing::error!(target: "gate::ledger", error = %e, key = %lease.key, "ledger transition refused");
            false
        }
    }
}

/// What one commit writes.
pub(super) trait Writes {
    /// The task's new state, `None` when the commit changes nothing in it.
    fn task(&self) -> Option<&TaskRecord>;
    /// The decision record, if the commit is a decision.
    fn decision(&self) -> Option<&DecisionRecord>;
    /// How the intent the decided call held ended, if it held one.
    fn intent(&self) -> Option<(&Lease, &Finish)>;
    /// The approval request the decision makes, if it makes one.
    fn approval(&self) -> Option<&ApprovalRecord> {
        None
    }
}

/// Tokens a repair needs from the user's window.
pub(super) struct TokenRequest<'a> {
    pub(super) user: &'a str,
    pub(super) limit: &'a TokenLimit,
    pub(super) tokens: u64,
}

/// How a commit ended.
pub(super) enum Committed<W> {
    /// Everything landed.
    Done {
        /// What was written.
        writes: W,
        /// The task's revision after the write; `None` when the commit did
        /// not write the task.
        revision: Option<i64>,
    },
    /// Another writer changed the task since it was read: reload and decide again.
    Conflict,
    /// The ledger refused the intent's finish (its lease was lost, the record
    /// moved on): nothing was written; decide again without it.
    IntentRefused(LedgerError),
    /// The store did not take the write within the patience.
    Failed(LedgerError),
}

/// What one transaction that reached the store did.
enum Sent<W> {
    /// Committed, with the task's new revision if it was written.
    Landed(W, Option<i64>),
    /// The task write lost its compare-and-set (the writes are kept, to
    /// check whether the winner was an earlier send of ours); rolled back.
    Stale(W),
    /// The ledger refused the intent's finish; rolled back.
    IntentRefused(LedgerError),
}

/// The answer of one transaction.
type Attempted<W> = Result<Sent<W>, LedgerError>;

/// Commits one decision: reserves `tokens` (if any) in the user's window,
/// lets `build` turn the window's answer into the writes, and stores the
/// `earlier` decision records (queued successes, which go first), the
/// intent's finish, the task and the decision record, all in one
/// transaction, sent again while the store is unavailable.
///
/// `build` must use the same writer token and decision id on every call, so
/// that a transaction which landed although its answer was lost is
/// recognised instead of being reported as a conflict.
pub(super) async fn commit_decision<W, F>(
    store: &dyn Storage,
    tokens: Option<TokenRequest<'_>>,
    earlier: &[DecisionRecord],
    patience: Duration,
    mut build: F,
) -> Committed<W>
where
    W: Writes,
    F: FnMut(Option<Result<Reservation, TokensExhausted>>) -> W,
{
    let mut pause = Pause::new(patience);
    let mut prebuilt = None;
    if tokens.is_none() {
        let writes = build(None);
        if writes.task().is_none() && writes.intent().is_none() && writes.approval().is_none() && earlier.is_empty() {
            // Nothing but a record (a plain success): one statement, as
            // without task state; its id makes sending it again harmless.
            return match writes.decision() {
                Some(record) => {
                    match retrying(patience, "decision record", || store.append_decision(record.clone())).await {
                        Ok(()) => Committed::Done { writes, revision: None },
                        Err(e) => Committed::Failed(e),
                    }
                }
                None => Committed::Done { writes, revision: None },
            };
        }
        // Without tokens the writes do not depend on the store's answer: the
        // first transaction sends them as already built.
        prebuilt = Some(writes);
    }
    let mut build = |answer| prebuilt.take().unwrap_or_else(|| build(answer));
    loop {
        let attempted = decision_tx(store, tokens.as_ref(), earlier, &mut build).await;
        if let Some(end) = conclude(store, attempted, &mut pause, "decision commit").await {
            return end;
        }
    }
}

async fn decision_tx<W, F>(
    store: &dyn Storage,
    tokens: Option<&TokenRequest<'_>>,
    earlier: &[DecisionRecord],
    build: &mut F,
) -> Attempted<W>
where
    W: Writes,
    F: FnMut(Option<Result<Reservation, TokensExhausted>>) -> W,
{
    if tokens.is_none() && earlier.is_empty() {
        // Nothing to read between the writes: the store may take them in one
        // round trip. If it did not apply them, the transaction finds out why,
        // exactly as it would have on its own.
        let writes = build(None);
        if writes.approval().is_none() {
            let settlement = Settlement {
                intent: writes.intent(),
                task: writes.task(),
                decision: writes.decision(),
            };
            if let SettledAtOnce::Landed(revision) = store.settle_at_once(settlement).await? {
                return Ok(Sent::Landed(writes, revision));
            }
        }
        return in_transaction(store.begin().await?, writes).await;
    }
    let mut tx = store.begin().await?;
    tx.append_decisions(earlier).await?;
    let answer = match tokens {
        Some(t) => Some(tx.reserve_tokens(t.user, t.limit, t.tokens).await?),
        None => None,
    };
    let writes = build(answer);
    in_transaction(tx, writes).await
}

/// Makes `writes` in `tx`, after whatever it holds already, and commits.
async fn in_transaction<W: Writes>(mut tx: Box<dyn TaskTransaction<'_> + '_>, writes: W) -> Attempted<W> {
    if let Some((lease, finish)) = writes.intent() {
        match tx.finish_intent(lease, finish).await {
            Ok(_) => {}
            Err(e) if e.is_unavailable() => return Err(e),
            Err(e) => return Ok(Sent::IntentRefused(e)),
        }
    }
    let revision = match writes.task() {
        Some(task) => match tx.save_task(task).await {
            Ok(revision) => Some(revision),
            Err(e) if e.is_stale() => return Ok(Sent::Stale(writes)),
            Err(e) => return Err(e),
        },
        None => None,
    };
    // After the task: an earlier send that landed unseen is recognised by
    // the task write, before the request's id would collide with its own.
    if let Some(request) = writes.approval() {
        tx.insert_approval(request).await?;
    }
    if let Some(record) = writes.decision() {
        tx.append_decision(record).await?;
    }
    tx.commit().await?;
    Ok(Sent::Landed(writes, revision))
}

/// A commit that writes only the task.
pub(super) struct TaskWrite(pub(super) TaskRecord);

impl Writes for TaskWrite {
    fn task(&self) -> Option<&TaskRecord> {
        Some(&self.0)
    }
    fn decision(&self) -> Option<&DecisionRecord> {
        None
    }
    fn intent(&self) -> Option<(&Lease, &Finish)> {
        None
    }
}

/// Commits the settlement of `reservations` with the provider's `actual`
/// usage together with `task`, which no longer holds them.
pub(super) async fn commit_usage(
    store: &dyn Storage,
    limit: &TokenLimit,
    reservations: &[Reservation],
    actual: u64,
    task: &TaskRecord,
    patience: Duration,
) -> Committed<TaskWrite> {
    let mut pause = Pause::new(patience);
    loop {
        let attempted = usage_tx(store, limit, reservations, actual, task).await;
        if let Some(end) = conclude(store, attempted, &mut pause, "usage settlement").await {
            return end;
        }
    }
}

async fn usage_tx(
    store: &dyn Storage,
    limit: &TokenLimit,
    reservations: &[Reservation],
    actual: u64,
    task: &TaskRecord,
) -> Attempted<TaskWrite> {
    let mut tx = store.begin().await?;
    if !reservations.is_empty() {
        tx.settle_tokens(&task.user, limit, reservations, actual).await?;
    }
    let revision = match tx.save_task(task).await {
        Ok(revision) => revision,
        Err(e) if e.is_stale() => return Ok(Sent::Stale(TaskWrite(task.clone()))),
        Err(e) => return Err(e),
    };
    tx.commit().await?;
    Ok(Sent::Landed(TaskWrite(task.clone()), Some(revision)))
}

/// Turns one transaction's answer into the end of the commit, or `None` to
/// send it again after a pause.
async fn conclude<W: Writes>(
    store: &dyn Storage,
    attempted: Attempted<W>,
    pause: &mut Pause,
    what: &str,
) -> Option<Committed<W>> {
    let error = match attempted {
        Ok(Sent::Landed(writes, revision)) => return Some(Committed::Done { writes, revision }),
        Ok(Sent::IntentRefused(e)) => return Some(Committed::IntentRefused(e)),
        Ok(Sent::Stale(stale)) => match landed(store, &stale).await {
            Ok(Some(revision)) => {
                return Some(Committed::Done {
                    writes: stale,
                    revision: Some(revision),
                });
            }
            Ok(None) => return Some(Committed::Conflict),
            Err(e) => e,
        },
        Err(e) => e,
    };
    if pause.again(&error, what).await {
        None
    } else {
        Some(Committed::Failed(error))
    }
}

/// Whether the task write in `writes` is already stored: an earlier attempt
/// landed although its answer was lost. Returns the stored revision if so.
async fn landed<W: Writes>(store: &dyn Storage, writes: &W) -> Result<Option<i64>, LedgerError> {
    let Some(task) = writes.task() else { return Ok(None) };
    let stored = store.load_task(&task.user, &task.task_id).await?;
    Ok(stored
        .filter(|s| s.revision == task.revision + 1 && s.writer == task.writer)
        .map(|s| s.revision))
}
