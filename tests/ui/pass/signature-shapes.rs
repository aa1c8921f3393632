//! Every signature shape `#[tool]` supports.
use toolgate::Ctx as Context;
use toolgate::{Ctx, ToolError, tool, toolbox};

/// Sync, plain return.
#[tool(read_only)]
fn sync_value(text: String) -> String {
    text
}

/// Async, plain return.
#[tool(read_only)]
async fn async_value(n: u32) -> u32 {
    n
}

/// Sync, `Result<T, ToolError>`.
#[tool(read_only)]
fn sync_result(n: i64) -> Result<i64, ToolError> {
    Ok(n)
}

/// Async, `Result<T, E>` with an error that converts.
#[tool(read_only)]
async fn async_result(path: String) -> Result<String, std::io::Error> {
    Ok(path)
}

/// A `Result` alias.
#[tool(read_only)]
fn alias_result(path: String) -> std::io::Result<String> {
    Ok(path)
}

/// No arguments, no return value.
#[tool(idempotent)]
fn nothing() {}

/// Context by reference and by value, doc comments, rename, default, key, raw identifiers.
#[tool(destructive, external, name = "charge", title = "Charge", scopes = ["billing:write"])]
async fn charge_card(
    #[ctx] ctx: &Ctx,
    /// Customer id.
    #[arg(key)]
    customer_id: String,
    /// Amount in cents.
    #[arg(key, rename = "amountCents")]
    amount_cents: u64,
    /// Currency code.
    #[arg(default)]
    currency: String,
    /// The kind of charge.
    r#type: Option<String>,
) -> Result<String, ToolError> {
    Ok(format!("{}{customer_id}{amount_cents}{currency}{type:?}", ctx.intent_key(), type = r#type))
}

/// A filter that deserializes but does not serialize.
#[derive(Default, serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    domain: Option<String>,
}

/// A defaulted argument whose type has no `Serialize`: no `default` in the
/// schema, and no error.
#[tool(read_only)]
fn search(#[arg(default)] filter: Filter) -> Option<String> {
    filter.domain
}

/// Owned context.
#[tool(idempotent, description = "Refund by intent key.")]
fn refund(#[ctx] ctx: Ctx, amount: u64) -> String {
    format!("{}{amount}", ctx.intent_key())
}

/// The context imported under another name.
#[tool(read_only)]
fn renamed_context(#[ctx] call: &Context) -> String {
    call.call_id().to_owned()
}

/// A return type that cannot be named.
#[tool(read_only)]
fn opaque(n: u32) -> impl serde::Serialize {
    n
}

/// A type of one's own that happens to be named `Option`: a default on it
/// means something, so it is allowed.
mod own {
    #[derive(Default, serde::Deserialize, schemars::JsonSchema)]
    pub struct Option {
        pub verbose: bool,
    }
}

/// A defaulted argument of a type named `Option` that is not `std`'s.
#[tool(read_only)]
fn configure(#[arg(default)] option: own::Option) -> bool {
    option.verbose
}

mod billing {
    use toolgate::tool;

    /// A public tool in a module.
    #[tool(read_only, discovery = "list_invoices", widen = "search by year")]
    pub fn get_invoice(id: String) -> String {
        id
    }
}

fn main() {
    let tools = toolbox![
        sync_value,
        async_value,
        sync_result,
        async_result,
        alias_result,
        nothing,
        charge_card,
        refund,
        billing::get_invoice,
        search,
        renamed_context,
        opaque,
        configure,
    ];
    assert_eq!(tools.len(), 13);
    assert_eq!(tools.names()[6], "charge");
}
