//! invoice-mcp driven by rmcp's own client over stdio (an `initialize`
//! session, protocol 2025-11-25), and a session of 1,000 calls whose
//! memory stays flat.

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, MetaObject,
    RequestMetaObject,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

const SERVER: &str = env!("CARGO_BIN_EXE_invoice-mcp");

type Client = RunningService<RoleClient, ClientConfig>;

async fn connect(tag: &str) -> (Client, Child, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("gate-mcp-rmcp-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("gate.db").display());
    let mut server = Command::new(SERVER)
        .args(["--store", &store])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let transport = (server.stdout.take().unwrap(), server.stdin.take().unwrap());
    let config = ClientConfig::new(ClientCapabilities::default(), Implementation::new("gate-tests", "1"));
    let client = config.serve(transport).await.unwrap();
    (client, server, dir)
}

fn args(value: Value) -> CallToolRequestParams {
    CallToolRequestParams::new("").with_arguments(value.as_object().cloned().unwrap_or_default())
}

async fn call(client: &Client, name: &'static str, arguments: Value, task: Option<&str>) -> CallToolResult {
    let mut params = args(arguments);
    params.name = name.into();
    if let Some(task) = task {
        let mut meta = serde_json::Map::new();
        meta.insert("gate/task".into(), json!(task));
        params.meta = Some(RequestMetaObject(MetaObject(meta)));
    }
    client.call_tool(params).await.unwrap()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test]
async fn rmcp_client_sees_the_manifest_and_gate_decisions() {
    let (client, mut server, dir) = connect("decisions").await;
    let tools = client.list_tools(Default::default()).await.unwrap().tools;
    assert_eq!(tools.len(), 7);
    let get_invoice = tools.iter().find(|t| t.name == "get_invoice").unwrap();
    assert!(get_invoice.output_schema.is_some());
    let search = tools.iter().find(|t| t.name == "search_customers").unwrap();
    assert!(
        search.output_schema.is_none(),
        "2025-11-25 output schemas are objects only"
    );

    let ok = call(&client, "get_invoice", json!({"invoice_id": "INV-43"}), None).await;
    assert_eq!(ok.is_error, Some(false));
    assert_eq!(
        ok.structured_content.as_ref().map(|v| v["customer_id"].clone()),
        Some(json!("cus_carol"))
    );

    let missing = call(&client, "charge_card", json!({"customer_id": "cus_ann"}), None).await;
    assert_eq!(missing.is_error, Some(true));
    let said = text(&missing);
    assert!(
        said.contains("amount_cents") && said.contains("invoice_id"),
        "every missing field at once: {said}"
    );

    // A named task is a task of its own: the connection's rejection above
    // does not count in it, and its results say which task they ran in.
    let named = call(&client, "get_invoice", json!({"invoice_id": 7}), Some("rmcp-named")).await;
    assert_eq!(named.is_error, Some(true));
    let meta = named.meta.as_ref().map(|m| m.0.clone()).unwrap_or_default();
    assert_eq!(meta.get("gate/task"), Some(&json!("rmcp-named")));
    assert_eq!(meta.get("gate/action"), Some(&json!("reject")));

    client.cancel().await.unwrap();
    assert!(server.wait().await.unwrap().success());
    let _ = std::fs::remove_dir_all(dir);
}

/// The server's resident memory, from /proc.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A long session: mostly valid reads on the connection's task, every tenth
/// call a wrong argument in a task of its own (a rejection, written to the
/// store). Memory after 1,000 calls stays near what it was after 100:
/// nothing grows per call.
#[tokio::test]
async fn a_session_of_1000_calls_keeps_a_flat_memory_profile() {
    let (client, mut server, dir) = connect("memory").await;
    let pid = server.id().unwrap();
    let mut after_100 = 0;
    for i in 0..1000u32 {
        let result = if i % 10 == 9 {
            let task = format!("rejected-{i}");
            call(&client, "get_invoice", json!({"invoice_id": i}), Some(&task)).await
        } else if i % 2 == 0 {
            call(&client, "get_invoice", json!({"invoice_id": "INV-41"}), None).await
        } else {
            call(&client, "lookup_customer", json!({"email": "ann@acme.com"}), None).await
        };
        assert_eq!(result.is_error, Some(i % 10 == 9), "call {i}: {}", text(&result));
        if i == 99 {
            after_100 = rss_kib(pid);
        }
    }
    let after_1000 = rss_kib(pid);
    eprintln!("invoice-mcp RSS: {after_100} KiB after 100 calls, {after_1000} KiB after 1,000");
    assert!(
        after_1000 < after_100 + 8 * 1024,
        "memory grew by {} KiB over 900 calls",
        after_1000.saturating_sub(after_100)
    );
    client.cancel().await.unwrap();
    assert!(server.wait().await.unwrap().success());
    let _ = std::fs::remove_dir_all(dir);
}
