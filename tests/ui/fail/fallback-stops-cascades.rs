//! One mistake in a tool's attribute is one error: the function, its tool
//! and its toolbox entry still exist, so the code that uses them compiles.
use toolgate::{tool, toolbox};

/// Look up a customer.
#[tool(read_only, nmae = "lookup")]
fn lookup_customer(email: String) -> String {
    email
}

/// Count the customers.
#[tool(read_only)]
fn count_customers() -> u32 {
    1
}

fn main() {
    let _direct: String = lookup_customer("a@example.com".into());
    let _tools = toolbox![lookup_customer, count_customers];
}
