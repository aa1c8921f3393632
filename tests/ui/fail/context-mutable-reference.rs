use toolgate::{Ctx, tool};

/// Charge a card.
#[tool(destructive)]
fn charge_card(#[ctx] ctx: &mut Ctx) -> String {
    ctx.intent_key().to_owned()
}

fn main() {}
