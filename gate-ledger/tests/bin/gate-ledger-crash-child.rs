//! A worker process for the ledger's crash and concurrency tests.
//!
//! The tests need a real process that holds a lease, writes to the store and
//! can be killed with SIGKILL at any point, so that what survives is exactly
//! what the store committed. "Executing" a tool means appending one line to a
//! side-effect file after `dispatch` returned, so the test can count how often
//! each intent key really ran.
//!
//! Usage:
//!
//! ```text
//! gate-ledger-crash-child crash URL SCHEMA|- LABEL EFFECTS STEP_DELAY_MS LEASE_MS
//! gate-ledger-crash-child race  URL SCHEMA|- LABEL EFFECTS TASKS GO_FILE
//! ```
//!
//! `crash` claims, dispatches, executes and completes one call, pausing
//! `STEP_DELAY_MS` between steps (so a kill lands between them) and printing each
//! step. `race` opens the store, prints `ready`, waits for `GO_FILE` to exist,
//! then races `TASKS` tasks on one key and prints `acquired=N replay=N unknown=N`.
#![forbid(unsafe_code)]

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use toolgate_ledger::{Claim, ClaimRequest, Ledger, LedgerConfig, fingerprint, minted_intent_key};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start a runtime: {e}");
            std::process::exit(2);
        }
    };
    let result = rt.block_on(run(args));
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn arg<'a>(args: &'a [String], i: usize, name: &str) -> Result<&'a str, BoxError> {
    args.get(i)
        .map(String::as_str)
        .ok_or_else(|| format!("missing argument {name}").into())
}

async fn open(url: &str, schema: &str) -> Result<Arc<dyn Ledger>, BoxError> {
    let config = LedgerConfig {
        pg_schema: (schema != "-").then(|| schema.to_owned()),
        max_connections: Some(4),
        ..LedgerConfig::default()
    };
    Ok(toolgate_ledger::open_with(url, &config).await?)
}

fn request(label: &str, lease: Duration) -> ClaimRequest {
    ClaimRequest {
        user: "crash-user".into(),
        key: minted_intent_key("crash-task", label),
        fingerprint: fingerprint(&serde_json::json!({ "label": label })),
        task_id: "crash-task".into(),
        tool: "charge_card".into(),
        idempotent: false,
        lease,
        owner: None,
    }
}

/// Appends one line per execution; `O_APPEND` makes each short write atomic,
/// and `sync_data` makes it survive the kill that may follow.
fn execute(effects: &str, key: &str, attempt: i64) -> Result<(), BoxError> {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(effects)?;
    f.write_all(format!("{key} {attempt} {}\n", std::process::id()).as_bytes())?;
    f.sync_data()?;
    Ok(())
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

async fn run(args: Vec<String>) -> Result<(), BoxError> {
    let mode = arg(&args, 0, "mode")?;
    let url = arg(&args, 1, "URL")?;
    let schema = arg(&args, 2, "SCHEMA")?;
    let label = arg(&args, 3, "LABEL")?;
    let effects = arg(&args, 4, "EFFECTS")?;
    match mode {
        "crash" => {
            let delay = Duration::from_millis(arg(&args, 5, "STEP_DELAY_MS")?.parse()?);
            let lease = Duration::from_millis(arg(&args, 6, "LEASE_MS")?.parse()?);
            let ledger = open(url, schema).await?;
            say("opened");
            let req = request(label, lease);
            match ledger.claim(&req).await? {
                Claim::Acquired(l) => {
                    say(&format!("claimed {}", l.attempt));
                    tokio::time::sleep(delay).await;
                    let l = ledger.dispatch(&l).await?;
                    say("dispatched");
                    tokio::time::sleep(delay).await;
                    execute(effects, &req.key, l.attempt)?;
                    say("executed");
                    tokio::time::sleep(delay).await;
                    ledger.complete(&l, serde_json::json!({ "attempt": l.attempt })).await?;
                    say("completed");
                }
                Claim::Replay { .. } => say("replay"),
                Claim::OutcomeUnknown(_) => say("unknown"),
            }
            Ok(())
        }
        "race" => {
            let tasks: usize = arg(&args, 5, "TASKS")?.parse()?;
            let go = arg(&args, 6, "GO_FILE")?.to_owned();
            let ledger = open(url, schema).await?;
            say("ready");
            while !std::path::Path::new(&go).exists() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let req = Arc::new(request(label, Duration::from_secs(60)));
            let effects = Arc::new(effects.to_owned());
            let mut joins = Vec::new();
            for _ in 0..tasks {
                let (ledger, req, effects) = (ledger.clone(), req.clone(), effects.clone());
                joins.push(tokio::spawn(async move { race_one(&*ledger, &req, &effects).await }));
            }
            let (mut acquired, mut replay, mut unknown) = (0, 0, 0);
            for j in joins {
                match j.await.map_err(|e| format!("task failed: {e}"))?? {
                    RaceEnd::Acquired => acquired += 1,
                    RaceEnd::Replay => replay += 1,
                    RaceEnd::Unknown => unknown += 1,
                }
            }
            say(&format!("acquired={acquired} replay={replay} unknown={unknown}"));
            Ok(())
        }
        other => Err(format!("unknown mode {other:?}").into()),
    }
}

enum RaceEnd {
    Acquired,
    Replay,
    Unknown,
}

/// Claims until the key is either executed by this task or replayed.
async fn race_one(ledger: &dyn Ledger, req: &ClaimRequest, effects: &str) -> Result<RaceEnd, BoxError> {
    loop {
        match ledger.claim(req).await {
            Ok(Claim::Acquired(l)) => {
                let l = ledger.dispatch(&l).await?;
                execute(effects, &req.key, l.attempt)?;
                // Hold the key a moment so the others really see it in flight.
                tokio::time::sleep(Duration::from_millis(20)).await;
                ledger.complete(&l, serde_json::json!("done")).await?;
                return Ok(RaceEnd::Acquired);
            }
            Ok(Claim::Replay { .. }) => return Ok(RaceEnd::Replay),
            Ok(Claim::OutcomeUnknown(_)) => return Ok(RaceEnd::Unknown),
            Err(e) if e.is_in_progress() => tokio::time::sleep(Duration::from_millis(5)).await,
            Err(e) => return Err(e.into()),
        }
    }
}
