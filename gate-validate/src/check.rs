//! Leaf checks shared by the fast pass and the diagnostic pass, so that the
//! two can never disagree about what a number or a string may be.

use crate::schema::{Bound, NumRules, StrRules};
use crate::tree::Num;

/// Which numeric rule a number broke.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum NumFail {
    /// The format demands an integer (serde will not read `1.0` into a `u8`).
    NotInteger,
    /// Outside a bound or a format's range.
    Range,
    MultipleOf,
}

/// Compares a number with a bound exactly when both are integers.
fn cmp(n: Num, b: Bound) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (n.as_i128(), b) {
        (Some(x), Bound::Int(y)) => x.cmp(&y),
        (_, Bound::Int(y)) => n.as_f64().partial_cmp(&(y as f64)).unwrap_or(Ordering::Equal),
        (_, Bound::Float(y)) => n.as_f64().partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// Checks a number against the numeric keywords.
pub(crate) fn number(r: &NumRules, n: Num) -> Result<(), NumFail> {
    use std::cmp::Ordering::*;
    if let Some((_, lo, hi)) = r.int_format {
        let Some(v) = n.as_i128() else {
            return Err(NumFail::NotInteger);
        };
        if v < lo || v > hi {
            return Err(NumFail::Range);
        }
    }
    if r.minimum.is_some_and(|b| cmp(n, b) == Less)
        || r.maximum.is_some_and(|b| cmp(n, b) == Greater)
        || r.exclusive_minimum.is_some_and(|b| cmp(n, b) != Greater)
        || r.exclusive_maximum.is_some_and(|b| cmp(n, b) != Less)
    {
        return Err(NumFail::Range);
    }
    if let Some(m) = r.multiple_of {
        let ok = match (n.as_i128(), m.fract() == 0.0 && m <= i64::MAX as f64) {
            (Some(v), true) => v % (m as i128) == 0,
            _ => {
                let q = n.as_f64() / m;
                q.is_finite() && (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
            }
        };
        if !ok {
            return Err(NumFail::MultipleOf);
        }
    }
    Ok(())
}

/// Which string rule a string broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StrFail {
    Length,
    Pattern,
}

/// Checks a string against the string keywords; lengths count Unicode
/// scalar values, as JSON Schema specifies.
pub(crate) fn string(r: &StrRules, s: &str) -> Result<(), StrFail> {
    if r.min_length.is_some() || r.max_length.is_some() {
        let len = s.chars().count() as u64;
        if r.min_length.is_some_and(|m| len < m) || r.max_length.is_some_and(|m| len > m) {
            return Err(StrFail::Length);
        }
    }
    if let Some((_, re)) = &r.pattern
        && !re.is_match(s)
    {
        return Err(StrFail::Pattern);
    }
    Ok(())
}
