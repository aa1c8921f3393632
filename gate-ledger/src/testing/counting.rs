//! [`CountingStore`]: a store that counts the commits made through it.
//!
//! What a call costs a durable store is its number of commits (each one an
//! fsync on SQLite, a WAL flush on PostgreSQL), and that number is a promise
//! the runtime makes: none for a successful read-only call, two for a side
//! effect. Timing cannot hold code to that promise; counting can. The
//! wrapper sits between the runtime and any store and counts every write
//! that commits by what it was, so a test can assert the exact cost of a
//! call kind on any store, the memory store included.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolgate_budget::{Reservation, TokenLimit, TokensExhausted};

use crate::Storage;
use crate::approval::{ApprovalDecision, ApprovalQuery, ApprovalRecord, Approvals};
use crate::decision::{DecisionLog, DecisionQuery, DecisionRecord};
use crate::error::LedgerError;
use crate::future::BoxFuture;
use crate::ledger::{Ledger, StoreKind};
use crate::reconcile::Reconcile;
use crate::record::{Claim, ClaimRequest, Finish, Lease, LedgerRecord, ResolveRequest, SweepReport};
use crate::task::{SettledAtOnce, Settlement, TaskRecord, TaskStore, TaskTransaction};
use crate::time::Timestamp;

/// A kind of commit, named after the call that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CommitKind {
    /// [`Ledger::claim`].
    Claim,
    /// [`Ledger::claim_and_dispatch`].
    ClaimAndDispatch,
    /// [`Ledger::dispatch`].
    Dispatch,
    /// [`Ledger::renew`].
    Renew,
    /// [`Ledger::finish`] (and `complete`, `fail`, `mark_unknown`).
    Finish,
    /// [`Ledger::release`].
    Release,
    /// [`Reconcile::resolve`].
    Resolve,
    /// [`Reconcile::sweep_expired_leases`].
    Sweep,
    /// [`Reconcile::purge_expired`].
    Purge,
    /// [`DecisionLog::append_decision`]: one decision record on its own.
    AppendDecision,
    /// [`TaskStore::reopen_task`].
    ReopenTask,
    /// [`Approvals::decide_approval`]: a person's decision.
    DecideApproval,
    /// [`TaskTransaction::commit`], or a [`TaskStore::settle_at_once`] that
    /// landed: everything one decision's transaction wrote.
    Transaction,
}

/// Counts of commits by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Commits(BTreeMap<CommitKind, u64>);

impl Commits {
    /// Commits of `kind`.
    pub fn of(&self, kind: CommitKind) -> u64 {
        self.0.get(&kind).copied().unwrap_or(0)
    }

    /// Commits of every kind together.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// The kinds that were committed, with their counts, in a fixed order.
    pub fn by_kind(&self) -> impl Iterator<Item = (CommitKind, u64)> + '_ {
        self.0.iter().map(|(kind, n)| (*kind, *n))
    }
}

/// A [`Storage`] that passes every call to `inner` and counts the writes
/// that committed (a write the store refused or failed is not counted; a
/// transaction dropped without `commit` is not either; a claim counts when
/// it acquired the intent).
///
/// ```
/// # async fn demo() -> Result<(), toolgate_ledger::LedgerError> {
/// use toolgate_ledger::testing::{CommitKind, CountingStore};
/// let store = CountingStore::new(toolgate_ledger::open("memory:").await?);
/// // … hand `store.clone()` to the runtime, make one call …
/// assert_eq!(store.commits().of(CommitKind::Transaction), 0);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CountingStore {
    inner: Arc<dyn Storage>,
    counts: Arc<Mutex<Commits>>,
}

impl CountingStore {
    /// Counts the commits made through it to `inner`.
    pub fn new(inner: Arc<dyn Storage>) -> Self {
        CountingStore {
            inner,
            counts: Arc::default(),
        }
    }

    /// The commits counted so far.
    pub fn commits(&self) -> Commits {
        self.counts.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Starts counting from zero again.
    pub fn reset(&self) {
        *self.counts.lock().unwrap_or_else(|p| p.into_inner()) = Commits::default();
    }

    /// The store as the runtime takes it.
    pub fn storage(&self) -> Arc<dyn Storage> {
        Arc::new(self.clone())
    }

    async fn counted<T>(
        &self,
        kind: CommitKind,
        write: BoxFuture<'_, Result<T, LedgerError>>,
    ) -> Result<T, LedgerError> {
        let answer = write.await;
        if answer.is_ok() {
            count(&self.counts, kind);
        }
        answer
    }

    /// A claim commits when it acquires the intent; a replay only reads.
    /// (A claim that finds an expired dispatch writes its move to
    /// OutcomeUnknown; that write is not counted.)
    async fn counted_claim(
        &self,
        kind: CommitKind,
        claim: BoxFuture<'_, Result<Claim, LedgerError>>,
    ) -> Result<Claim, LedgerError> {
        let answer = claim.await;
        if let Ok(Claim::Acquired(_)) = &answer {
            count(&self.counts, kind);
        }
        answer
    }
}

fn count(counts: &Mutex<Commits>, kind: CommitKind) {
    *counts
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .0
        .entry(kind)
        .or_default() += 1;
}

impl fmt::Debug for CountingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountingStore")
            .field("inner", &self.inner)
            .field("commits", &self.commits())
            .finish()
    }
}

impl Ledger for CountingStore {
    fn store(&self) -> StoreKind {
        self.inner.store()
    }
    fn now(&self) -> Timestamp {
        self.inner.now()
    }
    fn claim<'a>(&'a self, req: &'a ClaimRequest) -> BoxFuture<'a, Result<Claim, LedgerError>> {
        Box::pin(self.counted_claim(CommitKind::Claim, self.inner.claim(req)))
    }
    fn claim_and_dispatch<'a>(&'a self, req: &'a ClaimRequest) -> BoxFuture<'a, Result<Claim, LedgerError>> {
        Box::pin(self.counted_claim(CommitKind::ClaimAndDispatch, self.inner.claim_and_dispatch(req)))
    }
    fn dispatch<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Lease, LedgerError>> {
        Box::pin(self.counted(CommitKind::Dispatch, self.inner.dispatch(lease)))
    }
    fn renew<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Lease, LedgerError>> {
        Box::pin(self.counted(CommitKind::Renew, self.inner.renew(lease)))
    }
    fn finish<'a>(&'a self, lease: &'a Lease, how: Finish) -> BoxFuture<'a, Result<LedgerRecord, LedgerError>> {
        Box::pin(self.counted(CommitKind::Finish, self.inner.finish(lease, how)))
    }
    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<(), LedgerError>> {
        Box::pin(self.counted(CommitKind::Release, self.inner.release(lease)))
    }
    fn get<'a>(&'a self, user: &'a str, key: &'a str) -> BoxFuture<'a, Result<Option<LedgerRecord>, LedgerError>> {
        self.inner.get(user, key)
    }
    fn close<'a>(&'a self) -> BoxFuture<'a, ()> {
        self.inner.close()
    }
}

impl Reconcile for CountingStore {
    fn retention(&self) -> Duration {
        self.inner.retention()
    }
    fn find<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Vec<LedgerRecord>, LedgerError>> {
        self.inner.find(key)
    }
    fn list_unresolved<'a>(&'a self, limit: u32) -> BoxFuture<'a, Result<Vec<LedgerRecord>, LedgerError>> {
        self.inner.list_unresolved(limit)
    }
    fn resolve<'a>(&'a self, req: &'a ResolveRequest) -> BoxFuture<'a, Result<LedgerRecord, LedgerError>> {
        Box::pin(self.counted(CommitKind::Resolve, self.inner.resolve(req)))
    }
    fn sweep_expired_leases<'a>(
        &'a self,
        now: Timestamp,
        limit: u32,
    ) -> BoxFuture<'a, Result<SweepReport, LedgerError>> {
        Box::pin(self.counted(CommitKind::Sweep, self.inner.sweep_expired_leases(now, limit)))
    }
    fn purge_expired<'a>(&'a self, now: Timestamp) -> BoxFuture<'a, Result<u64, LedgerError>> {
        Box::pin(self.counted(CommitKind::Purge, self.inner.purge_expired(now)))
    }
}

impl DecisionLog for CountingStore {
    fn append_decision(&self, decision: DecisionRecord) -> BoxFuture<'_, Result<(), LedgerError>> {
        Box::pin(self.counted(CommitKind::AppendDecision, self.inner.append_decision(decision)))
    }
    fn list_decisions<'a>(
        &'a self,
        query: &'a DecisionQuery,
    ) -> BoxFuture<'a, Result<Vec<DecisionRecord>, LedgerError>> {
        self.inner.list_decisions(query)
    }
}

impl Approvals for CountingStore {
    fn load_approval<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<ApprovalRecord>, LedgerError>> {
        self.inner.load_approval(id)
    }
    fn list_approvals<'a>(
        &'a self,
        query: &'a ApprovalQuery,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, LedgerError>> {
        self.inner.list_approvals(query)
    }
    fn decide_approval<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<ApprovalRecord, LedgerError>> {
        Box::pin(self.counted(CommitKind::DecideApproval, self.inner.decide_approval(decision)))
    }
}

impl TaskStore for CountingStore {
    fn load_task<'a>(
        &'a self,
        user: &'a str,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, LedgerError>> {
        self.inner.load_task(user, task_id)
    }
    fn begin(&self) -> BoxFuture<'_, Result<Box<dyn TaskTransaction<'_> + '_>, LedgerError>> {
        Box::pin(async move {
            let inner = self.inner.begin().await?;
            let tx: Box<dyn TaskTransaction<'_> + '_> = Box::new(CountingTx {
                inner,
                counts: &self.counts,
            });
            Ok(tx)
        })
    }
    fn settle_at_once<'a>(&'a self, settlement: Settlement<'a>) -> BoxFuture<'a, Result<SettledAtOnce, LedgerError>> {
        Box::pin(async move {
            let settled = self.inner.settle_at_once(settlement).await?;
            if matches!(settled, SettledAtOnce::Landed(_)) {
                count(&self.counts, CommitKind::Transaction);
            }
            Ok(settled)
        })
    }
    fn list_failed_tasks(&self, limit: u32) -> BoxFuture<'_, Result<Vec<TaskRecord>, LedgerError>> {
        self.inner.list_failed_tasks(limit)
    }
    fn reopen_task<'a>(&'a self, user: &'a str, task_id: &'a str) -> BoxFuture<'a, Result<TaskRecord, LedgerError>> {
        Box::pin(self.counted(CommitKind::ReopenTask, self.inner.reopen_task(user, task_id)))
    }
    fn repair_tokens_used<'a>(
        &'a self,
        user: &'a str,
        limit: &'a TokenLimit,
    ) -> BoxFuture<'a, Result<u64, LedgerError>> {
        self.inner.repair_tokens_used(user, limit)
    }
}

/// A transaction of the inner store, counted when it commits.
struct CountingTx<'a> {
    inner: Box<dyn TaskTransaction<'a> + 'a>,
    counts: &'a Mutex<Commits>,
}

impl<'a> TaskTransaction<'a> for CountingTx<'a> {
    fn reserve_tokens<'b>(
        &'b mut self,
        user: &'b str,
        limit: &'b TokenLimit,
        tokens: u64,
    ) -> BoxFuture<'b, Result<Result<Reservation, TokensExhausted>, LedgerError>> {
        self.inner.reserve_tokens(user, limit, tokens)
    }
    fn settle_tokens<'b>(
        &'b mut self,
        user: &'b str,
        limit: &'b TokenLimit,
        reservations: &'b [Reservation],
        actual: u64,
    ) -> BoxFuture<'b, Result<u64, LedgerError>> {
        self.inner.settle_tokens(user, limit, reservations, actual)
    }
    fn save_task<'b>(&'b mut self, record: &'b TaskRecord) -> BoxFuture<'b, Result<i64, LedgerError>> {
        self.inner.save_task(record)
    }
    fn finish_intent<'b>(
        &'b mut self,
        lease: &'b Lease,
        how: &'b Finish,
    ) -> BoxFuture<'b, Result<LedgerRecord, LedgerError>> {
        self.inner.finish_intent(lease, how)
    }
    fn append_decision<'b>(&'b mut self, record: &'b DecisionRecord) -> BoxFuture<'b, Result<(), LedgerError>> {
        self.inner.append_decision(record)
    }
    fn append_decisions<'b>(&'b mut self, records: &'b [DecisionRecord]) -> BoxFuture<'b, Result<(), LedgerError>> {
        self.inner.append_decisions(records)
    }
    fn insert_approval<'b>(&'b mut self, request: &'b ApprovalRecord) -> BoxFuture<'b, Result<(), LedgerError>> {
        self.inner.insert_approval(request)
    }
    fn commit(self: Box<Self>) -> BoxFuture<'a, Result<(), LedgerError>> {
        let CountingTx { inner, counts } = *self;
        Box::pin(async move {
            inner.commit().await?;
            count(counts, CommitKind::Transaction);
            Ok(())
        })
    }
}
