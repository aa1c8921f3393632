use toolgate::tool;

/// Look up a customer.
#[tool(read_only, crate = "not a path")]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
