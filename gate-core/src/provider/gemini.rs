//! Google Gemini: `functionCall` parts in, `functionResponse` parts out.
//!
//! [`parse_calls`] takes a `generateContent` response (its first candidate's
//! content, as the SDK's `response.function_calls` reads it), a content
//! (`parts`), a list of parts, one part or one bare `functionCall`. Field names
//! are read in the REST API's camelCase (`functionCall`) and in the Python
//! SDK's snake_case dumps (`function_call`). Parts that are not calls (text,
//! thoughts, code execution) are skipped. `args` is a JSON object and becomes
//! the call's argument text once, compactly ([`ToolCall::from_json`]).
//!
//! **Call ids.** Gemini's `id` is optional and the Developer API usually
//! leaves it out, matching a response to its call by name and order. gate
//! needs an id per call (the decision log and the ledger name calls by it),
//! so a call without one gets [`MINTED_ID_PREFIX`] followed by its position
//! among the calls of the value parsed and the first eight hex digits of the
//! SHA-256 of its name and arguments: `gate-gemini-0-3f1c…`. The same
//! response always yields the same ids, and two different calls in one task
//! rarely share one. A minted id is never sent back: the `functionResponse`
//! for such a call has no `id`, exactly as the call had none.
//!
//! The result's `response` is `{"output": text}`, or `{"error": text}` for an
//! error, the convention the Gemini SDK documents ("Use "output" key to
//! specify function output and "error" key to specify error details").

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::{ProviderError, Reader, call_from_json};
use crate::runtime::{Step, ToolCall};
use toolgate_model::Provider;

/// How the ids gate makes for calls that came without one begin.
pub const MINTED_ID_PREFIX: &str = "gate-gemini-";

const READ: Reader = Reader {
    provider: Provider::Gemini,
};

/// Every `functionCall` in a response, content, part list, part or bare call.
pub fn parse_calls(value: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    let mut calls = Vec::new();
    if let Value::Array(parts) = value {
        parse_parts(parts, "$", &mut calls)?;
        return Ok(calls);
    }
    let object = READ.object(value, "$")?;
    if let Some(candidates) = object.get("candidates") {
        let Some(first) = READ.array(candidates, "$.candidates")?.first() else {
            return Ok(calls);
        };
        let candidate = READ.object(first, "$.candidates[0]")?;
        // A candidate stopped by a safety filter has no content, hence no call.
        if let Some(content) = candidate.get("content").filter(|c| !c.is_null()) {
            parse_content(content, "$.candidates[0].content", &mut calls)?;
        }
    } else if object.contains_key("parts") {
        parse_content(value, "$", &mut calls)?;
    } else if function_call(object).is_some() {
        parse_part(object, "$", &mut calls)?;
    } else if object.contains_key("name") {
        parse_function_call(object, "$", &mut calls)?;
    } else {
        return Err(ProviderError::shape(
            Provider::Gemini,
            "$",
            "a response (`candidates`), a content (`parts`), a part (`functionCall`) or a function call (`name`)",
        ));
    }
    Ok(calls)
}

fn parse_content(content: &Value, path: &str, calls: &mut Vec<ToolCall>) -> Result<(), ProviderError> {
    let content = READ.object(content, path)?;
    match content.get("parts") {
        None | Some(Value::Null) => Ok(()),
        Some(parts) => {
            let path = format!("{path}.parts");
            parse_parts(READ.array(parts, &path)?, &path, calls)
        }
    }
}

fn parse_parts(parts: &[Value], path: &str, calls: &mut Vec<ToolCall>) -> Result<(), ProviderError> {
    for (i, part) in parts.iter().enumerate() {
        let path = format!("{path}[{i}]");
        parse_part(READ.object(part, &path)?, &path, calls)?;
    }
    Ok(())
}

fn function_call(part: &Map<String, Value>) -> Option<(&'static str, &Value)> {
    ["functionCall", "function_call"]
        .into_iter()
        .find_map(|key| part.get(key).filter(|v| !v.is_null()).map(|v| (key, v)))
}

fn parse_part(part: &Map<String, Value>, path: &str, calls: &mut Vec<ToolCall>) -> Result<(), ProviderError> {
    match function_call(part) {
        Some((key, call)) => {
            let path = format!("{path}.{key}");
            parse_function_call(READ.object(call, &path)?, &path, calls)
        }
        None => Ok(()),
    }
}

fn parse_function_call(call: &Map<String, Value>, path: &str, calls: &mut Vec<ToolCall>) -> Result<(), ProviderError> {
    let name = READ.string(call, "name", path)?;
    let mut parsed = call_from_json(String::new(), name, call.get("args"));
    parsed.id = match READ.optional_string(call, "id", path)? {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => minted_id(calls.len(), &parsed),
    };
    calls.push(parsed);
    Ok(())
}

/// The id of the `position`-th call of a value, for a call Gemini sent without one.
fn minted_id(position: usize, call: &ToolCall) -> String {
    let mut hash = Sha256::new();
    hash.update(call.name.as_bytes());
    hash.update([0x1f]);
    hash.update(call.arguments.as_bytes());
    let digest = hash.finalize();
    format!("{MINTED_ID_PREFIX}{position}-{}", hex::encode(&digest[..4]))
}

/// The `functionResponse` part answering `step`, for the call named `tool_name`.
pub fn result(step: &Step, tool_name: &str) -> Value {
    let key = if step.is_error() { "error" } else { "output" };
    let mut response = Map::new();
    let id = step.call_id();
    if !id.starts_with(MINTED_ID_PREFIX) {
        response.insert("id".into(), Value::String(id.to_owned()));
    }
    response.insert("name".into(), Value::String(tool_name.to_owned()));
    response.insert("response".into(), json!({key: step.model_text()}));
    json!({"functionResponse": response})
}
