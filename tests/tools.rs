//! What `#[tool]`, `#[tools]` and `toolbox!` generate, seen from the runtime:
//! metadata, schemas, calls of every signature shape, and toolbox rules.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolgate::Ctx as CallContext;
use toolgate::{
    Ctx, DynamicTool, Effects, FailureReason, Gate, Step, ToolCall, ToolError, ToolSpec, Toolbox, tool, toolbox, tools,
};

/// A customer record.
#[derive(Debug, Serialize, Deserialize, schemars::JsonSchema, PartialEq)]
pub struct Customer {
    /// Email.
    pub email: String,
}

/// Find a customer by email.
#[tool(read_only, discovery = "list_customers", widen = "search by the email's domain", scopes = ["crm:read"])]
async fn customer(
    /// The customer's email address.
    email: String,
    /// Include the order history.
    #[arg(default)]
    include_history: bool,
) -> Result<Customer, ToolError> {
    if email.is_empty() {
        return Err(ToolError::Empty);
    }
    let _ = include_history;
    Ok(Customer { email })
}

/// List every customer.
#[tool(read_only, name = "list_customers", title = "All customers")]
fn list_all() -> Vec<String> {
    vec!["a@example.com".into()]
}

/// Charge a card.
#[tool(destructive, external)]
async fn charge_card(
    #[ctx] ctx: &Ctx,
    #[arg(key)] customer_id: String,
    #[arg(key, rename = "amountCents")] amount_cents: u64,
    /// Free text.
    note: Option<String>,
) -> Result<Value, ToolError> {
    Ok(json!({"key": ctx.intent_key(), "customer": customer_id, "amount": amount_cents, "note": note}))
}

/// Count with an owned context.
#[tool(idempotent)]
fn owned_ctx(#[ctx] ctx: Ctx) -> String {
    ctx.task_id().to_owned()
}

/// Read a file.
#[tool(read_only)]
fn read_config(path: String) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

/// Always panics.
#[tool(read_only)]
fn boom() -> u8 {
    panic!("the tool exploded")
}

/// An error that serializes: were `Lookup` taken for a plain value, an
/// `Err` would reach the model as `{"Err": …}`, a success.
#[derive(Debug, Serialize)]
struct LookupFailed;

impl From<LookupFailed> for ToolError {
    fn from(_: LookupFailed) -> Self {
        ToolError::NotFound
    }
}

/// A `Result` under a name of its own.
type Lookup = Result<String, LookupFailed>;

/// Look a name up, or fail.
#[tool(read_only)]
fn lookup(#[ctx] call: &CallContext, name: String) -> Lookup {
    if name.is_empty() {
        Err(LookupFailed)
    } else {
        Ok(format!("{name}@{}", call.task_id()))
    }
}

mod nested {
    use toolgate::tool;

    /// A tool in a module.
    #[tool(read_only)]
    pub fn ping() -> &'static str {
        "pong"
    }
}

fn ctx(tool: &str) -> Ctx {
    Ctx::new("task-1", "user-1", "call-1", tool, "intent-1")
}

async fn call(toolbox: &Toolbox, name: &str, args: &str) -> Result<Value, ToolError> {
    let tool = toolbox.get(name).expect("tool exists");
    tool.call(&ctx(name), args).await
}

fn all() -> Toolbox {
    toolbox![
        customer,
        list_all,
        charge_card,
        owned_ctx,
        read_config,
        boom,
        nested::ping,
        lookup
    ]
}

#[test]
fn metadata_comes_from_attributes_and_docs() {
    let tools = all();
    assert_eq!(
        tools.names(),
        [
            "customer",
            "list_customers",
            "charge_card",
            "owned_ctx",
            "read_config",
            "boom",
            "ping",
            "lookup"
        ]
    );
    let spec = tools.get("customer").unwrap().spec();
    assert_eq!(spec.description(), "Find a customer by email.");
    assert!(spec.effects().is_read_only() && spec.effects().is_retry_safe());
    assert_eq!(spec.discovery(), Some("list_customers"));
    assert_eq!(spec.widen(), Some("search by the email's domain"));
    assert_eq!(spec.scopes(), ["crm:read"]);
    assert!(spec.origin().ends_with("::customer`"), "{}", spec.origin());
    let listing = tools.get("list_customers").unwrap().spec();
    assert_eq!(listing.title(), Some("All customers"));
    let charge = tools.get("charge_card").unwrap().spec();
    assert_eq!(charge.key_args(), ["customer_id", "amountCents"]);
    assert!(charge.effects().is_destructive() && charge.effects().is_external() && !charge.effects().is_retry_safe());
}

#[test]
fn schema_lists_arguments_in_order_without_the_context() {
    let tools = all();
    let schema = tools.get("customer").unwrap().spec().input_schema().clone();
    assert_eq!(
        schema["properties"]["email"]["description"],
        "The customer's email address."
    );
    assert_eq!(schema["properties"]["include_history"]["default"], false);
    assert_eq!(schema["required"], json!(["email"]));
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    let charge = tools.get("charge_card").unwrap().spec().input_schema().clone();
    let keys: Vec<&String> = charge["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["customer_id", "amountCents", "note"]);
    let empty = tools.get("list_customers").unwrap().spec().input_schema().clone();
    assert_eq!(empty["type"], "object");
}

#[tokio::test]
async fn calls_reach_async_sync_and_context_taking_tools() {
    let tools = all();
    assert_eq!(
        call(&tools, "customer", r#"{"email":"a@b.c"}"#).await.unwrap(),
        json!({"email": "a@b.c"})
    );
    assert!(matches!(
        call(&tools, "customer", r#"{"email":""}"#).await,
        Err(ToolError::Empty)
    ));
    assert_eq!(
        call(&tools, "list_customers", "{}").await.unwrap(),
        json!(["a@example.com"])
    );
    let charged = call(&tools, "charge_card", r#"{"customer_id":"c1","amountCents":500}"#)
        .await
        .unwrap();
    assert_eq!(
        charged,
        json!({"key": "intent-1", "customer": "c1", "amount": 500, "note": null})
    );
    assert_eq!(call(&tools, "owned_ctx", "{}").await.unwrap(), json!("task-1"));
    assert_eq!(call(&tools, "ping", "{}").await.unwrap(), json!("pong"));
}

#[tokio::test]
async fn error_types_convert_into_failure_classes() {
    let tools = all();
    let missing = call(&tools, "read_config", r#"{"path":"/definitely/not/here"}"#).await;
    assert!(matches!(missing, Err(ToolError::NotFound)), "{missing:?}");
}

#[tokio::test]
async fn a_result_under_another_name_is_still_a_result() {
    let tools = all();
    let failed = call(&tools, "lookup", r#"{"name":""}"#).await;
    assert!(matches!(failed, Err(ToolError::NotFound)), "{failed:?}");
    let found = call(&tools, "lookup", r#"{"name":"ada"}"#).await;
    assert_eq!(
        found.unwrap(),
        json!("ada@task-1"),
        "and the context imported under another name reached it"
    );
}

#[tokio::test]
async fn a_panicking_tool_fails_its_task_without_the_panic_in_the_models_text() {
    let gate = Gate::builder(all()).store("memory:").build().await.unwrap();
    let mut task = gate.task("user-1");
    let step = task.handle(ToolCall::new("call-1", "boom", "{}")).await;
    let Step::Fail(report) = &step else { panic!("{step:?}") };
    assert_eq!(report.reason, FailureReason::Internal);
    assert!(
        !step.model_text().contains("the tool exploded") && !report.last_error.contains("the tool exploded"),
        "the panic message stays out of the model's text: {step:?}"
    );
}

#[tokio::test]
async fn arguments_that_do_not_deserialize_are_an_internal_error_not_a_panic() {
    let tools = all();
    // The runtime validates first; a tool handed bad text anyway must not panic.
    let err = call(&tools, "customer", r#"{"email": 5}"#).await.unwrap_err();
    assert!(matches!(err, ToolError::Internal(_)));
}

#[tokio::test]
async fn arguments_are_read_as_an_object_of_the_declared_names() {
    let tools = all();
    // An absent `Option` is `None`, an absent `#[arg(default)]` its
    // `Default`; a renamed argument is read under its JSON name, and a key
    // with an escape in it is the same key.
    let charged = call(
        &tools,
        "charge_card",
        r#"{"customer_id": "c1", "amount\u0043ents": 250}"#,
    )
    .await
    .expect("valid arguments");
    assert_eq!(charged["customer"], "c1");
    assert_eq!(charged["amount"], 250);
    assert_eq!(charged["note"], Value::Null);
    let found = call(&tools, "customer", r#"{"email": "a@example.com"}"#)
        .await
        .expect("valid");
    assert_eq!(found["email"], "a@example.com");

    // Anything else is refused, naming the field, as serde's derive would
    // with `deny_unknown_fields`: a missing, unknown or repeated argument,
    // and arguments that are not an object.
    let refused = [
        (r#"{"amountCents": 250}"#, "missing field `customer_id`"),
        (
            r#"{"customer_id": "c1", "amountCents": 250, "amount_cents": 1}"#,
            "unknown field `amount_cents`, expected one of `customer_id`, `amountCents`, `note`",
        ),
        (
            r#"{"customer_id": "c1", "customer_id": "c2", "amountCents": 250}"#,
            "duplicate field `customer_id`",
        ),
        (r#"["c1", 250]"#, "expected an object of the tool's arguments"),
        (
            r#"{"customer_id": "c1", "amountCents": "250"}"#,
            "invalid type: string \"250\", expected u64",
        ),
    ];
    for (arguments, expected) in refused {
        let err = call(&tools, "charge_card", arguments).await.unwrap_err();
        assert!(matches!(err, ToolError::Internal(_)), "{arguments}: {err:?}");
        let cause = std::error::Error::source(&err)
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(cause.contains(expected), "{arguments}: {cause}");
    }
}

/// Shared state for method tools.
struct Crm {
    calls: AtomicU32,
    log: Mutex<Vec<String>>,
}

#[tools]
impl Crm {
    /// Count a visit.
    #[tool(idempotent)]
    async fn visit(&self, who: String) -> u32 {
        self.log.lock().unwrap().push(who);
        self.calls.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// How many visits so far.
    #[tool(read_only, name = "visit_count")]
    fn count(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }

    fn not_a_tool(&self) -> usize {
        self.log.lock().unwrap().len()
    }
}

#[tokio::test]
async fn method_tools_share_their_impls_state() {
    let crm = Crm {
        calls: AtomicU32::new(0),
        log: Mutex::new(Vec::new()),
    };
    assert_eq!(crm.not_a_tool(), 0);
    let tools = crm.into_toolbox();
    assert_eq!(tools.names(), ["visit", "visit_count"]);
    assert_eq!(call(&tools, "visit", r#"{"who":"ann"}"#).await.unwrap(), json!(1));
    assert_eq!(call(&tools, "visit", r#"{"who":"bob"}"#).await.unwrap(), json!(2));
    assert_eq!(call(&tools, "visit_count", "{}").await.unwrap(), json!(2));
    assert!(tools.get("visit").unwrap().spec().origin().contains("Crm::visit"));
}

#[tokio::test]
async fn dynamic_tools_live_beside_macro_tools() {
    let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
    let spec = ToolSpec::new(
        "search_web",
        "Search the web.",
        schema,
        Effects::new().read_only().external(),
    )
    .unwrap();
    let web = DynamicTool::new(spec).with_handler(|_, args| async move { Ok(json!({"echo": args["q"]})) });
    let tools = all().with(web).unwrap();
    assert_eq!(tools.names().last(), Some(&"search_web"));
    assert_eq!(
        call(&tools, "search_web", r#"{"q":"rust"}"#).await.unwrap(),
        json!({"echo": "rust"})
    );
    assert!(tools.manifest(toolgate::Dialect::OpenAiStrict).is_ok());
}

#[test]
fn a_dynamic_tool_cannot_take_a_macro_tools_name() {
    let spec = ToolSpec::new(
        "ping",
        "Another ping.",
        json!({"type": "object"}),
        Effects::new().read_only(),
    )
    .unwrap();
    let err = all().with(DynamicTool::new(spec)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`ping`") && text.contains("nested::ping") && text.contains("dynamic tool"),
        "{text}"
    );
}

#[test]
fn tools_can_be_declared_inside_a_function_body() {
    /// A local tool.
    #[tool(read_only)]
    fn local() -> bool {
        true
    }
    assert_eq!(toolbox![local].names(), ["local"]);
    assert!(toolbox![].is_empty());
}

/// Open a ticket in a tracker that deduplicates by idempotency key.
#[tool(writes, external, keyed, timeout = "10s")]
async fn open_ticket(#[ctx] ctx: &Ctx, subject: String) -> Result<Value, ToolError> {
    Ok(json!({"idempotency_key": ctx.intent_key(), "subject": subject}))
}

#[test]
fn writes_keyed_and_timeout_reach_the_spec() {
    let tools = toolbox![open_ticket];
    let spec = tools.get("open_ticket").unwrap().spec();
    let effects = spec.effects();
    assert!(effects.is_writes() && effects.is_keyed() && effects.is_external());
    assert!(!effects.is_idempotent() && !effects.is_retry_safe() && effects.is_resend_safe());
    assert_eq!(spec.timeout(), Some(std::time::Duration::from_secs(10)));
    assert_eq!(all().get("customer").unwrap().spec().timeout(), None);
}
