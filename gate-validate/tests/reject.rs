//! Behaviour of the reject path, one case per kind of problem: what the
//! model reads, and the structured violations behind it.

use serde_json::{Value, json};
use toolgate_validate::{SchemaError, Validator, ViolationKind, unknown_tool};

fn customer() -> Validator {
    Validator::new(&json!({
        "type": "object",
        "properties": {
            "customer_id": {"type": "string", "minLength": 3, "pattern": "^c_[a-z0-9]+$"},
            "include_history": {"type": "boolean", "default": false},
            "status": {"type": "string", "enum": ["open", "closed", "pending"]},
            "qty": {"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "maxItems": 3},
            "shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"}, "r": {"type": "number"}}, "required": ["kind", "r"]},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "square"}, "side": {"type": "number"}}, "required": ["kind", "side"]}
            ]},
            "note": {"type": ["string", "null"]},
            "addr": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}]}
        },
        "required": ["customer_id", "status"],
        "additionalProperties": false,
        "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}, "n": {"type": "integer", "format": "int32"}}, "required": ["sku"]}}
    }))
    .expect("compiles")
}

fn reject(raw: &str) -> toolgate_validate::Rejection {
    customer().validate(raw).expect_err("must be rejected")
}

fn lines(raw: &str) -> Vec<String> {
    reject(raw).violations().iter().map(|v| v.line()).collect()
}

#[test]
fn valid_arguments_pass_through_unchanged() {
    let raw =
        r#"{"customer_id": "c_42", "status": "open", "items": [{"sku": "a", "n": -3}], "note": null, "addr": null}"#;
    let out = customer().validate(raw).expect("valid");
    assert!(matches!(out, std::borrow::Cow::Borrowed(_)));
    assert_eq!(out, raw);
}

#[test]
fn wrong_type_and_missing_field_in_one_message() {
    let r = reject(r#"{"customer_id": 12345}"#);
    assert_eq!(
        r.message("lookup_customer"),
        "`lookup_customer` was called with invalid arguments (2 problems):\n\
         - /customer_id: expected string of at least 3 characters and matching ^c_[a-z0-9]+$, got integer 12345\n\
         - /status: required field is missing (expected one of \"open\", \"closed\", \"pending\")\n\
         Call `lookup_customer` again with these fields corrected, sending the complete arguments object."
    );
    let v = &r.violations()[0];
    assert_eq!((v.path.as_str(), v.kind), ("/customer_id", ViolationKind::Type));
    assert_eq!(v.got, "integer 12345");
    let json = serde_json::to_value(v).unwrap();
    assert_eq!(json["path"], "/customer_id");
    assert_eq!(json["expected"], v.expected.as_str());
    assert_eq!(json["got"], "integer 12345");
}

#[test]
fn unknown_field_near_miss_and_enum_near_miss() {
    assert_eq!(
        lines(r#"{"custmer_id": "c_1", "status": "opne"}"#),
        [
            "/custmer_id: unknown field; did you mean `customer_id`?",
            "/status: expected one of \"open\", \"closed\", \"pending\", got string \"opne\"; did you mean \"open\"?",
            "/customer_id: required field is missing (expected string of at least 3 characters and matching ^c_[a-z0-9]+$); it may have been sent as `custmer_id`",
        ]
    );
}

#[test]
fn unknown_field_far_from_any_lists_the_allowed_ones() {
    let r = reject(r#"{"customer_id": "c_1", "status": "open", "zzz": 1}"#);
    let v = &r.violations()[0];
    assert_eq!(v.kind, ViolationKind::UnknownField);
    assert!(
        v.line()
            .starts_with("/zzz: unknown field; allowed fields: `customer_id`, `include_history`, `status`"),
        "{}",
        v.line()
    );
}

#[test]
fn a_second_unknown_field_points_back_to_the_listing() {
    let r = reject(r#"{"customer_id": "c_1", "status": "open", "zzz": 1, "qqqq": 2}"#);
    let hints: Vec<&str> = r.violations().iter().filter_map(|v| v.hint.as_deref()).collect();
    assert_eq!(hints.len(), 2, "{hints:?}");
    assert!(hints[0].starts_with("allowed fields: `customer_id`"), "{}", hints[0]);
    assert_eq!(hints[1], "remove it (the allowed fields are listed above)");
}

#[test]
fn a_near_miss_does_not_count_as_the_listing() {
    let r = reject(r#"{"customer_id": "c_1", "status": "open", "stauts": "x", "zzz": 1}"#);
    let hints: Vec<&str> = r.violations().iter().filter_map(|v| v.hint.as_deref()).collect();
    assert_eq!(hints[0], "did you mean `status`?");
    assert!(hints[1].starts_with("allowed fields: `customer_id`"), "{}", hints[1]);
}

#[test]
fn camel_case_is_a_near_miss() {
    let r = reject(r#"{"customerId": "c_1", "status": "open"}"#);
    assert_eq!(r.violations()[0].hint.as_deref(), Some("did you mean `customer_id`?"));
}

#[test]
fn bounds_patterns_lengths_and_nested_array_paths() {
    assert_eq!(
        lines(
            r#"{"customer_id": "C-1", "status": "open", "qty": 300, "items": [{"sku": "a"}, {"sku": "b"}, {"sku": 3, "n": 1.5}, {}]}"#
        ),
        [
            "/customer_id: expected string of at least 3 characters and matching ^c_[a-z0-9]+$, got string \"C-1\"",
            "/qty: expected integer from 1 to 255, got integer 300",
            "/items: expected array of at most 3 items, got array of 4 items",
            "/items/2/sku: expected string, got integer 3",
            "/items/2/n: expected integer from -2147483648 to 2147483647, got number 1.5",
            "/items/3/sku: required field is missing (expected string)",
        ]
    );
    let r = reject(r#"{"customer_id": "c", "status": "open"}"#);
    assert_eq!(r.violations()[0].kind, ViolationKind::Length);
    assert_eq!(r.violations()[0].got, "string \"c\" of 1 character");
}

#[test]
fn tagged_alternatives_are_diagnosed_through_their_tag() {
    assert_eq!(
        lines(r#"{"customer_id": "c_abc", "status": "open", "shape": {"kind": "circle"}}"#),
        ["/shape/r: required field is missing (expected number)"]
    );
    assert_eq!(
        lines(r#"{"customer_id": "c_abc", "status": "open", "shape": {"kind": "circel", "r": 1}}"#),
        ["/shape/kind: expected one of \"circle\", \"square\", got string \"circel\"; did you mean \"circle\"?"]
    );
    assert_eq!(
        lines(r#"{"customer_id": "c_abc", "status": "open", "shape": {"r": 1}}"#),
        ["/shape/kind: required field is missing (expected one of \"circle\", \"square\")"]
    );
}

#[test]
fn optional_struct_reports_inside_the_struct() {
    assert_eq!(
        lines(r#"{"customer_id": "c_abc", "status": "open", "addr": {"n": "x"}}"#),
        [
            "/addr/n: expected integer from -2147483648 to 2147483647, got string \"x\"",
            "/addr/sku: required field is missing (expected string)",
        ]
    );
    assert_eq!(
        lines(r#"{"customer_id": "c_abc", "status": "open", "addr": 7}"#),
        ["/addr: expected object or null, got integer 7"]
    );
}

#[test]
fn null_for_optional_field_is_dropped_from_the_text_handed_on() {
    let out = customer()
        .validate(r#"{"customer_id": "c_abc", "status": "open", "include_history": null, "qty": null}"#)
        .expect("nulls for optional fields count as absent");
    assert_eq!(out, r#"{"customer_id":"c_abc","status":"open"}"#);
    // A nullable field keeps its null; a required one is still an error.
    let kept = customer()
        .validate(r#"{"customer_id": "c_abc", "status": "open", "note": null}"#)
        .unwrap();
    assert!(kept.contains("\"note\": null"));
    assert_eq!(
        lines(r#"{"customer_id": "c_abc", "status": null}"#),
        ["/status: expected one of \"open\", \"closed\", \"pending\", got null"]
    );
}

#[test]
fn duplicate_fields_are_rejected() {
    let r = reject(r#"{"customer_id": "c_abc", "status": "open", "status": "closed"}"#);
    assert_eq!(r.violations()[0].kind, ViolationKind::DuplicateField);
    assert_eq!(
        r.violations()[0].line(),
        "/status: field is sent more than once; send it once"
    );
}

#[test]
fn long_values_are_cut_and_stay_on_one_line() {
    let long = "x\n".repeat(100);
    let raw = json!({"customer_id": long, "status": "open"}).to_string();
    let r = reject(&raw);
    let got = &r.violations()[0].got;
    assert!(got.contains('…') && got.ends_with("(200 characters)"), "{got}");
    assert!(got.chars().count() < 120);
    let message = r.message("t");
    assert_eq!(message.lines().count(), 3, "{message}");
}

#[test]
fn not_json_names_line_column_and_the_slip() {
    let cases: [(&str, &str); 9] = [
        (
            r#"{"customer_id": "c_abc", "status": "open",}"#,
            "remove the comma after the last element",
        ),
        (r#"{'customer_id': 'c_abc'}"#, "double quotes"),
        (
            r#"{"customer_id": "c_abc", "status": True}"#,
            "true, false and null (lowercase)",
        ),
        (r#"{"customer_id": "c_abc", "status": "open""#, "ends early"),
        (
            r#"{"customer_id": "c_abc" "status": "open"}"#,
            "add a comma between fields",
        ),
        (
            r#"{"customer_id": "c_abc"} {"status": "open"}"#,
            "exactly one JSON object",
        ),
        ("", "the arguments are empty"),
        ("```json\n{}\n```", "code fence"),
        ("{customer_id: \"c\"}", "double quotes"),
    ];
    for (raw, hint) in cases {
        let r = reject(raw);
        assert!(r.is_syntax(), "{raw}");
        let v = &r.violations()[0];
        assert!(
            v.hint.as_deref().unwrap_or_default().contains(hint),
            "{raw}: {:?}",
            v.hint
        );
        assert!(v.position.is_some());
        let m = r.message("lookup_customer");
        assert!(
            m.starts_with("`lookup_customer` was called with arguments that are not valid JSON:\n"),
            "{m}"
        );
        assert!(m.contains("shaped like {\"customer_id\": <string"), "{m}");
    }
    let r = reject(r#"{"customer_id": "c_abc", "status": "open",}"#);
    assert_eq!(r.violations()[0].position, Some((1, 43)));
    assert!(r.violations()[0].got.contains("line 1 column 43"));
}

#[test]
fn object_wrapped_in_a_string_gets_a_hint() {
    let r = reject(r#""{\"customer_id\": \"c_abc\", \"status\": \"open\"}""#);
    let v = &r.violations()[0];
    assert_eq!((v.path.as_str(), v.kind), ("", ViolationKind::Type));
    assert!(v.hint.as_deref().unwrap().contains("wrapped in a string"));
    assert!(v.line().starts_with("(root): expected object, got string"));
}

#[test]
fn non_object_root() {
    assert_eq!(lines("[1, 2]"), ["(root): expected object, got array of 2 items"]);
    assert_eq!(lines("null"), ["(root): expected object, got null"]);
}

#[test]
fn messages_and_fingerprints_are_deterministic() {
    let raw = r#"{"custmer_id": 1, "status": "x", "qty": -1}"#;
    let a = reject(raw);
    let b = reject(raw);
    assert_eq!(a.message("t"), b.message("t"));
    assert_eq!(a.fingerprint("t"), b.fingerprint("t"));
    assert_eq!(a.fingerprint("t").to_string().len(), 64);
    assert_ne!(a.fingerprint("t"), a.fingerprint("u"));
    assert_ne!(a.fingerprint("t"), reject(r#"{"status": "x"}"#).fingerprint("t"));
}

#[test]
fn many_problems_are_capped_in_the_message() {
    let mut fields = serde_json::Map::new();
    for i in 0..40 {
        fields.insert(format!("extra_{i}"), json!(i));
    }
    let r = reject(&Value::Object(fields).to_string());
    assert_eq!(r.violations().len(), 42);
    let m = r.message("t");
    assert!(m.contains("(42 problems)"));
    assert!(m.contains("- … and 22 more problems\n"), "{m}");
}

#[test]
fn unknown_tool_lists_all_names_when_few() {
    let u = unknown_tool("lookup_custmer", &["lookup_customer", "charge_card"]);
    assert_eq!(
        u.message(),
        "There is no tool named `lookup_custmer`. Available tools: `lookup_customer`, `charge_card`. Call one of them by its exact name."
    );
    assert_eq!(u.more, 0);
}

#[test]
fn unknown_tool_lists_every_name_when_they_fit() {
    let names: Vec<String> = (0..20).map(|i| format!("tool_{i}")).collect();
    let mut valid: Vec<&str> = names.iter().map(String::as_str).collect();
    valid.push("lookup_customer");
    valid.push("lookup_order");
    let u = unknown_tool("Lookup_Customer", &valid);
    assert_eq!(u.suggestions[0], "lookup_customer");
    assert_eq!(u.suggestions.len(), 22);
    assert_eq!(u.more, 0);
    for name in &valid {
        assert!(u.message().contains(&format!("`{name}`")), "{name}");
    }
    // Even a case-only difference is listed, never chosen.
    assert!(
        u.message()
            .starts_with("There is no tool named `Lookup_Customer`. Available tools: `lookup_customer`, ")
    );
    assert_eq!(u.fingerprint(), unknown_tool("Lookup_Customer", &valid).fingerprint());
    // The text does not depend on the order the names are given in.
    valid.reverse();
    assert_eq!(u.fingerprint(), unknown_tool("Lookup_Customer", &valid).fingerprint());
}

#[test]
fn unknown_tool_with_no_tools() {
    assert!(unknown_tool("x", &[]).message().contains("no tools are available"));
}

#[test]
fn schema_errors_are_explicit() {
    assert!(matches!(
        Validator::new(&json!({"$ref": "#/$defs/Missing"})),
        Err(SchemaError::UnresolvedRef { .. })
    ));
    assert!(matches!(
        Validator::new(&json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}})),
        Err(SchemaError::RefCycle { .. })
    ));
    assert!(matches!(
        Validator::new(&json!({"type": "object", "if": {}, "then": {}})),
        Err(SchemaError::Unsupported { .. })
    ));
    assert!(matches!(
        Validator::new(&json!({"type": "string", "pattern": "("})),
        Err(SchemaError::Pattern { .. })
    ));
    assert!(matches!(
        Validator::new(&json!({"type": "strin"})),
        Err(SchemaError::Invalid { .. })
    ));
    assert!(matches!(Validator::new(&json!(3)), Err(SchemaError::Invalid { .. })));
}

#[test]
fn recursive_schema_and_deep_nesting_do_not_overflow() {
    let v = Validator::new(&json!({
        "type": "object",
        "properties": {"child": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}, "name": {"type": "string"}},
        "additionalProperties": false
    }))
    .unwrap();
    let mut ok = String::from("null");
    for _ in 0..100 {
        ok = format!(r#"{{"child":{ok}}}"#);
    }
    assert!(v.validate(&ok).is_ok());
    let mut deep = String::from("1");
    for _ in 0..5000 {
        deep = format!(r#"{{"child":{deep}}}"#);
    }
    let r = v.validate(&deep).unwrap_err();
    assert!(r.is_syntax());
    assert!(r.violations()[0].hint.as_deref().unwrap().contains("127 levels"));
    let arrays = "[".repeat(100_000);
    assert!(Validator::new(&json!(true)).unwrap().validate(&arrays).is_err());
}

#[test]
fn boolean_schemas_and_const() {
    let anything = Validator::new(&json!(true)).unwrap();
    assert!(anything.validate(r#"{"a": [1, "x", null]}"#).is_ok());
    let nothing = Validator::new(&json!(false)).unwrap();
    assert_eq!(
        nothing.validate("{}").unwrap_err().violations()[0].kind,
        ViolationKind::Forbidden
    );
    let c = Validator::new(&json!({"const": {"a": 1}})).unwrap();
    assert!(
        c.validate(r#"{"a": 1.0}"#).is_ok(),
        "1 and 1.0 are equal in JSON Schema"
    );
    assert_eq!(
        c.validate(r#"{"a": 2}"#).unwrap_err().violations()[0].kind,
        ViolationKind::Enum
    );
}

#[test]
fn unique_items_prefix_items_and_counts() {
    let v = Validator::new(&json!({
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2
    }))
    .unwrap();
    assert!(v.validate(r#"[1, "a"]"#).is_ok());
    assert_eq!(
        v.validate(r#"[1, 2]"#).unwrap_err().violations()[0].line(),
        "/1: expected string, got integer 2"
    );
    assert_eq!(
        v.validate("[1]").unwrap_err().violations()[0].kind,
        ViolationKind::ItemCount
    );
    let u = Validator::new(&json!({"type": "array", "uniqueItems": true})).unwrap();
    assert!(u.validate(r#"[1, "1", [1], {"a": 1}]"#).is_ok());
    let r = u.validate(r#"[{"a": 1, "b": 2}, {"b": 2, "a": 1.0}]"#).unwrap_err();
    assert_eq!(r.violations()[0].kind, ViolationKind::UniqueItems);
    assert_eq!(r.violations()[0].path, "/1");
}

#[test]
fn numbers_follow_serde() {
    let v = Validator::new(&json!({"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255})).unwrap();
    for ok in ["0", "255"] {
        assert!(v.validate(ok).is_ok(), "{ok}");
    }
    for bad in ["256", "-1", "1.0", "-0", "1e2", "18446744073709551616"] {
        assert!(v.validate(bad).is_err(), "{bad}");
    }
    let f = Validator::new(&json!({"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5})).unwrap();
    assert!(f.validate("1.5").is_ok());
    assert_eq!(
        f.validate("0").unwrap_err().violations()[0].expected,
        "number > 0 that is a multiple of 0.5"
    );
    assert_eq!(
        f.validate("0.7").unwrap_err().violations()[0].kind,
        ViolationKind::Range
    );
    assert!(f.validate("1e400").is_err(), "out of f64 range, as serde_json says");
}

#[test]
fn validator_is_send_sync_and_clone() {
    fn assert_traits<T: Send + Sync + Clone>() {}
    assert_traits::<Validator>();
    let v = customer();
    let handle = std::thread::spawn(move || v.validate(r#"{"customer_id":"c_1","status":"open"}"#).is_ok());
    assert!(handle.join().unwrap());
}

/// Adversarial schemas: deep nesting and long reference chains are refused
/// at compile time or bounded at validation time, on a 2 MiB stack (the
/// default for spawned threads), in a debug build.
#[test]
fn adversarial_schemas_stay_within_a_small_stack() {
    let result = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            // 10,000 nested `items`: refused, not a stack overflow.
            let mut deep = json!({"type": "integer"});
            for _ in 0..10_000 {
                // Not `json!`, which would serialize (recursively) the inner value.
                let mut m = serde_json::Map::new();
                m.insert("type".into(), json!("array"));
                m.insert("items".into(), deep);
                deep = Value::Object(m);
            }
            assert!(matches!(Validator::new(&deep), Err(SchemaError::Invalid { .. })));
            std::mem::forget(deep); // dropping a 10,000-deep Value is serde_json's recursion, not ours
            // A chain of 20 `$ref`s per data level, data nested 120 deep.
            let mut defs = serde_json::Map::new();
            for i in 0..20 {
                let next = if i == 19 {
                    json!({"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/d0"}}, {"type": "integer"}]})
                } else {
                    json!({"allOf": [{"$ref": format!("#/$defs/d{}", i + 1)}]})
                };
                defs.insert(format!("d{i}"), next);
            }
            let schema = json!({"$ref": "#/$defs/d0", "$defs": defs});
            let v = Validator::new(&schema).expect("a long but finite chain compiles");
            let text = format!("{}1{}", "[".repeat(120), "]".repeat(120));
            let r = v.validate(&text).expect_err("the schema depth bound is reached");
            assert!(r.violations().iter().any(|x| x.kind == ViolationKind::TooDeep));
            let bad = format!("{}\"x\"{}", "[".repeat(120), "]".repeat(120));
            assert!(v.validate(&bad).is_err());
        })
        .unwrap()
        .join();
    assert!(result.is_ok());
}
