use toolgate::tool;

/// Look up a customer.
#[tool(read_only, scopes = "crm:read")]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
