//! What a side effect costs: `task.handle` on a side-effecting call (a
//! charge, each to a new customer, so each is a new intent) next to one bare
//! commit per call on the same store, one INSERT in its own transaction. A
//! side effect makes two commits (its claim with its dispatch before the
//! tool runs; its outcome with the task's state and the decision record
//! after), so about 2× the bare commit is the floor a durable ledger can
//! reach. On PostgreSQL also with 16 workers at once, which is where many
//! workers on one store meet. Both sides run in the same group; read the
//! ratio. SQLite always; PostgreSQL when `GATE_POSTGRES_URL` is set.

use std::sync::atomic::Ordering;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::Gate;
use toolgate::ledger::LedgerConfig;
use toolgate_ledger::testing::RawPool;

#[path = "common/charge.rs"]
mod charge;
use charge::{NEXT_CUSTOMER, Payments, side_effect, spread};

struct Store {
    name: &'static str,
    gate: Gate,
    raw: RawPool,
}

fn stores(runtime: &tokio::runtime::Runtime) -> Vec<Store> {
    let dir = std::env::temp_dir().join(format!("gate-bench-effects-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let mut urls = vec![("sqlite", format!("sqlite:{}", dir.join("gate.db").display()))];
    if let Some(url) = std::env::var("GATE_POSTGRES_URL").ok().filter(|u| !u.is_empty()) {
        urls.push(("postgres", url));
    }
    urls.into_iter()
        .map(|(name, url)| {
            runtime.block_on(async {
                let config = LedgerConfig {
                    pg_schema: (name == "postgres").then(|| format!("gate_bench_effects_{}", std::process::id())),
                    max_connections: Some(20),
                    ..LedgerConfig::default()
                };
                let store = toolgate_ledger::testing::open_store(&url, &config)
                    .await
                    .expect("a store");
                let raw = store.raw().cloned().expect("an SQL store");
                raw.execute("CREATE TABLE IF NOT EXISTS bench_commits (id TEXT PRIMARY KEY, body TEXT)")
                    .await
                    .expect("a scratch table");
                let gate = Gate::builder(Payments.into_toolbox())
                    .storage(store.ledger())
                    .build()
                    .await
                    .expect("a gate");
                Store { name, gate, raw }
            })
        })
        .collect()
}

/// One bare commit: an INSERT in its own transaction.
async fn bare_commit(raw: &RawPool) {
    let n = NEXT_CUSTOMER.fetch_add(1, Ordering::Relaxed);
    let sql = format!("INSERT INTO bench_commits (id, body) VALUES ('row-{n}', 'a charge of 4200 to cus_{n}')");
    raw.execute(&sql).await.expect("a commit");
}

fn side_effects(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    for store in stores(&runtime) {
        let workers: &[u64] = if store.name == "postgres" { &[1, 16] } else { &[1] };
        for &n in workers {
            let mut group = c.benchmark_group(format!("side-effecting call, {}, {n} worker(s)", store.name));
            group.sample_size(20).measurement_time(Duration::from_secs(8));
            let raw = store.raw.clone();
            group.bench_function("one bare commit", |b| {
                b.iter_custom(|iters| {
                    let raw = raw.clone();
                    runtime.block_on(spread(iters, n, move || {
                        let raw = raw.clone();
                        async move { bare_commit(&raw).await }
                    }))
                })
            });
            let gate = store.gate.clone();
            group.bench_function("task.handle", |b| {
                b.iter_custom(|iters| {
                    let gate = gate.clone();
                    runtime.block_on(spread(iters, n, move || {
                        let gate = gate.clone();
                        async move { side_effect(&gate).await }
                    }))
                })
            });
            group.finish();
        }
        if store.name == "postgres"
            && let Some(url) = std::env::var("GATE_POSTGRES_URL").ok()
        {
            let schema = format!("gate_bench_effects_{}", std::process::id());
            runtime
                .block_on(toolgate_ledger::testing::drop_pg_schema(&url, &schema))
                .expect("drop the schema");
        }
    }
}

criterion_group!(benches, side_effects);
criterion_main!(benches);
