//! The [`Ledger`] trait (the intent protocol) and the state machine every
//! store shares, behind it and behind [`Reconcile`] and [`DecisionLog`].
//!
//! The state machine is written once, in [`Core`], on top of a few primitive
//! operations a store must provide atomically ([`Backend`]): insert-if-absent,
//! load, and conditional writes that compare `(state, attempt, owner)` before
//! changing anything. Keeping the decisions in one place is what lets one
//! conformance suite stand for all three stores: a store can only get the
//! atomicity of its primitives wrong, not the policy.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use toolgate_budget::{TokenLimit, TokenWindow};

use crate::approval::{ApprovalDecision, ApprovalQuery, ApprovalRecord, Approvals};
use crate::decision::{DecisionLog, DecisionQuery, DecisionRecord};
use crate::error::LedgerError;
use crate::future::BoxFuture;
use crate::keys::validate_key;
use crate::reconcile::Reconcile;
use crate::record::{
    Claim, ClaimRequest, Finish, Lease, LedgerRecord, Outcome, Reconciliation, Resolution, ResolveRequest, State,
    SweepReport,
};
use crate::task::{SettledAtOnce, Settlement, TaskRecord, TaskStore, TaskTransaction};
use crate::time::{Clock, Timestamp};

/// Which store a ledger writes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreKind {
    /// In-process memory; lost on exit. For tests and single-shot tools.
    Memory,
    /// An SQLite file (the embedded default).
    Sqlite,
    /// A PostgreSQL database shared by many workers.
    Postgres,
}

/// The durable intent ledger.
///
/// # How the runtime uses it
///
/// ```text
/// match ledger.claim(&req).await? {
///     Claim::Replay { outcome, .. }  => return the stored outcome, do not run the tool
///     Claim::OutcomeUnknown(record)  => Fail with a report; never run the tool
///     Claim::Acquired(lease) => {
///         let lease = ledger.dispatch(&lease).await?;   // committed before the call
///         match tool.call().await {
///             Ok(v)                 => ledger.finish(&lease, Finish::Succeeded(v)).await?,
///             Err(definitive)       => ledger.finish(&lease, Finish::FailedPermanent{..}).await?,
///             Err(no_effect)        => ledger.finish(&lease, Finish::FailedRetryable{..}).await?,
///             Err(timeout | reset)  => ledger.finish(&lease, Finish::OutcomeUnknown{..}).await?,
///         };
///     }
/// }
/// ```
///
/// Errors: `is_key_reused()` → reject the call (422); `is_in_progress()` → wait
/// and claim again (409, not a repair); `is_unavailable()` → fail closed, the
/// tool is not run; `is_stale()` on a write → this worker lost its lease, the
/// record was not changed by it. A worker that decides not to dispatch after all
/// (budget refused, shutdown) calls [`Ledger::release`].
///
/// Every transition reads the ledger's [`Clock`] once. What comes after an
/// unknown outcome (listing, resolving, the recovery sweep, retention) is
/// [`Reconcile`]; the decision log is [`DecisionLog`]; a store has all three
/// and the [`TaskStore`] ([`Storage`](crate::Storage)).
pub trait Ledger: Send + Sync + fmt::Debug {
    /// Which store this is.
    fn store(&self) -> StoreKind;

    /// The ledger clock's current time.
    fn now(&self) -> Timestamp;

    /// Claims `req.key` for `req.user` (see [`Claim`] for the answers).
    ///
    /// A claim with another fingerprint on a record whose last attempt had no
    /// effect that may not be repeated (FailedRetryable, Reconciled as not
    /// executed) is a corrected retry: a new attempt of the same intent with
    /// the new arguments.
    ///
    /// Errors: invalid key or input; key reused with another fingerprint (in
    /// any other state) or another tool; in progress under a live lease;
    /// store unavailable.
    fn claim<'a>(&'a self, req: &'a ClaimRequest) -> BoxFuture<'a, Result<Claim, LedgerError>>;

    /// [`claim`](Self::claim) and [`dispatch`](Self::dispatch) in one write:
    /// an acquired lease is already `Dispatched`, durable when this returns,
    /// and the tool may run at once. One commit instead of two on the path
    /// of every side effect; the price is that a crash between this write and
    /// the call is seen as a dispatched call (an unknown outcome for a tool
    /// that is not idempotent), never as one that did not start: the
    /// conservative reading, which a person resolves.
    fn claim_and_dispatch<'a>(&'a self, req: &'a ClaimRequest) -> BoxFuture<'a, Result<Claim, LedgerError>>;

    /// Claimed → Dispatched: writes and commits `dispatched_at` and extends the
    /// lease by its ttl. Call it immediately before running the tool; when it
    /// returns `Ok` the marker is durable. Refused (stale) if the lease expired.
    fn dispatch<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Lease, LedgerError>>;

    /// Extends a held lease by its ttl (a heartbeat for long calls).
    fn renew<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<Lease, LedgerError>>;

    /// Dispatched → the state named by `how` (FailedRetryable also from Claimed).
    /// Returns the updated record.
    fn finish<'a>(&'a self, lease: &'a Lease, how: Finish) -> BoxFuture<'a, Result<LedgerRecord, LedgerError>>;

    /// Gives up a claim that was never dispatched: a first attempt is removed
    /// (nothing happened, so a corrected call may use the key), a later attempt
    /// goes back to FailedRetryable. Dispatched records cannot be released.
    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<(), LedgerError>>;

    /// The record of `key` for `user`.
    fn get<'a>(&'a self, user: &'a str, key: &'a str) -> BoxFuture<'a, Result<Option<LedgerRecord>, LedgerError>>;

    /// `finish(lease, Finish::Succeeded(value))`.
    fn complete<'a>(&'a self, lease: &'a Lease, value: Value) -> BoxFuture<'a, Result<LedgerRecord, LedgerError>> {
        self.finish(lease, Finish::Succeeded(value))
    }

    /// `finish(lease, Finish::FailedPermanent { body, error })`.
    fn fail<'a>(
        &'a self,
        lease: &'a Lease,
        body: Value,
        error: String,
    ) -> BoxFuture<'a, Result<LedgerRecord, LedgerError>> {
        self.finish(lease, Finish::FailedPermanent { body, error })
    }

    /// `finish(lease, Finish::OutcomeUnknown { error })`.
    fn mark_unknown<'a>(&'a self, lease: &'a Lease, error: String) -> BoxFuture<'a, Result<LedgerRecord, LedgerError>> {
        self.finish(lease, Finish::OutcomeUnknown { error })
    }

    /// Closes the store's connections; later calls fail as unavailable.
    fn close<'a>(&'a self) -> BoxFuture<'a, ()>;
}

/// What a conditional full-row write expects to find.
#[derive(Clone, Debug)]
pub(crate) struct Expect<'a> {
    pub user: &'a str,
    pub key: &'a str,
    pub state: State,
    pub attempt: i64,
    pub owner: Option<&'a str>,
}

impl<'a> Expect<'a> {
    fn of(r: &'a LedgerRecord) -> Self {
        Expect {
            user: &r.user,
            key: &r.key,
            state: r.state,
            attempt: r.attempt,
            owner: r.owner.as_deref(),
        }
    }
}

/// A lease-checked partial update; the store applies it only if the record's
/// `(attempt, owner)` match and its state is allowed, and returns the new row.
#[derive(Clone, Debug)]
pub(crate) struct Update<'a> {
    pub user: &'a str,
    pub key: &'a str,
    pub attempt: i64,
    pub owner: &'a str,
    pub now: Timestamp,
    pub change: &'a Change,
}

/// The three lease-holder writes.
#[derive(Clone, Debug)]
pub(crate) enum Change {
    /// Claimed (live lease) → Dispatched.
    Dispatch { lease_until: Timestamp },
    /// Claimed (live) or Dispatched: extend the lease.
    Renew { lease_until: Timestamp },
    /// Dispatched (or Claimed when `from_claimed`) → `to`.
    Finish {
        to: State,
        from_claimed: bool,
        expires_at: Option<Timestamp>,
        outcome: Option<Outcome>,
        error: Option<String>,
    },
}

type Res<T> = Result<T, LedgerError>;

/// The primitive, individually atomic operations a store provides.
pub(crate) trait Backend: Send + Sync + fmt::Debug + 'static {
    /// Inserts `r` unless `(user, key)` exists; true if inserted.
    fn insert(&self, r: &LedgerRecord) -> impl Future<Output = Res<bool>> + Send;
    fn load(&self, user: &str, key: &str) -> impl Future<Output = Res<Option<LedgerRecord>>> + Send;
    fn find(&self, key: &str) -> impl Future<Output = Res<Vec<LedgerRecord>>> + Send;
    /// Replaces the whole row if it still matches `expect`; true if replaced.
    fn replace(&self, expect: &Expect<'_>, new: &LedgerRecord) -> impl Future<Output = Res<bool>> + Send;
    fn update(&self, u: &Update<'_>) -> impl Future<Output = Res<Option<LedgerRecord>>> + Send;
    /// Deletes the row if it still matches `expect`.
    fn delete(&self, expect: &Expect<'_>) -> impl Future<Output = Res<bool>> + Send;
    fn sweep(
        &self,
        now: Timestamp,
        limit: u32,
        retain_until: Timestamp,
    ) -> impl Future<Output = Res<Vec<LedgerRecord>>> + Send;
    fn purge(&self, now: Timestamp) -> impl Future<Output = Res<u64>> + Send;
    fn list_state(&self, state: State, limit: u32) -> impl Future<Output = Res<Vec<LedgerRecord>>> + Send;
    /// Appends a decision unless its id is already stored.
    fn append_decision(&self, d: DecisionRecord) -> impl Future<Output = Res<()>> + Send;
    fn list_decisions(&self, q: &DecisionQuery) -> impl Future<Output = Res<Vec<DecisionRecord>>> + Send;
    fn load_task(&self, user: &str, task_id: &str) -> impl Future<Output = Res<Option<TaskRecord>>> + Send;
    /// Starts a transaction reading "now" from `clock`; intents it finishes
    /// are kept for `retention`.
    fn begin<'a>(
        &'a self,
        clock: &'a dyn Clock,
        retention: Duration,
    ) -> impl Future<Output = Res<Box<dyn TaskTransaction<'a> + 'a>>> + Send;
    /// [`TaskStore::settle_at_once`], reading "now" from `clock`; a backend
    /// without a one-statement commit writes nothing and says so.
    fn settle_at_once(
        &self,
        settlement: Settlement<'_>,
        clock: &dyn Clock,
        retention: Duration,
    ) -> impl Future<Output = Res<SettledAtOnce>> + Send {
        let _ = (settlement, clock, retention);
        async { Ok(SettledAtOnce::NotApplied) }
    }
    /// Terminal tasks: failures needing reconciliation first, then oldest first.
    fn list_failed_tasks(&self, limit: u32) -> impl Future<Output = Res<Vec<TaskRecord>>> + Send;
    /// Terminal tasks of `user` whose failure named intent `key`.
    fn tasks_failed_on(&self, user: &str, key: &str) -> impl Future<Output = Res<Vec<TaskRecord>>> + Send;
    /// The stored window of `user` for buckets of `bucket_ms` (empty if none).
    fn load_window(&self, user: &str, bucket_ms: i64) -> impl Future<Output = Res<TokenWindow>> + Send;
    fn close(&self) -> impl Future<Output = ()> + Send;
    /// The stored request `id`.
    fn load_approval(&self, id: &str) -> impl Future<Output = Res<Option<ApprovalRecord>>> + Send;
    /// The stored requests `query` selects, `now` deciding expiry, oldest first.
    fn list_approvals(
        &self,
        query: &ApprovalQuery,
        now: Timestamp,
    ) -> impl Future<Output = Res<Vec<ApprovalRecord>>> + Send;
    /// Replaces request `new.id` with `new` if it is still stored as pending
    /// and `now` is before its expiry; true if replaced.
    fn decide_pending(&self, new: &ApprovalRecord, now: Timestamp) -> impl Future<Output = Res<bool>> + Send;
}

/// The state machine over a [`Backend`].
#[derive(Debug)]
pub(crate) struct Core<B> {
    pub backend: B,
    pub clock: Arc<dyn Clock>,
    pub retention: Duration,
    pub kind: StoreKind,
}

/// Optimistic writes lose only to a concurrent writer that made progress, so a
/// handful of rounds always suffices in practice; the bound keeps a store that
/// misbehaves from spinning forever.
const MAX_CAS_ROUNDS: usize = 64;

/// A fresh, unguessable lease-holder token (128 random bits, hex).
pub fn new_owner_token() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

fn check_request(req: &ClaimRequest) -> Res<()> {
    validate_key(&req.key)?;
    for (name, v) in [
        ("user", &req.user),
        ("task id", &req.task_id),
        ("tool", &req.tool),
        ("fingerprint", &req.fingerprint),
    ] {
        if v.is_empty() {
            return Err(LedgerError::invalid_input(format!("the {name} is empty")));
        }
        if v.len() > 1024 {
            return Err(LedgerError::invalid_input(format!(
                "the {name} is longer than 1024 bytes"
            )));
        }
    }
    if req.lease.is_zero() {
        return Err(LedgerError::invalid_input("the lease duration is zero"));
    }
    Ok(())
}

fn lease_of(r: &LedgerRecord, ttl: Duration) -> Lease {
    Lease {
        user: r.user.clone(),
        key: r.key.clone(),
        attempt: r.attempt,
        owner: r.owner.clone().unwrap_or_default(),
        ttl,
        expires_at: r.lease_expires_at.unwrap_or_default(),
    }
}

/// Whether a claim also commits the dispatch (one write instead of two).
#[derive(Clone, Copy, PartialEq, Eq)]
enum ClaimMode {
    Claim,
    ClaimAndDispatch,
}

impl ClaimMode {
    /// The state a claim made in this mode writes.
    fn state(self) -> State {
        match self {
            ClaimMode::Claim => State::Claimed,
            ClaimMode::ClaimAndDispatch => State::Dispatched,
        }
    }

    /// `record`, a new claim, as this mode writes it.
    fn start(self, mut record: LedgerRecord, now: Timestamp) -> LedgerRecord {
        if self == ClaimMode::ClaimAndDispatch {
            record.state = State::Dispatched;
            record.dispatched_at = Some(now);
        }
        record
    }
}

fn fresh_claim(req: &ClaimRequest, attempt: i64, now: Timestamp) -> LedgerRecord {
    LedgerRecord {
        user: req.user.clone(),
        key: req.key.clone(),
        fingerprint: req.fingerprint.clone(),
        task_id: req.task_id.clone(),
        tool: req.tool.clone(),
        idempotent: req.idempotent,
        state: State::Claimed,
        attempt,
        owner: Some(req.owner.clone().unwrap_or_else(new_owner_token)),
        lease_expires_at: Some(now.saturating_add(req.lease)),
        claimed_at: now,
        dispatched_at: None,
        finished_at: None,
        expires_at: None,
        outcome: None,
        error: None,
        reconciliation: None,
        updated_at: now,
    }
}

/// A takeover keeps the record's identity and history (reconciliation, last
/// error) and starts a new attempt with a new owner.
fn takeover(cur: &LedgerRecord, req: &ClaimRequest, now: Timestamp) -> LedgerRecord {
    LedgerRecord {
        state: State::Claimed,
        attempt: cur.attempt.saturating_add(1),
        owner: Some(req.owner.clone().unwrap_or_else(new_owner_token)),
        lease_expires_at: Some(now.saturating_add(req.lease)),
        claimed_at: now,
        dispatched_at: None,
        finished_at: None,
        expires_at: None,
        outcome: None,
        task_id: req.task_id.clone(),
        updated_at: now,
        ..cur.clone()
    }
}

impl<B: Backend> Core<B> {
    async fn claim_impl(&self, req: &ClaimRequest, mode: ClaimMode) -> Res<Claim> {
        check_request(req)?;
        let now = self.clock.now();
        let fresh = mode.start(fresh_claim(req, 1, now), now);
        for _ in 0..MAX_CAS_ROUNDS {
            if self.backend.insert(&fresh).await? {
                return Ok(Claim::Acquired(lease_of(&fresh, req.lease)));
            }
            let Some(cur) = self.backend.load(&req.user, &req.key).await? else {
                // Purged or released between our insert and load: insert again.
                continue;
            };
            if req.owner.is_some()
                && cur.owner == req.owner
                && cur.state == mode.state()
                && cur.fingerprint == req.fingerprint
                && cur.lease_live(now)
            {
                // Our own claim, sent again because its answer was lost.
                return Ok(Claim::Acquired(lease_of(&cur, req.lease)));
            }
            if cur.is_expired(now) {
                // Past retention the key is free again (Stripe: a reused key after
                // pruning is a new request); the attempt keeps counting up so old
                // leases can never match the new record.
                let mut new = mode.start(fresh_claim(req, cur.attempt.saturating_add(1), now), now);
                new.reconciliation = None;
                if self.backend.replace(&Expect::of(&cur), &new).await? {
                    return Ok(Claim::Acquired(lease_of(&new, req.lease)));
                }
                continue;
            }
            if cur.fingerprint != req.fingerprint && cur.tool == req.tool && cur.state.is_free_for_a_new_attempt() {
                // Rule 8: a corrected retry is a new attempt of the same
                // intent. The earlier attempt had no effect that may not be
                // repeated (FailedRetryable, or a person found it never ran),
                // so the intent runs again with the corrected arguments.
                let new = LedgerRecord {
                    fingerprint: req.fingerprint.clone(),
                    ..mode.start(takeover(&cur, req, now), now)
                };
                if self.backend.replace(&Expect::of(&cur), &new).await? {
                    return Ok(Claim::Acquired(lease_of(&new, req.lease)));
                }
                continue;
            }
            if cur.fingerprint != req.fingerprint {
                return Err(LedgerError::key_reused(format!(
                    "intent key {} was already used with different arguments",
                    req.key
                )));
            }
            if cur.tool != req.tool {
                return Err(LedgerError::key_reused(format!(
                    "intent key {} was already used with tool {:?}, not {:?}",
                    req.key, cur.tool, req.tool
                )));
            }
            if cur.state.is_finished() {
                if let Some(outcome) = cur.replay_outcome() {
                    return Ok(Claim::Replay {
                        outcome,
                        state: cur.state,
                    });
                }
                return Err(LedgerError::corrupt(format!(
                    "finished record {} has no stored outcome",
                    req.key
                )));
            }
            match cur.state {
                State::OutcomeUnknown => return Ok(Claim::OutcomeUnknown(Box::new(cur))),
                State::Claimed | State::Dispatched if cur.lease_live(now) => {
                    return Err(LedgerError::in_progress(format!(
                        "intent key {} is being executed (attempt {})",
                        req.key, cur.attempt
                    )));
                }
                State::Dispatched if !cur.idempotent => {
                    // The lease ran out after dispatch: the call may have happened,
                    // so it must never run again automatically.
                    let unknown = LedgerRecord {
                        state: State::OutcomeUnknown,
                        lease_expires_at: None,
                        finished_at: Some(now),
                        error: Some("the lease expired while the call was dispatched".into()),
                        updated_at: now,
                        ..cur.clone()
                    };
                    if self.backend.replace(&Expect::of(&cur), &unknown).await? {
                        return Ok(Claim::OutcomeUnknown(Box::new(unknown)));
                    }
                    continue;
                }
                _ => {
                    // Expired Claimed (nothing sent), expired Dispatched of an
                    // idempotent tool, FailedRetryable, Reconciled(NotExecuted).
                    let new = mode.start(takeover(&cur, req, now), now);
                    if self.backend.replace(&Expect::of(&cur), &new).await? {
                        return Ok(Claim::Acquired(lease_of(&new, req.lease)));
                    }
                    continue;
                }
            }
        }
        Err(LedgerError::in_progress(format!(
            "intent key {} is contended; claim again",
            req.key
        )))
    }

    /// Explains why a lease-checked write did not apply.
    async fn refusal(&self, lease: &Lease, what: &str, needs: &[State]) -> LedgerError {
        match self.backend.load(&lease.user, &lease.key).await {
            Err(e) => e,
            Ok(current) => refusal_of(lease, what, needs, current),
        }
    }

    async fn dispatch_impl(&self, lease: &Lease) -> Res<Lease> {
        let now = self.clock.now();
        let lease_until = now.saturating_add(lease.ttl);
        let u = Update {
            user: &lease.user,
            key: &lease.key,
            attempt: lease.attempt,
            owner: &lease.owner,
            now,
            change: &Change::Dispatch { lease_until },
        };
        if let Some(r) = self.backend.update(&u).await? {
            return Ok(lease_of(&r, lease.ttl));
        }
        match self.backend.load(&lease.user, &lease.key).await? {
            // Our own dispatch, sent again because its answer was lost.
            Some(r) if written_by(&r, lease, State::Dispatched) => Ok(lease_of(&r, lease.ttl)),
            current => Err(refusal_of(lease, "dispatch", &[State::Claimed], current)),
        }
    }

    async fn renew_impl(&self, lease: &Lease) -> Res<Lease> {
        let now = self.clock.now();
        let u = Update {
            user: &lease.user,
            key: &lease.key,
            attempt: lease.attempt,
            owner: &lease.owner,
            now,
            change: &Change::Renew {
                lease_until: now.saturating_add(lease.ttl),
            },
        };
        match self.backend.update(&u).await? {
            Some(r) => Ok(lease_of(&r, lease.ttl)),
            None => Err(self.refusal(lease, "renew", &[State::Claimed, State::Dispatched]).await),
        }
    }

    async fn finish_impl(&self, lease: &Lease, how: &Finish) -> Res<LedgerRecord> {
        let now = self.clock.now();
        let write = FinishWrite::new(how, now, self.retention);
        match self.backend.update(&write.update(lease, now)).await? {
            Some(r) => Ok(r),
            None => write.not_applied(lease, self.backend.load(&lease.user, &lease.key).await?),
        }
    }

    async fn release_impl(&self, lease: &Lease) -> Res<()> {
        let now = self.clock.now();
        let Some(cur) = self.backend.load(&lease.user, &lease.key).await? else {
            return Err(LedgerError::not_found(format!(
                "no record for intent key {}",
                lease.key
            )));
        };
        if cur.attempt != lease.attempt || cur.owner.as_deref() != Some(lease.owner.as_str()) {
            return Err(LedgerError::stale(format!(
                "cannot release {}: attempt {} was superseded by attempt {}",
                lease.key, lease.attempt, cur.attempt
            )));
        }
        if cur.state != State::Claimed {
            return Err(LedgerError::invalid_transition(format!(
                "cannot release {}: it is {}, only a claimed record can be released",
                lease.key, cur.state
            )));
        }
        let done = if cur.attempt == 1 && cur.reconciliation.is_none() {
            self.backend.delete(&Expect::of(&cur)).await?
        } else {
            let back = LedgerRecord {
                state: State::FailedRetryable,
                lease_expires_at: None,
                finished_at: Some(now),
                expires_at: Some(now.saturating_add(self.retention)),
                error: Some("released before dispatch".into()),
                updated_at: now,
                ..cur.clone()
            };
            self.backend.replace(&Expect::of(&cur), &back).await?
        };
        if done {
            Ok(())
        } else {
            Err(LedgerError::stale(format!(
                "cannot release {}: the record changed concurrently",
                lease.key
            )))
        }
    }

    /// Resolves the record, then reopens the tasks that failed waiting for
    /// it: the person's answer is what they were waiting for. Resolving again
    /// with the same answer reopens them too, so a resolve interrupted between
    /// the two steps is finished by running it again.
    async fn resolve_impl(&self, req: &ResolveRequest) -> Res<LedgerRecord> {
        let record = self.resolve_record(req).await?;
        for task in self.backend.tasks_failed_on(&record.user, &record.key).await? {
            if task.failure.as_ref().is_some_and(|f| f.reason.needs_reconciliation()) {
                self.reopen_impl(&task.user, &task.task_id).await?;
            }
        }
        Ok(record)
    }

    async fn reopen_impl(&self, user: &str, task_id: &str) -> Res<TaskRecord> {
        for _ in 0..MAX_CAS_ROUNDS {
            let Some(cur) = self.backend.load_task(user, task_id).await? else {
                return Err(LedgerError::not_found(format!("no task {task_id:?} of user {user:?}")));
            };
            if !cur.terminal {
                return Ok(cur);
            }
            let mut new = cur.reopened(self.clock.now(), new_owner_token());
            let mut tx = self.backend.begin(&*self.clock, self.retention).await?;
            match tx.save_task(&new).await {
                Ok(revision) => {
                    tx.commit().await?;
                    new.revision = revision;
                    return Ok(new);
                }
                Err(e) if e.is_stale() => continue,
                Err(e) => return Err(e),
            }
        }
        Err(LedgerError::stale(format!(
            "task {task_id:?} kept changing while being reopened"
        )))
    }

    async fn resolve_record(&self, req: &ResolveRequest) -> Res<LedgerRecord> {
        for _ in 0..MAX_CAS_ROUNDS {
            let now = self.clock.now();
            let mut found = self.backend.find(&req.key).await?;
            if let Some(u) = &req.user {
                found.retain(|r| &r.user == u);
            }
            let cur = match found.len() {
                0 => {
                    return Err(LedgerError::not_found(format!("no record for intent key {}", req.key)));
                }
                1 => found.remove(0),
                n => {
                    return Err(LedgerError::ambiguous(format!(
                        "{n} users have a record with intent key {}; name the user",
                        req.key
                    )));
                }
            };
            if let Some(prev) = &cur.reconciliation
                && cur.state != State::OutcomeUnknown
            {
                if prev.resolution == req.resolution {
                    return Ok(cur);
                }
                return Err(LedgerError::reconcile_conflict(format!(
                    "intent key {} was already resolved as {}",
                    req.key, prev.resolution
                )));
            }
            if cur.state != State::OutcomeUnknown {
                return Err(LedgerError::invalid_transition(format!(
                    "intent key {} is {}; only outcome_unknown records are resolved",
                    req.key, cur.state
                )));
            }
            let outcome = match (req.resolution, &req.value) {
                (Resolution::NotExecuted, _) | (_, None) => None,
                (r, Some(v)) => Some(Outcome {
                    value: v.clone(),
                    is_error: r == Resolution::FailedPermanent,
                }),
            };
            let new = LedgerRecord {
                state: State::Reconciled(req.resolution),
                outcome,
                reconciliation: Some(Reconciliation {
                    resolution: req.resolution,
                    note: req.note.clone(),
                    at: now,
                }),
                finished_at: Some(now),
                expires_at: Some(now.saturating_add(self.retention)),
                updated_at: now,
                ..cur.clone()
            };
            if self.backend.replace(&Expect::of(&cur), &new).await? {
                return Ok(new);
            }
        }
        Err(LedgerError::reconcile_conflict(format!(
            "intent key {} kept changing while being resolved",
            req.key
        )))
    }

    async fn sweep_impl(&self, now: Timestamp, limit: u32) -> Res<SweepReport> {
        let swept = self
            .backend
            .sweep(now, limit, now.saturating_add(self.retention))
            .await?;
        let mut report = SweepReport::default();
        for r in swept {
            if r.state == State::OutcomeUnknown {
                tracing::warn!(key = %r.key, user = %r.user, tool = %r.tool,
                    "lease expired while dispatched: outcome unknown, needs reconciliation");
                report.marked_unknown.push(r);
            } else {
                report.released.push(r);
            }
        }
        Ok(report)
    }
}

/// Whether `r` is where this lease's own earlier write moved it, to `state`
/// (the write landed, its acknowledgement did not).
fn written_by(r: &LedgerRecord, lease: &Lease, state: State) -> bool {
    r.state == state && r.attempt == lease.attempt && r.owner.as_deref() == Some(lease.owner.as_str())
}

/// Why a lease-checked write of `lease` did not apply, given the record as
/// it is now (`what` names the write, `needs` the states it applies to).
fn refusal_of(lease: &Lease, what: &str, needs: &[State], current: Option<LedgerRecord>) -> LedgerError {
    let Some(cur) = current else {
        return LedgerError::not_found(format!("no record for intent key {}", lease.key));
    };
    if cur.attempt != lease.attempt || cur.owner.as_deref() != Some(lease.owner.as_str()) {
        LedgerError::stale(format!(
            "cannot {what} {}: attempt {} was superseded by attempt {}",
            lease.key, lease.attempt, cur.attempt
        ))
    } else if cur.state.is_in_flight() && needs.contains(&cur.state) {
        LedgerError::stale(format!(
            "cannot {what} {}: the lease expired at {}",
            lease.key,
            cur.lease_expires_at.unwrap_or_default()
        ))
    } else if cur.state.is_in_flight() {
        LedgerError::invalid_transition(format!(
            "cannot {what} {}: it is {}, not {}",
            lease.key,
            cur.state,
            needs.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" or ")
        ))
    } else {
        LedgerError::stale(format!(
            "cannot {what} {}: the record already moved on to {}",
            lease.key, cur.state
        ))
    }
}

/// A finish as every store writes it, on its own ([`Ledger::finish`]) or
/// inside a task transaction ([`TaskTransaction::finish_intent`]).
pub(crate) struct FinishWrite {
    to: State,
    change: Change,
}

impl FinishWrite {
    pub(crate) fn new(how: &Finish, now: Timestamp, retention: Duration) -> Self {
        let to = how.target();
        let retain = Some(now.saturating_add(retention));
        let (expires_at, outcome, error) = match how {
            Finish::Succeeded(v) => (
                retain,
                Some(Outcome {
                    value: v.clone(),
                    is_error: false,
                }),
                None,
            ),
            Finish::FailedPermanent { body, error } => (
                retain,
                Some(Outcome {
                    value: body.clone(),
                    is_error: true,
                }),
                Some(error.clone()),
            ),
            Finish::FailedRetryable { error } => (retain, None, Some(error.clone())),
            Finish::OutcomeUnknown { error } => (None, None, Some(error.clone())),
        };
        FinishWrite {
            to,
            change: Change::Finish {
                to,
                from_claimed: to == State::FailedRetryable,
                expires_at,
                outcome,
                error,
            },
        }
    }

    /// The lease-checked update that makes the finish.
    pub(crate) fn update<'a>(&'a self, lease: &'a Lease, now: Timestamp) -> Update<'a> {
        Update {
            user: &lease.user,
            key: &lease.key,
            attempt: lease.attempt,
            owner: &lease.owner,
            now,
            change: &self.change,
        }
    }

    /// What an update that changed nothing means, given the record as it is
    /// now: this lease's own finish, sent again because its answer was lost,
    /// or a refusal that says why.
    pub(crate) fn not_applied(&self, lease: &Lease, current: Option<LedgerRecord>) -> Res<LedgerRecord> {
        if let Change::Finish { outcome, error, .. } = &self.change
            && let Some(r) = &current
            && written_by(r, lease, self.to)
            && (&r.outcome, &r.error) == (outcome, error)
        {
            return Ok(r.clone());
        }
        let needs: &[State] = if self.to == State::FailedRetryable {
            &[State::Claimed, State::Dispatched]
        } else {
            &[State::Dispatched]
        };
        Err(refusal_of(lease, &format!("mark as {}", self.to), needs, current))
    }
}

impl<B: Backend> Ledger for Core<B> {
    fn store(&self) -> StoreKind {
        self.kind
    }
    fn now(&self) -> Timestamp {
        self.clock.now()
    }
    fn claim<'a>(&'a self, req: &'a ClaimRequest) -> BoxFuture<'a, Res<Claim>> {
        Box::pin(self.claim_impl(req, ClaimMode::Claim))
    }
    fn claim_and_dispatch<'a>(&'a self, req: &'a ClaimRequest) -> BoxFuture<'a, Res<Claim>> {
        Box::pin(self.claim_impl(req, ClaimMode::ClaimAndDispatch))
    }
    fn dispatch<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Res<Lease>> {
        Box::pin(self.dispatch_impl(lease))
    }
    fn renew<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Res<Lease>> {
        Box::pin(self.renew_impl(lease))
    }
    fn finish<'a>(&'a self, lease: &'a Lease, how: Finish) -> BoxFuture<'a, Res<LedgerRecord>> {
        Box::pin(async move { self.finish_impl(lease, &how).await })
    }
    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Res<()>> {
        Box::pin(self.release_impl(lease))
    }
    fn get<'a>(&'a self, user: &'a str, key: &'a str) -> BoxFuture<'a, Res<Option<LedgerRecord>>> {
        Box::pin(self.backend.load(user, key))
    }
    fn close<'a>(&'a self) -> BoxFuture<'a, ()> {
        Box::pin(self.backend.close())
    }
}

impl<B: Backend> Reconcile for Core<B> {
    fn retention(&self) -> Duration {
        self.retention
    }
    fn find<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Res<Vec<LedgerRecord>>> {
        Box::pin(self.backend.find(key))
    }
    fn list_unresolved<'a>(&'a self, limit: u32) -> BoxFuture<'a, Res<Vec<LedgerRecord>>> {
        Box::pin(self.backend.list_state(State::OutcomeUnknown, limit))
    }
    fn resolve<'a>(&'a self, req: &'a ResolveRequest) -> BoxFuture<'a, Res<LedgerRecord>> {
        Box::pin(self.resolve_impl(req))
    }
    fn sweep_expired_leases<'a>(&'a self, now: Timestamp, limit: u32) -> BoxFuture<'a, Res<SweepReport>> {
        Box::pin(self.sweep_impl(now, limit))
    }
    fn purge_expired<'a>(&'a self, now: Timestamp) -> BoxFuture<'a, Res<u64>> {
        Box::pin(self.backend.purge(now))
    }
}

impl<B: Backend> DecisionLog for Core<B> {
    fn append_decision(&self, decision: DecisionRecord) -> BoxFuture<'_, Res<()>> {
        Box::pin(self.backend.append_decision(decision))
    }
    fn list_decisions<'a>(&'a self, query: &'a DecisionQuery) -> BoxFuture<'a, Res<Vec<DecisionRecord>>> {
        Box::pin(self.backend.list_decisions(query))
    }
}

impl<B: Backend> Approvals for Core<B> {
    fn load_approval<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Res<Option<ApprovalRecord>>> {
        Box::pin(async move {
            let now = self.clock.now();
            Ok(self.backend.load_approval(id).await?.map(|r| as_of(r, now)))
        })
    }
    fn list_approvals<'a>(&'a self, query: &'a ApprovalQuery) -> BoxFuture<'a, Res<Vec<ApprovalRecord>>> {
        Box::pin(async move {
            let now = self.clock.now();
            let found = self.backend.list_approvals(query, now).await?;
            Ok(found.into_iter().map(|r| as_of(r, now)).collect())
        })
    }
    fn decide_approval<'a>(&'a self, decision: &'a ApprovalDecision) -> BoxFuture<'a, Res<ApprovalRecord>> {
        Box::pin(async move {
            for _ in 0..MAX_CAS_ROUNDS {
                let Some(stored) = self.backend.load_approval(&decision.id).await? else {
                    return Err(LedgerError::not_found(format!("no approval request {:?}", decision.id)));
                };
                let now = self.clock.now();
                let new = stored.decided(decision, now)?;
                if self.backend.decide_pending(&new, now).await? {
                    return Ok(new);
                }
                // Someone decided it in between: the next round says who.
            }
            Err(LedgerError::stale(format!(
                "approval {} kept changing while it was decided",
                decision.id
            )))
        })
    }
}

/// `r` with its status as of `now` (a pending request past its expiry is expired).
fn as_of(mut r: ApprovalRecord, now: Timestamp) -> ApprovalRecord {
    r.status = r.status_at(now);
    r
}

impl<B: Backend> TaskStore for Core<B> {
    fn load_task<'a>(&'a self, user: &'a str, task_id: &'a str) -> BoxFuture<'a, Res<Option<TaskRecord>>> {
        Box::pin(self.backend.load_task(user, task_id))
    }
    fn begin(&self) -> BoxFuture<'_, Res<Box<dyn TaskTransaction<'_> + '_>>> {
        Box::pin(self.backend.begin(&*self.clock, self.retention))
    }
    fn settle_at_once<'a>(&'a self, settlement: Settlement<'a>) -> BoxFuture<'a, Res<SettledAtOnce>> {
        Box::pin(self.backend.settle_at_once(settlement, &*self.clock, self.retention))
    }
    fn list_failed_tasks(&self, limit: u32) -> BoxFuture<'_, Res<Vec<TaskRecord>>> {
        Box::pin(self.backend.list_failed_tasks(limit))
    }
    fn reopen_task<'a>(&'a self, user: &'a str, task_id: &'a str) -> BoxFuture<'a, Res<TaskRecord>> {
        Box::pin(self.reopen_impl(user, task_id))
    }
    fn repair_tokens_used<'a>(&'a self, user: &'a str, limit: &'a TokenLimit) -> BoxFuture<'a, Res<u64>> {
        Box::pin(async move {
            let window = self.backend.load_window(user, limit.bucket_millis()).await?;
            Ok(window.used(limit, self.clock.now().as_millis()))
        })
    }
}
