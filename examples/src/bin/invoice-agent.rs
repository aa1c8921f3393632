//! The README's main job: the invoice agent, four scenarios, every decision
//! gate makes, against the embedded SQLite ledger (or any store).
#![forbid(unsafe_code)]

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use gate_examples::invoice::{DemoEvent, DemoOptions, DemoReport, ModelChoice, SCENARIOS, run_demo};
use toolgate::Action;
use toolgate::Step;
use toolgate::agent::{Ending, OpenAiCompatible};

/// Runs the invoice agent's scenarios and prints every call, its failure
/// class, gate's decision and what the model saw; then the token accounting
/// and the reconciliation queue.
#[derive(Parser)]
#[command(name = "invoice-agent", version)]
struct Args {
    /// The ledger store: `sqlite:FILE`, `postgres://…` or `memory:`.
    #[arg(long, default_value = "sqlite:gate.db")]
    store: String,
    /// Print JSON lines (one per event, then a summary) instead of text.
    #[arg(long)]
    json: bool,
    /// Prefix of task ids; runs with different ids never replay each other.
    #[arg(long)]
    run_id: Option<String>,
    /// Play the scenarios with a real model at this OpenAI-compatible base URL
    /// (key from OPENAI_API_KEY) instead of the scripted conversations.
    #[arg(long)]
    base_url: Option<String>,
    /// The model name for --base-url.
    #[arg(long, default_value = "gpt-4o-mini")]
    model: String,
    /// Leave the unknown charge in the reconciliation queue instead of
    /// resolving it as an operator would.
    #[arg(long)]
    no_resolve: bool,
}

fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("run-{:x}", nanos & 0xffff_ffff_ffff)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("      │ {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// An action as the demo prints it: `RETRY INTERNALLY`.
fn shout(action: Action) -> String {
    action.as_str().replace('_', " ").to_uppercase()
}

fn print_event(event: &DemoEvent) {
    match event {
        DemoEvent::Scenario { number, title, .. } => println!("\n━━ Scenario {number}: {title}"),
        DemoEvent::Call { exchange, .. } => {
            let step = &exchange.step;
            let class = step.failure_class().map_or("-", |c| c.as_str());
            println!("  ▸ {}({})", exchange.call.name, exchange.call.arguments);
            for retry in &exchange.internal_retries {
                println!(
                    "    class: {:<23} decision: {} (the model is not involved)",
                    retry.class.as_str(),
                    shout(Action::RetryInternally)
                );
                println!("{}", indent(&retry.text));
            }
            println!("    class: {class:<23} decision: {}", shout(step.action()));
            println!("{}", indent(step.model_text()));
            if let Step::Fail(report) = step {
                println!(
                    "    report: reason={} ledger={} intent={}",
                    report.reason.as_str(),
                    report.ledger_state.map_or("-", |s| s.as_str()),
                    report.intent_key.as_deref().unwrap_or("-")
                );
                println!("    next check: {}", report.next_check);
            }
        }
        DemoEvent::Resolved { command, .. } => {
            println!("\n  ⚑ An operator checks the payment provider and resolves the intent:\n    $ {command}");
            println!("\n━━ Scenario 4, second run: the same intent again, after reconciliation");
        }
    }
}

fn print_summary(report: &DemoReport) {
    println!("\n━━ Token accounting");
    println!(
        "  {:<14} {:>10} {:>12} {:>14}  ending",
        "scenario", "input", "output", "repair tokens"
    );
    for s in &report.scenarios {
        let ending = match &s.ending {
            Ending::Answered { .. } => "answered",
            Ending::Failed => "failed (reported)",
            Ending::TurnLimit => "turn limit",
            Ending::AwaitingApproval => "awaiting approval",
        };
        println!(
            "  {:<14} {:>10} {:>12} {:>14}  {ending}",
            s.name, s.input_tokens, s.output_tokens, s.repair_tokens
        );
    }
    println!("  total repair tokens: {}", report.total_repair_tokens);
    println!("\n━━ Payment provider");
    for c in &report.charges {
        println!(
            "  {} {} cents to {} (idempotency key {}…)",
            c.id,
            c.amount_cents,
            c.customer_id,
            &c.idempotency_key[..16.min(c.idempotency_key.len())]
        );
    }
    let max = report.charges_per_intent.values().max().copied().unwrap_or(0);
    println!(
        "  charges per intent: at most {max}; receipts sent: {}",
        report.receipts
    );
    println!("\n━━ Reconciliation queue");
    println!(
        "  right after the timeout: {} intent(s)",
        report.queue_after_timeout.len()
    );
    for item in &report.queue_after_timeout {
        println!(
            "    {} ({} in {}): {}",
            item.key,
            item.tool,
            item.task,
            item.error.as_deref().unwrap_or("")
        );
    }
    println!("  at the end: {} intent(s) waiting", report.queue_at_end.len());
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let model = match &args.base_url {
        None => ModelChoice::Scripted,
        Some(url) => match OpenAiCompatible::from_env(url, args.model.clone()) {
            Ok(client) => ModelChoice::Model(Arc::new(client)),
            Err(e) => {
                eprintln!("invoice-agent: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let options = DemoOptions {
        store: args.store.clone(),
        run_id: args.run_id.clone().unwrap_or_else(run_id),
        model,
        resolve: !args.no_resolve,
    };
    let json = args.json;
    let progress = !json && std::io::stderr().is_terminal();
    let total = SCENARIOS.len();
    let mut observe = |event: &DemoEvent| {
        if json {
            println!("{}", serde_json::to_string(event).unwrap_or_default());
        } else {
            print_event(event);
        }
        if let (true, DemoEvent::Scenario { number, name, .. }) = (progress, event) {
            eprintln!("[{number}/{total}] {name}");
        }
    };
    if !json {
        println!("invoice-agent: {total} scenarios against {}", args.store);
    }
    match run_demo(options, &mut observe).await {
        Ok(report) => {
            if json {
                println!("{}", serde_json::json!({"summary": report}));
            } else {
                print_summary(&report);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("invoice-agent: {e}");
            ExitCode::FAILURE
        }
    }
}
