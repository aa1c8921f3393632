//! Ledger throughput: claim → dispatch → complete cycles per second for each
//! store, with one worker and with 16, next to the bare INSERT + UPDATE +
//! UPDATE of the same rows in the same store. The ratio of the two says how
//! close to the store's own limit the ledger runs (ratios measured side by
//! side, never a bare time). Ledger and bare cycles are
//! interleaved within each run (see `paired`), so the two figures of a pair
//! were measured under the same conditions.
//!
//! A second group prices a decision: what a repair writes now (one
//! transaction reserving its tokens in the user's window, storing the task's
//! state and the decision record; one more settling the estimate with the
//! provider's usage) next to what a decision wrote before task state lived in
//! the store, and still writes for a plain success: one decision record.
//!
//! PostgreSQL is measured when `GATE_POSTGRES_URL` is set.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use toolgate_budget::TokenLimit;
use toolgate_ledger::testing::{RawPool, Store, open_store};
use toolgate_ledger::{
    Action, Claim, ClaimRequest, DecisionRecord, Ledger, LedgerConfig, Storage, TaskRecord, Timestamp,
};

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
        owner: None,
    }
}

async fn ledger_cycle(l: &dyn Ledger, keys: &Keys) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let req = request(keys.next());
    let r = match l.claim(&req).await {
        Ok(Claim::Acquired(lease)) => match l.dispatch(&lease).await {
            Ok(lease) => l.complete(&lease, json!({"charge": "ch_1"})).await.map(|_| ()),
            Err(e) => Err(e),
        },
        Ok(other) => {
            eprintln!("unexpected claim answer {other:?}");
            Ok(())
        }
        Err(e) => Err(e),
    };
    if let Err(e) = r
        && !SAID.swap(true, Ordering::Relaxed)
    {
        eprintln!("ledger cycle failed: {e}");
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

/// A failed bare write would make the bare side look fast for nothing; say so
/// (once) instead of hiding it.
fn report<T>(r: Result<T, sqlx::Error>) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if let Err(e) = r
        && !SAID.swap(true, Ordering::Relaxed)
    {
        eprintln!("bare write failed: {e}");
    }
}

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
            report(
                sqlx::query(&$fix(INSERT))
                    .bind("bench-user")
                    .bind(&key)
                    .bind(&fp)
                    .bind("bench-task")
                    .bind("charge_card")
                    .bind(owner)
                    .bind(now + 30_000)
                    .bind(now)
                    .execute($pool)
                    .await,
            );
            drop(g);
            let g = $gate;
            report(
                sqlx::query(&$fix(DISPATCH))
                    .bind("bench-user")
                    .bind(&key)
                    .bind(now)
                    .bind(now + 30_000)
                    .execute($pool)
                    .await,
            );
            drop(g);
            let g = $gate;
            report(
                sqlx::query(&$fix(COMPLETE))
                    .bind("bench-user")
                    .bind(&key)
                    .bind(now)
                    .bind(now + 86_400_000)
                    .bind(&outcome)
                    .execute($pool)
                    .await,
            );
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

/// Which half of a paired run a benchmark reports.
#[derive(Clone, Copy)]
enum Side {
    Ledger,
    Bare,
}

/// Every paired round: (store, workers, cycles per worker, ledger phase wall
/// time, bare phase wall time). Criterion reports each benchmark from its own
/// time window; these rounds compare the two sides under the same conditions,
/// and their median is immune to the occasional multi-second fsync stall that
/// a shared disk produces.
static ROUNDS: Mutex<Vec<Round>> = Mutex::new(Vec::new());

/// One paired round, see [`ROUNDS`].
type Round = (&'static str, u64, u64, Duration, Duration);

fn record_round(store: &'static str, workers: u64, cycles: u64, ledger: Duration, bare: Duration) {
    ROUNDS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((store, workers, cycles, ledger, bare));
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Prints, per worker count, the median over rounds of each side's cycles per
/// second and of the per-round ratio ledger/bare.
fn print_pairs(store: &'static str) {
    let g = ROUNDS.lock().unwrap_or_else(|e| e.into_inner());
    for workers in [1, WORKERS] {
        let rounds: Vec<&Round> = g.iter().filter(|r| r.0 == store && r.1 == workers).collect();
        let rate = |cycles: u64, d: Duration| (cycles * workers) as f64 / d.as_secs_f64().max(1e-9);
        let ledger = median(rounds.iter().map(|r| rate(r.2, r.3)).collect());
        let bare = median(rounds.iter().map(|r| rate(r.2, r.4)).collect());
        let ratio = median(rounds.iter().map(|r| rate(r.2, r.3) / rate(r.2, r.4)).collect());
        let cycles: u64 = rounds.iter().map(|r| r.2 * workers).sum();
        println!(
            "paired {store} workers={workers}: median ledger {ledger:.0} cycles/s, bare {bare:.0} cycles/s, \
             ledger/bare {ratio:.2} ({} rounds, {cycles} cycles per side)",
            rounds.len()
        );
    }
}

/// Everything one benchmark needs, cheap to clone into workers.
#[derive(Clone)]
struct Env {
    store: &'static str,
    ledger: Arc<dyn Ledger>,
    raw: Option<RawPool>,
    bare: Arc<BareMemory>,
    keys: Arc<Keys>,
}

impl Env {
    async fn bare_cycle(&self) {
        match &self.raw {
            Some(r) => bare_cycle(r, &self.keys).await,
            None => self.bare.cycle(&self.keys),
        }
    }
}

/// Cycles per worker in one phase of a paired run.
const PHASE: u64 = 8;

/// Runs `workers` tasks doing `n` cycles each of one side; returns the wall time.
async fn phase(env: &Env, n: u64, workers: u64, side: Side) -> Duration {
    let t = Instant::now();
    let mut joins = Vec::new();
    for _ in 0..workers {
        let env = env.clone();
        joins.push(tokio::spawn(async move {
            for _ in 0..n {
                match side {
                    Side::Ledger => ledger_cycle(&*env.ledger, &env.keys).await,
                    Side::Bare => env.bare_cycle().await,
                }
            }
        }));
    }
    for j in joins {
        let _ = j.await;
    }
    t.elapsed()
}

/// `iters` cycles per worker of each side, in alternating phases of up to
/// [`PHASE`] cycles per worker (alternating which side goes first), timing
/// each phase's wall time. Interleaving puts both sides under the same
/// conditions, so a burst of fsync latency or of load from other processes
/// hits them alike and the ratio stays honest. Returns the reported side's
/// total wall time.
async fn paired(env: Env, iters: u64, workers: u64, side: Side) -> Duration {
    let (mut ledger_time, mut bare_time) = (Duration::ZERO, Duration::ZERO);
    let (mut done, mut round) = (0u64, 0u64);
    while done < iters {
        let n = (iters - done).min(PHASE);
        let order = if round % 2 == 0 {
            [Side::Ledger, Side::Bare]
        } else {
            [Side::Bare, Side::Ledger]
        };
        let (mut l, mut b) = (Duration::ZERO, Duration::ZERO);
        for s in order {
            let d = phase(&env, n, workers, s).await;
            match s {
                Side::Ledger => l = d,
                Side::Bare => b = d,
            }
        }
        record_round(env.store, workers, n, l, b);
        ledger_time += l;
        bare_time += b;
        done += n;
        round += 1;
    }
    match side {
        Side::Ledger => ledger_time,
        Side::Bare => bare_time,
    }
}

/// Runs `body` once per store, in a benchmark group `{prefix}/{store}`, and
/// closes and removes each store afterwards.
fn per_store(
    c: &mut Criterion,
    prefix: &str,
    mut body: impl FnMut(&mut BenchmarkGroup<'_, WallTime>, &Target, &tokio::runtime::Runtime),
) {
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("no runtime: {e}");
            return;
        }
    };
    for t in targets(&rt) {
        let mut g = c.benchmark_group(format!("{prefix}/{}", t.name));
        // fsync-bound stores vary a lot from one commit to the next; they get a
        // longer window so the medians mean something.
        let window = if t.name == "memory" { 2 } else { 4 };
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(window));
        body(&mut g, &t, &rt);
        g.finish();
        rt.block_on(t.store.ledger().close());
        if let Some((url, schema)) = &t.cleanup {
            let _ = rt.block_on(toolgate_ledger::testing::drop_pg_schema(url, schema));
        }
        if let Some(dir) = &t.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn bench(c: &mut Criterion) {
    per_store(c, "ledger", |g, t, rt| {
        let env = Env {
            store: t.name,
            ledger: t.store.ledger(),
            raw: t.store.raw().cloned(),
            bare: Arc::new(BareMemory::default()),
            keys: Arc::new(Keys::new()),
        };
        for (workers, label) in [(1u64, "1_worker"), (WORKERS, "16_workers")] {
            g.throughput(Throughput::Elements(workers));
            for (side, name) in [(Side::Ledger, "ledger"), (Side::Bare, "bare")] {
                g.bench_function(format!("{name}_{label}"), |b| {
                    b.to_async(rt)
                        .iter_custom(|iters| paired(env.clone(), iters, workers, side))
                });
            }
        }
        print_pairs(t.name);
    });
}

fn decision(task: &str) -> DecisionRecord {
    let at = Timestamp::now();
    DecisionRecord {
        id: toolgate_ledger::DecisionId::at(at),
        at,
        task_id: task.into(),
        user: "bench-user".into(),
        call_id: "call_1".into(),
        tool: "lookup_customer".into(),
        class: None,
        action: Action::Return,
        fail_reason: None,
        attempt: 1,
        attempts_used: 0,
        repair_tokens: 0,
        latency_added_ms: 0,
        message_hash: "0".repeat(64),
        intent_key: None,
    }
}

/// What a plain success writes: one decision record.
async fn record_cycle(store: &dyn Storage) {
    if let Err(e) = store.append_decision(decision("bench-task")).await {
        eprintln!("decision record failed: {e}");
    }
}

/// What a repair writes: the decision with its reservation and the task's
/// state, then the settlement of the estimate with the real usage.
async fn repair_cycle(store: &dyn Storage, keys: &Keys, limit: &TokenLimit) {
    let result: Result<(), toolgate_ledger::LedgerError> = async {
        let mut task = TaskRecord::new("bench-user", keys.next());
        task.writer = keys.next();
        let mut tx = store.begin().await?;
        let reservation = tx.reserve_tokens("bench-user", limit, 1_000).await?;
        task.state.rejections = 1;
        task.state.pending_tokens.extend(reservation.ok());
        let revision = tx.save_task(&task).await?;
        tx.append_decision(&decision(&task.task_id)).await?;
        tx.commit().await?;
        let pending = std::mem::take(&mut task.state.pending_tokens);
        task.revision = revision;
        let mut tx = store.begin().await?;
        tx.settle_tokens("bench-user", limit, &pending, 1_200).await?;
        tx.save_task(&task).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = result {
        eprintln!("repair writes failed: {e}");
    }
}

/// Paired rounds of repairs and records: (store, repairs, records) wall times.
static DECISION_ROUNDS: Mutex<Vec<(&'static str, u64, Duration, Duration)>> = Mutex::new(Vec::new());

async fn paired_decisions(
    store: Arc<dyn Storage>,
    name: &'static str,
    keys: Arc<Keys>,
    iters: u64,
    repair: bool,
) -> Duration {
    let limit = TokenLimit::new(1_000_000_000_000, Duration::from_secs(3600)).unwrap_or_default();
    let (mut repairs, mut records) = (Duration::ZERO, Duration::ZERO);
    let mut done = 0;
    while done < iters {
        let n = (iters - done).min(PHASE);
        let t = Instant::now();
        for _ in 0..n {
            repair_cycle(&*store, &keys, &limit).await;
        }
        let r = t.elapsed();
        let t = Instant::now();
        for _ in 0..n {
            record_cycle(&*store).await;
        }
        let d = t.elapsed();
        DECISION_ROUNDS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((name, n, r, d));
        repairs += r;
        records += d;
        done += n;
    }
    if repair { repairs } else { records }
}

fn print_decisions(store: &'static str) {
    let g = DECISION_ROUNDS.lock().unwrap_or_else(|e| e.into_inner());
    let rounds: Vec<_> = g.iter().filter(|r| r.0 == store).collect();
    let per = |n: u64, d: Duration| d.as_secs_f64() * 1e6 / n as f64;
    let repair = median(rounds.iter().map(|r| per(r.1, r.2)).collect());
    let record = median(rounds.iter().map(|r| per(r.1, r.3)).collect());
    let ratio = median(
        rounds
            .iter()
            .map(|r| r.2.as_secs_f64() / r.3.as_secs_f64().max(1e-12))
            .collect(),
    );
    println!(
        "paired {store} decisions: median repair {repair:.0} µs, decision record {record:.0} µs, \
         repair/record {ratio:.2} ({} rounds)",
        rounds.len()
    );
}

fn decisions(c: &mut Criterion) {
    per_store(c, "decision", |g, t, rt| {
        let store = t.store.ledger();
        let keys = Arc::new(Keys::new());
        for (repair, name) in [(true, "repair"), (false, "record")] {
            g.bench_function(name, |b| {
                b.to_async(rt)
                    .iter_custom(|iters| paired_decisions(store.clone(), t.name, keys.clone(), iters, repair))
            });
        }
        print_decisions(t.name);
    });
}

criterion_group!(benches, bench, decisions);
criterion_main!(benches);
