//! The `gate` binary end to end: every subcommand, its output and its exit
//! status (0 success, 1 a negative result, 2 bad input).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

mod support;
use support::{fixture, gate_bytes};

/// The command, started with all three streams piped.
fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_gate"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn gate(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = spawn(args);
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
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
    assert_eq!(decisions, ["reject", "retry_with_correction", "return", "fail"]);
    assert_eq!(lines[0]["class"], "structural");
    assert_eq!(lines[3]["class"], "outcome_unknown");
    assert!(
        lines[0]["repair_tokens"].as_u64().unwrap() >= 4000,
        "a repair replays the context"
    );
    assert_eq!(lines.last().unwrap()["summary"]["calls"], 4);
}

fn replay_json(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["replay", "--json"];
    all.extend_from_slice(args);
    let out = gate(&all, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn column<'a>(lines: &'a [Value], key: &str) -> Vec<&'a str> {
    lines.iter().filter_map(|l| l[key].as_str()).collect()
}

#[test]
fn replay_reads_an_openai_chat_log_and_classifies_unlabelled_errors() {
    let lines = replay_json(&["--tools", &fixture("tools.mcp.json"), &fixture("openai-chat.json")]);
    assert_eq!(
        column(&lines, "read_as"),
        ["rule:not_found", "ok", "unmatched_error", "rule:timeout", "ok"]
    );
    assert_eq!(
        column(&lines, "class"),
        [
            "ambiguous_wrong_target",
            "none",
            "structural",
            "outcome_unknown",
            "none"
        ]
    );
    // The timed-out charge is failed and reconciled; the charge the model
    // sent again is never run.
    assert_eq!(column(&lines, "decision")[2..], ["reject", "fail", "fail"]);
    let theirs: Vec<u64> = lines[..5]
        .iter()
        .map(|l| l["transcript_repair_tokens"].as_u64().unwrap())
        .collect();
    assert!(theirs[0] > 0 && theirs[2] > 0 && theirs[3] > 0, "{theirs:?}");
    assert_eq!((theirs[1], theirs[4]), (0, 0), "successful calls cost no repair");
    assert!(
        theirs[3] > theirs[0],
        "a later repair re-reads a longer context: {theirs:?}"
    );
    let summary = &lines[5]["summary"];
    assert_eq!(summary["tasks"], 1);
    assert_eq!(summary["calls"], 5);
    assert_eq!(summary["transcript_repair_tokens"], theirs.iter().sum::<u64>());

    let out = gate(
        &[
            "replay",
            "--tools",
            &fixture("tools.mcp.json"),
            &fixture("openai-chat.json"),
        ],
        None,
    );
    let text = stdout(&out);
    assert!(
        text.contains("call_Hx4sD9fL2qW7bN1m") && text.contains("read_as=rule:timeout"),
        "{text}"
    );
    assert!(text.contains("(the transcript spent "), "{text}");
}

#[test]
fn replay_reads_an_anthropic_log_with_its_usage_and_error_flags() {
    let lines = replay_json(&[
        "--tools",
        &fixture("tools.mcp.json"),
        &fixture("anthropic-messages.json"),
    ]);
    assert_eq!(column(&lines, "read_as"), ["ok", "unmatched_error", "unmatched_error"]);
    assert_eq!(column(&lines, "decision"), ["return", "return", "reject"]);
    assert_eq!(column(&lines, "class")[1], "definitive");
    // The declined card was answered by a turn of 2,041 + 69 tokens that sent
    // the same charge again; gate refuses that repeat without running it.
    let theirs: Vec<u64> = lines[..3]
        .iter()
        .map(|l| l["transcript_repair_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(theirs, [0, 2_110, 0]);
    assert!(
        lines[2]["text"].as_str().unwrap().contains("already failed"),
        "{}",
        lines[2]["text"]
    );
}

#[test]
fn replay_counts_a_task_line_as_the_task_it_starts() {
    let dir = scratch("replay-tasks");
    let call = r#"{"call": {"id": "c1", "name": "list_customers", "arguments": {}}, "result": []}"#;
    for (transcript, tasks) in [
        (format!("{{\"task\": \"t1\", \"user\": \"u1\"}}\n{call}\n"), 1),
        (format!("{call}\n"), 1),
        (format!("{call}\n{{\"task\": \"t2\"}}\n{call}\n"), 2),
        (
            format!("{{\"task\": \"t1\"}}\n{call}\n{{\"task\": \"t2\"}}\n{call}\n"),
            2,
        ),
    ] {
        let path = dir.join("t.jsonl");
        std::fs::write(&path, &transcript).unwrap();
        let lines = replay_json(&["--tools", &fixture("tools.mcp.json"), path.to_str().unwrap()]);
        assert_eq!(lines.last().unwrap()["summary"]["tasks"], tasks, "{transcript}");
    }
}

#[test]
fn replay_reads_an_unlabelled_error_of_its_own_format_by_the_rules() {
    let dir = scratch("replay-unlabelled");
    let path = dir.join("t.jsonl");
    std::fs::write(
        &path,
        r#"{"call": {"id": "c1", "name": "lookup_customer", "arguments": {"email": "a@b.c"}}, "error": "Error: 404 Not Found"}"#,
    )
    .unwrap();
    let lines = replay_json(&["--tools", &fixture("tools.mcp.json"), path.to_str().unwrap()]);
    assert_eq!(lines[0]["read_as"], "rule:not_found");
    assert_eq!(lines[0]["class"], "ambiguous_wrong_target");
}

#[test]
fn replay_refuses_a_transcript_it_cannot_read() {
    let dir = scratch("replay-bad");
    let tools = fixture("tools.mcp.json");
    for (name, transcript, says) in [
        (
            "kind.jsonl",
            r#"{"call": {"id": "c1", "name": "list_customers"}, "error": {"kind": "tiemout"}}"#,
            "unknown error kind `tiemout`",
        ),
        (
            "orphan.json",
            r#"[{"role": "tool", "tool_call_id": "call_x", "content": "ok"}]"#,
            "messages[0]: a tool result for `call_x`",
        ),
        (
            "shape.json",
            r#"[{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "x"}}]}]"#,
            "messages[0]: openai: $.tool_calls[0].id",
        ),
        (
            "lines.jsonl",
            "{\"messages\": []}\nnot json\n",
            "transcript line 2: not JSON",
        ),
        (
            "format.json",
            r#"[{"role": "user", "content": "hi"}]"#,
            "expected \"call\", \"usage\", \"user_message\" or \"task\"",
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, transcript).unwrap();
        let format = if name == "format.json" { "gate" } else { "auto" };
        let out = gate(
            &["replay", "--tools", &tools, "--format", format, path.to_str().unwrap()],
            None,
        );
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stdout(&out));
        assert!(stderr(&out).contains(says), "{name}: {}", stderr(&out));
    }
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
        use toolgate::ToolCall;
        let gate = support::gate_whose_charge_times_out(&store).await;
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

/// The tools of the store tests: a lookup that always finds the customer and
/// a charge that always times out (the charge may have happened).
fn shop() -> toolgate::Toolbox {
    use toolgate::{DynamicTool, Effects, ToolError, ToolSpec, Toolbox};
    let lookup = ToolSpec::new(
        "lookup_customer",
        "Look up a customer by email.",
        serde_json::json!({
            "type": "object",
            "properties": {"email": {"type": "string"}},
            "required": ["email"],
            "additionalProperties": false
        }),
        Effects::new().read_only(),
    )
    .unwrap();
    let charge = ToolSpec::new(
        "charge_card",
        "Charge a card.",
        serde_json::json!({"type": "object"}),
        Effects::new().destructive(),
    )
    .unwrap();
    Toolbox::new()
        .with(DynamicTool::new(lookup).with_handler(|_, _| async { Ok(serde_json::json!({"id": "cus_1"})) }))
        .unwrap()
        .with(DynamicTool::new(charge).with_handler(|_, _| async { Err::<Value, _>(ToolError::Timeout) }))
        .unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

#[test]
fn failed_tasks_are_reported_listed_reopened_and_resolved() {
    use toolgate::{Gate, Step, ToolCall};
    let dir = scratch("failed-tasks");
    let store = format!("sqlite:{}", dir.join("gate.db").display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Four tasks, driven through the real runtime (rejection cap 2):
    // u1/task-fixed: a rejected lookup, then a valid one        → reject, return
    // u1/task-cap, u2/task-cap: three calls of unknown tools    → reject, reject, fail (rejection_cap)
    // u1/task-charge: a charge that times out                   → fail (outcome_unknown)
    let key = rt.block_on(async {
        let gate = Gate::builder(shop()).store(&store).build().await.unwrap();
        let mut fixed = gate.task_with_id("u1", "task-fixed");
        let step = fixed
            .handle(ToolCall::new("f1", "lookup_customer", r#"{"email": 12345}"#))
            .await;
        assert!(matches!(step, Step::Reject(_)), "{step:?}");
        let step = fixed
            .handle(ToolCall::new("f2", "lookup_customer", r#"{"email": "a@b.c"}"#))
            .await;
        assert!(matches!(step, Step::Return(_)), "{step:?}");
        for user in ["u1", "u2"] {
            let mut capped = gate.task_with_id(user, "task-cap");
            for (i, tool) in ["nope_a", "nope_b", "nope_c"].into_iter().enumerate() {
                let step = capped.handle(ToolCall::new(format!("{user}-{i}"), tool, "{}")).await;
                assert_eq!(step.is_fail(), i == 2, "{step:?}");
            }
        }
        let mut charge = gate.task_with_id("u1", "task-charge");
        charge.intent("pay INV-1");
        let step = charge
            .handle(ToolCall::new(
                "c1",
                "charge_card",
                r#"{"customer_id": "c", "amount_cents": 5}"#,
            ))
            .await;
        assert!(step.is_fail(), "{step:?}");
        charge.intent_key_for("charge_card").unwrap()
    });

    // 9 decisions: return 1, reject 5, fail 3. Every rejection and the two
    // rejection-cap fails are structural (7). Only task-fixed's rejection is
    // followed by a valid call (1 of 5). A task is a user and an id, so the
    // two users' task-cap tasks are two of its 4 tasks.
    let out = gate(&["report", "--store", &store], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        "9 decisions\n",
        "by action: return=1 reject=5 fail=3\n",
        "by class: structural=7 outcome_unknown=1\n",
        "rejections: 5 (1 followed by a valid call: 20%)\n",
        "fails by reason: rejection_cap=2 outcome_unknown=1\n",
        "over 4 tasks\n",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    let report = json_of(&gate(&["report", "--store", &store, "--json"], None));
    assert_eq!(
        report["fails_by_reason"],
        serde_json::json!({"rejection_cap": 2, "outcome_unknown": 1})
    );
    assert_eq!(report["rejection_follow_ups"]["valid"], 1);

    // The list: the unknown intent, then the three failed tasks, the one that
    // needs reconciliation first.
    let out = gate(&["reconcile", "list", "--store", &store], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Intents whose outcome is unknown (1):") && text.contains(&key),
        "{text}"
    );
    let tasks = &text[text.find("Failed tasks (3):").unwrap_or_else(|| panic!("{text}"))..];
    let rows: Vec<&str> = tasks.lines().skip(2).collect();
    assert_eq!(rows.len(), 3, "{tasks}");
    assert!(
        rows[0].starts_with("task-charge") && rows[0].contains("outcome_unknown") && rows[0].contains(&key),
        "{tasks}"
    );
    assert!(
        rows[1..]
            .iter()
            .all(|r| r.starts_with("task-cap") && r.contains("rejection_cap")),
        "{tasks}"
    );
    let list = |store: &str| json_of(&gate(&["reconcile", "list", "--store", store, "--json"], None));
    let listed = list(&store);
    assert_eq!(listed["unresolved_intents"].as_array().unwrap().len(), 1);
    assert_eq!(listed["unresolved_intents"][0]["key"], key.as_str());
    let failed = listed["failed_tasks"].as_array().unwrap();
    assert_eq!(failed.len(), 3);
    assert_eq!(failed[0]["task_id"], "task-charge");
    assert_eq!(failed[0]["failure"]["reason"], "outcome_unknown");
    assert_eq!(failed[0]["failure"]["intent_key"], key.as_str());

    // Reopening: two users have a failed task-cap, so the user must be named.
    let reopen = |args: &[&str]| {
        let mut all = vec!["reconcile", "reopen"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--store", &store]);
        gate(&all, None)
    };
    let out = reopen(&["task-cap"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--user"), "{}", stderr(&out));
    let out = reopen(&["task-cap", "--user", "u2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("reopened task `task-cap` of user `u2`"),
        "{}",
        stdout(&out)
    );
    let failed = list(&store)["failed_tasks"].clone();
    let still: Vec<(&str, &str)> = failed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["task_id"].as_str().unwrap(), t["user"].as_str().unwrap()))
        .collect();
    assert_eq!(still, [("task-charge", "u1"), ("task-cap", "u1")]);
    assert_eq!(
        reopen(&["task-cap"]).status.code(),
        Some(0),
        "one user left: no --user needed"
    );
    assert_eq!(
        reopen(&["task-cap"]).status.code(),
        Some(1),
        "no failed task-cap is left"
    );
    let out = reopen(&["no-such-task", "--user", "u1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no task `no-such-task` of user `u1`"),
        "{}",
        stderr(&out)
    );
    let out = reopen(&["task-fixed", "--user", "u1"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("has not failed"), "{}", stdout(&out));

    // Resolving: the value must be JSON, and only a real outcome has one.
    let resolve = |outcome: &str, value: &str| {
        gate(
            &[
                "reconcile",
                "resolve",
                &key,
                "--outcome",
                outcome,
                "--value",
                value,
                "--store",
                &store,
            ],
            None,
        )
    };
    let out = resolve("succeeded", "{bad");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not JSON"), "{}", stderr(&out));
    assert_eq!(resolve("not-executed", "{}").status.code(), Some(2));
    assert_eq!(
        list(&store)["unresolved_intents"].as_array().unwrap().len(),
        1,
        "nothing was resolved"
    );
    let out = resolve("succeeded", r#"{"charge_id": "ch_1"}"#);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let record = json_of(&out);
    assert_eq!(record["state"], "reconciled_succeeded");
    assert!(
        stderr(&out).contains("reopened task `task-charge` of user `u1`"),
        "{}",
        stderr(&out)
    );
    let out = gate(&["reconcile", "list", "--store", &store], None);
    assert_eq!(stdout(&out), "Nothing to reconcile.\n");

    // The reopened tasks run again: the capped one calls a real tool, the
    // charge is replayed with the value the person recorded, not run again.
    rt.block_on(async {
        let gate = Gate::builder(shop()).store(&store).build().await.unwrap();
        let mut capped = gate.task_with_id("u2", "task-cap");
        let step = capped
            .handle(ToolCall::new("again", "lookup_customer", r#"{"email": "a@b.c"}"#))
            .await;
        assert!(matches!(step, Step::Return(_)), "{step:?}");
        let mut charge = gate.task_with_id("u1", "task-charge");
        charge.intent("pay INV-1");
        let step = charge
            .handle(ToolCall::new(
                "c2",
                "charge_card",
                r#"{"customer_id": "c", "amount_cents": 5}"#,
            ))
            .await;
        match step {
            Step::Return(out) => {
                assert!(out.replayed);
                assert_eq!(out.value, serde_json::json!({"charge_id": "ch_1"}));
            }
            other => panic!("expected the recorded outcome to be replayed: {other:?}"),
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}

// A reader that goes away before the output is written (`gate … | head`)
// ends the command quietly with success, never with a panic: the output's
// pipe is closed before the command has read its input, so its first write
// meets a broken pipe.
#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    for args in [
        &["sanitize"][..],
        &["sanitize", "--json"][..],
        &["completions", "bash"][..],
    ] {
        let mut child = spawn(args);
        drop(child.stdout.take());
        let mut input = child.stdin.take().unwrap();
        input
            .write_all(b"connect to db.internal:5432 failed: password=hunter2\n")
            .unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{args:?}: {}", stderr(&out));
    }
}

/// The tool names of an OpenAI manifest on standard output.
fn names(out: &Output) -> Vec<String> {
    json_of(out)
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn manifest_skip_unsupported_converts_the_rest_and_lists_what_it_left_out() {
    let all = names(&gate(&["manifest", "--format", "openai"], None));

    // The catalog has a map, a tuple and an untyped value, which strict mode
    // cannot express.
    let refused = [
        ("set_attributes", "/properties/attributes: maps"),
        ("move_pallet", "/properties/position: tuples"),
        ("store_document", "/properties/document: an arbitrary JSON value"),
    ];
    let out = gate(&["manifest", "--format", "openai-strict"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    for (tool, at) in refused {
        assert!(
            err.contains(&format!("gate manifest: openai-strict: tool `{tool}` at {at}")),
            "{err}"
        );
    }
    assert!(
        err.contains(&format!(
            "gate manifest: 3 of {} tools cannot be expressed in openai-strict; --skip-unsupported converts the \
             other {} and lists the ones it leaves out",
            all.len(),
            all.len() - 3
        )),
        "{err}"
    );

    let out = gate(&["manifest", "--format", "openai-strict", "--skip-unsupported"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let converted = names(&out);
    let expected: Vec<String> = all
        .iter()
        .filter(|n| !refused.iter().any(|(tool, _)| tool == n))
        .cloned()
        .collect();
    assert_eq!(converted, expected, "the others, in order");
    let err = stderr(&out);
    for (tool, at) in refused {
        assert!(
            err.contains(&format!("gate manifest: skipped openai-strict: tool `{tool}` at {at}")),
            "{err}"
        );
    }
    assert!(
        err.contains(&format!(
            "gate manifest: converted {} of {} tools to openai-strict; skipped 3 (listed above)",
            all.len() - 3,
            all.len()
        )),
        "{err}"
    );

    // Nothing to skip: the flag changes nothing.
    let plain = gate(&["manifest", "--format", "mcp"], None);
    let flagged = gate(&["manifest", "--format", "mcp", "--skip-unsupported"], None);
    assert_eq!(flagged.status.code(), Some(0));
    assert_eq!(stdout(&flagged), stdout(&plain));
    assert!(stderr(&flagged).is_empty(), "{}", stderr(&flagged));

    let help = stdout(&gate(&["manifest", "--help"], None));
    assert!(
        help.contains("--skip-unsupported") && help.contains("Exit status: 0"),
        "{help}"
    );
}

#[test]
fn skip_unsupported_also_skips_tools_that_cannot_be_read() {
    // Four MCP tools: one fine, one whose pattern is no regular expression
    // (readable, but no format can carry a schema the validator refuses),
    // one without a name and the first one's name again (both unreadable).
    let tools = r#"{"tools": [
        {"name": "lookup", "description": "Look up.", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
        {"name": "broken", "description": "Broken.", "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "pattern": "("}}}},
        {"description": "Nameless.", "inputSchema": {"type": "object"}},
        {"name": "lookup", "description": "Again.", "inputSchema": {"type": "object"}}
    ]}"#;

    let out = gate(&["manifest", "--format", "openai", "--tools", "-"], Some(tools));
    assert_eq!(
        out.status.code(),
        Some(2),
        "bad input without the flag: {}",
        stderr(&out)
    );
    let err = stderr(&out);
    assert!(
        err.contains("tool #2: missing `name`") && err.contains("--skip-unsupported"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());

    let out = gate(
        &["manifest", "--format", "openai", "--tools", "-", "--skip-unsupported"],
        Some(tools),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(names(&out), ["lookup"]);
    let err = stderr(&out);
    assert!(
        err.contains("gate manifest: skipped openai: tool `broken` at /properties/q/pattern"),
        "{err}"
    );
    assert!(err.contains("gate manifest: skipped tool #2: missing `name`"), "{err}");
    assert!(
        err.contains("gate manifest: skipped tool #3 (`lookup`): two tools are named `lookup`"),
        "{err}"
    );
    assert!(
        err.contains("gate manifest: converted 1 of 4 tools to openai; skipped 3 (listed above)"),
        "{err}"
    );
}

/// Every manifest format, by its CLI name.
const DIALECTS: [&str; 9] = [
    "openai",
    "openai-strict",
    "openai-responses",
    "anthropic",
    "anthropic-strict",
    "gemini",
    "gemini-json",
    "mcp",
    "mcp-2025-11-25",
];

/// A tool whose `$defs` refer to each other without ever reaching a
/// property (`A` is `B` or a string, `B` is `A`), beside one that is fine.
const REF_CYCLE_TOOLS: &str = r##"[
  {"name": "fine", "description": "Fine.", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
  {"name": "loop", "description": "Loops.", "inputSchema": {"type": "object",
    "properties": {"x": {"$ref": "#/$defs/A"}},
    "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "string"}]}, "B": {"$ref": "#/$defs/A"}}}}
]"##;

#[test]
fn every_dialect_refuses_a_ref_cycle_the_validator_refuses() {
    let dir = scratch("ref-cycle");
    let tools = dir.join("tools.json");
    std::fs::write(&tools, REF_CYCLE_TOOLS).unwrap();
    let tools = tools.to_str().unwrap();

    // No calls on standard input: the command refuses the tools before it
    // would read them.
    let out = gate(&["check", "--tools", tools], None);
    assert_eq!(out.status.code(), Some(2));
    let refusal = "reference cycle that never reaches a property or item, through /$defs/A";
    assert!(stderr(&out).contains(refusal), "{}", stderr(&out));

    for dialect in DIALECTS {
        let out = gate(&["manifest", "--format", dialect, "--tools", tools], None);
        assert_eq!(out.status.code(), Some(1), "{dialect}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "gate manifest: {dialect}: tool `loop` at /$defs/A: gate's validator refuses the input schema \
                 ({refusal}), so no call of this tool could be checked"
            )),
            "{dialect}: {err}"
        );

        let out = gate(
            &["manifest", "--format", dialect, "--tools", tools, "--skip-unsupported"],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{dialect}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains("\"fine\"") && !text.contains("\"loop\""),
            "{dialect}: {text}"
        );
        // What is printed, `gate check` accepts.
        let manifest = dir.join(format!("{dialect}.json"));
        std::fs::write(&manifest, &text).unwrap();
        let out = gate(
            &["check", "--tools", manifest.to_str().unwrap()],
            Some(r#"{"name": "fine", "arguments": {"q": "x"}}"#),
        );
        assert_eq!(out.status.code(), Some(0), "{dialect}: {}", stderr(&out));
    }

    // Only the looping tool: nothing is left to print.
    let only = dir.join("only.json");
    let list: Value = serde_json::from_str(REF_CYCLE_TOOLS).unwrap();
    std::fs::write(&only, serde_json::to_string(&list.as_array().unwrap()[1..]).unwrap()).unwrap();
    let out = gate(
        &["manifest", "--format", "mcp", "--tools", only.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).ends_with("\ngate manifest: none of the 1 tools can be expressed in mcp\n"),
        "no advice to skip when nothing would be left: {}",
        stderr(&out)
    );
    let out = gate(
        &[
            "manifest",
            "--format",
            "mcp",
            "--tools",
            only.to_str().unwrap(),
            "--skip-unsupported",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("gate manifest: none of the 1 tools can be expressed in mcp; nothing to print"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sh -c SCRIPT` with the address space of the command limited to
/// `limit_mib`: a command that buffered an endless input would fail to
/// allocate (abort, no exit code) long before it finished.
#[cfg(target_os = "linux")]
fn gate_with_memory_limit(limit_mib: u64, args: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" {args}", limit_mib * 1024))
        .arg(env!("CARGO_BIN_EXE_gate"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

// The issue's own input: `gate check --tools T /dev/zero`, one endless line
// of NUL bytes, which once grew to 19 GB. It must stop at the line limit,
// within a memory limit far below what buffering it would take.
#[cfg(target_os = "linux")]
#[test]
fn check_stops_an_endless_line_at_the_limit_with_bounded_memory() {
    let tools = fixture("tools.mcp.json");
    let out = gate_with_memory_limit(256, &format!("check --tools '{tools}' /dev/zero"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "gate: line 1 of `/dev/zero` is longer than 4 MiB (4194304 bytes), the most gate reads of one line; \
         each call must be one JSON line\n"
    );
    // Every input that is read whole stops at its limit the same way.
    for args in [
        "sanitize /dev/zero".to_owned(),
        "manifest --format mcp --tools /dev/zero".to_owned(),
        format!("replay --tools '{tools}' /dev/zero"),
    ] {
        let out = gate_with_memory_limit(512, &args);
        assert_eq!(out.status.code(), Some(2), "{args}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("`/dev/zero` is larger than 64 MiB, the most gate reads of one document; split it"),
            "{args}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn check_streams_its_calls_and_names_the_line_that_is_too_long() {
    let tools = fixture("tools.mcp.json");
    let valid = br#"{"name": "list_customers", "arguments": {}}"#;
    // A line of exactly the limit is read; one byte more is not.
    let limit = 4 << 20;
    let mut at_limit = br#"{"name": "list_customers", "arguments": {}, "pad": ""#.to_vec();
    at_limit.resize(limit - 2, b'x');
    at_limit.extend_from_slice(b"\"}");
    assert_eq!(at_limit.len(), limit);
    let mut input = [&valid[..], b"\r\n", &at_limit, b"\n"].concat();
    let out = gate_bytes(&["check", "--tools", &tools], &input, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "{\"ok\":true}\n{\"ok\":true}\n");

    input.truncate(input.len() - 1);
    input.extend_from_slice(b"x\n");
    let out = gate_bytes(&["check", "--tools", &tools], &input, None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "{\"ok\":true}\n", "the calls before it are checked");
    assert_eq!(
        stderr(&out),
        "gate: line 2 of standard input is longer than 4 MiB (4194304 bytes), the most gate reads of one line; \
         each call must be one JSON line\n"
    );

    // An endless line on standard input: the command stops reading it.
    let mut child = spawn(&["check", "--tools", &tools]);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let zeros = vec![0u8; 1 << 16];
        let mut written = 0usize;
        while stdin.write_all(&zeros).is_ok() {
            written += zeros.len();
        }
        written
    });
    let out = child.wait_with_output().unwrap();
    let written = writer.join().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("line 1 of standard input is longer than 4 MiB"),
        "{}",
        stderr(&out)
    );
    assert!(written < 64 << 20, "it stopped reading near the limit: {written} bytes");
}

#[test]
fn check_names_a_call_that_is_not_utf8() {
    let input = b"{\"name\": \"list_customers\", \"arguments\": {}}\n{\"name\": \"list_\xffcustomers\"}\n";
    let out = gate_bytes(&["check", "--tools", &fixture("tools.mcp.json")], input, None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "gate: call on line 2: not UTF-8 text: invalid byte at offset 15 of the line\n"
    );
}

#[test]
fn sanitize_replaces_bytes_that_are_not_utf8_and_says_so() {
    let body = b"upstream said: \xff\xfe\x00garbage from 10.1.2.3\n";
    let out = gate_bytes(&["sanitize"], body, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("upstream said: \u{FFFD}"), "{text}");
    assert!(!text.contains("10.1.2.3"), "{text}");
    assert_eq!(
        stderr(&out),
        "gate sanitize: 2 byte(s) that are not UTF-8 were replaced with U+FFFD before sanitizing\n"
    );

    let out = gate_bytes(&["sanitize", "--json"], body, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["invalid_utf8_replaced"], 2);
    assert!(!report["findings"].as_array().unwrap().is_empty(), "{report}");

    let out = gate_bytes(&["sanitize", "--json"], b"all text\n", None);
    assert_eq!(json_of(&out)["invalid_utf8_replaced"], 0);
    assert!(stderr(&gate_bytes(&["sanitize"], b"all text\n", None)).is_empty());
}

#[test]
fn report_and_reconcile_refuse_a_store_that_does_not_exist() {
    let dir = scratch("no-store");
    let commands: [(&[&str], &str); 5] = [
        (&["report"], "gate report"),
        (&["reconcile", "list"], "gate reconcile list"),
        (&["reconcile", "show", "k1"], "gate reconcile show"),
        (
            &["reconcile", "resolve", "k1", "--outcome", "succeeded"],
            "gate reconcile resolve",
        ),
        (&["reconcile", "reopen", "t1"], "gate reconcile reopen"),
    ];
    for (args, name) in commands {
        let out = gate_bytes(args, b"", Some(&dir));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "gate: no store `gate.db` in the working directory (the default, --store sqlite:gate.db); \
                 {name} reads the store a run wrote and does not create an empty one: name it with --store \
                 sqlite:PATH or --store postgres://…\n"
            ),
            "{args:?}"
        );
        let missing = dir.join("missing.db");
        let store = format!("sqlite:{}", missing.display());
        let mut explicit = args.to_vec();
        explicit.extend_from_slice(&["--store", &store]);
        let out = gate_bytes(&explicit, b"", Some(&dir));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).starts_with(&format!(
                "gate: no store `{}` (--store {store}); {name} reads the store a run wrote",
                missing.display()
            )),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let created: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(created.is_empty(), "no store was created: {created:?}");

    // A store that exists, or one that lives in memory, is opened as before.
    let out = gate_bytes(&["report", "--store", "memory:"], b"", Some(&dir));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("0 decisions\n"), "{}", stdout(&out));
    let help = stdout(&gate(&["report", "--help"], None));
    assert!(help.contains("[default: sqlite:gate.db]"), "{help}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bytes no one checked: random bytes, a real input of the command with
/// random bytes spliced in or cut short (so the parsers get past the first
/// byte), long runs of one byte (NULs, no line break) and lines of them.
fn hostile_bytes(real: &'static [u8]) -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..1024),
        (
            any::<prop::sample::Index>(),
            proptest::collection::vec(any::<u8>(), 0..8),
            any::<bool>()
        )
            .prop_map(move |(at, junk, cut)| {
                let at = at.index(real.len() + 1);
                let tail = if cut { &[][..] } else { &real[at..] };
                [&real[..at], &junk[..], tail].concat()
            }),
        (any::<u8>(), 0usize..300_000).prop_map(|(byte, n)| vec![byte; n]),
        (proptest::collection::vec(any::<u8>(), 1..64), 1usize..2000).prop_map(|(line, n)| {
            let mut out = Vec::new();
            for _ in 0..n {
                out.extend_from_slice(&line);
                out.push(b'\n');
            }
            out
        }),
    ]
}

/// What every command owes any input: an exit status it documents (0, 1 or
/// 2), never a panic or a signal, and a reason on standard error when it
/// refuses the input.
fn assert_handled(args: &[&str], out: &Output) {
    let err = stderr(out);
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    match out.status.code() {
        Some(0) => {}
        Some(1) => assert!(
            !err.is_empty() || !out.stdout.is_empty(),
            "{args:?}: exit 1 without saying why"
        ),
        Some(2) => assert!(
            err.starts_with("gate") && err.trim().len() > "gate:".len(),
            "{args:?}: exit 2 without an error: {err:?}"
        ),
        other => panic!("{args:?}: exit {other:?} (101 is a panic, none a signal): {err}"),
    }
}

const TOOLS: &[u8] = include_bytes!("fixtures/tools.mcp.json");
const TRANSCRIPT: &[u8] = include_bytes!("fixtures/transcript.jsonl");
const OPENAI_CHAT: &[u8] = include_bytes!("fixtures/openai-chat.json");
const CALLS: &[u8] = b"{\"name\": \"lookup_customer\", \"arguments\": \"{\\\"email\\\": \\\"a@b.c\\\"}\"}\n\
{\"name\": \"charge_card\", \"arguments\": {\"customer_id\": \"c\", \"amount_cents\": 0}}\n";
const ERROR_BODY: &[u8] = b"Error: connect to db.internal:5432 failed: password=hunter2\n  at main.rs:10\n";

mod hostile_input {
    use proptest::prelude::*;

    use super::*;

    /// One input file per test, rewritten for every case.
    fn input_file(test: &str, bytes: &[u8]) -> String {
        let dir = std::env::temp_dir().join(format!("gate-cli-{}-hostile-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("input");
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn manifest_tools(bytes in hostile_bytes(TOOLS), dialect in proptest::sample::select(&DIALECTS[..])) {
            let file = input_file("manifest", &bytes);
            for skip in [false, true] {
                let mut args = vec!["manifest", "--format", dialect, "--tools", &file];
                if skip {
                    args.push("--skip-unsupported");
                }
                assert_handled(&args, &gate_bytes(&args, b"", None));
            }
            let args = ["manifest", "--format", dialect, "--tools", "-"];
            assert_handled(&args, &gate_bytes(&args, &bytes, None));
        }

        #[test]
        fn check_tools(bytes in hostile_bytes(TOOLS)) {
            let file = input_file("check-tools", &bytes);
            let args = ["check", "--tools", &file];
            assert_handled(&args, &gate_bytes(&args, CALLS, None));
        }

        #[test]
        fn check_calls(bytes in hostile_bytes(CALLS)) {
            let tools = fixture("tools.mcp.json");
            let args = ["check", "--tools", &tools];
            assert_handled(&args, &gate_bytes(&args, &bytes, None));
            let file = input_file("check-calls", &bytes);
            let args = ["check", "--tools", &tools, &file];
            assert_handled(&args, &gate_bytes(&args, b"", None));
        }

        #[test]
        fn sanitize(bytes in hostile_bytes(ERROR_BODY), json in any::<bool>()) {
            let args: &[&str] = if json { &["sanitize", "--json"] } else { &["sanitize"] };
            let out = gate_bytes(args, &bytes, None);
            assert_handled(args, &out);
            prop_assert_eq!(out.status.code(), Some(0), "any bytes are a text to sanitize");
        }

        #[test]
        fn replay_transcript(bytes in hostile_bytes(TRANSCRIPT), chat in hostile_bytes(OPENAI_CHAT)) {
            let tools = fixture("tools.mcp.json");
            for (name, bytes) in [("replay-gate", &bytes), ("replay-chat", &chat)] {
                let file = input_file(name, bytes);
                let args = ["replay", "--tools", &tools, &file];
                assert_handled(&args, &gate_bytes(&args, b"", None));
            }
        }

        #[test]
        fn replay_tools(bytes in hostile_bytes(TOOLS)) {
            let file = input_file("replay-tools", &bytes);
            let args = ["replay", "--tools", &file, "-"];
            assert_handled(&args, &gate_bytes(&args, TRANSCRIPT, None));
        }

        // The store file is input too: whatever a file holds, `report` and
        // `reconcile list` say it is not a store rather than panic.
        #[test]
        fn store_file(bytes in proptest::collection::vec(any::<u8>(), 1..4096)) {
            let dir = std::env::temp_dir().join(format!("gate-cli-{}-hostile-store", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join("gate.db");
            std::fs::write(&file, &bytes).unwrap();
            let store = format!("sqlite:{}", file.display());
            for args in [&["report", "--store", &store][..], &["reconcile", "list", "--store", &store][..]] {
                assert_handled(args, &gate_bytes(args, b"", None));
            }
        }
    }
}

// A request left by a task: listed, shown with its arguments in full,
// approved once (a second decision is refused and says why), and the
// decision is what the task then runs.
#[test]
fn approvals_are_listed_shown_and_decided_once() {
    let dir = scratch("approvals");
    let store = format!("sqlite:{}", dir.join("gate.db").display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let wire =
        |id: &str, iban: &str| toolgate::ToolCall::new(id, "wire_money", serde_json::json!({"iban": iban}).to_string());
    let ids: Vec<String> = rt.block_on(async {
        let gate = support::gate_asking_for_approval(&store).await;
        let mut task = gate.task_with_id("u1", "t-wire");
        let mut ids = Vec::new();
        for (n, iban) in ["DE89370400440532013000", "FR1420041010050500013M02606"]
            .into_iter()
            .enumerate()
        {
            match task.handle(wire(&format!("w{n}"), iban)).await {
                toolgate::Step::AwaitingApproval(waiting) => ids.push(waiting.approval_id),
                other => panic!("{other:?}"),
            }
        }
        ids
    });
    let out = gate(&["approvals", "list", "--store", &store], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = stdout(&out);
    assert!(
        listed.contains(&ids[0]) && listed.contains(&ids[1]) && listed.contains("wire_money"),
        "{listed}"
    );
    let out = gate(&["approvals", "show", &ids[0], "--store", &store], None);
    let shown = stdout(&out);
    assert!(
        shown.contains("\"iban\": \"DE89370400440532013000\"") && shown.contains("t-wire") && shown.contains("pending"),
        "{shown}"
    );
    let out = gate(
        &["approvals", "approve", &ids[0], "--by", "alice", "--store", &store],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let decided: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (decided["status"].as_str(), decided["decided_by"].as_str()),
        (Some("approved"), Some("alice"))
    );
    let again = gate(
        &[
            "approvals",
            "deny",
            &ids[0],
            "--reason",
            "no",
            "--by",
            "bob",
            "--store",
            &store,
        ],
        None,
    );
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("already approved by alice"),
        "{}",
        stderr(&again)
    );
    let no_reason = gate(
        &[
            "approvals",
            "deny",
            &ids[1],
            "--reason",
            " ",
            "--by",
            "bob",
            "--store",
            &store,
        ],
        None,
    );
    assert_eq!(no_reason.status.code(), Some(2), "{}", stderr(&no_reason));
    let unknown = gate(&["approvals", "show", "apr-nope", "--store", &store], None);
    assert_eq!(unknown.status.code(), Some(1));
    let pending = gate(&["approvals", "list", "--json", "--store", &store], None);
    let pending: Value = serde_json::from_str(&stdout(&pending)).unwrap();
    assert_eq!(pending.as_array().unwrap().len(), 1, "one left pending: {pending}");
    // The report counts them beside the decisions.
    let report = json_of(&gate(&["report", "--json", "--store", &store], None));
    let approvals = &report["approvals"];
    assert_eq!(
        (
            &approvals["requested"],
            &approvals["pending"],
            &approvals["approved"],
            &approvals["denied"]
        ),
        (
            &serde_json::json!(2),
            &serde_json::json!(1),
            &serde_json::json!(1),
            &serde_json::json!(0)
        ),
        "{report}"
    );
    assert!(approvals["median_wait_seconds"].as_f64().is_some(), "{report}");
    assert_eq!(report["by_action"]["await_approval"], 2, "the decisions stay: {report}");
    let text = stdout(&gate(&["report", "--store", &store], None));
    assert!(
        text.contains("approvals: 2 requested (1 pending, 1 approved, 0 denied, 0 expired), median wait "),
        "{text}"
    );
    // The task runs what was approved, once.
    let ran = rt.block_on(async {
        let gate = support::gate_asking_for_approval(&store).await;
        gate.task_with_id("u1", "t-wire").take_decided().await.unwrap()
    });
    assert_eq!(ran.len(), 1);
    assert_eq!(ran[0].call_id(), "w0");
    assert!(
        matches!(&ran[0], toolgate::Step::Return(out) if !out.is_error),
        "{ran:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
