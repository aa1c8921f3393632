use toolgate::{tool, toolbox};

/// Look up a customer.
#[tool(read_only, name = "lookup")]
fn lookup_customer(email: String) -> String {
    email
}

/// Look up an invoice.
#[tool(read_only, name = "lookup")]
fn lookup_invoice(id: String) -> String {
    id
}

fn main() {
    let _ = toolbox![lookup_customer, lookup_invoice];
}
