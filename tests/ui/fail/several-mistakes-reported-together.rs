use toolgate::tool;

#[tool(read_only, destructive, nmae = "x")]
fn lookup_customer(email: &str) -> String {
    email.to_owned()
}

fn main() {}
