//! A call that waits for a person's approval, served to rmcp's client in
//! both protocol eras: asked through form elicitation when the client can
//! be asked (a request to the client up to 2025-11-25, an input-required
//! result from 2026-07-28 on), decided out of band when it cannot.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, FormElicitationCapability, Implementation, ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolgate_core::ledger::ApprovalStatus;
use toolgate_core::{DynamicTool, Effects, Gate, ToolSpec, Toolbox};
use toolgate_mcp::{ClientApproval, MCP_CLIENT, McpServer};

/// What the client's user does when asked.
#[derive(Clone, Copy)]
enum Person {
    Accepts,
    Declines,
    /// Dismisses the form without deciding.
    Cancels,
    /// Never answers.
    Away,
}

/// A client that declares form elicitation (unless `can_be_asked` is false)
/// and answers as `person`, counting how often it was asked.
#[derive(Clone)]
struct Client {
    version: ProtocolVersion,
    can_be_asked: bool,
    person: Person,
    asked: Arc<AtomicUsize>,
    last_question: Arc<std::sync::Mutex<String>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.can_be_asked {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        }
        let mut config = ClientConfig::new(capabilities, Implementation::new("approver", "1"));
        config.protocol_version = self.version.clone();
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            *self.last_question.lock().unwrap() = message.clone();
        }
        Ok(match self.person {
            Person::Accepts => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"reason": "looks right to me"}))
            }
            Person::Declines => {
                ElicitResult::new(ElicitationAction::Decline).with_content(json!({"reason": "not this customer"}))
            }
            Person::Cancels => ElicitResult::new(ElicitationAction::Cancel),
            Person::Away => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                ElicitResult::new(ElicitationAction::Cancel)
            }
        })
    }
}

struct Served {
    gate: Gate,
    charges: Arc<AtomicUsize>,
    client: Client,
}

async fn served(version: ProtocolVersion, can_be_asked: bool, person: Person) -> Served {
    let charges = Arc::new(AtomicUsize::new(0));
    let counted = charges.clone();
    let charge = ToolSpec::new(
        "charge_card",
        "Charge a customer's card.",
        json!({"type": "object", "properties": {"customer": {"type": "string"}, "cents": {"type": "integer"}},
               "required": ["customer", "cents"]}),
        Effects::new().writes().external().approval(),
    )
    .unwrap();
    let tools = Toolbox::new()
        .with(DynamicTool::new(charge).with_handler(move |_, args: Value| {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"charged": args["cents"]}))
            }
        }))
        .unwrap();
    let gate = Gate::builder(tools).store("memory:").build().await.unwrap();
    let client = Client {
        version,
        can_be_asked,
        person,
        asked: Arc::new(AtomicUsize::new(0)),
        last_question: Arc::default(),
    };
    Served { gate, charges, client }
}

/// One client connection to a server for `served.gate`.
struct Session {
    client: rmcp::service::RunningService<RoleClient, Client>,
    serving: tokio::task::JoinHandle<Result<(), toolgate_mcp::ServeError>>,
}

impl Session {
    async fn open(served: &Served, approval: ClientApproval) -> Session {
        let server = McpServer::new(served.gate.clone(), "ops").client_approval(approval);
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let serving = tokio::spawn(async move { server.serve(tokio::io::split(server_end)).await });
        let client = served.client.clone().serve(tokio::io::split(client_end)).await.unwrap();
        Session { client, serving }
    }

    /// Charges the same customer the same amount.
    async fn charge(&self) -> CallToolResult {
        let params = CallToolRequestParams::new("charge_card").with_arguments(
            json!({"customer": "cus_42", "cents": 1200})
                .as_object()
                .cloned()
                .unwrap(),
        );
        self.client.call_tool(params).await.unwrap()
    }

    async fn close(self) {
        self.client.cancel().await.unwrap();
        assert!(self.serving.await.unwrap().is_ok());
    }
}

/// Calls `charge_card` `times` times with the same arguments on one
/// connection, the server waiting `wait` for an answer.
async fn charge(served: &Served, times: usize, wait: Duration) -> Vec<CallToolResult> {
    let session = Session::open(served, ClientApproval::Elicit { wait }).await;
    let mut results = Vec::new();
    for _ in 0..times {
        results.push(session.charge().await);
    }
    session.close().await;
    results
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

async fn only_request(gate: &Gate) -> toolgate_core::ledger::ApprovalRecord {
    let all = gate.approvals().list(&Default::default()).await.unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    all.into_iter().next().unwrap()
}

const WAIT: Duration = Duration::from_secs(30);

async fn accepting_runs_the_call_once_and_answers_with_its_result(version: ProtocolVersion) {
    let served = served(version, true, Person::Accepts).await;
    let results = charge(&served, 2, WAIT).await;
    assert_eq!(results[0].is_error, Some(false), "{}", text(&results[0]));
    assert!(text(&results[0]).contains("1200"), "{}", text(&results[0]));
    assert_eq!(served.charges.load(Ordering::SeqCst), 1);
    // The identical call after approval gets the recorded outcome: the
    // charge is not made again and the person is not asked again.
    assert!(text(&results[1]).contains("1200"), "{}", text(&results[1]));
    assert_eq!(served.charges.load(Ordering::SeqCst), 1);
    assert_eq!(served.client.asked.load(Ordering::SeqCst), 1);
    let request = only_request(&served.gate).await;
    assert_eq!(request.status, ApprovalStatus::Approved);
    assert_eq!(request.decided_by.as_deref(), Some(MCP_CLIENT));
    assert_eq!(request.note.as_deref(), Some("looks right to me"));
    let question = served.client.last_question.lock().unwrap().clone();
    assert!(question.contains("Approve `charge_card`"), "{question}");
    assert!(question.contains("\"cus_42\""), "{question}");
}

#[tokio::test]
async fn accepting_runs_the_call_once_and_answers_with_its_result_2025_11_25() {
    accepting_runs_the_call_once_and_answers_with_its_result(ProtocolVersion::V_2025_11_25).await;
}

#[tokio::test]
async fn accepting_runs_the_call_once_and_answers_with_its_result_2026_07_28() {
    accepting_runs_the_call_once_and_answers_with_its_result(ProtocolVersion::V_2026_07_28).await;
}

async fn declining_answers_with_the_denial_and_never_runs(version: ProtocolVersion) {
    let served = served(version, true, Person::Declines).await;
    let results = charge(&served, 2, WAIT).await;
    assert_eq!(results[0].is_error, Some(true));
    assert!(
        text(&results[0]).contains("a person declined: not this customer"),
        "{}",
        text(&results[0])
    );
    // The identical call again is refused as a repeat, without a new request.
    assert_eq!(results[1].is_error, Some(true));
    assert!(text(&results[1]).contains("already failed"), "{}", text(&results[1]));
    assert_eq!(served.charges.load(Ordering::SeqCst), 0);
    assert_eq!(served.client.asked.load(Ordering::SeqCst), 1);
    let request = only_request(&served.gate).await;
    assert_eq!(request.status, ApprovalStatus::Denied);
    assert_eq!(request.decided_by.as_deref(), Some(MCP_CLIENT));
}

#[tokio::test]
async fn declining_answers_with_the_denial_and_never_runs_2025_11_25() {
    declining_answers_with_the_denial_and_never_runs(ProtocolVersion::V_2025_11_25).await;
}

#[tokio::test]
async fn declining_answers_with_the_denial_and_never_runs_2026_07_28() {
    declining_answers_with_the_denial_and_never_runs(ProtocolVersion::V_2026_07_28).await;
}

/// Charges on a new connection and expects the pending text (no answer
/// came); an operator decides out of band and the identical call on the
/// same connection gets the charge, once.
async fn pending_until_an_operator_approves(served: &Served, approval: ClientApproval) {
    let session = Session::open(served, approval).await;
    let first = session.charge().await;
    // No result yet: an error result, so a client checking a typed tool's
    // output does not take the text for one.
    assert_eq!(first.is_error, Some(true));
    let meta = first.meta.as_ref().unwrap();
    assert_eq!(
        meta.0.get(toolgate_mcp::META_ACTION),
        Some(&Value::from("await_approval"))
    );
    assert!(text(&first).contains("has not run"), "{}", text(&first));
    assert_eq!(served.charges.load(Ordering::SeqCst), 0);
    let request = only_request(&served.gate).await;
    assert_eq!(request.status, ApprovalStatus::Pending);
    assert_eq!(
        meta.0.get(toolgate_mcp::META_APPROVAL),
        Some(&Value::from(request.id.clone()))
    );

    served
        .gate
        .approvals()
        .approve(&request.id, "alice", None)
        .await
        .unwrap();
    let asked_before = served.client.asked.load(Ordering::SeqCst);
    let after = session.charge().await;
    session.close().await;
    assert_eq!(after.is_error, Some(false), "{}", text(&after));
    assert!(text(&after).contains("1200"), "{}", text(&after));
    assert_eq!(served.charges.load(Ordering::SeqCst), 1);
    assert_eq!(served.client.asked.load(Ordering::SeqCst), asked_before);
    assert_eq!(only_request(&served.gate).await.decided_by.as_deref(), Some("alice"));
}

#[tokio::test]
async fn a_client_that_cannot_be_asked_gets_the_pending_text_and_the_result_after_an_operator_approves() {
    for version in [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28] {
        let served = served(version, false, Person::Accepts).await;
        pending_until_an_operator_approves(&served, ClientApproval::Elicit { wait: WAIT }).await;
        assert_eq!(served.client.asked.load(Ordering::SeqCst), 0);
    }
}

#[tokio::test]
async fn a_person_who_dismisses_the_form_leaves_the_request_pending() {
    for version in [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28] {
        let served = served(version, true, Person::Cancels).await;
        pending_until_an_operator_approves(&served, ClientApproval::Elicit { wait: WAIT }).await;
        assert_eq!(served.client.asked.load(Ordering::SeqCst), 1);
    }
}

#[tokio::test]
async fn no_answer_within_the_wait_leaves_the_request_pending() {
    let served = served(ProtocolVersion::V_2025_11_25, true, Person::Away).await;
    let wait = Duration::from_millis(200);
    pending_until_an_operator_approves(&served, ClientApproval::Elicit { wait }).await;
    assert_eq!(served.client.asked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_server_that_decides_out_of_band_never_asks_the_client() {
    let served = served(ProtocolVersion::V_2025_11_25, true, Person::Accepts).await;
    pending_until_an_operator_approves(&served, ClientApproval::OutOfBand).await;
    assert_eq!(served.client.asked.load(Ordering::SeqCst), 0);
}
