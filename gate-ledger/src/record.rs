//! The ledger's data: record states, stored outcomes, claim requests, leases and
//! the answers a claim can get.
//!
//! These types are shared by every store so that a record read from SQLite, from
//! PostgreSQL or from memory is the same value, and so the runtime writes its
//! policy once against them.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::LedgerError;
use crate::time::Timestamp;

/// How a human or a reconciler resolved an [`State::OutcomeUnknown`] record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resolution {
    /// The side effect did happen; the record replays as a success.
    Succeeded,
    /// The call failed for good; the record replays as an error.
    FailedPermanent,
    /// The side effect did not happen; a new claim may run the call again under
    /// a new attempt.
    NotExecuted,
}

impl Resolution {
    /// The CLI spelling: `succeeded`, `failed`, `not-executed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Succeeded => "succeeded",
            Resolution::FailedPermanent => "failed",
            Resolution::NotExecuted => "not-executed",
        }
    }
}

impl fmt::Display for Resolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Resolution {
    type Err = LedgerError;

    /// Parses the CLI spelling (`succeeded`, `failed`, `failed-permanent`,
    /// `not-executed`), case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "succeeded" | "success" => Ok(Resolution::Succeeded),
            "failed" | "failed-permanent" => Ok(Resolution::FailedPermanent),
            "not-executed" | "notexecuted" => Ok(Resolution::NotExecuted),
            _ => Err(LedgerError::invalid_input(format!(
                "unknown outcome {s:?}; expected succeeded, failed or not-executed"
            ))),
        }
    }
}

/// The state of a ledger record.
///
/// In JSON a state is its [`as_str`](State::as_str) name (`outcome_unknown`,
/// `reconciled_succeeded`), the same name the stores, the decision log and
/// failure reports use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum State {
    /// A worker holds the lease; nothing has been sent yet.
    Claimed,
    /// `dispatched_at` is committed: the side effect may have started.
    Dispatched,
    /// Finished with a result; replayed.
    Succeeded,
    /// Finished with a definitive error; replayed.
    FailedPermanent,
    /// Definitely had no effect; a new claim may run it again (attempt + 1).
    FailedRetryable,
    /// May or may not have happened; only a reconciler or a human moves it on.
    OutcomeUnknown,
    /// Resolved by a reconciler or a human.
    Reconciled(Resolution),
}

impl State {
    /// The text stored in the `state` column.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Claimed => "claimed",
            State::Dispatched => "dispatched",
            State::Succeeded => "succeeded",
            State::FailedPermanent => "failed_permanent",
            State::FailedRetryable => "failed_retryable",
            State::OutcomeUnknown => "outcome_unknown",
            State::Reconciled(Resolution::Succeeded) => "reconciled_succeeded",
            State::Reconciled(Resolution::FailedPermanent) => "reconciled_failed_permanent",
            State::Reconciled(Resolution::NotExecuted) => "reconciled_not_executed",
        }
    }

    /// Whether a new attempt of the intent may take the record over, with
    /// new arguments too (a corrected retry, rule 8): the last attempt
    /// failed with no effect that may not be repeated, or a person found it
    /// never ran.
    pub fn is_free_for_a_new_attempt(self) -> bool {
        matches!(
            self,
            State::FailedRetryable | State::Reconciled(Resolution::NotExecuted)
        )
    }

    /// A claim on a record in this state replays the stored outcome.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            State::Succeeded
                | State::FailedPermanent
                | State::Reconciled(Resolution::Succeeded | Resolution::FailedPermanent)
        )
    }

    /// A worker holds (or held, if the lease expired) the record.
    pub fn is_in_flight(self) -> bool {
        matches!(self, State::Claimed | State::Dispatched)
    }

    /// A new claim may run the call again with attempt + 1.
    pub fn is_rerunnable(self) -> bool {
        matches!(
            self,
            State::FailedRetryable | State::Reconciled(Resolution::NotExecuted)
        )
    }

    /// Records in this state expire after the retention period
    /// ([`State::OutcomeUnknown`] and in-flight records never do).
    pub fn has_retention(self) -> bool {
        self.is_finished() || self.is_rerunnable()
    }
}

impl From<State> for &'static str {
    fn from(state: State) -> Self {
        state.as_str()
    }
}

impl TryFrom<String> for State {
    type Error = <State as FromStr>::Err;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        name.parse()
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for State {
    type Err = LedgerError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "claimed" => State::Claimed,
            "dispatched" => State::Dispatched,
            "succeeded" => State::Succeeded,
            "failed_permanent" => State::FailedPermanent,
            "failed_retryable" => State::FailedRetryable,
            "outcome_unknown" => State::OutcomeUnknown,
            "reconciled_succeeded" => State::Reconciled(Resolution::Succeeded),
            "reconciled_failed_permanent" => State::Reconciled(Resolution::FailedPermanent),
            "reconciled_not_executed" => State::Reconciled(Resolution::NotExecuted),
            other => {
                return Err(LedgerError::corrupt(format!("unknown ledger state {other:?}")));
            }
        })
    }
}

/// A stored outcome: the JSON the tool returned (or the error body) and whether
/// it is an error result. Replayed as is, byte for byte when re-serialised.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The result value, or the error body for an error.
    pub value: Value,
    /// Whether the model should see this as an error result.
    pub is_error: bool,
}

/// What a human or reconciler recorded when resolving an unknown outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reconciliation {
    /// The resolution.
    pub resolution: Resolution,
    /// Free text from the person resolving (e.g. the downstream reference).
    pub note: Option<String>,
    /// When it was resolved.
    pub at: Timestamp,
}

/// One ledger record: the durable memory of one intent key for one user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerRecord {
    /// The user (tenant) the key belongs to; `(user, key)` is unique.
    pub user: String,
    /// The intent key.
    pub key: String,
    /// Fingerprint of the call's key arguments (see [`crate::fingerprint`]).
    pub fingerprint: String,
    /// The task that first claimed the key.
    pub task_id: String,
    /// The tool the key was first used with.
    pub tool: String,
    /// Whether the tool is idempotent: only then may an expired `Dispatched`
    /// lease be taken over and the call re-run.
    pub idempotent: bool,
    /// Current state.
    pub state: State,
    /// Attempt number, starting at 1; the fencing token of the current lease.
    pub attempt: i64,
    /// Opaque token of the worker holding (or last holding) the lease.
    pub owner: Option<String>,
    /// When the lease runs out (`None` once the record left the in-flight states).
    pub lease_expires_at: Option<Timestamp>,
    /// When the current attempt was claimed.
    pub claimed_at: Timestamp,
    /// When the current attempt was dispatched (committed before the tool ran).
    pub dispatched_at: Option<Timestamp>,
    /// When the record reached its current finished or failed state.
    pub finished_at: Option<Timestamp>,
    /// When the record may be purged (`None`: never, e.g. `OutcomeUnknown`).
    pub expires_at: Option<Timestamp>,
    /// The stored outcome, for finished records.
    pub outcome: Option<Outcome>,
    /// The last error text (already sanitized by the caller).
    pub error: Option<String>,
    /// The resolution, once a human or reconciler resolved the record.
    pub reconciliation: Option<Reconciliation>,
    /// Last time any field changed.
    pub updated_at: Timestamp,
}

impl LedgerRecord {
    /// The outcome a claim on this record replays, if it is finished.
    ///
    /// A reconciled record without a stored value replays a small JSON object
    /// naming the resolution and note, so the model is told what happened.
    pub fn replay_outcome(&self) -> Option<Outcome> {
        match self.state {
            State::Succeeded | State::FailedPermanent => self.outcome.clone(),
            State::Reconciled(r @ (Resolution::Succeeded | Resolution::FailedPermanent)) => {
                Some(self.outcome.clone().unwrap_or_else(|| Outcome {
                    value: serde_json::json!({
                        "reconciled": r.as_str(),
                        "note": self.reconciliation.as_ref().and_then(|x| x.note.clone()),
                    }),
                    is_error: r == Resolution::FailedPermanent,
                }))
            }
            _ => None,
        }
    }

    /// The lease is held and has not run out at `now` (expiry is exclusive:
    /// at `lease_expires_at` the lease is already expired).
    pub fn lease_live(&self, now: Timestamp) -> bool {
        self.state.is_in_flight() && self.lease_expires_at.is_some_and(|t| now < t)
    }

    /// The record is past its retention at `now` (inclusive: at `expires_at` it
    /// is expired).
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.state.has_retention() && self.expires_at.is_some_and(|t| now >= t)
    }
}

/// A request to claim an intent key before running a tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimRequest {
    /// The user (tenant) the call is made for.
    pub user: String,
    /// The intent key (minted or derived).
    pub key: String,
    /// Fingerprint of the call's key arguments.
    pub fingerprint: String,
    /// The task making the call.
    pub task_id: String,
    /// The tool being called.
    pub tool: String,
    /// Whether the tool is idempotent (or read-only): only then may an expired
    /// `Dispatched` lease be taken over and the call re-run; otherwise it
    /// becomes `OutcomeUnknown`.
    pub idempotent: bool,
    /// How long the lease lasts, from claim and again from dispatch. Must cover
    /// the tool's own timeout.
    pub lease: Duration,
    /// The lease holder's token for this attempt, or `None` to have the store
    /// mint one. A claim sent again with the same token after its answer was
    /// lost (a dropped connection) finds its own claim and gets it back
    /// instead of `InProgress`; tokens must be unguessable and never shared
    /// between workers ([`crate::new_owner_token`]).
    pub owner: Option<String>,
}

/// Proof that this worker holds the current attempt of a record; required by
/// every transition. The `(attempt, owner)` pair is the fencing token: once
/// another worker takes over, writes made with this lease are refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The user the record belongs to.
    pub user: String,
    /// The intent key.
    pub key: String,
    /// The attempt this lease is for.
    pub attempt: i64,
    /// Random owner token minted by the claim.
    pub owner: String,
    /// Lease length, reused by `dispatch` and `renew`.
    pub ttl: Duration,
    /// When the lease ran out as of the last claim/dispatch/renew.
    pub expires_at: Timestamp,
}

/// The answer to a claim.
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// Run the tool: call [`crate::Ledger::dispatch`] first, then finish.
    /// `lease.attempt > 1` means an earlier attempt failed retryably, was
    /// resolved not-executed, expired before dispatch, or (idempotent tools
    /// only) expired while dispatched.
    Acquired(Lease),
    /// The call already finished: return this outcome, do not run the tool.
    Replay {
        /// The stored outcome.
        outcome: Outcome,
        /// The state it was stored in.
        state: State,
    },
    /// The call may or may not have happened and waits for a human: do not run
    /// the tool, fail the task with a report. Boxed to keep `Claim` small.
    OutcomeUnknown(Box<LedgerRecord>),
}

/// How a dispatched call ended, as told to [`crate::Ledger::finish`].
#[derive(Clone, Debug, PartialEq)]
pub enum Finish {
    /// The tool returned a result → `Succeeded`.
    Succeeded(Value),
    /// A definitive error (declined, business rule) → `FailedPermanent`; the
    /// body is replayed as an error result.
    FailedPermanent {
        /// The error body to replay.
        body: Value,
        /// Sanitized error text for operators.
        error: String,
    },
    /// Provably no effect (connection refused before sending) → `FailedRetryable`.
    /// Allowed from `Claimed` too.
    FailedRetryable {
        /// Sanitized error text.
        error: String,
    },
    /// Timeout or reset after sending → `OutcomeUnknown`, never retried.
    OutcomeUnknown {
        /// Sanitized error text.
        error: String,
    },
}

impl Finish {
    pub(crate) fn target(&self) -> State {
        match self {
            Finish::Succeeded(_) => State::Succeeded,
            Finish::FailedPermanent { .. } => State::FailedPermanent,
            Finish::FailedRetryable { .. } => State::FailedRetryable,
            Finish::OutcomeUnknown { .. } => State::OutcomeUnknown,
        }
    }
}

/// A request to resolve a record that needs a human.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolveRequest {
    /// The intent key.
    pub key: String,
    /// The user, when the same key exists for several users.
    pub user: Option<String>,
    /// The resolution.
    pub resolution: Resolution,
    /// Free text (e.g. the downstream charge id).
    pub note: Option<String>,
    /// A result to replay instead of the default resolution object.
    pub value: Option<Value>,
}

/// What a lease sweep did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepReport {
    /// Records moved to `OutcomeUnknown` (dispatched, non-idempotent, lease expired).
    pub marked_unknown: Vec<LedgerRecord>,
    /// Records moved to `FailedRetryable` (never dispatched, or idempotent).
    pub released: Vec<LedgerRecord>,
}
