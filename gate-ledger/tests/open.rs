//! Opening stores by URL: the accepted forms, the errors for the rest, and an
//! SQLite file that is created on first use and keeps its records across
//! reopening (the schema is migrated once, not again), and a store written by
//! schema version 1 that upgrades without losing its records.

mod common;

use std::time::Duration;

use toolgate_ledger::{StoreKind, open};

#[tokio::test]
async fn memory_url_opens_the_memory_store() {
    let l = open("memory:").await.expect("memory");
    assert_eq!(l.store(), StoreKind::Memory);
    assert_eq!(l.retention(), Duration::from_secs(24 * 3600));
}

#[tokio::test]
async fn unknown_urls_are_refused() {
    for url in ["", "gate.db", "mysql://localhost/x", "redis://localhost"] {
        let e = open(url).await.expect_err(url);
        assert!(e.is_invalid_url(), "{url}: {e}");
    }
}

// Without its feature a store's URL is refused as clearly as an unknown one,
// and the message names the feature to turn on.
#[cfg(not(all(feature = "sqlite", feature = "postgres")))]
#[tokio::test]
async fn urls_of_stores_left_out_name_their_feature() {
    let left_out: &[(&str, &str)] = &[
        #[cfg(not(feature = "sqlite"))]
        ("sqlite:gate.db", "`sqlite` feature"),
        #[cfg(not(feature = "postgres"))]
        ("postgres://root@127.0.0.1/test", "`postgres` feature"),
        #[cfg(not(feature = "postgres"))]
        ("postgresql://root@127.0.0.1/test", "`postgres` feature"),
    ];
    for (url, feature) in left_out {
        let e = open(url).await.expect_err(url);
        assert!(e.is_invalid_url(), "{url}: {e}");
        assert!(e.to_string().contains(feature), "{url}: {e}");
        assert!(e.to_string().contains(&format!("`{url}`")), "{url}: {e}");
    }
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn unreachable_postgres_is_unavailable() {
    use toolgate_ledger::{LedgerConfig, open_with};
    let config = LedgerConfig {
        busy_timeout: Duration::from_secs(1),
        ..LedgerConfig::default()
    };
    // Port 1 on loopback refuses connections at once.
    let e = open_with("postgres://nobody@127.0.0.1:1/none", &config)
        .await
        .expect_err("nothing listens on port 1");
    assert!(e.is_unavailable(), "{e}");
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn bad_schema_names_are_refused() {
    use toolgate_ledger::{LedgerConfig, open_with};
    let Some(url) = common::postgres_url("bad_schema_names_are_refused") else {
        return;
    };
    let config = LedgerConfig {
        pg_schema: Some("x; DROP TABLE y".into()),
        ..LedgerConfig::default()
    };
    let e = open_with(&url, &config).await.expect_err("bad name");
    assert!(e.is_invalid_input(), "{e}");
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_file_is_created_and_survives_reopening() {
    use common::{charge, temp_dir};
    use toolgate_ledger::testing::open_store;
    use toolgate_ledger::{Claim, LedgerConfig, SCHEMA_VERSION, State};
    let dir = temp_dir("open");
    let path = dir.join("nested-name.db");
    assert!(!path.exists());
    let url = format!("sqlite://{}", path.display());
    let r = charge("survives reopening");
    {
        let store = open_store(&url, &LedgerConfig::default()).await.expect("create");
        assert!(path.exists(), "created on first use");
        let l = store.ledger();
        let Claim::Acquired(lease) = l.claim(&r).await.expect("claim") else {
            panic!("fresh key must be acquired");
        };
        l.dispatch(&lease).await.expect("dispatch");
        l.close().await;
    }
    let l = open(&url).await.expect("reopen");
    assert_eq!(l.store(), StoreKind::Sqlite);
    let rec = l.get(&r.user, &r.key).await.expect("get").expect("kept");
    assert_eq!(rec.state, State::Dispatched);
    assert!(rec.dispatched_at.is_some());
    l.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(SCHEMA_VERSION, 4);
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_schema_is_isolated() {
    use common::{charge, random_suffix};
    use toolgate_ledger::{Claim, LedgerConfig, open_with};
    let Some(url) = common::postgres_url("postgres_schema_is_isolated") else {
        return;
    };
    let (a, b) = (
        format!("gate_test_{}", random_suffix()),
        format!("gate_test_{}", random_suffix()),
    );
    let open_in = |schema: &str| LedgerConfig {
        pg_schema: Some(schema.to_owned()),
        ..LedgerConfig::default()
    };
    let la = open_with(&url, &open_in(&a)).await.expect("open a");
    let lb = open_with(&url, &open_in(&b)).await.expect("open b");
    let r = charge("isolated");
    assert!(matches!(la.claim(&r).await, Ok(Claim::Acquired(_))));
    assert!(matches!(lb.claim(&r).await, Ok(Claim::Acquired(_))));
    la.close().await;
    lb.close().await;
    // Reopening an existing schema migrates nothing and sees the record.
    let la = open_with(&url, &open_in(&a)).await.expect("reopen a");
    assert!(la.get(&r.user, &r.key).await.expect("get").is_some());
    la.close().await;
    for s in [&a, &b] {
        toolgate_ledger::testing::drop_pg_schema(&url, s).await.expect("drop");
    }
}

/// Version 1's decision log as it was created, and one record in it.
#[cfg(feature = "sqlite")]
const V1_DECISIONS: &str = "CREATE TABLE gate_decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at BIGINT NOT NULL, task_id TEXT NOT NULL,
    user_id TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL, class TEXT NOT NULL,
    action TEXT NOT NULL, attempt BIGINT NOT NULL, attempts_used BIGINT NOT NULL,
    repair_tokens BIGINT NOT NULL, latency_added_ms BIGINT NOT NULL, message_hash TEXT NOT NULL,
    intent_key TEXT)";
#[cfg(feature = "sqlite")]
const V1_RECORD: &str = "INSERT INTO gate_decisions (at, task_id, user_id, call_id, tool, class, action, \
    attempt, attempts_used, repair_tokens, latency_added_ms, message_hash, intent_key) \
    VALUES (1, 'old-task', 'u', 'c1', 'lookup', 'none', 'return', 1, 0, 0, 0, 'h', NULL)";

// A file written by version 1 (its intents table, its free-string decision
// log) opens under the current version: the intents are kept, the old log moves to
// gate_decisions_v1 untouched, and the new typed log starts empty.
#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_sqlite_file_upgrades_keeping_its_records() {
    use common::{charge, temp_dir};
    use sqlx::ConnectOptions;
    use std::str::FromStr;
    use toolgate_ledger::testing::open_store;
    use toolgate_ledger::{Claim, DecisionQuery, LedgerConfig, SCHEMA_VERSION};
    let dir = temp_dir("v1");
    let url = format!("sqlite:{}", dir.join("v1.db").display());
    let r = charge("written by version 1");
    {
        // Version 1 as it shipped: its own migration, then one intent and one decision.
        let store = open_store(&url, &LedgerConfig::default()).await.expect("create");
        let Claim::Acquired(_) = store.ledger().claim(&r).await.expect("claim") else {
            panic!("fresh key")
        };
        let raw = store.raw().expect("sql store");
        for stmt in [
            "DROP TABLE gate_decisions",
            "DROP TABLE gate_tasks",
            "DROP TABLE gate_token_windows",
            "DROP TABLE gate_approvals",
            "ALTER TABLE gate_decisions_v1 RENAME TO gate_decisions_unused",
            "DROP TABLE gate_decisions_unused",
            V1_DECISIONS,
            V1_RECORD,
            "DELETE FROM gate_schema WHERE version >= 2",
        ] {
            raw.execute(stmt).await.unwrap_or_else(|e| panic!("{stmt}: {e}"));
        }
        store.ledger().close().await;
    }
    let store = open_store(&url, &LedgerConfig::default()).await.expect("upgrade");
    let l = store.ledger();
    assert!(l.get(&r.user, &r.key).await.expect("get").is_some(), "intents are kept");
    assert!(
        l.list_decisions(&DecisionQuery::default())
            .await
            .expect("list")
            .is_empty()
    );
    let mut conn = sqlx::sqlite::SqliteConnectOptions::from_str(&url)
        .expect("url")
        .connect()
        .await
        .expect("connect");
    let (class, action): (String, String) = sqlx::query_as("SELECT class, action FROM gate_decisions_v1")
        .fetch_one(&mut conn)
        .await
        .expect("old log kept");
    assert_eq!((class.as_str(), action.as_str()), ("none", "return"));
    let version: i64 = sqlx::query_scalar("SELECT MAX(version) FROM gate_schema")
        .fetch_one(&mut conn)
        .await
        .expect("version");
    assert_eq!(version, SCHEMA_VERSION);
    l.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
