use toolgate::tool;

#[derive(Debug)]
struct CrmError;

/// Look up a customer.
#[tool(read_only)]
fn lookup_customer(email: String) -> Result<String, CrmError> {
    Ok(email)
}

fn main() {}
