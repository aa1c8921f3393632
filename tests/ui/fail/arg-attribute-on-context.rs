use toolgate::{Ctx, tool};

/// Charge a card.
#[tool(destructive)]
fn charge_card(#[ctx] #[arg(key)] ctx: &Ctx) -> String {
    ctx.intent_key().to_owned()
}

fn main() {}
