//! The agent loop and approvals: a turn whose call waits for a person stops
//! the run with a `RunState`; the state goes through JSON, and `resume`, in
//! another process, answers the original call with the decided step and
//! goes on. Nothing runs before the decision, and nothing runs twice.

use std::collections::VecDeque;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolgate::agent::{
    self, AgentError, AgentLimits, ChatModel, Ending, Message, ModelError, RunOutcome, RunState, RunStateError,
    ToolCallRequest, Turn,
};
use toolgate::{Dialect, Gate, Step, ToolError, tools};

/// Counts the charges that actually ran, in this process.
#[derive(Default)]
struct Bank {
    charges: AtomicU32,
}

#[derive(Clone)]
struct Tools(Arc<Bank>);

#[tools]
impl Tools {
    /// Charge a customer's card.
    #[tool(writes, external, approval)]
    async fn charge_card(&self, customer_id: String, amount_cents: u64) -> Result<serde_json::Value, ToolError> {
        let n = self.0.charges.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(json!({"charge": format!("ch_{n}"), "customer": customer_id, "amount_cents": amount_cents}))
    }

    /// Look up a customer.
    #[tool(read_only)]
    async fn lookup_customer(&self, email: String) -> Result<serde_json::Value, ToolError> {
        Ok(json!({"email": email, "id": "cus_1"}))
    }
}

/// A model that plays its turns in order and keeps what it was sent.
struct Scripted {
    turns: Mutex<VecDeque<Turn>>,
    seen: Mutex<Vec<Vec<Message>>>,
}

impl Scripted {
    fn new(turns: impl IntoIterator<Item = Turn>) -> Self {
        Scripted {
            turns: Mutex::new(turns.into_iter().collect()),
            seen: Mutex::new(Vec::new()),
        }
    }

    fn turns_played(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    fn last_seen(&self) -> Vec<Message> {
        self.seen.lock().unwrap().last().cloned().expect("the model was asked")
    }
}

impl ChatModel for Scripted {
    fn next_turn<'a>(
        &'a self,
        messages: &'a [Message],
        _tools: &'a serde_json::Value,
    ) -> Pin<Box<dyn Future<Output = Result<Turn, ModelError>> + Send + 'a>> {
        self.seen.lock().unwrap().push(messages.to_vec());
        let turn = self
            .turns
            .lock()
            .unwrap()
            .pop_front()
            .expect("the script has a turn left");
        Box::pin(async move { Ok(turn) })
    }
}

/// The model's first turn: a lookup and a charge, in one turn.
fn lookup_and_charge() -> Turn {
    Turn {
        text: None,
        tool_calls: vec![
            ToolCallRequest::new("call_lookup", "lookup_customer", r#"{"email":"ann@acme.io"}"#),
            ToolCallRequest::new(
                "call_charge",
                "charge_card",
                r#"{"customer_id":"cus_1","amount_cents":4200}"#,
            ),
        ],
        usage: None,
    }
}

fn answer(text: &str) -> Turn {
    Turn {
        text: Some(text.to_owned()),
        tool_calls: Vec::new(),
        usage: None,
    }
}

fn request() -> Vec<Message> {
    vec![
        Message::System("You bill customers.".into()),
        Message::User("Charge ann@acme.io 42.00".into()),
    ]
}

async fn gate_on(store: &str, bank: &Arc<Bank>) -> Gate {
    Gate::builder(Tools(bank.clone()).into_toolbox())
        .store(store)
        .build()
        .await
        .unwrap()
}

fn sqlite_url(dir: &Path) -> String {
    format!("sqlite:{}", dir.join("gate.db").display())
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gate-agent-resume-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the first turn: the lookup answers, the charge waits.
async fn stop_at_the_charge(gate: &Gate) -> (Vec<toolgate::PendingApproval>, RunState, agent::Run) {
    let mut task = gate.task_with_id("u1", "t-agent");
    let model = Scripted::new([lookup_and_charge()]);
    let outcome = agent::run(
        &mut task,
        &model,
        Dialect::OpenAi,
        request(),
        AgentLimits::default(),
        &mut |_| {},
    )
    .await
    .unwrap();
    match outcome {
        RunOutcome::AwaitingApproval { pending, state, run } => (pending, state, run),
        RunOutcome::Ended(run) => panic!("expected the run to wait for approval, it ended: {:?}", run.ending),
    }
}

// The child half of the test below, in a process of its own: it opens the
// store the parent wrote, reads the state the parent stored, and resumes.
#[tokio::test]
#[ignore = "started by a_run_state_goes_through_json_and_resumes_in_another_process"]
async fn resume_the_stored_run_in_this_process() {
    let dir = PathBuf::from(std::env::var("GATE_RESUME_DIR").expect("GATE_RESUME_DIR names the parent's scratch"));
    let bank = Arc::new(Bank::default());
    let gate = gate_on(&sqlite_url(&dir), &bank).await;
    let state: RunState = serde_json::from_slice(&std::fs::read(dir.join("state.json")).unwrap()).unwrap();
    let mut task = gate.task_with_id(state.user(), state.task_id());
    let model = Scripted::new([answer("Charged ann@acme.io 42.00 (ch_1).")]);
    let outcome = agent::resume(&mut task, &model, state, AgentLimits::default(), &mut |_| {})
        .await
        .unwrap();
    let RunOutcome::Ended(run) = outcome else {
        panic!("the approved run ends")
    };
    assert_eq!(
        run.ending,
        Ending::Answered {
            text: Some("Charged ann@acme.io 42.00 (ch_1).".into())
        }
    );
    assert_eq!(
        bank.charges.load(Ordering::SeqCst),
        1,
        "the approved charge ran here, once"
    );
    assert_eq!(run.turns, 2, "the turn limit counts the whole run");
    let [exchange] = &run.exchanges[..] else {
        panic!("one call answered on resume: {:?}", run.exchanges)
    };
    assert_eq!(exchange.call.id, "call_charge", "the original call id");
    assert!(matches!(&exchange.step, Step::Return(out) if !out.is_error && !out.replayed));
    // The model sees its turn answered in the order it made the calls.
    let seen = model.last_seen();
    let answers: Vec<(&str, &str)> = (seen.iter())
        .filter_map(|m| match m {
            Message::ToolResult { call_id, content, .. } => Some((call_id.as_str(), content.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(answers.len(), 2, "{seen:?}");
    assert_eq!(answers[0].0, "call_lookup");
    assert!(answers[0].1.contains("cus_1"), "{}", answers[0].1);
    assert_eq!(answers[1].0, "call_charge");
    assert!(answers[1].1.contains("ch_1"), "{}", answers[1].1);
    assert!(
        matches!(seen.last(), Some(Message::ToolResult { call_id, .. }) if call_id == "call_charge"),
        "the answers follow the turn that asked: {seen:?}"
    );
}

// The run stops at the charge (nothing charged), its state is written as
// JSON, a person approves, and a second process resumes it: the charge runs
// there once and the model is answered. Resuming the same state again here
// replays the stored result and charges nothing.
#[tokio::test]
async fn a_run_state_goes_through_json_and_resumes_in_another_process() {
    let dir = scratch("process");
    let bank = Arc::new(Bank::default());
    let gate = gate_on(&sqlite_url(&dir), &bank).await;
    let (pending, state, run) = stop_at_the_charge(&gate).await;
    assert_eq!(run.ending, Ending::AwaitingApproval);
    assert_eq!(run.turns, 1);
    let [waiting] = &pending[..] else {
        panic!("one call waits: {pending:?}")
    };
    assert_eq!(waiting.call_id, "call_charge");
    assert_eq!(state.waiting_for().collect::<Vec<_>>(), [waiting.approval_id.as_str()]);
    assert_eq!(run.exchanges.len(), 2, "the turn's other call was handled");
    assert_eq!(
        bank.charges.load(Ordering::SeqCst),
        0,
        "nothing runs before a person agrees"
    );

    let json = serde_json::to_string_pretty(&state).unwrap();
    let read_back: RunState = serde_json::from_str(&json).unwrap();
    assert_eq!(read_back, state, "the state survives JSON");
    std::fs::write(dir.join("state.json"), &json).unwrap();
    gate.approvals()
        .approve(&waiting.approval_id, "ops", Some("the customer asked"))
        .await
        .unwrap();
    gate.shutdown().await;
    drop(gate);

    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "resume_the_stored_run_in_this_process",
            "--ignored",
            "--nocapture",
        ])
        .env("GATE_RESUME_DIR", &dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && out.contains("1 passed"),
        "the resumed run in another process: {out}\n{}",
        String::from_utf8_lossy(&child.stderr)
    );

    let gate = gate_on(&sqlite_url(&dir), &bank).await;
    let mut task = gate.task_with_id(read_back.user(), read_back.task_id());
    let model = Scripted::new([answer("Charged.")]);
    let again = agent::resume(&mut task, &model, read_back, AgentLimits::default(), &mut |_| {})
        .await
        .unwrap()
        .into_run();
    assert_eq!(
        bank.charges.load(Ordering::SeqCst),
        0,
        "resumed twice, charged once (in the child)"
    );
    assert!(
        matches!(&again.exchanges[0].step, Step::Return(out) if out.replayed && out.text.contains("ch_1")),
        "the second resume replays the first one's result: {:?}",
        again.exchanges
    );
    gate.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

// A resume before the decision waits again without asking the model; a
// denial then answers the original call with the person's reason, and the
// run goes on without the charge.
#[tokio::test]
async fn a_pending_resume_waits_again_and_a_denial_answers_the_call() {
    let bank = Arc::new(Bank::default());
    let gate = gate_on("memory:", &bank).await;
    let (pending, state, _) = stop_at_the_charge(&gate).await;
    let approval_id = pending[0].approval_id.clone();

    let mut task = gate.task_with_id(state.user(), state.task_id());
    let idle = Scripted::new([]);
    let outcome = agent::resume(&mut task, &idle, state, AgentLimits::default(), &mut |_| {})
        .await
        .unwrap();
    let RunOutcome::AwaitingApproval { pending, state, run } = outcome else {
        panic!("still pending: the run waits again")
    };
    assert_eq!(idle.turns_played(), 0, "no model turn while a call waits");
    assert_eq!(pending[0].approval_id, approval_id, "the same request, not a second");
    assert!(run.exchanges.is_empty());

    gate.approvals()
        .deny(&approval_id, "ops", "the customer disputes it")
        .await
        .unwrap();
    let model = Scripted::new([answer("The charge was declined by a person.")]);
    let run = agent::resume(&mut task, &model, state, AgentLimits::default(), &mut |_| {})
        .await
        .unwrap()
        .into_run();
    assert_eq!(
        run.ending,
        Ending::Answered {
            text: Some("The charge was declined by a person.".into())
        }
    );
    let denial = model.last_seen().into_iter().find_map(|m| match m {
        Message::ToolResult {
            call_id,
            content,
            is_error,
        } if call_id == "call_charge" => Some((content, is_error)),
        _ => None,
    });
    let (content, is_error) = denial.expect("the charge is answered");
    assert!(
        is_error && content.contains("a person declined: the customer disputes it"),
        "{content}"
    );
    assert_eq!(bank.charges.load(Ordering::SeqCst), 0, "a denied call never runs");
}

// A state is resumed only with its own task, and only in a version this
// gate reads; both refusals say which.
#[tokio::test]
async fn a_state_of_another_task_or_version_is_refused() {
    let bank = Arc::new(Bank::default());
    let gate = gate_on("memory:", &bank).await;
    let (_, state, _) = stop_at_the_charge(&gate).await;
    let model = Scripted::new([]);

    let mut other = gate.task_with_id("u2", state.task_id());
    let err = agent::resume(&mut other, &model, state.clone(), AgentLimits::default(), &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(&err, AgentError::State(RunStateError::OtherTask { state_user, user, .. }) if state_user == "u1" && user == "u2"),
        "{err}"
    );

    let mut json = serde_json::to_value(&state).unwrap();
    json["version"] = json!(2);
    let future: RunState = serde_json::from_value(json).unwrap();
    let mut task = gate.task_with_id(state.user(), state.task_id());
    let err = agent::resume(&mut task, &model, future, AgentLimits::default(), &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err, AgentError::State(RunStateError::Version { found: 2 })),
        "{err}"
    );
    assert!(err.to_string().contains("version 2"), "{err}");
    assert_eq!(model.turns_played(), 0);
    assert_eq!(bank.charges.load(Ordering::SeqCst), 0);
}
