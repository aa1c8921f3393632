//! `gate report`: what the decision log says about rejections, failures and
//! repair cost, and how the approval requests stand.
//!
//! Text, `--json` and `--html` are three views of one
//! [`DecisionReport`], the ledger's single
//! definition of the report's metrics, so they cannot disagree; the
//! approvals are the ledger's [`ApprovalReport`], in the text and the JSON.

use std::fmt::Display;
use std::process::ExitCode;

use serde::Serialize;
use toolgate::ledger::{ApprovalQuery, ApprovalReport, DecisionQuery, DecisionReport};

use crate::{UsageError, runtime};

/// Arguments of `gate report`.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  gate report
  gate report --store sqlite:gate.db --json
  gate report --html report.html")]
pub(crate) struct Args {
    /// The ledger store URL; its SQLite file must exist [default:
    /// sqlite:gate.db]
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also write the log as one self-contained HTML page with charts.
    #[arg(long)]
    html: Option<String>,
}

/// Runs `gate report`.
pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    runtime()?.block_on(async {
        let ledger = crate::store::open(args.store.as_deref(), "gate report").await?;
        let records = ledger.list_decisions(&DecisionQuery::default()).await?;
        let report = DecisionReport::from_records(&records);
        let requests = ledger.list_approvals(&ApprovalQuery::default()).await?;
        let approvals = ApprovalReport::from_records(&requests, ledger.now());
        if let Some(path) = &args.html {
            std::fs::write(path, crate::html_report::render(&records, &report))
                .map_err(|e| UsageError(format!("cannot write `{path}`: {e}")))?;
        }
        if args.json {
            let both = Report {
                decisions: &report,
                approvals: &approvals,
            };
            outln!("{}", serde_json::to_string_pretty(&both)?);
        } else {
            out!("{}", render_text(&report, &approvals));
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The JSON report: the decision report's fields, and `approvals`.
#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    decisions: &'a DecisionReport,
    approvals: &'a ApprovalReport,
}

/// ` name=count` for each entry, or ` none`.
fn counts<K: Display>(entries: impl IntoIterator<Item = (K, u64)>) -> String {
    let out: String = entries.into_iter().map(|(k, n)| format!(" {k}={n}")).collect();
    if out.is_empty() { " none".to_owned() } else { out }
}

pub(crate) fn render_text(report: &DecisionReport, approvals: &ApprovalReport) -> String {
    let mut out = format!("{} decisions\n", report.total);
    out += &format!("by action:{}\n", counts(report.by_action.iter().map(|(a, n)| (a, *n))));
    out += &format!("by class:{}\n", counts(report.by_class.iter().map(|(c, n)| (c, *n))));
    let follow_ups = &report.rejection_follow_ups;
    let share = follow_ups
        .valid_share()
        .map(|s| format!("{:.0}%", s * 100.0))
        .unwrap_or_else(|| "n/a".into());
    out += &format!(
        "rejections: {} ({} followed by a valid call: {share})\n",
        follow_ups.rejections(),
        follow_ups.valid
    );
    out += &format!(
        "fails by reason:{}\n",
        counts(report.fails_by_reason.iter().map(|(r, n)| (r, *n)))
    );
    let mean = report
        .mean_repair_tokens_per_task
        .map(|m| format!("{m:.0}"))
        .unwrap_or_else(|| "n/a".into());
    out += &format!(
        "repair tokens per task: mean {mean} over {} tasks\n",
        report.tasks.len()
    );
    let median = approvals
        .median_wait_seconds
        .map(|s| format!("{s:.0}s"))
        .unwrap_or_else(|| "n/a".into());
    out += &format!(
        "approvals: {} requested ({} pending, {} approved, {} denied, {} expired), median wait {median}\n",
        approvals.requested, approvals.pending, approvals.approved, approvals.denied, approvals.expired
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_log_prints_every_line_with_none_or_n_a() {
        assert_eq!(
            render_text(&DecisionReport::default(), &ApprovalReport::default()),
            "0 decisions\nby action: none\nby class: none\nrejections: 0 (0 followed by a valid call: n/a)\n\
             fails by reason: none\nrepair tokens per task: mean n/a over 0 tasks\n\
             approvals: 0 requested (0 pending, 0 approved, 0 denied, 0 expired), median wait n/a\n"
        );
    }
}
