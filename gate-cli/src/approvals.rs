//! `gate approvals`: the calls that wait for a person's approval, and the
//! person's decision.
//!
//! A call of a tool declared `approval` (or one the gate's approval policy
//! picks) is stored as a request and does not run. `list` shows the
//! requests, `show` one in full (the arguments pretty-printed, as they will
//! run), and `approve` or `deny` decide it: a compare-and-set in the store,
//! so a request is decided once, and never after it expired. Deciding runs
//! nothing; the task runs an approved call the next time it asks, once.

use std::process::ExitCode;

use toolgate::ledger::{ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, Verdict};

use crate::choice::Choice;
use crate::html_report::date::fmt_time;
use crate::reconcile::{plain, table};
use crate::{UsageError, runtime};

/// How many requests `list` shows at most.
const LIST_LIMIT: u32 = 1000;

/// `gate approvals list|show|approve|deny`.
#[derive(clap::Subcommand)]
pub(crate) enum Command {
    /// The approval requests, oldest first: by default those still pending.
    #[command(after_help = "Examples:
  gate approvals list
  gate approvals list --status all --task TASK --json")]
    List {
        /// Which requests: pending, approved, denied, expired or all.
        #[arg(long, default_value = "pending", value_parser = Choice::new(["pending", "approved", "denied", "expired", "all"], parse_status))]
        status: StatusFilter,
        /// Only this user's requests.
        #[arg(long)]
        user: Option<String>,
        /// Only this task's requests.
        #[arg(long)]
        task: Option<String>,
        /// Print JSON (an array of requests) instead of a table.
        #[arg(long)]
        json: bool,
        /// The ledger store URL; its SQLite file must exist [default:
        /// sqlite:gate.db]
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// One request in full: the tool, the arguments it will run with, the
    /// reason, the task, the user, its age and where it stands.
    #[command(after_help = "Examples:
  gate approvals show ID
  gate approvals show ID --json

ID is a request id, as `gate approvals list` shows it.")]
    Show {
        /// The request id.
        id: String,
        /// Print the stored request as JSON.
        #[arg(long)]
        json: bool,
        /// The ledger store URL; its SQLite file must exist [default:
        /// sqlite:gate.db]
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Approve a pending request: its call runs once, the next time its task
    /// asks. Approving twice, or after a denial or expiry, is refused.
    #[command(after_help = "Examples:
  gate approvals approve ID --by alice
  gate approvals approve ID --by alice --note 'checked with the customer'

ID is a request id, as `gate approvals list` shows it.")]
    Approve {
        /// The request id.
        id: String,
        /// Who decides (recorded with the request) [default: $USER].
        #[arg(long)]
        by: Option<String>,
        /// A note kept with the decision.
        #[arg(long)]
        note: Option<String>,
        /// The ledger store URL; its SQLite file must exist [default:
        /// sqlite:gate.db]
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Deny a pending request: its call never runs, and the model is told
    /// "a person declined: REASON".
    #[command(after_help = "Examples:
  gate approvals deny ID --reason 'the customer disputes the invoice' --by alice

ID is a request id, as `gate approvals list` shows it.")]
    Deny {
        /// The request id.
        id: String,
        /// Why (the model reads it).
        #[arg(long)]
        reason: String,
        /// Who decides (recorded with the request) [default: $USER].
        #[arg(long)]
        by: Option<String>,
        /// A note kept with the decision.
        #[arg(long)]
        note: Option<String>,
        /// The ledger store URL; its SQLite file must exist [default:
        /// sqlite:gate.db]
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
}

/// `--status`: one status, or every request (`all`).
#[derive(Clone, Copy)]
pub(crate) struct StatusFilter(Option<ApprovalStatus>);

fn parse_status(s: &str) -> Result<StatusFilter, String> {
    let status = |s| Ok(StatusFilter(Some(s)));
    match s {
        "all" => Ok(StatusFilter(None)),
        "pending" => status(ApprovalStatus::Pending),
        "approved" => status(ApprovalStatus::Approved),
        "denied" => status(ApprovalStatus::Denied),
        "expired" => status(ApprovalStatus::Expired),
        other => Err(format!(
            "unknown status `{other}`; expected pending, approved, denied, expired or all"
        )),
    }
}

/// Runs `gate approvals`.
pub(crate) fn run(command: Command) -> Result<ExitCode, UsageError> {
    runtime()?.block_on(async {
        match command {
            Command::List {
                status,
                user,
                task,
                json,
                store,
            } => {
                let ledger = crate::store::open(store.as_deref(), "gate approvals list").await?;
                let query = ApprovalQuery {
                    status: status.0,
                    user,
                    task_id: task,
                    limit: Some(LIST_LIMIT),
                };
                let requests = ledger.list_approvals(&query).await?;
                if json {
                    outln!("{}", serde_json::to_string_pretty(&requests)?);
                } else if requests.is_empty() {
                    outln!("No approval requests.");
                } else {
                    let now = ledger.now().as_millis();
                    let rows = requests.iter().map(|r| row(r, now)).collect();
                    let headers = ["id", "status", "tool", "user", "task", "age", "reason"];
                    out!("{}", table(&headers, rows));
                }
                Ok(ExitCode::SUCCESS)
            }
            Command::Show { id, json, store } => {
                let ledger = crate::store::open(store.as_deref(), "gate approvals show").await?;
                let Some(request) = ledger.load_approval(&id).await? else {
                    eprintln!("gate approvals: no approval request `{}`", plain(&id));
                    return Ok(ExitCode::FAILURE);
                };
                if json {
                    outln!("{}", serde_json::to_string_pretty(&request)?);
                } else {
                    out!("{}", shown(&request, ledger.now().as_millis()));
                }
                Ok(ExitCode::SUCCESS)
            }
            Command::Approve { id, by, note, store } => {
                decide(
                    store.as_deref(),
                    id,
                    by,
                    note,
                    Verdict::Approve,
                    "gate approvals approve",
                )
                .await
            }
            Command::Deny {
                id,
                reason,
                by,
                note,
                store,
            } => {
                decide(
                    store.as_deref(),
                    id,
                    by,
                    note,
                    Verdict::Deny { reason },
                    "gate approvals deny",
                )
                .await
            }
        }
    })
}

async fn decide(
    store: Option<&str>,
    id: String,
    by: Option<String>,
    note: Option<String>,
    verdict: Verdict,
    command: &str,
) -> Result<ExitCode, UsageError> {
    let by = by
        .or_else(|| std::env::var("USER").ok())
        .filter(|b| !b.trim().is_empty())
        .ok_or_else(|| UsageError("say who decides: --by NAME (or set $USER)".into()))?;
    let ledger = crate::store::open(store, command).await?;
    let decision = ApprovalDecision { id, by, verdict, note };
    match ledger.decide_approval(&decision).await {
        Ok(record) => {
            outln!("{}", serde_json::to_string_pretty(&record)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.is_invalid_transition() || e.is_not_found() => {
            eprintln!("gate approvals: {e}");
            Ok(ExitCode::FAILURE)
        }
        Err(e) if e.is_invalid_input() => Err(UsageError(e.to_string())),
        Err(e) => Err(e.into()),
    }
}

fn row(r: &ApprovalRecord, now_ms: i64) -> Vec<String> {
    vec![
        r.id.clone(),
        r.status.to_string(),
        r.tool.clone(),
        r.user.clone(),
        r.task_id.clone(),
        age(now_ms - r.requested_at.as_millis()),
        r.reason.clone(),
    ]
}

/// What a person reads before deciding.
fn shown(r: &ApprovalRecord, now_ms: i64) -> String {
    let mut out = format!(
        "request   {}\nstatus    {}\ntool      {}\nuser      {}\ntask      {}\ncall      {}\nreason    {}\nasked     {} UTC ({} ago)\nexpires   {} UTC\nintent    {}\n",
        plain(&r.id),
        r.status,
        plain(&r.tool),
        plain(&r.user),
        plain(&r.task_id),
        plain(&r.call_id),
        plain(&r.reason),
        fmt_time(r.requested_at.as_millis()),
        age(now_ms - r.requested_at.as_millis()),
        fmt_time(r.expires_at.as_millis()),
        plain(&r.intent_key),
    );
    if let (Some(by), Some(at)) = (&r.decided_by, r.decided_at) {
        out += &format!("decided   by {} at {} UTC\n", plain(by), fmt_time(at.as_millis()));
    }
    if let Some(reason) = &r.denial_reason {
        out += &format!("denied    {}\n", plain(reason));
    }
    if let Some(note) = &r.note {
        out += &format!("note      {}\n", plain(note));
    }
    out += "arguments (sha256 ";
    out += &r.arguments_sha256;
    out += "):\n";
    // Pretty-printed JSON: line breaks are the layout; other control
    // characters inside strings are escaped by JSON already.
    out += &r.arguments_pretty();
    out.push('\n');
    out
}

/// A duration in the largest unit that fits: 42s, 7m, 3h, 2d.
fn age(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}
