use toolgate::tool;

/// Look up a customer.
#[tool(read_only, nmae = "lookup")]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
