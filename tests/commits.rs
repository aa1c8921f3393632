//! What a call costs the store, counted: a side effect commits twice (its
//! claim with its dispatch before the tool runs; its outcome with the task's
//! state and the decision record after), a rejection once, a replay once.
//! Counted by wrapping each store in `CountingStore`, on memory, SQLite and
//! PostgreSQL (when `GATE_POSTGRES_URL` is set), so the costs docs/durable-tasks.md
//! gives are tested behaviour rather than a benchmark's reading. That a
//! successful read-only call waits for no commit at all is counted in
//! `success_writer.rs`, against a store whose write lock is held.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate::ledger::{LedgerConfig, State, Storage};
use toolgate::{Gate, Step, ToolCall, ToolError, tools};
use toolgate_ledger::testing::{CommitKind, Commits, CountingStore};

mod support;
use support::crm::Tools;

/// The stores the counts hold on; PostgreSQL in a schema of its own, dropped
/// by [`drop_schema`].
async fn stores(test: &str) -> (Vec<(&'static str, Arc<dyn Storage>)>, Option<(String, String)>) {
    let dir = std::env::temp_dir().join(format!("gate-commits-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite = format!("sqlite:{}", dir.join("gate.db").display());
    let mut stores = vec![
        ("memory", toolgate::ledger::open("memory:").await.unwrap()),
        ("sqlite", toolgate::ledger::open(&sqlite).await.unwrap()),
    ];
    let mut schema = None;
    if let Ok(url) = std::env::var("GATE_POSTGRES_URL") {
        let name = format!("gate_commits_{test}_{}", std::process::id());
        let config = LedgerConfig {
            pg_schema: Some(name.clone()),
            ..LedgerConfig::default()
        };
        stores.push(("postgres", toolgate::ledger::open_with(&url, &config).await.unwrap()));
        schema = Some((url, name));
    }
    (stores, schema)
}

async fn drop_schema(schema: Option<(String, String)>) {
    if let Some((url, name)) = schema {
        toolgate_ledger::testing::drop_pg_schema(&url, &name).await.unwrap();
    }
}

async fn gate_on(store: &CountingStore) -> Gate {
    Gate::builder(Tools(Arc::default()).into_toolbox())
        .storage(store.storage())
        .build()
        .await
        .unwrap()
}

fn charge(customer: &str, amount: u64) -> ToolCall {
    let args = json!({"customer_id": customer, "amount_cents": amount}).to_string();
    ToolCall::new("c1", "charge_card", args)
}

fn seen(commits: &Commits) -> Vec<(CommitKind, u64)> {
    commits.by_kind().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_effect_commits_twice_whether_it_succeeds_is_declined_or_times_out() {
    let (stores, schema) = stores("effects").await;
    for (name, inner) in stores {
        let store = CountingStore::new(inner.clone());
        let gate = gate_on(&store).await;
        for customer in ["cus_1", "cus_2", "cus_3"] {
            let step = gate.task("u1").handle(charge(customer, 4200)).await;
            assert!(
                matches!(step, Step::Return(ref out) if !out.is_error),
                "{name}: {step:?}"
            );
        }
        let expected = vec![(CommitKind::ClaimAndDispatch, 3), (CommitKind::Transaction, 3)];
        assert_eq!(seen(&store.commits()), expected, "{name}: three charges");

        store.reset();
        let mut task = gate.task("u1");
        let step = task.handle(charge("cus_4", 20_000)).await;
        assert!(
            matches!(step, Step::Return(ref out) if out.is_error),
            "{name}: {step:?}"
        );
        let expected = vec![(CommitKind::ClaimAndDispatch, 1), (CommitKind::Transaction, 1)];
        assert_eq!(seen(&store.commits()), expected, "{name}: a declined charge");
        let records = inner.list_unresolved(10).await.unwrap();
        assert!(records.is_empty(), "{name}: a declined charge is settled, not unknown");

        store.reset();
        let mut task = gate.task("u1");
        let step = task.handle(charge("cus_5", 13)).await;
        assert!(matches!(step, Step::Fail(_)), "{name}: {step:?}");
        assert_eq!(seen(&store.commits()), expected, "{name}: a charge that timed out");
        let unknown = inner.list_unresolved(10).await.unwrap();
        assert_eq!(unknown.len(), 1, "{name}");
        assert_eq!(unknown[0].state, State::OutcomeUnknown, "{name}");
        assert!(task.is_failed(), "{name}");
        gate.shutdown().await;
    }
    drop_schema(schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_and_a_rejection_commit_once() {
    let (stores, schema) = stores("once").await;
    for (name, inner) in stores {
        let store = CountingStore::new(inner);
        let gate = gate_on(&store).await;
        let mut task = gate.task("u1");
        let step = task.handle(charge("cus_1", 4200)).await;
        assert!(matches!(step, Step::Return(_)), "{name}: {step:?}");

        store.reset();
        let step = task.handle(charge("cus_1", 4200)).await;
        assert!(
            matches!(step, Step::Return(ref out) if out.replayed),
            "{name}: {step:?}"
        );
        assert_eq!(store.commits().total(), 1, "{name}: a replay writes its decision only");

        store.reset();
        let step = task
            .handle(ToolCall::new("c2", "charge_card", r#"{"customer_id": 7}"#))
            .await;
        assert!(matches!(step, Step::Reject(_)), "{name}: {step:?}");
        let expected = vec![(CommitKind::Transaction, 1)];
        assert_eq!(seen(&store.commits()), expected, "{name}: a rejection");
        gate.shutdown().await;
    }
    drop_schema(schema).await;
}

/// A charge during which the store's clock jumps past the lease and a
/// sweeper takes the intent: the call ran, but its outcome can no longer be
/// recorded under the lease it held.
struct LostLease {
    clock: Arc<toolgate::ledger::ManualClock>,
    store: Arc<dyn Storage>,
}

#[tools]
impl LostLease {
    /// Charge a customer slowly.
    #[tool(destructive, external)]
    async fn charge_card(&self, #[arg(key)] customer_id: String) -> Result<Value, ToolError> {
        self.clock.advance(Duration::from_secs(3600));
        let now = toolgate::ledger::Clock::now(&*self.clock);
        self.store.sweep_expired_leases(now, 10).await.unwrap();
        Ok(json!({"charge": format!("ch_{customer_id}")}))
    }
}

// The settle commit carries the outcome; when the ledger refuses it, the
// decision is taken again without it, in one more commit: the step is a
// failure that holds the value for a person, never a success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_whose_lease_was_lost_is_a_failure_holding_the_value() {
    let clock = Arc::new(toolgate::ledger::ManualClock::new(
        toolgate::ledger::Timestamp::from_millis(1_700_000_000_000),
    ));
    let config = LedgerConfig {
        clock: clock.clone(),
        ..LedgerConfig::default()
    };
    let inner = toolgate::ledger::open_with("memory:", &config).await.unwrap();
    let store = CountingStore::new(inner.clone());
    let tools = LostLease {
        clock,
        store: inner.clone(),
    };
    let gate = Gate::builder(tools.into_toolbox())
        .storage(store.storage())
        .build()
        .await
        .unwrap();
    let mut task = gate.task("u1");
    let step = task
        .handle(ToolCall::new("c1", "charge_card", r#"{"customer_id": "cus_1"}"#))
        .await;
    let Step::Fail(report) = &step else {
        panic!("expected a failure, got {step:?}")
    };
    assert_eq!(report.reason, toolgate::FailureReason::OutcomeNotRecorded);
    assert_eq!(report.outcome, Some(json!({"charge": "ch_cus_1"})));
    assert!(task.is_failed());
    let unknown = inner.list_unresolved(10).await.unwrap();
    assert_eq!(unknown.len(), 1, "the intent stays with the person");
    // The sweep went to the store directly, past the counter.
    let expected = vec![(CommitKind::ClaimAndDispatch, 1), (CommitKind::Transaction, 1)];
    assert_eq!(
        seen(&store.commits()),
        expected,
        "the refused settle wrote nothing; its retry is the one transaction"
    );
}
