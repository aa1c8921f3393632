//! The budgets as the runtime consults them.
//!
//! Three independent limits must all allow a repair (DESIGN.md rule 4):
//! repairs per task, wall-clock latency added per task, and repair tokens per
//! user over a rolling window. They live in `gate-budget`; the runtime asks
//! them only after the policy has chosen a repair, so a budget can refuse a
//! repair but never create one, and a refusal is turned into a decision by
//! the same pure policy (`decide` with that budget closed).

pub use gate_budget::{Budget, Pushback, Refusal, RepairTokenBudget, TaskBudget, estimate_tokens, repair_cost};

use super::policy::BudgetVerdict;

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
