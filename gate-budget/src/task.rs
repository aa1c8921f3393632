//! The budgets of one task: how many repairs and how much added latency, and
//! the plan-then-commit protocol that combines them with the user's token
//! window.
//!
//! The runtime asks one question before it returns a Reject or a Retry: "may
//! this task afford one more repair?" [`TaskBudget`] answers for the task's
//! own budgets with a [`RepairPlan`] that takes nothing; the store answers for
//! the user's window; only when both allow is the plan committed, so a
//! refusal never leaves a half-spent budget behind.
//!
//! A budget only ever refuses. It is consulted after the policy has chosen
//! Reject or Retry from the failure class and the tool's effects, so it can
//! turn a repair into a Fail but never a Fail (or an `OutcomeUnknown`) into a
//! retry: nothing here takes a failure class or produces a decision.

use std::time::Duration;

use rand::Rng;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::backoff::{Backoff, Pushback};
use crate::error::BudgetError;
use crate::tokens::TokensExhausted;

/// Default repairs per task: 2 (3 attempts in all, as in the SRE book and
/// AWS's standard mode).
pub const DEFAULT_MAX_REPAIRS: u32 = 2;
/// Hard cap on attempts per task, the first included: 5 (gRPC's client-side
/// cap). No configuration can exceed it, so at most 4 repairs.
pub const MAX_ATTEMPTS: u32 = 5;
/// Default added latency per task: 30 s.
pub const DEFAULT_ADDED_LATENCY: Duration = Duration::from_secs(30);
/// The largest added-latency budget accepted: one hour.
pub const MAX_ADDED_LATENCY: Duration = Duration::from_secs(3600);

/// Repairs allowed per task, under a hard cap of [`MAX_ATTEMPTS`] attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptBudget {
    max_repairs: u32,
    used: u32,
}

/// No repairs left in this task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("attempt budget exhausted: {max_repairs} repairs per task already used")]
pub struct AttemptsExhausted {
    /// The task's limit.
    pub max_repairs: u32,
}

impl AttemptBudget {
    /// At most `max_repairs` repairs after the first attempt.
    ///
    /// * `max_repairs`: 0 ..= 4, so attempts (`max_repairs + 1`) never exceed
    ///   [`MAX_ATTEMPTS`].
    pub fn new(max_repairs: u32) -> Result<Self, BudgetError> {
        if max_repairs >= MAX_ATTEMPTS {
            return Err(BudgetError::new(
                "max_repairs",
                max_repairs,
                "between 0 and 4 (at most 5 attempts)",
            ));
        }
        Ok(AttemptBudget { max_repairs, used: 0 })
    }

    /// The same limit counted in attempts, the first included: 1 ..= 5.
    pub fn with_max_attempts(max_attempts: u32) -> Result<Self, BudgetError> {
        if !(1..=MAX_ATTEMPTS).contains(&max_attempts) {
            return Err(BudgetError::new("max_attempts", max_attempts, "between 1 and 5"));
        }
        Ok(AttemptBudget {
            max_repairs: max_attempts - 1,
            used: 0,
        })
    }

    /// Whether one more repair is allowed, without taking it.
    pub fn check(&self) -> Result<(), AttemptsExhausted> {
        if self.used < self.max_repairs {
            Ok(())
        } else {
            Err(AttemptsExhausted {
                max_repairs: self.max_repairs,
            })
        }
    }

    /// Takes one repair; returns its number (1 for the first repair).
    pub fn try_acquire(&mut self) -> Result<u32, AttemptsExhausted> {
        self.check()?;
        self.used += 1;
        Ok(self.used)
    }

    /// Repairs taken so far.
    pub fn used(&self) -> u32 {
        self.used
    }

    /// Repairs still allowed.
    pub fn remaining(&self) -> u32 {
        self.max_repairs - self.used
    }

    /// The limit in repairs.
    pub fn max_repairs(&self) -> u32 {
        self.max_repairs
    }

    /// The limit in attempts, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.max_repairs + 1
    }
}

impl Default for AttemptBudget {
    /// Two repairs.
    fn default() -> Self {
        AttemptBudget {
            max_repairs: DEFAULT_MAX_REPAIRS,
            used: 0,
        }
    }
}

/// Wall-clock latency a task's repairs may add: backoff sleeps plus the
/// duration of repair attempts (a retried call, or the model's turn after a
/// Reject). The first attempt is not counted; it would have happened anyway.
///
/// The task records what it spends; a retry is planned only if the
/// latency already added, plus the delay, plus the attempt's timeout, fits in
/// the limit (the analogue of Temporal's schedule-to-close timeout). Added
/// latency therefore stays within the limit as long as attempts respect their
/// timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyBudget {
    limit: Duration,
    added: Duration,
}

/// Why a retry cannot be scheduled within the latency budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum LatencyRefusal {
    /// `added + delay + attempt_timeout` exceeds the limit.
    #[error(
        "latency budget exhausted: {added:?} added + {delay:?} delay + {attempt_timeout:?} attempt timeout > {limit:?}"
    )]
    Exhausted {
        /// Latency already added by this task's repairs.
        added: Duration,
        /// The delay that would have been slept (backoff or server hint).
        delay: Duration,
        /// The expected timeout of the repair attempt.
        attempt_timeout: Duration,
        /// The task's limit.
        limit: Duration,
    },
    /// The server's hint was negative or unparseable: no retry (gRPC A6).
    #[error("the server's retry hint was unusable: not retrying")]
    PushbackRefused,
}

impl LatencyBudget {
    /// A budget of `limit` added latency: 0 ..= 1 hour. Zero allows only
    /// repairs that add no time (none, in practice).
    pub fn new(limit: Duration) -> Result<Self, BudgetError> {
        if limit > MAX_ADDED_LATENCY {
            return Err(BudgetError::new("added_latency", limit, "at most 1 hour"));
        }
        Ok(LatencyBudget {
            limit,
            added: Duration::ZERO,
        })
    }

    /// Whether a repair that sleeps `delay` and may take up to
    /// `attempt_timeout` fits: `added + delay + attempt_timeout ≤ limit`.
    pub fn check(&self, delay: Duration, attempt_timeout: Duration) -> Result<(), LatencyRefusal> {
        let needed = self.added.saturating_add(delay).saturating_add(attempt_timeout);
        if needed <= self.limit {
            Ok(())
        } else {
            Err(LatencyRefusal::Exhausted {
                added: self.added,
                delay,
                attempt_timeout,
                limit: self.limit,
            })
        }
    }

    /// The delay before retry number `retry` (1-based), if the retry fits.
    ///
    /// * [`Pushback::After`]: the server's delay, exactly, if it fits; if it
    ///   does not, no retry (coming back earlier than asked is not an option,
    ///   and waiting longer than the budget is not either).
    /// * [`Pushback::Refused`]: no retry.
    /// * [`Pushback::None`]: a delay drawn from `backoff`, if it fits.
    pub fn plan_retry<R: Rng + ?Sized>(
        &self,
        backoff: &Backoff,
        retry: u32,
        pushback: Pushback,
        attempt_timeout: Duration,
        rng: &mut R,
    ) -> Result<Duration, LatencyRefusal> {
        let delay = match pushback {
            Pushback::Refused => return Err(LatencyRefusal::PushbackRefused),
            Pushback::After(delay) => delay,
            Pushback::None => backoff.delay(retry, rng),
        };
        self.check(delay, attempt_timeout)?;
        Ok(delay)
    }

    /// Adds latency the task has spent on repair (a sleep, a repair attempt).
    pub fn record(&mut self, spent: Duration) {
        self.added = self.added.saturating_add(spent);
    }

    /// Latency added so far.
    pub fn added(&self) -> Duration {
        self.added
    }

    /// Latency still available.
    pub fn remaining(&self) -> Duration {
        self.limit.saturating_sub(self.added)
    }

    /// The limit.
    pub fn limit(&self) -> Duration {
        self.limit
    }
}

impl Default for LatencyBudget {
    /// 30 s.
    fn default() -> Self {
        LatencyBudget {
            limit: DEFAULT_ADDED_LATENCY,
            added: Duration::ZERO,
        }
    }
}

/// Why a repair was refused: which budget said no.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Refusal {
    /// The task has used all its repairs.
    #[error(transparent)]
    Attempts(#[from] AttemptsExhausted),
    /// The retry does not fit in the task's added-latency budget, or the
    /// server's hint was unusable.
    #[error(transparent)]
    Latency(#[from] LatencyRefusal),
    /// The user's repair-token window does not hold the repair's cost.
    #[error(transparent)]
    Tokens(#[from] TokensExhausted),
}

/// Permission for one repair. For a Retry, sleep `delay` before the attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The repair's number within the task (1 for the first repair).
    pub repair: u32,
    /// How long to wait before the attempt (zero for a Reject).
    pub delay: Duration,
    /// Tokens charged to the user.
    pub tokens: u64,
}

/// A repair the task's own budgets allow, not yet taken: the runtime asks the
/// user's token window next and [`commits`](TaskBudget::commit) the plan only
/// if the window grants the tokens too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "commit the plan once the token window granted it, or drop it to take nothing"]
pub struct RepairPlan {
    delay: Duration,
    retry: bool,
}

impl RepairPlan {
    /// How long to wait before the attempt (zero for a Reject).
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// Whether the repair is a retry (the backoff grows with retries only).
    pub fn is_retry(&self) -> bool {
        self.retry
    }
}

/// The budgets a task owns: attempts, added latency and the backoff between
/// retries, plus the repair tokens it has spent.
///
/// The third budget, the user's token window, is shared by every task of the
/// user on every worker, so it lives in the store (see [`TokenWindow`](crate::TokenWindow)).
/// A repair therefore takes three steps, none of which commits anything
/// unless all allow: [`plan_reject`](Self::plan_reject) or
/// [`plan_retry`](Self::plan_retry) checks this task's budgets, the store
/// reserves the tokens, and [`commit`](Self::commit) takes the repair.
/// [`record_latency`](Self::record_latency) adds the measured duration of each
/// repair attempt, and [`settle_tokens`](Self::settle_tokens) replaces an
/// estimate by the provider's real usage.
///
/// Made by [`Budget::task`](crate::Budget::task).
#[derive(Clone, Debug)]
pub struct TaskBudget {
    attempts: AttemptBudget,
    latency: LatencyBudget,
    backoff: Backoff,
    repair_tokens: u64,
    retries: u32,
}

impl TaskBudget {
    /// A task with the given budgets.
    pub fn new(attempts: AttemptBudget, latency: LatencyBudget, backoff: Backoff) -> Self {
        TaskBudget {
            attempts,
            latency,
            backoff,
            repair_tokens: 0,
            retries: 0,
        }
    }

    /// May this task return a Reject whose repair turn is expected to take up
    /// to `expected_turn` (the model's turn; `Duration::ZERO` if unknown)?
    /// Nothing is taken until the plan is committed.
    pub fn plan_reject(&self, expected_turn: Duration) -> Result<RepairPlan, Refusal> {
        self.attempts.check()?;
        self.latency.check(Duration::ZERO, expected_turn)?;
        Ok(RepairPlan {
            delay: Duration::ZERO,
            retry: false,
        })
    }

    /// May this task retry a failed call whose attempt times out after
    /// `attempt_timeout`, given the server's `pushback`? The plan's delay
    /// comes from the backoff (drawn from `rng`) or from the pushback.
    ///
    /// Call it only after the policy has chosen Retry: it can refuse a retry,
    /// never create one. Nothing is taken until the plan is committed.
    pub fn plan_retry<R: Rng + ?Sized>(
        &self,
        pushback: Pushback,
        attempt_timeout: Duration,
        rng: &mut R,
    ) -> Result<RepairPlan, Refusal> {
        self.attempts.check()?;
        // The backoff grows with retries only: a Reject is the model's turn,
        // not a call to a struggling service.
        let delay = self
            .latency
            .plan_retry(&self.backoff, self.retries + 1, pushback, attempt_timeout, rng)?;
        Ok(RepairPlan { delay, retry: true })
    }

    /// Takes the repair `plan` describes, charging `tokens` (what the user's
    /// window granted) to the task. Refused, taking nothing, if another plan
    /// spent the last repair since this one was made.
    pub fn commit(&mut self, plan: RepairPlan, tokens: u64) -> Result<Grant, Refusal> {
        let repair = self.attempts.try_acquire()?;
        self.latency.record(plan.delay);
        self.repair_tokens = self.repair_tokens.saturating_add(tokens);
        if plan.retry {
            self.retries += 1;
        }
        Ok(Grant {
            repair,
            delay: plan.delay,
            tokens,
        })
    }

    /// Adds the measured duration of a repair attempt (or of the model's turn
    /// after a Reject) to the task's added latency.
    pub fn record_latency(&mut self, spent: Duration) {
        self.latency.record(spent);
    }

    /// Replaces `estimated` repair tokens by the provider's `actual` usage in
    /// the task's total (the user's window is settled by the store).
    pub fn settle_tokens(&mut self, estimated: u64, actual: u64) {
        self.repair_tokens = self.repair_tokens.saturating_sub(estimated).saturating_add(actual);
    }

    /// The task's attempt budget.
    pub fn attempts(&self) -> &AttemptBudget {
        &self.attempts
    }

    /// The task's latency budget.
    pub fn latency(&self) -> &LatencyBudget {
        &self.latency
    }

    /// What the task has spent, to store with the task and hand to
    /// [`restore`](Self::restore) when it resumes after a restart, so a
    /// restart does not hand out a fresh budget.
    pub fn state(&self) -> TaskBudgetState {
        TaskBudgetState {
            repairs: self.attempts.used,
            retries: self.retries,
            added_latency_ms: u64::try_from(self.latency.added.as_millis()).unwrap_or(u64::MAX),
            repair_tokens: self.repair_tokens,
        }
    }

    /// Resumes from a stored [`state`](Self::state). Counts above this task's
    /// limits are clamped to them, so a stored state never grants more.
    pub fn restore(&mut self, state: TaskBudgetState) {
        self.attempts.used = state.repairs.min(self.attempts.max_repairs);
        self.retries = state.retries.min(self.attempts.used);
        self.latency.added = Duration::from_millis(state.added_latency_ms);
        self.repair_tokens = state.repair_tokens;
    }

    /// Retries granted so far (repairs that were not Rejects).
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// Tokens this task has spent on repair (estimates, replaced by real
    /// usage where it was recorded), for the failure report.
    pub fn repair_tokens(&self) -> u64 {
        self.repair_tokens
    }
}

/// What a task has spent on repair, for storing with the task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskBudgetState {
    /// Repairs used (Rejects and Retries).
    pub repairs: u32,
    /// Of which Retries.
    pub retries: u32,
    /// Latency added, in milliseconds.
    pub added_latency_ms: u64,
    /// Repair tokens spent.
    pub repair_tokens: u64,
}
