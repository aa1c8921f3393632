use toolgate::tool;

/// Look up a customer.
#[tool(read_only)]
fn lookup_customer(#[arg(defualt)] include_history: bool) -> bool {
    include_history
}

fn main() {}
