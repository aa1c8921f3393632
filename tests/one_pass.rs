//! Arguments are validated and parsed into the tool's own types in one
//! pass, before anything is claimed: a value the schema allows but the
//! type's `Deserialize` refuses is a rejection the model can act on, and
//! the ledger never hears of the call; a `Deserialize` that panics is the
//! tool's internal error, and the process goes on; the call's identity is
//! still that of its arguments as the validator reads them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use toolgate::FailureClass;
use toolgate::{Gate, Step, ToolCall, tools};
use toolgate_ledger::testing::{CommitKind, CountingStore};

/// Cents, at most 100,000: the schema says "an integer", the type says more.
#[derive(JsonSchema)]
#[schemars(transparent)]
struct Cents(u64);

impl<'de> Deserialize<'de> for Cents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let cents = u64::deserialize(deserializer)?;
        if cents > 100_000 {
            return Err(serde::de::Error::custom(
                "amounts over 100,000 cents need a person's approval",
            ));
        }
        Ok(Cents(cents))
    }
}

/// A code whose `Deserialize` panics on "boom".
#[derive(JsonSchema)]
#[schemars(transparent)]
struct Code(String);

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = String::deserialize(deserializer)?;
        assert_ne!(code, "boom", "a buggy Deserialize");
        Ok(Code(code))
    }
}

struct Payments(Arc<AtomicU32>);

#[tools]
impl Payments {
    /// Charge a customer.
    #[tool(destructive)]
    fn charge_card(&self, customer_id: String, amount: Cents) -> Value {
        self.0.fetch_add(1, Ordering::SeqCst);
        json!({"charge": format!("ch_{customer_id}"), "cents": amount.0})
    }

    /// Refund a charge.
    #[tool(destructive)]
    fn refund(&self, charge_id: String, #[arg(default)] note: String) -> Value {
        self.0.fetch_add(1, Ordering::SeqCst);
        json!({"refunded": charge_id, "note": note})
    }

    /// Apply a discount code.
    #[tool(idempotent)]
    fn apply_code(&self, code: Code) -> Value {
        self.0.fetch_add(1, Ordering::SeqCst);
        json!({"applied": code.0})
    }
}

async fn gate() -> (Gate, CountingStore, Arc<AtomicU32>) {
    let runs = Arc::new(AtomicU32::new(0));
    let store = CountingStore::new(toolgate::ledger::open("memory:").await.unwrap());
    let gate = Gate::builder(Payments(runs.clone()).into_toolbox())
        .storage(store.storage())
        .build()
        .await
        .unwrap();
    (gate, store, runs)
}

#[tokio::test]
async fn a_value_the_type_refuses_is_rejected_before_anything_is_claimed() {
    let (gate, store, runs) = gate().await;
    let mut task = gate.task("u1");
    let call = ToolCall::new("c1", "charge_card", r#"{"customer_id": "cus_1", "amount": 250000}"#);
    let step = task.handle(call).await;
    let Step::Reject(feedback) = &step else {
        panic!("expected a rejection, got {step:?}")
    };
    assert!(feedback.text.contains("need a person's approval"), "{}", feedback.text);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool never ran");
    let commits = store.commits();
    assert_eq!(
        commits.of(CommitKind::ClaimAndDispatch),
        0,
        "nothing was claimed: {commits:?}"
    );
    assert_eq!(commits.total(), 1, "the rejection's own record: {commits:?}");

    let call = ToolCall::new("c2", "charge_card", r#"{"customer_id": "cus_1", "amount": 2500}"#);
    let step = task.handle(call).await;
    assert!(
        matches!(step, Step::Return(ref out) if out.value["cents"] == 2500),
        "{step:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_deserialize_that_panics_is_the_tools_internal_error() {
    let (gate, _, runs) = gate().await;
    let mut task = gate.task("u1");
    let step = task
        .handle(ToolCall::new("c1", "apply_code", r#"{"code": "boom"}"#))
        .await;
    let Step::Fail(report) = &step else {
        panic!("expected a failure, got {step:?}")
    };
    assert_eq!(report.class, Some(FailureClass::Internal));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // The process, and the gate, go on.
    let step = gate
        .task("u2")
        .handle(ToolCall::new("c2", "apply_code", r#"{"code": "WINTER"}"#))
        .await;
    assert!(matches!(step, Step::Return(_)), "{step:?}");
}

// The one-pass parse reads the call's own text; the intent key is still
// derived from the arguments as the validator reads them, so a field with
// a default sent as null (which the validator reads as absent) is the same
// call as one without it: a replay, never a second refund.
#[tokio::test]
async fn a_defaulted_field_sent_as_null_is_the_same_intent_as_one_left_out() {
    let (gate, _, runs) = gate().await;
    let mut task = gate.task("u1");
    let first = ToolCall::new("c1", "refund", r#"{"charge_id": "ch_1", "note": null}"#);
    let step = task.handle(first).await;
    assert!(matches!(step, Step::Return(ref out) if !out.replayed), "{step:?}");
    let again = ToolCall::new("c2", "refund", r#"{"charge_id": "ch_1"}"#);
    let step = task.handle(again).await;
    assert!(matches!(step, Step::Return(ref out) if out.replayed), "{step:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "one refund");
}
