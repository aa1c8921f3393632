use toolgate::tool;

/// Look up a customer.
#[tool(read_only)]
fn lookup_customer(#[arg(default)] email: Option<String>) -> String {
    email.unwrap_or_default()
}

fn main() {}
