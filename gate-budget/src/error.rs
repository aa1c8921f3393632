//! The one error a budget constructor returns.
//!
//! Budgets are configured by operators, often from a file or the CLI, so a bad
//! value must come back as a message naming the parameter and its allowed
//! range rather than as a panic deep inside the runtime.

use thiserror::Error;

/// A budget parameter outside its documented range.
///
/// `parameter` is the name used in the constructor's docs, `value` what was
/// given, and `allowed` the range in words, so the message can be shown to an
/// operator as it is.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("invalid budget parameter `{parameter}` = {value}: must be {allowed}")]
pub struct BudgetError {
    /// The parameter's name, as in the constructor's documentation.
    pub parameter: &'static str,
    /// The rejected value, formatted for humans.
    pub value: String,
    /// The allowed range, in words.
    pub allowed: &'static str,
}

impl BudgetError {
    pub(crate) fn new(parameter: &'static str, value: impl std::fmt::Debug, allowed: &'static str) -> Self {
        BudgetError {
            parameter,
            value: format!("{value:?}"),
            allowed,
        }
    }
}
