//! Shared test scaffolding: opens an isolated store of each kind with a manual
//! clock, and cleans it up afterwards. PostgreSQL tests run in their own schema
//! (`gate_test_<random>`) so parallel and repeated runs never see each other.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_ledger::testing::{Store, open_store};
use toolgate_ledger::{ClaimRequest, LedgerConfig, ManualClock, Storage, Timestamp, fingerprint, minted_intent_key};

/// Where every test's clock starts: a fixed, realistic instant.
pub const T0: Timestamp = Timestamp::from_millis(1_767_225_600_000);

/// The kinds of store under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Memory,
    Sqlite,
    Postgres,
}

pub struct Harness {
    pub kind: Kind,
    pub ledger: Arc<dyn Storage>,
    pub clock: Arc<ManualClock>,
    pub store: Store,
    pub url: String,
    pub config: LedgerConfig,
    dir: Option<PathBuf>,
    schema: Option<String>,
}

pub fn random_suffix() -> String {
    hex::encode(rand::random::<[u8; 6]>())
}

/// The PostgreSQL URL, or `None` (with a note on stderr) when it is not set.
pub fn postgres_url(test: &str) -> Option<String> {
    match std::env::var("GATE_POSTGRES_URL") {
        Ok(u) if !u.trim().is_empty() => Some(u),
        _ => {
            eprintln!("skipped {test}: GATE_POSTGRES_URL is not set");
            None
        }
    }
}

/// A fresh temporary directory for an SQLite file.
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gate-ledger-{tag}-{}", random_suffix()));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

impl Harness {
    /// Opens an isolated store of `kind`; `None` when PostgreSQL is not configured.
    pub async fn open(kind: Kind, test: &str) -> Option<Harness> {
        let clock = Arc::new(ManualClock::new(T0));
        let mut config = LedgerConfig {
            clock: clock.clone(),
            ..LedgerConfig::default()
        };
        let (url, dir, schema) = match kind {
            Kind::Memory => ("memory:".to_owned(), None, None),
            Kind::Sqlite => {
                let dir = temp_dir("conf");
                let url = format!("sqlite:{}", dir.join("ledger.db").display());
                (url, Some(dir), None)
            }
            Kind::Postgres => {
                let url = postgres_url(test)?;
                let schema = format!("gate_test_{}", random_suffix());
                config.pg_schema = Some(schema.clone());
                config.max_connections = Some(8);
                (url, None, Some(schema))
            }
        };
        let store = match open_store(&url, &config).await {
            Ok(store) => store,
            Err(e) => {
                // Opening may fail after the schema was created; leave nothing behind.
                #[cfg(feature = "postgres")]
                if let Some(schema) = &schema {
                    let _ = toolgate_ledger::testing::drop_pg_schema(&url, schema).await;
                }
                panic!("open store: {e}");
            }
        };
        Some(Harness {
            kind,
            ledger: store.ledger(),
            clock,
            store,
            url,
            config,
            dir,
            schema,
        })
    }

    /// Closes the store and removes its file or schema.
    pub async fn cleanup(self) {
        self.ledger.close().await;
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        #[cfg(feature = "postgres")]
        if let Some(schema) = &self.schema {
            toolgate_ledger::testing::drop_pg_schema(&self.url, schema)
                .await
                .expect("drop test schema");
        }
    }

    pub fn now(&self) -> Timestamp {
        toolgate_ledger::Clock::now(&*self.clock)
    }
}

/// A claim request for `label` in task `task` with `args`.
pub fn request(user: &str, task: &str, label: &str, tool: &str, args: &Value) -> ClaimRequest {
    ClaimRequest {
        user: user.to_owned(),
        key: minted_intent_key(task, label),
        fingerprint: fingerprint(args),
        task_id: task.to_owned(),
        tool: tool.to_owned(),
        idempotent: false,
        lease: Duration::from_secs(30),
        owner: None,
    }
}

/// The standard non-idempotent charge.
pub fn charge(label: &str) -> ClaimRequest {
    request(
        "user-42",
        "task-7",
        label,
        "charge_card",
        &json!({"customer_id": "cus_1", "amount_cents": 4200}),
    )
}

/// Generates one test per case and store. `sql_only` cases inject failures
/// into a real SQL store and have no memory counterpart. A store whose cargo
/// feature is off has no tests.
#[allow(unused_macros)]
macro_rules! suite {
    (all: [$($case:ident),* $(,)?], sql_only: [$($sql:ident),* $(,)?]) => {
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let h = super::Harness::open(super::Kind::Memory, stringify!($case))
                        .await
                        .expect("memory store");
                    super::$case(&h).await;
                    h.cleanup().await;
                }
            )*
        }
        #[cfg(feature = "sqlite")]
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let h = super::Harness::open(super::Kind::Sqlite, stringify!($case))
                        .await
                        .expect("sqlite store");
                    super::$case(&h).await;
                    h.cleanup().await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $sql() {
                    let h = super::Harness::open(super::Kind::Sqlite, stringify!($sql))
                        .await
                        .expect("sqlite store");
                    super::$sql(&h).await;
                    h.cleanup().await;
                }
            )*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(h) = super::Harness::open(super::Kind::Postgres, stringify!($case)).await
                    else {
                        return;
                    };
                    super::$case(&h).await;
                    h.cleanup().await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $sql() {
                    let Some(h) = super::Harness::open(super::Kind::Postgres, stringify!($sql)).await
                    else {
                        return;
                    };
                    super::$sql(&h).await;
                    h.cleanup().await;
                }
            )*
        }
    };
}
