//! Durable tasks: a task resumed on a new `Gate` over the same store (a
//! restart, or another worker) keeps its rejection cap, its never-twice
//! memory, its repairs, its hopeful-retry memory and its terminal state; a
//! failure is stored with its report and listed for a person; the repair
//! window is one per user for every gate on the store. Each case runs on an
//! SQLite file and on PostgreSQL (when `GATE_POSTGRES_URL` is set).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use toolgate::ledger::{DecisionQuery, LedgerConfig, Storage};
use toolgate::{Action, FailureReason};
use toolgate::{Budget, Gate, Step};

mod support;
use support::crm::{Crm, Tools};
use support::{call, fail_reason};

/// A store that outlives the gates opened on it.
enum Place {
    Sqlite(PathBuf),
    Postgres { url: String, schema: String },
}

impl Place {
    fn sqlite() -> Place {
        let dir = std::env::temp_dir().join(format!("gate-durable-{}", hex(8)));
        std::fs::create_dir_all(&dir).unwrap();
        Place::Sqlite(dir)
    }

    fn postgres() -> Option<Place> {
        let url = std::env::var("GATE_POSTGRES_URL").ok().filter(|u| !u.trim().is_empty());
        let Some(url) = url else {
            eprintln!("skipped: GATE_POSTGRES_URL is not set");
            return None;
        };
        Some(Place::Postgres {
            url,
            schema: format!("gate_test_{}", hex(6)),
        })
    }

    /// Opens the store afresh: a new process would see exactly this.
    async fn open(&self) -> Arc<dyn Storage> {
        match self {
            Place::Sqlite(dir) => toolgate::ledger::open(&format!("sqlite:{}", dir.join("gate.db").display()))
                .await
                .unwrap(),
            Place::Postgres { url, schema } => {
                let config = LedgerConfig {
                    pg_schema: Some(schema.clone()),
                    ..LedgerConfig::default()
                };
                toolgate::ledger::open_with(url, &config).await.unwrap()
            }
        }
    }

    async fn cleanup(self) {
        match self {
            Place::Sqlite(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Place::Postgres { url, schema } => toolgate_ledger::testing::drop_pg_schema(&url, &schema).await.unwrap(),
        }
    }
}

fn hex(bytes: usize) -> String {
    (0..bytes).map(|_| format!("{:02x}", rand_byte())).collect()
}

fn rand_byte() -> u8 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now()) as u8
}

/// A fresh gate (a restarted process) over `place`.
async fn gate(place: &Place, crm: &Arc<Crm>, budget: Budget) -> Gate {
    Gate::builder(Tools(crm.clone()).into_toolbox())
        .storage(place.open().await)
        .budget(budget)
        .seed(3)
        .build()
        .await
        .unwrap()
}

async fn the_rejection_cap_survives_a_restart(place: &Place) {
    let crm = Arc::new(Crm::default());
    let budget = Budget::default().with_max_repairs(4).unwrap();
    {
        let gate = gate(place, &crm, budget).await;
        let mut task = gate.task_with_id("u1", "cap");
        assert!(matches!(
            task.handle(call("c1", "lookup_customer", "{")).await,
            Step::Reject(_)
        ));
        assert!(matches!(
            task.handle(call("c2", "lookup_customer", "{}")).await,
            Step::Reject(_)
        ));
    }
    let gate = gate(place, &crm, budget).await;
    let mut task = gate.task_with_id("u1", "cap");
    let third = task.handle(call("c3", "nope", "{}")).await;
    assert_eq!(fail_reason(&third), Some(FailureReason::RejectionCap), "{third:?}");
    assert_eq!(task.repairs(), 2, "the repairs came back with the task");
}

async fn never_twice_and_hopeful_retries_survive_a_restart(place: &Place) {
    let crm = Arc::new(Crm::default());
    crm.empty_for.lock().unwrap().push("ann@acme.io".into());
    let budget = Budget::default().with_max_repairs(4).unwrap();
    {
        let gate = gate(place, &crm, budget).await;
        let mut task = gate.task_with_id("u1", "memory");
        assert!(matches!(
            task.handle(call("c1", "lookup_customer", r#"{"email": 1}"#)).await,
            Step::Reject(_)
        ));
        let empty = task
            .handle(call("c2", "lookup_customer", r#"{"email": "ann@acme.io"}"#))
            .await;
        assert!(matches!(empty, Step::Retry(_)), "{empty:?}");
    }
    assert_eq!(crm.lookups.load(Ordering::SeqCst), 1);
    let gate = gate(place, &crm, budget).await;
    let mut task = gate.task_with_id("u1", "memory");
    // The unchanged resend of the call that got a correction is refused, not run.
    let resend = task
        .handle(call("c3", "lookup_customer", r#"{"email": "ann@acme.io"}"#))
        .await;
    assert!(matches!(resend, Step::Reject(_)), "{resend:?}");
    assert_eq!(crm.lookups.load(Ordering::SeqCst), 1, "the hopeful retry did not run");
    // And the first rejection, earned again in the same episode, is not actionable.
    let again = task.handle(call("c4", "lookup_customer", r#"{"email": 1}"#)).await;
    assert_eq!(fail_reason(&again), Some(FailureReason::NotActionable), "{again:?}");
}

async fn a_failed_task_stays_failed_and_is_listed_for_a_person(place: &Place) {
    let crm = Arc::new(Crm::default());
    let report = {
        let gate = gate(place, &crm, Budget::default()).await;
        let mut task = gate.task_with_id("u1", "broken");
        let step = task.handle(call("c1", "explode", "{}")).await;
        assert_eq!(fail_reason(&step), Some(FailureReason::Internal), "{step:?}");
        let Step::Fail(report) = step else { unreachable!() };
        report
    };
    let gate = gate(place, &crm, Budget::default()).await;
    let mut task = gate.task_with_id("u1", "broken");
    task.load().await.unwrap();
    assert!(task.is_failed());
    assert_eq!(task.failure().map(|f| f.reason), Some(FailureReason::Internal));
    let later = task
        .handle(call("c2", "lookup_customer", r#"{"email": "a@b.c"}"#))
        .await;
    assert_eq!(fail_reason(&later), Some(FailureReason::TaskFailed), "{later:?}");
    assert!(
        later.model_text().contains("handed to a person"),
        "{}",
        later.model_text()
    );
    assert_eq!(crm.lookups.load(Ordering::SeqCst), 0, "nothing runs in a failed task");

    let failed = gate.store().list_failed_tasks(10).await.unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].failure.as_ref(), Some(&*report));
    let log = gate
        .store()
        .list_decisions(&DecisionQuery {
            task_id: Some("broken".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let reasons: Vec<_> = log.iter().map(|d| (d.action, d.fail_reason)).collect();
    assert_eq!(
        reasons,
        [
            (Action::Fail, Some(FailureReason::Internal)),
            (Action::Fail, Some(FailureReason::TaskFailed))
        ]
    );

    // A person fixes the tool and reopens the task: it runs again, on any worker.
    gate.store().reopen_task("u1", "broken").await.unwrap();
    let mut task = gate.task_with_id("u1", "broken");
    let step = task
        .handle(call("c3", "lookup_customer", r#"{"email": "a@b.c"}"#))
        .await;
    assert!(matches!(step, Step::Return(_)), "{step:?}");
}

async fn two_gates_on_one_store_share_the_users_window(place: &Place) {
    let crm = Arc::new(Crm::default());
    let budget = Budget::default().with_repair_tokens(1_000).unwrap();
    let first = gate(place, &crm, budget).await;
    let second = gate(place, &crm, budget).await;
    let mut heavy = first.task("heavy");
    heavy.record_usage(900, 0).await;
    let step = heavy.handle(call("c1", "lookup_customer", r#"{"email": 1}"#)).await;
    assert!(matches!(step, Step::Reject(_)), "{step:?}");
    let charged = heavy.repair_tokens();
    assert_eq!(second.repair_tokens_used("heavy").await.unwrap(), charged);
    // The other worker's task of the same user finds the window spent.
    let mut again = second.task("heavy");
    again.record_usage(900, 0).await;
    let step = again.handle(call("c2", "lookup_customer", r#"{"email": 2}"#)).await;
    assert_eq!(fail_reason(&step), Some(FailureReason::TokenBudget), "{step:?}");
    // The model's real usage for the repair turn replaces the estimate, for everyone.
    heavy.record_usage(100, 20).await;
    assert_eq!(second.repair_tokens_used("heavy").await.unwrap(), 120);
    assert_eq!(heavy.repair_tokens(), 120);
    let mut later = second.task("heavy");
    later.record_usage(500, 0).await;
    let step = later.handle(call("c3", "lookup_customer", r#"{"email": 3}"#)).await;
    assert!(matches!(step, Step::Reject(_)), "the refund made room: {step:?}");
}

macro_rules! on_every_store {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let place = super::Place::sqlite();
                    super::$case(&place).await;
                    place.cleanup().await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(place) = super::Place::postgres() else { return };
                    super::$case(&place).await;
                    place.cleanup().await;
                }
            )*
        }
    };
}

on_every_store!(
    the_rejection_cap_survives_a_restart,
    never_twice_and_hopeful_retries_survive_a_restart,
    a_failed_task_stays_failed_and_is_listed_for_a_person,
    two_gates_on_one_store_share_the_users_window,
);

/// Rule 1 is about the repair episode: once a call succeeds, the same
/// rejection may be earned again (the cap still bounds the task).
#[tokio::test]
async fn a_success_ends_the_repair_episode() {
    let crm = Arc::new(Crm::default());
    let gate = Gate::builder(Tools(crm).into_toolbox())
        .store("memory:")
        .budget(Budget::default().with_max_repairs(4).unwrap())
        .rejection_cap(3)
        .build()
        .await
        .unwrap();
    let mut task = gate.task("u1");
    let bad = r#"{"email": 1}"#;
    assert!(matches!(
        task.handle(call("c1", "lookup_customer", bad)).await,
        Step::Reject(_)
    ));
    let ok = task
        .handle(call("c2", "lookup_customer", r#"{"email": "a@b.c"}"#))
        .await;
    assert!(matches!(ok, Step::Return(_)), "{ok:?}");
    assert!(matches!(
        task.handle(call("c3", "lookup_customer", bad)).await,
        Step::Reject(_)
    ));
    let third = task.handle(call("c4", "lookup_customer", bad)).await;
    assert_eq!(fail_reason(&third), Some(FailureReason::NotActionable), "{third:?}");
}
