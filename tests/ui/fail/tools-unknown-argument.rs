use toolgate::tools;

struct Crm;

#[tools(shared)]
impl Crm {
    /// Look up a customer.
    #[toolgate::tool(read_only)]
    fn lookup_customer(&self, email: String) -> String {
        email
    }
}

fn main() {}
