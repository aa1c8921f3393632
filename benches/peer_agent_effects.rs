//! A side-effecting call through gate against the same call through
//! agent-effects 0.2, the Rust library a user would otherwise put around a
//! charge: both record the effect before acting and its outcome after, on
//! SQLite (`synchronous = FULL`, WAL, in both) and on PostgreSQL.
//!
//! The work is the same on both sides: a charge, each to a new customer (so
//! each is a new intent, or a new effect), sent to a fake provider that
//! answers at once, so what is timed is the runtime and its store. gate's
//! side is `task.handle` of a `#[tool(destructive)]` call, arguments as the
//! model sends them (JSON text); agent-effects' side is
//! `runtime.effect(..).kind(IrreversibleWrite).input(..).run(..)`.
//!
//! agent-effects' stores are on sqlx 0.9 and gate's on sqlx 0.8, which link
//! different SQLite libraries, so the two cannot be in one binary: the peer
//! is `benches/peers/agent-effects`, a process of its own, built here
//! (release profile) unless `GATE_PEER_AGENT_EFFECTS` names its binary. It
//! stays up for the whole cell and runs a burst whenever it is asked, so it
//! is as warm as gate's side, which runs in this process. Each round runs a
//! burst of each, back to back (which goes first alternates), and the figure
//! is the median of the rounds, in calls per second, with the median ratio.
//! Pools: PostgreSQL 16 connections on both sides (gate's default; the
//! peer's is 10), SQLite each library's default (gate 4, agent-effects 8;
//! one writer at a time either way). Every cell has stores of its own.
//!
//! `GATE_POSTGRES_URL=postgres://… cargo bench --features postgres --bench peer_agent_effects`
//! (SQLite only without the variable).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use toolgate::Gate;
use toolgate::ledger::LedgerConfig;

#[path = "common/charge.rs"]
mod charge;
#[path = "common/quantile.rs"]
mod quantile;
use charge::{Payments, side_effect, spread};
use quantile::quantile;

/// Rounds per cell; each gives one figure per side.
const ROUNDS: usize = 7;
/// Calls per burst, per side.
const BURST: u64 = 800;
/// Worker counts: one agent alone, and many on one store.
const WORKERS: [u64; 2] = [1, 16];

/// `calls` charges through gate, spread over `workers` concurrent tasks; the wall time.
async fn gate_burst(gate: &Gate, workers: u64, calls: u64) -> Duration {
    let gate = gate.clone();
    spread(calls, workers, move || {
        let gate = gate.clone();
        async move { side_effect(&gate).await }
    })
    .await
}

/// The peer's binary: `GATE_PEER_AGENT_EFFECTS`, or built from
/// `benches/peers/agent-effects` into `target/peers`.
fn peer_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("GATE_PEER_AGENT_EFFECTS") {
        return PathBuf::from(path);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let target = target.join("peers");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(root.join("benches/peers/agent-effects/Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building benches/peers/agent-effects failed");
    target.join("release/peer-agent-effects")
}

/// The peer process of one cell, waiting for bursts.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    fn start(binary: &Path, store: &str, workers: u64, schema: Option<&str>) -> Peer {
        let mut command = Command::new(binary);
        command
            .args([
                "--store",
                store,
                "--workers",
                &workers.to_string(),
                "--calls",
                &BURST.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if let Some(schema) = schema {
            command.args(["--schema", schema]);
        }
        let mut child = command.spawn().expect("the peer starts");
        let stdin = child.stdin.take().expect("its stdin");
        let stdout = BufReader::new(child.stdout.take().expect("its stdout"));
        Peer { child, stdin, stdout }
    }

    /// One burst in the peer; the wall time it reports for its calls alone.
    fn burst(&mut self) -> Duration {
        writeln!(self.stdin, "run").expect("the peer reads");
        self.stdin.flush().expect("the peer reads");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("the peer answers");
        let seconds = line
            .split_whitespace()
            .find_map(|field| field.strip_prefix("seconds="))
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("the peer answered {line:?}"));
        Duration::from_secs_f64(seconds)
    }

    fn stop(mut self) {
        drop(self.stdin);
        let status = self.child.wait().expect("the peer exits");
        assert!(status.success(), "the peer failed: {status}");
    }
}

fn calls_per_second(spent: Duration) -> f64 {
    BURST as f64 / spent.as_secs_f64()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let peer = peer_binary();
    let dir = std::env::temp_dir().join(format!("gate-bench-peer-effects-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let postgres = std::env::var("GATE_POSTGRES_URL").ok().filter(|u| !u.is_empty());
    let mut stores = vec!["sqlite"];
    if postgres.is_some() {
        stores.push("postgres");
    }
    println!(
        "side-effecting call, gate against agent-effects 0.2.0: median of {ROUNDS} interleaved bursts of {BURST} calls each"
    );
    for store in stores {
        for workers in WORKERS {
            let cell = format!("{store}_{workers}_{}", std::process::id());
            let (gate_url, peer_url, gate_schema, peer_schema) = match (store, &postgres) {
                ("postgres", Some(url)) => (
                    url.clone(),
                    url.clone(),
                    Some(format!("gate_bench_peer_{cell}")),
                    Some(format!("ae_bench_peer_{cell}")),
                ),
                _ => (
                    format!("sqlite:{}", dir.join(format!("gate-{cell}.db")).display()),
                    format!("sqlite:{}", dir.join(format!("agent-effects-{cell}.db")).display()),
                    None,
                    None,
                ),
            };
            let config = LedgerConfig {
                pg_schema: gate_schema.clone(),
                ..LedgerConfig::default()
            };
            let gate = runtime.block_on(async {
                let storage = toolgate::ledger::open_with(&gate_url, &config)
                    .await
                    .expect("gate's store");
                Gate::builder(Payments.into_toolbox())
                    .storage(storage)
                    .build()
                    .await
                    .expect("a gate")
            });
            let mut peer = Peer::start(&peer, &peer_url, workers, peer_schema.as_deref());
            // One burst each before the rounds: caches, pools and prepared statements warm.
            runtime.block_on(gate_burst(&gate, workers, BURST));
            peer.burst();
            let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..ROUNDS {
                let (spent, peer_spent) = if round % 2 == 0 {
                    let spent = runtime.block_on(gate_burst(&gate, workers, BURST));
                    (spent, peer.burst())
                } else {
                    let peer_spent = peer.burst();
                    (runtime.block_on(gate_burst(&gate, workers, BURST)), peer_spent)
                };
                ours.push(calls_per_second(spent));
                theirs.push(calls_per_second(peer_spent));
                ratios.push(calls_per_second(spent) / calls_per_second(peer_spent));
            }
            peer.stop();
            runtime.block_on(gate.shutdown());
            for values in [&mut ours, &mut theirs, &mut ratios] {
                values.sort_by(f64::total_cmp);
            }
            println!(
                "{store:>8}, {workers:>2} worker(s): gate {:>6.0} calls/s, agent-effects {:>6.0} calls/s, \
                 gate / agent-effects {:.2}x (rounds {:.2}-{:.2}x)",
                quantile(&ours, 0.5),
                quantile(&theirs, 0.5),
                quantile(&ratios, 0.5),
                ratios[0],
                ratios[ratios.len() - 1],
            );
            if let Some(url) = &postgres {
                for schema in [gate_schema, peer_schema].into_iter().flatten() {
                    runtime
                        .block_on(toolgate_ledger::testing::drop_pg_schema(url, &schema))
                        .expect("drop the schema");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
