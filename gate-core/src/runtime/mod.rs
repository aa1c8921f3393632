//! The runtime: from a model's tool call to a [`Step`] the model sees.
//!
//! `Gate` holds what is shared (the toolbox, compiled validators, the ledger,
//! the sanitizer, the budgets); a `Task` holds one agent task's history. Every
//! call goes through the same pipeline: resolve the tool, validate the
//! arguments, claim the intent in the ledger, run the tool with panics
//! contained, classify a failure, [`decide`](policy::decide), log the decision,
//! and render a sanitized text for the model.

pub mod budget;
pub mod class;
mod gate;
pub mod log;
pub mod policy;
pub mod report;
pub mod step;

pub use budget::Budget;
pub use class::{Ambiguity, FailureClass, classify};
pub use gate::{DEFAULT_RESULT_CAP, DEFAULT_STORE, Gate, GateBuilder, GateError, Task};
pub use log::{DecisionSink, JsonLinesSink};
pub use policy::{BudgetVerdict, Decision, FailReason, History, Situation, decide};
pub use report::FailureReport;
pub use step::{Feedback, Step, ToolCall, ToolOutput};
