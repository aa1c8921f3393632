//! Approvals: a call of a tool declared `approval` (or one a policy picks)
//! is stored as a request and does not run until a person agrees; then it
//! runs exactly once, under the request's intent key, on whichever worker
//! asks first, across restarts. A denial or an expiry is the call's
//! definitive answer; an approval never covers other arguments. Each case
//! runs on memory, on an SQLite file and on PostgreSQL (when
//! `GATE_POSTGRES_URL` is set), each store opened afresh for every "worker".

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use toolgate::ledger::{ApprovalStatus, LedgerConfig, ManualClock, Storage, Timestamp};
use toolgate::{Action, ApprovalQuestion, Budget, FailureReason, Gate, Step, ToolCall, ToolError, tools};
use toolgate_ledger::testing::{CommitKind, CountingStore};

/// Counts what actually ran.
#[derive(Default)]
struct Bank {
    charges: AtomicU32,
    lookups: AtomicU32,
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

    /// Refund part of a charge; large refunds need a person (the policy says).
    #[tool(writes, external)]
    async fn refund(&self, charge_id: String, amount_cents: u64) -> Result<serde_json::Value, ToolError> {
        self.0.charges.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"refunded": charge_id, "amount_cents": amount_cents}))
    }

    /// Look up a customer.
    #[tool(read_only)]
    async fn lookup_customer(&self, email: String) -> Result<serde_json::Value, ToolError> {
        self.0.lookups.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"email": email, "id": "cus_1"}))
    }
}

/// A store every "worker" opens afresh.
enum Place {
    Memory(Arc<dyn Storage>),
    Sqlite(PathBuf),
    Postgres { url: String, schema: String },
}

impl Place {
    async fn all(test: &str, clock: &Arc<ManualClock>) -> Vec<Place> {
        let config = LedgerConfig {
            clock: clock.clone(),
            ..LedgerConfig::default()
        };
        let mut places = vec![Place::Memory(
            toolgate::ledger::open_with("memory:", &config).await.unwrap(),
        )];
        let dir = std::env::temp_dir().join(format!("gate-approvals-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        places.push(Place::Sqlite(dir));
        if let Some(url) = std::env::var("GATE_POSTGRES_URL").ok().filter(|u| !u.trim().is_empty()) {
            let schema = format!("gate_approvals_{test}_{}", std::process::id());
            places.push(Place::Postgres { url, schema });
        }
        places
    }

    fn name(&self) -> &'static str {
        match self {
            Place::Memory(_) => "memory",
            Place::Sqlite(_) => "sqlite",
            Place::Postgres { .. } => "postgres",
        }
    }

    /// The store as a new process would open it.
    async fn open(&self, clock: &Arc<ManualClock>) -> Arc<dyn Storage> {
        let config = |schema: Option<&String>| LedgerConfig {
            clock: clock.clone(),
            pg_schema: schema.cloned(),
            ..LedgerConfig::default()
        };
        match self {
            Place::Memory(store) => store.clone(),
            Place::Sqlite(dir) => {
                let url = format!("sqlite:{}", dir.join("gate.db").display());
                toolgate::ledger::open_with(&url, &config(None)).await.unwrap()
            }
            Place::Postgres { url, schema } => toolgate::ledger::open_with(url, &config(Some(schema))).await.unwrap(),
        }
    }

    async fn cleanup(self) {
        match self {
            Place::Memory(_) => {}
            Place::Sqlite(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Place::Postgres { url, schema } => toolgate_ledger::testing::drop_pg_schema(&url, &schema).await.unwrap(),
        }
    }
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(Timestamp::from_millis(1_800_000_000_000)))
}

async fn gate_on(store: Arc<dyn Storage>, bank: &Arc<Bank>) -> Gate {
    Gate::builder(Tools(bank.clone()).into_toolbox())
        .storage(store)
        .build()
        .await
        .unwrap()
}

fn charge(id: &str, amount: u64) -> ToolCall {
    ToolCall::new(
        id,
        "charge_card",
        json!({"customer_id": "cus_1", "amount_cents": amount}).to_string(),
    )
}

fn pending(step: &Step) -> &toolgate::PendingApproval {
    match step {
        Step::AwaitingApproval(p) => p,
        other => panic!("expected a call awaiting approval, got {other:?}"),
    }
}

fn returned(step: &Step) -> &toolgate::ToolOutput {
    match step {
        Step::Return(out) => out,
        other => panic!("expected a returned call, got {other:?}"),
    }
}

// The call waits (nothing runs, the same call waits on the same request),
// the gate restarts, a person approves, and the task's next worker runs it
// once; the identical call afterwards replays it, and nothing is offered twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_runs_once_after_a_restart() {
    let clock = clock();
    for place in Place::all("once", &clock).await {
        let name = place.name();
        let bank = Arc::new(Bank::default());
        let approval_id = {
            let gate = gate_on(place.open(&clock).await, &bank).await;
            let mut task = gate.task_with_id("u1", "t-once");
            let first = task.handle(charge("c1", 4200)).await;
            let waiting = pending(&first);
            assert_eq!(first.action(), Action::AwaitApproval, "{name}");
            assert!(!first.is_error(), "{name}: waiting is not an error");
            assert!(
                waiting.text.contains("NOT RUN YET")
                    && waiting.text.contains("open until 2027-01-16 08:00:00 UTC")
                    && waiting.text.contains("Do not call `charge_card` again"),
                "{name}: {}",
                waiting.text
            );
            let again = task.handle(charge("c2", 4200)).await;
            assert_eq!(
                pending(&again).approval_id,
                waiting.approval_id,
                "{name}: no second request"
            );
            assert_eq!(bank.charges.load(Ordering::SeqCst), 0, "{name}: nothing ran");
            assert!(!task.is_failed(), "{name}: a waiting task has not failed");
            // Its other calls go on.
            let lookup = task
                .handle(ToolCall::new("c3", "lookup_customer", r#"{"email":"a@b.io"}"#))
                .await;
            assert!(matches!(lookup, Step::Return(_)), "{name}: {lookup:?}");
            assert!(
                task.take_decided().await.unwrap().is_empty(),
                "{name}: nothing decided yet"
            );
            waiting.approval_id.clone()
        };
        // A person decides in another process.
        let gate = gate_on(place.open(&clock).await, &bank).await;
        let inbox = gate.approvals();
        let listed = inbox.pending().await.unwrap();
        assert_eq!(listed.len(), 1, "{name}");
        let request = &listed[0];
        assert_eq!(request.id, approval_id);
        assert_eq!((request.tool.as_str(), request.user.as_str()), ("charge_card", "u1"));
        assert_eq!(request.task_id, "t-once");
        assert_eq!(request.call_id, "c1", "{name}: the call that asked");
        assert_eq!(request.arguments, r#"{"amount_cents":4200,"customer_id":"cus_1"}"#);
        assert_eq!(
            request.expires_at,
            request.requested_at.saturating_add(Duration::from_secs(24 * 3600)),
            "{name}: 24 h by default"
        );
        let approved = inbox
            .approve(&approval_id, "ops", Some("checked with the customer"))
            .await
            .unwrap();
        assert_eq!(approved.status, ApprovalStatus::Approved);
        assert_eq!(approved.decided_by.as_deref(), Some("ops"));
        assert_eq!(approved.note.as_deref(), Some("checked with the customer"));
        let twice = inbox.approve(&approval_id, "ops", None).await.unwrap_err();
        assert!(
            twice.is_invalid_transition() && twice.to_string().contains("already"),
            "{twice}"
        );
        // Another worker resumes the task.
        let gate = gate_on(place.open(&clock).await, &bank).await;
        let mut task = gate.task_with_id("u1", "t-once");
        let decided = task.take_decided().await.unwrap();
        assert_eq!(decided.len(), 1, "{name}: {decided:?}");
        let out = returned(&decided[0]);
        assert_eq!(out.call_id, "c1", "{name}: the step answers the original call");
        assert!(!out.is_error && !out.replayed, "{name}: {out:?}");
        assert_eq!(out.value["charge"], "ch_1");
        assert_eq!(bank.charges.load(Ordering::SeqCst), 1, "{name}");
        assert!(task.take_decided().await.unwrap().is_empty(), "{name}: taken once");
        // The identical call (an MCP client asking again) gets the result, not a second charge.
        let again = task.handle(charge("c4", 4200)).await;
        let replay = returned(&again);
        assert!(
            replay.replayed && replay.value["charge"] == "ch_1",
            "{name}: {replay:?}"
        );
        assert_eq!(bank.charges.load(Ordering::SeqCst), 1, "{name}: ran exactly once");
        place.cleanup().await;
    }
}

// Two workers take the same decision at once: the call runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_taking_one_approval_run_it_once() {
    let clock = clock();
    for place in Place::all("race", &clock).await {
        let name = place.name();
        let bank = Arc::new(Bank::default());
        let gate = gate_on(place.open(&clock).await, &bank).await;
        let step = gate.task_with_id("u1", "t-race").handle(charge("c1", 900)).await;
        gate.approvals()
            .approve(&pending(&step).approval_id, "ops", None)
            .await
            .unwrap();
        let (a, b) = (
            gate_on(place.open(&clock).await, &bank).await,
            gate_on(place.open(&clock).await, &bank).await,
        );
        let (mut ta, mut tb) = (a.task_with_id("u1", "t-race"), b.task_with_id("u1", "t-race"));
        let (sa, sb) = tokio::join!(ta.take_decided(), tb.take_decided());
        let steps: Vec<Step> = sa.unwrap().into_iter().chain(sb.unwrap()).collect();
        assert_eq!(bank.charges.load(Ordering::SeqCst), 1, "{name}: {steps:?}");
        // The worker that ran it recorded its outcome under the request's
        // key (the other may have met the running intent and stopped the
        // task as `in_progress`, as any two workers racing on one intent do).
        let request = gate
            .approvals()
            .get(&pending(&step).approval_id)
            .await
            .unwrap()
            .unwrap();
        let stored = a.store().get("u1", &request.intent_key).await.unwrap().unwrap();
        assert_eq!(stored.state, toolgate::ledger::State::Succeeded, "{name}: {steps:?}");
        assert_eq!(stored.outcome.unwrap().value["charge"], "ch_1", "{name}");
        place.cleanup().await;
    }
}

// An approval binds to the arguments' hash: other arguments are a request
// of their own, and do not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_never_covers_other_arguments() {
    let clock = clock();
    for place in Place::all("bind", &clock).await {
        let name = place.name();
        let bank = Arc::new(Bank::default());
        let gate = gate_on(place.open(&clock).await, &bank).await;
        let mut task = gate.task_with_id("u1", "t-bind");
        let small = task.handle(charge("c1", 100)).await;
        let small_id = pending(&small).approval_id.clone();
        gate.approvals().approve(&small_id, "ops", None).await.unwrap();
        let large = task.handle(charge("c2", 100_000)).await;
        assert_ne!(pending(&large).approval_id, small_id, "{name}: a request of its own");
        assert_eq!(
            bank.charges.load(Ordering::SeqCst),
            0,
            "{name}: the approval covered nothing else"
        );
        // Key order and spacing are not other arguments.
        let same = ToolCall::new(
            "c3",
            "charge_card",
            r#"{ "amount_cents": 100, "customer_id": "cus_1" }"#,
        );
        let ran = task.handle(same).await;
        assert!(!returned(&ran).is_error, "{name}: {ran:?}");
        assert_eq!(bank.charges.load(Ordering::SeqCst), 1, "{name}");
        place.cleanup().await;
    }
}

// A denial is the call's definitive answer, with the person's reason; the
// identical call is then refused as a repeat (rule 3), with no new request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_is_the_calls_answer_and_is_not_asked_again() {
    let clock = clock();
    for place in Place::all("deny", &clock).await {
        let name = place.name();
        let bank = Arc::new(Bank::default());
        let gate = gate_on(place.open(&clock).await, &bank).await;
        let mut task = gate.task_with_id("u1", "t-deny");
        let step = task.handle(charge("c1", 500)).await;
        let id = pending(&step).approval_id.clone();
        let empty = gate.approvals().deny(&id, "ops", " ").await.unwrap_err();
        assert!(empty.is_invalid_input(), "{empty}");
        let denied = gate
            .approvals()
            .deny(&id, "ops", "the customer disputes it")
            .await
            .unwrap();
        assert_eq!(denied.denial_reason.as_deref(), Some("the customer disputes it"));
        let late = gate.approvals().approve(&id, "ops", None).await.unwrap_err();
        assert!(
            late.is_invalid_transition() && late.to_string().contains("denied"),
            "{late}"
        );
        let decided = task.take_decided().await.unwrap();
        let out = returned(&decided[0]);
        assert!(out.is_error, "{name}: {out:?}");
        assert!(
            out.text.contains("a person declined: the customer disputes it"),
            "{name}: {}",
            out.text
        );
        // gate's own words, not the external tool's: not marked as data
        // from outside.
        assert!(!out.text.contains("untrusted-data"), "{name}: {}", out.text);
        assert_eq!(out.call_id, "c1");
        let repeat = task.handle(charge("c2", 500)).await;
        assert!(
            matches!(repeat, Step::Reject(_)),
            "{name}: refused as a repeat: {repeat:?}"
        );
        assert!(
            gate.approvals().pending().await.unwrap().is_empty(),
            "{name}: no new request"
        );
        assert_eq!(bank.charges.load(Ordering::SeqCst), 0, "{name}");
        place.cleanup().await;
    }
}

// Nobody decided in time: the call's answer says so, and the request
// refuses a late approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_request_is_answered_with_its_expiry() {
    let clock = clock();
    for place in Place::all("expire", &clock).await {
        let name = place.name();
        let bank = Arc::new(Bank::default());
        let store = place.open(&clock).await;
        let gate = Gate::builder(Tools(bank.clone()).into_toolbox())
            .storage(store)
            .approval_expiry(Duration::from_secs(3600))
            .build()
            .await
            .unwrap();
        let mut task = gate.task_with_id("u1", "t-expire");
        let step = task.handle(charge("c1", 500)).await;
        let id = pending(&step).approval_id.clone();
        clock.advance(Duration::from_secs(3600));
        let late = gate.approvals().approve(&id, "ops", None).await.unwrap_err();
        assert!(
            late.is_invalid_transition() && late.to_string().contains("expired"),
            "{late}"
        );
        let again = task.handle(charge("c2", 500)).await;
        let out = returned(&again);
        assert!(
            out.is_error && out.text.contains("no decision before"),
            "{name}: {out:?}"
        );
        assert!(
            task.take_decided().await.unwrap().is_empty(),
            "{name}: delivered by the call"
        );
        assert_eq!(bank.charges.load(Ordering::SeqCst), 0, "{name}");
        place.cleanup().await;
    }
}

// At most `pending_approvals` requests wait per task; the next call that
// needs one fails with `approvals_pending`, makes no request, and does not
// end the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_waiting_are_capped_per_task() {
    let clock = clock();
    for place in Place::all("cap", &clock).await {
        let name = place.name();
        let bank = Arc::new(Bank::default());
        let gate = Gate::builder(Tools(bank.clone()).into_toolbox())
            .storage(place.open(&clock).await)
            .budget(Budget::default().with_pending_approvals(2).unwrap())
            .build()
            .await
            .unwrap();
        let mut task = gate.task_with_id("u1", "t-cap");
        let first = task.handle(charge("c1", 1)).await;
        pending(&first);
        pending(&task.handle(charge("c2", 2)).await);
        let third = task.handle(charge("c3", 3)).await;
        match &third {
            Step::Fail(report) => assert_eq!(report.reason, FailureReason::ApprovalsPending, "{name}"),
            other => panic!("{name}: {other:?}"),
        }
        assert!(!task.is_failed(), "{name}: the task goes on");
        assert_eq!(
            gate.approvals().pending().await.unwrap().len(),
            2,
            "{name}: no third request"
        );
        // Once one is decided, there is room again.
        gate.approvals()
            .deny(&pending(&first).approval_id, "ops", "no")
            .await
            .unwrap();
        pending(&task.handle(charge("c4", 4)).await);
        place.cleanup().await;
    }
}

// A policy asks per call: small refunds run at once, a large one waits
// with the policy's reason for the person; an invalid call is rejected,
// and nobody is asked about it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_picks_the_calls_a_person_decides() {
    let clock = clock();
    let place = Place::all("policy", &clock).await.remove(0);
    let bank = Arc::new(Bank::default());
    let gate = Gate::builder(Tools(bank.clone()).into_toolbox())
        .storage(place.open(&clock).await)
        .approvals(|q: &ApprovalQuestion<'_>| {
            let cents = q.arguments["amount_cents"].as_u64().unwrap_or(0);
            (q.spec.name() == "refund" && cents > 10_000).then(|| format!("a refund of {cents} cents"))
        })
        .build()
        .await
        .unwrap();
    let mut task = gate.task("u1");
    let refund = |id: &str, cents: u64| {
        ToolCall::new(
            id,
            "refund",
            json!({"charge_id": "ch_1", "amount_cents": cents}).to_string(),
        )
    };
    assert!(!returned(&task.handle(refund("c1", 500)).await).is_error);
    let large = task.handle(refund("c2", 50_000)).await;
    let request = gate
        .approvals()
        .get(&pending(&large).approval_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(request.reason, "a refund of 50000 cents");
    let invalid = task
        .handle(ToolCall::new("c3", "charge_card", r#"{"customer_id": 7}"#))
        .await;
    assert!(matches!(invalid, Step::Reject(_)), "{invalid:?}");
    assert_eq!(
        gate.approvals().pending().await.unwrap().len(),
        1,
        "nobody asked about an invalid call"
    );
    assert_eq!(bank.charges.load(Ordering::SeqCst), 1);
    place.cleanup().await;
}

// What approvals cost the store, counted: a request is one commit (the
// request, the task's state and the decision record together), a decision
// one, the approved run two (its claim with its dispatch; its outcome).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_commits_once_and_the_approved_run_twice() {
    let clock = clock();
    for place in Place::all("commits", &clock).await {
        let name = place.name();
        let bank = Arc::new(Bank::default());
        let store = CountingStore::new(place.open(&clock).await);
        let gate = gate_on(store.storage(), &bank).await;
        let mut task = gate.task_with_id("u1", "t-commits");
        task.load().await.unwrap();
        store.reset();
        let step = task.handle(charge("c1", 700)).await;
        let seen = |store: &CountingStore| store.commits().by_kind().collect::<Vec<_>>();
        assert_eq!(seen(&store), [(CommitKind::Transaction, 1)], "{name}");
        store.reset();
        gate.approvals()
            .approve(&pending(&step).approval_id, "ops", None)
            .await
            .unwrap();
        assert_eq!(seen(&store), [(CommitKind::DecideApproval, 1)], "{name}");
        store.reset();
        let steps = task.take_decided().await.unwrap();
        assert!(!returned(&steps[0]).is_error, "{name}");
        assert_eq!(
            seen(&store),
            [(CommitKind::ClaimAndDispatch, 1), (CommitKind::Transaction, 1)],
            "{name}"
        );
        place.cleanup().await;
    }
}

// A request the store does not take asks nobody: the call fails as "store
// unavailable" instead of telling the model a person was asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_store_did_not_take_is_not_announced() {
    let clock = clock();
    let place = Place::all("down", &clock).await.remove(1);
    let bank = Arc::new(Bank::default());
    let store = place.open(&clock).await;
    let gate = Gate::builder(Tools(bank.clone()).into_toolbox())
        .storage(store.clone())
        .store_patience(Duration::from_millis(20))
        .build()
        .await
        .unwrap();
    let mut task = gate.task_with_id("u1", "t-down");
    task.load().await.unwrap();
    store.close().await;
    let step = task.handle(charge("c1", 100)).await;
    match &step {
        Step::Fail(report) => assert_eq!(report.reason, FailureReason::LedgerUnavailable, "{step:?}"),
        other => panic!("a request that was not stored is not announced: {other:?}"),
    }
    assert_eq!(bank.charges.load(Ordering::SeqCst), 0);
    place.cleanup().await;
}
