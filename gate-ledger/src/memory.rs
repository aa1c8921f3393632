//! The in-process store (`memory:`): the reference implementation of the
//! backend primitives, for tests and for runs that need no durability. Every
//! primitive takes one mutex, which makes each of them trivially atomic.
//!
//! Task state and token windows sit behind a second, asynchronous mutex that
//! a transaction holds from `begin` to its end, so a transaction's reads and
//! writes are isolated from every other transaction; its writes go to an
//! overlay that `commit` applies and a drop discards.
//!
//! The decision log keeps the most recent records only
//! ([`LedgerConfig::memory_decisions`](crate::LedgerConfig::memory_decisions)):
//! with no disk to put them on, a process serving calls for days would
//! otherwise grow until it is killed. Ledger records and task state are kept
//! whole; they are what the guarantees rest on.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use toolgate_budget::{Reservation, TokenLimit, TokenWindow, TokensExhausted};

use crate::approval::{ApprovalQuery, ApprovalRecord};
use crate::decision::{DecisionQuery, DecisionRecord};
use crate::decision_id::DecisionId;
use crate::error::LedgerError;
use crate::future::BoxFuture;
use crate::ledger::{Backend, Change, Expect, FinishWrite, Update};
use crate::record::{Finish, Lease, LedgerRecord, State};
use crate::task::{TaskRecord, TaskTransaction, task_changed};
use crate::time::{Clock, Timestamp};
use crate::vocab::ApprovalStatus;

#[derive(Debug, Default)]
struct Inner {
    records: HashMap<(String, String), LedgerRecord>,
    /// The most recent decisions, at most `decisions_kept`.
    decisions: Ring<DecisionRecord>,
    /// The ids of `decisions`. Seeded per process, so ids cannot be chosen
    /// to collide; an id is two words, which foldhash folds in a few
    /// instructions (every successful call pays this).
    ids: HashSet<DecisionId, foldhash::fast::RandomState>,
    decisions_kept: usize,
}

impl Inner {
    /// Appends `d` unless its id is already logged; past the bound the
    /// oldest decision makes room.
    fn append(&mut self, d: DecisionRecord) {
        if self.decisions_kept == 0 || !self.ids.insert(d.id) {
            return;
        }
        let ids = &mut self.ids;
        self.decisions.push(d, self.decisions_kept, |oldest| {
            ids.remove(&oldest.id);
        });
    }
}

/// The most recent items in a bounded number of places. Once full, the
/// oldest item's place takes the next one: an item is moved once, into its
/// place, where a queue would move the evicted one out and shift its ends
/// (on the fast path, a 200-byte record copied twice per call).
#[derive(Debug)]
struct Ring<T> {
    places: Vec<T>,
    /// Where the oldest item is once the ring is full (0 until then).
    oldest: usize,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            places: Vec::new(),
            oldest: 0,
        }
    }
}

impl<T> Ring<T> {
    /// Adds `item` as the newest of at most `bound` items (at least 1);
    /// `evicted` sees the oldest one, in its place, when it makes room.
    fn push(&mut self, item: T, bound: usize, evicted: impl FnOnce(&T)) {
        if self.places.len() < bound {
            self.places.push(item);
            return;
        }
        let place = &mut self.places[self.oldest];
        evicted(place);
        *place = item;
        self.oldest = (self.oldest + 1) % self.places.len();
    }

    /// The items, oldest first.
    fn iter(&self) -> impl Iterator<Item = &T> {
        let (newer, older) = self.places.split_at(self.oldest);
        older.iter().chain(newer)
    }
}

/// The answer of a write made before its future was polled.
struct Appended;

impl Future for Appended {
    type Output = Res<()>;

    fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<Res<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

type TaskKey = (String, String);
type WindowKey = (String, i64);

#[derive(Debug, Default)]
struct TaskSide {
    tasks: HashMap<TaskKey, TaskRecord>,
    windows: HashMap<WindowKey, TokenWindow>,
    approvals: HashMap<String, ApprovalRecord>,
}

/// The memory backend.
#[derive(Debug)]
pub(crate) struct MemoryBackend {
    inner: Mutex<Inner>,
    tasks: tokio::sync::Mutex<TaskSide>,
}

type Res<T> = Result<T, LedgerError>;

impl MemoryBackend {
    /// An empty store that keeps the most recent `decisions_kept` decisions.
    pub(crate) fn new(decisions_kept: usize) -> Self {
        MemoryBackend {
            inner: Mutex::new(Inner {
                decisions_kept,
                ..Inner::default()
            }),
            tasks: tokio::sync::Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a record half-written
        // (every write is a single assignment), so a poisoned lock is usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn matches(r: &LedgerRecord, e: &Expect<'_>) -> bool {
    r.state == e.state && r.attempt == e.attempt && r.owner.as_deref() == e.owner
}

fn sorted(mut v: Vec<LedgerRecord>) -> Vec<LedgerRecord> {
    v.sort_by(|a, b| (&a.user, &a.key).cmp(&(&b.user, &b.key)));
    v
}

impl Backend for MemoryBackend {
    async fn insert(&self, r: &LedgerRecord) -> Res<bool> {
        let mut g = self.lock();
        let k = (r.user.clone(), r.key.clone());
        if g.records.contains_key(&k) {
            return Ok(false);
        }
        g.records.insert(k, r.clone());
        Ok(true)
    }

    async fn load(&self, user: &str, key: &str) -> Res<Option<LedgerRecord>> {
        Ok(self.lock().records.get(&(user.to_owned(), key.to_owned())).cloned())
    }

    async fn find(&self, key: &str) -> Res<Vec<LedgerRecord>> {
        let g = self.lock();
        Ok(sorted(g.records.values().filter(|r| r.key == key).cloned().collect()))
    }

    async fn replace(&self, expect: &Expect<'_>, new: &LedgerRecord) -> Res<bool> {
        let mut g = self.lock();
        match g.records.get_mut(&(expect.user.to_owned(), expect.key.to_owned())) {
            Some(r) if matches(r, expect) => {
                *r = new.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn update(&self, u: &Update<'_>) -> Res<Option<LedgerRecord>> {
        let mut g = self.lock();
        let Some(r) = g.records.get_mut(&(u.user.to_owned(), u.key.to_owned())) else {
            return Ok(None);
        };
        Ok(apply(r, u).then(|| r.clone()))
    }

    async fn delete(&self, expect: &Expect<'_>) -> Res<bool> {
        let mut g = self.lock();
        let k = (expect.user.to_owned(), expect.key.to_owned());
        match g.records.get(&k) {
            Some(r) if matches(r, expect) => {
                g.records.remove(&k);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn sweep(&self, now: Timestamp, limit: u32, retain_until: Timestamp) -> Res<Vec<LedgerRecord>> {
        let mut g = self.lock();
        let mut due: Vec<(Timestamp, (String, String))> = g
            .records
            .iter()
            .filter(|(_, r)| r.state.is_in_flight() && r.lease_expires_at.is_some_and(|t| t <= now))
            .map(|(k, r)| (r.lease_expires_at.unwrap_or_default(), k.clone()))
            .collect();
        due.sort();
        due.truncate(limit as usize);
        let mut out = Vec::with_capacity(due.len());
        for (_, k) in due {
            if let Some(r) = g.records.get_mut(&k) {
                sweep_one(r, now, retain_until);
                out.push(r.clone());
            }
        }
        Ok(out)
    }

    async fn purge(&self, now: Timestamp) -> Res<u64> {
        let mut g = self.lock();
        let before = g.records.len();
        g.records.retain(|_, r| !r.is_expired(now));
        Ok((before - g.records.len()) as u64)
    }

    async fn list_state(&self, state: State, limit: u32) -> Res<Vec<LedgerRecord>> {
        let g = self.lock();
        let mut v: Vec<LedgerRecord> = g.records.values().filter(|r| r.state == state).cloned().collect();
        v.sort_by(|a, b| {
            // The SQL stores' order: COALESCE(dispatched_at, claimed_at), then the key.
            let ka = (a.dispatched_at.unwrap_or(a.claimed_at), a.claimed_at, &a.user, &a.key);
            let kb = (b.dispatched_at.unwrap_or(b.claimed_at), b.claimed_at, &b.user, &b.key);
            ka.cmp(&kb)
        });
        v.truncate(limit as usize);
        Ok(v)
    }

    // Appended when called, not when polled: the future then holds nothing,
    // and boxing a future of no size allocates nothing (every successful
    // call appends a record here).
    fn append_decision(&self, d: DecisionRecord) -> impl Future<Output = Res<()>> + Send {
        self.lock().append(d);
        Appended
    }

    async fn list_decisions(&self, q: &DecisionQuery) -> Res<Vec<DecisionRecord>> {
        let g = self.lock();
        let mut v: Vec<(usize, &DecisionRecord)> = g
            .decisions
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                q.task_id.as_deref().is_none_or(|t| &*d.task_id == t)
                    && q.user.as_deref().is_none_or(|u| &*d.user == u)
                    && q.since.is_none_or(|s| d.at >= s)
                    && q.until.is_none_or(|u| d.at < u)
            })
            .collect();
        v.sort_by_key(|(i, d)| (d.at, *i));
        let limit = q.limit.map_or(usize::MAX, |l| l as usize);
        Ok(v.into_iter().take(limit).map(|(_, d)| d.clone()).collect())
    }

    async fn load_task(&self, user: &str, task_id: &str) -> Res<Option<TaskRecord>> {
        let side = self.tasks.lock().await;
        Ok(side.tasks.get(&(user.to_owned(), task_id.to_owned())).cloned())
    }

    async fn begin<'a>(&'a self, clock: &'a dyn Clock, retention: Duration) -> Res<Box<dyn TaskTransaction<'a> + 'a>> {
        Ok(Box::new(MemoryTx {
            side: self.tasks.lock().await,
            inner: &self.inner,
            clock,
            retention,
            intents: Vec::new(),
            tasks: HashMap::new(),
            windows: HashMap::new(),
            decisions: Vec::new(),
            approvals: Vec::new(),
        }))
    }

    async fn list_failed_tasks(&self, limit: u32) -> Res<Vec<TaskRecord>> {
        let side = self.tasks.lock().await;
        let mut v: Vec<TaskRecord> = side.tasks.values().filter(|t| t.terminal).cloned().collect();
        v.sort_by(|a, b| failed_order(a).cmp(&failed_order(b)));
        v.truncate(limit as usize);
        Ok(v)
    }

    async fn tasks_failed_on(&self, user: &str, key: &str) -> Res<Vec<TaskRecord>> {
        let side = self.tasks.lock().await;
        let mut v: Vec<TaskRecord> = side
            .tasks
            .values()
            .filter(|t| {
                t.terminal && t.user == user && t.failure.as_ref().is_some_and(|f| f.intent_key.as_deref() == Some(key))
            })
            .cloned()
            .collect();
        v.sort_by(|a, b| a.task_id.cmp(&b.task_id));
        Ok(v)
    }

    async fn load_window(&self, user: &str, bucket_ms: i64) -> Res<TokenWindow> {
        let side = self.tasks.lock().await;
        Ok(side
            .windows
            .get(&(user.to_owned(), bucket_ms))
            .cloned()
            .unwrap_or_default())
    }

    async fn close(&self) {}

    async fn load_approval(&self, id: &str) -> Res<Option<ApprovalRecord>> {
        Ok(self.tasks.lock().await.approvals.get(id).cloned())
    }

    async fn list_approvals(&self, q: &ApprovalQuery, now: Timestamp) -> Res<Vec<ApprovalRecord>> {
        let side = self.tasks.lock().await;
        let mut v: Vec<ApprovalRecord> = side
            .approvals
            .values()
            .filter(|r| {
                q.status.is_none_or(|s| r.status_at(now) == s)
                    && q.user.as_deref().is_none_or(|u| r.user == u)
                    && q.task_id.as_deref().is_none_or(|t| r.task_id == t)
            })
            .cloned()
            .collect();
        v.sort_by(|a, b| (a.requested_at, &a.id).cmp(&(b.requested_at, &b.id)));
        v.truncate(q.limit.map_or(usize::MAX, |l| l as usize));
        Ok(v)
    }

    async fn decide_pending(&self, new: &ApprovalRecord, now: Timestamp) -> Res<bool> {
        let mut side = self.tasks.lock().await;
        match side.approvals.get_mut(&new.id) {
            Some(stored) if stored.status_at(now) == ApprovalStatus::Pending => {
                *stored = new.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

/// The SQL stores' order of failed tasks: failures that need reconciliation
/// first, then the oldest failure, then the task's identity.
fn failed_order(t: &TaskRecord) -> (bool, Timestamp, &str, &str) {
    let failure = t.failure.as_ref();
    (
        !failure.is_some_and(|f| f.reason.needs_reconciliation()),
        failure.map(|f| f.at).unwrap_or_default(),
        t.user.as_str(),
        t.task_id.as_str(),
    )
}

/// A transaction over the task side: it holds the task mutex until it ends.
struct MemoryTx<'a> {
    side: tokio::sync::MutexGuard<'a, TaskSide>,
    inner: &'a Mutex<Inner>,
    clock: &'a dyn Clock,
    retention: Duration,
    /// Intents finished in the transaction: checked again and applied at
    /// commit, since the records are not locked in between.
    intents: Vec<IntentFinish>,
    tasks: HashMap<TaskKey, TaskRecord>,
    windows: HashMap<WindowKey, TokenWindow>,
    decisions: Vec<DecisionRecord>,
    approvals: Vec<ApprovalRecord>,
}

/// A finish made inside a transaction, kept until it commits.
struct IntentFinish {
    lease: Lease,
    write: FinishWrite,
    now: Timestamp,
}

impl MemoryTx<'_> {
    fn window(&mut self, user: &str, limit: &TokenLimit) -> &mut TokenWindow {
        let key = (user.to_owned(), limit.bucket_millis());
        let stored = &self.side.windows;
        self.windows
            .entry(key)
            .or_insert_with_key(|k| stored.get(k).cloned().unwrap_or_default())
    }
}

impl<'a> TaskTransaction<'a> for MemoryTx<'a> {
    fn reserve_tokens<'b>(
        &'b mut self,
        user: &'b str,
        limit: &'b TokenLimit,
        tokens: u64,
    ) -> BoxFuture<'b, Res<Result<Reservation, TokensExhausted>>> {
        let now = self.clock.now().as_millis();
        let result = self.window(user, limit).reserve(limit, now, tokens);
        Box::pin(async move { Ok(result) })
    }

    fn settle_tokens<'b>(
        &'b mut self,
        user: &'b str,
        limit: &'b TokenLimit,
        reservations: &'b [Reservation],
        actual: u64,
    ) -> BoxFuture<'b, Res<u64>> {
        let now = self.clock.now().as_millis();
        let left = self.window(user, limit).settle(limit, now, reservations, actual);
        Box::pin(async move { Ok(left) })
    }

    fn save_task<'b>(&'b mut self, record: &'b TaskRecord) -> BoxFuture<'b, Res<i64>> {
        let key = (record.user.clone(), record.task_id.clone());
        let stored = self
            .tasks
            .get(&key)
            .or_else(|| self.side.tasks.get(&key))
            .map_or(0, |t| t.revision);
        let result = if stored == record.revision {
            let revision = record.revision + 1;
            let mut new = record.clone();
            new.revision = revision;
            new.updated_at = self.clock.now();
            self.tasks.insert(key, new);
            Ok(revision)
        } else {
            Err(task_changed(record, stored))
        };
        Box::pin(async move { result })
    }

    fn finish_intent<'b>(&'b mut self, lease: &'b Lease, how: &'b Finish) -> BoxFuture<'b, Res<LedgerRecord>> {
        let now = self.clock.now();
        let write = FinishWrite::new(how, now, self.retention);
        let current = {
            let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            g.records.get(&(lease.user.clone(), lease.key.clone())).cloned()
        };
        // A trial on a copy answers now; the commit applies it for real.
        let answer = match trial(current.as_ref(), &write.update(lease, now)) {
            Some(r) => {
                self.intents.push(IntentFinish {
                    lease: lease.clone(),
                    write,
                    now,
                });
                Ok(r)
            }
            None => write.not_applied(lease, current),
        };
        Box::pin(async move { answer })
    }

    fn append_decision<'b>(&'b mut self, record: &'b DecisionRecord) -> BoxFuture<'b, Res<()>> {
        self.decisions.push(record.clone());
        Box::pin(async { Ok(()) })
    }

    fn insert_approval<'b>(&'b mut self, request: &'b ApprovalRecord) -> BoxFuture<'b, Res<()>> {
        let taken = self.side.approvals.contains_key(&request.id) || self.approvals.iter().any(|a| a.id == request.id);
        let answer = if taken {
            Err(LedgerError::invalid_input(format!(
                "approval {} exists already",
                request.id
            )))
        } else {
            self.approvals.push(request.clone());
            Ok(())
        };
        Box::pin(async move { answer })
    }

    fn commit(self: Box<Self>) -> BoxFuture<'a, Res<()>> {
        let MemoryTx {
            mut side,
            inner,
            tasks,
            windows,
            decisions,
            intents,
            approvals,
            ..
        } = *self;
        let mut g = inner.lock().unwrap_or_else(|e| e.into_inner());
        // All or nothing: an intent that moved on since its trial (a sweep
        // took the lease) fails the whole commit, as a SQL store's would.
        let mut finished = Vec::with_capacity(intents.len());
        for i in &intents {
            let k = (i.lease.user.clone(), i.lease.key.clone());
            let current = g.records.get(&k).cloned();
            match trial(current.as_ref(), &i.write.update(&i.lease, i.now)) {
                Some(r) => finished.push((k, r)),
                None => match i.write.not_applied(&i.lease, current) {
                    // Already as this finish leaves it.
                    Ok(_) => {}
                    Err(refusal) => return Box::pin(async move { Err(refusal) }),
                },
            }
        }
        g.records.extend(finished);
        side.tasks.extend(tasks);
        side.windows.extend(windows);
        side.approvals.extend(approvals.into_iter().map(|a| (a.id.clone(), a)));
        for d in decisions {
            g.append(d);
        }
        Box::pin(async { Ok(()) })
    }
}

/// Applies the lease-checked update `u` to `r` if its fence and state allow;
/// true if it did.
fn apply(r: &mut LedgerRecord, u: &Update<'_>) -> bool {
    if r.attempt != u.attempt || r.owner.as_deref() != Some(u.owner) {
        return false;
    }
    let live = r.lease_expires_at.is_some_and(|t| u.now < t);
    match u.change {
        Change::Dispatch { lease_until } => {
            if r.state != State::Claimed || !live {
                return false;
            }
            r.state = State::Dispatched;
            r.dispatched_at = Some(u.now);
            r.lease_expires_at = Some(*lease_until);
        }
        Change::Renew { lease_until } => {
            let ok = r.state == State::Dispatched || (r.state == State::Claimed && live);
            if !ok {
                return false;
            }
            r.lease_expires_at = Some(*lease_until);
        }
        Change::Finish {
            to,
            from_claimed,
            expires_at,
            outcome,
            error,
        } => {
            let ok = r.state == State::Dispatched || (*from_claimed && r.state == State::Claimed);
            if !ok {
                return false;
            }
            r.state = *to;
            r.finished_at = Some(u.now);
            r.expires_at = *expires_at;
            r.outcome = outcome.clone();
            r.error = error.clone();
            r.lease_expires_at = None;
        }
    }
    r.updated_at = u.now;
    true
}

/// `current` as `u` would leave it, if `u` applies to it.
fn trial(current: Option<&LedgerRecord>, u: &Update<'_>) -> Option<LedgerRecord> {
    let mut r = current?.clone();
    apply(&mut r, u).then_some(r)
}

/// The sweep's transition, shared in spirit with the SQL stores' `CASE`.
fn sweep_one(r: &mut LedgerRecord, now: Timestamp, retain_until: Timestamp) {
    if r.state == State::Dispatched && !r.idempotent {
        r.state = State::OutcomeUnknown;
        r.expires_at = None;
        r.error = Some("the lease expired while the call was dispatched".into());
    } else {
        r.error = Some(if r.state == State::Dispatched {
            "the lease expired while the call was dispatched (idempotent tool)".into()
        } else {
            "the lease expired before dispatch".into()
        });
        r.state = State::FailedRetryable;
        r.expires_at = Some(retain_until);
    }
    r.finished_at = Some(now);
    r.lease_expires_at = None;
    r.updated_at = now;
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use crate::DecisionId;
    use crate::record::{Claim, ClaimRequest, Finish, State};
    use crate::task::TaskRecord;
    use crate::time::ManualClock;
    use crate::{LedgerConfig, open_with};

    // The memory store checks a transaction's finishes again at commit (its
    // records are not locked in between, as a SQL store's rows are): a sweep
    // that took the lease first fails the commit, and nothing of it lands.
    #[tokio::test]
    async fn a_finish_whose_intent_moved_on_before_the_commit_fails_the_whole_commit() {
        let clock = Arc::new(ManualClock::new(crate::Timestamp::from_millis(1_000)));
        let config = LedgerConfig {
            clock: clock.clone(),
            ..LedgerConfig::default()
        };
        let ledger = open_with("memory:", &config).await.expect("memory store");
        let request = ClaimRequest {
            user: "u".into(),
            key: "intent-key-000001".into(),
            fingerprint: "fp".into(),
            task_id: "t".into(),
            tool: "charge".into(),
            idempotent: false,
            lease: std::time::Duration::from_secs(30),
            owner: None,
        };
        let Claim::Acquired(lease) = ledger.claim_and_dispatch(&request).await.expect("claim") else {
            panic!("fresh key")
        };
        let mut tx = ledger.begin().await.expect("begin");
        tx.finish_intent(&lease, &Finish::Succeeded(json!(1)))
            .await
            .expect("trial");
        let mut task = TaskRecord::new("u", "t");
        task.writer = "w".into();
        tx.save_task(&task).await.expect("save");
        clock.advance(request.lease);
        let swept = ledger
            .sweep_expired_leases(crate::Clock::now(&*clock), 10)
            .await
            .expect("sweep");
        assert_eq!(swept.marked_unknown.len(), 1);
        let e = tx.commit().await.expect_err("the intent moved on");
        assert!(e.is_stale(), "{e}");
        let record = ledger
            .get("u", "intent-key-000001")
            .await
            .expect("get")
            .expect("stored");
        assert_eq!(record.state, State::OutcomeUnknown);
        assert_eq!(ledger.load_task("u", "t").await.expect("load"), None);
    }

    fn decision(id: u128) -> crate::DecisionRecord {
        crate::DecisionRecord {
            id: DecisionId::from_u128(id),
            at: crate::Timestamp::from_millis(1),
            task_id: "t".into(),
            user: "u".into(),
            call_id: "c".into(),
            tool: "lookup".into(),
            class: None,
            action: crate::Action::Return,
            fail_reason: None,
            attempt: 1,
            attempts_used: 0,
            repair_tokens: 0,
            latency_added_ms: 0,
            message_hash: String::new(),
            intent_key: None,
        }
    }

    /// The ids the log lists, in its order.
    async fn logged_ids(ledger: &dyn crate::Storage) -> Vec<u128> {
        ledger
            .list_decisions(&Default::default())
            .await
            .expect("list")
            .into_iter()
            .map(|d| d.id.as_u128())
            .collect()
    }

    // A process on the memory store runs for as long as it likes: its log
    // keeps the most recent records, once per id, and forgets the oldest.
    #[tokio::test]
    async fn the_decision_log_keeps_the_most_recent_records_once_each() {
        let config = LedgerConfig {
            memory_decisions: 3,
            ..LedgerConfig::default()
        };
        let ledger = open_with("memory:", &config).await.expect("memory store");
        for id in [1, 2, 2, 3, 4, 5, 4] {
            ledger.append_decision(decision(id)).await.expect("append");
        }
        let mut tx = ledger.begin().await.expect("begin");
        tx.append_decisions(&[decision(5), decision(6)]).await.expect("append");
        tx.commit().await.expect("commit");
        assert_eq!(logged_ids(&*ledger).await, [4, 5, 6]);
        // Once more, so the oldest record is no longer in the first place.
        ledger.append_decision(decision(7)).await.expect("append");
        assert_eq!(logged_ids(&*ledger).await, [5, 6, 7]);
    }
}
