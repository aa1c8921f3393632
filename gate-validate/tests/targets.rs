//! Targets (allowed values, declared field names, tool names) are never
//! truncated in a rejection: the model cannot hit a target it cannot read.
//! Long lists of them stay within `LIST_BUDGET_CHARS`, closest first, with
//! every value whole and an honest count of the rest.

use std::collections::HashSet;

use serde_json::json;
use toolgate_validate::{LIST_BUDGET_CHARS, MAX_ECHO_CHARS, Validator, ViolationKind, unknown_tool};

const LONG_PLAN: &str = "Priority support for enterprise accounts (24/7 phone)";

fn plans() -> Validator {
    Validator::new(&json!({
        "type": "object",
        "properties": {
            "plan": {"type": "string", "enum": ["Standard support", LONG_PLAN, "Community forum only"]},
            "include_full_transaction_history_for_all_accounts": {"type": "boolean"},
            "tier": {"const": "Enterprise plus with dedicated account management"}
        },
        "required": ["plan", "include_full_transaction_history_for_all_accounts"],
        "additionalProperties": false
    }))
    .expect("compiles")
}

/// The spans between backticks of a message, in order.
fn code_spans(message: &str) -> Vec<&str> {
    message.split('`').skip(1).step_by(2).collect()
}

#[test]
fn an_enum_value_longer_than_the_echo_limit_appears_whole() {
    assert!(LONG_PLAN.chars().count() >= 47 && LONG_PLAN.chars().count() > MAX_ECHO_CHARS);
    let r = plans()
        .validate(
            r#"{"plan": "Priority support for enterprise", "include_full_transaction_history_for_all_accounts": true}"#,
        )
        .unwrap_err();
    let v = &r.violations()[0];
    assert_eq!(v.kind, ViolationKind::Enum);
    assert_eq!(
        v.line(),
        format!(
            "/plan: expected one of \"Standard support\", \"{LONG_PLAN}\", \"Community forum only\", \
             got string \"Priority support for enterprise\"; did you mean \"{LONG_PLAN}\"?"
        )
    );
    assert!(r.message("set_plan").contains(&format!("\"{LONG_PLAN}\"")));
    // Missing, the field still lists the value whole.
    let r = plans()
        .validate(r#"{"include_full_transaction_history_for_all_accounts": true}"#)
        .unwrap_err();
    assert_eq!(
        r.violations()[0].line(),
        format!(
            "/plan: required field is missing (expected one of \"Standard support\", \"{LONG_PLAN}\", \"Community forum only\")"
        )
    );
    assert!(!r.message("set_plan").contains('…'), "{}", r.message("set_plan"));
}

#[test]
fn a_long_const_value_appears_whole() {
    let r = plans()
        .validate(r#"{"plan": "Standard support", "include_full_transaction_history_for_all_accounts": true, "tier": "Enterprise"}"#)
        .unwrap_err();
    assert_eq!(
        r.violations()[0].line(),
        "/tier: expected \"Enterprise plus with dedicated account management\", got string \"Enterprise\"; \
         did you mean \"Enterprise plus with dedicated account management\"?"
    );
}

#[test]
fn what_was_sent_is_still_shortened() {
    let sent = "x".repeat(100);
    let raw = json!({"plan": sent, "include_full_transaction_history_for_all_accounts": true}).to_string();
    let got = plans().validate(&raw).unwrap_err().violations()[0].got.clone();
    assert_eq!(
        got,
        format!("string \"{}…\" (100 characters)", "x".repeat(MAX_ECHO_CHARS))
    );
}

#[test]
fn long_field_names_appear_whole() {
    let long = "include_full_transaction_history_for_all_accounts";
    assert!(long.chars().count() > MAX_ECHO_CHARS);
    let r = plans()
        .validate(r#"{"plan": "Standard support", "include_full_transaction_history_for_all_acounts": true}"#)
        .unwrap_err();
    let lines: Vec<String> = r.violations().iter().map(|v| v.line()).collect();
    assert_eq!(
        lines,
        [
            // The sent key is cut, the declared name is not.
            format!("/include_full_transaction_history_for_all…: unknown field; did you mean `{long}`?"),
            format!(
                "/{long}: required field is missing (expected boolean); it may have been sent as `include_full_transaction_history_for_all…`"
            ),
        ]
    );
    let r = plans()
        .validate(
            r#"{"plan": "Standard support", "zzz": 1, "include_full_transaction_history_for_all_accounts": true}"#,
        )
        .unwrap_err();
    assert_eq!(
        r.violations()[0].line(),
        format!("/zzz: unknown field; allowed fields: `plan`, `{long}`, `tier`")
    );
}

#[test]
fn the_skeleton_for_broken_json_never_cuts_a_value() {
    let m = plans().validate(r#"{"plan": "#).unwrap_err().message("set_plan");
    assert!(
        m.ends_with(
            "shaped like {\"plan\": <string>, \"include_full_transaction_history_for_all_accounts\": <boolean>, \
             \"tier\": <string (optional)>}."
        ),
        "{m}"
    );
    assert!(!m.contains('…'), "{m}");
}

#[test]
fn a_64_character_tool_name_appears_whole() {
    let long = format!(
        "reconcile_enterprise_invoices_against_ledger_entries_{}",
        "x".repeat(11)
    );
    assert_eq!(long.chars().count(), 64);
    let u = unknown_tool("reconcile_invoices", &[long.as_str(), "charge_card"]);
    assert_eq!(
        u.message(),
        format!(
            "There is no tool named `reconcile_invoices`. Available tools: `{long}`, `charge_card`. Call one of them by its exact name."
        )
    );
    // The rejection of a call to it names it whole, twice.
    let r = plans().validate("{}").unwrap_err();
    let m = r.message(&long);
    assert!(
        m.starts_with(&format!("`{long}` was called with invalid arguments")),
        "{m}"
    );
    assert!(m.ends_with(&format!(
        "Call `{long}` again with these fields corrected, sending the complete arguments object."
    )));
}

/// 20 tools, three of them close to the sent name. Closest first, worked out
/// by hand (Levenshtein distance to `search_orders`): `search_order` (1),
/// `search_orders_v2` (3), `search_orders_by_date` (8); every other name is
/// 9 or more edits away and shares no prefix beyond `s`/`se`.
const TWENTY: [&str; 20] = [
    "charge_card",
    "refund_payment",
    "search_orders_by_date",
    "lookup_customer",
    "create_ticket",
    "close_ticket",
    "update_address",
    "search_orders_v2",
    "get_weather",
    "translate_text",
    "schedule_meeting",
    "cancel_meeting",
    "fetch_invoice",
    "list_invoices",
    "search_order",
    "upload_file",
    "delete_file",
    "send_email",
    "summarize_thread",
    "book_flight",
];

#[test]
fn twenty_tools_are_all_listed_closest_first() {
    let u = unknown_tool("search_orders", &TWENTY);
    let m = u.message();
    let spans = code_spans(&m);
    assert_eq!(spans[0], "search_orders", "the sent name comes first");
    let listed = &spans[1..];
    assert_eq!(listed.len(), 20, "{m}");
    assert_eq!(
        listed[..3],
        ["search_order", "search_orders_v2", "search_orders_by_date"],
        "{m}"
    );
    assert_eq!(
        listed.iter().copied().collect::<HashSet<_>>(),
        TWENTY.into_iter().collect()
    );
    assert_eq!(u.more, 0);
    assert!(m.starts_with("There is no tool named `search_orders`. Available tools: `search_order`, "));
    assert!(m.ends_with(". Call one of them by its exact name."));
}

#[test]
fn five_hundred_long_tool_names_stay_within_the_budget() {
    let words = ["ledger", "invoice", "customer", "shipment", "warehouse"];
    let names: Vec<String> = (0..500)
        .map(|i| {
            format!(
                "sync_{}_records_from_the_enterprise_resource_planner_{i:03}",
                words[i % 5]
            )
        })
        .collect();
    let valid: Vec<&str> = names.iter().map(String::as_str).collect();
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap();
    assert!(longest >= 60);
    let u = unknown_tool("sync_invoice_records", &valid);
    let m = u.message();
    assert!(
        m.chars().count() <= LIST_BUDGET_CHARS + longest,
        "{} characters",
        m.chars().count()
    );
    let spans = code_spans(&m);
    assert_eq!(spans[0], "sync_invoice_records");
    let listed = &spans[1..];
    // Every listed name is a complete name from the input, none twice.
    let all: HashSet<&str> = valid.iter().copied().collect();
    for name in listed {
        assert!(all.contains(name), "cut or invented name {name:?} in {m}");
    }
    assert_eq!(listed.iter().collect::<HashSet<_>>().len(), listed.len());
    assert_eq!(listed, u.suggestions.iter().map(String::as_str).collect::<Vec<_>>());
    // The closest are the invoice ones, and the rest are counted.
    assert!(listed.iter().all(|n| n.contains("_invoice_")), "{m}");
    assert!(!listed.is_empty() && u.more > 0);
    assert_eq!(listed.len() + u.more, 500);
    assert!(
        m.ends_with(&format!(
            ", … and {} more not listed. Call one of them by its exact name.",
            u.more
        )),
        "{m}"
    );
    assert!(m.starts_with("There is no tool named `sync_invoice_records`. Available tools, closest first: `"));
}

#[test]
fn a_tool_name_longer_than_the_whole_budget_is_still_listed_whole() {
    let huge = "t".repeat(LIST_BUDGET_CHARS + 10);
    let u = unknown_tool("x", &[huge.as_str(), "y"]);
    assert_eq!(u.suggestions.len(), 1);
    assert_eq!(u.more, 1);
    assert!(u.message().contains(&format!("`{huge}`")));
}

#[test]
fn a_huge_enum_lists_the_closest_values_whole_and_counts_the_rest() {
    let values: Vec<String> = (0..2000).map(|i| format!("warehouse_{i:04}_stock_level")).collect();
    let all: HashSet<&str> = values.iter().map(String::as_str).collect();
    let v = Validator::new(&json!({
        "type": "object",
        "properties": {"metric": {"type": "string", "enum": values}},
        "required": ["metric"]
    }))
    .unwrap();

    let r = v.validate(r#"{"metric": "warehouse_1234_stock_levl"}"#).unwrap_err();
    let viol = &r.violations()[0];
    let head = "one of 2000 values, closest first: ";
    assert!(viol.expected.starts_with(head), "{}", viol.expected);
    let (list, tail) = viol.expected[head.len()..].rsplit_once(", … and ").unwrap();
    let more: usize = tail.strip_suffix(" more not listed").unwrap().parse().unwrap();
    let listed: Vec<&str> = list.split(", ").map(|q| q.trim_matches('"')).collect();
    assert_eq!(listed[0], "warehouse_1234_stock_level");
    for value in &listed {
        assert!(all.contains(value), "cut value {value:?}");
    }
    assert_eq!(listed.len() + more, 2000);
    assert!(list.chars().count() <= LIST_BUDGET_CHARS, "{}", list.chars().count());
    assert_eq!(
        viol.hint.as_deref(),
        Some("did you mean \"warehouse_1234_stock_level\"?")
    );

    // Nothing sent: schema order, still whole and counted.
    let r = v.validate("{}").unwrap_err();
    let expected = &r.violations()[0].expected;
    assert!(
        expected.starts_with("one of 2000 values: \"warehouse_0000_stock_level\", \"warehouse_0001_stock_level\", "),
        "{expected}"
    );
    assert!(expected.ends_with(" more not listed"), "{expected}");
}

#[test]
fn many_fields_are_listed_whole_within_the_budget() {
    let mut props = serde_json::Map::new();
    for i in 0..100 {
        props.insert(
            format!("quarterly_revenue_breakdown_field_{i:03}"),
            json!({"type": "integer"}),
        );
    }
    let v = Validator::new(&json!({"type": "object", "properties": props, "additionalProperties": false})).unwrap();
    let r = v.validate(r#"{"zzz": 1}"#).unwrap_err();
    let viol = &r.violations()[0];
    assert_eq!(viol.kind, ViolationKind::UnknownField);
    let head = "allowed fields (100 in all), closest first: ";
    assert!(viol.expected.starts_with(head), "{}", viol.expected);
    let spans = code_spans(&viol.expected);
    for name in &spans {
        assert!(props.contains_key(*name), "cut field name {name:?}");
    }
    assert!(
        viol.expected
            .ends_with(&format!(", … and {} more not listed", 100 - spans.len()))
    );
}
