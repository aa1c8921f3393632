//! The call context a tool may ask for with `#[ctx]`.
//!
//! A tool that causes side effects downstream needs the intent key of the call
//! so it can hand it on (as a payment provider's idempotency key, say): that is
//! how "the agent never double-charges" survives past gate's own ledger.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use gate_validate::Validator;

/// What a tool knows about the call it is serving.
#[derive(Clone, Debug)]
pub struct Ctx {
    task_id: String,
    user: String,
    call_id: String,
    tool: String,
    intent_key: OnceLock<String>,
    /// For a call that claims nothing (a read-only tool without a declared
    /// intent): what the key derives from, on the first `intent_key()`.
    key_source: Option<KeySource>,
}

/// The arguments a derived intent key stands for: the call's text, read as
/// its validator reads it (an optional field sent as null is absent).
#[derive(Clone, Debug)]
struct KeySource {
    arguments: String,
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
            task_id: task_id.into(),
            user: user.into(),
            call_id: call_id.into(),
            tool: tool.into(),
            intent_key: OnceLock::from(intent_key.into()),
            key_source: None,
        }
    }

    /// A context whose intent key is derived from `arguments` (as the
    /// runtime derives keys) only if the tool asks for it: deriving costs a
    /// parse and a hash that most read-only tools never need.
    pub(crate) fn with_derived_key(
        task_id: &str,
        user: &str,
        call_id: &str,
        tool: &str,
        arguments: &str,
        validator: &Arc<Validator>,
        key_args: &[String],
    ) -> Self {
        Ctx {
            task_id: task_id.to_owned(),
            user: user.to_owned(),
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            intent_key: OnceLock::new(),
            key_source: Some(KeySource {
                arguments: arguments.to_owned(),
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
        &self.call_id
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The intent key of this call: stable across retries and replans of the
    /// same intent. Pass it downstream as an idempotency key.
    pub fn intent_key(&self) -> &str {
        self.intent_key.get_or_init(|| match &self.key_source {
            Some(source) => {
                let text = source
                    .validator
                    .validate(&source.arguments)
                    .unwrap_or(Cow::Borrowed(&source.arguments));
                crate::runtime::derived_key(&self.task_id, &self.tool, &text, &source.key_args)
            }
            None => String::new(),
        })
    }
}

impl PartialEq for Ctx {
    fn eq(&self, other: &Self) -> bool {
        (&self.task_id, &self.user, &self.call_id, &self.tool)
            == (&other.task_id, &other.user, &other.call_id, &other.tool)
            && self.intent_key() == other.intent_key()
    }
}

impl Eq for Ctx {}
