use toolgate::tool;

/// Look up a customer.
#[tool(read_only)]
fn lookup_customer(#[arg(rename = "e-mail")] email: String) -> String {
    email
}

fn main() {}
