//! The report's charts, drawn as inline SVG on the Rust side so they show even
//! with scripts disabled and tests can read them as text: decisions by failure
//! class over time, repair tokens per task, and what followed each rejection,
//! per tool. The geometry (widths, buckets, grid steps) and the fixed colours
//! live here; the page around the charts is the parent module's.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use toolgate_ledger::{Ambiguity, DecisionRecord, DecisionReport, FailureClass, FollowUps};

use super::date::{fmt_date, fmt_minute, fmt_time};
use super::{class_name, classes, esc, label, pct};

/// Most tasks in the repair-token chart.
const MAX_TASK_BARS: usize = 40;
/// Most tools in the rejection chart.
const MAX_TOOL_BARS: usize = 25;
/// Most time buckets in the timeline.
const MAX_BUCKETS: i128 = 30;

const CHART_WIDTH: i64 = 860;

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

pub(super) fn timeline_section(page: &mut String, sorted: &[&DecisionRecord]) {
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

pub(super) fn repair_tokens_section(page: &mut String, report: &DecisionReport) {
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

pub(super) fn rejection_section(page: &mut String, report: &DecisionReport) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
