//! `gate-load`: one worker of a many-worker deployment, for load and fault
//! tests of the shared store.
//!
//! Several of these processes run against one store (PostgreSQL, or an
//! SQLite file) to show what the guarantees are worth when they are shared:
//!
//! * `repairs`: concurrent tasks of one user earn rejections, each costing
//!   the same number of repair tokens, against the user's one window;
//! * `charges`: concurrent tasks charge customers through a side-effecting
//!   tool that appends every execution to a shared effects file, so a second
//!   execution of any intent is visible;
//! * `calls`: one kind of call, N times in a row, to count what each costs
//!   the store (run it under `strace` with N and with 0 and divide).
//!
//! A worker opens the store, prints `ready`, waits until the `--go` file
//! exists (so every worker starts at once), runs, and prints one JSON line
//! per task, then `done`.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use serde_json::{Value, json};
use toolgate::ledger::LedgerConfig;
use toolgate::{Budget, Ctx, Gate, Step, ToolCall, ToolError, tools};

/// One worker against a shared store.
#[derive(Parser)]
#[command(name = "gate-load", version)]
struct Args {
    /// The store: `sqlite:FILE` or `postgres://…`.
    #[arg(long)]
    store: String,
    /// PostgreSQL schema holding the tables (for isolated test runs).
    #[arg(long)]
    pg_schema: Option<String>,
    /// SQLite busy timeout (how long a writer waits for the file lock), in ms.
    #[arg(long, default_value_t = 30_000)]
    busy_timeout_ms: u64,
    /// How long store writes are retried while the store fails, in ms.
    #[arg(long, default_value_t = 10_000)]
    patience_ms: u64,
    /// Concurrent tasks in this process.
    #[arg(long, default_value_t = 16)]
    tasks: usize,
    /// Start when this file exists.
    #[arg(long)]
    go: PathBuf,
    #[command(subcommand)]
    work: Work,
}

#[derive(Subcommand)]
enum Work {
    /// Tasks of one user earn rejections against one repair-token window.
    Repairs {
        /// The user every task runs for.
        #[arg(long)]
        user: String,
        /// Repair tokens the user may spend per hour.
        #[arg(long)]
        limit: u64,
        /// Distinguishes this process's task ids.
        #[arg(long)]
        worker: String,
    },
    /// Tasks charge the customers whose index modulo `processes` is
    /// `process`, one task and one intent per customer.
    Charges {
        /// How many customers in all.
        #[arg(long)]
        customers: usize,
        /// This process's share.
        #[arg(long)]
        process: usize,
        /// How many processes share the customers.
        #[arg(long)]
        processes: usize,
        /// The file every execution is appended to.
        #[arg(long)]
        effects: PathBuf,
    },
    /// `count` calls of one kind, one after the other.
    Calls {
        /// `read` (a valid read-only call), `repair` (a rejection, then the
        /// model's usage for the repair turn) or `charge` (a side effect).
        #[arg(long)]
        kind: CallKind,
        /// How many.
        #[arg(long)]
        count: usize,
        /// The file every charge is appended to.
        #[arg(long)]
        effects: PathBuf,
    },
}

/// What `calls` repeats.
#[derive(Clone, Copy, clap::ValueEnum)]
enum CallKind {
    Read,
    Repair,
    Charge,
}

/// The tools a worker serves.
struct Tools {
    effects: Option<PathBuf>,
}

#[tools]
impl Tools {
    /// Look up a customer by email.
    #[tool(read_only)]
    fn lookup_customer(&self, email: String) -> Value {
        json!({"email": email})
    }

    /// Charge a customer; every execution is appended to the effects file.
    #[tool(destructive, external)]
    fn charge_card(
        &self,
        #[ctx] ctx: &Ctx,
        #[arg(key)] customer_id: String,
        #[arg(key)] amount_cents: u64,
    ) -> Result<Value, ToolError> {
        let Some(path) = &self.effects else {
            return Err(ToolError::internal("no effects file"));
        };
        append(path, &format!("{} {customer_id}\n", ctx.intent_key()))
            .map_err(|e| ToolError::internal(format!("effects file: {e}")))?;
        Ok(json!({"charge": format!("ch_{customer_id}"), "amount_cents": amount_cents}))
    }
}

/// One line per execution: `O_APPEND` makes each short write atomic across
/// processes, and `sync_data` makes it survive whatever follows.
fn append(path: &Path, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(line.as_bytes())?;
    f.sync_data()
}

fn outcome(step: &Step) -> Value {
    match step {
        Step::Return(out) if out.replayed => json!({"outcome": "replay"}),
        Step::Return(out) => json!({"outcome": "return", "is_error": out.is_error}),
        Step::Reject(_) => json!({"outcome": "reject"}),
        Step::Retry(_) => json!({"outcome": "retry"}),
        Step::Fail(report) => json!({"outcome": "fail", "reason": report.reason}),
        // A step the load's tools cannot earn, named by its action.
        other => json!({"outcome": other.action()}),
    }
}

async fn repairs(gate: Gate, tasks: usize, user: String, worker: String) {
    let mut handles = Vec::new();
    for t in 0..tasks {
        let gate = gate.clone();
        let (user, worker) = (user.clone(), worker.clone());
        handles.push(tokio::spawn(async move {
            let mut task = gate.task_with_id(&user, format!("repairs-{worker}-{t}"));
            // The model's context: what every repair replays.
            task.record_usage(1_000, 0).await;
            let mut steps = Vec::new();
            for (n, email) in ["1", "2"].iter().enumerate() {
                let call = ToolCall::new(format!("c{n}"), "lookup_customer", format!(r#"{{"email": {email}}}"#));
                let before = task.repair_tokens();
                let step = task.handle(call).await;
                let mut line = outcome(&step);
                line["tokens"] = json!(task.repair_tokens() - before);
                steps.push(line);
                if step.is_fail() {
                    break;
                }
            }
            json!({"task": task.id(), "steps": steps})
        }));
    }
    report(handles).await;
}

async fn charges(gate: Gate, tasks: usize, customers: usize, process: usize, processes: usize) {
    let mine: Vec<usize> = (0..customers).filter(|i| i % processes.max(1) == process).collect();
    let queue = Arc::new(std::sync::Mutex::new(mine));
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let (gate, queue) = (gate.clone(), queue.clone());
        handles.push(tokio::spawn(async move {
            let mut lines = Vec::new();
            loop {
                let next = queue.lock().map(|mut q| q.pop()).unwrap_or(None);
                let Some(i) = next else { break };
                let customer = format!("cus_{i:04}");
                let mut task = gate.task_with_id("payer", format!("charge-{customer}"));
                task.intent(&format!("pay {customer}"));
                let args = json!({"customer_id": customer, "amount_cents": 100}).to_string();
                let step = task.handle(ToolCall::new("c1", "charge_card", args)).await;
                let mut line = outcome(&step);
                line["customer"] = json!(customer);
                line["key"] = json!(task.intent_key_for("charge_card"));
                lines.push(line);
            }
            json!({"charges": lines})
        }));
    }
    report(handles).await;
}

async fn calls(gate: Gate, kind: CallKind, count: usize) {
    let mut reader = gate.task("reader");
    let mut outcomes: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for i in 0..count {
        let step = match kind {
            CallKind::Read => {
                let args = json!({"email": format!("a{i}@b.c")}).to_string();
                reader
                    .handle(ToolCall::new(format!("c{i}"), "lookup_customer", args))
                    .await
            }
            CallKind::Repair => {
                // A task and a user of its own each time, so no cap or window gets in the way.
                let mut task = gate.task(format!("repairer-{i}"));
                task.record_usage(1_000, 0).await;
                let step = task
                    .handle(ToolCall::new("c1", "lookup_customer", r#"{"email": 1}"#))
                    .await;
                task.record_usage(1_100, 40).await;
                step
            }
            CallKind::Charge => {
                let mut task = gate.task("payer");
                let args = json!({"customer_id": format!("cus_{i}"), "amount_cents": 100}).to_string();
                task.handle(ToolCall::new("c1", "charge_card", args)).await
            }
        };
        *outcomes.entry(outcome(&step).to_string()).or_default() += 1;
    }
    println!("{}", json!({"calls": count, "outcomes": outcomes}));
    println!("done");
}

async fn report(handles: Vec<tokio::task::JoinHandle<Value>>) {
    let mut out = std::io::stdout().lock();
    for h in handles {
        let line = match h.await {
            Ok(v) => v,
            Err(e) => json!({"error": e.to_string()}),
        };
        // A closed pipe means the parent stopped listening; nothing is lost by stopping too.
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
    let _ = writeln!(out, "done");
}

async fn wait_for(go: &Path) {
    while !go.exists() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn run(args: Args) -> Result<(), String> {
    let config = LedgerConfig {
        busy_timeout: Duration::from_millis(args.busy_timeout_ms),
        pg_schema: args.pg_schema.clone(),
        ..LedgerConfig::default()
    };
    let store = toolgate::ledger::open_with(&args.store, &config)
        .await
        .map_err(|e| format!("cannot open {}: {e}", args.store))?;
    let (effects, limit) = match &args.work {
        Work::Repairs { limit, .. } => (None, *limit),
        Work::Charges { effects, .. } | Work::Calls { effects, .. } => {
            (Some(effects.clone()), Budget::default().repair_tokens())
        }
    };
    let budget = Budget::default().with_repair_tokens(limit).map_err(|e| e.to_string())?;
    let gate = Gate::builder(Tools { effects }.into_toolbox())
        .storage(store)
        .budget(budget)
        .store_patience(Duration::from_millis(args.patience_ms))
        .build()
        .await
        .map_err(|e| e.to_string())?;
    println!("ready");
    wait_for(&args.go).await;
    let flush = gate.clone();
    match args.work {
        Work::Repairs { user, worker, .. } => repairs(gate, args.tasks, user, worker).await,
        Work::Charges {
            customers,
            process,
            processes,
            ..
        } => charges(gate, args.tasks, customers, process, processes).await,
        Work::Calls { kind, count, .. } => calls(gate, kind, count).await,
    }
    flush.shutdown().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gate-load: {e}");
            ExitCode::from(2)
        }
    }
}
