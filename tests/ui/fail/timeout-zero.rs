use toolgate::tool;

/// Look up a customer.
#[tool(read_only, timeout = "0s")]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
