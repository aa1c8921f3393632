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
//!
//! The second script (`tests/mcp_client/approval_session.py`) charges a card
//! that needs a person's approval (`--approval charge_card`), with an
//! elicitation callback that accepts, one that declines, or none (then this
//! test approves out of band, as `gate approvals approve` does).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, Command, Stdio};

use serde_json::{Value, json};
use toolgate::ledger::{
    ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, Resolution, ResolveRequest, Verdict,
};

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

/// Starts invoice-mcp on streamable HTTP with `server_args`: the server, the
/// URL it serves and its stderr after that line.
fn start_http_server(store: &str, server_args: &[&str]) -> (Child, String, BufReader<ChildStderr>) {
    let mut server = Command::new(SERVER)
        .args(["--http", "127.0.0.1:0", "--store", store])
        .args(server_args)
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

/// Runs the client `script` with `script_args` against invoice-mcp (started
/// with `server_args` on `store`), feeding each reported step to `person`,
/// whose answer, if any, is written to the script's stdin. The steps and
/// the simulated payment provider's summary.
fn drive(
    script: &str,
    script_args: &[&str],
    transport: Transport,
    store: &str,
    server_args: &[&str],
    mut person: impl FnMut(&Value) -> Option<&'static str>,
) -> (Vec<Value>, Value) {
    let script = workspace().join("examples/tests/mcp_client").join(script);
    let mut client = Command::new(python());
    client.arg(&script).args(script_args);
    let http = match transport {
        Transport::Http => {
            let (server, url, stderr) = start_http_server(store, server_args);
            client.args(["--url", &url]);
            Some((server, stderr))
        }
        Transport::Stdio => {
            client.args(["--", SERVER, "--store", store]).args(server_args);
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
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let step: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("not a JSON line: {line}"));
        if let Some(answer) = person(&step) {
            writeln!(to_client, "{answer}").unwrap();
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
    (steps, provider)
}

fn session(transport: Transport, mode: &str, name_task: bool) -> Session {
    let dir = scratch(mode);
    let store = format!("sqlite:{}", dir.join("gate.db").display());
    let task = format!("py-{mode}-task");
    let mut script_args = vec!["--mode", mode];
    if name_task {
        script_args.extend(["--task", &task]);
    }
    let mut resolved_key = String::new();
    let (steps, provider) = drive(
        "invoice_session.py",
        &script_args,
        transport,
        &store,
        &["--fault", "charge-timeout"],
        |step| {
            (step["step"] == "awaiting_resolution").then(|| {
                resolved_key = resolve_unknown_charge(&store);
                "resolved"
            })
        },
    );
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

/// The approval requests in `store`, oldest first.
fn approval_requests(store: &str) -> Vec<ApprovalRecord> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let ledger = toolgate::ledger::open(store).await.unwrap();
        ledger.list_approvals(&ApprovalQuery::default()).await.unwrap()
    })
}

/// Approves the one pending request in `store` as operator `alice`.
fn approve_out_of_band(store: &str) {
    let pending = approval_requests(store);
    assert_eq!(pending.len(), 1, "one charge waits for a person: {pending:?}");
    assert_eq!(pending[0].status, ApprovalStatus::Pending);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let ledger = toolgate::ledger::open(store).await.unwrap();
        let decision = ApprovalDecision {
            id: pending[0].id.clone(),
            by: "alice".into(),
            verdict: Verdict::Approve,
            note: None,
        };
        ledger.decide_approval(&decision).await.unwrap();
    });
}

/// What one approval session showed.
struct Approval {
    steps: Vec<Value>,
    provider: Value,
    requests: Vec<ApprovalRecord>,
}

impl Approval {
    fn step(&self, name: &str) -> &Value {
        self.steps
            .iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("the client reported no `{name}` step; it reported {:?}", self.steps))
    }

    fn charges(&self) -> usize {
        self.provider["charges"].as_array().unwrap().len()
    }

    fn only_request(&self) -> &ApprovalRecord {
        assert_eq!(self.requests.len(), 1, "one request: {:?}", self.requests);
        &self.requests[0]
    }
}

fn approval_session(transport: Transport, mode: &str, answer: &str) -> Approval {
    let dir = scratch(&format!("approval-{mode}-{answer}"));
    let store = format!("sqlite:{}", dir.join("gate.db").display());
    let (steps, provider) = drive(
        "approval_session.py",
        &["--mode", mode, "--answer", answer],
        transport,
        &store,
        &["--approval", "charge_card"],
        |step| {
            (step["step"] == "awaiting_decision").then(|| {
                approve_out_of_band(&store);
                "decided"
            })
        },
    );
    let requests = approval_requests(&store);
    let _ = std::fs::remove_dir_all(&dir);
    Approval {
        steps,
        provider,
        requests,
    }
}

fn text(step: &Value) -> &str {
    step["text"].as_str().unwrap()
}

/// The client's user accepted: the call ran once and answered with the
/// charge; the identical call again replays it.
fn check_accepted(session: &Approval) {
    let charge = session.step("charge");
    assert_eq!(charge["is_error"], false, "{charge}");
    assert_eq!(charge["meta"]["gate/action"], "return", "{charge}");
    assert!(text(charge).contains("\"charge_id\""), "{charge}");
    let questions = charge["questions"].as_array().unwrap();
    assert_eq!(questions.len(), 1, "{charge}");
    let question = questions[0]["message"].as_str().unwrap();
    assert!(question.starts_with("Approve `charge_card` with {"), "{question}");
    assert!(question.contains("\"cus_bob\""), "the arguments in full: {question}");
    assert_eq!(questions[0]["schema"]["properties"]["reason"]["type"], "string");

    let again = session.step("charge_again");
    assert_eq!(again["meta"]["gate/action"], "replay", "{again}");
    assert_eq!(again["questions"].as_array().unwrap().len(), 1, "not asked twice");
    assert_eq!(session.charges(), 1, "{}", session.provider);
    let request = session.only_request();
    assert_eq!(request.status, ApprovalStatus::Approved);
    assert_eq!(request.decided_by.as_deref(), Some("mcp-client"));
    assert_eq!(request.note.as_deref(), Some("invoice INV-42 checked"));
}

/// The client's user declined: nothing ran, the model read the denial, and
/// the identical call is refused as a repeat.
fn check_declined(session: &Approval) {
    let charge = session.step("charge");
    assert_eq!(charge["is_error"], true, "{charge}");
    assert!(
        text(charge).contains("a person declined: declined in the MCP client"),
        "{charge}"
    );
    let again = session.step("charge_again");
    assert_eq!(again["is_error"], true, "{again}");
    assert_eq!(session.charges(), 0, "{}", session.provider);
    let request = session.only_request();
    assert_eq!(request.status, ApprovalStatus::Denied);
    assert_eq!(request.decided_by.as_deref(), Some("mcp-client"));
}

/// The client cannot be asked: the pending text is the result; once an
/// operator approved, the identical call runs it, once.
fn check_decided_out_of_band(session: &Approval) {
    let charge = session.step("charge");
    assert_eq!(charge["meta"]["gate/action"], "await_approval", "{charge}");
    assert_eq!(charge["is_error"], true, "no result yet: {charge}");
    assert!(text(charge).contains("has not run"), "{charge}");
    let request = session.only_request();
    assert_eq!(charge["meta"]["gate/approval"], request.id.as_str());
    let again = session.step("charge_again");
    assert_eq!(again["is_error"], false, "{again}");
    assert_eq!(again["meta"]["gate/action"], "return", "{again}");
    assert_eq!(session.charges(), 1, "{}", session.provider);
    assert_eq!(request.status, ApprovalStatus::Approved);
    assert_eq!(request.decided_by.as_deref(), Some("alice"));
}

#[test]
fn the_python_client_that_accepts_runs_the_charge_once_over_stdio() {
    check_accepted(&approval_session(Transport::Stdio, "auto", "accept"));
}

#[test]
fn the_python_client_that_declines_never_runs_the_charge_over_stdio() {
    check_declined(&approval_session(Transport::Stdio, "auto", "decline"));
}

#[test]
fn the_python_client_without_elicitation_gets_the_charge_after_an_operator_approves_over_stdio() {
    check_decided_out_of_band(&approval_session(Transport::Stdio, "auto", "none"));
}

#[test]
fn the_python_client_that_accepts_runs_the_charge_once_over_http_in_a_2025_11_25_session() {
    check_accepted(&approval_session(Transport::Http, "legacy", "accept"));
}

#[test]
fn the_python_client_that_declines_never_runs_the_charge_over_http_in_a_2025_11_25_session() {
    check_declined(&approval_session(Transport::Http, "legacy", "decline"));
}

#[test]
fn the_python_client_without_elicitation_gets_the_charge_after_an_operator_approves_over_http_in_a_2025_11_25_session()
{
    check_decided_out_of_band(&approval_session(Transport::Http, "legacy", "none"));
}

#[test]
fn the_python_client_that_accepts_over_sessionless_http_answers_in_the_task_that_asked() {
    // The answer arrives on a new request that names no task: it runs in
    // the task of the approval request it answers.
    let session = approval_session(Transport::Http, "auto", "accept");
    check_accepted(&session);
    let task = session.step("charge")["meta"]["gate/task"].clone();
    assert_eq!(task, session.only_request().task_id.as_str());
}
