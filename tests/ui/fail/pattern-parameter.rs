use toolgate::tool;

/// Move a pallet.
#[tool(idempotent)]
fn move_pallet((row, column): (u16, u16)) -> u16 {
    row + column
}

fn main() {}
