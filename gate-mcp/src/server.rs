//! [`McpServer`], what an operator configures, and [`Connection`], the rmcp
//! handler each connection (stdio) or session (HTTP) gets.
//!
//! A gate task is the unit its guarantees hold over (rejection caps, repair
//! budgets, the terminal flag, derived intent keys), so the handler's one
//! piece of state is the task of its connection; everything else lives in
//! the [`Gate`] and its store, shared by every connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InputRequiredResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use toolgate_core::{Gate, Step, Task, ToolCall};

use crate::approve::{self, Answer, ClientApproval};
use crate::convert::{CallMeta, META_APPROVAL, META_TASK, TypedResults, dialect_for, result_of, tool_call, tools};

/// What a server tells every client about its tools, unless
/// [`McpServer::instructions`] says otherwise.
pub const DEFAULT_INSTRUCTIONS: &str = "Every tool call is checked and run by gate. A result with isError true tells you what to do next: a rejection names the argument to fix and how; a correction names what to try instead; a text that starts with STOP means the task is over and a person will follow up, so call no further tools. Never repeat a call that failed unchanged.";

/// How many users one connection may name with `gate/user` before further
/// names are refused: each keeps a task in memory for the connection's life.
pub const MAX_USERS_PER_CONNECTION: usize = 64;

/// Whether a call's `_meta` may name the user it runs for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MetaUser {
    /// `gate/user` names the user; without it, the server's user. Right for
    /// a server whose clients are trusted to say whom they act for (a local
    /// stdio server, or one behind an authenticating proxy that sets it).
    #[default]
    Accept,
    /// Every call runs as the server's user; a call naming another one is
    /// refused (`isError`) without running.
    Refuse,
}

/// A [`Gate`] served over MCP: the gate, the user its calls run for, and
/// what the server tells clients.
///
/// ```no_run
/// # async fn demo(gate: toolgate_core::Gate) -> Result<(), toolgate_mcp::ServeError> {
/// let server = toolgate_mcp::McpServer::new(gate, "billing-team")
///     .server_info("billing", "1.0.0")
///     .grant(["billing:charge"]);
/// server.serve_stdio().await
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct McpServer {
    pub(crate) gate: Gate,
    /// Which tools' results are typed, per MCP revision.
    typed: Arc<TypedResults>,
    user: String,
    granted: Vec<String>,
    info: Implementation,
    instructions: String,
    meta_user: MetaUser,
    client_approval: ClientApproval,
}

impl McpServer {
    /// Serves `gate`; calls run for `user` (whose repair-token window they
    /// spend) unless a call names another ([`MetaUser`]).
    pub fn new(gate: Gate, user: impl Into<String>) -> Self {
        McpServer {
            typed: Arc::new(TypedResults::of(&gate)),
            gate,
            user: user.into(),
            granted: Vec::new(),
            info: Implementation::new("gate", env!("CARGO_PKG_VERSION")),
            instructions: DEFAULT_INSTRUCTIONS.to_owned(),
            meta_user: MetaUser::default(),
            client_approval: ClientApproval::default(),
        }
    }

    /// The name and version clients see (`serverInfo`; default: `gate` and
    /// gate-mcp's version).
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// What clients are told about using the server (default:
    /// [`DEFAULT_INSTRUCTIONS`], how to read gate's error results).
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = text.into();
        self
    }

    /// Grants `scopes` to every task the server runs: a tool is listed and
    /// runs only when all its scopes are granted.
    pub fn grant<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.granted.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Whether `gate/user` is accepted (default [`MetaUser::Accept`]).
    pub fn meta_user(mut self, meta_user: MetaUser) -> Self {
        self.meta_user = meta_user;
        self
    }

    /// Whether a call that waits for approval is put to the client's user
    /// (default: asked through form elicitation, waiting 60 s, when the
    /// client declared it).
    pub fn client_approval(mut self, client_approval: ClientApproval) -> Self {
        self.client_approval = client_approval;
        self
    }

    /// The gate served.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The handler of one new connection, with a task of its own.
    pub fn connection(&self) -> Connection {
        Connection {
            server: Arc::new(self.clone()),
            tasks: Mutex::new(HashMap::new()),
        }
    }

    fn open_task(&self, user: &str, id: Option<&str>) -> Task {
        let task = match id {
            Some(id) => self.gate.task_with_id(user, id),
            None => self.gate.task(user),
        };
        task.grant(self.granted.iter().cloned())
    }
}

/// One connection's (or HTTP session's) rmcp handler: it answers
/// `tools/list` from the toolbox and runs every `tools/call` through
/// [`Task::handle`].
///
/// Calls that name no task (`gate/task`) share the connection's own task,
/// one per user, and are handled one at a time; a
/// call cancelled while it waits for its turn is not run. A call that has
/// started is never abandoned: its outcome is recorded, since dropping a
/// side-effecting call halfway would leave its outcome unknown. When the
/// task has failed, the next call reads it again from the store, so a
/// person's resolution (`gate reconcile`) takes effect without reconnecting.
pub struct Connection {
    server: Arc<McpServer>,
    /// The connection's task for each user it has run calls for.
    tasks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Task>>>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Why a call was answered without running.
fn refusal(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl Connection {
    fn connection_task(&self, user: &str) -> Option<Arc<tokio::sync::Mutex<Task>>> {
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = tasks.get(user) {
            return Some(task.clone());
        }
        if tasks.len() >= MAX_USERS_PER_CONNECTION {
            return None;
        }
        let task = Arc::new(tokio::sync::Mutex::new(self.server.open_task(user, None)));
        tasks.insert(user.to_owned(), task.clone());
        Some(task)
    }

    /// The task a call runs in: the one it names, the one the approval
    /// request it answers belongs to (a 2026-07-28 retry arrives on a new
    /// HTTP connection when it names no task), or the connection's.
    async fn task_for(
        &self,
        user: &str,
        named: Option<&str>,
        answering: Option<&str>,
    ) -> Result<Arc<tokio::sync::Mutex<Task>>, CallToolResult> {
        let server = &self.server;
        if let Some(id) = named {
            return Ok(Arc::new(tokio::sync::Mutex::new(server.open_task(user, Some(id)))));
        }
        let own = self.connection_task(user).ok_or_else(|| {
            refusal(format!(
                "this connection already runs calls for {MAX_USERS_PER_CONNECTION} users; name a task with `_meta.gate/task` or open a new connection. The call was not run"
            ))
        })?;
        let Some(approval) = answering else { return Ok(own) };
        // Only a request of the same user moves the call to its task; any
        // other id is answered as a fresh call (and the answer ignored).
        let request = match server.gate.approvals().get(approval).await {
            Ok(Some(request)) if request.user == user => request,
            _ => return Ok(own),
        };
        if own.lock().await.id() == request.task_id {
            return Ok(own);
        }
        Ok(Arc::new(tokio::sync::Mutex::new(
            server.open_task(user, Some(&request.task_id)),
        )))
    }

    /// Hands `call` to `task` once its turn comes: `None` when the call was
    /// cancelled while it waited.
    async fn handle(
        &self,
        task: &tokio::sync::Mutex<Task>,
        user: &str,
        intent: Option<&str>,
        call: ToolCall,
        context: &RequestContext<RoleServer>,
    ) -> Option<(Step, String)> {
        let mut task = tokio::select! {
            task = task.lock() => task,
            () = context.ct.cancelled() => return None,
        };
        if task.is_failed() {
            let id = task.id().to_owned();
            *task = self.server.open_task(user, Some(&id));
        }
        match intent {
            Some(label) => task.intent(label),
            None => task.clear_intent(),
        }
        let step = task.handle(call).await;
        Some((step, task.id().to_owned()))
    }

    async fn run(&self, params: CallToolRequestParams, context: RequestContext<RoleServer>) -> CallToolResponse {
        let server = &self.server;
        let meta = match CallMeta::read(&context.meta.0.0) {
            Ok(meta) => meta,
            Err(e) => return refusal(e.to_string()).into(),
        };
        let user = match (&meta.user, server.meta_user) {
            (Some(named), MetaUser::Refuse) if *named != server.user => {
                return refusal(format!(
                    "this server runs every call as `{}` and does not take `_meta.gate/user`; the call was not run",
                    server.user
                ))
                .into();
            }
            (Some(named), MetaUser::Accept) => named.as_str(),
            _ => server.user.as_str(),
        };
        let elicit = match server.client_approval {
            ClientApproval::Elicit { wait } => Some(wait),
            ClientApproval::OutOfBand => None,
        };
        let retried = elicit
            .and_then(|_| approve::retried_answer(params.request_state.as_deref(), params.input_responses.as_ref()));
        let task = match self
            .task_for(user, meta.task.as_deref(), retried.as_ref().map(|(id, _)| id.as_str()))
            .await
        {
            Ok(task) => task,
            Err(refused) => return refused.into(),
        };
        let call = tool_call(&context.id, params);
        let cancelled = "the call was cancelled before it ran; nothing was done";
        let intent = meta.intent.as_deref();
        let Some((mut step, task_id)) = self.handle(&task, user, intent, call.clone(), &context).await else {
            return refusal(cancelled.to_owned()).into();
        };
        if let (Step::AwaitingApproval(pending), Some(wait)) = (&step, elicit) {
            let answer = match retried {
                Some((id, answer)) if id == pending.approval_id => Some(answer),
                _ => match self.ask(&context, &pending.approval_id, wait).await {
                    Asked::Answered(answer) => Some(answer),
                    Asked::AnswerWithForm(form) => return form.into(),
                    Asked::CannotAsk => None,
                },
            };
            if let Some(decision) = answer.and_then(|a| a.decision(&pending.approval_id)) {
                // A decision taken first elsewhere wins the compare-and-set;
                // the call's next turn reads whichever stands.
                if let Err(e) = server.gate.approvals().decide(decision).await {
                    tracing::info!(target: "gate::mcp", approval = %pending.approval_id, error = %e, "the client's decision was not taken");
                }
                match self.handle(&task, user, intent, call, &context).await {
                    Some((decided, _)) => step = decided,
                    None => return refusal(cancelled.to_owned()).into(),
                }
            }
        }
        let dialect = dialect_for(context.protocol_version().as_ref());
        let mut result = result_of(&step, &server.gate, |tool| server.typed.contains(dialect, tool));
        if let Some(meta) = result.meta.as_mut() {
            meta.0.insert(META_TASK.to_owned(), Value::from(task_id));
            if let Step::AwaitingApproval(pending) = &step {
                meta.0
                    .insert(META_APPROVAL.to_owned(), Value::from(pending.approval_id.as_str()));
            }
        }
        result.into()
    }

    /// Puts request `id` to the client's user, as the session's protocol
    /// revision allows: an answer to the server's own request (up to
    /// 2025-11-25), a form for the client to answer by calling again
    /// (2026-07-28 on), or nothing when the client declared no form
    /// elicitation.
    async fn ask(&self, context: &RequestContext<RoleServer>, id: &str, wait: Duration) -> Asked {
        let can_ask = context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        if !can_ask {
            return Asked::CannotAsk;
        }
        let request = match self.server.gate.approvals().get(id).await {
            Ok(Some(request)) => request,
            Ok(None) => return Asked::CannotAsk,
            Err(e) => {
                tracing::warn!(target: "gate::mcp", approval = %id, error = %e, "the approval request could not be read to ask the client");
                return Asked::CannotAsk;
            }
        };
        let modern = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if modern {
            return Asked::AnswerWithForm(approve::input_required(&request));
        }
        let asked = context
            .peer
            .create_elicitation_with_timeout(approve::form(&request), Some(wait));
        tokio::select! {
            answered = asked => match answered {
                Ok(result) => Asked::Answered(approve::answer(&result)),
                Err(e) => {
                    tracing::info!(target: "gate::mcp", approval = %id, error = %e, "no answer from the client; the request stays pending");
                    Asked::Answered(Answer::Undecided)
                }
            },
            () = context.ct.cancelled() => Asked::Answered(Answer::Undecided),
        }
    }
}

/// What came of asking the client's user.
enum Asked {
    /// They answered (or did not, in time): [`Answer::Undecided`].
    Answered(Answer),
    /// The call answers with this form; the client calls again with the answer.
    AnswerWithForm(InputRequiredResult),
    /// The client cannot be asked: the pending text is the result.
    CannotAsk,
}

impl ServerHandler for Connection {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.server.info.clone())
            .with_instructions(self.server.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let dialect = dialect_for(context.protocol_version().as_ref());
        // A toolbox the negotiated revision cannot express is the server's
        // fault, not the call's: a protocol error, with the reason.
        let listed = tools(&self.server.gate, &self.server.granted, dialect)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(self.run(request, context).await)
    }
}
