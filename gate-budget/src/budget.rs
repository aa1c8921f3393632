//! The budget configuration a `Gate` is built with.
//!
//! One value holds every limit, with gate's defaults, and validates each
//! setting as it is made, so a `Gate` never starts with a budget that would
//! fail later. It is plain configuration: the shared state (the users' token
//! windows) is created from it once, by [`Budget::token_budget`].

use std::time::Duration;

use crate::backoff::Backoff;
use crate::error::BudgetError;
use crate::task::{AttemptBudget, LatencyBudget, TaskBudget};
use crate::tokens::TokenLimit;

/// gate's budgets: repairs per task, added latency per task, repair tokens per
/// user over a rolling window, and the backoff between retries.
///
/// ```
/// use std::time::Duration;
/// use toolgate_budget::Budget;
///
/// let budget = Budget::default()
///     .with_max_repairs(3)?
///     .with_added_latency(Duration::from_secs(10))?;
/// assert_eq!(budget.max_repairs(), 3);
/// assert!(Budget::default().with_max_repairs(9).is_err()); // hard cap: 5 attempts
/// # Ok::<(), toolgate_budget::BudgetError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    attempts: AttemptBudget,
    latency: LatencyBudget,
    tokens: TokenLimit,
    backoff: Backoff,
    pending_approvals: u32,
}

impl Default for Budget {
    /// 2 repairs per task, 30 s added latency per task, 50,000 repair tokens
    /// per user per hour, full-jitter backoff from 100 ms to 20 s, 3
    /// approval requests open per task.
    fn default() -> Self {
        Budget {
            attempts: AttemptBudget::default(),
            latency: LatencyBudget::default(),
            tokens: TokenLimit::default(),
            backoff: Backoff::default(),
            pending_approvals: DEFAULT_PENDING_APPROVALS,
        }
    }
}

/// Approval requests a task may have open at once by default.
pub const DEFAULT_PENDING_APPROVALS: u32 = 3;

impl Budget {
    /// Repairs per task: 0 ..= 4 (at most 5 attempts with the first).
    pub fn with_max_repairs(self, max_repairs: u32) -> Result<Self, BudgetError> {
        Ok(Budget {
            attempts: AttemptBudget::new(max_repairs)?,
            ..self
        })
    }

    /// Wall-clock latency repairs may add to one task: 0 ..= 1 hour.
    pub fn with_added_latency(self, limit: Duration) -> Result<Self, BudgetError> {
        Ok(Budget {
            latency: LatencyBudget::new(limit)?,
            ..self
        })
    }

    /// Repair tokens per user per window: 1 ..= 10¹².
    pub fn with_repair_tokens(self, limit: u64) -> Result<Self, BudgetError> {
        Ok(Budget {
            tokens: TokenLimit::new(limit, self.tokens.window())?,
            ..self
        })
    }

    /// The rolling window of the token budget: 1 s ..= 7 days.
    pub fn with_token_window(self, window: Duration) -> Result<Self, BudgetError> {
        Ok(Budget {
            tokens: TokenLimit::new(self.tokens.limit(), window)?,
            ..self
        })
    }

    /// Approval requests of one task that may wait for a person at once:
    /// 1 ..= 32 (default 3). A call that would make one more fails with
    /// `approvals_pending`, without a request; the task goes on.
    pub fn with_pending_approvals(self, limit: u32) -> Result<Self, BudgetError> {
        if !(1..=32).contains(&limit) {
            return Err(BudgetError::new("pending_approvals", limit, "1 ..= 32"));
        }
        Ok(Budget {
            pending_approvals: limit,
            ..self
        })
    }

    /// Approval requests of one task that may wait for a person at once.
    pub fn pending_approvals(&self) -> u32 {
        self.pending_approvals
    }

    /// The backoff between retries (validated by [`Backoff::new`]).
    pub fn with_backoff(self, backoff: Backoff) -> Self {
        Budget { backoff, ..self }
    }

    /// Repairs per task.
    pub fn max_repairs(&self) -> u32 {
        self.attempts.max_repairs()
    }

    /// Added latency per task.
    pub fn added_latency(&self) -> Duration {
        self.latency.limit()
    }

    /// Repair tokens per user per window.
    pub fn repair_tokens(&self) -> u64 {
        self.tokens.limit()
    }

    /// The token window.
    pub fn token_window(&self) -> Duration {
        self.tokens.window()
    }

    /// The per-user token limit, as the store's window checks it.
    pub fn token_limit(&self) -> TokenLimit {
        self.tokens
    }

    /// The backoff.
    pub fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// Fresh per-task budgets.
    pub fn task(&self) -> TaskBudget {
        TaskBudget::new(self.attempts, self.latency, self.backoff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{DEFAULT_ADDED_LATENCY, DEFAULT_MAX_REPAIRS};

    #[test]
    fn default_is_the_documented_numbers() {
        let b = Budget::default();
        assert_eq!(b.max_repairs(), DEFAULT_MAX_REPAIRS);
        assert_eq!(b.added_latency(), DEFAULT_ADDED_LATENCY);
        assert_eq!(
            (b.repair_tokens(), b.token_window()),
            (50_000, Duration::from_secs(3600))
        );
        assert_eq!(
            (b.backoff().base(), b.backoff().cap()),
            (Duration::from_millis(100), Duration::from_secs(20))
        );
    }

    #[test]
    fn invalid_settings_are_errors_and_leave_nothing_half_set() {
        let err = Budget::default().with_repair_tokens(0).map(|_| ());
        assert_eq!(err.map_err(|e| e.parameter), Err("repair_tokens"));
        assert!(Budget::default().with_token_window(Duration::from_millis(10)).is_err());
        assert!(Budget::default().with_added_latency(Duration::from_secs(7200)).is_err());
        assert!(Budget::default().with_max_repairs(5).is_err());
        assert_eq!(Budget::default().with_max_repairs(4).map(|b| b.max_repairs()), Ok(4));
    }
}
