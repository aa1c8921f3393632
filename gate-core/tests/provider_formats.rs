//! Provider formats in and out, without the SDKs: what each parser takes,
//! what it skips, what it refuses and how; how results are rendered and
//! grouped; and that no JSON value makes a parser panic.

use serde_json::{Value, json};
use toolgate_core::provider::{self, Provider, gemini};
use toolgate_core::{Dialect, DynamicTool, Effects, Gate, Step, ToolCall, ToolError, ToolSpec, Toolbox};

fn calls(provider: Provider, value: Value) -> Vec<(String, String, String)> {
    provider::parse_calls(provider, &value)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|c| (c.id, c.name, c.arguments))
        .collect()
}

fn error(provider: Provider, value: Value) -> provider::ProviderError {
    provider::parse_calls(provider, &value).expect_err("malformed")
}

fn owned(id: &str, name: &str, arguments: &str) -> (String, String, String) {
    (id.to_owned(), name.to_owned(), arguments.to_owned())
}

#[test]
fn openai_chat_calls_keep_their_argument_text() {
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "lookup_customer", "arguments": "{\"email\":  \"a@b.c\"}"}},
        {"id": "call_2", "type": "function", "function": {"name": "charge_card", "arguments": "{\"amount\": "}},
        {"id": "call_3", "function": {"name": "list_customers"}},
        {"id": "call_4", "type": "function", "function": {"name": "tag", "arguments": {"tags": ["a", "b"]}}},
    ]});
    let expected = vec![
        owned("call_1", "lookup_customer", r#"{"email":  "a@b.c"}"#),
        owned("call_2", "charge_card", r#"{"amount": "#),
        owned("call_3", "list_customers", "{}"),
        owned("call_4", "tag", r#"{"tags":["a","b"]}"#),
    ];
    assert_eq!(calls(Provider::OpenAiChat, message.clone()), expected);
    let completion = json!({"id": "chatcmpl-1", "choices": [{"index": 0, "message": message}]});
    assert_eq!(calls(Provider::OpenAiChat, completion), expected);
    assert_eq!(
        calls(Provider::OpenAiChat, json!({"role": "assistant", "content": "Done."})),
        []
    );
}

#[test]
fn openai_responses_calls_are_function_call_items_answered_by_call_id() {
    let response = json!({"id": "resp_1", "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "lookup_customer", "arguments": "{\"email\":\"a@b.c\"}"},
        {"type": "message", "id": "msg_1", "role": "assistant", "content": []},
    ]});
    assert_eq!(
        calls(Provider::OpenAiResponses, response),
        [owned("call_9", "lookup_customer", r#"{"email":"a@b.c"}"#)]
    );
    // A whole input list, messages without a `type` included.
    let input = json!([
        {"role": "user", "content": "Find a@b.c"},
        {"type": "function_call", "call_id": "call_9", "name": "lookup_customer", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_9", "output": "{}"},
    ]);
    assert_eq!(
        calls(Provider::OpenAiResponses, input),
        [owned("call_9", "lookup_customer", "{}")]
    );
    let e = error(
        Provider::OpenAiResponses,
        json!([{"type": "function_call", "id": "fc_1", "name": "x", "arguments": "{}"}]),
    );
    assert!(e.is_shape(), "{e}");
    assert_eq!(e.path(), "$[0].call_id");
}

#[test]
fn anthropic_tool_use_input_becomes_compact_text_once() {
    let message = json!({"id": "msg_1", "role": "assistant", "content": [
        {"type": "thinking", "thinking": "…", "signature": "s"},
        {"type": "text", "text": "Checking."},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "acme"}},
        {"type": "tool_use", "id": "toolu_1", "name": "charge_card", "input": {"customer_id": "cus_1", "amount_cents": 4200}},
        {"type": "tool_use", "id": "toolu_2", "name": "list_customers", "input": {}},
    ]});
    assert_eq!(
        calls(Provider::Anthropic, message),
        [
            owned(
                "toolu_1",
                "charge_card",
                r#"{"customer_id":"cus_1","amount_cents":4200}"#
            ),
            owned("toolu_2", "list_customers", "{}"),
        ]
    );
    assert_eq!(
        calls(Provider::Anthropic, json!({"role": "user", "content": "Charge Ann."})),
        []
    );
    // Whatever `input` is, it is the validator's to judge, not lost.
    assert_eq!(
        calls(
            Provider::Anthropic,
            json!({"type": "tool_use", "id": "t", "name": "n", "input": "{\"a\":1}"})
        ),
        [owned("t", "n", r#""{\"a\":1}""#)]
    );
}

#[test]
fn gemini_calls_without_an_id_get_a_stable_one_that_is_never_sent_back() {
    let parts = json!([
        {"text": "Sure."},
        {"functionCall": {"name": "lookup_customer", "args": {"email": "a@b.c"}}},
        {"function_call": {"name": "lookup_customer", "args": {"email": "d@e.f"}}},
        {"functionCall": {"id": "fc-1", "name": "list_customers"}},
    ]);
    let first = calls(
        Provider::Gemini,
        json!({"candidates": [{"content": {"role": "model", "parts": parts}}]}),
    );
    assert_eq!(first, calls(Provider::Gemini, json!({"role": "model", "parts": parts})));
    assert_eq!(first.len(), 3);
    assert!(first[0].0.starts_with("gate-gemini-0-"), "{}", first[0].0);
    assert!(first[1].0.starts_with("gate-gemini-1-"), "{}", first[1].0);
    assert_ne!(first[0].0[15..], first[1].0[15..], "different calls, different ids");
    assert_eq!(first[2], owned("fc-1", "list_customers", "{}"));
    assert_eq!(first[1].2, r#"{"email":"d@e.f"}"#);
    assert_eq!(gemini::MINTED_ID_PREFIX, "gate-gemini-");
    // A candidate a safety filter stopped holds no content and no call.
    assert_eq!(
        calls(Provider::Gemini, json!({"candidates": [{"finishReason": "SAFETY"}]})),
        []
    );
}

#[test]
fn malformed_shapes_are_typed_errors_naming_the_field() {
    for (provider, value, path) in [
        (
            Provider::OpenAiChat,
            json!({"tool_calls": [{"type": "function", "function": {"name": "x"}}]}),
            "$.tool_calls[0].id",
        ),
        (
            Provider::OpenAiChat,
            json!({"tool_calls": [{"id": "c", "function": {"name": 5}}]}),
            "$.tool_calls[0].function.name",
        ),
        (Provider::OpenAiChat, json!({"choices": []}), "$.choices"),
        (Provider::OpenAiChat, json!({"tool_calls": {"id": "c"}}), "$.tool_calls"),
        (Provider::OpenAiChat, json!({"content": [{"type": "tool_use"}]}), "$"),
        (
            Provider::OpenAiResponses,
            json!({"output": [{"type": "function_call", "call_id": "c"}]}),
            "$.output[0].name",
        ),
        (
            Provider::Anthropic,
            json!({"content": [{"type": "tool_use", "name": "x", "input": {}}]}),
            "$.content[0].id",
        ),
        (
            Provider::Anthropic,
            json!({"content": [{"text": "no type"}]}),
            "$.content[0].type",
        ),
        (Provider::Anthropic, json!("tool_use"), "$"),
        (
            Provider::Gemini,
            json!({"parts": [{"functionCall": {"args": {}}}]}),
            "$.parts[0].functionCall.name",
        ),
        (
            Provider::Gemini,
            json!({"candidates": [{"content": {"parts": "x"}}]}),
            "$.candidates[0].content.parts",
        ),
        (Provider::Gemini, json!({"tool_calls": []}), "$"),
    ] {
        let e = error(provider, value.clone());
        assert!(e.is_shape() && !e.is_unsupported(), "{value}: {e}");
        assert_eq!(e.provider(), provider);
        assert_eq!(e.path(), path, "{value}: {e}");
        assert!(
            e.to_string().starts_with(&format!("{provider}: {path}: expected ")),
            "{e}"
        );
    }
}

#[test]
fn custom_tool_calls_are_refused_not_dropped() {
    let chat = json!({"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"id": "c2", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}},
    ]});
    let e = error(Provider::OpenAiChat, chat);
    assert!(e.is_unsupported() && !e.is_shape(), "{e}");
    assert_eq!(e.path(), "$.tool_calls[1].type");
    assert!(e.to_string().contains("custom tool"), "{e}");
    let e = error(
        Provider::OpenAiResponses,
        json!({"type": "custom_tool_call", "call_id": "c", "name": "sql", "input": "SELECT 1"}),
    );
    assert!(e.is_unsupported(), "{e}");
}

/// Every sub-value of some real shapes replaced by every JSON type: the
/// parsers answer each with calls or an error, never a panic.
#[test]
fn no_json_value_makes_a_parser_panic() {
    fn variants(value: &Value, out: &mut Vec<Value>, rebuild: &dyn Fn(Value) -> Value) {
        for replacement in [json!(null), json!(1), json!("x"), json!([]), json!({}), json!([{}])] {
            out.push(rebuild(replacement));
        }
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let rebuild = |v: Value| {
                        let mut items = items.clone();
                        items[i] = v;
                        rebuild(Value::Array(items))
                    };
                    variants(item, out, &rebuild);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    let rebuild = |v: Value| {
                        let mut map = map.clone();
                        map.insert(key.clone(), v);
                        rebuild(Value::Object(map))
                    };
                    variants(item, out, &rebuild);
                }
            }
            _ => {}
        }
    }
    let samples = [
        json!({"choices": [{"message": {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "n", "arguments": "{}"}}]}}]}),
        json!({"output": [{"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}"}]}),
        json!({"content": [{"type": "tool_use", "id": "t", "name": "n", "input": {"a": 1}}]}),
        json!({"candidates": [{"content": {"parts": [{"functionCall": {"id": "i", "name": "n", "args": {"a": 1}}}]}}]}),
    ];
    let mut cases = Vec::new();
    for sample in &samples {
        variants(sample, &mut cases, &|v| v);
    }
    assert!(cases.len() > 150, "{}", cases.len());
    for case in &cases {
        for provider in Provider::ALL {
            let _ = provider::parse_calls(provider, case);
        }
    }
}

async fn a_step_of_each_kind() -> Vec<Step> {
    let spec = ToolSpec::new(
        "charge_card",
        "Charge a card.",
        json!({"type": "object", "properties": {"amount_cents": {"type": "integer"}}, "required": ["amount_cents"]}),
        Effects::new().destructive(),
    )
    .unwrap();
    let charge = DynamicTool::new(spec).with_handler(|_, args: Value| async move {
        match args["amount_cents"].as_u64() {
            Some(1) => Err(ToolError::rejected("card declined")),
            _ => Ok(json!({"charge": "ch_1"})),
        }
    });
    let gate = Gate::builder(Toolbox::new().with(charge).unwrap())
        .store("memory:")
        .build()
        .await
        .unwrap();
    let mut task = gate.task("u1");
    let mut steps = Vec::new();
    for (id, args) in [
        ("c1", r#"{"amount_cents":5}"#),
        ("c2", r#"{"amount_cents":1}"#),
        ("c3", r#"{"amount_cents":"x"}"#),
    ] {
        steps.push(task.handle(ToolCall::new(id, "charge_card", args)).await);
    }
    steps
}

#[tokio::test]
async fn results_carry_each_providers_error_convention() {
    let steps = a_step_of_each_kind().await;
    let (ok, declined, rejected) = (&steps[0], &steps[1], &steps[2]);
    assert!(!ok.is_error() && declined.is_error() && rejected.is_error());

    let chat = provider::render(Provider::OpenAiChat, ok);
    assert_eq!(
        chat,
        json!({"role": "tool", "tool_call_id": "c1", "content": ok.model_text()})
    );
    let chat = provider::render(Provider::OpenAiChat, rejected);
    assert_eq!(chat["content"], format!("Error: {}", rejected.model_text()));
    let output = provider::render(Provider::OpenAiResponses, declined);
    assert_eq!(output["type"], "function_call_output");
    assert_eq!(output["call_id"], "c2");
    assert_eq!(output["output"], format!("Error: {}", declined.model_text()));

    let block = provider::render(Provider::Anthropic, declined);
    assert_eq!(
        block,
        json!({"type": "tool_result", "tool_use_id": "c2", "content": declined.model_text(), "is_error": true})
    );
    assert_eq!(provider::render(Provider::Anthropic, ok)["is_error"], false);

    let part = provider::render(Provider::Gemini, rejected);
    assert_eq!(part["functionResponse"]["id"], "c3");
    assert_eq!(part["functionResponse"]["name"], "charge_card");
    assert_eq!(
        part["functionResponse"]["response"],
        json!({"error": rejected.model_text()})
    );
    assert_eq!(
        provider::render(Provider::Gemini, ok)["functionResponse"]["response"],
        json!({"output": ok.model_text()})
    );

    for dialect in Dialect::ALL {
        if let Some(p) = dialect.provider() {
            assert_eq!(
                declined.to_message(dialect, "charge_card"),
                provider::render(p, declined),
                "{dialect}"
            );
        }
    }
}

#[tokio::test]
async fn a_turns_results_are_grouped_as_each_provider_requires() {
    let steps = a_step_of_each_kind().await;
    let chat = provider::reply(Provider::OpenAiChat, &steps);
    assert_eq!(chat.len(), 3);
    assert!(chat.iter().all(|m| m["role"] == "tool"));
    assert_eq!(provider::reply(Provider::OpenAiResponses, &steps).len(), 3);
    let anthropic = provider::reply(Provider::Anthropic, &steps);
    assert_eq!(anthropic.len(), 1);
    assert_eq!(anthropic[0]["role"], "user");
    let ids: Vec<&str> = anthropic[0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    let gemini = provider::reply(Provider::Gemini, &steps);
    assert_eq!(gemini.len(), 1);
    assert_eq!(gemini[0]["parts"].as_array().unwrap().len(), 3);
    assert!(provider::reply(Provider::Anthropic, &[]).is_empty());
}

#[tokio::test]
async fn an_id_less_gemini_call_is_answered_without_an_id() {
    let response = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "lookup_customer", "args": {"email": "ann@acme.io"}}}
    ]}}]});
    let call = ToolCall::parse_all(Provider::Gemini, &response).unwrap().remove(0);
    let spec = ToolSpec::new(
        "lookup_customer",
        "Look up.",
        json!({"type": "object"}),
        Effects::new().read_only(),
    )
    .unwrap();
    let lookup = DynamicTool::new(spec).with_handler(|_, _| async { Ok(json!({"id": "cus_1"})) });
    let gate = Gate::builder(Toolbox::new().with(lookup).unwrap())
        .store("memory:")
        .build()
        .await
        .unwrap();
    let step = gate.task("u1").handle(call).await;
    let part = provider::render(Provider::Gemini, &step);
    let keys: Vec<&String> = part["functionResponse"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["name", "response"]);
    assert!(
        part["functionResponse"]["response"]["output"]
            .as_str()
            .unwrap()
            .contains("cus_1")
    );
}
