//! Traversal of JSON Schema documents and `$ref` inlining.
//!
//! Every dialect pass is "do this to every subschema", so the knowledge of
//! which keywords hold subschemas (and which hold plain instance values, like
//! `enum` and `default`) lives here once.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A rule violation found while transforming one tool's schema.
#[derive(Debug)]
pub(crate) struct Problem {
    pub(crate) path: String,
    pub(crate) message: String,
}

impl Problem {
    pub(crate) fn at(path: &str, message: impl Into<String>) -> Self {
        Problem {
            path: if path.is_empty() {
                "/".to_owned()
            } else {
                path.to_owned()
            },
            message: message.into(),
        }
    }
}

/// Keywords whose value is one subschema (or, for draft-07 `items`, a list).
pub(crate) const SINGLE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// Keywords whose value maps names to subschemas.
pub(crate) const MAPS: &[&str] = &[
    "properties",
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];
/// Keywords whose value is a list of subschemas.
pub(crate) const LISTS: &[&str] = &["prefixItems", "anyOf", "oneOf", "allOf"];

/// Escapes a property name for a JSON Pointer (RFC 6901).
pub(crate) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Calls `visit` on every subschema below `node` and then on `node` itself,
/// children first, with each one's JSON Pointer.
pub(crate) fn post_order(
    node: &mut Value,
    path: &str,
    visit: &mut dyn FnMut(&mut Value, &str) -> Result<(), Problem>,
) -> Result<(), Problem> {
    if let Value::Object(map) = node {
        for (key, child) in map.iter_mut() {
            let here = format!("{path}/{}", escape(key));
            if SINGLE.contains(&key.as_str()) {
                if let Value::Array(list) = child {
                    for (i, item) in list.iter_mut().enumerate() {
                        post_order(item, &format!("{here}/{i}"), visit)?;
                    }
                } else {
                    post_order(child, &here, visit)?;
                }
            } else if MAPS.contains(&key.as_str()) {
                if let Value::Object(children) = child {
                    for (name, item) in children.iter_mut() {
                        post_order(item, &format!("{here}/{}", escape(name)), visit)?;
                    }
                }
            } else if LISTS.contains(&key.as_str())
                && let Value::Array(list) = child
            {
                for (i, item) in list.iter_mut().enumerate() {
                    post_order(item, &format!("{here}/{i}"), visit)?;
                }
            }
        }
    }
    visit(node, path)
}

/// A pass's work on one object subschema, given its JSON Pointer.
pub(crate) type ObjectVisitor<'a> = dyn FnMut(&mut Map<String, Value>, &str) -> Result<(), Problem> + 'a;

/// Applies `visit` to every subschema that is an object (boolean schemas are
/// turned into objects by an earlier pass in every dialect).
pub(crate) fn each_object(root: &mut Value, visit: &mut ObjectVisitor<'_>) -> Result<(), Problem> {
    post_order(root, "", &mut |node, path| match node {
        Value::Object(map) => visit(map, path),
        _ => Ok(()),
    })
}

/// What to do with a `$ref` that leads back to itself.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recursion {
    /// Keep recursive definitions under `$defs` and refer to them.
    Keep,
    /// The dialect cannot express recursion: report it.
    Refuse,
}

/// Replaces every local `$ref` by the definition it names (siblings such as
/// `description` override the definition's own), so that clients that resolve
/// references badly, or not at all, see a self-contained schema. Recursive
/// definitions are kept (or refused) as `recursion` says.
pub(crate) fn inline_refs(root: &mut Value, recursion: Recursion) -> Result<(), Problem> {
    let Value::Object(map) = root else { return Ok(()) };
    let mut defs: BTreeMap<String, Value> = BTreeMap::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(found)) = map.shift_remove(key) {
            for (name, def) in found {
                defs.insert(format!("#/{key}/{}", escape(&name)), def);
            }
        }
    }
    let recursive = recursive_refs(&defs, root);
    let mut kept = BTreeSet::new();
    expand(root, "", &defs, &recursive, recursion, &mut kept, &mut Vec::new())?;
    // Definitions kept by reference may themselves refer to others; close over them.
    let mut kept_defs = Map::new();
    let mut pending: Vec<String> = kept.iter().cloned().collect();
    while let Some(reference) = pending.pop() {
        let name = reference.rsplit('/').next().unwrap_or_default().to_owned();
        if kept_defs.contains_key(&name) || reference == "#" {
            continue;
        }
        let Some(mut def) = defs.get(&reference).cloned() else {
            continue;
        };
        let mut more = BTreeSet::new();
        expand(
            &mut def,
            &format!("/$defs/{name}"),
            &defs,
            &recursive,
            recursion,
            &mut more,
            &mut vec![reference.clone()],
        )?;
        pending.extend(more.into_iter().filter(|r| r != &reference));
        kept_defs.insert(name, def);
    }
    if !kept_defs.is_empty() {
        // Kept definitions all move to #/$defs/NAME.
        point_refs_at_defs(root)?;
        let mut sorted: Vec<(String, Value)> = kept_defs.into_iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, def) in sorted.iter_mut() {
            point_refs_at_defs(def)?;
        }
        if let Value::Object(map) = root {
            map.insert("$defs".to_owned(), Value::Object(sorted.into_iter().collect()));
        }
    }
    Ok(())
}

/// Rewrites draft-07 `#/definitions/X` references to `#/$defs/X`.
fn point_refs_at_defs(schema: &mut Value) -> Result<(), Problem> {
    each_object(schema, &mut |node, _| {
        if let Some(Value::String(r)) = node.get_mut("$ref")
            && let Some(name) = r.strip_prefix("#/definitions/")
        {
            *r = format!("#/$defs/{name}");
        }
        Ok(())
    })
}

/// The references that are part of a cycle (including `#`, the root itself).
fn recursive_refs(defs: &BTreeMap<String, Value>, root: &Value) -> BTreeSet<String> {
    let edges: BTreeMap<&str, BTreeSet<String>> =
        defs.iter().map(|(name, def)| (name.as_str(), refs_in(def))).collect();
    let mut recursive = BTreeSet::new();
    if refs_in(root).contains("#") || defs.values().any(|d| refs_in(d).contains("#")) {
        recursive.insert("#".to_owned());
    }
    for start in defs.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<String> = edges[start.as_str()].iter().cloned().collect();
        while let Some(next) = stack.pop() {
            if &next == start {
                recursive.insert(start.clone());
                break;
            }
            if seen.insert(next.clone())
                && let Some(out) = edges.get(next.as_str())
            {
                stack.extend(out.iter().cloned());
            }
        }
    }
    recursive
}

fn refs_in(node: &Value) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    collect_refs(node, &mut found);
    found
}

fn collect_refs(node: &Value, found: &mut BTreeSet<String>) {
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(r)) => {
                        found.insert(r.clone());
                    }
                    ("enum" | "const" | "default" | "examples", _) => {}
                    _ => collect_refs(value, found),
                }
            }
        }
        Value::Array(list) => list.iter().for_each(|v| collect_refs(v, found)),
        _ => {}
    }
}

fn expand(
    node: &mut Value,
    path: &str,
    defs: &BTreeMap<String, Value>,
    recursive: &BTreeSet<String>,
    recursion: Recursion,
    kept: &mut BTreeSet<String>,
    stack: &mut Vec<String>,
) -> Result<(), Problem> {
    let Value::Object(map) = node else { return Ok(()) };
    if let Some(Value::String(reference)) = map.get("$ref").cloned().as_ref() {
        if recursive.contains(reference) {
            if recursion == Recursion::Refuse {
                let name = reference.rsplit('/').next().unwrap_or(reference);
                let name = if name == "#" { "the argument type" } else { name };
                return Err(Problem::at(
                    path,
                    format!("`{name}` is a recursive type, which this dialect cannot express"),
                ));
            }
            kept.insert(reference.clone());
            return Ok(());
        }
        let Some(def) = defs.get(reference) else {
            return Err(Problem::at(
                path,
                format!("`$ref` to `{reference}` does not resolve to a local definition"),
            ));
        };
        let mut merged = match def {
            Value::Object(d) => d.clone(),
            Value::Bool(true) => Map::new(),
            _ => {
                return Err(Problem::at(
                    path,
                    format!("`{reference}` is the `false` schema; no value can satisfy it"),
                ));
            }
        };
        map.shift_remove("$ref");
        for (key, value) in std::mem::take(map) {
            merged.insert(key, value);
        }
        *map = merged;
        stack.push(reference.clone());
        let result = expand(node, path, defs, recursive, recursion, kept, stack);
        stack.pop();
        return result;
    }
    let mut children: Vec<(String, &mut Value)> = Vec::new();
    for (key, child) in map.iter_mut() {
        let here = format!("{path}/{}", escape(key));
        let k = key.as_str();
        if LISTS.contains(&k) || (SINGLE.contains(&k) && child.is_array()) {
            if let Value::Array(list) = child {
                for (i, item) in list.iter_mut().enumerate() {
                    children.push((format!("{here}/{i}"), item));
                }
            }
        } else if MAPS.contains(&k) {
            if let Value::Object(entries) = child {
                for (name, item) in entries.iter_mut() {
                    children.push((format!("{here}/{}", escape(name)), item));
                }
            }
        } else if SINGLE.contains(&k) {
            children.push((here, child));
        }
    }
    for (here, child) in children {
        expand(child, &here, defs, recursive, recursion, kept, stack)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inlines_with_sibling_override() {
        let mut s = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A", "description": "outer"}},
            "$defs": {"A": {"type": "object", "description": "inner", "properties": {"x": {"type": "integer"}}}}});
        inline_refs(&mut s, Recursion::Refuse).unwrap();
        assert_eq!(s["properties"]["a"]["description"], "outer");
        assert_eq!(s["properties"]["a"]["properties"]["x"]["type"], "integer");
        assert!(s.get("$defs").is_none());
    }

    #[test]
    fn recursion_kept_or_refused() {
        let doc = json!({"type": "object", "properties": {"n": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}});
        let mut kept = doc.clone();
        inline_refs(&mut kept, Recursion::Keep).unwrap();
        assert_eq!(kept["properties"]["n"]["$ref"], "#/$defs/Node");
        assert!(kept["$defs"]["Node"].is_object());
        let mut refused = doc;
        let problem = inline_refs(&mut refused, Recursion::Refuse).unwrap_err();
        assert_eq!(problem.path, "/properties/n");
        assert!(problem.message.contains("Node"));
    }

    #[test]
    fn dangling_ref_is_a_problem() {
        let mut s = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}});
        assert!(
            inline_refs(&mut s, Recursion::Keep)
                .unwrap_err()
                .message
                .contains("Missing")
        );
    }
}
