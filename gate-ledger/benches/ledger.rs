//! Ledger throughput: claim → dispatch → complete cycles per second for each
//! store, with one worker and with 16, next to the bare INSERT + UPDATE +
//! UPDATE of the same rows in the same store. The ratio of the two says how
//! close to the store's own limit the ledger runs (DESIGN.md §5: ratios
//! measured side by side, never a bare time).
//!
//! PostgreSQL is measured when `GATE_POSTGRES_URL` is set.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gate_ledger::{Claim, ClaimRequest, Ledger, LedgerConfig, RawPool, Store, Timestamp, open_store};
use serde_json::json;

const WORKERS: u64 = 16;

/// Unique keys across iterations, workers and runs.
struct Keys {
    run: String,
    next: AtomicU64,
}

impl Keys {
    fn new() -> Self {
        Keys {
            run: hex::encode(rand::random::<[u8; 6]>()),
            next: AtomicU64::new(0),
        }
    }
    fn next(&self) -> String {
        format!("bench-{}-{:016x}", self.run, self.next.fetch_add(1, Ordering::Relaxed))
    }
}

fn request(key: String) -> ClaimRequest {
    ClaimRequest {
        user: "bench-user".into(),
        key,
        fingerprint: "f".repeat(64),
        task_id: "bench-task".into(),
        tool: "charge_card".into(),
        idempotent: false,
        lease: Duration::from_secs(30),
    }
}

async fn ledger_cycle(l: &dyn Ledger, keys: &Keys) {
    let req = request(keys.next());
    if let Ok(Claim::Acquired(lease)) = l.claim(&req).await
        && let Ok(lease) = l.dispatch(&lease).await
    {
        let _ = l.complete(&lease, json!({"charge": "ch_1"})).await;
    }
}

const INSERT: &str = "INSERT INTO gate_intents (user_id, intent_key, fingerprint, task_id, tool, \
    idempotent, state, attempt, owner, lease_expires_at, claimed_at, dispatched_at, finished_at, \
    expires_at, outcome, outcome_is_error, error, resolution, resolution_note, resolved_at, \
    updated_at) VALUES ($1, $2, $3, $4, $5, 0, 'claimed', 1, $6, $7, $8, NULL, NULL, NULL, NULL, \
    NULL, NULL, NULL, NULL, NULL, $8)";
const DISPATCH: &str = "UPDATE gate_intents SET state = 'dispatched', dispatched_at = $3, \
    lease_expires_at = $4, updated_at = $3 WHERE user_id = $1 AND intent_key = $2";
const COMPLETE: &str = "UPDATE gate_intents SET state = 'succeeded', finished_at = $3, \
    expires_at = $4, outcome = $5, outcome_is_error = 0, lease_expires_at = NULL, \
    updated_at = $3 WHERE user_id = $1 AND intent_key = $2";

fn sqlite(sql: &str) -> String {
    sql.replace('$', "?")
}

/// SQLite admits one writer per file; the ledger queues a process's writers
/// on a mutex instead of letting them meet in SQLite's sleeping busy handler.
/// The bare runs queue the same way, so both sides measure the store's limit.
static SQLITE_WRITER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The same three writes the ledger makes for one cycle, without its checks.
async fn bare_cycle(raw: &RawPool, keys: &Keys) {
    let key = keys.next();
    let now = Timestamp::now().as_millis();
    let owner = "0123456789abcdef0123456789abcdef";
    let fp = "f".repeat(64);
    let outcome = json!({"charge": "ch_1"}).to_string();
    macro_rules! run {
        ($pool:expr, $fix:expr, $gate:expr) => {{
            let g = $gate;
            let _ = sqlx::query(&$fix(INSERT))
                .bind("bench-user")
                .bind(&key)
                .bind(&fp)
                .bind("bench-task")
                .bind("charge_card")
                .bind(owner)
                .bind(now + 30_000)
                .bind(now)
                .execute($pool)
                .await;
            drop(g);
            let g = $gate;
            let _ = sqlx::query(&$fix(DISPATCH))
                .bind("bench-user")
                .bind(&key)
                .bind(now)
                .bind(now + 30_000)
                .execute($pool)
                .await;
            drop(g);
            let g = $gate;
            let _ = sqlx::query(&$fix(COMPLETE))
                .bind("bench-user")
                .bind(&key)
                .bind(now)
                .bind(now + 86_400_000)
                .bind(&outcome)
                .execute($pool)
                .await;
            drop(g);
        }};
    }
    match raw {
        RawPool::Sqlite(p) => run!(p, sqlite, Some(SQLITE_WRITER.lock().await)),
        RawPool::Postgres(p) => run!(p, str::to_owned, None::<tokio::sync::MutexGuard<'static, ()>>),
    }
}

/// A bare row: state, attempt, outcome.
type BareRow = (String, i64, Option<String>);

/// A bare in-memory map guarded like the memory store.
#[derive(Default)]
struct BareMemory(Mutex<HashMap<String, BareRow>>);

impl BareMemory {
    fn cycle(&self, keys: &Keys) {
        let key = keys.next();
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        g.insert(key.clone(), ("claimed".into(), 1, None));
        drop(g);
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = g.get_mut(&key) {
            r.0 = "dispatched".into();
        }
        drop(g);
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = g.get_mut(&key) {
            r.0 = "succeeded".into();
            r.2 = Some(json!({"charge": "ch_1"}).to_string());
        }
    }
}

struct Target {
    name: &'static str,
    store: Store,
    cleanup: Option<(String, String)>,
    dir: Option<std::path::PathBuf>,
}

fn targets(rt: &tokio::runtime::Runtime) -> Vec<Target> {
    let mut out = Vec::new();
    let config = LedgerConfig {
        max_connections: Some(WORKERS as u32),
        ..LedgerConfig::default()
    };
    if let Ok(s) = rt.block_on(open_store("memory:", &config)) {
        out.push(Target {
            name: "memory",
            store: s,
            cleanup: None,
            dir: None,
        });
    }
    let dir = std::env::temp_dir().join(format!("gate-ledger-bench-{}", Keys::new().run));
    if std::fs::create_dir_all(&dir).is_ok() {
        let url = format!("sqlite:{}", dir.join("bench.db").display());
        match rt.block_on(open_store(&url, &config)) {
            Ok(s) => out.push(Target {
                name: "sqlite",
                store: s,
                cleanup: None,
                dir: Some(dir),
            }),
            Err(e) => eprintln!("sqlite bench skipped: {e}"),
        }
    }
    match std::env::var("GATE_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => {
            let schema = format!("gate_bench_{}", Keys::new().run);
            let pg = LedgerConfig {
                pg_schema: Some(schema.clone()),
                ..config
            };
            match rt.block_on(open_store(&url, &pg)) {
                Ok(s) => out.push(Target {
                    name: "postgres",
                    store: s,
                    cleanup: Some((url, schema)),
                    dir: None,
                }),
                Err(e) => eprintln!("postgres bench skipped: {e}"),
            }
        }
        _ => eprintln!("postgres bench skipped: GATE_POSTGRES_URL is not set"),
    }
    out
}

fn bench(c: &mut Criterion) {
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("no runtime: {e}");
            return;
        }
    };
    for t in targets(&rt) {
        let mut g = c.benchmark_group(format!("ledger/{}", t.name));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        let keys = Arc::new(Keys::new());
        let ledger = t.store.ledger();

        g.throughput(Throughput::Elements(1));
        g.bench_function("ledger_1_worker", |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let (l, k) = (ledger.clone(), keys.clone());
                async move {
                    let start = Instant::now();
                    for _ in 0..iters {
                        ledger_cycle(&*l, &k).await;
                    }
                    start.elapsed()
                }
            })
        });
        g.bench_function("bare_1_worker", |b| {
            let bare = Arc::new(BareMemory::default());
            let raw = t.store.raw().cloned();
            b.to_async(&rt).iter_custom(|iters| {
                let (k, raw, bare) = (keys.clone(), raw.clone(), bare.clone());
                async move {
                    let start = Instant::now();
                    for _ in 0..iters {
                        match &raw {
                            Some(r) => bare_cycle(r, &k).await,
                            None => bare.cycle(&k),
                        }
                    }
                    start.elapsed()
                }
            })
        });

        g.throughput(Throughput::Elements(WORKERS));
        g.bench_function("ledger_16_workers", |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let (l, k) = (ledger.clone(), keys.clone());
                async move {
                    let start = Instant::now();
                    let mut joins = Vec::new();
                    for _ in 0..WORKERS {
                        let (l, k) = (l.clone(), k.clone());
                        joins.push(tokio::spawn(async move {
                            for _ in 0..iters {
                                ledger_cycle(&*l, &k).await;
                            }
                        }));
                    }
                    for j in joins {
                        let _ = j.await;
                    }
                    start.elapsed()
                }
            })
        });
        g.bench_function("bare_16_workers", |b| {
            let bare = Arc::new(BareMemory::default());
            let raw = t.store.raw().cloned();
            b.to_async(&rt).iter_custom(|iters| {
                let (k, raw, bare) = (keys.clone(), raw.clone(), bare.clone());
                async move {
                    let start = Instant::now();
                    let mut joins = Vec::new();
                    for _ in 0..WORKERS {
                        let (k, raw, bare) = (k.clone(), raw.clone(), bare.clone());
                        joins.push(tokio::spawn(async move {
                            for _ in 0..iters {
                                match &raw {
                                    Some(r) => bare_cycle(r, &k).await,
                                    None => bare.cycle(&k),
                                }
                            }
                        }));
                    }
                    for j in joins {
                        let _ = j.await;
                    }
                    start.elapsed()
                }
            })
        });
        g.finish();

        rt.block_on(ledger.close());
        if let Some((url, schema)) = &t.cleanup {
            let _ = rt.block_on(gate_ledger::drop_pg_schema(url, schema));
        }
        if let Some(dir) = &t.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
