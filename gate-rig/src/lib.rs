//! A gate [`Task`] as rig tools: every call a rig agent makes goes through
//! gate's validation, policy, ledger and budgets, and what the model reads
//! is gate's (sanitized) text.
//!
//! ```no_run
//! # async fn demo(gate: toolgate_core::Gate, model: rig_core::DynModel<rig_core::operation::Completion>) -> Result<(), Box<dyn std::error::Error>> {
//! use toolgate_rig::GateTools;
//! use rig_agent::AgentBuilder;
//!
//! let tools = GateTools::new(gate.task("user-42").grant(["billing:charge"]))?;
//! let agent = tools.agent(AgentBuilder::new(model).preamble("You are the billing assistant."));
//! match agent.prompt("Charge Bob for INV-42.").max_turns(8).await {
//!     Ok(answer) => println!("{}", answer.output()),
//!     // gate failed the task: the run was cancelled with the text the model
//!     // would have seen, and the task holds the report for a person.
//!     Err(_) => println!("{:?}", tools.failure().await),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # How gate's decisions travel through rig
//!
//! - Each tool is registered with a handler of rig's own `Serve` contract,
//!   which receives the call's argument text as rig has it and hands it to
//!   [`Task::handle`] (rig has already parsed the provider's reply: an object
//!   wrapped in a string arrives unwrapped, and text that is no JSON object
//!   arrives through [`GateHook`] instead, as the model wrote it).
//! - A [`Step::Return`] is the tool's output; a definitive error (card
//!   declined), a [`Step::Reject`] and a [`Step::Retry`] are failed tool
//!   results whose model-visible text is gate's: rig renders them as tool
//!   results with the error flag set, and the run goes on. The error's code
//!   is `gate:` and the action (`gate:reject`, `gate:retry_with_correction`,
//!   `gate:return`), for a host's telemetry.
//! - A [`Step::Fail`] cancels the run (`PromptError::Cancelled`, its reason
//!   the text the model would have seen): the task is with a person, and
//!   the model must not improvise around it.
//! - rig resolves a call to an unknown tool, or one whose arguments are not
//!   a JSON object, before any tool runs. [`GateHook`] hands both to gate, so
//!   a hallucinated name is rejected with the real ones (and counts against
//!   the task's rejection cap) instead of failing the run, and malformed
//!   arguments get gate's hints. It also reports each model turn's latency
//!   and token usage to the task, which the repair budgets are settled
//!   against.
//!
//! # One task per `GateTools`
//!
//! A [`GateTools`] drives one gate task: every call of every run of the
//! agents built on it belongs to that task (its rejection cap, repairs,
//! intents and terminal flag). Build one per conversation from
//! `gate.task(user)`, or from `gate.task_with_id(user, id)` to resume a
//! stored task; agents are cheap to build.
//!
//! # Why a crate of its own
//!
//! rig-core and rig-agent are only compiled by users who ask for them (the
//! facade's `rig` feature): kept out of `gate-core`, they stay out of the
//! dependency graph, the compile and the minimum Rust version (rig needs
//! 1.95) of everyone else.
#![forbid(unsafe_code)]

mod hook;
mod tool;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rig_agent::Agent;
use rig_agent::agent::{AgentBuilder, NoToolConfig};
use rig_agent::tool::server::{ToolServer, ToolServerHandle};
use rig_agent::tool::{RegisteredTool, ToolSet};
use rig_core::completion::ToolDefinition;
use rig_core::message::ToolName;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};
use toolgate_core::runtime::Feedback;
use toolgate_core::{Dialect, FailureReport, ManifestError, Step, Task, ToolCall};

pub use hook::GateHook;

/// A gate task's tools, for a rig agent.
///
/// Cheap to clone: clones share the task. See the [crate](crate)
/// documentation for how each of gate's decisions reaches the model.
#[derive(Clone)]
pub struct GateTools {
    shared: Arc<Shared>,
}

struct Shared {
    /// Owned by the calls (each runs in a spawned task, so that a rig run
    /// cancelled mid-call still lets gate record the call's outcome).
    task: Arc<AsyncMutex<Task>>,
    definitions: Vec<ToolDefinition>,
    next_call: AtomicU64,
    calls: Mutex<Vec<HandledCall>>,
}

/// One call gate handled for the agent, and what it decided.
#[derive(Clone, Debug, PartialEq)]
pub struct HandledCall {
    /// The call as gate received it. rig does not hand a tool the provider's
    /// call id, so a call that reached a tool carries an id gate minted
    /// (`rig-call-N`); one resolved by [`GateHook`] carries the model's.
    pub call: ToolCall,
    /// Retries gate made on its own before `step` (a 503 retried after a
    /// backoff); the model never saw them.
    pub internal_retries: Vec<Feedback>,
    /// What gate decided; `step.model_text()` is what the model read.
    pub step: Step,
}

toolgate_error::opaque_error! {
    /// Why the tools could not be described to rig.
    pub struct RigToolsError(Box<RigToolsErrorImpl>);
    enum ErrorKind {
        /// The task's tools cannot be expressed in the chosen dialect (the
        /// cause, a [`ManifestError`], names the tool and the JSON path).
        Manifest => is_manifest,
        /// A tool has an empty name, which rig cannot register.
        EmptyName => is_empty_name,
    }
}

impl RigToolsError {
    fn manifest(e: ManifestError) -> Self {
        Self::new(
            ErrorKind::Manifest,
            "the task's tools cannot be described to rig",
            Some(Box::new(e)),
        )
    }

    fn empty_name() -> Self {
        Self::new(
            ErrorKind::EmptyName,
            "a tool with an empty name cannot be registered with rig",
            None,
        )
    }
}

impl GateTools {
    /// The tools `task` may call, with their schemas in gate's OpenAI
    /// dialect (references inlined, `oneOf` as `anyOf`, no `$schema`): plain
    /// JSON Schema that every rig provider accepts and converts further.
    pub fn new(task: Task) -> Result<Self, RigToolsError> {
        Self::with_dialect(task, Dialect::OpenAi)
    }

    /// The tools `task` may call, with their schemas in `dialect`: take the
    /// one of the provider behind the agent (`Dialect::AnthropicStrict` for
    /// Claude's strict tool use, `Dialect::GeminiJsonSchema` for Gemini),
    /// so a schema the provider cannot express is refused here, naming the
    /// tool and the path, not by the provider at the first request. rig's
    /// tool definitions carry no strict flag: a strict dialect shapes the
    /// schema, and rig's provider decides what else it sends. Only tools
    /// whose scopes are granted to the task are listed.
    pub fn with_dialect(task: Task, dialect: Dialect) -> Result<Self, RigToolsError> {
        // Renders the whole manifest once for the checks that span tools
        // (a provider's per-request limits), then each tool's schema.
        task.manifest(dialect).map_err(RigToolsError::manifest)?;
        let mut definitions = Vec::new();
        for spec in task.gate().toolbox().specs().filter(|spec| task.may_call(spec)) {
            let parameters = toolgate_core::manifest::parameters(spec, dialect).map_err(RigToolsError::manifest)?;
            let name = ToolName::new(spec.name()).map_err(|_| RigToolsError::empty_name())?;
            definitions.push(ToolDefinition {
                name,
                description: spec.description().to_owned(),
                parameters,
            });
        }
        Ok(GateTools {
            shared: Arc::new(Shared {
                task: Arc::new(AsyncMutex::new(task)),
                definitions,
                next_call: AtomicU64::new(1),
                calls: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The definitions the model is shown, one per tool the task may call.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.shared.definitions
    }

    /// The tools as a rig [`ToolSet`], for a custom loop (`ToolSet::execute`)
    /// or to merge with other rig tools. A [`Step::Fail`] is a failed result
    /// of kind `Cancelled` with the code `gate:fail`; the loop must stop.
    pub fn toolset(&self) -> ToolSet {
        let mut set = ToolSet::default();
        for definition in &self.shared.definitions {
            set.add_registered_tool(self.registered(definition));
        }
        set
    }

    /// The tools as a running rig tool registry, for
    /// `AgentBuilder::tool_server_handle`; add other rig tools to it with
    /// `ToolServerHandle::add_tool`.
    pub fn tool_server(&self) -> ToolServerHandle {
        self.shared
            .definitions
            .iter()
            .fold(ToolServer::new(), |server, definition| {
                server.registered_tool(self.registered(definition))
            })
            .run()
    }

    /// The hook that hands rig's invalid tool calls to gate and reports
    /// each model turn to the task. Add it to every agent built on these
    /// tools (`AgentBuilder::add_hook`); [`agent`](Self::agent) does.
    pub fn hook(&self) -> GateHook {
        GateHook::new(self.clone())
    }

    /// `builder` with these tools and their hook: the agent every call of
    /// which goes through gate.
    pub fn agent(&self, builder: AgentBuilder<NoToolConfig>) -> Agent {
        builder
            .tool_server_handle(self.tool_server())
            .add_hook(self.hook())
            .build()
    }

    /// Every call gate handled for the agents on these tools, in order.
    pub fn calls(&self) -> Vec<HandledCall> {
        self.shared.calls.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The task, to declare an intent (`task.intent("pay INV-42")`) before
    /// a prompt, or to read its state afterwards. Calls wait while it is held.
    pub async fn task(&self) -> OwnedMutexGuard<Task> {
        Arc::clone(&self.shared.task).lock_owned().await
    }

    /// The report of the failure that ended the task, while it is failed:
    /// what a person must check (intent key, ledger state, the last error).
    /// rig's cancelled run carries only the text the model would have seen.
    pub async fn failure(&self) -> Option<FailureReport> {
        self.task().await.failure().cloned()
    }

    fn registered(&self, definition: &ToolDefinition) -> RegisteredTool {
        RegisteredTool::from_handler(tool::GateTool::new(self.clone(), definition.clone()))
            .unwrap_or_else(|_| unreachable!("a GateTool's descriptor is always of the tool family"))
    }

    /// A call id for a call rig did not give one.
    fn mint_call_id(&self) -> String {
        format!("rig-call-{}", self.shared.next_call.fetch_add(1, Ordering::Relaxed))
    }

    /// Whether a call of `name` would run a tool (rather than be rejected
    /// before running): gate has the tool and the task may call it.
    async fn would_run(&self, name: &str) -> bool {
        let task = self.task().await;
        task.gate()
            .toolbox()
            .get(name)
            .is_some_and(|tool| task.may_call(tool.spec()))
    }

    /// Hands `call` to the task and records the step. The call runs in a
    /// task of its own: a rig run dropped mid-call (a sibling call failed the
    /// task, the caller gave up) must not cut gate off between running a
    /// tool and recording its outcome. `None` if that task panicked.
    async fn handle(&self, call: ToolCall) -> Option<Step> {
        let task = Arc::clone(&self.shared.task);
        let shared = Arc::clone(&self.shared);
        let running = tokio::spawn(async move {
            let mut task = task.lock_owned().await;
            let step = task.handle(call.clone()).await;
            let handled = HandledCall {
                call,
                internal_retries: task.last_retries().to_vec(),
                step: step.clone(),
            };
            shared.calls.lock().unwrap_or_else(|p| p.into_inner()).push(handled);
            step
        });
        running.await.ok()
    }
}
