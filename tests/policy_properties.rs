//! Properties of the policy over random call sequences, driven through the
//! real runtime: whatever the model sends and however the tools fail, gate
//! never retries an unsafe tool whose outcome is unknown, never gives the same
//! rejection twice in a repair episode, never repairs beyond the budget,
//! never runs anything in a task after it failed (resumed or not), and never
//! overdraws a user's repair-token window.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use serde_json::{Value, json};
use toolgate::FailureReason;
use toolgate::{Budget, Gate, Step, ToolCall, ToolError, tools};

#[derive(Default)]
struct Flaky {
    script: std::sync::Mutex<Vec<u8>>,
    runs: AtomicU32,
    /// Every run: the arguments and the failure code it returned.
    log: std::sync::Mutex<Vec<(String, u8)>>,
}

impl Flaky {
    fn outcome(&self, args: String) -> Result<Value, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let next = self.script.lock().unwrap().pop().unwrap_or(0);
        self.log.lock().unwrap().push((args, next % 6));
        match next % 6 {
            0 => Ok(json!({"ok": true})),
            1 => Err(ToolError::Timeout),
            2 => Err(ToolError::ConnectionLost { sent: true }),
            3 => Err(ToolError::Empty),
            4 => Err(ToolError::Unavailable),
            _ => Err(ToolError::Forbidden { body: None }),
        }
    }
}

struct Tools(Arc<Flaky>, Arc<Flaky>);

#[tools]
impl Tools {
    /// Charge (not idempotent).
    #[tool(destructive, external)]
    async fn charge(&self, customer: String, cents: u32) -> Result<Value, ToolError> {
        self.0.outcome(format!("{customer}/{cents}"))
    }

    /// Search (read-only).
    #[tool(read_only, discovery = "charge")]
    async fn search(&self, query: String) -> Result<Value, ToolError> {
        self.1.outcome(query)
    }
}

/// One model action: a call of one of the tools (or of none), with valid or
/// broken arguments.
fn model_call() -> impl Strategy<Value = (u8, u8, u8)> {
    (0u8..4, 0u8..6, 0u8..4)
}

fn render(i: usize, (tool, shape, variant): (u8, u8, u8)) -> ToolCall {
    let name = ["charge", "search", "serach", "refund"][tool as usize];
    let args = match shape {
        0 => json!({"customer": format!("c{variant}"), "cents": 100 + variant as u32}).to_string(),
        1 => json!({"query": format!("q{variant}")}).to_string(),
        2 => json!({"customer": variant, "cents": "lots"}).to_string(),
        3 => "{\"customer\": ".to_owned(),
        4 => json!({"query": format!("q{variant}"), "extra": true}).to_string(),
        _ => json!({}).to_string(),
    };
    ToolCall::new(format!("call_{i}"), name, args)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn unsafe_tools_never_rerun_after_an_unknown_outcome_and_rules_hold(
        calls in prop::collection::vec(model_call(), 1..16),
        failures in prop::collection::vec(0u8..6, 0..16),
        max_repairs in 0u32..=4,
        resumes in prop::collection::vec(any::<bool>(), 16),
    ) {
        runtime().block_on(async {
            let charges = Arc::new(Flaky::default());
            let searches = Arc::new(Flaky::default());
            *charges.script.lock().unwrap() = failures.clone();
            *searches.script.lock().unwrap() = failures.clone();
            let budget = Budget::default().with_max_repairs(max_repairs).unwrap();
            let gate = Gate::builder(Tools(charges.clone(), searches.clone()).into_toolbox())
                .store("memory:").budget(budget).seed(1).build().await.unwrap();
            let mut task = gate.task_with_id("user", "task-1");
            let mut episode = HashSet::new();
            let mut failed = false;
            let runs = || charges.runs.load(Ordering::SeqCst) + searches.runs.load(Ordering::SeqCst);
            for (i, c) in calls.into_iter().enumerate() {
                if resumes[i] {
                    // Another worker (or this one after a restart) picks the task up.
                    task = gate.task_with_id("user", "task-1");
                }
                let before = runs();
                let step = task.handle(render(i, c)).await;
                if failed {
                    // Rule 7: a failed task runs nothing more.
                    let reason = match &step { Step::Fail(r) => Some(r.reason), _ => None };
                    prop_assert_eq!(reason, Some(FailureReason::TaskFailed), "after a Fail: {:?}", step);
                    prop_assert_eq!(runs(), before, "a tool ran in a failed task");
                    continue;
                }
                match &step {
                    Step::Reject(f) => {
                        prop_assert!(episode.insert(f.text.clone()), "the same rejection twice in one episode: {}", f.text);
                    }
                    Step::Return(out) if !out.is_error => episode.clear(),
                    Step::Fail(_) => failed = true,
                    _ => {}
                }
                prop_assert!(task.repairs() <= max_repairs, "{} repairs > budget {max_repairs}", task.repairs());
            }
            // The non-idempotent tool never ran again with arguments whose
            // earlier run timed out (1) or lost the connection after sending (2).
            let log = charges.log.lock().unwrap();
            for (i, (args, code)) in log.iter().enumerate() {
                if *code == 1 || *code == 2 {
                    prop_assert!(log[i + 1..].iter().all(|(later, _)| later != args), "{args} re-ran after an unknown outcome: {log:?}");
                }
            }
            Ok(())
        })?;
    }
}

/// Timeouts and lost connections after sending are never followed by a
/// second run of a non-idempotent tool, even with every budget wide open.
#[test]
fn an_unknown_outcome_never_reruns_an_unsafe_tool() {
    runtime().block_on(async {
        for failure in [1u8, 2] {
            let charges = Arc::new(Flaky::default());
            *charges.script.lock().unwrap() = vec![failure];
            let budget = Budget::default().with_max_repairs(4).unwrap();
            let gate = Gate::builder(Tools(charges.clone(), Arc::default()).into_toolbox())
                .store("memory:")
                .budget(budget)
                .build()
                .await
                .unwrap();
            let mut task = gate.task("user");
            let step = task
                .handle(ToolCall::new("c", "charge", r#"{"customer":"a","cents":1}"#))
                .await;
            assert!(step.is_fail(), "{step:?}");
            let again = task
                .handle(ToolCall::new("c2", "charge", r#"{"customer":"a","cents":1}"#))
                .await;
            assert!(again.is_fail(), "{again:?}");
            assert_eq!(charges.runs.load(Ordering::SeqCst), 1);
        }
    });
}

/// 64 tasks of one user reject at once: the user's window is never overdrawn.
#[test]
fn the_user_window_is_never_overdrawn_under_64_concurrent_tasks() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let limit = 10_000;
        let budget = Budget::default().with_repair_tokens(limit).unwrap();
        let gate = Gate::builder(Tools(Arc::default(), Arc::default()).into_toolbox())
            .store("memory:")
            .budget(budget)
            .build()
            .await
            .unwrap();
        let mut handles = Vec::new();
        for i in 0..64 {
            let gate = gate.clone();
            handles.push(tokio::spawn(async move {
                let mut task = gate.task("same-user");
                task.record_usage(700, 0).await;
                let step = task
                    .handle(ToolCall::new(format!("c{i}"), "search", r#"{"query": 5}"#))
                    .await;
                (matches!(step, Step::Reject(_)), task.repair_tokens())
            }));
        }
        let mut charged = 0;
        let mut rejected = 0;
        for h in handles {
            let (was_rejected, tokens) = h.await.unwrap();
            charged += tokens;
            rejected += u64::from(was_rejected);
        }
        assert!(charged <= limit, "charged {charged} > {limit}");
        assert!(
            rejected > 0 && rejected < 64,
            "some repairs fit, the rest were refused: {rejected}"
        );
    });
}
