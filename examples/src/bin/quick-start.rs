//! The README's quick start, byte for byte below this paragraph (the test
//! `tests/quick_start.rs` holds the two to each other and checks what it
//! prints against the README's output block).

use toolgate::{Dialect, Gate, Step, ToolCall, ToolError, tool, toolbox};

/// Look up a customer by email address.
#[tool(read_only, widen = "search by the email's domain with search_customers")]
async fn lookup_customer(
    /// The customer's email address.
    email: String,
) -> Result<String, ToolError> {
    match email.as_str() {
        "bob@example.com" => Ok("cus_bob".to_string()),
        _ => Err(ToolError::Empty),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gate = Gate::builder(toolbox![lookup_customer])
        .store("sqlite:gate.db")
        .build()
        .await?;
    let mut task = gate.task("user-42");
    let tools = task.manifest(Dialect::OpenAiStrict)?; // the `tools` of your request
    println!("{tools}");

    // Three calls as a model might send them: a wrong type, a miss, a hit.
    let calls = [
        ToolCall::new("call_1", "lookup_customer", r#"{"email": 12345}"#),
        ToolCall::new("call_2", "lookup_customer", r#"{"email": "bob@example.org"}"#),
        ToolCall::new("call_3", "lookup_customer", r#"{"email": "bob@example.com"}"#),
    ];
    for call in calls {
        let step = task.handle(call).await;
        match &step {
            Step::Return(output) => println!("result: {}", output.value),
            Step::Reject(feedback) => println!("rejected, {:?}", feedback.class),
            Step::Retry(feedback) => println!("retry with a correction, {:?}", feedback.class),
            Step::Fail(report) => println!("failed ({:?}); for a person: {}", report.reason, report.next_check),
            _ => {} // Step is non-exhaustive: a new kind of step breaks nothing
        }
        // Exactly what the model reads next (`toolgate::provider` wraps it as a tool result).
        println!("{}", step.model_text());
    }
    gate.shutdown().await; // writes the queued decision records
    Ok(())
}
