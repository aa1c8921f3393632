use toolgate::tool;

/// Look up a customer.
#[tool(read_only)]
fn lookup_customer(email: &str) -> String {
    email.to_owned()
}

fn main() {}
