//! Timestamps as the report prints them. The CLI depends on no date crate and
//! the page must show the same UTC text on every machine, so epoch
//! milliseconds become a civil date by hand (`Timestamp::utc_date`); `gate reconcile` prints its
//! times with [`fmt_time`] too, so the page and the terminal agree.

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` UTC (proleptic
/// Gregorian, Howard Hinnant's civil-from-days), valid for every `i64`.
pub(crate) fn fmt_time(ms: i64) -> String {
    let (date, secs) = civil(ms);
    format!("{date} {:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// `ms` as `YYYY-MM-DD` UTC: the timeline's axis label for day-wide buckets.
pub(super) fn fmt_date(ms: i64) -> String {
    civil(ms).0
}

/// `ms` as `YYYY-MM-DD HH:MM` UTC: the axis label for minute-wide buckets.
pub(super) fn fmt_minute(ms: i64) -> String {
    let (date, secs) = civil(ms);
    format!("{date} {:02}:{:02}", secs / 3600, secs / 60 % 60)
}

/// `ms` split into its UTC date, formatted, and the seconds into that day.
fn civil(ms: i64) -> (String, i64) {
    let t = toolgate::ledger::Timestamp::from_millis(ms);
    (t.utc_date(), t.utc_seconds_of_day())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_format_as_utc_for_every_i64() {
        assert_eq!(fmt_time(0), "1970-01-01 00:00:00");
        assert_eq!(fmt_time(-1), "1969-12-31 23:59:59");
        assert_eq!(fmt_time(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(fmt_time(1_764_493_200_000), "2025-11-30 09:00:00");
        assert_eq!(fmt_minute(1_764_493_259_999), "2025-11-30 09:00");
        // The extremes only have to format, not make sense.
        assert!(!fmt_time(i64::MIN).is_empty() && !fmt_time(i64::MAX).is_empty());
    }
}
