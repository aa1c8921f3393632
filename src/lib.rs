//! gate turns plain Rust functions into LLM tools that are safe to hand to a
//! model. `#[tool]` derives the JSON Schema, the validator and the manifests
//! for OpenAI, Anthropic, Gemini and MCP from a function signature; the
//! runtime decides, for every failed call, whether to reject it with a message
//! that names the fix, retry it with a correction, or fail and reconcile,
//! from the side effects the tool declares.
//!
//! ```
//! use gate::{tool, toolbox, Dialect, ToolError};
//!
//! /// Look up a customer by email address.
//! #[tool(read_only, discovery = "list_customers")]
//! async fn lookup_customer(
//!     /// The customer's email address.
//!     email: String,
//!     /// Include the order history.
//!     #[arg(default)]
//!     include_history: bool,
//! ) -> Result<String, ToolError> {
//!     Ok(format!("customer {email} (history: {include_history})"))
//! }
//!
//! /// List every customer.
//! #[tool(read_only)]
//! fn list_customers() -> Vec<String> {
//!     vec!["a@example.com".into()]
//! }
//!
//! let tools = toolbox![lookup_customer, list_customers];
//! assert_eq!(tools.names(), ["lookup_customer", "list_customers"]);
//! let manifest = tools.manifest(Dialect::OpenAiStrict).unwrap();
//! assert_eq!(manifest[0]["function"]["parameters"]["required"][1], "include_history");
//! ```
//!
//! # Features
//!
//! | feature | what it adds | default |
//! |---|---|---|
//! | `sqlite` | the SQLite store, `sqlite:PATH`, the gate builder's default store (sqlx, bundled SQLite) | yes |
//! | `openai` | `agent::OpenAiCompatible`, the OpenAI-compatible Chat Completions client (reqwest, rustls) | yes |
//! | `postgres` | the PostgreSQL store, `postgres://…` (sqlx) | no |
//! | `mcp` | `gate::mcp`, the MCP server (rmcp) | no |
//! | `rig` | `gate::rig`, a gate task as rig tools; Rust 1.95 | no |
//! | `otel` | `GateBuilder::meter`: decisions and repair tokens as OpenTelemetry metrics (the `opentelemetry` API crate) | no |
//!
//! With `default-features = false`, everything else stays: `#[tool]`,
//! toolboxes, manifests, validation, the policy, the sanitizer, the agent
//! loop over any [`agent::ChatModel`] and the runtime on the `memory:` store,
//! with nothing from sqlx, reqwest or rustls. A store whose feature is off is
//! refused by [`GateBuilder::build`] with an error naming the
//! feature ([`GateError::is_invalid_store_url`]); the default store
//! is `sqlite:gate.db` in every build, so a build without `sqlite` names its
//! store.
//!
//! # What is where
//!
//! Every item has one path. The root holds what most programs name: the
//! macros and what a tool is made of ([`Ctx`], [`ToolError`], [`Effects`],
//! [`Tool`], [`ToolSpec`], [`Toolbox`]), the runtime's entry points
//! ([`Gate`], [`GateBuilder`], [`Task`], [`Budget`]), a call and the step
//! that answers it ([`ToolCall`], [`Step`], [`Feedback`], [`ToolOutput`],
//! [`FailureReport`], [`FailureReason`], [`FailureClass`], [`Ambiguity`],
//! [`Action`]) and the manifests' [`Dialect`]. The rest is in a module per
//! area, which never repeats a root item:
//!
//! | module | what it holds |
//! |---|---|
//! | [`runtime`] | the policy's decision table ([`runtime::decide`]) and its inputs, the classifier, decision sinks, the builder's defaults and bounds |
//! | [`manifest`] | rendering one tool or a list in a dialect, importing other manifests |
//! | [`provider`] | providers' tool-call and tool-result shapes |
//! | [`agent`] | the agent loop and its model back ends |
//! | [`budget`] | the budgets' parts: the retry budget, backoff, token windows, the cost model |
//! | [`ledger`] | the stores: opening one, the ledger protocol, task state, the decision log |
//! | [`sanitize`] | the sanitizer |
//! | [`validate`] | the argument validator |
//! | `mcp`, `rig` | the MCP server and rig tools (features of the same names) |
#![forbid(unsafe_code)]

pub use gate_core::manifest::{Dialect, ManifestError};
pub use gate_core::runtime::{
    Action, Ambiguity, Budget, FailureClass, FailureReason, FailureReport, Feedback, Gate, GateBuilder, GateError,
    Step, Task, ToolCall, ToolOutput,
};
pub use gate_core::{
    BoxError, Ctx, DynamicTool, Effects, EffectsError, PreparedCall, Tool, ToolError, ToolFuture, ToolSpec,
    ToolSpecError, Toolbox, ToolboxError, is_portable_tool_name,
};
pub use gate_core::{agent, provider, sanitize, validate};

/// The runtime's parts beside its entry points (which are at the root):
/// the policy ([`decide`](runtime::decide) and what it reads), the
/// classifier of a tool's errors, where decision records go, and the
/// builder's defaults and bounds.
pub mod runtime {
    pub use gate_core::runtime::{
        BudgetVerdict, DEFAULT_RESULT_CAP, DEFAULT_STORE, DEFAULT_STORE_PATIENCE, DEFAULT_TOOL_TIMEOUT, Decision,
        DecisionSink, History, JsonLinesSink, MAX_STORE_PATIENCE, MAX_TOOL_TIMEOUT, Situation, classify, decide,
        ledger_state,
    };
}

/// Tool definitions in each provider's dialect, one tool at a time or a
/// list, and other manifests imported as tools ([`Dialect`] and
/// [`ManifestError`] are at the root).
pub mod manifest {
    pub use gate_core::manifest::{
        ImportError, UnknownDialect, import_each, import_tools, output_schema, parameters, render, tool_definition,
    };
}

/// The budgets' parts ([`Budget`] itself is at the root): gate's retry
/// budget, backoff, the task's attempt and latency budgets, the users'
/// token windows, and the cost model.
pub mod budget {
    pub use gate_core::budget::{
        AttemptBudget, AttemptsExhausted, Backoff, BudgetError, CHARS_PER_TOKEN, DEFAULT_ADDED_LATENCY,
        DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP, DEFAULT_MAX_REPAIRS, DEFAULT_REPAIR_TOKENS, DEFAULT_TOKEN_WINDOW,
        Grant, Jitter, LatencyBudget, LatencyRefusal, MAX_ADDED_LATENCY, MAX_ATTEMPTS, MAX_BACKOFF_CAP,
        MAX_MIN_PER_SEC, MAX_REPAIR_TOKENS, Pushback, Refusal, RepairPlan, Reservation, RetryBudget, TaskBudget,
        TaskBudgetState, TokenLimit, TokenWindow, TokensExhausted, WINDOW_BUCKETS, cost, estimate_tokens, repair_cost,
    };
}

/// The stores (memory, SQLite, PostgreSQL) and what they keep: intent keys
/// and the ledger protocol, task state and token windows, the decision log
/// ([`Action`], [`FailureClass`], [`FailureReason`] and [`FailureReport`],
/// which the log records, are at the root).
pub mod ledger {
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub use gate_core::ledger::SCHEMA_VERSION;
    pub use gate_core::ledger::{
        BoxFuture, Claim, ClaimRequest, ClassActionCount, Clock, DEFAULT_BUSY_TIMEOUT, DEFAULT_MEMORY_DECISIONS,
        DEFAULT_RETENTION, DecisionId, DecisionLog, DecisionQuery, DecisionRecord, DecisionReport, Finish, FollowUps,
        Lease, Ledger, LedgerConfig, LedgerError, LedgerRecord, MAX_KEY_LEN, MIN_DISTINCT_KEY_CHARS, MIN_KEY_LEN,
        ManualClock, Outcome, ParseDecisionIdError, Reconcile, Reconciliation, Resolution, ResolveRequest, State,
        Storage, StoreKind, SweepReport, SystemClock, TaskRecord, TaskState, TaskStore, TaskSummary, TaskTransaction,
        Timestamp, canonical_fingerprint, canonical_json, derived_intent_key, fingerprint, key_args_fingerprint,
        minted_intent_key, new_owner_token, open, open_with, validate_key,
    };
}

#[doc(hidden)]
pub use gate_core::__private;

/// Derives for argument types (`Deserialize`) and result types
/// (`Serialize`), so a tool crate needs no serde dependency of its own:
/// add `#[serde(crate = "gate::serde")]` beside the derive and the derived
/// code reaches serde through gate.
///
/// ```
/// use gate::{Deserialize, JsonSchema, Serialize};
///
/// /// One line of an order.
/// #[derive(Deserialize, Serialize, JsonSchema)]
/// #[serde(crate = "gate::serde")]
/// #[schemars(crate = "gate::schemars")]
/// struct Line {
///     /// What was sold.
///     sku: String,
///     /// How many.
///     quantity: u32,
/// }
/// ```
pub use serde::{Deserialize, Serialize};

/// The derive for argument and result schemas; with
/// `#[schemars(crate = "gate::schemars")]` a tool crate needs no schemars
/// dependency of its own (see [`Deserialize`]).
pub use schemars::JsonSchema;

/// The serde gate is built on: the path of `#[serde(crate = "gate::serde")]`.
pub use serde;

/// The schemars gate is built on: the path of
/// `#[schemars(crate = "gate::schemars")]`.
pub use schemars;

/// The serde_json gate is built on (tool results are `serde_json::Value`s).
pub use serde_json;

/// The MCP server: a [`Gate`] served over stdio or streamable HTTP, every
/// `tools/call` through the runtime (feature `mcp`).
#[cfg(feature = "mcp")]
pub use gate_mcp as mcp;

/// Turns a function into an LLM tool.
///
/// ```text
/// #[tool(read_only, discovery = "list_customers", widen = "search by the email's domain")]
/// async fn lookup_customer(/// The email. email: String) -> Result<Customer, ToolError>
/// ```
///
/// Keys (one of `read_only`, `idempotent`, `writes`, `destructive` is
/// required; `external` and `keyed` modify it):
/// - `read_only`: changes nothing (implies `idempotent`; conflicts with
///   `writes`, `destructive` and `keyed`);
/// - `idempotent`: repeating a call has no further effect;
/// - `writes`: changes state additively, not idempotent (creates a ticket,
///   sends a message); conflicts with `idempotent`;
/// - `destructive`: may delete or overwrite (implies `writes`, which may
///   also be given);
/// - `external`: reaches systems outside the operator's control;
/// - `keyed`: forwards `ctx.intent_key()` to a downstream that deduplicates
///   by it, so the same call may be resent after an unknown outcome; needs a
///   `#[ctx] ctx: &Ctx` parameter;
/// - `timeout = "10s"`: how long one call may run (a whole number of `ms`,
///   `s` or `m`, above zero, at most 24 hours; default: the gate's);
/// - `name = "..."` (default: the function name), `description = "..."`
///   (default: the doc comment; one of them is required), `title = "..."`,
///   `discovery = "tool"` (named in corrections after a 403 or unknown
///   resource), `widen = "hint"` (given after an empty result),
///   `scopes = ["crm:read"]`.
///
/// Parameters: any `Deserialize + JsonSchema` type; doc comments become
/// property descriptions; `#[arg(default)]` makes a parameter optional with its
/// `Default`; `#[arg(key)]` marks the arguments that form the business
/// fingerprint of a call; `#[arg(rename = "...")]` changes the JSON name;
/// `#[ctx] ctx: &Ctx` receives the call context. Return `T` or
/// `Result<T, E>` with `T: Serialize` and `E: Into<ToolError>`; sync or async.
/// When `T` also implements `JsonSchema`, its schema is the tool's result
/// schema ([`ToolSpec::output_schema`], MCP's `outputSchema`).
///
/// The macro generates hidden items named `__gate_tool_<fn>` and
/// `__gate_args_<fn>` next to the function, which `toolbox!` refers to.
pub use gate_macros::tool;

/// Makes the `#[tool]` methods of an inherent impl block into tools sharing
/// `self`, and adds `fn into_toolbox(self) -> Toolbox` to the type.
///
/// Methods take `&self`; the toolbox keeps `self` in an `Arc`.
///
/// Why not `#[toolbox]`: Rust has one namespace for attribute and
/// function-like macros (and `macro_rules!` attributes are unstable), so an
/// attribute `#[toolbox]` and `toolbox![...]` cannot both exist; the
/// attribute is `#[tools]`.
pub use gate_macros::tools;

/// Collects `#[tool]` functions into a [`Toolbox`], in the order given:
/// `toolbox![lookup_customer, billing::charge_card]`.
///
/// Two tools with the same name are a compile error naming both.
pub use gate_macros::toolbox;

/// A gate task as rig tools: every call a rig agent makes goes through
/// gate's validation, policy, ledger and budgets (the `rig` feature).
#[cfg(feature = "rig")]
pub use gate_rig as rig;
