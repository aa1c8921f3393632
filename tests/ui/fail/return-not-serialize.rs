use toolgate::tool;

struct Customer;

/// Look up a customer.
#[tool(read_only)]
fn lookup_customer(email: String) -> Customer {
    let _ = email;
    Customer
}

fn main() {}
