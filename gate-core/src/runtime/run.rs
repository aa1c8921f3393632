//! The run: the tool called once, with its context, panics contained and
//! cut off at its timeout.
//!
//! The first run of a call takes the arguments admission already parsed
//! into the tool's own types; a resend parses the validated text again. A
//! tool's internal error (a panic's message, a bug's error) is never shown
//! to the model: it is logged here, for the operator.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use serde_json::Value;
use toolgate_ledger::Lease;

use super::admit::Admitted;
use super::attempt::Attempt;
use super::gate::Inner;
use super::step::ToolCall;
use super::view::TaskView;
use crate::tool::{call_contained, run_contained};
use crate::{Ctx, PreparedCall, Principal, Tool, ToolError};

/// Runs `admitted` once under `lease` (the claim's, for a side effect) and
/// says what came of it.
pub(super) async fn run(
    gate: &Inner,
    task: TaskView<'_>,
    call: &Arc<ToolCall>,
    admitted: &Admitted<'_>,
    lease: Option<Box<Lease>>,
) -> Attempt {
    let principal = Principal::shared(task.user, task.granted);
    let ctx = match admitted.logged_key(task.id) {
        Some(key) => Ctx::keyed(task.id, principal, call, key.to_owned()),
        None => Ctx::with_derived_key(task.id, principal, call, admitted.validator, admitted.spec().key_args()),
    };
    let how = match admitted.take_prepared() {
        Some(prepared) => How::Prepared(prepared),
        None => How::Text(admitted.tool, admitted.arguments()),
    };
    match call_in_time(how, ctx, admitted.timeout(gate)).await {
        (Ok(value), _) => Attempt::Returned {
            value,
            is_error: false,
            replayed: false,
            lease,
        },
        (Err(error), elapsed) => {
            if let ToolError::Internal(cause) = &error {
                internal_error(task.id, call, cause);
            }
            Attempt::Failed { error, lease, elapsed }
        }
    }
}

/// How the tool is called: its arguments already parsed into its own types
/// (one pass over the text, in admission), or the validated text.
enum How<'t, 'p> {
    Prepared(PreparedCall<'p>),
    Text(&'t dyn Tool, &'t str),
}

/// Runs the tool, cancelled at `timeout`, and says how long it took: an
/// async tool's future is dropped there; a tool that blocks its thread
/// cannot be interrupted, so a result it returns late is discarded. Either
/// way the call is a `Timeout` (its outcome is unknown), and the lease,
/// which outlasts the timeout, is still held when the decision is recorded.
async fn call_in_time(how: How<'_, '_>, ctx: Ctx, timeout: Duration) -> (Result<Value, ToolError>, Duration) {
    let started = tokio::time::Instant::now();
    let mut contained = std::pin::pin!(async move {
        match how {
            How::Prepared(prepared) => run_contained(prepared, ctx).await,
            How::Text(tool, arguments) => call_contained(tool, &ctx, arguments).await,
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

/// Logs a tool's internal error for the operator (out of line: rare).
#[cold]
#[inline(never)]
fn internal_error(task: &str, call: &ToolCall, cause: &dyn std::fmt::Display) {
    tracing::error!(target: "gate::tool", task = %task, call_id = %call.id, tool = %call.name, cause = %cause, "the tool failed with an internal error");
}
