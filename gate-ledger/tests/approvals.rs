//! The approval store's conformance suite, against memory, SQLite and
//! PostgreSQL (when `GATE_POSTGRES_URL` is set): a request is stored with a
//! transaction, a decision is a compare-and-set that exactly one decider
//! wins, a decided or expired request refuses every later decision, and
//! expiry is read as of the store's clock.

#[macro_use]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Harness, Kind};
use toolgate_ledger::{
    ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, LedgerError, Timestamp, Verdict, new_approval_id,
};

const DAY: Duration = Duration::from_secs(24 * 3600);

fn request(task: &str, at: Timestamp) -> ApprovalRecord {
    let arguments = r#"{"amount_cents":4200,"customer_id":"cus_1"}"#.to_owned();
    ApprovalRecord {
        id: new_approval_id(),
        user: "u1".into(),
        task_id: task.into(),
        call_id: "call_1".into(),
        tool: "charge_card".into(),
        arguments_sha256: toolgate_ledger::fingerprint(&serde_json::from_str(&arguments).expect("json")),
        arguments,
        intent_key: format!("gate:{task}:pay-inv-42:charge_card"),
        reason: "charge_card requires a person's approval".into(),
        requested_at: at,
        expires_at: at.saturating_add(DAY),
        status: ApprovalStatus::Pending,
        decided_by: None,
        decided_at: None,
        denial_reason: None,
        note: None,
    }
}

async fn store(h: &Harness, r: &ApprovalRecord) {
    let mut tx = h.ledger.begin().await.expect("begin");
    tx.insert_approval(r).await.expect("insert");
    tx.commit().await.expect("commit");
}

fn approve(id: &str, by: &str) -> ApprovalDecision {
    ApprovalDecision {
        id: id.into(),
        by: by.into(),
        verdict: Verdict::Approve,
        note: Some("checked with the customer".into()),
    }
}

fn deny(id: &str, reason: &str) -> ApprovalDecision {
    ApprovalDecision {
        id: id.into(),
        by: "ops@acme".into(),
        verdict: Verdict::Deny { reason: reason.into() },
        note: None,
    }
}

fn err<T: std::fmt::Debug>(r: Result<T, LedgerError>) -> LedgerError {
    r.expect_err("expected an error")
}

// A request stored in a transaction reads back whole, pending; one rolled
// back is not stored.
async fn a01_request_is_stored_with_its_transaction(h: &Harness) {
    let r = request("t1", h.now());
    store(h, &r).await;
    assert_eq!(h.ledger.load_approval(&r.id).await.expect("load"), Some(r.clone()));

    let dropped = request("t2", h.now());
    {
        let mut tx = h.ledger.begin().await.expect("begin");
        tx.insert_approval(&dropped).await.expect("insert");
        // Dropped without commit: rolled back.
    }
    assert_eq!(h.ledger.load_approval(&dropped.id).await.expect("load"), None);
    assert_eq!(h.ledger.load_approval("apr-none").await.expect("load"), None);
}

// Approving records who, when and the note; approving again, or denying
// after, is refused with a text naming who decided.
async fn a02_decision_is_once(h: &Harness) {
    let r = request("t1", h.now());
    store(h, &r).await;
    h.clock.advance(Duration::from_secs(60));
    let approved = h
        .ledger
        .decide_approval(&approve(&r.id, "ops@acme"))
        .await
        .expect("approve");
    assert_eq!(approved.status, ApprovalStatus::Approved);
    assert_eq!(approved.decided_by.as_deref(), Some("ops@acme"));
    assert_eq!(approved.decided_at, Some(h.now()));
    assert_eq!(approved.note.as_deref(), Some("checked with the customer"));
    assert_eq!(h.ledger.load_approval(&r.id).await.expect("load"), Some(approved));

    let again = err(h.ledger.decide_approval(&approve(&r.id, "someone-else")).await);
    assert!(again.is_invalid_transition(), "{again}");
    assert!(again.to_string().contains("already approved by ops@acme"), "{again}");
    let denied = err(h.ledger.decide_approval(&deny(&r.id, "no")).await);
    assert!(denied.is_invalid_transition(), "{denied}");

    let missing = err(h.ledger.decide_approval(&approve("apr-none", "ops")).await);
    assert!(missing.is_not_found(), "{missing}");
}

// A denial keeps its reason; a decision needs a name and a denial a reason.
async fn a03_denial_keeps_its_reason(h: &Harness) {
    let r = request("t1", h.now());
    store(h, &r).await;
    let empty = err(h.ledger.decide_approval(&deny(&r.id, "  ")).await);
    assert!(empty.is_invalid_input(), "{empty}");
    let nameless = err(h.ledger.decide_approval(&approve(&r.id, "")).await);
    assert!(nameless.is_invalid_input(), "{nameless}");
    let denied = h
        .ledger
        .decide_approval(&deny(&r.id, "the customer disputes this invoice"))
        .await
        .expect("deny");
    assert_eq!(denied.status, ApprovalStatus::Denied);
    assert_eq!(
        denied.denial_reason.as_deref(),
        Some("the customer disputes this invoice")
    );
    let late = err(h.ledger.decide_approval(&approve(&r.id, "ops")).await);
    assert!(late.to_string().contains("already denied"), "{late}");
}

// Past its expiry a pending request reads as expired and refuses a decision.
async fn a04_expiry_is_read_as_of_now(h: &Harness) {
    let r = request("t1", h.now());
    store(h, &r).await;
    h.clock.advance(DAY - Duration::from_millis(1));
    let pending = ApprovalQuery {
        status: Some(ApprovalStatus::Pending),
        ..ApprovalQuery::default()
    };
    assert_eq!(h.ledger.list_approvals(&pending).await.expect("list").len(), 1);
    h.clock.advance(Duration::from_millis(1));
    let loaded = h.ledger.load_approval(&r.id).await.expect("load").expect("stored");
    assert_eq!(loaded.status, ApprovalStatus::Expired);
    assert!(h.ledger.list_approvals(&pending).await.expect("list").is_empty());
    let expired = ApprovalQuery {
        status: Some(ApprovalStatus::Expired),
        ..ApprovalQuery::default()
    };
    assert_eq!(h.ledger.list_approvals(&expired).await.expect("list").len(), 1);
    let late = err(h.ledger.decide_approval(&approve(&r.id, "ops")).await);
    assert!(
        late.is_invalid_transition() && late.to_string().contains("expired"),
        "{late}"
    );
}

// Lists filter by status, user and task, oldest first, with a limit.
async fn a05_list_filters(h: &Harness) {
    let first = request("t1", h.now());
    store(h, &first).await;
    h.clock.advance(Duration::from_secs(1));
    let second = request("t2", h.now());
    store(h, &second).await;
    h.clock.advance(Duration::from_secs(1));
    let mut other = request("t3", h.now());
    other.user = "u2".into();
    store(h, &other).await;
    h.ledger
        .decide_approval(&approve(&second.id, "ops"))
        .await
        .expect("approve");

    let ids = |v: Vec<ApprovalRecord>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let all = h.ledger.list_approvals(&ApprovalQuery::default()).await.expect("list");
    assert_eq!(ids(all), [first.id.clone(), second.id.clone(), other.id.clone()]);
    let q = |status, user: Option<&str>, task: Option<&str>, limit| ApprovalQuery {
        status,
        user: user.map(str::to_owned),
        task_id: task.map(str::to_owned),
        limit,
    };
    let pending = h
        .ledger
        .list_approvals(&q(Some(ApprovalStatus::Pending), None, None, None))
        .await;
    assert_eq!(ids(pending.expect("list")), [first.id.as_str(), other.id.as_str()]);
    let approved = h
        .ledger
        .list_approvals(&q(Some(ApprovalStatus::Approved), None, None, None))
        .await;
    assert_eq!(ids(approved.expect("list")), [second.id.as_str()]);
    let of_u2 = h.ledger.list_approvals(&q(None, Some("u2"), None, None)).await;
    assert_eq!(ids(of_u2.expect("list")), [other.id.as_str()]);
    let of_t1 = h.ledger.list_approvals(&q(None, Some("u1"), Some("t1"), None)).await;
    assert_eq!(ids(of_t1.expect("list")), [first.id.as_str()]);
    let one = h.ledger.list_approvals(&q(None, None, None, Some(1))).await;
    assert_eq!(ids(one.expect("list")), [first.id]);
}

// Eight deciders at once: exactly one decision lands, the others are told.
async fn a06_concurrent_deciders_one_wins(h: &Harness) {
    let r = request("t1", h.now());
    store(h, &r).await;
    let ledger = Arc::clone(&h.ledger);
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let ledger = Arc::clone(&ledger);
            let id = r.id.clone();
            tokio::spawn(async move {
                let decision = if i % 2 == 0 {
                    approve(&id, &format!("op{i}"))
                } else {
                    deny(&id, &format!("op{i} says no"))
                };
                ledger.decide_approval(&decision).await
            })
        })
        .collect();
    let mut won = Vec::new();
    for t in tasks {
        match t.await.expect("join") {
            Ok(decided) => won.push(decided),
            Err(e) => assert!(e.is_invalid_transition(), "{e}"),
        }
    }
    assert_eq!(won.len(), 1, "{won:?}");
    let stored = h.ledger.load_approval(&r.id).await.expect("load").expect("stored");
    assert_eq!(stored, won.remove(0));
}

suite!(
    all: [
        a01_request_is_stored_with_its_transaction,
        a02_decision_is_once,
        a03_denial_keeps_its_reason,
        a04_expiry_is_read_as_of_now,
        a05_list_filters,
        a06_concurrent_deciders_one_wins,
    ],
    sql_only: []
);
