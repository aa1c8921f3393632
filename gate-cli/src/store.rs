//! Opening the ledger store of `gate report` and `gate reconcile`.
//!
//! Both read (and `reconcile` amends) a store that a run left behind; in a new,
//! empty store there is nothing to report, list, show, resolve or reopen. The
//! ledger creates a missing SQLite file when it opens one, so a typo in
//! `--store`, or running in another directory than the agent did, would
//! quietly create an empty `gate.db` and report "0 decisions". These commands
//! therefore refuse a SQLite store whose file does not exist, and say which
//! file they looked for and how to name another.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use sqlx::sqlite::SqliteConnectOptions;
use toolgate::ledger::Storage;
use toolgate::runtime::DEFAULT_STORE;

use crate::UsageError;

/// The store named by `--store` (`None`: the default, [`DEFAULT_STORE`]),
/// opened for `command`, which names itself in the refusal.
pub(crate) async fn open(store: Option<&str>, command: &str) -> Result<Arc<dyn Storage>, UsageError> {
    let url = store.unwrap_or(DEFAULT_STORE);
    if let Some(file) = sqlite_file(url)
        && !file.exists()
    {
        let looked_for = match store {
            None => format!(
                "no store `{}` in the working directory (the default, --store {DEFAULT_STORE})",
                file.display()
            ),
            Some(url) => format!("no store `{}` (--store {url})", file.display()),
        };
        return Err(UsageError(format!(
            "{looked_for}; {command} reads the store a run wrote and does not create an empty one: \
             name it with --store sqlite:PATH or --store postgres://…"
        )));
    }
    Ok(toolgate::ledger::open(url).await?)
}

/// The file a `sqlite:` URL names, read by the parser the ledger opens it
/// with; `None` for other stores and for SQLite databases that live in
/// memory or in a temporary file (no file to look for).
fn sqlite_file(url: &str) -> Option<PathBuf> {
    let url = url.trim();
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let (database, params) = rest.split_once('?').unwrap_or((rest, ""));
    let in_memory = database == ":memory:" || params.split('&').any(|p| p.eq_ignore_ascii_case("mode=memory"));
    if database.is_empty() || in_memory {
        return None;
    }
    // A URL the parser refuses is left to the ledger, whose error names it.
    let options = SqliteConnectOptions::from_str(url).ok()?;
    Some(options.get_filename().to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_name_their_file_and_other_stores_none() {
        let file = |url| sqlite_file(url).map(|p| p.display().to_string());
        assert_eq!(file("sqlite:gate.db").as_deref(), Some("gate.db"));
        assert_eq!(file("sqlite:///tmp/a.db").as_deref(), Some("/tmp/a.db"));
        assert_eq!(
            file("sqlite:dir/my%20log.db?mode=rwc").as_deref(),
            Some("dir/my log.db")
        );
        for url in [
            "sqlite::memory:",
            "sqlite:x.db?mode=memory",
            "sqlite:",
            "memory:",
            "postgres://localhost/gate",
        ] {
            assert_eq!(file(url), None, "{url}");
        }
    }
}
