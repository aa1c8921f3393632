//! The budgets as the runtime consults them.
//!
//! Three independent limits must all allow a repair (DESIGN.md rule 4):
//! repairs per task, wall-clock latency added per task, and repair tokens per
//! user over a rolling window. This module holds the configuration and the
//! shared per-user window; the per-task counters live on the task.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

/// The budget configuration of a gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    max_repairs: u32,
    max_added_latency: Duration,
    repair_tokens_per_window: u64,
    window: Duration,
    backoff_base: Duration,
    backoff_cap: Duration,
}

impl Default for Budget {
    /// 2 repairs per task, 30 s of added latency per task, 50,000 repair
    /// tokens per user per hour, backoff from 100 ms up to 20 s.
    fn default() -> Self {
        Budget {
            max_repairs: 2,
            max_added_latency: Duration::from_secs(30),
            repair_tokens_per_window: 50_000,
            window: Duration::from_secs(3600),
            backoff_base: Duration::from_millis(100),
            backoff_cap: Duration::from_secs(20),
        }
    }
}

/// The hard ceiling on repairs per task, whatever the configuration says
/// (gRPC's client cap): a loop that needs more is not repairing.
pub const MAX_REPAIRS_CEILING: u32 = 5;

impl Budget {
    /// Repairs (rejections and retries) per task, 0 to 5.
    pub fn max_repairs(mut self, repairs: u32) -> Self {
        self.max_repairs = repairs.min(MAX_REPAIRS_CEILING);
        self
    }

    /// Wall-clock latency retries may add to a task.
    pub fn max_added_latency(mut self, latency: Duration) -> Self {
        self.max_added_latency = latency;
        self
    }

    /// Repair tokens a user may spend per rolling `window`.
    pub fn repair_tokens(mut self, tokens: u64, window: Duration) -> Self {
        self.repair_tokens_per_window = tokens;
        self.window = window.max(Duration::from_secs(1));
        self
    }

    /// Full-jitter backoff between internal retries: `rand[0,1) × min(base × 2^(n−1), cap)`.
    pub fn backoff(mut self, base: Duration, cap: Duration) -> Self {
        self.backoff_base = base;
        self.backoff_cap = cap.max(base);
        self
    }

    /// Repairs per task.
    pub fn repairs(&self) -> u32 {
        self.max_repairs
    }

    /// Latency retries may add per task.
    pub fn added_latency(&self) -> Duration {
        self.max_added_latency
    }

    pub(crate) fn backoff_delay(&self, retry: u32, rng: &mut StdRng) -> Duration {
        let exp = self
            .backoff_base
            .saturating_mul(1u32 << retry.saturating_sub(1).min(20));
        let ceiling = exp.min(self.backoff_cap);
        ceiling.mul_f64(rng.random::<f64>())
    }
}

/// Repair tokens spent per user over a rolling window of 10 slots.
#[derive(Debug)]
pub(crate) struct TokenWindows {
    limit: u64,
    slot: Duration,
    users: Mutex<HashMap<String, [(u64, u64); 10]>>,
}

impl TokenWindows {
    pub(crate) fn new(budget: &Budget) -> Self {
        TokenWindows {
            limit: budget.repair_tokens_per_window,
            slot: budget.window / 10,
            users: Mutex::new(HashMap::new()),
        }
    }

    /// Charges `tokens` to `user` if the window allows it, atomically.
    pub(crate) fn try_charge(&self, user: &str, tokens: u64, now: Duration) -> bool {
        let index = (now.as_millis() / self.slot.as_millis().max(1)) as u64;
        let mut users = self.users.lock().unwrap_or_else(|p| p.into_inner());
        let slots = users.entry(user.to_owned()).or_insert([(u64::MAX, 0); 10]);
        let spent: u64 = slots
            .iter()
            .filter(|(at, _)| *at != u64::MAX && index - at.min(&index) < 10)
            .map(|(_, t)| t)
            .sum();
        if spent + tokens > self.limit {
            return false;
        }
        let slot = &mut slots[(index % 10) as usize];
        if slot.0 != index {
            *slot = (index, 0);
        }
        slot.1 += tokens;
        true
    }
}
