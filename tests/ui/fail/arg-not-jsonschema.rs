use toolgate::tool;

#[derive(serde::Deserialize)]
struct Filter {
    domain: String,
}

/// Search customers.
#[tool(read_only)]
fn search_customers(filter: Filter) -> String {
    filter.domain
}

fn main() {}
