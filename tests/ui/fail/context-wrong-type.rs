use toolgate::tool;

/// Charge a card.
#[tool(destructive)]
fn charge_card(#[ctx] key: String) -> String {
    key
}

fn main() {}
