//! `#[tools]` on an impl block, sync and async methods, beside plain methods.
use toolgate::{Ctx, ToolError, tools};

struct Crm {
    base_url: String,
}

#[tools]
impl Crm {
    /// Look up a customer.
    #[tool(read_only, discovery = "list_customers")]
    async fn lookup_customer(&self, email: String) -> Result<String, ToolError> {
        Ok(format!("{}/{email}", self.base_url))
    }

    /// List customers.
    #[tool(read_only)]
    fn list_customers(&self, #[ctx] ctx: &Ctx) -> Vec<String> {
        vec![ctx.user().to_owned(), self.base_url.clone()]
    }

    /// Not a tool.
    fn helper(&self) -> usize {
        self.base_url.len()
    }
}

fn main() {
    let crm = Crm { base_url: "https://crm".into() };
    assert_eq!(crm.helper(), 11);
    let tools = crm.into_toolbox();
    assert_eq!(tools.names(), ["lookup_customer", "list_customers"]);
}
