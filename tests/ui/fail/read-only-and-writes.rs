use toolgate::tool;

/// Open a support ticket.
#[tool(read_only, writes)]
fn open_ticket(subject: String) -> String {
    subject
}

fn main() {}
