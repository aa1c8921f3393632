use toolgate::tool;

/// Fetch a web page.
#[tool(read_only, external, untrusted, trusted)]
fn fetch_page(url: String) -> String {
    url
}

fn main() {}
