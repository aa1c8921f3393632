//! A gate served in process to rmcp's client over an in-memory pipe: what a
//! server operator's settings do to the calls.

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, MetaObject,
    RequestMetaObject,
};
use serde_json::{Value, json};
use toolgate_core::{Dialect, DynamicTool, Effects, Gate, ToolSpec, Toolbox};
use toolgate_mcp::{McpServer, MetaUser};

fn toolbox() -> Toolbox {
    let echo = ToolSpec::new(
        "echo",
        "Echo a word.",
        json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}),
        Effects::new().read_only(),
    )
    .unwrap();
    let billing = ToolSpec::new(
        "bill",
        "Bill someone.",
        json!({"type": "object"}),
        Effects::new().writes(),
    )
    .unwrap()
    .with_scopes(["billing:charge"]);
    Toolbox::new()
        .with(DynamicTool::new(echo).with_handler(|_, args: Value| async move { Ok(args["word"].clone()) }))
        .unwrap()
        .with(DynamicTool::new(billing).with_handler(|_, _| async { Ok(json!("billed")) }))
        .unwrap()
}

async fn gate() -> Gate {
    Gate::builder(toolbox()).store("memory:").build().await.unwrap()
}

async fn call(server: McpServer, name: &'static str, arguments: Value, meta: Value) -> (Vec<String>, CallToolResult) {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(async move { server.serve(tokio::io::split(server_end)).await });
    let config = ClientConfig::new(ClientCapabilities::default(), Implementation::new("test", "1"));
    let client = config.serve(tokio::io::split(client_end)).await.unwrap();
    let listed = client.list_tools(Default::default()).await.unwrap();
    let names = listed.tools.iter().map(|t| t.name.to_string()).collect();
    let mut params =
        CallToolRequestParams::new(name).with_arguments(arguments.as_object().cloned().unwrap_or_default());
    params.meta = Some(RequestMetaObject(MetaObject(
        meta.as_object().cloned().unwrap_or_default(),
    )));
    let result = client.call_tool(params).await.unwrap();
    client.cancel().await.unwrap();
    assert!(serving.await.unwrap().is_ok());
    (names, result)
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test]
async fn a_tool_whose_scope_is_not_granted_is_neither_listed_nor_run() {
    let (names, result) = call(McpServer::new(gate().await, "u1"), "bill", json!({}), json!({})).await;
    assert_eq!(names, ["echo"]);
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("billing:charge"), "{}", text(&result));

    let granted = McpServer::new(gate().await, "u1").grant(["billing:charge"]);
    let (names, result) = call(granted, "bill", json!({}), json!({})).await;
    assert_eq!(names, ["echo", "bill"]);
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), "billed");
}

#[tokio::test]
async fn a_server_that_refuses_meta_users_runs_nothing_for_another_user() {
    let server = McpServer::new(gate().await, "owner").meta_user(MetaUser::Refuse);
    let (_, refused) = call(
        server.clone(),
        "echo",
        json!({"word": "hi"}),
        json!({"gate/user": "mallory"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).contains("runs every call as `owner`"),
        "{}",
        text(&refused)
    );
    let (_, own) = call(server, "echo", json!({"word": "hi"}), json!({"gate/user": "owner"})).await;
    assert_eq!((own.is_error, text(&own)), (Some(false), "hi".to_owned()));
}

#[tokio::test]
async fn malformed_gate_meta_is_an_error_result_naming_the_key() {
    let (_, result) = call(
        McpServer::new(gate().await, "u1"),
        "echo",
        json!({"word": "hi"}),
        json!({"gate/task": 5}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("`_meta.gate/task` must be a non-empty string"),
        "{}",
        text(&result)
    );
}

#[tokio::test]
async fn an_untyped_result_has_no_structured_content() {
    let (_, result) = call(
        McpServer::new(gate().await, "u1"),
        "echo",
        json!({"word": "hi"}),
        json!({}),
    )
    .await;
    assert_eq!(result.structured_content, None);
    let tools = toolgate_mcp::tools(&gate().await, &[], Dialect::Mcp).unwrap();
    assert!(tools.iter().all(|t| t.output_schema.is_none()));
}
