//! The call context a tool may ask for with `#[ctx]`.
//!
//! A tool that causes side effects downstream needs the intent key of the call
//! so it can hand it on (as a payment provider's idempotency key, say): that is
//! how "the agent never double-charges" survives past gate's own ledger.

use std::sync::{Arc, OnceLock};

use toolgate_validate::Validator;

use crate::runtime::ToolCall;

/// What a tool knows about the call it is serving.
///
/// Built for every call, so it shares what it holds instead of copying it:
/// the task's id and user and the call itself are behind reference counts.
#[derive(Clone, Debug)]
pub struct Ctx {
    task_id: Arc<str>,
    user: Arc<str>,
    /// The call: its id, the tool's name and, for a derived key, its text.
    call: Arc<ToolCall>,
    intent_key: OnceLock<String>,
    /// For a call that claims nothing (a read-only tool without a declared
    /// intent): how its key derives from its text, on the first `intent_key()`.
    key_source: Option<KeySource>,
}

/// How a derived intent key reads the call's text: as its validator reads it
/// (an optional field sent as null is absent), then only the key arguments.
#[derive(Clone, Debug)]
struct KeySource {
    validator: Arc<Validator>,
    key_args: Vec<String>,
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
            task_id: Arc::from(task_id.into()),
            user: Arc::from(user.into()),
            call: Arc::new(ToolCall::new(call_id, tool, String::new())),
            intent_key: OnceLock::from(intent_key.into()),
            key_source: None,
        }
    }

    /// A context whose call already has its intent key.
    pub(crate) fn keyed(task_id: &Arc<str>, user: &Arc<str>, call: &Arc<ToolCall>, intent_key: String) -> Self {
        Ctx {
            task_id: task_id.clone(),
            user: user.clone(),
            call: call.clone(),
            intent_key: OnceLock::from(intent_key),
            key_source: None,
        }
    }

    /// A context whose intent key is derived from the call's text (as the
    /// runtime derives keys) only if the tool asks for it: deriving costs a
    /// parse and a hash that most read-only tools never need.
    pub(crate) fn with_derived_key(
        task_id: &Arc<str>,
        user: &Arc<str>,
        call: &Arc<ToolCall>,
        validator: &Arc<Validator>,
        key_args: &[String],
    ) -> Self {
        Ctx {
            task_id: task_id.clone(),
            user: user.clone(),
            call: call.clone(),
            intent_key: OnceLock::new(),
            key_source: Some(KeySource {
                validator: validator.clone(),
                key_args: key_args.to_vec(),
            }),
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
        &self.call.id
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        &self.call.name
    }

    /// The intent key of this call: stable across retries and replans of the
    /// same intent. Pass it downstream as an idempotency key.
    pub fn intent_key(&self) -> &str {
        self.intent_key.get_or_init(|| match &self.key_source {
            Some(source) => {
                let text = crate::runtime::as_validated(&source.validator, &self.call.arguments);
                crate::runtime::derived_key(&self.task_id, &self.call.name, &text, &source.key_args)
            }
            None => String::new(),
        })
    }
}

impl PartialEq for Ctx {
    fn eq(&self, other: &Self) -> bool {
        (&self.task_id, &self.user, &self.call.id, &self.call.name)
            == (&other.task_id, &other.user, &other.call.id, &other.call.name)
            && self.intent_key() == other.intent_key()
    }
}

impl Eq for Ctx {}
