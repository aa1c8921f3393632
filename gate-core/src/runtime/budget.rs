//! The budgets as the runtime consults them.
//!
//! Three independent limits must all allow a repair (the policy's rule 4):
//! repairs per task, wall-clock latency added per task, and repair tokens per
//! user over a rolling window. The first two live with the task (in
//! `gate-budget`, stored with the task's state); the window lives in the
//! store, shared by every worker. A fourth, optional, bounds gate's own
//! resends across calls: a [`RetryBudget`] set on the builder, read when an
//! internal retry is chosen and drawn on when the resend is sent, so a
//! dependency failing for every call at once gets a share of its traffic in
//! resends rather than one per call. The runtime asks them only after the
//! policy has chosen a repair, so a budget can refuse a repair but never
//! create one, and a refusal is turned into a decision by the same pure
//! policy (`decide` with that budget closed).

use std::time::Duration;

pub use toolgate_budget::{Budget, RetryBudget};
use toolgate_budget::{Refusal, TaskBudget};
use toolgate_ledger::TaskState;

use super::policy::BudgetVerdict;

/// The task's own budgets as `state` left them, with the time a failed
/// run took (`failed_after`) already spent.
pub(crate) fn task_budget(limits: &Budget, state: &TaskState, failed_after: Option<Duration>) -> TaskBudget {
    let mut budget = limits.task();
    budget.restore(state.budget);
    if let Some(elapsed) = failed_after {
        budget.record_latency(elapsed);
    }
    budget
}

/// The verdict that re-runs the policy after the retry budget refused a
/// resend.
pub(crate) const RESENDS_REFUSED: BudgetVerdict = BudgetVerdict {
    retries: false,
    ..BudgetVerdict::OPEN
};

/// The verdict that re-runs the policy after `refusal`: the budget that said
/// no is closed, the others open.
pub(crate) fn closed(refusal: &Refusal) -> BudgetVerdict {
    let open = BudgetVerdict::OPEN;
    match refusal {
        Refusal::Attempts(_) => BudgetVerdict {
            attempts: false,
            ..open
        },
        Refusal::Latency(_) => BudgetVerdict { latency: false, ..open },
        Refusal::Tokens(_) => BudgetVerdict { tokens: false, ..open },
    }
}
