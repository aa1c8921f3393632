//! An agent loop any program can reuse: model turn → tool calls → gate →
//! feedback → next turn.
//!
//! The loop is small on purpose; what makes it safe is that every tool call
//! goes through [`Task::handle`], that the provider's real token usage is fed
//! to the task's meter, and that a [`Step::Fail`] ends the task at once with
//! its report instead of letting the model improvise.

use std::time::Duration;

use serde::Serialize;
#[cfg(feature = "openai")]
pub use toolgate_model::OpenAiCompatible;
pub use toolgate_model::{ChatModel, Message, ModelError, ScriptedModel, ToolCallRequest, Turn, Usage};

use crate::provider::Provider;
use crate::runtime::{Step, Task, ToolCall};
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

/// The whole run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run {
    /// Every call, in order.
    pub exchanges: Vec<Exchange>,
    /// How it ended.
    pub ending: Ending,
    /// Model turns taken.
    pub turns: usize,
    /// Input tokens the provider reported, summed over turns.
    pub input_tokens: u64,
    /// Output tokens the provider reported, summed over turns.
    pub output_tokens: u64,
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
/// fails the task, or a limit is reached. `observe` sees each exchange as it
/// happens (for progress output).
///
/// Tools are described to the model as `dialect`'s manifest of what the task
/// may call ([`Task::manifest`]): `Dialect::OpenAiStrict` for Structured
/// Outputs, where a model sends `null` for an absent optional argument (gate
/// reads it as absent). The dialect must be of the API the back end speaks
/// ([`ChatModel::provider`]; `OpenAiCompatible` takes `Dialect::OpenAi` and
/// `Dialect::OpenAiStrict`), or [`AgentError::Dialect`] is returned before
/// the first model call. Every turn's latency and usage go to
/// [`Task::record_turn`], so the model round trips a repair causes count in
/// the latency budget.
pub async fn run(
    task: &mut Task,
    model: &dyn ChatModel,
    dialect: Dialect,
    mut messages: Vec<Message>,
    limits: AgentLimits,
    observe: &mut (dyn FnMut(&Exchange) + Send),
) -> Result<Run, AgentError> {
    let speaks = model.provider();
    let fits = match (dialect.provider(), speaks) {
        (None, _) => false,
        (Some(wanted), Some(speaks)) => wanted == speaks,
        (Some(_), None) => true,
    };
    if !fits {
        return Err(AgentError::Dialect { dialect, speaks });
    }
    let tools = task.manifest(dialect)?;
    let mut exchanges = Vec::new();
    let (mut input_tokens, mut output_tokens) = (0, 0);
    for turn_no in 1..=limits.max_turns {
        let started = tokio::time::Instant::now();
        let turn = next_turn(model, &messages, &tools, limits).await?;
        if let Some(u) = &turn.usage {
            input_tokens += u.input_tokens;
            output_tokens += u.output_tokens;
        }
        let usage = turn.usage.as_ref().map(|u| (u.input_tokens, u.output_tokens));
        task.record_turn(started.elapsed(), usage).await;
        messages.push(Message::from_turn(&turn));
        if turn.tool_calls.is_empty() {
            return Ok(Run {
                exchanges,
                ending: Ending::Answered { text: turn.text },
                turns: turn_no,
                input_tokens,
                output_tokens,
            });
        }
        for request in turn.tool_calls {
            let call = ToolCall::new(request.id, request.name, request.arguments);
            let step = task.handle(call.clone()).await;
            messages.push(Message::ToolResult {
                call_id: call.id.clone(),
                content: step.model_text().to_owned(),
                is_error: step.is_error(),
            });
            let failed = step.is_fail();
            let exchange = Exchange {
                turn: turn_no,
                call,
                internal_retries: task.last_retries().to_vec(),
                step,
            };
            observe(&exchange);
            exchanges.push(exchange);
            if failed {
                return Ok(Run {
                    exchanges,
                    ending: Ending::Failed,
                    turns: turn_no,
                    input_tokens,
                    output_tokens,
                });
            }
        }
    }
    Ok(Run {
        exchanges,
        ending: Ending::TurnLimit,
        turns: limits.max_turns,
        input_tokens,
        output_tokens,
    })
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
