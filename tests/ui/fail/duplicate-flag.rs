use toolgate::tool;

/// Look up a customer.
#[tool(read_only, read_only)]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
