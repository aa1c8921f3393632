//! The provider-neutral conversation: what the agent loop sends a model and what
//! a model answers. Kept independent of any provider's wire format so the loop
//! and the gate never see JSON shapes that differ per back end.
//!
//! The conversation serializes (serde) so that a run stopped for a person's
//! approval can be stored and resumed in another process.

use serde::{Deserialize, Serialize};

/// One tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The provider's call id; tool results refer back to it.
    pub id: String,
    /// The tool name as the model wrote it (possibly not a tool that exists).
    pub name: String,
    /// The arguments exactly as the model sent them: JSON text, possibly
    /// invalid. The gate validates them; no back end repairs or re-encodes them.
    pub arguments: String,
}

impl ToolCallRequest {
    /// A tool call from its parts.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ToolCallRequest {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// One message of the conversation. Serialized as
/// `{"role": "user", "content": "…"}`, the struct variants with their
/// fields as the `content` object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", content = "content", rename_all = "snake_case")]
pub enum Message {
    /// Instructions from the operator.
    System(String),
    /// What the user said.
    User(String),
    /// A turn the model produced earlier, replayed so the model sees its own calls.
    Assistant {
        /// Text the model wrote alongside (or instead of) tool calls.
        text: Option<String>,
        /// The tool calls of that turn, arguments verbatim.
        tool_calls: Vec<ToolCallRequest>,
    },
    /// The answer to one tool call: the gate's sanitized `Step::model_text()`.
    ToolResult {
        /// The [`ToolCallRequest::id`] this answers.
        call_id: String,
        /// The text the model sees.
        content: String,
        /// Whether the call failed (rejected, retried, failed or a definitive
        /// error). Providers without an error flag get it in the text; see
        /// [`crate::TOOL_ERROR_PREFIX`].
        is_error: bool,
    },
}

impl Message {
    /// The assistant message that replays `turn`, for appending to the history
    /// before the tool results that answer it.
    pub fn from_turn(turn: &Turn) -> Self {
        Message::Assistant {
            text: turn.text.clone(),
            tool_calls: turn.tool_calls.clone(),
        }
    }
}

/// Tokens a turn consumed, as the provider reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub input_tokens: u64,
    /// Completion (output) tokens.
    pub output_tokens: u64,
}

/// One model turn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Turn {
    /// Text the model wrote, if any.
    pub text: Option<String>,
    /// Tool calls, in the model's order. Empty means the model is done.
    pub tool_calls: Vec<ToolCallRequest>,
    /// Token usage, when the provider reported it.
    pub usage: Option<Usage>,
}

impl Turn {
    /// Whether the model is done: it asked for no tool call.
    pub fn is_final(&self) -> bool {
        self.tool_calls.is_empty()
    }
}

/// Prefix put before the content of an error tool result, since OpenAI's
/// `role: tool` message has no error flag.
pub const TOOL_ERROR_PREFIX: &str = "Error: ";

/// The content of an error tool result for an API without an error flag:
/// prefixed with [`TOOL_ERROR_PREFIX`] unless it already starts with "error"
/// (any case), so the one bit gate knows is not lost and never doubled.
///
/// ```
/// assert_eq!(toolgate_model::marked_as_error("card declined"), "Error: card declined");
/// assert_eq!(toolgate_model::marked_as_error("ERROR 42"), "ERROR 42");
/// ```
pub fn marked_as_error(content: &str) -> std::borrow::Cow<'_, str> {
    let already_marked = content.get(..5).is_some_and(|head| head.eq_ignore_ascii_case("error"));
    if already_marked {
        std::borrow::Cow::Borrowed(content)
    } else {
        std::borrow::Cow::Owned(format!("{TOOL_ERROR_PREFIX}{content}"))
    }
}
