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
//! # Approvals
//!
//! A call that waits for a person's approval (its tool is declared
//! `approval`, or the gate's approval policy picks it) is put to the
//! client's user when the client declared form elicitation
//! ([`ClientApproval::Elicit`], the default): "Approve `charge_card` with
//! {…}?", the arguments in full, the reason, accept or decline with an
//! optional reason. Up to 2025-11-25 the server sends `elicitation/create`
//! and waits for the answer (60 s by default, [`DEFAULT_ELICITATION_WAIT`]);
//! from 2026-07-28 on, which forbids requests to the client, the call
//! answers with an input-required result and the client calls again with
//! the answer, in the task that asked even where HTTP has no session.
//! Accepting runs the call once and answers with its result; declining
//! answers with the denial ("a person declined: REASON"); both are recorded
//! as decided by [`MCP_CLIENT`]. No answer in time, a dismissed form, or a
//! client that cannot be asked (or [`ClientApproval::OutOfBand`]) leave the
//! request pending: the result is gate's pending text (`isError: true`,
//! `_meta` [`META_APPROVAL`] naming the request), an operator decides out
//! of band (`gate approvals approve ID`), and the client's next identical
//! call in the same task gets the result.
//!
//! The client's answer only decides the request of the identical call it
//! was asked about: the form is answered for one request id, which must be
//! the one the call waits on; an answer for any other request is ignored.
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
#![cfg_attr(docsrs, feature(doc_cfg))]

mod approve;
mod convert;
mod error;
mod serve;
mod server;

pub use approve::{ClientApproval, DEFAULT_ELICITATION_WAIT, MCP_CLIENT};
pub use convert::{
    CallMeta, META_ACTION, META_APPROVAL, META_INTENT, META_TASK, META_USER, MetaError, call_tool_result, dialect_for,
    tool_call, tools,
};
pub use error::ServeError;
pub use serve::HttpService;
pub use server::{Connection, DEFAULT_INSTRUCTIONS, MAX_USERS_PER_CONNECTION, McpServer, MetaUser};

/// The rmcp version gate-mcp is built on, for its types in this API
/// (`CallToolResult`, `Tool`, transport configuration).
pub use rmcp;
