use toolgate::{Ctx, tool};

/// Charge a card.
#[tool(destructive)]
fn charge_card(#[ctx] a: &Ctx, #[ctx] b: &Ctx) -> String {
    format!("{}{}", a.intent_key(), b.intent_key())
}

fn main() {}
