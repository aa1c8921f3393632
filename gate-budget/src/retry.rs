//! A ratio budget: retries may add at most a fixed share of load on top of a
//! small reserve, over a rolling window.
//!
//! This is tower's `TpsBudget` (itself Finagle's `RetryBudget`): deposit on
//! every first attempt, withdraw on every retry, ten slots over `ttl`, plus a
//! reserve of `min_per_sec × ttl` retries that refills as withdrawals age out.
//! It differs in one place. tower charges a withdrawal of `(1 / ratio) as
//! isize` deposits, so `ratio = 0.3` costs 3 and allows 33 %; Finagle scales by
//! 1000 and truncates `1000 / ratio`, which gives 30.003 %. Here a deposit is
//! worth `ratio × 1000` milli-retries and a withdrawal costs exactly 1000, so
//! any ratio with three decimals is exact: 100 deposits at 0.3 allow 30
//! retries, not 33.
//!
//! Deposit on each call's first attempt (not on each success, so a run of
//! failures does not starve the budget of the credit those calls earned) and
//! withdraw before each retry. gate's runtime does that when a gate is given
//! one (`GateBuilder::retry_budget`): every handled call deposits; a resend
//! is chosen only when [`available`](RetryBudget::available) says one is
//! there, and paid for with [`spend`](RetryBudget::spend) when it is sent,
//! after its decision is recorded (a decision may be made more than once
//! before it is). It lives in one process's memory, which is what a ratio
//! needs: N workers each resending a share of their own calls resend that
//! share of all calls; only the reserve is granted once per worker.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::error::BudgetError;
use crate::window::SlotWindow;

/// The cost of one retry in milli-retries; a deposit is `ratio × SCALE`.
const SCALE: i64 = 1000;

/// The largest `min_per_sec`, so the reserve (`min × ttl × 1000`) stays far
/// from overflow.
pub const MAX_MIN_PER_SEC: f64 = 1_000_000.0;

/// Retries allowed as a share of first attempts, on top of a reserve, over a
/// rolling window (tower `TpsBudget` semantics with exact ratios).
///
/// Shared by reference (`&self`, internally locked): wrap it in an `Arc` to
/// share across tasks.
#[derive(Debug)]
pub struct RetryBudget {
    window: Mutex<SlotWindow>,
    deposit: i64,
    reserve: i64,
}

impl RetryBudget {
    /// A budget over `ttl` allowing `retry_ratio` retries per first attempt on
    /// top of `min_per_sec` retries per second.
    ///
    /// * `ttl`: 1 s ..= 60 s (tower's and Finagle's bounds). The window has
    ///   ten slots of `ttl / 10`; a deposit counts for at least `ttl − ttl/10`
    ///   and less than `ttl`.
    /// * `min_per_sec`: 0.0 ..= 1,000,000.0, finite. The reserve is
    ///   `min_per_sec × ttl` retries, rounded to a thousandth of a retry.
    ///   Fractions are allowed because per-user LLM rates are low (0.1/s).
    /// * `retry_ratio`: 0.0 ..= 1000.0 (tower's range; 0.2 means 20 %), taken
    ///   to three decimals; a non-zero ratio below 0.001 is an error rather
    ///   than silently zero.
    ///
    /// Both zero gives a budget that never allows a retry (Finagle's `Empty`).
    pub fn new(ttl: Duration, min_per_sec: f64, retry_ratio: f64) -> Result<Self, BudgetError> {
        if ttl < Duration::from_secs(1) || ttl > Duration::from_secs(60) {
            return Err(BudgetError::new("ttl", ttl, "between 1 s and 60 s"));
        }
        if !min_per_sec.is_finite() || !(0.0..=MAX_MIN_PER_SEC).contains(&min_per_sec) {
            return Err(BudgetError::new(
                "min_per_sec",
                min_per_sec,
                "a finite number in 0 ..= 1,000,000",
            ));
        }
        if !retry_ratio.is_finite() || !(0.0..=1000.0).contains(&retry_ratio) {
            return Err(BudgetError::new(
                "retry_ratio",
                retry_ratio,
                "a finite number in 0.0 ..= 1000.0",
            ));
        }
        // Both values are range-checked above, so the products fit in i64.
        let deposit = (retry_ratio * SCALE as f64).round() as i64;
        if retry_ratio > 0.0 && deposit == 0 {
            return Err(BudgetError::new("retry_ratio", retry_ratio, "0 or at least 0.001"));
        }
        let reserve = (min_per_sec * ttl.as_secs_f64() * SCALE as f64).round() as i64;
        Ok(RetryBudget {
            window: Mutex::new(SlotWindow::new(ttl, Instant::now())),
            deposit,
            reserve,
        })
    }

    /// Credits one first attempt.
    pub fn deposit(&self) {
        if self.deposit > 0 {
            self.lock().add(Instant::now(), self.deposit);
        }
    }

    /// Takes one retry if the window (plus the reserve) holds one; on `false`
    /// the balance is untouched and the caller must not retry.
    #[must_use = "a refused withdrawal means: do not retry"]
    pub fn withdraw(&self) -> bool {
        let now = Instant::now();
        let mut window = self.lock();
        if window.sum(now).saturating_add(self.reserve) >= SCALE {
            window.add(now, -SCALE);
            true
        } else {
            false
        }
    }

    /// Takes one retry whatever the balance, for a caller that decided to
    /// retry on [`available`](Self::available) and pays when the retry is
    /// made, after recording its decision (gate's runtime, whose decision
    /// may be made more than once before it is recorded). Retries decided
    /// concurrently on the same last retry overdraw the window by one each;
    /// later deposits repay it before anyone withdraws again.
    pub fn spend(&self) {
        self.lock().add(Instant::now(), -SCALE);
    }

    /// Whole retries a caller could withdraw right now.
    pub fn available(&self) -> u64 {
        let balance = self.lock().sum(Instant::now()).saturating_add(self.reserve);
        u64::try_from(balance / SCALE).unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SlotWindow> {
        // No code path panics while holding the lock, and the window is
        // consistent after every statement, so a poisoned lock is still usable.
        self.window.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for RetryBudget {
    /// tower's and Finagle's default: ttl 10 s, 10 retries per second, 20 %.
    fn default() -> Self {
        RetryBudget {
            window: Mutex::new(SlotWindow::new(Duration::from_secs(10), Instant::now())),
            deposit: 200,
            reserve: 10 * 10 * SCALE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_matches_the_validated_constructor() {
        let built = RetryBudget::new(Duration::from_secs(10), 10.0, 0.2).map(|b| (b.deposit, b.reserve));
        let default = RetryBudget::default();
        assert_eq!(built, Ok((default.deposit, default.reserve)));
    }
}
