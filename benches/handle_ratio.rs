//! The ratio of `benches/handle.rs` (`task.handle` on a valid read-only
//! call against parsing the same arguments with `serde_json::from_str` and
//! calling the function), measured interleaved: each round times a burst of
//! gate calls and a burst of floor calls back to back, and the figure is
//! the median of the rounds' ratios, with its quartiles.
//!
//! Criterion times each function on its own, one after the other, so a
//! machine whose speed drifts between them (a shared host, a neighbour's
//! load, frequency scaling) moves the ratio it reports; here the floor and
//! the gate share every round's conditions, and the drift cancels. The
//! bursts are those of `benches/handle.rs`: calls built before the timing,
//! the background writer's queue written out between bursts, outside it.
//! PostgreSQL is measured when `GATE_POSTGRES_URL` is set.
//!
//! `cargo bench --features postgres --bench handle_ratio`

use std::time::{Duration, Instant};

#[path = "common/handle_call.rs"]
mod handle_call;
#[path = "../tests/support/invoice.rs"]
mod invoice;
#[path = "common/quantile.rs"]
mod quantile;
use handle_call::{BURST, floor_call, gate_with_task, stores, timed_burst};
use quantile::quantile;

/// Rounds per store; each gives one ratio.
const ROUNDS: usize = 41;
/// Calls before the first round, so that the task, the store and the
/// caches are warm.
const WARM_UP: u32 = 5_000;

fn floor_burst() -> Duration {
    let started = Instant::now();
    for _ in 0..BURST {
        floor_call();
    }
    started.elapsed()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = std::env::temp_dir().join(format!("gate-bench-ratio-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    println!("task.handle / floor, interleaved: {ROUNDS} rounds of {BURST} calls each");
    for (name, url) in stores(&dir) {
        let (gate, mut task) = runtime.block_on(gate_with_task(&url));
        runtime.block_on(async {
            for _ in 0..WARM_UP / BURST {
                timed_burst(&gate, &mut task, u64::from(BURST)).await;
            }
        });
        let mut ratios = Vec::with_capacity(ROUNDS);
        let mut gate_ns = Vec::with_capacity(ROUNDS);
        let mut floor_ns = Vec::with_capacity(ROUNDS);
        for round in 0..ROUNDS {
            // Which goes first alternates, so that neither always runs
            // on the caches the other left.
            let (spent, floor) = if round % 2 == 0 {
                let spent = runtime.block_on(timed_burst(&gate, &mut task, u64::from(BURST)));
                (spent, floor_burst())
            } else {
                let floor = floor_burst();
                (runtime.block_on(timed_burst(&gate, &mut task, u64::from(BURST))), floor)
            };
            ratios.push(spent.as_secs_f64() / floor.as_secs_f64());
            gate_ns.push(spent.as_nanos() as f64 / f64::from(BURST));
            floor_ns.push(floor.as_nanos() as f64 / f64::from(BURST));
        }
        runtime.block_on(gate.shutdown());
        for values in [&mut ratios, &mut gate_ns, &mut floor_ns] {
            values.sort_by(f64::total_cmp);
        }
        println!(
            "{name:>8}: ratio median {:.2}x (quartiles {:.2}-{:.2}x); task.handle median {:.0} ns, floor median {:.0} ns",
            quantile(&ratios, 0.5),
            quantile(&ratios, 0.25),
            quantile(&ratios, 0.75),
            quantile(&gate_ns, 0.5),
            quantile(&floor_ns, 0.5),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
