//! N side-effecting calls through agent-effects, timed: the peer's half of
//! gate's `peer_agent_effects` bench.
//!
//! `peer-agent-effects --store sqlite:PATH|postgres://URL --workers W
//! --calls N [--schema NAME]` opens the store, then for every line read on
//! stdin runs a burst of N charges, each under a new key (so each is a new
//! effect), spread over W concurrent workers on one runtime, and prints
//! `calls=N seconds=S` for the burst alone; it exits at the end of stdin. So
//! the process, its pool and its prepared statements stay warm between
//! bursts, as gate's side of the bench does. The charge goes to a fake provider that
//! answers at once, as gate's side of the bench does, so what is timed is
//! the runtime and its store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use agent_effects::{EffectFailure, EffectKind, EffectOutcome, EffectStore, Runtime};
use agent_effects_postgres::PostgresOptions;
use agent_effects_sqlite::SqliteStore;
use serde::Serialize;
use serde_json::{Value, json};

/// What the bench asks for, from the command line.
struct Args {
    store: String,
    workers: u64,
    calls: u64,
    schema: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut store = None;
    let mut workers = 1;
    let mut calls = 1000;
    let mut schema = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--store" => store = Some(value()?),
            "--workers" => workers = value()?.parse().map_err(|e| format!("--workers: {e}"))?,
            "--calls" => calls = value()?.parse().map_err(|e| format!("--calls: {e}"))?,
            "--schema" => schema = Some(value()?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let store = store.ok_or("--store sqlite:PATH or postgres://URL is required")?;
    if workers == 0 {
        return Err("--workers must be at least 1".into());
    }
    Ok(Args {
        store,
        workers,
        calls,
        schema,
    })
}

/// The charge's input, stored by agent-effects with the effect.
#[derive(Serialize)]
struct Charge {
    customer_id: String,
    amount_cents: u64,
}

/// Distinct customers across the run, so every call is a new effect.
static NEXT_CUSTOMER: AtomicU64 = AtomicU64::new(0);

async fn charge<S: EffectStore + 'static>(runtime: &Runtime<S>, run: &str) {
    let n = NEXT_CUSTOMER.fetch_add(1, Ordering::Relaxed);
    let customer_id = format!("cus_{run}_{n}");
    let input = Charge {
        customer_id: customer_id.clone(),
        amount_cents: 4200,
    };
    let outcome =
        runtime
            .effect("payment.charge", &customer_id)
            .kind(EffectKind::IrreversibleWrite)
            .input(&input)
            .run(move |_ctx| {
                let customer_id = customer_id.clone();
                async move {
                    Ok::<Value, EffectFailure>(json!({"charge": format!("ch_{customer_id}"), "amount_cents": 4200}))
                }
            })
            .await
            .expect("the store answers");
    assert!(matches!(outcome, EffectOutcome::Committed(_)), "{outcome:?}");
}

/// Answers every line on stdin with a burst.
async fn serve<S: EffectStore + Clone + 'static>(runtime: Runtime<S>, args: &Args) {
    for line in std::io::stdin().lines() {
        line.expect("stdin reads");
        let seconds = burst(&runtime, args.workers, args.calls).await;
        println!("calls={} seconds={seconds:.6}", args.calls);
    }
}

/// Runs `calls` charges over `workers` tasks; the seconds they took.
async fn burst<S: EffectStore + Clone + 'static>(runtime: &Runtime<S>, workers: u64, calls: u64) -> f64 {
    let run = Arc::new(std::process::id().to_string());
    let started = Instant::now();
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let (runtime, run) = (runtime.clone(), run.clone());
            let share = calls / workers + u64::from(w < calls % workers);
            tokio::spawn(async move {
                for _ in 0..share {
                    charge(&runtime, &run).await;
                }
            })
        })
        .collect();
    for handle in handles {
        handle.await.expect("a worker");
    }
    started.elapsed().as_secs_f64()
}

#[tokio::main(worker_threads = 2)]
async fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("peer-agent-effects: {message}");
            std::process::exit(2);
        }
    };
    if let Some(path) = args.store.strip_prefix("sqlite:") {
        let store = SqliteStore::open(path).await.expect("the SQLite store opens");
        serve(Runtime::new(store), &args).await;
    } else {
        let mut options = PostgresOptions::new().max_connections(16);
        if let Some(schema) = &args.schema {
            options = options.schema(schema);
        }
        let store = options.connect(&args.store).await.expect("the PostgreSQL store opens");
        serve(Runtime::new(store), &args).await;
    }
}
