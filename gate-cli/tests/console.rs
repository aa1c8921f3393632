//! `gate console` in a real browser: headless Chromium, driven by Playwright
//! (`tests/browser/console_session.py`), approves one request, denies one
//! resolves one intent and reopens a failed task through the page's forms; the store then shows
//! that the approved call ran once and the denied one never. Requests that
//! do not come from the page (no token, a foreign `Host`, a GET that would
//! decide) are refused and change nothing.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use toolgate::ledger::{ApprovalStatus, State};
use toolgate::{Step, ToolCall};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The interpreter of the test environment (`.ci/test-deps` builds it, with
/// Playwright), or `$GATE_TEST_PYTHON`.
fn python() -> PathBuf {
    let path = std::env::var_os("GATE_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/test-venv/bin/python"));
    assert!(
        path.exists(),
        "{} is missing: run .ci/test-deps (it builds the Python environment with Playwright), or set GATE_TEST_PYTHON",
        path.display()
    );
    path
}

/// The hostile text a model put in an argument: markup that would run if
/// the page rendered it.
const HOSTILE_IBAN: &str = "<img src=x onerror=\"document.title='pwned'\">";

/// A store with two pending requests (the second with hostile markup in its
/// arguments), one intent whose outcome is unknown and a task `t-lost`
/// that failed at the rejection cap: the requests' ids and the intent key.
fn filled_store(store: &str) -> (String, String, String) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let gate = support::gate_asking_for_approval(store).await;
        let mut task = gate.task_with_id("u1", "t-wire");
        let mut ids = Vec::new();
        for (n, iban) in ["DE89370400440532013000", HOSTILE_IBAN].into_iter().enumerate() {
            let call = ToolCall::new(format!("w{n}"), "wire_money", json!({"iban": iban}).to_string());
            match task.handle(call).await {
                Step::AwaitingApproval(waiting) => ids.push(waiting.approval_id),
                other => panic!("{other:?}"),
            }
        }
        let charging = support::gate_whose_charge_times_out(store).await;
        let mut task = charging.task_with_id("u2", "t-charge");
        let key = match task.handle(ToolCall::new("c1", "charge_card", "{}")).await {
            Step::Fail(failure) => failure
                .intent_key
                .expect("a charge whose outcome is unknown names its intent"),
            other => panic!("{other:?}"),
        };
        // The rejection cap (2): a third call of a tool that does not exist
        // fails the task, which waits for a person to reopen it.
        let mut lost = charging.task_with_id("u3", "t-lost");
        for (n, tool) in ["nope_a", "nope_b", "nope_c"].into_iter().enumerate() {
            let step = lost.handle(ToolCall::new(format!("n{n}"), tool, "{}")).await;
            assert_eq!(step.is_fail(), n == 2, "{step:?}");
        }
        gate.shutdown().await;
        charging.shutdown().await;
        (ids.remove(0), ids.remove(0), key)
    })
}

/// Starts `gate console` on a free loopback port: the process and the URL
/// it printed.
fn start_console(store: &str) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gate"))
        .args(["console", "--store", store, "--listen", "127.0.0.1:0", "--by", "alice"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("gate console: ")
        .unwrap_or_else(|| panic!("gate console did not print its URL: {line:?}"))
        .to_owned();
    (child, url)
}

/// One HTTP/1.1 request by hand, as a page elsewhere or a script could send
/// it: the status code and the body.
fn send(url: &str, method: &str, path: &str, host: Option<&str>, form: &str) -> (u16, String) {
    let authority = url.trim_start_matches("http://").split('/').next().unwrap();
    let mut stream = TcpStream::connect(authority).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{form}",
        host.unwrap_or(authority),
        form.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    (status, response)
}

fn status_of(store: &str, id: &str) -> ApprovalStatus {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let ledger = toolgate::ledger::open(store).await.unwrap();
        ledger.load_approval(id).await.unwrap().unwrap().status
    })
}

#[test]
fn a_person_approves_denies_and_resolves_in_chromium_and_the_approved_call_runs_once() {
    let dir = std::env::temp_dir().join(format!("gate-console-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("gate.db").display());
    let (approve, deny, key) = filled_store(&store);
    let (mut console, url) = start_console(&store);
    let token = url.trim_end_matches('/').rsplit('/').next().unwrap().to_owned();

    // Requests that do not come from the page change nothing.
    let form = format!("id={approve}&by=mallory");
    assert_eq!(send(&url, "POST", "/approvals/approve", None, &form).0, 404);
    let other_token = "0".repeat(token.len());
    assert_eq!(
        send(&url, "POST", &format!("/{other_token}/approvals/approve"), None, &form).0,
        404
    );
    let rebound = send(
        &url,
        "POST",
        &format!("/{token}/approvals/approve"),
        Some("evil.example:80"),
        &form,
    );
    assert_eq!(rebound.0, 403, "{}", rebound.1);
    assert_eq!(
        send(&url, "GET", &format!("/{token}/approvals/approve?{form}"), None, "").0,
        405
    );
    assert_eq!(status_of(&store, &approve), ApprovalStatus::Pending);

    let session = Command::new(python())
        .arg(workspace().join("gate-cli/tests/browser/console_session.py"))
        .args(["--url", &url, "--approve", &approve, "--deny", &deny, "--resolve", &key])
        .arg("--chromium")
        .arg(support::chromium())
        .output()
        .unwrap();
    let seen: Vec<Value> = String::from_utf8_lossy(&session.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not a JSON line: {l}")))
        .collect();
    assert!(
        session.status.success(),
        "the browser session failed: {}\n{seen:?}",
        String::from_utf8_lossy(&session.stderr)
    );
    let step = |name: &str| {
        seen.iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("no `{name}` step in {seen:?}"))
    };

    let opened = step("opened");
    assert_eq!(opened["scripts"], 0, "{opened}");
    assert_eq!(opened["images"], 0, "the model's markup is text: {opened}");
    assert_eq!(opened["intents"], 1, "{opened}");
    let shown = opened["arguments"][&deny].as_str().unwrap();
    assert!(shown.contains(HOSTILE_IBAN.replace('"', "\\\"").as_str()), "{shown}");
    assert!(
        opened["arguments"][&approve]
            .as_str()
            .unwrap()
            .contains("DE89370400440532013000")
    );
    let headings = opened["headings"].as_array().unwrap();
    assert!(headings.iter().any(|h| h == "Waiting for approval (2)"), "{headings:?}");
    assert!(headings.iter().any(|h| h == "Outcome unknown (1)"), "{headings:?}");

    assert!(
        step("approved")["outcome"]
            .as_str()
            .unwrap()
            .contains("approved by alice")
    );
    assert!(step("denied")["outcome"].as_str().unwrap().contains("denied by alice"));
    assert!(step("resolved")["outcome"].as_str().unwrap().contains("is resolved"));
    let reopened = step("reopened")["outcome"].as_str().unwrap();
    assert!(reopened.contains("task t-lost of u3 is reopened"), "{reopened}");
    let after = step("after");
    assert_eq!(
        (&after["approvals"], &after["intents"]),
        (&json!(0), &json!(0)),
        "{after}"
    );
    assert_ne!(after["title"], "pwned");
    assert_eq!(after["errors"], json!([]));

    // Deciding again, by hand, is refused: a request is decided once.
    let again = send(
        &url,
        "POST",
        &format!("/{token}/approvals/approve"),
        None,
        &format!("id={deny}&by=mallory"),
    );
    assert_eq!(again.0, 409, "{}", again.1);
    assert!(again.1.contains("denied"), "{}", again.1);
    let _ = console.kill();
    let _ = console.wait();

    // Through the store: the approved call runs once, in whichever of two
    // workers asks first; the denied one never runs.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let ledger = toolgate::ledger::open(&store).await.unwrap();
        let approved = ledger.load_approval(&approve).await.unwrap().unwrap();
        let denied = ledger.load_approval(&deny).await.unwrap().unwrap();
        assert_eq!(approved.status, ApprovalStatus::Approved);
        assert_eq!(approved.decided_by.as_deref(), Some("alice"));
        assert_eq!(approved.note.as_deref(), Some("checked with the customer"));
        assert_eq!(denied.status, ApprovalStatus::Denied);
        assert_eq!(denied.denial_reason.as_deref(), Some("wrong account"));
        let lost = ledger.load_task("u3", "t-lost").await.unwrap().unwrap();
        assert!(!lost.terminal, "{lost:?}");
        let resolved = ledger.find(&key).await.unwrap();
        assert!(
            resolved.iter().all(|r| r.state != State::OutcomeUnknown),
            "{resolved:?}"
        );

        let first = support::gate_asking_for_approval(&store).await;
        let second = support::gate_asking_for_approval(&store).await;
        let ran = first.task_with_id("u1", "t-wire").take_decided().await.unwrap();
        let again = second.task_with_id("u1", "t-wire").take_decided().await.unwrap();
        let ran_ok = |s: &&Step| matches!(s, Step::Return(out) if !out.is_error);
        let returned: Vec<_> = ran.iter().chain(&again).filter(ran_ok).collect();
        assert_eq!(returned.len(), 1, "{ran:?} {again:?}");
        assert_eq!(returned[0].call_id(), "w0");
        let declined: Vec<_> = ran.iter().chain(&again).filter(|s| !ran_ok(s)).collect();
        assert_eq!(declined.len(), 1, "{ran:?} {again:?}");
        assert!(declined[0].model_text().contains("a person declined: wrong account"));
        let intent = ledger.find(&approved.intent_key).await.unwrap();
        assert_eq!(intent.len(), 1, "{intent:?}");
        assert_eq!((intent[0].state, intent[0].attempt), (State::Succeeded, 1));
        assert!(
            ledger.find(&denied.intent_key).await.unwrap().is_empty(),
            "the denied call never reached the ledger"
        );
        first.shutdown().await;
        second.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}
