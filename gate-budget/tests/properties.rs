//! Property tests: the budgets against simple reference models, on paused time.

use std::collections::HashMap;
use std::time::Duration;

use gate_budget::{Backoff, LatencyBudget, Pushback, RepairTokenBudget, RetryBudget};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

#[derive(Clone, Debug)]
enum Op {
    Charge { user: u8, tokens: u64 },
    Advance { millis: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..3, 0u64..400).prop_map(|(user, tokens)| Op::Charge { user, tokens }),
        1 => (0u64..4_000).prop_map(|millis| Op::Advance { millis }),
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
    // The token window agrees with a model that keeps every charge with its
    // time and forgets it once its slot (aligned to the user's first charge)
    // is ten slots old; no user is ever charged past the limit.
    #[test]
    fn token_window_matches_the_model(ops in proptest::collection::vec(op(), 1..200)) {
        let rt = paused_runtime();
        rt.block_on(async {
            let limit = 1_000u64;
            let window = Duration::from_secs(10);
            let slot = window / 10;
            let b = RepairTokenBudget::new(limit, window).expect("valid");
            let start = tokio::time::Instant::now();
            // user → (origin, [(time, tokens)])
            let mut model: HashMap<u8, (tokio::time::Instant, Vec<(tokio::time::Instant, u64)>)> = HashMap::new();
            for op in ops {
                match op {
                    Op::Advance { millis } => tokio::time::advance(Duration::from_millis(millis)).await,
                    Op::Charge { user, tokens } => {
                        let now = tokio::time::Instant::now();
                        let name = format!("u{user}");
                        let entry = model.entry(user).or_insert((now, Vec::new()));
                        let origin = entry.0;
                        let slot_of = |t: tokio::time::Instant| (t - origin).as_nanos() / slot.as_nanos();
                        let current = slot_of(now);
                        let used: u64 =
                            entry.1.iter().filter(|(t, _)| current - slot_of(*t) < 10).map(|(_, n)| n).sum();
                        let result = b.try_charge(&name, tokens);
                        if used + tokens <= limit {
                            prop_assert_eq!(result.map(|c| c.remaining), Ok(limit - used - tokens));
                            entry.1.push((now, tokens));
                        } else {
                            prop_assert!(result.is_err());
                        }
                        prop_assert!(b.used(&name) <= limit);
                    }
                }
            }
            prop_assert!(tokio::time::Instant::now() >= start);
            Ok(())
        })?;
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
