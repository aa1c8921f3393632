//! What the gate costs per call: `task.handle` on a valid read-only call (an
//! invoice of 5 fields with 3 nested lines), per store, next to the floor:
//! parsing the same arguments with `serde_json::from_str` and calling the
//! function directly. Both run in the same group, so their ratio is what to
//! read, never a bare time. Each store is measured twice: in bursts shorter
//! than the background writer's queue (what a caller waits for) and
//! sustained (where a durable store's writer sets the pace). PostgreSQL is
//! measured when `GATE_POSTGRES_URL` is set.

use std::time::{Duration, Instant};

/// Calls per burst: well under the writer's queue (4,096 records).
const BURST: u64 = 1_000;

use criterion::{Criterion, criterion_group, criterion_main};
use gate::{Gate, ToolCall};

#[path = "../tests/support/invoice.rs"]
mod invoice;
use invoice::{Billing, Invoice, total};

const ARGUMENTS: &str = r#"{"id": "INV-42", "customer_id": "cus_1", "currency": "EUR", "due": "2026-12-31",
 "lines": [{"sku": "A-1", "quantity": 2, "unit_cents": 1250}, {"sku": "B-7", "quantity": 1, "unit_cents": 990},
           {"sku": "C-3", "quantity": 5, "unit_cents": 100}]}"#;

fn stores() -> Vec<(String, String)> {
    let dir = std::env::temp_dir().join(format!("gate-bench-handle-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let mut stores = vec![
        ("memory".to_owned(), "memory:".to_owned()),
        ("sqlite".to_owned(), format!("sqlite:{}", dir.join("gate.db").display())),
    ];
    if let Some(url) = std::env::var("GATE_POSTGRES_URL").ok().filter(|u| !u.is_empty()) {
        stores.push(("postgres".to_owned(), url));
    }
    stores
}

fn handle(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("valid read-only call");
    group.bench_function("floor: serde_json::from_str + the function", |b| {
        b.iter(|| {
            let invoice: Invoice = serde_json::from_str(std::hint::black_box(ARGUMENTS)).expect("valid");
            std::hint::black_box(total(&invoice))
        })
    });
    for (name, url) in stores() {
        let gate = runtime.block_on(async {
            Gate::builder(Billing.into_toolbox())
                .store(&url)
                .build()
                .await
                .expect("a gate")
        });
        let mut task = gate.task("bench-user");
        let first = runtime.block_on(task.handle(ToolCall::new("c0", "invoice_total", ARGUMENTS)));
        assert!(
            matches!(&first, gate::Step::Return(out) if !out.is_error),
            "the benchmarked call must succeed: {}",
            first.model_text()
        );
        // What a caller waits for: bursts shorter than the writer's queue,
        // the queue written out between them, outside the timing. The calls
        // are built before the timing, as the floor's text is: what is timed
        // is `task.handle` alone (taking the call, and dropping it, included).
        group.bench_function(format!("task.handle, {name}, bursts of {BURST}"), |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let mut spent = Duration::ZERO;
                    let mut left = iters;
                    while left > 0 {
                        let burst = left.min(BURST);
                        let calls: Vec<ToolCall> = (0..burst)
                            .map(|_| ToolCall::new("c1", "invoice_total", ARGUMENTS))
                            .collect();
                        let started = Instant::now();
                        for call in calls {
                            std::hint::black_box(task.handle(call).await);
                        }
                        spent += started.elapsed();
                        gate.shutdown().await;
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
}

criterion_group!(benches, handle);
criterion_main!(benches);
