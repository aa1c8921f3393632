//! The ledger conformance suite: every case runs against memory, SQLite and
//! PostgreSQL (when `GATE_POSTGRES_URL` is set), so the three stores are held
//! to one behaviour (a store whose cargo feature is off is left out). A
//! case's number (`l01_…` is L1) names the property it checks, which the
//! comment above the case states.

#[macro_use]
mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Harness, Kind, charge, request};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use toolgate_ledger::{
    Claim, ClaimRequest, DecisionQuery, DecisionRecord, Finish, Lease, Ledger, LedgerError, Resolution, ResolveRequest,
    State, Timestamp,
};

const LEASE: Duration = Duration::from_secs(30);

fn acquired(c: Claim) -> Lease {
    match c {
        Claim::Acquired(l) => l,
        other => panic!("expected Acquired, got {other:?}"),
    }
}

async fn claim_ok(l: &dyn Ledger, r: &ClaimRequest) -> Lease {
    acquired(l.claim(r).await.expect("claim"))
}

/// Claim, dispatch and succeed with `value`.
async fn run_to_success(l: &dyn Ledger, r: &ClaimRequest, value: serde_json::Value) -> Lease {
    let lease = claim_ok(l, r).await;
    let lease = l.dispatch(&lease).await.expect("dispatch");
    l.complete(&lease, value).await.expect("complete");
    lease
}

async fn record(h: &Harness, r: &ClaimRequest) -> toolgate_ledger::LedgerRecord {
    h.ledger
        .get(&r.user, &r.key)
        .await
        .expect("get")
        .expect("record exists")
}

fn err<T: std::fmt::Debug>(r: Result<T, LedgerError>) -> LedgerError {
    match r {
        Err(e) => e,
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

// L1: new key → runs once, Succeeded, result stored, dispatched_at committed
// before completion, retention set.
async fn l01_new_key_runs_once(h: &Harness) {
    let r = charge("pay INV-1");
    let lease = claim_ok(&*h.ledger, &r).await;
    assert_eq!(lease.attempt, 1);
    let rec = record(h, &r).await;
    assert_eq!(rec.state, State::Claimed);
    assert_eq!(rec.dispatched_at, None);
    h.clock.advance(Duration::from_millis(5));
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    let rec = record(h, &r).await;
    assert_eq!(rec.state, State::Dispatched);
    assert_eq!(rec.dispatched_at, Some(h.now()));
    h.clock.advance(Duration::from_millis(5));
    let done = h
        .ledger
        .complete(&lease, json!({"charge": "ch_1"}))
        .await
        .expect("complete");
    assert_eq!(done.state, State::Succeeded);
    let rec = record(h, &r).await;
    assert_eq!(rec, done);
    assert_eq!(rec.finished_at, Some(h.now()));
    assert_eq!(rec.expires_at, Some(h.now().saturating_add(h.ledger.retention())));
    assert_eq!(
        rec.outcome.as_ref().map(|o| o.value.clone()),
        Some(json!({"charge": "ch_1"}))
    );
    assert_eq!(rec.task_id, "task-7");
    assert_eq!(rec.tool, "charge_card");
}

// L2: same key + fingerprint after success → stored result, byte-identical;
// the tool is not run again.
async fn l02_replay_after_success(h: &Harness) {
    let r = charge("pay INV-2");
    let value = json!({"z": 1, "a": [1.5, "é\u{1F600}"], "m": {"y": null, "b": true}});
    run_to_success(&*h.ledger, &r, value.clone()).await;
    for _ in 0..3 {
        match h.ledger.claim(&r).await.expect("claim") {
            Claim::Replay { outcome, state } => {
                assert_eq!(state, State::Succeeded);
                assert!(!outcome.is_error);
                assert_eq!(
                    serde_json::to_string(&outcome.value).unwrap_or_default(),
                    serde_json::to_string(&value).unwrap_or_default()
                );
            }
            other => panic!("expected a replay, got {other:?}"),
        }
    }
    assert_eq!(record(h, &r).await.attempt, 1);
}

// L3: a stored FailedPermanent is replayed as an error, not re-executed.
async fn l03_replay_permanent_failure(h: &Harness) {
    let r = charge("pay INV-3");
    let lease = claim_ok(&*h.ledger, &r).await;
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    let rec = h
        .ledger
        .fail(
            &lease,
            json!({"declined": "insufficient_funds"}),
            "card declined (402)".into(),
        )
        .await
        .expect("fail");
    assert_eq!(rec.state, State::FailedPermanent);
    match h.ledger.claim(&r).await.expect("claim") {
        Claim::Replay { outcome, state } => {
            assert_eq!(state, State::FailedPermanent);
            assert!(outcome.is_error);
            assert_eq!(outcome.value, json!({"declined": "insufficient_funds"}));
        }
        other => panic!("expected a replay, got {other:?}"),
    }
    let rec = record(h, &r).await;
    assert_eq!(rec.attempt, 1);
    assert_eq!(rec.error.as_deref(), Some("card declined (402)"));
}

// L4: same key, different params → KeyReused; record unchanged.
async fn l04_key_reused_different_params(h: &Harness) {
    let r = charge("pay INV-4");
    run_to_success(&*h.ledger, &r, json!("ok")).await;
    let before = record(h, &r).await;
    let mut other = r.clone();
    other.fingerprint = toolgate_ledger::fingerprint(&json!({"customer_id": "cus_1", "amount_cents": 4300}));
    let e = err(h.ledger.claim(&other).await);
    assert!(e.is_key_reused(), "{e}");
    assert_eq!(e.code(), "E_IDEMPOTENCY_KEY_REUSED");
    assert_eq!(record(h, &r).await, before);
    // Also while in flight: the mismatch is checked before anything else.
    let r2 = charge("pay INV-4b");
    let _lease = claim_ok(&*h.ledger, &r2).await;
    let mut other2 = r2.clone();
    other2.fingerprint = other.fingerprint.clone();
    assert!(err(h.ledger.claim(&other2).await).is_key_reused());
}

// L5: same key and params, different tool → KeyReused.
async fn l05_key_reused_different_tool(h: &Harness) {
    let r = charge("pay INV-5");
    run_to_success(&*h.ledger, &r, json!("ok")).await;
    let mut other = r.clone();
    other.tool = "refund_card".into();
    assert!(err(h.ledger.claim(&other).await).is_key_reused());
}

// L6 + L7: canonical fingerprints reach the store: a reordered, reformatted
// request with 1.0 for 1 replays; a nested change is KeyReused.
async fn l06_l07_canonical_fingerprint(h: &Harness) {
    let a: serde_json::Value =
        serde_json::from_str(r#"{"amount": 1, "meta": {"b": [1, 2], "a": "x"}}"#).unwrap_or_default();
    let b: serde_json::Value =
        serde_json::from_str("{ \"meta\" : { \"a\":\"x\", \"b\":[1.0, 2e0] },\n \"amount\":1.0 }").unwrap_or_default();
    let c: serde_json::Value =
        serde_json::from_str(r#"{"amount": 1, "meta": {"b": [1, 3], "a": "x"}}"#).unwrap_or_default();
    let ra = request("u1", "t1", "nested", "transfer", &a);
    run_to_success(&*h.ledger, &ra, json!({"done": true})).await;
    let rb = request("u1", "t1", "nested", "transfer", &b);
    assert_eq!(ra.fingerprint, rb.fingerprint);
    assert!(matches!(h.ledger.claim(&rb).await, Ok(Claim::Replay { .. })));
    let rc = request("u1", "t1", "nested", "transfer", &c);
    assert!(err(h.ledger.claim(&rc).await).is_key_reused());
}

// L8 (in-process half; the multi-process half is tests/concurrency.rs):
// 32 concurrent claims on one key → exactly one execution.
async fn l08_concurrent_claims_one_winner(h: &Harness) {
    let r = Arc::new(charge("pay INV-8"));
    let executions = Arc::new(Mutex::new(0u32));
    let mut joins = Vec::new();
    for _ in 0..32 {
        let (l, r, ex) = (h.ledger.clone(), r.clone(), executions.clone());
        joins.push(tokio::spawn(async move {
            match l.claim(&r).await {
                Ok(Claim::Acquired(lease)) => {
                    let lease = l.dispatch(&lease).await.expect("dispatch");
                    *ex.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                    l.complete(&lease, json!("charged")).await.expect("complete");
                    "acquired"
                }
                Ok(Claim::Replay { .. }) => "replay",
                Err(e) if e.is_in_progress() => "in_progress",
                other => panic!("unexpected {other:?}"),
            }
        }));
    }
    let mut counts: HashMap<&str, u32> = HashMap::new();
    for j in joins {
        *counts.entry(j.await.expect("join")).or_default() += 1;
    }
    assert_eq!(counts.get("acquired"), Some(&1), "{counts:?}");
    assert_eq!(*executions.lock().unwrap_or_else(|e| e.into_inner()), 1);
    assert_eq!(counts.values().sum::<u32>(), 32);
}

// L9: concurrent reclaim of an expired claim → exactly one winner, attempt 2.
async fn l09_concurrent_reclaim_one_winner(h: &Harness) {
    let r = Arc::new(charge("pay INV-9"));
    let _orphan = claim_ok(&*h.ledger, &r).await;
    h.clock.advance(LEASE);
    let mut joins = Vec::new();
    for _ in 0..16 {
        let (l, r) = (h.ledger.clone(), r.clone());
        joins.push(tokio::spawn(async move { l.claim(&r).await }));
    }
    let mut winners = Vec::new();
    for j in joins {
        match j.await.expect("join") {
            Ok(Claim::Acquired(lease)) => winners.push(lease),
            Err(e) if e.is_in_progress() => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1);
    assert_eq!(winners[0].attempt, 2);
}

// L10: retry while Dispatched with a live lease → InProgress, nothing changes.
async fn l10_in_progress_while_dispatched(h: &Harness) {
    let r = charge("pay INV-10");
    let lease = claim_ok(&*h.ledger, &r).await;
    assert!(err(h.ledger.claim(&r).await).is_in_progress(), "claimed");
    let _lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    let before = record(h, &r).await;
    h.clock.advance(LEASE - Duration::from_millis(1));
    let e = err(h.ledger.claim(&r).await);
    assert!(e.is_in_progress());
    assert_eq!(e.code(), "E_IDEMPOTENCY_IN_PROGRESS");
    assert_eq!(record(h, &r).await, before);
}

// L11: idempotent tool, expired lease while Dispatched → reclaimed, attempt 2.
async fn l11_idempotent_reclaim(h: &Harness) {
    let mut r = charge("lookup 11");
    r.idempotent = true;
    let lease = claim_ok(&*h.ledger, &r).await;
    let old = h.ledger.dispatch(&lease).await.expect("dispatch");
    h.clock.advance(LEASE);
    let new = claim_ok(&*h.ledger, &r).await;
    assert_eq!(new.attempt, 2);
    assert!(err(h.ledger.complete(&old, json!("late")).await).is_stale());
    let new = h.ledger.dispatch(&new).await.expect("dispatch 2");
    h.ledger.complete(&new, json!("fresh")).await.expect("complete 2");
    let rec = record(h, &r).await;
    assert_eq!(rec.state, State::Succeeded);
    assert_eq!(rec.outcome.map(|o| o.value), Some(json!("fresh")));
}

// L12: non-idempotent, expired lease while Dispatched → OutcomeUnknown on the
// takeover attempt; never re-executed; listed for reconciliation.
async fn l12_non_idempotent_expired_dispatch_is_unknown(h: &Harness) {
    let r = charge("pay INV-12");
    let lease = claim_ok(&*h.ledger, &r).await;
    h.ledger.dispatch(&lease).await.expect("dispatch");
    h.clock.advance(LEASE);
    for _ in 0..3 {
        match h.ledger.claim(&r).await.expect("claim") {
            Claim::OutcomeUnknown(rec) => {
                assert_eq!(rec.state, State::OutcomeUnknown);
                assert_eq!(rec.attempt, 1);
                assert_eq!(rec.expires_at, None);
            }
            other => panic!("expected OutcomeUnknown, got {other:?}"),
        }
    }
    let listed = h.ledger.list_unresolved(100).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].key, r.key);
}

// L13: a timeout after dispatch → OutcomeUnknown; any number of later claims
// never run the tool.
async fn l13_timeout_is_final(h: &Harness) {
    let r = charge("pay INV-13");
    let lease = claim_ok(&*h.ledger, &r).await;
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    let rec = h
        .ledger
        .mark_unknown(&lease, "timed out after 30 s".into())
        .await
        .expect("mark unknown");
    assert_eq!(rec.state, State::OutcomeUnknown);
    for i in 0..10 {
        h.clock.advance(Duration::from_secs(3600 * (i + 1)));
        assert!(matches!(
            h.ledger.claim(&r).await.expect("claim"),
            Claim::OutcomeUnknown(_)
        ));
    }
    assert_eq!(record(h, &r).await.attempt, 1);
}

// L14: a failure with provably no effect → FailedRetryable → a new claim runs
// it again with attempt + 1 (allowed from Claimed too: nothing was sent).
async fn l14_retryable_failure_reruns(h: &Harness) {
    let r = charge("pay INV-14");
    let lease = claim_ok(&*h.ledger, &r).await;
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    let rec = h
        .ledger
        .finish(
            &lease,
            Finish::FailedRetryable {
                error: "connection refused".into(),
            },
        )
        .await
        .expect("fail retryable");
    assert_eq!(rec.state, State::FailedRetryable);
    let lease2 = claim_ok(&*h.ledger, &r).await;
    assert_eq!(lease2.attempt, 2);
    let rec = h
        .ledger
        .finish(
            &lease2,
            Finish::FailedRetryable {
                error: "refused before send".into(),
            },
        )
        .await
        .expect("fail retryable from claimed");
    assert_eq!(rec.state, State::FailedRetryable);
    assert_eq!(claim_ok(&*h.ledger, &r).await.attempt, 3);
}

// Rule 8: a corrected retry is a new attempt of the same intent. After a
// failure with no effect (FailedRetryable, or reconciled as never executed)
// the same key with corrected arguments runs, and the record keeps the new
// fingerprint; the same correction of a finished, unknown or in-flight
// intent is still KeyReused, and so is another tool.
async fn l14b_corrected_retry_is_a_new_attempt(h: &Harness) {
    let r = charge("pay INV-14b");
    let lease = claim_ok(&*h.ledger, &r).await;
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    h.ledger
        .finish(
            &lease,
            Finish::FailedRetryable {
                error: "403 without body".into(),
            },
        )
        .await
        .expect("fail retryable");
    let mut corrected = r.clone();
    corrected.fingerprint = toolgate_ledger::fingerprint(&json!({"customer_id": "cus_2", "amount_cents": 4200}));
    let mut other_tool = corrected.clone();
    other_tool.tool = "refund_card".into();
    assert!(err(h.ledger.claim(&other_tool).await).is_key_reused());
    let lease2 = claim_ok(&*h.ledger, &corrected).await;
    assert_eq!(lease2.attempt, 2);
    assert_eq!(record(h, &r).await.fingerprint, corrected.fingerprint);
    // In flight now: a third set of arguments is refused.
    let mut third = r.clone();
    third.fingerprint = toolgate_ledger::fingerprint(&json!({"customer_id": "cus_3", "amount_cents": 4200}));
    assert!(err(h.ledger.claim(&third).await).is_key_reused());
    let lease2 = h.ledger.dispatch(&lease2).await.expect("dispatch");
    h.ledger.complete(&lease2, json!("charged")).await.expect("complete");
    // Finished: the corrected call replays; the original arguments are refused.
    assert!(matches!(h.ledger.claim(&corrected).await, Ok(Claim::Replay { .. })));
    assert!(err(h.ledger.claim(&r).await).is_key_reused());
}

// L15: crash between claim and dispatch → the call may run again, even for a
// non-idempotent tool (by takeover, or after the sweep released it).
async fn l15_crash_before_dispatch_reruns(h: &Harness) {
    let r = charge("pay INV-15");
    let _crashed = claim_ok(&*h.ledger, &r).await;
    h.clock.advance(LEASE);
    let lease = claim_ok(&*h.ledger, &r).await;
    assert_eq!(lease.attempt, 2);

    let r2 = charge("pay INV-15b");
    let _crashed = claim_ok(&*h.ledger, &r2).await;
    h.clock.advance(LEASE);
    let swept = h.ledger.sweep_expired_leases(h.now(), 100).await.expect("sweep");
    assert!(swept.released.iter().any(|x| x.key == r2.key));
    assert!(swept.marked_unknown.is_empty());
    assert_eq!(record(h, &r2).await.state, State::FailedRetryable);
    assert_eq!(claim_ok(&*h.ledger, &r2).await.attempt, 2);
}

// L16: crash after dispatch → the sweep makes the non-idempotent call
// OutcomeUnknown; the idempotent one is released and reclaimed.
async fn l16_crash_after_dispatch(h: &Harness) {
    let r = charge("pay INV-16");
    let mut ri = charge("lookup 16");
    ri.idempotent = true;
    for q in [&r, &ri] {
        let lease = claim_ok(&*h.ledger, q).await;
        h.ledger.dispatch(&lease).await.expect("dispatch");
    }
    h.clock.advance(LEASE);
    let swept = h.ledger.sweep_expired_leases(h.now(), 100).await.expect("sweep");
    assert_eq!(swept.marked_unknown.len(), 1);
    assert_eq!(swept.marked_unknown[0].key, r.key);
    assert_eq!(swept.released.len(), 1);
    assert_eq!(record(h, &r).await.state, State::OutcomeUnknown);
    assert!(matches!(h.ledger.claim(&r).await, Ok(Claim::OutcomeUnknown(_))));
    assert_eq!(claim_ok(&*h.ledger, &ri).await.attempt, 2);
}

// L17: crash after the result was written → the replay returns it.
async fn l17_crash_after_result(h: &Harness) {
    let r = charge("pay INV-17");
    run_to_success(&*h.ledger, &r, json!({"id": "ch_17"})).await;
    h.clock.advance(LEASE * 10);
    h.ledger.sweep_expired_leases(h.now(), 100).await.expect("sweep");
    match h.ledger.claim(&r).await.expect("claim") {
        Claim::Replay { outcome, .. } => assert_eq!(outcome.value, json!({"id": "ch_17"})),
        other => panic!("expected a replay, got {other:?}"),
    }
}

// L18: fencing: a stale worker's writes are refused after a takeover; the
// newer attempt's outcome stands.
async fn l18_stale_worker_fenced(h: &Harness) {
    let r = charge("pay INV-18");
    let a = claim_ok(&*h.ledger, &r).await;
    h.clock.advance(LEASE);
    // Even before anyone takes over, an expired claim may not dispatch.
    let e = err(h.ledger.dispatch(&a).await);
    assert!(e.is_stale(), "{e}");
    let b = claim_ok(&*h.ledger, &r).await;
    assert_eq!(b.attempt, 2);
    assert!(err(h.ledger.dispatch(&a).await).is_stale());
    assert!(err(h.ledger.renew(&a).await).is_stale());
    assert!(err(h.ledger.release(&a).await).is_stale());
    let b = h.ledger.dispatch(&b).await.expect("dispatch b");
    let before = record(h, &r).await;
    assert!(err(h.ledger.complete(&a, json!("a")).await).is_stale());
    assert!(err(h.ledger.mark_unknown(&a, "a".into()).await).is_stale());
    assert_eq!(record(h, &r).await, before);
    h.ledger.complete(&b, json!("b")).await.expect("complete b");
    assert!(err(h.ledger.complete(&b, json!("again")).await).is_stale());
    let rec = record(h, &r).await;
    assert_eq!(rec.outcome.map(|o| o.value), Some(json!("b")));
    // A forged owner with the right attempt is refused too.
    let r2 = charge("pay INV-18b");
    let real = claim_ok(&*h.ledger, &r2).await;
    let forged = Lease {
        owner: "someone-else".into(),
        ..real
    };
    assert!(err(h.ledger.dispatch(&forged).await).is_stale());
}

// L19: errors never delete records; a dispatched record cannot be released;
// completing a call that was never dispatched is refused.
async fn l19_records_not_deleted_on_error(h: &Harness) {
    let r = charge("pay INV-19");
    let lease = claim_ok(&*h.ledger, &r).await;
    let e = err(h.ledger.complete(&lease, json!("x")).await);
    assert!(e.is_invalid_transition(), "{e}");
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    assert!(err(h.ledger.release(&lease).await).is_invalid_transition());
    h.ledger
        .fail(&lease, json!({"error": "panicked"}), "tool panicked".into())
        .await
        .expect("fail");
    let rec = record(h, &r).await;
    assert_eq!(rec.state, State::FailedPermanent);
    assert_eq!(rec.error.as_deref(), Some("tool panicked"));
}

/// Renames the records table away (or back) to make the store fail for real.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
async fn break_store(h: &Harness, broken: bool) {
    let raw = h.store.raw().expect("SQL store");
    let sql = if broken {
        "ALTER TABLE gate_intents RENAME TO gate_intents_broken"
    } else {
        "ALTER TABLE gate_intents_broken RENAME TO gate_intents"
    };
    raw.execute(sql).await.expect("rename table");
}

// L20: store error on claim → unavailable (fail closed: the caller gets no
// lease, so the tool cannot run).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
async fn l20_store_error_on_claim(h: &Harness) {
    let r = charge("pay INV-20");
    break_store(h, true).await;
    let e = err(h.ledger.claim(&r).await);
    assert!(e.is_unavailable(), "{e}");
    assert_eq!(e.code(), "E_LEDGER_UNAVAILABLE");
    break_store(h, false).await;
    assert_eq!(claim_ok(&*h.ledger, &r).await.attempt, 1);
}

// L21: store error while saving success → surfaced; the record stays
// Dispatched, then the sweep makes it OutcomeUnknown.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
async fn l21_store_error_on_complete(h: &Harness) {
    let r = charge("pay INV-21");
    let lease = claim_ok(&*h.ledger, &r).await;
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    break_store(h, true).await;
    let e = err(h.ledger.complete(&lease, json!("ok")).await);
    assert!(e.is_unavailable(), "{e}");
    break_store(h, false).await;
    assert_eq!(record(h, &r).await.state, State::Dispatched);
    h.clock.advance(LEASE);
    let swept = h.ledger.sweep_expired_leases(h.now(), 10).await.expect("sweep");
    assert_eq!(swept.marked_unknown.len(), 1);
    assert_eq!(record(h, &r).await.state, State::OutcomeUnknown);
}

// L22 + L23: retention, with boundaries at ±1 ms: a finished record replays
// until `expires_at - 1 ms` and is a new execution at `expires_at`; purge
// removes finished records only; OutcomeUnknown never expires.
async fn l22_l23_retention_and_boundaries(h: &Harness) {
    let r = charge("pay INV-22");
    run_to_success(&*h.ledger, &r, json!("first")).await;
    let expires = record(h, &r).await.expires_at.expect("expiry set");
    let unknown = charge("pay INV-22u");
    let l = claim_ok(&*h.ledger, &unknown).await;
    let l = h.ledger.dispatch(&l).await.expect("dispatch");
    h.ledger.mark_unknown(&l, "timeout".into()).await.expect("unknown");

    h.clock.set(expires.saturating_sub(Duration::from_millis(1)));
    assert!(matches!(h.ledger.claim(&r).await, Ok(Claim::Replay { .. })));
    assert_eq!(h.ledger.purge_expired(h.now()).await.expect("purge"), 0);
    h.clock.set(expires);
    let lease = claim_ok(&*h.ledger, &r).await;
    assert_eq!(lease.attempt, 2, "a new execution after retention");
    assert_eq!(record(h, &r).await.state, State::Claimed);

    // Purge: another finished record, purged exactly at its expiry.
    let p = charge("pay INV-22p");
    run_to_success(&*h.ledger, &p, json!("p")).await;
    let pexp = record(h, &p).await.expires_at.expect("expiry");
    assert_eq!(
        h.ledger
            .purge_expired(pexp.saturating_sub(Duration::from_millis(1)))
            .await
            .expect("purge"),
        0
    );
    assert_eq!(h.ledger.purge_expired(pexp).await.expect("purge"), 1);
    assert!(h.ledger.get(&p.user, &p.key).await.expect("get").is_none());
    let far = Timestamp::from_millis(i64::MAX / 2);
    h.ledger.purge_expired(far).await.expect("purge far");
    assert_eq!(record(h, &unknown).await.state, State::OutcomeUnknown);
    assert_eq!(record(h, &r).await.state, State::Claimed, "in-flight is never purged");

    // Lease boundary: live at expiry - 1 ms, expired exactly at expiry.
    let b = charge("pay INV-23");
    let lease = claim_ok(&*h.ledger, &b).await;
    h.clock.set(lease.expires_at.saturating_sub(Duration::from_millis(1)));
    assert!(err(h.ledger.claim(&b).await).is_in_progress());
    assert!(
        h.ledger
            .sweep_expired_leases(h.now(), 10)
            .await
            .expect("sweep")
            .released
            .is_empty()
    );
    h.clock.set(lease.expires_at);
    assert!(err(h.ledger.dispatch(&lease).await).is_stale());
    assert_eq!(claim_ok(&*h.ledger, &b).await.attempt, 2);
}

// L24: the same key under two users → independent records.
async fn l24_tenants_independent(h: &Harness) {
    let args = json!({"amount": 5});
    let a = request("alice", "shared-task", "same", "charge_card", &args);
    let b = request("bob", "shared-task", "same", "charge_card", &args);
    assert_eq!(a.key, b.key);
    run_to_success(&*h.ledger, &a, json!("alice's")).await;
    let lb = claim_ok(&*h.ledger, &b).await;
    assert_eq!(lb.attempt, 1);
    assert_eq!(h.ledger.find(&a.key).await.expect("find").len(), 2);
}

// L25: empty, over-long and low-entropy keys are refused before any write.
async fn l25_invalid_keys(h: &Harness) {
    let base = charge("pay INV-25");
    for key in [
        String::new(),
        "k".repeat(256),
        "aaaaaaaaaaaaaaaaaaaaaaaa".into(),
        "0000000000000001".into(),
        "short".into(),
        "with space 0123456789abcdef".into(),
        "naïve-key-0123456789abcdef".into(),
    ] {
        let r = ClaimRequest {
            key: key.clone(),
            ..base.clone()
        };
        let e = err(h.ledger.claim(&r).await);
        assert!(e.is_invalid_key(), "{key:?}: {e}");
        assert_eq!(e.code(), "E_IDEMPOTENCY_KEY_INVALID");
    }
    let longest = ClaimRequest {
        key: format!("{}{}", "0123456789abcdef".repeat(15), "0123456789abcde"),
        ..base.clone()
    };
    assert_eq!(longest.key.len(), 255);
    assert_eq!(claim_ok(&*h.ledger, &longest).await.attempt, 1);
    let empty_user = ClaimRequest {
        user: String::new(),
        ..base.clone()
    };
    assert!(err(h.ledger.claim(&empty_user).await).is_invalid_input());
    let zero_lease = ClaimRequest {
        lease: Duration::ZERO,
        ..base
    };
    assert!(err(h.ledger.claim(&zero_lease).await).is_invalid_input());
}

// L26: a claim released before dispatch is not cached: the same key with
// corrected params then runs.
async fn l26_release_before_dispatch(h: &Harness) {
    let r = charge("pay INV-26");
    let lease = claim_ok(&*h.ledger, &r).await;
    h.ledger.release(&lease).await.expect("release");
    assert!(h.ledger.get(&r.user, &r.key).await.expect("get").is_none());
    let mut corrected = r.clone();
    corrected.fingerprint = toolgate_ledger::fingerprint(&json!({"customer_id": "cus_1", "amount_cents": 42}));
    let lease = claim_ok(&*h.ledger, &corrected).await;
    assert_eq!(lease.attempt, 1);
    // A later attempt goes back to FailedRetryable instead of disappearing.
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    h.ledger
        .finish(
            &lease,
            Finish::FailedRetryable {
                error: "refused".into(),
            },
        )
        .await
        .expect("retryable");
    let again = claim_ok(&*h.ledger, &corrected).await;
    h.ledger.release(&again).await.expect("release attempt 2");
    let rec = record(h, &corrected).await;
    assert_eq!((rec.state, rec.attempt), (State::FailedRetryable, 2));
}

// L28 (settings half; the crash loop is tests/crash.rs): SQLite runs in WAL
// with synchronous=FULL.
async fn l28_sqlite_pragmas(h: &Harness) {
    let pragmas = h.store.sqlite_pragmas().await.expect("pragmas");
    match h.kind {
        Kind::Sqlite => {
            let (mode, sync) = pragmas.expect("sqlite store reports pragmas");
            assert_eq!(mode.to_ascii_lowercase(), "wal");
            assert_eq!(sync, 2, "synchronous=FULL");
        }
        _ => assert!(pragmas.is_none()),
    }
}

// L30: reconciliation: resolve OutcomeUnknown → Succeeded(ext_ref); replayed;
// the same resolution again is a no-op; a different one conflicts;
// not-executed lets the call run again with a new attempt.
async fn l30_reconcile(h: &Harness) {
    let r = charge("pay INV-30");
    let l = claim_ok(&*h.ledger, &r).await;
    let l = h.ledger.dispatch(&l).await.expect("dispatch");
    h.ledger.mark_unknown(&l, "timeout".into()).await.expect("unknown");
    let resolve = ResolveRequest {
        key: r.key.clone(),
        user: None,
        resolution: Resolution::Succeeded,
        note: Some("found ch_30 in the Stripe dashboard".into()),
        value: Some(json!({"charge": "ch_30"})),
    };
    h.clock.advance(Duration::from_secs(60));
    let done = h.ledger.resolve(&resolve).await.expect("resolve");
    assert_eq!(done.state, State::Reconciled(Resolution::Succeeded));
    let rec = done.reconciliation.clone().expect("reconciliation stored");
    assert_eq!(rec.at, h.now());
    assert_eq!(rec.note.as_deref(), Some("found ch_30 in the Stripe dashboard"));
    assert!(h.ledger.list_unresolved(10).await.expect("list").is_empty());
    match h.ledger.claim(&r).await.expect("claim") {
        Claim::Replay { outcome, state } => {
            assert_eq!(state, State::Reconciled(Resolution::Succeeded));
            assert_eq!(outcome.value, json!({"charge": "ch_30"}));
            assert!(!outcome.is_error);
        }
        other => panic!("expected a replay, got {other:?}"),
    }
    h.clock.advance(Duration::from_secs(60));
    let again = h.ledger.resolve(&resolve).await.expect("same resolution is a no-op");
    assert_eq!(again, record(h, &r).await);
    assert_eq!(again.reconciliation.map(|x| x.at), Some(rec.at));
    let conflict = ResolveRequest {
        resolution: Resolution::FailedPermanent,
        ..resolve.clone()
    };
    let e = err(h.ledger.resolve(&conflict).await);
    assert!(e.is_reconcile_conflict(), "{e}");
    assert_eq!(e.code(), "E_RECONCILE_CONFLICT");

    // not-executed: the call may run again, under a new attempt.
    let n = charge("pay INV-30n");
    let l = claim_ok(&*h.ledger, &n).await;
    let l = h.ledger.dispatch(&l).await.expect("dispatch");
    h.ledger.mark_unknown(&l, "reset".into()).await.expect("unknown");
    let ne = ResolveRequest {
        key: n.key.clone(),
        user: Some(n.user.clone()),
        resolution: Resolution::NotExecuted,
        note: None,
        value: None,
    };
    assert_eq!(
        h.ledger.resolve(&ne).await.expect("resolve").state,
        State::Reconciled(Resolution::NotExecuted)
    );
    let l2 = claim_ok(&*h.ledger, &n).await;
    assert_eq!(l2.attempt, 2);
    assert!(h.ledger.resolve(&ne).await.is_ok(), "same resolution stays a no-op");
    let l2 = h.ledger.dispatch(&l2).await.expect("dispatch 2");
    h.ledger.complete(&l2, json!("charged")).await.expect("complete 2");
    assert!(matches!(h.ledger.claim(&n).await, Ok(Claim::Replay { .. })));

    // Failed resolution without a value replays a descriptive error.
    let f = charge("pay INV-30f");
    let l = claim_ok(&*h.ledger, &f).await;
    let l = h.ledger.dispatch(&l).await.expect("dispatch");
    h.ledger.mark_unknown(&l, "timeout".into()).await.expect("unknown");
    let fr = ResolveRequest {
        key: f.key.clone(),
        user: None,
        resolution: Resolution::FailedPermanent,
        note: Some("no charge found".into()),
        value: None,
    };
    h.ledger.resolve(&fr).await.expect("resolve failed");
    match h.ledger.claim(&f).await.expect("claim") {
        Claim::Replay { outcome, .. } => {
            assert!(outcome.is_error);
            assert_eq!(outcome.value["note"], json!("no charge found"));
        }
        other => panic!("expected a replay, got {other:?}"),
    }

    // Errors: unknown key, a record that needs no resolution, ambiguous users.
    let missing = ResolveRequest {
        key: "gk1m-0123456789abcdef-missing".into(),
        ..resolve.clone()
    };
    assert!(err(h.ledger.resolve(&missing).await).is_not_found());
    let busy = charge("pay INV-30b");
    let _l = claim_ok(&*h.ledger, &busy).await;
    let busy_resolve = ResolveRequest {
        key: busy.key.clone(),
        ..resolve.clone()
    };
    assert!(err(h.ledger.resolve(&busy_resolve).await).is_invalid_transition());
    let args = json!({"n": 1});
    for user in ["ann", "ben"] {
        let q = request(user, "t-amb", "amb", "charge_card", &args);
        let l = claim_ok(&*h.ledger, &q).await;
        let l = h.ledger.dispatch(&l).await.expect("dispatch");
        h.ledger.mark_unknown(&l, "timeout".into()).await.expect("unknown");
    }
    let amb_key = toolgate_ledger::minted_intent_key("t-amb", "amb");
    let amb = ResolveRequest {
        key: amb_key.clone(),
        user: None,
        ..resolve.clone()
    };
    assert!(err(h.ledger.resolve(&amb).await).is_ambiguous());
    let one = ResolveRequest {
        key: amb_key,
        user: Some("ann".into()),
        ..resolve
    };
    assert!(h.ledger.resolve(&one).await.is_ok());
    assert_eq!(h.ledger.list_unresolved(10).await.expect("list").len(), 1);
}

// L31: a randomised concurrent workload (claims, dispatches, completions,
// crashes, lease expiries, sweeps) recorded as a history and checked: at most
// one dispatch per non-idempotent key, no transition out of a finished state,
// replayed outcomes never change.
async fn l31_randomised_history(h: &Harness) {
    #[derive(Debug, Clone)]
    enum Ev {
        Dispatched(String, i64),
        Finished(String, i64, State),
        Replayed(String, String),
    }
    let history = Arc::new(Mutex::new(Vec::<Ev>::new()));
    let push = |h: &Arc<Mutex<Vec<Ev>>>, ev: Ev| h.lock().unwrap_or_else(|e| e.into_inner()).push(ev);
    let keys: Vec<ClaimRequest> = (0..6)
        .map(|i| {
            let mut r = charge(&format!("random {i}"));
            r.idempotent = i % 3 == 0;
            r
        })
        .collect();
    let keys = Arc::new(keys);
    let mut joins = Vec::new();
    for w in 0..6u64 {
        let (l, keys, history, clock) = (h.ledger.clone(), keys.clone(), history.clone(), h.clock.clone());
        joins.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(0x5eed + w);
            for _ in 0..40 {
                let r = &keys[rng.random_range(0..keys.len())];
                if rng.random_bool(0.2) {
                    clock.advance(Duration::from_secs(rng.random_range(0..40)));
                }
                if rng.random_bool(0.1) {
                    l.sweep_expired_leases(l.now(), 3).await.expect("sweep");
                }
                match l.claim(r).await {
                    Ok(Claim::Acquired(lease)) => {
                        if rng.random_bool(0.15) {
                            continue; // crash before dispatch
                        }
                        let Ok(lease) = l.dispatch(&lease).await else {
                            continue;
                        };
                        push(&history, Ev::Dispatched(r.key.clone(), lease.attempt));
                        let how = match rng.random_range(0..5) {
                            0 => continue, // crash after dispatch
                            1 => Finish::OutcomeUnknown {
                                error: "timeout".into(),
                            },
                            2 => Finish::FailedRetryable {
                                error: "refused".into(),
                            },
                            3 => Finish::FailedPermanent {
                                body: json!(w),
                                error: "declined".into(),
                            },
                            _ => Finish::Succeeded(json!({"worker": w})),
                        };
                        match l.finish(&lease, how).await {
                            Ok(rec) => push(&history, Ev::Finished(r.key.clone(), lease.attempt, rec.state)),
                            Err(e) => assert!(e.is_stale(), "{e}"),
                        }
                    }
                    Ok(Claim::Replay { outcome, .. }) => {
                        push(&history, Ev::Replayed(r.key.clone(), outcome.value.to_string()))
                    }
                    Ok(Claim::OutcomeUnknown(_)) => {}
                    Err(e) => assert!(e.is_in_progress(), "{e}"),
                }
            }
        }));
    }
    for j in joins {
        j.await.expect("worker");
    }
    let history = history.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut dispatched: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut finished: BTreeMap<(String, i64), State> = BTreeMap::new();
    let mut replays: BTreeMap<String, String> = BTreeMap::new();
    for ev in &history {
        match ev {
            Ev::Dispatched(k, a) => dispatched.entry(k.clone()).or_default().push(*a),
            Ev::Finished(k, a, s) => {
                assert!(finished.insert((k.clone(), *a), *s).is_none(), "finished twice");
            }
            Ev::Replayed(k, v) => {
                let first = replays.entry(k.clone()).or_insert_with(|| v.clone());
                assert_eq!(first, v, "a replayed outcome changed for {k}");
            }
        }
    }
    for r in keys.iter() {
        let mut attempts = dispatched.get(&r.key).cloned().unwrap_or_default();
        attempts.sort_unstable();
        let before = attempts.len();
        attempts.dedup();
        assert_eq!(before, attempts.len(), "one attempt dispatched twice for {}", r.key);
        if !r.idempotent {
            // A non-idempotent call is dispatched again only after an attempt
            // that provably had no effect.
            for a in attempts.iter().take(attempts.len().saturating_sub(1)) {
                assert_eq!(
                    finished.get(&(r.key.clone(), *a)),
                    Some(&State::FailedRetryable),
                    "attempt {a} of {} was followed by another dispatch",
                    r.key
                );
            }
        }
        if let Some(rec) = h.ledger.get(&r.user, &r.key).await.expect("get")
            && rec.state.is_finished()
            && let Some(v) = replays.get(&r.key)
        {
            let stored = rec.replay_outcome().map(|o| o.value.to_string());
            assert_eq!(stored.as_ref(), Some(v), "the stored outcome changed");
        }
    }
    assert!(!history.is_empty());
}

// L32: the sweep picks only eligible rows (in flight with an expired lease),
// oldest expiry first, in batches; live, finished and unknown rows are untouched.
async fn l32_sweep_selects_only_eligible(h: &Harness) {
    let expired_claimed = charge("sweep expired claimed");
    let expired_dispatched = charge("sweep expired dispatched");
    let l = claim_ok(&*h.ledger, &expired_claimed).await;
    drop(l);
    h.clock.advance(Duration::from_secs(1));
    let l = claim_ok(&*h.ledger, &expired_dispatched).await;
    h.ledger.dispatch(&l).await.expect("dispatch");
    h.clock.advance(Duration::from_secs(1));
    let finished = charge("sweep finished");
    run_to_success(&*h.ledger, &finished, json!(1)).await;
    h.clock.advance(LEASE);
    let live = charge("sweep live");
    let _live = claim_ok(&*h.ledger, &live).await;
    let live_d = charge("sweep live dispatched");
    let l = claim_ok(&*h.ledger, &live_d).await;
    h.ledger.dispatch(&l).await.expect("dispatch");
    let before_finished = record(h, &finished).await;

    let first = h.ledger.sweep_expired_leases(h.now(), 1).await.expect("sweep 1");
    assert_eq!(first.released.len() + first.marked_unknown.len(), 1);
    assert_eq!(first.released[0].key, expired_claimed.key, "oldest expiry first");
    let second = h.ledger.sweep_expired_leases(h.now(), 10).await.expect("sweep 2");
    assert_eq!(second.released.len(), 0);
    assert_eq!(second.marked_unknown.len(), 1);
    assert_eq!(second.marked_unknown[0].key, expired_dispatched.key);
    let third = h.ledger.sweep_expired_leases(h.now(), 10).await.expect("sweep 3");
    assert_eq!(third, Default::default());
    assert_eq!(record(h, &live).await.state, State::Claimed);
    assert_eq!(record(h, &live_d).await.state, State::Dispatched);
    assert_eq!(record(h, &finished).await, before_finished);
}

// L32 (concurrent half): sweepers running at once split the expired rows
// (PostgreSQL: FOR UPDATE SKIP LOCKED); no row is swept twice or missed.
async fn l32_concurrent_sweeps_split_work(h: &Harness) {
    let mut keys = Vec::new();
    for i in 0..24 {
        let r = charge(&format!("sweep together {i}"));
        let lease = claim_ok(&*h.ledger, &r).await;
        if i % 2 == 0 {
            h.ledger.dispatch(&lease).await.expect("dispatch");
        }
        keys.push(r.key);
    }
    h.clock.advance(LEASE);
    let now = h.now();
    let mut joins = Vec::new();
    for _ in 0..4 {
        let l = h.ledger.clone();
        joins.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let rep = l.sweep_expired_leases(now, 3).await.expect("sweep");
                if rep.marked_unknown.is_empty() && rep.released.is_empty() {
                    return mine;
                }
                mine.extend(rep.marked_unknown.into_iter().map(|r| (r.key, r.state)));
                mine.extend(rep.released.into_iter().map(|r| (r.key, r.state)));
            }
        }));
    }
    let mut all = Vec::new();
    for j in joins {
        all.extend(j.await.expect("sweeper"));
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let mut seen: Vec<String> = all.iter().map(|(k, _)| k.clone()).collect();
    seen.dedup();
    assert_eq!(seen.len(), all.len(), "a row was swept twice");
    keys.sort();
    assert_eq!(seen, keys, "every expired row swept once");
    let unknown = all.iter().filter(|(_, s)| *s == State::OutcomeUnknown).count();
    assert_eq!(unknown, 12);
}

// Renew extends a lease; a renewed lease keeps the key in progress.
async fn renew_extends_lease(h: &Harness) {
    let r = charge("renew");
    let lease = claim_ok(&*h.ledger, &r).await;
    let lease = h.ledger.dispatch(&lease).await.expect("dispatch");
    h.clock.advance(LEASE - Duration::from_secs(1));
    let renewed = h.ledger.renew(&lease).await.expect("renew");
    assert_eq!(renewed.expires_at, h.now().saturating_add(LEASE));
    h.clock.advance(Duration::from_secs(5));
    assert!(err(h.ledger.claim(&r).await).is_in_progress());
    h.ledger.complete(&renewed, json!("ok")).await.expect("complete");
}

// The decision log: append (once per id), filter, order, and the report numbers.
async fn decision_log_and_report(h: &Harness) {
    use toolgate_ledger::{Action, Ambiguity, ClassActionCount, FailureClass, FailureReason, FollowUps};
    let mk =
        |t: i64, task: &str, tool: &str, action: Action, class: Option<FailureClass>, tokens: i64| DecisionRecord {
            id: toolgate_ledger::DecisionId::from_u128(t.unsigned_abs().into()),
            at: Timestamp::from_millis(t),
            task_id: task.into(),
            user: "u1".into(),
            call_id: format!("call_{t}"),
            tool: tool.into(),
            class,
            action,
            fail_reason: (action == Action::Fail).then_some(FailureReason::RejectionCap),
            attempt: 1,
            attempts_used: 0,
            repair_tokens: tokens,
            latency_added_ms: 10,
            message_hash: "abc".into(),
            intent_key: (t % 2 == 0).then(|| format!("key-{t}")),
        };
    let structural = Some(FailureClass::Structural);
    let wrong_target = Some(FailureClass::Ambiguous(Ambiguity::WrongTarget));
    let log = [
        mk(1, "a", "charge_card", Action::Reject, structural, 100),
        mk(2, "a", "charge_card", Action::Return, None, 0),
        mk(3, "b", "charge_card", Action::Reject, structural, 50),
        mk(4, "b", "charge_card", Action::Reject, structural, 70),
        mk(5, "b", "charge_card", Action::Fail, structural, 0),
        mk(6, "c", "charge_card", Action::RetryWithCorrection, wrong_target, 30),
        mk(7, "c", "charge_card", Action::Return, None, 0),
        // A hallucinated name, fixed by calling the real tool.
        mk(8, "d", "fetch_invoice", Action::Reject, structural, 20),
        mk(9, "d", "lookup_invoice", Action::Return, None, 0),
    ];
    for d in log.iter().rev() {
        h.ledger.append_decision(d.clone()).await.expect("append");
    }
    h.ledger.append_decision(log[0].clone()).await.expect("append again");
    let all = h.ledger.list_decisions(&DecisionQuery::default()).await.expect("list");
    assert_eq!(
        all,
        log.to_vec(),
        "oldest first, whatever the insertion order, each id once"
    );
    let b = h
        .ledger
        .list_decisions(&DecisionQuery {
            task_id: Some("b".into()),
            ..Default::default()
        })
        .await
        .expect("list b");
    assert_eq!(b.len(), 3);
    let window = h
        .ledger
        .list_decisions(&DecisionQuery {
            since: Some(Timestamp::from_millis(2)),
            until: Some(Timestamp::from_millis(4)),
            limit: Some(10),
            ..Default::default()
        })
        .await
        .expect("window");
    assert_eq!(window.iter().map(|d| d.at.as_millis()).collect::<Vec<_>>(), vec![2, 3]);
    let none = h
        .ledger
        .list_decisions(&DecisionQuery {
            user: Some("nobody".into()),
            ..Default::default()
        })
        .await
        .expect("none");
    assert!(none.is_empty());

    let rep = h.ledger.report(&DecisionQuery::default()).await.expect("report");
    assert_eq!(rep.total, 9);
    assert_eq!(
        rep.rejection_follow_ups,
        FollowUps {
            valid: 2,
            rejected_again: 1,
            failed: 1,
            nothing: 0
        }
    );
    assert_eq!(rep.rejections(), 4);
    assert_eq!(rep.rejection_follow_ups.valid_share(), Some(0.5));
    assert_eq!(
        rep.rejection_follow_ups_by_tool.get("fetch_invoice").map(|f| f.valid),
        Some(1)
    );
    assert_eq!(rep.count(Action::Reject), 4);
    assert_eq!(rep.count(Action::RetryWithCorrection), 1);
    assert_eq!(rep.by_class.get(&FailureClass::Structural), Some(&5));
    assert_eq!(rep.fails_by_reason.get(&FailureReason::RejectionCap), Some(&1));
    assert_eq!(
        rep.by_class_action.first(),
        Some(&ClassActionCount {
            class: structural,
            action: Action::Reject,
            count: 4
        })
    );
    let b = rep.task("u1", "b").expect("task b");
    assert_eq!((b.decisions, b.rejections, b.fails, b.repair_tokens), (3, 2, 1, 120));
    assert_eq!(b.last_action, Action::Fail);
    assert_eq!(rep.tasks.len(), 4);
    assert_eq!(rep.mean_repair_tokens_per_task, Some(270.0 / 4.0));
}

suite!(
    all: [
        l01_new_key_runs_once,
        l02_replay_after_success,
        l03_replay_permanent_failure,
        l04_key_reused_different_params,
        l05_key_reused_different_tool,
        l06_l07_canonical_fingerprint,
        l08_concurrent_claims_one_winner,
        l09_concurrent_reclaim_one_winner,
        l10_in_progress_while_dispatched,
        l11_idempotent_reclaim,
        l12_non_idempotent_expired_dispatch_is_unknown,
        l13_timeout_is_final,
        l14_retryable_failure_reruns,
        l14b_corrected_retry_is_a_new_attempt,
        l15_crash_before_dispatch_reruns,
        l16_crash_after_dispatch,
        l17_crash_after_result,
        l18_stale_worker_fenced,
        l19_records_not_deleted_on_error,
        l22_l23_retention_and_boundaries,
        l24_tenants_independent,
        l25_invalid_keys,
        l26_release_before_dispatch,
        l28_sqlite_pragmas,
        l30_reconcile,
        l31_randomised_history,
        l32_sweep_selects_only_eligible,
        l32_concurrent_sweeps_split_work,
        renew_extends_lease,
        decision_log_and_report,
    ],
    sql_only: [l20_store_error_on_claim, l21_store_error_on_complete]
);
