//! What the gate costs per call: `task.handle` on a valid read-only call (an
//! invoice of 5 fields with 3 nested lines), per store, next to the floor:
//! parsing the same arguments with `serde_json::from_str` and calling the
//! function directly. Both run in the same group, so their ratio is what to
//! read, never a bare time. Each store is measured twice: in bursts shorter
//! than the background writer's queue (what a caller waits for) and
//! sustained (where a durable store's writer sets the pace). PostgreSQL is
//! measured when `GATE_POSTGRES_URL` is set.
//!
//! The group `guard` prices the information-flow guard on the memory
//! store, in pairs that differ only in a label: a read of an inbox of 1 and
//! 16 KiB declared `untrusted` against the same read unlabelled (every
//! value of a labelled result is fingerprinted into the task's state), and
//! an outbound `send_email` in a task that has read such an inbox against
//! one in a task that has read nothing labelled (where the guard is not
//! asked).

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::ToolCall;

#[path = "common/guard_calls.rs"]
mod guard_calls;
#[path = "common/handle_call.rs"]
mod handle_call;
#[path = "../tests/support/invoice.rs"]
mod invoice;
use handle_call::{ARGUMENTS, BURST, floor_call, gate_with_task, stores, timed_burst};

fn handle(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("valid read-only call");
    group.bench_function("floor: serde_json::from_str + the function", |b| b.iter(floor_call));
    let dir = std::env::temp_dir().join(format!("gate-bench-handle-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    for (name, url) in stores(&dir) {
        let (gate, mut task) = runtime.block_on(gate_with_task(&url));
        // What a caller waits for: bursts shorter than the writer's queue,
        // the queue written out between them, outside the timing (see
        // `timed_burst`).
        group.bench_function(format!("task.handle, {name}, bursts of {BURST}"), |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let mut spent = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let burst = left.min(u64::from(BURST));
                        spent += timed_burst(&gate, &mut task, burst).await;
                        left -= burst;
                    }
                    spent
                })
            })
        });
        // Sustained: on a durable store the loop runs at the pace of the
        // writer, whose full queue holds callers back. Each call is built
        // inside the timing: pausing it would give the writer free time.
        group.bench_function(format!("task.handle, {name}, sustained"), |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let started = Instant::now();
                    for _ in 0..iters {
                        let call = ToolCall::new("c1", "invoice_total", ARGUMENTS);
                        std::hint::black_box(task.handle(call).await);
                    }
                    started.elapsed()
                })
            })
        });
        runtime.block_on(gate.shutdown());
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
    guard(c, &runtime);
}

fn guard(c: &mut Criterion, runtime: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("guard");
    for kib in [1, 16] {
        let inbox = guard_calls::inbox(kib);
        let gate = runtime.block_on(guard_calls::gate(&inbox));
        for tool in ["read_plain", "read_inbox"] {
            let mut task = runtime.block_on(guard_calls::task_after(&gate, tool));
            let label = if tool == "read_inbox" {
                "untrusted"
            } else {
                "unlabelled"
            };
            group.bench_function(format!("read of {kib} KiB, {label}"), |b| {
                b.iter(|| runtime.block_on(task.handle(guard_calls::read(tool))));
            });
            let mut n = 0;
            group.bench_function(format!("send_email after {kib} KiB, {label}"), |b| {
                b.iter(|| {
                    n += 1;
                    runtime.block_on(task.handle(guard_calls::send(n)))
                });
            });
        }
        runtime.block_on(gate.shutdown());
    }
    group.finish();
}

criterion_group!(benches, handle);
criterion_main!(benches);
