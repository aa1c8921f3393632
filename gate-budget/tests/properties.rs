//! Property tests: the budgets against simple reference models, on paused time.

use std::time::Duration;

use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use toolgate_budget::{Backoff, LatencyBudget, Pushback, RetryBudget, TokenLimit, TokenWindow};

#[derive(Clone, Debug)]
enum Op {
    Reserve { tokens: u64 },
    Settle { actual: u64 },
    Advance { millis: i64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..400).prop_map(|tokens| Op::Reserve { tokens }),
        1 => (0u64..400).prop_map(|actual| Op::Settle { actual }),
        2 => (0i64..4_000).prop_map(|millis| Op::Advance { millis }),
    ]
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("runtime")
}

proptest! {
    // The token window agrees with a model that keeps every amount with its
    // time and forgets it once the amount's second (a tenth of the 10 s
    // window) is eleven seconds old; a reservation is granted exactly when
    // the counted amounts plus the request fit the limit (or it is empty). Settling the last
    // reservation refunds to its bucket or charges the excess now.
    #[test]
    fn token_window_matches_the_model(start in 0i64..1_000_000_000_000, ops in proptest::collection::vec(op(), 1..200)) {
        let limit = TokenLimit::new(1_000, Duration::from_secs(10)).expect("valid");
        let mut w = TokenWindow::default();
        let mut now = start;
        // (second the amount counts from, tokens)
        let mut model: Vec<(i64, i64)> = Vec::new();
        let mut last: Option<(toolgate_budget::Reservation, usize)> = None;
        let second = |t: i64| t.div_euclid(1_000);
        for op in ops {
            let counted = |model: &[(i64, i64)], now: i64| -> u64 {
                let sum: i64 = model.iter().filter(|(s, _)| second(now) - s <= 10).map(|(_, n)| n).sum();
                u64::try_from(sum.max(0)).unwrap_or(0)
            };
            match op {
                Op::Advance { millis } => now += millis,
                Op::Reserve { tokens } => {
                    let used = counted(&model, now);
                    let result = w.reserve(&limit, now, tokens);
                    if tokens == 0 || used + tokens <= 1_000 {
                        prop_assert!(result.is_ok());
                        model.push((second(now), tokens as i64));
                        last = result.ok().map(|r| (r, model.len() - 1));
                    } else {
                        prop_assert!(result.is_err());
                    }
                }
                Op::Settle { actual } => {
                    if let Some((r, at)) = last.take() {
                        let estimate = r.tokens as i64;
                        let actual_i = actual as i64;
                        if actual_i >= estimate {
                            model.push((second(now), actual_i - estimate));
                        } else if second(now) - model[at].0 <= 10 {
                            model[at].1 -= estimate - actual_i;
                        }
                        w.settle(&limit, now, &[r], actual);
                    }
                }
            }
            prop_assert_eq!(w.used(&limit, now), counted(&model, now));
        }
    }

    // With no reserve, retries over any run of deposits made inside one window
    // are exactly floor(deposits × ratio), for ratios with three decimals.
    #[test]
    fn retry_ratio_is_exact(permille in 1u32..=3_000, deposits in 0u32..500) {
        let rt = paused_runtime();
        rt.block_on(async {
            let ratio = f64::from(permille) / 1000.0;
            let b = RetryBudget::new(Duration::from_secs(10), 0.0, ratio).expect("valid");
            for _ in 0..deposits {
                b.deposit();
            }
            let mut n = 0u64;
            while b.withdraw() {
                n += 1;
            }
            prop_assert_eq!(n, u64::from(deposits) * u64::from(permille) / 1000);
            Ok(())
        })?;
    }

    // B7 for any valid parameters: the ceiling never exceeds the cap and every
    // full-jitter delay is below it.
    #[test]
    fn backoff_delay_below_ceiling(base_ms in 1u64..5_000, extra_ms in 0u64..60_000, retry in 0u32..200, seed: u64) {
        let base = Duration::from_millis(base_ms);
        let b = Backoff::new(base, base + Duration::from_millis(extra_ms)).expect("valid");
        let mut rng = StdRng::seed_from_u64(seed);
        let ceiling = b.ceiling(retry);
        prop_assert!(ceiling >= base && ceiling <= b.cap());
        prop_assert!(b.delay(retry, &mut rng) < ceiling);
    }

    // B6 for any sequence: a plan that is granted always fits, and what was
    // granted plus what was spent within timeouts never exceeds the limit.
    #[test]
    fn latency_grants_always_fit(
        limit_ms in 0u64..60_000,
        steps in proptest::collection::vec((0u64..20_000, 0u64..10_000, proptest::option::of(0u64..40)), 1..30),
        seed: u64,
    ) {
        let mut l = LatencyBudget::new(Duration::from_millis(limit_ms)).expect("valid");
        let b = Backoff::default();
        let mut rng = StdRng::seed_from_u64(seed);
        for (n, (timeout_ms, spent_ms, hint)) in steps.into_iter().enumerate() {
            let timeout = Duration::from_millis(timeout_ms);
            let pushback = Pushback::from(hint.map(Duration::from_secs));
            let retry = u32::try_from(n).unwrap_or(u32::MAX) + 1;
            if let Ok(delay) = l.plan_retry(&b, retry, pushback, timeout, &mut rng) {
                if let Pushback::After(d) = pushback {
                    prop_assert_eq!(delay, d);
                }
                l.record(delay);
                l.record(Duration::from_millis(spent_ms).min(timeout));
            }
            prop_assert!(l.added() <= l.limit());
        }
    }
}
