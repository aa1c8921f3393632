//! The order statistic the interleaved benches report their rounds by.

/// The value at quantile `q` (0 to 1) of sorted `values`.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    values[((values.len() - 1) as f64 * q).round() as usize]
}
