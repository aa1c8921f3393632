use toolgate::{Ctx, tool};

/// Look up a charge. (The conflict is reported on the flag written second.)
#[tool(keyed, read_only)]
fn get_charge(#[ctx] ctx: &Ctx, charge_id: String) -> String {
    format!("{}{charge_id}", ctx.intent_key())
}

fn main() {}
