//! gate's provider formats against the providers' own SDKs.
//!
//! One Python process (`provider_sdk/oracle.py`, in the virtual environment
//! `.ci/test-deps` makes) builds tool calls with the SDKs' response types for
//! gate to parse, and judges the tool results gate renders with the SDKs'
//! request types. Shapes broken on purpose go with them: an oracle that
//! accepted those would prove nothing, so the test fails if it does.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use toolgate_core::provider::{self, Provider, gemini};
use toolgate_core::{DynamicTool, Effects, Gate, Step, ToolCall, ToolError, ToolSpec, Toolbox};

/// The interpreter of the test environment: `$GATE_TEST_PYTHON`, else the
/// virtual environment `.ci/test-deps` creates under the workspace's `target/`.
fn python() -> PathBuf {
    if let Some(path) = std::env::var_os("GATE_TEST_PYTHON") {
        return PathBuf::from(path);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/test-venv/bin/python");
    assert!(
        venv.exists(),
        "no Python test environment at {}: run `.ci/test-deps` from the workspace root (or set GATE_TEST_PYTHON)",
        venv.display()
    );
    venv
}

fn oracle(input: &Value) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/provider_sdk/oracle.py");
    let mut child = Command::new(python())
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Python oracle");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(input.to_string().as_bytes())
        .expect("write to the oracle");
    drop(stdin);
    let out = child.wait_with_output().expect("the oracle ran");
    assert!(
        out.status.success(),
        "the oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the oracle writes JSON")
}

fn spec(name: &str, schema: Value, effects: Effects) -> ToolSpec {
    ToolSpec::new(name, "A tool of the invoice agent.", schema, effects).unwrap()
}

/// One step of each kind, from the runtime itself.
async fn steps() -> Vec<(&'static str, Step)> {
    let lookup = spec(
        "lookup_customer",
        json!({"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}),
        Effects::new().read_only(),
    )
    .with_discovery("list_customers")
    .unwrap();
    let lookup = DynamicTool::new(lookup).with_handler(|_, args: Value| async move {
        match args["email"].as_str() {
            Some("ann@acme.io") => Ok(json!({"id": "cus_1", "name": "Ann Lee"})),
            _ => Err(ToolError::NotFound),
        }
    });
    let list = DynamicTool::new(spec(
        "list_customers",
        json!({"type": "object"}),
        Effects::new().read_only(),
    ))
    .with_handler(|_, _| async { Ok(json!(["ann@acme.io"])) });
    let charge = spec(
        "charge_card",
        json!({"type": "object", "properties": {"amount_cents": {"type": "integer"}}, "required": ["amount_cents"]}),
        Effects::new().destructive().external(),
    );
    let charge = DynamicTool::new(charge).with_handler(|_, args: Value| async move {
        match args["amount_cents"].as_u64() {
            Some(1) => Err(ToolError::rejected("card declined")),
            _ => Err(ToolError::Timeout),
        }
    });
    let toolbox = Toolbox::new()
        .with(lookup)
        .unwrap()
        .with(list)
        .unwrap()
        .with(charge)
        .unwrap();
    let gate = Gate::builder(toolbox).store("memory:").build().await.unwrap();
    let mut task = gate.task("u1");
    let mut steps = Vec::new();
    for (label, call) in [
        (
            "return",
            ToolCall::new("call_1", "lookup_customer", r#"{"email":"ann@acme.io"}"#),
        ),
        ("reject", ToolCall::new("call_2", "lookup_customer", r#"{"email": 7}"#)),
        (
            "retry",
            ToolCall::new("call_3", "lookup_customer", r#"{"email":"bob@acme.io"}"#),
        ),
        (
            "definitive error",
            ToolCall::new("call_4", "charge_card", r#"{"amount_cents":1}"#),
        ),
        (
            "fail",
            ToolCall::new("call_5", "charge_card", r#"{"amount_cents":4200}"#),
        ),
    ] {
        steps.push((label, task.handle(call).await));
    }
    let actions: Vec<_> = steps.iter().map(|(_, s)| s.action().as_str()).collect();
    assert_eq!(actions, ["return", "reject", "retry_with_correction", "return", "fail"]);
    assert!(steps[3].1.is_error());
    steps
}

/// A result broken on purpose in a way its provider's SDK must notice.
fn broken(provider: Provider, good: &Value) -> Vec<(&'static str, Value)> {
    let without = |key: &str, path: &[&str]| {
        let mut v = good.clone();
        let mut at = &mut v;
        for p in path {
            at = &mut at[*p];
        }
        at.as_object_mut().unwrap().remove(key);
        v
    };
    let with = |path: &[&str], key: &str, value: Value| {
        let mut v = good.clone();
        let mut at = &mut v;
        for p in path {
            at = &mut at[*p];
        }
        at[key] = value;
        v
    };
    match provider {
        Provider::OpenAiChat => vec![
            ("wrong: no tool_call_id", without("tool_call_id", &[])),
            (
                "wrong: an is_error flag OpenAI does not have",
                with(&[], "is_error", json!(true)),
            ),
            ("wrong: role function", with(&[], "role", json!("function"))),
        ],
        Provider::OpenAiResponses => vec![
            (
                "wrong: output as an object",
                with(&[], "output", json!({"error": "declined"})),
            ),
            (
                "wrong: type function_call_result",
                with(&[], "type", json!("function_call_result")),
            ),
        ],
        Provider::Anthropic => vec![
            ("wrong: no tool_use_id", without("tool_use_id", &[])),
            ("wrong: is_error as text", with(&[], "is_error", json!("true"))),
            (
                "wrong: an isError key (MCP's spelling)",
                with(&[], "isError", json!(true)),
            ),
        ],
        Provider::Gemini => vec![
            (
                "wrong: an isError field Gemini does not have",
                with(&["functionResponse"], "isError", json!(true)),
            ),
            (
                "wrong: response as text",
                with(&["functionResponse"], "response", json!("declined")),
            ),
        ],
    }
}

fn sdk_input(steps: &[(&str, Step)]) -> Value {
    let mut results = serde_json::Map::new();
    let mut replies = serde_json::Map::new();
    for provider in Provider::ALL {
        let mut cases = Vec::new();
        for (label, step) in steps {
            let value = provider::render(provider, step);
            if *label == "definitive error" {
                for (wrong, value) in broken(provider, &value) {
                    cases.push(json!({"label": wrong, "value": value}));
                }
            }
            cases.push(json!({"label": label, "value": value}));
        }
        results.insert(provider.name().into(), Value::Array(cases));
        let all: Vec<Step> = steps.iter().map(|(_, s)| s.clone()).collect();
        let reply = provider::reply(provider, &all);
        let mut cases: Vec<Value> = reply
            .iter()
            .enumerate()
            .map(|(i, value)| json!({"label": format!("reply {i}"), "value": value}))
            .collect();
        match provider {
            Provider::Anthropic => {
                let mut wrong = reply[0].clone();
                wrong["content"][1].as_object_mut().unwrap().remove("tool_use_id");
                cases.push(json!({"label": "wrong: a block without tool_use_id", "value": wrong}));
            }
            Provider::Gemini => {
                let mut wrong = reply[0].clone();
                let part = wrong["parts"][1].as_object_mut().unwrap();
                let response = part.remove("functionResponse").unwrap();
                part.insert("functionResult".into(), response);
                cases.push(json!({"label": "wrong: a functionResult part (no such field)", "value": wrong}));
            }
            Provider::OpenAiChat | Provider::OpenAiResponses => {}
        }
        replies.insert(provider.name().into(), Value::Array(cases));
    }
    json!({"results": results, "replies": replies})
}

fn check_calls(provider: Provider, calls: &Value) {
    let expected = calls["expected"].as_array().unwrap();
    for (dump, value) in calls["dumps"].as_object().unwrap() {
        let parsed = provider::parse_calls(provider, value).unwrap_or_else(|e| panic!("{provider} {dump}: {e}"));
        let wanted: Vec<&Value> = if dump.starts_with("one ") {
            assert_eq!(parsed.len(), 1, "{provider} {dump}: {parsed:?}");
            expected
                .iter()
                .filter(|e| e["name"] == parsed[0].name.as_str())
                .collect()
        } else {
            expected.iter().collect()
        };
        assert_eq!(parsed.len(), wanted.len(), "{provider} {dump}: {parsed:?}");
        for (call, want) in parsed.iter().zip(wanted) {
            assert_eq!(call.name, want["name"].as_str().unwrap(), "{provider} {dump}");
            match want["id"].as_str() {
                Some(id) => assert_eq!(call.id, id, "{provider} {dump}"),
                None => assert!(
                    call.id.starts_with(gemini::MINTED_ID_PREFIX),
                    "{provider} {dump}: {}",
                    call.id
                ),
            }
            match want.get("arguments_text") {
                // Text arguments arrive byte for byte, invalid JSON included.
                Some(text) => assert_eq!(call.arguments, text.as_str().unwrap(), "{provider} {dump}"),
                // Object arguments become compact JSON text, in their key order.
                None => assert_eq!(call.arguments, want["arguments"].to_string(), "{provider} {dump}"),
            }
        }
    }
}

#[tokio::test]
async fn shapes_agree_with_the_providers_sdks() {
    let steps = steps().await;
    let answer = oracle(&sdk_input(&steps));

    for provider in Provider::ALL {
        check_calls(provider, &answer["calls"][provider.name()]);
    }

    let mut checked = 0;
    for (suite, verdicts) in answer["verdicts"].as_object().unwrap() {
        for verdict in verdicts.as_array().unwrap() {
            let label = verdict["label"].as_str().unwrap();
            let valid = verdict["valid"].as_bool().unwrap();
            if label.starts_with("wrong") {
                assert!(
                    !valid,
                    "{suite}: the SDK accepted a broken shape ({label}): the oracle checks nothing"
                );
            } else {
                assert!(valid, "{suite}: the SDK refused gate's {label}: {}", verdict["error"]);
            }
            checked += 1;
        }
    }
    // 4 providers × 5 steps, 10 broken results, 5 + 5 + 1 + 1 replies, 2 broken replies.
    assert_eq!(checked, 20 + 10 + 12 + 2);
}
