//! Approval requests: a call that must not run before a person agrees,
//! stored until a person decides about it.
//!
//! The runtime stores a request with the task's state and the decision
//! record that announced it, in one transaction
//! ([`TaskTransaction::insert_approval`](crate::TaskTransaction::insert_approval)).
//! A person decides through [`Approvals::decide_approval`]: a
//! compare-and-set on a request that is still pending and not past its
//! expiry, so two operators (or an operator and an MCP client) cannot both
//! decide it, and nothing decides it after it expired. The request binds to
//! its call: the tool, the canonical arguments and their SHA-256, and the
//! intent key the call runs under once approved, so the ledger (not the
//! approval) is what makes it run once.
//!
//! Expiry is not written by a sweep: a pending request past its
//! `expires_at` reads as [`ApprovalStatus::Expired`] everywhere
//! ([`ApprovalRecord::status_at`]), and refuses every decision.

use serde::{Deserialize, Serialize};

use crate::error::LedgerError;
use crate::future::BoxFuture;
use crate::time::Timestamp;
use crate::vocab::ApprovalStatus;

/// One approval request, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// `apr-` and 32 hex digits, unguessable: knowing a task's id does not
    /// let anyone name its requests.
    pub id: String,
    /// The user the task runs for.
    pub user: String,
    /// The task whose call waits.
    pub task_id: String,
    /// The id of the model's tool call that asked (its result answers it).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The canonical arguments (sorted keys, no whitespace): exactly what
    /// runs once approved.
    pub arguments: String,
    /// SHA-256 of `arguments`, hex: an approval covers these arguments only.
    pub arguments_sha256: String,
    /// The intent key the call runs under once approved.
    pub intent_key: String,
    /// Why a person is asked (the tool requires it, or the policy's reason).
    pub reason: String,
    /// When the call asked.
    pub requested_at: Timestamp,
    /// After this, the request is expired: it refuses every decision.
    pub expires_at: Timestamp,
    /// As stored: `Pending` until decided (see [`status_at`](Self::status_at)
    /// for expiry).
    pub status: ApprovalStatus,
    /// Who decided (an operator's name, or `mcp-client`).
    pub decided_by: Option<String>,
    /// When.
    pub decided_at: Option<Timestamp>,
    /// Why a person declined.
    pub denial_reason: Option<String>,
    /// What the person noted with the decision.
    pub note: Option<String>,
}

impl ApprovalRecord {
    /// The status at `now`: a pending request past its expiry is expired.
    pub fn status_at(&self, now: Timestamp) -> ApprovalStatus {
        if self.status == ApprovalStatus::Pending && now >= self.expires_at {
            ApprovalStatus::Expired
        } else {
            self.status
        }
    }

    /// The arguments pretty-printed, as a person reads them.
    pub fn arguments_pretty(&self) -> String {
        serde_json::from_str::<serde_json::Value>(&self.arguments)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or_else(|_| self.arguments.clone())
    }

    /// The request with `decision` applied, if it is still pending at `now`;
    /// otherwise the refusal that says where it stands.
    pub(crate) fn decided(&self, decision: &ApprovalDecision, now: Timestamp) -> Result<ApprovalRecord, LedgerError> {
        match self.status_at(now) {
            ApprovalStatus::Pending => {}
            ApprovalStatus::Expired => {
                return Err(LedgerError::invalid_transition(format!(
                    "approval {} expired at {} without a decision: the call will not run",
                    self.id,
                    self.expires_at.utc()
                )));
            }
            decided => {
                return Err(LedgerError::invalid_transition(format!(
                    "approval {} was already {decided} by {} at {}",
                    self.id,
                    self.decided_by.as_deref().unwrap_or("someone"),
                    self.decided_at
                        .map_or_else(|| "an unknown time".to_owned(), Timestamp::utc),
                )));
            }
        }
        check_text("the decider's name", &decision.by, 256)?;
        if let Some(note) = &decision.note {
            check_text("the note", note, 4096)?;
        }
        let mut new = self.clone();
        new.decided_by = Some(decision.by.clone());
        new.decided_at = Some(now);
        new.note = decision.note.clone();
        match &decision.verdict {
            Verdict::Approve => new.status = ApprovalStatus::Approved,
            Verdict::Deny { reason } => {
                check_text("the reason", reason, 4096)?;
                new.status = ApprovalStatus::Denied;
                new.denial_reason = Some(reason.clone());
            }
        }
        Ok(new)
    }
}

fn check_text(what: &str, text: &str, max: usize) -> Result<(), LedgerError> {
    if text.trim().is_empty() {
        return Err(LedgerError::invalid_input(format!("{what} is empty")));
    }
    if text.len() > max {
        return Err(LedgerError::invalid_input(format!("{what} is longer than {max} bytes")));
    }
    Ok(())
}

/// What a person decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run the call, once.
    Approve,
    /// Never run it; `reason` is what the model is told.
    Deny {
        /// Why (required: the model and the audit read it).
        reason: String,
    },
}

/// A person's decision about one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalDecision {
    /// The request.
    pub id: String,
    /// Who decides (recorded; not empty).
    pub by: String,
    /// Approve or deny.
    pub verdict: Verdict,
    /// A note kept with the decision.
    pub note: Option<String>,
}

/// Which requests to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApprovalQuery {
    /// Only requests in this status (as of now, expiry included).
    pub status: Option<ApprovalStatus>,
    /// Only this user's.
    pub user: Option<String>,
    /// Only this task's.
    pub task_id: Option<String>,
    /// At most this many, oldest request first.
    pub limit: Option<u32>,
}

/// Approval requests in the store, for the people who decide them.
pub trait Approvals: Send + Sync {
    /// The request `id` (its status as of now), if it exists.
    fn load_approval<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<ApprovalRecord>, LedgerError>>;

    /// The requests `query` selects, oldest first, with their status as of now.
    fn list_approvals<'a>(
        &'a self,
        query: &'a ApprovalQuery,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, LedgerError>>;

    /// Decides a pending request: a compare-and-set, so exactly one decision
    /// lands. Deciding a request that was already decided or has expired is
    /// `is_invalid_transition()` with a text that says which; an unknown id
    /// is `is_not_found()`; an empty decider or reason is
    /// `is_invalid_input()`. Returns the decided request.
    fn decide_approval<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<ApprovalRecord, LedgerError>>;
}

/// How a store's approval requests stand: the approvals part of
/// `gate report`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ApprovalReport {
    /// Requests made.
    pub requested: u64,
    /// Still waiting, not past their expiry.
    pub pending: u64,
    /// Approved.
    pub approved: u64,
    /// Denied.
    pub denied: u64,
    /// Past their expiry without a decision.
    pub expired: u64,
    /// The median time from request to decision over the decided requests,
    /// in seconds (the mean of the two middle ones for an even count);
    /// `None` when none was decided. Expired and pending requests do not
    /// count: they have no decision time.
    pub median_wait_seconds: Option<f64>,
}

impl ApprovalReport {
    /// Summarises `records` with their status as of `now`.
    pub fn from_records(records: &[ApprovalRecord], now: Timestamp) -> Self {
        let mut report = ApprovalReport::default();
        let mut waits: Vec<i64> = Vec::new();
        for record in records {
            report.requested += 1;
            let count = match record.status_at(now) {
                ApprovalStatus::Pending => &mut report.pending,
                ApprovalStatus::Approved => &mut report.approved,
                ApprovalStatus::Denied => &mut report.denied,
                ApprovalStatus::Expired => &mut report.expired,
            };
            *count += 1;
            if let Some(decided_at) = record.decided_at {
                waits.push((decided_at.as_millis() - record.requested_at.as_millis()).max(0));
            }
        }
        waits.sort_unstable();
        let middle = waits.len() / 2;
        report.median_wait_seconds = match waits.len() {
            0 => None,
            n if n % 2 == 1 => Some(waits[middle] as f64 / 1000.0),
            _ => Some((waits[middle - 1] + waits[middle]) as f64 / 2000.0),
        };
        report
    }
}

/// A fresh request id: `apr-` and 128 random bits.
pub fn new_approval_id() -> String {
    format!("apr-{}", crate::new_owner_token())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: &str, requested_s: i64, status: ApprovalStatus, decided_s: Option<i64>) -> ApprovalRecord {
        ApprovalRecord {
            id: id.to_owned(),
            user: "u1".into(),
            task_id: "t1".into(),
            call_id: "c1".into(),
            tool: "charge_card".into(),
            arguments: "{}".into(),
            arguments_sha256: String::new(),
            intent_key: "k".into(),
            reason: "r".into(),
            requested_at: Timestamp::from_millis(requested_s * 1000),
            expires_at: Timestamp::from_millis((requested_s + 3600) * 1000),
            status,
            decided_by: decided_s.map(|_| "ops".to_owned()),
            decided_at: decided_s.map(|s| Timestamp::from_millis(s * 1000)),
            denial_reason: None,
            note: None,
        }
    }

    // Waits of 10, 40, 20 and 30 s: the median of an even count is the mean
    // of 20 and 30. A pending request past its expiry counts as expired.
    #[test]
    fn the_report_counts_each_status_and_the_median_wait() {
        use ApprovalStatus::*;
        let records = [
            request("a", 0, Approved, Some(10)),
            request("b", 0, Denied, Some(40)),
            request("c", 100, Approved, Some(120)),
            request("d", 100, Denied, Some(130)),
            request("e", 0, Pending, None),
            request("f", 9_000, Pending, None),
        ];
        let report = ApprovalReport::from_records(&records, Timestamp::from_millis(10_000 * 1000));
        assert_eq!(
            report,
            ApprovalReport {
                requested: 6,
                pending: 1,
                approved: 2,
                denied: 2,
                expired: 1,
                median_wait_seconds: Some(25.0),
            }
        );
        let odd = ApprovalReport::from_records(&records[..3], Timestamp::from_millis(0));
        assert_eq!(odd.median_wait_seconds, Some(20.0));
        assert_eq!(
            ApprovalReport::from_records(&[], Timestamp::from_millis(0)).median_wait_seconds,
            None
        );
    }
}
