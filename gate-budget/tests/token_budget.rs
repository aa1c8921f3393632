//! B3 per-user isolation, rolling expiry, settlement, and the guarantee that
//! concurrent tasks never overdraw a user's window.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use gate_budget::{RepairTokenBudget, TokensExhausted, estimate_tokens, repair_cost};
use tokio::time::advance;

const HOUR: Duration = Duration::from_secs(3600);

fn budget(limit: u64, window: Duration) -> RepairTokenBudget {
    RepairTokenBudget::new(limit, window).expect("valid parameters")
}

#[tokio::test(start_paused = true)]
async fn charges_up_to_the_limit_exactly() {
    let b = budget(50_000, HOUR);
    assert_eq!(b.try_charge("u", 30_000).map(|c| c.remaining), Ok(20_000));
    assert_eq!(b.try_charge("u", 20_000).map(|c| c.remaining), Ok(0));
    let refused = b.try_charge("u", 1);
    assert!(matches!(
        refused,
        Err(TokensExhausted {
            requested: 1,
            remaining: 0,
            ..
        })
    ));
    assert_eq!(b.used("u"), 50_000);
    // A zero charge is always allowed and costs nothing.
    assert_eq!(b.try_charge("u", 0).map(|c| c.tokens), Ok(0));
}

#[tokio::test(start_paused = true)]
async fn a_refused_charge_takes_nothing() {
    let b = budget(1_000, HOUR);
    assert!(b.try_charge("u", 600).is_ok());
    assert!(b.try_charge("u", 401).is_err());
    assert_eq!(b.remaining("u"), 400);
    assert!(b.try_charge("u", 400).is_ok());
}

// B3: exhausting user A leaves user B unaffected.
#[tokio::test(start_paused = true)]
async fn users_are_isolated() {
    let b = budget(50_000, HOUR);
    while b.try_charge("alice", 7_000).is_ok() {}
    assert!(b.try_charge("alice", 7_000).is_err());
    assert_eq!(b.remaining("bob"), 50_000);
    assert_eq!(b.try_charge("bob", 50_000).map(|c| c.remaining), Ok(0));
    // Names that hash alike or differ only in case are still different users.
    assert_eq!(b.remaining("Alice"), 50_000);
    assert_eq!(b.remaining("alice "), 50_000);
}

// Charges expire with the window, at slot granularity (window / 10 = 6 min).
#[tokio::test(start_paused = true)]
async fn charges_roll_out_of_the_window() {
    let b = budget(50_000, HOUR);
    assert!(b.try_charge("u", 50_000).is_ok());
    let refused = b.try_charge("u", 10_000);
    // The whole charge sits in the first slot, which expires after one hour.
    assert_eq!(refused.map_err(|e| e.retry_in), Err(Some(HOUR)));
    advance(HOUR - Duration::from_millis(1)).await;
    assert_eq!(b.remaining("u"), 0);
    advance(Duration::from_millis(1)).await;
    assert_eq!(b.remaining("u"), 50_000);
}

#[tokio::test(start_paused = true)]
async fn retry_in_points_at_the_slot_that_frees_enough() {
    let b = budget(10_000, HOUR);
    let six_min = HOUR / 10;
    assert!(b.try_charge("u", 4_000).is_ok()); // slot 0
    advance(six_min * 3).await;
    assert!(b.try_charge("u", 6_000).is_ok()); // slot 3
    // 4,000 frees when slot 0 expires (in 7 slots); 5,000 needs slot 3 too.
    assert_eq!(b.try_charge("u", 4_000).map_err(|e| e.retry_in), Err(Some(six_min * 7)));
    assert_eq!(
        b.try_charge("u", 5_000).map_err(|e| e.retry_in),
        Err(Some(six_min * 10))
    );
    // More than the whole limit never fits.
    assert_eq!(b.try_charge("u", 10_001).map_err(|e| e.retry_in), Err(None));
}

// Real usage above the estimate is charged; below it is refunded.
#[tokio::test(start_paused = true)]
async fn settle_replaces_the_estimate() {
    let b = budget(10_000, HOUR);
    let c = b.try_charge("u", 3_000).expect("fits");
    assert_eq!(b.settle(c, 2_000), 8_000);
    let c = b.try_charge("u", 3_000).expect("fits");
    assert_eq!(b.settle(c, 9_000), 0); // already spent: may exceed the limit
    assert_eq!(b.used("u"), 11_000);
    assert!(b.try_charge("u", 1).is_err());
}

// A refund for an estimate whose slot has expired gives nothing back: the
// estimate already left the window.
#[tokio::test(start_paused = true)]
async fn settle_after_expiry_refunds_nothing() {
    let b = budget(10_000, Duration::from_secs(10));
    let c = b.try_charge("u", 5_000).expect("fits");
    advance(Duration::from_secs(10)).await;
    assert!(b.try_charge("u", 4_000).is_ok());
    assert_eq!(b.settle(c, 0), 6_000);
    assert_eq!(b.used("u"), 4_000);
}

#[tokio::test(start_paused = true)]
async fn record_charges_unconditionally() {
    let b = budget(1_000, HOUR);
    assert_eq!(b.record("u", 400), 600);
    assert_eq!(b.record("u", 900), 0);
    assert_eq!(b.used("u"), 1_300);
}

#[tokio::test(start_paused = true)]
async fn idle_users_are_pruned() {
    let b = budget(1_000, Duration::from_secs(10));
    for i in 0..100 {
        assert!(b.try_charge(&format!("user-{i}"), 1).is_ok());
    }
    assert_eq!(b.prune(), 100);
    advance(Duration::from_secs(10)).await;
    assert_eq!(b.prune(), 0);
    assert_eq!(b.remaining("user-1"), 1_000);
}

#[test]
fn constructor_rejects_out_of_range_parameters() {
    assert_eq!(
        RepairTokenBudget::new(0, HOUR).map(|_| ()).map_err(|e| e.parameter),
        Err("repair_tokens")
    );
    let too_many = RepairTokenBudget::new(1_000_000_000_001, HOUR).map(|_| ());
    assert_eq!(too_many.map_err(|e| e.parameter), Err("repair_tokens"));
    let short = RepairTokenBudget::new(1, Duration::from_millis(999)).map(|_| ());
    assert_eq!(short.map_err(|e| e.parameter), Err("token_window"));
    let long = RepairTokenBudget::new(1, Duration::from_secs(7 * 86_400 + 1)).map(|_| ());
    assert_eq!(long.map_err(|e| e.parameter), Err("token_window"));
    let d = RepairTokenBudget::default();
    assert_eq!((d.limit(), d.window()), (50_000, HOUR));
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

/// Drives `tasks` concurrent workers charging `each` tokens to one user until
/// refused; returns the sum of successful charges.
async fn hammer(b: RepairTokenBudget, tasks: usize, each: u64) -> u64 {
    let total = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let b = b.clone();
        let total = Arc::clone(&total);
        handles.push(tokio::spawn(async move {
            while let Ok(charge) = b.try_charge("shared-user", each) {
                total.fetch_add(charge.tokens, Ordering::SeqCst);
                tokio::task::yield_now().await;
            }
        }));
    }
    for h in handles {
        h.await.expect("worker finished");
    }
    total.load(Ordering::SeqCst)
}

// 64 tokio tasks on a multi-threaded runtime: the window is filled exactly to
// the largest multiple of the charge that fits, never beyond.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_tasks_never_overdraw() {
    for each in [1, 7, 113, 4_999] {
        let b = budget(50_000, HOUR);
        let charged = hammer(b.clone(), 64, each).await;
        assert_eq!(charged, 50_000 / each * each, "charge of {each}");
        assert_eq!(b.used("shared-user"), charged);
    }
}

// The same with 64 OS threads and mixed charge sizes: the total never exceeds
// the limit, and what the budget recorded equals what the workers were granted.
#[test]
fn sixty_four_threads_with_mixed_charges_never_overdraw() {
    let b = budget(50_000, HOUR);
    let total = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..64u64)
        .map(|t| {
            let b = b.clone();
            let total = Arc::clone(&total);
            std::thread::spawn(move || {
                let mut refusals = 0;
                let mut i = 0u64;
                while refusals < 50 {
                    let amount = 1 + (t * 31 + i * 17) % 900;
                    i += 1;
                    match b.try_charge("shared-user", amount) {
                        Ok(c) => {
                            total.fetch_add(c.tokens, Ordering::SeqCst);
                        }
                        Err(_) => refusals += 1,
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("worker finished");
    }
    let charged = total.load(Ordering::SeqCst);
    assert!(charged <= 50_000, "overdrawn: {charged}");
    assert_eq!(b.used("shared-user"), charged);
    // Workers kept trying small amounts, so the window ends nearly full.
    assert!(charged > 50_000 - 900, "underfilled: {charged}");
}
