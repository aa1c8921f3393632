// The facade is `agent_tools` in this crate's Cargo.toml: free tools, an
// impl block's tools and `toolbox!` all expand to code that names it so, and
// the tools run through a gate.
use agent_tools::{Dialect, Gate, Step, ToolCall, ToolError, toolbox};

/// Look up a customer by email address.
#[agent_tools::tool(read_only)]
fn lookup_customer(
    /// The customer's email address.
    email: String,
    /// Include the order history.
    #[arg(default)]
    include_history: bool,
) -> Result<String, ToolError> {
    Ok(format!("customer {email} (history: {include_history})"))
}

struct Shop {
    currency: &'static str,
}

#[agent_tools::tools]
impl Shop {
    /// The shop's currency.
    #[agent_tools::tool(read_only)]
    fn currency(&self) -> String {
        self.currency.to_owned()
    }
}

fn main() {
    let tools = toolbox![lookup_customer];
    assert_eq!(tools.names(), ["lookup_customer"]);
    let manifest = tools.manifest(Dialect::OpenAiStrict).unwrap();
    assert_eq!(manifest[0]["function"]["parameters"]["required"][1], "include_history");
    assert_eq!(Shop { currency: "EUR" }.into_toolbox().names(), ["currency"]);

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let gate = Gate::builder(tools).store("memory:").build().await.unwrap();
        let mut task = gate.task("u1");
        let step = task
            .handle(ToolCall::new("c1", "lookup_customer", r#"{"email": "a@example.com"}"#))
            .await;
        let Step::Return(out) = &step else { panic!("{step:?}") };
        assert_eq!(out.value, "customer a@example.com (history: false)");
    });
}
