//! Repair tokens per user over a rolling window, and the meter that prices a
//! repair.
//!
//! Attempt and latency budgets bound one task; they do not stop a user from
//! starting a thousand tasks whose repairs each look cheap. The bill is paid
//! per user (or tenant), so the limit is kept per user: tokens spent on repair
//! (Rejects and Retries, never first attempts) over a rolling window, default
//! 50,000 per hour.
//!
//! A repair is priced by **context replay**: to correct one call the model
//! re-reads the whole conversation, so a repair costs the current context
//! plus the feedback text, not just the feedback. When the loop learns the
//! provider's real usage it settles the estimate against it.
//!
//! # The algorithm: a bucketed sliding window with an atomic reserve
//!
//! The window is cut into ten buckets of `window / 10`, aligned to the Unix
//! epoch so that every worker computes the same bucket from the same clock.
//! [`TokenWindow`] keeps eleven of them (the current bucket and the ten
//! before it); an amount counts until its bucket is eleven buckets old, that
//! is for **more than one window and less than 1.1 windows**. A reservation
//! is granted only if everything still counted plus the request fits the
//! limit, so the tokens reserved in *any* trailing span of one window never
//! exceed the limit. The store holding the window makes "read, check, add"
//! one atomic step (a row lock or the memory store's mutex), so any number of
//! workers can never overdraw it together.
//!
//! Why not a token bucket or GCRA: they refill continuously, so a user who
//! spends the whole limit at the end of one window may spend it again right
//! after, close to twice the limit inside one trailing window. "B tokens per
//! rolling window" is a statement about trailing windows; buckets state it
//! exactly, and they cost a fixed eleven counters per user whatever the
//! traffic. The price is granularity: tokens come back a bucket at a time,
//! up to a tenth of the window later than an exact log would return them.
//!
//! Real usage above an estimate is charged unconditionally (it has been
//! spent), which is the only way a window can hold more than its limit;
//! usage below it is refunded to the bucket the estimate went into, if that
//! bucket still counts.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::error::BudgetError;

/// Default repair tokens per user per window: 50,000.
pub const DEFAULT_REPAIR_TOKENS: u64 = 50_000;
/// Default window: one hour.
pub const DEFAULT_TOKEN_WINDOW: Duration = Duration::from_secs(3600);
/// The largest limit accepted: 10¹², far above any real budget and far below
/// overflow.
pub const MAX_REPAIR_TOKENS: u64 = 1_000_000_000_000;

/// The characters-per-token ratio of [`estimate_tokens`]: 4, the usual rule of
/// thumb for English text with BPE tokenizers.
pub const CHARS_PER_TOKEN: u64 = 4;

/// Buckets per window.
pub const WINDOW_BUCKETS: i64 = 10;
/// Buckets a window keeps: the current one and [`WINDOW_BUCKETS`] before it,
/// so an amount counts for more than one whole window.
const KEPT_BUCKETS: usize = WINDOW_BUCKETS as usize + 1;

/// Estimates the tokens of `text` when the provider's count is not known:
/// `ceil(chars / 4)`, with chars counted as Unicode scalar values.
///
/// The estimate is deliberately simple and stable; it only has to be good
/// enough to refuse a repair that is obviously too expensive, and the loop
/// replaces it with the provider's real usage.
pub fn estimate_tokens(text: &str) -> u64 {
    let chars = text.chars().count() as u64;
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// The estimated cost of one repair under context replay: the tokens of the
/// context the model re-reads plus the estimated tokens of the feedback.
///
/// ```
/// // 8,000 tokens of context and a 40-character correction: 8,010 tokens.
/// assert_eq!(toolgate_budget::repair_cost(8_000, &"x".repeat(40)), 8_010);
/// ```
pub fn repair_cost(context_tokens: u64, feedback_text: &str) -> u64 {
    context_tokens.saturating_add(estimate_tokens(feedback_text))
}

/// The per-user limit: `limit` repair tokens per rolling `window`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenLimit {
    limit: u64,
    window: Duration,
}

impl TokenLimit {
    /// `limit` repair tokens per user over `window`.
    ///
    /// * `limit`: 1 ..= 10¹² tokens.
    /// * `window`: 1 s ..= 7 days, counted in whole milliseconds; buckets are
    ///   `window / 10` long.
    pub fn new(limit: u64, window: Duration) -> Result<Self, BudgetError> {
        if !(1..=MAX_REPAIR_TOKENS).contains(&limit) {
            return Err(BudgetError::new(
                "repair_tokens",
                limit,
                "between 1 and 1,000,000,000,000",
            ));
        }
        if window < Duration::from_secs(1) || window > Duration::from_secs(7 * 86_400) {
            return Err(BudgetError::new("token_window", window, "between 1 s and 7 days"));
        }
        Ok(TokenLimit { limit, window })
    }

    /// Tokens per window.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The window length.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// The length of one bucket in milliseconds: a tenth of the window, at
    /// least 100 ms. Stores keep one window per user and bucket length, so
    /// workers configured alike share it.
    pub fn bucket_millis(&self) -> i64 {
        // At most 7 days in ms, far inside i64.
        i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX) / WINDOW_BUCKETS
    }

    fn bucket_of(&self, now_ms: i64) -> i64 {
        now_ms.div_euclid(self.bucket_millis())
    }
}

impl Default for TokenLimit {
    /// 50,000 repair tokens per user per hour.
    fn default() -> Self {
        TokenLimit {
            limit: DEFAULT_REPAIR_TOKENS,
            window: DEFAULT_TOKEN_WINDOW,
        }
    }
}

/// Tokens taken from a window: where they went, so they can be settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[must_use = "settle the reservation with the provider's real usage, or keep it to keep the estimate"]
pub struct Reservation {
    /// Tokens reserved.
    pub tokens: u64,
    /// The bucket they were added to (milliseconds since the epoch divided by
    /// the bucket length).
    pub bucket: i64,
}

/// A refused reservation: the user's window does not hold enough tokens.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("repair token budget exhausted for this user: {requested} requested, {remaining} remaining")]
pub struct TokensExhausted {
    /// Tokens asked for.
    pub requested: u64,
    /// Tokens left in the window (less than `requested`).
    pub remaining: u64,
    /// When enough of the window will have expired for the same request to
    /// succeed, if nothing else is reserved meanwhile; `None` if the request
    /// exceeds the whole limit.
    pub retry_in: Option<Duration>,
}

/// One user's window as a store keeps it: eleven `(bucket, tokens)` slots.
///
/// A plain value: the store loads it, calls [`reserve`](Self::reserve) or
/// [`settle`](Self::settle) and writes it back inside one atomic step, so the
/// arithmetic is the same for every store. In JSON it is a list of
/// `[bucket, tokens]` pairs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenWindow {
    slots: [(i64, u64); KEPT_BUCKETS],
}

impl Default for TokenWindow {
    /// A window with nothing in it.
    fn default() -> Self {
        TokenWindow {
            slots: [(i64::MIN, 0); KEPT_BUCKETS],
        }
    }
}

fn slot_index(bucket: i64) -> usize {
    // `rem_euclid(11)` is in 0..11, so the cast cannot truncate.
    bucket.rem_euclid(KEPT_BUCKETS as i64) as usize
}

impl TokenWindow {
    fn is_live(bucket: i64, current: i64) -> bool {
        bucket <= current && bucket > current - KEPT_BUCKETS as i64
    }

    fn live(&self, current: i64) -> impl Iterator<Item = (i64, u64)> + '_ {
        self.slots
            .iter()
            .copied()
            .filter(move |(bucket, _)| Self::is_live(*bucket, current))
    }

    /// Tokens that still count at `now_ms` (milliseconds since the epoch).
    pub fn used(&self, limit: &TokenLimit, now_ms: i64) -> u64 {
        let current = limit.bucket_of(now_ms);
        self.live(current)
            .fold(0u64, |sum, (_, tokens)| sum.saturating_add(tokens))
    }

    /// Tokens that may still be reserved at `now_ms`.
    pub fn remaining(&self, limit: &TokenLimit, now_ms: i64) -> u64 {
        limit.limit.saturating_sub(self.used(limit, now_ms))
    }

    /// True when nothing counts any more: the store may forget the window.
    pub fn is_idle(&self, limit: &TokenLimit, now_ms: i64) -> bool {
        self.used(limit, now_ms) == 0
    }

    /// Reserves `tokens` if everything that still counts plus `tokens` fits
    /// the limit; on `Err` nothing is taken. A zero reservation always
    /// succeeds.
    pub fn reserve(&mut self, limit: &TokenLimit, now_ms: i64, tokens: u64) -> Result<Reservation, TokensExhausted> {
        let current = limit.bucket_of(now_ms);
        let used = self.used(limit, now_ms);
        let remaining = limit.limit.saturating_sub(used);
        if tokens > remaining {
            let retry_in = if tokens > limit.limit {
                None
            } else {
                self.time_until_freed(limit, now_ms, used.saturating_add(tokens) - limit.limit)
            };
            return Err(TokensExhausted {
                requested: tokens,
                remaining,
                retry_in,
            });
        }
        self.add(current, tokens);
        Ok(Reservation {
            tokens,
            bucket: current,
        })
    }

    /// Charges `tokens` that were spent without a reservation, whatever the
    /// limit (usage above an estimate has already happened).
    pub fn charge(&mut self, limit: &TokenLimit, now_ms: i64, tokens: u64) {
        self.add(limit.bucket_of(now_ms), tokens);
    }

    /// Replaces the estimates in `reservations` by the provider's `actual`
    /// usage: the excess is charged now; a shortfall is refunded to the
    /// buckets the estimates went into, newest first, as far as they still
    /// count. Returns the tokens that may still be reserved.
    pub fn settle(&mut self, limit: &TokenLimit, now_ms: i64, reservations: &[Reservation], actual: u64) -> u64 {
        let estimated = reservations.iter().fold(0u64, |sum, r| sum.saturating_add(r.tokens));
        if actual >= estimated {
            self.charge(limit, now_ms, actual - estimated);
        } else {
            let current = limit.bucket_of(now_ms);
            let mut refund = estimated - actual;
            for r in reservations.iter().rev() {
                if refund == 0 {
                    break;
                }
                let back = refund.min(r.tokens);
                self.refund(current, r.bucket, back);
                refund -= back;
            }
        }
        self.remaining(limit, now_ms)
    }

    fn add(&mut self, bucket: i64, tokens: u64) {
        if tokens == 0 {
            return;
        }
        let slot = &mut self.slots[slot_index(bucket)];
        if slot.0 != bucket {
            // The slot held a bucket at least eleven buckets old: it no longer counts.
            *slot = (bucket, 0);
        }
        slot.1 = slot.1.saturating_add(tokens);
    }

    fn refund(&mut self, current: i64, bucket: i64, tokens: u64) {
        let slot = &mut self.slots[slot_index(bucket)];
        if slot.0 == bucket && Self::is_live(bucket, current) {
            slot.1 = slot.1.saturating_sub(tokens);
        }
    }

    /// How long until at least `need` of the tokens that count now have
    /// expired, oldest bucket first; `None` if they never add up to it.
    fn time_until_freed(&self, limit: &TokenLimit, now_ms: i64, need: u64) -> Option<Duration> {
        let current = limit.bucket_of(now_ms);
        let mut live: Vec<(i64, u64)> = self.live(current).collect();
        live.sort_unstable();
        let mut freed = 0u64;
        for (bucket, tokens) in live {
            freed = freed.saturating_add(tokens);
            if freed >= need {
                let expires_ms = bucket
                    .saturating_add(KEPT_BUCKETS as i64)
                    .saturating_mul(limit.bucket_millis());
                let wait = u64::try_from(expires_ms.saturating_sub(now_ms)).unwrap_or(0);
                return Some(Duration::from_millis(wait));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);
    const BUCKET: i64 = 360_000;

    fn limit(tokens: u64) -> TokenLimit {
        TokenLimit::new(tokens, HOUR).expect("valid")
    }

    #[test]
    fn an_amount_counts_for_more_than_one_window_and_less_than_eleven_tenths() {
        let l = limit(100);
        let mut w = TokenWindow::default();
        let t = 5 * BUCKET + 123;
        assert!(w.reserve(&l, t, 60).is_ok());
        // Still counted one full window later...
        assert_eq!(w.used(&l, t + 10 * BUCKET), 60);
        // ...and until its bucket is eleven buckets old.
        assert_eq!(w.used(&l, 16 * BUCKET - 1), 60);
        assert_eq!(w.used(&l, 16 * BUCKET), 0);
    }

    #[test]
    fn a_slot_reused_by_a_new_bucket_forgets_the_old_one() {
        let l = limit(100);
        let mut w = TokenWindow::default();
        assert!(w.reserve(&l, 0, 70).is_ok());
        let later = 11 * BUCKET;
        assert_eq!(w.reserve(&l, later, 100).map(|r| r.bucket), Ok(11));
        assert_eq!(w.used(&l, later), 100);
    }

    #[test]
    fn a_refund_to_a_bucket_that_no_longer_counts_gives_nothing_back() {
        let l = limit(100);
        let mut w = TokenWindow::default();
        let r = w.reserve(&l, 0, 50).expect("fits");
        let later = 11 * BUCKET;
        assert!(w.reserve(&l, later, 30).is_ok());
        assert_eq!(w.settle(&l, later, &[r], 0), 70);
    }

    #[test]
    fn negative_clock_readings_fall_into_buckets_too() {
        let l = limit(100);
        let mut w = TokenWindow::default();
        assert_eq!(w.reserve(&l, -1, 10).map(|r| r.bucket), Ok(-1));
        assert_eq!(w.used(&l, 0), 10);
    }
}
