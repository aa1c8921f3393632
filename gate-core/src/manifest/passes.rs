//! The transform passes that dialects are composed of.
//!
//! Each pass does one thing to every subschema and is named after it, so a
//! dialect reads as the list of what its provider needs (see `dialects.rs`).
//! A pass either rewrites the schema into an equivalent (or, for hints the
//! provider cannot take, a documented looser) form, or reports a [`Problem`]:
//! gate never hands a provider a schema it would reject. Loosening is safe
//! because gate validates every call against the tool's original schema.

use serde_json::{Map, Value, json};

use super::walk::{LISTS, MAPS, Problem, SINGLE, each_object, escape};

/// Formats defined by JSON Schema 2020-12 (integer widths like `uint32` are not).
pub(crate) const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];
/// OpenAI Structured Outputs' format allow-list.
pub(crate) const OPENAI_STRICT_FORMATS: &[&str] = &[
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
/// Anthropic strict tool use's format allow-list.
pub(crate) const ANTHROPIC_STRICT_FORMATS: &[&str] = &[
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
/// String formats Gemini's `Schema` documents.
pub(crate) const GEMINI_FORMATS: &[&str] = &["date-time", "date", "email"];

/// Keywords neither a strict dialect nor Gemini supports: composition beyond
/// `anyOf` and the conditional/dynamic keywords.
pub(crate) const UNSUPPORTED_IN_STRICT_AND_GEMINI: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
];

/// Keywords a strict dialect refuses beyond
/// [`UNSUPPORTED_IN_STRICT_AND_GEMINI`]: Gemini's passes turn tuples into
/// arrays, so it takes these.
const UNSUPPORTED_IN_STRICT_ONLY: &[&str] = &["minContains", "maxContains", "prefixItems"];

/// Keywords no strict dialect supports, in the order a node's first one is
/// reported.
pub(crate) const UNSUPPORTED_IN_STRICT: &[&[&str]] = &[UNSUPPORTED_IN_STRICT_AND_GEMINI, UNSUPPORTED_IN_STRICT_ONLY];

/// Drops the document-level keywords no provider wants in a tool schema.
pub(crate) fn strip_document_keywords(root: &mut Value) {
    if let Value::Object(map) = root {
        for key in ["$schema", "$id", "title", "$comment"] {
            map.shift_remove(key);
        }
    }
}

/// `true` becomes `{}` and `false` becomes `{"not": {}}`: several providers
/// (and MCP's own `properties` schema) accept only object schemas. A `false`
/// that closes an object (`additionalProperties: false`) stays: it is the
/// form every provider asks for.
pub(crate) fn boolean_schemas_to_objects(root: &mut Value) -> Result<(), Problem> {
    fn convert(slot: &mut Value) {
        if let Value::Bool(accept) = slot {
            *slot = if *accept { json!({}) } else { json!({"not": {}}) };
        }
    }
    convert(root);
    each_object(root, &mut |node, _| {
        for (key, child) in node.iter_mut() {
            let closes = matches!(
                key.as_str(),
                "additionalProperties" | "unevaluatedProperties" | "unevaluatedItems"
            ) && *child == Value::Bool(false);
            if closes {
                continue;
            }
            if SINGLE.contains(&key.as_str()) || LISTS.contains(&key.as_str()) {
                match child {
                    Value::Array(list) => list.iter_mut().for_each(convert),
                    other => convert(other),
                }
            } else if MAPS.contains(&key.as_str())
                && let Value::Object(children) = child
            {
                children.values_mut().for_each(convert);
            }
        }
        Ok(())
    })
}

/// Removes `format` values outside `allowed` (schemars' `uint32`, `double`…
/// are not JSON Schema formats, and strict providers reject unknown ones).
pub(crate) fn restrict_formats(root: &mut Value, allowed: &[&str]) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        if node
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| !allowed.contains(&f))
        {
            node.shift_remove("format");
        }
        Ok(())
    })
}

/// `oneOf` becomes `anyOf`. Safe for what schemars emits: its `oneOf`s are
/// tagged enums whose branches are disjoint by the tag's `const`.
pub(crate) fn one_of_to_any_of(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, path| {
        if let Some(branches) = node.shift_remove("oneOf") {
            if node.contains_key("anyOf") {
                return Err(Problem::at(
                    path,
                    "a schema with both `oneOf` and `anyOf` cannot be expressed",
                ));
            }
            node.insert("anyOf".to_owned(), branches);
        }
        Ok(())
    })
}

/// An `allOf` with one branch is that branch.
pub(crate) fn flatten_single_all_of(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        let single = matches!(node.get("allOf"), Some(Value::Array(list)) if list.len() == 1);
        if single
            && let Some(Value::Array(mut list)) = node.shift_remove("allOf")
            && let Some(Value::Object(branch)) = list.pop()
        {
            for (key, value) in branch {
                node.entry(key).or_insert(value);
            }
        }
        Ok(())
    })
}

/// Reports the first keyword of `keywords` (lists read in order) found anywhere.
pub(crate) fn refuse_keywords(root: &mut Value, keywords: &[&[&str]], dialect: &str) -> Result<(), Problem> {
    each_object(
        root,
        &mut |node, path| match keywords.iter().copied().flatten().find(|k| node.contains_key(**k)) {
            Some(&"prefixItems") => Err(Problem::at(
                path,
                format!("tuples (`prefixItems`) cannot be expressed in {dialect}; use a struct with named fields"),
            )),
            Some(keyword) => Err(Problem::at(
                path,
                format!("`{keyword}` cannot be expressed in {dialect}"),
            )),
            None => Ok(()),
        },
    )
}

/// Whether a subschema says nothing about its values' type (`{}`, which is
/// what `serde_json::Value` becomes).
fn is_untyped(node: &Map<String, Value>) -> bool {
    ![
        "type",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "not",
        "properties",
        "items",
    ]
    .iter()
    .any(|k| node.contains_key(*k))
}

/// Refuses "any JSON value" where a dialect needs a type for every value.
pub(crate) fn refuse_untyped(root: &mut Value, dialect: &str) -> Result<(), Problem> {
    each_object(root, &mut |node, path| {
        if is_untyped(node) {
            return Err(Problem::at(
                path,
                format!(
                    "an arbitrary JSON value (e.g. `serde_json::Value`) cannot be expressed in {dialect}, which needs a type for every value; give the argument a concrete type"
                ),
            ));
        }
        Ok(())
    })
}

fn is_object_schema(node: &Map<String, Value>) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => node.contains_key("properties"),
    }
}

/// Every object gets `additionalProperties: false` (and `properties`), as
/// strict modes require; maps (`additionalProperties` with a schema) are refused.
pub(crate) fn close_objects(root: &mut Value, dialect: &str) -> Result<(), Problem> {
    each_object(root, &mut |node, path| {
        if !is_object_schema(node) {
            return Ok(());
        }
        match node.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return Err(Problem::at(
                    path,
                    format!(
                        "maps (`additionalProperties` with a schema, e.g. a `HashMap`) cannot be expressed in {dialect}; use a Vec of key/value structs"
                    ),
                ));
            }
        }
        node.insert("additionalProperties".to_owned(), Value::Bool(false));
        node.entry("properties").or_insert_with(|| json!({}));
        Ok(())
    })
}

/// Removes `additionalProperties: false` where the dialect has no such field,
/// and refuses maps there.
pub(crate) fn drop_closed_marker(root: &mut Value, dialect: &str) -> Result<(), Problem> {
    each_object(root, &mut |node, path| match node.get("additionalProperties") {
        None => Ok(()),
        Some(Value::Bool(false)) => {
            node.shift_remove("additionalProperties");
            Ok(())
        }
        Some(_) => Err(Problem::at(
            path,
            format!(
                "maps (`additionalProperties` with a schema, e.g. a `HashMap`) cannot be expressed in {dialect}; use a Vec of key/value structs"
            ),
        )),
    })
}

/// Appends a sentence to a node's description.
fn append_note(node: &mut Map<String, Value>, note: &str) {
    let text = match node.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => {
            let sep = if existing.ends_with('.') { " " } else { ". " };
            format!("{existing}{sep}{note}")
        }
        _ => note.to_owned(),
    };
    node.insert("description".to_owned(), Value::String(text));
}

fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Removes keywords a dialect does not take and states them in the
/// description instead, so the model still sees the constraint and the
/// provider accepts the schema. gate's validator keeps enforcing them.
pub(crate) fn move_keywords_to_description(root: &mut Value, keywords: &[&str]) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        let mut removed = Vec::new();
        let mut default = None;
        for keyword in keywords {
            // minItems 0 and 1 are the values Anthropic strict keeps.
            if *keyword == "minItems>1" {
                if node.get("minItems").and_then(Value::as_u64).is_some_and(|n| n > 1)
                    && let Some(v) = node.shift_remove("minItems")
                {
                    removed.push(format!("minItems {}", render_value(&v)));
                }
                continue;
            }
            let Some(value) = node.shift_remove(*keyword) else {
                continue;
            };
            match *keyword {
                "default" => default = Some(value),
                "uniqueItems" if value == Value::Bool(true) => removed.push("items must be unique".to_owned()),
                "uniqueItems" => {}
                k => removed.push(format!("{k} {}", render_value(&value))),
            }
        }
        if !removed.is_empty() {
            append_note(node, &format!("Constraints: {}.", removed.join(", ")));
        }
        if let Some(value) = default {
            append_note(node, &format!("Default: {}.", render_value(&value)));
        }
        Ok(())
    })
}

/// Adds an `items` schema to tuples: providers reject arrays without `items`,
/// and under 2020-12 an `items` beside `prefixItems` and a `maxItems` equal to
/// the tuple length changes nothing. With `drop_prefix`, the tuple becomes a
/// plain array for dialects without `prefixItems`, its shape noted in the
/// description.
pub(crate) fn give_tuples_items(root: &mut Value, drop_prefix: bool) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        let Some(Value::Array(prefix)) = node.get("prefixItems") else {
            return Ok(());
        };
        let mut distinct: Vec<Value> = Vec::new();
        for item in prefix {
            if !distinct.contains(item) {
                distinct.push(item.clone());
            }
        }
        let len = prefix.len();
        let items = if distinct.len() == 1 {
            distinct.remove(0)
        } else {
            json!({"anyOf": distinct})
        };
        if !node.contains_key("items") || drop_prefix {
            node.insert("items".to_owned(), items);
        }
        if drop_prefix {
            node.shift_remove("prefixItems");
            append_note(node, &format!("A tuple of exactly {len} items, in order."));
        }
        Ok(())
    })
}

fn admits_null(node: &Map<String, Value>) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => node
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(|b| b.as_object().is_some_and(admits_null))),
    }
}

/// OpenAI strict: every property is required, and optional ones admit `null`
/// instead (the model sends `null` for "absent"; gate's validator reads a
/// `null` for an optional property as absent).
pub(crate) fn require_all_widen_optional(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        let required: Vec<String> = match node.get("required") {
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        let Some(Value::Object(properties)) = node.get_mut("properties") else {
            return Ok(());
        };
        let mut all = Vec::new();
        for (name, schema) in properties.iter_mut() {
            all.push(Value::String(name.clone()));
            if required.contains(name) {
                continue;
            }
            if let Value::Object(prop) = schema {
                widen_to_null(prop);
            }
        }
        node.insert("required".to_owned(), Value::Array(all));
        Ok(())
    })?;
    Ok(())
}

fn widen_to_null(prop: &mut Map<String, Value>) {
    if admits_null(prop) {
        return;
    }
    let simple_type = prop.get("type").and_then(Value::as_str).map(str::to_owned);
    match simple_type {
        Some(t) if !prop.contains_key("anyOf") => {
            prop.insert("type".to_owned(), json!([t, "null"]));
            if let Some(Value::Array(values)) = prop.get_mut("enum") {
                values.push(Value::Null);
            }
        }
        _ => {
            if let Some(Value::Array(branches)) = prop.get_mut("anyOf") {
                branches.push(json!({"type": "null"}));
                return;
            }
            let mut annotations = Map::new();
            for key in ["description", "title"] {
                if let Some(v) = prop.shift_remove(key) {
                    annotations.insert(key.to_owned(), v);
                }
            }
            let inner = std::mem::take(prop);
            prop.insert("anyOf".to_owned(), json!([Value::Object(inner), {"type": "null"}]));
            prop.extend(annotations);
        }
    }
}

/// `type: [A, B]` becomes `anyOf: [{type: A, …}, {type: B, …}]` for dialects
/// without type arrays. Validation keywords go into every branch: JSON Schema
/// ignores keywords that do not apply to a value's type, so this is exact.
pub(crate) fn type_arrays_to_any_of(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, path| {
        let Some(Value::Array(types)) = node.get("type") else {
            return Ok(());
        };
        let types = types.clone();
        if types.len() == 1 {
            node.insert("type".to_owned(), types[0].clone());
            return Ok(());
        }
        if node.contains_key("anyOf") {
            return Err(Problem::at(path, "a type array beside `anyOf` cannot be expressed"));
        }
        let mut annotations = Map::new();
        for key in ["description", "title", "default"] {
            if let Some(v) = node.shift_remove(key) {
                annotations.insert(key.to_owned(), v);
            }
        }
        node.shift_remove("type");
        let rest = std::mem::take(node);
        let branches: Vec<Value> = types
            .into_iter()
            .map(|t| {
                if t == "null" {
                    return json!({"type": "null"});
                }
                let mut branch = Map::new();
                branch.insert("type".to_owned(), t);
                branch.extend(rest.clone());
                Value::Object(branch)
            })
            .collect();
        node.insert("anyOf".to_owned(), Value::Array(branches));
        node.extend(annotations);
        Ok(())
    })
}

/// Gemini `parameters`: a `null` branch of `anyOf` becomes `nullable: true`,
/// and an `anyOf` left with one branch becomes that branch.
pub(crate) fn any_of_null_to_nullable(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        let Some(Value::Array(branches)) = node.get("anyOf") else {
            return Ok(());
        };
        let is_null = |b: &Value| {
            b.get("type").and_then(Value::as_str) == Some("null") && b.as_object().is_some_and(|m| m.len() == 1)
        };
        let nullable = branches.iter().any(is_null);
        let mut rest: Vec<Value> = branches.iter().filter(|b| !is_null(b)).cloned().collect();
        node.shift_remove("anyOf");
        if rest.len() == 1 {
            if let Value::Object(branch) = rest.remove(0) {
                for (key, value) in branch {
                    node.entry(key).or_insert(value);
                }
            }
            if nullable {
                node.insert("nullable".to_owned(), Value::Bool(true));
            }
            return Ok(());
        }
        // Several branches stay a union; `isolate_any_of` later moves
        // `nullable` into them and drops the siblings Gemini refuses.
        node.insert("anyOf".to_owned(), Value::Array(rest));
        if nullable {
            node.insert("nullable".to_owned(), Value::Bool(true));
        }
        Ok(())
    })
}

/// An `anyOf` whose branches are single values of one type (what schemars
/// emits for a unit enum with documented variants) becomes one `enum`, the
/// variants' descriptions kept in the description: Gemini handles enums far
/// better than unions, and allows nothing beside an `anyOf`.
pub(crate) fn any_of_values_to_enum(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        let Some(Value::Array(branches)) = node.get("anyOf") else {
            return Ok(());
        };
        let mut kind = None;
        let mut values = Vec::new();
        let mut notes = Vec::new();
        for branch in branches {
            let Some(b) = branch.as_object() else { return Ok(()) };
            if b.keys()
                .any(|k| !matches!(k.as_str(), "type" | "enum" | "description" | "title"))
            {
                return Ok(());
            }
            let (Some(t), Some(Value::Array(vals))) = (b.get("type"), b.get("enum")) else {
                return Ok(());
            };
            if kind.get_or_insert(t) != &t || vals.len() != 1 {
                return Ok(());
            }
            if let Some(d) = b.get("description").and_then(Value::as_str) {
                notes.push(format!("{} ({})", render_value(&vals[0]), d.trim_end_matches('.')));
            }
            values.push(vals[0].clone());
        }
        let Some(kind) = kind.cloned() else { return Ok(()) };
        node.shift_remove("anyOf");
        node.insert("type".to_owned(), kind);
        node.insert("enum".to_owned(), Value::Array(values));
        if !notes.is_empty() {
            append_note(node, &format!("Values: {}.", notes.join(", ")));
        }
        Ok(())
    })
}

/// Gemini (Vertex) accepts nothing beside `anyOf`: a `nullable` moves into
/// each branch, annotations are dropped.
pub(crate) fn isolate_any_of(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        if !node.contains_key("anyOf") || node.len() == 1 {
            return Ok(());
        }
        let nullable = node.get("nullable") == Some(&Value::Bool(true));
        let Some(Value::Array(mut branches)) = node.shift_remove("anyOf") else {
            return Ok(());
        };
        if nullable {
            for branch in branches.iter_mut() {
                if let Value::Object(b) = branch {
                    b.insert("nullable".to_owned(), Value::Bool(true));
                }
            }
        }
        node.clear();
        node.insert("anyOf".to_owned(), Value::Array(branches));
        Ok(())
    })
}

/// `const: x` becomes `enum: [x]` for dialects without `const`.
pub(crate) fn const_to_enum(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        if let Some(value) = node.shift_remove("const") {
            node.insert("enum".to_owned(), json!([value]));
        }
        Ok(())
    })
}

/// Gemini `parameters` takes only string enums: other values are written as
/// strings with `format: "enum"`, the form Google documents for integer enums.
pub(crate) fn stringify_enums(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, path| {
        let Some(Value::Array(values)) = node.get("enum").cloned() else {
            return Ok(());
        };
        if values.iter().all(Value::is_string) {
            node.entry("type").or_insert_with(|| json!("string"));
            return Ok(());
        }
        if values.iter().any(|v| v.is_object() || v.is_array()) {
            return Err(Problem::at(
                path,
                "an `enum` of objects or arrays cannot be expressed in Gemini `parameters`",
            ));
        }
        let strings: Vec<Value> = values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| Value::String(render_value(v)))
            .collect();
        if values.iter().any(Value::is_null) {
            node.insert("nullable".to_owned(), Value::Bool(true));
        }
        node.insert("enum".to_owned(), Value::Array(strings));
        node.insert("format".to_owned(), json!("enum"));
        if !node.contains_key("type") {
            let kind = if values.iter().all(|v| v.is_i64() || v.is_u64() || v.is_null()) {
                "integer"
            } else {
                "string"
            };
            node.insert("type".to_owned(), json!(kind));
        }
        Ok(())
    })
}

/// Refuses enums with values that are neither strings nor numbers.
pub(crate) fn refuse_non_scalar_enums(root: &mut Value, dialect: &str) -> Result<(), Problem> {
    each_object(root, &mut |node, path| match node.get("enum") {
        Some(Value::Array(values)) if values.iter().any(|v| !(v.is_string() || v.is_number())) => Err(Problem::at(
            path,
            format!("`enum` values other than strings and numbers cannot be expressed in {dialect}"),
        )),
        _ => Ok(()),
    })
}

/// Gemini's `Type` enum is upper case (`STRING`, `OBJECT`…).
pub(crate) fn uppercase_types(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        if let Some(Value::String(t)) = node.get_mut("type") {
            *t = t.to_ascii_uppercase();
        }
        Ok(())
    })
}

/// Gemini's `propertyOrdering`: declaration order, which models follow when
/// they write the arguments.
pub(crate) fn add_property_ordering(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        if let Some(Value::Object(properties)) = node.get("properties")
            && properties.len() > 1
        {
            let order: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
            node.insert("propertyOrdering".to_owned(), Value::Array(order));
        }
        Ok(())
    })
}

/// Gemini property names must match `^[A-Za-z_][A-Za-z0-9_]{0,63}$`.
pub(crate) fn check_gemini_property_names(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, path| {
        let Some(Value::Object(properties)) = node.get("properties") else {
            return Ok(());
        };
        for name in properties.keys() {
            let mut chars = name.chars();
            let ok = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
                && name.len() <= 64
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(Problem::at(
                    &format!("{path}/properties/{}", escape(name)),
                    format!(
                        "property name `{name}` is not accepted by Gemini (letters, digits and `_`, starting with a letter or `_`, at most 64)"
                    ),
                ));
            }
        }
        Ok(())
    })
}

/// Refuses `anyOf`/`oneOf`/`allOf` at the root: Anthropic and OpenAI strict
/// require a plain object there.
pub(crate) fn refuse_root_combinators(root: &Value, dialect: &str) -> Result<(), Problem> {
    for keyword in ["anyOf", "oneOf", "allOf"] {
        if root.get(keyword).is_some() {
            return Err(Problem::at(
                "/",
                format!("`{keyword}` at the root cannot be expressed in {dialect}; the root must be a plain object"),
            ));
        }
    }
    Ok(())
}

/// A `$ref` may have nothing but `$`-keywords beside it (OpenAI strict,
/// Anthropic strict, Gemini `parametersJsonSchema`); annotations stay on a
/// one-branch `anyOf` around it.
pub(crate) fn isolate_refs(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, _| {
        if !node.contains_key("$ref") || node.keys().all(|k| k.starts_with('$')) {
            return Ok(());
        }
        let reference = node.shift_remove("$ref").unwrap_or(Value::Null);
        node.insert("anyOf".to_owned(), json!([{"$ref": reference}]));
        Ok(())
    })
}

/// Gemini `parametersJsonSchema`: recursive references may only sit in
/// optional properties (the API unrolls them a limited number of times).
pub(crate) fn refuse_required_recursion(root: &mut Value) -> Result<(), Problem> {
    each_object(root, &mut |node, path| {
        let Some(Value::Object(properties)) = node.get("properties") else {
            return Ok(());
        };
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, schema) in properties {
            let wrapped_ref = schema
                .get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.len() == 1 && branches[0].get("$ref").is_some());
            if required.contains(&name.as_str()) && (schema.get("$ref").is_some() || wrapped_ref) {
                return Err(Problem::at(
                    &format!("{path}/properties/{}", escape(name)),
                    "a recursive type in a required property cannot be expressed in Gemini `parametersJsonSchema`; make it an Option",
                ));
            }
        }
        Ok(())
    })
}

/// OpenAI Structured Outputs' documented size limits.
pub(crate) fn check_openai_strict_limits(root: &Value) -> Result<(), Problem> {
    fn walk(node: &Value, depth: usize, props: &mut usize, enums: &mut usize, max_depth: &mut usize) {
        let Value::Object(map) = node else { return };
        if let Some(Value::Object(p)) = map.get("properties") {
            *props += p.len();
            *max_depth = (*max_depth).max(depth + 1);
            p.values().for_each(|v| walk(v, depth + 1, props, enums, max_depth));
        }
        if let Some(Value::Array(e)) = map.get("enum") {
            *enums += e.len();
        }
        for key in ["items", "anyOf", "$defs"] {
            match map.get(key) {
                Some(Value::Array(list)) => list.iter().for_each(|v| walk(v, depth, props, enums, max_depth)),
                Some(Value::Object(defs)) if key == "$defs" => {
                    defs.values().for_each(|v| walk(v, depth, props, enums, max_depth))
                }
                Some(v) => walk(v, depth, props, enums, max_depth),
                None => {}
            }
        }
    }
    let (mut props, mut enums, mut depth) = (0, 0, 0);
    walk(root, 0, &mut props, &mut enums, &mut depth);
    if props > 5000 {
        return Err(Problem::at(
            "/",
            format!("{props} properties exceed OpenAI strict mode's limit of 5000"),
        ));
    }
    if depth > 10 {
        return Err(Problem::at(
            "/",
            format!("{depth} levels of object nesting exceed OpenAI strict mode's limit of 10"),
        ));
    }
    if enums > 1000 {
        return Err(Problem::at(
            "/",
            format!("{enums} enum values exceed OpenAI strict mode's limit of 1000"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_covers_each_shape() {
        let mut s = json!({"type": "object", "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "enum": ["x"]},
            "c": {"anyOf": [{"type": "integer"}]},
            "d": {"type": "object", "properties": {}, "description": "D"},
            "e": {"type": ["string", "null"]}
        }, "required": ["a"]});
        require_all_widen_optional(&mut s).unwrap();
        assert_eq!(s["required"], json!(["a", "b", "c", "d", "e"]));
        assert_eq!(s["properties"]["a"]["type"], "string");
        assert_eq!(
            s["properties"]["b"],
            json!({"type": ["string", "null"], "enum": ["x", null]})
        );
        assert_eq!(s["properties"]["c"]["anyOf"][1], json!({"type": "null"}));
        assert_eq!(s["properties"]["d"]["type"], json!(["object", "null"]));
        assert_eq!(s["properties"]["d"]["description"], "D");
        assert_eq!(s["properties"]["e"]["type"], json!(["string", "null"]));
    }

    #[test]
    fn type_arrays_split_exactly() {
        let mut s = json!({"type": ["integer", "null"], "minimum": 0, "description": "n"});
        type_arrays_to_any_of(&mut s).unwrap();
        assert_eq!(
            s,
            json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "description": "n"})
        );
        any_of_null_to_nullable(&mut s).unwrap();
        assert_eq!(
            s,
            json!({"description": "n", "type": "integer", "minimum": 0, "nullable": true})
        );
    }

    #[test]
    fn moved_keywords_land_in_description() {
        let mut s = json!({"type": "integer", "minimum": 1, "maximum": 5, "default": 2, "description": "Count"});
        move_keywords_to_description(&mut s, &["minimum", "maximum", "default"]).unwrap();
        assert_eq!(
            s["description"],
            "Count. Constraints: minimum 1, maximum 5. Default: 2."
        );
    }

    #[test]
    fn maps_are_refused_when_closing_objects() {
        let mut s = json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}});
        let p = close_objects(&mut s, "X").unwrap_err();
        assert_eq!(p.path, "/properties/m");
        assert!(p.message.contains("HashMap"));
    }
}
