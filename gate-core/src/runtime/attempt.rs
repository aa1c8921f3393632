//! One attempt at running a validated call, and the ledger writes around it.
//!
//! For a tool with side effects the intent is claimed and its dispatch
//! committed before the tool runs, so a crash from then on is an unknown
//! outcome, never a silent second run; a claim the store did not record never
//! runs the tool. A success is recorded before anyone is told about it: if the
//! store does not take it, the attempt says so, with the value, so a person
//! can record it. Read-only tools touch no ledger at all.
//!
//! Everything here takes its inputs explicitly (the store, the tool, the
//! call's context and claim, the patience); nothing reaches back into the task.

use std::time::Duration;

use gate_ledger::{Claim, ClaimRequest, FailReason, FailureClass, Finish, Lease, LedgerError, Outcome, State, Storage};
use serde_json::{Value, json};

use super::persist::retrying;
use crate::{Ctx, Tool, ToolError, call_contained};

/// What one attempt produced.
pub(super) enum Attempt {
    /// The tool ran (its success, if any, is recorded): its result, the lease
    /// when the intent was claimed, and how long the call took.
    Ran {
        result: Result<Value, ToolError>,
        lease: Option<Lease>,
        elapsed: Duration,
    },
    /// The intent had finished before: its stored outcome, replayed.
    Replayed(Outcome),
    /// The ledger answered before the tool ran; the tool did not run.
    Stopped {
        reason: FailReason,
        state: Option<State>,
        class: Option<FailureClass>,
        error: String,
    },
    /// The tool succeeded, but the store did not take its outcome.
    NotRecorded { value: Value, error: String },
}

/// Claims the intent (when `claim` is given), runs the tool with panics
/// contained and cut off at `timeout`, and records a success.
pub(super) async fn run(
    store: &dyn Storage,
    tool: &dyn Tool,
    ctx: &Ctx,
    arguments: &str,
    claim: Option<&ClaimRequest>,
    timeout: Duration,
    patience: Duration,
) -> Attempt {
    let Some(request) = claim else {
        let started = tokio::time::Instant::now();
        let result = call_in_time(tool, ctx, arguments, timeout).await;
        return Attempt::Ran {
            result,
            lease: None,
            elapsed: started.elapsed(),
        };
    };
    let lease = match retrying(patience, "claim", || store.claim(request)).await {
        Ok(Claim::Acquired(lease)) => lease,
        Ok(Claim::Replay { outcome, .. }) => return Attempt::Replayed(outcome),
        Ok(Claim::OutcomeUnknown(record)) => {
            return Attempt::Stopped {
                reason: FailReason::OutcomeUnknown,
                state: Some(State::OutcomeUnknown),
                class: Some(FailureClass::OutcomeUnknown),
                error: record
                    .error
                    .clone()
                    .unwrap_or_else(|| "an earlier attempt's outcome is unknown".to_owned()),
            };
        }
        Err(e) => return stopped(&e),
    };
    // Committed before the tool runs: a crash from here on is OutcomeUnknown.
    let lease = match retrying(patience, "dispatch", || store.dispatch(&lease)).await {
        Ok(lease) => lease,
        Err(e) => {
            // Best effort: a claim that never dispatched is given back. If the
            // store is gone, the lease runs out and the sweep frees it.
            let _ = store.release(&lease).await;
            return stopped(&e);
        }
    };
    let started = tokio::time::Instant::now();
    let result = call_in_time(tool, ctx, arguments, timeout).await;
    let elapsed = started.elapsed();
    match result {
        Ok(value) => match retrying(patience, "record the outcome", || store.complete(&lease, value.clone())).await {
            Ok(_) => Attempt::Ran {
                result: Ok(value),
                lease: Some(lease),
                elapsed,
            },
            Err(e) => {
                tracing::error!(target: "gate::ledger", error = %e, key = %lease.key, "the tool ran but its outcome was not recorded");
                Attempt::NotRecorded {
                    value,
                    error: e.to_string(),
                }
            }
        },
        Err(error) => Attempt::Ran {
            result: Err(error),
            lease: Some(lease),
            elapsed,
        },
    }
}

/// Runs the tool, cancelled at `timeout`: an async tool's future is dropped
/// there; a tool that blocks its thread cannot be interrupted, so a result
/// it returns late is discarded. Either way the call is a `Timeout` (its
/// outcome is unknown), and the lease, which outlasts the timeout, is still
/// held when the decision is recorded.
async fn call_in_time(tool: &dyn Tool, ctx: &Ctx, arguments: &str, timeout: Duration) -> Result<Value, ToolError> {
    let started = tokio::time::Instant::now();
    match tokio::time::timeout(timeout, call_contained(tool, ctx, arguments)).await {
        Ok(_) if started.elapsed() > timeout => Err(ToolError::Timeout),
        Ok(result) => result,
        Err(_) => Err(ToolError::Timeout),
    }
}

/// Records what a failed call's decision means for its intent. A write the
/// store does not take is logged: the lease then runs out and the sweep
/// moves the intent on conservatively (an unknown outcome for a tool that is
/// not idempotent).
pub(super) async fn settle_failure(
    store: &dyn Storage,
    lease: &Lease,
    state: State,
    error_text: &str,
    operator_error: &str,
    patience: Duration,
) {
    let finish = || match state {
        State::FailedPermanent => Finish::FailedPermanent {
            body: json!({"error": error_text}),
            error: error_text.to_owned(),
        },
        State::FailedRetryable => Finish::FailedRetryable {
            error: error_text.to_owned(),
        },
        _ => Finish::OutcomeUnknown {
            error: operator_error.to_owned(),
        },
    };
    if let Err(e) = retrying(patience, "record the failure", || store.finish(lease, finish())).await {
        tracing::error!(target: "gate::ledger", error = %e, key = %lease.key, "ledger transition refused");
    }
}

fn stopped(error: &LedgerError) -> Attempt {
    let reason = if error.is_in_progress() {
        FailReason::InProgress
    } else if error.is_key_reused() {
        FailReason::KeyReused
    } else {
        FailReason::LedgerUnavailable
    };
    Attempt::Stopped {
        reason,
        state: None,
        class: None,
        error: error.to_string(),
    }
}
