//! The invoice tools behind a rig agent, driven with rig's own types: its
//! agent loop over its scripted completion model, and its `ToolSet`.
//!
//! What the model reads is taken from the requests rig sent the model, so
//! each assertion is about what rig carried, not about what gate returned.

use std::sync::Arc;

use gate_examples::invoice::SYSTEM_PROMPT;
use gate_examples::invoice::backend::{Backend, Fault};
use gate_examples::invoice::tools::InvoiceTools;
use rig_agent::AgentBuilder;
use rig_agent::run::PromptError;
use rig_core::completion::{AssistantContent, CompletionRequest, Usage};
use rig_core::message::{Message, ToolCall, ToolFunction, ToolName, ToolResultContent, UserContent};
use rig_core::test_utils::{MockCompletionModel, MockTurn};
use rig_core::tool::{ToolContext, ToolErrorKind};
use serde_json::json;
use toolgate::Action;
use toolgate::agent::{self, AgentLimits, Message as GateMessage, ScriptedModel};
use toolgate::ledger::State;
use toolgate::rig::GateTools;
use toolgate::{Dialect, Gate};

async fn gate(backend: &Arc<Backend>) -> Gate {
    let tools = InvoiceTools::new(Arc::clone(backend)).into_toolbox();
    Gate::builder(tools)
        .store("memory:")
        .seed(7)
        .build()
        .await
        .expect("the invoice gate builds")
}

/// One tool result as the model read it.
#[derive(Debug)]
struct Seen {
    tool: String,
    is_error: bool,
    text: String,
}

/// The tool results in a request rig sent the model, in order.
fn tool_results(request: &CompletionRequest) -> Vec<Seen> {
    let mut seen = Vec::new();
    for message in &request.chat_history {
        let Message::User { content } = message else { continue };
        for part in content {
            let UserContent::ToolResult(result) = part else {
                continue;
            };
            let text = result
                .content
                .iter()
                .filter_map(|c| match c {
                    ToolResultContent::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect();
            seen.push(Seen {
                tool: result.name.to_string(),
                is_error: result.is_error,
                text,
            });
        }
    }
    seen
}

/// The last tool result the model read before the request `n` (0-based).
fn last_seen(model: &MockCompletionModel, n: usize) -> Seen {
    let requests = model.requests();
    let request = requests
        .get(n)
        .unwrap_or_else(|| panic!("request {n} of {}", requests.len()));
    tool_results(request).pop().expect("a tool result")
}

fn usage(input: u64, output: u64) -> Usage {
    Usage::new().input_tokens(input).output_tokens(output)
}

/// One model turn of a script: a tool call (id, tool, arguments) and the
/// usage the provider reports for it.
type Turn = (&'static str, &'static str, &'static str, (u64, u64));

const CHARGE_BOB: &str = r#"{"customer_id":"cus_bob","amount_cents":4500,"invoice_id":"INV-42"}"#;

/// A wrong argument type, a hallucinated tool, a valid lookup, and a charge
/// that times out after it went through; the answer after it is never asked
/// for.
const STOPPED: [Turn; 4] = [
    ("c1", "lookup_customer", r#"{"email":12345}"#, (2400, 30)),
    ("c2", "fetch_invoice", r#"{"invoice_id":"INV-42"}"#, (2560, 30)),
    ("c3", "lookup_customer", r#"{"email":"bob@globex.com"}"#, (2700, 30)),
    ("c4", "charge_card", CHARGE_BOB, (2800, 40)),
];

/// Two rejections fixed by the next call each, then the answer.
const REPAIRED: [Turn; 4] = [
    ("c1", "lookup_customer", r#"{"email":12345}"#, (2400, 30)),
    ("c2", "lookup_customer", r#"{"email":"bob@globex.com"}"#, (2560, 30)),
    ("c3", "get_invoice", r#"{"invoice":"INV-42"}"#, (2700, 30)),
    ("c4", "get_invoice", r#"{"invoice_id":"INV-42"}"#, (2800, 40)),
];

const ANSWER: &str = "INV-42 is open: 45.00 EUR.";
const REQUEST: &str = "Charge Bob for INV-42.";

/// What a loop left behind: the actions, the task's repair tokens, the
/// user's window and the charges at the provider.
#[derive(Debug, PartialEq)]
struct Outcome {
    actions: Vec<Action>,
    repair_tokens: u64,
    window: u64,
    charges: usize,
}

/// A gate over the demo backend whose next charge times out after it went
/// through.
async fn charge_times_out() -> (Arc<Backend>, Gate) {
    let backend = Arc::new(Backend::demo());
    backend.plan("charge_card", &[Fault::TimeoutAfterEffect]);
    let gate = gate(&backend).await;
    (backend, gate)
}

/// `script` through gate's own agent loop, the reference.
async fn through_gates_loop(script: &[Turn]) -> Outcome {
    let (backend, gate) = charge_times_out().await;
    let mut task = gate.task("user-1");
    let mut lines: Vec<String> = script
        .iter()
        .map(|(id, name, arguments, (input, output))| {
            json!({"tool_calls": [{"id": id, "name": name, "arguments": arguments}],
                   "usage": {"input_tokens": input, "output_tokens": output}})
            .to_string()
        })
        .collect();
    lines.push(json!({"text": ANSWER}).to_string());
    let model = ScriptedModel::parse(&lines.join("\n")).expect("the script parses");
    let messages = vec![
        GateMessage::System(SYSTEM_PROMPT.into()),
        GateMessage::User(REQUEST.into()),
    ];
    let run = agent::run(
        &mut task,
        &model,
        Dialect::OpenAi,
        messages,
        AgentLimits::default(),
        &mut |_| {},
    )
    .await
    .expect("the run ends")
    .into_run();
    Outcome {
        actions: run.exchanges.iter().map(|e| e.step.action()).collect(),
        repair_tokens: task.repair_tokens(),
        window: gate.repair_tokens_used("user-1").await.expect("the window reads"),
        charges: backend.charges().len(),
    }
}

/// `script` as rig's scripted model, the arguments as the provider sent them.
fn rig_model(script: &[Turn]) -> MockCompletionModel {
    let mut turns: Vec<MockTurn> = script
        .iter()
        .map(|(id, name, arguments, (input, output))| {
            let name = ToolName::new(*name).expect("a name");
            let call = ToolCall::from_wire(*id, ToolFunction::parse(name, arguments));
            MockTurn::from_content(AssistantContent::ToolCall(call)).with_usage(usage(*input, *output))
        })
        .collect();
    turns.push(MockTurn::text(ANSWER));
    MockCompletionModel::from_turns(turns)
}

async fn outcome(tools: &GateTools, gate: &Gate, backend: &Backend) -> Outcome {
    Outcome {
        actions: tools.calls().iter().map(|c| c.step.action()).collect(),
        repair_tokens: tools.task().await.repair_tokens(),
        window: gate.repair_tokens_used("user-1").await.expect("the window reads"),
        charges: backend.charges().len(),
    }
}

#[tokio::test]
async fn a_rig_agent_is_rejected_answered_and_stopped_by_gate() {
    let (backend, gate) = charge_times_out().await;
    let tools = GateTools::new(gate.task("user-1")).expect("the invoice tools describe to rig");
    let model = rig_model(&STOPPED);
    let agent = tools.agent(AgentBuilder::new(model.clone()).preamble(SYSTEM_PROMPT));

    let ended = agent.prompt(REQUEST).max_turns(8).await;

    // A wrong argument type: the model reads gate's rejection naming the field.
    let rejected = last_seen(&model, 1);
    assert_eq!(rejected.tool, "lookup_customer");
    assert!(rejected.is_error);
    assert!(
        rejected.text.contains("- /email: expected string, got integer 12345"),
        "{}",
        rejected.text
    );
    // A hallucinated tool: gate's rejection with the real names, not rig's
    // failed run.
    let unknown = last_seen(&model, 2);
    assert_eq!(unknown.tool, "fetch_invoice");
    assert!(unknown.is_error);
    assert!(
        unknown.text.contains("There is no tool named `fetch_invoice`"),
        "{}",
        unknown.text
    );
    assert!(
        unknown.text.contains("`get_invoice`") && unknown.text.contains("`lookup_customer`"),
        "{}",
        unknown.text
    );
    // The valid call's result.
    let found = last_seen(&model, 3);
    assert!(!found.is_error);
    assert!(found.text.contains("cus_bob"), "{}", found.text);

    // The charge timed out after it went through: gate failed the task,
    // and rig's run stopped there; the answer was never asked for.
    let Err(PromptError::Cancelled { reason, .. }) = ended else {
        panic!("the run is cancelled: {ended:?}");
    };
    assert!(reason.starts_with("STOP."), "{reason}");
    assert_eq!(model.request_count(), 4);
    let report = tools.failure().await.expect("the task failed with a report");
    assert_eq!(report.tool, "charge_card");
    assert_eq!(report.ledger_state, Some(State::OutcomeUnknown));
    assert_eq!(reason, report.model_text);

    // The decisions and the charges of gate's own loop. The repair tokens
    // are not: rig tells no hook the usage of a turn it recovered (the one
    // with the hallucinated tool), so both repairs were settled to the one
    // turn reported after them, 2700 + 30 tokens, where gate's loop counts
    // both turns (docs/rig.md says so).
    let through_rig = outcome(&tools, &gate, &backend).await;
    let reference = through_gates_loop(&STOPPED).await;
    assert_eq!(
        through_rig.actions,
        [Action::Reject, Action::Reject, Action::Return, Action::Fail]
    );
    assert_eq!(through_rig.actions, reference.actions);
    assert_eq!((through_rig.charges, reference.charges), (1, 1));
    assert_eq!((through_rig.window, reference.window), (2730, 2590 + 2730));

    // The task is with a person: whatever the model sends next runs nothing.
    let again = tools.agent(AgentBuilder::new(MockCompletionModel::from_turns([
        MockTurn::tool_call(
            "c5",
            "charge_card",
            json!({"customer_id": "cus_bob", "amount_cents": 4500, "invoice_id": "INV-42"}),
        ),
    ])));
    let ended = again.prompt("Try again.").max_turns(4).await;
    assert!(matches!(ended, Err(PromptError::Cancelled { .. })), "{ended:?}");
    assert_eq!(backend.charges().len(), 1);
}

#[tokio::test]
async fn repairs_through_rig_cost_what_they_cost_in_gates_loop() {
    let (backend, gate) = charge_times_out().await;
    let tools = GateTools::new(gate.task("user-1")).expect("the invoice tools describe to rig");
    let model = rig_model(&REPAIRED);
    let agent = tools.agent(AgentBuilder::new(model.clone()).preamble(SYSTEM_PROMPT));

    let answer = agent.prompt(REQUEST).max_turns(8).await.expect("the run ends");

    assert_eq!(answer.output(), ANSWER);
    let through_rig = outcome(&tools, &gate, &backend).await;
    assert_eq!(
        through_rig.actions,
        [Action::Reject, Action::Return, Action::Reject, Action::Return]
    );
    // The hook reported every turn: each repair's estimate was settled to
    // the turn that answered it, as in gate's own loop.
    assert_eq!(through_rig.window, 2590 + 2840);
    assert_eq!(through_rig, through_gates_loop(&REPAIRED).await);
}

#[tokio::test]
async fn arguments_that_are_not_json_get_gates_hint() {
    let backend = Arc::new(Backend::demo());
    let tools = GateTools::new(gate(&backend).await.task("user-1")).expect("the invoice tools describe to rig");
    let name = ToolName::new("lookup_customer").expect("a name");
    let single_quoted = ToolFunction::parse(name, "{'email': 'ann@acme.com'}");
    let model = MockCompletionModel::from_turns([
        MockTurn::from_content(AssistantContent::ToolCall(ToolCall::from_wire("c1", single_quoted))),
        MockTurn::text("Sorry."),
    ]);
    let agent = tools.agent(AgentBuilder::new(model.clone()));

    let answer = agent
        .prompt("Who is ann@acme.com?")
        .max_turns(4)
        .await
        .expect("the run ends");

    assert_eq!(answer.output(), "Sorry.");
    let seen = last_seen(&model, 1);
    assert!(seen.is_error);
    assert!(seen.text.contains("single quotes"), "{}", seen.text);
    assert_eq!(tools.calls()[0].call.arguments, "{'email': 'ann@acme.com'}");
}

#[tokio::test]
async fn without_the_hook_rig_fails_the_run_on_a_hallucinated_tool() {
    let backend = Arc::new(Backend::demo());
    let tools = GateTools::new(gate(&backend).await.task("user-1")).expect("the invoice tools describe to rig");
    let model = MockCompletionModel::from_turns([MockTurn::tool_call("c1", "fetch_invoice", json!({}))]);
    let agent = AgentBuilder::new(model).tool_server_handle(tools.tool_server()).build();

    let ended = agent.prompt("Get INV-42.").max_turns(4).await;

    assert!(matches!(ended, Err(PromptError::UnknownToolCall { .. })), "{ended:?}");
    assert!(tools.calls().is_empty(), "gate never saw the call");
}

#[tokio::test]
async fn a_toolset_carries_every_step() {
    let backend = Arc::new(Backend::demo());
    backend.plan("charge_card", &[Fault::TimeoutAfterEffect]);
    let tools = GateTools::new(gate(&backend).await.task("user-1")).expect("the invoice tools describe to rig");
    let set = tools.toolset();
    let mut context = ToolContext::default();
    assert_eq!(
        set.names().collect::<Vec<_>>(),
        [
            "lookup_customer",
            "search_customers",
            "list_customers",
            "get_invoice",
            "charge_card",
            "send_receipt",
            "refund"
        ]
    );

    let found = set
        .execute("lookup_customer", r#"{"email":"ann@acme.com"}"#, &mut context)
        .await;
    assert!(found.is_success());
    assert!(found.output().render().contains("cus_ann"));

    let rejected = set.execute("lookup_customer", r#"{"email":12345}"#, &mut context).await;
    let error = rejected.error().expect("an error result");
    assert_eq!(error.kind(), ToolErrorKind::InvalidArgs);
    assert_eq!(error.code(), Some("gate:reject"));
    assert!(rejected.output().render().contains("- /email: expected string"));

    // Nothing found: a correction naming the widen hint.
    let corrected = set
        .execute("lookup_customer", r#"{"email":"nobody@globex.com"}"#, &mut context)
        .await;
    let error = corrected.error().expect("an error result");
    assert_eq!(error.code(), Some("gate:retry_with_correction"));
    assert_eq!(error.kind(), ToolErrorKind::NotFound);
    assert!(corrected.output().render().contains("search_customers"));

    // A tool rig does not have is rig's to answer: no hook runs here.
    let unknown = set.execute("fetch_invoice", "{}", &mut context).await;
    assert!(unknown.is_error_kind(ToolErrorKind::NotFound));

    let charge = r#"{"customer_id":"cus_bob","amount_cents":4500,"invoice_id":"INV-42"}"#;
    let failed = set.execute("charge_card", charge, &mut context).await;
    let error = failed.error().expect("an error result");
    assert_eq!(error.kind(), ToolErrorKind::Cancelled);
    assert_eq!(error.code(), Some("gate:fail"));
    assert!(tools.task().await.is_failed());

    let refused = set.execute("charge_card", charge, &mut context).await;
    assert_eq!(refused.error().and_then(|e| e.code()), Some("gate:fail"));
    assert_eq!(backend.charges().len(), 1);
    assert_eq!(tools.calls().len(), 5);
}
