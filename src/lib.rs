//! gate turns plain Rust functions into LLM tools that are safe to hand to a
//! model. `#[tool]` derives the JSON Schema, the validator and the manifests
//! for OpenAI, Anthropic, Gemini and MCP from a function signature; the
//! runtime decides, for every failed call, whether to reject it with a message
//! that names the fix, retry it with a correction, or fail and reconcile,
//! from the side effects the tool declares, within budgets, and writes every
//! decision to a durable log. Every text the model reads passes a sanitizer.
//!
//! This page is the guide: declaring tools, a call through the runtime, the
//! decision table and what gate guarantees. Each module's page has the rest.
//!
//! # Declaring tools
//!
//! A tool is a function with `#[tool(...)]`. Its side effects are declared,
//! never guessed: one of `read_only`, `idempotent`, `writes` (additive, not
//! idempotent) or `destructive` is required, and `external` (reaches the open
//! world) and `keyed` (forwards [`Ctx::intent_key`] to a downstream that
//! deduplicates by it) modify it. Doc comments become the tool's description
//! and its arguments' descriptions; `#[arg(default)]` makes an argument
//! optional; `#[arg(key)]` marks the arguments that identify the business
//! action (the intent). [`toolbox!`] collects tools, and a [`Toolbox`] renders
//! its manifest in any provider's [`Dialect`].
//!
//! ```
//! use toolgate::{Ctx, Dialect, ToolError, tool, toolbox};
//!
//! /// Look up a customer by email address.
//! #[tool(read_only, widen = "search by the email's domain with search_customers")]
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
//! /// Charge a customer's card.
//! #[tool(writes, external, keyed, timeout = "10s", scopes = ["billing:charge"])]
//! async fn charge_card(
//!     #[ctx] ctx: &Ctx,
//!     #[arg(key)] customer_id: String,
//!     #[arg(key)] amount_cents: u64,
//! ) -> Result<String, ToolError> {
//!     // The payment provider deduplicates by this key.
//!     Ok(format!("charged {customer_id} {amount_cents} under {}", ctx.intent_key()))
//! }
//!
//! let tools = toolbox![lookup_customer, charge_card];
//! assert_eq!(tools.names(), ["lookup_customer", "charge_card"]);
//!
//! let charge = tools.get("charge_card").unwrap().spec();
//! assert!(charge.effects().is_writes() && charge.effects().is_keyed());
//! assert!(!charge.effects().is_idempotent());
//! assert_eq!(charge.scopes(), ["billing:charge"]);
//!
//! // OpenAI's strict mode: every property required, the optional one
//! // widened to admit null.
//! let openai = tools.manifest(Dialect::OpenAiStrict).unwrap();
//! let lookup = &openai[0]["function"];
//! assert_eq!(lookup["description"], "Look up a customer by email address.");
//! assert_eq!(lookup["parameters"]["required"][1], "include_history");
//! assert_eq!(
//!     lookup["parameters"]["properties"]["email"]["description"],
//!     "The customer's email address."
//! );
//!
//! // MCP: the annotations follow the declared effects.
//! let mcp = tools.manifest(Dialect::Mcp).unwrap();
//! assert_eq!(mcp[0]["annotations"]["readOnlyHint"], true);
//! assert_eq!(mcp[1]["annotations"]["readOnlyHint"], false);
//! assert_eq!(mcp[1]["annotations"]["idempotentHint"], false);
//! ```
//!
//! Tools that share state are methods: `#[tools] impl Crm { #[tool(read_only)]
//! async fn lookup(&self, ...) }` and `crm.into_toolbox()` ([`tools`]). Tools
//! known only at run time are [`DynamicTool`]s, validated and manifested the
//! same way. A tool crate needs no dependency but gate: argument and result
//! types derive through [`Deserialize`], [`Serialize`] and [`JsonSchema`].
//!
//! # A call through the runtime
//!
//! A [`Gate`] holds the toolbox, the store and the budgets; a [`Task`] is one
//! conversation of one user, whose history (rejections given, repairs spent,
//! a failure) the store keeps. [`Task::handle`] takes a model's call as it
//! came and answers with a [`Step`]: what the model reads next, and what gate
//! decided. The `memory:` store needs no file or server; `sqlite:PATH` and
//! `postgres://...` keep the same state durably.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU32, Ordering};
//!
//! use toolgate::ledger::State;
//! use toolgate::{FailureReason, Gate, Step, ToolCall, ToolError, tools};
//!
//! /// How often each tool ran.
//! #[derive(Default)]
//! struct Counts {
//!     lookups: AtomicU32,
//!     refunds: AtomicU32,
//!     charges: AtomicU32,
//! }
//!
//! /// A CRM and a payment provider whose answers the example scripts.
//! struct Backend(Arc<Counts>);
//!
//! #[tools]
//! impl Backend {
//!     /// Look up a customer by email address.
//!     #[tool(read_only, widen = "search by the email's domain with search_customers")]
//!     async fn lookup_customer(&self, email: String) -> Result<String, ToolError> {
//!         self.0.lookups.fetch_add(1, Ordering::SeqCst);
//!         if email == "bob@example.com" { Ok("cus_bob".into()) } else { Err(ToolError::Empty) }
//!     }
//!
//!     /// Refund a charge (refunding it twice changes nothing).
//!     #[tool(idempotent)]
//!     async fn refund(&self, charge_id: String) -> Result<String, ToolError> {
//!         // The first attempt times out; gate sends the same call again.
//!         if self.0.refunds.fetch_add(1, Ordering::SeqCst) == 0 { Err(ToolError::Timeout) } else { Ok(format!("refunded {charge_id}")) }
//!     }
//!
//!     /// Charge a customer's card.
//!     #[tool(writes, external)]
//!     async fn charge_card(&self, #[arg(key)] customer_id: String, #[arg(key)] amount_cents: u64) -> Result<String, ToolError> {
//!         // The card was charged, but the answer never came.
//!         let _ = (customer_id, amount_cents);
//!         self.0.charges.fetch_add(1, Ordering::SeqCst);
//!         Err(ToolError::Timeout)
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let counts = Arc::new(Counts::default());
//! let toolbox = Backend(Arc::clone(&counts)).into_toolbox();
//! let gate = Gate::builder(toolbox).store("memory:").build().await.unwrap();
//!
//! // A wrong type: rejected with the path, what was expected and what came;
//! // the tool never runs.
//! let mut task = gate.task("user-42");
//! let step = task.handle(ToolCall::new("c1", "lookup_customer", r#"{"email": 12345}"#)).await;
//! assert!(matches!(step, Step::Reject(_)));
//! assert_eq!(
//!     step.model_text(),
//!     "`lookup_customer` was called with invalid arguments (1 problem):\n\
//!      - /email: expected string, got integer 12345\n\
//!      Call `lookup_customer` again with these fields corrected, sending the complete arguments object."
//! );
//! assert_eq!(counts.lookups.load(Ordering::SeqCst), 0);
//!
//! // An empty result of a read-only tool: one retry, with a correction.
//! let mut task = gate.task("user-42");
//! let step = task.handle(ToolCall::new("c2", "lookup_customer", r#"{"email": "bob@example.org"}"#)).await;
//! assert!(matches!(step, Step::Retry(_)));
//! assert!(step.model_text().contains("search by the email's domain with search_customers"));
//!
//! // An idempotent tool that timed out is sent again by gate, without the model.
//! let mut task = gate.task("user-42");
//! let step = task.handle(ToolCall::new("c3", "refund", r#"{"charge_id": "ch_1"}"#)).await;
//! assert!(matches!(step, Step::Return(_)));
//! assert_eq!(step.model_text(), "refunded ch_1");
//! assert_eq!(counts.refunds.load(Ordering::SeqCst), 2);
//!
//! // A write that timed out may have happened: never sent again. The task
//! // fails with a report, and the intent waits in the ledger for a person.
//! let mut task = gate.task("user-42");
//! task.intent("pay INV-42");
//! let step = task
//!     .handle(ToolCall::new("c4", "charge_card", r#"{"customer_id": "cus_bob", "amount_cents": 4500}"#))
//!     .await;
//! let Step::Fail(report) = &step else { panic!("{step:?}") };
//! assert_eq!(report.reason, FailureReason::OutcomeUnknown);
//! assert_eq!(report.ledger_state, Some(State::OutcomeUnknown));
//! assert_eq!(report.intent_key, task.intent_key_for("charge_card"));
//! assert!(step.model_text().contains("Do not call it again"));
//! let queued = gate.store().list_unresolved(10).await.unwrap();
//! assert_eq!(queued.len(), 1);
//!
//! // The task is terminal until a person resolves the intent or reopens it.
//! let step = task
//!     .handle(ToolCall::new("c5", "charge_card", r#"{"customer_id": "cus_bob", "amount_cents": 4500}"#))
//!     .await;
//! let Step::Fail(report) = &step else { panic!("{step:?}") };
//! assert_eq!(report.reason, FailureReason::TaskFailed);
//! assert_eq!(counts.charges.load(Ordering::SeqCst), 1);
//! gate.shutdown().await;
//! # }
//! ```
//!
//! A person resolves what is queued with `gate reconcile resolve KEY
//! --outcome succeeded|failed|not-executed` (or [`ledger::Reconcile`]); the
//! task then goes on, and the same intent is replayed from the ledger, not
//! run again.
//!
//! # The decision table
//!
//! Every failed call is classified ([`FailureClass`]) and decided by
//! [`runtime::decide`], a pure function of the tool's declared effects, the
//! class, the task's history and the budgets' verdicts. The model never
//! decides; a budget can refuse a repair but never create one.
//!
//! | failure | examples | `read_only` or `idempotent` | `writes` or `destructive`, `keyed` | `writes` or `destructive` |
//! |---|---|---|---|---|
//! | structural | unknown tool, bad JSON, wrong type, missing field, scope not granted | [`Step::Reject`] naming path, expected and got | Reject | Reject |
//! | ambiguous | 403 without a body, not found, empty result | [`Step::Retry`] with a correction (the `discovery` tool, the `widen` hint) | [`Step::Fail`] | Fail |
//! | ambiguous, unreadable | a response that cannot be read | [`Step::Return`] the failure to the model | Fail | Fail |
//! | transient | 429, 503, 408, connection lost before sending | resent by gate after a backoff | resent | resent |
//! | outcome unknown | timeout, 502, 504, connection lost after sending | resent by gate with the same intent key | resent with the same key | **Fail and reconcile** |
//! | definitive | card declined, 403 with a reason, other 4xx | Return the error to the model | Return | Return |
//! | internal | panic, 500 | Fail (the cause is logged, never shown) | Fail | Fail |
//!
//! Beside the table: a rejection already given since the task's last
//! successful call, or one past the cap (2 per task by default), fails the
//! task; a call equal to one that already failed is refused without running;
//! every repair must fit the task's repair and latency budgets and the
//! user's token window ([`Budget`]); a failed task runs nothing more until a
//! person reopens it.
//!
//! # What gate guarantees
//!
//! Each promise is held by a test in the repository:
//!
//! - **Invalid arguments never reach a tool**, and every violation is named in
//!   one message (`tests/runtime.rs`,
//!   `a_wrong_type_is_rejected_with_the_path_and_fixed_in_one_round_trip`).
//! - **A side effect whose outcome is unknown is never run again by gate**
//!   unless the tool is idempotent or keyed; it waits for a person
//!   (`tests/edges.rs`,
//!   `a_writes_tool_is_never_resent_after_an_unknown_outcome_and_says_so_to_mcp`).
//! - **A finished intent is replayed, not rerun** (`tests/runtime.rs`,
//!   `a_finished_intent_is_replayed_not_rerun`).
//! - **Exactly one execution per intent across processes**: 64 tasks in 4
//!   processes racing on one key run it once (`gate-ledger/tests/concurrency.rs`),
//!   and a worker killed at random points 200 times never runs an intent
//!   twice (`gate-ledger/tests/crash.rs`).
//! - **Durable across restarts**: the rejection cap, never-twice, the
//!   refusal of unchanged resends and a failed task's terminal state survive
//!   a new gate over the same store (`tests/durable_tasks.rs`).
//! - **One token window per user across workers**: 4 processes on PostgreSQL
//!   are granted exactly the repairs the window holds
//!   (`tests/gate-load/tests/many_workers.rs`).
//! - **Store faults lose nothing**: with every worker connection terminated
//!   every 40 ms, each of 200 charges runs once (`tests/gate-load/tests/many_workers.rs`).
//! - **What the model reads is sanitized**: secrets, internal addresses and
//!   stack traces are removed from error texts (`tests/runtime.rs`,
//!   `error_texts_are_sanitized_before_the_model_sees_them`).
//! - **The decision table is the code**: all 5,200 combinations of class,
//!   effects, budget state and history are checked against a literal copy of
//!   it (`gate-core/src/runtime/policy.rs`).
//!
//! # Features
//!
//! | feature | what it adds | default |
//! |---|---|---|
//! | `sqlite` | the SQLite store, `sqlite:PATH`, the gate builder's default store (sqlx, bundled SQLite) | yes |
//! | `openai` | `agent::OpenAiCompatible`, the OpenAI-compatible Chat Completions client (reqwest, rustls) | yes |
//! | `postgres` | the PostgreSQL store, `postgres://…` (sqlx) | no |
//! | `mcp` | `toolgate::mcp`, the MCP server (rmcp) | no |
//! | `rig` | `toolgate::rig`, a gate task as rig tools; Rust 1.95 | no |
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
//! [`Action`], [`PendingApproval`]), approvals ([`ApprovalPolicy`],
//! [`ApprovalQuestion`], [`ApprovalInbox`]) and the manifests' [`Dialect`].
//! The rest is in a module per
//! area, which never repeats a root item:
//!
//! | module | what it holds |
//! |---|---|
//! | [`runtime`] | the policy's decision table ([`runtime::decide`]) and its inputs, the classifier, decision sinks, the builder's defaults and bounds |
//! | [`manifest`] | rendering one tool or a list in a dialect, importing other manifests |
//! | [`provider`] | providers' tool-call and tool-result shapes |
//! | [`agent`] | the agent loop and its model back ends |
//! | [`guard`] | the information-flow guard: its policies and its decision table ([`guard::guard`]) |
//! | [`budget`] | the budgets' parts: the retry budget, backoff, token windows, the cost model |
//! | [`ledger`] | the stores: opening one, the ledger protocol, task state, the decision log, approval requests |
//! | [`sanitize`] | the sanitizer |
//! | [`validate`] | the argument validator |
//! | `mcp`, `rig` | the MCP server and rig tools (features of the same names) |
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use toolgate_core::manifest::{Dialect, ManifestError};
pub use toolgate_core::runtime::{
    Action, Ambiguity, ApprovalInbox, ApprovalPolicy, ApprovalQuestion, Budget, FailureClass, FailureReason,
    FailureReport, Feedback, Gate, GateBuilder, GateError, PendingApproval, Step, Task, ToolCall, ToolOutput,
};
pub use toolgate_core::{
    BoxError, Ctx, DynamicTool, Effects, EffectsError, PreparedCall, Principal, Tool, ToolError, ToolFuture, ToolSpec,
    ToolSpecError, Toolbox, ToolboxError, is_portable_tool_name,
};
pub use toolgate_core::{agent, guard, provider, sanitize, validate};

/// A tool's queries on PostgreSQL run for the call's principal, so
/// row-level-security policies hold whatever the model asks (feature
/// `postgres`).
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use toolgate_core::postgres;

/// The runtime's parts beside its entry points (which are at the root):
/// the policy ([`decide`](runtime::decide) and what it reads), the
/// classifier of a tool's errors, where decision records go, and the
/// builder's defaults and bounds.
pub mod runtime {
    pub use toolgate_core::runtime::{
        BudgetVerdict, DEFAULT_APPROVAL_EXPIRY, DEFAULT_RESULT_CAP, DEFAULT_STORE, DEFAULT_STORE_PATIENCE,
        DEFAULT_TOOL_TIMEOUT, Decision, DecisionSink, History, JsonLinesSink, MAX_APPROVAL_EXPIRY, MAX_STORE_PATIENCE,
        MAX_TOOL_TIMEOUT, Situation, classify, decide, ledger_state,
    };
}

/// Tool definitions in each provider's dialect, one tool at a time or a
/// list, and other manifests imported as tools ([`Dialect`] and
/// [`ManifestError`] are at the root).
pub mod manifest {
    pub use toolgate_core::manifest::{
        EFFECTS_META, ImportError, UnknownDialect, import_each, import_tools, output_schema, parameters, render,
        tool_definition,
    };
}

/// The budgets' parts ([`Budget`] itself is at the root): gate's retry
/// budget, backoff, the task's attempt and latency budgets, the users'
/// token windows, and the cost model.
pub mod budget {
    pub use toolgate_core::budget::{
        AttemptBudget, AttemptsExhausted, Backoff, BudgetError, CHARS_PER_TOKEN, DEFAULT_ADDED_LATENCY,
        DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP, DEFAULT_MAX_REPAIRS, DEFAULT_PENDING_APPROVALS,
        DEFAULT_REPAIR_TOKENS, DEFAULT_TOKEN_WINDOW, Grant, Jitter, LatencyBudget, LatencyRefusal, MAX_ADDED_LATENCY,
        MAX_ATTEMPTS, MAX_BACKOFF_CAP, MAX_MIN_PER_SEC, MAX_REPAIR_TOKENS, Pushback, Refusal, RepairPlan, Reservation,
        RetryBudget, TaskBudget, TaskBudgetState, TokenLimit, TokenWindow, TokensExhausted, WINDOW_BUCKETS, cost,
        estimate_tokens, repair_cost,
    };
}

/// The stores (memory, SQLite, PostgreSQL) and what they keep: intent keys
/// and the ledger protocol, task state and token windows, the decision log
/// ([`Action`], [`FailureClass`], [`FailureReason`] and [`FailureReport`],
/// which the log records, are at the root).
pub mod ledger {
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub use toolgate_core::ledger::SCHEMA_VERSION;
    pub use toolgate_core::ledger::{
        ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalReport, ApprovalStatus, Approvals, BoxFuture, Claim,
        ClaimRequest, ClassActionCount, Clock, DEFAULT_BUSY_TIMEOUT, DEFAULT_MEMORY_DECISIONS, DEFAULT_RETENTION,
        DecisionId, DecisionLog, DecisionQuery, DecisionRecord, DecisionReport, Finish, FlowMark, FlowState, FollowUps,
        Lease, Ledger, LedgerConfig, LedgerError, LedgerRecord, MAX_FLOW_MARKS, MAX_FLOW_SOURCES, MAX_KEY_LEN,
        MAX_USER_PHRASES, MIN_DISTINCT_KEY_CHARS, MIN_KEY_LEN, ManualClock, OpenApproval, Outcome,
        ParseDecisionIdError, Reconcile, Reconciliation, Resolution, ResolveRequest, State, Storage, StoreKind,
        SweepReport, SystemClock, TaskRecord, TaskState, TaskStore, TaskSummary, TaskTransaction, Timestamp, Verdict,
        canonical_fingerprint, canonical_json, derived_intent_key, fingerprint, key_args_fingerprint,
        minted_intent_key, new_approval_id, new_owner_token, open, open_with, seen, validate_key,
    };
}

#[doc(hidden)]
pub use toolgate_core::__private;

/// Derives for argument types (`Deserialize`) and result types
/// (`Serialize`), so a tool crate needs no serde dependency of its own:
/// add `#[serde(crate = "toolgate::serde")]` beside the derive and the derived
/// code reaches serde through gate.
///
/// ```
/// use toolgate::{Deserialize, JsonSchema, Serialize};
///
/// /// One line of an order.
/// #[derive(Deserialize, Serialize, JsonSchema)]
/// #[serde(crate = "toolgate::serde")]
/// #[schemars(crate = "toolgate::schemars")]
/// struct Line {
///     /// What was sold.
///     sku: String,
///     /// How many.
///     quantity: u32,
/// }
/// ```
pub use serde::{Deserialize, Serialize};

/// The derive for argument and result schemas; with
/// `#[schemars(crate = "toolgate::schemars")]` a tool crate needs no schemars
/// dependency of its own (see [`Deserialize`]).
pub use schemars::JsonSchema;

/// The serde gate is built on: the path of `#[serde(crate = "toolgate::serde")]`.
pub use serde;

/// The schemars gate is built on: the path of
/// `#[schemars(crate = "toolgate::schemars")]`.
pub use schemars;

/// The serde_json gate is built on (tool results are `serde_json::Value`s).
pub use serde_json;

/// The MCP server: a [`Gate`] served over stdio or streamable HTTP, every
/// `tools/call` through the runtime (feature `mcp`).
#[cfg(feature = "mcp")]
pub use toolgate_mcp as mcp;

/// Turns a function into an LLM tool.
///
/// ```text
/// #[tool(read_only, discovery = "list_customers", widen = "search by the email's domain")]
/// async fn lookup_customer(/// The email. email: String) -> Result<Customer, ToolError>
/// ```
///
/// Keys (one of `read_only`, `idempotent`, `writes`, `destructive` is
/// required; `external`, `keyed`, `approval`, `private`, `untrusted` and
/// `trusted` modify it):
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
/// - `approval`: every call waits for a person's approval before it runs,
///   and runs once after they agree (see [`ApprovalInbox`]);
/// - `private`: the results hold the user's private data (a CRM record, an
///   inbox, a balance);
/// - `untrusted`: the results hold text third parties wrote (emails
///   received, web pages, shared files, reviews); conflicts with `trusted`;
/// - `trusted`: only on an `external` `read_only` tool, whose results are
///   untrusted without it (other tools' results are trusted already);
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
///
/// The generated code names this crate as the using crate's Cargo.toml
/// does, so a renamed dependency works
/// (`agent_tools = { package = "toolgate", version = "…" }`, then
/// `#[agent_tools::tool(read_only)]`). A crate that re-exports toolgate for
/// its users, who then do not depend on toolgate themselves, tells the
/// macro where it is with `crate = "path"`, as with serde's derives:
/// `#[tool(read_only, crate = "my_sdk::toolgate")]`, and
/// `#[tools(crate = "my_sdk::toolgate")]` on an impl block.
pub use toolgate_macros::tool;

/// Makes the `#[tool]` methods of an inherent impl block into tools sharing
/// `self`, and adds `fn into_toolbox(self) -> Toolbox` to the type.
///
/// Methods take `&self`; the toolbox keeps `self` in an `Arc`.
///
/// Why not `#[toolbox]`: Rust has one namespace for attribute and
/// function-like macros (and `macro_rules!` attributes are unstable), so an
/// attribute `#[toolbox]` and `toolbox![...]` cannot both exist; the
/// attribute is `#[tools]`.
pub use toolgate_macros::tools;

/// Collects `#[tool]` functions into a [`Toolbox`], in the order given:
/// `toolbox![lookup_customer, billing::charge_card]`.
///
/// Two tools with the same name are a compile error naming both.
#[macro_export]
macro_rules! toolbox {
    // `$crate` names this crate whatever the caller's Cargo.toml calls it.
    ($($tools:tt)*) => { $crate::__toolbox!($crate; $($tools)*) };
}

/// The proc macro behind [`toolbox!`], which passes it this crate's path.
#[doc(hidden)]
pub use toolgate_macros::toolbox as __toolbox;

/// A gate task as rig tools: every call a rig agent makes goes through
/// gate's validation, policy, ledger and budgets (the `rig` feature).
#[cfg(feature = "rig")]
pub use toolgate_rig as rig;
