//! gate's model back ends: a scripted model that replays a conversation, and an OpenAI-compatible Chat Completions client.
#![forbid(unsafe_code)]
