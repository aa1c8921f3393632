//! What gate's own tests and benchmarks need from a store beyond the
//! [`Storage`] traits (feature `testing`, off by default; for gate's own
//! tests and benches, not covered by semver).
//!
//! A test that holds the runtime to its number of commits wraps the store in
//! a [`CountingStore`]; a test that breaks the store on purpose (holds its
//! write lock, drops its tables) or a benchmark that compares it with bare
//! SQL needs the store's own pool ([`open_store`], `Store::raw`); a test on
//! PostgreSQL cleans up its schema (`drop_pg_schema`). None of it is
//! something an application should do to its ledger, so none of it is in
//! the crate's default API.

mod counting;

use std::sync::Arc;

pub use counting::{CommitKind, Commits, CountingStore};

use crate::error::LedgerError;
#[cfg(feature = "postgres")]
use crate::sql::PgBackend;
use crate::{LedgerConfig, Opened, Storage};
#[cfg(feature = "sqlite")]
use crate::{ledger::Core, sql::SqliteBackend};

/// An opened store with its parts in reach: the ledger, and for SQL stores
/// the pool underneath.
#[derive(Clone, Debug)]
pub struct Store {
    ledger: Arc<dyn Storage>,
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    raw: Option<RawPool>,
    #[cfg(feature = "sqlite")]
    sqlite: Option<Arc<Core<SqliteBackend>>>,
}

impl Store {
    /// The store: ledger and task store.
    pub fn ledger(&self) -> Arc<dyn Storage> {
        self.ledger.clone()
    }

    /// The SQL pool, for SQL stores.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub fn raw(&self) -> Option<&RawPool> {
        self.raw.as_ref()
    }

    /// For SQLite: `PRAGMA journal_mode` and `PRAGMA synchronous` as a pooled
    /// connection reports them (expected: `wal` and 2 = FULL); `None` for
    /// every other store.
    pub async fn sqlite_pragmas(&self) -> Result<Option<(String, i64)>, LedgerError> {
        // Present without the `sqlite` feature too, so a check over every
        // store compiles in every build.
        #[cfg(feature = "sqlite")]
        if let Some(core) = &self.sqlite {
            return Ok(Some(core.backend.pragmas().await?));
        }
        Ok(None)
    }
}

/// Opens the store named by `url`, as [`open_with`](crate::open_with) does,
/// and keeps access to its pool.
pub async fn open_store(url: &str, config: &LedgerConfig) -> Result<Store, LedgerError> {
    Ok(match crate::open_backend(url, config).await? {
        Opened::Memory(core) => Store {
            ledger: core,
            #[cfg(any(feature = "sqlite", feature = "postgres"))]
            raw: None,
            #[cfg(feature = "sqlite")]
            sqlite: None,
        },
        #[cfg(feature = "sqlite")]
        Opened::Sqlite(core) => Store {
            raw: Some(RawPool::Sqlite(core.backend.pool.clone())),
            ledger: core.clone(),
            sqlite: Some(core),
        },
        #[cfg(feature = "postgres")]
        Opened::Postgres(core) => Store {
            raw: Some(RawPool::Postgres(core.backend.pool.clone())),
            ledger: core,
            #[cfg(feature = "sqlite")]
            sqlite: None,
        },
    })
}

/// Drops a PostgreSQL schema created through [`LedgerConfig::pg_schema`], with
/// everything in it: a test's clean-up.
#[cfg(feature = "postgres")]
pub async fn drop_pg_schema(url: &str, schema: &str) -> Result<(), LedgerError> {
    PgBackend::drop_schema(url, schema).await
}

/// Raw SQL access for tests that must break the store on purpose (fault
/// injection) or compare against bare statements (benchmarks).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Clone, Debug)]
pub enum RawPool {
    /// An SQLite pool.
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::SqlitePool),
    /// A PostgreSQL pool.
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl RawPool {
    /// Runs one statement without parameters.
    pub async fn execute(&self, sql: &str) -> Result<u64, LedgerError> {
        Ok(match self {
            #[cfg(feature = "sqlite")]
            RawPool::Sqlite(p) => sqlx::query(sql).execute(p).await?.rows_affected(),
            #[cfg(feature = "postgres")]
            RawPool::Postgres(p) => sqlx::query(sql).execute(p).await?.rows_affected(),
        })
    }

    /// Runs one query without parameters that returns a single integer.
    pub async fn fetch_i64(&self, sql: &str) -> Result<i64, LedgerError> {
        Ok(match self {
            #[cfg(feature = "sqlite")]
            RawPool::Sqlite(p) => sqlx::query_scalar(sql).fetch_one(p).await?,
            #[cfg(feature = "postgres")]
            RawPool::Postgres(p) => sqlx::query_scalar(sql).fetch_one(p).await?,
        })
    }
}
