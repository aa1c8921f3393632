//! An agent loop any program can reuse: model turn → tool calls → gate →
//! feedback → next turn.
//!
//! The loop is small on purpose; what makes it safe is that every tool call
//! goes through [`Task::handle`], that the provider's real token usage is fed
//! to the task's meter, and that a [`Step::Fail`] ends the task at once with
//! its report instead of letting the model improvise.
//!
//! A call that waits for a person's approval stops the run after its turn's
//! other calls ([`RunOutcome::AwaitingApproval`]): nothing the model could do
//! next depends on a result it does not have. The stop hands back a
//! [`RunState`], which serializes, so the run can go on in another process
//! once the person decided ([`resume`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolgate_ledger::{ApprovalStatus, LedgerError};
#[cfg(feature = "openai")]
pub use toolgate_model::OpenAiCompatible;
pub use toolgate_model::{ChatModel, Message, ModelError, ScriptedModel, ToolCallRequest, Turn, Usage};

use crate::provider::Provider;
use crate::runtime::{PendingApproval, Step, Task, ToolCall};
use crate::{Dialect, ManifestError};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum Ending {
    /// The model answered without calling a tool.
    Answered {
        /// Its final text.
        text: Option<String>,
    },
    /// gate failed the task; the step carries the report.
    Failed,
    /// The turn limit was reached.
    TurnLimit,
    /// A call waits for a person's approval ([`RunOutcome::AwaitingApproval`]).
    AwaitingApproval,
}

/// One tool call of the run and what gate made of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exchange {
    /// The model turn it came from (1-based).
    pub turn: usize,
    /// The call as the model wrote it.
    pub call: ToolCall,
    /// Retries gate made on its own before `step` (nothing happened, or an
    /// idempotent tool's outcome was unknown); the model never saw them.
    pub internal_retries: Vec<crate::runtime::Feedback>,
    /// What gate decided; `step.model_text()` is what the model saw.
    pub step: Step,
}

/// The whole run (after [`resume`]: what the resumed part did, with the
/// turns and tokens of the whole run).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run {
    /// Every call, in order (after [`resume`]: since the resume).
    pub exchanges: Vec<Exchange>,
    /// How it ended.
    pub ending: Ending,
    /// Model turns taken, from the start of the run.
    pub turns: usize,
    /// Input tokens the provider reported, summed over turns.
    pub input_tokens: u64,
    /// Output tokens the provider reported, summed over turns.
    pub output_tokens: u64,
}

/// How [`run`] or [`resume`] stopped.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)] // returned once per run, never stored in bulk
pub enum RunOutcome {
    /// The run is over: the model answered, gate failed the task, or the
    /// turn limit was reached ([`Run::ending`]).
    Ended(Run),
    /// A call of the last turn waits for a person's approval; the turn's
    /// other calls were handled. Store `state` (it serializes), and
    /// [`resume`] it once the requests are decided, in this process or
    /// another.
    AwaitingApproval {
        /// The calls that wait, with the request each one made.
        pending: Vec<PendingApproval>,
        /// The conversation so far and the calls still to answer.
        state: RunState,
        /// What this part of the run did (`ending` is
        /// [`Ending::AwaitingApproval`]).
        run: Run,
    },
}

impl RunOutcome {
    /// What the run did, however it stopped.
    pub fn run(&self) -> &Run {
        match self {
            RunOutcome::Ended(run) | RunOutcome::AwaitingApproval { run, .. } => run,
        }
    }

    /// What the run did, however it stopped.
    pub fn into_run(self) -> Run {
        match self {
            RunOutcome::Ended(run) | RunOutcome::AwaitingApproval { run, .. } => run,
        }
    }
}

/// The version of [`RunState`] this gate writes and reads.
pub const RUN_STATE_VERSION: u32 = 1;

/// A run stopped for approvals, as it can be stored (serde, e.g. JSON) and
/// resumed in another process: the task it belongs to, the conversation up
/// to the model's last turn, the answer to each call of that turn (the
/// result, or the approval request it waits for), the dialect, and the
/// turns and tokens so far. Its fields are gate's to read: [`resume`] checks
/// the version and the task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    version: u32,
    task_id: String,
    user: String,
    dialect: Dialect,
    messages: Vec<Message>,
    answers: Vec<Answer>,
    turns: usize,
    input_tokens: u64,
    output_tokens: u64,
}

/// The answer one call of the stopped turn has, or waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
enum Answer {
    /// The call was handled; this is its tool-result message.
    Given {
        call_id: String,
        content: String,
        is_error: bool,
    },
    /// The call waits for the approval request its step names.
    Waiting { call: ToolCall, step: PendingApproval },
}

impl RunState {
    /// The version it was written in ([`RUN_STATE_VERSION`] for this gate).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The id of the task it belongs to: resume it with
    /// `gate.task_with_id(state.user(), state.task_id())`.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The user of the task.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The approval requests its calls wait for.
    pub fn waiting_for(&self) -> impl Iterator<Item = &str> {
        self.answers.iter().filter_map(|answer| match answer {
            Answer::Waiting { step, .. } => Some(step.approval_id.as_str()),
            Answer::Given { .. } => None,
        })
    }

    /// The conversation up to the model's last turn (the turn whose calls
    /// wait), without the answers to that turn's calls.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }
}

/// A [`RunState`] that cannot be resumed with the task it was given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RunStateError {
    /// Written by a gate whose state format this one does not read.
    #[error("the run state is of version {found}; this gate reads version {RUN_STATE_VERSION}")]
    Version {
        /// The state's version.
        found: u32,
    },
    /// The state belongs to another task (or the same id of another user).
    #[error(
        "the run state belongs to task `{state_task}` of user `{state_user}`, not to task `{task}` of user `{user}`"
    )]
    OtherTask {
        /// The state's task id.
        state_task: String,
        /// The state's user.
        state_user: String,
        /// The id of the task given to `resume`.
        task: String,
        /// Its user.
        user: String,
    },
}

/// Why a run could not continue (as opposed to gate failing the task).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The tools could not be described to the model.
    #[error("the toolbox cannot be expressed for the model: {0}")]
    Manifest(#[from] ManifestError),
    /// The model back end failed.
    #[error("the model failed: {0}")]
    Model(#[from] ModelError),
    /// A [`RunState`] that cannot be resumed with this task.
    #[error("cannot resume: {0}")]
    State(#[from] RunStateError),
    /// The store could not say whether a waiting call's request was decided.
    #[error("cannot resume: the store failed: {0}")]
    Store(#[from] LedgerError),
    /// The manifest dialect asked for is not a tool format the back end
    /// sends: an MCP dialect (a protocol's, not a model API's), or another
    /// provider's (a `Dialect::Anthropic` manifest for an OpenAI back end).
    #[error("{}", dialect_mismatch(*.dialect, *.speaks))]
    Dialect {
        /// The dialect the run was asked to use.
        dialect: Dialect,
        /// The API the back end speaks ([`ChatModel::provider`]).
        speaks: Option<Provider>,
    },
}

fn dialect_mismatch(dialect: Dialect, speaks: Option<Provider>) -> String {
    match speaks {
        Some(speaks) if dialect.provider().is_some() => {
            format!("the model back end takes `{speaks}` tool lists; a manifest in `{dialect}` cannot be sent to it")
        }
        _ => format!("`{dialect}` is an MCP tool format, not one a model API takes"),
    }
}

/// Limits of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentLimits {
    /// Model turns before the run stops.
    pub max_turns: usize,
    /// How often a rate-limited model turn is retried (after `Retry-After`).
    pub model_retries: u32,
    /// The longest `Retry-After` the loop waits for.
    pub max_model_wait: Duration,
}

impl Default for AgentLimits {
    /// 16 turns, 2 retries of a rate-limited turn, waiting at most 30 s.
    fn default() -> Self {
        AgentLimits {
            max_turns: 16,
            model_retries: 2,
            max_model_wait: Duration::from_secs(30),
        }
    }
}

/// Runs `task` with `model` from `messages` until the model answers, gate
/// fails the task, a limit is reached, or a call waits for a person's
/// approval. `observe` sees each exchange as it happens (for progress
/// output).
///
/// Tools are described to the model as `dialect`'s manifest of what the task
/// may call ([`Task::manifest`]): `Dialect::OpenAiStrict` for Structured
/// Outputs, where a model sends `null` for an absent optional argument (gate
/// reads it as absent). The dialect must be of the API the back end speaks
/// ([`ChatModel::provider`]; `OpenAiCompatible` takes `Dialect::OpenAi` and
/// `Dialect::OpenAiStrict`), or [`AgentError::Dialect`] is returned before
/// the first model call. Every turn's latency and usage go to
/// [`Task::record_turn`], so the model round trips a repair causes count in
/// the latency budget. The user's and the system messages are recorded
/// as trusted input for the information-flow guard ([`Task::user_message`]).
///
/// A turn in which a call gets [`Step::AwaitingApproval`] has its other
/// calls handled, then the run stops with [`RunOutcome::AwaitingApproval`]:
/// the waiting call gets no answer yet, so the model is not asked again
/// until the person decided. [`resume`] goes on from there.
pub async fn run(
    task: &mut Task,
    model: &dyn ChatModel,
    dialect: Dialect,
    messages: Vec<Message>,
    limits: AgentLimits,
    observe: &mut (dyn FnMut(&Exchange) + Send),
) -> Result<RunOutcome, AgentError> {
    check_dialect(model, dialect)?;
    let tools = task.manifest(dialect)?;
    let progress = Progress {
        dialect,
        turns: 0,
        input_tokens: 0,
        output_tokens: 0,
        exchanges: Vec::new(),
    };
    drive(task, model, &tools, messages, progress, limits, observe).await
}

/// Goes on with a run that stopped for approvals, once its requests are
/// decided: each waiting call is answered with its decided step (the
/// approved call runs now, once, under its request's intent key; a denied
/// or expired one gets its definitive error), the answers go to the model
/// in the order of the original calls, and the run continues as [`run`]
/// does, within the same turn limit.
///
/// `task` is the state's task (`gate.task_with_id(state.user(),
/// state.task_id())`, with its scopes granted), on any worker of the store.
/// While a request is still pending, `resume` returns
/// [`RunOutcome::AwaitingApproval`] again without a model turn, its state
/// holding the answers given so far. Resuming the same state twice runs
/// nothing twice: a call that already ran replays its stored result.
/// One run drives a task at a time: steps of the task's other requests are
/// left to whoever made them.
pub async fn resume(
    task: &mut Task,
    model: &dyn ChatModel,
    state: RunState,
    limits: AgentLimits,
    observe: &mut (dyn FnMut(&Exchange) + Send),
) -> Result<RunOutcome, AgentError> {
    if state.version != RUN_STATE_VERSION {
        return Err(RunStateError::Version { found: state.version }.into());
    }
    if state.task_id != task.id() || state.user != task.user() {
        return Err(RunStateError::OtherTask {
            state_task: state.task_id,
            state_user: state.user,
            task: task.id().to_owned(),
            user: task.user().to_owned(),
        }
        .into());
    }
    check_dialect(model, state.dialect)?;
    let tools = task.manifest(state.dialect)?;
    let RunState {
        dialect,
        mut messages,
        answers,
        turns,
        input_tokens,
        output_tokens,
        ..
    } = state;
    let mut progress = Progress {
        dialect,
        turns,
        input_tokens,
        output_tokens,
        exchanges: Vec::new(),
    };
    let mut given = Vec::with_capacity(answers.len());
    for answer in answers {
        let Answer::Waiting { call, step } = answer else {
            given.push(answer);
            continue;
        };
        if still_pending(task, &step.approval_id).await? {
            given.push(Answer::Waiting { call, step });
            continue;
        }
        // The identical call finds its decided request: an approved one runs
        // (or replays what it returned), a denied or expired one answers
        // with the person's refusal.
        if handle_call(task, call, &mut progress, &mut given, observe).await {
            return Ok(RunOutcome::Ended(progress.ended(Ending::Failed)));
        }
    }
    if let Some(stopped) = progress.stop_if_waiting(task, &mut messages, given) {
        return Ok(stopped);
    }
    drive(task, model, &tools, messages, progress, limits, observe).await
}

/// Refuses a dialect the back end does not send.
fn check_dialect(model: &dyn ChatModel, dialect: Dialect) -> Result<(), AgentError> {
    let speaks = model.provider();
    let fits = match (dialect.provider(), speaks) {
        (None, _) => false,
        (Some(wanted), Some(speaks)) => wanted == speaks,
        (Some(_), None) => true,
    };
    if fits {
        Ok(())
    } else {
        Err(AgentError::Dialect { dialect, speaks })
    }
}

/// Whether the request `approval_id` still waits for a decision.
async fn still_pending(task: &Task, approval_id: &str) -> Result<bool, LedgerError> {
    let store = task.gate().store();
    let request = store.load_approval(approval_id).await?;
    Ok(request.is_some_and(|request| request.status_at(store.now()) == ApprovalStatus::Pending))
}

/// The answer a step gives its call: its tool-result message, or the
/// request it waits for.
fn answer_of(call: &ToolCall, step: &Step) -> Answer {
    match step {
        Step::AwaitingApproval(waiting) => Answer::Waiting {
            call: call.clone(),
            step: waiting.clone(),
        },
        _ => Answer::Given {
            call_id: call.id.clone(),
            content: step.model_text().to_owned(),
            is_error: step.is_error(),
        },
    }
}

impl Answer {
    /// The tool-result message, once the call has its answer.
    fn into_message(self) -> Option<Message> {
        match self {
            Answer::Given {
                call_id,
                content,
                is_error,
            } => Some(Message::ToolResult {
                call_id,
                content,
                is_error,
            }),
            Answer::Waiting { .. } => None,
        }
    }
}

/// What a run carries from turn to turn, and from a stop to its resume.
struct Progress {
    dialect: Dialect,
    turns: usize,
    input_tokens: u64,
    output_tokens: u64,
    exchanges: Vec<Exchange>,
}

impl Progress {
    fn ended(self, ending: Ending) -> Run {
        Run {
            exchanges: self.exchanges,
            ending,
            turns: self.turns,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        }
    }

    /// The answers of a turn's calls: appended to the conversation when
    /// every call has one; otherwise the run stops here, waiting, and the
    /// state keeps them for [`resume`].
    fn stop_if_waiting(
        &mut self,
        task: &Task,
        messages: &mut Vec<Message>,
        answers: Vec<Answer>,
    ) -> Option<RunOutcome> {
        let pending: Vec<PendingApproval> = (answers.iter())
            .filter_map(|answer| match answer {
                Answer::Waiting { step, .. } => Some(step.clone()),
                Answer::Given { .. } => None,
            })
            .collect();
        if pending.is_empty() {
            messages.extend(answers.into_iter().filter_map(Answer::into_message));
            return None;
        }
        let state = RunState {
            version: RUN_STATE_VERSION,
            task_id: task.id().to_owned(),
            user: task.user().to_owned(),
            dialect: self.dialect,
            messages: std::mem::take(messages),
            answers,
            turns: self.turns,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        };
        let run = Run {
            exchanges: std::mem::take(&mut self.exchanges),
            ending: Ending::AwaitingApproval,
            turns: self.turns,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        };
        Some(RunOutcome::AwaitingApproval { pending, state, run })
    }
}

/// The loop: model turn, its calls through the gate, their answers, until
/// the run ends or a call waits.
async fn drive(
    task: &mut Task,
    model: &dyn ChatModel,
    tools: &serde_json::Value,
    mut messages: Vec<Message>,
    mut progress: Progress,
    limits: AgentLimits,
    observe: &mut (dyn FnMut(&Exchange) + Send),
) -> Result<RunOutcome, AgentError> {
    // The user's and the operator's own words are trusted input for the
    // guard: a value in them is not one a third party slipped in. A store
    // that cannot take them fails safe: the guard asks about more calls.
    for message in &messages {
        if let Message::User(text) | Message::System(text) = message
            && let Err(e) = task.user_message(text).await
        {
            tracing::warn!(target: "gate::store", error = %e, task = %task.id(), "a message of the user was not recorded for the guard");
        }
    }
    while progress.turns < limits.max_turns {
        let started = tokio::time::Instant::now();
        let turn = next_turn(model, &messages, tools, limits).await?;
        progress.turns += 1;
        if let Some(u) = &turn.usage {
            progress.input_tokens += u.input_tokens;
            progress.output_tokens += u.output_tokens;
        }
        let usage = turn.usage.as_ref().map(|u| (u.input_tokens, u.output_tokens));
        task.record_turn(started.elapsed(), usage).await;
        messages.push(Message::from_turn(&turn));
        if turn.tool_calls.is_empty() {
            return Ok(RunOutcome::Ended(progress.ended(Ending::Answered { text: turn.text })));
        }
        let mut answers = Vec::with_capacity(turn.tool_calls.len());
        for request in turn.tool_calls {
            let call = ToolCall::new(request.id, request.name, request.arguments);
            if handle_call(task, call, &mut progress, &mut answers, observe).await {
                return Ok(RunOutcome::Ended(progress.ended(Ending::Failed)));
            }
        }
        if let Some(stopped) = progress.stop_if_waiting(task, &mut messages, answers) {
            return Ok(stopped);
        }
    }
    Ok(RunOutcome::Ended(progress.ended(Ending::TurnLimit)))
}

/// Hands `call` to the task in the current turn: its answer goes to
/// `answers`, its exchange to `observe` and the run's record. True when gate
/// failed the task, which ends the run.
async fn handle_call(
    task: &mut Task,
    call: ToolCall,
    progress: &mut Progress,
    answers: &mut Vec<Answer>,
    observe: &mut (dyn FnMut(&Exchange) + Send),
) -> bool {
    let step = task.handle(call.clone()).await;
    answers.push(answer_of(&call, &step));
    let failed = step.is_fail();
    let exchange = Exchange {
        turn: progress.turns,
        call,
        internal_retries: task.last_retries().to_vec(),
        step,
    };
    observe(&exchange);
    progress.exchanges.push(exchange);
    failed
}

/// A model turn, waiting out rate limits the provider asks for.
async fn next_turn(
    model: &dyn ChatModel,
    messages: &[Message],
    tools: &serde_json::Value,
    limits: AgentLimits,
) -> Result<Turn, ModelError> {
    let mut retries = 0;
    loop {
        match model.next_turn(messages, tools).await {
            Err(e) if e.is_rate_limited() && retries < limits.model_retries => {
                let wait = e.retry_after().unwrap_or(Duration::from_secs(1));
                if wait > limits.max_model_wait {
                    return Err(e);
                }
                retries += 1;
                tokio::time::sleep(wait).await;
            }
            other => return other,
        }
    }
}
