//! The SQL stores: SQLite (the embedded default) and PostgreSQL (many workers).
//!
//! Both run the same statements, written once with PostgreSQL's `$N`
//! placeholders and rewritten to SQLite's `?N`, so the two stores cannot drift
//! apart in what a transition checks. Every ledger transition is one statement
//! whose `WHERE` compares `(state, attempt, owner)`: atomic on its own, and
//! correctness rests on the primary key and compare-and-set rather than on an
//! isolation level. Task writes compare the task's revision the same way.
//!
//! The one place a transaction spans round trips is a decision's commit
//! (task state, decision record, token reservation): SQLite opens it with
//! `BEGIN IMMEDIATE`, taking the file's write lock up front, and PostgreSQL
//! locks the user's window row with `SELECT … FOR UPDATE` before reading it,
//! so "read the window, check, add" is atomic across every worker. A
//! decision that reads nothing between its writes (every side effect's
//! outcome) goes in one round trip instead, with the same conditions
//! (`at_once.rs`). Times are
//! `BIGINT` milliseconds and booleans `BIGINT` 0/1, so both stores hold
//! identical values; task state, failure reports and windows are JSON text.
//!
//! Each store is behind its cargo feature (`sqlite`, `postgres`); this module
//! is compiled when either is on.

use std::time::Duration;

use sqlx::Row;

use toolgate_budget::{Reservation, TokenLimit, TokenWindow, TokensExhausted};

use crate::approval::{ApprovalQuery, ApprovalRecord};
use crate::at_once::{AtOnceStatements, Form, NOT_APPLIED_FUNCTION, Shape, TaskWrite, Writes};
use crate::decision::{DecisionQuery, DecisionRecord};
use crate::error::LedgerError;
use crate::future::BoxFuture;
use crate::ledger::{Backend, Change, Expect, FinishWrite, Update};
use crate::record::{Finish, Lease, LedgerRecord, Outcome, Reconciliation, Resolution, State};
use crate::task::{SettledAtOnce, Settlement, TaskRecord, TaskTransaction};
use crate::time::{Clock, Timestamp};
use crate::vocab::ApprovalStatus;

type Res<T> = Result<T, LedgerError>;

/// The record columns, in bind order.
const COLS: &str = "user_id, intent_key, fingerprint, task_id, tool, idempotent, state, \
attempt, owner, lease_expires_at, claimed_at, dispatched_at, finished_at, expires_at, \
outcome, outcome_is_error, error, resolution, resolution_note, resolved_at, updated_at";

const RETAINED_STATES: &str = "('succeeded', 'failed_permanent', 'failed_retryable', \
'reconciled_succeeded', 'reconciled_failed_permanent', 'reconciled_not_executed')";

/// Schema migrations, applied in order, each once; `{seq}` is the dialect's
/// auto-increment key type.
const MIGRATIONS: &[(i64, &[&str])] = &[
    (
        1,
        &[
            "CREATE TABLE IF NOT EXISTS gate_intents (
            user_id TEXT NOT NULL,
            intent_key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            task_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            idempotent BIGINT NOT NULL,
            state TEXT NOT NULL,
            attempt BIGINT NOT NULL,
            owner TEXT,
            lease_expires_at BIGINT,
            claimed_at BIGINT NOT NULL,
            dispatched_at BIGINT,
            finished_at BIGINT,
            expires_at BIGINT,
            outcome TEXT,
            outcome_is_error BIGINT,
            error TEXT,
            resolution TEXT,
            resolution_note TEXT,
            resolved_at BIGINT,
            updated_at BIGINT NOT NULL,
            PRIMARY KEY (user_id, intent_key)
        )",
            "CREATE INDEX IF NOT EXISTS gate_intents_by_key ON gate_intents (intent_key)",
            "CREATE INDEX IF NOT EXISTS gate_intents_by_lease ON gate_intents (state, lease_expires_at)",
            "CREATE INDEX IF NOT EXISTS gate_intents_by_expiry ON gate_intents (expires_at)",
            "CREATE TABLE IF NOT EXISTS gate_decisions (
            seq {seq},
            at BIGINT NOT NULL,
            task_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            class TEXT NOT NULL,
            action TEXT NOT NULL,
            attempt BIGINT NOT NULL,
            attempts_used BIGINT NOT NULL,
            repair_tokens BIGINT NOT NULL,
            latency_added_ms BIGINT NOT NULL,
            message_hash TEXT NOT NULL,
            intent_key TEXT
        )",
            "CREATE INDEX IF NOT EXISTS gate_decisions_by_task ON gate_decisions (task_id, at)",
            "CREATE INDEX IF NOT EXISTS gate_decisions_by_time ON gate_decisions (at)",
        ],
    ),
    (
        2,
        &[
            // Version 1 logged classes and actions as free strings ("none",
            // "ledger", "retry") that the typed vocabulary cannot read back
            // faithfully; those records stay, unread, in gate_decisions_v1.
            "DROP INDEX IF EXISTS gate_decisions_by_task",
            "DROP INDEX IF EXISTS gate_decisions_by_time",
            "ALTER TABLE gate_decisions RENAME TO gate_decisions_v1",
            "CREATE TABLE gate_decisions (
            seq {seq},
            decision_id TEXT NOT NULL UNIQUE,
            at BIGINT NOT NULL,
            task_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            class TEXT,
            action TEXT NOT NULL,
            fail_reason TEXT,
            attempt BIGINT NOT NULL,
            attempts_used BIGINT NOT NULL,
            repair_tokens BIGINT NOT NULL,
            latency_added_ms BIGINT NOT NULL,
            message_hash TEXT NOT NULL,
            intent_key TEXT
        )",
            "CREATE INDEX gate_decisions_by_task ON gate_decisions (task_id, at)",
            "CREATE INDEX gate_decisions_by_time ON gate_decisions (at)",
            "CREATE TABLE gate_tasks (
            user_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            revision BIGINT NOT NULL,
            writer TEXT NOT NULL,
            terminal BIGINT NOT NULL,
            state TEXT NOT NULL,
            failure TEXT,
            failed_reason TEXT,
            failed_intent_key TEXT,
            failed_at BIGINT,
            reopened_at BIGINT,
            updated_at BIGINT NOT NULL,
            PRIMARY KEY (user_id, task_id)
        )",
            "CREATE INDEX gate_tasks_failed ON gate_tasks (terminal, failed_at)",
            "CREATE INDEX gate_tasks_by_failed_intent ON gate_tasks (failed_intent_key)",
            "CREATE TABLE gate_token_windows (
            user_id TEXT NOT NULL,
            bucket_ms BIGINT NOT NULL,
            slots TEXT NOT NULL,
            updated_at BIGINT NOT NULL,
            PRIMARY KEY (user_id, bucket_ms)
        )",
        ],
    ),
    (
        3,
        &[
            // The columns a list filters and orders by; the request itself is
            // the JSON text in `record`.
            "CREATE TABLE gate_approvals (
            approval_id TEXT NOT NULL PRIMARY KEY,
            user_id TEXT NOT NULL,
            task_id TEXT NOT NULL,
            status TEXT NOT NULL,
            requested_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            decided_at BIGINT,
            record TEXT NOT NULL
        )",
            "CREATE INDEX gate_approvals_by_status ON gate_approvals (status, requested_at)",
            "CREATE INDEX gate_approvals_by_task ON gate_approvals (user_id, task_id)",
        ],
    ),
    // What a decision's one-statement commit raises through (PostgreSQL:
    // `at_once.rs`); SQLite, which has no stored functions, records the
    // version and runs nothing.
    (4, &[NOT_APPLIED_FUNCTION]),
];

/// The latest schema version this crate writes.
pub const SCHEMA_VERSION: i64 = 4;

/// The decision columns, in bind order.
const DECISION_COLS: &str = "decision_id, at, task_id, user_id, call_id, tool, class, action, fail_reason, \
attempt, attempts_used, repair_tokens, latency_added_ms, message_hash, intent_key";

/// Decision records per multi-row insert: 64 × 15 parameters stays far
/// below SQLite's (32,766) and PostgreSQL's (65,535) limits.
const ROWS_PER_INSERT: usize = 64;

/// `INSERT … VALUES (…), (…) …` for `rows` decision records, each once per id.
///
/// SQLite's placeholders are anonymous (`?`): sqlx asks SQLite for the name
/// of every parameter it binds, and SQLite finds a name by a linear scan of
/// the statement's names, so numbered placeholders make binding a batch
/// quadratic (with 960 of them it was most of a batch's time).
fn multi_row_decision_insert(rows: usize, dialect: Dialect) -> String {
    let columns = DECISION_COLS.split(',').count();
    let values: Vec<String> = (0..rows)
        .map(|row| {
            let params: Vec<String> = (1..=columns)
                .map(|c| match dialect {
                    #[cfg(feature = "sqlite")]
                    Dialect::Sqlite => "?".to_owned(),
                    Dialect::Postgres => format!("${}", row * columns + c),
                })
                .collect();
            format!("({})", params.join(", "))
        })
        .collect();
    format!(
        "INSERT INTO gate_decisions ({DECISION_COLS}) VALUES {} ON CONFLICT (decision_id) DO NOTHING",
        values.join(", ")
    )
}

/// The task columns, in bind order.
const TASK_COLS: &str = "user_id, task_id, revision, writer, terminal, state, failure, failed_reason, \
failed_intent_key, failed_at, reopened_at, updated_at";

/// The statements, rendered for one dialect.
#[derive(Debug)]
struct Statements {
    dialect: Dialect,
    insert: String,
    load: String,
    find: String,
    replace: String,
    dispatch: String,
    renew: String,
    finish: String,
    delete: String,
    sweep: String,
    purge: String,
    list_state: String,
    append_decision: String,
    /// The multi-row insert of a full chunk of [`ROWS_PER_INSERT`] records.
    append_decisions: String,
    list_decisions: String,
    load_task: String,
    task_revision: String,
    insert_task: String,
    update_task: String,
    list_failed_tasks: String,
    tasks_failed_on: String,
    load_window: String,
    lock_window: String,
    insert_window: String,
    update_window: String,
    /// Records that a schema migration was applied.
    record_schema_version: String,
    insert_approval: String,
    load_approval: String,
    list_approvals: String,
    decide_approval: String,
    /// A decision's writes in one round trip, by which writes it makes.
    at_once: Option<AtOnceStatements>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dialect {
    #[cfg(feature = "sqlite")]
    Sqlite,
    Postgres,
}

/// Rewrites `$N` placeholders to SQLite's numbered `?N`.
#[cfg(feature = "sqlite")]
fn to_sqlite(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

impl Statements {
    fn new(d: Dialect) -> Self {
        let lock = match d {
            #[cfg(feature = "sqlite")]
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
        };
        // SQLite transactions take the file's write lock up front (BEGIN
        // IMMEDIATE); PostgreSQL locks the user's window row.
        let row_lock = match d {
            #[cfg(feature = "sqlite")]
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE",
        };
        let placeholders = (1..=21).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
        let pk = "user_id = $1 AND intent_key = $2";
        let fence = "attempt = $3 AND owner = $4";
        let finish_update = format!(
            "UPDATE gate_intents SET state = $6, finished_at = $5, expires_at = $7, \
             outcome = $8, outcome_is_error = $9, error = $10, lease_expires_at = NULL, \
             updated_at = $5 \
             WHERE {pk} AND {fence} AND (state = 'dispatched' \
             OR ($11 = 1 AND state = 'claimed'))"
        );
        let update_task = "UPDATE gate_tasks SET revision = $3, writer = $4, terminal = $5, state = $6, \
             failure = $7, failed_reason = $8, failed_intent_key = $9, failed_at = $10, reopened_at = $11, \
             updated_at = $12 WHERE user_id = $1 AND task_id = $2 AND revision = $13";
        let s = Statements {
            dialect: Dialect::Postgres,
            insert: format!(
                "INSERT INTO gate_intents ({COLS}) VALUES ({placeholders}) \
                 ON CONFLICT (user_id, intent_key) DO NOTHING"
            ),
            load: format!("SELECT {COLS} FROM gate_intents WHERE {pk}"),
            find: format!("SELECT {COLS} FROM gate_intents WHERE intent_key = $1 ORDER BY user_id"),
            replace: format!(
                "UPDATE gate_intents SET fingerprint = $3, task_id = $4, tool = $5, \
                 idempotent = $6, state = $7, attempt = $8, owner = $9, lease_expires_at = $10, \
                 claimed_at = $11, dispatched_at = $12, finished_at = $13, expires_at = $14, \
                 outcome = $15, outcome_is_error = $16, error = $17, resolution = $18, \
                 resolution_note = $19, resolved_at = $20, updated_at = $21 \
                 WHERE {pk} AND state = $22 AND attempt = $23 AND owner IS NOT DISTINCT FROM $24"
            ),
            dispatch: format!(
                "UPDATE gate_intents SET state = 'dispatched', dispatched_at = $5, \
                 lease_expires_at = $6, updated_at = $5 \
                 WHERE {pk} AND {fence} AND state = 'claimed' AND lease_expires_at > $5 \
                 RETURNING {COLS}"
            ),
            renew: format!(
                "UPDATE gate_intents SET lease_expires_at = $6, updated_at = $5 \
                 WHERE {pk} AND {fence} AND (state = 'dispatched' \
                 OR (state = 'claimed' AND lease_expires_at > $5)) RETURNING {COLS}"
            ),
            finish: format!("{finish_update} RETURNING {COLS}"),
            delete: format!(
                "DELETE FROM gate_intents WHERE {pk} AND state = $3 AND attempt = $4 \
                 AND owner IS NOT DISTINCT FROM $5"
            ),
            sweep: format!(
                "UPDATE gate_intents SET \
                 state = CASE WHEN state = 'dispatched' AND idempotent = 0 \
                   THEN 'outcome_unknown' ELSE 'failed_retryable' END, \
                 expires_at = CASE WHEN state = 'dispatched' AND idempotent = 0 \
                   THEN NULL ELSE $2 END, \
                 error = CASE WHEN state = 'dispatched' AND idempotent = 0 \
                   THEN 'the lease expired while the call was dispatched' \
                   WHEN state = 'dispatched' \
                   THEN 'the lease expired while the call was dispatched (idempotent tool)' \
                   ELSE 'the lease expired before dispatch' END, \
                 finished_at = $1, lease_expires_at = NULL, updated_at = $1 \
                 WHERE (user_id, intent_key) IN (SELECT user_id, intent_key FROM gate_intents \
                   WHERE state IN ('claimed', 'dispatched') AND lease_expires_at <= $1 \
                   ORDER BY lease_expires_at LIMIT $3{lock}) \
                 RETURNING {COLS}"
            ),
            purge: format!(
                "DELETE FROM gate_intents WHERE expires_at IS NOT NULL AND expires_at <= $1 \
                 AND state IN {RETAINED_STATES}"
            ),
            list_state: format!(
                "SELECT {COLS} FROM gate_intents WHERE state = $1 \
                 ORDER BY COALESCE(dispatched_at, claimed_at), claimed_at, user_id, intent_key \
                 LIMIT $2"
            ),
            append_decision: format!(
                "INSERT INTO gate_decisions ({DECISION_COLS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
                 ON CONFLICT (decision_id) DO NOTHING"
            ),
            append_decisions: multi_row_decision_insert(ROWS_PER_INSERT, Dialect::Postgres),
            list_decisions: format!(
                "SELECT {DECISION_COLS} FROM gate_decisions \
                 WHERE ($1 IS NULL OR task_id = $1) AND ($2 IS NULL OR user_id = $2) \
                 AND ($3 IS NULL OR at >= $3) AND ($4 IS NULL OR at < $4) \
                 ORDER BY at, seq LIMIT $5"
            ),
            load_task: format!("SELECT {TASK_COLS} FROM gate_tasks WHERE user_id = $1 AND task_id = $2"),
            task_revision: "SELECT revision FROM gate_tasks WHERE user_id = $1 AND task_id = $2".to_owned(),
            insert_task: format!(
                "INSERT INTO gate_tasks ({TASK_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
                 ON CONFLICT (user_id, task_id) DO NOTHING"
            ),
            update_task: update_task.to_owned(),
            list_failed_tasks: format!(
                "SELECT {TASK_COLS} FROM gate_tasks WHERE terminal = 1 \
                 ORDER BY CASE WHEN failed_reason IN ('outcome_unknown', 'outcome_not_recorded') THEN 0 ELSE 1 END, \
                 failed_at, user_id, task_id LIMIT $1"
            ),
            tasks_failed_on: format!(
                "SELECT {TASK_COLS} FROM gate_tasks WHERE terminal = 1 AND user_id = $1 AND failed_intent_key = $2 \
                 ORDER BY task_id"
            ),
            load_window: "SELECT slots FROM gate_token_windows WHERE user_id = $1 AND bucket_ms = $2".to_owned(),
            lock_window: format!(
                "SELECT slots FROM gate_token_windows WHERE user_id = $1 AND bucket_ms = $2{row_lock}"
            ),
            insert_window: "INSERT INTO gate_token_windows (user_id, bucket_ms, slots, updated_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (user_id, bucket_ms) DO NOTHING"
                .to_owned(),
            update_window: "UPDATE gate_token_windows SET slots = $3, updated_at = $4 \
                 WHERE user_id = $1 AND bucket_ms = $2"
                .to_owned(),
            record_schema_version: "INSERT INTO gate_schema (version) VALUES ($1)".to_owned(),
            insert_approval: "INSERT INTO gate_approvals (approval_id, user_id, task_id, status, requested_at, \
                 expires_at, decided_at, record) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
                .to_owned(),
            load_approval: "SELECT record FROM gate_approvals WHERE approval_id = $1".to_owned(),
            list_approvals: "SELECT record FROM gate_approvals \
                 WHERE ($1 IS NULL OR status = $1) AND ($2 IS NULL OR expires_at > $2) \
                 AND ($3 IS NULL OR expires_at <= $3) AND ($4 IS NULL OR user_id = $4) \
                 AND ($5 IS NULL OR task_id = $5) ORDER BY requested_at, approval_id LIMIT $6"
                .to_owned(),
            decide_approval: "UPDATE gate_approvals SET status = $2, decided_at = $3, record = $4 \
                 WHERE approval_id = $1 AND status = 'pending' AND expires_at > $3"
                .to_owned(),
            at_once: None,
        };
        let writes = Writes {
            finish_update: &finish_update,
            update_task,
            task_cols: TASK_COLS,
            decision_cols: DECISION_COLS,
        };
        match d {
            Dialect::Postgres => Statements {
                at_once: Some(AtOnceStatements::new(Form::Postgres, &writes)),
                ..s
            },
            #[cfg(feature = "sqlite")]
            Dialect::Sqlite => Statements {
                dialect: Dialect::Sqlite,
                append_decisions: multi_row_decision_insert(ROWS_PER_INSERT, Dialect::Sqlite),
                insert: to_sqlite(&s.insert),
                load: to_sqlite(&s.load),
                find: to_sqlite(&s.find),
                replace: to_sqlite(&s.replace),
                dispatch: to_sqlite(&s.dispatch),
                renew: to_sqlite(&s.renew),
                finish: to_sqlite(&s.finish),
                delete: to_sqlite(&s.delete),
                sweep: to_sqlite(&s.sweep),
                purge: to_sqlite(&s.purge),
                list_state: to_sqlite(&s.list_state),
                append_decision: to_sqlite(&s.append_decision),
                list_decisions: to_sqlite(&s.list_decisions),
                load_task: to_sqlite(&s.load_task),
                task_revision: to_sqlite(&s.task_revision),
                insert_task: to_sqlite(&s.insert_task),
                update_task: to_sqlite(&s.update_task),
                list_failed_tasks: to_sqlite(&s.list_failed_tasks),
                tasks_failed_on: to_sqlite(&s.tasks_failed_on),
                load_window: to_sqlite(&s.load_window),
                lock_window: to_sqlite(&s.lock_window),
                insert_window: to_sqlite(&s.insert_window),
                update_window: to_sqlite(&s.update_window),
                record_schema_version: to_sqlite(&s.record_schema_version),
                insert_approval: to_sqlite(&s.insert_approval),
                load_approval: to_sqlite(&s.load_approval),
                list_approvals: to_sqlite(&s.list_approvals),
                decide_approval: to_sqlite(&s.decide_approval),
                at_once: Some(AtOnceStatements::new(Form::Sqlite, &writes).map(to_sqlite)),
            },
        }
    }
}

/// A record flattened to column values.
#[derive(Debug)]
struct RowValues {
    user: String,
    key: String,
    fingerprint: String,
    task_id: String,
    tool: String,
    idempotent: i64,
    state: String,
    attempt: i64,
    owner: Option<String>,
    lease_expires_at: Option<i64>,
    claimed_at: i64,
    dispatched_at: Option<i64>,
    finished_at: Option<i64>,
    expires_at: Option<i64>,
    outcome: Option<String>,
    outcome_is_error: Option<i64>,
    error: Option<String>,
    resolution: Option<String>,
    resolution_note: Option<String>,
    resolved_at: Option<i64>,
    updated_at: i64,
}

fn ms(t: Option<Timestamp>) -> Option<i64> {
    t.map(Timestamp::as_millis)
}

/// The stored text of an outcome's value.
fn outcome_json(o: &Outcome) -> Res<String> {
    serde_json::to_string(&o.value)
        .map_err(|e| LedgerError::invalid_input(format!("the outcome is not serialisable: {e}")))
}

impl RowValues {
    fn of(r: &LedgerRecord) -> Res<Self> {
        let outcome = r.outcome.as_ref().map(outcome_json).transpose()?;
        Ok(RowValues {
            user: r.user.clone(),
            key: r.key.clone(),
            fingerprint: r.fingerprint.clone(),
            task_id: r.task_id.clone(),
            tool: r.tool.clone(),
            idempotent: i64::from(r.idempotent),
            state: r.state.as_str().to_owned(),
            attempt: r.attempt,
            owner: r.owner.clone(),
            lease_expires_at: ms(r.lease_expires_at),
            claimed_at: r.claimed_at.as_millis(),
            dispatched_at: ms(r.dispatched_at),
            finished_at: ms(r.finished_at),
            expires_at: ms(r.expires_at),
            outcome,
            outcome_is_error: r.outcome.as_ref().map(|o| i64::from(o.is_error)),
            error: r.error.clone(),
            resolution: r.reconciliation.as_ref().map(|x| x.resolution.as_str().to_owned()),
            resolution_note: r.reconciliation.as_ref().and_then(|x| x.note.clone()),
            resolved_at: r.reconciliation.as_ref().map(|x| x.at.as_millis()),
            updated_at: r.updated_at.as_millis(),
        })
    }

    fn into_record(self) -> Res<LedgerRecord> {
        let ts = |v: Option<i64>| v.map(Timestamp::from_millis);
        let outcome = match (self.outcome, self.outcome_is_error) {
            (Some(text), Some(flag)) => Some(Outcome {
                value: serde_json::from_str(&text)
                    .map_err(|e| LedgerError::corrupt(format!("stored outcome of {} is not JSON: {e}", self.key)))?,
                is_error: flag != 0,
            }),
            _ => None,
        };
        let reconciliation = match (self.resolution, self.resolved_at) {
            (Some(r), Some(at)) => Some(Reconciliation {
                resolution: r
                    .parse::<Resolution>()
                    .map_err(|_| LedgerError::corrupt(format!("unknown resolution {r:?} of {}", self.key)))?,
                note: self.resolution_note,
                at: Timestamp::from_millis(at),
            }),
            _ => None,
        };
        Ok(LedgerRecord {
            state: self.state.parse::<State>()?,
            user: self.user,
            key: self.key,
            fingerprint: self.fingerprint,
            task_id: self.task_id,
            tool: self.tool,
            idempotent: self.idempotent != 0,
            attempt: self.attempt,
            owner: self.owner,
            lease_expires_at: ts(self.lease_expires_at),
            claimed_at: Timestamp::from_millis(self.claimed_at),
            dispatched_at: ts(self.dispatched_at),
            finished_at: ts(self.finished_at),
            expires_at: ts(self.expires_at),
            outcome,
            error: self.error,
            reconciliation,
            updated_at: Timestamp::from_millis(self.updated_at),
        })
    }
}

/// Binds the 21 record columns in `COLS` order.
macro_rules! bind_row {
    ($q:expr, $v:expr) => {
        $q.bind(&$v.user)
            .bind(&$v.key)
            .bind(&$v.fingerprint)
            .bind(&$v.task_id)
            .bind(&$v.tool)
            .bind($v.idempotent)
            .bind(&$v.state)
            .bind($v.attempt)
            .bind(&$v.owner)
            .bind($v.lease_expires_at)
            .bind($v.claimed_at)
            .bind($v.dispatched_at)
            .bind($v.finished_at)
            .bind($v.expires_at)
            .bind(&$v.outcome)
            .bind($v.outcome_is_error)
            .bind(&$v.error)
            .bind(&$v.resolution)
            .bind(&$v.resolution_note)
            .bind($v.resolved_at)
            .bind($v.updated_at)
    };
}

/// A decision record flattened to column values.
struct DecisionRow {
    id: String,
    at: i64,
    task_id: String,
    user: String,
    call_id: String,
    tool: String,
    class: Option<String>,
    action: String,
    fail_reason: Option<String>,
    attempt: i64,
    attempts_used: i64,
    repair_tokens: i64,
    latency_added_ms: i64,
    message_hash: String,
    intent_key: Option<String>,
}

impl DecisionRow {
    fn into_record(self) -> Res<DecisionRecord> {
        let corrupt = |e: crate::vocab::UnknownName| LedgerError::corrupt(format!("decision {}: {e}", self.id));
        Ok(DecisionRecord {
            class: self.class.as_deref().map(str::parse).transpose().map_err(corrupt)?,
            action: self.action.parse().map_err(corrupt)?,
            fail_reason: self
                .fail_reason
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(corrupt)?,
            id: self
                .id
                .parse()
                .map_err(|e: crate::ParseDecisionIdError| LedgerError::corrupt(format!("decision {}: {e}", self.id)))?,
            at: Timestamp::from_millis(self.at),
            task_id: self.task_id.into(),
            user: self.user.into(),
            call_id: self.call_id,
            tool: self.tool.into(),
            attempt: self.attempt,
            attempts_used: self.attempts_used,
            repair_tokens: self.repair_tokens,
            latency_added_ms: self.latency_added_ms,
            message_hash: self.message_hash,
            intent_key: self.intent_key,
        })
    }
}

/// Binds the 15 decision columns in `DECISION_COLS` order.
macro_rules! bind_decision {
    ($q:expr, $d:expr) => {
        // Rendered here, off the caller's path: a record holds its id as
        // 16 bytes.
        $q.bind($d.id.to_string())
            .bind($d.at.as_millis())
            .bind(&*$d.task_id)
            .bind(&*$d.user)
            .bind(&$d.call_id)
            .bind(&*$d.tool)
            .bind($d.class.map(|c| c.as_str()))
            .bind($d.action.as_str())
            .bind($d.fail_reason.map(|r| r.as_str()))
            .bind($d.attempt)
            .bind($d.attempts_used)
            .bind($d.repair_tokens)
            .bind($d.latency_added_ms)
            .bind(&$d.message_hash)
            .bind(&$d.intent_key)
    };
}

/// A task record flattened to column values.
struct TaskRow {
    user: String,
    task_id: String,
    revision: i64,
    writer: String,
    terminal: i64,
    state: String,
    failure: Option<String>,
    failed_reason: Option<&'static str>,
    failed_intent_key: Option<String>,
    failed_at: Option<i64>,
    reopened_at: Option<i64>,
    updated_at: i64,
}

impl TaskRow {
    fn of(t: &TaskRecord, revision: i64, now: Timestamp) -> Res<Self> {
        let invalid =
            |e: serde_json::Error| LedgerError::invalid_input(format!("task {:?} does not serialise: {e}", t.task_id));
        let failure = t.failure.as_ref();
        Ok(TaskRow {
            user: t.user.clone(),
            task_id: t.task_id.clone(),
            revision,
            writer: t.writer.clone(),
            terminal: i64::from(t.terminal),
            state: serde_json::to_string(&t.state).map_err(invalid)?,
            failure: failure.map(serde_json::to_string).transpose().map_err(invalid)?,
            failed_reason: failure.map(|f| f.reason.as_str()),
            failed_intent_key: failure.and_then(|f| f.intent_key.clone()),
            failed_at: failure.map(|f| f.at.as_millis()),
            reopened_at: ms(t.reopened_at),
            updated_at: now.as_millis(),
        })
    }
}

/// Binds the 12 task columns in `TASK_COLS` order.
macro_rules! bind_task {
    ($q:expr, $t:expr) => {
        $q.bind(&$t.user)
            .bind(&$t.task_id)
            .bind($t.revision)
            .bind(&$t.writer)
            .bind($t.terminal)
            .bind(&$t.state)
            .bind(&$t.failure)
            .bind($t.failed_reason)
            .bind(&$t.failed_intent_key)
            .bind($t.failed_at)
            .bind($t.reopened_at)
            .bind($t.updated_at)
    };
}

/// A task row as read back.
struct StoredTask {
    user: String,
    task_id: String,
    revision: i64,
    writer: String,
    terminal: i64,
    state: String,
    failure: Option<String>,
    reopened_at: Option<i64>,
    updated_at: i64,
}

impl StoredTask {
    fn into_record(self) -> Res<TaskRecord> {
        let task_id = self.task_id;
        let corrupt = |what: &str, e: serde_json::Error| {
            LedgerError::corrupt(format!("stored {what} of task {task_id:?} is unreadable: {e}"))
        };
        Ok(TaskRecord {
            state: serde_json::from_str(&self.state).map_err(|e| corrupt("state", e))?,
            failure: self
                .failure
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| corrupt("failure report", e))?,
            user: self.user,
            revision: self.revision,
            writer: self.writer,
            terminal: self.terminal != 0,
            reopened_at: self.reopened_at.map(Timestamp::from_millis),
            updated_at: Timestamp::from_millis(self.updated_at),
            task_id,
        })
    }
}

/// The stored text of an approval request.
fn encode_approval(r: &ApprovalRecord) -> Res<String> {
    serde_json::to_string(r)
        .map_err(|e| LedgerError::invalid_input(format!("approval {} does not serialise: {e}", r.id)))
}

fn decode_approval(text: &str) -> Res<ApprovalRecord> {
    serde_json::from_str(text)
        .map_err(|e| LedgerError::corrupt(format!("a stored approval request is unreadable: {e}")))
}

/// The status column and expiry bounds that select `status` as of `now`: a
/// request stored as pending is expired once `now` reaches its expiry.
fn approval_filter(status: Option<ApprovalStatus>, now: Timestamp) -> (Option<&'static str>, Option<i64>, Option<i64>) {
    let now = now.as_millis();
    match status {
        None => (None, None, None),
        Some(ApprovalStatus::Pending) => (Some("pending"), Some(now), None),
        Some(ApprovalStatus::Expired) => (Some("pending"), None, Some(now)),
        Some(decided) => (Some(decided.as_str()), None, None),
    }
}

fn decode_window(slots: &str) -> Res<TokenWindow> {
    serde_json::from_str(slots).map_err(|e| LedgerError::corrupt(format!("stored token window is unreadable: {e}")))
}

fn encode_window(window: &TokenWindow) -> Res<String> {
    serde_json::to_string(window)
        .map_err(|e| LedgerError::invalid_input(format!("token window does not serialise: {e}")))
}

/// Generates a [`Backend`] for one sqlx database; the bodies are identical,
/// only the types differ.
macro_rules! sql_backend {
    ($name:ident, $tx:ident, $db:ty, $pool:ty, $row:ty, $begin:literal) => {
        /// A SQL backend over one connection pool.
        #[derive(Debug)]
        pub(crate) struct $name {
            /// The connections; the `testing` module hands them out raw.
            pub(crate) pool: $pool,
            sql: Statements,
            /// SQLite only: serialises this process's writes. SQLite admits one
            /// writer per file; without the gate, writers of one process
            /// compete through the busy handler, which sleeps and backs off
            /// (16 workers then commit slower than one). Other processes still
            /// meet at the file lock.
            write_gate: Option<tokio::sync::Mutex<()>>,
        }

        impl $name {
            async fn gate(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
                match &self.write_gate {
                    Some(m) => Some(m.lock().await),
                    None => None,
                }
            }

            /// Brings the schema up to date in one transaction, opened as
            /// every write transaction is (`BEGIN IMMEDIATE` takes SQLite's
            /// write lock up front, so processes opening the same new file at
            /// once migrate one after the other instead of failing on a lock
            /// upgrade): each migration newer than the recorded version is
            /// applied, in order, and recorded.
            async fn migrate(&self) -> Res<()> {
                let dialect = self.sql.dialect;
                let mut tx = self.pool.begin_with($begin).await?;
                if let Some(lock) = migration_lock(dialect) {
                    sqlx::query(lock).execute(&mut *tx).await?;
                }
                sqlx::query("CREATE TABLE IF NOT EXISTS gate_schema (version BIGINT NOT NULL)")
                    .execute(&mut *tx)
                    .await?;
                let current: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM gate_schema")
                    .fetch_one(&mut *tx)
                    .await?;
                for (version, stmts) in MIGRATIONS {
                    if current.is_some_and(|c| c >= *version) {
                        continue;
                    }
                    for s in stmts.iter().filter_map(|s| migration_sql(s, dialect)) {
                        sqlx::query(&s).execute(&mut *tx).await?;
                    }
                    sqlx::query(&self.sql.record_schema_version)
                        .bind(version)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(())
            }

            fn decode(row: &$row) -> Res<LedgerRecord> {
                let v = RowValues {
                    user: row.try_get("user_id")?,
                    key: row.try_get("intent_key")?,
                    fingerprint: row.try_get("fingerprint")?,
                    task_id: row.try_get("task_id")?,
                    tool: row.try_get("tool")?,
                    idempotent: row.try_get("idempotent")?,
                    state: row.try_get("state")?,
                    attempt: row.try_get("attempt")?,
                    owner: row.try_get("owner")?,
                    lease_expires_at: row.try_get("lease_expires_at")?,
                    claimed_at: row.try_get("claimed_at")?,
                    dispatched_at: row.try_get("dispatched_at")?,
                    finished_at: row.try_get("finished_at")?,
                    expires_at: row.try_get("expires_at")?,
                    outcome: row.try_get("outcome")?,
                    outcome_is_error: row.try_get("outcome_is_error")?,
                    error: row.try_get("error")?,
                    resolution: row.try_get("resolution")?,
                    resolution_note: row.try_get("resolution_note")?,
                    resolved_at: row.try_get("resolved_at")?,
                    updated_at: row.try_get("updated_at")?,
                };
                v.into_record()
            }

            /// The statement of a lease-checked update, bound.
            fn update_query<'q>(
                sql: &'q Statements,
                u: &'q Update<'q>,
            ) -> Res<sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments<'q>>> {
                let text = match u.change {
                    Change::Dispatch { .. } => &sql.dispatch,
                    Change::Renew { .. } => &sql.renew,
                    Change::Finish { .. } => &sql.finish,
                };
                Self::bind_update(sqlx::query(text), u)
            }

            /// Binds the parameters of `u`'s statement to `q`, in order.
            fn bind_update<'q>(
                q: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments<'q>>,
                u: &'q Update<'q>,
            ) -> Res<sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments<'q>>> {
                let base = q
                    .bind(u.user)
                    .bind(u.key)
                    .bind(u.attempt)
                    .bind(u.owner)
                    .bind(u.now.as_millis());
                Ok(match u.change {
                    Change::Dispatch { lease_until } | Change::Renew { lease_until } => {
                        base.bind(lease_until.as_millis())
                    }
                    Change::Finish {
                        to,
                        from_claimed,
                        expires_at,
                        outcome,
                        error,
                    } => base
                        .bind(to.as_str())
                        .bind(ms(*expires_at))
                        .bind(outcome.as_ref().map(outcome_json).transpose()?)
                        .bind(outcome.as_ref().map(|o| i64::from(o.is_error)))
                        .bind(error.as_deref())
                        .bind(i64::from(*from_claimed)),
                })
            }

            fn decode_all(rows: &[$row]) -> Res<Vec<LedgerRecord>> {
                rows.iter().map(Self::decode).collect()
            }

            fn decode_decision(row: &$row) -> Res<DecisionRecord> {
                DecisionRow {
                    id: row.try_get("decision_id")?,
                    at: row.try_get("at")?,
                    task_id: row.try_get("task_id")?,
                    user: row.try_get("user_id")?,
                    call_id: row.try_get("call_id")?,
                    tool: row.try_get("tool")?,
                    class: row.try_get("class")?,
                    action: row.try_get("action")?,
                    fail_reason: row.try_get("fail_reason")?,
                    attempt: row.try_get("attempt")?,
                    attempts_used: row.try_get("attempts_used")?,
                    repair_tokens: row.try_get("repair_tokens")?,
                    latency_added_ms: row.try_get("latency_added_ms")?,
                    message_hash: row.try_get("message_hash")?,
                    intent_key: row.try_get("intent_key")?,
                }
                .into_record()
            }

            fn decode_task(row: &$row) -> Res<TaskRecord> {
                StoredTask {
                    user: row.try_get("user_id")?,
                    task_id: row.try_get("task_id")?,
                    revision: row.try_get("revision")?,
                    writer: row.try_get("writer")?,
                    terminal: row.try_get("terminal")?,
                    state: row.try_get("state")?,
                    failure: row.try_get("failure")?,
                    reopened_at: row.try_get("reopened_at")?,
                    updated_at: row.try_get("updated_at")?,
                }
                .into_record()
            }
        }

        /// A transaction on one pooled connection; SQLite's also holds this
        /// process's write gate until it ends.
        struct $tx<'a> {
            tx: sqlx::Transaction<'static, $db>,
            _gate: Option<tokio::sync::MutexGuard<'a, ()>>,
            sql: &'a Statements,
            clock: &'a dyn Clock,
            retention: Duration,
        }

        impl $tx<'_> {
            /// The user's window, locked until the transaction ends (the row
            /// is created empty on first use).
            async fn locked_window(&mut self, user: &str, bucket_ms: i64) -> Res<TokenWindow> {
                for _ in 0..2 {
                    let slots: Option<String> = sqlx::query_scalar(&self.sql.lock_window)
                        .bind(user)
                        .bind(bucket_ms)
                        .fetch_optional(&mut *self.tx)
                        .await?;
                    if let Some(slots) = slots {
                        return decode_window(&slots);
                    }
                    sqlx::query(&self.sql.insert_window)
                        .bind(user)
                        .bind(bucket_ms)
                        .bind(encode_window(&TokenWindow::default())?)
                        .bind(self.clock.now().as_millis())
                        .execute(&mut *self.tx)
                        .await?;
                }
                Err(LedgerError::corrupt(format!(
                    "the token window of {user:?} vanished while locked"
                )))
            }

            async fn store_window(&mut self, user: &str, bucket_ms: i64, window: &TokenWindow) -> Res<()> {
                sqlx::query(&self.sql.update_window)
                    .bind(user)
                    .bind(bucket_ms)
                    .bind(encode_window(window)?)
                    .bind(self.clock.now().as_millis())
                    .execute(&mut *self.tx)
                    .await?;
                Ok(())
            }

            async fn stored_revision(&mut self, user: &str, task_id: &str) -> Res<i64> {
                let revision: Option<i64> = sqlx::query_scalar(&self.sql.task_revision)
                    .bind(user)
                    .bind(task_id)
                    .fetch_optional(&mut *self.tx)
                    .await?;
                Ok(revision.unwrap_or(0))
            }
        }

        impl<'a> TaskTransaction<'a> for $tx<'a> {
            fn reserve_tokens<'b>(
                &'b mut self,
                user: &'b str,
                limit: &'b TokenLimit,
                tokens: u64,
            ) -> BoxFuture<'b, Res<Result<Reservation, TokensExhausted>>> {
                Box::pin(async move {
                    let bucket_ms = limit.bucket_millis();
                    let mut window = self.locked_window(user, bucket_ms).await?;
                    let result = window.reserve(limit, self.clock.now().as_millis(), tokens);
                    if result.is_ok() && tokens > 0 {
                        self.store_window(user, bucket_ms, &window).await?;
                    }
                    Ok(result)
                })
            }

            fn settle_tokens<'b>(
                &'b mut self,
                user: &'b str,
                limit: &'b TokenLimit,
                reservations: &'b [Reservation],
                actual: u64,
            ) -> BoxFuture<'b, Res<u64>> {
                Box::pin(async move {
                    let bucket_ms = limit.bucket_millis();
                    let mut window = self.locked_window(user, bucket_ms).await?;
                    let left = window.settle(limit, self.clock.now().as_millis(), reservations, actual);
                    self.store_window(user, bucket_ms, &window).await?;
                    Ok(left)
                })
            }

            fn save_task<'b>(&'b mut self, record: &'b TaskRecord) -> BoxFuture<'b, Res<i64>> {
                Box::pin(async move {
                    let revision = record.revision + 1;
                    let row = TaskRow::of(record, revision, self.clock.now())?;
                    let done = if record.revision == 0 {
                        bind_task!(sqlx::query(&self.sql.insert_task), row)
                            .execute(&mut *self.tx)
                            .await?
                    } else {
                        // The columns in TASK_COLS order, then the revision read.
                        bind_task!(sqlx::query(&self.sql.update_task), row)
                            .bind(record.revision)
                            .execute(&mut *self.tx)
                            .await?
                    };
                    if done.rows_affected() == 1 {
                        Ok(revision)
                    } else {
                        let stored = self.stored_revision(&record.user, &record.task_id).await?;
                        Err(crate::task::task_changed(record, stored))
                    }
                })
            }

            fn finish_intent<'b>(&'b mut self, lease: &'b Lease, how: &'b Finish) -> BoxFuture<'b, Res<LedgerRecord>> {
                Box::pin(async move {
                    let now = self.clock.now();
                    let write = FinishWrite::new(how, now, self.retention);
                    let update = write.update(lease, now);
                    let row = $name::update_query(self.sql, &update)?
                        .fetch_optional(&mut *self.tx)
                        .await?;
                    if let Some(row) = row {
                        return $name::decode(&row);
                    }
                    let current = sqlx::query(&self.sql.load)
                        .bind(&lease.user)
                        .bind(&lease.key)
                        .fetch_optional(&mut *self.tx)
                        .await?;
                    write.not_applied(lease, current.as_ref().map($name::decode).transpose()?)
                })
            }

            fn append_decision<'b>(&'b mut self, record: &'b DecisionRecord) -> BoxFuture<'b, Res<()>> {
                Box::pin(async move {
                    bind_decision!(sqlx::query(&self.sql.append_decision), record)
                        .execute(&mut *self.tx)
                        .await?;
                    Ok(())
                })
            }

            fn append_decisions<'b>(&'b mut self, records: &'b [DecisionRecord]) -> BoxFuture<'b, Res<()>> {
                Box::pin(async move {
                    for chunk in records.chunks(ROWS_PER_INSERT) {
                        let tail;
                        let sql = if chunk.len() == ROWS_PER_INSERT {
                            &self.sql.append_decisions
                        } else {
                            tail = multi_row_decision_insert(chunk.len(), self.sql.dialect);
                            &tail
                        };
                        let mut query = sqlx::query(sql);
                        for record in chunk {
                            query = bind_decision!(query, record);
                        }
                        query.execute(&mut *self.tx).await?;
                    }
                    Ok(())
                })
            }

            fn insert_approval<'b>(&'b mut self, r: &'b ApprovalRecord) -> BoxFuture<'b, Res<()>> {
                Box::pin(async move {
                    sqlx::query(&self.sql.insert_approval)
                        .bind(&r.id)
                        .bind(&r.user)
                        .bind(&r.task_id)
                        .bind(r.status.as_str())
                        .bind(r.requested_at.as_millis())
                        .bind(r.expires_at.as_millis())
                        .bind(ms(r.decided_at))
                        .bind(encode_approval(r)?)
                        .execute(&mut *self.tx)
                        .await?;
                    Ok(())
                })
            }

            fn commit(self: Box<Self>) -> BoxFuture<'a, Res<()>> {
                Box::pin(async move {
                    self.tx.commit().await?;
                    Ok(())
                })
            }
        }

        impl Backend for $name {
            async fn insert(&self, r: &LedgerRecord) -> Res<bool> {
                let _gate = self.gate().await;
                let v = RowValues::of(r)?;
                let done = bind_row!(sqlx::query(&self.sql.insert), v)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn load(&self, user: &str, key: &str) -> Res<Option<LedgerRecord>> {
                let row = sqlx::query(&self.sql.load)
                    .bind(user)
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map(Self::decode).transpose()
            }

            async fn find(&self, key: &str) -> Res<Vec<LedgerRecord>> {
                let rows = sqlx::query(&self.sql.find)
                    .bind(key)
                    .fetch_all(&self.pool)
                    .await?;
                Self::decode_all(&rows)
            }

            async fn replace(&self, e: &Expect<'_>, new: &LedgerRecord) -> Res<bool> {
                let _gate = self.gate().await;
                let v = RowValues::of(new)?;
                let done = bind_row!(sqlx::query(&self.sql.replace), v)
                    .bind(e.state.as_str())
                    .bind(e.attempt)
                    .bind(e.owner)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn update(&self, u: &Update<'_>) -> Res<Option<LedgerRecord>> {
                let query = Self::update_query(&self.sql, u)?;
                let _gate = self.gate().await;
                let row = query.fetch_optional(&self.pool).await?;
                row.as_ref().map(Self::decode).transpose()
            }

            async fn delete(&self, e: &Expect<'_>) -> Res<bool> {
                let _gate = self.gate().await;
                let done = sqlx::query(&self.sql.delete)
                    .bind(e.user)
                    .bind(e.key)
                    .bind(e.state.as_str())
                    .bind(e.attempt)
                    .bind(e.owner)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn sweep(&self, now: Timestamp, limit: u32, retain_until: Timestamp) -> Res<Vec<LedgerRecord>> {
                let _gate = self.gate().await;
                let rows = sqlx::query(&self.sql.sweep)
                    .bind(now.as_millis())
                    .bind(retain_until.as_millis())
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?;
                let mut v = Self::decode_all(&rows)?;
                v.sort_by(|a, b| (&a.user, &a.key).cmp(&(&b.user, &b.key)));
                Ok(v)
            }

            async fn purge(&self, now: Timestamp) -> Res<u64> {
                let _gate = self.gate().await;
                let done = sqlx::query(&self.sql.purge)
                    .bind(now.as_millis())
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected())
            }

            async fn list_state(&self, state: State, limit: u32) -> Res<Vec<LedgerRecord>> {
                let rows = sqlx::query(&self.sql.list_state)
                    .bind(state.as_str())
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?;
                Self::decode_all(&rows)
            }

            async fn append_decision(&self, d: DecisionRecord) -> Res<()> {
                let _gate = self.gate().await;
                bind_decision!(sqlx::query(&self.sql.append_decision), &d)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn list_decisions(&self, q: &DecisionQuery) -> Res<Vec<DecisionRecord>> {
                let rows = sqlx::query(&self.sql.list_decisions)
                    .bind(&q.task_id)
                    .bind(&q.user)
                    .bind(q.since.map(Timestamp::as_millis))
                    .bind(q.until.map(Timestamp::as_millis))
                    .bind(q.limit.map_or(i64::MAX, i64::from))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(Self::decode_decision).collect()
            }

            async fn load_task(&self, user: &str, task_id: &str) -> Res<Option<TaskRecord>> {
                let row = sqlx::query(&self.sql.load_task)
                    .bind(user)
                    .bind(task_id)
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map(Self::decode_task).transpose()
            }

            async fn begin<'a>(
                &'a self,
                clock: &'a dyn Clock,
                retention: Duration,
            ) -> Res<Box<dyn TaskTransaction<'a> + 'a>> {
                let gate = self.gate().await;
                let tx = self.pool.begin_with($begin).await?;
                Ok(Box::new($tx {
                    tx,
                    _gate: gate,
                    sql: &self.sql,
                    clock,
                    retention,
                }))
            }

            async fn settle_at_once(
                &self,
                settlement: Settlement<'_>,
                clock: &dyn Clock,
                retention: Duration,
            ) -> Res<SettledAtOnce> {
                let shape = Shape {
                    intent: settlement.intent.is_some(),
                    task: match settlement.task {
                        None => TaskWrite::Untouched,
                        Some(t) if t.revision == 0 => TaskWrite::Insert,
                        Some(_) => TaskWrite::Update,
                    },
                    decision: settlement.decision.is_some(),
                };
                let Some(statements) = &self.sql.at_once else {
                    return Ok(SettledAtOnce::NotApplied);
                };
                let Some(sql) = statements.get(shape) else {
                    return Ok(SettledAtOnce::NotApplied);
                };
                let now = clock.now();
                let finish = settlement
                    .intent
                    .map(|(lease, how)| (lease, FinishWrite::new(how, now, retention)));
                let update = finish.as_ref().map(|(lease, write)| write.update(lease, now));
                let task = settlement
                    .task
                    .map(|t| TaskRow::of(t, t.revision + 1, now))
                    .transpose()?;
                let mut query = sqlx::query(sql);
                if let Some(update) = &update {
                    query = Self::bind_update(query, update)?;
                }
                if let (Some(record), Some(row)) = (settlement.task, &task) {
                    query = bind_task!(query, row);
                    if record.revision != 0 {
                        query = query.bind(record.revision);
                    }
                }
                if let Some(record) = settlement.decision {
                    query = bind_decision!(query, record);
                }
                let _gate = self.gate().await;
                let mut conn = self.pool.acquire().await?;
                let error = match query.execute(&mut *conn).await {
                    Ok(_) => return Ok(SettledAtOnce::Landed(settlement.task.map(|t| t.revision + 1))),
                    Err(e) => e,
                };
                if statements.opens_transaction() {
                    match sqlx::query("ROLLBACK").execute(&mut *conn).await {
                        // Rolled back, or SQLite answered that no transaction
                        // was open (the batch stopped at its BEGIN).
                        Ok(_) | Err(sqlx::Error::Database(_)) => {}
                        // A connection whose transaction state is unknown
                        // goes nowhere near the pool again.
                        Err(_) => {
                            let _ = conn.close().await;
                        }
                    }
                }
                match error {
                    // The database answered: whether a condition failed
                    // (`GT001`, or the SQLite batch's check) or it refused
                    // the statement, nothing was written, and the transaction
                    // will say which.
                    sqlx::Error::Database(_) => Ok(SettledAtOnce::NotApplied),
                    e => Err(e.into()),
                }
            }

            async fn list_failed_tasks(&self, limit: u32) -> Res<Vec<TaskRecord>> {
                let rows = sqlx::query(&self.sql.list_failed_tasks)
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(Self::decode_task).collect()
            }

            async fn tasks_failed_on(&self, user: &str, key: &str) -> Res<Vec<TaskRecord>> {
                let rows = sqlx::query(&self.sql.tasks_failed_on)
                    .bind(user)
                    .bind(key)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(Self::decode_task).collect()
            }

            async fn load_window(&self, user: &str, bucket_ms: i64) -> Res<TokenWindow> {
                let slots: Option<String> = sqlx::query_scalar(&self.sql.load_window)
                    .bind(user)
                    .bind(bucket_ms)
                    .fetch_optional(&self.pool)
                    .await?;
                slots
                    .as_deref()
                    .map(decode_window)
                    .transpose()
                    .map(Option::unwrap_or_default)
            }

            async fn close(&self) {
                self.pool.close().await;
            }

            async fn load_approval(&self, id: &str) -> Res<Option<ApprovalRecord>> {
                let text: Option<String> = sqlx::query_scalar(&self.sql.load_approval)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                text.as_deref().map(decode_approval).transpose()
            }

            async fn list_approvals(&self, q: &ApprovalQuery, now: Timestamp) -> Res<Vec<ApprovalRecord>> {
                let (status, after, until) = approval_filter(q.status, now);
                let texts: Vec<String> = sqlx::query_scalar(&self.sql.list_approvals)
                    .bind(status)
                    .bind(after)
                    .bind(until)
                    .bind(&q.user)
                    .bind(&q.task_id)
                    .bind(q.limit.map_or(i64::MAX, i64::from))
                    .fetch_all(&self.pool)
                    .await?;
                texts.iter().map(|t| decode_approval(t)).collect()
            }

            async fn decide_pending(&self, new: &ApprovalRecord, now: Timestamp) -> Res<bool> {
                let _gate = self.gate().await;
                let done = sqlx::query(&self.sql.decide_approval)
                    .bind(&new.id)
                    .bind(new.status.as_str())
                    .bind(now.as_millis())
                    .bind(encode_approval(new)?)
                    .execute(&self.pool)
                    .await?;
                Ok(done.rows_affected() == 1)
            }
        }
    };
}

#[cfg(feature = "sqlite")]
sql_backend!(
    SqliteBackend,
    SqliteTx,
    sqlx::Sqlite,
    sqlx::SqlitePool,
    sqlx::sqlite::SqliteRow,
    "BEGIN IMMEDIATE"
);
#[cfg(feature = "postgres")]
sql_backend!(
    PgBackend,
    PgTx,
    sqlx::Postgres,
    sqlx::PgPool,
    sqlx::postgres::PgRow,
    "BEGIN"
);

/// A migration's statement for dialect `d`; `None` for a stored function
/// on SQLite, which has none.
fn migration_sql(stmt: &str, d: Dialect) -> Option<String> {
    let seq = match d {
        #[cfg(feature = "sqlite")]
        Dialect::Sqlite if stmt.starts_with("CREATE OR REPLACE FUNCTION") => return None,
        #[cfg(feature = "sqlite")]
        Dialect::Sqlite => "INTEGER PRIMARY KEY AUTOINCREMENT",
        Dialect::Postgres => "BIGSERIAL PRIMARY KEY",
    };
    Some(stmt.replace("{seq}", seq))
}

/// What a migration runs before anything else: PostgreSQL serialises
/// concurrent first opens with an advisory lock (DDL is transactional
/// there); SQLite's transaction holds the file's write lock already.
fn migration_lock(d: Dialect) -> Option<&'static str> {
    match d {
        #[cfg(feature = "sqlite")]
        Dialect::Sqlite => None,
        Dialect::Postgres => Some("SELECT pg_advisory_xact_lock(7061746500)"),
    }
}

/// Options for the SQL stores.
#[derive(Clone, Debug)]
pub(crate) struct SqlOptions {
    pub busy_timeout: Duration,
    pub max_connections: Option<u32>,
    #[cfg(feature = "postgres")]
    pub pg_schema: Option<String>,
}

#[cfg(feature = "sqlite")]
impl SqliteBackend {
    /// Opens (creating if missing) the SQLite file named by `url`, in WAL mode
    /// with `synchronous=FULL`, and migrates its schema.
    pub(crate) async fn open(url: &str, o: &SqlOptions) -> Res<Self> {
        use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
        use std::str::FromStr;
        let opts = SqliteConnectOptions::from_str(url)
            .map_err(|e| LedgerError::invalid_url(format!("bad SQLite URL {url:?}: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(o.busy_timeout)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(o.max_connections.unwrap_or(4).max(1))
            .acquire_timeout(o.busy_timeout.max(Duration::from_secs(5)))
            .connect_with(opts)
            .await?;
        let me = SqliteBackend {
            pool,
            sql: Statements::new(Dialect::Sqlite),
            write_gate: Some(tokio::sync::Mutex::new(())),
        };
        me.migrate().await?;
        Ok(me)
    }

    /// `PRAGMA journal_mode` and `PRAGMA synchronous` as the store runs them,
    /// for the conformance suite (through the `testing` module's store).
    #[cfg(feature = "testing")]
    pub(crate) async fn pragmas(&self) -> Res<(String, i64)> {
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&self.pool).await?;
        let sync: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(&self.pool).await?;
        Ok((mode, sync))
    }
}

/// A schema name must be a plain identifier: it is spliced into SQL.
#[cfg(feature = "postgres")]
pub(crate) fn valid_schema_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !s.as_bytes().first().is_some_and(u8::is_ascii_digit)
}

#[cfg(feature = "postgres")]
impl PgBackend {
    /// Connects a pool to `url`, optionally inside its own schema (created if
    /// missing), and migrates the schema under an advisory lock.
    pub(crate) async fn open(url: &str, o: &SqlOptions) -> Res<Self> {
        use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
        use std::str::FromStr;
        let mut opts = PgConnectOptions::from_str(url)
            .map_err(|e| LedgerError::invalid_url(format!("bad PostgreSQL URL: {e}")))?;
        if let Some(schema) = &o.pg_schema {
            if !valid_schema_name(schema) {
                return Err(LedgerError::invalid_input(format!(
                    "schema name {schema:?} must match [a-z_][a-z0-9_]{{0,62}}"
                )));
            }
            let mut conn: sqlx::PgConnection = sqlx::Connection::connect_with(&opts).await?;
            sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .execute(&mut conn)
                .await
                .or_else(|e| match &e {
                    // Two processes creating the same schema at once: the loser
                    // sees a unique violation on the catalog, which is success.
                    sqlx::Error::Database(d) if d.code().as_deref() == Some("23505") => {
                        Ok(sqlx::postgres::PgQueryResult::default())
                    }
                    _ => Err(e),
                })?;
            sqlx::Connection::close(conn).await?;
            opts = opts.options([("search_path", schema.as_str())]);
        }
        let pool = PgPoolOptions::new()
            .max_connections(o.max_connections.unwrap_or(16).max(1))
            .acquire_timeout(o.busy_timeout.max(Duration::from_secs(5)))
            .connect_with(opts)
            .await?;
        let me = PgBackend {
            pool,
            sql: Statements::new(Dialect::Postgres),
            write_gate: None,
        };
        me.migrate().await?;
        Ok(me)
    }

    /// Drops the schema `name` and everything in it (test clean-up).
    #[cfg(feature = "testing")]
    pub(crate) async fn drop_schema(url: &str, name: &str) -> Res<()> {
        if !valid_schema_name(name) {
            return Err(LedgerError::invalid_input(format!("bad schema name {name:?}")));
        }
        let opts = <sqlx::postgres::PgConnectOptions as std::str::FromStr>::from_str(url)
            .map_err(|e| LedgerError::invalid_url(format!("bad PostgreSQL URL: {e}")))?;
        let mut conn: sqlx::PgConnection = sqlx::Connection::connect_with(&opts).await?;
        let drop = format!("DROP SCHEMA IF EXISTS {name} CASCADE");
        // A gate dropped without `shutdown` may still be writing its queued
        // records into the schema: PostgreSQL then picks one side of the
        // lock cycle as a deadlock victim, and the drop, sent again, waits
        // for the other side to finish.
        let mut tries = 0;
        loop {
            tries += 1;
            match sqlx::query(&drop).execute(&mut conn).await {
                Err(sqlx::Error::Database(d)) if d.code().as_deref() == Some("40P01") && tries < 5 => {}
                done => {
                    done?;
                    break;
                }
            }
        }
        sqlx::Connection::close(conn).await?;
        Ok(())
    }
}
