//! Anthropic Messages: `tool_use` content blocks in, `tool_result` blocks
//! with `is_error` out.
//!
//! [`parse_calls`] takes a message or response (its `content`), a list of
//! content blocks or one block. Only `tool_use` blocks are the program's
//! calls; text, thinking and the blocks of Anthropic's server-side tools
//! (`server_tool_use`, `web_search_tool_result`, …) are skipped. `input` is a
//! JSON object and becomes the call's argument text once, compactly
//! ([`ToolCall::from_json`]).
//!
//! The results of one assistant turn go back together, as the blocks of one
//! `user` message ([`super::reply`]).

use serde_json::{Value, json};

use super::{ProviderError, Reader, call_from_json};
use crate::runtime::{Step, ToolCall};
use toolgate_model::Provider;

const READ: Reader = Reader {
    provider: Provider::Anthropic,
};

/// Every `tool_use` block in a message, response, block list or single block.
pub fn parse_calls(value: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    if let Value::Array(blocks) = value {
        return parse_blocks(blocks, "$");
    }
    let object = READ.object(value, "$")?;
    match object.get("content") {
        // A message whose content is plain text holds no call.
        Some(Value::String(_)) => return Ok(Vec::new()),
        Some(content) => return parse_blocks(READ.array(content, "$.content")?, "$.content"),
        None => {}
    }
    if object.contains_key("type") {
        return Ok(parse_block(value, "$")?.into_iter().collect());
    }
    Err(ProviderError::shape(
        Provider::Anthropic,
        "$",
        "a message (`content`), a list of content blocks or a content block (`type`)",
    ))
}

fn parse_blocks(blocks: &[Value], path: &str) -> Result<Vec<ToolCall>, ProviderError> {
    let mut calls = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        calls.extend(parse_block(block, &format!("{path}[{i}]"))?);
    }
    Ok(calls)
}

fn parse_block(block: &Value, path: &str) -> Result<Option<ToolCall>, ProviderError> {
    let block = READ.object(block, path)?;
    if READ.string(block, "type", path)? != "tool_use" {
        return Ok(None);
    }
    let id = READ.string(block, "id", path)?;
    let name = READ.string(block, "name", path)?;
    Ok(Some(call_from_json(id, name, block.get("input"))))
}

/// The `tool_result` block answering `step`.
pub fn result(step: &Step) -> Value {
    json!({
        "type": "tool_result",
        "tool_use_id": step.call_id(),
        "content": step.model_text(),
        "is_error": step.is_error(),
    })
}
