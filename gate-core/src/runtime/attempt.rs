//! One attempt at running a validated call, and the ledger write before it.
//!
//! For a tool with side effects the intent is claimed with its dispatch in
//! one commit before the tool runs, so a crash from then on is an unknown
//! outcome, never a silent second run; a claim the store did not record never
//! runs the tool. The outcome is not written here: it is committed with the
//! decision about it (the task's state and the decision record), in one
//! transaction, before anyone is told about it. Read-only tools touch no
//! ledger at all.
//!
//! Everything here takes its inputs explicitly (the store, the tool, the
//! call's context and claim, the patience); nothing reaches back into the task.

use std::future::Future;
use std::task::Poll;
use std::time::Duration;

use gate_ledger::{
    Claim, ClaimRequest, FailureClass, FailureReason, Finish, Lease, LedgerError, Outcome, State, Storage,
};
use serde_json::{Value, json};

use super::persist::retrying;
use crate::tool::run_contained;
use crate::{Ctx, PreparedCall, Tool, ToolError, call_contained};

/// What one attempt produced.
pub(super) enum Attempt {
    /// The tool ran: its result, the lease when the intent was claimed (its
    /// outcome is still to be recorded), and how long the call took.
    Ran {
        result: Result<Value, ToolError>,
        lease: Option<Box<Lease>>,
        elapsed: Duration,
    },
    /// The intent had finished before: its stored outcome, replayed.
    Replayed(Outcome),
    /// The ledger answered before the tool ran; the tool did not run.
    Stopped {
        reason: FailureReason,
        state: Option<State>,
        class: Option<FailureClass>,
        error: String,
    },
}

/// How the tool is called: its arguments already parsed into its own types
/// (one pass over the text, in admission), or the validated text.
pub(super) enum Call<'t, 'p> {
    Prepared(PreparedCall<'p>),
    Text(&'t dyn Tool, &'t str),
}

/// Claims the intent with its dispatch (when `claim` is given), then runs
/// the tool with panics contained and cut off at `timeout`.
pub(super) async fn run(
    store: &dyn Storage,
    call: Call<'_, '_>,
    ctx: Ctx,
    claim: Option<&ClaimRequest>,
    timeout: Duration,
    patience: Duration,
) -> Attempt {
    let lease = match claim {
        None => None,
        // Committed before the tool runs: a crash from here on is OutcomeUnknown.
        // Boxed, as every wait a call rarely makes: inline, its future and
        // its code would sit in every call's, read-only ones included.
        Some(request) => match Box::pin(retrying(patience, "claim", || store.claim_and_dispatch(request))).await {
            Ok(Claim::Acquired(lease)) => Some(Box::new(lease)),
            Ok(Claim::Replay { outcome, .. }) => return Attempt::Replayed(outcome),
            Ok(Claim::OutcomeUnknown(record)) => {
                return Attempt::Stopped {
                    reason: FailureReason::OutcomeUnknown,
                    state: Some(State::OutcomeUnknown),
                    class: Some(FailureClass::OutcomeUnknown),
                    error: record
                        .error
                        .clone()
                        .unwrap_or_else(|| "an earlier attempt's outcome is unknown".to_owned()),
                };
            }
            Err(e) => return stopped(&e),
        },
    };
    let (result, elapsed) = call_in_time(call, ctx, timeout).await;
    Attempt::Ran { result, lease, elapsed }
}

/// Runs the tool, cancelled at `timeout`, and says how long it took: an
/// async tool's future is dropped there; a tool that blocks its thread
/// cannot be interrupted, so a result it returns late is discarded. Either
/// way the call is a `Timeout` (its outcome is unknown), and the lease,
/// which outlasts the timeout, is still held when the decision is recorded.
async fn call_in_time(call: Call<'_, '_>, ctx: Ctx, timeout: Duration) -> (Result<Value, ToolError>, Duration) {
    let started = tokio::time::Instant::now();
    let mut contained = std::pin::pin!(async move {
        match call {
            Call::Prepared(prepared) => run_contained(prepared, ctx).await,
            Call::Text(tool, arguments) => call_contained(tool, &ctx, arguments).await,
        }
    });
    // Most tools (every synchronous one) finish on their first poll: only
    // one that is still running needs a timer.
    let first = std::future::poll_fn(|cx| Poll::Ready(contained.as_mut().poll(cx))).await;
    let result = match first {
        Poll::Ready(result) => Some(result),
        Poll::Pending => match started.checked_add(timeout) {
            Some(deadline) => tokio::time::timeout_at(deadline, contained).await.ok(),
            // A timeout past the clock's range never fires.
            None => Some(contained.await),
        },
    };
    let elapsed = started.elapsed();
    match result {
        Some(result) if elapsed <= timeout => (result, elapsed),
        _ => (Err(ToolError::Timeout), elapsed),
    }
}

/// What a failed call's decision means for its intent, as the ledger
/// stores it: `error_text` is what a replay shows the model,
/// `operator_error` what a person reconciling an unknown outcome reads.
pub(super) fn failure_finish(state: State, error_text: &str, operator_error: &str) -> Finish {
    match state {
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
    }
}

/// Sends an intent's finish once on its own, when the decision about it
/// could not be committed: the store just failed for the whole patience, so
/// it is not waited for again. A write the store does not take is logged:
/// the lease then runs out and the sweep moves the intent on conservatively
/// (an unknown outcome for a tool that is not idempotent). True if it landed.
pub(super) async fn finish_alone(store: &dyn Storage, lease: &Lease, finish: Finish) -> bool {
    match store.finish(lease, finish).await {
        Ok(_) => true,
        Err(e) => {
            tracing::error!(target: "gate::ledger", error = %e, key = %lease.key, "ledger transition refused");
            false
        }
    }
}

fn stopped(error: &LedgerError) -> Attempt {
    let reason = if error.is_in_progress() {
        FailureReason::InProgress
    } else if error.is_key_reused() {
        FailureReason::KeyReused
    } else {
        FailureReason::LedgerUnavailable
    };
    Attempt::Stopped {
        reason,
        state: None,
        class: None,
        error: error.to_string(),
    }
}
