//! Repair tokens per user over a rolling window, and the meter that prices a
//! repair.
//!
//! Attempt and latency budgets bound one task; they do not stop a user from
//! starting a thousand tasks whose repairs each look cheap. The bill is paid
//! per user (or tenant), so the limit is kept per user: tokens spent on repair
//! (Rejects and Retries, never first attempts) over the last `window`,
//! default 50,000 per hour. Users are isolated: exhausting one user's window
//! leaves every other user's untouched.
//!
//! A repair is priced by **context replay**: to correct one call the model
//! re-reads the whole conversation, so a repair costs the current context
//! plus the feedback text, not just the feedback. When the loop learns the
//! provider's real usage it settles the estimate against it.
//!
//! The window has ten slots like [`RetryBudget`](crate::RetryBudget). Token
//! amounts are integers, so unlike the ratio budget no ×1000 scaling is needed
//! for exactness: sums of integers are already exact.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use thiserror::Error;
use tokio::time::Instant;

use crate::error::BudgetError;
use crate::window::SlotWindow;

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

const SHARDS: usize = 16;
/// A shard is swept for idle users once it holds this many, then again at
/// twice the survivors, so sweeping stays amortised O(1) per new user.
const PRUNE_FLOOR: usize = 1024;

/// Estimates the tokens of `text` when the provider's count is not known:
/// `ceil(chars / 4)`, with chars counted as Unicode scalar values.
///
/// The estimate is deliberately simple and stable; it only has to be good
/// enough to refuse a repair that is obviously too expensive, and the loop
/// replaces it with real usage via [`RepairTokenBudget::settle`].
pub fn estimate_tokens(text: &str) -> u64 {
    let chars = text.chars().count() as u64;
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// The estimated cost of one repair under context replay: the tokens of the
/// context the model re-reads plus the estimated tokens of the feedback.
///
/// ```
/// // 8,000 tokens of context and a 40-character correction: 8,010 tokens.
/// assert_eq!(gate_budget::repair_cost(8_000, &"x".repeat(40)), 8_010);
/// ```
pub fn repair_cost(context_tokens: u64, feedback_text: &str) -> u64 {
    context_tokens.saturating_add(estimate_tokens(feedback_text))
}

/// A successful charge: what was taken and what is left.
///
/// Pass it back to [`RepairTokenBudget::settle`] once the real usage is known;
/// it is consumed there, so an estimate cannot be settled twice.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "settle the charge when the provider's usage is known, or drop it to keep the estimate"]
pub struct Charge {
    /// The user charged.
    pub user: String,
    /// Tokens taken.
    pub tokens: u64,
    /// Tokens left in the user's window after this charge.
    pub remaining: u64,
    epoch: u64,
}

/// A refused charge: the user's window does not hold enough tokens.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("repair token budget exhausted for this user: {requested} requested, {remaining} remaining")]
pub struct TokensExhausted {
    /// Tokens asked for.
    pub requested: u64,
    /// Tokens left in the window (less than `requested`).
    pub remaining: u64,
    /// When enough of the window will have expired for the same request to
    /// succeed, if nothing else is charged meanwhile; `None` if the request
    /// exceeds the whole limit.
    pub retry_in: Option<Duration>,
}

/// Repair tokens per user over a rolling window, with an atomic check-and-charge.
///
/// Cheap to clone (an `Arc`); all clones share the same windows. Users live in
/// sixteen independently locked shards, so tasks of different users rarely
/// contend; a user's check and charge happen under one lock, so concurrent
/// tasks can never overdraw a window through [`try_charge`](Self::try_charge).
#[derive(Clone, Debug)]
pub struct RepairTokenBudget {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    limit: u64,
    window: Duration,
    hasher: RandomState,
    shards: Box<[Mutex<Shard>]>,
}

#[derive(Debug, Default)]
struct Shard {
    users: HashMap<String, SlotWindow>,
    prune_at: usize,
}

impl RepairTokenBudget {
    /// A budget of `limit` repair tokens per user over `window`.
    ///
    /// * `limit`: 1 ..= 10¹² tokens.
    /// * `window`: 1 s ..= 7 days. Ten slots of `window / 10`: a charge counts
    ///   for at least 90 % of `window` and less than all of it.
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
        let shards = (0..SHARDS)
            .map(|_| {
                Mutex::new(Shard {
                    users: HashMap::new(),
                    prune_at: PRUNE_FLOOR,
                })
            })
            .collect();
        Ok(RepairTokenBudget {
            inner: Arc::new(Inner {
                limit,
                window,
                hasher: RandomState::new(),
                shards,
            }),
        })
    }

    /// The per-user limit.
    pub fn limit(&self) -> u64 {
        self.inner.limit
    }

    /// The window length.
    pub fn window(&self) -> Duration {
        self.inner.window
    }

    /// Charges `tokens` to `user` if the window holds them, atomically.
    ///
    /// Call it before returning a Reject or Retry, with the estimate from
    /// [`repair_cost`]. On `Err` nothing is charged and the repair must not
    /// happen. A zero charge always succeeds.
    pub fn try_charge(&self, user: &str, tokens: u64) -> Result<Charge, TokensExhausted> {
        let now = Instant::now();
        let limit = self.inner.limit;
        let mut shard = self.shard(user);
        let window = shard.window_mut(user, self.inner.window, now);
        let used = used_of(window.sum(now));
        let remaining = limit.saturating_sub(used);
        if tokens > remaining {
            let need = to_i64(used.saturating_add(tokens).saturating_sub(limit));
            let retry_in = if tokens > limit {
                None
            } else {
                window.time_until_freed(now, need)
            };
            return Err(TokensExhausted {
                requested: tokens,
                remaining,
                retry_in,
            });
        }
        let epoch = window.add(now, to_i64(tokens));
        Ok(Charge {
            user: user.to_owned(),
            tokens,
            remaining: remaining - tokens,
            epoch,
        })
    }

    /// Replaces a charge's estimate by the provider's real usage; returns the
    /// tokens left for the user.
    ///
    /// More than estimated: the difference is charged unconditionally (it has
    /// been spent), which is the only way a window can exceed its limit.
    /// Less: the difference is refunded to the slot the estimate went into,
    /// unless that slot has already expired (then there is nothing to refund).
    pub fn settle(&self, charge: Charge, actual: u64) -> u64 {
        let now = Instant::now();
        let mut shard = self.shard(&charge.user);
        let window = shard.window_mut(&charge.user, self.inner.window, now);
        if actual > charge.tokens {
            window.add(now, to_i64(actual - charge.tokens));
        } else {
            window.add_at(now, charge.epoch, -to_i64(charge.tokens - actual));
        }
        self.inner.limit.saturating_sub(used_of(window.sum(now)))
    }

    /// Charges repair work that has already happened (real usage reported
    /// without a prior [`try_charge`](Self::try_charge)); returns the tokens
    /// left. Never refused.
    pub fn record(&self, user: &str, tokens: u64) -> u64 {
        let now = Instant::now();
        let mut shard = self.shard(user);
        let window = shard.window_mut(user, self.inner.window, now);
        window.add(now, to_i64(tokens));
        self.inner.limit.saturating_sub(used_of(window.sum(now)))
    }

    /// Tokens `user` has spent on repair within the window.
    pub fn used(&self, user: &str) -> u64 {
        let now = Instant::now();
        let mut shard = self.shard(user);
        shard.users.get_mut(user).map_or(0, |w| used_of(w.sum(now)))
    }

    /// Tokens `user` may still spend on repair now.
    pub fn remaining(&self, user: &str) -> u64 {
        self.inner.limit.saturating_sub(self.used(user))
    }

    /// Forgets every user whose window is empty; returns how many are kept.
    ///
    /// Shards also do this on their own as they grow, so calling it is only
    /// useful to release memory after a burst of one-off users.
    pub fn prune(&self) -> usize {
        let now = Instant::now();
        self.inner
            .shards
            .iter()
            .map(|s| {
                let mut shard = lock(s);
                shard.prune(now);
                shard.users.len()
            })
            .sum()
    }

    fn shard(&self, user: &str) -> MutexGuard<'_, Shard> {
        let h = self.inner.hasher.hash_one(user);
        // The modulus is below 16, so the cast cannot truncate.
        lock(&self.inner.shards[(h % SHARDS as u64) as usize])
    }
}

impl Default for RepairTokenBudget {
    /// 50,000 repair tokens per user per hour.
    fn default() -> Self {
        let shards = (0..SHARDS)
            .map(|_| {
                Mutex::new(Shard {
                    users: HashMap::new(),
                    prune_at: PRUNE_FLOOR,
                })
            })
            .collect();
        RepairTokenBudget {
            inner: Arc::new(Inner {
                limit: DEFAULT_REPAIR_TOKENS,
                window: DEFAULT_TOKEN_WINDOW,
                hasher: RandomState::new(),
                shards,
            }),
        }
    }
}

impl Shard {
    fn window_mut(&mut self, user: &str, ttl: Duration, now: Instant) -> &mut SlotWindow {
        if self.users.len() >= self.prune_at && !self.users.contains_key(user) {
            self.prune(now);
            self.prune_at = (self.users.len() * 2).max(PRUNE_FLOOR);
        }
        self.users
            .entry(user.to_owned())
            .or_insert_with(|| SlotWindow::new(ttl, now))
    }

    fn prune(&mut self, now: Instant) {
        self.users.retain(|_, w| !w.is_idle(now));
    }
}

fn lock(m: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    // No code path panics while holding a shard lock and every statement
    // leaves the shard consistent, so a poisoned lock is still usable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn used_of(sum: i64) -> u64 {
    u64::try_from(sum).unwrap_or(0)
}

fn to_i64(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}
