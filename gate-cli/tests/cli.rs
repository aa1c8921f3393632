//! The `gate` binary end to end: every subcommand, its output and its exit
//! status (0 success, 1 a negative result, 2 bad input).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn gate(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gate"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gate-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn manifest_prints_converts_and_refuses() {
    let out = gate(&["manifest", "--format", "mcp"], None);
    assert_eq!(out.status.code(), Some(0));
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(tools.as_array().unwrap().len() >= 8);

    let out = gate(
        &["manifest", "--format", "gemini", "--tools", &fixture("tools.mcp.json")],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(tools[0]["parameters"]["type"], "OBJECT");

    let out = gate(&["manifest", "--format", "openai-strict"], None);
    assert_eq!(out.status.code(), Some(1), "the catalog has a HashMap");
    assert!(String::from_utf8_lossy(&out.stderr).contains("set_attributes"));

    assert_eq!(gate(&["manifest", "--format", "nope"], None).status.code(), Some(2));
    assert_eq!(
        gate(&["manifest", "--format", "mcp", "--tools", "/no/such/file"], None)
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        gate(&["manifest", "--format", "mcp", "--tools", "-"], Some("not json"))
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn check_prints_one_verdict_per_call() {
    let calls = concat!(
        r#"{"name": "lookup_customer", "arguments": "{\"email\": \"a@b.c\"}"}"#,
        "\n",
        r#"{"name": "lookup_customer", "arguments": {"email": 12345, "extra": 1}}"#,
        "\n",
        r#"{"name": "lookup_custmer", "arguments": {}}"#,
        "\n"
    );
    let out = gate(&["check", "--tools", &fixture("tools.mcp.json")], Some(calls));
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0], serde_json::json!({"ok": true}));
    assert_eq!(lines[1]["ok"], false);
    let paths: Vec<&str> = lines[1]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"/email") && paths.contains(&"/extra"), "{paths:?}");
    assert!(lines[2]["message"].as_str().unwrap().contains("lookup_customer"));

    let valid = r#"{"name": "list_customers", "arguments": "{}"}"#;
    assert_eq!(
        gate(&["check", "--tools", &fixture("tools.mcp.json")], Some(valid))
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        gate(&["check", "--tools", &fixture("tools.mcp.json")], Some("{oops"))
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn sanitize_prints_text_or_findings() {
    let text = "boom at 10.1.2.3:5432 with key AKIAIOSFODNN7EXAMPLE\n";
    let out = gate(&["sanitize"], Some(text));
    assert_eq!(out.status.code(), Some(0));
    let clean = stdout(&out);
    assert!(
        !clean.contains("AKIAIOSFODNN7EXAMPLE") && !clean.contains("10.1.2.3"),
        "{clean}"
    );
    let out = gate(&["sanitize", "--json", "-"], Some(text));
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        !stdout(&out).contains("AKIAIOSFODNN7EXAMPLE"),
        "findings never carry the secret"
    );
    assert!(report["findings"].as_array().unwrap().len() >= 2);
}

#[test]
fn cost_reproduces_the_worked_example() {
    let out = gate(
        &[
            "cost",
            "--steps",
            "3",
            "--system",
            "4000",
            "--per-step",
            "2000",
            "--json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("18000"), "{text}");
    assert!(
        text.contains("26000") && text.contains("28000") && text.contains("36000"),
        "{text}"
    );
    assert_eq!(gate(&["cost", "--steps", "3"], None).status.code(), Some(2));
}

#[test]
fn replay_prints_each_decision_and_a_summary() {
    let out = gate(
        &[
            "replay",
            "--tools",
            &fixture("tools.mcp.json"),
            &fixture("transcript.jsonl"),
            "--json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let decisions: Vec<&str> = lines.iter().filter_map(|l| l["decision"].as_str()).collect();
    assert_eq!(decisions, ["reject", "retry", "return", "fail"]);
    assert_eq!(lines[0]["class"], "structural");
    assert_eq!(lines[3]["class"], "outcome_unknown");
    assert!(
        lines[0]["repair_tokens"].as_u64().unwrap() >= 4000,
        "a repair replays the context"
    );
    assert_eq!(lines.last().unwrap()["summary"]["calls"], 4);
}

#[test]
fn reconcile_and_report_work_on_a_store_left_by_a_run() {
    let dir = scratch("reconcile");
    let store = format!("sqlite:{}", dir.join("gate.db").display());
    // Leave an unknown outcome behind with the replay of a charge that timed out.
    let transcript = dir.join("t.jsonl");
    std::fs::write(&transcript, r#"{"call": {"id": "c1", "name": "charge_card", "arguments": {"customer_id": "c", "amount_cents": 5}}, "error": {"kind": "timeout"}}"#).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let key = rt.block_on(async {
        use gate::{DynamicTool, Effects, Gate, ToolCall, ToolError, ToolSpec, Toolbox};
        let spec = ToolSpec::new(
            "charge_card",
            "Charge.",
            serde_json::json!({"type": "object"}),
            Effects::new().destructive(),
        )
        .unwrap();
        let tool = DynamicTool::new(spec).with_handler(|_, _| async { Err::<Value, _>(ToolError::Timeout) });
        let gate = Gate::builder(Toolbox::new().with(tool).unwrap())
            .store(&store)
            .build()
            .await
            .unwrap();
        let mut task = gate.task("u1");
        task.intent("pay INV-1");
        let key = task.intent_key_for("charge_card").unwrap();
        assert!(task.handle(ToolCall::new("c1", "charge_card", "{}")).await.is_fail());
        key
    });

    let out = gate(&["reconcile", "list", "--store", &store], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains(&key), "{}", stdout(&out));
    let out = gate(&["reconcile", "show", &key, "--store", &store], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("\"outcome_unknown\""), "{}", stdout(&out));

    let resolve = |outcome: &str| {
        gate(
            &[
                "reconcile",
                "resolve",
                &key,
                "--outcome",
                outcome,
                "--note",
                "checked the PSP",
                "--store",
                &store,
            ],
            None,
        )
    };
    assert_eq!(resolve("succeeded").status.code(), Some(0));
    assert_eq!(
        resolve("succeeded").status.code(),
        Some(0),
        "the same answer twice is a no-op"
    );
    assert_eq!(
        resolve("failed").status.code(),
        Some(1),
        "a different answer is refused"
    );
    assert_eq!(
        gate(
            &["reconcile", "resolve", &key, "--outcome", "maybe", "--store", &store],
            None
        )
        .status
        .code(),
        Some(2)
    );
    let out = gate(&["reconcile", "list", "--store", &store], None);
    assert!(!stdout(&out).contains(&key), "resolved intents leave the queue");

    let html = dir.join("report.html");
    let out = gate(&["report", "--store", &store, "--html", html.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("1 decisions"), "{}", stdout(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("charge_card"));
    let _ = std::fs::remove_dir_all(&dir);
}
