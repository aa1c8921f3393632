use toolgate::tool;

/// Send a message to a customer.
#[tool(writes, external, trusted)]
fn send_message(text: String) -> String {
    text
}

fn main() {}
