//! The guarantees at the edges, through the public API: what ran, how
//! often, and what the model saw.
//!
//! * HTTP answers are classed by what happened to the request: a 502 on a
//!   charge is never resent, a 503 is, a 500 fails the task.
//! * A call equal to one that already failed (definitive, unreadable,
//!   corrected) is refused without running (rule 3).
//! * A corrected retry under an intent runs as a new attempt of the same
//!   intent, with the same key (rule 8).
//! * `writes` tools are never resent after an unknown outcome; `keyed` ones
//!   are, with the same key, within the budgets.
//! * A call past its timeout is cancelled and is a timeout; the lease
//!   outlasts the timeout, so a sweeper never takes a call that may still run.
//! * Scopes: a tool runs only when its scopes are granted; the manifest lists
//!   what the task may call; a refusal counts as a rejection.
//! * The latency of the model turns that repairs cause counts in the budget.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolgate::FailureReason;
use toolgate::ledger::State;
use toolgate::{Budget, Dialect, DynamicTool, Effects, Gate, Step, ToolCall, ToolError, ToolSpec, Toolbox};

mod support;
use support::{call, fail_reason};

/// A scripted backend: each call takes the next answer (`Ok` once the
/// script is empty) and is counted, with the intent key it carried.
#[derive(Default)]
struct Script {
    answers: std::sync::Mutex<Vec<Answer>>,
    runs: AtomicU32,
    finished: AtomicU32,
    keys: std::sync::Mutex<Vec<String>>,
}

#[derive(Clone, Copy)]
enum Answer {
    Http(u16),
    Declined,
    Unreadable,
    Forbidden,
    Timeout,
    /// Sleeps (asynchronously) for this long before answering Ok.
    Sleep(Duration),
    /// Blocks its thread for this long before answering Ok.
    Block(Duration),
}

impl Script {
    fn new(answers: &[Answer]) -> Arc<Script> {
        Arc::new(Script {
            answers: std::sync::Mutex::new(answers.to_vec()),
            ..Script::default()
        })
    }

    fn runs(&self) -> u32 {
        self.runs.load(Ordering::SeqCst)
    }
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"customer_id": {"type": "string"}, "amount_cents": {"type": "integer"}},
        "required": ["customer_id"],
        "additionalProperties": false
    })
}

/// A tool named `name` with `effects`, answering from `script`.
fn scripted(name: &str, effects: Effects, script: &Arc<Script>) -> ToolSpecTool {
    ToolSpecTool {
        spec: ToolSpec::new(name, format!("The {name} tool."), schema(), effects)
            .unwrap()
            .with_key_args(["customer_id"])
            .unwrap(),
        script: script.clone(),
    }
}

struct ToolSpecTool {
    spec: ToolSpec,
    script: Arc<Script>,
}

impl ToolSpecTool {
    fn with(mut self, edit: impl FnOnce(ToolSpec) -> ToolSpec) -> Self {
        self.spec = edit(self.spec);
        self
    }

    fn build(self) -> DynamicTool {
        let script = self.script;
        DynamicTool::new(self.spec).with_handler(move |ctx, args| {
            let script = script.clone();
            async move {
                script.runs.fetch_add(1, Ordering::SeqCst);
                script.keys.lock().unwrap().push(ctx.intent_key().to_owned());
                let answer = {
                    let mut answers = script.answers.lock().unwrap();
                    (!answers.is_empty()).then(|| answers.remove(0))
                };
                let result = match answer {
                    None => Ok(json!({"ok": true, "args": args})),
                    Some(Answer::Http(status)) => {
                        Err(ToolError::from_http(status, None, None).expect("an error status"))
                    }
                    Some(Answer::Declined) => Err(ToolError::rejected("card declined")),
                    Some(Answer::Unreadable) => Err(ToolError::Unreadable),
                    Some(Answer::Forbidden) => Err(ToolError::Forbidden { body: None }),
                    Some(Answer::Timeout) => Err(ToolError::Timeout),
                    Some(Answer::Sleep(d)) => {
                        tokio::time::sleep(d).await;
                        Ok(json!({"slept": true}))
                    }
                    Some(Answer::Block(d)) => {
                        std::thread::sleep(d);
                        Ok(json!({"blocked": true}))
                    }
                };
                script.finished.fetch_add(1, Ordering::SeqCst);
                result
            }
        })
    }
}

async fn gate_of(tools: Vec<DynamicTool>, edit: impl FnOnce(toolgate::GateBuilder) -> toolgate::GateBuilder) -> Gate {
    let mut toolbox = Toolbox::new();
    for tool in tools {
        toolbox.add(tool).unwrap();
    }
    edit(Gate::builder(toolbox).store("memory:").seed(3))
        .build()
        .await
        .unwrap()
}

fn charge_effects() -> Effects {
    Effects::new().writes().external()
}

#[tokio::test]
async fn a_502_or_504_on_a_charge_is_never_resent_and_waits_for_a_person() {
    for status in [502, 504] {
        let script = Script::new(&[Answer::Http(status)]);
        let gate = gate_of(vec![scripted("charge", charge_effects(), &script).build()], |b| b).await;
        let mut task = gate.task("u1");
        let step = task.handle(call("c1", "charge", json!({"customer_id": "cus_1"}))).await;
        assert_eq!(
            fail_reason(&step),
            Some(FailureReason::OutcomeUnknown),
            "{status}: {step:?}"
        );
        let Step::Fail(report) = &step else { unreachable!() };
        assert_eq!(report.ledger_state, Some(State::OutcomeUnknown));
        assert_eq!(
            script.runs(),
            1,
            "{status}: a charge the upstream may have made is not resent"
        );
        assert!(
            step.model_text().contains("Do not call it again"),
            "{}",
            step.model_text()
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_503_on_a_charge_is_resent_after_a_backoff_because_nothing_happened() {
    let script = Script::new(&[Answer::Http(503)]);
    let gate = gate_of(vec![scripted("charge", charge_effects(), &script).build()], |b| b).await;
    let mut task = gate.task("u1");
    let step = task.handle(call("c1", "charge", json!({"customer_id": "cus_1"}))).await;
    assert!(matches!(&step, Step::Return(out) if !out.is_error), "{step:?}");
    assert_eq!(script.runs(), 2);
    assert_eq!(task.last_retries().len(), 1);
}

#[tokio::test]
async fn a_500_fails_the_task_as_internal_without_a_resend() {
    let script = Script::new(&[Answer::Http(500)]);
    let gate = gate_of(
        vec![scripted("lookup", Effects::new().read_only(), &script).build()],
        |b| b,
    )
    .await;
    let mut task = gate.task("u1");
    let step = task.handle(call("c1", "lookup", json!({"customer_id": "cus_1"}))).await;
    assert_eq!(fail_reason(&step), Some(FailureReason::Internal));
    assert_eq!(script.runs(), 1);
}

#[tokio::test]
async fn a_call_equal_to_one_that_got_a_definitive_answer_is_refused_without_running() {
    let script = Script::new(&[Answer::Declined]);
    let gate = gate_of(vec![scripted("charge", charge_effects(), &script).build()], |b| b).await;
    let mut task = gate.task("u1");
    let args = json!({"customer_id": "cus_1", "amount_cents": 4200});
    let first = task.handle(call("c1", "charge", args.clone())).await;
    assert!(matches!(&first, Step::Return(out) if out.is_error), "{first:?}");
    assert!(first.model_text().contains("card declined"));
    // The same arguments, written differently: the same call.
    let same = r#"{ "amount_cents": 4200, "customer_id": "cus_1" }"#;
    let again = task.handle(ToolCall::new("c2", "charge", same)).await;
    assert!(matches!(again, Step::Reject(_)), "{again:?}");
    assert!(again.model_text().contains("already failed"), "{}", again.model_text());
    assert_eq!(script.runs(), 1, "the hopeful retry did not run");
    // Changed arguments run.
    let other = task
        .handle(call(
            "c3",
            "charge",
            json!({"customer_id": "cus_2", "amount_cents": 4200}),
        ))
        .await;
    assert!(matches!(&other, Step::Return(out) if !out.is_error), "{other:?}");
    assert_eq!(script.runs(), 2);
}

#[tokio::test]
async fn an_unreadable_answer_of_a_read_only_tool_goes_to_the_model_once_and_is_not_resent() {
    let script = Script::new(&[Answer::Unreadable]);
    let gate = gate_of(
        vec![scripted("lookup", Effects::new().read_only(), &script).build()],
        |b| b,
    )
    .await;
    let mut task = gate.task("u1");
    let args = json!({"customer_id": "cus_1"});
    let first = task.handle(call("c1", "lookup", args.clone())).await;
    assert!(matches!(&first, Step::Return(out) if out.is_error), "{first:?}");
    assert_eq!(script.runs(), 1, "not resent unchanged by gate either");
    let again = task.handle(call("c2", "lookup", args)).await;
    assert!(matches!(again, Step::Reject(_)), "{again:?}");
    assert_eq!(script.runs(), 1);
}

#[tokio::test]
async fn a_corrected_retry_under_an_intent_runs_with_the_same_key() {
    let script = Script::new(&[Answer::Forbidden]);
    let update = scripted("update_plan", Effects::new().idempotent(), &script)
        .with(|s| s.with_discovery("list_customers").unwrap())
        .build();
    let list = scripted("list_customers", Effects::new().read_only(), &Script::new(&[])).build();
    let gate = gate_of(vec![update, list], |b| b).await;
    let mut task = gate.task("u1");
    task.intent("move cus to the pro plan");
    let first = task
        .handle(call("c1", "update_plan", json!({"customer_id": "cus_wrong"})))
        .await;
    assert!(matches!(first, Step::Retry(_)), "{first:?}");
    assert!(first.model_text().contains("list_customers"), "{}", first.model_text());
    let corrected = task
        .handle(call("c2", "update_plan", json!({"customer_id": "cus_right"})))
        .await;
    assert!(
        matches!(&corrected, Step::Return(out) if !out.is_error),
        "{corrected:?}"
    );
    let keys = script.keys.lock().unwrap().clone();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0], keys[1], "one intent, one key");
    let record = gate.store().get("u1", &keys[0]).await.unwrap().expect("recorded");
    assert_eq!(record.state, State::Succeeded);
    assert_eq!(record.attempt, 2);
}

#[tokio::test]
async fn a_writes_tool_is_never_resent_after_an_unknown_outcome_and_says_so_to_mcp() {
    let script = Script::new(&[Answer::Timeout]);
    let ticket = scripted("open_ticket", Effects::new().writes(), &script).build();
    let gate = gate_of(vec![ticket], |b| b).await;
    let mcp = gate.toolbox().manifest(Dialect::Mcp).unwrap();
    assert_eq!(
        mcp[0]["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false})
    );
    let mut task = gate.task("u1");
    let step = task
        .handle(call("c1", "open_ticket", json!({"customer_id": "cus_1"})))
        .await;
    assert_eq!(fail_reason(&step), Some(FailureReason::OutcomeUnknown));
    assert_eq!(script.runs(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_keyed_tool_is_resent_with_the_same_key_after_an_unknown_outcome() {
    let script = Script::new(&[Answer::Timeout, Answer::Http(502)]);
    let charge = scripted("charge", charge_effects().keyed(), &script).build();
    let gate = gate_of(vec![charge], |b| b).await;
    let mut task = gate.task("u1");
    task.intent("pay INV-7");
    let step = task.handle(call("c1", "charge", json!({"customer_id": "cus_1"}))).await;
    assert!(matches!(&step, Step::Return(out) if !out.is_error), "{step:?}");
    assert_eq!(script.runs(), 3);
    let keys = script.keys.lock().unwrap().clone();
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    let record = gate.store().get("u1", &keys[0]).await.unwrap().expect("recorded");
    assert_eq!(record.state, State::Succeeded);
}

#[tokio::test(start_paused = true)]
async fn a_keyed_tool_stops_at_the_attempt_budget_and_waits_for_a_person() {
    let script = Script::new(&[Answer::Timeout; 5]);
    let charge = scripted("charge", charge_effects().keyed(), &script).build();
    let gate = gate_of(vec![charge], |b| b).await;
    let mut task = gate.task("u1");
    let step = task.handle(call("c1", "charge", json!({"customer_id": "cus_1"}))).await;
    assert_eq!(fail_reason(&step), Some(FailureReason::AttemptBudget), "{step:?}");
    assert_eq!(
        script.runs(),
        3,
        "the first attempt and the 2 repairs of the default budget"
    );
    let Step::Fail(report) = &step else { unreachable!() };
    assert_eq!(
        report.ledger_state,
        Some(State::OutcomeUnknown),
        "the charge may have happened: a person looks"
    );
}

/// One call of a `writes` tool with `timeout` that answers with `answer`.
async fn open_ticket_once(answer: Answer, timeout: Duration) -> (Arc<Script>, Step) {
    let script = Script::new(&[answer]);
    let ticket = scripted("open_ticket", Effects::new().writes(), &script)
        .with(|s| s.with_timeout(timeout).unwrap())
        .build();
    let gate = gate_of(vec![ticket], |b| b).await;
    let mut task = gate.task("u1");
    let step = task
        .handle(call("c1", "open_ticket", json!({"customer_id": "cus_1"})))
        .await;
    (script, step)
}

#[tokio::test(start_paused = true)]
async fn a_call_past_its_timeout_is_cancelled_and_is_a_timeout() {
    let (script, step) = open_ticket_once(Answer::Sleep(Duration::from_secs(3600)), Duration::from_secs(10)).await;
    assert_eq!(fail_reason(&step), Some(FailureReason::OutcomeUnknown), "{step:?}");
    assert_eq!(script.runs(), 1);
    assert_eq!(
        script.finished.load(Ordering::SeqCst),
        0,
        "the tool's future was dropped at the timeout"
    );
}

#[tokio::test(start_paused = true)]
async fn the_builder_default_timeout_applies_to_tools_without_one() {
    let script = Script::new(&[Answer::Sleep(Duration::from_secs(3600))]);
    let lookup = scripted("lookup", Effects::new().read_only(), &script).build();
    let gate = gate_of(vec![lookup], |b| b.tool_timeout(Duration::from_secs(2))).await;
    let mut task = gate.task("u1");
    // A read-only call that timed out is resent: the second attempt answers.
    let step = task.handle(call("c1", "lookup", json!({"customer_id": "cus_1"}))).await;
    assert!(matches!(&step, Step::Return(out) if !out.is_error), "{step:?}");
    assert_eq!(script.runs(), 2);
    assert_eq!(script.finished.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_blocking_tool_that_answers_after_its_timeout_is_a_timeout() {
    let (script, step) = open_ticket_once(Answer::Block(Duration::from_millis(300)), Duration::from_millis(50)).await;
    assert_eq!(fail_reason(&step), Some(FailureReason::OutcomeUnknown), "{step:?}");
    assert_eq!(script.finished.load(Ordering::SeqCst), 1, "it did finish, late");
}

#[tokio::test]
async fn a_bad_timeout_is_refused_when_the_gate_is_built() {
    let lookup = scripted("lookup", Effects::new().read_only(), &Script::new(&[])).build();
    let mut toolbox = Toolbox::new();
    toolbox.add(lookup).unwrap();
    for bad in [Duration::ZERO, Duration::from_secs(25 * 3600)] {
        let err = Gate::builder(toolbox.clone())
            .store("memory:")
            .tool_timeout(bad)
            .build()
            .await
            .unwrap_err();
        assert!(err.is_invalid_setting(), "{err}");
        assert!(err.to_string().contains("timeout"), "{err}");
    }
    let zero = ToolSpec::new("t", "d", schema(), Effects::new().read_only())
        .unwrap()
        .with_timeout(Duration::ZERO);
    assert!(zero.is_err());
}

/// The lease of a dispatched call outlasts its timeout: a sweep while the
/// call may still run (past the old fixed minute) takes nothing.
#[tokio::test]
async fn the_lease_follows_the_timeout() {
    let release = Arc::new(tokio::sync::Notify::new());
    let started = Arc::new(tokio::sync::Notify::new());
    let spec = ToolSpec::new("slow_charge", "Charge slowly.", schema(), charge_effects())
        .unwrap()
        .with_timeout(Duration::from_secs(300))
        .unwrap();
    let (r, s) = (release.clone(), started.clone());
    let tool = DynamicTool::new(spec).with_handler(move |_, _| {
        let (r, s) = (r.clone(), s.clone());
        async move {
            s.notify_one();
            r.notified().await;
            Ok(json!("charged"))
        }
    });
    let gate = gate_of(vec![tool], |b| b).await;
    let mut task = gate.task("u1");
    task.intent("pay INV-9");
    let key = task.intent_key_for("slow_charge").unwrap();
    let running = tokio::spawn(async move {
        task.handle(call("c1", "slow_charge", json!({"customer_id": "cus_1"})))
            .await
    });
    started.notified().await;
    let store = gate.store();
    let record = store.get("u1", &key).await.unwrap().expect("dispatched");
    assert_eq!(record.state, State::Dispatched);
    let dispatched = record.dispatched_at.expect("dispatched at");
    let lease = record.lease_expires_at.expect("a lease");
    assert!(
        lease >= dispatched.saturating_add(Duration::from_secs(300)),
        "the lease covers the whole timeout"
    );
    let swept = store
        .sweep_expired_leases(store.now().saturating_add(Duration::from_secs(240)), 100)
        .await
        .unwrap();
    assert!(swept.marked_unknown.is_empty(), "a call still allowed to run was swept");
    release.notify_one();
    let step = running.await.unwrap();
    assert!(matches!(&step, Step::Return(out) if !out.is_error), "{step:?}");
    assert_eq!(store.get("u1", &key).await.unwrap().unwrap().state, State::Succeeded);
}

fn billing_tools(charges: &Arc<Script>) -> Vec<DynamicTool> {
    vec![
        scripted("lookup", Effects::new().read_only(), &Script::new(&[]))
            .with(|s| s.with_scopes(["crm:read"]))
            .build(),
        scripted("charge", charge_effects(), charges)
            .with(|s| s.with_scopes(["crm:read", "billing:charge"]))
            .build(),
        scripted("help", Effects::new().read_only(), &Script::new(&[])).build(),
    ]
}

#[tokio::test]
async fn a_tool_runs_only_when_its_scopes_are_granted() {
    let charges = Script::new(&[]);
    let gate = gate_of(billing_tools(&charges), |b| b).await;
    let mut task = gate.task("u1").grant(["crm:read"]);
    let names = |m: Value| -> Vec<String> {
        m.as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(task.manifest(Dialect::OpenAi).unwrap()), ["lookup", "help"]);
    let step = task.handle(call("c1", "charge", json!({"customer_id": "cus_1"}))).await;
    assert!(matches!(step, Step::Reject(_)), "{step:?}");
    assert!(step.model_text().contains("`billing:charge`"), "{}", step.model_text());
    assert!(!step.model_text().contains("`crm:read`"), "only the missing scope");
    assert_eq!(charges.runs(), 0);
    assert_eq!(task.repairs(), 1, "the refusal is a rejection");
    // An unknown tool is told only the names the task may call.
    let unknown = task.handle(call("c2", "chrage", json!({}))).await;
    assert!(unknown.model_text().contains("lookup"), "{}", unknown.model_text());
    assert!(!unknown.model_text().contains("`charge`"), "{}", unknown.model_text());

    let mut granted = gate.task("u2").grant(["crm:read", "billing:charge"]);
    assert_eq!(
        names(granted.manifest(Dialect::OpenAi).unwrap()),
        ["lookup", "charge", "help"]
    );
    let step = granted
        .handle(call("c1", "charge", json!({"customer_id": "cus_1"})))
        .await;
    assert!(matches!(&step, Step::Return(out) if !out.is_error), "{step:?}");
    assert_eq!(charges.runs(), 1);
}

#[tokio::test]
async fn a_tool_sees_the_principal_its_program_set_never_one_the_model_sent() {
    let spec = ToolSpec::new(
        "whoami",
        "Who the call runs for.",
        json!({"type": "object", "properties": {"user": {"type": "string"}}}),
        Effects::new().read_only(),
    )
    .unwrap();
    let tool = DynamicTool::new(spec).with_handler(|ctx, _| {
        let principal = ctx.principal();
        let seen = json!({"user": principal.user(), "scopes": principal.scopes().collect::<Vec<_>>()});
        async move { Ok(seen) }
    });
    let gate = gate_of(vec![tool], |b| b).await;
    let mut task = gate.task("ann").grant(["crm:read", "billing:charge"]);
    let step = task.handle(call("c1", "whoami", json!({"user": "root"}))).await;
    let seen: Value = serde_json::from_str(step.model_text()).unwrap();
    assert_eq!(seen, json!({"user": "ann", "scopes": ["billing:charge", "crm:read"]}));
    let mut bare = gate.task("bob");
    let step = bare.handle(call("c1", "whoami", json!({}))).await;
    let seen: Value = serde_json::from_str(step.model_text()).unwrap();
    assert_eq!(seen, json!({"user": "bob", "scopes": []}));
}

#[tokio::test]
async fn a_scope_refusal_counts_toward_the_rejection_cap() {
    let charges = Script::new(&[]);
    let gate = gate_of(billing_tools(&charges), |b| b.rejection_cap(1)).await;
    let mut task = gate.task("u1");
    let first = task.handle(call("c1", "charge", json!({"customer_id": "cus_1"}))).await;
    assert!(matches!(first, Step::Reject(_)), "{first:?}");
    let second = task.handle(call("c2", "help", json!({"customer_id": 7}))).await;
    assert_eq!(fail_reason(&second), Some(FailureReason::RejectionCap), "{second:?}");
    assert_eq!(charges.runs(), 0);
}

#[tokio::test]
async fn the_model_turns_a_repair_causes_count_in_the_latency_budget() {
    let lookups = Script::new(&[]);
    let lookup = scripted("lookup", Effects::new().read_only(), &lookups).build();
    let budget = Budget::default()
        .with_added_latency(Duration::from_secs(5))
        .unwrap()
        .with_max_repairs(4)
        .unwrap();
    let gate = gate_of(vec![lookup], |b| b.budget(budget).rejection_cap(10)).await;
    let mut task = gate.task("u1");
    // A turn that answers a success adds nothing.
    let ok = task.handle(call("c0", "lookup", json!({"customer_id": "cus_0"}))).await;
    assert!(matches!(ok, Step::Return(_)));
    task.record_turn(Duration::from_secs(3), Some((100, 10))).await;
    assert_eq!(task.latency_added(), Duration::ZERO);
    // The turn after a rejection is the repair's.
    let bad = task.handle(call("c1", "lookup", json!({"customer_id": 1}))).await;
    assert!(matches!(bad, Step::Reject(_)), "{bad:?}");
    task.record_turn(Duration::from_secs(4), Some((120, 12))).await;
    assert_eq!(task.latency_added(), Duration::from_secs(4));
    let bad = task.handle(call("c2", "lookup", json!({"customer_id": 2}))).await;
    assert!(matches!(bad, Step::Reject(_)), "{bad:?}");
    task.record_turn(Duration::from_secs(2), None).await;
    assert_eq!(task.latency_added(), Duration::from_secs(6));
    // Over the budget: the next repair is refused.
    let bad = task.handle(call("c3", "lookup", json!({"customer_id": 3}))).await;
    assert_eq!(fail_reason(&bad), Some(FailureReason::LatencyBudget), "{bad:?}");
    // And it is stored: a resumed task knows.
    let mut resumed = gate.task_with_id("u1", task.id());
    resumed.load().await.unwrap();
    assert_eq!(resumed.latency_added(), Duration::from_secs(6));
}
