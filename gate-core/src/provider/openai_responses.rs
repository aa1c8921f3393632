//! OpenAI Responses: `function_call` output items in, one
//! `function_call_output` input item per result out.
//!
//! [`parse_calls`] takes a whole response (its `output`), a list of items or
//! one item. Only `function_call` items are calls of the program's own JSON
//! tools: a `custom_tool_call` (free-form text input) is refused, since gate
//! cannot validate it, and every other item (messages, with or without a
//! `type`, reasoning, the calls of OpenAI's hosted tools, earlier outputs) is
//! skipped, so a whole input list can be read too. A call is answered by its
//! `call_id` (`call_…`), not by the item's `id` (`fc_…`); `arguments` is the
//! JSON text the model wrote, kept byte for byte.
//!
//! The output item has no error flag, so an error result's output starts
//! with `Error: ` ([`toolgate_model::marked_as_error`]).

use serde_json::{Value, json};

use super::{ProviderError, Reader};
use crate::runtime::{Step, ToolCall};
use toolgate_model::Provider;

const READ: Reader = Reader {
    provider: Provider::OpenAiResponses,
};

/// Every `function_call` in a Responses response, item list or single item.
pub fn parse_calls(value: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    if let Value::Array(items) = value {
        return parse_items(items, "$");
    }
    let object = READ.object(value, "$")?;
    if let Some(output) = object.get("output") {
        return parse_items(READ.array(output, "$.output")?, "$.output");
    }
    if object.contains_key("type") || object.contains_key("role") {
        return Ok(parse_item(value, "$")?.into_iter().collect());
    }
    Err(ProviderError::shape(
        Provider::OpenAiResponses,
        "$",
        "a response (`output`), a list of items or an item (`type`, or `role` for a message)",
    ))
}

fn parse_items(items: &[Value], path: &str) -> Result<Vec<ToolCall>, ProviderError> {
    let mut calls = Vec::new();
    for (i, item) in items.iter().enumerate() {
        calls.extend(parse_item(item, &format!("{path}[{i}]"))?);
    }
    Ok(calls)
}

fn parse_item(item: &Value, path: &str) -> Result<Option<ToolCall>, ProviderError> {
    let item = READ.object(item, path)?;
    // An input message may leave out its `type` (`{"role": "user", …}`).
    match READ.optional_string(item, "type", path)? {
        Some("function_call") => {}
        Some("custom_tool_call") => {
            return Err(ProviderError::unsupported(
                Provider::OpenAiResponses,
                format!("{path}.type"),
                "a call of a custom tool (free-form text input, no JSON Schema)",
            ));
        }
        _ => return Ok(None),
    }
    let id = READ.string(item, "call_id", path)?;
    let name = READ.string(item, "name", path)?;
    Ok(Some(match item.get("arguments") {
        None | Some(Value::Null) => ToolCall::new(id, name, "{}"),
        Some(Value::String(text)) => ToolCall::new(id, name, text.as_str()),
        Some(other) => ToolCall::from_json(id, name, other),
    }))
}

/// The `function_call_output` item answering `step`.
pub fn result(step: &Step) -> Value {
    json!({"type": "function_call_output", "call_id": step.call_id(), "output": super::openai_chat::text(step)})
}
