//! Running every policy on every mix and counting the results into the
//! rows of the report (`report.rs`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use toolgate::budget::estimate_tokens;
use toolgate::{Budget, Dialect, Gate};

use super::model::{Planned, plan};
use super::params::{Mix, ParamError, Params};
use super::policy::{End, Policy, TaskResult, base_context, gate_task, naive_task, pydantic_task};
use super::report::{Report, Row, assumptions};
use super::rng::{STREAM_MODEL, SplitMix64};
use super::world::{Fault, SimTools, World, lock};

/// Why the simulation could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SimError {}

impl From<ParamError> for SimError {
    fn from(e: ParamError) -> Self {
        SimError(e.0)
    }
}

// The row's shape is the report's; counting results into it is the run's.
impl Row {
    fn new(mix: Mix, policy: Policy, results: &[TaskResult], faults: u64) -> Self {
        let tasks = results.len() as u64;
        let mut tokens: Vec<u64> = results.iter().map(|r| r.repair_tokens).collect();
        tokens.sort_unstable();
        let total: u64 = tokens.iter().sum();
        let p95 = if tokens.is_empty() {
            0
        } else {
            let rank = (tokens.len() * 95).div_ceil(100).max(1);
            tokens[rank - 1]
        };
        let mut fail_reasons = BTreeMap::new();
        for r in results {
            if let End::FailedWithReport(reason) = r.end {
                *fail_reasons.entry(reason.as_str().to_owned()).or_insert(0) += 1;
            }
        }
        Row {
            mix,
            policy,
            tasks,
            faults,
            completed: results.iter().filter(|r| r.end == End::Completed).count() as u64,
            failed_with_report: results
                .iter()
                .filter(|r| matches!(r.end, End::FailedWithReport(_)))
                .count() as u64,
            failed_unreported: results.iter().filter(|r| r.end == End::FailedUnreported).count() as u64,
            repair_tokens_total: total,
            repair_tokens_mean: if tasks == 0 { 0.0 } else { total as f64 / tasks as f64 },
            repair_tokens_p95: p95,
            duplicate_charges: results.iter().map(|r| u64::from(r.charges.saturating_sub(1))).sum(),
            unrecorded_charges: results
                .iter()
                .filter(|r| r.end == End::FailedUnreported)
                .map(|r| u64::from(r.charges))
                .sum(),
            charges_to_reconcile: 0,
            fail_reasons,
            metering_mismatches: results
                .iter()
                .filter(|r| r.repair_tokens != r.sim_repair_tokens)
                .count() as u64,
        }
    }
}

/// Runs every policy on every mix in `mixes`.
pub async fn run(params: &Params, mixes: &[Mix]) -> Result<Report, SimError> {
    params.check()?;
    let manifest = SimTools(Arc::new(Mutex::new(World::new())))
        .into_toolbox()
        .manifest(Dialect::OpenAi)
        .map_err(|e| SimError(format!("manifest: {e}")))?;
    let tool_tokens = estimate_tokens(&manifest.to_string());
    let base = base_context(params, tool_tokens);
    let mut rows = Vec::new();
    for &mix in mixes {
        let plans: Vec<Vec<Planned>> = (0..params.tasks).map(|t| plan(params, mix, t)).collect();
        let faults: u64 = plans
            .iter()
            .map(|p| p.iter().filter(|s| s.fault != Fault::None).count() as u64)
            .sum();
        let world = Arc::new(Mutex::new(World::new()));
        for policy in Policy::ALL {
            let budget = Budget::default()
                .with_max_repairs(params.gate_max_repairs)
                .map_err(|e| SimError(format!("budget: {e}")))?;
            let gate = match policy {
                Policy::Gate => Some(
                    Gate::builder(SimTools(world.clone()).into_toolbox())
                        .store("memory:")
                        .budget(budget)
                        .rejection_cap(params.gate_rejection_cap)
                        .seed(params.seed)
                        .build()
                        .await
                        .map_err(|e| SimError(format!("gate: {e}")))?,
                ),
                _ => None,
            };
            let mut results = Vec::with_capacity(plans.len());
            for (task_no, steps) in plans.iter().enumerate() {
                let task_no = task_no as u64;
                lock(&world).reset(SplitMix64::stream(params.seed, mix, task_no, STREAM_MODEL), params);
                let result = match (&gate, policy) {
                    (Some(gate), _) => gate_task(gate, &world, params, base, task_no, steps).await,
                    (None, Policy::NaiveRetry3) => naive_task(&world, params, base, task_no, steps),
                    (None, _) => pydantic_task(&world, params, base, task_no, steps),
                };
                results.push(result);
            }
            let mut row = Row::new(mix, policy, &results, faults);
            if let Some(gate) = &gate {
                let limit = u32::try_from(params.tasks.saturating_add(1)).unwrap_or(u32::MAX);
                let unresolved = gate
                    .store()
                    .list_unresolved(limit)
                    .await
                    .map_err(|e| SimError(format!("ledger: {e}")))?;
                row.charges_to_reconcile = unresolved.len() as u64;
                // A charge in a failed task is recorded when the ledger holds it.
                let charged_in_failures: u64 = results
                    .iter()
                    .filter(|r| r.end != End::Completed)
                    .map(|r| u64::from(r.charges))
                    .sum();
                row.unrecorded_charges = charged_in_failures.saturating_sub(row.charges_to_reconcile);
            }
            rows.push(row);
        }
    }
    let mut report = Report {
        params: params.clone(),
        tool_definition_tokens: tool_tokens,
        base_context_tokens: base,
        assumptions: Vec::new(),
        rows,
    };
    report.assumptions = assumptions(&report);
    Ok(report)
}
