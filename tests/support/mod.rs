//! What the facade's integration tests share: a customer toolbox over a
//! counting CRM ([`crm`]), the invoice call the fast path is measured on
//! ([`invoice`], also included by the benches), and two helpers for
//! building calls and reading failures. A test file takes it with
//! `mod support;`.
//!
//! Each test file is a crate of its own and uses some of these and not
//! others, so what one crate leaves unused is not dead code: each item below
//! allows `dead_code` for that reason, and nothing else does.

use std::fmt::Display;

use toolgate::FailureReason;
use toolgate::{Step, ToolCall};

#[allow(dead_code, reason = "each test crate uses a part of the support")]
pub mod crm;
#[allow(dead_code, reason = "each test crate uses a part of the support")]
pub mod invoice;

/// A call of `tool` with `args`: JSON text as the model sent it (valid or
/// not), or a `serde_json::Value`.
#[allow(dead_code, reason = "each test crate uses a part of the support")]
pub fn call(id: &str, tool: &str, args: impl Display) -> ToolCall {
    ToolCall::new(id, tool, args.to_string())
}

/// Why `step` failed the task, if it did.
#[allow(dead_code, reason = "each test crate uses a part of the support")]
pub fn fail_reason(step: &Step) -> Option<FailureReason> {
    match step {
        Step::Fail(report) => Some(report.reason),
        _ => None,
    }
}
