//! The call context a tool may ask for with `#[ctx]`.
//!
//! A tool that causes side effects downstream needs the intent key of the call
//! so it can hand it on (as a payment provider's idempotency key, say): that is
//! how "the agent never double-charges" survives past gate's own ledger. A
//! tool that reads the user's data needs to know whose data it may read:
//! the call's [`Principal`], handed to the data layer (a row-level-security
//! setting, a token's subject) so that the data's own rules hold whatever
//! the model asks for.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use toolgate_validate::Validator;

use crate::runtime::ToolCall;

/// Who a call runs for: the task's user and the scopes its program granted
/// (`Task::grant`). Neither comes from the model: the program that runs the
/// task sets both.
///
/// ```
/// use toolgate_core::Principal;
/// let principal = Principal::new("ann", ["crm:read"]);
/// assert_eq!(principal.user(), "ann");
/// assert!(principal.has_scope("crm:read") && !principal.has_scope("billing:charge"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    user: Arc<str>,
    scopes: Arc<BTreeSet<String>>,
}

impl Principal {
    /// `user` with `scopes`.
    pub fn new<I, S>(user: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Principal {
            user: Arc::from(user.into()),
            scopes: Arc::new(scopes.into_iter().map(Into::into).collect()),
        }
    }

    /// The principal of a task, sharing its strings.
    pub(crate) fn shared(user: &Arc<str>, scopes: &Arc<BTreeSet<String>>) -> Self {
        Principal {
            user: user.clone(),
            scopes: scopes.clone(),
        }
    }

    /// The user on whose behalf the task runs.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The scopes granted to the task, in order.
    pub fn scopes(&self) -> impl ExactSizeIterator<Item = &str> {
        self.scopes.iter().map(String::as_str)
    }

    /// Whether `scope` is granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }
}

/// No scopes, shared: a task that grants none allocates nothing for them.
pub(crate) fn no_scopes() -> Arc<BTreeSet<String>> {
    static NONE: OnceLock<Arc<BTreeSet<String>>> = OnceLock::new();
    NONE.get_or_init(Arc::default).clone()
}

/// What a tool knows about the call it is serving.
///
/// Built for every call, so it shares what it holds instead of copying it:
/// the task's id, its principal and the call itself are behind reference
/// counts.
#[derive(Clone, Debug)]
pub struct Ctx {
    task_id: Arc<str>,
    principal: Principal,
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
    /// A context for one call, for a principal with no scopes (see
    /// [`with_scopes`](Self::with_scopes)). The runtime builds these; tests
    /// and custom loops may build their own.
    pub fn new(
        task_id: impl Into<String>,
        user: impl Into<String>,
        call_id: impl Into<String>,
        tool: impl Into<String>,
        intent_key: impl Into<String>,
    ) -> Self {
        Ctx {
            task_id: Arc::from(task_id.into()),
            principal: Principal {
                user: Arc::from(user.into()),
                scopes: no_scopes(),
            },
            call: Arc::new(ToolCall::new(call_id, tool, String::new())),
            intent_key: OnceLock::from(intent_key.into()),
            key_source: None,
        }
    }

    /// A context whose call already has its intent key.
    pub(crate) fn keyed(task_id: &Arc<str>, principal: Principal, call: &Arc<ToolCall>, intent_key: String) -> Self {
        Ctx {
            task_id: task_id.clone(),
            principal,
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
        principal: Principal,
        call: &Arc<ToolCall>,
        validator: &Arc<Validator>,
        key_args: &[String],
    ) -> Self {
        Ctx {
            task_id: task_id.clone(),
            principal,
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

    /// The same context with `scopes` granted to its principal.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.principal = Principal::new(self.principal.user(), scopes);
        self
    }

    /// The user on whose behalf the task runs (the principal's).
    pub fn user(&self) -> &str {
        self.principal.user()
    }

    /// Who the call runs for: the task's user and its granted scopes. Hand
    /// it to the data layer so that the data's own rules decide what this
    /// user may read, whatever the model asked for.
    pub fn principal(&self) -> &Principal {
        &self.principal
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
        (&self.task_id, &self.principal, &self.call.id, &self.call.name)
            == (&other.task_id, &other.principal, &other.call.id, &other.call.name)
            && self.intent_key() == other.intent_key()
    }
}

impl Eq for Ctx {}
