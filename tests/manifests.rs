//! Manifests of the example catalog in every dialect: compared with the
//! expected files under `tests/manifests/`, checked against each provider's
//! rules by walkers written from the provider documentation (not from the
//! transform code), and, for MCP, validated against the official schemas.
//!
//! `GATE_BLESS=1 cargo test --test manifests` rewrites the expected files;
//! review the diff before committing it.

use std::path::PathBuf;

use serde_json::{Map, Value, json};
use toolgate::manifest::tool_definition;
use toolgate::{Dialect, ToolSpec};
use toolgate_catalog::toolbox as catalog;

fn expected_dir(dialect: Dialect) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/manifests")
        .join(dialect.name())
}

fn render(spec: &ToolSpec, dialect: Dialect) -> (String, &'static str) {
    match tool_definition(spec, dialect) {
        Ok(def) => (serde_json::to_string_pretty(&def).unwrap() + "\n", "json"),
        Err(e) => (format!("{e}\n"), "error"),
    }
}

#[test]
fn every_tool_matches_its_expected_manifest_in_every_dialect() {
    let bless = std::env::var_os("GATE_BLESS").is_some();
    let mut mismatches = Vec::new();
    for dialect in Dialect::ALL {
        let dir = expected_dir(dialect);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
        }
        for spec in catalog().specs() {
            let (actual, ext) = render(spec, dialect);
            let path = dir.join(format!("{}.{ext}", spec.name()));
            if bless {
                std::fs::write(&path, &actual).unwrap();
                let other = dir.join(format!(
                    "{}.{}",
                    spec.name(),
                    if ext == "json" { "error" } else { "json" }
                ));
                let _ = std::fs::remove_file(other);
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(expected) if expected == actual => {}
                Ok(_) => mismatches.push(format!("{} differs from the generated manifest", path.display())),
                Err(_) => mismatches.push(format!("{} is missing (GATE_BLESS=1 writes it)", path.display())),
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// The catalog's shapes that each dialect must refuse, with the path it names.
#[test]
fn unsupported_shapes_are_refused_with_tool_and_path() {
    let cases = [
        (
            Dialect::OpenAiStrict,
            "set_attributes",
            "/properties/attributes",
            "HashMap",
        ),
        (Dialect::OpenAiStrict, "move_pallet", "/properties/position", "tuples"),
        (
            Dialect::OpenAiStrict,
            "store_document",
            "/properties/document",
            "serde_json::Value",
        ),
        (
            Dialect::AnthropicStrict,
            "import_categories",
            "/properties/root",
            "recursive",
        ),
        (
            Dialect::AnthropicStrict,
            "set_attributes",
            "/properties/attributes",
            "HashMap",
        ),
        (Dialect::Gemini, "import_categories", "/properties/root", "recursive"),
        (
            Dialect::Gemini,
            "store_document",
            "/properties/document",
            "serde_json::Value",
        ),
        (
            Dialect::GeminiJsonSchema,
            "import_categories",
            "/properties/root",
            "Option",
        ),
    ];
    let tools = catalog();
    for (dialect, tool, path, words) in cases {
        let err = tool_definition(tools.get(tool).unwrap().spec(), dialect).unwrap_err();
        assert_eq!(err.tool(), Some(tool));
        assert_eq!(err.path(), path, "{err}");
        assert!(err.to_string().contains(words), "{err}");
        assert!(err.to_string().contains(&format!("`{tool}`")), "{err}");
    }
}

/// Every subschema of a definition's schema, with its path.
fn subschemas<'a>(node: &'a Value, path: String, out: &mut Vec<(String, &'a Map<String, Value>)>) {
    let Value::Object(map) = node else { return };
    out.push((path.clone(), map));
    for (key, child) in map {
        match key.as_str() {
            "properties" | "$defs" | "patternProperties" => {
                for (name, sub) in child.as_object().into_iter().flatten() {
                    subschemas(sub, format!("{path}/{key}/{name}"), out);
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                for (i, sub) in child.as_array().into_iter().flatten().enumerate() {
                    subschemas(sub, format!("{path}/{key}/{i}"), out);
                }
            }
            "items" | "additionalProperties" | "not" => subschemas(child, format!("{path}/{key}"), out),
            _ => {}
        }
    }
}

fn all_nodes(schema: &Value) -> Vec<(String, &Map<String, Value>)> {
    let mut out = Vec::new();
    subschemas(schema, String::new(), &mut out);
    out
}

fn is_object(node: &Map<String, Value>) -> bool {
    node.get("type") == Some(&json!("object")) || node.contains_key("properties")
}

fn keys_within(node: &Map<String, Value>, allowed: &[&str], path: &str, dialect: Dialect) {
    for key in node.keys() {
        assert!(
            allowed.contains(&key.as_str()),
            "{dialect}: keyword `{key}` at {path} is outside the supported list"
        );
    }
}

const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uuid",
    "regex",
];

/// Rules every dialect shares: an object at the root, no `$schema`, only
/// standard formats (and Gemini's `enum`), and `items` on every array.
fn common_rules(schema: &Value, dialect: Dialect) {
    assert_eq!(
        schema["type"],
        json!(if dialect == Dialect::Gemini { "OBJECT" } else { "object" })
    );
    for (path, node) in all_nodes(schema) {
        assert!(!node.contains_key("$schema"), "{dialect}: $schema at {path}");
        if let Some(format) = node.get("format").and_then(Value::as_str) {
            assert!(
                STANDARD_FORMATS.contains(&format) || (dialect == Dialect::Gemini && format == "enum"),
                "{dialect}: non-standard format `{format}` at {path}"
            );
        }
        if node.get("type") == Some(&json!("array")) || node.get("type") == Some(&json!("ARRAY")) {
            assert!(node.contains_key("items"), "{dialect}: array without items at {path}");
        }
    }
}

fn openai_strict_rules(schema: &Value) {
    const ALLOWED: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "description",
        "title",
        "$ref",
        "$defs",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    ];
    const FORMATS: &[&str] = &[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ];
    assert!(schema.get("anyOf").is_none(), "root anyOf");
    for (path, node) in all_nodes(schema) {
        keys_within(node, ALLOWED, &path, Dialect::OpenAiStrict);
        if is_object(node) {
            assert_eq!(
                node.get("additionalProperties"),
                Some(&json!(false)),
                "additionalProperties at {path}"
            );
            let props: Vec<&String> = node["properties"].as_object().unwrap().keys().collect();
            let required: Vec<&str> = node["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(props.len(), required.len(), "every property required at {path}");
            assert!(
                props.iter().all(|p| required.contains(&p.as_str())),
                "every property required at {path}"
            );
        }
        if node.contains_key("$ref") {
            assert_eq!(node.len(), 1, "$ref with siblings at {path}");
        }
        if let Some(f) = node.get("format").and_then(Value::as_str) {
            assert!(FORMATS.contains(&f), "format {f} at {path}");
        }
    }
}

fn anthropic_rules(schema: &Value, strict: bool) {
    for combinator in ["anyOf", "oneOf", "allOf"] {
        assert!(schema.get(combinator).is_none(), "root {combinator}");
    }
    if !strict {
        return;
    }
    const ALLOWED: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "description",
        "title",
        "$ref",
        "$defs",
        "pattern",
        "format",
        "default",
        "minItems",
    ];
    const FORMATS: &[&str] = &[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "uri",
        "ipv4",
        "ipv6",
        "uuid",
    ];
    assert!(
        schema.get("$defs").is_none(),
        "strict Anthropic schemas are not recursive"
    );
    for (path, node) in all_nodes(schema) {
        keys_within(node, ALLOWED, &path, Dialect::AnthropicStrict);
        if is_object(node) {
            assert_eq!(
                node.get("additionalProperties"),
                Some(&json!(false)),
                "additionalProperties at {path}"
            );
        }
        if let Some(n) = node.get("minItems") {
            assert!(n == &json!(0) || n == &json!(1), "minItems {n} at {path}");
        }
        if let Some(f) = node.get("format").and_then(Value::as_str) {
            assert!(FORMATS.contains(&f), "format {f} at {path}");
        }
    }
}

fn gemini_rules(schema: &Value) {
    const ALLOWED: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "propertyOrdering",
        "items",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "anyOf",
        "default",
        "example",
        "minProperties",
        "maxProperties",
    ];
    for (path, node) in all_nodes(schema) {
        keys_within(node, ALLOWED, &path, Dialect::Gemini);
        if let Some(t) = node.get("type") {
            let t = t.as_str().unwrap_or_else(|| panic!("type array at {path}"));
            assert_eq!(t, t.to_ascii_uppercase(), "type case at {path}");
        }
        if let Some(values) = node.get("enum") {
            assert!(
                values.as_array().unwrap().iter().all(Value::is_string),
                "non-string enum at {path}"
            );
        }
        if node.contains_key("anyOf") {
            assert_eq!(node.len(), 1, "anyOf must be the only field at {path}");
        }
        for name in node
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            assert!(ok, "property name {name} at {path}");
        }
    }
}

fn gemini_json_rules(schema: &Value) {
    const ALLOWED: &[&str] = &[
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
    ];
    for (path, node) in all_nodes(schema) {
        keys_within(node, ALLOWED, &path, Dialect::GeminiJsonSchema);
        assert!(!node.get("type").is_some_and(Value::is_array), "type array at {path}");
        if node.contains_key("$ref") {
            assert!(node.keys().all(|k| k.starts_with('$')), "$ref with siblings at {path}");
        }
        if let Some(values) = node.get("enum") {
            assert!(
                values
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|v| v.is_string() || v.is_number()),
                "enum at {path}"
            );
        }
    }
}

fn parameters(def: &Value, dialect: Dialect) -> Option<&Value> {
    match dialect {
        Dialect::OpenAi | Dialect::OpenAiStrict => def["function"].get("parameters"),
        Dialect::OpenAiResponses => def.get("parameters"),
        Dialect::Anthropic | Dialect::AnthropicStrict => def.get("input_schema"),
        Dialect::Gemini => def.get("parameters"),
        Dialect::GeminiJsonSchema => def.get("parametersJsonSchema"),
        _ => def.get("inputSchema"),
    }
}

#[test]
fn every_generated_schema_follows_its_dialects_rules() {
    let mut checked = 0;
    for dialect in Dialect::ALL {
        for spec in catalog().specs() {
            let Ok(def) = tool_definition(spec, dialect) else {
                continue;
            };
            assert!(def.to_string().contains(spec.name()));
            let Some(schema) = parameters(&def, dialect) else {
                assert!(
                    matches!(dialect, Dialect::Gemini | Dialect::GeminiJsonSchema),
                    "{dialect}: no schema"
                );
                continue;
            };
            common_rules(schema, dialect);
            match dialect {
                Dialect::OpenAiStrict => openai_strict_rules(schema),
                Dialect::OpenAiResponses if def["strict"] == json!(true) => openai_strict_rules(schema),
                Dialect::Anthropic => anthropic_rules(schema, false),
                Dialect::AnthropicStrict => anthropic_rules(schema, true),
                Dialect::Gemini => gemini_rules(schema),
                Dialect::GeminiJsonSchema => gemini_json_rules(schema),
                _ => {}
            }
            checked += 1;
        }
    }
    assert!(checked >= 50, "only {checked} definitions were checked");
}

fn mcp_tool_validator(version: &str) -> jsonschema::Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/mcp/{version}/schema.json"));
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    schema["$ref"] = json!("#/$defs/Tool");
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn every_mcp_tool_validates_against_the_official_schemas() {
    for (dialect, version) in [(Dialect::Mcp, "2026-07-28"), (Dialect::Mcp2025_11_25, "2025-11-25")] {
        let validator = mcp_tool_validator(version);
        let manifest = catalog().manifest(dialect).unwrap();
        let tools = manifest.as_array().unwrap();
        assert_eq!(tools.len(), catalog().len());
        for tool in tools {
            let errors: Vec<String> = validator.iter_errors(tool).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{version} {}: {errors:?}", tool["name"]);
            assert!(
                jsonschema::meta::is_valid(&tool["inputSchema"]),
                "{}: inputSchema is not valid 2020-12",
                tool["name"]
            );
        }
        // And the validator does reject a broken tool, so the check can fail.
        assert!(!validator.is_valid(&json!({"name": "x", "inputSchema": {"type": "string"}})));
    }
}

#[test]
fn mcp_annotations_follow_effect_flags() {
    let manifest = catalog().manifest(Dialect::Mcp).unwrap();
    let by_name = |n: &str| {
        manifest
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(
        by_name("scalars")["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(
        by_name("pay")["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true})
    );
    let shipment = by_name("create_shipment");
    assert_eq!(shipment["title"], "Create shipment");
    assert_eq!(shipment["annotations"]["title"], "Create shipment");
    assert_eq!(shipment["annotations"]["idempotentHint"], true);
}

#[test]
fn properties_keep_declaration_order() {
    let spec = catalog().get("scalars").unwrap().spec().clone();
    let keys: Vec<String> = spec.input_schema()["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys[..3], ["text", "i8_value", "i16_value"]);
    let gemini = tool_definition(&spec, Dialect::Gemini).unwrap();
    assert_eq!(gemini["parameters"]["propertyOrdering"][0], "text");
}

#[test]
fn converting_through_every_dialect_keeps_names_and_arguments() {
    for dialect in Dialect::ALL {
        let Ok(manifest) =
            toolgate::manifest::render(catalog().specs().filter(|s| s.name() == "create_shipment"), dialect)
        else {
            panic!("{dialect}: create_shipment should be expressible")
        };
        let tools = toolgate::manifest::import_tools(&manifest).unwrap();
        assert_eq!(tools.len(), 1);
        let spec = toolgate::Tool::spec(&tools[0]);
        assert_eq!(spec.name(), "create_shipment");
        let props = spec.input_schema()["properties"].as_object().unwrap();
        assert_eq!(
            props.keys().collect::<Vec<_>>(),
            ["address", "lines", "speed", "note", "deliver_on"],
            "{dialect}"
        );
        // Only MCP carries effects; elsewhere the conservative defaults apply.
        let effects = spec.effects();
        if matches!(dialect, Dialect::Mcp | Dialect::Mcp2025_11_25) {
            assert!(effects.is_idempotent() && !effects.is_destructive());
        } else {
            assert!(!effects.is_retry_safe() && effects.is_destructive());
        }
    }
}

#[test]
fn dialect_names_round_trip_and_unknown_names_list_the_valid_ones() {
    for dialect in Dialect::ALL {
        assert_eq!(dialect.name().parse::<Dialect>().unwrap(), dialect);
    }
    assert_eq!("mcp-2026-07-28".parse::<Dialect>().unwrap(), Dialect::Mcp);
    let err = "openai_strict".parse::<Dialect>().unwrap_err().to_string();
    assert!(err.contains("openai-strict") && err.contains("gemini-json"), "{err}");
}

// gate's effect names travel in an MCP tool's `_meta` (`gate/effects`) and
// come back exactly on import, `keyed` and `approval` included, which MCP's
// hints cannot say; a list without them falls back to the hints, and names
// gate does not know are refused with the list of known ones.
#[test]
fn gate_effects_travel_in_mcp_meta_and_come_back_on_import() {
    let effects = toolgate::Effects::new().writes().external().keyed().approval();
    let spec = ToolSpec::new(
        "charge_card",
        "Charge a card.",
        json!({"type": "object", "properties": {"amount_cents": {"type": "integer"}}}),
        effects,
    )
    .unwrap();
    for dialect in [Dialect::Mcp, Dialect::Mcp2025_11_25] {
        let definition = tool_definition(&spec, dialect).unwrap();
        assert_eq!(
            definition["_meta"][toolgate::manifest::EFFECTS_META],
            json!(["writes", "external", "keyed", "approval"]),
            "{dialect}"
        );
        let imported = toolgate::manifest::import_tools(&json!([definition])).unwrap();
        assert_eq!(toolgate::Tool::spec(&imported[0]).effects(), effects, "{dialect}");
    }
    let unknown =
        json!([{"name": "t", "inputSchema": {"type": "object"}, "_meta": {"gate/effects": ["writes", "lethal"]}}]);
    let err = toolgate::manifest::import_tools(&unknown).unwrap_err().to_string();
    assert!(
        err.contains("gate/effects") && err.contains("lethal") && err.contains("approval"),
        "{err}"
    );
    let hinted = json!([{"name": "t", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}]);
    let read = toolgate::manifest::import_tools(&hinted).unwrap();
    assert!(toolgate::Tool::spec(&read[0]).effects().is_read_only());
}
