//! B5 attempts, B6 latency, B7 backoff, B8 server hints, and the combined
//! per-task check.

use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use toolgate_budget::{AttemptBudget, Backoff, Budget, Jitter, LatencyBudget, LatencyRefusal, Pushback, Refusal};

const SEC: Duration = Duration::from_secs(1);

// B5: max_attempts = 3 → at most 3 calls (2 repairs); the cap of 5 holds.
#[test]
fn attempts_are_capped() {
    let mut a = AttemptBudget::with_max_attempts(3).expect("3 attempts is valid");
    assert_eq!(a.max_attempts(), 3);
    let mut calls = 1; // the first attempt
    while a.try_acquire().is_ok() {
        calls += 1;
    }
    assert_eq!(calls, 3);
    assert_eq!(a.try_acquire().map_err(|e| e.max_repairs), Err(2));
    assert_eq!((a.used(), a.remaining()), (2, 0));

    for n in [5, 6, 100, u32::MAX] {
        assert!(AttemptBudget::new(n).is_err(), "{n} repairs accepted");
    }
    for n in [0, 6, u32::MAX] {
        assert!(AttemptBudget::with_max_attempts(n).is_err(), "{n} attempts accepted");
    }
    assert_eq!(AttemptBudget::new(4).map(|a| a.max_attempts()), Ok(5));
    assert_eq!(AttemptBudget::default().max_repairs(), 2);
}

// B6: no retry when added + delay + attempt_timeout > limit.
#[test]
fn latency_refuses_retries_past_the_deadline() {
    let mut l = LatencyBudget::new(10 * SEC).expect("10 s is valid");
    assert!(l.check(2 * SEC, 8 * SEC).is_ok()); // exactly at the limit
    assert!(l.check(2 * SEC + Duration::from_nanos(1), 8 * SEC).is_err());
    l.record(3 * SEC);
    assert_eq!(l.remaining(), 7 * SEC);
    let refusal = l.check(SEC, 7 * SEC);
    assert_eq!(
        refusal,
        Err(LatencyRefusal::Exhausted {
            added: 3 * SEC,
            delay: SEC,
            attempt_timeout: 7 * SEC,
            limit: 10 * SEC
        })
    );
    assert!(LatencyBudget::new(Duration::from_secs(3601)).is_err());
    assert_eq!(LatencyBudget::default().limit(), 30 * SEC);
}

// B6: a loop that only retries when allowed never adds more than the budget,
// whatever the delays and attempt durations drawn.
#[test]
fn total_added_latency_stays_within_budget() {
    let mut rng = StdRng::seed_from_u64(42);
    let backoff = Backoff::default();
    for trial in 0..500u64 {
        let mut l = LatencyBudget::default();
        let timeout = Duration::from_millis(500 + trial * 37 % 9_000);
        let mut retry = 1;
        while let Ok(delay) = l.plan_retry(&backoff, retry, Pushback::None, timeout, &mut rng) {
            l.record(delay);
            // The attempt takes at most its timeout.
            l.record(timeout.mul_f64(f64::from((retry * 37) % 100) / 100.0));
            retry += 1;
        }
        assert!(l.added() <= l.limit(), "trial {trial}: {:?}", l.added());
    }
}

// B7: every full-jitter delay is in [0, min(base·2^(n−1), cap)).
#[test]
fn full_jitter_stays_below_the_ceiling() {
    let b = Backoff::default();
    let mut rng = StdRng::seed_from_u64(1);
    for n in 1..=12u32 {
        let ceiling = Duration::from_millis(100 * (1u64 << (n - 1))).min(Duration::from_secs(20));
        assert_eq!(b.ceiling(n), ceiling);
        let mut max_seen = Duration::ZERO;
        let mut min_seen = ceiling;
        for _ in 0..2_000 {
            let d = b.delay(n, &mut rng);
            assert!(d < ceiling, "retry {n}: {d:?} ≥ {ceiling:?}");
            max_seen = max_seen.max(d);
            min_seen = min_seen.min(d);
        }
        // The draws cover the range, so it really is jitter, not a constant.
        assert!(
            max_seen > ceiling.mul_f64(0.9) && min_seen < ceiling.mul_f64(0.1),
            "retry {n}"
        );
    }
}

// B7: gRPC mode stays within [0.8, 1.2] × ceiling.
#[test]
fn grpc_jitter_stays_within_twenty_percent() {
    let b = Backoff::new(Duration::from_millis(100), SEC).map(|b| b.with_jitter(Jitter::Grpc));
    let Ok(b) = b else { panic!("valid backoff refused") };
    let mut rng = StdRng::seed_from_u64(2);
    for n in 1..=6u32 {
        let c = b.ceiling(n);
        for _ in 0..1_000 {
            let d = b.delay(n, &mut rng);
            assert!(d >= c.mul_f64(0.8) && d < c.mul_f64(1.2), "retry {n}: {d:?} vs {c:?}");
        }
    }
}

// B7: a seeded RNG makes the delays reproducible.
#[test]
fn seeded_backoff_is_reproducible() {
    let b = Backoff::default();
    let draw = |seed| {
        let mut rng = StdRng::seed_from_u64(seed);
        (1..=8).map(|n| b.delay(n, &mut rng)).collect::<Vec<_>>()
    };
    assert_eq!(draw(9), draw(9));
    assert_ne!(draw(9), draw(10));
}

#[test]
fn backoff_parameters_are_validated() {
    let ms = Duration::from_millis;
    assert_eq!(Backoff::new(ms(0), SEC).map_err(|e| e.parameter), Err("backoff_base"));
    assert_eq!(Backoff::new(2 * SEC, SEC).map_err(|e| e.parameter), Err("backoff_base"));
    assert_eq!(
        Backoff::new(ms(1), Duration::from_secs(3601)).map_err(|e| e.parameter),
        Err("backoff_cap")
    );
    assert!(Backoff::new(ms(1), ms(1)).is_ok());
    assert_eq!(Backoff::default(), Backoff::new(ms(100), 20 * SEC).expect("valid"));
}

// B8: Retry-After honoured exactly when it fits; otherwise no retry.
#[test]
fn retry_after_is_honoured_exactly_within_the_budget() {
    let mut rng = StdRng::seed_from_u64(3);
    let b = Backoff::default();
    let mut l = LatencyBudget::default();
    l.record(10 * SEC);
    let after = |s| Pushback::After(Duration::from_secs(s));
    // 10 s added + 15 s hint + 5 s timeout = 30 s: fits exactly.
    assert_eq!(l.plan_retry(&b, 1, after(15), 5 * SEC, &mut rng), Ok(15 * SEC));
    // One second more does not fit: no retry, and no clamping to 14 s.
    assert!(matches!(
        l.plan_retry(&b, 1, after(16), 5 * SEC, &mut rng),
        Err(LatencyRefusal::Exhausted { delay, .. }) if delay == 16 * SEC
    ));
    // An unusable hint means no retry, even with plenty of budget.
    let fresh = LatencyBudget::default();
    assert_eq!(
        fresh.plan_retry(&b, 1, Pushback::Refused, SEC, &mut rng),
        Err(LatencyRefusal::PushbackRefused)
    );
}

// B8: parsing of the hints.
#[test]
fn pushback_parsing() {
    assert_eq!(Pushback::from_retry_after(None), Pushback::None);
    assert_eq!(Pushback::from_retry_after(Some("120")), Pushback::After(120 * SEC));
    assert_eq!(Pushback::from_retry_after(Some(" 0 ")), Pushback::After(Duration::ZERO));
    for bad in [
        "-1",
        "1.5",
        "",
        "soon",
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "99999999999999999999999",
    ] {
        assert_eq!(Pushback::from_retry_after(Some(bad)), Pushback::Refused, "{bad:?}");
    }
    assert_eq!(
        Pushback::from_grpc_pushback_ms(Some("250")),
        Pushback::After(Duration::from_millis(250))
    );
    assert_eq!(Pushback::from_grpc_pushback_ms(Some("-5")), Pushback::Refused);
    assert_eq!(Pushback::from_grpc_pushback_ms(None), Pushback::None);
    assert_eq!(Pushback::from(Some(2 * SEC)), Pushback::After(2 * SEC));
    assert_eq!(Pushback::from(None), Pushback::None);
}

// A plan takes nothing; a refused plan leaves the task untouched; committing
// takes the repair, its delay and the tokens the window granted.
#[tokio::test(start_paused = true)]
async fn plans_take_nothing_until_committed() {
    let budget = Budget::default();
    let mut rng = StdRng::seed_from_u64(4);
    let mut task = budget.task();

    // Latency refuses: nothing is taken.
    let r = task.plan_retry(Pushback::After(31 * SEC), SEC, &mut rng);
    assert!(matches!(r, Err(Refusal::Latency(_))));
    assert_eq!((task.attempts().used(), task.latency().added()), (0, Duration::ZERO));

    // A plan that is dropped (the window refused the tokens) takes nothing either.
    let dropped = task.plan_reject(Duration::ZERO).map(|p| p.delay());
    assert_eq!(dropped, Ok(Duration::ZERO));
    assert_eq!((task.attempts().used(), task.repair_tokens()), (0, 0));

    // Two commits, then the attempt budget refuses the plan.
    let p1 = task.plan_reject(Duration::ZERO).expect("allowed");
    let g1 = task.commit(p1, 1_000);
    assert_eq!(
        g1.map(|g| (g.repair, g.delay, g.tokens)),
        Ok((1, Duration::ZERO, 1_000))
    );
    let p2 = task
        .plan_retry(Pushback::After(2 * SEC), SEC, &mut rng)
        .expect("allowed");
    assert!(p2.is_retry());
    let g2 = task.commit(p2, 2_000);
    assert_eq!(g2.map(|g| (g.repair, g.delay)), Ok((2, 2 * SEC)));
    assert_eq!(task.latency().added(), 2 * SEC);
    assert!(matches!(task.plan_reject(Duration::ZERO), Err(Refusal::Attempts(_))));
    assert_eq!(task.repair_tokens(), 3_000);
}

// Two plans made before either is committed cannot both spend the last repair.
#[test]
fn a_stale_plan_cannot_spend_a_repair_twice() {
    let budget = Budget::default().with_max_repairs(1).expect("valid");
    let mut task = budget.task();
    let a = task.plan_reject(Duration::ZERO).expect("allowed");
    let b = task.plan_reject(Duration::ZERO).expect("allowed");
    assert!(task.commit(a, 10).is_ok());
    assert!(matches!(task.commit(b, 10), Err(Refusal::Attempts(_))));
    assert_eq!((task.attempts().used(), task.repair_tokens()), (1, 10));
}

// Settling replaces an estimate in the task's total.
#[test]
fn settle_tokens_replaces_the_estimate_in_the_total() {
    let mut task = Budget::default().task();
    let plan = task.plan_reject(Duration::ZERO).expect("allowed");
    assert!(task.commit(plan, 4_000).is_ok());
    task.settle_tokens(4_000, 4_700);
    assert_eq!(task.repair_tokens(), 4_700);
    task.settle_tokens(4_700, 100);
    assert_eq!(task.repair_tokens(), 100);
}

// The backoff exponent counts retries, not Rejects: a retry after a Reject
// still draws below the base delay.
#[tokio::test(start_paused = true)]
async fn backoff_grows_with_retries_only() {
    let budget = Budget::default().with_max_repairs(4).expect("valid");
    let mut rng = StdRng::seed_from_u64(8);
    for _ in 0..200 {
        let mut task = budget.task();
        for _ in 0..2 {
            let plan = task.plan_reject(Duration::ZERO).expect("allowed");
            assert!(task.commit(plan, 0).is_ok());
        }
        let first = task.plan_retry(Pushback::None, SEC, &mut rng).expect("allowed");
        assert!(first.delay() < Duration::from_millis(100), "{first:?}");
        assert!(task.commit(first, 0).is_ok());
        let second = task.plan_retry(Pushback::None, SEC, &mut rng).expect("allowed");
        assert!(second.delay() < Duration::from_millis(200), "{second:?}");
        assert!(task.commit(second, 0).is_ok());
        assert_eq!((task.retries(), task.attempts().used()), (2, 4));
    }
}

// A resumed task continues from what it had spent, and a stored state can
// never grant more than the task's limits.
#[tokio::test(start_paused = true)]
async fn a_resumed_task_keeps_its_spending() {
    let budget = Budget::default();
    let mut rng = StdRng::seed_from_u64(5);
    let mut before = budget.task();
    let plan = before
        .plan_retry(Pushback::After(3 * SEC), SEC, &mut rng)
        .expect("allowed");
    assert!(before.commit(plan, 1_000).is_ok());
    before.record_latency(2 * SEC);
    let state = before.state();
    assert_eq!(
        (
            state.repairs,
            state.retries,
            state.added_latency_ms,
            state.repair_tokens
        ),
        (1, 1, 5_000, 1_000)
    );
    let json = serde_json::to_string(&state).expect("serializes");

    let mut after = budget.task();
    after.restore(serde_json::from_str(&json).expect("deserializes"));
    assert_eq!(after.state(), state);
    let plan = after.plan_reject(Duration::ZERO).expect("one repair left");
    assert!(after.commit(plan, 0).is_ok());
    assert!(matches!(after.plan_reject(Duration::ZERO), Err(Refusal::Attempts(_))));

    let mut forged = budget.task();
    forged.restore(toolgate_budget::TaskBudgetState {
        repairs: 99,
        retries: 99,
        ..state
    });
    assert_eq!((forged.attempts().used(), forged.retries()), (2, 2));
    assert!(forged.plan_reject(Duration::ZERO).is_err());
}
