//! Opening stores by URL: the accepted forms, the errors for the rest, and an
//! SQLite file that is created on first use and keeps its records across
//! reopening (the schema is migrated once, not again).

mod common;

use std::time::Duration;

use common::{charge, postgres_url, random_suffix, temp_dir};
use gate_ledger::{Claim, LedgerConfig, SCHEMA_VERSION, State, StoreKind, open, open_store, open_with};

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

#[tokio::test]
async fn unreachable_postgres_is_unavailable() {
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

#[tokio::test]
async fn bad_schema_names_are_refused() {
    let Some(url) = postgres_url("bad_schema_names_are_refused") else {
        return;
    };
    let config = LedgerConfig {
        pg_schema: Some("x; DROP TABLE y".into()),
        ..LedgerConfig::default()
    };
    let e = open_with(&url, &config).await.expect_err("bad name");
    assert!(e.is_invalid_input(), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_file_is_created_and_survives_reopening() {
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
    assert_eq!(SCHEMA_VERSION, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_schema_is_isolated() {
    let Some(url) = postgres_url("postgres_schema_is_isolated") else {
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
        gate_ledger::drop_pg_schema(&url, s).await.expect("drop");
    }
}
