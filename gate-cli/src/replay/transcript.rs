//! Transcripts as they are logged, read into one shape: conversations (one
//! task each) of model turns and the tool calls each turn made, with the
//! results the tools gave.
//!
//! Three formats are read:
//!
//! - **gate's own JSON lines** (`{"call": …}`, `{"usage": …}`, `{"task": …}`,
//!   `{"user_message": …}`), errors labelled with their `kind` or,
//!   unlabelled, read from their text;
//! - **OpenAI Chat**: a `messages` array (or a request body holding one), the
//!   assistant's `tool_calls` answered by `role: tool` messages, the user's
//!   `role: user` messages;
//! - **Anthropic Messages**: a `messages` array (or a request body, whose
//!   `system` counts into the context), `tool_use` blocks answered by
//!   `tool_result` blocks (`is_error` honoured), the user's text in
//!   `role: user` messages (a string, or its `text` blocks).
//!
//! A provider file is one conversation as a JSON document, or one per line
//! (JSON lines). A model turn's tokens are its `usage` when the log kept it
//! on the assistant message (`prompt_tokens`/`completion_tokens` or
//! `input_tokens`/`output_tokens`); otherwise they are estimated the way gate
//! estimates context (four characters a token): everything before the turn
//! read, the turn's own text and calls written.

use serde_json::{Map, Value};
use toolgate::ToolCall;
use toolgate::budget::estimate_tokens;
use toolgate::provider::{self, Provider};

use super::classify::{self, Reading, Recorded};
use crate::UsageError;

/// A transcript's format, as `--format` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Decide from the content: gate's lines have `call`, `usage` or `task`;
    /// a conversation with `role: tool` messages or `tool_calls` is OpenAI's,
    /// one with `tool_use` or `tool_result` blocks Anthropic's.
    Auto,
    /// gate's own JSON lines.
    Gate,
    /// OpenAI Chat Completions messages.
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// One task's worth of transcript.
#[derive(Default)]
pub(crate) struct Conversation {
    /// The task id and user a gate transcript named (`{"task", "user"}`).
    pub(crate) task: Option<(String, String)>,
    /// What happened, in order.
    pub(crate) events: Vec<Event>,
}

/// Something the transcript shows.
pub(crate) enum Event {
    /// A model turn and the tokens it took.
    Turn {
        /// Tokens the model read.
        input_tokens: u64,
        /// Tokens the model wrote.
        output_tokens: u64,
    },
    /// A tool call and what the tool answered.
    Call(Box<LoggedCall>),
    /// What the user wrote: trusted input for the information-flow guard.
    User(String),
}

/// A tool call of the transcript with its result.
pub(crate) struct LoggedCall {
    /// The call as the model made it.
    pub(crate) call: ToolCall,
    /// What the tool answered, as the replayed tool will.
    pub(crate) outcome: Result<Value, Recorded>,
    /// How the answer was read.
    pub(crate) reading: Reading,
}

/// The conversations of `text` in `format`.
pub(crate) fn read(text: &str, format: Format) -> Result<Vec<Conversation>, UsageError> {
    let documents = documents(text)?;
    let format = if format == Format::Auto {
        detect(&documents)
    } else {
        format
    };
    if format == Format::Gate {
        return gate_lines(&documents);
    }
    documents
        .iter()
        .map(|(line, document)| {
            conversation(document, format == Format::Anthropic).map_err(|e| match line {
                Some(line) => UsageError(format!("transcript line {line}: {e}")),
                None => UsageError(format!("transcript: {e}")),
            })
        })
        .collect()
}

/// The file as one JSON document (no line number), or one per non-empty line.
fn documents(text: &str) -> Result<Vec<(Option<usize>, Value)>, UsageError> {
    if let Ok(document) = serde_json::from_str::<Value>(text) {
        return Ok(vec![(None, document)]);
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line)
                .map(|v| (Some(n + 1), v))
                .map_err(|e| UsageError(format!("transcript line {}: not JSON: {e}", n + 1)))
        })
        .collect()
}

fn is_gate_line(value: &Value) -> bool {
    ["call", "usage", "task", "user_message"]
        .iter()
        .any(|k| value.get(k).is_some())
}

fn detect(documents: &[(Option<usize>, Value)]) -> Format {
    if documents.first().is_some_and(|(_, d)| is_gate_line(d)) {
        return Format::Gate;
    }
    let anthropic = documents.iter().any(|(_, d)| {
        messages_of(d).is_some_and(|messages| {
            messages.iter().any(|m| {
                m.get("content").and_then(Value::as_array).is_some_and(|blocks| {
                    blocks
                        .iter()
                        .any(|b| matches!(b.get("type").and_then(Value::as_str), Some("tool_use" | "tool_result")))
                })
            })
        })
    });
    if anthropic { Format::Anthropic } else { Format::Openai }
}

fn messages_of(document: &Value) -> Option<&Vec<Value>> {
    match document {
        Value::Array(messages) => Some(messages),
        Value::Object(body) => body.get("messages").and_then(Value::as_array),
        _ => None,
    }
}

/// gate's own format. A conversation starts at each `task` line; events
/// before the first one form a task of their own, and only if there are any.
fn gate_lines(documents: &[(Option<usize>, Value)]) -> Result<Vec<Conversation>, UsageError> {
    let mut conversations: Vec<Conversation> = Vec::new();
    for (line, event) in documents {
        let at = line.unwrap_or(1);
        let bad = |what: String| UsageError(format!("transcript line {at}: {what}"));
        if let Some(id) = event.get("task") {
            let id = id.as_str().ok_or_else(|| bad("`task` must be a string".into()))?;
            let user = event.get("user").and_then(Value::as_str).unwrap_or("replay");
            conversations.push(Conversation {
                task: Some((id.to_owned(), user.to_owned())),
                events: Vec::new(),
            });
            continue;
        }
        let event = if let Some(usage) = event.get("usage") {
            let get = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
            Event::Turn {
                input_tokens: get("input_tokens"),
                output_tokens: get("output_tokens"),
            }
        } else if let Some(text) = event.get("user_message") {
            let text = text
                .as_str()
                .ok_or_else(|| bad("`user_message` must be a string".into()))?;
            Event::User(text.to_owned())
        } else if let Some(call) = event.get("call") {
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("line-{at}"), str::to_owned);
            let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
            let call = match call.get("arguments") {
                Some(Value::String(text)) => ToolCall::new(id, name, text.as_str()),
                Some(arguments) => ToolCall::from_json(id, name, arguments),
                None => ToolCall::new(id, name, "{}"),
            };
            let (reading, outcome) = match (event.get("result"), event.get("error")) {
                (_, Some(error)) => gate_error(error).map_err(bad)?,
                (Some(result), None) => (Reading::Success, Ok(result.clone())),
                (None, None) => (Reading::Missing, Ok(Value::Null)),
            };
            Event::Call(Box::new(LoggedCall { call, outcome, reading }))
        } else {
            return Err(bad("expected \"call\", \"usage\", \"user_message\" or \"task\"".into()));
        };
        match conversations.last_mut() {
            Some(current) => current.events.push(event),
            None => conversations.push(Conversation {
                task: None,
                events: vec![event],
            }),
        }
    }
    Ok(conversations)
}

/// A gate transcript's error: labelled with `kind`, or a text to read.
fn gate_error(error: &Value) -> Result<(Reading, Result<Value, Recorded>), String> {
    match error {
        Value::Object(fields) => match fields.get("kind").and_then(Value::as_str) {
            Some(kind) => classify::labelled(fields, kind).map(|e| (Reading::Labelled, Err(e))),
            None => match fields.get("message").and_then(Value::as_str) {
                Some(message) => Ok(classify::read(message, true)),
                None => Err("an `error` needs a `kind` or a `message`".into()),
            },
        },
        Value::String(text) => Ok(classify::read(text, true)),
        _ => Err("`error` must be an object or a text".into()),
    }
}

/// Builds one conversation of a provider transcript.
struct Builder {
    events: Vec<Event>,
    /// Estimated tokens of everything so far.
    context: u64,
}

impl Builder {
    fn read(&mut self, text: &str) {
        self.context = self.context.saturating_add(estimate_tokens(text));
    }

    fn user(&mut self, text: String) {
        self.read(&text);
        if !text.is_empty() {
            self.events.push(Event::User(text));
        }
    }

    fn turn(&mut self, message: &Map<String, Value>, text: &str, calls: Vec<ToolCall>) {
        let written = calls.iter().fold(estimate_tokens(text), |sum, c| {
            sum.saturating_add(estimate_tokens(&c.name))
                .saturating_add(estimate_tokens(&c.arguments))
        });
        let (input_tokens, output_tokens) = usage(message).unwrap_or((self.context, written));
        self.context = self.context.saturating_add(written);
        self.events.push(Event::Turn {
            input_tokens,
            output_tokens,
        });
        for call in calls {
            self.events.push(Event::Call(Box::new(LoggedCall {
                call,
                outcome: Ok(Value::Null),
                reading: Reading::Missing,
            })));
        }
    }

    fn result(&mut self, call_id: &str, text: &str, flagged: bool) -> Result<(), String> {
        self.read(text);
        let unanswered = self.events.iter_mut().rev().find_map(|e| match e {
            Event::Call(logged) if logged.call.id == call_id && matches!(logged.reading, Reading::Missing) => {
                Some(logged)
            }
            _ => None,
        });
        let Some(logged) = unanswered else {
            return Err(format!(
                "a tool result for `{call_id}`, a call the transcript does not make (or answers twice)"
            ));
        };
        let (reading, outcome) = classify::read(text, flagged);
        logged.reading = reading;
        logged.outcome = outcome;
        Ok(())
    }
}

/// The usage a log kept on an assistant message, in either provider's names.
fn usage(message: &Map<String, Value>) -> Option<(u64, u64)> {
    let usage = message.get("usage")?;
    let get = |a: &str, b: &str| usage.get(a).or_else(|| usage.get(b)).and_then(Value::as_u64);
    Some((
        get("input_tokens", "prompt_tokens")?,
        get("output_tokens", "completion_tokens")?,
    ))
}

/// The text of a message's content: a string, or its parts' or blocks' `text`.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn conversation(document: &Value, anthropic: bool) -> Result<Conversation, String> {
    let messages =
        messages_of(document).ok_or("expected an array of messages or an object with `messages` (a request body)")?;
    let mut builder = Builder {
        events: Vec::new(),
        context: 0,
    };
    if let Some(system) = document.get("system") {
        builder.read(&text_of(Some(system)));
    }
    for (i, message) in messages.iter().enumerate() {
        let at = |e: String| format!("messages[{i}]: {e}");
        let object = message.as_object().ok_or_else(|| at("not an object".into()))?;
        let role = object.get("role").and_then(Value::as_str).unwrap_or_default();
        let content = object.get("content");
        match (anthropic, role) {
            (_, "assistant") => {
                let provider = if anthropic {
                    Provider::Anthropic
                } else {
                    Provider::OpenAiChat
                };
                let calls = provider::parse_calls(provider, message).map_err(|e| at(e.to_string()))?;
                builder.turn(object, &text_of(content), calls);
            }
            (false, "tool") => {
                let id = object
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| at("a `tool` message without a `tool_call_id`".into()))?;
                builder.result(id, &text_of(content), false).map_err(at)?;
            }
            (true, "user") if content.is_some_and(Value::is_array) => {
                for block in content.and_then(Value::as_array).into_iter().flatten() {
                    if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                        builder.user(block.get("text").and_then(Value::as_str).unwrap_or_default().to_owned());
                        continue;
                    }
                    let id = block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .ok_or_else(|| at("a `tool_result` without a `tool_use_id`".into()))?;
                    let flagged = block.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                    builder
                        .result(id, &text_of(block.get("content")), flagged)
                        .map_err(at)?;
                }
            }
            (_, "user") => builder.user(text_of(content)),
            _ => builder.read(&text_of(content)),
        }
    }
    Ok(Conversation {
        task: None,
        events: builder.events,
    })
}
