//! `gate report`: what the decision log says about rejections and repair cost.

use std::process::ExitCode;

use gate::ledger::{DecisionQuery, DecisionReport};

use crate::{UsageError, runtime};

/// Arguments of `gate report`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The ledger store URL.
    #[arg(long, default_value = gate::runtime::DEFAULT_STORE)]
    store: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also write the log as one self-contained HTML page with charts.
    #[arg(long)]
    html: Option<String>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    runtime()?.block_on(async {
        let ledger = gate::ledger::open(&args.store).await?;
        let records = ledger.list_decisions(&DecisionQuery::default()).await?;
        let report = DecisionReport::from_records(&records);
        if let Some(path) = &args.html {
            std::fs::write(path, crate::html_report::render(&records))
                .map_err(|e| UsageError(format!("cannot write `{path}`: {e}")))?;
        }
        if args.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", render_text(&report));
        }
        Ok(ExitCode::SUCCESS)
    })
}

fn render_text(report: &DecisionReport) -> String {
    let mut out = format!("{} decisions\n", report.total);
    out += "by action:";
    for (action, n) in &report.by_action {
        out += &format!(" {action}={n}");
    }
    out += "\nby class:";
    for (class, n) in &report.by_class {
        out += &format!(" {class}={n}");
    }
    let share = report
        .rejection_success_share
        .map(|s| format!("{:.0}%", s * 100.0))
        .unwrap_or_else(|| "n/a".into());
    out += &format!(
        "\nrejections: {} ({} followed by a valid call: {share})\n",
        report.rejections, report.rejections_followed_by_valid_call
    );
    let mean = report
        .mean_repair_tokens_per_task
        .map(|m| format!("{m:.0}"))
        .unwrap_or_else(|| "n/a".into());
    out += &format!(
        "repair tokens per task: mean {mean} over {} tasks\n",
        report.repair_tokens_per_task.len()
    );
    out
}
