//! gate's model back ends: the agent loop asks a [`ChatModel`] for the next
//! [`Turn`], hands its tool calls to the gate, and feeds the gate's answers back
//! as [`Message::ToolResult`]s.
//!
//! Two back ends sit behind the one trait so that the same loop runs in a demo,
//! a test and production:
//!
//! - [`ScriptedModel`] replays a conversation file (JSON Lines, one turn per
//!   line) deterministically, including invalid arguments and scripted errors;
//! - [`OpenAiCompatible`] speaks the OpenAI Chat Completions tool-calling
//!   format to any compatible server (feature `openai`, on by default; it is
//!   the only part of the crate that needs an HTTP client and TLS).
//!
//! Tool-call arguments stay the raw text the model produced, valid JSON or not:
//! deciding what to do with a malformed call is the gate's job, not the
//! transport's.
//!
//! The loop, with the gate's part left as a comment:
//!
//! ```
//! use toolgate_model::{ChatModel, Message, ScriptedModel};
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let model = ScriptedModel::parse(r#"
//! {"tool_calls":[{"id":"call_1","name":"lookup_customer","arguments":{"email":"a@b.c"}}]}
//! {"text":"Found them."}
//! "#)?;
//! let tools = serde_json::json!([]); // toolbox.manifest(Dialect::OpenAi)
//! let mut messages = vec![Message::User("Find a@b.c".into())];
//! loop {
//!     let turn = model.next_turn(&messages, &tools).await?;
//!     messages.push(Message::from_turn(&turn));
//!     if turn.is_final() {
//!         break;
//!     }
//!     for call in &turn.tool_calls {
//!         // let step = task.handle(ToolCall::new(&call.id, &call.name, &call.arguments)).await;
//!         let (content, is_error) = (r#"{"id":"c1"}"#.to_owned(), false); // step.model_text(), !Return
//!         messages.push(Message::ToolResult { call_id: call.id.clone(), content, is_error });
//!     }
//! }
//! assert_eq!(messages.len(), 4);
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # }).unwrap();
//! ```
#![forbid(unsafe_code)]

mod error;
mod message;
#[cfg(feature = "openai")]
mod openai;
mod provider;
mod scripted;

use std::future::Future;
use std::pin::Pin;

pub use error::ModelError;
pub use message::{Message, TOOL_ERROR_PREFIX, ToolCallRequest, Turn, Usage, marked_as_error};
#[cfg(feature = "openai")]
pub use openai::{DEFAULT_TIMEOUT, MAX_RESPONSE_BYTES, OpenAiCompatible};
pub use provider::{Provider, UnknownProvider};
pub use scripted::{ScriptError, ScriptedModel};

/// A boxed, `Send` future: what [`ChatModel::next_turn`] returns, so the trait
/// stays object safe (`Box<dyn ChatModel>`, `Arc<dyn ChatModel>`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A model that, given the conversation so far and the tools on offer, produces
/// its next turn.
///
/// Implementations must not panic on any input; every failure is a
/// [`ModelError`] whose predicates tell the loop whether waiting helps.
pub trait ChatModel: Send + Sync {
    /// The model's next turn after `messages`.
    ///
    /// `tools` is a tool list in the format of [`provider`](Self::provider)
    /// (for [`OpenAiCompatible`], a Chat Completions `tools` array, as built
    /// by `toolbox.manifest(Dialect::OpenAi)` or `Dialect::OpenAiStrict`); an
    /// empty array or `null` offers no tools.
    fn next_turn<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<Turn, ModelError>>;

    /// The API whose tool format this back end sends, so an agent loop can
    /// refuse a manifest of another provider before the first request. `None`
    /// (the default) means any: the back end does not read the tool list
    /// ([`ScriptedModel`]) or passes it through unchanged.
    fn provider(&self) -> Option<Provider> {
        None
    }
}

impl<M: ChatModel + ?Sized> ChatModel for &M {
    fn next_turn<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<Turn, ModelError>> {
        (**self).next_turn(messages, tools)
    }

    fn provider(&self) -> Option<Provider> {
        (**self).provider()
    }
}

impl<M: ChatModel + ?Sized> ChatModel for Box<M> {
    fn next_turn<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<Turn, ModelError>> {
        (**self).next_turn(messages, tools)
    }

    fn provider(&self) -> Option<Provider> {
        (**self).provider()
    }
}

impl<M: ChatModel + ?Sized> ChatModel for std::sync::Arc<M> {
    fn next_turn<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<Turn, ModelError>> {
        (**self).next_turn(messages, tools)
    }

    fn provider(&self) -> Option<Provider> {
        (**self).provider()
    }
}
