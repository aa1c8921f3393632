use toolgate::tool;

/// Email the customer a receipt.
#[tool(external)]
fn send_receipt(customer_id: String) -> String {
    customer_id
}

fn main() {}
