//! What `benches/handle.rs` and `benches/handle_ratio.rs` both measure, so
//! that the two report on one call: its arguments, the stores, a gate with
//! a task whose first call is checked, and the floor.

use std::path::Path;
use std::time::{Duration, Instant};

use toolgate::{Gate, ToolCall};

use super::invoice::{Billing, Invoice, total};

/// The call's arguments: an invoice of 5 fields with 3 nested lines.
pub const ARGUMENTS: &str = r#"{"id": "INV-42", "customer_id": "cus_1", "currency": "EUR", "due": "2026-12-31",
 "lines": [{"sku": "A-1", "quantity": 2, "unit_cents": 1250}, {"sku": "B-7", "quantity": 1, "unit_cents": 990},
           {"sku": "C-3", "quantity": 5, "unit_cents": 100}]}"#;

/// Calls per burst: well under the writer's queue (4,096 records).
pub const BURST: u32 = 1_000;

/// The stores measured, by name and URL, the SQLite file in `dir`;
/// PostgreSQL when `GATE_POSTGRES_URL` is set.
pub fn stores(dir: &Path) -> Vec<(&'static str, String)> {
    let mut stores = vec![
        ("memory", "memory:".to_owned()),
        ("sqlite", format!("sqlite:{}", dir.join("gate.db").display())),
    ];
    if let Some(url) = std::env::var("GATE_POSTGRES_URL").ok().filter(|u| !u.is_empty()) {
        stores.push(("postgres", url));
    }
    stores
}

/// A gate on the store at `url` and a task whose first call succeeded:
/// a bench of a call that fails would measure something else.
pub async fn gate_with_task(url: &str) -> (Gate, toolgate::Task) {
    let gate = Gate::builder(Billing.into_toolbox())
        .store(url)
        .build()
        .await
        .expect("a gate");
    let mut task = gate.task("bench-user");
    let first = task.handle(ToolCall::new("c0", "invoice_total", ARGUMENTS)).await;
    assert!(
        matches!(&first, toolgate::Step::Return(out) if !out.is_error),
        "the benchmarked call must succeed: {}",
        first.model_text()
    );
    (gate, task)
}

/// One burst of `calls` valid calls through `task.handle`, and the time
/// they took: the calls are built before the timing, as the floor's text
/// is (what is timed is `task.handle` alone, taking the call and dropping
/// it included), and the writer's queue is written out after it.
pub async fn timed_burst(gate: &Gate, task: &mut toolgate::Task, calls: u64) -> Duration {
    let calls: Vec<ToolCall> = (0..calls)
        .map(|_| ToolCall::new("c1", "invoice_total", ARGUMENTS))
        .collect();
    let started = Instant::now();
    for call in calls {
        std::hint::black_box(task.handle(call).await);
    }
    let spent = started.elapsed();
    gate.shutdown().await;
    spent
}

/// The floor: the same arguments parsed with `serde_json::from_str`, and
/// the function called directly.
pub fn floor_call() -> u64 {
    let invoice: Invoice = serde_json::from_str(std::hint::black_box(ARGUMENTS)).expect("valid");
    std::hint::black_box(total(&invoice))
}
