use toolgate::tool;

/// Set a customer's email address.
#[tool(writes, idempotent)]
fn set_email(customer_id: String, email: String) -> String {
    format!("{customer_id}{email}")
}

fn main() {}
