//! [`Reconcile`]: what a person, or a maintenance job, does with the ledger.
//!
//! The runtime never calls these: it claims, dispatches and finishes intents
//! ([`Ledger`](crate::Ledger)). What happens after (finding the records whose
//! outcome is unknown, resolving them, moving on the leases of workers that
//! died, purging what retention let go) is someone else's work, on its own
//! schedule, so it is a trait of its own: a tool that only reconciles needs
//! only this one, and a store that is read-only to a dashboard can leave the
//! intent protocol out.

use std::time::Duration;

use crate::error::LedgerError;
use crate::future::BoxFuture;
use crate::record::{LedgerRecord, ResolveRequest, SweepReport};
use crate::time::Timestamp;

/// Reconciliation and maintenance of the intent ledger (`gate reconcile`,
/// the recovery sweep, retention).
///
/// Maintenance calls take the time explicitly, so a job can run them "as
/// of" a given moment.
pub trait Reconcile: Send + Sync {
    /// How long finished records are kept.
    fn retention(&self) -> Duration;

    /// Every record with `key`, whatever the user (for `gate reconcile show KEY`).
    fn find<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Vec<LedgerRecord>, LedgerError>>;

    /// Records that need a human: `OutcomeUnknown`, oldest dispatch first.
    /// Run [`Reconcile::sweep_expired_leases`] first so that calls whose worker
    /// died while dispatched are listed too.
    fn list_unresolved<'a>(&'a self, limit: u32) -> BoxFuture<'a, Result<Vec<LedgerRecord>, LedgerError>>;

    /// Resolves an `OutcomeUnknown` record. Resolving again with the same
    /// resolution is a no-op returning the record; with a different one it is a
    /// reconcile conflict. `NotExecuted` lets a new claim run the call again.
    fn resolve<'a>(&'a self, req: &'a ResolveRequest) -> BoxFuture<'a, Result<LedgerRecord, LedgerError>>;

    /// Recovery sweep: every in-flight record whose lease expired at `now`
    /// (at most `limit` of them, oldest expiry first) moves on: dispatched
    /// records of non-idempotent tools become `OutcomeUnknown`; never-dispatched
    /// records and idempotent ones become `FailedRetryable`. On PostgreSQL the
    /// batch is selected `FOR UPDATE SKIP LOCKED`, so concurrent sweepers split
    /// the work.
    fn sweep_expired_leases<'a>(
        &'a self,
        now: Timestamp,
        limit: u32,
    ) -> BoxFuture<'a, Result<SweepReport, LedgerError>>;

    /// Deletes finished records whose retention ran out at `now`; returns how
    /// many. `OutcomeUnknown` and in-flight records are never purged.
    fn purge_expired<'a>(&'a self, now: Timestamp) -> BoxFuture<'a, Result<u64, LedgerError>>;
}
