//! `writes`, `keyed` with its `#[ctx]`, `timeout`, and `writes` beside
//! `destructive` (accepted: destructive implies writes).
use std::time::Duration;

use toolgate::{Ctx, ToolError, tool, toolbox};

/// Open a support ticket; each call opens another.
#[tool(writes, timeout = "500ms")]
fn open_ticket(subject: String) -> String {
    subject
}

/// Charge a card through a provider that deduplicates by idempotency key.
#[tool(writes, external, keyed, timeout = "10s")]
async fn charge_card(#[ctx] ctx: &Ctx, #[arg(key)] customer_id: String) -> Result<String, ToolError> {
    Ok(format!("{}{customer_id}", ctx.intent_key()))
}

/// Overwrite a document, keyed by the intent key.
#[tool(destructive, writes, keyed, timeout = "2m")]
fn overwrite_document(#[ctx] ctx: Ctx, id: String) -> String {
    format!("{}{id}", ctx.intent_key())
}

fn main() {
    let tools = toolbox![open_ticket, charge_card, overwrite_document];
    let ticket = tools.get("open_ticket").unwrap().spec();
    assert!(ticket.effects().is_writes() && !ticket.effects().is_keyed() && !ticket.effects().is_idempotent());
    assert_eq!(ticket.timeout(), Some(Duration::from_millis(500)));
    let charge = tools.get("charge_card").unwrap().spec();
    assert!(charge.effects().is_writes() && charge.effects().is_keyed() && charge.effects().is_external());
    assert_eq!(charge.timeout(), Some(Duration::from_secs(10)));
    let overwrite = tools.get("overwrite_document").unwrap().spec();
    assert!(overwrite.effects().is_destructive() && overwrite.effects().is_writes());
    assert_eq!(overwrite.timeout(), Some(Duration::from_secs(120)));
}
