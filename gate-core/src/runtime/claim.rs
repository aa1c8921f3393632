//! The claim: a side effect's intent, claimed with its dispatch in one
//! commit before the tool runs.
//!
//! From that commit on, a crash is an unknown outcome, never a silent second
//! run; a claim the store did not record never runs the tool. The ledger
//! may also answer instead: the intent already finished (its stored outcome
//! is replayed), its outcome is unknown, another worker holds it, or its key
//! was used for other arguments. Read-only tools claim nothing. The outcome
//! is not written here: it is committed with the decision about it
//! (`settle`), before anyone is told about it.

use std::time::Duration;

use toolgate_ledger::{Claim, ClaimRequest, FailureClass, FailureReason, Lease, LedgerError, State, new_owner_token};

use super::admit::Admitted;
use super::attempt::Attempt;
use super::gate::Inner;
use super::persist::retrying;
use super::view::TaskView;

/// What a lease holds beyond the tool's timeout and the store patience that
/// recording its outcome may take: the time between the claim and the call.
const LEASE_MARGIN: Duration = Duration::from_secs(5);

/// Claims `admitted`'s intent with its dispatch, when its tool has side
/// effects: `Ok` with the lease the run holds (none for a read-only tool),
/// or the attempt the ledger's answer ends the call with.
pub(super) async fn claim(
    gate: &Inner,
    task: TaskView<'_>,
    admitted: &Admitted<'_>,
) -> Result<Option<Box<Lease>>, Attempt> {
    if !admitted.claims() {
        return Ok(None);
    }
    let spec = admitted.spec();
    let request = ClaimRequest {
        user: String::from(&**task.user),
        key: admitted.intent_key(task.id).to_owned(),
        fingerprint: admitted.identity().key_fp.clone(),
        task_id: String::from(&**task.id),
        tool: spec.name().to_owned(),
        idempotent: spec.effects().is_idempotent(),
        lease: admitted.timeout(gate) + gate.store_patience + LEASE_MARGIN,
        owner: Some(new_owner_token()),
    };
    let store = &*gate.store;
    // Boxed, as every wait a call rarely makes: inline, its future and its
    // code would sit in every call's, read-only ones included.
    match Box::pin(retrying(gate.store_patience, "claim", || {
        store.claim_and_dispatch(&request)
    }))
    .await
    {
        Ok(Claim::Acquired(lease)) => Ok(Some(Box::new(lease))),
        Ok(Claim::Replay { outcome, .. }) => Err(Attempt::Returned {
            value: outcome.value,
            is_error: outcome.is_error,
            replayed: true,
            lease: None,
        }),
        Ok(Claim::OutcomeUnknown(record)) => Err(Attempt::Stopped {
            reason: FailureReason::OutcomeUnknown,
            state: Some(State::OutcomeUnknown),
            class: Some(FailureClass::OutcomeUnknown),
            error: record
                .error
                .clone()
                .unwrap_or_else(|| "an earlier attempt's outcome is unknown".to_owned()),
        }),
        Err(e) => Err(refused(&e)),
    }
}

/// A claim the ledger refused, as the attempt it ends.
fn refused(error: &LedgerError) -> Attempt {
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
