//! What repair costs an agent under context replay: the library behind
//! `gate cost`.
//!
//! An LLM agent re-sends its whole context on every step: step *i* reads the
//! system prompt plus everything the previous steps added. With `system`
//! tokens of system prompt and `per_step` tokens added per step, step *i*
//! (1-based) reads `system + (i − 1) × per_step` tokens, and *N* steps read
//! `N × system + per_step × N(N − 1)/2` in all. The worked example: 3 steps,
//! 4,000 system, 2,000 per step → 4,000 + 6,000 + 8,000 = **18,000**.
//!
//! A retry is not "one more small call": it re-reads the context too. How much
//! it costs depends on an assumption about what the retry re-sends, and
//! published figures differ because they make different ones, so the report
//! gives the total under each [`Assumption`] side by side. For one retry at
//! step 3 of the worked example:
//!
//! | assumption | what the retry costs | total | × |
//! |---|---|---|---|
//! | (a) [`ReplayOnce`](Assumption::ReplayOnce) | step 3's input again: +8,000 | 26,000 | 1.44 |
//! | (b) [`ReplayWithError`](Assumption::ReplayWithError) | step 3's input plus the failed call and its error (one step's worth, 2,000): +10,000; later steps would also carry the 2,000 | 28,000 | 1.56 |
//! | (c) [`RestartTask`](Assumption::RestartTask) | the task starts over, so steps 1–3 are read again: +18,000 | 36,000 | 2.00 |
//!
//! With a retry rate *p* > 0, every attempt fails independently with
//! probability *p* and is retried up to `max_retries` times; a step that fails
//! every attempt ends the task (what gate's attempt budget does). The report
//! then gives the expected total under (a) and (b), both exactly (closed form)
//! and as a seeded Monte-Carlo estimate that checks it. (c) is left out there:
//! restarting whole tasks is the policy gate exists to replace.
//!
//! Only input tokens are modelled: a step's output is part of what it adds to
//! the context and is counted when later steps re-read it.

use std::fmt::Write as _;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::error::BudgetError;
use crate::task::DEFAULT_MAX_REPAIRS;

/// The largest step count accepted.
pub const MAX_STEPS: u32 = 1_000;
/// The largest `system` or `per_step` accepted: 10⁹ tokens.
pub const MAX_TOKENS_PER_PART: u64 = 1_000_000_000;
/// The largest `trials × steps` accepted, which bounds the Monte-Carlo run's
/// time to a few seconds.
pub const MAX_TRIAL_STEPS: u64 = 100_000_000;
/// The largest `max_retries` accepted.
pub const MAX_MODEL_RETRIES: u32 = 100;

/// The inputs of the cost model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CostParams {
    /// Steps of the agent: 1 ..= 1,000.
    pub steps: u32,
    /// Tokens of the system prompt (and anything else present from step 1):
    /// 0 ..= 10⁹.
    pub system: u64,
    /// Tokens each step adds to the context (the call and its result):
    /// 0 ..= 10⁹.
    pub per_step: u64,
    /// Probability that an attempt fails and is retried: 0.0 ≤ p < 1.0.
    pub retry_rate: f64,
    /// Retries allowed per step before the task fails: 0 ..= 100 (gate's
    /// default: 2).
    pub max_retries: u32,
    /// Monte-Carlo trials when `retry_rate > 0`: at least 1, and
    /// `trials × steps ≤ 10⁸`.
    pub trials: u32,
    /// Seed of the Monte-Carlo RNG (`StdRng`); the same seed gives the same
    /// estimate with the same `rand` version.
    pub seed: u64,
    /// The step at which "one retry" happens in the per-assumption table:
    /// 1 ..= `steps`; `None` means the last step.
    pub retry_at: Option<u32>,
}

impl CostParams {
    /// `steps` steps with `system` and `per_step` tokens, no retries, 10,000
    /// trials, seed 0, gate's default of 2 retries per step, one retry at the
    /// last step.
    pub fn new(steps: u32, system: u64, per_step: u64) -> Self {
        CostParams {
            steps,
            system,
            per_step,
            retry_rate: 0.0,
            max_retries: DEFAULT_MAX_REPAIRS,
            trials: 10_000,
            seed: 0,
            retry_at: None,
        }
    }

    fn validate(&self) -> Result<(), BudgetError> {
        if !(1..=MAX_STEPS).contains(&self.steps) {
            return Err(BudgetError::new("steps", self.steps, "between 1 and 1,000"));
        }
        if self.system > MAX_TOKENS_PER_PART {
            return Err(BudgetError::new("system", self.system, "at most 1,000,000,000"));
        }
        if self.per_step > MAX_TOKENS_PER_PART {
            return Err(BudgetError::new("per_step", self.per_step, "at most 1,000,000,000"));
        }
        if !self.retry_rate.is_finite() || !(0.0..1.0).contains(&self.retry_rate) {
            return Err(BudgetError::new(
                "retry_rate",
                self.retry_rate,
                "a number with 0.0 <= p < 1.0",
            ));
        }
        if self.max_retries > MAX_MODEL_RETRIES {
            return Err(BudgetError::new("max_retries", self.max_retries, "at most 100"));
        }
        if self.trials == 0 || u64::from(self.trials) * u64::from(self.steps) > MAX_TRIAL_STEPS {
            return Err(BudgetError::new(
                "trials",
                self.trials,
                "at least 1, with trials × steps at most 100,000,000",
            ));
        }
        if let Some(at) = self.retry_at
            && !(1..=self.steps).contains(&at)
        {
            return Err(BudgetError::new("retry_at", at, "a step between 1 and steps"));
        }
        Ok(())
    }

    /// Tokens step `step` (1-based) reads without any retry.
    fn input(&self, step: u32) -> u64 {
        self.system
            .saturating_add(u64::from(step.saturating_sub(1)).saturating_mul(self.per_step))
    }
}

/// What a retry re-sends. The totals differ by which one you assume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Assumption {
    /// (a) The retry re-sends the failed step's context once more, and the
    /// failed attempt leaves no trace in the context. Worked example, retry at
    /// step 3: 18,000 + 8,000 = 26,000.
    ReplayOnce,
    /// (b) The failed call and its error text stay in the context (as they do
    /// when the runtime returns a Reject or the error to the model), sized as
    /// one step's worth (`per_step`): the retry reads the failed step's
    /// context plus that, and every later step carries it too. Worked example:
    /// 18,000 + 8,000 + 2,000 = 28,000.
    ReplayWithError,
    /// (c) The whole task is restarted (agent-level "max retries"): every step
    /// up to the failed one is read again. Worked example: 18,000 + 18,000 =
    /// 36,000.
    RestartTask,
}

impl Assumption {
    /// The label used in text output: `(a)`, `(b)`, `(c)`.
    pub fn label(&self) -> &'static str {
        match self {
            Assumption::ReplayOnce => "(a)",
            Assumption::ReplayWithError => "(b)",
            Assumption::RestartTask => "(c)",
        }
    }

    /// The stable name, as in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Assumption::ReplayOnce => "replay_once",
            Assumption::ReplayWithError => "replay_with_error",
            Assumption::RestartTask => "restart_task",
        }
    }

    /// One line on what the assumption means.
    pub fn description(&self) -> &'static str {
        match self {
            Assumption::ReplayOnce => "the retry re-sends the failed step's context once",
            Assumption::ReplayWithError => {
                "the failed call and its error (one step's worth) stay in the context for the retry and later steps"
            }
            Assumption::RestartTask => "the task restarts and re-reads every step up to the failed one",
        }
    }
}

/// The total for one retry under one assumption.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AssumptionTotal {
    /// Which assumption.
    pub assumption: Assumption,
    /// What it means, in words (repeated in JSON so the output explains itself).
    pub description: &'static str,
    /// Tokens the retry adds.
    pub extra: u64,
    /// Total tokens of the task with that one retry.
    pub total: u64,
    /// `total / without_retries`.
    pub multiplier: f64,
}

/// The expected total under one assumption when attempts fail at `retry_rate`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Expectation {
    /// Which assumption.
    pub assumption: Assumption,
    /// The exact expectation (closed form).
    pub expected: f64,
    /// The Monte-Carlo mean over `trials` seeded runs.
    pub monte_carlo: f64,
    /// The Monte-Carlo standard error.
    pub std_error: f64,
    /// `expected / without_retries`.
    pub multiplier: f64,
}

/// Expected cost with random retries.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WithRetries {
    /// Per-attempt failure probability.
    pub retry_rate: f64,
    /// Retries allowed per step.
    pub max_retries: u32,
    /// Monte-Carlo trials.
    pub trials: u32,
    /// Monte-Carlo seed.
    pub seed: u64,
    /// Probability that some step fails every attempt, ending the task.
    pub task_failure_rate: f64,
    /// The share of simulated tasks that ended that way.
    pub simulated_task_failure_rate: f64,
    /// Under (a) and under (b).
    pub expectations: Vec<Expectation>,
}

/// The cost model's answer, for text ([`render_text`]) or JSON (`serde`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostReport {
    /// The inputs.
    pub params: CostParams,
    /// Tokens each step reads without retries.
    pub step_inputs: Vec<u64>,
    /// Total tokens without retries.
    pub without_retries: u64,
    /// The step at which the single retry of `one_retry` happens.
    pub retry_at: u32,
    /// One retry at `retry_at`, under each assumption.
    pub one_retry: Vec<AssumptionTotal>,
    /// Expected totals when `retry_rate > 0`.
    pub with_retries: Option<WithRetries>,
}

/// Runs the cost model.
///
/// ```
/// use toolgate_budget::cost::{expected_tokens, CostParams};
///
/// let report = expected_tokens(&CostParams::new(3, 4_000, 2_000))?;
/// assert_eq!(report.without_retries, 18_000);
/// let totals: Vec<u64> = report.one_retry.iter().map(|t| t.total).collect();
/// assert_eq!(totals, [26_000, 28_000, 36_000]);
/// # Ok::<(), toolgate_budget::BudgetError>(())
/// ```
pub fn expected_tokens(params: &CostParams) -> Result<CostReport, BudgetError> {
    params.validate()?;
    let p = params;
    let step_inputs: Vec<u64> = (1..=p.steps).map(|i| p.input(i)).collect();
    let without = step_inputs.iter().fold(0u64, |a, v| a.saturating_add(*v));
    let at = p.retry_at.unwrap_or(p.steps);

    let later_steps = u64::from(p.steps - at);
    let extras = [
        (Assumption::ReplayOnce, p.input(at)),
        (
            Assumption::ReplayWithError,
            p.input(at)
                .saturating_add(p.per_step)
                .saturating_add(later_steps.saturating_mul(p.per_step)),
        ),
        (
            Assumption::RestartTask,
            step_inputs[..at as usize]
                .iter()
                .fold(0u64, |a, v| a.saturating_add(*v)),
        ),
    ];
    let one_retry = extras
        .into_iter()
        .map(|(assumption, extra)| {
            let total = without.saturating_add(extra);
            AssumptionTotal {
                assumption,
                description: assumption.description(),
                extra,
                total,
                multiplier: ratio(total as f64, without),
            }
        })
        .collect();

    let with_retries = (p.retry_rate > 0.0).then(|| with_retries(p, without));
    Ok(CostReport {
        params: *p,
        step_inputs,
        without_retries: without,
        retry_at: at,
        one_retry,
        with_retries,
    })
}

fn ratio(value: f64, base: u64) -> f64 {
    if base == 0 { 1.0 } else { value / base as f64 }
}

fn with_retries(p: &CostParams, without: u64) -> WithRetries {
    let q = p.retry_rate;
    let r = p.max_retries;
    // A step succeeds within its r + 1 attempts with probability s.
    let s = 1.0 - q.powi(r as i32 + 1);
    // Expected attempts at a step that is reached: Σ_{j=0..r} q^j.
    let attempts: f64 = (0..=r).map(|j| q.powi(j as i32)).sum();
    // Expected failed attempts at a step, given that it succeeded.
    let fails_given_success: f64 = (0..=r).map(|f| f as f64 * q.powi(f as i32) * (1.0 - q)).sum::<f64>() / s;
    // Σ_j j q^j: weight of the error context an attempt carries from its own
    // earlier failures within the step.
    let own_fail_weight: f64 = (0..=r).map(|j| j as f64 * q.powi(j as i32)).sum();

    let (mut exact_a, mut exact_b) = (0.0, 0.0);
    for i in 1..=p.steps {
        let reach = s.powi(i as i32 - 1);
        let input = p.input(i) as f64;
        exact_a += reach * input * attempts;
        let carried = f64::from(i - 1) * fails_given_success * p.per_step as f64;
        exact_b += reach * ((input + carried) * attempts + own_fail_weight * p.per_step as f64);
    }

    let mut rng = StdRng::seed_from_u64(p.seed);
    let (mut sum_a, mut sq_a, mut sum_b, mut sq_b, mut failed) = (0.0, 0.0, 0.0, 0.0, 0u32);
    for _ in 0..p.trials {
        let (a, b, ok) = one_trial(p, &mut rng);
        sum_a += a;
        sq_a += a * a;
        sum_b += b;
        sq_b += b * b;
        failed += u32::from(!ok);
    }
    let n = f64::from(p.trials);
    let stats = |sum: f64, sq: f64| {
        let mean = sum / n;
        let var = if p.trials > 1 {
            ((sq - n * mean * mean) / (n - 1.0)).max(0.0)
        } else {
            0.0
        };
        (mean, (var / n).sqrt())
    };
    let (mean_a, se_a) = stats(sum_a, sq_a);
    let (mean_b, se_b) = stats(sum_b, sq_b);
    WithRetries {
        retry_rate: q,
        max_retries: r,
        trials: p.trials,
        seed: p.seed,
        task_failure_rate: 1.0 - s.powi(p.steps as i32),
        simulated_task_failure_rate: f64::from(failed) / n,
        expectations: vec![
            Expectation {
                assumption: Assumption::ReplayOnce,
                expected: exact_a,
                monte_carlo: mean_a,
                std_error: se_a,
                multiplier: ratio(exact_a, without),
            },
            Expectation {
                assumption: Assumption::ReplayWithError,
                expected: exact_b,
                monte_carlo: mean_b,
                std_error: se_b,
                multiplier: ratio(exact_b, without),
            },
        ],
    }
}

/// One simulated task: tokens under (a) and (b), and whether it finished.
fn one_trial(p: &CostParams, rng: &mut StdRng) -> (f64, f64, bool) {
    let (mut a, mut b) = (0.0, 0.0);
    let mut error_context = 0.0;
    for i in 1..=p.steps {
        let input = p.input(i) as f64;
        let mut succeeded = false;
        for _ in 0..=p.max_retries {
            a += input;
            b += input + error_context;
            if rng.random::<f64>() >= p.retry_rate {
                succeeded = true;
                break;
            }
            error_context += p.per_step as f64;
        }
        if !succeeded {
            return (a, b, false);
        }
    }
    (a, b, true)
}

/// The report as text, for `gate cost`.
pub fn render_text(report: &CostReport) -> String {
    let p = &report.params;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "context replay: {} steps, {} system tokens, {} tokens added per step",
        p.steps, p.system, p.per_step
    );
    let shown: Vec<String> = report.step_inputs.iter().take(8).map(u64::to_string).collect();
    let more = if report.step_inputs.len() > 8 { " + …" } else { "" };
    let _ = writeln!(out, "step inputs: {}{more}", shown.join(" + "));
    let _ = writeln!(out, "without retries: {} tokens", report.without_retries);
    let _ = writeln!(out);
    let _ = writeln!(out, "one retry at step {}:", report.retry_at);
    for t in &report.one_retry {
        let _ = writeln!(
            out,
            "  {} {:<18} {:>12} tokens  ×{:.2}  (+{}) {}",
            t.assumption.label(),
            t.assumption.name(),
            t.total,
            t.multiplier,
            t.extra,
            t.description
        );
    }
    if let Some(w) = &report.with_retries {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "with retries: p = {}, up to {} retries per step ({} Monte-Carlo trials, seed {}):",
            w.retry_rate, w.max_retries, w.trials, w.seed
        );
        for e in &w.expectations {
            let _ = writeln!(
                out,
                "  {} {:<18} expected {:>14.1} tokens  ×{:.3}  (Monte Carlo {:.1} ± {:.1})",
                e.assumption.label(),
                e.assumption.name(),
                e.expected,
                e.multiplier,
                e.monte_carlo,
                e.std_error
            );
        }
        let _ = writeln!(
            out,
            "  tasks that fail after exhausting retries: {:.3} % (simulated {:.3} %)",
            w.task_failure_rate * 100.0,
            w.simulated_task_failure_rate * 100.0
        );
    }
    out
}
