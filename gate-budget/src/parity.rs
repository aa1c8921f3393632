//! Two more retry limiters, with the exact semantics of the AWS SDKs'
//! retry quota and gRPC's retry throttling (feature `testing`, off by
//! default; for gate's own tests, not covered by semver).
//!
//! gate's own limits are [`RetryBudget`](crate::RetryBudget) and the per-task
//! budgets, and the runtime uses neither of these. They exist because
//! reproducing two well-documented designs exactly, against their reference
//! behaviour (`tests/parity.rs`), is a check on our own arithmetic. Both are
//! shared by reference and internally locked.

use std::sync::{Mutex, MutexGuard, PoisonError};

use thiserror::Error;

use crate::error::BudgetError;

/// The AWS SDKs' initial (and maximum) retry quota: 500.
pub const AWS_QUOTA_CAPACITY: u32 = 500;
/// Quota a retry costs: 5.
pub const AWS_RETRY_COST: u32 = 5;
/// Quota a retry after a timeout costs: 10.
pub const AWS_TIMEOUT_RETRY_COST: u32 = 10;
/// Quota a success on the first try returns: 1.
pub const AWS_NO_RETRY_INCREMENT: u32 = 1;

/// What kind of failure a retry follows, which sets its quota cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryCost {
    /// A transient or throttling error: [`AWS_RETRY_COST`].
    Standard,
    /// A connect or read timeout: [`AWS_TIMEOUT_RETRY_COST`].
    Timeout,
}

impl RetryCost {
    fn amount(self) -> u32 {
        match self {
            RetryCost::Standard => AWS_RETRY_COST,
            RetryCost::Timeout => AWS_TIMEOUT_RETRY_COST,
        }
    }
}

/// Quota taken by one retry; give it back with
/// [`RetryQuota::success_after_retry`] if the call finally succeeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "return the permit when the retried call succeeds"]
pub struct QuotaPermit {
    /// The quota taken.
    pub cost: u32,
}

/// The retry quota does not hold the retry's cost: do not retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("retry quota reached: {cost} needed, {available} available")]
pub struct QuotaExhausted {
    /// The cost asked for.
    pub cost: u32,
    /// The quota left.
    pub available: u32,
}

/// The AWS SDKs' "standard" retry quota (botocore `RetryQuota`, the Rust
/// SDK's `TokenBucket`): a retry takes 5 (10 after a timeout), a first-try
/// success returns 1, a success after retries returns what its last retry
/// took, and the quota never exceeds its capacity.
#[derive(Debug)]
pub struct RetryQuota {
    capacity: u32,
    available: Mutex<u32>,
}

impl RetryQuota {
    /// A full quota of `capacity`: 1 ..= 1,000,000 (AWS: 500).
    pub fn new(capacity: u32) -> Result<Self, BudgetError> {
        if !(1..=1_000_000).contains(&capacity) {
            return Err(BudgetError::new("capacity", capacity, "between 1 and 1,000,000"));
        }
        Ok(RetryQuota {
            capacity,
            available: Mutex::new(capacity),
        })
    }

    /// Takes the cost of one retry, or refuses and takes nothing.
    pub fn acquire(&self, cost: RetryCost) -> Result<QuotaPermit, QuotaExhausted> {
        let cost = cost.amount();
        let mut available = self.lock();
        if cost > *available {
            return Err(QuotaExhausted {
                cost,
                available: *available,
            });
        }
        *available -= cost;
        Ok(QuotaPermit { cost })
    }

    /// A call succeeded on its first try: +1, up to the capacity.
    pub fn success_first_try(&self) {
        self.release(AWS_NO_RETRY_INCREMENT);
    }

    /// A call succeeded after retries: its last retry's cost comes back, up
    /// to the capacity.
    pub fn success_after_retry(&self, last: QuotaPermit) {
        self.release(last.cost);
    }

    /// The quota left.
    pub fn available(&self) -> u32 {
        *self.lock()
    }

    fn release(&self, amount: u32) {
        let mut available = self.lock();
        *available = available.saturating_add(amount).min(self.capacity);
    }

    fn lock(&self) -> MutexGuard<'_, u32> {
        // A plain integer cannot be left inconsistent by a panic.
        self.available.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for RetryQuota {
    /// AWS's capacity of 500.
    fn default() -> Self {
        RetryQuota {
            capacity: AWS_QUOTA_CAPACITY,
            available: Mutex::new(AWS_QUOTA_CAPACITY),
        }
    }
}

/// gRPC's retry throttling (gRFC A6), kept per server: the count starts at
/// `max_tokens`, a failure takes 1, a success adds `token_ratio`, the count
/// stays in `[0, max_tokens]`, and retries are allowed only while the count is
/// above `max_tokens / 2`.
///
/// Counts are kept in thousandths, since A6 takes `token_ratio` to three
/// decimals, so the threshold comparison is exact: with 10 and 0.1, after six
/// failures (count 4) exactly eleven successes (count 5.1) re-enable retries.
#[derive(Debug)]
pub struct RetryThrottle {
    max_milli: i64,
    ratio_milli: i64,
    count_milli: Mutex<i64>,
}

impl RetryThrottle {
    /// Throttling with `max_tokens` and `token_ratio`.
    ///
    /// * `max_tokens`: 1 ..= 1000 (A6: in (0, 1000]).
    /// * `token_ratio`: finite, 0.001 ..= 1000; decimals beyond the third are
    ///   ignored, as A6 specifies.
    pub fn new(max_tokens: u32, token_ratio: f64) -> Result<Self, BudgetError> {
        if !(1..=1000).contains(&max_tokens) {
            return Err(BudgetError::new("max_tokens", max_tokens, "between 1 and 1000"));
        }
        if !token_ratio.is_finite() || !(0.001..=1000.0).contains(&token_ratio) {
            return Err(BudgetError::new("token_ratio", token_ratio, "between 0.001 and 1000"));
        }
        // Range-checked above; the tiny epsilon keeps 0.1 × 1000 from
        // truncating to 99 through binary rounding.
        let ratio_milli = (token_ratio * 1000.0 + 1e-9).floor() as i64;
        let max_milli = i64::from(max_tokens) * 1000;
        Ok(RetryThrottle {
            max_milli,
            ratio_milli,
            count_milli: Mutex::new(max_milli),
        })
    }

    /// Records a failed call (one whose status is retryable or non-fatal).
    pub fn on_failure(&self) {
        let mut count = self.lock();
        *count = (*count - 1000).max(0);
    }

    /// Records a successful call.
    pub fn on_success(&self) {
        let mut count = self.lock();
        *count = (*count + self.ratio_milli).min(self.max_milli);
    }

    /// Whether a retry (or a hedged call beyond the first) may be sent now.
    pub fn allows_retry(&self) -> bool {
        *self.lock() * 2 > self.max_milli
    }

    /// The current count, in tokens.
    pub fn tokens(&self) -> f64 {
        *self.lock() as f64 / 1000.0
    }

    fn lock(&self) -> MutexGuard<'_, i64> {
        // A plain integer cannot be left inconsistent by a panic.
        self.count_milli.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
