//! The README's main job end to end: run the invoice-agent binary and check,
//! from its `--json` output, every decision the scenarios are there to show,
//! and that the payment provider charged each intent exactly once.

use std::process::Command;

use serde_json::Value;

fn run(store: &str, extra: &[&str]) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_invoice-agent"))
        .args(["--json", "--store", store])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (scenario, tool, decision, class) of every call, internal retries included.
fn decisions(events: &[Value]) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for e in events.iter().filter(|e| e["event"] == "call") {
        let scenario = e["scenario"].as_str().unwrap().to_owned();
        let tool = e["call"]["name"].as_str().unwrap().to_owned();
        for retry in e["internal_retries"].as_array().unwrap() {
            out.push((
                scenario.clone(),
                tool.clone(),
                "retry".into(),
                retry["class"].as_str().unwrap().into(),
            ));
        }
        let step = &e["step"];
        let class = step["class"].as_str().unwrap_or("-").to_owned();
        let decision = match step["step"].as_str().unwrap() {
            "return" if step["replayed"] == true => "replay".to_owned(),
            other => other.to_owned(),
        };
        out.push((scenario, tool, decision, class));
    }
    out
}

fn assert_demo(events: &[Value]) {
    let d = decisions(events);
    let row = |s: &str, t: &str, dec: &str, c: &str| (s.to_owned(), t.to_owned(), dec.to_owned(), c.to_owned());
    let expected = vec![
        row("rejections", "lookup_customer", "reject", "structural"),
        row("rejections", "lookup_customer", "return", "-"),
        row("rejections", "fetch_invoice", "reject", "structural"),
        row("rejections", "get_invoice", "return", "-"),
        row("widen", "lookup_customer", "retry", "ambiguous_nothing_found"),
        row("widen", "search_customers", "return", "-"),
        row("widen", "get_invoice", "return", "-"),
        row("discovery", "lookup_customer", "retry", "ambiguous_wrong_target"),
        row("discovery", "list_customers", "return", "-"),
        row("discovery", "lookup_customer", "return", "-"),
        row("pay", "get_invoice", "return", "-"),
        row("pay", "charge_card", "retry", "transient"),
        row("pay", "charge_card", "fail", "outcome_unknown"),
        row("pay-again", "charge_card", "replay", "-"),
        row("pay-again", "send_receipt", "return", "-"),
    ];
    assert_eq!(d, expected);

    let calls: Vec<&Value> = events.iter().filter(|e| e["event"] == "call").collect();
    // The widen hint and the discovery tool reach the model.
    assert!(calls[4]["step"]["text"].as_str().unwrap().contains("search_customers"));
    assert!(calls[7]["step"]["text"].as_str().unwrap().contains("`list_customers`"));
    // The hallucinated tool name is answered with the real ones, never executed.
    assert!(calls[2]["step"]["text"].as_str().unwrap().contains("`get_invoice`"));
    // The timed-out charge fails with a report for a person.
    let fail = &calls[11]["step"];
    assert_eq!(fail["reason"], "outcome_unknown");
    assert_eq!(fail["ledger_state"], "outcome_unknown");

    assert!(events.iter().any(|e| e["event"] == "resolved"));
    let summary = &events.last().unwrap()["summary"];
    assert_eq!(summary["queue_after_timeout"].as_array().unwrap().len(), 1);
    assert_eq!(summary["queue_at_end"].as_array().unwrap().len(), 0);
    let charges = summary["charges_per_intent"].as_object().unwrap();
    assert_eq!(charges.len(), 1);
    assert!(
        charges.values().all(|n| n == 1),
        "exactly one charge per intent: {charges:?}"
    );
    assert_eq!(summary["receipts"], 1);
    assert!(summary["total_repair_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn the_invoice_agent_shows_every_decision_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("gate-invoice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = format!("sqlite:{}", dir.join("gate.db").display());
    assert_demo(&run(&store, &[]));
    // A second run against the same store starts fresh tasks and shows the same.
    assert_demo(&run(&store, &[]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_invoice_agent_runs_the_same_on_postgres() {
    let Ok(url) = std::env::var("GATE_POSTGRES_URL") else {
        eprintln!("GATE_POSTGRES_URL is not set; .ci/run sets it");
        return;
    };
    assert_demo(&run(&url, &[]));
}

#[test]
fn without_resolution_the_charge_stays_queued_and_is_never_retried() {
    let events = run("memory:", &["--no-resolve"]);
    let summary = &events.last().unwrap()["summary"];
    assert_eq!(summary["queue_at_end"].as_array().unwrap().len(), 1);
    assert_eq!(summary["charges"].as_array().unwrap().len(), 1);
    assert!(!events.iter().any(|e| e["scenario"] == "pay-again"));
}
