use toolgate::tool;

struct Crm;

impl Crm {
    /// Look up a customer.
    #[tool(read_only)]
    fn lookup_customer(&self, email: String) -> String {
        email
    }
}

fn main() {}
