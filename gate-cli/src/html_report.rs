//! `gate report --html`: the decision log as one self-contained HTML page, so an
//! operator can see at a glance whether rejections work, why tasks failed and
//! what repair costs, and can mail or archive the page without it ever loading
//! anything.
//!
//! The page holds three charts drawn as inline SVG on the Rust side (they show
//! even with scripts disabled and are testable as text): decisions by failure
//! class over time, repair tokens per task, and the rejection → valid-call rate
//! per tool. A small inline script only adds legend toggles and sortable
//! tables, then marks `<html data-rendered="yes">` for automated checks. A
//! Content-Security-Policy with `default-src 'none'` forbids every network load.
//!
//! Every metric comes from the [`DecisionReport`] `gate report` computes: the
//! ledger defines the report's figures (what follows a rejection, fails by
//! reason, repair tokens per task) once, and `gate report`'s text, its
//! `--json` and this page are views of it. [`gate_ledger::FollowUps`]
//! documents what counts as a valid call after a rejection. The records
//! themselves only give what the report does not hold: when each decision
//! was made (the timeline), who ran each task and the failure rows.
//!
//! Every text that comes from a record (task, user, tool, call id, intent key)
//! may be hostile, since tool names come from the model: all of it goes
//! through [`esc`], and none of it is ever placed in a script, a style, a URL
//! or an element or attribute name. Classes, actions and fail reasons are
//! gate's closed vocabulary ([`gate_ledger::vocab`]); each class has a fixed
//! colour, chosen by an exhaustive `match`. Output size is bounded whatever the
//! log holds: tasks, tools and failure rows are capped (the rest is counted in
//! a note) and long labels are cut.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use gate_ledger::{
    Action, Ambiguity, DecisionRecord, DecisionReport, FailReason, FailureClass, FollowUps, TaskSummary,
};

/// Most tasks in the repair-token chart.
const MAX_TASK_BARS: usize = 40;
/// Most tools in the rejection chart.
const MAX_TOOL_BARS: usize = 25;
/// Most rows in the task table.
const MAX_TASK_ROWS: usize = 500;
/// Most rows in the failure table (the latest ones).
const MAX_FAIL_ROWS: usize = 100;
/// Longest label drawn; the full text is in the tooltip.
const MAX_LABEL: usize = 48;
/// Most time buckets in the timeline.
const MAX_BUCKETS: i128 = 30;

const CHART_WIDTH: i64 = 860;

/// Every series of the timeline and row of the class × action table, in the
/// order they are shown: the failure classes, then "none" (nothing failed).
fn classes() -> impl Iterator<Item = Option<FailureClass>> {
    FailureClass::ALL.iter().copied().map(Some).chain(std::iter::once(None))
}

/// The name shown for a class: its vocabulary name, or "none".
fn class_name(class: Option<FailureClass>) -> &'static str {
    class.map_or("none", FailureClass::as_str)
}

/// The fixed colour of a class (Okabe–Ito where it has enough colours, so
/// colour-blind readers can tell them apart; the ambiguous classes share a
/// family of ambers). Exhaustive, so a new class cannot go without one.
fn class_colour(class: Option<FailureClass>) -> &'static str {
    match class {
        None => "#009E73",
        Some(FailureClass::Structural) => "#D55E00",
        Some(FailureClass::Ambiguous(ambiguity)) => match ambiguity {
            Ambiguity::WrongTarget => "#E69F00",
            Ambiguity::NothingFound => "#A67C00",
            Ambiguity::Unreadable => "#8c6d31",
        },
        Some(FailureClass::Transient) => "#56B4E9",
        Some(FailureClass::OutcomeUnknown) => "#CC79A7",
        Some(FailureClass::Definitive) => "#0072B2",
        Some(FailureClass::Internal) => "#5a2d82",
    }
}

/// The four follow-ups of a rejection as the rejection chart names and
/// colours them. Destructured, so a new kind of follow-up cannot go unshown.
fn follow_up_series(f: &FollowUps) -> [(&'static str, &'static str, u64); 4] {
    let FollowUps {
        valid,
        rejected_again,
        failed,
        nothing,
    } = *f;
    [
        ("valid call next", "#009E73", valid),
        ("rejected again", "#E69F00", rejected_again),
        ("task failed next", "#D55E00", failed),
        ("nothing followed", "#bdbdbd", nothing),
    ]
}

/// Renders `records` (log order, oldest first, as `Ledger::list_decisions`
/// returns them) and their `report` as one self-contained HTML page.
pub(crate) fn render(records: &[DecisionRecord], report: &DecisionReport) -> String {
    // Stable, so decisions with the same timestamp keep their log order.
    let mut sorted: Vec<&DecisionRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.at);

    let mut page = String::with_capacity(64 * 1024);
    page.push_str(HEAD);
    page.push_str("<body>\n<header><h1>gate decision report</h1>\n");
    if sorted.is_empty() {
        page.push_str("<p class=\"sub\">No decisions recorded.</p></header>\n<main>\n");
        page.push_str(
            "<section><p class=\"empty\" id=\"empty\">The decision log is empty: nothing to chart.</p></section>\n",
        );
    } else {
        summary(&mut page, &sorted, report);
        page.push_str("<main>\n");
        timeline_section(&mut page, &sorted);
        repair_tokens_section(&mut page, report);
        rejection_section(&mut page, report);
        class_action_section(&mut page, report);
        tasks_section(&mut page, report);
        failures_section(&mut page, &sorted, report);
    }
    page.push_str("</main>\n<footer>Generated by <code>gate report --html</code> from the decision log. ");
    page.push_str("Self-contained: no scripts, fonts or images are loaded from anywhere.</footer>\n");
    page.push_str("<script>\n");
    page.push_str(SCRIPT);
    page.push_str("</script>\n</body>\n</html>\n");
    page
}

const HEAD: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>gate decision report</title>
<style>
:root { --fg: #1d1d1f; --muted: #6b6b70; --line: #e3e3e8; --bg: #fafafa; --card: #fff; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header, main, footer { max-width: 960px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 0 0 6px; }
.sub, .note, footer { color: var(--muted); }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 16px 18px; margin: 16px 0; overflow-x: auto; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 10px; margin: 16px 0 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.card .v { font-size: 22px; font-weight: 600; }
.card .k { color: var(--muted); font-size: 12px; }
.big { font-size: 34px; font-weight: 700; margin: 4px 0; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #444; }
svg .grid { stroke: var(--line); }
svg .axis { stroke: #999; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 14px; margin: 6px 0 10px; padding: 0; list-style: none; }
.legend button { border: 0; background: none; padding: 2px 4px; font: inherit; cursor: pointer; color: inherit; }
.legend button[aria-pressed="false"] { opacity: .35; text-decoration: line-through; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
th { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \25B2"; }
th[aria-sort="descending"]::after { content: " \25BC"; }
td.t { max-width: 280px; overflow: hidden; text-overflow: ellipsis; }
footer { font-size: 12px; padding-bottom: 30px; }
.empty { color: var(--muted); }
</style>
</head>
"##;

const SCRIPT: &str = r##"(function () {
  "use strict";
  // Legend buttons hide or show one failure class in the timeline.
  document.querySelectorAll("[data-toggle-series]").forEach(function (button) {
    button.addEventListener("click", function () {
      var series = button.getAttribute("data-toggle-series");
      var show = button.getAttribute("aria-pressed") === "false";
      button.setAttribute("aria-pressed", show ? "true" : "false");
      document.querySelectorAll("#timeline [data-series]").forEach(function (el) {
        if (el.getAttribute("data-series") === series) { el.style.display = show ? "" : "none"; }
      });
    });
  });
  // Click a column header to sort; numeric cells carry their value in data-v.
  function key(cell, numeric) {
    if (numeric) { var v = parseFloat(cell.getAttribute("data-v")); return isNaN(v) ? -Infinity : v; }
    return cell.textContent;
  }
  function sortBy(table, column, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var numeric = th.classList.contains("n");
    var dir = th.getAttribute("aria-sort") === "descending" ? 1 : -1;
    if (!numeric) { dir = -dir; }
    Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", (numeric ? dir === 1 : dir === -1) ? "ascending" : "descending");
    rows.sort(function (a, b) {
      var x = key(a.cells[column], numeric), y = key(b.cells[column], numeric);
      return x < y ? -dir : x > y ? dir : 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(table, column, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortBy(table, column, th); } });
    });
  });
  document.documentElement.setAttribute("data-rendered", "yes");
})();
"##;

/// HTML-escapes `s` for text and double- or single-quoted attribute values.
/// Control characters (other than tab and newline) become U+FFFD: they have no
/// business in a report and some are not allowed in HTML at all.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to [`MAX_LABEL`] characters (with an ellipsis), then escaped.
fn label(s: &str) -> String {
    if s.chars().count() <= MAX_LABEL {
        return esc(s);
    }
    let cut: String = s.chars().take(MAX_LABEL - 1).collect();
    esc(&format!("{cut}…"))
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` UTC (proleptic
/// Gregorian, Howard Hinnant's civil-from-days), valid for every `i64`.
pub(crate) fn fmt_time(ms: i64) -> String {
    let (date, secs) = civil(ms);
    format!("{date} {:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

fn fmt_date(ms: i64) -> String {
    civil(ms).0
}

fn fmt_minute(ms: i64) -> String {
    let (date, secs) = civil(ms);
    format!("{date} {:02}:{:02}", secs / 3600, secs / 60 % 60)
}

fn civil(ms: i64) -> (String, i64) {
    let days = ms.div_euclid(86_400_000);
    let secs = ms.rem_euclid(86_400_000) / 1000;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (format!("{year:04}-{month:02}-{day:02}"), secs)
}

fn pct(num: u64, den: u64) -> String {
    if den == 0 {
        "n/a".to_owned()
    } else {
        format!("{:.1}%", num as f64 * 100.0 / den as f64)
    }
}

fn summary(page: &mut String, sorted: &[&DecisionRecord], report: &DecisionReport) {
    let tasks = report.tasks.len();
    let users: BTreeSet<&str> = sorted.iter().map(|r| r.user.as_str()).collect();
    let first = sorted.first().map(|r| r.at.as_millis()).unwrap_or(0);
    let last = sorted.last().map(|r| r.at.as_millis()).unwrap_or(0);
    let tokens = report.tasks.iter().fold(0i64, |a, t| a.saturating_add(t.repair_tokens));
    let latency = report
        .tasks
        .iter()
        .fold(0i64, |a, t| a.saturating_add(t.latency_added_ms));
    let _ = writeln!(
        page,
        "<p class=\"sub\">{} decisions in {tasks} tasks of {} users, {} to {} UTC</p>",
        report.total,
        users.len(),
        fmt_time(first),
        fmt_time(last)
    );
    page.push_str("<div class=\"cards\">\n");
    let follow_ups = &report.rejection_follow_ups;
    let retries = report.count(Action::RetryWithCorrection) + report.count(Action::RetryInternally);
    let cards = [
        ("decisions", report.total.to_string()),
        ("rejections", report.count(Action::Reject).to_string()),
        ("rejection → valid call", pct(follow_ups.valid, follow_ups.rejections())),
        ("retries", retries.to_string()),
        ("fails", report.count(Action::Fail).to_string()),
        ("repair tokens", tokens.to_string()),
        ("latency added", format!("{:.1} s", latency as f64 / 1000.0)),
    ];
    for (k, v) in cards {
        let _ = writeln!(
            page,
            "<div class=\"card\"><div class=\"v\">{}</div><div class=\"k\">{}</div></div>",
            esc(&v),
            esc(k)
        );
    }
    page.push_str("</div>\n</header>\n");
}

/// Picks a bucket width: the smallest round duration giving at most
/// [`MAX_BUCKETS`] buckets, or an even split for spans beyond a year's worth.
fn bucket_width(first: i64, last: i64) -> i128 {
    const NICE: [i128; 16] = [
        1_000,
        5_000,
        15_000,
        60_000,
        300_000,
        900_000,
        1_800_000,
        3_600_000,
        3 * 3_600_000,
        6 * 3_600_000,
        12 * 3_600_000,
        86_400_000,
        2 * 86_400_000,
        7 * 86_400_000,
        14 * 86_400_000,
        30 * 86_400_000,
    ];
    let span = i128::from(last) - i128::from(first) + 1;
    NICE.iter()
        .copied()
        .find(|w| span / w < MAX_BUCKETS)
        .unwrap_or_else(|| span / (MAX_BUCKETS - 1) + 1)
}

fn timeline_section(page: &mut String, sorted: &[&DecisionRecord]) {
    page.push_str("<section id=\"timeline-section\"><h2>Decisions by failure class over time</h2>\n");

    // The vocabulary is closed, so every class present is a series of its own.
    let present: BTreeSet<Option<FailureClass>> = sorted.iter().map(|r| r.class).collect();
    let shown: Vec<Option<FailureClass>> = classes().filter(|c| present.contains(c)).collect();
    let series_count = shown.len();
    let series_of = |class: Option<FailureClass>| shown.iter().position(|c| *c == class);

    let first = sorted.first().map(|r| r.at.as_millis()).unwrap_or(0);
    let last = sorted.last().map(|r| r.at.as_millis()).unwrap_or(0);
    let width = bucket_width(first, last);
    let start = i128::from(first).div_euclid(width) * width;
    let buckets = ((i128::from(last) - start) / width + 1).clamp(1, MAX_BUCKETS + 1);
    let n_buckets = usize::try_from(buckets).unwrap_or(1);
    let mut counts = vec![vec![0u64; series_count]; n_buckets];
    for r in sorted {
        let b = ((i128::from(r.at.as_millis()) - start) / width).clamp(0, buckets - 1);
        let b = usize::try_from(b).unwrap_or(0);
        if let Some(slot) = series_of(r.class).and_then(|s| counts.get_mut(b).and_then(|row| row.get_mut(s))) {
            *slot += 1;
        }
    }
    let bucket_ms = |i: usize| {
        let v = start + width * i128::try_from(i).unwrap_or(0);
        i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
    };
    let fmt_bucket = |ms: i64| {
        if width >= 86_400_000 {
            fmt_date(ms)
        } else if width >= 60_000 {
            fmt_minute(ms)
        } else {
            fmt_time(ms)
        }
    };

    page.push_str("<ul class=\"legend\">");
    for (i, class) in shown.iter().enumerate() {
        let (name, colour) = (class_name(*class), class_colour(*class));
        let total: u64 = counts.iter().filter_map(|b| b.get(i)).sum();
        let _ = write!(
            page,
            "<li><button type=\"button\" data-toggle-series=\"{i}\" aria-pressed=\"true\" title=\"{}\">\
             <span class=\"swatch\" style=\"background:{colour}\"></span>{} ({total})</button></li>",
            esc(name),
            label(name)
        );
    }
    page.push_str("</ul>\n");

    let max = counts.iter().map(|b| b.iter().sum::<u64>()).max().unwrap_or(1).max(1);
    let (left, right, top, bottom) = (44i64, 10i64, 10i64, 40i64);
    let height = 260i64;
    let plot_w = CHART_WIDTH - left - right;
    let plot_h = height - top - bottom;
    let slot = plot_w as f64 / n_buckets as f64;
    let bar_w = (slot * 0.8).max(1.0);
    let _ = writeln!(
        page,
        "<svg id=\"timeline\" viewBox=\"0 0 {CHART_WIDTH} {height}\" width=\"{CHART_WIDTH}\" height=\"{height}\" \
         role=\"img\" aria-label=\"Stacked bar chart of decisions per failure class over time\" \
         data-buckets=\"{n_buckets}\" data-series-count=\"{series_count}\">"
    );
    y_grid(page, max, left, top, plot_w, plot_h);
    for (i, bucket) in counts.iter().enumerate() {
        let x = left as f64 + slot * i as f64 + (slot - bar_w) / 2.0;
        let mut y = (top + plot_h) as f64;
        let from = bucket_ms(i);
        let to = bucket_ms(i + 1);
        let mut tip = format!("{} – {} UTC", fmt_time(from), fmt_time(to));
        for (n, class) in bucket.iter().zip(&shown) {
            if *n > 0 {
                let _ = write!(tip, "\n{}: {n}", class_name(*class));
            }
        }
        for (s, (n, class)) in bucket.iter().zip(&shown).enumerate() {
            if *n == 0 {
                continue;
            }
            let h = *n as f64 / max as f64 * plot_h as f64;
            y -= h;
            let _ = writeln!(
                page,
                "<rect class=\"bar\" data-series=\"{s}\" data-count=\"{n}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar_w:.1}\" \
                 height=\"{h:.1}\" fill=\"{}\"><title>{}</title></rect>",
                class_colour(*class),
                esc(&tip)
            );
        }
    }
    // Label at most ~6 buckets so the axis stays legible.
    let step = n_buckets.div_ceil(6).max(1);
    for i in (0..n_buckets).step_by(step) {
        let x = left as f64 + slot * i as f64 + slot / 2.0;
        // Labels near an edge are anchored inwards so they are not clipped.
        let anchor = if x > (CHART_WIDTH - 70) as f64 {
            "end"
        } else if x < (left + 50) as f64 {
            "start"
        } else {
            "middle"
        };
        let x = x.clamp(left as f64, (CHART_WIDTH - right) as f64);
        let _ = writeln!(
            page,
            "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            top + plot_h + 16,
            esc(&fmt_bucket(bucket_ms(i)))
        );
    }
    let _ = writeln!(
        page,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">UTC, one bar per {}</text>",
        CHART_WIDTH - right,
        height - 4,
        esc(&human_width(width))
    );
    page.push_str(
        "</svg>\n<p class=\"note\">Click a class in the legend to hide or show it. \
                   Hover a bar for its counts.</p>\n</section>\n",
    );
}

fn human_width(width: i128) -> String {
    let units = [
        (86_400_000, "day"),
        (3_600_000, "hour"),
        (60_000, "minute"),
        (1_000, "second"),
    ];
    for (unit, name) in units {
        if width >= unit && width % unit == 0 {
            let n = width / unit;
            return if n == 1 {
                name.to_owned()
            } else {
                format!("{n} {name}s")
            };
        }
    }
    format!("{width} ms")
}

/// Horizontal grid lines with round values up to `max`.
fn y_grid(page: &mut String, max: u64, left: i64, top: i64, plot_w: i64, plot_h: i64) {
    let step = nice_step(max);
    let mut v = 0u64;
    while v <= max {
        let y = (top + plot_h) as f64 - v as f64 / max as f64 * plot_h as f64;
        let _ = writeln!(
            page,
            "<line class=\"grid\" x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{v}</text>",
            left + plot_w,
            left - 6,
            y + 4.0
        );
        v = match v.checked_add(step) {
            Some(next) => next,
            None => break,
        };
    }
}

/// A 1-2-5 step giving at most about five grid lines.
fn nice_step(max: u64) -> u64 {
    let mut step = 1u64;
    loop {
        for m in [1u64, 2, 5] {
            let s = step.saturating_mul(m);
            if max / s <= 5 {
                return s.max(1);
            }
        }
        step = match step.checked_mul(10) {
            Some(s) => s,
            None => return u64::MAX,
        };
    }
}

/// One segment of a horizontal bar: value, fill colour, tooltip.
type Segment = (i64, &'static str, String);
/// One row of a horizontal bar chart: label and segments.
type BarRow = (String, Vec<Segment>);

/// A horizontal bar chart, one row per [`BarRow`]. Negative values are drawn
/// as zero-width bars but still printed.
fn hbar_chart(page: &mut String, id: &str, aria: &str, rows: &[BarRow], unit: &str) {
    let row_h = 20i64;
    let (label_w, right, top) = (230i64, 90i64, 6i64);
    let height = top * 2 + row_h * i64::try_from(rows.len()).unwrap_or(0);
    let plot_w = CHART_WIDTH - label_w - right;
    let max = rows
        .iter()
        .map(|(_, segs)| segs.iter().map(|s| s.0.max(0)).fold(0i64, i64::saturating_add))
        .max()
        .unwrap_or(1)
        .max(1);
    let _ = writeln!(
        page,
        "<svg id=\"{id}\" viewBox=\"0 0 {CHART_WIDTH} {height}\" width=\"{CHART_WIDTH}\" height=\"{height}\" \
         role=\"img\" aria-label=\"{}\" data-rows=\"{}\">",
        esc(aria),
        rows.len()
    );
    for (i, (name, segs)) in rows.iter().enumerate() {
        let y = top + row_h * i64::try_from(i).unwrap_or(0);
        let _ = writeln!(
            page,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text>",
            label_w - 8,
            y + 14,
            esc(name),
            label(name)
        );
        let mut x = label_w as f64;
        let mut total = 0i64;
        for (value, colour, tip) in segs {
            total = total.saturating_add(*value);
            let w = (*value).max(0) as f64 / max as f64 * plot_w as f64;
            let _ = writeln!(
                page,
                "<rect class=\"bar\" data-value=\"{value}\" x=\"{x:.1}\" y=\"{}\" width=\"{w:.1}\" height=\"{}\" \
                 fill=\"{colour}\"><title>{}</title></rect>",
                y + 3,
                row_h - 6,
                esc(tip)
            );
            x += w;
        }
        let _ = writeln!(
            page,
            "<text x=\"{:.1}\" y=\"{}\">{total}{}</text>",
            x + 5.0,
            y + 14,
            esc(unit)
        );
    }
    page.push_str("</svg>\n");
}

fn repair_tokens_section(page: &mut String, report: &DecisionReport) {
    page.push_str("<section id=\"tokens-section\"><h2>Repair tokens per task</h2>\n");
    let mut tasks: Vec<(&str, i64)> = report
        .tasks
        .iter()
        .map(|t| (t.task_id.as_str(), t.repair_tokens))
        .collect();
    tasks.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let with_repair = tasks.iter().filter(|t| t.1 != 0).count();
    let total: i64 = tasks.iter().fold(0i64, |a, t| a.saturating_add(t.1));
    let mean = report
        .mean_repair_tokens_per_task
        .map_or_else(|| "n/a".to_owned(), |m| format!("{m:.0}"));
    let _ = writeln!(
        page,
        "<p class=\"note\">{with_repair} of {} tasks spent repair tokens; {total} in all, {mean} per task on average.</p>",
        tasks.len(),
    );
    let rows: Vec<BarRow> = tasks
        .iter()
        .take(MAX_TASK_BARS)
        .map(|(task, tokens)| {
            (
                (*task).to_owned(),
                vec![(*tokens, "#0072B2", format!("task {task}: {tokens} repair tokens"))],
            )
        })
        .collect();
    hbar_chart(
        page,
        "repair-tokens",
        "Repair tokens per task, largest first",
        &rows,
        " tokens",
    );
    if tasks.len() > MAX_TASK_BARS {
        let _ = writeln!(
            page,
            "<p class=\"note\">The {} tasks with the fewest repair tokens are not drawn; see the task table.</p>",
            tasks.len() - MAX_TASK_BARS
        );
    }
    page.push_str("</section>\n");
}

fn rejection_section(page: &mut String, report: &DecisionReport) {
    page.push_str("<section id=\"rejection-section\"><h2>Rejection → valid call</h2>\n");
    let follow_ups = &report.rejection_follow_ups;
    let rejections = follow_ups.rejections();
    let valid = follow_ups.valid;
    let _ = writeln!(
        page,
        "<p class=\"big\" id=\"rejection-rate\" data-rejections=\"{rejections}\" data-valid=\"{valid}\">{}</p>",
        pct(valid, rejections)
    );
    let _ = writeln!(
        page,
        "<p class=\"note\">Share of rejections whose next call of the same tool in the same task passed \
         validation (was returned, replayed or retried): {valid} of {rejections}; for a tool name that never \
         passed validation anywhere in the log (a hallucinated name), the task's next call counts. A high share \
         means the rejection messages are actionable.</p>"
    );
    if rejections == 0 {
        page.push_str("<p class=\"empty\">No rejections in this log.</p></section>\n");
        return;
    }
    page.push_str("<ul class=\"legend\">");
    for (name, colour, n) in follow_up_series(follow_ups) {
        let _ = write!(
            page,
            "<li><span class=\"swatch\" style=\"background:{colour}\"></span>{name} ({n})</li>"
        );
    }
    page.push_str("</ul>\n");
    let mut tools: Vec<(&String, &FollowUps)> = report.rejection_follow_ups_by_tool.iter().collect();
    tools.sort_by(|a, b| b.1.rejections().cmp(&a.1.rejections()).then(a.0.cmp(b.0)));
    let rows: Vec<BarRow> = tools
        .iter()
        .take(MAX_TOOL_BARS)
        .map(|(tool, counts)| {
            let total = counts.rejections();
            let segs = follow_up_series(counts)
                .into_iter()
                .map(|(name, colour, n)| {
                    (
                        i64::try_from(n).unwrap_or(i64::MAX),
                        colour,
                        format!("{tool}: {n} of {total} rejections: {name} ({})", pct(n, total)),
                    )
                })
                .collect();
            ((*tool).clone(), segs)
        })
        .collect();
    hbar_chart(
        page,
        "rejections",
        "Rejections per tool by what followed them",
        &rows,
        " rejections",
    );
    if tools.len() > MAX_TOOL_BARS {
        let _ = writeln!(
            page,
            "<p class=\"note\">{} tools with fewer rejections are not drawn.</p>",
            tools.len() - MAX_TOOL_BARS
        );
    }
    page.push_str("</section>\n");
}

fn class_action_section(page: &mut String, report: &DecisionReport) {
    page.push_str("<section id=\"class-action-section\"><h2>Failure class × action</h2>\n");
    let mut cells: BTreeMap<(Option<FailureClass>, Action), u64> = BTreeMap::new();
    for c in &report.by_class_action {
        *cells.entry((c.class, c.action)).or_default() += c.count;
    }
    let actions: Vec<Action> = Action::ALL
        .iter()
        .copied()
        .filter(|a| cells.keys().any(|(_, b)| b == a))
        .collect();
    page.push_str("<table class=\"sortable\" id=\"class-action\"><thead><tr><th>class</th>");
    for a in &actions {
        let _ = write!(page, "<th class=\"n\">{}</th>", esc(a.as_str()));
    }
    page.push_str("<th class=\"n\">total</th></tr></thead><tbody>\n");
    for class in classes() {
        let row: Vec<u64> = actions
            .iter()
            .map(|a| cells.get(&(class, *a)).copied().unwrap_or(0))
            .collect();
        let total: u64 = row.iter().sum();
        if total == 0 {
            continue;
        }
        let _ = write!(page, "<tr><td class=\"t\">{}</td>", esc(class_name(class)));
        for n in row {
            let _ = write!(page, "<td class=\"n\" data-v=\"{n}\">{n}</td>");
        }
        let _ = writeln!(page, "<td class=\"n\" data-v=\"{total}\">{total}</td></tr>");
    }
    page.push_str("</tbody></table>\n</section>\n");
}

fn tasks_section(page: &mut String, report: &DecisionReport) {
    let mut list: Vec<&TaskSummary> = report.tasks.iter().collect();
    list.sort_by(|a, b| {
        b.repair_tokens
            .cmp(&a.repair_tokens)
            .then(a.task_id.cmp(&b.task_id))
            .then(a.user.cmp(&b.user))
    });
    let _ = writeln!(page, "<section id=\"tasks-section\"><h2>Tasks ({})</h2>", list.len());
    page.push_str(
        "<table class=\"sortable\" id=\"tasks\"><thead><tr><th>task</th><th>user</th><th class=\"n\">decisions</th>\
         <th class=\"n\">rejections</th><th class=\"n\">fails</th><th class=\"n\">repair tokens</th>\
         <th class=\"n\">latency added (ms)</th><th>last decision (UTC)</th><th>last action</th></tr></thead><tbody>\n",
    );
    for t in list.iter().take(MAX_TASK_ROWS) {
        let _ = writeln!(
            page,
            "<tr><td class=\"t\" title=\"{}\">{}</td><td class=\"t\" title=\"{}\">{}</td>\
             <td class=\"n\" data-v=\"{d}\">{d}</td><td class=\"n\" data-v=\"{rj}\">{rj}</td>\
             <td class=\"n\" data-v=\"{f}\">{f}</td><td class=\"n\" data-v=\"{tokens}\">{tokens}</td>\
             <td class=\"n\" data-v=\"{latency}\">{latency}</td><td>{}</td><td class=\"t\">{}</td></tr>",
            esc(&t.task_id),
            label(&t.task_id),
            esc(&t.user),
            label(&t.user),
            fmt_time(t.last_at.as_millis()),
            esc(t.last_action.as_str()),
            d = t.decisions,
            rj = t.rejections,
            f = t.fails,
            tokens = t.repair_tokens,
            latency = t.latency_added_ms,
        );
    }
    page.push_str("</tbody></table>\n");
    if list.len() > MAX_TASK_ROWS {
        let _ = writeln!(
            page,
            "<p class=\"note\">{} more tasks (fewest repair tokens) are not listed.</p>",
            list.len() - MAX_TASK_ROWS
        );
    }
    page.push_str("</section>\n");
}

fn failures_section(page: &mut String, sorted: &[&DecisionRecord], report: &DecisionReport) {
    let fails = report.count(Action::Fail);
    let _ = writeln!(
        page,
        "<section id=\"failures-section\"><h2>Failures ({fails})</h2>\
         <p class=\"note\">Each needs a person: <code>gate reconcile list</code> lists the failed tasks with \
         what to check, <code>gate reconcile reopen</code> lets one run again.</p>"
    );
    if fails == 0 {
        page.push_str("<p class=\"empty\">No failed decisions.</p></section>\n");
        return;
    }
    page.push_str(
        "<table class=\"sortable\" id=\"fails-by-reason\"><thead><tr><th>reason</th><th class=\"n\">fails</th>\
         </tr></thead><tbody>\n",
    );
    for (reason, n) in &report.fails_by_reason {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td class=\"n\" data-v=\"{n}\">{n}</td></tr>",
            esc(reason.as_str())
        );
    }
    page.push_str("</tbody></table>\n");
    page.push_str(
        "<table class=\"sortable\" id=\"failures\"><thead><tr><th>time (UTC)</th><th>task</th><th>tool</th>\
         <th>class</th><th>reason</th><th class=\"n\">attempt</th><th>call id</th><th>intent key</th></tr></thead>\
         <tbody>\n",
    );
    let rows = sorted.iter().rev().filter(|r| r.action == Action::Fail);
    for r in rows.take(MAX_FAIL_ROWS) {
        let key = r.intent_key.as_deref().unwrap_or("—");
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td class=\"t\" title=\"{}\">{}</td><td class=\"t\" title=\"{}\">{}</td>\
             <td class=\"t\">{}</td><td class=\"t\">{}</td><td class=\"n\" data-v=\"{a}\">{a}</td>\
             <td class=\"t\" title=\"{}\">{}</td><td class=\"t\" title=\"{}\">{}</td></tr>",
            fmt_time(r.at.as_millis()),
            esc(&r.task_id),
            label(&r.task_id),
            esc(&r.tool),
            label(&r.tool),
            esc(class_name(r.class)),
            esc(r.fail_reason.map_or("—", FailReason::as_str)),
            esc(&r.call_id),
            label(&r.call_id),
            esc(key),
            label(key),
            a = r.attempt,
        );
    }
    page.push_str("</tbody></table>\n");
    if fails > MAX_FAIL_ROWS as u64 {
        let _ = writeln!(
            page,
            "<p class=\"note\">Showing the latest {MAX_FAIL_ROWS} of {fails}.</p>"
        );
    }
    page.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_format_as_utc_for_every_i64() {
        assert_eq!(fmt_time(0), "1970-01-01 00:00:00");
        assert_eq!(fmt_time(-1), "1969-12-31 23:59:59");
        assert_eq!(fmt_time(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(fmt_time(1_764_493_200_000), "2025-11-30 09:00:00");
        assert_eq!(fmt_minute(1_764_493_259_999), "2025-11-30 09:00");
        // The extremes only have to format, not make sense.
        assert!(!fmt_time(i64::MIN).is_empty() && !fmt_time(i64::MAX).is_empty());
    }

    #[test]
    fn escaping_covers_markup_quotes_and_controls() {
        assert_eq!(
            esc("<a href='x'>\"&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(esc("a\u{0}b\u{1b}c\td"), "a\u{FFFD}b\u{FFFD}c\td");
        let long = "é".repeat(100);
        assert_eq!(label(&long).chars().count(), MAX_LABEL);
    }

    #[test]
    fn every_class_and_none_has_a_colour_and_a_name_of_its_own() {
        let colours: BTreeSet<&str> = classes().map(class_colour).collect();
        let names: BTreeSet<&str> = classes().map(class_name).collect();
        assert_eq!((colours.len(), names.len()), (9, 9));
        assert!(names.contains("none") && names.contains("ambiguous_unreadable"));
    }

    #[test]
    fn axes_use_round_steps_and_bounded_buckets() {
        assert_eq!(nice_step(0), 1);
        assert_eq!(nice_step(4), 1);
        assert_eq!(nice_step(23), 5);
        assert_eq!(nice_step(480), 100);
        assert!(nice_step(u64::MAX) > 0);
        assert_eq!(bucket_width(0, 0), 1_000);
        assert_eq!(bucket_width(0, 3_600_000), 300_000);
        let w = bucket_width(i64::MIN, i64::MAX);
        assert!((i128::from(i64::MAX) - i128::from(i64::MIN)) / w < MAX_BUCKETS);
        assert_eq!(human_width(900_000), "15 minutes");
        assert_eq!(human_width(86_400_000), "day");
    }
}
