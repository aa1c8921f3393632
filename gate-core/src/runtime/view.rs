//! [`TaskView`]: what the pipeline's stages read of a task.
//!
//! Every stage takes the task this way, read-only: its identity, the scopes
//! its program granted, the intent it declared and its state as last loaded
//! or committed. Only the pipeline itself (`Task::handle`) changes a task,
//! by taking the value a stage returns; so a stage can be read, tested and
//! replaced without the task's other concerns, and a new stage (the guard,
//! an approval) is a function of the same view.

use std::collections::BTreeSet;
use std::sync::Arc;

use toolgate_ledger::TaskRecord;

use crate::ToolSpec;

/// A task as the stages see it: borrowed, never changed.
#[derive(Clone, Copy)]
pub(super) struct TaskView<'t> {
    /// The task's id, shared with every call's context.
    pub(super) id: &'t Arc<str>,
    /// The user, shared likewise.
    pub(super) user: &'t Arc<str>,
    /// The intent the task's program declared, if any.
    pub(super) intent: Option<&'t str>,
    /// The scopes the task's program granted.
    pub(super) granted: &'t Arc<BTreeSet<String>>,
    /// The task's stored state: rejections, failed calls, budgets, the
    /// terminal flag.
    pub(super) record: &'t TaskRecord,
}

impl<'t> TaskView<'t> {
    /// The scopes `spec` declares that the task was not granted.
    pub(super) fn missing_scopes<'s>(self, spec: &'s ToolSpec) -> impl Iterator<Item = &'s str> + use<'s, 't> {
        let granted = self.granted;
        spec.scopes()
            .iter()
            .map(String::as_str)
            .filter(move |s| !granted.contains(*s))
    }

    /// Whether every scope `spec` declares is granted to the task.
    pub(super) fn may_call(self, spec: &ToolSpec) -> bool {
        self.missing_scopes(spec).next().is_none()
    }

    /// The key calls of `tool` carry under the declared intent, if one is.
    pub(super) fn intent_key_for(self, tool: &str) -> Option<String> {
        self.intent
            .map(|label| toolgate_ledger::minted_intent_key(self.id, &format!("{label}\u{1f}{tool}")))
    }
}
