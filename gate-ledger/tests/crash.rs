//! Crash test (L15–L17, L28): a child process claims, dispatches, "executes"
//! (appends to a side-effect file) and completes, and is killed with SIGKILL at
//! random points, 200 times on SQLite (and 60 on PostgreSQL when configured).
//! After each kill the recovery sweep runs, as a restarted gate would. At the
//! end: no key of the (non-idempotent) tool was executed twice, every record
//! whose call was dispatched but not finished is OutcomeUnknown, every executed
//! call is Succeeded or OutcomeUnknown (never forgotten), and nothing is left
//! in flight.
#![cfg(any(feature = "sqlite", feature = "postgres"))]

mod common;

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use common::temp_dir;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;
use toolgate_ledger::{LedgerConfig, State, Timestamp, minted_intent_key, open_with};

const CHILD: &str = env!("CARGO_BIN_EXE_gate-ledger-crash-child");
const LEASE_MS: u64 = 10_000;
const STEP_DELAY_MS: u64 = 3;

struct Outcome {
    killed: u32,
    /// Records that ended OutcomeUnknown (dispatched, then the child died).
    unknown_records: u32,
    steps_seen: HashMap<String, u32>,
}

/// The progress lines a crash child prints, in order.
const STEPS: [&str; 4] = ["opened", "claimed", "dispatched", "executed"];

/// Runs one child; with `kill_at = Some((step, delay))`, kills it with SIGKILL
/// `delay` after it reported `STEPS[step]` (or lets it end if it never does).
/// Returns whether it was killed and the last step it reported.
async fn run_child(
    url: &str,
    schema: &str,
    label: &str,
    effects: &str,
    kill_at: Option<(usize, Duration)>,
) -> (bool, String) {
    let mut child = Command::new(CHILD)
        .args([
            "crash",
            url,
            schema,
            label,
            effects,
            &STEP_DELAY_MS.to_string(),
            &LEASE_MS.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn child");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut last = String::from("nothing");
    let mut killed = false;
    while let Some(line) = lines.next_line().await.expect("read child") {
        last = line.split(' ').next().unwrap_or_default().to_owned();
        if let Some((step, delay)) = kill_at
            && last == STEPS[step]
        {
            tokio::time::sleep(delay).await;
            // The child may have finished meanwhile; then there is nothing to kill.
            if child.try_wait().expect("try_wait").is_none() {
                child.start_kill().expect("SIGKILL");
                killed = true;
            }
            break;
        }
    }
    let status = child.wait().await.expect("wait");
    if !killed && !status.success() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err).await;
        }
        panic!("child failed: {err}");
    }
    (killed, last)
}

async fn crash_loop(url: &str, schema: Option<&str>, iterations: u32, keys: u32) -> Outcome {
    let dir = temp_dir("crash");
    let effects = dir.join("effects.log").display().to_string();
    let schema_arg = schema.unwrap_or("-");
    let config = LedgerConfig {
        pg_schema: schema.map(str::to_owned),
        ..LedgerConfig::default()
    };
    let ledger = open_with(url, &config).await.expect("open parent ledger");
    let mut rng = StdRng::seed_from_u64(0xC0FFEE);
    // Labels whose child reported a committed completion: that transition
    // must never be lost, whatever happens to later children.
    let mut completed = std::collections::HashSet::new();
    let mut outcome = Outcome {
        killed: 0,
        unknown_records: 0,
        steps_seen: HashMap::new(),
    };
    for _ in 0..iterations {
        let label = format!("crash-{}", rng.random_range(0..keys));
        // A random point: after one of the reported steps, plus up to a little
        // more than the child's pause between steps (so some kills land
        // mid-step, some right before the next one, some after it).
        let kill_at = rng.random_bool(0.85).then(|| {
            (
                rng.random_range(0..STEPS.len()),
                Duration::from_micros(rng.random_range(0..STEP_DELAY_MS * 1_300)),
            )
        });
        let (killed, last) = run_child(url, schema_arg, &label, &effects, kill_at).await;
        outcome.killed += u32::from(killed);
        if last == "completed" {
            completed.insert(label.clone());
        }
        *outcome.steps_seen.entry(last).or_default() += 1;
        // Recovery as a restarted gate does it: every lease of the dead child
        // is expired by now (we look past it instead of sleeping).
        let later = Timestamp::now().saturating_add(Duration::from_millis(LEASE_MS + 1_000));
        ledger.sweep_expired_leases(later, 1_000).await.expect("sweep");
    }

    let log = std::fs::read_to_string(&effects).unwrap_or_default();
    let mut executions: HashMap<String, u32> = HashMap::new();
    for line in log.lines() {
        let key = line.split(' ').next().unwrap_or_default().to_owned();
        *executions.entry(key).or_default() += 1;
    }
    for i in 0..keys {
        let label = format!("crash-{i}");
        let key = minted_intent_key("crash-task", &label);
        let reported_done = completed.contains(&label);
        let n = executions.get(&key).copied().unwrap_or(0);
        assert!(n <= 1, "{label} was executed {n} times");
        let Some(rec) = ledger.get("crash-user", &key).await.expect("get") else {
            assert_eq!(n, 0, "{label} executed without a record");
            assert!(!reported_done, "{label} completed, then its record vanished");
            continue;
        };
        assert!(!rec.state.is_in_flight(), "{label} left in flight: {rec:?}");
        if n == 1 {
            assert!(
                matches!(rec.state, State::Succeeded | State::OutcomeUnknown),
                "{label} executed but recorded as {}",
                rec.state
            );
            assert!(rec.dispatched_at.is_some());
        }
        match rec.state {
            State::Succeeded => assert_eq!(n, 1, "{label} succeeded without executing"),
            _ if reported_done => panic!("{label} completed, then was recorded as {}", rec.state),
            State::OutcomeUnknown => {
                assert!(rec.dispatched_at.is_some());
                outcome.unknown_records += 1;
            }
            State::FailedRetryable => {
                assert_eq!(n, 0, "{label} executed but was released for a re-run");
                assert!(rec.dispatched_at.is_none(), "{label}: dispatched yet released");
            }
            other => panic!("{label} in unexpected state {other}"),
        }
    }
    ledger.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "crash loop: {iterations} runs, {} killed, {} records OutcomeUnknown, last step seen per run: {:?}",
        outcome.killed, outcome.unknown_records, outcome.steps_seen
    );
    outcome
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_survives_200_kills() {
    let dir = temp_dir("crash-db");
    let url = format!("sqlite:{}", dir.join("ledger.db").display());
    let outcome = crash_loop(&url, None, 200, 100).await;
    assert!(outcome.killed > 50, "killed only {}", outcome.killed);
    assert!(
        outcome.unknown_records > 0,
        "no dispatched call was ever left unfinished"
    );
    // The kills must land between the steps, not only before or after them.
    for step in ["claimed", "dispatched", "executed"] {
        assert!(
            outcome.steps_seen.get(step).copied().unwrap_or(0) > 0,
            "no run was killed right after {step}: {:?}",
            outcome.steps_seen
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_survives_60_kills() {
    let Some(url) = common::postgres_url("postgres_survives_60_kills") else {
        return;
    };
    let schema = format!("gate_test_{}", common::random_suffix());
    let outcome = crash_loop(&url, Some(&schema), 60, 30).await;
    assert!(outcome.killed > 10, "killed only {}", outcome.killed);
    toolgate_ledger::testing::drop_pg_schema(&url, &schema)
        .await
        .expect("drop schema");
}
