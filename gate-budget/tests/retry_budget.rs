//! B1, B2, B4: tower `TpsBudget` parity on paused time, exact ratios, and
//! slot-granular expiry.

use std::time::Duration;

use tokio::time::advance;
use toolgate_budget::RetryBudget;

fn budget(ttl_ms: u64, min_per_sec: f64, ratio: f64) -> RetryBudget {
    match RetryBudget::new(Duration::from_millis(ttl_ms), min_per_sec, ratio) {
        Ok(b) => b,
        Err(e) => panic!("valid parameters refused: {e}"),
    }
}

fn withdrawals(b: &RetryBudget) -> u32 {
    let mut n = 0;
    while b.withdraw() {
        n += 1;
        assert!(n <= 1_000_000, "withdrawals never stop");
    }
    n
}

// B1: tower `tps_empty`.
#[test]
fn tps_empty() {
    let b = budget(1_000, 0.0, 1.0);
    assert!(!b.withdraw());
    assert_eq!(b.available(), 0);
}

// B1: tower `tps_leaky`.
#[tokio::test(start_paused = true)]
async fn tps_leaky() {
    let b = budget(1_000, 0.0, 1.0);
    b.deposit();
    assert_eq!(b.available(), 1);
    advance(Duration::from_secs(3)).await;
    assert!(!b.withdraw());
}

// B1: tower `tps_slots`, with the expiry of the first deposit checked too.
#[tokio::test(start_paused = true)]
async fn tps_slots() {
    let b = budget(1_000, 0.0, 0.5);
    b.deposit();
    b.deposit();
    advance(Duration::from_millis(901)).await;
    // 900 ms later the deposits are still valid.
    assert!(b.withdraw());
    assert!(!b.withdraw());

    // Blank slate.
    advance(Duration::from_millis(2001)).await;
    b.deposit();
    advance(Duration::from_millis(301)).await;
    b.deposit();
    advance(Duration::from_millis(801)).await;
    b.deposit();
    // The first deposit has expired; the second and third combine into one
    // retry, and no more.
    assert_eq!(b.available(), 1);
    assert!(b.withdraw());
    assert!(!b.withdraw());
}

// B1: tower `tps_reserve`: min 5 per second over 1 s gives exactly 5.
#[tokio::test(start_paused = true)]
async fn tps_reserve() {
    let b = budget(1_000, 5.0, 1.0);
    assert_eq!(withdrawals(&b), 5);
}

// The reserve refills as withdrawals age out of the window.
#[tokio::test(start_paused = true)]
async fn reserve_refills_after_ttl() {
    let b = budget(1_000, 5.0, 1.0);
    assert_eq!(withdrawals(&b), 5);
    advance(Duration::from_millis(500)).await;
    assert!(!b.withdraw());
    advance(Duration::from_millis(500)).await;
    assert_eq!(withdrawals(&b), 5);
}

// B2: p = 0.2 → exactly 20 of 100; p = 0.3 → 30, not tower's 33.
#[tokio::test(start_paused = true)]
async fn exact_ratios() {
    for (ratio, expected) in [
        (0.2, 20),
        (0.3, 30),
        (0.1, 10),
        (0.25, 25),
        (0.333, 33),
        (1.0, 100),
        (1.5, 150),
    ] {
        let b = budget(10_000, 0.0, ratio);
        for _ in 0..100 {
            b.deposit();
        }
        assert_eq!(withdrawals(&b), expected, "ratio {ratio}");
    }
}

// B2 with deposits and withdrawals interleaved, as the runtime does them.
#[tokio::test(start_paused = true)]
async fn exact_ratio_interleaved() {
    let b = budget(10_000, 0.0, 0.3);
    let mut retries = 0;
    for _ in 0..100 {
        b.deposit();
        if b.withdraw() {
            retries += 1;
        }
    }
    assert_eq!(retries, 30);
}

// B4: deposits older than ttl stop counting, at slot granularity (ttl / 10).
#[tokio::test(start_paused = true)]
async fn rolling_expiry_at_slot_granularity() {
    let b = budget(10_000, 0.0, 1.0);
    // One deposit per second for 10 s: slots 0, 10, 20 … 90 of 100 ms slots.
    for _ in 0..10 {
        b.deposit();
        advance(Duration::from_secs(1)).await;
    }
    // Now at 10 s: the deposit made at 0 s has just expired.
    assert_eq!(b.available(), 9);
    advance(Duration::from_millis(999)).await;
    // 10.999 s: the deposit made at 1.0 s is still inside its slot's life.
    assert_eq!(b.available(), 9);
    advance(Duration::from_millis(1)).await;
    assert_eq!(b.available(), 8);
    advance(Duration::from_secs(60)).await;
    assert_eq!(b.available(), 0);
}

#[test]
fn constructor_rejects_out_of_range_parameters() {
    let bad = [
        (Duration::from_millis(999), 0.0, 0.2, "ttl"),
        (Duration::from_secs(61), 0.0, 0.2, "ttl"),
        (Duration::from_secs(10), -1.0, 0.2, "min_per_sec"),
        (Duration::from_secs(10), f64::NAN, 0.2, "min_per_sec"),
        (Duration::from_secs(10), 2e6, 0.2, "min_per_sec"),
        (Duration::from_secs(10), 0.0, -0.1, "retry_ratio"),
        (Duration::from_secs(10), 0.0, 1000.5, "retry_ratio"),
        (Duration::from_secs(10), 0.0, f64::INFINITY, "retry_ratio"),
        (Duration::from_secs(10), 0.0, 0.0001, "retry_ratio"),
    ];
    for (ttl, min, ratio, parameter) in bad {
        let err = RetryBudget::new(ttl, min, ratio).map(|_| ()).map_err(|e| e.parameter);
        assert_eq!(err, Err(parameter), "{ttl:?} {min} {ratio}");
    }
    assert!(RetryBudget::new(Duration::from_secs(60), 1e6, 1000.0).is_ok());
}

// tower's default: 100 retries of headroom per 10 s.
#[tokio::test(start_paused = true)]
async fn default_allows_the_reserve() {
    let b = RetryBudget::default();
    assert_eq!(b.available(), 100);
}

// Fractional minimum rates give fractional reserves, kept to a thousandth.
#[tokio::test(start_paused = true)]
async fn fractional_min_per_sec() {
    let b = budget(60_000, 0.1, 0.0);
    assert_eq!(withdrawals(&b), 6);
}

// B9-ish (Finagle's contract): a refused withdrawal leaves the balance
// untouched, and a zero ratio earns nothing from deposits.
#[tokio::test(start_paused = true)]
async fn refused_withdrawal_leaves_the_balance_untouched() {
    let b = budget(1_000, 0.0, 0.5);
    b.deposit();
    for _ in 0..10 {
        assert!(!b.withdraw());
    }
    b.deposit();
    assert!(b.withdraw());

    let none = budget(1_000, 0.0, 0.0);
    for _ in 0..1_000 {
        none.deposit();
    }
    assert!(!none.withdraw());
}

// A retry paid for when it is made: taken whatever the balance, and an
// overdraft is repaid by later deposits before anyone withdraws again.
#[test]
fn a_spent_retry_overdraws_and_later_deposits_repay_it() {
    let b = budget(10_000, 0.0, 1.0);
    b.deposit();
    assert_eq!(b.available(), 1);
    b.spend();
    assert_eq!(b.available(), 0);
    // A second retry decided on the same last one: the window goes below zero.
    b.spend();
    b.deposit();
    assert_eq!(b.available(), 0, "the first deposit repays the overdraft");
    assert!(!b.withdraw());
    b.deposit();
    assert_eq!(b.available(), 1);
    assert!(b.withdraw());
}
