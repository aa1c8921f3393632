//! The in-process store (`memory:`): the reference implementation of the
//! backend primitives, for tests and for runs that need no durability. Every
//! primitive takes one mutex, which makes each of them trivially atomic.
//!
//! Task state and token windows sit behind a second, asynchronous mutex that
//! a transaction holds from `begin` to its end, so a transaction's reads and
//! writes are isolated from every other transaction; its writes go to an
//! overlay that `commit` applies and a drop discards.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use gate_budget::{Reservation, TokenLimit, TokenWindow, TokensExhausted};

use crate::decision::{DecisionQuery, DecisionRecord};
use crate::error::LedgerError;
use crate::future::BoxFuture;
use crate::ledger::{Backend, Change, Expect, Update};
use crate::record::{LedgerRecord, State};
use crate::task::{TaskRecord, TaskTransaction, task_changed};
use crate::time::{Clock, Timestamp};

#[derive(Debug, Default)]
struct Inner {
    records: HashMap<(String, String), LedgerRecord>,
    decisions: Vec<DecisionRecord>,
    decision_ids: HashSet<String>,
}

impl Inner {
    fn append(&mut self, d: &DecisionRecord) {
        if self.decision_ids.insert(d.id.clone()) {
            self.decisions.push(d.clone());
        }
    }
}

type TaskKey = (String, String);
type WindowKey = (String, i64);

#[derive(Debug, Default)]
struct TaskSide {
    tasks: HashMap<TaskKey, TaskRecord>,
    windows: HashMap<WindowKey, TokenWindow>,
}

/// The memory backend.
#[derive(Debug, Default)]
pub(crate) struct MemoryBackend {
    inner: Mutex<Inner>,
    tasks: tokio::sync::Mutex<TaskSide>,
}

type Res<T> = Result<T, LedgerError>;

impl MemoryBackend {
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
        if r.attempt != u.attempt || r.owner.as_deref() != Some(u.owner) {
            return Ok(None);
        }
        let live = r.lease_expires_at.is_some_and(|t| u.now < t);
        match &u.change {
            Change::Dispatch { lease_until } => {
                if r.state != State::Claimed || !live {
                    return Ok(None);
                }
                r.state = State::Dispatched;
                r.dispatched_at = Some(u.now);
                r.lease_expires_at = Some(*lease_until);
            }
            Change::Renew { lease_until } => {
                let ok = r.state == State::Dispatched || (r.state == State::Claimed && live);
                if !ok {
                    return Ok(None);
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
                    return Ok(None);
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
        Ok(Some(r.clone()))
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

    async fn append_decision(&self, d: &DecisionRecord) -> Res<()> {
        self.lock().append(d);
        Ok(())
    }

    async fn list_decisions(&self, q: &DecisionQuery) -> Res<Vec<DecisionRecord>> {
        let g = self.lock();
        let mut v: Vec<(usize, &DecisionRecord)> = g
            .decisions
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                q.task_id.as_ref().is_none_or(|t| &d.task_id == t)
                    && q.user.as_ref().is_none_or(|u| &d.user == u)
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

    async fn begin<'a>(&'a self, clock: &'a dyn Clock) -> Res<Box<dyn TaskTransaction<'a> + 'a>> {
        Ok(Box::new(MemoryTx {
            side: self.tasks.lock().await,
            inner: &self.inner,
            clock,
            tasks: HashMap::new(),
            windows: HashMap::new(),
            decisions: Vec::new(),
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
    tasks: HashMap<TaskKey, TaskRecord>,
    windows: HashMap<WindowKey, TokenWindow>,
    decisions: Vec<DecisionRecord>,
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

    fn append_decision<'b>(&'b mut self, record: &'b DecisionRecord) -> BoxFuture<'b, Res<()>> {
        self.decisions.push(record.clone());
        Box::pin(async { Ok(()) })
    }

    fn commit(self: Box<Self>) -> BoxFuture<'a, Res<()>> {
        let MemoryTx {
            mut side,
            inner,
            tasks,
            windows,
            decisions,
            ..
        } = *self;
        side.tasks.extend(tasks);
        side.windows.extend(windows);
        let mut g = inner.lock().unwrap_or_else(|e| e.into_inner());
        for d in &decisions {
            g.append(d);
        }
        Box::pin(async { Ok(()) })
    }
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
