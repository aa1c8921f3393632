//! [`ApprovalInbox`]: the approval requests of a gate's store, for the
//! people (and programs) who decide them.
//!
//! Deciding is a compare-and-set in the store, so two people deciding the
//! same request at once cannot both win, and nothing is decided after it
//! expired. Deciding runs nothing: the approved call runs in the task, on
//! whichever worker asks next ([`Task::take_decided`](super::Task::take_decided)
//! or the identical call), under the intent key the request names, once.

use std::sync::Arc;

use toolgate_ledger::{ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, LedgerError, Storage, Verdict};

use super::gate::Gate;

/// The approval requests in a gate's store: list them, read one, decide.
///
/// ```no_run
/// # async fn demo(gate: toolgate_core::Gate) -> Result<(), toolgate_core::ledger::LedgerError> {
/// let inbox = gate.approvals();
/// for request in inbox.pending().await? {
///     println!("{} wants {} with {}", request.user, request.tool, request.arguments_pretty());
/// }
/// inbox.approve("apr-0123", "ops@example.com", Some("checked with the customer")).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ApprovalInbox {
    store: Arc<dyn Storage>,
}

impl std::fmt::Debug for ApprovalInbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalInbox").field("store", &self.store).finish()
    }
}

impl Gate {
    /// The approval requests of this gate's store (every worker's).
    pub fn approvals(&self) -> ApprovalInbox {
        ApprovalInbox {
            store: self.inner().store.clone(),
        }
    }
}

impl ApprovalInbox {
    /// The requests `query` selects, oldest first, their status as of now.
    pub async fn list(&self, query: &ApprovalQuery) -> Result<Vec<ApprovalRecord>, LedgerError> {
        self.store.list_approvals(query).await
    }

    /// Every request still waiting for a decision, oldest first.
    pub async fn pending(&self) -> Result<Vec<ApprovalRecord>, LedgerError> {
        let query = ApprovalQuery {
            status: Some(ApprovalStatus::Pending),
            ..ApprovalQuery::default()
        };
        self.store.list_approvals(&query).await
    }

    /// The request `id`, if it exists.
    pub async fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, LedgerError> {
        self.store.load_approval(id).await
    }

    /// Approves the pending request `id` as `by`, with an optional `note`
    /// (both recorded): its call runs once, the next time its task asks.
    /// Approving a request that was decided or has expired is an error that
    /// says so (`is_invalid_transition()`); an unknown id is
    /// `is_not_found()`; an empty `by` is `is_invalid_input()`.
    pub async fn approve(&self, id: &str, by: &str, note: Option<&str>) -> Result<ApprovalRecord, LedgerError> {
        self.decide(ApprovalDecision {
            id: id.to_owned(),
            by: by.to_owned(),
            verdict: Verdict::Approve,
            note: note.map(str::to_owned),
        })
        .await
    }

    /// Denies the pending request `id` as `by`: its call never runs, and
    /// the model is told "a person declined: REASON". Errors as
    /// [`approve`](Self::approve); an empty reason is `is_invalid_input()`.
    pub async fn deny(&self, id: &str, by: &str, reason: &str) -> Result<ApprovalRecord, LedgerError> {
        self.decide(ApprovalDecision {
            id: id.to_owned(),
            by: by.to_owned(),
            verdict: Verdict::Deny {
                reason: reason.to_owned(),
            },
            note: None,
        })
        .await
    }

    /// Decides as `decision` says, a denial with a note included: the
    /// general form of
    /// [`approve`](Self::approve) and [`deny`](Self::deny).
    pub async fn decide(&self, decision: ApprovalDecision) -> Result<ApprovalRecord, LedgerError> {
        self.store.decide_approval(&decision).await
    }
}
