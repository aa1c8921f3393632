//! OpenAI Chat Completions: `tool_calls` on the assistant message in, one
//! `role: tool` message per result out.
//!
//! [`parse_calls`] takes a whole completion (its first choice, as gate's
//! OpenAI back end reads it), an assistant message, a `tool_calls` array or
//! one tool call. `function.arguments` is the JSON text the model wrote and is
//! kept byte for byte, invalid JSON included; a compatible server that sends an
//! object instead has it serialized once. Calls of `custom` tools (free-form
//! text input, no JSON Schema) are refused: gate cannot validate them.
//!
//! The tool message has no error flag, so an error result's content starts
//! with `Error: ` ([`toolgate_model::marked_as_error`]).

use serde_json::{Value, json};

use super::{ProviderError, Reader};
use crate::runtime::{Step, ToolCall};
use toolgate_model::Provider;

const READ: Reader = Reader {
    provider: Provider::OpenAiChat,
};

/// Every tool call in a Chat Completions response, assistant message,
/// `tool_calls` array or single tool call.
pub fn parse_calls(value: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    if let Value::Array(calls) = value {
        return parse_list(calls, "$");
    }
    let object = READ.object(value, "$")?;
    if let Some(choices) = object.get("choices") {
        let first = READ
            .array(choices, "$.choices")?
            .first()
            .ok_or_else(|| ProviderError::shape(Provider::OpenAiChat, "$.choices", "at least one choice"))?;
        let choice = READ.object(first, "$.choices[0]")?;
        let message = choice.get("message").ok_or_else(|| {
            ProviderError::shape(Provider::OpenAiChat, "$.choices[0].message", "an object; it is missing")
        })?;
        return parse_message(message, "$.choices[0].message");
    }
    if object.contains_key("function") {
        return parse_call(value, "$").map(|call| vec![call]);
    }
    if object.contains_key("tool_calls") || object.contains_key("role") {
        return parse_message(value, "$");
    }
    Err(ProviderError::shape(
        Provider::OpenAiChat,
        "$",
        "a chat completion (`choices`), an assistant message (`role`, `tool_calls`) or a tool call (`function`)",
    ))
}

fn parse_message(message: &Value, path: &str) -> Result<Vec<ToolCall>, ProviderError> {
    let message = READ.object(message, path)?;
    match message.get("tool_calls") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(calls) => parse_list(
            READ.array(calls, &format!("{path}.tool_calls"))?,
            &format!("{path}.tool_calls"),
        ),
    }
}

fn parse_list(calls: &[Value], path: &str) -> Result<Vec<ToolCall>, ProviderError> {
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| parse_call(call, &format!("{path}[{i}]")))
        .collect()
}

fn parse_call(call: &Value, path: &str) -> Result<ToolCall, ProviderError> {
    let call = READ.object(call, path)?;
    match READ.optional_string(call, "type", path)? {
        None | Some("function") => {}
        Some("custom") => {
            return Err(ProviderError::unsupported(
                Provider::OpenAiChat,
                format!("{path}.type"),
                "a call of a custom tool (free-form text input, no JSON Schema)",
            ));
        }
        Some(other) => {
            return Err(ProviderError::unsupported(
                Provider::OpenAiChat,
                format!("{path}.type"),
                format!("a tool call of type `{other}`"),
            ));
        }
    }
    let id = READ.string(call, "id", path)?;
    let function_path = format!("{path}.function");
    let function = match call.get("function") {
        Some(function) => READ.object(function, &function_path)?,
        None => {
            return Err(ProviderError::shape(
                Provider::OpenAiChat,
                function_path,
                "an object; it is missing",
            ));
        }
    };
    let name = READ.string(function, "name", &function_path)?;
    Ok(match function.get("arguments") {
        None | Some(Value::Null) => ToolCall::new(id, name, "{}"),
        Some(Value::String(text)) => ToolCall::new(id, name, text.as_str()),
        Some(other) => ToolCall::from_json(id, name, other),
    })
}

/// The `role: tool` message answering `step`.
pub fn result(step: &Step) -> Value {
    json!({"role": "tool", "tool_call_id": step.call_id(), "content": text(step)})
}

/// The text of a result for an OpenAI API: marked when it is an error.
pub(crate) fn text(step: &Step) -> std::borrow::Cow<'_, str> {
    if step.is_error() {
        toolgate_model::marked_as_error(step.model_text())
    } else {
        std::borrow::Cow::Borrowed(step.model_text())
    }
}
