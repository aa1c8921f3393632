//! Generated names never collide with the user's types.
use toolgate::{tool, toolbox};

/// A customer.
#[derive(serde::Serialize)]
struct Customer {
    email: String,
}

/// Look up a customer.
#[tool(read_only)]
fn customer(email: String) -> Customer {
    Customer { email }
}

/// Arguments, by another name.
#[allow(dead_code)]
struct CustomerArgs;

/// A tool whose name shadows nothing.
#[tool(read_only)]
fn customer_args() -> bool {
    true
}

fn main() {
    let tools = toolbox![customer, customer_args];
    assert_eq!(tools.names(), ["customer", "customer_args"]);
    let _ = Customer { email: String::new() }.email;
}
