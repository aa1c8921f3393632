//! Differential tests: for Rust types deriving `Deserialize + JsonSchema`,
//! the validator (on schemars' schema) accepts exactly what
//! `serde_json::from_str::<T>` accepts, over generated valid and mutated
//! inputs. "Exactly" modulo the null rule: when the validator accepts, serde
//! must accept the text it hands on; when it rejects, serde must reject the
//! raw text.

mod common;

use std::collections::HashMap;
use std::sync::LazyLock;

use proptest::prelude::*;
use schemars::{JsonSchema, schema_for};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolgate_validate::Validator;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Order {
    id: String,
    qty: u8,
    delta: i16,
    count: u32,
    small: i32,
    big: u64,
    signed: i64,
    tiny: i8,
    port: u16,
    ratio: f64,
    weight: f32,
    flag: bool,
    note: Option<String>,
    #[serde(default)]
    priority: u32,
    #[serde(default)]
    urgent: bool,
    status: Status,
    shape: Shape,
    items: Vec<Item>,
    addr: Option<Address>,
    tags: Vec<String>,
    pair: (i32, String),
    counts: HashMap<String, i64>,
    ident: Ident,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Status {
    Open,
    Closed,
    Pending,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
#[allow(dead_code)]
enum Shape {
    Circle { r: f64 },
    Square { side: u16, label: Option<String> },
    Empty,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Item {
    sku: String,
    count: u32,
    meta: Option<Meta>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Meta {
    color: Status,
    #[serde(default)]
    weight: u8,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Address {
    street: String,
    zip: Option<u16>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Ident {
    Num(u32),
    Text(String),
}

/// A recursive type: schemars emits `{"$ref": "#"}` for the parent.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Node {
    name: String,
    children: Vec<Node>,
    parent: Option<Box<Node>>,
}

/// A small tool-argument struct like the ones `#[tool]` generates.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Lookup {
    customer_id: String,
    #[serde(default)]
    include_history: bool,
    limit: Option<u8>,
}

/// One input to try: a valid value, optionally mutated.
#[derive(Debug, Clone)]
enum Mutation {
    None,
    Replace(prop::sample::Index, usize),
    Remove(prop::sample::Index),
    AddField(prop::sample::Index, bool),
    Break(usize),
    DuplicateRootKey(prop::sample::Index),
    Null(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => Just(Mutation::None),
        4 => (any::<prop::sample::Index>(), 0..common::interesting().len()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        2 => any::<prop::sample::Index>().prop_map(Mutation::Remove),
        1 => (any::<prop::sample::Index>(), any::<bool>()).prop_map(|(i, b)| Mutation::AddField(i, b)),
        1 => (0usize..5).prop_map(Mutation::Break),
        1 => any::<prop::sample::Index>().prop_map(Mutation::DuplicateRootKey),
        2 => any::<prop::sample::Index>().prop_map(Mutation::Null),
    ]
}

fn apply(mut v: Value, m: &Mutation) -> String {
    let sites = common::sites(&v);
    match m {
        Mutation::None => {}
        Mutation::Replace(i, w) => {
            let (p, _) = i.get(&sites);
            common::set_at(&mut v, &p.clone(), common::interesting()[*w].clone());
        }
        Mutation::Remove(i) => {
            let (p, _) = i.get(&sites);
            common::remove_at(&mut v, &p.clone());
        }
        Mutation::AddField(i, near) => {
            let objects: Vec<&(String, Value)> = sites.iter().filter(|(_, x)| x.is_object()).collect();
            if let Some((p, o)) = objects.get(i.index(objects.len().max(1))).copied() {
                let key = match (near, o.as_object().and_then(|m| m.keys().next())) {
                    (true, Some(k)) => format!("{k}x"),
                    _ => "unexpected".to_string(),
                };
                if let Some(Value::Object(m)) = v.pointer_mut(p) {
                    m.insert(key, Value::from(1));
                }
            }
        }
        Mutation::Break(c) => return common::break_json(&v.to_string(), *c),
        Mutation::DuplicateRootKey(i) => {
            if let Value::Object(m) = &v
                && !m.is_empty()
            {
                let (k, x) = m
                    .iter()
                    .nth(i.index(m.len()))
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .unwrap_or_default();
                let text = v.to_string();
                return format!(
                    "{{{}:{},{}",
                    serde_json::to_string(&k).unwrap_or_default(),
                    x,
                    &text[1..]
                );
            }
        }
        Mutation::Null(i) => {
            let (p, _) = i.get(&sites);
            common::set_at(&mut v, &p.clone(), Value::Null);
        }
    }
    v.to_string()
}

fn check<T: DeserializeOwned + std::fmt::Debug>(validator: &Validator, text: &str) -> Result<(), TestCaseError> {
    let result = validator.validate(text);
    match &result {
        Ok(normalized) => {
            let r = serde_json::from_str::<T>(normalized);
            prop_assert!(r.is_ok(), "validator accepted but serde rejected {normalized}: {r:?}");
        }
        Err(rejection) => {
            let r = serde_json::from_str::<T>(text);
            prop_assert!(
                r.is_err(),
                "validator rejected but serde accepted {text}: {}",
                rejection.message("t")
            );
            prop_assert!(!rejection.violations().is_empty());
        }
    }
    // The typed path agrees with validate-then-deserialize.
    let parsed = validator.parse::<T>(text);
    prop_assert_eq!(
        parsed.is_ok(),
        result.is_ok(),
        "parse disagrees on {}: {:?}",
        text,
        parsed.err().map(|r| r.message("t"))
    );
    if validator.fast_accepts(text) {
        prop_assert!(
            validator.validate_slow(text).is_ok(),
            "fast pass accepted what the diagnostic pass rejects: {text}"
        );
    }
    Ok(())
}

fn inputs<T: JsonSchema>(depth: u32) -> (Validator, BoxedStrategy<String>) {
    let schema = serde_json::to_value(schema_for!(T)).expect("schema");
    let validator = Validator::new(&schema).expect("compiles");
    let strategy = (common::valid_value(&schema, &schema, depth), mutation())
        .prop_map(|(v, m)| apply(v, &m))
        .boxed();
    (validator, strategy)
}

static ORDER: LazyLock<Validator> = LazyLock::new(|| inputs::<Order>(0).0);
static NODE: LazyLock<Validator> = LazyLock::new(|| inputs::<Node>(0).0);
static LOOKUP: LazyLock<Validator> = LazyLock::new(|| inputs::<Lookup>(0).0);

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn order_accepts_exactly_what_serde_accepts(text in inputs::<Order>(4).1) {
        check::<Order>(&ORDER, &text)?;
    }

    #[test]
    fn recursive_node_accepts_exactly_what_serde_accepts(text in inputs::<Node>(5).1) {
        check::<Node>(&NODE, &text)?;
    }

    #[test]
    fn lookup_accepts_exactly_what_serde_accepts(text in inputs::<Lookup>(3).1) {
        check::<Lookup>(&LOOKUP, &text)?;
    }
}

/// Hand-picked edge cases where serde's number handling is surprising.
#[test]
fn number_edges_match_serde() {
    let (validator, _) = inputs::<Lookup>(1);
    for limit in [
        "0",
        "255",
        "256",
        "-1",
        "1.0",
        "-0",
        "1e2",
        "25.5",
        "null",
        "\"5\"",
        "18446744073709551616",
    ] {
        let text = format!(r#"{{"customer_id":"c","limit":{limit}}}"#);
        let ok = validator.validate(&text).is_ok();
        let serde_ok = serde_json::from_str::<Lookup>(&text).is_ok();
        assert_eq!(ok, serde_ok, "limit = {limit}");
    }
}

/// The null rule: `#[serde(default)] bool` sent as null is dropped, and the
/// normalized text deserializes.
#[test]
fn optional_null_is_dropped_and_deserializes() {
    let (validator, _) = inputs::<Lookup>(1);
    let text = r#"{"customer_id":"c","include_history":null,"limit":null}"#;
    assert!(
        serde_json::from_str::<Lookup>(text).is_err(),
        "serde alone refuses null for bool"
    );
    let normalized = validator.validate(text).expect("null for an optional field is absent");
    assert_eq!(normalized, r#"{"customer_id":"c","limit":null}"#);
    let args: Lookup = serde_json::from_str(&normalized).expect("deserializes");
    assert!(!args.include_history);
}

/// The generated inputs exercise both sides: plenty are accepted and plenty
/// rejected, so the properties above are not vacuous.
#[test]
fn generated_inputs_are_mixed() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let (validator, strategy) = inputs::<Order>(4);
    let mut runner = TestRunner::deterministic();
    let (mut ok, mut err) = (0, 0);
    for _ in 0..400 {
        let text = strategy.new_tree(&mut runner).expect("value").current();
        if validator.validate(&text).is_ok() {
            ok += 1;
        } else {
            err += 1;
        }
    }
    assert!(ok > 40 && err > 40, "accepted {ok}, rejected {err}");
}

/// All the shapes above are ones serde enforces completely, so `parse`
/// takes its one-parse route for them; extra constraints turn that off.
#[test]
fn serde_checks_everything_for_derived_schemas_only() {
    assert!(ORDER.serde_checks_everything());
    assert!(NODE.serde_checks_everything());
    assert!(LOOKUP.serde_checks_everything());
    let constrained = serde_json::json!({
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^c_"}},
        "required": ["id"]
    });
    assert!(!Validator::new(&constrained).unwrap().serde_checks_everything());
    let bounded = serde_json::json!({"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255});
    assert!(!Validator::new(&bounded).unwrap().serde_checks_everything());
}

/// With a constraint serde does not know, `parse` still rejects.
#[test]
fn parse_enforces_constraints_serde_does_not() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Id {
        id: String,
    }
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^c_"}},
        "required": ["id"],
        "additionalProperties": false
    });
    let v = Validator::new(&schema).unwrap();
    assert!(v.parse::<Id>(r#"{"id":"c_1"}"#).is_ok());
    let r = v.parse::<Id>(r#"{"id":"x"}"#).unwrap_err();
    assert_eq!(r.violations()[0].path, "/id");
    assert_eq!(r.violations()[0].kind, toolgate_validate::ViolationKind::Pattern);
}
