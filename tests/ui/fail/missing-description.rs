use toolgate::tool;

#[tool(read_only)]
fn lookup_customer(email: String) -> String {
    email
}

fn main() {}
