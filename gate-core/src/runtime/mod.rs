//! The runtime: from a model's tool call to a [`Step`] the model sees.
//!
//! [`Gate`] holds what is shared (the toolbox, compiled validators, the
//! store, the sanitizers, the budgets); a [`Task`] is one agent task, whose
//! history lives in the store so that any worker resumes it exactly.
//!
//! # The pipeline
//!
//! Every call takes one way, written out in `Task::pipeline` (task.rs),
//! each stage a file named after it that takes explicit inputs (the gate's
//! shared part, the call, the admitted call, the task as a read-only
//! `TaskView`) and returns a value; only the task applies what the last
//! stage returns:
//!
//! ```text
//! terminal?   a failed task runs nothing more (rule 7)                    task.rs
//! admit       resolve the tool, check its scopes, validate and parse the
//!             arguments, refuse a repeated failed call (rule 3)           admit.rs
//! guard       is the call steered by a third party's text? (asked for
//!             state-changing or external calls of a labelled task; the
//!             decision is crate::guard)                                  flow.rs
//! approval    where a person must agree: store the request, or wait on
//!             it, or run what was approved, or answer a refusal          approval.rs
//! claim       a side effect's intent with its dispatch, one commit        claim.rs
//! run         the tool, with its context, panics contained, timed out     run.rs
//! classify    a failure's class                                           class.rs
//! choose      the policy's decision under the budgets; changes nothing    choose.rs
//! settle      step, task state and decision record: one commit            settle.rs
//!             (a quiet success: no commit, the background writer)        quiet.rs
//! render      the texts the model and the operator read                   render.rs
//! ```
//!
//! Each stage before the decision ends in an `Attempt`:
//! a refusal, a wait for a person, a replay, a stop, a result or a failure.
//! An internal retry goes round again from the claim, after the pause the
//! decision set; the gate's retry budget pays for it there, once it is
//! recorded.
//!
//! The guard takes the view and the admitted call, as admission and
//! approval do: it lets the call on, hands approval its reason for asking a
//! person, or (with `GateBuilder::guard_refuses`) ends the call with a
//! refusal the decision settles. `settle` records what each result adds to
//! the guard's memory, in the task's state.
//!
//! Beside the stages: `gate` (the shared part), `builder` (settings and
//! [`GateError`]), `inbox` ([`ApprovalInbox`], where people decide), `view` (the task as stages read it), `identity` (a
//! call's fingerprints and derived key, computed when needed), `policy`
//! ([`decide`]: the decision table and the ledger state it implies),
//! `budget` (the budgets as the runtime asks them), `persist` (store writes
//! sent again while the store fails), `usage` (a model turn's report),
//! `messages` (every text), `step` ([`ToolCall`] in, [`Step`] out), `log`
//! ([`DecisionSink`]), `trace` (the span each call runs in, named after the
//! OpenTelemetry conventions, and the `otel` feature's metrics) and `writer`
//! (the background writer of quiet successes' records).

mod admit;
mod approval;
mod attempt;
mod budget;
mod builder;
mod choose;
mod claim;
mod class;
mod flow;
mod gate;
mod identity;
mod inbox;
mod log;
mod messages;
mod persist;
mod policy;
mod quiet;
mod render;
mod run;
mod settle;
mod step;
mod task;
mod trace;
mod usage;
mod view;
mod writer;

pub use approval::{ApprovalPolicy, ApprovalQuestion, DEFAULT_APPROVAL_EXPIRY, MAX_APPROVAL_EXPIRY};
pub use budget::{Budget, RetryBudget};
pub use builder::{
    DEFAULT_RESULT_CAP, DEFAULT_STORE, DEFAULT_STORE_PATIENCE, DEFAULT_TOOL_TIMEOUT, GateBuilder, GateError,
    MAX_STORE_PATIENCE, MAX_TOOL_TIMEOUT,
};
pub use class::classify;
pub use gate::Gate;
pub(crate) use identity::{as_validated, derived_key};
pub use inbox::ApprovalInbox;
pub use log::{DecisionSink, JsonLinesSink};
pub use policy::{BudgetVerdict, Decision, History, Situation, decide, ledger_state};
pub use step::{Feedback, PendingApproval, Step, ToolCall, ToolOutput};
pub use task::Task;
pub use toolgate_ledger::{Action, Ambiguity, FailureClass, FailureReason, FailureReport};
