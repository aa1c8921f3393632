//! Many workers on one store, as `gate-load` processes: 4 × 16 concurrent
//! tasks on PostgreSQL, 2 × 16 on an SQLite file.
//!
//! * One user's repair-token window is one window for every process: the
//!   tokens charged never exceed the limit, and the repairs granted are
//!   exactly what it allows.
//! * While the store fails under them (every client connection terminated
//!   every 40 ms on PostgreSQL; the SQLite file held by another
//!   writer), nothing runs twice, no success is reported without its outcome
//!   recorded, every worker finishes, and the service resumes once the faults
//!   stop: running every intent again replays it instead of charging again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};
use toolgate::Action;
use toolgate::ledger::{DecisionQuery, LedgerConfig, State, Storage};
use toolgate_ledger::testing::RawPool;

const WORKER: &str = env!("CARGO_BIN_EXE_gate-load");
const TASKS: usize = 16;
/// The user every repair task runs for.
const USER: &str = "shared-user";
/// How long a worker may take before the test calls it hung.
const NO_HANG: Duration = Duration::from_secs(120);

/// One test at a time: each starts up to 4 worker processes on a 2-core
/// machine, and a fault test measures recovery, which CPU starvation from a
/// neighbouring test would distort.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn token() -> String {
    format!("{:016x}", rand_u64())
}

fn rand_u64() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// Where the workers meet.
#[derive(Clone)]
enum Store {
    Sqlite { dir: PathBuf },
    Postgres { url: String, schema: String, app: String },
}

impl Store {
    fn sqlite() -> Store {
        let dir = std::env::temp_dir().join(format!("gate-workers-{}", token()));
        std::fs::create_dir_all(&dir).unwrap();
        Store::Sqlite { dir }
    }

    fn postgres() -> Option<Store> {
        let url = std::env::var("GATE_POSTGRES_URL").ok().filter(|u| !u.trim().is_empty());
        let Some(url) = url else {
            eprintln!("skipped: GATE_POSTGRES_URL is not set");
            return None;
        };
        let t = token();
        Some(Store::Postgres {
            url,
            schema: format!("gate_test_{t}"),
            app: format!("gate-load-{t}"),
        })
    }

    /// The URL the workers connect with: on PostgreSQL their connections are
    /// named, so the fault injector can find them (and only them).
    fn worker_url(&self) -> String {
        match self {
            Store::Sqlite { dir } => format!("sqlite:{}", dir.join("gate.db").display()),
            Store::Postgres { url, app, .. } => {
                let sep = if url.contains('?') { '&' } else { '?' };
                format!("{url}{sep}application_name={app}")
            }
        }
    }

    fn config(&self, max_connections: Option<u32>) -> LedgerConfig {
        LedgerConfig {
            pg_schema: match self {
                Store::Postgres { schema, .. } => Some(schema.clone()),
                Store::Sqlite { .. } => None,
            },
            max_connections,
            ..LedgerConfig::default()
        }
    }

    fn base_url(&self) -> String {
        match self {
            Store::Sqlite { .. } => self.worker_url(),
            Store::Postgres { url, .. } => url.clone(),
        }
    }

    /// The test's own view of the store.
    async fn open(&self) -> Arc<dyn Storage> {
        toolgate::ledger::open_with(&self.base_url(), &self.config(None))
            .await
            .unwrap()
    }

    async fn cleanup(self) {
        match self {
            Store::Sqlite { dir } => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Store::Postgres { url, schema, .. } => {
                toolgate_ledger::testing::drop_pg_schema(&url, &schema).await.unwrap()
            }
        }
    }
}

struct Worker {
    child: Child,
    lines: tokio::io::Lines<BufReader<ChildStdout>>,
}

/// Starts `processes` workers with `args(process)` and waits until each has
/// opened the store; they all begin when `go` is created.
async fn spawn(
    store: &Store,
    busy_timeout_ms: u64,
    patience_ms: u64,
    go: &Path,
    args: impl Fn(usize) -> Vec<String>,
    processes: usize,
) -> Vec<Worker> {
    // The test opens the store first so the schema exists before workers race.
    store.open().await.close().await;
    let mut workers = Vec::new();
    for p in 0..processes {
        let mut cmd = Command::new(WORKER);
        cmd.args(["--store", &store.worker_url(), "--tasks", &TASKS.to_string()])
            .args(["--patience-ms", &patience_ms.to_string()])
            .args(["--busy-timeout-ms", &busy_timeout_ms.to_string()])
            .args(["--go", &go.display().to_string()]);
        if let Store::Postgres { schema, .. } = store {
            cmd.args(["--pg-schema", schema]);
        }
        let mut child = cmd
            .args(args(p))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn gate-load");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let ready = tokio::time::timeout(NO_HANG, lines.next_line())
            .await
            .expect("ready in time")
            .expect("read");
        assert_eq!(ready.as_deref(), Some("ready"), "worker {p} did not start");
        workers.push(Worker { child, lines });
    }
    workers
}

/// Every JSON line the workers print, once all said `done`.
async fn collect(workers: Vec<Worker>) -> Vec<Value> {
    let mut out = Vec::new();
    for (p, mut w) in workers.into_iter().enumerate() {
        loop {
            let line = tokio::time::timeout(NO_HANG, w.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("worker {p} hung"))
                .expect("read");
            match line.as_deref() {
                Some("done") => break,
                Some(l) => out.push(serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"))),
                None => {
                    let mut err = String::new();
                    if let Some(mut e) = w.child.stderr.take() {
                        let _ = e.read_to_string(&mut err).await;
                    }
                    panic!("worker {p} exited early: {err}");
                }
            }
        }
        let status = w.child.wait().await.expect("wait");
        assert!(status.success(), "worker {p}: {status}");
    }
    out
}

/// How often the PostgreSQL fault injector terminates every worker
/// connection. A transaction needs a new connection and a few round trips,
/// which on a loaded 2-core machine can take longer than 5 ms: killing more
/// often than that leaves a store no patience can get through, which is an
/// outage, not the dropped connections this test is about.
const KILL_EVERY: Duration = Duration::from_millis(40);

/// Breaks the store until stopped: on PostgreSQL every worker connection is
/// terminated every `every`; on SQLite another writer holds the file's lock
/// most of the time. Returns how many faults it injected.
struct Faults {
    stop: Arc<AtomicBool>,
    injected: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Faults {
    async fn start(store: &Store) -> Faults {
        let stop = Arc::new(AtomicBool::new(false));
        let injected = Arc::new(AtomicU64::new(0));
        let raw = toolgate_ledger::testing::open_store(&store.base_url(), &store.config(Some(1)))
            .await
            .unwrap()
            .raw()
            .cloned()
            .expect("a SQL store");
        let (s, n) = (stop.clone(), injected.clone());
        let task = match store {
            Store::Postgres { app, .. } => {
                let kill = format!(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '{app}'"
                );
                tokio::spawn(async move {
                    while !s.load(Ordering::SeqCst) {
                        if let Ok(killed) = raw.fetch_i64(&kill).await {
                            n.fetch_add(u64::try_from(killed).unwrap_or(0), Ordering::SeqCst);
                        }
                        tokio::time::sleep(KILL_EVERY).await;
                    }
                })
            }
            Store::Sqlite { .. } => tokio::spawn(async move {
                while !s.load(Ordering::SeqCst) {
                    hold_lock(&raw, Duration::from_millis(120)).await;
                    n.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(60)).await;
                }
            }),
        };
        Faults { stop, injected, task }
    }

    async fn stop(self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.unwrap();
        self.injected.load(Ordering::SeqCst)
    }
}

/// Holds SQLite's write lock for `how_long` on the pool's one connection.
async fn hold_lock(raw: &RawPool, how_long: Duration) {
    if raw.execute("BEGIN EXCLUSIVE").await.is_ok() {
        tokio::time::sleep(how_long).await;
        raw.execute("COMMIT").await.expect("release the lock");
    }
}

fn go_file(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("gate-go-{tag}-{}", token()))
}

/// What the repair tasks were told, summed: (rejections, token-budget fails,
/// store-unavailable fails, tokens charged per rejection).
fn repair_outcomes(lines: &[Value]) -> (u64, u64, u64, BTreeSet<u64>) {
    let (mut rejects, mut budget, mut unavailable) = (0, 0, 0);
    let mut costs = BTreeSet::new();
    for task in lines {
        for step in task["steps"].as_array().expect("steps") {
            match (step["outcome"].as_str(), step["reason"].as_str()) {
                (Some("reject"), _) => {
                    rejects += 1;
                    costs.insert(step["tokens"].as_u64().expect("tokens"));
                }
                (Some("fail"), Some("token_budget")) => budget += 1,
                (Some("fail"), Some("ledger_unavailable")) => unavailable += 1,
                other => panic!("unexpected repair outcome {other:?} in {task}"),
            }
        }
    }
    (rejects, budget, unavailable, costs)
}

/// How the workers run: SQLite busy timeout, store patience, and whether
/// the store is broken under them.
#[derive(Clone, Copy)]
struct How {
    busy_timeout_ms: u64,
    patience_ms: u64,
    faults: bool,
}

/// Plain runs: the defaults, no faults.
const CALM: How = How {
    busy_timeout_ms: 30_000,
    patience_ms: 10_000,
    faults: false,
};

/// Starts the workers, breaks the store under them if `how.faults` (once they
/// are all up: opening a store is not what is tested), lets them go and
/// collects what they print. Returns the lines and the faults injected.
async fn run(store: &Store, processes: usize, how: How, args: impl Fn(usize) -> Vec<String>) -> (Vec<Value>, u64) {
    let go = go_file("run");
    let workers = spawn(store, how.busy_timeout_ms, how.patience_ms, &go, args, processes).await;
    let faults = if how.faults {
        Some(Faults::start(store).await)
    } else {
        None
    };
    std::fs::write(&go, b"go").unwrap();
    let lines = collect(workers).await;
    let injected = match faults {
        Some(f) => f.stop().await,
        None => 0,
    };
    let _ = std::fs::remove_file(&go);
    (lines, injected)
}

/// Runs the repairs workload: `processes` × 16 tasks of one user, two
/// rejections each, against a window of `limit` tokens.
async fn run_repairs(store: &Store, processes: usize, limit: u64, how: How) -> (Vec<Value>, u64) {
    let run_id = token();
    run(store, processes, how, |p| {
        vec![
            "repairs".into(),
            "--user".into(),
            USER.into(),
            "--limit".into(),
            limit.to_string(),
            "--worker".into(),
            format!("{run_id}-{p}"),
        ]
    })
    .await
}

/// What a rejection costs: the replayed context (1,000 tokens) plus the
/// estimated rejection text, measured once in a process of its own.
async fn cost_of_one_rejection(store: &Store) -> u64 {
    let probe = match store {
        Store::Sqlite { .. } => Store::sqlite(),
        Store::Postgres { url, .. } => Store::Postgres {
            url: url.clone(),
            schema: format!("gate_test_{}", token()),
            app: format!("gate-load-{}", token()),
        },
    };
    let (lines, _) = run_repairs(&probe, 1, 1_000_000, CALM).await;
    probe.cleanup().await;
    let (_, _, _, costs) = repair_outcomes(&lines);
    assert_eq!(costs.len(), 1, "every rejection costs the same: {costs:?}");
    costs.into_iter().next().unwrap_or(0)
}

async fn one_window_for_every_worker(store: Store, processes: usize) {
    let cost = cost_of_one_rejection(&store).await;
    assert!(cost > 1_000, "a repair replays the context: {cost}");
    // Room for 40 repairs and a bit; 2 per task are asked for, far more.
    let limit = 40 * cost + cost / 2;
    let (lines, _) = run_repairs(&store, processes, limit, CALM).await;
    assert_eq!(lines.len(), processes * TASKS);
    let (rejects, budget_fails, unavailable, costs) = repair_outcomes(&lines);
    assert_eq!(unavailable, 0);
    assert_eq!(costs, BTreeSet::from([cost]));
    assert_eq!(rejects, 40, "exactly what the window allows");
    assert!(
        budget_fails >= (processes * TASKS) as u64 - 20,
        "the others were refused"
    );
    let (used, logged, recorded) = window_and_log(&store, limit).await;
    assert_eq!(used, rejects * cost);
    assert_eq!(logged, used, "the log says what the window holds");
    assert!(used <= limit);
    assert_eq!(
        recorded, rejects,
        "every repair handed out is in the log, and only those"
    );
    store.cleanup().await;
}

/// What the store holds: the user's window, the repair tokens its decision
/// records say were spent, and the rejections among them.
async fn window_and_log(store: &Store, limit: u64) -> (u64, u64, u64) {
    let view = store.open().await;
    let budget = toolgate::Budget::default().with_repair_tokens(limit).unwrap();
    let used = view.repair_tokens_used(USER, &budget.token_limit()).await.unwrap();
    let query = DecisionQuery {
        user: Some(USER.into()),
        ..DecisionQuery::default()
    };
    let log = view.list_decisions(&query).await.unwrap();
    let logged: i64 = log.iter().map(|d| d.repair_tokens).sum();
    let recorded = log.iter().filter(|d| d.action == Action::Reject).count() as u64;
    view.close().await;
    (used, u64::try_from(logged).unwrap_or(0), recorded)
}

/// Runs the charges workload: `processes` × 16 tasks over `customers`
/// customers, one intent each; every execution lands in `effects`.
async fn run_charges(store: &Store, processes: usize, customers: usize, effects: &Path, how: How) -> (Vec<Value>, u64) {
    let (lines, injected) = run(store, processes, how, |p| {
        vec![
            "charges".into(),
            "--customers".into(),
            customers.to_string(),
            "--process".into(),
            p.to_string(),
            "--processes".into(),
            processes.to_string(),
            "--effects".into(),
            effects.display().to_string(),
        ]
    })
    .await;
    let charges = lines
        .iter()
        .flat_map(|l| l["charges"].as_array().cloned().unwrap_or_default())
        .collect();
    (charges, injected)
}

/// Executions per intent key, from the effects file.
fn executions(effects: &Path) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in std::fs::read_to_string(effects).unwrap_or_default().lines() {
        let key = line.split(' ').next().unwrap_or_default().to_owned();
        *out.entry(key).or_default() += 1;
    }
    out
}

const CUSTOMERS: usize = 200;

/// The store fails under `processes` workers while they repair and charge.
/// With patience the runtime sends its writes again until they land, so
/// every charge succeeds; without, calls fail safe (nothing run without a
/// claim, no success without a recorded outcome). Either way nothing runs
/// twice and the service resumes.
async fn the_store_failing_under_the_workers_loses_nothing(
    store: Store,
    processes: usize,
    busy_timeout_ms: u64,
    patience_ms: u64,
) {
    let broken = How {
        busy_timeout_ms,
        patience_ms,
        faults: true,
    };
    let cost = cost_of_one_rejection(&store).await;
    let limit = 40 * cost + cost / 2;
    let effects = std::env::temp_dir().join(format!("gate-effects-{}", token()));

    let (repairs, injected) = run_repairs(&store, processes, limit, broken).await;
    assert!(injected > 0, "the store was broken while the repair workers ran");
    let (first, injected) = run_charges(&store, processes, CUSTOMERS, &effects, broken).await;
    assert!(injected > 0, "the store was broken while the charge workers ran");

    let count = |lines: &[Value]| {
        let mut t: BTreeMap<String, usize> = BTreeMap::new();
        for l in lines {
            *t.entry(format!("{} {}", l["outcome"], l["reason"])).or_default() += 1;
        }
        t
    };
    let tally = count(&first);
    eprintln!("faults injected: {injected}; charges: {tally:?}");
    if patience_ms > 0 {
        assert_eq!(
            tally.get("\"return\" null"),
            Some(&CUSTOMERS),
            "every charge got through: {tally:?}"
        );
    } else {
        assert!(
            tally.keys().any(|k| k.contains("ledger_unavailable")),
            "the faults were felt: {tally:?}"
        );
    }
    // The window: never overdrawn, and what it holds is what the log says was
    // spent. (Without patience a usage report may not reach the store, so a
    // repair's cost may differ from the calm one; the sums still agree.)
    let (rejects_told, _, _, _) = repair_outcomes(&repairs);
    let (used, logged, recorded) = window_and_log(&store, limit).await;
    assert!(used <= limit, "overdrawn: {used} > {limit}");
    assert_eq!(used, logged, "the window and the log were committed together");
    assert!(
        rejects_told <= recorded,
        "a repair was handed out without being recorded"
    );

    // The charges: each intent ran at most once; every success reported was recorded.
    assert_eq!(first.len(), CUSTOMERS);
    let ran = executions(&effects);
    assert!(ran.values().all(|n| *n == 1), "an intent ran twice: {ran:?}");
    let view = store.open().await;
    for line in first.iter().filter(|l| l["outcome"] == "return") {
        let key = line["key"].as_str().expect("key");
        let record = view.get("payer", key).await.unwrap().expect("recorded");
        assert_eq!(record.state, State::Succeeded, "reported as a success: {line}");
        assert!(ran.contains_key(key));
    }
    // Once every worker is gone and their leases have run out, each intent
    // that ran is either recorded as succeeded or waits for a person: none
    // can run again.
    let later = view.now().saturating_add(Duration::from_secs(120));
    view.sweep_expired_leases(later, 10_000).await.unwrap();
    for key in ran.keys() {
        let record = view
            .get("payer", key)
            .await
            .unwrap()
            .expect("an executed intent has a record");
        assert!(
            matches!(record.state, State::Succeeded | State::OutcomeUnknown),
            "{key} is {} after running",
            record.state
        );
    }
    view.close().await;

    // The faults are over: the service resumes, and running every intent
    // again charges nothing twice.
    let calm = CALM;
    let (again, _) = run_charges(&store, processes, CUSTOMERS, &effects, calm).await;
    assert_eq!(again.len(), CUSTOMERS);
    for line in &again {
        assert_ne!(line["reason"], "ledger_unavailable", "the store is back: {line}");
    }
    let ran_again = executions(&effects);
    assert!(
        ran_again.values().all(|n| *n == 1),
        "an intent ran twice: {ran_again:?}"
    );
    let replayed = again.iter().filter(|l| l["outcome"] == "replay").count();
    let succeeded = first.iter().filter(|l| l["outcome"] == "return").count();
    assert!(
        replayed >= succeeded,
        "every recorded success replays: {replayed} < {succeeded}"
    );
    let _ = std::fs::remove_file(&effects);
    store.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_postgres_connections_lose_nothing() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(store) = Store::postgres() else { return };
    the_store_failing_under_the_workers_loses_nothing(store, 4, 30_000, 10_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_postgres_connections_without_patience_fail_safe() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(store) = Store::postgres() else { return };
    the_store_failing_under_the_workers_loses_nothing(store, 4, 30_000, 0).await;
}

// Writers give up on the lock after 50 ms, so the runtime's own retries do the work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_sqlite_file_loses_nothing() {
    let _one = ONE_AT_A_TIME.lock().await;
    the_store_failing_under_the_workers_loses_nothing(Store::sqlite(), 2, 50, 10_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_sqlite_file_without_patience_fails_safe() {
    let _one = ONE_AT_A_TIME.lock().await;
    the_store_failing_under_the_workers_loses_nothing(Store::sqlite(), 2, 50, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_on_postgres_share_one_window() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(store) = Store::postgres() else { return };
    one_window_for_every_worker(store, 4).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_sqlite_share_one_window() {
    let _one = ONE_AT_A_TIME.lock().await;
    one_window_for_every_worker(Store::sqlite(), 2).await;
}
