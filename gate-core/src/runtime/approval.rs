//! Approval: a call that must not run before a person agrees waits for one.
//!
//! Asked after admission (nobody is asked to approve a call that could not
//! run) and before the claim. A call needs a person when its tool is
//! declared `approval` or the gate's [`ApprovalPolicy`] says so. The task's
//! state remembers every request it made, by the call's fingerprint (tool
//! and canonical arguments), so the identical call finds its request:
//!
//! | the identical call's request | the call |
//! |---|---|
//! | none, and a person must agree | a new request is stored; the call waits (`await_approval`) |
//! | none, and the task already has its budget of requests waiting | **Fail** `approvals_pending`; no request is made |
//! | pending | waits again: the same request, not a second one |
//! | approved | **runs**, under the intent key the request names: the ledger makes it run once, in whichever worker comes first, and replays it after |
//! | denied | the definitive error "a person declined: REASON" (rule 3 refuses it from then on) |
//! | expired | the definitive error "no decision before EXPIRY" |
//!
//! An approval binds to its call: the request is found by the call's
//! fingerprint and then checked against the tool and the SHA-256 of the
//! canonical arguments, so it never covers other arguments. The request is
//! stored with the decision that announces it, in one commit (`settle`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};
use toolgate_ledger::{ApprovalRecord, ApprovalStatus, FailureReason, OpenApproval, new_approval_id};

use super::admit::Admitted;
use super::attempt::Attempt;
use super::gate::Inner;
use super::messages;
use super::persist;
use super::view::TaskView;
use crate::ToolSpec;

/// How long a request waits for a decision by default: 24 hours.
pub const DEFAULT_APPROVAL_EXPIRY: Duration = Duration::from_secs(24 * 60 * 60);
/// The longest expiry accepted: 30 days.
pub const MAX_APPROVAL_EXPIRY: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// What a policy is asked about one call: the tool, the validated
/// arguments, and whose task it is.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct ApprovalQuestion<'a> {
    /// The tool's declaration (its effects, its scopes).
    pub spec: &'a ToolSpec,
    /// The call's arguments, valid for the tool.
    pub arguments: &'a Value,
    /// The user the task runs for.
    pub user: &'a str,
    /// The task.
    pub task_id: &'a str,
}

/// Decides, per call, whether a person must agree before it runs: the
/// calls of tools declared `approval` always wait; a policy adds others (a
/// charge above an amount, a message to an address outside the company).
///
/// Asked for every valid call the gate has not already asked about for
/// the same arguments, after validation and before anything runs, so it
/// must be quick and must not block; a closure
/// `Fn(&ApprovalQuestion) -> Option<String>` is one.
pub trait ApprovalPolicy: Send + Sync + 'static {
    /// `Some(reason)` when a person must agree first: the reason is stored
    /// with the request and shown to the person deciding (not to the
    /// model). `None` lets the call run.
    fn needs_approval(&self, question: &ApprovalQuestion<'_>) -> Option<String>;
}

impl<F> ApprovalPolicy for F
where
    F: Fn(&ApprovalQuestion<'_>) -> Option<String> + Send + Sync + 'static,
{
    fn needs_approval(&self, question: &ApprovalQuestion<'_>) -> Option<String> {
        self(question)
    }
}

/// The approval settings a gate holds.
pub(super) struct ApprovalSettings {
    pub(super) policy: Option<Arc<dyn ApprovalPolicy>>,
    pub(super) expiry: Duration,
}

/// Whether the approval stage has anything to do for `admitted`: the task
/// made requests, the tool is declared `approval`, or a policy asks. Most
/// calls take none of these, and skip the stage's future.
pub(super) fn concerns(gate: &Inner, task: TaskView<'_>, admitted: &Admitted<'_>) -> bool {
    !task.record.state.approvals.is_empty()
        || admitted.spec().effects().needs_approval()
        || gate.approvals.policy.is_some()
}

/// The approval stage, `guarded` with the guard's reason when it stopped
/// the call: `Ok(None)` when the call runs as any other,
/// `Ok(Some(request))` when it runs because a person approved `request`,
/// and an attempt that ends the call otherwise (it waits, a person
/// declined, the task has too many requests waiting, the store is down).
pub(super) async fn approval(
    gate: &Inner,
    task: TaskView<'_>,
    call_id: &str,
    admitted: &Admitted<'_>,
    guarded: Option<String>,
) -> Result<Option<Box<ApprovalRecord>>, Attempt> {
    let open = &task.record.state.approvals;
    let policy = gate.approvals.policy.as_deref();
    let declared = admitted.spec().effects().needs_approval();
    let identity = admitted.identity();
    if let Some(made) = open.iter().find(|o| o.call_fp == identity.call_fp) {
        match load(gate, &made.id).await? {
            Some(request) if binds(&request, admitted.spec().name(), &identity.canonical) => {
                return answered(gate, request);
            }
            // A request that does not bind to this call (or vanished from
            // the store) covers nothing: the call is asked about afresh.
            _ => {}
        }
    }
    let reason = if declared {
        Some(messages::approval_required(admitted.spec().name()))
    } else if guarded.is_some() {
        guarded
    } else {
        policy.and_then(|p| {
            p.needs_approval(&ApprovalQuestion {
                spec: admitted.spec(),
                arguments: &identity.args,
                user: task.user,
                task_id: task.id,
            })
        })
    };
    let Some(reason) = reason else { return Ok(None) };
    let cap = gate.budget.pending_approvals();
    if waiting(gate, open).await? >= cap {
        return Err(Attempt::Stopped {
            reason: FailureReason::ApprovalsPending,
            state: None,
            class: None,
            error: format!("{cap} approval requests of the task already wait for a person"),
        });
    }
    let now = gate.store.now();
    Err(Attempt::AwaitingApproval {
        request: Box::new(ApprovalRecord {
            id: new_approval_id(),
            user: task.user.to_string(),
            task_id: task.id.to_string(),
            call_id: call_id.to_owned(),
            tool: admitted.spec().name().to_owned(),
            arguments: identity.canonical.clone(),
            arguments_sha256: sha256_hex(&identity.canonical),
            intent_key: admitted.intent_key(task.id).to_owned(),
            reason,
            requested_at: now,
            expires_at: now.saturating_add(gate.approvals.expiry),
            status: ApprovalStatus::Pending,
            decided_by: None,
            decided_at: None,
            denial_reason: None,
            note: None,
        }),
        new: true,
    })
}

/// What a stored request that binds to the call says.
fn answered(gate: &Inner, request: ApprovalRecord) -> Result<Option<Box<ApprovalRecord>>, Attempt> {
    match request.status_at(gate.store.now()) {
        ApprovalStatus::Approved => Ok(Some(Box::new(request))),
        ApprovalStatus::Pending => Err(Attempt::AwaitingApproval {
            request: Box::new(request),
            new: false,
        }),
        ApprovalStatus::Denied => Err(Attempt::Declined {
            text: messages::declined(
                &request.tool,
                request.denial_reason.as_deref().unwrap_or("no reason given"),
            ),
            approval_id: Some(request.id),
        }),
        ApprovalStatus::Expired => Err(Attempt::Declined {
            text: messages::approval_expired(&request.tool, request.expires_at),
            approval_id: Some(request.id),
        }),
    }
}

/// Whether `request` is for a call of `tool` with exactly the `canonical`
/// arguments.
fn binds(request: &ApprovalRecord, tool: &str, canonical: &str) -> bool {
    request.tool == tool && request.arguments_sha256 == sha256_hex(canonical) && request.arguments == canonical
}

/// How many of the task's requests still wait for a person. Only requests
/// whose decision has not reached the task can; those are loaded only when
/// there are enough of them to reach the budget.
async fn waiting(gate: &Inner, open: &[OpenApproval]) -> Result<u32, Attempt> {
    let undelivered: Vec<&OpenApproval> = open.iter().filter(|o| !o.delivered).collect();
    if (undelivered.len() as u64) < u64::from(gate.budget.pending_approvals()) {
        return Ok(u32::try_from(undelivered.len()).unwrap_or(u32::MAX));
    }
    let now = gate.store.now();
    let mut pending = 0;
    for made in undelivered {
        if load(gate, &made.id)
            .await?
            .is_some_and(|r| r.status_at(now) == ApprovalStatus::Pending)
        {
            pending += 1;
        }
    }
    Ok(pending)
}

/// The request `id`, read while the store is unavailable for at most the
/// gate's patience.
async fn load(gate: &Inner, id: &str) -> Result<Option<ApprovalRecord>, Attempt> {
    persist::retrying(gate.store_patience, "load an approval request", || {
        gate.store.load_approval(id)
    })
    .await
    .map_err(|e| Attempt::StoreDown(e.to_string()))
}

/// SHA-256 of `text`, in hex: what an approval binds to.
pub(super) fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}
