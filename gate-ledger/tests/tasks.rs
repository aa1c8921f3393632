//! The task store's conformance suite: task state, failed tasks, reopening,
//! and the per-user token windows, against memory, SQLite and PostgreSQL
//! (when `GATE_POSTGRES_URL` is set). The window cases are B3 and B13,
//! numbered with gate-budget's budget cases (the comment above each states
//! it).

#[macro_use]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::{Harness, Kind, charge};
use serde_json::json;
use toolgate_budget::TokenLimit;
use toolgate_ledger::{
    Action, Claim, DecisionId, DecisionQuery, DecisionRecord, FailureReason, FailureReport, Finish, Resolution,
    ResolveRequest, SettledAtOnce, Settlement, State, TaskRecord, Timestamp,
};

const HOUR: Duration = Duration::from_secs(3600);

fn limit(tokens: u64) -> TokenLimit {
    TokenLimit::new(tokens, HOUR).expect("valid limit")
}

fn failure(task: &TaskRecord, reason: FailureReason, key: Option<&str>, at: Timestamp) -> FailureReport {
    FailureReport {
        at,
        task_id: task.task_id.clone(),
        user: task.user.clone(),
        call_id: "call_1".into(),
        tool: "charge_card".into(),
        arguments_fingerprint: "fp".into(),
        intent_key: key.map(str::to_owned),
        ledger_state: key.map(|_| State::OutcomeUnknown),
        class: None,
        reason,
        attempts: 1,
        repair_tokens: 10,
        latency_added_ms: 0,
        last_error: "timed out".into(),
        outcome: None,
        next_check: "look it up".into(),
        model_text: "STOP.".into(),
    }
}

fn decision(id: u128, task: &str) -> DecisionRecord {
    DecisionRecord {
        id: DecisionId::from_u128(id),
        at: Timestamp::from_millis(1),
        task_id: task.into(),
        user: "u1".into(),
        call_id: "c".into(),
        tool: "lookup".into(),
        class: None,
        action: Action::Return,
        fail_reason: None,
        attempt: 1,
        attempts_used: 0,
        repair_tokens: 0,
        latency_added_ms: 0,
        message_hash: "h".into(),
        intent_key: None,
    }
}

async fn decisions_of(h: &Harness, task: &str) -> Vec<DecisionRecord> {
    let query = DecisionQuery {
        task_id: Some(task.into()),
        ..Default::default()
    };
    h.ledger.list_decisions(&query).await.expect("list")
}

/// Saves `record` in its own transaction; returns the new revision.
async fn save(h: &Harness, record: &TaskRecord) -> Result<i64, toolgate_ledger::LedgerError> {
    let mut tx = h.ledger.begin().await.expect("begin");
    let revision = tx.save_task(record).await?;
    tx.commit().await.expect("commit");
    Ok(revision)
}

// A task's state is stored and read back whole; every write names the
// revision it read, and a write from a stale revision is refused.
async fn t01_task_state_round_trips_under_compare_and_set(h: &Harness) {
    assert_eq!(h.ledger.load_task("u1", "t1").await.expect("load"), None);
    let mut task = TaskRecord::new("u1", "t1");
    task.writer = "w1".into();
    task.state.rejections = 2;
    task.state.episode_rejections = vec!["hash-a".into()];
    task.state.failed_calls = vec!["fp-1".into()];
    task.state.budget.repairs = 2;
    task.state.budget.repair_tokens = 1_234;
    assert_eq!(save(h, &task).await.expect("first write"), 1);
    let stored = h.ledger.load_task("u1", "t1").await.expect("load").expect("stored");
    assert_eq!(stored.revision, 1);
    assert_eq!(stored.writer, "w1");
    assert_eq!(stored.state, task.state);
    assert!(!stored.terminal);

    // Another worker that read nothing (revision 0) cannot create it again.
    let e = save(h, &task).await.expect_err("stale insert");
    assert!(e.is_stale(), "{e}");
    let mut next = stored.clone();
    next.writer = "w2".into();
    next.state.rejections = 3;
    assert_eq!(save(h, &next).await.expect("second write"), 2);
    // A writer still holding revision 1 lost.
    let e = save(h, &stored).await.expect_err("stale update");
    assert!(e.is_stale(), "{e}");
    let now = h.ledger.load_task("u1", "t1").await.expect("load").expect("stored");
    assert_eq!((now.revision, now.writer.as_str(), now.state.rejections), (2, "w2", 3));
    // Tasks are per user.
    assert_eq!(h.ledger.load_task("u2", "t1").await.expect("load"), None);
}

// What one transaction writes lands together, or not at all when it is
// dropped without commit.
async fn t02_a_transaction_commits_everything_or_nothing(h: &Harness) {
    let l = limit(1_000);
    let mut task = TaskRecord::new("u1", "t2");
    task.writer = "w".into();
    {
        let mut tx = h.ledger.begin().await.expect("begin");
        tx.save_task(&task).await.expect("save");
        tx.append_decision(&decision(1, "t2")).await.expect("append");
        let granted = tx.reserve_tokens("u1", &l, 400).await.expect("reserve");
        assert!(granted.is_ok());
        // Dropped here: rolled back.
    }
    assert_eq!(h.ledger.load_task("u1", "t2").await.expect("load"), None);
    assert_eq!(h.ledger.repair_tokens_used("u1", &l).await.expect("used"), 0);
    let logged = decisions_of(h, "t2").await;
    assert!(logged.is_empty());

    let mut tx = h.ledger.begin().await.expect("begin");
    tx.save_task(&task).await.expect("save");
    tx.append_decision(&decision(2, "t2")).await.expect("append");
    tx.append_decision(&decision(2, "t2"))
        .await
        .expect("append the same id");
    assert!(tx.reserve_tokens("u1", &l, 400).await.expect("reserve").is_ok());
    tx.commit().await.expect("commit");
    assert!(h.ledger.load_task("u1", "t2").await.expect("load").is_some());
    assert_eq!(h.ledger.repair_tokens_used("u1", &l).await.expect("used"), 400);
    let logged = decisions_of(h, "t2").await;
    assert_eq!(logged.len(), 1, "one record per id");
}

// B3: exhausting one user's window leaves every other user's untouched.
async fn t03_windows_are_per_user(h: &Harness) {
    let l = limit(50_000);
    let mut tx = h.ledger.begin().await.expect("begin");
    let mut granted = 0;
    while tx.reserve_tokens("alice", &l, 7_000).await.expect("reserve").is_ok() {
        granted += 7_000;
    }
    let refused = tx.reserve_tokens("alice", &l, 7_000).await.expect("reserve");
    assert_eq!(refused.map_err(|e| e.remaining), Err(50_000 - granted));
    assert!(tx.reserve_tokens("bob", &l, 50_000).await.expect("reserve").is_ok());
    tx.commit().await.expect("commit");
    assert_eq!(h.ledger.repair_tokens_used("alice", &l).await.expect("used"), 49_000);
    assert_eq!(h.ledger.repair_tokens_used("bob", &l).await.expect("used"), 50_000);
    assert_eq!(h.ledger.repair_tokens_used("Alice", &l).await.expect("used"), 0);
    // A window of another length is another window.
    let daily = TokenLimit::new(50_000, Duration::from_secs(86_400)).expect("valid");
    assert_eq!(h.ledger.repair_tokens_used("alice", &daily).await.expect("used"), 0);
}

// B4 on the store's clock: reservations count for eleven buckets, then the
// window frees them; settling refunds a shortfall and charges an excess.
async fn t04_windows_roll_and_settle_on_the_store_clock(h: &Harness) {
    let l = limit(1_000);
    let mut tx = h.ledger.begin().await.expect("begin");
    let r = tx.reserve_tokens("u1", &l, 600).await.expect("reserve").expect("fits");
    let left = tx.settle_tokens("u1", &l, &[r], 200).await.expect("settle");
    assert_eq!(left, 800);
    tx.commit().await.expect("commit");
    assert_eq!(h.ledger.repair_tokens_used("u1", &l).await.expect("used"), 200);
    let mut tx = h.ledger.begin().await.expect("begin");
    let r = tx.reserve_tokens("u1", &l, 800).await.expect("reserve").expect("fits");
    assert_eq!(tx.settle_tokens("u1", &l, &[r], 1_000).await.expect("settle"), 0);
    tx.commit().await.expect("commit");
    assert_eq!(h.ledger.repair_tokens_used("u1", &l).await.expect("used"), 1_200);
    h.clock.advance(Duration::from_secs(66 * 60));
    assert_eq!(h.ledger.repair_tokens_used("u1", &l).await.expect("used"), 0);
}

// B13: 64 concurrent transactions reserving for one user fill the window to
// exactly the largest multiple that fits, never beyond.
async fn t05_concurrent_reservers_never_overdraw(h: &Harness) {
    for (user, each) in [("shared-7", 7u64), ("shared-113", 113), ("shared-4999", 4_999)] {
        let l = limit(50_000);
        let granted = Arc::new(AtomicU64::new(0));
        let mut workers = Vec::new();
        for _ in 0..64 {
            let ledger = h.ledger.clone();
            let granted = granted.clone();
            workers.push(tokio::spawn(async move {
                loop {
                    let mut tx = ledger.begin().await.expect("begin");
                    let answer = tx.reserve_tokens(user, &l, each).await.expect("reserve");
                    tx.commit().await.expect("commit");
                    match answer {
                        Ok(r) => granted.fetch_add(r.tokens, Ordering::SeqCst),
                        Err(_) => break,
                    };
                }
            }));
        }
        for w in workers {
            w.await.expect("worker");
        }
        let total = granted.load(Ordering::SeqCst);
        assert_eq!(total, 50_000 / each * each, "reservations of {each}");
        assert_eq!(h.ledger.repair_tokens_used(user, &l).await.expect("used"), total);
    }
}

// Failed tasks are listed (those that need reconciliation first) until a
// person reopens them; reopening starts a new repair episode and keeps what
// the task spent.
async fn t06_failed_tasks_are_listed_until_reopened(h: &Harness) {
    let at = h.now();
    let mut capped = TaskRecord::new("u1", "capped");
    capped.writer = "w".into();
    capped.state.rejections = 2;
    capped.state.corrections_in_step = 1;
    capped.state.episode_rejections = vec!["h1".into()];
    capped.terminal = true;
    capped.failure = Some(failure(&capped, FailureReason::RejectionCap, None, at));
    save(h, &capped).await.expect("save");
    let mut unknown = TaskRecord::new("u1", "unknown");
    unknown.writer = "w".into();
    unknown.terminal = true;
    unknown.failure = Some(failure(
        &unknown,
        FailureReason::OutcomeUnknown,
        Some("key-1"),
        at.saturating_add(HOUR),
    ));
    save(h, &unknown).await.expect("save");
    let mut fine = TaskRecord::new("u1", "fine");
    fine.writer = "w".into();
    save(h, &fine).await.expect("save");

    let failed = h.ledger.list_failed_tasks(10).await.expect("list");
    let ids: Vec<&str> = failed.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["unknown", "capped"], "reconciliation first, then oldest");
    assert_eq!(failed[1].failure, capped.failure);
    assert_eq!(h.ledger.list_failed_tasks(1).await.expect("list").len(), 1);

    let reopened = h.ledger.reopen_task("u1", "capped").await.expect("reopen");
    assert!(!reopened.terminal);
    assert_eq!(reopened.reopened_at, Some(h.now()));
    assert_eq!(reopened.state.rejections, 2, "what the task spent stays spent");
    assert_eq!(reopened.state.corrections_in_step, 0);
    assert!(reopened.state.episode_rejections.is_empty());
    assert_eq!(reopened.failure, capped.failure, "the report is kept");
    let stored = h.ledger.load_task("u1", "capped").await.expect("load").expect("stored");
    assert_eq!(stored, reopened);
    let again = h.ledger.reopen_task("u1", "capped").await.expect("reopen again");
    assert_eq!(again, stored, "reopening an open task changes nothing");
    let ids: Vec<String> = h
        .ledger
        .list_failed_tasks(10)
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.task_id)
        .collect();
    assert_eq!(ids, ["unknown"]);
    let e = h.ledger.reopen_task("u1", "nobody").await.expect_err("unknown task");
    assert!(e.is_not_found(), "{e}");
}

// Resolving an intent whose outcome was unknown reopens the task that failed
// waiting for it, and only that one.
async fn t07_resolving_an_intent_reopens_the_task_that_waited_for_it(h: &Harness) {
    let r = charge("pay INV-9");
    let Claim::Acquired(lease) = h.ledger.claim(&r).await.expect("claim") else {
        panic!("fresh key")
    };
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    h.ledger
        .mark_unknown(&lease, "timed out".into())
        .await
        .expect("unknown");
    let at = h.now();
    let mut waiting = TaskRecord::new(&r.user, &r.task_id);
    waiting.writer = "w".into();
    waiting.terminal = true;
    waiting.failure = Some(failure(&waiting, FailureReason::OutcomeUnknown, Some(&r.key), at));
    save(h, &waiting).await.expect("save");
    // Another task of the user failed for another reason, naming the same key.
    let mut other = TaskRecord::new(&r.user, "other");
    other.writer = "w".into();
    other.terminal = true;
    other.failure = Some(failure(&other, FailureReason::KeyReused, Some(&r.key), at));
    save(h, &other).await.expect("save");

    let request = ResolveRequest {
        key: r.key.clone(),
        user: None,
        resolution: Resolution::Succeeded,
        note: Some("ch_1 at the provider".into()),
        value: Some(json!({"charge": "ch_1"})),
    };
    h.ledger.resolve(&request).await.expect("resolve");
    let task = h
        .ledger
        .load_task(&r.user, &r.task_id)
        .await
        .expect("load")
        .expect("stored");
    assert!(!task.terminal, "the task goes on with the person's answer");
    let other = h
        .ledger
        .load_task(&r.user, "other")
        .await
        .expect("load")
        .expect("stored");
    assert!(other.terminal, "a key-reuse failure is not what the resolution answers");
    // Resolving again with the same answer is a no-op and reopens nothing new.
    h.ledger.resolve(&request).await.expect("resolve again");
}

// A claim, dispatch or finish sent again after its answer was lost finds its
// own earlier write instead of reporting another worker.
async fn t08_writes_resent_after_a_lost_answer_find_their_own_result(h: &Harness) {
    let mut r = charge("pay INV-10");
    r.owner = Some(toolgate_ledger::new_owner_token());
    let Claim::Acquired(first) = h.ledger.claim(&r).await.expect("claim") else {
        panic!("fresh key")
    };
    let Claim::Acquired(again) = h.ledger.claim(&r).await.expect("claim again") else {
        panic!("our own claim")
    };
    assert_eq!((again.attempt, &again.owner), (first.attempt, &first.owner));
    // Another worker's token is still told the key is in progress.
    let mut other = r.clone();
    other.owner = Some(toolgate_ledger::new_owner_token());
    assert!(h.ledger.claim(&other).await.expect_err("in progress").is_in_progress());
    let dispatched = h.ledger.dispatch(&first).await.expect("dispatch");
    let again = h.ledger.dispatch(&first).await.expect("dispatch again");
    assert_eq!(again.attempt, dispatched.attempt);
    let done = h
        .ledger
        .complete(&dispatched, json!({"ok": 1}))
        .await
        .expect("complete");
    let again = h
        .ledger
        .complete(&dispatched, json!({"ok": 1}))
        .await
        .expect("complete again");
    assert_eq!((done.state, again.state), (State::Succeeded, State::Succeeded));
    // A different finish after the record moved on is still refused.
    let e = h
        .ledger
        .mark_unknown(&dispatched, "late".into())
        .await
        .expect_err("moved on");
    assert!(e.is_stale(), "{e}");
}

// A batch of decision records (more than one multi-row insert holds) lands
// in order, each once: an id already stored and an id twice in the batch
// are skipped, as a resent batch is.
async fn t09_a_batch_of_decisions_lands_in_order_once_per_id(h: &Harness) {
    let mut tx = h.ledger.begin().await.expect("begin");
    tx.append_decision(&decision(3, "batch")).await.expect("append");
    tx.commit().await.expect("commit");
    let mut batch: Vec<DecisionRecord> = (0..150).map(|i| decision(i, "batch")).collect();
    batch.insert(12, decision(10, "batch"));
    batch.push(decision(10, "batch"));
    let mut tx = h.ledger.begin().await.expect("begin");
    tx.append_decisions(&batch).await.expect("append a batch");
    tx.commit().await.expect("commit");
    let ids: Vec<u128> = decisions_of(h, "batch")
        .await
        .into_iter()
        .map(|d| d.id.as_u128())
        .collect();
    let mut expected = vec![3];
    expected.extend((0..150).filter(|i| *i != 3));
    assert_eq!(ids, expected);
}

// A claim that commits its dispatch in the same write: the record is
// Dispatched at once, another worker is told the key is in progress, the
// same claim sent again after a lost answer gets its lease back, and a
// lease that runs out is an unknown outcome (the call may have been made).
async fn t10_a_claim_can_commit_its_dispatch_in_the_same_write(h: &Harness) {
    let mut r = charge("pay INV-20");
    r.owner = Some(toolgate_ledger::new_owner_token());
    let Claim::Acquired(lease) = h.ledger.claim_and_dispatch(&r).await.expect("claim") else {
        panic!("fresh key")
    };
    let stored = h.ledger.get(&r.user, &r.key).await.expect("get").expect("stored");
    assert_eq!(stored.state, State::Dispatched);
    assert_eq!(stored.dispatched_at, Some(h.now()));
    let Claim::Acquired(again) = h.ledger.claim_and_dispatch(&r).await.expect("claim again") else {
        panic!("our own claim")
    };
    assert_eq!((again.attempt, &again.owner), (lease.attempt, &lease.owner));
    let mut other = r.clone();
    other.owner = Some(toolgate_ledger::new_owner_token());
    let e = h.ledger.claim_and_dispatch(&other).await.expect_err("in progress");
    assert!(e.is_in_progress(), "{e}");
    h.clock.advance(r.lease);
    match h.ledger.claim_and_dispatch(&other).await.expect("claim after expiry") {
        Claim::OutcomeUnknown(record) => assert_eq!(record.state, State::OutcomeUnknown),
        answer => panic!("the call may have been made, got {answer:?}"),
    }
}

// A call's outcome, the task's state and the decision record commit together:
// dropped, the transaction leaves the intent dispatched; committed, all
// three are stored; sent again, the finish finds its own write; a refused
// finish leaves the transaction usable for the rest.
async fn t11_an_intent_finishes_inside_the_decision_transaction(h: &Harness) {
    let r = charge("pay INV-21");
    let Claim::Acquired(lease) = h.ledger.claim_and_dispatch(&r).await.expect("claim") else {
        panic!("fresh key")
    };
    let paid = toolgate_ledger::Finish::Succeeded(json!({"paid": true}));
    let mut task = TaskRecord::new("user-42", "task-7");
    task.writer = "w1".into();
    task.state.rejections = 1;

    let mut tx = h.ledger.begin().await.expect("begin");
    let record = tx.finish_intent(&lease, &paid).await.expect("finish");
    assert_eq!(record.state, State::Succeeded);
    drop(tx);
    let stored = h.ledger.get(&r.user, &r.key).await.expect("get").expect("stored");
    assert_eq!(
        stored.state,
        State::Dispatched,
        "a dropped transaction finishes nothing"
    );

    let mut tx = h.ledger.begin().await.expect("begin");
    tx.finish_intent(&lease, &paid).await.expect("finish");
    tx.save_task(&task).await.expect("save");
    tx.append_decision(&decision(21, "task-7")).await.expect("append");
    tx.commit().await.expect("commit");
    let stored = h.ledger.get(&r.user, &r.key).await.expect("get").expect("stored");
    assert_eq!(stored.state, State::Succeeded);
    assert_eq!(stored.outcome.map(|o| o.value), Some(json!({"paid": true})));
    assert_eq!(decisions_of(h, "task-7").await.len(), 1);
    let saved = h
        .ledger
        .load_task("user-42", "task-7")
        .await
        .expect("load")
        .expect("stored");
    assert_eq!(saved.revision, 1);

    let mut tx = h.ledger.begin().await.expect("begin");
    let again = tx
        .finish_intent(&lease, &paid)
        .await
        .expect("our own finish, sent again");
    assert_eq!(again.state, State::Succeeded);
    let unknown = toolgate_ledger::Finish::OutcomeUnknown { error: "late".into() };
    let e = tx.finish_intent(&lease, &unknown).await.expect_err("moved on");
    assert!(e.is_stale(), "{e}");
    task.revision = 1;
    task.writer = "w2".into();
    tx.save_task(&task).await.expect("the transaction is still usable");
    tx.commit().await.expect("commit");
    let saved = h
        .ledger
        .load_task("user-42", "task-7")
        .await
        .expect("load")
        .expect("stored");
    assert_eq!((saved.revision, saved.writer.as_str()), (2, "w2"));
    let stored = h.ledger.get(&r.user, &r.key).await.expect("get").expect("stored");
    assert_eq!(stored.state, State::Succeeded, "the refused finish changed nothing");
}

/// The intent's state, the task's revision and how many records the task has.
async fn where_it_stands(h: &Harness, key: &str) -> (State, i64, usize) {
    let stored = h.ledger.get("user-42", key).await.expect("get").expect("stored");
    let saved = h
        .ledger
        .load_task("user-42", "task-31")
        .await
        .expect("load")
        .expect("stored");
    (stored.state, saved.revision, decisions_of(h, "task-31").await.len())
}

// A decision settled at once (one statement where the store has it) lands
// all of its writes or none: a task changed by another worker, or a lease
// that no longer holds, leaves the intent, the task and the decision log as
// they were, and the answer says so, for the transaction to tell why. A
// settlement whose conditions hold lands whole on the SQL stores; the
// memory store has no such statement and writes nothing.
async fn t12_a_settlement_at_once_lands_whole_or_not_at_all(h: &Harness) {
    let r = charge("pay INV-31");
    let Claim::Acquired(lease) = h.ledger.claim_and_dispatch(&r).await.expect("claim") else {
        panic!("fresh key")
    };
    let paid = Finish::Succeeded(json!({"paid": true}));
    let mut task = TaskRecord::new("user-42", "task-31");
    task.writer = "w1".into();
    assert_eq!(save(h, &task).await.expect("first save"), 1);

    // The task as another worker left it (revision 1), but this write read revision 0.
    task.writer = "w2".into();
    let stale = Settlement {
        intent: Some((&lease, &paid)),
        task: Some(&task),
        decision: Some(&decision(31, "task-31")),
    };
    assert_eq!(
        h.ledger.settle_at_once(stale).await.expect("answer"),
        SettledAtOnce::NotApplied
    );
    assert_eq!(
        where_it_stands(h, &r.key).await,
        (State::Dispatched, 1, 0),
        "a stale task write finishes nothing"
    );

    // A lease of another owner: the finish does not hold.
    let mut lost = lease.clone();
    lost.owner = "someone-else".into();
    task.revision = 1;
    let refused = Settlement {
        intent: Some((&lost, &paid)),
        task: Some(&task),
        decision: Some(&decision(32, "task-31")),
    };
    assert_eq!(
        h.ledger.settle_at_once(refused).await.expect("answer"),
        SettledAtOnce::NotApplied
    );
    assert_eq!(
        where_it_stands(h, &r.key).await,
        (State::Dispatched, 1, 0),
        "a lost lease writes no task and no record"
    );

    let holds = Settlement {
        intent: Some((&lease, &paid)),
        task: Some(&task),
        decision: Some(&decision(33, "task-31")),
    };
    let settled = h.ledger.settle_at_once(holds).await.expect("answer");
    if h.kind != Kind::Memory {
        assert_eq!(settled, SettledAtOnce::Landed(Some(2)));
        assert_eq!(
            where_it_stands(h, &r.key).await,
            (State::Succeeded, 2, 1),
            "everything landed"
        );
        let stored = h.ledger.get("user-42", &r.key).await.expect("get").expect("stored");
        assert_eq!(stored.outcome.map(|o| o.value), Some(json!({"paid": true})));
    } else {
        assert_eq!(settled, SettledAtOnce::NotApplied, "no one-statement commit here");
        assert_eq!(where_it_stands(h, &r.key).await, (State::Dispatched, 1, 0));
    }
}

suite!(
    all: [
        t01_task_state_round_trips_under_compare_and_set,
        t02_a_transaction_commits_everything_or_nothing,
        t03_windows_are_per_user,
        t04_windows_roll_and_settle_on_the_store_clock,
        t05_concurrent_reservers_never_overdraw,
        t06_failed_tasks_are_listed_until_reopened,
        t07_resolving_an_intent_reopens_the_task_that_waited_for_it,
        t08_writes_resent_after_a_lost_answer_find_their_own_result,
        t09_a_batch_of_decisions_lands_in_order_once_per_id,
        t10_a_claim_can_commit_its_dispatch_in_the_same_write,
        t11_an_intent_finishes_inside_the_decision_transaction,
        t12_a_settlement_at_once_lands_whole_or_not_at_all,
    ],
    sql_only: []
);
