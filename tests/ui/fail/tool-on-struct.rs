use toolgate::tool;

/// Not a function.
#[tool(read_only)]
struct Customer;

fn main() {}
