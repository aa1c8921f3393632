//! [`Attempt`]: what one attempt at a call came to, before anything was
//! decided about it.
//!
//! Every stage before the decision ends in one of these: the terminal check
//! and admission in a refusal, approval in a wait or a refusal by a person,
//! the claim in a replay or a stop, the tool's run in a result or a failure. The decision (`choose`, then `settle`)
//! reads nothing else about what happened, so it is one type for all of
//! them, whichever stage ended the call.

use std::time::Duration;

use serde_json::Value;
use toolgate_ledger::{ApprovalRecord, FailureClass, FailureReason, Lease, LedgerError, State};

use crate::ToolError;

/// What happened to a call, before any budget was asked.
pub(super) enum Attempt {
    /// The task had already failed (rule 7): nothing ran.
    TaskFailed,
    /// The task's state could not be read: nothing ran.
    StoreDown(String),
    /// Refused before running: an unknown tool, a scope not granted,
    /// invalid arguments, or a repeated failed call (rule 3).
    Refused {
        /// What the model is told to change (before the sanitizer).
        message: String,
        /// The call's fingerprint, for rules 1 and 3.
        call_fp: String,
        /// Refused as a repeat of a failed call (rule 3).
        repeat: bool,
    },
    /// The tool's result, or a finished intent's stored outcome.
    Returned {
        value: Value,
        /// A definitive error returned as the result (card declined).
        is_error: bool,
        /// The stored outcome of an earlier run, not a new run.
        replayed: bool,
        /// The intent the call held, whose outcome the decision records.
        /// Boxed, here and in `Failed`: only a side effect holds one, and
        /// inline it would make every attempt, moved several times on every
        /// call, twice as large.
        lease: Option<Box<Lease>>,
    },
    /// The tool succeeded, but the store did not take its outcome.
    NotRecorded { value: Value, error: String },
    /// The tool failed.
    Failed {
        error: ToolError,
        lease: Option<Box<Lease>>,
        /// How long the failed call took: latency it added to the task.
        elapsed: Duration,
    },
    /// The call waits for a person's approval; nothing ran. `new`: the
    /// request is made now (stored with the decision), not found.
    AwaitingApproval { request: Box<ApprovalRecord>, new: bool },
    /// A person declined the call (or nobody decided in time), or the
    /// guard refused it with nobody to ask (no `approval_id`): `text` is
    /// the definitive error the model reads; nothing ran.
    Declined { text: String, approval_id: Option<String> },
    /// The ledger answered before the tool ran; the tool did not run.
    Stopped {
        reason: FailureReason,
        state: Option<State>,
        class: Option<FailureClass>,
        error: String,
    },
}

impl Attempt {
    /// The attempt once the ledger refused to record the intent's finish:
    /// a success whose outcome could not be recorded, or a failure the
    /// ledger is not told about (the sweep moves its intent on).
    pub(super) fn without_intent(self, refusal: &LedgerError) -> Attempt {
        match self {
            Attempt::Returned {
                value, lease: Some(_), ..
            } => Attempt::NotRecorded {
                value,
                error: refusal.to_string(),
            },
            Attempt::Failed {
                error,
                lease: Some(_),
                elapsed,
            } => Attempt::Failed {
                error,
                lease: None,
                elapsed,
            },
            other => other,
        }
    }

    /// The time a failed run added to the task; none for anything else.
    pub(super) fn failed_after(&self) -> Option<Duration> {
        match self {
            Attempt::Failed { elapsed, .. } => Some(*elapsed),
            _ => None,
        }
    }

    /// The approval request the attempt waits on or was declined by.
    pub(super) fn approval_id(&self) -> Option<&str> {
        match self {
            Attempt::AwaitingApproval { request, .. } => Some(&request.id),
            Attempt::Declined { approval_id, .. } => approval_id.as_deref(),
            _ => None,
        }
    }

    /// The store's error, when the attempt ended because the store was
    /// unreachable for the whole patience.
    pub(super) fn store_down(&self) -> Option<&str> {
        match self {
            Attempt::StoreDown(error)
            | Attempt::Stopped {
                reason: FailureReason::LedgerUnavailable,
                error,
                ..
            } => Some(error),
            _ => None,
        }
    }
}
