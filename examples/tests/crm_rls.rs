//! Least privilege to data, on the real server: the invoice demo's CRM on
//! PostgreSQL, read for the call's principal under row-level security, as
//! a role that neither owns the tables nor bypasses the policies. A task of
//! one team cannot read another team's customer, even when the model asks
//! for it by id.

use std::sync::Arc;

use gate_examples::invoice::backend::Backend;
use gate_examples::invoice::crm::{OTHER_CUSTOMER, OTHER_INVOICE, OTHER_TEAM, PgCrm, READER_ROLE};
use gate_examples::invoice::tools::InvoiceTools;
use toolgate::{Action, Gate, Principal, Step, ToolCall};

fn url() -> Option<String> {
    let url = std::env::var("GATE_POSTGRES_URL").ok();
    if url.is_none() {
        eprintln!("GATE_POSTGRES_URL is not set; .ci/run sets it");
    }
    url
}

fn team() -> String {
    format!("billing-team-rls-{}", std::process::id())
}

async fn gate_for(url: &str, owner: &str) -> (Gate, PgCrm) {
    let crm = PgCrm::open(url, owner).await.unwrap();
    let tools = InvoiceTools::with_crm(Arc::new(Backend::demo()), crm.clone());
    let gate = Gate::builder(tools.into_toolbox())
        .store("memory:")
        .build()
        .await
        .unwrap();
    (gate, crm)
}

fn returned(step: &Step) -> serde_json::Value {
    assert!(matches!(step, Step::Return(_)), "{step:?}");
    serde_json::from_str(step.model_text()).unwrap()
}

#[tokio::test]
async fn the_tools_query_as_a_role_that_neither_owns_the_tables_nor_bypasses_row_security() {
    let Some(url) = url() else { return };
    let (_, crm) = gate_for(&url, &team()).await;
    let (role, owns, bypasses) = crm.reader().await.unwrap();
    assert_eq!(role, READER_ROLE);
    assert!(
        !owns,
        "the reader must not own the table: an owner is not held by policies"
    );
    assert!(!bypasses, "the reader must not bypass row-level security");
}

#[tokio::test]
async fn a_task_cannot_read_another_teams_customer_even_when_the_model_asks_by_id() {
    let Some(url) = url() else { return };
    let team = team();
    let (gate, crm) = gate_for(&url, &team).await;
    let mut task = gate.task(&team);

    // Its own invoice and customers it reads.
    let own = returned(
        &task
            .handle(ToolCall::new("c1", "get_invoice", r#"{"invoice_id": "INV-41"}"#))
            .await,
    );
    assert_eq!(own["customer_id"], "cus_ann");
    let listed = returned(&task.handle(ToolCall::new("c2", "list_customers", "{}")).await);
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["cus_ann", "cus_bob", "cus_carol"]);

    // The other team's invoice, asked for by its id: as if it did not exist.
    let theirs = task
        .handle(ToolCall::new(
            "c3",
            "get_invoice",
            format!(r#"{{"invoice_id": "{OTHER_INVOICE}"}}"#),
        ))
        .await;
    assert_ne!(theirs.action(), Action::Return, "{theirs:?}");
    assert!(!theirs.model_text().contains("250000"), "{}", theirs.model_text());
    let (_, email, name) = OTHER_CUSTOMER;
    let by_email = task
        .handle(ToolCall::new(
            "c4",
            "lookup_customer",
            format!(r#"{{"email": "{email}"}}"#),
        ))
        .await;
    assert_ne!(by_email.action(), Action::Return, "{by_email:?}");
    assert!(!by_email.model_text().contains(name), "{}", by_email.model_text());
    let domain = task
        .handle(ToolCall::new("c5", "search_customers", r#"{"domain": "umbrella.com"}"#))
        .await;
    assert!(!domain.model_text().contains(name), "{}", domain.model_text());

    // The rows are there: their own team reads them through the same tools.
    let mut theirs_task = gate.task(OTHER_TEAM);
    let invoice = returned(
        &theirs_task
            .handle(ToolCall::new(
                "d1",
                "get_invoice",
                format!(r#"{{"invoice_id": "{OTHER_INVOICE}"}}"#),
            ))
            .await,
    );
    assert_eq!(invoice["amount_cents"], 250_000);
    // And a principal the program never set (no user) reads nothing.
    assert!(
        crm.customers(&Principal::new("", Vec::<String>::new()))
            .await
            .unwrap()
            .is_empty()
    );
}
