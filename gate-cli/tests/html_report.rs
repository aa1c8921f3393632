//! The HTML report: self-contained, escaped against hostile record text,
//! bounded in size, counting rejection → valid call per tool and task, and
//! rendering in a real browser (headless Chromium) without script errors.
//!
//! The renderer is a private module of the `gate` binary, so it is compiled
//! into this test directly.

#[path = "../src/html_report.rs"]
mod html_report;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gate_ledger::{DecisionRecord, Timestamp};

/// 2025-11-30 09:00:00 UTC.
const T0: i64 = 1_764_493_200_000;

const HOSTILE_TOOL: &str = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">";
const HOSTILE_TASK: &str = "</script><script>document.documentElement.setAttribute('data-pwned','script')</script>";
const HOSTILE_USER: &str = "\"><svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\">";
const HOSTILE_CLASS: &str = "' onmouseover='document.documentElement.setAttribute(`data-pwned`,`attr`)";

fn record(at_ms: i64, task: &str, user: &str, tool: &str, class: &str, action: &str, tokens: i64) -> DecisionRecord {
    DecisionRecord {
        at: Timestamp::from_millis(at_ms),
        task_id: task.to_owned(),
        user: user.to_owned(),
        call_id: format!("call_{at_ms}"),
        tool: tool.to_owned(),
        class: class.to_owned(),
        action: action.to_owned(),
        attempt: 1,
        attempts_used: 0,
        repair_tokens: tokens,
        latency_added_ms: tokens / 10,
        message_hash: "0".repeat(64),
        intent_key: (action == "fail").then(|| format!("ik-{task}")),
    }
}

/// A few dozen decisions over two hours: rejections that are and are not
/// followed by a valid call, retries, failures, and hostile text everywhere a
/// string can go.
fn synthetic() -> Vec<DecisionRecord> {
    let mut out = Vec::new();
    let users = ["alice", "bob", HOSTILE_USER];
    for i in 0..8i64 {
        let task = format!("task-{i}");
        let user = users[(i % 3) as usize];
        let t = T0 + i * 15 * 60_000;
        out.push(record(t, &task, user, "lookup_customer", "none", "return", 0));
        out.push(record(
            t + 1_000,
            &task,
            user,
            "charge_card",
            "structural",
            "reject",
            300 + i * 10,
        ));
        if i % 2 == 0 {
            out.push(record(t + 2_000, &task, user, "charge_card", "none", "return", 0));
        } else {
            out.push(record(
                t + 2_000,
                &task,
                user,
                "charge_card",
                "structural",
                "reject",
                280,
            ));
            out.push(record(t + 3_000, &task, user, "charge_card", "structural", "fail", 0));
        }
        if i % 3 == 0 {
            out.push(record(
                t + 4_000,
                &task,
                user,
                "search_orders",
                "ambiguous",
                "retry",
                150,
            ));
            out.push(record(t + 5_000, &task, user, "search_orders", "none", "return", 0));
        }
        if i == 5 {
            out.push(record(t + 6_000, &task, user, "refund", "outcome_unknown", "fail", 0));
        }
    }
    out.push(record(
        T0 + 7_200_000,
        HOSTILE_TASK,
        HOSTILE_USER,
        HOSTILE_TOOL,
        HOSTILE_CLASS,
        "reject",
        99,
    ));
    let mut control = record(
        T0 + 7_201_000,
        HOSTILE_TASK,
        "\u{0}\u{1b}[31m",
        HOSTILE_TOOL,
        "internal",
        "fail",
        1,
    );
    control.intent_key = Some("key\u{7}<b>bold</b>".to_owned());
    out.push(control);
    out
}

#[test]
fn page_is_one_self_contained_document() {
    let page = html_report::render(&synthetic());
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
    let page = html_report::render(&synthetic());
    for raw in [HOSTILE_TOOL, HOSTILE_TASK, HOSTILE_USER, HOSTILE_CLASS, "<b>bold</b>"] {
        assert!(!page.contains(raw), "unescaped record text in the page: {raw}");
    }
    assert!(page.contains("&lt;img src=x onerror=&quot;"));
    assert!(page.contains("&lt;/script&gt;&lt;script&gt;"));
    assert!(page.contains("&#39; onmouseover=&#39;"));
    assert!(!page.contains("<img") && !page.contains("<svg onload") && !page.contains("<b>"));
    assert!(!page.contains('\u{0}') && !page.contains('\u{1b}') && !page.contains('\u{7}'));
}

#[test]
fn rejection_rate_counts_the_next_call_of_the_same_tool_in_the_same_task() {
    let records = vec![
        // A: the next `x` is returned → valid (the `y` in between does not count).
        record(T0, "A", "u", "x", "structural", "reject", 10),
        record(T0 + 1, "A", "u", "y", "none", "return", 0),
        record(T0 + 2, "A", "u", "x", "none", "return", 0),
        // B: `x` then fails, `y` is never called again → neither is valid.
        record(T0 + 3, "B", "u", "x", "structural", "reject", 10),
        record(T0 + 4, "B", "u", "y", "structural", "reject", 10),
        record(T0 + 5, "B", "u", "x", "structural", "fail", 0),
        // C: another tool succeeds, `x` is never called again → not valid.
        record(T0 + 6, "C", "u", "x", "structural", "reject", 10),
        record(T0 + 7, "C", "u", "y", "none", "return", 0),
        // D: retried → valid. E: a valid `x` in another task does not count.
        record(T0 + 8, "D", "u", "x", "structural", "reject", 10),
        record(T0 + 9, "D", "u", "x", "ambiguous", "retry", 40),
        record(T0 + 10, "E", "u", "z", "structural", "reject", 10),
        record(T0 + 11, "F", "u", "z", "none", "return", 0),
    ];
    let page = html_report::render(&records);
    assert!(
        page.contains("id=\"rejection-rate\" data-rejections=\"6\" data-valid=\"2\">33.3%<"),
        "{}",
        excerpt_around(&page, "rejection-rate")
    );
    // The ledger's figure looks at the next decision of the task, any tool: A, C and D.
    assert!(page.contains("figure (next decision of the task, whatever its tool): 3 of 6"));
}

#[test]
fn a_hallucinated_tool_name_is_fixed_by_the_tasks_next_call() {
    let records = vec![
        // `fetch_invoice` never ran anywhere: the model fixed it by calling the real tool.
        record(T0, "A", "u", "fetch_invoice", "structural", "reject", 10),
        record(T0 + 1, "A", "u", "get_invoice", "none", "return", 0),
        // Here the next call after the hallucinated name is rejected too: not valid.
        record(T0 + 2, "B", "u", "fetch_invoice", "structural", "reject", 10),
        record(T0 + 3, "B", "u", "get_invoice", "structural", "reject", 10),
        // A real tool that ran elsewhere keeps the same-tool rule: `get_invoice`
        // is never called again in B, so its rejection is not valid either.
    ];
    let page = html_report::render(&records);
    assert!(
        page.contains("id=\"rejection-rate\" data-rejections=\"3\" data-valid=\"1\">33.3%<"),
        "{}",
        excerpt_around(&page, "rejection-rate")
    );
}

#[test]
fn empty_log_renders_a_page_that_says_so() {
    let page = html_report::render(&[]);
    assert!(page.contains("id=\"empty\""));
    assert!(page.contains("data-rendered"), "the script still runs");
    assert!(!page.contains("id=\"timeline\""));
}

#[test]
fn output_stays_bounded_for_a_huge_noisy_log() {
    let mut records = Vec::new();
    for i in 0..20_000i64 {
        records.push(record(
            T0 + i * 997,
            &format!("task-{}-{}", i % 3_000, "x".repeat(200)),
            &format!("user-{}", i % 50),
            &format!("tool-{}", i % 400),
            &format!("class-{}", i % 60),
            ["reject", "return", "retry", "fail", &format!("action-{}", i % 30)][(i % 5) as usize],
            i % 700,
        ));
    }
    // Timestamps at the edges of the range must not overflow anything.
    records.push(record(i64::MIN, "edge", "u", "t", "none", "return", i64::MAX));
    records.push(record(i64::MAX, "edge", "u", "t", "none", "return", i64::MAX));
    let page = html_report::render(&records);
    assert!(page.len() < 3_000_000, "page is {} bytes", page.len());
    let timeline = excerpt_around(&page, "id=\"timeline\"");
    assert!(timeline.contains("data-series-count=\"8\""), "{timeline}");
    assert!(page.contains("more tasks (fewest repair tokens) are not listed"));
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

fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("GATE_CHROMIUM") {
        return PathBuf::from(path);
    }
    let names = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];
    let dirs = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    for dir in dirs.unwrap_or_default() {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "headless Chromium is required by this test but was not found on PATH. \
         Install it (Debian: `apt-get install -y chromium`) or set GATE_CHROMIUM to the browser binary."
    );
}

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
    let mut child = Command::new(chromium())
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
    let page = html_report::render(&synthetic());
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
    let (dom, log) = render_in_chromium("empty", &html_report::render(&[]));
    let tag = html_tag(&dom);
    assert!(
        tag.contains("data-rendered=\"yes\"") && !tag.contains("data-errors"),
        "{tag}\n{log}"
    );
}

#[test]
fn the_error_probe_catches_a_broken_script() {
    // Proves the probe above is not vacuous: a page with a failing script is caught.
    let page =
        html_report::render(&synthetic()).replacen("</body>", "<script>thisFunctionDoesNotExist();</script></body>", 1);
    let (dom, _) = render_in_chromium("broken", &page);
    let tag = html_tag(&dom);
    assert!(
        tag.contains("data-errors") && tag.contains("thisFunctionDoesNotExist"),
        "{tag}"
    );
}
