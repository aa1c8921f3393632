use toolgate::tool;

/// Look up a customer.
#[tool]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
