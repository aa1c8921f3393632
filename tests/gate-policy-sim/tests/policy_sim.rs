//! The policy simulation's invariants: gate never runs a charge twice, the
//! naive policy does whenever a write times out, every charge gate could not
//! confirm is in the ledger, gate's token meter agrees with the simulation's
//! formula, and the same seed gives the same table.

use gate_policy_sim::{self as sim, Mix, Params, Policy, Report, Row};

fn params(tasks: u64, seed: u64) -> Params {
    Params {
        tasks,
        seed,
        ..Params::default()
    }
}

async fn run(params: &Params, mixes: &[Mix]) -> Report {
    sim::run(params, mixes).await.expect("the simulation runs")
}

fn row(report: &Report, mix: Mix, policy: Policy) -> &Row {
    report
        .rows
        .iter()
        .find(|r| r.mix == mix && r.policy == policy)
        .expect("every mix has a row per policy")
}

#[tokio::test]
async fn gate_never_charges_twice_and_naive_retry_does_when_a_write_times_out() {
    let report = run(&params(300, 7), &Mix::ALL).await;
    for mix in Mix::ALL {
        let gate = row(&report, mix, Policy::Gate);
        assert_eq!(gate.duplicate_charges, 0, "{mix:?}: {gate:?}");
        assert_eq!(gate.unrecorded_charges, 0, "{mix:?}: {gate:?}");
    }
    let timeouts = row(&report, Mix::WriteTimeout, Policy::Gate).faults;
    assert!(timeouts > 0, "the timeout mix injects timeouts");
    let naive = row(&report, Mix::WriteTimeout, Policy::NaiveRetry3);
    assert_eq!(
        naive.duplicate_charges, timeouts,
        "every timed-out charge is sent again and runs again"
    );
    assert!(row(&report, Mix::Mixed, Policy::NaiveRetry3).duplicate_charges > 0);
}

#[tokio::test]
async fn every_charge_gate_could_not_confirm_is_queued_for_reconciliation() {
    let report = run(&params(300, 11), &[Mix::WriteTimeout]).await;
    let gate = row(&report, Mix::WriteTimeout, Policy::Gate);
    assert_eq!(gate.charges_to_reconcile, gate.faults);
    assert_eq!(gate.fail_reasons.get("outcome_unknown"), Some(&gate.faults));
    assert_eq!(gate.failed_with_report, gate.faults, "a timed-out charge fails loudly");
    assert_eq!(gate.repair_tokens_total, 0, "an unknown outcome is never repaired");
    let pydantic = row(&report, Mix::WriteTimeout, Policy::PydanticAiStyle);
    assert_eq!(pydantic.failed_unreported, gate.faults);
    assert_eq!(
        pydantic.unrecorded_charges, gate.faults,
        "the exception ends the run; nothing records the charge"
    );
}

#[tokio::test]
async fn gates_repair_tokens_are_the_same_formula_as_the_naive_policies() {
    let report = run(&params(200, 3), &Mix::ALL).await;
    for r in &report.rows {
        assert_eq!(r.metering_mismatches, 0, "{r:?}");
        assert_eq!(r.completed + r.failed_with_report + r.failed_unreported, r.tasks);
    }
    for mix in [Mix::InvalidArgs, Mix::UnknownTool, Mix::AmbiguousRead] {
        assert!(row(&report, mix, Policy::Gate).repair_tokens_total > 0, "{mix:?}");
    }
}

#[tokio::test]
async fn the_same_seed_gives_the_same_table() {
    let p = params(150, 42);
    let first = run(&p, &Mix::ALL).await;
    let second = run(&p, &Mix::ALL).await;
    assert_eq!(first, second);
    assert_eq!(sim::markdown(&first), sim::markdown(&second));
    let other = run(&params(150, 43), &Mix::ALL).await;
    assert_ne!(first.rows, other.rows, "the seed drives the faults");
}

#[tokio::test]
async fn tasks_without_faults_complete_without_repair() {
    // One step is the charge alone, which an ambiguous read cannot hit.
    let p = Params {
        steps: 1,
        ..params(50, 1)
    };
    let report = run(&p, &[Mix::AmbiguousRead]).await;
    for r in &report.rows {
        assert_eq!(r.faults, 0);
        assert_eq!(r.completed, 50, "{r:?}");
        assert_eq!(r.repair_tokens_total, 0, "{r:?}");
        assert_eq!(r.duplicate_charges, 0, "{r:?}");
    }
}

#[tokio::test]
async fn nothing_to_run_and_bad_parameters_are_answers_not_panics() {
    let report = run(&params(0, 7), &Mix::ALL).await;
    assert!(report.rows.iter().all(|r| r.tasks == 0 && r.repair_tokens_p95 == 0));
    assert!(sim::markdown(&report).contains("| mixed | gate |"));
    for bad in [
        Params {
            p_fix_raw: 1.5,
            ..Params::default()
        },
        Params {
            p_blind: f64::NAN,
            ..Params::default()
        },
        Params {
            steps: 0,
            ..Params::default()
        },
        Params {
            gate_max_repairs: 99,
            ..Params::default()
        },
    ] {
        assert!(sim::run(&bad, &Mix::ALL).await.is_err(), "{bad:?}");
    }
}
