//! How long to wait before a retry: exponential backoff with jitter, and the
//! server's own hint when it gives one.
//!
//! Without jitter, every client that failed together retries together and the
//! overloaded service sees the same spike again. Full jitter (AWS's
//! "standard" mode) draws the whole delay uniformly below the exponential
//! ceiling, which spreads retries best; gRPC's ±20 % is offered for parity.
//! The random source is passed in, so a seeded RNG makes a run reproducible.
//!
//! A server that says when to come back (`Retry-After`, gRPC pushback) knows
//! better than our formula, so its delay is used exactly; but it is only
//! honoured when it fits in what remains of the task's latency budget, and an
//! unusable hint means no retry at all (gRPC A6). See
//! [`LatencyBudget::plan_retry`](crate::LatencyBudget::plan_retry).

use std::time::Duration;

use rand::Rng;

use crate::error::BudgetError;

/// Default base delay: 100 ms (AWS SDKs).
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(100);
/// Default cap: 20 s (AWS SDKs).
pub const DEFAULT_BACKOFF_CAP: Duration = Duration::from_secs(20);
/// The largest cap accepted: one hour.
pub const MAX_BACKOFF_CAP: Duration = Duration::from_secs(3600);

/// How the delay is drawn below the exponential ceiling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Jitter {
    /// `rand[0, 1) × ceiling` (AWS "full jitter"). The default.
    #[default]
    Full,
    /// `rand[0.8, 1.2) × ceiling` (gRPC A6). May exceed the cap by up to 20 %.
    Grpc,
}

/// Exponential backoff: the `n`-th retry (1-based) waits a random fraction of
/// `min(base × 2^(n−1), cap)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    jitter: Jitter,
}

impl Backoff {
    /// Full-jitter backoff from `base` up to `cap`.
    ///
    /// * `base`: 1 ms ..= `cap`.
    /// * `cap`: `base` ..= 1 hour.
    pub fn new(base: Duration, cap: Duration) -> Result<Self, BudgetError> {
        if base < Duration::from_millis(1) {
            return Err(BudgetError::new("backoff_base", base, "at least 1 ms"));
        }
        if cap > MAX_BACKOFF_CAP {
            return Err(BudgetError::new("backoff_cap", cap, "at most 1 hour"));
        }
        if base > cap {
            return Err(BudgetError::new("backoff_base", base, "at most backoff_cap"));
        }
        Ok(Backoff {
            base,
            cap,
            jitter: Jitter::Full,
        })
    }

    /// The same ceilings with another jitter.
    pub fn with_jitter(self, jitter: Jitter) -> Self {
        Backoff { jitter, ..self }
    }

    /// The base delay.
    pub fn base(&self) -> Duration {
        self.base
    }

    /// The cap on the ceiling.
    pub fn cap(&self) -> Duration {
        self.cap
    }

    /// The jitter mode.
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// `min(base × 2^(retry−1), cap)`; retry 0 is treated as 1.
    pub fn ceiling(&self, retry: u32) -> Duration {
        let doublings = retry.saturating_sub(1).min(63);
        let factor = 1u64 << doublings;
        let nanos = u128::from(nanos_of(self.base)).saturating_mul(u128::from(factor));
        let cap = u128::from(nanos_of(self.cap));
        duration_of(nanos.min(cap))
    }

    /// The delay before retry `retry` (1-based), drawn from `rng`.
    ///
    /// Full jitter: uniform in `[0, ceiling)`. gRPC: uniform in
    /// `[0.8 × ceiling, 1.2 × ceiling)`.
    pub fn delay<R: Rng + ?Sized>(&self, retry: u32, rng: &mut R) -> Duration {
        let ceiling = nanos_of(self.ceiling(retry));
        // ceiling ≥ base ≥ 1 ms, so both ranges are non-empty.
        let nanos = match self.jitter {
            Jitter::Full => rng.random_range(0..ceiling),
            Jitter::Grpc => rng.random_range(ceiling * 4 / 5..ceiling * 6 / 5),
        };
        duration_of(nanos)
    }
}

impl Default for Backoff {
    /// Full jitter, base 100 ms, cap 20 s.
    fn default() -> Self {
        Backoff {
            base: DEFAULT_BACKOFF_BASE,
            cap: DEFAULT_BACKOFF_CAP,
            jitter: Jitter::Full,
        }
    }
}

/// What the server said about when to retry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pushback {
    /// No hint: use the backoff.
    #[default]
    None,
    /// Retry after exactly this delay.
    After(Duration),
    /// A hint that could not be used (negative, unparseable): do not retry.
    Refused,
}

impl Pushback {
    /// Parses a `Retry-After` header value in delta-seconds form (`"120"`).
    ///
    /// A missing header is [`Pushback::None`]; a non-negative integer is
    /// [`Pushback::After`]; anything else (negative, fractional, garbage) is
    /// [`Pushback::Refused`]. The HTTP-date form is not parsed here: a tool
    /// that receives one converts it to a delay and reports
    /// `ToolError::RateLimited { retry_after }`, which maps through
    /// `Pushback::from(retry_after)`.
    pub fn from_retry_after(header: Option<&str>) -> Self {
        match header.map(str::trim) {
            None => Pushback::None,
            Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => v
                .parse::<u64>()
                .map_or(Pushback::Refused, |s| Pushback::After(Duration::from_secs(s))),
            Some(_) => Pushback::Refused,
        }
    }

    /// Parses gRPC's `grpc-retry-pushback-ms` (a non-negative integer of
    /// milliseconds; anything else means do not retry).
    pub fn from_grpc_pushback_ms(header: Option<&str>) -> Self {
        match header.map(str::trim) {
            None => Pushback::None,
            Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => v
                .parse::<u64>()
                .map_or(Pushback::Refused, |ms| Pushback::After(Duration::from_millis(ms))),
            Some(_) => Pushback::Refused,
        }
    }
}

impl From<Option<Duration>> for Pushback {
    /// `ToolError::RateLimited { retry_after }`: a delay is honoured, none
    /// means "use the backoff".
    fn from(retry_after: Option<Duration>) -> Self {
        retry_after.map_or(Pushback::None, Pushback::After)
    }
}

fn nanos_of(d: Duration) -> u64 {
    // Durations here are at most 1 hour (validated), about 3.6e12 ns.
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn duration_of(nanos: impl Into<u128>) -> Duration {
    Duration::from_nanos(u64::try_from(nanos.into()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_doubles_then_caps_without_overflow() {
        let b = Backoff::default();
        assert_eq!(b.ceiling(0), Duration::from_millis(100));
        assert_eq!(b.ceiling(1), Duration::from_millis(100));
        assert_eq!(b.ceiling(3), Duration::from_millis(400));
        assert_eq!(b.ceiling(8), Duration::from_millis(12_800));
        assert_eq!(b.ceiling(9), Duration::from_secs(20));
        assert_eq!(b.ceiling(u32::MAX), Duration::from_secs(20));
    }
}
