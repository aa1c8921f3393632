//! Tools as the runtime sees them: a [`ToolSpec`] (what the model is told) and
//! a [`Tool`] (what runs).
//!
//! Macro tools and dynamic tools are the same thing here. `#[tool]` generates a
//! type implementing [`Tool`]; a tool known only at run time (from a config
//! file, an MCP server, a plugin) is a [`DynamicTool`] built from a name, a
//! description, a JSON Schema and effect flags. Both are validated the same way,
//! produce the same manifests and go through the same policy.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;

use crate::{Ctx, Effects, ToolError};

/// The future a tool call returns: the tool's output as JSON, or its failure.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>;

/// A call whose arguments are parsed into the tool's own types, ready to
/// run with its context (see [`Tool::prepare`]).
///
/// One allocation holds the parsed arguments and, once the call runs, the
/// tool's future in their place: every successful `#[tool]` call makes
/// one, where a boxed closure and the boxed future it returns made two.
pub struct PreparedCall<'a>(Pin<Box<dyn StagedCall + Send + 'a>>);

impl<'a> PreparedCall<'a> {
    /// A call that, when it runs, hands its context and `args` to `run`
    /// and awaits the future `run` returns.
    ///
    /// ```
    /// use toolgate_core::{Ctx, PreparedCall};
    /// use serde_json::json;
    ///
    /// // What a hand-written `Tool::prepare` returns for parsed arguments.
    /// let prepared = PreparedCall::new((2_u64, 3_u64), |ctx: Ctx, (a, b)| async move {
    ///     Ok(json!({"sum": a + b, "call": ctx.call_id()}))
    /// });
    /// let ctx = Ctx::new("task-1", "user-1", "call-1", "add", "");
    /// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let value = runtime.block_on(prepared.run(ctx)).unwrap();
    /// assert_eq!(value, json!({"sum": 5, "call": "call-1"}));
    /// ```
    pub fn new<A, F, Fut>(args: A, run: F) -> Self
    where
        A: Send + 'a,
        F: FnOnce(Ctx, A) -> Fut + Send + 'a,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'a,
    {
        PreparedCall(Box::pin(Staged::Parsed {
            parts: Some((args, run)),
        }))
    }

    /// Runs the call with `ctx`: `run` is called now, its future is
    /// polled by the one returned here.
    pub fn run(self, ctx: Ctx) -> impl Future<Output = Result<Value, ToolError>> + Send + Unpin + 'a {
        let mut staged = self.0;
        staged.as_mut().start(ctx);
        RunningCall(staged)
    }
}

impl std::fmt::Debug for PreparedCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall").finish_non_exhaustive()
    }
}

/// A [`PreparedCall`]'s one allocation, seen without its types.
trait StagedCall {
    /// Makes the tool's future of the parsed arguments, in their place.
    fn start(self: Pin<&mut Self>, ctx: Ctx);
    /// Polls the future [`start`](Self::start) made.
    fn poll_run(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Value, ToolError>>;
}

pin_project_lite::pin_project! {
    /// The arguments and the function to run on them, then its future.
    #[project = StagedProjection]
    enum Staged<A, F, Fut> {
        Parsed { parts: Option<(A, F)> },
        Running { #[pin] future: Fut },
    }
}

impl<A, F, Fut> StagedCall for Staged<A, F, Fut>
where
    F: FnOnce(Ctx, A) -> Fut,
    Fut: Future<Output = Result<Value, ToolError>>,
{
    fn start(mut self: Pin<&mut Self>, ctx: Ctx) {
        if let StagedProjection::Parsed { parts } = self.as_mut().project()
            && let Some((args, run)) = parts.take()
        {
            self.set(Staged::Running { future: run(ctx, args) });
        }
    }

    fn poll_run(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Value, ToolError>> {
        match self.project() {
            StagedProjection::Running { future } => future.poll(cx),
            // `PreparedCall::run` starts the call before it is polled; a
            // call whose start panicked is never polled.
            StagedProjection::Parsed { .. } => Poll::Ready(Err(ToolError::internal(NotStarted))),
        }
    }
}

/// The future [`PreparedCall::run`] returns.
struct RunningCall<'a>(Pin<Box<dyn StagedCall + Send + 'a>>);

impl Future for RunningCall<'_> {
    type Output = Result<Value, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.0.as_mut().poll_run(cx)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("a prepared call was polled before it started")]
struct NotStarted;

/// A callable tool.
///
/// Implement it by hand only for unusual cases; `#[tool]` and [`DynamicTool`]
/// cover the rest.
pub trait Tool: Send + Sync + 'static {
    /// What the model is told about this tool, and how gate treats its failures.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool on arguments that already passed validation against
    /// [`ToolSpec::input_schema`]. `arguments` is the JSON object text.
    fn call<'a>(&'a self, ctx: &'a Ctx, arguments: &'a str) -> ToolFuture<'a>;

    /// Validates and parses `arguments` in one pass, before anything is
    /// claimed for the call: the call ready to run, or why its arguments
    /// are wrong. A tool with typed arguments (every `#[tool]`) parses them
    /// with [`Validator::parse`](toolgate_validate::Validator::parse), which
    /// costs one serde parse on the valid path, where validating the text
    /// and then parsing it costs two. `None` (the default) leaves it to the
    /// runtime: it validates the text and calls [`call`](Self::call).
    fn prepare<'a>(
        &'a self,
        validator: &toolgate_validate::Validator,
        arguments: &str,
    ) -> Option<Result<PreparedCall<'a>, toolgate_validate::Rejection>> {
        let _ = (validator, arguments);
        None
    }
}

/// Everything about a tool except its code.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// Shared: every decision record of the tool holds this one string.
    name: Arc<str>,
    title: Option<String>,
    description: String,
    effects: Effects,
    scopes: Vec<String>,
    discovery: Option<String>,
    widen: Option<String>,
    input_schema: Value,
    output_schema: Option<Value>,
    key_args: Vec<String>,
    timeout: Option<Duration>,
    origin: String,
}

/// Everything `#[tool]` knows at compile time: the generated code fills it
/// by name (as `::gate::__private::MacroSpec`), and the tool's [`ToolSpec`]
/// is built from it and the argument schema on first use.
pub struct MacroSpec<'a> {
    /// Tool name.
    pub name: &'static str,
    /// Description (doc comment or `description = …`).
    pub description: &'static str,
    /// Optional title.
    pub title: Option<&'static str>,
    /// Declared effects.
    pub effects: Effects,
    /// Declared scopes.
    pub scopes: &'a [&'static str],
    /// Discovery tool.
    pub discovery: Option<&'static str>,
    /// Widen hint.
    pub widen: Option<&'static str>,
    /// JSON names of `#[arg(key)]` parameters.
    pub key_args: &'a [&'static str],
    /// `timeout = "…"`, in milliseconds (checked non-zero by the macro).
    pub timeout_ms: Option<u64>,
    /// `module::path::fn_name`.
    pub origin: &'static str,
}

/// Why a [`ToolSpec`] could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}`: {problem}")]
pub struct ToolSpecError {
    tool: String,
    problem: String,
}

impl ToolSpecError {
    fn new(tool: &str, problem: impl Into<String>) -> Self {
        ToolSpecError {
            tool: tool.to_owned(),
            problem: problem.into(),
        }
    }

    /// The name of the tool that was refused.
    pub fn tool(&self) -> &str {
        &self.tool
    }
}

/// True when `name` is accepted as a tool name by every provider gate targets:
/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` (OpenAI and Anthropic forbid dots, Gemini
/// wants a leading letter or underscore). `#[tool]` applies the same rule at
/// compile time.
pub fn is_portable_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl ToolSpec {
    /// A spec from its required parts.
    ///
    /// The schema must describe a JSON object (`"type": "object"`): every
    /// provider sends tool arguments as an object. Errors name the tool and the
    /// rule it broke.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        effects: Effects,
    ) -> Result<Self, ToolSpecError> {
        let name = name.into();
        if !is_portable_tool_name(&name) {
            return Err(ToolSpecError::new(
                &name,
                "the name must match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ to be accepted by every provider",
            ));
        }
        effects.check().map_err(|e| ToolSpecError::new(&name, e.to_string()))?;
        let Value::Object(root) = &input_schema else {
            return Err(ToolSpecError::new(&name, "the input schema must be a JSON object"));
        };
        if root.get("type").and_then(Value::as_str) != Some("object") {
            return Err(ToolSpecError::new(
                &name,
                "the input schema must have \"type\": \"object\" at its root (tool arguments are always an object)",
            ));
        }
        let origin = format!("dynamic tool `{name}`");
        Ok(ToolSpec {
            name: name.into(),
            title: None,
            description: description.into(),
            effects,
            scopes: Vec::new(),
            discovery: None,
            widen: None,
            input_schema,
            output_schema: None,
            key_args: Vec::new(),
            timeout: None,
            origin,
        })
    }

    /// The spec of a `#[tool]`, whose rules the macro checked at compile
    /// time (every rule [`ToolSpec::new`] would), with its argument schema.
    pub(crate) fn from_macro(spec: MacroSpec<'_>, input_schema: Value) -> Self {
        ToolSpec {
            name: spec.name.into(),
            title: spec.title.map(str::to_owned),
            description: spec.description.to_owned(),
            effects: spec.effects,
            scopes: spec.scopes.iter().map(|s| (*s).to_owned()).collect(),
            discovery: spec.discovery.map(str::to_owned),
            widen: spec.widen.map(str::to_owned),
            input_schema,
            output_schema: None,
            key_args: spec.key_args.iter().map(|s| (*s).to_owned()).collect(),
            timeout: spec.timeout_ms.map(Duration::from_millis),
            origin: format!("`{}`", spec.origin),
        }
    }

    /// The JSON Schema (2020-12) of what the tool returns, for MCP's
    /// `outputSchema`. `#[tool]` sets it when the return type (the `T` of
    /// `Result<T, E>`) implements `schemars::JsonSchema`; `None` leaves the
    /// result untyped (plain text for MCP clients).
    pub fn with_output_schema(mut self, schema: Option<Value>) -> Self {
        self.output_schema = schema;
        self
    }

    /// A human-readable title (MCP `title`).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// How long one call may run before gate cancels it and classifies it as
    /// [`ToolError::Timeout`]; without one the gate's default applies
    /// (`GateBuilder::tool_timeout`, 60 s). A zero timeout is refused.
    pub fn with_timeout(mut self, timeout: Duration) -> Result<Self, ToolSpecError> {
        if timeout.is_zero() {
            return Err(ToolSpecError::new(&self.name, "the timeout must be longer than zero"));
        }
        self.timeout = Some(timeout);
        Ok(self)
    }

    /// OAuth-style scopes a task must be granted (`Task::grant`) before the
    /// tool runs in it.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The tool the model should call to find valid inputs after a 403 or an
    /// unknown resource. It may not be the tool itself.
    pub fn with_discovery(mut self, tool: impl Into<String>) -> Result<Self, ToolSpecError> {
        let tool = tool.into();
        if *tool == *self.name {
            return Err(ToolSpecError::new(
                &self.name,
                "`discovery` names the tool itself; name the tool that lists valid inputs",
            ));
        }
        if !is_portable_tool_name(&tool) {
            return Err(ToolSpecError::new(
                &self.name,
                format!("`discovery` names `{tool}`, which is not a valid tool name"),
            ));
        }
        self.discovery = Some(tool);
        Ok(self)
    }

    /// The hint given to the model after an empty result ("search by the domain").
    pub fn with_widen(mut self, hint: impl Into<String>) -> Self {
        self.widen = Some(hint.into());
        self
    }

    /// The arguments that make up the business fingerprint of a call. Each must
    /// be a property of the input schema.
    pub fn with_key_args<I, S>(mut self, args: I) -> Result<Self, ToolSpecError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let args: Vec<String> = args.into_iter().map(Into::into).collect();
        let properties = self.input_schema.get("properties").and_then(Value::as_object);
        if let Some(missing) = args
            .iter()
            .find(|a| !properties.is_some_and(|p| p.contains_key(a.as_str())))
        {
            return Err(ToolSpecError::new(
                &self.name,
                format!("key argument `{missing}` is not a property of the input schema"),
            ));
        }
        self.key_args = args;
        Ok(self)
    }

    /// Where the tool was defined, used in error messages ("`crate::billing::charge`").
    pub fn with_origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = origin.into();
        self
    }

    /// The tool's name as the model calls it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name, shared rather than copied (a decision record's `tool`).
    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.name
    }

    /// The human-readable title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// What the tool does, as told to the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The declared side effects.
    pub fn effects(&self) -> Effects {
        self.effects
    }

    /// Declared scopes: every one must be granted to a task for the tool to run in it.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The discovery tool named in corrections, if any.
    pub fn discovery(&self) -> Option<&str> {
        self.discovery.as_deref()
    }

    /// The widen hint given after an empty result, if any.
    pub fn widen(&self) -> Option<&str> {
        self.widen.as_deref()
    }

    /// The full JSON Schema (2020-12) of the arguments. Validation always uses
    /// this schema; manifests are derived from it per provider.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema (2020-12) of the tool's result, when its type is
    /// known ([`with_output_schema`](Self::with_output_schema)).
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The arguments that form the business fingerprint (empty: all of them).
    pub fn key_args(&self) -> &[String] {
        &self.key_args
    }

    /// The tool's own timeout, if it declared one.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Where the tool was defined.
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

type Handler = dyn Fn(Ctx, Value) -> ToolFuture<'static> + Send + Sync;

/// A tool defined at run time: a spec and, optionally, a handler.
///
/// Without a handler the tool is declared only: it appears in manifests and is
/// validated, and calling it fails with an internal error (it is a
/// configuration mistake to run one).
#[derive(Clone)]
pub struct DynamicTool {
    spec: ToolSpec,
    handler: Option<Arc<Handler>>,
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTool")
            .field("spec", &self.spec)
            .field("has_handler", &self.handler.is_some())
            .finish()
    }
}

impl DynamicTool {
    /// A declared-only tool.
    pub fn new(spec: ToolSpec) -> Self {
        DynamicTool { spec, handler: None }
    }

    /// Adds the code that runs the tool. It receives the validated arguments.
    pub fn with_handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Ctx, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(move |ctx, args| Box::pin(handler(ctx, args))));
        self
    }
}

#[derive(Debug, thiserror::Error)]
#[error("tool `{0}` is declared without a handler and cannot run")]
struct NoHandler(String);

impl Tool for DynamicTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, ctx: &'a Ctx, arguments: &'a str) -> ToolFuture<'a> {
        let Some(handler) = &self.handler else {
            return Box::pin(std::future::ready(Err(ToolError::internal(NoHandler(
                self.spec.name.to_string(),
            )))));
        };
        match serde_json::from_str(arguments) {
            Ok(args) => handler(ctx.clone(), args),
            Err(e) => Box::pin(std::future::ready(Err(ToolError::internal(e)))),
        }
    }
}

/// Runs a tool call so that a panic inside it becomes [`ToolError::Internal`]
/// instead of unwinding through the agent loop: one buggy tool must not take the
/// process (and every other task in it) down.
pub(crate) async fn call_contained(tool: &dyn Tool, ctx: &Ctx, arguments: &str) -> Result<Value, ToolError> {
    let started = std::panic::catch_unwind(AssertUnwindSafe(|| tool.call(ctx, arguments)));
    match started {
        Ok(future) => CatchUnwind(future).await,
        Err(panic) => Err(panicked(panic)),
    }
}

/// What [`Tool::prepare`] answered, a panic in it (a custom `Deserialize`
/// that panics) contained as an internal error of the tool.
pub(crate) type Prepared<'a> = Result<Option<Result<PreparedCall<'a>, toolgate_validate::Rejection>>, ToolError>;

/// Calls [`Tool::prepare`] with panics contained.
pub(crate) fn prepare_contained<'a>(
    tool: &'a dyn Tool,
    validator: &toolgate_validate::Validator,
    arguments: &str,
) -> Prepared<'a> {
    std::panic::catch_unwind(AssertUnwindSafe(|| tool.prepare(validator, arguments))).map_err(panicked)
}

/// [`call_contained`] for a [`PreparedCall`].
pub(crate) async fn run_contained(prepared: PreparedCall<'_>, ctx: Ctx) -> Result<Value, ToolError> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| prepared.run(ctx))) {
        Ok(future) => CatchUnwind(future).await,
        Err(panic) => Err(panicked(panic)),
    }
}

/// A tool's future with a panic in its poll contained.
struct CatchUnwind<F>(F);

impl<F: Future<Output = Result<Value, ToolError>> + Unpin> Future for CatchUnwind<F> {
    type Output = Result<Value, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = Pin::new(&mut self.0);
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(poll) => poll,
            Err(panic) => Poll::Ready(Err(panicked(panic))),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the tool panicked: {0}")]
struct Panicked(String);

fn panicked(payload: Box<dyn std::any::Any + Send>) -> ToolError {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".to_owned());
    ToolError::internal(Panicked(message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str) -> Result<ToolSpec, ToolSpecError> {
        ToolSpec::new(
            name,
            "d",
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            Effects::new().read_only(),
        )
    }

    #[test]
    fn portable_names() {
        for ok in ["a", "_x", "lookup_customer", "get-invoice", &"a".repeat(64)] {
            assert!(is_portable_tool_name(ok), "{ok}");
        }
        for bad in ["", "1a", "-a", "a.b", "a b", "ä", &"a".repeat(65)] {
            assert!(!is_portable_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn spec_rules() {
        assert!(spec("ok").is_ok());
        assert!(spec("bad.name").unwrap_err().to_string().contains("bad.name"));
        let not_object = ToolSpec::new("t", "d", json!({"type": "string"}), Effects::new().read_only());
        assert!(not_object.unwrap_err().to_string().contains("\"type\": \"object\""));
        assert!(spec("t").unwrap().with_discovery("t").is_err());
        assert!(spec("t").unwrap().with_key_args(["a"]).is_ok());
        assert!(
            spec("t")
                .unwrap()
                .with_key_args(["zz"])
                .unwrap_err()
                .to_string()
                .contains("zz")
        );
    }

    #[tokio::test]
    async fn panics_become_internal_errors() {
        let tool = DynamicTool::new(spec("boom").unwrap()).with_handler(|_, _| async { panic!("kaboom") });
        let ctx = Ctx::new("t", "u", "c", "boom", "k");
        let err = call_contained(&tool, &ctx, "{}").await.unwrap_err();
        assert!(matches!(err, ToolError::Internal(_)));
        let source = std::error::Error::source(&err).unwrap().to_string();
        assert!(source.contains("kaboom"), "{source}");
    }

    #[tokio::test]
    async fn declared_only_tool_fails_internally() {
        let tool = DynamicTool::new(spec("decl").unwrap());
        let ctx = Ctx::new("t", "u", "c", "decl", "k");
        assert!(matches!(
            call_contained(&tool, &ctx, "{}").await,
            Err(ToolError::Internal(_))
        ));
    }

    #[tokio::test]
    async fn handler_gets_arguments() {
        let tool = DynamicTool::new(spec("echo").unwrap()).with_handler(|_, args| async move { Ok(args) });
        let ctx = Ctx::new("t", "u", "c", "echo", "k");
        assert_eq!(
            call_contained(&tool, &ctx, r#"{"a":"x"}"#).await.unwrap(),
            json!({"a": "x"})
        );
    }
}
