//! A call in, a step out: the provider-neutral call and the five outcomes.
//!
//! Every [`Step`] carries exactly the (sanitized) text the model will see and
//! renders to each provider's tool-result message, so an agent loop never has
//! to build error messages itself.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolgate_ledger::{Action, FailureClass, FailureReport, Timestamp};

use crate::Dialect;
use crate::provider::{self, Provider, ProviderError};

/// A tool call as a model made it: provider-neutral.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call.
    pub id: String,
    /// The tool name the model used (possibly one that does not exist).
    pub name: String,
    /// The arguments exactly as the model wrote them (possibly not JSON).
    pub arguments: String,
}

impl ToolCall {
    /// A call from its parts, the arguments as the text the model wrote.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// A call whose arguments the provider sent as JSON rather than text
    /// (Anthropic's `input`, Gemini's `args`), taken as they come: serialized
    /// once, compactly and in their key order, into the text the validator
    /// reads. Whatever the value is, it is kept: a value that is not an
    /// object is the validator's to reject, with a message for the model.
    ///
    /// ```
    /// let input = serde_json::json!({"email": "ann@acme.io", "limit": 5});
    /// let call = toolgate_core::ToolCall::from_json("toolu_01", "lookup_customer", &input);
    /// assert_eq!(call.arguments, r#"{"email":"ann@acme.io","limit":5}"#);
    /// ```
    pub fn from_json(id: impl Into<String>, name: impl Into<String>, arguments: &Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.to_string(),
        }
    }

    /// Every tool call in `value`, in `provider`'s format: a whole response,
    /// an assistant message (or its content) or a single call. See
    /// [`crate::provider`] for the shapes each provider takes.
    pub fn parse_all(provider: Provider, value: &Value) -> Result<Vec<ToolCall>, ProviderError> {
        crate::provider::parse_calls(provider, value)
    }
}

/// What the tool returned (or its definitive error), as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolOutput {
    /// The call this answers.
    pub call_id: String,
    /// The tool that ran.
    pub tool: String,
    /// The result as JSON (for a definitive error: `{"error": "..."}`).
    pub value: Value,
    /// The text the model sees: the sanitized JSON of `value`.
    pub text: String,
    /// True for a definitive error (card declined).
    pub is_error: bool,
    /// True when the stored outcome of an earlier identical intent was
    /// replayed instead of running the tool again.
    pub replayed: bool,
}

/// A message to the model that names what to change (reject) or what to do
/// instead (retry with a correction).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Feedback {
    /// The call this answers.
    pub call_id: String,
    /// The tool the model called (as it spelled it).
    pub tool: String,
    /// Why the call failed.
    pub class: FailureClass,
    /// The sanitized text the model sees.
    pub text: String,
}

/// A call that waits for a person's approval: it has not run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The call this answers (for now: the call has not run).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The request a person decides (`gate approvals approve ID`).
    pub approval_id: String,
    /// When the request expires without a decision.
    pub expires_at: Timestamp,
    /// The sanitized text the model sees: the call has not run, a person
    /// was asked, do not call it again with the same arguments.
    pub text: String,
}

/// What the runtime decided about one call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Step {
    /// The tool's result (or definitive error) goes to the model.
    Return(ToolOutput),
    /// The call was wrong; the feedback says how to fix it.
    Reject(Feedback),
    /// The call failed ambiguously; the feedback says what to try instead.
    Retry(Feedback),
    /// The task must stop; the report says what a human needs to know.
    Fail(Box<FailureReport>),
    /// The call waits for a person's approval and has not run; the decided
    /// call comes back through [`Task::take_decided`](super::Task::take_decided)
    /// or as the identical call's result once decided.
    AwaitingApproval(PendingApproval),
}

impl Step {
    /// Exactly what the model will see, sanitized.
    pub fn model_text(&self) -> &str {
        match self {
            Step::Return(out) => &out.text,
            Step::Reject(f) | Step::Retry(f) => &f.text,
            Step::Fail(report) => &report.model_text,
            Step::AwaitingApproval(p) => &p.text,
        }
    }

    /// The id of the call this step answers.
    pub fn call_id(&self) -> &str {
        match self {
            Step::Return(out) => &out.call_id,
            Step::Reject(f) | Step::Retry(f) => &f.call_id,
            Step::Fail(report) => &report.call_id,
            Step::AwaitingApproval(p) => &p.call_id,
        }
    }

    /// The tool the call named, as the model spelled it (possibly a tool
    /// that does not exist).
    pub fn tool_name(&self) -> &str {
        match self {
            Step::Return(out) => &out.tool,
            Step::Reject(f) | Step::Retry(f) => &f.tool,
            Step::Fail(report) => &report.tool,
            Step::AwaitingApproval(p) => &p.tool,
        }
    }

    /// The failure class behind the step, if any: a rejection's or a
    /// correction's, a failed task's, and `Definitive` for a definitive
    /// error returned as the result; `None` for a success.
    pub fn failure_class(&self) -> Option<FailureClass> {
        match self {
            Step::Return(out) if out.is_error => Some(FailureClass::Definitive),
            Step::Return(_) => None,
            Step::Reject(f) | Step::Retry(f) => Some(f.class),
            Step::Fail(report) => report.class,
            Step::AwaitingApproval(_) => None,
        }
    }

    /// Whether the provider's error flag should be set: a waiting call is
    /// not an error (nothing failed; its text says it has not run).
    pub fn is_error(&self) -> bool {
        match self {
            Step::Return(out) => out.is_error,
            Step::AwaitingApproval(_) => false,
            _ => true,
        }
    }

    /// The action the decision log records for this step. (A step is what
    /// the model sees; gate's own internal retries are never returned as
    /// steps, they are in [`Task::last_retries`](super::Task::last_retries).)
    pub fn action(&self) -> Action {
        match self {
            Step::Return(out) if out.replayed => Action::Replay,
            Step::Return(_) => Action::Return,
            Step::Reject(_) => Action::Reject,
            Step::Retry(_) => Action::RetryWithCorrection,
            Step::Fail(_) => Action::Fail,
            Step::AwaitingApproval(_) => Action::AwaitApproval,
        }
    }

    /// True when the agent loop must stop the task.
    pub fn is_fail(&self) -> bool {
        matches!(self, Step::Fail(_))
    }

    /// The tool-result message for `dialect`, ready to append to the
    /// conversation: for a model API, what [`provider::render`] writes for
    /// [`Dialect::provider`] (OpenAI's text marked `Error: ` for an error,
    /// Anthropic's `is_error`, Gemini's `error` instead of `output`); for MCP,
    /// a `CallToolResult` with `isError`. `tool_name` is the name the result
    /// reports (Gemini's `functionResponse.name`).
    pub fn to_message(&self, dialect: Dialect, tool_name: &str) -> Value {
        let content = json!([{"type": "text", "text": self.model_text()}]);
        match dialect.provider() {
            Some(provider) => provider::render_named(provider, self, tool_name),
            None if dialect == Dialect::Mcp2025_11_25 => json!({"content": content, "isError": self.is_error()}),
            None => json!({"content": content, "isError": self.is_error(), "resultType": "complete"}),
        }
    }
}
