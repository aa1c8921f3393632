use toolgate::tool;

/// A type of the user's own, spelled like gate's call context.
struct Ctx;

/// Charge a card.
#[tool(destructive)]
fn charge_card(#[ctx] ctx: &Ctx) -> String {
    let _ = ctx;
    String::new()
}

fn main() {}
