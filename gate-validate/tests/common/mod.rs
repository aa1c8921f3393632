//! Shared generators for the property tests: valid values for a JSON Schema,
//! and single mutations of a value.
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Resolves `#/...` references inside `root`.
fn resolve<'a>(root: &'a Value, r: &str) -> &'a Value {
    root.pointer(r.trim_start_matches('#')).unwrap_or(&Value::Bool(true))
}

fn int_range(s: &Map<String, Value>) -> (i128, i128) {
    let (mut lo, mut hi) = match s.get("format").and_then(Value::as_str) {
        Some("uint8") => (0, 255),
        Some("int8") => (-128, 127),
        Some("uint16") => (0, 65535),
        Some("int16") => (-32768, 32767),
        Some("uint32") => (0, u32::MAX as i128),
        Some("int32") => (i32::MIN as i128, i32::MAX as i128),
        Some("uint64") | Some("uint") => (0, u64::MAX as i128),
        _ => (i64::MIN as i128, i64::MAX as i128),
    };
    if let Some(m) = s.get("minimum").and_then(Value::as_i64) {
        lo = lo.max(m as i128);
    }
    if let Some(m) = s.get("maximum").and_then(Value::as_i64) {
        hi = hi.min(m as i128);
    }
    (lo, hi)
}

fn int_value(v: i128) -> Value {
    if v >= 0 { json!(v as u64) } else { json!(v as i64) }
}

/// Integers in `[lo, hi]`, biased to the ends where off-by-one bugs live.
fn int_strategy(lo: i128, hi: i128) -> BoxedStrategy<Value> {
    let span_lo = lo.max(-1_000_000);
    let span_hi = hi.min(1_000_000).max(span_lo);
    prop_oneof![
        Just(int_value(lo)),
        Just(int_value(hi)),
        (span_lo..=span_hi).prop_map(int_value),
    ]
    .boxed()
}

/// A strategy for values valid against `schema` (a sub-schema of `root`).
/// `depth` bounds recursion through `$ref`.
pub fn valid_value(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let Some(s) = schema.as_object() else {
        // `true`: any small JSON value.
        return prop_oneof![Just(json!(1)), Just(json!("x")), Just(json!({"a": [1, null]}))].boxed();
    };
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        if depth == 0 {
            return Just(Value::Null).boxed();
        }
        return valid_value(root, resolve(root, r), depth - 1);
    }
    if let Some(c) = s.get("const") {
        return Just(c.clone()).boxed();
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return proptest::sample::select(e.clone()).boxed();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(list) = s.get(key).and_then(Value::as_array) {
            // Prefer a null branch when deep, so recursion ends.
            if depth == 0
                && let Some(null) = list.iter().find(|b| b.get("type") == Some(&json!("null")))
            {
                return valid_value(root, null, 0);
            }
            let strategies: Vec<BoxedStrategy<Value>> = list
                .iter()
                .map(|b| valid_value(root, b, depth.saturating_sub(1)))
                .collect();
            return proptest::strategy::Union::new(strategies).boxed();
        }
    }
    let types: Vec<String> = match s.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(|t| t.as_str().map(String::from)).collect(),
        _ => vec!["object".into()],
    };
    let strategies: Vec<BoxedStrategy<Value>> = types
        .iter()
        .map(|t| match t.as_str() {
            "null" => Just(Value::Null).boxed(),
            "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
            "integer" => {
                let (lo, hi) = int_range(s);
                int_strategy(lo, hi)
            }
            "number" => prop_oneof![
                (-1e6f64..1e6).prop_map(|f| json!(f)),
                Just(json!(0.5)),
                (-1000i64..1000).prop_map(|i| json!(i)),
            ]
            .boxed(),
            "string" => {
                let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
                let max = s.get("maxLength").and_then(Value::as_u64).unwrap_or(8).max(min as u64) as usize;
                if let Some(p) = s.get("pattern").and_then(Value::as_str) {
                    // Tests only use patterns that are also generation regexes.
                    proptest::string::string_regex(p.trim_start_matches('^').trim_end_matches('$'))
                        .expect("generation regex")
                        .prop_map(Value::String)
                        .boxed()
                } else {
                    proptest::collection::vec(
                        prop_oneof![
                            8 => proptest::char::range('a', 'z'),
                            1 => Just('é'),
                            1 => Just('"'),
                            1 => Just('\n'),
                            1 => Just('😀'),
                        ],
                        min..=max,
                    )
                    .prop_map(|cs| Value::String(cs.into_iter().collect()))
                    .boxed()
                }
            }
            "array" => {
                if let Some(prefix) = s.get("prefixItems").and_then(Value::as_array) {
                    let parts: Vec<BoxedStrategy<Value>> = prefix.iter().map(|p| valid_value(root, p, depth)).collect();
                    return parts.prop_map(Value::Array).boxed();
                }
                let item = s.get("items").cloned().unwrap_or(Value::Bool(true));
                let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
                let max = s
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(3)
                    .min(3)
                    .max(min as u64) as usize;
                let inner = if depth == 0 {
                    return Just(Value::Array(vec![])).boxed();
                } else {
                    valid_value(root, &item, depth - 1)
                };
                proptest::collection::vec(inner, min..=max)
                    .prop_map(Value::Array)
                    .boxed()
            }
            _ => {
                let props: Vec<(String, Value, bool)> = s
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| {
                        let req: Vec<&str> = s
                            .get("required")
                            .and_then(Value::as_array)
                            .map(|r| r.iter().filter_map(Value::as_str).collect())
                            .unwrap_or_default();
                        p.iter()
                            .map(|(k, v)| (k.clone(), v.clone(), req.contains(&k.as_str())))
                            .collect()
                    })
                    .unwrap_or_default();
                let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
                    .into_iter()
                    .map(|(k, v, required)| {
                        let val = valid_value(root, &v, depth.saturating_sub(1));
                        if required {
                            val.prop_map(move |x| Some((k.clone(), x))).boxed()
                        } else {
                            proptest::option::of(val.prop_map(move |x| (k.clone(), x))).boxed()
                        }
                    })
                    .collect();
                fields
                    .prop_map(|fs| Value::Object(fs.into_iter().flatten().collect()))
                    .boxed()
            }
        })
        .collect();
    proptest::strategy::Union::new(strategies).boxed()
}

/// Every location in a value, as (JSON Pointer, value).
pub fn sites(v: &Value) -> Vec<(String, Value)> {
    fn walk(v: &Value, path: String, out: &mut Vec<(String, Value)>) {
        out.push((path.clone(), v.clone()));
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    walk(x, format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")), out);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

/// Values that probe type and range edges, including the numbers serde
/// treats specially (`1.0`, `-0.0`, 64-bit limits).
pub fn interesting() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1),
        json!(127),
        json!(128),
        json!(255),
        json!(256),
        json!(65535),
        json!(65536),
        json!(-129),
        json!(4294967295u64),
        json!(4294967296u64),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1.0),
        json!(-0.0),
        json!(1.5),
        json!(1e20),
        json!(""),
        json!("x"),
        json!("Open"),
        json!("Circle"),
        json!([]),
        json!([1]),
        json!({}),
        json!({"kind": "Square"}),
    ]
}

/// Text-level edits that make JSON invalid in the usual ways.
pub fn break_json(text: &str, choice: usize) -> String {
    match choice % 5 {
        0 => {
            let mut half = text.len() / 2;
            while !text.is_char_boundary(half) {
                half -= 1;
            }
            text[..half].to_string()
        }
        1 => match text.rfind('}') {
            Some(i) => format!("{},{}", &text[..i], &text[i..]),
            None => format!("{text},"),
        },
        2 if text.contains('"') => text.replace('"', "'"),
        2 => format!("'{text}'"),
        3 => format!("{text} {text}"),
        _ => format!("{{{text}"),
    }
}

/// Sets the value at a JSON Pointer (no-op if absent).
pub fn set_at(root: &mut Value, pointer: &str, new: Value) {
    if let Some(slot) = root.pointer_mut(pointer) {
        *slot = new;
    }
}

/// Removes the object member or array item at a JSON Pointer.
pub fn remove_at(root: &mut Value, pointer: &str) -> bool {
    let Some(i) = pointer.rfind('/') else {
        return false;
    };
    let (parent, last) = (&pointer[..i], &pointer[i + 1..]);
    let last = last.replace("~1", "/").replace("~0", "~");
    match root.pointer_mut(parent) {
        Some(Value::Object(m)) => m.shift_remove(&last).is_some(),
        Some(Value::Array(a)) => match last.parse::<usize>() {
            Ok(i) if i < a.len() => {
                a.remove(i);
                true
            }
            _ => false,
        },
        _ => false,
    }
}
