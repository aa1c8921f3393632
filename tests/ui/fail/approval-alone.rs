use toolgate::tool;

/// Wire money to an account.
#[tool(approval)]
fn wire_money(account: String) -> String {
    account
}

fn main() {}
