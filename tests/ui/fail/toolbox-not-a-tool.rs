use toolgate::{tool, toolbox};

/// A tool.
#[tool(read_only)]
fn one() -> u8 {
    1
}

/// A plain function, without `#[tool]`.
fn helper() -> u8 {
    2
}

fn main() {
    let _ = toolbox![one, helper];
}
