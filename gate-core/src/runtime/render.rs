//! Rendering: what the model and the operator read of a decision.
//!
//! `messages` holds the wording; this file turns values into the texts a
//! step carries: every text for the model through the sanitizer (rule 6), a
//! tool's result through the result sanitizer and, for an `external` tool,
//! marked as data (spotlighting), a failure into the report a person
//! reads, and the returned step named after the call it answers.

use std::sync::Arc;

use serde_json::Value;
use toolgate_budget::TaskBudget;
use toolgate_ledger::{FailureClass, FailureReason, FailureReport, State, Timestamp};
use toolgate_sanitize::Sanitizer;

use super::attempt::Attempt;
use super::messages;
use super::step::{Step, ToolCall, ToolOutput};
use super::view::TaskView;
use crate::{Effects, ToolError};

/// A text for the model, sanitized.
pub(super) fn for_model(sanitizer: &Sanitizer, text: &str) -> String {
    sanitizer.sanitize(text).text
}

/// A tool's error as the model may see it: its class, and its text with
/// echoes of the call's own argument values (`args`) neutralized.
pub(super) fn tool_error(sanitizer: &Sanitizer, error: &ToolError, args: &Value) -> String {
    let mut echoes = Vec::new();
    collect_strings(args, &mut echoes);
    let echoes: Vec<&str> = echoes.iter().map(String::as_str).collect();
    sanitizer.sanitize_with_echoes(&error.to_string(), &echoes).text
}

/// What the model reads of a tool's result: `value` through the result
/// sanitizer (none: unsanitized). What an `external` tool returns was
/// written outside the system: the model is told it is data, not
/// instructions (spotlighting). The output is named after its call by
/// [`name_the_call`].
pub(super) fn output(
    result_sanitizer: Option<&Sanitizer>,
    value: Value,
    effects: Effects,
    is_error: bool,
    replayed: bool,
) -> ToolOutput {
    // `to_string` on a `Value` goes through `fmt::Display`, which grows
    // the text a piece at a time; serializing writes it into one buffer.
    // (A `Value` always serializes: its map keys are strings.)
    let raw = match &value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    let text = match result_sanitizer {
        Some(s) => s.sanitize_owned(raw).text,
        None => raw,
    };
    let text = if effects.is_external() {
        toolgate_sanitize::spotlight(&text)
    } else {
        text
    };
    ToolOutput {
        call_id: String::new(),
        tool: String::new(),
        value,
        text,
        is_error,
        replayed,
    }
}

/// A returned step names the call it answers. Its id and tool are moved
/// from the call, which the task alone holds once the tool is done (a tool
/// that kept its context still shares it: then they are copied); building
/// the output with copies and dropping the call's own would cost every
/// successful call two allocations.
pub(super) fn name_the_call(mut step: Step, call: Arc<ToolCall>) -> Step {
    if let Step::Return(out) = &mut step {
        match Arc::try_unwrap(call) {
            Ok(call) => {
                out.call_id = call.id;
                out.tool = call.name;
            }
            Err(call) => {
                out.call_id = call.id.clone();
                out.tool = call.name.clone();
            }
        }
    }
    step
}

/// What settling knows of a failure, beside the call and its attempt.
pub(super) struct Failure<'a> {
    pub(super) reason: FailureReason,
    pub(super) class: Option<FailureClass>,
    /// The tool's error as the model saw it, for a failed run.
    pub(super) error_text: Option<&'a str>,
    pub(super) at: Timestamp,
    /// The call's fingerprint.
    pub(super) call_fp: String,
    pub(super) intent_key: Option<&'a str>,
    /// The task's budgets after the decision.
    pub(super) budget: &'a TaskBudget,
    /// The state the decision leaves a failed run's intent in.
    pub(super) ledger_state: Option<State>,
}

/// What a person needs about a failed call. Out of line: a successful
/// call's settling stays small.
#[inline(never)]
pub(super) fn failure_report(
    sanitizer: &Sanitizer,
    task: TaskView<'_>,
    call: &ToolCall,
    attempt: &Attempt,
    failure: Failure<'_>,
) -> FailureReport {
    let tool = call.name.as_str();
    let (error, outcome, ledger_state) = match attempt {
        Attempt::TaskFailed => (messages::earlier_failure(task.record.failure.as_ref()), None, None),
        Attempt::StoreDown(e) => (e.clone(), None, None),
        Attempt::Refused { message, .. } => (message.clone(), None, None),
        Attempt::Returned { value, .. } => (value.to_string(), None, None),
        Attempt::NotRecorded { value, error } => (error.clone(), Some(value.clone()), Some(State::Dispatched)),
        Attempt::Failed { .. } => (
            failure.error_text.unwrap_or_default().to_owned(),
            None,
            failure.ledger_state,
        ),
        Attempt::Stopped { error, state, .. } => (error.clone(), None, *state),
        Attempt::AwaitingApproval { request, .. } => (format!("waits for approval {}", request.id), None, None),
        Attempt::Declined { text, .. } => (text.clone(), None, None),
    };
    let (reason, intent_key, budget) = (failure.reason, failure.intent_key, failure.budget);
    FailureReport {
        at: failure.at,
        task_id: String::from(&**task.id),
        user: String::from(&**task.user),
        call_id: call.id.clone(),
        tool: call.name.clone(),
        arguments_fingerprint: failure.call_fp,
        intent_key: intent_key.map(str::to_owned),
        ledger_state,
        class: failure.class,
        reason,
        attempts: budget.attempts().used(),
        repair_tokens: budget.repair_tokens(),
        latency_added_ms: budget.state().added_latency_ms,
        last_error: for_model(sanitizer, &error),
        outcome,
        next_check: messages::next_check(reason, tool, intent_key, task.id, task.user),
        model_text: for_model(sanitizer, &messages::fail(tool, reason, intent_key)),
    }
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}
