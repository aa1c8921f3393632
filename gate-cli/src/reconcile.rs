//! `gate reconcile`: what needs a person, and the person's answers.
//!
//! Two things wait for a person: intents whose outcome is unknown (a charge
//! that timed out may have happened; only someone who looks downstream can
//! say) and failed tasks, which run nothing until they are reopened. `list`
//! shows both; `resolve` records what really happened to an intent (the store
//! then reopens the tasks that failed waiting for it); `reopen` lets any other
//! failed task run again.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;
use toolgate::ledger::{Resolution, ResolveRequest, State, Storage, TaskRecord};
use toolgate::runtime::DEFAULT_STORE;

use crate::choice::Choice;
use crate::html_report::date::fmt_time;
use crate::{UsageError, runtime};

/// How many intents and tasks `list` (and the look-ups around `resolve` and
/// `reopen`) read at most.
const LIST_LIMIT: u32 = 1000;

/// `gate reconcile list|show|resolve|reopen`.
#[derive(clap::Subcommand)]
pub(crate) enum Command {
    /// What waits for a person: intents whose outcome is unknown (oldest
    /// first), then failed tasks (those that need reconciliation first).
    #[command(after_help = "Examples:
  gate reconcile list
  gate reconcile list --store sqlite:gate.db --json")]
    List {
        /// The ledger store URL; its SQLite file must exist [default:
        /// sqlite:gate.db]
        #[arg(long, value_name = "URL")]
        store: Option<String>,
        /// Print JSON (`{"unresolved_intents": [...], "failed_tasks": [...]}`)
        /// instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Everything the ledger knows about one intent key.
    #[command(after_help = "Examples:
  gate reconcile show KEY
  gate reconcile show KEY --store sqlite:gate.db

KEY is an intent key, as `gate reconcile list` shows it.")]
    Show {
        /// The intent key.
        key: String,
        /// The ledger store URL; its SQLite file must exist [default:
        /// sqlite:gate.db]
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Record what really happened. Resolving twice with the same outcome is a
    /// no-op; with a different one it is an error. Prints the resolved record
    /// as JSON, and on standard error the tasks it reopened.
    #[command(after_help = r#"Examples:
  gate reconcile resolve KEY --outcome succeeded --value '{"charge_id": "ch_001"}' --note 'paid at the PSP'
  gate reconcile resolve KEY --outcome not-executed --note 'no charge at the PSP'

KEY is an intent key, as `gate reconcile list` shows it; give one outcome per key."#)]
    Resolve {
        /// The intent key.
        key: String,
        /// What happened; not-executed lets the task run the call again.
        #[arg(long, value_parser = Choice::new(["succeeded", "failed", "not-executed"], parse_outcome))]
        outcome: Resolution,
        /// What the person found.
        #[arg(long)]
        note: Option<String>,
        /// The user, when one key exists for several users.
        #[arg(long)]
        user: Option<String>,
        /// The outcome to replay to the task, as JSON (for succeeded or
        /// failed), e.g. `--value '{"charge_id":"ch_1"}'`.
        #[arg(long, value_parser = parse_value)]
        value: Option<Value>,
        /// The ledger store URL; its SQLite file must exist [default:
        /// sqlite:gate.db]
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Let a failed task run again (a person dealt with its failure).
    #[command(after_help = "Examples:
  gate reconcile reopen TASK
  gate reconcile reopen TASK --user USER --store sqlite:gate.db

TASK is a task id and USER its user, as `gate reconcile list` shows them.")]
    Reopen {
        /// The task id.
        task: String,
        /// The user, when several users have a failed task with this id.
        #[arg(long)]
        user: Option<String>,
        /// The ledger store URL; its SQLite file must exist [default:
        /// sqlite:gate.db]
        #[arg(long, value_name = "URL")]
        store: Option<String>,
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

fn parse_value(s: &str) -> Result<Value, String> {
    serde_json::from_str(s)
        .map_err(|e| format!("not JSON ({e}); quote it for the shell: --value '{{\"id\":\"ch_1\"}}'"))
}

/// Runs `gate reconcile`.
pub(crate) fn run(command: Command) -> Result<ExitCode, UsageError> {
    runtime()?.block_on(async {
        match command {
            Command::List { store, json } => list(store.as_deref(), json).await,
            Command::Show { key, store } => {
                let ledger = crate::store::open(store.as_deref(), "gate reconcile show").await?;
                let records = ledger.find(&key).await?;
                if records.is_empty() {
                    let store = store.as_deref().unwrap_or(DEFAULT_STORE);
                    eprintln!("gate reconcile: no intent `{key}` in {store}");
                    return Ok(ExitCode::FAILURE);
                }
                outln!("{}", serde_json::to_string_pretty(&records)?);
                Ok(ExitCode::SUCCESS)
            }
            Command::Resolve {
                key,
                outcome,
                note,
                user,
                value,
                store,
            } => {
                if outcome == Resolution::NotExecuted && value.is_some() {
                    return Err(UsageError(
                        "--value is the outcome to replay; not-executed replays nothing (the task runs the call again)"
                            .into(),
                    ));
                }
                let ledger = crate::store::open(store.as_deref(), "gate reconcile resolve").await?;
                let request = ResolveRequest {
                    key,
                    user,
                    resolution: outcome,
                    note,
                    value,
                };
                resolve(&ledger, &request).await
            }
            Command::Reopen { task, user, store } => {
                let ledger = crate::store::open(store.as_deref(), "gate reconcile reopen").await?;
                reopen(&ledger, &task, user, store.as_deref().unwrap_or(DEFAULT_STORE)).await
            }
        }
    })
}

async fn list(store: Option<&str>, json: bool) -> Result<ExitCode, UsageError> {
    let ledger = crate::store::open(store, "gate reconcile list").await?;
    // A worker that died while dispatched left a lease behind; its call may
    // have happened, so it belongs in this list.
    ledger.sweep_expired_leases(ledger.now(), LIST_LIMIT).await?;
    let intents = ledger.list_unresolved(LIST_LIMIT).await?;
    let tasks = ledger.list_failed_tasks(LIST_LIMIT).await?;
    if json {
        let mut out = serde_json::Map::new();
        out.insert("unresolved_intents".into(), serde_json::to_value(&intents)?);
        out.insert("failed_tasks".into(), serde_json::to_value(&tasks)?);
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    if intents.is_empty() && tasks.is_empty() {
        outln!("Nothing to reconcile.");
        return Ok(ExitCode::SUCCESS);
    }
    if !intents.is_empty() {
        outln!("Intents whose outcome is unknown ({}):", intents.len());
        let rows = intents
            .iter()
            .map(|r| {
                vec![
                    r.key.clone(),
                    r.tool.clone(),
                    r.user.clone(),
                    r.task_id.clone(),
                    r.error.clone().unwrap_or_default(),
                ]
            })
            .collect();
        out!("{}", table(&["intent key", "tool", "user", "task", "error"], rows));
    }
    if !tasks.is_empty() {
        if !intents.is_empty() {
            outln!();
        }
        outln!("Failed tasks ({}):", tasks.len());
        let rows = tasks.iter().map(task_row).collect();
        out!(
            "{}",
            table(
                &[
                    "task",
                    "user",
                    "reason",
                    "tool",
                    "failed at (UTC)",
                    "intent key",
                    "next check"
                ],
                rows
            )
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn task_row(t: &TaskRecord) -> Vec<String> {
    let none = || "—".to_owned();
    match &t.failure {
        Some(f) => vec![
            t.task_id.clone(),
            t.user.clone(),
            f.reason.to_string(),
            f.tool.clone(),
            fmt_time(f.at.as_millis()),
            f.intent_key.clone().unwrap_or_else(none),
            f.next_check.clone(),
        ],
        None => vec![
            t.task_id.clone(),
            t.user.clone(),
            none(),
            none(),
            none(),
            none(),
            none(),
        ],
    }
}

/// Left-aligned columns, each as wide as its widest cell (the last one is not
/// padded). Cells are made [`plain`] first.
pub(crate) fn table(headers: &[&str], rows: Vec<Vec<String>>) -> String {
    let rows: Vec<Vec<String>> = std::iter::once(headers.iter().map(|h| (*h).to_owned()).collect())
        .chain(rows)
        .map(|row: Vec<String>| row.iter().map(|c| plain(c)).collect())
        .collect();
    let mut widths = vec![0; headers.len()];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let last = row.len().saturating_sub(1);
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                if i == last {
                    cell.clone()
                } else {
                    format!("{cell:<w$}", w = widths.get(i).copied().unwrap_or(0))
                }
            })
            .collect();
        out += cells.join("  ").trim_end();
        out.push('\n');
    }
    out
}

/// `s` safe to print on a terminal: names come from the model and errors
/// from tools, so line breaks become spaces and other control characters
/// (escape sequences) become U+FFFD.
pub(crate) fn plain(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            c if c.is_control() => '\u{FFFD}',
            c => c,
        })
        .collect()
}

async fn resolve(ledger: &Arc<dyn Storage>, request: &ResolveRequest) -> Result<ExitCode, UsageError> {
    // The tasks that failed waiting for this intent: the store reopens them
    // when it resolves it. Listed before, checked after, so what is printed
    // is what happened.
    let waiting: Vec<TaskRecord> = ledger
        .list_failed_tasks(LIST_LIMIT)
        .await?
        .into_iter()
        .filter(|t| {
            t.failure.as_ref().is_some_and(|f| {
                f.reason.needs_reconciliation() && f.intent_key.as_deref() == Some(request.key.as_str())
            })
        })
        .collect();
    let record = match ledger.resolve(request).await {
        Ok(record) => record,
        Err(e) if e.is_not_found() || e.is_reconcile_conflict() || e.is_ambiguous() || e.is_invalid_transition() => {
            eprintln!("gate reconcile: {e}");
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e.into()),
    };
    outln!("{}", serde_json::to_string_pretty(&record)?);
    let mut reopened = 0;
    for t in waiting.iter().filter(|t| t.user == record.user) {
        if let Some(now) = ledger.load_task(&t.user, &t.task_id).await?
            && !now.terminal
        {
            eprintln!(
                "gate reconcile: reopened task `{}` of user `{}`",
                plain(&now.task_id),
                plain(&now.user)
            );
            reopened += 1;
        }
    }
    if reopened == 0 {
        eprintln!("gate reconcile: no failed task was waiting for this intent");
    }
    Ok(ExitCode::SUCCESS)
}

async fn reopen(
    ledger: &Arc<dyn Storage>,
    task_id: &str,
    user: Option<String>,
    store: &str,
) -> Result<ExitCode, UsageError> {
    let user = match user {
        Some(user) => user,
        None => {
            let mut users: Vec<String> = ledger
                .list_failed_tasks(LIST_LIMIT)
                .await?
                .into_iter()
                .filter(|t| t.task_id == task_id)
                .map(|t| t.user)
                .collect();
            match users.len() {
                0 => {
                    eprintln!(
                        "gate reconcile: no failed task `{}` in {store} (`gate reconcile list` shows them; \
                         --user USER names one that is not listed)",
                        plain(task_id)
                    );
                    return Ok(ExitCode::FAILURE);
                }
                1 => users.remove(0),
                _ => {
                    let names: Vec<String> = users.iter().map(|u| format!("`{}`", plain(u))).collect();
                    eprintln!(
                        "gate reconcile: task `{}` failed for {} users ({}); name one with --user",
                        plain(task_id),
                        users.len(),
                        names.join(", ")
                    );
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
    };
    let Some(before) = ledger.load_task(&user, task_id).await? else {
        eprintln!(
            "gate reconcile: no task `{}` of user `{}` in {store}",
            plain(task_id),
            plain(&user)
        );
        return Ok(ExitCode::FAILURE);
    };
    let (task, user) = (plain(task_id), plain(&user));
    if !before.terminal {
        outln!("task `{task}` of user `{user}` has not failed: nothing to reopen");
        return Ok(ExitCode::SUCCESS);
    }
    let after = match ledger.reopen_task(&before.user, &before.task_id).await {
        Ok(after) => after,
        Err(e) if e.is_not_found() => {
            eprintln!("gate reconcile: {e}");
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e.into()),
    };
    outln!("reopened task `{task}` of user `{user}`: its next call runs");
    // A task that failed on an unknown outcome fails again on its next call
    // of that intent while the intent is unresolved.
    if let Some(f) = &after.failure
        && f.reason.needs_reconciliation()
        && let Some(key) = &f.intent_key
        && let Some(intent) = ledger.get(&after.user, key).await?
        && intent.state == State::OutcomeUnknown
    {
        eprintln!(
            "gate reconcile: intent `{}` it failed on is still unresolved; its next call of it fails again \
             until `gate reconcile resolve` records what happened",
            plain(key)
        );
    }
    Ok(ExitCode::SUCCESS)
}
