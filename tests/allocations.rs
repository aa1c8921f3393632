//! What a valid read-only call allocates, counted with a counting global
//! allocator: beside the tool's own argument parsing, the gate's work on the
//! fast path is a small, fixed number of allocations (the decision record's
//! strings, the step the model reads), the same whatever the size of the
//! arguments, with no copy of the call's text and no hashing of it.

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use toolgate::{Gate, Step, ToolCall};

mod support;
use support::invoice::{Billing, Invoice, total};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The gate's own allocations per call, at most: what it allocates beyond
/// the tool's parsing of its arguments. Measured at 4 when this was
/// written (the decision record's call id, the output's text, the
/// prepared call (its arguments, then its future), the shared call: the
/// record's id is 16 bytes inline; the output's id and tool are
/// the call's own, moved; the record's task id, user and tool are the
/// task's and the toolbox's, shared). It was 27 before the fast path's work
/// on copies, 13 while the decision id was copied into the record and the
/// result's text grown through `fmt::Display`, 12 while the memory store's
/// append was a boxed future holding the record, 11 while the output copied
/// the call's id and tool, 9 while each record copied the task's id and
/// user, 7 while it copied the tool's name, 6 while the prepared call
/// was a boxed closure returning a boxed future, and 5 while the decision
/// id was a string.
const GATE_ALLOCATIONS_PER_CALL: u64 = 4;

/// Calls counted per measurement.
const CALLS: usize = 200;

fn invoice_arguments(lines: usize) -> String {
    let lines: Vec<String> = (0..lines)
        .map(|n| format!(r#"{{"sku": "SKU-{n}", "quantity": {}, "unit_cents": 1250}}"#, n % 7 + 1))
        .collect();
    format!(
        r#"{{"id": "INV-42", "customer_id": "cus_1", "currency": "EUR", "due": "2026-12-31", "lines": [{}]}}"#,
        lines.join(", ")
    )
}

fn allocations_of(run: impl FnOnce()) -> u64 {
    let region = Region::new(GLOBAL);
    run();
    let stats = region.change();
    (stats.allocations + stats.reallocations) as u64
}

/// Allocations per call of `task.handle` beyond parsing the same arguments.
async fn gate_allocations(gate: &Gate, arguments: &str) -> u64 {
    let mut task = gate.task("u1");
    let warm = task.handle(ToolCall::new("c0", "invoice_total", arguments)).await;
    assert!(matches!(warm, Step::Return(ref out) if !out.is_error), "{warm:?}");
    let calls: Vec<ToolCall> = (0..CALLS)
        .map(|_| ToolCall::new("c1", "invoice_total", arguments))
        .collect();
    let region = Region::new(GLOBAL);
    for call in calls {
        let step = task.handle(call).await;
        std::hint::black_box(step);
    }
    let stats = region.change();
    let handled = (stats.allocations + stats.reallocations) as u64;
    let parsed = allocations_of(|| {
        for _ in 0..CALLS {
            let invoice: Invoice = serde_json::from_str(arguments).expect("valid arguments");
            std::hint::black_box(total(&invoice));
        }
    });
    (handled - parsed) / CALLS as u64
}

#[tokio::test(flavor = "current_thread")]
async fn a_valid_read_only_call_allocates_a_fixed_few_beside_its_arguments() {
    let gate = Gate::builder(Billing.into_toolbox())
        .store("memory:")
        .build()
        .await
        .expect("a gate");
    let small = gate_allocations(&gate, &invoice_arguments(3)).await;
    let large = gate_allocations(&gate, &invoice_arguments(40)).await;
    assert!(
        small <= GATE_ALLOCATIONS_PER_CALL,
        "{small} allocations per call ({large} with 40 lines)"
    );
    assert_eq!(small, large, "the gate's allocations do not grow with the arguments");
}
