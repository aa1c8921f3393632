//! What several of the command's test files set up the same way.

use std::path::PathBuf;

use toolgate::{DynamicTool, Effects, Gate, ToolError, ToolSpec, Toolbox};

/// The headless Chromium the browser tests drive: `$GATE_CHROMIUM`, or the
/// first Chromium or Chrome on `PATH`.
#[allow(dead_code, reason = "each test crate uses a part of the support")]
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("GATE_CHROMIUM") {
        return PathBuf::from(path);
    }
    let names = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];
    let dirs = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    for dir in dirs.unwrap_or_default() {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "headless Chromium is required by this test but was not found on PATH. \
         Install it (Debian: `apt-get install -y chromium`) or set GATE_CHROMIUM to the browser binary."
    );
}

/// A gate on `store` whose one tool, `charge_card`, is destructive and
/// times out: a call of it leaves an unknown outcome in the ledger for
/// `gate reconcile` and fails its task for `gate report`.
#[allow(dead_code, reason = "each test crate uses a part of the support")]
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
