//! The HTML report: self-contained, escaped against hostile record text,
//! bounded in size, showing the report's figures (rejection → valid call,
//! fails by reason, every failure class) and rendering in a real browser
//! (headless Chromium) without script errors.
//!
//! The renderer is a private module of the `gate` binary, so it is compiled
//! into this test directly.

#[path = "../src/html_report/mod.rs"]
mod html_report;

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolgate_ledger::{
    Action, Ambiguity, DecisionId, DecisionRecord, DecisionReport, FailureClass, FailureReason, Timestamp,
};

/// The page `gate report --html` writes for `records`.
fn page_of(records: &[DecisionRecord]) -> String {
    html_report::render(records, &DecisionReport::from_records(records))
}

/// 2025-11-30 09:00:00 UTC.
const T0: i64 = 1_764_493_200_000;

const HOSTILE_TOOL: &str = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">";
const HOSTILE_TASK: &str = "</script><script>document.documentElement.setAttribute('data-pwned','script')</script>";
const HOSTILE_USER: &str = "\"><svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\">";
const HOSTILE_CALL_ID: &str = "' onmouseover='document.documentElement.setAttribute(`data-pwned`,`attr`)";

const STRUCTURAL: Option<FailureClass> = Some(FailureClass::Structural);
const NOTHING_FOUND: Option<FailureClass> = Some(FailureClass::Ambiguous(Ambiguity::NothingFound));
const NONE: Option<FailureClass> = None;

/// One decision. A `Fail` gets the reason its class usually has (the fixtures
/// only need one per class): outcome_unknown and internal for those classes,
/// rejection_cap otherwise.
fn record(
    at_ms: i64,
    task: &str,
    user: &str,
    tool: &str,
    class: Option<FailureClass>,
    action: Action,
    tokens: i64,
) -> DecisionRecord {
    let fail_reason = (action == Action::Fail).then_some(match class {
        Some(FailureClass::OutcomeUnknown) => FailureReason::OutcomeUnknown,
        Some(FailureClass::Internal) => FailureReason::Internal,
        _ => FailureReason::RejectionCap,
    });
    DecisionRecord {
        id: DecisionId::at(Timestamp::from_millis(at_ms)),
        at: Timestamp::from_millis(at_ms),
        task_id: task.into(),
        user: user.into(),
        call_id: format!("call_{at_ms}"),
        tool: tool.into(),
        class,
        action,
        fail_reason,
        attempt: 1,
        attempts_used: 0,
        repair_tokens: tokens,
        latency_added_ms: tokens / 10,
        message_hash: "0".repeat(64),
        intent_key: (action == Action::Fail).then(|| format!("ik-{task}")),
    }
}

/// A few dozen decisions over two hours: rejections that are and are not
/// followed by a valid call, retries, failures, and hostile text everywhere a
/// string can go.
fn synthetic() -> Vec<DecisionRecord> {
    use Action::*;
    let mut out = Vec::new();
    let users = ["alice", "bob", HOSTILE_USER];
    for i in 0..8i64 {
        let task = format!("task-{i}");
        let user = users[(i % 3) as usize];
        let t = T0 + i * 15 * 60_000;
        out.push(record(t, &task, user, "lookup_customer", NONE, Return, 0));
        out.push(record(
            t + 1_000,
            &task,
            user,
            "charge_card",
            STRUCTURAL,
            Reject,
            300 + i * 10,
        ));
        if i % 2 == 0 {
            out.push(record(t + 2_000, &task, user, "charge_card", NONE, Return, 0));
        } else {
            out.push(record(t + 2_000, &task, user, "charge_card", STRUCTURAL, Reject, 280));
            out.push(record(t + 3_000, &task, user, "charge_card", STRUCTURAL, Fail, 0));
        }
        if i % 3 == 0 {
            out.push(record(
                t + 4_000,
                &task,
                user,
                "search_orders",
                NOTHING_FOUND,
                RetryWithCorrection,
                150,
            ));
            out.push(record(t + 5_000, &task, user, "search_orders", NONE, Return, 0));
        }
        if i == 5 {
            out.push(record(
                t + 6_000,
                &task,
                user,
                "refund",
                Some(FailureClass::OutcomeUnknown),
                Fail,
                0,
            ));
        }
    }
    out.push(record(
        T0 + 7_200_000,
        HOSTILE_TASK,
        HOSTILE_USER,
        HOSTILE_TOOL,
        STRUCTURAL,
        Reject,
        99,
    ));
    let mut control = record(
        T0 + 7_201_000,
        HOSTILE_TASK,
        "\u{0}\u{1b}[31m",
        HOSTILE_TOOL,
        Some(FailureClass::Internal),
        Fail,
        1,
    );
    control.call_id = HOSTILE_CALL_ID.to_owned();
    control.intent_key = Some("key\u{7}<b>bold</b>".to_owned());
    out.push(control);
    out
}

#[test]
fn page_is_one_self_contained_document() {
    let page = page_of(&synthetic());
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the report's own inline script"
    );
    assert!(!page.contains("<script src"));
    for external in [
        "http://", "https://", "<link", "@import", "url(", "<iframe", "<object", "<embed",
    ] {
        assert!(!page.contains(external), "page must load nothing: found {external}");
    }
    assert!(page.contains("Content-Security-Policy") && page.contains("default-src 'none'"));
    for chart in ["id=\"timeline\"", "id=\"repair-tokens\"", "id=\"rejections\""] {
        assert!(page.contains(chart), "missing chart {chart}");
    }
}

#[test]
fn hostile_record_text_is_escaped() {
    let page = page_of(&synthetic());
    for raw in [HOSTILE_TOOL, HOSTILE_TASK, HOSTILE_USER, HOSTILE_CALL_ID, "<b>bold</b>"] {
        assert!(!page.contains(raw), "unescaped record text in the page: {raw}");
    }
    assert!(page.contains("&lt;img src=x onerror=&quot;"));
    assert!(page.contains("&lt;/script&gt;&lt;script&gt;"));
    assert!(page.contains("&#39; onmouseover=&#39;"));
    assert!(!page.contains("<img") && !page.contains("<svg onload") && !page.contains("<b>"));
    assert!(!page.contains('\u{0}') && !page.contains('\u{1b}') && !page.contains('\u{7}'));
}

/// The synthetic log, counted by hand: per task i (0..8) a lookup returned,
/// a charge rejected, then the charge returned (even i) or rejected again and
/// failed (odd i); a search retried and returned for i = 0, 3, 6; a refund
/// failed with an unknown outcome for i = 5. Then the hostile task: a
/// rejection of a tool that never ran, and an internal failure.
#[test]
fn cards_timeline_and_class_table_count_the_synthetic_log() {
    let page = page_of(&synthetic());
    for (value, key) in [
        ("37", "decisions"),
        ("13", "rejections"),
        ("3", "retries"),
        ("6", "fails"),
    ] {
        let card = format!("<div class=\"v\">{value}</div><div class=\"k\">{key}</div>");
        assert!(page.contains(&card), "missing card {card}");
    }
    // Every class present is a series: 13 rejections and 4 rejection-cap fails
    // are structural; 8 lookups, 4 charges and 3 searches returned.
    let timeline = excerpt_around(&page, "<ul class=\"legend\"><li><button");
    assert!(page.contains("data-series-count=\"5\""), "{timeline}");
    for series in [
        "structural (17)",
        "ambiguous_nothing_found (3)",
        "outcome_unknown (1)",
        "internal (1)",
        "none (15)",
    ] {
        assert!(page.contains(series), "missing series {series}: {timeline}");
    }
    // Columns: the actions that occur, in vocabulary order.
    assert!(page.contains(
        "<th class=\"n\">return</th><th class=\"n\">reject</th><th class=\"n\">retry_with_correction</th>\
         <th class=\"n\">fail</th><th class=\"n\">total</th>"
    ));
    assert!(
        page.contains(
            "<tr><td class=\"t\">structural</td><td class=\"n\" data-v=\"0\">0</td>\
             <td class=\"n\" data-v=\"13\">13</td><td class=\"n\" data-v=\"0\">0</td>\
             <td class=\"n\" data-v=\"4\">4</td><td class=\"n\" data-v=\"17\">17</td></tr>"
        ),
        "{}",
        excerpt_around(&page, "id=\"class-action\"")
    );
    // Rejections followed by a valid call: the first charge rejection of each
    // even task (4 of 13).
    assert!(page.contains("id=\"rejection-rate\" data-rejections=\"13\" data-valid=\"4\">30.8%<"));
}

#[test]
fn failures_are_counted_by_reason_and_each_row_names_its_reason() {
    let page = page_of(&synthetic());
    assert!(page.contains("<h2>Failures (6)</h2>"));
    let table = excerpt_around(&page, "id=\"fails-by-reason\"");
    let rows = [
        "<tr><td>rejection_cap</td><td class=\"n\" data-v=\"4\">4</td></tr>\n",
        "<tr><td>outcome_unknown</td><td class=\"n\" data-v=\"1\">1</td></tr>\n",
        "<tr><td>internal</td><td class=\"n\" data-v=\"1\">1</td></tr>\n",
    ];
    assert!(page.contains(&rows.concat()), "{table}");
    assert!(page.contains("<th>class</th><th>reason</th>"));
    assert_eq!(page.matches("<td class=\"t\">rejection_cap</td>").count(), 4);
    assert!(page.contains("<td class=\"t\">internal</td><td class=\"t\">internal</td>"));
}

#[test]
fn rejection_rate_counts_the_next_call_of_the_same_tool_in_the_same_task() {
    use Action::*;
    let records = vec![
        // A: the next `x` is returned → valid (the `y` in between does not count).
        record(T0, "A", "u", "x", STRUCTURAL, Reject, 10),
        record(T0 + 1, "A", "u", "y", NONE, Return, 0),
        record(T0 + 2, "A", "u", "x", NONE, Return, 0),
        // B: `x` then fails, `y` is never called again → neither is valid.
        record(T0 + 3, "B", "u", "x", STRUCTURAL, Reject, 10),
        record(T0 + 4, "B", "u", "y", STRUCTURAL, Reject, 10),
        record(T0 + 5, "B", "u", "x", STRUCTURAL, Fail, 0),
        // C: another tool succeeds, `x` is never called again → not valid.
        record(T0 + 6, "C", "u", "x", STRUCTURAL, Reject, 10),
        record(T0 + 7, "C", "u", "y", NONE, Return, 0),
        // D: retried → valid. E: a valid `z` in another task does not count.
        record(T0 + 8, "D", "u", "x", STRUCTURAL, Reject, 10),
        record(T0 + 9, "D", "u", "x", NOTHING_FOUND, RetryWithCorrection, 40),
        record(T0 + 10, "E", "u", "z", STRUCTURAL, Reject, 10),
        record(T0 + 11, "F", "u", "z", NONE, Return, 0),
    ];
    let page = page_of(&records);
    assert!(
        page.contains("id=\"rejection-rate\" data-rejections=\"6\" data-valid=\"2\">33.3%<"),
        "{}",
        excerpt_around(&page, "rejection-rate")
    );
    // There is one definition of the figure, so no second one to compare with.
    assert!(!page.contains("ledger-rate"));
}

#[test]
fn a_hallucinated_tool_name_is_fixed_by_the_tasks_next_call() {
    use Action::*;
    let records = vec![
        // `fetch_invoice` never ran anywhere: the model fixed it by calling the real tool.
        record(T0, "A", "u", "fetch_invoice", STRUCTURAL, Reject, 10),
        record(T0 + 1, "A", "u", "get_invoice", NONE, Return, 0),
        // Here the next call after the hallucinated name is rejected too: not valid.
        record(T0 + 2, "B", "u", "fetch_invoice", STRUCTURAL, Reject, 10),
        record(T0 + 3, "B", "u", "get_invoice", STRUCTURAL, Reject, 10),
        // A real tool that ran elsewhere keeps the same-tool rule: `get_invoice`
        // is never called again in B, so its rejection is not valid either.
    ];
    let page = page_of(&records);
    assert!(
        page.contains("id=\"rejection-rate\" data-rejections=\"3\" data-valid=\"1\">33.3%<"),
        "{}",
        excerpt_around(&page, "rejection-rate")
    );
}

#[test]
fn empty_log_renders_a_page_that_says_so() {
    let page = page_of(&[]);
    assert!(page.contains("id=\"empty\""));
    assert!(page.contains("data-rendered"), "the script still runs");
    assert!(!page.contains("id=\"timeline\""));
}

#[test]
fn output_stays_bounded_for_a_huge_noisy_log() {
    let classes: Vec<Option<FailureClass>> = FailureClass::ALL.iter().copied().map(Some).chain([None]).collect();
    let mut records = Vec::new();
    for i in 0..20_000i64 {
        records.push(record(
            T0 + i * 997,
            &format!("task-{}-{}", i % 3_000, "x".repeat(200)),
            &format!("user-{}", i % 50),
            &format!("tool-{}", i % 400),
            classes[(i % 9) as usize],
            Action::ALL[(i % 6) as usize],
            i % 700,
        ));
    }
    // Timestamps at the edges of the range must not overflow anything.
    records.push(record(i64::MIN, "edge", "u", "t", NONE, Action::Return, i64::MAX));
    records.push(record(i64::MAX, "edge", "u", "t", NONE, Action::Return, i64::MAX));
    let page = page_of(&records);
    assert!(page.len() < 3_000_000, "page is {} bytes", page.len());
    // Eight classes and "none": every one is a series of its own.
    let timeline = excerpt_around(&page, "id=\"timeline\"");
    assert!(timeline.contains("data-series-count=\"9\""), "{timeline}");
    assert!(page.contains("more tasks (fewest repair tokens) are not listed"));
    assert!(page.contains("Showing the latest 100 of"));
}

fn excerpt_around(page: &str, needle: &str) -> String {
    let at = page.find(needle).unwrap_or(0);
    page[at..].chars().take(300).collect()
}

// ---------------------------------------------------------------- Chromium

/// Records uncaught errors on `<html data-errors>`; inserted before any other
/// script so it sees them all.
const ERROR_PROBE: &str = "<script>window.addEventListener('error', function (e) { \
    var h = document.documentElement; \
    h.setAttribute('data-errors', (h.getAttribute('data-errors') || '') + (e.message || 'error') + ';'); });\
    </script>";

/// Loads `page` (with the error probe) in headless Chromium and returns the
/// serialized DOM after scripts ran, and Chromium's log.
fn render_in_chromium(name: &str, page: &str) -> (String, String) {
    let dir = std::env::temp_dir().join(format!("gate-html-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let instrumented = page.replacen("<head>", &format!("<head>\n{ERROR_PROBE}"), 1);
    assert_ne!(instrumented, page, "the page has a <head> to instrument");
    let html = dir.join("report.html");
    std::fs::write(&html, instrumented).expect("write page");
    let stdout_path = dir.join("dom.html");
    let stderr_path = dir.join("chromium.log");
    let mut child = Command::new(support::chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg("--dump-dom")
        .arg(file_url(&html))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).expect("stdout file"))
        .stderr(std::fs::File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .expect("start chromium");
    // A hang guard only; nothing is asserted about how long rendering takes.
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish rendering {}", html.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let dom = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let log = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(status.success(), "chromium failed ({status}):\n{log}");
    assert!(!dom.is_empty(), "chromium printed no DOM:\n{log}");
    let _ = std::fs::remove_dir_all(&dir);
    (dom, log)
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The `<html …>` start tag of a serialized DOM, where the probe and the
/// report leave their markers.
fn html_tag(dom: &str) -> &str {
    let start = dom.find("<html").unwrap_or(0);
    let end = dom[start..].find('>').map(|e| start + e + 1).unwrap_or(dom.len());
    &dom[start..end]
}

#[test]
fn renders_in_headless_chromium_without_script_errors() {
    let page = page_of(&synthetic());
    let (dom, log) = render_in_chromium("full", &page);
    let tag = html_tag(&dom);
    assert!(
        tag.contains("data-rendered=\"yes\""),
        "the report's script did not finish: {tag}\n{log}"
    );
    assert!(!tag.contains("data-errors"), "script errors: {tag}\n{log}");
    assert!(!log.contains("Uncaught"), "script errors in the log:\n{log}");
    assert!(!tag.contains("data-pwned"), "hostile record text ran as code: {tag}");
    // The charts are in the live DOM, and the hostile text is there as text.
    assert!(dom.matches("class=\"bar\"").count() >= 10, "too few bars drawn");
    assert!(
        dom.contains("id=\"timeline\"") && dom.contains("id=\"repair-tokens\"") && dom.contains("id=\"rejections\"")
    );
    assert!(dom.contains("&lt;img src=x onerror="));
    // The sortable tables were wired up by the script.
    assert!(dom.contains("tabindex=\"0\""), "table headers were not made sortable");
}

#[test]
fn empty_page_renders_in_headless_chromium() {
    let (dom, log) = render_in_chromium("empty", &page_of(&[]));
    let tag = html_tag(&dom);
    assert!(
        tag.contains("data-rendered=\"yes\"") && !tag.contains("data-errors"),
        "{tag}\n{log}"
    );
}

#[test]
fn the_error_probe_catches_a_broken_script() {
    // Proves the probe above is not vacuous: a page with a failing script is caught.
    let page = page_of(&synthetic()).replacen("</body>", "<script>thisFunctionDoesNotExist();</script></body>", 1);
    let (dom, _) = render_in_chromium("broken", &page);
    let tag = html_tag(&dom);
    assert!(
        tag.contains("data-errors") && tag.contains("thisFunctionDoesNotExist"),
        "{tag}"
    );
}
