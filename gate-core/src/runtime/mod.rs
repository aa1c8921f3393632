//! The runtime: from a model's tool call to a [`Step`] the model sees.
//!
//! [`Gate`] holds what is shared (the toolbox, compiled validators, the
//! store, the sanitizer, the budgets); a [`Task`] is one agent task, whose
//! history lives in the store so that any worker resumes it exactly. Every
//! call goes through one pipeline: a failed task runs nothing; resolve the
//! tool, validate the arguments, claim the intent in the ledger, run the tool
//! with panics contained, classify a failure, [`decide`],
//! consult the budgets, and commit the task's new state with the decision
//! record, then render a sanitized text for the model.
//!
//! The files follow the pipeline: `builder` (settings and [`GateError`]),
//! `gate` (the shared part), `task` (the pipeline), `identity` (a call's
//! fingerprints and derived key, computed when needed), `attempt` (claim
//! with dispatch, run), `persist` (store writes sent again while the store
//! fails), [`policy`] (the decision and the ledger state it implies),
//! [`budget`], [`class`], `messages` (every text), [`step`] and [`log`].

mod attempt;
pub mod budget;
mod builder;
pub mod class;
mod gate;
mod identity;
pub mod log;
mod messages;
mod persist;
pub mod policy;
pub mod step;
mod task;
mod writer;

pub use budget::{Budget, RetryBudget};
pub use builder::{
    DEFAULT_RESULT_CAP, DEFAULT_STORE, DEFAULT_STORE_PATIENCE, DEFAULT_TOOL_TIMEOUT, GateBuilder, GateError,
    MAX_STORE_PATIENCE, MAX_TOOL_TIMEOUT,
};
pub use class::classify;
pub use gate::Gate;
pub use gate_ledger::{Action, Ambiguity, FailureClass, FailureReason, FailureReport};
pub(crate) use identity::{as_validated, derived_key};
pub use log::{DecisionSink, JsonLinesSink};
pub use policy::{BudgetVerdict, Decision, History, Situation, decide, ledger_state};
pub use step::{Feedback, Step, ToolCall, ToolOutput};
pub use task::Task;
