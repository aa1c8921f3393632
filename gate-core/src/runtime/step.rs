//! A call in, a step out: the provider-neutral call and the four outcomes.
//!
//! Every [`Step`] carries exactly the (sanitized) text the model will see and
//! renders to each provider's tool-result message, so an agent loop never has
//! to build error messages itself.

use gate_ledger::{Action, FailureClass, FailureReport};
use serde::Serialize;
use serde_json::{Value, json};

use crate::Dialect;

/// A tool call as a model made it: provider-neutral.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolCall {
    /// The provider's id of the call.
    pub id: String,
    /// The tool name the model used (possibly one that does not exist).
    pub name: String,
    /// The arguments exactly as the model wrote them (possibly not JSON).
    pub arguments: String,
}

impl ToolCall {
    /// A call from its parts.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
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

/// What the runtime decided about one call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// The tool's result (or definitive error) goes to the model.
    Return(ToolOutput),
    /// The call was wrong; the feedback says how to fix it.
    Reject(Feedback),
    /// The call failed ambiguously; the feedback says what to try instead.
    Retry(Feedback),
    /// The task must stop; the report says what a human needs to know.
    Fail(Box<FailureReport>),
}

impl Step {
    /// Exactly what the model will see, sanitized.
    pub fn model_text(&self) -> &str {
        match self {
            Step::Return(out) => &out.text,
            Step::Reject(f) | Step::Retry(f) => &f.text,
            Step::Fail(report) => &report.model_text,
        }
    }

    /// The id of the call this step answers.
    pub fn call_id(&self) -> &str {
        match self {
            Step::Return(out) => &out.call_id,
            Step::Reject(f) | Step::Retry(f) => &f.call_id,
            Step::Fail(report) => &report.call_id,
        }
    }

    /// Whether the provider's error flag should be set.
    pub fn is_error(&self) -> bool {
        match self {
            Step::Return(out) => out.is_error,
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
        }
    }

    /// True when the agent loop must stop the task.
    pub fn is_fail(&self) -> bool {
        matches!(self, Step::Fail(_))
    }

    /// The tool-result message for `dialect`, ready to append to the
    /// conversation. Providers without an error flag (OpenAI, Gemini) get the
    /// text alone; Gemini's `functionResponse` uses `error` instead of `output`.
    pub fn to_message(&self, dialect: Dialect, tool_name: &str) -> Value {
        let text = self.model_text();
        let id = self.call_id();
        match dialect {
            Dialect::OpenAi | Dialect::OpenAiStrict => json!({"role": "tool", "tool_call_id": id, "content": text}),
            Dialect::OpenAiResponses => json!({"type": "function_call_output", "call_id": id, "output": text}),
            Dialect::Anthropic | Dialect::AnthropicStrict => {
                json!({"type": "tool_result", "tool_use_id": id, "content": text, "is_error": self.is_error()})
            }
            Dialect::Gemini | Dialect::GeminiJsonSchema => {
                let key = if self.is_error() { "error" } else { "output" };
                json!({"functionResponse": {"name": tool_name, "id": id, "response": {key: text}}})
            }
            Dialect::Mcp => json!({
                "content": [{"type": "text", "text": text}],
                "isError": self.is_error(),
                "resultType": "complete",
            }),
            Dialect::Mcp2025_11_25 => json!({"content": [{"type": "text", "text": text}], "isError": self.is_error()}),
        }
    }
}
