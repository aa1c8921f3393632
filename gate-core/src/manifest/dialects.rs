//! Each provider's schema rules as a sequence of passes, and its tool envelope.
//!
//! The rules follow the providers' documentation and the errors their APIs
//! report; docs/manifests.md summarises them, and
//! `tests/manifests.rs` checks every dialect's output against them (its
//! `every_generated_schema_follows_its_dialects_rules`). The order of passes
//! matters and is fixed: inline references first (so later passes see every
//! subschema), then normalise shapes, then refuse what is left that the
//! dialect cannot take.

use serde_json::{Map, Value, json};
use toolgate_validate::{SchemaError, Validator};

use super::passes::*;
use super::walk::{Problem, Recursion, inline_refs};
use super::{Dialect, ManifestError};
use crate::ToolSpec;

/// Keywords OpenAI strict cannot take, moved to descriptions.
const OPENAI_STRICT_DESCRIBED: &[&str] = &[
    "default",
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];
/// Keywords Anthropic strict cannot take, moved to descriptions (`minItems`
/// only above 1).
const ANTHROPIC_STRICT_DESCRIBED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "minItems>1",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];
const GEMINI_DESCRIBED: &[&str] = &[
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];
const GEMINI_JSON_DESCRIBED: &[&str] = &[
    "default",
    "pattern",
    "minLength",
    "maxLength",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// Anthropic's per-request totals for strict tools.
const ANTHROPIC_STRICT_MAX_TOOLS: usize = 20;
const ANTHROPIC_STRICT_MAX_OPTIONAL: usize = 24;
const ANTHROPIC_STRICT_MAX_UNIONS: usize = 16;

/// The tool's input schema transformed for `dialect`.
pub(crate) fn schema(spec: &ToolSpec, dialect: Dialect) -> Result<Value, Problem> {
    let mut s = spec.input_schema().clone();
    strip_document_keywords(&mut s);
    match dialect {
        Dialect::OpenAi => {
            common(&mut s, Recursion::Keep, STANDARD_FORMATS)?;
            give_tuples_items(&mut s, false)?;
        }
        Dialect::OpenAiStrict => openai_strict(&mut s)?,
        Dialect::OpenAiResponses => responses_schema(&mut s)?,
        Dialect::Anthropic => {
            common(&mut s, Recursion::Keep, STANDARD_FORMATS)?;
            give_tuples_items(&mut s, false)?;
            refuse_root_combinators(&s, "Anthropic tools")?;
        }
        Dialect::AnthropicStrict => {
            let name = "Anthropic strict tool use";
            common(&mut s, Recursion::Refuse, ANTHROPIC_STRICT_FORMATS)?;
            refuse_keywords(&mut s, UNSUPPORTED_IN_STRICT, name)?;
            refuse_untyped(&mut s, name)?;
            close_objects(&mut s, name)?;
            move_keywords_to_description(&mut s, ANTHROPIC_STRICT_DESCRIBED)?;
            refuse_root_combinators(&s, name)?;
        }
        Dialect::Gemini => {
            let name = "Gemini `parameters`";
            common(&mut s, Recursion::Refuse, GEMINI_FORMATS)?;
            refuse_keywords(&mut s, &[UNSUPPORTED_IN_STRICT_AND_GEMINI], name)?;
            refuse_untyped(&mut s, name)?;
            give_tuples_items(&mut s, true)?;
            drop_closed_marker(&mut s, name)?;
            type_arrays_to_any_of(&mut s)?;
            any_of_null_to_nullable(&mut s)?;
            const_to_enum(&mut s)?;
            any_of_values_to_enum(&mut s)?;
            isolate_any_of(&mut s)?;
            stringify_enums(&mut s)?;
            move_keywords_to_description(&mut s, GEMINI_DESCRIBED)?;
            check_gemini_property_names(&mut s)?;
            add_property_ordering(&mut s)?;
            uppercase_types(&mut s)?;
        }
        Dialect::GeminiJsonSchema => {
            let name = "Gemini `parametersJsonSchema`";
            common(&mut s, Recursion::Keep, STANDARD_FORMATS)?;
            refuse_keywords(&mut s, &[UNSUPPORTED_IN_STRICT_AND_GEMINI], name)?;
            give_tuples_items(&mut s, false)?;
            type_arrays_to_any_of(&mut s)?;
            const_to_enum(&mut s)?;
            refuse_non_scalar_enums(&mut s, name)?;
            move_keywords_to_description(&mut s, GEMINI_JSON_DESCRIBED)?;
            refuse_required_recursion(&mut s)?;
            isolate_refs(&mut s)?;
        }
        Dialect::Mcp | Dialect::Mcp2025_11_25 => mcp(&mut s)?,
    }
    Ok(s)
}

/// MCP takes JSON Schema 2020-12 as it is; what its clients cannot take is
/// references (many inline nothing) and arrays without `items` (they forward
/// schemas to providers that reject them).
fn mcp(s: &mut Value) -> Result<(), Problem> {
    inline_refs(s, Recursion::Keep)?;
    boolean_schemas_to_objects(s)?;
    restrict_formats(s, STANDARD_FORMATS)?;
    give_tuples_items(s, false)
}

/// The tool's result schema for an MCP dialect, when its result is typed:
/// the return type has a schema that says more than "any value" or "a
/// string" (a string result is text already). Protocol revision 2025-11-25
/// takes only an object at the root; 2026-07-28 takes any schema. Other
/// dialects have none.
pub(crate) fn output_schema(spec: &ToolSpec, dialect: Dialect) -> Result<Option<Value>, Problem> {
    let Some(schema) = spec.output_schema() else {
        return Ok(None);
    };
    if !matches!(dialect, Dialect::Mcp | Dialect::Mcp2025_11_25) {
        return Ok(None);
    }
    let mut s = schema.clone();
    strip_document_keywords(&mut s);
    mcp(&mut s)?;
    let root_type = s.get("type").and_then(Value::as_str);
    let says_something = s.as_object().is_some_and(|map| map.keys().any(|k| k != "description"));
    let typed = match dialect {
        Dialect::Mcp2025_11_25 => root_type == Some("object"),
        _ => says_something && root_type != Some("string"),
    };
    Ok(typed.then_some(s))
}

/// The passes every JSON-Schema-like dialect starts with. Recursive
/// references that stay get no siblings: OpenAI and Anthropic reject a `$ref`
/// beside other keywords.
fn common(s: &mut Value, recursion: Recursion, formats: &[&str]) -> Result<(), Problem> {
    inline_refs(s, recursion)?;
    isolate_refs(s)?;
    boolean_schemas_to_objects(s)?;
    restrict_formats(s, formats)?;
    one_of_to_any_of(s)?;
    flatten_single_all_of(s)
}

fn openai_strict(s: &mut Value) -> Result<(), Problem> {
    let name = "OpenAI strict mode";
    common(s, Recursion::Keep, OPENAI_STRICT_FORMATS)?;
    refuse_keywords(s, UNSUPPORTED_IN_STRICT, name)?;
    refuse_untyped(s, name)?;
    close_objects(s, name)?;
    move_keywords_to_description(s, OPENAI_STRICT_DESCRIBED)?;
    require_all_widen_optional(s)?;
    refuse_root_combinators(s, name)?;
    check_openai_strict_limits(s)
}

/// Responses builds its schema in `definition`, choosing between strict and
/// non-strict; asking for "the" Responses schema means the one it would send.
fn responses_schema(s: &mut Value) -> Result<(), Problem> {
    let mut strict = s.clone();
    match openai_strict(&mut strict) {
        Ok(()) => *s = strict,
        Err(_) => {
            common(s, Recursion::Keep, STANDARD_FORMATS)?;
            give_tuples_items(s, false)?;
        }
    }
    Ok(())
}

/// Refuses a tool whose input schema gate's own validator refuses (a `$ref`
/// cycle that never reaches a property, an unsupported keyword). The gate
/// builder refuses such a tool, so a manifest offering it would invite calls
/// nothing can check; asking the validator keeps one rule for both instead
/// of a second, drifting copy per dialect.
pub(crate) fn validatable(spec: &ToolSpec) -> Result<(), Problem> {
    let Err(e) = Validator::new(spec.input_schema()) else {
        return Ok(());
    };
    let path = match &e {
        SchemaError::Invalid { path, .. }
        | SchemaError::UnresolvedRef { path, .. }
        | SchemaError::Unsupported { path, .. }
        | SchemaError::Pattern { path, .. }
        | SchemaError::RefCycle { path } => path.clone(),
    };
    Err(Problem::at(
        &path,
        format!("gate's validator refuses the input schema ({e}), so no call of this tool could be checked"),
    ))
}

fn problem(spec: &ToolSpec, dialect: Dialect) -> impl Fn(Problem) -> ManifestError + '_ {
    move |p| ManifestError::new(dialect, Some(spec.name()), &p.path, p.message)
}

/// One tool's definition, wrapped in the provider's envelope.
pub(crate) fn definition(spec: &ToolSpec, dialect: Dialect) -> Result<Value, ManifestError> {
    validatable(spec).map_err(problem(spec, dialect))?;
    let mut def = Map::new();
    let parameters = || schema(spec, dialect).map_err(problem(spec, dialect));
    match dialect {
        Dialect::OpenAi | Dialect::OpenAiStrict => {
            let mut function = Map::new();
            function.insert("name".into(), json!(spec.name()));
            function.insert("description".into(), json!(spec.description()));
            function.insert("parameters".into(), parameters()?);
            if dialect == Dialect::OpenAiStrict {
                function.insert("strict".into(), json!(true));
            }
            def.insert("type".into(), json!("function"));
            def.insert("function".into(), Value::Object(function));
        }
        Dialect::OpenAiResponses => {
            let mut strict_schema = spec.input_schema().clone();
            strip_document_keywords(&mut strict_schema);
            let strict = openai_strict(&mut strict_schema).is_ok();
            def.insert("type".into(), json!("function"));
            def.insert("name".into(), json!(spec.name()));
            def.insert("description".into(), json!(spec.description()));
            def.insert("parameters".into(), if strict { strict_schema } else { parameters()? });
            def.insert("strict".into(), json!(strict));
        }
        Dialect::Anthropic | Dialect::AnthropicStrict => {
            def.insert("name".into(), json!(spec.name()));
            def.insert("description".into(), json!(spec.description()));
            def.insert("input_schema".into(), parameters()?);
            if dialect == Dialect::AnthropicStrict {
                def.insert("strict".into(), json!(true));
            }
        }
        Dialect::Gemini | Dialect::GeminiJsonSchema => {
            def.insert("name".into(), json!(spec.name()));
            def.insert("description".into(), json!(spec.description()));
            let schema = parameters()?;
            let has_properties = schema
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty());
            // Gemini refuses an OBJECT without properties; a tool without
            // arguments simply has no parameters.
            if has_properties {
                let key = if dialect == Dialect::Gemini {
                    "parameters"
                } else {
                    "parametersJsonSchema"
                };
                def.insert(key.into(), schema);
            }
        }
        Dialect::Mcp | Dialect::Mcp2025_11_25 => {
            def.insert("name".into(), json!(spec.name()));
            if let Some(title) = spec.title() {
                def.insert("title".into(), json!(title));
            }
            def.insert("description".into(), json!(spec.description()));
            def.insert("inputSchema".into(), parameters()?);
            if let Some(output) = output_schema(spec, dialect).map_err(problem(spec, dialect))? {
                def.insert("outputSchema".into(), output);
            }
            def.insert("annotations".into(), mcp_annotations(spec));
            def.insert("_meta".into(), json!({ EFFECTS_META: spec.effects().names() }));
        }
    }
    Ok(Value::Object(def))
}

/// The key of an MCP tool's `_meta` that carries gate's own effect names
/// ([`Effects::names`](crate::Effects::names)): MCP's hints cannot say
/// `keyed` or `approval`, and a gate that imports the list
/// ([`import_tools`](super::import_tools)) reads them back exactly.
pub const EFFECTS_META: &str = "gate/effects";

/// MCP's hints, stated explicitly: their defaults (destructive, open world)
/// are the opposite of many tools, so leaving one out would claim too much.
fn mcp_annotations(spec: &ToolSpec) -> Value {
    let e = spec.effects();
    let mut a = Map::new();
    if let Some(title) = spec.title() {
        a.insert("title".into(), json!(title));
    }
    a.insert("readOnlyHint".into(), json!(e.is_read_only()));
    a.insert("destructiveHint".into(), json!(e.is_destructive()));
    a.insert("idempotentHint".into(), json!(e.is_idempotent()));
    a.insert("openWorldHint".into(), json!(e.is_external()));
    Value::Object(a)
}

/// Limits that apply to a whole request rather than one tool.
pub(crate) fn check_toolbox_limits(specs: &[&ToolSpec], dialect: Dialect) -> Result<(), ManifestError> {
    if dialect != Dialect::AnthropicStrict {
        return Ok(());
    }
    let over = |what: String| Err(ManifestError::new(dialect, None, "/", what));
    if specs.len() > ANTHROPIC_STRICT_MAX_TOOLS {
        return over(format!(
            "{} strict tools exceed Anthropic's limit of {ANTHROPIC_STRICT_MAX_TOOLS} per request",
            specs.len()
        ));
    }
    let (mut optional, mut unions) = (0, 0);
    for spec in specs {
        count_optional_and_unions(spec.input_schema(), &mut optional, &mut unions);
    }
    if optional > ANTHROPIC_STRICT_MAX_OPTIONAL {
        return over(format!(
            "{optional} optional parameters exceed Anthropic strict's limit of {ANTHROPIC_STRICT_MAX_OPTIONAL} per request; split the toolbox or make parameters required"
        ));
    }
    if unions > ANTHROPIC_STRICT_MAX_UNIONS {
        return over(format!(
            "{unions} union-typed parameters exceed Anthropic strict's limit of {ANTHROPIC_STRICT_MAX_UNIONS} per request"
        ));
    }
    Ok(())
}

fn count_optional_and_unions(node: &Value, optional: &mut usize, unions: &mut usize) {
    match node {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for (name, prop) in properties {
                    if !required.contains(&name.as_str()) {
                        *optional += 1;
                    }
                    if prop.get("anyOf").is_some()
                        || prop.get("oneOf").is_some()
                        || prop.get("type").is_some_and(Value::is_array)
                    {
                        *unions += 1;
                    }
                }
            }
            for (key, value) in map {
                if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    count_optional_and_unions(value, optional, unions);
                }
            }
        }
        Value::Array(list) => list.iter().for_each(|v| count_optional_and_unions(v, optional, unions)),
        _ => {}
    }
}
