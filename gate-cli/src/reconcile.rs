//! `gate reconcile`: the queue of intents whose outcome is unknown, and the
//! person's answer for each.

use std::process::ExitCode;

use gate::ledger::{Resolution, ResolveRequest};

use crate::{UsageError, runtime};

/// `gate reconcile list|show|resolve`.
#[derive(clap::Subcommand)]
pub(crate) enum Command {
    /// Intents waiting for a human, oldest first.
    List {
        /// The ledger store URL.
        #[arg(long, default_value = gate::runtime::DEFAULT_STORE)]
        store: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Everything the ledger knows about one intent key.
    Show {
        /// The intent key.
        key: String,
        /// The ledger store URL.
        #[arg(long, default_value = gate::runtime::DEFAULT_STORE)]
        store: String,
    },
    /// Record what really happened. Resolving twice with the same outcome is a
    /// no-op; with a different one it is an error.
    Resolve {
        /// The intent key.
        key: String,
        /// succeeded, failed or not-executed (lets the task run it again).
        #[arg(long, value_parser = parse_outcome)]
        outcome: Resolution,
        /// What the person found.
        #[arg(long)]
        note: Option<String>,
        /// The user, when one key exists for several users.
        #[arg(long)]
        user: Option<String>,
        /// The ledger store URL.
        #[arg(long, default_value = gate::runtime::DEFAULT_STORE)]
        store: String,
    },
}

fn parse_outcome(s: &str) -> Result<Resolution, String> {
    match s {
        "succeeded" => Ok(Resolution::Succeeded),
        "failed" => Ok(Resolution::FailedPermanent),
        "not-executed" => Ok(Resolution::NotExecuted),
        other => Err(format!(
            "unknown outcome `{other}`; expected succeeded, failed or not-executed"
        )),
    }
}

pub(crate) fn run(command: Command) -> Result<ExitCode, UsageError> {
    runtime()?.block_on(async {
        match command {
            Command::List { store, json } => {
                let ledger = gate::ledger::open(&store).await?;
                // A worker that died while dispatched left a lease behind; its
                // call may have happened, so it belongs in this list.
                ledger.sweep_expired_leases(ledger.now(), 1000).await?;
                let records = ledger.list_unresolved(1000).await?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&records)?);
                } else if records.is_empty() {
                    println!("Nothing to reconcile.");
                } else {
                    println!(
                        "{:<72} {:<16} {:<12} {:<20} error",
                        "intent key", "tool", "user", "task"
                    );
                    for r in &records {
                        let error = r.error.as_deref().unwrap_or("");
                        println!("{:<72} {:<16} {:<12} {:<20} {error}", r.key, r.tool, r.user, r.task_id);
                    }
                }
                Ok(ExitCode::SUCCESS)
            }
            Command::Show { key, store } => {
                let ledger = gate::ledger::open(&store).await?;
                let records = ledger.find(&key).await?;
                if records.is_empty() {
                    eprintln!("gate reconcile: no intent `{key}` in {store}");
                    return Ok(ExitCode::FAILURE);
                }
                println!("{}", serde_json::to_string_pretty(&records)?);
                Ok(ExitCode::SUCCESS)
            }
            Command::Resolve {
                key,
                outcome,
                note,
                user,
                store,
            } => {
                let ledger = gate::ledger::open(&store).await?;
                let request = ResolveRequest {
                    key: key.clone(),
                    user,
                    resolution: outcome,
                    note,
                    value: None,
                };
                match ledger.resolve(&request).await {
                    Ok(record) => {
                        println!("{}", serde_json::to_string_pretty(&record)?);
                        Ok(ExitCode::SUCCESS)
                    }
                    Err(e) if e.is_not_found() || e.is_reconcile_conflict() || e.is_ambiguous() => {
                        eprintln!("gate reconcile: {e}");
                        Ok(ExitCode::FAILURE)
                    }
                    Err(e) => Err(e.into()),
                }
            }
        }
    })
}
