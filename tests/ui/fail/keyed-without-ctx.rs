use toolgate::tool;

/// Charge a card through a provider that deduplicates by idempotency key.
#[tool(writes, external, keyed)]
fn charge_card(customer_id: String, amount_cents: u64) -> String {
    format!("{customer_id}{amount_cents}")
}

fn main() {}
