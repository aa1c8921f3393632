//! MCP's shapes in and out of gate's runtime: a `tools/call` becomes a
//! [`ToolCall`], a [`Step`] becomes a `CallToolResult`, the toolbox becomes
//! `tools/list`.
//!
//! They are public so that a server that keeps its own rmcp handler (with
//! prompts, resources, or its own routing) can still send every tool call
//! through gate: parse with [`tool_call`] and [`CallMeta::read`], run
//! [`Task::handle`](toolgate_core::Task::handle), answer with
//! [`call_tool_result`].

use std::collections::HashSet;
use std::fmt;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, MetaObject, ProtocolVersion, RequestId, Tool,
};
use serde_json::{Map, Value};
use toolgate_core::manifest::{self, Dialect};
use toolgate_core::{Gate, ManifestError, Step, ToolCall, ToolSpec};

/// The `_meta` key of a `tools/call` that names the task the call belongs
/// to: any string; the same name resumes the same task, from the store, on
/// any connection and after a restart.
pub const META_TASK: &str = "gate/task";
/// The `_meta` key of a `tools/call` that names the user the call runs for
/// (whose repair-token window it spends), when the server accepts it
/// ([`MetaUser`](crate::MetaUser)).
pub const META_USER: &str = "gate/user";
/// The `_meta` key of a `tools/call` that names the intent the call serves
/// (`"pay INV-42"`): the call's intent key is minted from the task, this
/// label and the tool, so a regenerated call with other arguments is still
/// the same intent. Without it, the key derives from the key arguments.
pub const META_INTENT: &str = "gate/intent";
/// The `_meta` key of a result that says what gate decided: `return`,
/// `replay`, `reject`, `retry_with_correction` or `fail`.
pub const META_ACTION: &str = "gate/action";
/// The `_meta` key of a result whose call waits for a person's approval:
/// the approval request's id, as `gate approvals show ID` takes it.
pub const META_APPROVAL: &str = "gate/approval";

/// The protocol revision a `tools/list` answer is rendered for: 2026-07-28
/// and later get [`Dialect::Mcp`]; 2025-11-25 and the revisions before it,
/// which share its tool shape, get [`Dialect::Mcp2025_11_25`], as does a
/// request whose version is unknown.
pub fn dialect_for(version: Option<&ProtocolVersion>) -> Dialect {
    match version {
        Some(v) if v.as_str() >= ProtocolVersion::V_2026_07_28.as_str() => Dialect::Mcp,
        _ => Dialect::Mcp2025_11_25,
    }
}

/// The tools a task granted `granted` may call, as MCP `Tool` objects in
/// `dialect`: name, title, description, `inputSchema`, `outputSchema` for a
/// typed result, and annotations stated from the declared effects
/// (`read_only`, `destructive`, `idempotent`, `external`; a `writes` tool is
/// neither read-only, destructive nor idempotent). A tool whose scopes are
/// not all granted is not listed.
pub fn tools(gate: &Gate, granted: &[String], dialect: Dialect) -> Result<Vec<Tool>, ManifestError> {
    let may_call = |spec: &&ToolSpec| spec.scopes().iter().all(|s| granted.contains(s));
    let listed = manifest::render(gate.toolbox().specs().filter(may_call), dialect)?;
    let Value::Array(definitions) = listed else {
        return Ok(Vec::new());
    };
    // Every definition is an object with a name and an object schema, the
    // shape rmcp's `Tool` reads; one that did not fit would be a gate bug,
    // and is left out rather than failing the whole list.
    Ok(definitions
        .into_iter()
        .filter_map(|d| serde_json::from_value(d).ok())
        .collect())
}

/// A `tools/call` as gate's provider-neutral call. The arguments object is
/// taken as it came (absent arguments are `{}`); the request id becomes the
/// call id.
pub fn tool_call(id: &RequestId, params: CallToolRequestParams) -> ToolCall {
    let arguments = Value::Object(params.arguments.unwrap_or_default()).to_string();
    ToolCall::new(id.to_string(), params.name.into_owned(), arguments)
}

/// What gate reads from a `tools/call`'s `_meta`: [`META_TASK`],
/// [`META_USER`] and [`META_INTENT`]. Other keys are left alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallMeta {
    /// The task the call belongs to; `None`: the connection's (or
    /// session's) own task.
    pub task: Option<String>,
    /// The user the call runs for; `None`: the server's user.
    pub user: Option<String>,
    /// The intent the call serves; `None`: keys derive from the arguments.
    pub intent: Option<String>,
}

impl CallMeta {
    /// Reads the three keys from a request's `_meta` object. Each, when
    /// present, must be a non-empty string.
    pub fn read(meta: &JsonObject) -> Result<CallMeta, MetaError> {
        let read = |key: &'static str| match meta.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(MetaError { key }),
        };
        Ok(CallMeta {
            task: read(META_TASK)?,
            user: read(META_USER)?,
            intent: read(META_INTENT)?,
        })
    }
}

/// A gate key of a request's `_meta` that is not a non-empty string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaError {
    key: &'static str,
}

impl MetaError {
    /// The key: [`META_TASK`], [`META_USER`] or [`META_INTENT`].
    pub fn key(&self) -> &str {
        self.key
    }
}

impl fmt::Display for MetaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`_meta.{}` must be a non-empty string; the call was not run",
            self.key
        )
    }
}

impl std::error::Error for MetaError {}

/// A step as MCP's `CallToolResult`.
///
/// The text content is exactly [`Step::model_text`]: sanitized, and for an
/// `external` tool marked as untrusted data. A rejection, a correction and a
/// failure are `isError: true` with gate's text, never a protocol error, so
/// the model reads what to change; so is a tool's definitive error (a card
/// declined). A call that waits for a person's approval is `isError: true`
/// too: it has no result yet, and a client checks a typed tool's successful
/// result against its output schema. A successful result of a tool whose result is typed in
/// `dialect` ([`manifest::output_schema`]) also carries `structuredContent`:
/// the result's value with every string passed through the gate's result
/// sanitizer, so it holds nothing the text does not. `_meta`
/// [`META_ACTION`] says what gate decided.
pub fn call_tool_result(step: &Step, gate: &Gate, dialect: Dialect) -> CallToolResult {
    result_of(step, gate, |tool| typed_in(gate, tool, dialect))
}

/// [`call_tool_result`], told by `typed` whether a tool's result is typed.
pub(crate) fn result_of(step: &Step, gate: &Gate, typed: impl Fn(&str) -> bool) -> CallToolResult {
    let content = vec![ContentBlock::text(step.model_text())];
    let mut result = if step.is_error() || matches!(step, Step::AwaitingApproval(_)) {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if let Step::Return(out) = step
        && !out.is_error
        && typed(&out.tool)
    {
        let mut value = out.value.clone();
        if let Some(sanitizer) = gate.result_sanitizer() {
            sanitize_strings(&mut value, &|s| sanitizer.sanitize(s).text);
        }
        result.structured_content = Some(value);
    }
    let mut meta = Map::new();
    meta.insert(META_ACTION.to_owned(), Value::from(step.action().as_str()));
    result.meta = Some(MetaObject(meta));
    result
}

/// The tools whose results are typed, in each MCP revision gate speaks,
/// worked out once per server: asking per call renders the tool's output
/// schema (a clone of it and the dialect's passes) on every successful call.
#[derive(Clone, Debug, Default)]
pub(crate) struct TypedResults {
    /// In [`Dialect::Mcp`].
    current: HashSet<String>,
    /// In [`Dialect::Mcp2025_11_25`].
    v2025_11_25: HashSet<String>,
}

impl TypedResults {
    /// The typed tools of `gate`'s toolbox.
    pub(crate) fn of(gate: &Gate) -> Self {
        let typed = |dialect| {
            gate.toolbox()
                .iter()
                .map(|tool| tool.spec().name())
                .filter(|name| typed_in(gate, name, dialect))
                .map(str::to_owned)
                .collect()
        };
        TypedResults {
            current: typed(Dialect::Mcp),
            v2025_11_25: typed(Dialect::Mcp2025_11_25),
        }
    }

    /// Whether `tool`'s result is typed in `dialect`.
    pub(crate) fn contains(&self, dialect: Dialect, tool: &str) -> bool {
        match dialect {
            Dialect::Mcp => self.current.contains(tool),
            Dialect::Mcp2025_11_25 => self.v2025_11_25.contains(tool),
            _ => false,
        }
    }
}

fn typed_in(gate: &Gate, tool: &str, dialect: Dialect) -> bool {
    gate.toolbox()
        .get(tool)
        .is_some_and(|t| matches!(manifest::output_schema(t.spec(), dialect), Ok(Some(_))))
}

fn sanitize_strings(value: &mut Value, sanitize: &dyn Fn(&str) -> String) {
    match value {
        Value::String(s) => {
            let clean = sanitize(s);
            if clean != *s {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| sanitize_strings(v, sanitize)),
        Value::Object(map) => map.values_mut().for_each(|v| sanitize_strings(v, sanitize)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_protocol_revision_picks_the_dialect() {
        assert_eq!(dialect_for(Some(&ProtocolVersion::V_2026_07_28)), Dialect::Mcp);
        assert_eq!(
            dialect_for(Some(&ProtocolVersion::V_2025_11_25)),
            Dialect::Mcp2025_11_25
        );
        assert_eq!(
            dialect_for(Some(&ProtocolVersion::V_2025_06_18)),
            Dialect::Mcp2025_11_25
        );
        assert_eq!(dialect_for(None), Dialect::Mcp2025_11_25);
    }

    #[test]
    fn arguments_are_taken_as_they_came() {
        let params = CallToolRequestParams::new("get_invoice").with_arguments(
            json!({"invoice_id": 41, "extra": [1, "a"]})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let call = tool_call(&RequestId::Number(7), params);
        assert_eq!(call.id, "7");
        assert_eq!(call.name, "get_invoice");
        assert_eq!(
            serde_json::from_str::<Value>(&call.arguments).ok(),
            Some(json!({"invoice_id": 41, "extra": [1, "a"]}))
        );
        let bare = tool_call(
            &RequestId::String("r1".into()),
            CallToolRequestParams::new("list_customers"),
        );
        assert_eq!((bare.id.as_str(), bare.arguments.as_str()), ("r1", "{}"));
    }

    #[test]
    fn meta_keys_must_be_non_empty_strings() {
        let meta = |v: Value| v.as_object().cloned().unwrap_or_default();
        let read = CallMeta::read(&meta(
            json!({"gate/task": "t-1", "gate/intent": "pay INV-42", "other": 3}),
        ));
        assert_eq!(
            read,
            Ok(CallMeta {
                task: Some("t-1".into()),
                user: None,
                intent: Some("pay INV-42".into())
            })
        );
        let bad = CallMeta::read(&meta(json!({"gate/user": 42}))).err();
        assert_eq!(bad.as_ref().map(MetaError::key), Some(META_USER));
        assert!(bad.is_some_and(|e| e.to_string().contains("`_meta.gate/user` must be a non-empty string")));
        assert!(CallMeta::read(&meta(json!({"gate/task": ""}))).is_err());
    }
}
