use toolgate::tool;

/// An `Option` under another name is still an `Option`.
type MaybeEmail = Option<String>;

/// Look up a customer.
#[tool(read_only)]
fn lookup_customer(#[arg(default)] email: MaybeEmail) -> String {
    email.unwrap_or_default()
}

fn main() {}
