//! B10 (AWS retry quota) and B11 (gRPC retry throttling) parity.

use toolgate_budget::parity::{AWS_QUOTA_CAPACITY, QuotaPermit, RetryCost, RetryQuota, RetryThrottle};

// B10: capacity 500; 50 consecutive timeouts (cost 10) exhaust it.
#[test]
fn aws_fifty_timeouts_exhaust_the_quota() {
    let q = RetryQuota::default();
    assert_eq!(q.available(), AWS_QUOTA_CAPACITY);
    let mut granted = 0;
    while q.acquire(RetryCost::Timeout).is_ok() {
        granted += 1;
    }
    assert_eq!(granted, 50);
    assert_eq!(q.available(), 0);
    assert!(q.acquire(RetryCost::Standard).is_err());
}

// B10: +1 per first-try success, refund on eventual success, never above
// capacity; a refused acquire takes nothing.
#[test]
fn aws_releases_and_cap() {
    let q = RetryQuota::default();
    q.success_first_try();
    assert_eq!(q.available(), 500);

    let permit = q.acquire(RetryCost::Standard);
    assert_eq!(permit, Ok(QuotaPermit { cost: 5 }));
    assert_eq!(q.available(), 495);
    q.success_first_try();
    assert_eq!(q.available(), 496);
    if let Ok(p) = permit {
        q.success_after_retry(p);
    }
    assert_eq!(q.available(), 500);

    let small = RetryQuota::new(12).expect("valid");
    assert!(small.acquire(RetryCost::Timeout).is_ok());
    let refused = small.acquire(RetryCost::Standard).map_err(|e| (e.cost, e.available));
    assert_eq!(refused, Err((5, 2)));
    assert_eq!(small.available(), 2);
    assert!(RetryQuota::new(0).is_err());
}

// B11: maxTokens 10, ratio 0.1. After 6 failures (count 4 ≤ 5) no retries;
// exactly 11 successes (4 + 1.1 = 5.1 > 5) are needed before they resume.
#[test]
fn grpc_throttle_threshold_is_exact() {
    let t = RetryThrottle::new(10, 0.1).expect("valid");
    for failures in 1..=6 {
        t.on_failure();
        assert_eq!(t.allows_retry(), failures < 5, "after {failures} failures");
    }
    assert_eq!(t.tokens(), 4.0);
    for successes in 1..=11 {
        t.on_success();
        assert_eq!(t.allows_retry(), successes == 11, "after {successes} successes");
    }
    // The count never exceeds max_tokens nor drops below zero.
    for _ in 0..1_000 {
        t.on_success();
    }
    assert_eq!(t.tokens(), 10.0);
    for _ in 0..1_000 {
        t.on_failure();
    }
    assert_eq!(t.tokens(), 0.0);
}

#[test]
fn grpc_parameters_are_validated_and_ratio_truncated_to_three_decimals() {
    assert!(RetryThrottle::new(0, 0.1).is_err());
    assert!(RetryThrottle::new(1001, 0.1).is_err());
    assert!(RetryThrottle::new(10, 0.0).is_err());
    assert!(RetryThrottle::new(10, 0.0009).is_err());
    assert!(RetryThrottle::new(10, f64::NAN).is_err());
    let t = RetryThrottle::new(10, 0.1239).expect("valid");
    t.on_failure();
    t.on_success();
    assert_eq!(t.tokens(), 9.123);
}
