//! B5 attempts, B6 latency, B7 backoff, B8 server hints, and the combined
//! per-task check.

use std::time::Duration;

use gate_budget::{
    AttemptBudget, Backoff, Budget, Jitter, LatencyBudget, LatencyRefusal, Pushback, Refusal, RepairTokenBudget,
};
use rand::SeedableRng;
use rand::rngs::StdRng;

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

fn tokens(limit: u64) -> RepairTokenBudget {
    RepairTokenBudget::new(limit, Duration::from_secs(3600)).expect("valid")
}

// The combined check takes nothing when any budget refuses.
#[tokio::test(start_paused = true)]
async fn task_budget_refusals_leave_nothing_half_spent() {
    let budget = Budget::default();
    let shared = tokens(10_000);
    let mut rng = StdRng::seed_from_u64(4);
    let mut task = budget.task(&shared, "u");

    // Tokens refuse: the attempt and the latency are untouched.
    let r = task.authorize_retry(10_001, Pushback::None, SEC, &mut rng);
    assert!(matches!(r, Err(Refusal::Tokens(_))));
    assert_eq!((task.attempts().used(), task.latency().added()), (0, Duration::ZERO));

    // Latency refuses: the tokens and the attempt are untouched.
    let r = task.authorize_retry(100, Pushback::After(31 * SEC), SEC, &mut rng);
    assert!(matches!(r, Err(Refusal::Latency(_))));
    assert_eq!((task.attempts().used(), shared.used("u")), (0, 0));

    // Two grants, then the attempt budget refuses without charging tokens.
    let g1 = task.authorize_reject(1_000, Duration::ZERO);
    assert_eq!(
        g1.map(|g| (g.repair, g.delay, g.tokens)),
        Ok((1, Duration::ZERO, 1_000))
    );
    let g2 = task.authorize_retry(2_000, Pushback::After(2 * SEC), SEC, &mut rng);
    assert_eq!(g2.map(|g| (g.repair, g.delay)), Ok((2, 2 * SEC)));
    assert_eq!(task.latency().added(), 2 * SEC);
    let r = task.authorize_reject(1, Duration::ZERO);
    assert!(matches!(r, Err(Refusal::Attempts(_))));
    assert_eq!((shared.used("u"), task.repair_tokens()), (3_000, 3_000));
}

// `record_usage` replaces the last repair's estimate; first-attempt usage is
// not repair work.
#[tokio::test(start_paused = true)]
async fn record_usage_settles_the_pending_repair_only() {
    let budget = Budget::default();
    let shared = budget.token_budget();
    let mut task = budget.task(&shared, "u");
    assert_eq!(task.record_usage(5_000, 100), None);
    assert_eq!(shared.used("u"), 0);

    assert!(task.authorize_reject(4_000, Duration::ZERO).is_ok());
    assert_eq!(task.record_usage(4_500, 200), Some(50_000 - 4_700));
    assert_eq!((shared.used("u"), task.repair_tokens()), (4_700, 4_700));
    // Already settled: a second report is not charged again.
    assert_eq!(task.record_usage(4_500, 200), None);

    assert!(task.authorize_reject(3_000, Duration::ZERO).is_ok());
    assert_eq!(task.record_usage(1_000, 0), Some(50_000 - 5_700));
    assert_eq!(task.repair_tokens(), 5_700);
}

// Tasks of one user share the user's window; tasks of others do not.
#[tokio::test(start_paused = true)]
async fn tasks_share_the_users_window() {
    let budget = Budget::default().with_repair_tokens(5_000).expect("valid");
    let shared = budget.token_budget();
    let mut a1 = budget.task(&shared, "a");
    let mut a2 = budget.task(&shared, "a");
    let mut b1 = budget.task(&shared, "b");
    assert!(a1.authorize_reject(3_000, Duration::ZERO).is_ok());
    assert!(matches!(
        a2.authorize_reject(3_000, Duration::ZERO),
        Err(Refusal::Tokens(_))
    ));
    assert!(b1.authorize_reject(3_000, Duration::ZERO).is_ok());
    assert_eq!((a2.remaining_tokens(), b1.remaining_tokens()), (2_000, 2_000));
}

// The backoff exponent counts retries, not Rejects: a retry after a Reject
// still draws below the base delay.
#[tokio::test(start_paused = true)]
async fn backoff_grows_with_retries_only() {
    let budget = Budget::default().with_max_repairs(4).expect("valid");
    let shared = budget.token_budget();
    let mut rng = StdRng::seed_from_u64(8);
    for _ in 0..200 {
        let mut task = budget.task(&shared, "u");
        assert!(task.authorize_reject(0, Duration::ZERO).is_ok());
        assert!(task.authorize_reject(0, Duration::ZERO).is_ok());
        let first = task.authorize_retry(0, Pushback::None, SEC, &mut rng).map(|g| g.delay);
        assert!(matches!(first, Ok(d) if d < Duration::from_millis(100)), "{first:?}");
        let second = task.authorize_retry(0, Pushback::None, SEC, &mut rng).map(|g| g.delay);
        assert!(matches!(second, Ok(d) if d < Duration::from_millis(200)), "{second:?}");
        assert_eq!((task.retries(), task.attempts().used()), (2, 4));
    }
}

// A resumed task continues from what it had spent, and a stored state can
// never grant more than the task's limits.
#[tokio::test(start_paused = true)]
async fn a_resumed_task_keeps_its_spending() {
    let budget = Budget::default();
    let shared = budget.token_budget();
    let mut rng = StdRng::seed_from_u64(5);
    let mut before = budget.task(&shared, "u");
    assert!(
        before
            .authorize_retry(1_000, Pushback::After(3 * SEC), SEC, &mut rng)
            .is_ok()
    );
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

    let mut after = budget.task(&shared, "u");
    after.restore(serde_json::from_str(&json).expect("deserializes"));
    assert_eq!(after.state(), state);
    assert!(after.authorize_reject(0, Duration::ZERO).is_ok());
    assert!(matches!(
        after.authorize_reject(0, Duration::ZERO),
        Err(Refusal::Attempts(_))
    ));

    let mut forged = budget.task(&shared, "u");
    forged.restore(gate_budget::TaskBudgetState {
        repairs: 99,
        retries: 99,
        ..state
    });
    assert_eq!((forged.attempts().used(), forged.retries()), (2, 2));
    assert!(forged.authorize_reject(0, Duration::ZERO).is_err());
}
