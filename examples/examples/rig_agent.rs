//! The invoice tools behind a rig agent: rig runs the conversation, gate
//! decides about every call.
//!
//! `cargo run -p gate-examples --example rig_agent`
//!
//! The model is rig's scripted completion model, so the example runs
//! without a network and shows the same decisions every time: a wrong
//! argument type and a hallucinated tool, each rejected with what to fix; a
//! valid lookup; a charge that times out after it went through, which
//! fails the task and stops rig's run, with one charge at the provider. A
//! real model is one line away: `rig_core::providers::openai::OpenAI::from_env()?.completion(..)`
//! with rig-core's `reqwest` feature, in place of `MockCompletionModel`.

use std::sync::Arc;

use gate_examples::invoice::SYSTEM_PROMPT;
use gate_examples::invoice::backend::{Backend, Fault};
use gate_examples::invoice::tools::InvoiceTools;
use rig_agent::AgentBuilder;
use rig_agent::run::PromptError;
use rig_core::test_utils::{MockCompletionModel, MockTurn};
use serde_json::json;
use toolgate::Gate;
use toolgate::rig::GateTools;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let backend = Arc::new(Backend::demo());
    backend.plan("charge_card", &[Fault::TimeoutAfterEffect]);
    let gate = Gate::builder(InvoiceTools::new(Arc::clone(&backend)).into_toolbox())
        .store("memory:")
        .build()
        .await?;
    let tools = GateTools::new(gate.task("user-42"))?;

    let model = MockCompletionModel::from_turns([
        MockTurn::tool_call("c1", "lookup_customer", json!({"email": 12345})),
        MockTurn::tool_call("c2", "fetch_invoice", json!({"invoice_id": "INV-42"})),
        MockTurn::tool_call("c3", "lookup_customer", json!({"email": "bob@globex.com"})),
        MockTurn::tool_call(
            "c4",
            "charge_card",
            json!({"customer_id": "cus_bob", "amount_cents": 4500, "invoice_id": "INV-42"}),
        ),
        MockTurn::text("Bob has been charged."),
    ]);
    let agent = tools.agent(AgentBuilder::new(model).preamble(SYSTEM_PROMPT));

    let ended = agent.prompt("Charge Bob for INV-42.").max_turns(8).await;

    for handled in tools.calls() {
        println!("▸ {}({})", handled.call.name, handled.call.arguments);
        println!("    decision: {}", handled.step.action().as_str());
        for line in handled.step.model_text().lines() {
            println!("      │ {line}");
        }
    }
    match ended {
        Ok(answer) => println!("\nthe agent answered: {}", answer.output()),
        Err(PromptError::Cancelled { reason, .. }) => {
            println!(
                "\nrig's run was cancelled by gate: {}",
                reason.lines().next().unwrap_or_default()
            );
            if let Some(report) = tools.failure().await {
                println!("  tool:         {}", report.tool);
                println!("  intent key:   {}", report.intent_key.as_deref().unwrap_or("-"));
                println!(
                    "  ledger state: {}",
                    report.ledger_state.map(|s| s.as_str()).unwrap_or("-")
                );
                println!("  check:        {}", report.next_check);
            }
        }
        Err(other) => return Err(other.into()),
    }
    println!("charges at the payment provider: {}", backend.charges().len());
    gate.shutdown().await;
    Ok(())
}
