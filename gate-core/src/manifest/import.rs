//! Reading tool lists written for any provider back into gate's model.
//!
//! Tools arrive from elsewhere: an MCP server's `tools/list`, an OpenAI
//! request body, a config file. Importing them as dynamic tools lets gate
//! validate calls to them, convert them between providers and apply the same
//! policy. Effects come from gate's own effect names in `_meta`
//! ([`EFFECTS_META`], `gate/effects`) when a gate wrote the list: exactly,
//! `keyed` and `approval` included. Otherwise they come from MCP annotations
//! when present, and else the conservative MCP defaults apply (not
//! read-only, destructive, not idempotent, open world), so gate never
//! retries a tool it knows nothing about.

use serde_json::{Map, Value, json};

use super::EFFECTS_META;
use super::walk::{Problem, each_object};
use crate::{DynamicTool, Effects, ToolSpec};

/// Why a tool list could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tool #{index}{}: {problem}", .name.as_ref().map(|n| format!(" (`{n}`)")).unwrap_or_default())]
pub struct ImportError {
    index: usize,
    name: Option<String>,
    problem: String,
}

impl ImportError {
    fn new(index: usize, name: Option<&str>, problem: impl Into<String>) -> Self {
        ImportError {
            index,
            name: name.map(str::to_owned),
            problem: problem.into(),
        }
    }
}

/// Reads a tool list in any supported format: a JSON array of OpenAI (Chat or
/// Responses), Anthropic, Gemini or MCP tool definitions, or an object holding
/// one (`{"tools": [...]}`, an MCP `tools/list` response, Gemini's
/// `{"functionDeclarations": [...]}`). Each tool becomes a declared-only
/// [`DynamicTool`].
///
/// The first tool that cannot be read fails the whole list; [`import_each`]
/// reads the others too.
pub fn import_tools(document: &Value) -> Result<Vec<DynamicTool>, ImportError> {
    import_each(document)?.into_iter().collect()
}

/// Reads a tool list as [`import_tools`] does, one result per tool, so a
/// caller can keep the tools that could be read and report the others. The
/// outer error says the document is no tool list at all.
pub fn import_each(document: &Value) -> Result<Vec<Result<DynamicTool, ImportError>>, ImportError> {
    let list = tool_list(document).ok_or_else(|| {
        ImportError::new(
            0,
            None,
            "expected a JSON array of tools, or an object with `tools` or `functionDeclarations`",
        )
    })?;
    Ok(list.iter().enumerate().map(|(i, tool)| import_one(i, tool)).collect())
}

fn tool_list(document: &Value) -> Option<Vec<Value>> {
    match document {
        Value::Array(items) => {
            // Gemini requests nest declarations: [{"functionDeclarations": [...]}].
            if items.iter().all(|i| i.get("functionDeclarations").is_some()) && !items.is_empty() {
                let mut all = Vec::new();
                for item in items {
                    all.extend(item.get("functionDeclarations")?.as_array()?.iter().cloned());
                }
                Some(all)
            } else {
                Some(items.clone())
            }
        }
        Value::Object(map) => ["tools", "functionDeclarations", "function_declarations"]
            .iter()
            .find_map(|k| map.get(*k))
            .or_else(|| map.get("result").and_then(|r| r.get("tools")))
            .and_then(tool_list),
        _ => None,
    }
}

fn import_one(index: usize, tool: &Value) -> Result<DynamicTool, ImportError> {
    let body = match tool.get("function") {
        Some(f) if tool.get("type").and_then(Value::as_str) == Some("function") => f,
        _ => tool,
    };
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ImportError::new(index, None, "missing `name`"))?;
    let fail = |problem: String| ImportError::new(index, Some(name), problem);
    let description = body.get("description").and_then(Value::as_str).unwrap_or_default();
    let schema = if let Some(s) = body
        .get("inputSchema")
        .or_else(|| body.get("input_schema"))
        .or_else(|| body.get("parametersJsonSchema"))
    {
        s.clone()
    } else if let Some(p) = body.get("parameters").filter(|p| !p.is_null()) {
        if is_gemini_schema(p) {
            from_gemini(p).map_err(|p| fail(format!("at {}: {}", p.path, p.message)))?
        } else {
            p.clone()
        }
    } else {
        json!({"type": "object", "properties": {}})
    };
    let annotations = body.get("annotations");
    let hint = |key: &str, default: bool| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
            .unwrap_or(default)
    };
    let effects = match body.get("_meta").and_then(|m| m.get(EFFECTS_META)) {
        // gate's own names, when a gate wrote the list: exact.
        Some(names) => gate_effects(names).map_err(|p| fail(format!("`_meta.{EFFECTS_META}`: {p}")))?,
        None => hinted_effects(&hint),
    };
    let mut spec = ToolSpec::new(name, description, schema, effects).map_err(|e| fail(e.to_string()))?;
    let title = body
        .get("title")
        .or_else(|| annotations.and_then(|a| a.get("title")))
        .and_then(Value::as_str);
    if let Some(title) = title {
        spec = spec.with_title(title);
    }
    Ok(DynamicTool::new(
        spec.with_origin(format!("imported tool #{index} `{name}`")),
    ))
}

/// The effects MCP's hints say (their defaults where a hint is missing:
/// not read-only, destructive, not idempotent, open world).
fn hinted_effects(hint: &dyn Fn(&str, bool) -> bool) -> Effects {
    let mut effects = Effects::new();
    if hint("readOnlyHint", false) {
        effects = effects.read_only();
    } else {
        if hint("destructiveHint", true) {
            effects = effects.destructive();
        }
        if hint("idempotentHint", false) {
            effects = effects.idempotent();
        } else if !effects.is_destructive() {
            // Neither read-only, destructive nor idempotent: an additive write.
            effects = effects.writes();
        }
    }
    if hint("openWorldHint", true) {
        effects = effects.external();
    }
    effects
}

/// The effects a list of gate's effect names declares.
fn gate_effects(names: &Value) -> Result<Effects, String> {
    let names = names
        .as_array()
        .ok_or("expected an array of effect names")?
        .iter()
        .map(|n| n.as_str().ok_or("expected an array of effect names"))
        .collect::<Result<Vec<&str>, _>>()?;
    Effects::from_names(names)
}

/// Gemini's `Schema` writes types in upper case.
fn is_gemini_schema(schema: &Value) -> bool {
    schema
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.chars().all(|c| c.is_ascii_uppercase()))
}

/// Gemini `parameters` back to JSON Schema: lower-case types, `nullable` as a
/// type union, enum strings of non-string types back to their values.
fn from_gemini(schema: &Value) -> Result<Value, Problem> {
    let mut s = schema.clone();
    each_object(&mut s, &mut |node: &mut Map<String, Value>, _| {
        node.shift_remove("propertyOrdering");
        if let Some(Value::String(t)) = node.get_mut("type") {
            *t = t.to_ascii_lowercase();
        }
        let kind = node.get("type").and_then(Value::as_str).map(str::to_owned);
        if node.get("format").and_then(Value::as_str) == Some("enum") {
            node.shift_remove("format");
            if let (Some(Value::Array(values)), Some(k)) = (node.get_mut("enum"), kind.as_deref())
                && k != "string"
            {
                for v in values.iter_mut() {
                    if let Some(parsed) = v.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok()) {
                        *v = parsed;
                    }
                }
            }
        }
        if node.shift_remove("nullable") == Some(Value::Bool(true)) {
            match kind {
                Some(k) => {
                    node.insert("type".into(), json!([k, "null"]));
                    if let Some(Value::Array(values)) = node.get_mut("enum") {
                        values.push(Value::Null);
                    }
                }
                None => {
                    let inner = std::mem::take(node);
                    node.insert("anyOf".into(), json!([Value::Object(inner), {"type": "null"}]));
                }
            }
        }
        Ok(())
    })?;
    Ok(s)
}
