//! The call context a tool may ask for with `#[ctx]`.
//!
//! A tool that causes side effects downstream needs the intent key of the call
//! so it can hand it on (as a payment provider's idempotency key, say): that is
//! how "the agent never double-charges" survives past gate's own ledger.

/// What a tool knows about the call it is serving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ctx {
    task_id: String,
    user: String,
    call_id: String,
    tool: String,
    intent_key: String,
}

impl Ctx {
    /// A context for one call. The runtime builds these; tests and custom
    /// loops may build their own.
    pub fn new(
        task_id: impl Into<String>,
        user: impl Into<String>,
        call_id: impl Into<String>,
        tool: impl Into<String>,
        intent_key: impl Into<String>,
    ) -> Self {
        Ctx {
            task_id: task_id.into(),
            user: user.into(),
            call_id: call_id.into(),
            tool: tool.into(),
            intent_key: intent_key.into(),
        }
    }

    /// The task this call belongs to.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The user on whose behalf the task runs.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The provider's id for this tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The intent key of this call: stable across retries and replans of the
    /// same intent. Pass it downstream as an idempotency key.
    pub fn intent_key(&self) -> &str {
        &self.intent_key
    }
}
