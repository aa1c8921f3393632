//! Property tests over generated schemas: generated valid values are
//! accepted (by the fast pass, too), and each single mutation is rejected
//! with a violation that names the mutated path. Also: no input bytes make
//! the validator panic.

mod common;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolgate_validate::{Validator, ViolationKind};

/// A generated schema shape; every object is closed (`additionalProperties: false`),
/// as tool roots are.
#[derive(Debug, Clone)]
enum S {
    Str,
    Int {
        lo: i64,
        hi: i64,
    },
    Num,
    Bool,
    Enum(Vec<String>),
    Pattern,
    Obj(Vec<(String, S, bool)>),
    Arr(Box<S>),
    /// `anyOf [S, null]`, what schemars emits for `Option<Struct>`.
    Opt(Box<S>),
}

fn name() -> impl Strategy<Value = String> {
    "[a-z]{2,7}(_[a-z]{2,5})?"
}

fn leaf() -> impl Strategy<Value = S> {
    prop_oneof![
        Just(S::Str),
        (-1000i64..1000, 0i64..1000).prop_map(|(lo, w)| S::Int { lo, hi: lo + w }),
        Just(S::Num),
        Just(S::Bool),
        proptest::collection::btree_set("[a-z]{3,6}", 1..5).prop_map(|s| S::Enum(s.into_iter().collect())),
        Just(S::Pattern),
    ]
}

fn shape() -> impl Strategy<Value = S> {
    leaf().prop_recursive(4, 24, 5, |inner| {
        prop_oneof![
            3 => proptest::collection::btree_map(name(), (inner.clone(), any::<bool>()), 1..6)
                .prop_map(|m| S::Obj(m.into_iter().map(|(k, (s, r))| (k, s, r)).collect())),
            1 => inner.clone().prop_map(|s| S::Arr(Box::new(s))),
            1 => inner.prop_map(|s| S::Opt(Box::new(s))),
        ]
    })
}

/// A root object (tool arguments are always objects).
fn root_shape() -> impl Strategy<Value = S> {
    proptest::collection::btree_map(name(), (shape(), any::<bool>()), 1..7)
        .prop_map(|m| S::Obj(m.into_iter().map(|(k, (s, r))| (k, s, r)).collect()))
}

fn schema(s: &S) -> Value {
    match s {
        S::Str => json!({"type": "string"}),
        S::Int { lo, hi } => json!({"type": "integer", "format": "int32", "minimum": lo, "maximum": hi}),
        S::Num => json!({"type": "number", "format": "double"}),
        S::Bool => json!({"type": "boolean"}),
        S::Enum(v) => json!({"type": "string", "enum": v}),
        S::Pattern => json!({"type": "string", "pattern": "^[a-z]{2,5}-[0-9]{1,3}$"}),
        S::Obj(fields) => {
            let mut props = Map::new();
            let mut required = Vec::new();
            for (k, s, r) in fields {
                props.insert(k.clone(), schema(s));
                if *r {
                    required.push(k.clone());
                }
            }
            json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
        }
        S::Arr(item) => json!({"type": "array", "items": schema(item)}),
        S::Opt(inner) => json!({"anyOf": [schema(inner), {"type": "null"}]}),
    }
}

/// A generated case: the schema, a valid value, and a mutation to apply.
fn case() -> impl Strategy<Value = (S, Value, prop::sample::Index, usize)> {
    root_shape().prop_flat_map(|s| {
        let sch = schema(&s);
        let value = common::valid_value(&sch, &sch, 8);
        (Just(s), value, any::<prop::sample::Index>(), 0usize..5)
    })
}

/// Walks the value alongside its shape, listing the places a mutation can go.
fn walk(s: &S, v: &Value, path: String, out: &mut Vec<(String, S, Value)>) {
    out.push((path.clone(), s.clone(), v.clone()));
    match (s, v) {
        (S::Obj(fields), Value::Object(m)) => {
            for (k, fs, _) in fields {
                if let Some(x) = m.get(k) {
                    walk(fs, x, format!("{path}/{k}"), out);
                }
            }
        }
        (S::Arr(item), Value::Array(items)) => {
            for (i, x) in items.iter().enumerate() {
                walk(item, x, format!("{path}/{i}"), out);
            }
        }
        (S::Opt(inner), x) if !x.is_null() => {
            // The same place, seen through the optional wrapper.
            walk(inner, x, path, out);
        }
        _ => {}
    }
}

/// A value of a type the shape does not accept.
fn wrong_type(s: &S) -> Value {
    match s {
        S::Str | S::Enum(_) | S::Pattern => json!(12345),
        S::Int { .. } => json!("12"),
        S::Num => json!(true),
        S::Bool => json!("true"),
        S::Obj(_) => json!([1, 2]),
        S::Arr(_) => json!({"a": 1}),
        S::Opt(inner) => wrong_type(inner),
    }
}

fn validator(s: &S) -> Validator {
    Validator::new(&schema(s)).expect("generated schemas compile")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn valid_values_are_accepted_by_both_passes((s, v, _, _) in case()) {
        let val = validator(&s);
        let text = v.to_string();
        prop_assert!(val.fast_accepts(&text), "fast pass refused a valid value: {text}");
        let out = val.validate(&text);
        prop_assert!(out.is_ok(), "rejected a valid value {text}: {}", out.unwrap_err().message("t"));
        prop_assert_eq!(out.unwrap(), text.as_str());
        // Pretty-printed text is the same value.
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        prop_assert!(val.validate(&pretty).is_ok());
    }

    #[test]
    fn each_mutation_is_rejected_naming_its_path((s, v, pick, kind) in case()) {
        let val = validator(&s);
        let mut places = Vec::new();
        walk(&s, &v, String::new(), &mut places);
        let (path, shape, _) = pick.get(&places).clone();
        let mut mutated = v.clone();
        let (expected_path, expected_kind, text) = match kind {
            // Change a type.
            0 => {
                common::set_at(&mut mutated, &path, wrong_type(&shape));
                (path.clone(), ViolationKind::Type, mutated.to_string())
            }
            // Drop a required field (if this place is an object that has one).
            1 => match (&shape, mutated.pointer_mut(&path)) {
                (S::Obj(fields), Some(Value::Object(m))) if fields.iter().any(|f| f.2) => {
                    let (k, _, _) = fields.iter().find(|f| f.2).unwrap();
                    m.shift_remove(k);
                    (format!("{path}/{k}"), ViolationKind::Required, mutated.to_string())
                }
                _ => return Ok(()),
            },
            // Add an unknown field, a near miss of a real one.
            2 => match (&shape, mutated.pointer_mut(&path)) {
                (S::Obj(fields), Some(Value::Object(m))) => {
                    let near = format!("{}s", fields[0].0);
                    if fields.iter().any(|f| f.0 == near) {
                        return Ok(());
                    }
                    m.insert(near.clone(), json!(1));
                    (format!("{path}/{near}"), ViolationKind::UnknownField, mutated.to_string())
                }
                _ => return Ok(()),
            },
            // Leave an enum, or a range, or a pattern.
            3 => {
                let (bad, k) = match &shape {
                    S::Enum(values) if !values.contains(&format!("{}z", values[0])) => {
                        (json!(format!("{}z", values[0])), ViolationKind::Enum)
                    }
                    S::Int { hi, .. } => (json!(hi + 1), ViolationKind::Range),
                    S::Pattern => (json!("NOPE"), ViolationKind::Pattern),
                    _ => return Ok(()),
                };
                common::set_at(&mut mutated, &path, bad);
                (path.clone(), k, mutated.to_string())
            }
            // Break the JSON.
            _ => (String::new(), ViolationKind::Syntax, common::break_json(&v.to_string(), pick.index(5))),
        };
        let rejection = match val.validate(&text) {
            Ok(t) => return Err(TestCaseError::fail(format!("accepted mutated {text} as {t}"))),
            Err(r) => r,
        };
        let message = rejection.message("tool");
        prop_assert!(
            rejection.violations().iter().any(|x| x.path == expected_path && x.kind == expected_kind),
            "no {:?} at {:?} in\n{}\nfor {}", expected_kind, expected_path, message, text
        );
        if expected_kind != ViolationKind::Syntax {
            let shown = if expected_path.is_empty() { "(root)".to_string() } else { expected_path.clone() };
            let line = format!("- {shown}:");
            prop_assert!(message.contains(&line), "message lacks {}", line);
        }
        prop_assert!(message.ends_with("sending the complete arguments object.") || rejection.is_syntax());
        // Deterministic: same input, same text, same fingerprint.
        let again = val.validate(&text).unwrap_err();
        prop_assert_eq!(again.fingerprint("tool"), rejection.fingerprint("tool"));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        for v in fixed_validators() {
            match v.validate(&text) {
                // What is handed on is valid in turn.
                Ok(out) => prop_assert!(v.validate(&out).is_ok()),
                Err(r) => {
                    prop_assert!(!r.violations().is_empty());
                    prop_assert!(!r.message("t").is_empty());
                }
            }
        }
    }

    #[test]
    fn json_like_text_never_panics_and_passes_agree(text in r#"[\[\]{}",:0-9a-z\\ .eE+\-tfnul]{0,80}|\{"(id|n|f|tags|opt|kind|flag|map|pair|t|v|next|x)": ?(null|true|1|-0|1\.5|"a"|\[\]|\{\}|\{"t": ?"[xy]"\}|\[1, ?"a"\])(, ?"(id|n|f|t|v|x)": ?(null|0|"a_b"|\["a", ?"a"\]))?\}"#) {
        for v in fixed_validators() {
            let full = v.validate(&text);
            if v.fast_accepts(&text) {
                prop_assert!(v.validate_slow(&text).is_ok(), "fast accepted, slow rejected: {text}");
            }
            if let Err(r) = full {
                prop_assert!(!r.violations().is_empty());
            }
        }
    }
}

fn fixed_validators() -> &'static [Validator] {
    static V: std::sync::LazyLock<Vec<Validator>> = std::sync::LazyLock::new(|| {
        [
            json!(true),
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"$ref": "#"}}}, "additionalProperties": false}),
            json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#"}}, {"type": "object", "additionalProperties": {"$ref": "#"}}]}),
            json!({"type": "array", "uniqueItems": true, "items": {"enum": [1, "a", null, [1], {"a": 1}]}}),
            // The fuzz target's main schema: every keyword family at once.
            serde_json::from_str(include_str!("support/every_keyword.json")).unwrap(),
            json!({"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "minProperties": 1, "not": {"required": ["bad"]}}),
        ]
        .iter()
        .map(|s| Validator::new(s).expect("compiles"))
        .collect()
    });
    &V
}
