use toolgate::tool;

/// Delete a customer.
#[tool(read_only, destructive)]
fn delete_customer(id: String) -> String {
    id
}

fn main() {}
