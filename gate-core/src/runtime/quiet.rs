//! The fast path: a successful read-only call settled without a commit.
//!
//! Such a call changed nothing anywhere, and when its success changes
//! nothing in the task's state either (no repair episode to end, no
//! correction count to reset, every spend already logged) its decision
//! record is only the log's: it goes to the background writer and the step
//! returns without waiting for the disk. Every successful read takes this
//! path, so it builds only what such a call needs, without the general
//! path's copy and comparison of the task's state; a test holds it to
//! [`settle`](super::settle::settle) over every combination of the state it reads.

use serde_json::Value;
use toolgate_budget::estimate_tokens;
use toolgate_ledger::{Action, DecisionId, DecisionRecord, TaskState};

use super::admit::Admitted;
use super::attempt::Attempt;
use super::budget::task_budget;
use super::choose::Case;
use super::flow;
use super::gate::Inner;
use super::render;
use super::settle::{Settled, recorded_key};
use super::step::{Step, ToolCall};
use super::view::TaskView;

/// The quiet path, when `case` takes it: a successful read-only call whose
/// success [changes nothing](is_quiet) in the task's state (nor in what the
/// guard remembers: the tool is not labelled and the task read no labelled
/// result). Its record need
/// not be written before the step returns. The case comes back otherwise
/// (by value: the general path owns it next; boxing it would cost every
/// call an allocation to save a move).
#[allow(clippy::result_large_err)]
pub(super) fn quietly<'a, 'c>(gate: &Inner, task: TaskView<'_>, case: Case<'a, 'c>) -> Result<Settled, Case<'a, 'c>> {
    let Some(admitted) = case.admitted else {
        return Err(case);
    };
    let effects = admitted.spec().effects();
    let quiet = effects.is_read_only()
        && !task.record.terminal
        && !flow::remembers(&task.record.state.flow, effects)
        && is_quiet(gate, &task.record.state);
    match case.attempt {
        Attempt::Returned {
            value,
            is_error: false,
            replayed: false,
            lease: None,
        } if quiet => Ok(quiet_success(gate, task, case.call, admitted, value, case.attempt_no)),
        attempt => Err(Case { attempt, ..case }),
    }
}

/// Whether a success would change nothing in the task's stored `state`: no
/// repair episode to end, no correction count to reset, every spend
/// already logged.
fn is_quiet(gate: &Inner, state: &TaskState) -> bool {
    let budget = task_budget(&gate.budget, state, None).state();
    state.corrections_in_step == 0
        && state.episode_rejections.is_empty()
        && budget == state.budget
        && budget.repair_tokens == state.logged_repair_tokens
        && budget.added_latency_ms == state.logged_latency_ms
}

/// What [`settle`](super::settle::settle) makes of a quiet success, taking the result instead of
/// copying it.
fn quiet_success(
    gate: &Inner,
    task: TaskView<'_>,
    call: &ToolCall,
    admitted: &Admitted<'_>,
    value: Value,
    attempt_no: i64,
) -> Settled {
    let state = &task.record.state;
    let at = gate.store.now();
    let out = render::output(
        gate.result_sanitizer.as_ref(),
        value,
        admitted.spec().effects(),
        false,
        false,
    );
    let context_tokens = if state.usage_reported {
        state.context_tokens
    } else {
        state.context_tokens.saturating_add(estimate_tokens(&out.text))
    };
    let record = DecisionRecord {
        id: DecisionId::at(at),
        at,
        task_id: task.id.clone(),
        user: task.user.clone(),
        call_id: call.id.clone(),
        tool: admitted.spec().shared_name().clone(),
        class: None,
        action: Action::Return,
        fail_reason: None,
        attempt: attempt_no,
        attempts_used: i64::from(state.budget.repairs),
        repair_tokens: 0,
        latency_added_ms: 0,
        message_hash: String::new(),
        intent_key: recorded_key(task, call, Some(admitted)),
    };
    Settled {
        task: None,
        context_tokens,
        record,
        step: Step::Return(out),
        resend_after: None,
        intent: None,
        approval: None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use toolgate_budget::TaskBudgetState;

    use std::sync::Arc;

    use serde_json::json;
    use toolgate_budget::Reservation;
    use toolgate_ledger::{TaskRecord, Timestamp};

    use super::*;
    use crate::runtime::Gate;
    use crate::runtime::admit::admit;
    use crate::runtime::choose::choose;
    use crate::runtime::settle::{Stamp, settle};
    use crate::{DynamicTool, Effects, ToolSpec, Toolbox};

    /// Every combination of what a success's settling reads of the task's
    /// state, small values and past-the-limit ones alike.
    fn states() -> Vec<(TaskState, bool)> {
        let mut states = Vec::new();
        for bits in 0u32..1 << 11 {
            let on = |bit: u32| bits & (1 << bit) != 0;
            let state = TaskState {
                rejections: u32::from(on(0)),
                episode_rejections: if on(1) { vec!["hash".to_owned()] } else { Vec::new() },
                failed_calls: if on(2) { vec!["fp".to_owned()] } else { Vec::new() },
                corrections_in_step: u32::from(on(3)),
                budget: TaskBudgetState {
                    // 1, or far past any task's limit (restoring clamps it).
                    repairs: if on(4) { 1_000 } else { 1 },
                    retries: if on(5) { 2 } else { 0 },
                    added_latency_ms: if on(6) { 7 } else { 0 },
                    repair_tokens: if on(7) { 10 } else { 0 },
                },
                context_tokens: 100,
                usage_reported: on(8),
                pending_tokens: Vec::<Reservation>::new(),
                logged_repair_tokens: if on(9) { 10 } else { 0 },
                // Bit 10: the latency logged is the latency added.
                logged_latency_ms: if on(6) == on(10) { 7 } else { 0 },
                // With the rejection count, as a rejection sets both.
                repair_turn_pending: on(0),
                approvals: Vec::new(),
                flow: Default::default(),
            };
            // A declared intent gives the record a key.
            states.push((state.clone(), false));
            if bits % 7 == 0 {
                states.push((state, true));
            }
        }
        states
    }

    /// The quiet path is taken exactly when the general one would write
    /// nothing of the task, and then settles the call as it does.
    #[tokio::test]
    async fn a_quiet_success_settles_as_the_general_path_does() {
        let spec = ToolSpec::new(
            "lookup",
            "Look a customer up.",
            json!({"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}),
            Effects::new().read_only(),
        )
        .unwrap();
        let tool = DynamicTool::new(spec).with_handler(|_, _| async { Ok(json!({"id": "cus_1"})) });
        let gate = Gate::builder(Toolbox::new().with(tool).unwrap())
            .store("memory:")
            .build()
            .await
            .unwrap();
        let inner = gate.inner();
        let call = ToolCall::new("c1", "lookup", r#"{"email": "a@b.c"}"#);
        let (id, user): (Arc<str>, Arc<str>) = (Arc::from("task-1"), Arc::from("u1"));
        let granted = Arc::new(BTreeSet::new());
        let (mut quiet_seen, mut loud_seen) = (0, 0);
        for (state, intent) in states() {
            let record = TaskRecord {
                state,
                ..TaskRecord::new("u1", "task-1")
            };
            let task = TaskView {
                id: &id,
                user: &user,
                intent: intent.then_some("refund"),
                granted: &granted,
                record: &record,
            };
            let admitted = admit(inner, task, &call).ok().expect("a valid call");
            let value = json!({"id": "cus_1"});
            let returned = || Case {
                call: &call,
                admitted: Some(&admitted),
                attempt: Attempt::Returned {
                    value: value.clone(),
                    is_error: false,
                    replayed: false,
                    lease: None,
                },
                attempt_no: 3,
            };
            let case = returned();
            let choice = choose(inner, task, &case);
            let stamp = Stamp {
                writer: "",
                id: DecisionId::from_u128(1),
                at: Timestamp::from_millis(1_000),
            };
            let general = settle(inner, task, &case, &choice, None, &stamp);
            let quiet = quietly(inner, task, returned());
            assert_eq!(quiet.is_ok(), general.task.is_none(), "{:?}", record.state);
            let Ok(mut settled) = quiet else {
                loud_seen += 1;
                continue;
            };
            quiet_seen += 1;
            settled.record.id = stamp.id;
            settled.record.at = stamp.at;
            assert_eq!(settled.record, general.record, "{:?}", record.state);
            assert_eq!(settled.step, general.step);
            assert_eq!(settled.context_tokens, general.context_tokens);
            assert!(settled.task.is_none() && settled.intent.is_none() && settled.resend_after.is_none());
        }
        assert!(quiet_seen > 0 && loud_seen > 0, "{quiet_seen} quiet, {loud_seen} not");
    }
}
