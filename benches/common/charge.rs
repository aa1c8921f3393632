//! The side-effecting call `benches/side_effects.rs` and
//! `benches/peer_agent_effects.rs` both measure: a charge, each to a new
//! customer (so each is a new intent), through a tool that answers at once,
//! and the spreading of a run's calls over concurrent workers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate::{Gate, Step, ToolCall, tools};

/// The toolbox: one destructive tool, a fake provider that answers at once.
pub struct Payments;

#[tools]
impl Payments {
    /// Charge a customer.
    #[tool(destructive)]
    fn charge_card(&self, customer_id: String, amount_cents: u64) -> Value {
        json!({"charge": format!("ch_{customer_id}"), "amount_cents": amount_cents})
    }
}

/// Distinct numbers across every call of the run, so every charge goes to a
/// new customer (and every bare commit writes a new row).
pub static NEXT_CUSTOMER: AtomicU64 = AtomicU64::new(0);

/// A charge of 4200 to a new customer, arguments as the model sends them.
pub fn charge() -> ToolCall {
    let n = NEXT_CUSTOMER.fetch_add(1, Ordering::Relaxed);
    let args = format!(r#"{{"customer_id": "cus_{n}", "amount_cents": 4200}}"#);
    ToolCall::new(format!("c{n}"), "charge_card", args)
}

/// One charge through `gate`, in a task of its own, checked to have run.
pub async fn side_effect(gate: &Gate) {
    let step = gate.task("bench-user").handle(charge()).await;
    assert!(
        matches!(step, Step::Return(ref out) if !out.is_error),
        "{}",
        step.model_text()
    );
}

/// `iters` calls of `one` spread over `workers` concurrent workers; the wall time.
pub async fn spread<F, Fut>(iters: u64, workers: u64, one: F) -> Duration
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let one = Arc::new(one);
    let started = Instant::now();
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let one = one.clone();
            let share = iters / workers + u64::from(w < iters % workers);
            tokio::spawn(async move {
                for _ in 0..share {
                    one().await;
                }
            })
        })
        .collect();
    for h in handles {
        h.await.expect("a worker");
    }
    started.elapsed()
}
