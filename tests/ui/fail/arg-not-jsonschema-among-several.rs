use toolgate::tool;

#[derive(serde::Deserialize)]
struct Filter {
    domain: String,
}

/// Search customers.
#[tool(read_only)]
fn search_customers(name: String, filter: Filter, limit: u32) -> String {
    format!("{name} {} {limit}", filter.domain)
}

fn main() {}
