//! [`Gate`]: what every task of a process shares.
//!
//! The toolbox, its compiled validators, the store, the sanitizers, the
//! budgets and the decision sinks are built once and shared by cheap clones;
//! everything that belongs to one task lives in the store and in a
//! [`Task`](super::Task). The builder (`Gate::builder`) and the tasks
//! (`Gate::task`) are made in their own files, which lean on this one.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use toolgate_ledger::{LedgerError, Storage};
use toolgate_sanitize::Sanitizer;
use toolgate_validate::Validator;

use super::approval::ApprovalSettings;
use super::budget::{Budget, RetryBudget};
use super::flow::FlowSettings;
use super::log::DecisionSink;
use super::writer::SuccessWriter;
use crate::Toolbox;

/// The shared part of the runtime: toolbox, validators, store, sanitizer,
/// budgets and decision sinks. Cheap to clone; one per process is typical.
#[derive(Clone)]
pub struct Gate {
    inner: Arc<Inner>,
}

/// What a gate holds; the runtime's other modules read it through [`Gate`].
pub(super) struct Inner {
    pub(super) toolbox: Toolbox,
    /// One per tool, in the toolbox's registration order.
    pub(super) validators: Vec<Arc<Validator>>,
    pub(super) store: Arc<dyn Storage>,
    pub(super) sanitizer: Sanitizer,
    pub(super) result_sanitizer: Option<Sanitizer>,
    pub(super) budget: Budget,
    /// The share of first attempts gate's own resends may add, if limited.
    pub(super) retry_budget: Option<Arc<RetryBudget>>,
    pub(super) rejection_cap: u32,
    pub(super) corrections_per_step: u32,
    pub(super) store_patience: Duration,
    pub(super) tool_timeout: Duration,
    pub(super) sinks: Vec<Arc<dyn DecisionSink>>,
    pub(super) rng: Mutex<StdRng>,
    /// Who decides whether a call needs a person, and how long one may take.
    pub(super) approvals: ApprovalSettings,
    /// The information-flow guard's settings.
    pub(super) flow: FlowSettings,
    /// Where the records of successful read-only calls wait for their batch.
    pub(super) successes: SuccessWriter,
    /// The counters every decision adds to.
    #[cfg(feature = "otel")]
    pub(super) metrics: super::trace::Metrics,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("tools", &self.inner.toolbox)
            .field("store", &self.inner.store)
            .finish()
    }
}

impl Gate {
    pub(super) fn from_inner(inner: Inner) -> Self {
        Gate { inner: Arc::new(inner) }
    }

    pub(super) fn inner(&self) -> &Inner {
        &self.inner
    }

    /// The toolbox.
    pub fn toolbox(&self) -> &Toolbox {
        &self.inner.toolbox
    }

    /// The store: the intent ledger, task state and the users' token windows.
    pub fn store(&self) -> &Arc<dyn Storage> {
        &self.inner.store
    }

    /// The budgets.
    pub fn budget(&self) -> &Budget {
        &self.inner.budget
    }

    /// The sanitizer applied to every text the model sees.
    pub fn sanitizer(&self) -> &Sanitizer {
        &self.inner.sanitizer
    }

    /// The sanitizer applied to tool results (`None` when results reach the
    /// model unsanitized): what a server uses on a structured copy of a
    /// result so that it carries no more than the result's text does.
    pub fn result_sanitizer(&self) -> Option<&Sanitizer> {
        self.inner.result_sanitizer.as_ref()
    }

    /// Writes every decision record still queued and waits until it is in
    /// the store. The records of successful read-only calls are written in
    /// the background, in batches, so that such a call waits for no disk;
    /// everything else is written before its step returns. Call this before
    /// the process exits (a crash loses at most those queued records) and
    /// before reading the decision log of calls just made. The gate stays
    /// usable afterwards.
    pub async fn shutdown(&self) {
        self.inner.successes.flush().await;
    }

    /// Repair tokens that count in `user`'s window now, for every worker on
    /// the store.
    pub async fn repair_tokens_used(&self, user: &str) -> Result<u64, LedgerError> {
        let limit = self.inner.budget.token_limit();
        self.inner.store.repair_tokens_used(user, &limit).await
    }
}
