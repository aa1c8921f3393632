//! The policy simulation: gate against two naive retry policies on N seeded
//! tasks, printed as a markdown table (or JSON) with its assumptions.
//!
//! ```sh
//! cargo run --release -p gate-policy-sim -- --tasks 1000 --seed 7
//! cargo run --release -p gate-policy-sim -- --mix write-timeout --json
//! ```
//!
//! The simulation itself is this crate's library (the integration test
//! drives the same code); see its docs.

use std::process::ExitCode;

use gate_policy_sim::{self as sim, Mix, Params, PydanticMessages};

const USAGE: &str = "\
usage: gate-policy-sim [options]

  --tasks N                 tasks per mix and policy (default 1000)
  --seed S                  seed of every random stream (default 7)
  --steps K                 steps per task: K-1 lookups, then a charge (default 5)
  --mix NAME[,NAME..]       invalid-args, unknown-tool, ambiguous-read, write-timeout, mixed (default: all)
  --p-fix-specific P        fix after a specific rejection (default 0.9)
  --p-fix-raw P             fix after a raw error (default 0.5)
  --p-correct P             success after gate's correction (default 0.8)
  --p-blind P               success of a blind resend after a raw ambiguous error (default 0.2)
  --system-tokens N         system prompt tokens, before tool definitions (default 1000)
  --gate-max-repairs N      gate's repairs per task (default 2, at most 5)
  --gate-rejection-cap N    gate's rejections per task (default 2)
  --naive-retries N         naive-retry-3's retries per failed call (default 3)
  --pydantic-messages M     specific (pydantic-ai's real texts) or raw (default specific)
  --json                    print JSON instead of markdown
  --help                    this text
";

fn value<T: std::str::FromStr>(flag: &str, raw: Option<String>) -> Result<T, String> {
    let raw = raw.ok_or_else(|| format!("{flag} needs a value"))?;
    raw.parse().map_err(|_| format!("{flag}: `{raw}` is not a valid value"))
}

fn parse(args: impl Iterator<Item = String>) -> Result<Option<(Params, Vec<Mix>, bool)>, String> {
    let mut params = Params::default();
    let mut mixes: Vec<Mix> = Vec::new();
    let mut json = false;
    let mut args = args.peekable();
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--help" | "-h" => return Ok(None),
            "--json" => json = true,
            "--tasks" => params.tasks = value(&flag, args.next())?,
            "--seed" => params.seed = value(&flag, args.next())?,
            "--steps" => params.steps = value(&flag, args.next())?,
            "--p-fix-specific" => params.p_fix_specific = value(&flag, args.next())?,
            "--p-fix-raw" => params.p_fix_raw = value(&flag, args.next())?,
            "--p-correct" => params.p_correct = value(&flag, args.next())?,
            "--p-blind" => params.p_blind = value(&flag, args.next())?,
            "--system-tokens" => params.system_prompt_tokens = value(&flag, args.next())?,
            "--gate-max-repairs" => params.gate_max_repairs = value(&flag, args.next())?,
            "--gate-rejection-cap" => params.gate_rejection_cap = value(&flag, args.next())?,
            "--naive-retries" => params.naive_retries = value(&flag, args.next())?,
            "--pydantic-messages" => {
                params.pydantic_messages = match value::<String>(&flag, args.next())?.as_str() {
                    "specific" => PydanticMessages::Specific,
                    "raw" => PydanticMessages::Raw,
                    other => return Err(format!("--pydantic-messages: `{other}` is not `specific` or `raw`")),
                }
            }
            "--mix" => {
                for name in value::<String>(&flag, args.next())?.split(',') {
                    let mix = Mix::parse(name.trim()).ok_or_else(|| format!("--mix: unknown mix `{name}`"))?;
                    if !mixes.contains(&mix) {
                        mixes.push(mix);
                    }
                }
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    if mixes.is_empty() {
        mixes = Mix::ALL.to_vec();
    }
    params.check().map_err(|e| e.to_string())?;
    Ok(Some((params, mixes, json)))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let (params, mixes, json) = match parse(std::env::args().skip(1)) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("gate-policy-sim: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let report = match sim::run(&params, &mixes).await {
        Ok(report) => report,
        Err(e) => {
            eprintln!("gate-policy-sim: {e}");
            return ExitCode::FAILURE;
        }
    };
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("gate-policy-sim: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", sim::markdown(&report));
    }
    ExitCode::SUCCESS
}
