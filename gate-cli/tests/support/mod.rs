//! What several of the command's test files set up the same way.

use toolgate::{DynamicTool, Effects, Gate, ToolError, ToolSpec, Toolbox};

/// A gate on `store` whose one tool, `charge_card`, is destructive and
/// times out: a call of it leaves an unknown outcome in the ledger for
/// `gate reconcile` and fails its task for `gate report`.
pub async fn gate_whose_charge_times_out(store: &str) -> Gate {
    let spec = ToolSpec::new(
        "charge_card",
        "Charge a card.",
        serde_json::json!({"type": "object"}),
        Effects::new().destructive(),
    )
    .unwrap();
    let charge = DynamicTool::new(spec).with_handler(|_, _| async { Err::<serde_json::Value, _>(ToolError::Timeout) });
    Gate::builder(Toolbox::new().with(charge).unwrap())
        .store(store)
        .build()
        .await
        .unwrap()
}

/// A gate on `store` whose one tool, `wire_money`, needs a person's
/// approval for every call: a call of it leaves a pending request for
/// `gate approvals`.
#[allow(dead_code, reason = "each test crate uses a part of the support")]
pub async fn gate_asking_for_approval(store: &str) -> Gate {
    let spec = ToolSpec::new(
        "wire_money",
        "Wire money to an account.",
        serde_json::json!({"type": "object", "properties": {"iban": {"type": "string"}}}),
        Effects::new().writes().external().approval(),
    )
    .unwrap();
    let wire =
        DynamicTool::new(spec).with_handler(|_, _| async { Ok::<_, ToolError>(serde_json::json!({"sent": true})) });
    Gate::builder(Toolbox::new().with(wire).unwrap())
        .store(store)
        .build()
        .await
        .unwrap()
}
