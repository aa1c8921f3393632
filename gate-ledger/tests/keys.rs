//! Properties of fingerprints and intent keys (L6, L7, L25): the canonical form
//! ignores key order, whitespace and number spelling, notices every real
//! change, and keys never carry raw user data; decision ids sort by time.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolgate_ledger::{
    canonical_json, derived_intent_key, fingerprint, key_args_fingerprint, minted_intent_key, validate_key,
};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<u64>().prop_map(|u| json!(u)),
        (-1.0e12f64..1.0e12).prop_map(|f| json!(f)),
        "[a-zé\"\\\\\n ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// The same value with every object's keys in reverse order.
fn reversed(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        Value::Object(m) => {
            let mut entries: Vec<_> = m.iter().collect();
            entries.reverse();
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), reversed(v))).collect())
        }
        other => other.clone(),
    }
}

proptest! {
    #[test]
    fn key_order_and_whitespace_do_not_matter(v in arb_json()) {
        let pretty = serde_json::to_string_pretty(&reversed(&v)).unwrap_or_default();
        let reparsed: Value = serde_json::from_str(&pretty).unwrap_or(Value::Null);
        prop_assert_eq!(fingerprint(&v), fingerprint(&reparsed));
    }

    #[test]
    fn canonical_form_is_a_fixed_point(v in arb_json()) {
        let c = canonical_json(&v);
        let back: Value = serde_json::from_str(&c).unwrap_or(Value::Null);
        prop_assert_eq!(canonical_json(&back), c);
    }

    #[test]
    fn integral_floats_equal_integers(i in -(1i64 << 52)..(1i64 << 52)) {
        prop_assert_eq!(fingerprint(&json!({"n": i})), fingerprint(&json!({"n": i as f64})));
    }

    #[test]
    fn a_nested_change_changes_the_fingerprint(v in arb_json(), extra in "[a-z]{1,6}") {
        let wrapped = json!({"outer": {"inner": v.clone()}});
        let changed = json!({"outer": {"inner": [v, extra]}});
        prop_assert_ne!(fingerprint(&wrapped), fingerprint(&changed));
    }

    #[test]
    fn keys_are_valid_and_hide_their_inputs(task in "[a-z0-9@.]{1,30}", label in ".{0,40}") {
        let minted = minted_intent_key(&task, &label);
        prop_assert!(validate_key(&minted).is_ok());
        prop_assert!(minted.starts_with("gk1m-"));
        prop_assert!(minted[5..].bytes().all(|b| b.is_ascii_hexdigit()));
        let derived = derived_intent_key(&task, "charge_card", &fingerprint(&json!(label)));
        prop_assert!(validate_key(&derived).is_ok());
        prop_assert!(derived.starts_with("gk1d-"));
        prop_assert_ne!(minted, derived);
    }

    #[test]
    fn distinct_inputs_give_distinct_keys(a in "[a-z]{0,6}", b in "[a-z]{0,6}", c in "[a-z]{0,6}") {
        // Concatenation ambiguity: (a, b+c) vs (a+b, c).
        if !b.is_empty() {
            prop_assert_ne!(
                minted_intent_key(&a, &format!("{b}{c}")),
                minted_intent_key(&format!("{a}{b}"), &c)
            );
        }
    }
}

#[test]
fn documented_normalisations() {
    assert_eq!(canonical_json(&json!({"b": 1, "a": 2})), r#"{"a":2,"b":1}"#);
    let parsed: Value = serde_json::from_str(r#"[1.0, -0.0, 1e2, 0.5, 1e300]"#).unwrap_or_default();
    assert_eq!(canonical_json(&parsed), "[1,0,100,5e-1,1e300]");
    assert_eq!(canonical_json(&json!("a\"\n")), r#""a\"\n""#);
    assert_ne!(fingerprint(&json!({"a": "1"})), fingerprint(&json!({"a": 1})));
    assert_eq!(
        fingerprint(&json!({})),
        "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    );
}

#[test]
fn only_key_args_count() {
    let key = ["customer_id", "amount_cents"];
    let a = json!({"customer_id": "c1", "amount_cents": 5, "note": "for the March invoice"});
    let b = json!({"note": "March invoice, as discussed", "amount_cents": 5.0, "customer_id": "c1"});
    let c = json!({"customer_id": "c1", "amount_cents": 6, "note": "for the March invoice"});
    assert_eq!(key_args_fingerprint(&a, &key), key_args_fingerprint(&b, &key));
    assert_ne!(key_args_fingerprint(&a, &key), key_args_fingerprint(&c, &key));
    // No marked argument: every argument counts.
    assert_ne!(key_args_fingerprint(&a, &[]), key_args_fingerprint(&b, &[]));
    assert_eq!(key_args_fingerprint(&a, &[]), fingerprint(&a));
    // An omitted key argument differs from an explicit null.
    let omitted = json!({"customer_id": "c1"});
    let null = json!({"customer_id": "c1", "amount_cents": null});
    assert_ne!(key_args_fingerprint(&omitted, &key), key_args_fingerprint(&null, &key));
}

#[test]
fn emails_never_appear_in_keys() {
    let k = minted_intent_key("task-ann@example.com", "refund ann@example.com");
    assert!(!k.contains("ann"));
    assert!(!k.contains('@'));
}

// A decision id is the time in milliseconds (12 hex digits) then 80 random
// bits (20 hex digits): ids of one process sort by time, and never repeat.
#[test]
fn decision_ids_start_with_the_time_and_end_random() {
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let id = toolgate_ledger::DecisionId::now().to_string();
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    assert_eq!(id.len(), 32, "{id}");
    assert!(
        id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "{id}"
    );
    let millis = u128::from_str_radix(&id[..12], 16).unwrap();
    assert!((before..=after).contains(&millis), "{millis} not in {before}..={after}");
    let others: std::collections::HashSet<toolgate_ledger::DecisionId> =
        (0..1000).map(|_| toolgate_ledger::DecisionId::now()).collect();
    assert_eq!(others.len(), 1000);
}

// A decision made at a given time (the record's own `at`) carries that time:
// 1,764,547,200,000 ms is 0x019ad7358400.
#[test]
fn a_decision_id_for_a_given_time_starts_with_that_time() {
    let at = toolgate_ledger::Timestamp::from_millis(1_764_547_200_000);
    let id = toolgate_ledger::DecisionId::at(at);
    assert_eq!(&id.to_string()[..12], "019ad7358400", "{id}");
    assert_ne!(id, toolgate_ledger::DecisionId::at(at), "the random part differs");
}

// Each thread draws its ids' random bits from its own generator: threads
// deciding in the same millisecond still never make the same id.
#[test]
fn threads_deciding_at_the_same_time_make_distinct_ids() {
    let at = toolgate_ledger::Timestamp::from_millis(1_764_547_200_000);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                (0..1000)
                    .map(|_| toolgate_ledger::DecisionId::at(at))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let ids: std::collections::HashSet<toolgate_ledger::DecisionId> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("the thread finishes"))
        .collect();
    assert_eq!(ids.len(), 4000);
}
