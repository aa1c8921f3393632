//! The scripted model replays conversation files exactly, fails loudly on bad
//! files (naming the line), and never invents a turn past the end.

use std::time::Duration;

use serde_json::json;
use toolgate_model::{ChatModel, Message, ScriptedModel, ToolCallRequest, Turn, Usage};

const EXAMPLE: &str = r#"# a lookup, then a charge with an object, then invalid JSON, then done
{"tool_calls":[{"id":"call_1","name":"lookup_customer","arguments":"{\"email\":\"a@b.c\"}"}],"usage":{"input_tokens":4000,"output_tokens":50}}

{"tool_calls":[{"id":"call_2","name":"charge_card","arguments":{"customer_id":"c1","amount_cents":500}}]}
{"text":"Retrying.","tool_calls":[{"id":"call_3","name":"charge_card","arguments":"{\"customer_id\": \"c1\","},{"id":"call_4","name":"list_customers"}]}
{"text":"All done."}
"#;

async fn next(model: &dyn ChatModel) -> Result<Turn, toolgate_model::ModelError> {
    model.next_turn(&[Message::User("hi".into())], &json!([])).await
}

#[tokio::test]
async fn replays_turns_in_order_with_arguments_as_scripted() {
    let model = ScriptedModel::parse(EXAMPLE).expect("valid script");
    assert_eq!(model.len(), 4);

    let t1 = next(&model).await.expect("turn 1");
    assert_eq!(
        t1,
        Turn {
            text: None,
            tool_calls: vec![ToolCallRequest::new(
                "call_1",
                "lookup_customer",
                r#"{"email":"a@b.c"}"#
            )],
            usage: Some(Usage {
                input_tokens: 4000,
                output_tokens: 50
            }),
        }
    );
    assert!(!t1.is_final());

    let t2 = next(&model).await.expect("turn 2");
    // An object is serialized compactly, keys in the order written.
    assert_eq!(t2.tool_calls[0].arguments, r#"{"customer_id":"c1","amount_cents":500}"#);
    assert_eq!(t2.usage, None);

    let t3 = next(&model).await.expect("turn 3");
    assert_eq!(t3.text.as_deref(), Some("Retrying."));
    // Invalid JSON is kept byte for byte, absent arguments are "{}".
    assert_eq!(t3.tool_calls[0].arguments, r#"{"customer_id": "c1","#);
    assert_eq!(t3.tool_calls[1].arguments, "{}");

    let t4 = next(&model).await.expect("turn 4");
    assert_eq!(t4.text.as_deref(), Some("All done."));
    assert!(t4.is_final());
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn exhausted_script_is_a_clear_error_every_time() {
    let model = ScriptedModel::parse(r#"{"text":"only"}"#).expect("valid");
    next(&model).await.expect("the one turn");
    for _ in 0..3 {
        let err = next(&model).await.expect_err("past the end");
        assert!(err.is_script_exhausted(), "{err}");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("1 scripted turn"), "{err}");
    }
    assert_eq!(model.served(), 1);
    model.reset();
    assert_eq!(next(&model).await.expect("after reset").text.as_deref(), Some("only"));
}

#[tokio::test]
async fn same_file_gives_same_turns() {
    let a = ScriptedModel::parse(EXAMPLE).expect("valid");
    let b: ScriptedModel = EXAMPLE.parse().expect("valid");
    for _ in 0..a.len() {
        assert_eq!(next(&a).await.expect("a"), next(&b).await.expect("b"));
    }
}

#[test]
fn bad_lines_are_reported_with_their_line_number() {
    let cases = [
        ("{\"text\":\"ok\"}\n\n{\"text\": }\n", 3, "column"),
        ("# c\n{\"txt\":\"typo\"}", 2, "txt"),
        ("{\"text\":\"a\"}\n{}", 2, "needs `text`"),
        ("{\"tool_calls\":[{\"name\":\"x\",\"arguments\":\"{}\"}]}", 1, "id"),
        (
            "{\"usage\":{\"input_tokens\":-1,\"output_tokens\":0},\"text\":\"x\"}",
            1,
            "column",
        ),
        ("{\"error\":{\"kind\":\"exploded\"}}", 1, "exploded"),
        ("{\"error\":{\"kind\":\"http_status\"}}", 1, "needs a `status`"),
        (
            "{\"error\":{\"kind\":\"http_status\",\"status\":9000}}",
            1,
            "not an HTTP status",
        ),
        ("{\"error\":{\"kind\":\"transport\"},\"text\":\"x\"}", 1, "cannot also"),
        ("[1,2]", 1, "column"),
    ];
    for (text, line, needle) in cases {
        let err = ScriptedModel::parse(text).expect_err(text);
        assert_eq!(err.line(), Some(line), "{text:?}: {err}");
        let msg = err.to_string();
        assert!(msg.contains(&format!("line {line}")), "{msg}");
        assert!(msg.contains(needle), "{text:?}: {msg}");
    }
}

#[test]
fn empty_script_is_an_error() {
    let err = ScriptedModel::parse("\n# nothing\n   \n").expect_err("no turns");
    assert_eq!(err.line(), None);
    assert!(err.to_string().contains("no turns"), "{err}");
}

#[test]
fn files_are_named_in_errors() {
    let dir = std::env::temp_dir().join(format!("gate-model-scripted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let good = dir.join("good.jsonl");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&good, "{\"text\":\"hi\"}\n").expect("write");
    std::fs::write(&bad, "{\"text\":\"hi\"}\n{\"text\":\"unterminated}\n").expect("write");

    assert_eq!(ScriptedModel::from_path(&good).expect("loads").len(), 1);

    let err = ScriptedModel::from_path(&bad).expect_err("bad line");
    assert_eq!(err.path(), Some(bad.as_path()));
    assert_eq!(err.line(), Some(2));
    assert!(err.to_string().contains("bad.jsonl, line 2"), "{err}");

    let missing = dir.join("missing.jsonl");
    let err = ScriptedModel::from_path(&missing).expect_err("missing");
    assert!(err.to_string().contains("missing.jsonl") && err.to_string().contains("cannot read"));
    assert!(std::error::Error::source(&err).is_some());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn scripted_errors_map_to_model_error_predicates() {
    let model = ScriptedModel::parse(concat!(
        "{\"error\":{\"kind\":\"rate_limited\",\"retry_after_ms\":2000}}\n",
        "{\"error\":{\"kind\":\"http_status\",\"status\":503,\"message\":\"overloaded\"}}\n",
        "{\"error\":{\"kind\":\"http_status\",\"status\":429}}\n",
        "{\"error\":{\"kind\":\"transport\"}}\n",
        "{\"error\":{\"kind\":\"malformed\"}}\n",
        "{\"text\":\"recovered\"}\n",
    ))
    .expect("valid");

    let e = next(&model).await.expect_err("rate limit");
    assert!(e.is_rate_limited());
    assert_eq!(e.retry_after(), Some(Duration::from_millis(2000)));
    assert!(e.to_string().contains("line 1"), "{e}");

    let e = next(&model).await.expect_err("503");
    assert!(e.is_http_status() && e.status() == Some(503) && e.is_retryable());
    assert!(e.to_string().contains("overloaded"), "{e}");

    let e = next(&model).await.expect_err("429");
    assert!(e.is_rate_limited() && e.status() == Some(429));

    assert!(next(&model).await.expect_err("transport").is_transport());
    assert!(next(&model).await.expect_err("malformed").is_malformed_response());
    assert_eq!(next(&model).await.expect("turn").text.as_deref(), Some("recovered"));
}

#[tokio::test]
async fn works_as_a_shared_trait_object() {
    let model: std::sync::Arc<dyn ChatModel> =
        std::sync::Arc::new(ScriptedModel::from_turns([Turn::default(), Turn::default()]));
    let clone = model.clone();
    let a = next(&*model).await.expect("first");
    let b = next(&*clone).await.expect("second");
    assert_eq!(a, b);
    assert!(next(&*model).await.expect_err("third").is_script_exhausted());
}
