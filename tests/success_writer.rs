//! The fast path's first part: a successful read-only call waits for no
//! disk. Its decision record goes to a background writer, which waits out a
//! store that cannot take it, keeps the process's order of the log, and is
//! flushed by `gate.shutdown()`. Shown on an SQLite file whose write lock
//! another connection holds: the reads answer, their records land once the
//! lock is released, and nothing is lost.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use toolgate::Action;
use toolgate::ledger::{DecisionQuery, LedgerConfig};
use toolgate::{Gate, Step, ToolCall};
use toolgate_ledger::testing::{CommitKind, CountingStore, RawPool};

mod support;
use support::crm::{Crm, Tools};

/// A gate on a fresh SQLite file that gives up on a held lock quickly (its
/// commits counted), and a second connection to the same file that can hold
/// its write lock.
async fn gate_and_locker(tag: &str) -> (Gate, RawPool, Arc<Crm>, CountingStore) {
    let dir = std::env::temp_dir().join(format!("gate-writer-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("gate.db").display());
    let config = LedgerConfig {
        busy_timeout: Duration::from_millis(20),
        ..LedgerConfig::default()
    };
    let store = CountingStore::new(toolgate::ledger::open_with(&url, &config).await.unwrap());
    let crm = Arc::new(Crm::default());
    let gate = Gate::builder(Tools(crm.clone()).into_toolbox())
        .storage(store.storage())
        .store_patience(Duration::from_millis(100))
        .build()
        .await
        .unwrap();
    let locker = toolgate_ledger::testing::open_store(
        &url,
        &LedgerConfig {
            max_connections: Some(1),
            ..LedgerConfig::default()
        },
    )
    .await
    .unwrap()
    .raw()
    .cloned()
    .expect("an SQL store");
    (gate, locker, crm, store)
}

fn lookup(id: &str) -> ToolCall {
    ToolCall::new(id, "lookup_customer", r#"{"email": "a@b.c"}"#)
}

async fn log_of(gate: &Gate, task: &str) -> Vec<Action> {
    let query = DecisionQuery {
        task_id: Some(task.into()),
        ..DecisionQuery::default()
    };
    let records = gate.store().list_decisions(&query).await.unwrap();
    records.into_iter().map(|r| r.action).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_successes_answer_while_the_store_is_locked_and_are_logged_once_it_is_free() {
    let (gate, locker, crm, store) = gate_and_locker("locked").await;
    locker.execute("BEGIN EXCLUSIVE").await.unwrap();
    let mut task = gate.task("u1");
    for i in 0..20 {
        let step = task.handle(lookup(&format!("c{i}"))).await;
        assert!(matches!(&step, Step::Return(out) if !out.is_error), "{step:?}");
    }
    assert_eq!(crm.lookups.load(Ordering::SeqCst), 20);
    // No commit could happen, and none was waited for.
    assert_eq!(store.commits().total(), 0);
    // A reader sees none of them yet (WAL: reads go on under the lock).
    assert!(log_of(&gate, task.id()).await.is_empty());
    locker.execute("COMMIT").await.unwrap();
    gate.shutdown().await;
    assert_eq!(log_of(&gate, task.id()).await, vec![Action::Return; 20]);
    // Written by the writer, in batches: fewer commits than records.
    let commits = store.commits();
    let batches = commits.of(CommitKind::Transaction);
    assert_eq!(commits.total(), batches, "only the writer's batches: {commits:?}");
    assert!((1..20).contains(&batches), "20 records in {batches} batches");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_written_at_once_goes_after_the_queued_successes() {
    let (gate, locker, _, _) = gate_and_locker("order").await;
    locker.execute("BEGIN EXCLUSIVE").await.unwrap();
    let mut task = gate.task("u1");
    let ok = task.handle(lookup("c1")).await;
    assert!(matches!(ok, Step::Return(_)), "{ok:?}");
    // Give the writer time (past its one-second linger) to find the store
    // locked and pause.
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    locker.execute("COMMIT").await.unwrap();
    let rejected = task
        .handle(ToolCall::new("c2", "lookup_customer", r#"{"email": 7}"#))
        .await;
    assert!(matches!(rejected, Step::Reject(_)), "{rejected:?}");
    // The rejection is in the log as soon as its step is back, after the success.
    assert_eq!(log_of(&gate, task.id()).await, [Action::Return, Action::Reject]);
}

/// At an agent's pace (calls milliseconds apart) the writer still gathers
/// the records into one commit instead of one per call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_of_calls_made_milliseconds_apart_share_a_commit() {
    let (gate, _locker, _, store) = gate_and_locker("pace").await;
    let mut task = gate.task("u1");
    for n in 0..10 {
        let step = task.handle(lookup(&format!("c{n}"))).await;
        assert!(matches!(step, Step::Return(_)), "{step:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    gate.shutdown().await;
    assert_eq!(log_of(&gate, task.id()).await, vec![Action::Return; 10]);
    let commits = store.commits();
    assert_eq!(commits.total(), commits.of(CommitKind::Transaction), "{commits:?}");
    assert!(commits.total() <= 2, "10 records in {} commits", commits.total());
}
