//! Time as the ledger sees it: milliseconds since the Unix epoch, read through an
//! injectable [`Clock`] so that lease expiry and retention are testable without
//! sleeping and identical across stores (every store keeps integer milliseconds).

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A point in time: whole milliseconds since the Unix epoch (UTC).
///
/// Integer milliseconds rather than `SystemTime` because the same value must
/// round-trip through SQLite and PostgreSQL `BIGINT` columns unchanged, which is
/// what makes the boundary tests (exactly at expiry, ±1 ms) mean the same thing
/// in every store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The timestamp `ms` milliseconds after the Unix epoch.
    pub const fn from_millis(ms: i64) -> Self {
        Timestamp(ms)
    }

    /// Milliseconds since the Unix epoch.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// `self + d`, saturating instead of overflowing on absurd durations.
    pub fn saturating_add(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_add(duration_millis(d)))
    }

    /// `self - d`, saturating.
    pub fn saturating_sub(self, d: Duration) -> Self {
        Timestamp(self.0.saturating_sub(duration_millis(d)))
    }

    /// The date in UTC, `YYYY-MM-DD` (proleptic Gregorian, Howard
    /// Hinnant's civil-from-days), valid for every timestamp: what a person
    /// reads, with no date crate in the graph.
    pub fn utc_date(self) -> String {
        let days = self.0.div_euclid(86_400_000);
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        format!("{year:04}-{month:02}-{day:02}")
    }

    /// Whole seconds since midnight UTC.
    pub fn utc_seconds_of_day(self) -> i64 {
        self.0.rem_euclid(86_400_000) / 1000
    }

    /// `YYYY-MM-DD HH:MM:SS UTC`: the timestamp as a person reads it (an
    /// approval's expiry in the model's text, a refusal's).
    pub fn utc(self) -> String {
        let secs = self.utc_seconds_of_day();
        format!(
            "{} {:02}:{:02}:{:02} UTC",
            self.utc_date(),
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }

    /// The current wall-clock time.
    pub fn now() -> Self {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        Timestamp(ms)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// A duration as whole milliseconds, saturating at `i64::MAX`.
pub(crate) fn duration_millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Where the ledger reads "now" from.
///
/// Every transition reads the clock once, so a test that holds a
/// [`ManualClock`] decides exactly which leases and records have expired.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The real wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to; for tests and simulations.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        ManualClock(AtomicI64::new(start.as_millis()))
    }

    /// Move the clock to `t` (backwards too: tests of skew need it).
    pub fn set(&self, t: Timestamp) {
        self.0.store(t.as_millis(), Ordering::SeqCst);
    }

    /// Move the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        let ms = duration_millis(d);
        // fetch_update cannot fail with a closure that always returns Some.
        let _ = self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(v.saturating_add(ms)));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::Timestamp;

    #[test]
    fn timestamps_read_as_utc_for_every_i64() {
        assert_eq!(Timestamp::from_millis(0).utc(), "1970-01-01 00:00:00 UTC");
        assert_eq!(Timestamp::from_millis(-1).utc(), "1969-12-31 23:59:59 UTC");
        assert_eq!(Timestamp::from_millis(951_782_400_000).utc_date(), "2000-02-29");
        assert_eq!(
            Timestamp::from_millis(1_800_000_000_000).utc(),
            "2027-01-15 08:00:00 UTC"
        );
        assert!(!Timestamp::from_millis(i64::MIN).utc().is_empty());
        assert!(!Timestamp::from_millis(i64::MAX).utc().is_empty());
    }
}
