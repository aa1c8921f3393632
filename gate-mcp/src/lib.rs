//! gate behind the Model Context Protocol: an MCP server whose every tool
//! call goes through gate's runtime.
//!
//! An rmcp server hands a model's call straight to the tool; a gate server
//! validates it against the tool's schema, refuses unknown tools, claims a
//! side-effecting call in the intent ledger before it runs, decides every
//! failure from the tool's declared effects, and keeps the repair budgets.
//! What the model reads back is gate's text: a rejection, a correction or a
//! failure is a `CallToolResult` with `isError: true`, never a JSON-RPC
//! error, so the model can act on it.
//!
//! ```no_run
//! use toolgate_core::Gate;
//! # fn tools() -> toolgate_core::Toolbox { toolgate_core::Toolbox::new() }
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let gate = Gate::builder(tools()).store("sqlite:gate.db").build().await?;
//! let server = toolgate_mcp::McpServer::new(gate.clone(), "local-user");
//! server.serve_stdio().await?;          // or serve_http(listener, shutdown)
//! gate.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Tasks, users and intents
//!
//! Each connection (stdio) or HTTP session has one task per user: its
//! rejection cap, repair budgets and derived intent keys span the
//! connection. A request's `_meta` may say otherwise:
//!
//! - `gate/task`: the task the call belongs to, by name. The same name
//!   resumes the same task from the store on any connection, any worker,
//!   after a restart. Protocol revision 2026-07-28 has no HTTP sessions, so
//!   there a call that names no task is a task of its own; each result's
//!   `_meta` carries the `gate/task` it ran in, so a client can name it
//!   next time.
//! - `gate/user`: the user the call runs for (default: the server's), whose
//!   repair-token window it spends; refused with [`MetaUser::Refuse`].
//! - `gate/intent`: the intent the call serves (`"pay INV-42"`), for this
//!   call only. The intent key is minted from the task, the label and the
//!   tool, so a regenerated call with other arguments is the same intent.
//!
//! # Protocol revisions
//!
//! rmcp negotiates both eras: `server/discover` with per-request metadata
//! (2026-07-28) and `initialize` (2025-11-25 and before). `tools/list` is
//! rendered for the revision each request negotiated ([`dialect_for`]): a
//! typed result's `outputSchema` may be any schema from 2026-07-28 on, and
//! only an object before.
//!
//! # Cancellation and shutdown
//!
//! A call cancelled while it waits for its task is not run; a call that has
//! started runs to its end (bounded by the tool's timeout) and its outcome
//! is recorded, since abandoning a side effect halfway would leave its
//! outcome unknown. Call [`Gate::shutdown`](toolgate_core::Gate::shutdown) after
//! serving ends, to flush the decision log.
#![forbid(unsafe_code)]

mod convert;
mod error;
mod serve;
mod server;

pub use convert::{
    CallMeta, META_ACTION, META_INTENT, META_TASK, META_USER, MetaError, call_tool_result, dialect_for, tool_call,
    tools,
};
pub use error::ServeError;
pub use serve::HttpService;
pub use server::{Connection, DEFAULT_INSTRUCTIONS, MAX_USERS_PER_CONNECTION, McpServer, MetaUser};

/// The rmcp version gate-mcp is built on, for its types in this API
/// (`CallToolResult`, `Tool`, transport configuration).
pub use rmcp;
