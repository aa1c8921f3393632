//! The model APIs whose wire formats gate speaks, named once.
//!
//! The name lives here, in the model crate, because two sides need it: a
//! [`ChatModel`](crate::ChatModel) back end says which API it talks to, and
//! `gate-core` (which depends on this crate, not the other way round) parses
//! that API's tool calls and renders its tool results. A manifest dialect
//! (strict or not, `parameters` or `parametersJsonSchema`) is a finer choice
//! made on top of one of these.

use std::fmt;
use std::str::FromStr;

/// A model provider's API, as far as tool calls and tool results go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI Chat Completions (and the servers that copy it): `tool_calls`
    /// on the assistant message, `role: tool` messages back.
    OpenAiChat,
    /// OpenAI Responses: `function_call` output items, `function_call_output`
    /// input items back.
    OpenAiResponses,
    /// Anthropic Messages: `tool_use` content blocks, `tool_result` blocks back.
    Anthropic,
    /// Google Gemini: `functionCall` parts, `functionResponse` parts back.
    Gemini,
}

impl Provider {
    /// Every provider, in the order the CLI lists them.
    pub const ALL: [Provider; 4] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ];

    /// The CLI name (`openai`, `openai-responses`, `anthropic`, `gemini`).
    pub const fn name(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "openai",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A provider name that is not one of [`Provider::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownProvider(String);

impl fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown provider `{}`; expected one of: openai, openai-responses, anthropic, gemini",
            self.0
        )
    }
}

impl std::error::Error for UnknownProvider {}

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProvider(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for provider in Provider::ALL {
            assert_eq!(provider.name().parse::<Provider>(), Ok(provider));
        }
        let e = "openai-chat".parse::<Provider>().expect_err("not a CLI name");
        assert!(e.to_string().contains("`openai-chat`"), "{e}");
    }
}
