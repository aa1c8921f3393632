//! Provider manifests: one tool list, every provider's format.
//!
//! schemars emits JSON Schema 2020-12, and no LLM provider takes it as it is
//! (see the module docs of each dialect below for what each one refuses). Each
//! [`Dialect`] is a fixed sequence of transform passes over the tool's
//! schema; what a dialect cannot express is a [`ManifestError`] naming the
//! tool and the JSON path, raised when the manifest is built rather than by
//! the provider at request time. A tool whose input schema gate's validator
//! refuses (a `$ref` cycle that never reaches a property, say) is refused by
//! every dialect: no gate could check a call of it.
//!
//! Validation never uses these transformed schemas: gate validates every call
//! against the tool's full schema, so a pass may loosen a hint (a tuple
//! becoming a plain array for Gemini) without loosening what the tool accepts.

mod dialects;
mod import;
mod passes;
mod walk;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::ToolSpec;
use crate::provider::Provider;

pub use dialects::EFFECTS_META;
pub use import::{ImportError, import_each, import_tools};

/// A provider's tool format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// OpenAI Chat Completions `tools[]`, non-strict.
    OpenAi,
    /// OpenAI Chat Completions with `strict: true` (Structured Outputs).
    OpenAiStrict,
    /// OpenAI Responses API function tools: strict when the schema allows it,
    /// otherwise `strict: false`, as the API itself would fall back.
    OpenAiResponses,
    /// Anthropic Messages `tools[]`.
    Anthropic,
    /// Anthropic strict tool use.
    AnthropicStrict,
    /// Gemini `functionDeclarations[]` with `parameters` (the OpenAPI subset).
    Gemini,
    /// Gemini `functionDeclarations[]` with `parametersJsonSchema`.
    GeminiJsonSchema,
    /// MCP `Tool` objects, protocol revision 2026-07-28.
    Mcp,
    /// MCP `Tool` objects, protocol revision 2025-11-25.
    Mcp2025_11_25,
}

impl Dialect {
    /// Every dialect, in the order the CLI lists them.
    pub const ALL: [Dialect; 9] = [
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::AnthropicStrict,
        Dialect::Gemini,
        Dialect::GeminiJsonSchema,
        Dialect::Mcp,
        Dialect::Mcp2025_11_25,
    ];

    /// The CLI name (`openai-strict`, `mcp-2025-11-25`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Dialect::OpenAi => "openai",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Anthropic => "anthropic",
            Dialect::AnthropicStrict => "anthropic-strict",
            Dialect::Gemini => "gemini",
            Dialect::GeminiJsonSchema => "gemini-json",
            Dialect::Mcp => "mcp",
            Dialect::Mcp2025_11_25 => "mcp-2025-11-25",
        }
    }

    /// The model API this dialect's manifests are sent to, whose tool calls
    /// and tool results [`crate::provider`] parses and renders; `None` for MCP,
    /// which is a protocol between a client and a tool server, not a model
    /// API (its calls and results belong to the MCP server).
    pub const fn provider(self) -> Option<Provider> {
        match self {
            Dialect::OpenAi | Dialect::OpenAiStrict => Some(Provider::OpenAiChat),
            Dialect::OpenAiResponses => Some(Provider::OpenAiResponses),
            Dialect::Anthropic | Dialect::AnthropicStrict => Some(Provider::Anthropic),
            Dialect::Gemini | Dialect::GeminiJsonSchema => Some(Provider::Gemini),
            Dialect::Mcp | Dialect::Mcp2025_11_25 => None,
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Serialized as its [name](Dialect::name), as the CLI spells it.
impl serde::Serialize for Dialect {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Dialect {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A dialect name that is not one of [`Dialect::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown manifest format `{0}`; expected one of: openai, openai-strict, openai-responses, anthropic, anthropic-strict, gemini, gemini-json, mcp, mcp-2025-11-25"
)]
pub struct UnknownDialect(String);

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "mcp-2026-07-28" => Ok(Dialect::Mcp),
            _ => Dialect::ALL
                .into_iter()
                .find(|d| d.name() == s)
                .ok_or_else(|| UnknownDialect(s.to_owned())),
        }
    }
}

/// Something a dialect cannot express.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{dialect}: {} at {path}: {problem}", match .tool { Some(t) => format!("tool `{t}`"), None => "the toolbox".to_owned() })]
pub struct ManifestError {
    dialect: Dialect,
    tool: Option<String>,
    path: String,
    problem: String,
}

impl ManifestError {
    pub(crate) fn new(dialect: Dialect, tool: Option<&str>, path: &str, problem: impl Into<String>) -> Self {
        ManifestError {
            dialect,
            tool: tool.map(str::to_owned),
            path: path.to_owned(),
            problem: problem.into(),
        }
    }

    /// The dialect that was being built.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The tool whose schema could not be expressed; `None` for limits on the
    /// whole toolbox (Anthropic strict's per-request totals).
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    /// The JSON Pointer into the tool's input schema (`/properties/tags`);
    /// into its result schema, prefixed `outputSchema`.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// The manifest of `specs` in `dialect`: a JSON array in the given order.
pub fn render<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>, dialect: Dialect) -> Result<Value, ManifestError> {
    let specs: Vec<&ToolSpec> = specs.into_iter().collect();
    dialects::check_toolbox_limits(&specs, dialect)?;
    specs
        .iter()
        .map(|spec| tool_definition(spec, dialect))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// One tool's definition in `dialect`.
pub fn tool_definition(spec: &ToolSpec, dialect: Dialect) -> Result<Value, ManifestError> {
    dialects::definition(spec, dialect)
}

/// The schema of one tool's result in `dialect` (MCP's `outputSchema`), or
/// `None` when the dialect has no such field or the result is untyped: the
/// tool's return type has no schema, says no more than "any value" or "a
/// string", or (2025-11-25) is not an object. A server sends
/// `structuredContent` exactly when this is `Some`.
pub fn output_schema(spec: &ToolSpec, dialect: Dialect) -> Result<Option<Value>, ManifestError> {
    dialects::output_schema(spec, dialect).map_err(|p| {
        ManifestError::new(
            dialect,
            Some(spec.name()),
            &format!("outputSchema{}", p.path),
            p.message,
        )
    })
}

/// Just the transformed input schema of one tool in `dialect`.
pub fn parameters(spec: &ToolSpec, dialect: Dialect) -> Result<Value, ManifestError> {
    dialects::validatable(spec)
        .and_then(|()| dialects::schema(spec, dialect))
        .map_err(|p| ManifestError::new(dialect, Some(spec.name()), &p.path, p.message))
}
