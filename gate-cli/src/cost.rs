//! `gate cost`: what an N-step agent costs under context replay, and what
//! retries add.

use std::process::ExitCode;

use toolgate::budget::cost::{CostParams, expected_tokens, render_text};

use crate::UsageError;

/// Arguments of `gate cost`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Steps of the agent.
    #[arg(long)]
    steps: u32,
    /// Tokens of the system prompt (and tool definitions).
    #[arg(long)]
    system: u64,
    /// Tokens each step adds to the context.
    #[arg(long = "per-step")]
    per_step: u64,
    /// Probability that a step needs a retry.
    #[arg(long = "retry-rate", default_value_t = 0.0)]
    retry_rate: f64,
    /// Monte-Carlo trials when --retry-rate is above zero.
    #[arg(long, default_value_t = 10_000)]
    trials: u32,
    /// Seed of the Monte-Carlo run.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    let mut params = CostParams::new(args.steps, args.system, args.per_step);
    params.retry_rate = args.retry_rate;
    params.trials = args.trials;
    params.seed = args.seed;
    let report = expected_tokens(&params)?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        out!("{}", render_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}
