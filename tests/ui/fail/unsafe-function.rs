use toolgate::tool;

/// Do something unsafe.
#[tool(read_only)]
unsafe fn peek(address: u64) -> u64 {
    address
}

fn main() {}
