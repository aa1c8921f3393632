//! The per-user repair-token window as a value: reservations up to the limit,
//! expiry a bucket at a time, settlement, and its stored form. Sharing one
//! window between workers is the store's job; `gate-ledger`'s conformance
//! suite tests that (per-user isolation, concurrent reservers).

use std::time::Duration;

use toolgate_budget::{TokenLimit, TokenWindow, TokensExhausted, estimate_tokens, repair_cost};

const HOUR: Duration = Duration::from_secs(3600);
/// A tenth of an hour, in milliseconds.
const SIX_MIN: i64 = 360_000;
/// A bucket boundary: 2026-01-01T00:00:00Z is a multiple of six minutes.
const T0: i64 = 1_767_225_600_000;

fn limit(tokens: u64) -> TokenLimit {
    TokenLimit::new(tokens, HOUR).expect("valid parameters")
}

#[test]
fn reserves_up_to_the_limit_exactly() {
    let l = limit(50_000);
    let mut w = TokenWindow::default();
    assert!(w.reserve(&l, T0, 30_000).is_ok());
    assert!(w.reserve(&l, T0, 20_000).is_ok());
    assert_eq!(w.remaining(&l, T0), 0);
    let refused = w.reserve(&l, T0, 1);
    assert!(matches!(
        refused,
        Err(TokensExhausted {
            requested: 1,
            remaining: 0,
            ..
        })
    ));
    assert_eq!(w.used(&l, T0), 50_000);
    // A zero reservation is always allowed and costs nothing.
    assert_eq!(w.reserve(&l, T0, 0).map(|r| r.tokens), Ok(0));
}

#[test]
fn a_refused_reservation_takes_nothing() {
    let l = limit(1_000);
    let mut w = TokenWindow::default();
    assert!(w.reserve(&l, T0, 600).is_ok());
    assert!(w.reserve(&l, T0, 401).is_err());
    assert_eq!(w.remaining(&l, T0), 400);
    assert!(w.reserve(&l, T0, 400).is_ok());
}

// Everything reserved in any trailing hour stays counted: a reservation made
// at the start of a bucket counts for eleven buckets (66 minutes).
#[test]
fn reservations_roll_out_a_bucket_at_a_time_after_more_than_one_window() {
    let l = limit(50_000);
    let mut w = TokenWindow::default();
    assert!(w.reserve(&l, T0, 50_000).is_ok());
    let refused = w.reserve(&l, T0, 10_000);
    assert_eq!(refused.map_err(|e| e.retry_in), Err(Some(Duration::from_secs(66 * 60))));
    assert_eq!(w.remaining(&l, T0 + 3_600_000), 0, "one hour later it still counts");
    assert_eq!(w.remaining(&l, T0 + 66 * 60_000 - 1), 0);
    assert_eq!(w.remaining(&l, T0 + 66 * 60_000), 50_000);
}

#[test]
fn retry_in_points_at_the_bucket_that_frees_enough() {
    let l = limit(10_000);
    let mut w = TokenWindow::default();
    assert!(w.reserve(&l, T0, 4_000).is_ok()); // bucket 0, expires at 66 min
    let now = T0 + 3 * SIX_MIN;
    assert!(w.reserve(&l, now, 6_000).is_ok()); // bucket 3, expires at 84 min
    // 4,000 frees when bucket 0 expires (48 minutes from now); 5,000 needs bucket 3 too.
    assert_eq!(
        w.reserve(&l, now, 4_000).map_err(|e| e.retry_in),
        Err(Some(Duration::from_secs(48 * 60)))
    );
    assert_eq!(
        w.reserve(&l, now, 5_000).map_err(|e| e.retry_in),
        Err(Some(Duration::from_secs(66 * 60)))
    );
    // More than the whole limit never fits.
    assert_eq!(w.reserve(&l, now, 10_001).map_err(|e| e.retry_in), Err(None));
}

// Real usage above the estimate is charged; below it is refunded.
#[test]
fn settle_replaces_the_estimate() {
    let l = limit(10_000);
    let mut w = TokenWindow::default();
    let r = w.reserve(&l, T0, 3_000).expect("fits");
    assert_eq!(w.settle(&l, T0, &[r], 2_000), 8_000);
    let r = w.reserve(&l, T0, 3_000).expect("fits");
    assert_eq!(w.settle(&l, T0, &[r], 9_000), 0, "already spent: may exceed the limit");
    assert_eq!(w.used(&l, T0), 11_000);
    assert!(w.reserve(&l, T0, 1).is_err());
}

// Two repairs in one model turn are settled against that turn's usage.
#[test]
fn settle_splits_a_refund_over_several_reservations_newest_first() {
    let l = limit(10_000);
    let mut w = TokenWindow::default();
    let first = w.reserve(&l, T0, 2_000).expect("fits");
    let later = T0 + SIX_MIN;
    let second = w.reserve(&l, later, 3_000).expect("fits");
    // 5,000 estimated, 1,500 used: 3,000 come back from the newer bucket, 500 from the older.
    assert_eq!(w.settle(&l, later, &[first, second], 1_500), 8_500);
    // When the older bucket expires, only the 1,500 it kept leave the window.
    let older_gone = T0 + 11 * SIX_MIN;
    assert_eq!(w.used(&l, older_gone), 0);
    assert_eq!(w.used(&l, older_gone - 1), 1_500);
}

// A refund for an estimate whose bucket has expired gives nothing back: the
// estimate already left the window.
#[test]
fn settle_after_expiry_refunds_nothing() {
    let l = TokenLimit::new(10_000, Duration::from_secs(10)).expect("valid");
    let mut w = TokenWindow::default();
    let r = w.reserve(&l, T0, 5_000).expect("fits");
    let later = T0 + 11_000;
    assert!(w.reserve(&l, later, 4_000).is_ok());
    assert_eq!(w.settle(&l, later, &[r], 0), 6_000);
    assert_eq!(w.used(&l, later), 4_000);
}

#[test]
fn charge_is_unconditional() {
    let l = limit(1_000);
    let mut w = TokenWindow::default();
    w.charge(&l, T0, 400);
    w.charge(&l, T0, 900);
    assert_eq!(w.used(&l, T0), 1_300);
    assert_eq!(w.remaining(&l, T0), 0);
}

#[test]
fn a_window_round_trips_through_its_stored_form() {
    let l = limit(1_000);
    let mut w = TokenWindow::default();
    assert!(w.reserve(&l, T0, 300).is_ok());
    assert!(w.reserve(&l, T0 + 2 * SIX_MIN, 200).is_ok());
    let text = serde_json::to_string(&w).expect("serializes");
    let back: TokenWindow = serde_json::from_str(&text).expect("deserializes");
    assert_eq!(back, w);
    assert_eq!(back.used(&l, T0 + 2 * SIX_MIN), 500);
    assert!(w.is_idle(&l, T0 + 13 * SIX_MIN));
}

#[test]
fn limits_outside_their_ranges_are_refused() {
    assert_eq!(
        TokenLimit::new(0, HOUR).map(|_| ()).map_err(|e| e.parameter),
        Err("repair_tokens")
    );
    let too_many = TokenLimit::new(1_000_000_000_001, HOUR).map(|_| ());
    assert_eq!(too_many.map_err(|e| e.parameter), Err("repair_tokens"));
    let short = TokenLimit::new(1, Duration::from_millis(999)).map(|_| ());
    assert_eq!(short.map_err(|e| e.parameter), Err("token_window"));
    let long = TokenLimit::new(1, Duration::from_secs(7 * 86_400 + 1)).map(|_| ());
    assert_eq!(long.map_err(|e| e.parameter), Err("token_window"));
    let d = TokenLimit::default();
    assert_eq!((d.limit(), d.window(), d.bucket_millis()), (50_000, HOUR, SIX_MIN));
}

#[test]
fn repair_cost_is_context_plus_feedback() {
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("abcd"), 1);
    assert_eq!(estimate_tokens("abcde"), 2);
    // Characters, not bytes: four 3-byte characters are one token.
    assert_eq!(estimate_tokens("€€€€"), 1);
    assert_eq!(repair_cost(8_000, "field `amount_cents`: expected integer"), 8_000 + 10);
    assert_eq!(repair_cost(u64::MAX, "x"), u64::MAX);
}
