//! Linear time on adversarial input: 10 MB built from the shapes that make
//! naive detectors quadratic (anchors repeated back to back, unterminated
//! PEM headers, endless hostname and IPv6 runs, one huge line, one huge
//! stack trace). The test asserts that sanitizing finishes within a
//! generous bound and still does its job; it measures nothing tight.
//!
//! The bound is 120 s because tests run unoptimized (the regex crate is
//! some 20 times slower there) and share two cores with the rest of the
//! workspace's tests; an idle machine finishes in about 12 s. A quadratic
//! path on 10 MB would take hours, so the bound still tells the two apart.

#[path = "support/shapes.rs"]
mod shapes;
use std::sync::mpsc;
use std::time::Duration;
use toolgate_sanitize::Sanitizer;

const MB: usize = 1024 * 1024;

/// Generous: see the module comment.
const BOUND: Duration = Duration::from_secs(120);

fn adversarial(total: usize) -> String {
    let shapes = shapes::SHAPES;
    let per = total / shapes.len();
    let mut s = String::with_capacity(total + 64);
    for shape in shapes {
        s.push_str(&shapes::fill(shape, per));
        s.push('\n');
    }
    s
}

#[test]
fn ten_megabytes_of_worst_case_input_finish_in_linear_time() {
    let input = adversarial(10 * MB);
    assert!(input.len() >= 10 * MB - 64);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let s = Sanitizer::builder().max_len(usize::MAX).build().unwrap();
        let out = s.sanitize(&input);
        let _ = tx.send((input.len(), out.text.len(), out.findings.len()));
    });
    let (in_len, out_len, findings) = rx
        .recv_timeout(BOUND)
        .expect("sanitizing 10 MB of adversarial input did not finish within the bound");
    assert!(findings > 0, "the adversarial input contains real findings");
    assert!(out_len <= in_len + 75 * findings);
}

#[test]
fn one_huge_line_and_one_huge_trace_are_linear() {
    let mut input = String::from("java.lang.IllegalStateException: boom\n");
    input.push_str(&"\tat com.acme.A.b(A.java:1)\n".repeat(3 * MB / 27));
    input.push_str("after\n");
    input.push_str(&shapes::fill("word 10.0.0.1 ", 3 * MB));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let out = Sanitizer::default().sanitize(&input);
        let _ = tx.send(out.text);
    });
    let text = rx.recv_timeout(BOUND).expect("did not finish within the bound");
    assert!(text.starts_with("java.lang.IllegalStateException: boom\n[stack trace removed]\nafter\n"));
    assert!(text.len() <= toolgate_sanitize::DEFAULT_MAX_LEN);
}
