//! What several of the command's test files set up the same way.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use toolgate::{DynamicTool, Effects, Gate, ToolError, ToolSpec, Toolbox};

/// The path of `name` in `tests/fixtures/`.
#[allow(dead_code, reason = "each test crate uses a part of the support")]
pub fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// The `gate` command run in `dir` (the temporary directory if `None`)
/// with `stdin` written from another thread, so a command that exits
/// before reading all of it (bad input on another argument) neither blocks
/// the test nor fails it with a broken pipe.
#[allow(dead_code, reason = "each test crate uses a part of the support")]
pub fn gate_bytes(args: &[&str], stdin: &[u8], dir: Option<&Path>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gate"))
        .args(args)
        .current_dir(dir.map_or_else(std::env::temp_dir, Path::to_path_buf))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

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
