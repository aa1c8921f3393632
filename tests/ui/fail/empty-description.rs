use toolgate::tool;

#[tool(read_only, description = "  ")]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
