//! Concurrency test (L8, multi-process half): 64 tasks in 4 processes race on
//! one intent key, on SQLite and on PostgreSQL. Exactly one executes; every
//! other task ends with the replayed outcome.
#![cfg(any(feature = "sqlite", feature = "postgres"))]

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{random_suffix, temp_dir};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

const CHILD: &str = env!("CARGO_BIN_EXE_gate-ledger-crash-child");
const PROCESSES: usize = 4;
const TASKS: usize = 16;

/// One round: returns (acquired, replayed, unknown) summed over processes and
/// the number of side-effect lines written.
async fn race(url: &str, schema: &str, label: &str) -> (u32, u32, u32, usize) {
    let dir = temp_dir("race");
    let effects = dir.join("effects.log").display().to_string();
    let go = dir.join("go").display().to_string();
    let mut children = Vec::new();
    for _ in 0..PROCESSES {
        let mut child = Command::new(CHILD)
            .args(["race", url, schema, label, &effects, &TASKS.to_string(), &go])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        // Wait until the process has opened (and migrated) the store, so the
        // race is on the claim, not on start-up.
        let ready = lines.next_line().await.expect("read");
        assert_eq!(ready.as_deref(), Some("ready"));
        children.push((child, lines));
    }
    std::fs::write(&go, b"go").expect("write go file");
    let (mut acquired, mut replayed, mut unknown) = (0, 0, 0);
    for (mut child, mut lines) in children {
        let summary = tokio::time::timeout(Duration::from_secs(120), lines.next_line())
            .await
            .expect("child finished in time")
            .expect("read")
            .unwrap_or_default();
        let status = child.wait().await.expect("wait");
        if !status.success() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err).await;
            }
            panic!("race child failed: {err}");
        }
        for part in summary.split(' ') {
            let (k, v) = part.split_once('=').expect("k=v");
            let v: u32 = v.parse().expect("count");
            match k {
                "acquired" => acquired += v,
                "replay" => replayed += v,
                "unknown" => unknown += v,
                other => panic!("unexpected field {other}"),
            }
        }
    }
    let lines = std::fs::read_to_string(&effects).unwrap_or_default().lines().count();
    let _ = std::fs::remove_dir_all(&dir);
    (acquired, replayed, unknown, lines)
}

async fn three_rounds(url: &str, schema: &str) {
    for round in 0..3 {
        let label = format!("race-{round}-{}", random_suffix());
        let (acquired, replayed, unknown, executions) = race(url, schema, &label).await;
        assert_eq!(executions, 1, "round {round}: executed {executions} times");
        assert_eq!(acquired, 1, "round {round}");
        assert_eq!(unknown, 0, "round {round}");
        assert_eq!(replayed as usize, PROCESSES * TASKS - 1, "round {round}");
    }
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_64_tasks_4_processes_one_execution() {
    let dir = temp_dir("race-db");
    let url = format!("sqlite:{}", dir.join("ledger.db").display());
    three_rounds(&url, "-").await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_64_tasks_4_processes_one_execution() {
    let Some(url) = common::postgres_url("postgres_64_tasks_4_processes_one_execution") else {
        return;
    };
    let schema = format!("gate_test_{}", random_suffix());
    three_rounds(&url, &schema).await;
    toolgate_ledger::testing::drop_pg_schema(&url, &schema)
        .await
        .expect("drop schema");
}
