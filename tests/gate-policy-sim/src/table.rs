//! The report as a reader sees it: the markdown table, kept apart from the
//! counting so the wording can change without touching a number.

use std::fmt::Write as _;

use super::policy::Policy;
use super::report::Report;

pub(super) fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "–".to_owned()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// The table as markdown, with its assumptions and gate's failure reasons.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    out.push_str(
        "| mix | policy | completed | failed, with report | failed, no report | repair tokens/task (mean) | p95 | duplicate charges | unrecorded charges |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in &report.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {} |",
            row.mix.name(),
            row.policy.name(),
            pct(row.completed, row.tasks),
            pct(row.failed_with_report, row.tasks),
            pct(row.failed_unreported, row.tasks),
            row.repair_tokens_mean,
            row.repair_tokens_p95,
            row.duplicate_charges,
            row.unrecorded_charges,
        );
    }
    out.push_str("\nWhy gate failed tasks (each with a `FailureReport`):\n\n");
    for row in report.rows.iter().filter(|r| r.policy == Policy::Gate) {
        let reasons: Vec<String> = row.fail_reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            out,
            "- {}: {}{}",
            row.mix.name(),
            if reasons.is_empty() {
                "none".to_owned()
            } else {
                reasons.join(", ")
            },
            if row.charges_to_reconcile > 0 {
                format!(" ({} charges queued for `gate reconcile`)", row.charges_to_reconcile)
            } else {
                String::new()
            }
        );
    }
    out.push_str("\nAssumptions:\n\n");
    for a in &report.assumptions {
        let _ = writeln!(out, "- {a}");
    }
    out
}
