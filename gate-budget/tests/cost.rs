//! The cost model of context replay: the worked example under each
//! assumption, the expectation with random retries, and the output formats.

use toolgate_budget::cost::{Assumption, CostParams, CostReport, expected_tokens, render_text};

fn report(p: &CostParams) -> CostReport {
    expected_tokens(p).expect("valid parameters")
}

#[test]
fn worked_example_without_retries_is_18k() {
    let r = report(&CostParams::new(3, 4_000, 2_000));
    assert_eq!(r.step_inputs, [4_000, 6_000, 8_000]);
    assert_eq!(r.without_retries, 18_000);
    assert_eq!(r.retry_at, 3);
    assert!(r.with_retries.is_none());
}

#[test]
fn worked_example_one_retry_at_step_3_under_each_assumption() {
    let r = report(&CostParams::new(3, 4_000, 2_000));
    let rows: Vec<(Assumption, u64, u64)> = r.one_retry.iter().map(|t| (t.assumption, t.extra, t.total)).collect();
    assert_eq!(
        rows,
        [
            (Assumption::ReplayOnce, 8_000, 26_000),
            (Assumption::ReplayWithError, 10_000, 28_000),
            (Assumption::RestartTask, 18_000, 36_000),
        ]
    );
    let multipliers: Vec<String> = r.one_retry.iter().map(|t| format!("{:.3}", t.multiplier)).collect();
    assert_eq!(multipliers, ["1.444", "1.556", "2.000"]);
}

// A retry early in the task: under (b) the error stays for the later steps.
#[test]
fn retry_at_step_1_carries_the_error_forward() {
    let mut p = CostParams::new(3, 4_000, 2_000);
    p.retry_at = Some(1);
    let r = report(&p);
    let totals: Vec<u64> = r.one_retry.iter().map(|t| t.total).collect();
    // (a) +4k; (b) +4k +2k for the retry, +2k at each of steps 2 and 3; (c) +4k.
    assert_eq!(totals, [22_000, 28_000, 22_000]);
}

#[test]
fn closed_form_matches_the_formula() {
    // N × system + per_step × N(N − 1)/2
    for (n, s, k) in [
        (1u32, 100u64, 50u64),
        (10, 4_000, 2_000),
        (1_000, 1_000_000_000, 1_000_000_000),
    ] {
        let r = report(&CostParams::new(n, s, k));
        let n = u64::from(n);
        assert_eq!(r.without_retries, n * s + k * n * (n - 1) / 2);
    }
}

// With p = 0 there is nothing to simulate; with p > 0 the Monte-Carlo mean
// agrees with the closed form within four standard errors.
#[test]
fn monte_carlo_agrees_with_the_closed_form() {
    for (p, retries) in [(0.2, 2u32), (0.5, 0), (0.3, 4), (0.05, 2)] {
        let mut params = CostParams::new(5, 4_000, 2_000);
        params.retry_rate = p;
        params.max_retries = retries;
        params.trials = 40_000;
        params.seed = 11;
        let w = report(&params).with_retries.expect("p > 0 gives an expectation");
        for e in &w.expectations {
            let gap = (e.monte_carlo - e.expected).abs();
            assert!(
                gap <= 4.0 * e.std_error + 1e-6,
                "p {p}, {:?}: {} vs {}",
                e.assumption,
                e.monte_carlo,
                e.expected
            );
            assert!(e.multiplier >= 1.0 - 1e-9 || retries == 0);
        }
        assert!(
            (w.simulated_task_failure_rate - w.task_failure_rate).abs() < 0.02,
            "p {p}"
        );
    }
}

// The closed form for (a) by hand: p = 0.2, up to 2 retries, 3 steps.
#[test]
fn replay_once_expectation_by_hand() {
    let mut params = CostParams::new(3, 4_000, 2_000);
    params.retry_rate = 0.2;
    let w = report(&params).with_retries.expect("p > 0");
    let attempts = 1.0 + 0.2 + 0.04;
    let s: f64 = 1.0 - 0.008;
    let by_hand = attempts * (4_000.0 + s * 6_000.0 + s * s * 8_000.0);
    assert!((w.expectations[0].expected - by_hand).abs() < 1e-6);
    assert!(w.expectations[1].expected > w.expectations[0].expected);
    assert!((w.task_failure_rate - (1.0 - s.powi(3))).abs() < 1e-12);
}

#[test]
fn the_seed_makes_the_estimate_reproducible() {
    let mut p = CostParams::new(4, 1_000, 500);
    p.retry_rate = 0.3;
    p.trials = 2_000;
    p.seed = 5;
    assert_eq!(report(&p), report(&p));
    let mut q = p;
    q.seed = 6;
    assert_ne!(report(&p).with_retries, report(&q).with_retries);
}

#[test]
fn out_of_range_parameters_are_errors() {
    let base = CostParams::new(3, 4_000, 2_000);
    type Mutation = fn(&mut CostParams);
    let cases: [(Mutation, &str); 9] = [
        (|p| p.steps = 0, "steps"),
        (|p| p.steps = 1_001, "steps"),
        (|p| p.system = 1_000_000_001, "system"),
        (|p| p.per_step = u64::MAX, "per_step"),
        (|p| p.retry_rate = 1.0, "retry_rate"),
        (|p| p.retry_rate = f64::NAN, "retry_rate"),
        (|p| p.trials = 0, "trials"),
        (|p| p.max_retries = 101, "max_retries"),
        (|p| p.retry_at = Some(4), "retry_at"),
    ];
    for (mutate, parameter) in cases {
        let mut p = base;
        mutate(&mut p);
        assert_eq!(expected_tokens(&p).map(|_| ()).map_err(|e| e.parameter), Err(parameter));
    }
}

#[test]
fn text_output_shows_each_assumption_with_its_figure() {
    let mut p = CostParams::new(3, 4_000, 2_000);
    p.retry_rate = 0.2;
    let text = render_text(&report(&p));
    assert!(text.contains("without retries: 18000 tokens"), "{text}");
    assert!(text.contains("step inputs: 4000 + 6000 + 8000"), "{text}");
    for (name, total) in [
        ("replay_once", "26000"),
        ("replay_with_error", "28000"),
        ("restart_task", "36000"),
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(name) && l.contains("tokens  ×"))
            .expect("a line per assumption");
        assert!(line.contains(total), "{line}");
    }
    assert!(text.contains("with retries: p = 0.2"), "{text}");
}

#[test]
fn json_output_names_the_assumptions() {
    let r = report(&CostParams::new(3, 4_000, 2_000));
    let json = serde_json::to_value(&r).expect("serializes");
    assert_eq!(json["without_retries"], 18_000);
    assert_eq!(json["one_retry"][1]["assumption"], "replay_with_error");
    assert_eq!(json["one_retry"][1]["total"], 28_000);
    assert!(json["with_retries"].is_null());
}
