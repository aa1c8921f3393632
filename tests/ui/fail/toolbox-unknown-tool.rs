use toolgate::{tool, toolbox};

/// The first tool.
#[tool(read_only)]
fn one() -> u8 {
    1
}

/// The second tool.
#[tool(read_only)]
fn two() -> u8 {
    2
}

fn main() {
    let _ = toolbox![one, tow];
}
