//! gate's intent ledger: claims, dispatches and outcomes of side-effecting tool
//! calls in memory, SQLite or PostgreSQL.
//!
//! A charge that timed out may have happened. The agent must not charge again,
//! and a person must be able to find out and finish the job. That takes a
//! record written before the call and kept until someone resolves it: this
//! crate is that record. It provides
//!
//! * intent keys and fingerprints ([`fingerprint`], [`minted_intent_key`],
//!   [`derived_intent_key`]);
//! * the [`Ledger`] trait, the intent protocol: claim → dispatch → finish,
//!   with leases, fencing (compare-and-set on state and attempt), replay of
//!   finished outcomes, `KeyReused` and `InProgress`;
//! * the [`Reconcile`] trait: reconciliation of records whose outcome is
//!   unknown, a recovery sweep and retention;
//! * three stores chosen by URL ([`open`]): `memory:`, `sqlite:gate.db` (the
//!   embedded default: one file, WAL, `synchronous=FULL`; feature `sqlite`, on
//!   by default) and `postgres://…` (many workers on many machines; feature
//!   `postgres`);
//! * the decision log ([`DecisionLog`], [`DecisionRecord`]) in the same
//!   store, and its summary for `gate report` ([`DecisionReport`]);
//! * task state ([`TaskStore`]): every task's history and terminal flag, so
//!   any worker resumes a task exactly, with its [`FailureReport`] once it
//!   failed; and the per-user repair-token windows every worker shares,
//!   written together with a decision in one [`TaskTransaction`];
//! * approval requests ([`Approvals`], [`ApprovalRecord`]): calls waiting
//!   for a person, decided by a compare-and-set;
//! * gate's vocabulary ([`FailureClass`], [`Action`], [`FailureReason`]), typed
//!   end to end and stored by name.
//!
//! Each trait is one concern, as small as the concern allows: a tool that
//! only reconciles needs [`Reconcile`], a report only [`DecisionLog`].
//! [`open`] returns the whole store as one [`Storage`]: all four over the
//! same tables.
//!
//! # Calling it from the runtime
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolgate_ledger::LedgerError> {
//! use std::time::Duration;
//! use toolgate_ledger::{Claim, ClaimRequest, Finish, fingerprint, minted_intent_key};
//!
//! let ledger = toolgate_ledger::open("sqlite:gate.db").await?;
//! let args = serde_json::json!({"customer_id": "cus_1", "amount_cents": 4200});
//! let req = ClaimRequest {
//!     user: "user-42".into(),
//!     key: minted_intent_key("task-7", "pay INV-42"),
//!     fingerprint: fingerprint(&args),
//!     task_id: "task-7".into(),
//!     tool: "charge_card".into(),
//!     idempotent: false,
//!     lease: Duration::from_secs(60),
//!     owner: None,
//! };
//! match ledger.claim(&req).await {
//!     Ok(Claim::Acquired(lease)) => {
//!         let lease = ledger.dispatch(&lease).await?; // durable before the call
//!         // ... run the tool; on a timeout:
//!         ledger.finish(&lease, Finish::OutcomeUnknown { error: "timed out".into() }).await?;
//!     }
//!     Ok(Claim::Replay { outcome, .. }) => { /* return outcome.value */ }
//!     Ok(Claim::OutcomeUnknown(record)) => { /* Fail: needs reconciliation */ }
//!     Err(e) if e.is_in_progress() => { /* wait, claim again */ }
//!     Err(e) => return Err(e), // key reused, invalid key, store unavailable
//! }
//! # Ok(()) }
//! ```
//!
//! # Storage
//!
//! Both SQL stores hold five tables (plus `gate_schema`, the migration
//! version): `gate_intents`, one row per `(user_id, intent_key)` with the
//! state, attempt, lease, timestamps (integer milliseconds since the epoch),
//! stored outcome (JSON text), last error and reconciliation;
//! `gate_decisions`, the append-only decision log; `gate_tasks`, one row per
//! `(user_id, task_id)` with the task's revision, state and failure report
//! (JSON text) and its terminal flag; `gate_token_windows`, one row per
//! user and bucket length with the window's eleven buckets; and
//! `gate_approvals`, one row per approval request (its status, times and
//! the request as JSON text, see [`Approvals`]). Nothing is deleted except
//! by [`Reconcile::purge_expired`] (finished records past retention) and
//! [`Ledger::release`] (a first attempt given up before dispatch). Schema
//! version 4 added, on PostgreSQL, the function `gate_not_applied()`, which
//! a decision committed in one statement raises through when a condition
//! does not hold ([`TaskStore::settle_at_once`]); version 3 added
//! `gate_approvals`; version 2 moved version 1's decision
//! log, whose classes and actions were free strings, to
//! `gate_decisions_v1`.
//!
//! # Feature `testing`
//!
//! For gate's own tests and benches, not covered by semver: the `testing`
//! module counts a store's commits (`CountingStore`), opens a store with its
//! SQL pool in reach (`open_store`, `RawPool`) and drops a test's PostgreSQL
//! schema (`drop_pg_schema`).
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod approval;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod at_once;
mod decision;
mod decision_id;
mod error;
mod failure;
mod flow;
mod future;
mod keys;
mod ledger;
mod memory;
mod reconcile;
mod record;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
mod task;
#[cfg(feature = "testing")]
pub mod testing;
mod time;
mod vocab;

use std::sync::Arc;
use std::time::Duration;

pub use approval::{
    ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalReport, Approvals, Verdict, new_approval_id,
};
pub use decision::{
    ClassActionCount, DecisionLog, DecisionQuery, DecisionRecord, DecisionReport, FollowUps, TaskSummary,
};
pub use decision_id::{DecisionId, ParseDecisionIdError};
pub use error::LedgerError;
pub use failure::FailureReport;
pub use flow::{FlowMark, FlowState, MAX_FLOW_MARKS, MAX_FLOW_SOURCES, MAX_USER_PHRASES, seen};
pub use future::BoxFuture;
pub use keys::{
    MAX_KEY_LEN, MIN_DISTINCT_KEY_CHARS, MIN_KEY_LEN, canonical_fingerprint, canonical_json, derived_intent_key,
    fingerprint, key_args_fingerprint, minted_intent_key, validate_key,
};
pub use ledger::{Ledger, StoreKind, new_owner_token};
pub use reconcile::Reconcile;
pub use record::{
    Claim, ClaimRequest, Finish, Lease, LedgerRecord, Outcome, Reconciliation, Resolution, ResolveRequest, State,
    SweepReport,
};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::SCHEMA_VERSION;
pub use task::{OpenApproval, SettledAtOnce, Settlement, TaskRecord, TaskState, TaskStore, TaskTransaction};
pub use time::{Clock, ManualClock, SystemClock, Timestamp};
pub use vocab::{Action, Ambiguity, ApprovalStatus, FailureClass, FailureReason, UnknownName};

/// Everything gate keeps in one store: the intent [`Ledger`], its
/// [`Reconcile`] side, the [`DecisionLog`], the [`TaskStore`] (task state
/// and token windows) and the [`Approvals`] people decide, over the same
/// tables and connections. Every store [`open`] returns is one.
pub trait Storage: Ledger + Reconcile + DecisionLog + TaskStore + Approvals {}

impl<T: Ledger + Reconcile + DecisionLog + TaskStore + Approvals + ?Sized> Storage for T {}

use ledger::Core;
use memory::MemoryBackend;
#[cfg(feature = "postgres")]
use sql::PgBackend;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use sql::SqlOptions;
#[cfg(feature = "sqlite")]
use sql::SqliteBackend;

/// How finished records are kept by default: 24 hours (Stripe's retention).
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);

/// How many decision records the memory store keeps by default: the recent
/// past of a long run, a few megabytes (the SQL stores keep them all).
pub const DEFAULT_MEMORY_DECISIONS: usize = 10_000;

/// How long an SQLite writer waits for the file lock by default.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Settings for [`open_with`].
#[derive(Clone, Debug)]
pub struct LedgerConfig {
    /// Where "now" comes from (default: [`SystemClock`]).
    pub clock: Arc<dyn Clock>,
    /// How long finished records are kept (default: [`DEFAULT_RETENTION`]).
    pub retention: Duration,
    /// SQLite busy timeout; also the pool acquire timeout (at least 5 s).
    pub busy_timeout: Duration,
    /// Pool size (default: 4 for SQLite, 16 for PostgreSQL).
    pub max_connections: Option<u32>,
    /// PostgreSQL only: keep the ledger's tables in this schema (created if
    /// missing; `[a-z_][a-z0-9_]*`). Lets tests, or several gate deployments,
    /// share one database without seeing each other's records.
    pub pg_schema: Option<String>,
    /// The memory store only: how many of the most recent decision records
    /// it keeps (default: [`DEFAULT_MEMORY_DECISIONS`]). It has no disk to
    /// put them on, so a long-running process would otherwise grow without
    /// bound; older records make room for new ones, and an id is logged once
    /// among the records kept. 0 keeps none.
    pub memory_decisions: usize,
}

impl Default for LedgerConfig {
    fn default() -> Self {
        LedgerConfig {
            clock: Arc::new(SystemClock),
            retention: DEFAULT_RETENTION,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            max_connections: None,
            pg_schema: None,
            memory_decisions: DEFAULT_MEMORY_DECISIONS,
        }
    }
}

/// A store just opened, by kind: [`open_with`] hands it out as one
/// [`Storage`]; the `testing` module also reaches into its backend.
enum Opened {
    Memory(Arc<Core<MemoryBackend>>),
    #[cfg(feature = "sqlite")]
    Sqlite(Arc<Core<SqliteBackend>>),
    #[cfg(feature = "postgres")]
    Postgres(Arc<Core<PgBackend>>),
}

/// Opens the store named by `url` with default settings.
///
/// URLs: `memory:`; `sqlite:PATH` / `sqlite://PATH` (created on first use with
/// its schema migrated; feature `sqlite`); `postgres://…` / `postgresql://…`
/// (feature `postgres`). A URL of a store whose feature is off is refused with
/// an error for which [`LedgerError::is_invalid_url`] holds, naming the feature.
pub async fn open(url: &str) -> Result<Arc<dyn Storage>, LedgerError> {
    open_with(url, &LedgerConfig::default()).await
}

/// Opens the store named by `url` with `config`.
pub async fn open_with(url: &str, config: &LedgerConfig) -> Result<Arc<dyn Storage>, LedgerError> {
    Ok(match open_backend(url, config).await? {
        Opened::Memory(core) => core,
        #[cfg(feature = "sqlite")]
        Opened::Sqlite(core) => core,
        #[cfg(feature = "postgres")]
        Opened::Postgres(core) => core,
    })
}

async fn open_backend(url: &str, config: &LedgerConfig) -> Result<Opened, LedgerError> {
    let trimmed = url.trim();
    if trimmed == "memory:" || trimmed == "memory://" {
        return Ok(Opened::Memory(Arc::new(Core {
            backend: MemoryBackend::new(config.memory_decisions),
            clock: config.clock.clone(),
            retention: config.retention,
            kind: StoreKind::Memory,
        })));
    }
    if trimmed.starts_with("sqlite:") {
        return open_sqlite(trimmed, config).await;
    }
    if trimmed.starts_with("postgres://") || trimmed.starts_with("postgresql://") {
        return open_postgres(trimmed, config).await;
    }
    Err(LedgerError::invalid_url(format!(
        "unknown ledger store URL {url:?}; use memory:, sqlite:PATH or postgres://…"
    )))
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn sql_options(config: &LedgerConfig) -> SqlOptions {
    SqlOptions {
        busy_timeout: config.busy_timeout,
        max_connections: config.max_connections,
        #[cfg(feature = "postgres")]
        pg_schema: config.pg_schema.clone(),
    }
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(url: &str, config: &LedgerConfig) -> Result<Opened, LedgerError> {
    Ok(Opened::Sqlite(Arc::new(Core {
        backend: SqliteBackend::open(url, &sql_options(config)).await?,
        clock: config.clock.clone(),
        retention: config.retention,
        kind: StoreKind::Sqlite,
    })))
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(url: &str, _config: &LedgerConfig) -> Result<Opened, LedgerError> {
    Err(needs_feature(url, "sqlite"))
}

#[cfg(feature = "postgres")]
async fn open_postgres(url: &str, config: &LedgerConfig) -> Result<Opened, LedgerError> {
    Ok(Opened::Postgres(Arc::new(Core {
        backend: PgBackend::open(url, &sql_options(config)).await?,
        clock: config.clock.clone(),
        retention: config.retention,
        kind: StoreKind::Postgres,
    })))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(url: &str, _config: &LedgerConfig) -> Result<Opened, LedgerError> {
    Err(needs_feature(url, "postgres"))
}

/// A well-formed URL of a store this build leaves out: said plainly, rather
/// than as an unknown URL, so the fix (a cargo feature) is in the message.
#[cfg(not(all(feature = "sqlite", feature = "postgres")))]
fn needs_feature(url: &str, feature: &str) -> LedgerError {
    LedgerError::invalid_url(format!(
        "the store `{url}` needs gate's `{feature}` feature (gate-ledger's `{feature}`), which this build leaves out"
    ))
}
