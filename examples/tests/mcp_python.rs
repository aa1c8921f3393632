//! invoice-mcp driven by a client nobody here wrote: the official MCP Python
//! SDK (`mcp` on PyPI, pinned in `.ci/python-requirements.txt`), over stdio
//! and over streamable HTTP, in both protocol eras.
//!
//! The script (`tests/mcp_client/invoice_session.py`) lists the tools and
//! makes the calls a model would: a valid one, a wrong argument type, a
//! hallucinated tool, a charge that times out after the card was charged, and
//! the same charge again once a person has resolved it. This test plays that
//! person (it resolves the intent in the ledger, as `gate reconcile resolve`
//! does) and checks what the client saw and what the simulated payment
//! provider did.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, Command, Stdio};

use serde_json::{Value, json};
use toolgate::ledger::{Resolution, ResolveRequest};

const SERVER: &str = env!("CARGO_BIN_EXE_invoice-mcp");

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The interpreter of the test environment: `$GATE_TEST_PYTHON`, or the one
/// `.ci/test-deps` builds.
fn python() -> PathBuf {
    let path = std::env::var_os("GATE_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/test-venv/bin/python"));
    assert!(
        path.exists(),
        "{} is missing: run .ci/test-deps (it builds the Python environment with the official MCP client), or set GATE_TEST_PYTHON",
        path.display()
    );
    path
}

fn scratch(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("gate-mcp-py-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

enum Transport {
    Stdio,
    Http,
}

/// What one session showed.
struct Session {
    steps: Vec<Value>,
    resolved_key: String,
    provider: Value,
}

impl Session {
    fn step(&self, name: &str) -> &Value {
        self.steps
            .iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("the client reported no `{name}` step; it reported {:?}", self.steps))
    }
}

/// The first JSON line of `lines` with the simulated provider's summary.
fn provider_summary(stderr: impl BufRead) -> Value {
    stderr
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .find_map(|v| v.get("payment_provider").cloned())
        .expect("invoice-mcp printed no payment_provider summary")
}

/// Resolves the one unresolved intent in `store` as succeeded, with the
/// charge the provider made, as an operator would after checking it.
fn resolve_unknown_charge(store: &str) -> String {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let ledger = toolgate::ledger::open(store).await.unwrap();
        let unresolved = ledger.list_unresolved(10).await.unwrap();
        assert_eq!(unresolved.len(), 1, "one charge waits for a person: {unresolved:?}");
        let key = unresolved[0].key.clone();
        ledger
            .resolve(&ResolveRequest {
                key: key.clone(),
                user: None,
                resolution: Resolution::Succeeded,
                note: Some("the payment provider shows ch_001 under this key".into()),
                value: Some(json!({"charge_id": "ch_001", "invoice_id": "INV-42", "status": "succeeded"})),
            })
            .await
            .unwrap();
        key
    })
}

fn start_http_server(store: &str) -> (Child, String, BufReader<ChildStderr>) {
    let mut server = Command::new(SERVER)
        .args(["--http", "127.0.0.1:0", "--store", store, "--fault", "charge-timeout"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("invoice-mcp: serving MCP at ")
        .unwrap_or_else(|| panic!("invoice-mcp did not say where it serves: {line:?}"))
        .to_owned();
    (server, url, stderr)
}

fn session(transport: Transport, mode: &str, name_task: bool) -> Session {
    let dir = scratch(mode);
    let store = format!("sqlite:{}", dir.join("gate.db").display());
    let script = workspace().join("examples/tests/mcp_client/invoice_session.py");
    let mut client = Command::new(python());
    client.arg(&script).args(["--mode", mode]);
    if name_task {
        client.args(["--task", &format!("py-{mode}-task")]);
    }
    let http = match transport {
        Transport::Http => {
            let (server, url, stderr) = start_http_server(&store);
            client.args(["--url", &url]);
            Some((server, stderr))
        }
        Transport::Stdio => {
            client.args(["--", SERVER, "--store", &store, "--fault", "charge-timeout"]);
            None
        }
    };
    let mut child = client
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_client = child.stdin.take().unwrap();
    let client_stderr = child.stderr.take().unwrap();
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut BufReader::new(client_stderr), &mut text).map(|_| text)
    });
    let mut steps = Vec::new();
    let mut resolved_key = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let step: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("not a JSON line: {line}"));
        if step["step"] == "awaiting_resolution" {
            resolved_key = resolve_unknown_charge(&store);
            writeln!(to_client, "resolved").unwrap();
        }
        steps.push(step);
    }
    let status = child.wait().unwrap();
    let client_stderr = stderr_reader.join().unwrap().unwrap_or_default();
    assert!(status.success(), "the Python client failed: {client_stderr}");
    let provider = match http {
        // Over stdio the server is the client's child; its stderr is the client's.
        None => provider_summary(client_stderr.as_bytes()),
        Some((mut server, stderr)) => {
            let stopped = Command::new("kill")
                .args(["-TERM", &server.id().to_string()])
                .status()
                .unwrap();
            assert!(stopped.success());
            let summary = provider_summary(stderr);
            assert!(server.wait().unwrap().success());
            summary
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    Session {
        steps,
        resolved_key,
        provider,
    }
}

/// What every session must show, in either transport and either era.
fn check(session: &Session, expected_version: &str) {
    let tools = session.step("tools");
    assert_eq!(tools["protocol_version"], expected_version);
    assert_eq!(tools["server_name"], "invoice-mcp");
    let listed = tools["tools"].as_array().unwrap();
    let tool = |name: &str| {
        listed
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("`{name}` is not listed"))
    };
    let hints = |name: &str| {
        let a = &tool(name)["annotations"];
        (
            a["readOnlyHint"].as_bool(),
            a["destructiveHint"].as_bool(),
            a["idempotentHint"].as_bool(),
            a["openWorldHint"].as_bool(),
        )
    };
    let yes = Some(true);
    let no = Some(false);
    assert_eq!(listed.len(), 7);
    assert_eq!(hints("get_invoice"), (yes, no, yes, no));
    assert_eq!(hints("charge_card"), (no, yes, no, yes));
    // `writes`: additive, not idempotent.
    assert_eq!(hints("send_receipt"), (no, no, no, yes));
    assert_eq!(hints("refund"), (no, yes, yes, no));
    assert_eq!(
        tool("get_invoice")["outputSchema"]["required"],
        json!(["id", "customer_id", "amount_cents", "currency"])
    );
    // The manifest follows the negotiated revision: a list result has an
    // output schema only from 2026-07-28 on.
    let list_typed = tool("search_customers").get("outputSchema").is_some();
    assert_eq!(list_typed, expected_version == "2026-07-28");

    let valid = session.step("valid");
    assert_eq!(valid["is_error"], false);
    assert_eq!(valid["structured"]["amount_cents"], 12000);
    assert_eq!(
        serde_json::from_str::<Value>(valid["text"].as_str().unwrap()).unwrap(),
        valid["structured"]
    );
    assert_eq!(valid["meta"]["gate/action"], "return");

    let wrong = session.step("wrong_type");
    assert_eq!(wrong["is_error"], true);
    let text = wrong["text"].as_str().unwrap();
    assert!(text.contains("/invoice_id: expected string, got integer 41"), "{text}");
    assert_eq!(wrong["meta"]["gate/action"], "reject");

    let hallucinated = session.step("hallucinated");
    assert_eq!(hallucinated["is_error"], true);
    let text = hallucinated["text"].as_str().unwrap();
    assert!(text.contains("There is no tool named `get_customer_balance`"), "{text}");
    for name in ["lookup_customer", "get_invoice", "charge_card", "send_receipt"] {
        assert!(text.contains(&format!("`{name}`")), "the real tools are listed: {text}");
    }

    let timeout = session.step("charge_timeout");
    assert_eq!(timeout["is_error"], true);
    assert_eq!(timeout["meta"]["gate/action"], "fail");
    let text = timeout["text"].as_str().unwrap();
    assert!(text.starts_with("STOP."), "{text}");
    assert!(text.contains("queued for a person to check"), "{text}");
    assert!(
        text.contains(&session.resolved_key),
        "the text names the intent: {text}"
    );

    let again = session.step("charge_again");
    assert_eq!(again["is_error"], false, "{again}");
    assert_eq!(
        again["meta"]["gate/action"], "replay",
        "replayed, not run again: {again}"
    );
    assert_eq!(again["structured"]["charge_id"], "ch_001");
    assert_eq!(again["meta"]["gate/task"], timeout["meta"]["gate/task"]);

    let charges = session.provider["charges"].as_array().unwrap();
    assert_eq!(charges.len(), 1, "the card was charged once: {}", session.provider);
    assert_eq!(charges[0]["idempotency_key"], session.resolved_key.as_str());
}

#[test]
fn the_python_client_over_stdio_with_server_discover() {
    check(&session(Transport::Stdio, "auto", false), "2026-07-28");
}

#[test]
fn the_python_client_over_http_in_a_2025_11_25_session() {
    check(&session(Transport::Http, "legacy", false), "2025-11-25");
}

#[test]
fn the_python_client_over_sessionless_http_naming_its_task() {
    let session = session(Transport::Http, "auto", true);
    check(&session, "2026-07-28");
    assert_eq!(session.step("valid")["meta"]["gate/task"], "py-auto-task");
}
