use toolgate::tool;

/// Look up a customer.
#[tool(read_only)]
fn lookup_customer(email: String, #[arg(rename = "email")] address: String) -> String {
    email + &address
}

fn main() {}
