use toolgate::tool;

/// Export every invoice.
#[tool(read_only, timeout = "1441m")]
fn export_invoices(year: u16) -> String {
    year.to_string()
}

fn main() {}
