//! `agent::run` sends the manifest of the dialect it is given, strict ones
//! included, and refuses a dialect the back end does not speak before it
//! asks the model anything.

use std::sync::Mutex;

use serde_json::{Value, json};
use toolgate_core::agent::{self, AgentError, AgentLimits, ChatModel, Message, ModelError, ScriptedModel, Turn};
use toolgate_core::provider::Provider;
use toolgate_core::{Dialect, DynamicTool, Effects, Gate, Step, ToolSpec, Toolbox};
use toolgate_model::BoxFuture;

/// A back end that answers from a script and keeps the tool lists it was sent.
struct Recording {
    script: ScriptedModel,
    speaks: Option<Provider>,
    tools_sent: Mutex<Vec<Value>>,
}

impl ChatModel for Recording {
    fn next_turn<'a>(&'a self, messages: &'a [Message], tools: &'a Value) -> BoxFuture<'a, Result<Turn, ModelError>> {
        self.tools_sent.lock().unwrap().push(tools.clone());
        self.script.next_turn(messages, tools)
    }

    fn provider(&self) -> Option<Provider> {
        self.speaks
    }
}

fn recording(speaks: Option<Provider>) -> Recording {
    // Under strict mode the model sends every property, `null` for the
    // optional one it leaves out.
    let script = ScriptedModel::parse(
        r#"
{"tool_calls":[{"id":"call_1","name":"lookup_customer","arguments":{"email":"ann@acme.io","region":null}}]}
{"text":"Found Ann."}
"#,
    )
    .unwrap();
    Recording {
        script,
        speaks,
        tools_sent: Mutex::new(Vec::new()),
    }
}

async fn gate() -> Gate {
    let spec = ToolSpec::new(
        "lookup_customer",
        "Look a customer up by email.",
        json!({"type": "object", "properties": {
            "email": {"type": "string"},
            "region": {"type": "string"}
        }, "required": ["email"]}),
        Effects::new().read_only(),
    )
    .unwrap();
    let tool = DynamicTool::new(spec).with_handler(|_, _| async { Ok(json!({"id": "cus_1"})) });
    Gate::builder(Toolbox::new().with(tool).unwrap())
        .store("memory:")
        .build()
        .await
        .unwrap()
}

async fn run(model: &Recording, dialect: Dialect) -> Result<agent::Run, AgentError> {
    let gate = gate().await;
    let mut task = gate.task("u1");
    agent::run(
        &mut task,
        model,
        dialect,
        vec![Message::User("Find ann@acme.io".into())],
        AgentLimits::default(),
        &mut |_| {},
    )
    .await
    .map(agent::RunOutcome::into_run)
}

#[tokio::test]
async fn a_strict_manifest_is_sent_and_its_null_arguments_are_accepted() {
    let model = recording(Some(Provider::OpenAiChat));
    let run = run(&model, Dialect::OpenAiStrict).await.unwrap();
    let sent = model.tools_sent.lock().unwrap();
    assert_eq!(sent.len(), 2, "one tool list per model turn");
    let function = &sent[0][0]["function"];
    assert_eq!(function["strict"], true);
    assert_eq!(function["parameters"]["additionalProperties"], false);
    assert_eq!(function["parameters"]["required"], json!(["email", "region"]));
    assert!(
        matches!(run.exchanges[0].step, Step::Return(_)),
        "{:?}",
        run.exchanges[0].step
    );
    assert_eq!(
        run.ending,
        agent::Ending::Answered {
            text: Some("Found Ann.".into())
        }
    );
}

#[tokio::test]
async fn a_back_end_that_reads_no_tool_list_takes_any_models_dialect() {
    let model = recording(None);
    run(&model, Dialect::AnthropicStrict).await.unwrap();
    let sent = model.tools_sent.lock().unwrap();
    assert_eq!(sent[0][0]["name"], "lookup_customer");
    assert_eq!(sent[0][0]["strict"], true);
    assert!(sent[0][0]["input_schema"].is_object());
}

#[tokio::test]
async fn a_dialect_the_back_end_does_not_speak_is_refused_before_any_turn() {
    for (speaks, dialect, says) in [
        (
            Some(Provider::OpenAiChat),
            Dialect::Anthropic,
            "takes `openai` tool lists; a manifest in `anthropic`",
        ),
        (
            Some(Provider::OpenAiChat),
            Dialect::OpenAiResponses,
            "a manifest in `openai-responses`",
        ),
        (None, Dialect::Mcp, "`mcp` is an MCP tool format"),
    ] {
        let model = recording(speaks);
        let e = run(&model, dialect).await.expect_err("a mismatch");
        assert!(
            matches!(e, AgentError::Dialect { dialect: d, .. } if d == dialect),
            "{e}"
        );
        assert!(e.to_string().contains(says), "{e}");
        assert!(model.tools_sent.lock().unwrap().is_empty(), "no model call was made");
    }
}
