use toolgate::tool;

/// Read the user's account balance.
#[tool(private)]
fn account_balance(account: String) -> String {
    account
}

fn main() {}
