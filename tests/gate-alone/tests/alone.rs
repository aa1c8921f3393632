//! The crate builds with gate alone, and what it builds works: a manifest
//! with the nested type's schema, a typed result, a rejection naming the
//! field.

use toolgate::{Dialect, Gate, Step, ToolCall};

#[test]
fn the_crate_depends_on_gate_and_nothing_else() {
    let manifest = include_str!("../Cargo.toml");
    let dependencies: Vec<&str> = manifest
        .split("[dependencies]")
        .nth(1)
        .expect("a [dependencies] section")
        .lines()
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    assert_eq!(dependencies, ["toolgate.workspace = true"]);
}

#[test]
fn the_manifest_carries_the_nested_argument_schema() {
    let manifest = gate_alone::tools().manifest(Dialect::OpenAiStrict).expect("manifest");
    let text = manifest.to_string();
    assert!(text.contains("count_items"), "{text}");
    assert!(text.contains("sku") && text.contains("quantity"), "{text}");
}

#[tokio::test]
async fn a_call_returns_the_typed_result_and_a_wrong_type_is_rejected() {
    let gate = Gate::builder(gate_alone::tools())
        .store("memory:")
        .build()
        .await
        .expect("a gate");
    let mut task = gate.task("u1");
    let step = task
        .handle(ToolCall::new(
            "c1",
            "count_items",
            r#"{"lines": [{"sku": "A", "quantity": 2}, {"sku": "B", "quantity": 1}, {"sku": "A", "quantity": 4}]}"#,
        ))
        .await;
    let Step::Return(out) = &step else { panic!("{step:?}") };
    assert_eq!(out.value, toolgate::serde_json::json!({"items": 7, "skus": 2}));
    let step = task
        .handle(ToolCall::new(
            "c2",
            "count_items",
            r#"{"lines": [{"sku": "A", "quantity": "two"}]}"#,
        ))
        .await;
    let Step::Reject(feedback) = &step else {
        panic!("{step:?}")
    };
    assert!(feedback.text.contains("quantity"), "{}", feedback.text);
}
