use toolgate::tool;

/// Look up a customer.
#[tool(read_only, timeout = 10)]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
