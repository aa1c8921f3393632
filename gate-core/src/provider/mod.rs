//! Provider formats in and out: a model's tool calls parsed into
//! [`ToolCall`]s, and every [`Step`] rendered as that provider's tool result.
//!
//! The formats hang off a small [`Provider`] enum, not off
//! [`Dialect`](crate::Dialect): a dialect is a manifest format, and several
//! dialects send their tools to the same API (`OpenAi` and `OpenAiStrict`,
//! `Gemini` and `GeminiJsonSchema`), whose calls and results have one shape
//! whatever the manifest was. [`Dialect::provider`](crate::Dialect::provider)
//! maps one to the other. MCP is not a provider here: its `tools/call`
//! requests and results belong to gate's MCP server, and [`Step::to_message`]
//! renders its `CallToolResult`. The enum itself is defined in `gate-model`,
//! so that a model back end can say which API it speaks
//! ([`ChatModel::provider`](toolgate_model::ChatModel::provider)).
//!
//! Inbound, each provider's parser takes what a program has at hand, already
//! parsed as JSON: a whole response, one assistant message (or its content),
//! or a single call, and returns every call in it, in order. Arguments the
//! provider sends as JSON text (OpenAI) are kept byte for byte, valid JSON or
//! not, since judging them is the validator's job; arguments sent as an
//! object (Anthropic `input`, Gemini `args`) are serialized once, compactly,
//! into the text the validator reads ([`ToolCall::from_json`]). Content gate
//! does not run (text, reasoning, the provider's own server-side tools) is
//! skipped; a call of a kind gate cannot validate (OpenAI's free-form custom
//! tools) is an error rather than a call silently lost.
//!
//! | provider | a call | gate reads | the result gate writes |
//! |---|---|---|---|
//! | [`Provider::OpenAiChat`] | `tool_calls[]` item | `id`, `function.name`, `function.arguments` (text) | `{"role":"tool","tool_call_id","content"}` |
//! | [`Provider::OpenAiResponses`] | `function_call` item | `call_id`, `name`, `arguments` (text) | `{"type":"function_call_output","call_id","output"}` |
//! | [`Provider::Anthropic`] | `tool_use` block | `id`, `name`, `input` (object) | `{"type":"tool_result","tool_use_id","content","is_error"}` |
//! | [`Provider::Gemini`] | `functionCall` part | `id` (optional), `name`, `args` (object) | `{"functionResponse":{"id","name","response":{"output"\|"error"}}}` |
//!
//! The text of every result is [`Step::model_text`], sanitized. OpenAI's two
//! APIs have no error flag, so an error's text starts with `Error: ` (as
//! gate's OpenAI back end writes it, [`toolgate_model::marked_as_error`]);
//! Anthropic sets `is_error`; Gemini puts the text under `error` instead of
//! `output`, the convention its SDK documents.
//!
//! ```
//! use toolgate_core::provider::{self, Provider};
//! let message = serde_json::json!({
//!     "role": "assistant",
//!     "content": [
//!         {"type": "text", "text": "Looking them up."},
//!         {"type": "tool_use", "id": "toolu_01", "name": "lookup_customer", "input": {"email": "ann@acme.io"}}
//!     ]
//! });
//! let calls = provider::parse_calls(Provider::Anthropic, &message)?;
//! assert_eq!(calls[0].id, "toolu_01");
//! assert_eq!(calls[0].arguments, r#"{"email":"ann@acme.io"}"#);
//! # Ok::<(), provider::ProviderError>(())
//! ```

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;

use std::convert::Infallible;
use std::fmt;

use serde_json::{Map, Value};

pub use toolgate_model::{Provider, UnknownProvider};

use crate::runtime::{Step, ToolCall};

/// Every tool call in `value`, a response, message, content list or single
/// call of `provider`'s API (see each provider's module for the shapes).
pub fn parse_calls(provider: Provider, value: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    match provider {
        Provider::OpenAiChat => openai_chat::parse_calls(value),
        Provider::OpenAiResponses => openai_responses::parse_calls(value),
        Provider::Anthropic => anthropic::parse_calls(value),
        Provider::Gemini => gemini::parse_calls(value),
    }
}

/// The tool result answering `step`, in `provider`'s shape: one OpenAI Chat
/// `tool` message, one Responses `function_call_output` item, one Anthropic
/// `tool_result` block or one Gemini `functionResponse` part.
pub fn render(provider: Provider, step: &Step) -> Value {
    render_named(provider, step, step.tool_name())
}

/// What to append to the conversation after a turn whose calls gate answered
/// with `steps`, in order: OpenAI's APIs take one message (Chat) or item
/// (Responses) per result; Anthropic takes one `user` message holding every
/// `tool_result` block, and Gemini one `user` content holding every
/// `functionResponse` part, as both require. No steps, nothing to append.
pub fn reply(provider: Provider, steps: &[Step]) -> Vec<Value> {
    let results = steps.iter().map(|step| render(provider, step));
    match provider {
        _ if steps.is_empty() => Vec::new(),
        Provider::Anthropic => vec![serde_json::json!({"role": "user", "content": results.collect::<Vec<_>>()})],
        Provider::Gemini => vec![serde_json::json!({"role": "user", "parts": results.collect::<Vec<_>>()})],
        _ => results.collect(),
    }
}

/// [`render`] with the tool name given by the caller ([`Step::to_message`]).
pub(crate) fn render_named(provider: Provider, step: &Step, tool_name: &str) -> Value {
    match provider {
        Provider::OpenAiChat => openai_chat::result(step),
        Provider::OpenAiResponses => openai_responses::result(step),
        Provider::Anthropic => anthropic::result(step),
        Provider::Gemini => gemini::result(step, tool_name),
    }
}

toolgate_error::opaque_error! {
    /// JSON that is not the provider's tool-call shape: a required field missing
    /// or of the wrong type, or a kind of call gate cannot run. Names the
    /// provider and the path of the offending field (`$.content[1].name`).
    #[derive(Clone, PartialEq, Eq)]
    pub struct ProviderError(Box<ProviderErrorImpl>, source: Infallible);
    enum ErrorKind {
        /// True when the JSON is not the provider's shape: a missing field, a
        /// field of the wrong type, or a value of another provider altogether.
        Shape { provider: Provider, path: String } => is_shape,
        /// True for a well-formed call gate cannot run: a kind of tool that takes
        /// no JSON arguments (OpenAI custom tools).
        Unsupported { provider: Provider, path: String } => is_unsupported,
    }
}

impl ProviderError {
    pub(crate) fn shape(provider: Provider, path: impl Into<String>, expected: impl fmt::Display) -> Self {
        let path = path.into();
        let message = format!("{provider}: {path}: expected {expected}");
        Self::new(ErrorKind::Shape { provider, path }, message, None)
    }

    pub(crate) fn unsupported(provider: Provider, path: impl Into<String>, what: impl fmt::Display) -> Self {
        let path = path.into();
        let message = format!("{provider}: {path}: {what} cannot be run by gate");
        Self::new(ErrorKind::Unsupported { provider, path }, message, None)
    }

    /// Whose format was being read.
    pub fn provider(&self) -> Provider {
        match self.inner.kind {
            ErrorKind::Shape { provider, .. } | ErrorKind::Unsupported { provider, .. } => provider,
        }
    }

    /// Where in the JSON the problem is, from `$` (the value given).
    pub fn path(&self) -> &str {
        match &self.inner.kind {
            ErrorKind::Shape { path, .. } | ErrorKind::Unsupported { path, .. } => path,
        }
    }
}

/// Reading one provider's JSON, with the paths its errors name.
#[derive(Clone, Copy)]
pub(crate) struct Reader {
    pub(crate) provider: Provider,
}

impl Reader {
    pub(crate) fn object<'v>(self, value: &'v Value, path: &str) -> Result<&'v Map<String, Value>, ProviderError> {
        value
            .as_object()
            .ok_or_else(|| ProviderError::shape(self.provider, path, format!("an object, got {}", kind_of(value))))
    }

    pub(crate) fn array<'v>(self, value: &'v Value, path: &str) -> Result<&'v [Value], ProviderError> {
        value
            .as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| ProviderError::shape(self.provider, path, format!("an array, got {}", kind_of(value))))
    }

    /// A string field that must be there.
    pub(crate) fn string<'v>(
        self,
        object: &'v Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<&'v str, ProviderError> {
        match object.get(key) {
            Some(Value::String(s)) => Ok(s),
            None | Some(Value::Null) => Err(ProviderError::shape(
                self.provider,
                format!("{path}.{key}"),
                "a string; it is missing",
            )),
            Some(other) => Err(ProviderError::shape(
                self.provider,
                format!("{path}.{key}"),
                format!("a string, got {}", kind_of(other)),
            )),
        }
    }

    /// A string field that may be absent or `null`.
    pub(crate) fn optional_string<'v>(
        self,
        object: &'v Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Option<&'v str>, ProviderError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.string(object, key, path).map(Some),
        }
    }
}

/// How a JSON value is named in an error.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A call whose arguments came as JSON (Anthropic `input`, Gemini `args`):
/// absent ones are a call without arguments, `{}`.
pub(crate) fn call_from_json(id: impl Into<String>, name: &str, arguments: Option<&Value>) -> ToolCall {
    match arguments {
        None | Some(Value::Null) => ToolCall::new(id, name, "{}"),
        Some(arguments) => ToolCall::from_json(id, name, arguments),
    }
}
