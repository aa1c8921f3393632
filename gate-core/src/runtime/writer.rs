//! The background writer: decision records of successful read-only calls,
//! written in batches, so that such a call waits for no disk.
//!
//! Everything else gate writes (a side effect's ledger states, rejections,
//! repairs, failures, the task's state) is durable before the step returns.
//! A successful read-only call changed nothing anywhere: its record is only
//! the log's. So it goes to a bounded queue that one task drains, one
//! transaction per batch. A full queue makes the caller wait (backpressure:
//! memory stays bounded and no record is dropped); a store that is down
//! holds the queue until it is back. A crash loses at most the records still
//! queued, never anything else.
//!
//! The writer commits when a batch's worth is queued (128 records) or a
//! second after the first record came, whichever is first (group commit,
//! as OpenTelemetry's batch exporter does with its 5 s): at an agent's pace
//! of a few calls a second, a commit (and its fsync) per record would cost
//! more than every call it logs. So a successful read's record reaches the
//! store at most a second late, or at once on `shutdown`.
//!
//! The log keeps the process's order: a decision written before its step
//! returns takes what is queued into its own transaction, ahead of itself
//! ([`SuccessWriter::take_queued`]), so a rejection is never stored before
//! the success that preceded it. [`Gate::shutdown`](super::Gate::shutdown)
//! writes everything queued; dropping the last clone of a gate lets the
//! writer write what is queued and stop, as long as the async runtime keeps
//! running.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};
use toolgate_ledger::{DecisionId, DecisionRecord, LedgerError, Storage, StoreKind};

use super::persist::retrying;

/// Records the queue holds before callers wait.
const QUEUE_CAPACITY: usize = 4096;
/// Records written per transaction at most.
const BATCH: usize = 512;
/// Queued records that wake the writer at once: a batch worth a commit.
const WAKE_AT: usize = 128;
/// How long fewer records wait for more before they are written anyway.
const LINGER: Duration = Duration::from_secs(1);
/// The pause before records the store did not take within the patience are
/// sent again.
const STORE_DOWN_PAUSE: Duration = Duration::from_secs(1);

/// The queue, shared by every task of a gate and the writing task.
struct Shared {
    store: Arc<dyn Storage>,
    patience: Duration,
    pending: Mutex<VecDeque<DecisionRecord>>,
    /// Held by whoever is writing queued records, so that records taken are
    /// stored (or given back) before anyone takes the ones behind them.
    writing: tokio::sync::Mutex<()>,
    /// One permit per free place in the queue.
    space: Semaphore,
    wake: Notify,
    closed: AtomicBool,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, VecDeque<DecisionRecord>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take(&self, at_most: usize) -> Vec<DecisionRecord> {
        let mut pending = self.pending();
        let n = pending.len().min(at_most);
        pending.drain(..n).collect()
    }

    /// Puts records that were not stored back at the head of the queue.
    fn give_back(&self, records: Vec<DecisionRecord>) {
        let mut pending = self.pending();
        for record in records.into_iter().rev() {
            pending.push_front(record);
        }
    }

    /// Writes up to `at_most` queued records in one transaction. False when
    /// the store did not take them within the patience: they are back in
    /// the queue.
    async fn write_some(&self, at_most: usize) -> bool {
        let _writing = self.writing.lock().await;
        let batch = self.take(at_most);
        if batch.is_empty() {
            return true;
        }
        match retrying(self.patience, "success records", || write_batch(&*self.store, &batch)).await {
            Ok(()) => {}
            Err(e) if e.is_unavailable() => {
                tracing::error!(target: "gate::store", error = %e, records = batch.len(), "success records not written yet; they stay queued");
                self.give_back(batch);
                return false;
            }
            Err(e) => {
                let ids: Vec<DecisionId> = batch.iter().map(|r| r.id).collect();
                tracing::error!(target: "gate::store", error = %e, ?ids, "success records refused by the store");
            }
        }
        self.space.add_permits(batch.len());
        true
    }
}

/// The queue's handle, held by the gate.
pub(super) struct SuccessWriter {
    shared: Arc<Shared>,
}

/// Queued records taken into a decision's own transaction.
pub(super) struct Taken<'a> {
    writer: &'a SuccessWriter,
    records: Vec<DecisionRecord>,
}

impl Taken<'_> {
    /// The records, oldest first, to append before the decision's own.
    pub(super) fn records(&self) -> &[DecisionRecord] {
        &self.records
    }

    /// They are in the store: their places in the queue are free.
    pub(super) fn stored(mut self) {
        let n = std::mem::take(&mut self.records).len();
        self.writer.shared.space.add_permits(n);
    }
}

impl Drop for Taken<'_> {
    /// Records that were not stored go back to the queue.
    fn drop(&mut self) {
        if !self.records.is_empty() {
            self.writer.shared.give_back(std::mem::take(&mut self.records));
            self.writer.shared.wake.notify_one();
        }
    }
}

impl SuccessWriter {
    /// Starts the writing task on the current Tokio runtime.
    pub(super) fn start(store: Arc<dyn Storage>, patience: Duration) -> Self {
        let shared = Arc::new(Shared {
            store,
            patience,
            pending: Mutex::new(VecDeque::new()),
            writing: tokio::sync::Mutex::new(()),
            space: Semaphore::new(QUEUE_CAPACITY),
            wake: Notify::new(),
            closed: AtomicBool::new(false),
        });
        tokio::spawn(drain(shared.clone()));
        SuccessWriter { shared }
    }

    /// Queues `record`, waiting while the queue is full. The memory store
    /// has no disk to wait for: there the record is stored in place, in
    /// order, and the queue stays empty.
    pub(super) async fn push(&self, record: DecisionRecord) {
        if self.shared.store.store() == StoreKind::Memory {
            if let Err(e) = self.shared.store.append_decision(record).await {
                tracing::error!(target: "gate::store", error = %e, "decision record not stored");
            }
            return;
        }
        // A free place is the usual case: taken without building a future.
        match self.shared.space.try_acquire() {
            Ok(place) => place.forget(),
            Err(_) => {
                if let Ok(place) = self.shared.space.acquire().await {
                    place.forget();
                }
            }
        }
        let queued = {
            let mut pending = self.shared.pending();
            pending.push_back(record);
            pending.len()
        };
        // The first record starts the writer's linger; a batch's worth ends
        // it. Records in between wake nobody: a commit per record would cost
        // the writer (and the core it shares with callers) far more.
        if queued == 1 || queued == WAKE_AT {
            self.shared.wake.notify_one();
        }
    }

    /// Takes everything queued, for a decision's own transaction; waits for
    /// a batch the writing task is storing right now.
    pub(super) async fn take_queued(&self) -> Taken<'_> {
        let _writing = self.shared.writing.lock().await;
        Taken {
            writer: self,
            records: self.shared.take(usize::MAX),
        }
    }

    /// Writes everything queued before the call and waits until it is
    /// stored, however long the store takes to come back.
    pub(super) async fn flush(&self) {
        while !self.shared.write_some(usize::MAX).await {
            tokio::time::sleep(STORE_DOWN_PAUSE).await;
        }
    }
}

impl Drop for SuccessWriter {
    /// The gate is gone: the writing task stores what is queued and stops.
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        self.shared.wake.notify_one();
    }
}

/// The writing task: a batch at a time while records are queued, a pause
/// while the store is down.
async fn drain(shared: Arc<Shared>) {
    loop {
        if shared.pending().is_empty() {
            if shared.closed.load(Ordering::SeqCst) {
                return;
            }
            shared.wake.notified().await;
            continue;
        }
        if shared.pending().len() < WAKE_AT && !shared.closed.load(Ordering::SeqCst) {
            let _ = tokio::time::timeout(LINGER, shared.wake.notified()).await;
        }
        if !shared.write_some(BATCH).await {
            tokio::time::sleep(STORE_DOWN_PAUSE).await;
        }
    }
}

async fn write_batch(store: &dyn Storage, batch: &[DecisionRecord]) -> Result<(), LedgerError> {
    let mut tx = store.begin().await?;
    tx.append_decisions(batch).await?;
    tx.commit().await
}
