//! The guard stage, and what a task remembers for it of what it read.
//!
//! The decision itself is [`crate::guard::guard`], a pure function; this
//! file asks it about an admitted call (after admission, before approval)
//! and turns its verdict into what the pipeline does next: the call runs,
//! waits for a person (through the approval stage, with the guard's
//! reason), or, with `GateBuilder::guard_refuses`, is refused. It also
//! records, into the task's state, what a result or a user's message adds
//! to the guard's memory; the state is committed with the decision, so the
//! memory holds across restarts and workers.

use serde_json::Value;
use toolgate_ledger::{FlowState, seen};

use super::admit::Admitted;
use super::attempt::Attempt;
use super::messages;
use super::view::TaskView;
use crate::Effects;
use crate::guard::{Guard, Verdict, fingerprints, guard, phrase_fingerprints};

/// The guard's settings a gate holds.
pub(super) struct FlowSettings {
    pub(super) guard: Guard,
    /// "Needs approval" is a refusal: nobody is there to ask.
    pub(super) refuses: bool,
}

/// What the guard makes of `admitted`: `Ok(None)` when it runs as any
/// other call, `Ok(Some(reason))` when a person must agree first (the
/// reason is the request's), and the refusal that ends the call when the
/// gate refuses instead of asking.
pub(super) fn screen(
    settings: &FlowSettings,
    task: TaskView<'_>,
    admitted: &Admitted<'_>,
) -> Result<Option<String>, Attempt> {
    let spec = admitted.spec();
    match verdict(settings, task, admitted) {
        Verdict::Runs => Ok(None),
        Verdict::NeedsApproval(reason) if settings.refuses => Err(Attempt::Declined {
            text: messages::guard_refused(spec.name(), &reason.describe(spec.name())),
            approval_id: None,
        }),
        Verdict::NeedsApproval(reason) => Ok(Some(reason.describe(spec.name()))),
    }
}

/// The guard's verdict on `admitted` in `task`, under the gate's policy.
pub(super) fn verdict(settings: &FlowSettings, task: TaskView<'_>, admitted: &Admitted<'_>) -> Verdict {
    guard(
        settings.guard,
        &task.record.state.flow,
        admitted.spec().effects(),
        &admitted.identity().args,
    )
}

/// Whether the guard has anything to ask about `admitted`: the tool
/// changes state or reaches outside, in a task that has read a labelled
/// result. Every other call skips the stage.
pub(super) fn concerns(task: TaskView<'_>, admitted: &Admitted<'_>) -> bool {
    task.record.state.flow.labelled && admitted.spec().effects().is_guarded()
}

/// Whether a successful result of a tool with `effects` changes the
/// task's memory: the tool is labelled, or the task has read a labelled
/// result and now remembers every value it reads.
pub(super) fn remembers(flow: &FlowState, effects: Effects) -> bool {
    effects.is_labelled() || flow.labelled
}

/// Records what the result `value` of the call `call_id` to `tool` (with
/// `effects`) adds to the task's memory.
pub(super) fn note_result(flow: &mut FlowState, effects: Effects, tool: &str, call_id: &str, value: &Value) {
    if !remembers(flow, effects) {
        return;
    }
    let untrusted = effects.is_untrusted();
    flow.labelled = true;
    flow.untrusted_seen |= untrusted;
    let mut how = if untrusted { seen::UNTRUSTED } else { seen::TRUSTED };
    if effects.is_private() {
        how |= seen::PRIVATE;
    }
    let source = untrusted.then(|| format!("{tool} ({call_id})"));
    flow.note(fingerprints(value), how, source.as_deref());
}

/// Records the user's (or the operator's) own words: values in them are
/// trusted. Returns whether the memory changed.
pub(super) fn note_user(flow: &mut FlowState, text: &str) -> bool {
    let phrases = flow.note_user_phrases(phrase_fingerprints(text));
    flow.note(fingerprints(&Value::String(text.to_owned())), seen::USER, None) || phrases
}
