use toolgate::tool;

/// Echo anything.
#[tool(read_only)]
fn echo<T: serde::Serialize>(value: String) -> String {
    value
}

fn main() {}
