//! What the guard's part of `benches/handle.rs` measures: a mailbox read
//! whose result is `untrusted` (or the same read unlabelled), of a given
//! size, and an outbound `send_email` in a task that has read such a
//! result (or one that has read nothing labelled), all on the memory
//! store, so that what differs between the pairs is the guard's work.

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolgate::{DynamicTool, Effects, Gate, ToolCall, ToolSpec, Toolbox};

/// An inbox of `kib` KiB: emails whose bodies hold what the guard looks
/// for (addresses, URLs, account numbers, long words), each distinct.
pub fn inbox(kib: usize) -> Value {
    let mut emails = Vec::new();
    let mut size = 0;
    let mut n = 0;
    while size < kib * 1024 {
        let mut body = String::new();
        let _ = write!(
            body,
            "Hello team, invoice INV-{n} for account DE89370400440532{n:06} is overdue. Reply to billing{n}@vendor{n}.example or see https://portal.vendor{n}.example/invoices/{n}; call +49 30 1234{n:04}. Regards, accounting department {n}"
        );
        size += body.len() + 60;
        emails.push(
            json!({"from": format!("sender{n}@vendor{n}.example"), "subject": format!("Invoice {n}"), "body": body}),
        );
        n += 1;
    }
    json!({"emails": emails})
}

fn read_spec(name: &str, effects: Effects) -> ToolSpec {
    ToolSpec::new(
        name,
        "The user's received emails.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        effects,
    )
    .expect("a valid spec")
}

/// The tools: `read_inbox` (untrusted and private) and `read_plain` (the
/// same read, unlabelled), both answering `result`; `send_email`
/// (idempotent, external).
pub fn toolbox(result: &Value) -> Toolbox {
    let answer = |value: Value| {
        move |_: toolgate::Ctx, _: Value| {
            let value = value.clone();
            async move { Ok(value) }
        }
    };
    let send = ToolSpec::new(
        "send_email",
        "Send an email.",
        json!({"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"], "additionalProperties": false}),
        Effects::new().idempotent().external(),
    )
    .expect("a valid spec");
    Toolbox::new()
        .with(
            DynamicTool::new(read_spec(
                "read_inbox",
                Effects::new().read_only().private().untrusted(),
            ))
            .with_handler(answer(result.clone())),
        )
        .expect("unique names")
        .with(
            DynamicTool::new(read_spec("read_plain", Effects::new().read_only())).with_handler(answer(result.clone())),
        )
        .expect("unique names")
        .with(DynamicTool::new(send).with_handler(|_, _| async { Ok(json!({"sent": true})) }))
        .expect("unique names")
}

/// A gate on the memory store over [`toolbox`] answering `result`.
pub async fn gate(result: &Value) -> Gate {
    Gate::builder(toolbox(result))
        .store("memory:")
        .build()
        .await
        .expect("a gate")
}

/// The read `tool` (`read_inbox` or `read_plain`).
pub fn read(tool: &str) -> ToolCall {
    ToolCall::new("r1", tool, "{}")
}

/// The `n`th outbound email, to an address the user gave.
pub fn send(n: u64) -> ToolCall {
    ToolCall::new(
        format!("s{n}"),
        "send_email",
        format!(r#"{{"to": "bob@example.com", "body": "Thanks for the meeting, note {n}."}}"#),
    )
}

/// A task that has read `tool`'s result once, with the user's message
/// naming the address `send` writes to.
pub async fn task_after(gate: &Gate, tool: &str) -> toolgate::Task {
    let mut task = gate.task("bench-user");
    task.user_message("Thank bob@example.com for the meeting")
        .await
        .expect("recorded");
    let first = task.handle(read(tool)).await;
    assert!(
        matches!(&first, toolgate::Step::Return(out) if !out.is_error),
        "the read must succeed: {}",
        first.model_text()
    );
    let sent = task.handle(send(0)).await;
    assert!(
        matches!(&sent, toolgate::Step::Return(out) if !out.is_error),
        "the send must run: {}",
        sent.model_text()
    );
    task
}
