use toolgate::tool;

/// Charge a card.
#[tool(destructive, external)]
fn charge_card(#[arg(key, key)] customer_id: String) -> String {
    customer_id
}

fn main() {}
