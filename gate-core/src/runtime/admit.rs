//! Admission: everything checked about a call before anything runs.
//!
//! Resolve the tool (near misses are never executed), check that its scopes
//! are granted, validate the arguments (parsed into the tool's own types in
//! the same pass where it has typed arguments), and refuse a call equal to
//! one that already failed (rule 3). A call that fails any of these is an
//! [`Attempt::Refused`] and never reaches the ledger or the tool; a call
//! that passes is [`Admitted`], with what the later stages need of it.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use toolgate_ledger::ApprovalRecord;

use super::attempt::Attempt;
use super::gate::Inner;
use super::identity::{CallIdentity, as_validated, raw_fingerprint};
use super::messages;
use super::step::ToolCall;
use super::view::TaskView;
use crate::tool::prepare_contained;
use crate::validate::Validator;
use crate::{PreparedCall, Tool, ToolSpec};

/// A call that passed every check before running.
pub(super) struct Admitted<'c> {
    pub(super) tool: &'c dyn Tool,
    /// The arguments parsed into the tool's own types while they were
    /// validated, for the first attempt (a later attempt parses the text).
    prepared: Mutex<Option<PreparedCall<'c>>>,
    pub(super) validator: &'c Arc<Validator>,
    /// The call's own text.
    raw: &'c str,
    /// The text as the validator reads it (an optional field sent as null
    /// is absent), which the identities and a later attempt use: set by
    /// validation, or worked out when first needed after a one-pass parse.
    text: OnceLock<Cow<'c, str>>,
    /// The declared intent's key for this tool, if an intent is declared.
    declared_key: Option<String>,
    /// Computed when first needed: a successful read-only call needs none.
    identity: OnceLock<CallIdentity>,
    derived_key: OnceLock<String>,
    /// The request a person approved, when the call runs because of it.
    approved: Option<Box<ApprovalRecord>>,
}

impl<'c> Admitted<'c> {
    /// The tool's declaration.
    pub(super) fn spec(&self) -> &'c ToolSpec {
        self.tool.spec()
    }

    /// The arguments as the tool reads them.
    pub(super) fn arguments(&self) -> &str {
        self.text.get_or_init(|| as_validated(self.validator, self.raw))
    }

    /// The arguments parsed in admission, for the first attempt only.
    pub(super) fn take_prepared(&self) -> Option<PreparedCall<'c>> {
        self.prepared.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Whether the call claims its intent in the ledger before it runs: a
    /// side effect, or any approved call (so it runs once, however many
    /// workers take the decision).
    pub(super) fn claims(&self) -> bool {
        !self.spec().effects().is_read_only() || self.approved.is_some()
    }

    /// Runs the call as the person approved it: under the intent key the
    /// request names.
    pub(super) fn approve(&mut self, request: Box<ApprovalRecord>) {
        self.declared_key = Some(request.intent_key.clone());
        self.approved = Some(request);
    }

    /// The approved request the call runs under, if any.
    pub(super) fn approved(&self) -> Option<&ApprovalRecord> {
        self.approved.as_deref()
    }

    /// How long one run may take: the tool's own timeout, or the gate's.
    pub(super) fn timeout(&self, gate: &Inner) -> Duration {
        self.spec().timeout().unwrap_or(gate.tool_timeout)
    }

    /// The call's fingerprints and parsed arguments.
    pub(super) fn identity(&self) -> &CallIdentity {
        self.identity.get_or_init(|| {
            let spec = self.spec();
            CallIdentity::of(spec.name(), self.arguments(), spec.key_args())
        })
    }

    /// The call's intent key: the declared one, or the one derived from
    /// its key arguments.
    pub(super) fn intent_key(&self, task_id: &str) -> &str {
        match &self.declared_key {
            Some(key) => key,
            None => self
                .derived_key
                .get_or_init(|| self.identity().derived_key(task_id, self.spec().name())),
        }
    }

    /// The key the decision log records: the key a side effect is claimed
    /// under, or the declared intent's; none for a read-only call outside
    /// a declared intent, which has no intent in the ledger.
    pub(super) fn logged_key(&self, task_id: &str) -> Option<&str> {
        (self.claims() || self.declared_key.is_some()).then(|| self.intent_key(task_id))
    }
}

/// Admits `call` to `task`, or says why it is refused. The task is not
/// terminal (the pipeline checked); admission reads its grants, its intent
/// and its failed calls.
pub(super) fn admit<'c>(gate: &'c Inner, task: TaskView<'_>, call: &'c ToolCall) -> Result<Admitted<'c>, Attempt> {
    let refused = |message: String| Attempt::Refused {
        message,
        call_fp: raw_fingerprint(call),
        repeat: false,
    };
    // The tool must exist; near misses are never executed. The model is
    // told only the names it may call.
    let Some((tool, validator)) = gate
        .toolbox
        .get_indexed(&call.name)
        .and_then(|(i, tool)| Some((tool, gate.validators.get(i)?)))
    else {
        return Err(refused(unknown_tool(gate, task, call)));
    };
    let missing: Vec<&str> = task.missing_scopes(tool.spec()).collect();
    if !missing.is_empty() {
        return Err(refused(messages::scope_missing(&call.name, &missing)));
    }
    // Validated and parsed in one pass where the tool has typed
    // arguments; otherwise the text is validated for `Tool::call`.
    let text = OnceLock::new();
    let prepared = match prepare_contained(tool.as_ref(), validator, &call.arguments) {
        Ok(Some(Ok(prepared))) => Some(prepared),
        Ok(Some(Err(rejection))) => return Err(refused(rejection.message(&call.name))),
        Ok(None) => match validator.validate(&call.arguments) {
            Ok(validated) => {
                let _ = text.set(validated);
                None
            }
            Err(rejection) => return Err(refused(rejection.message(&call.name))),
        },
        Err(panicked) => {
            return Err(Attempt::Failed {
                error: panicked,
                lease: None,
                elapsed: Duration::ZERO,
            });
        }
    };
    let admitted = Admitted {
        tool: tool.as_ref(),
        prepared: Mutex::new(prepared),
        validator,
        raw: &call.arguments,
        text,
        declared_key: task.intent_key_for(&call.name),
        identity: OnceLock::new(),
        derived_key: OnceLock::new(),
        approved: None,
    };
    // Rule 3 needs the call's fingerprint only once a call has failed.
    let failed_calls = &task.record.state.failed_calls;
    if !failed_calls.is_empty() && failed_calls.contains(&admitted.identity().call_fp) {
        return Err(Attempt::Refused {
            message: messages::repeated_call(&call.name),
            call_fp: admitted.identity().call_fp.clone(),
            repeat: true,
        });
    }
    Ok(admitted)
}

/// The rejection of a call to a tool that does not exist. Kept out of
/// line, as every rare path of a call is: the code a successful call
/// runs stays together and small (it competes with the tool's own for
/// the instruction cache).
#[cold]
#[inline(never)]
fn unknown_tool(gate: &Inner, task: TaskView<'_>, call: &ToolCall) -> String {
    let names: Vec<&str> = gate
        .toolbox
        .specs()
        .filter(|s| task.may_call(s))
        .map(ToolSpec::name)
        .collect();
    toolgate_validate::unknown_tool(&call.name, &names).message()
}
