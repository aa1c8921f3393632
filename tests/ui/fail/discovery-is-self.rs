use toolgate::tool;

/// Look up a customer.
#[tool(read_only, discovery = "lookup_customer")]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
