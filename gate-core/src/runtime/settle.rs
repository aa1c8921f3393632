//! Settling: a choice made into the step, the task's new state and the
//! decision record, committed together.
//!
//! [`settle`] is pure: from the choice and the token window's answer it
//! builds everything one decision writes, so the commit ([`commit`]) can
//! build it again when a send is repeated. The user's token window answers
//! inside that commit; a window that refuses, like a task budget that
//! refuses what choosing planned, closes and the policy decides again.
//! Every exit of the pipeline ends here, a rejection before the tool ran as
//! much as a success: the same decision, the same commit, the same record.
//!
//! A decision the store did not take ([`unrecorded`]) stands in memory,
//! except a repair, which is not handed out when its guarantees would not
//! survive a restart. A quiet success takes a path of its own (`quiet`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolgate_budget::{Refusal, Reservation, TaskBudget, TokensExhausted, estimate_tokens};
use toolgate_ledger::{
    Action, ApprovalRecord, DecisionId, DecisionRecord, FailureClass, FailureReason, FailureReport, Finish, Lease,
    OpenApproval, State, TaskRecord, TaskState, Timestamp, new_owner_token,
};

use super::admit::Admitted;
use super::attempt::Attempt;
use super::budget::{closed, task_budget};
use super::choose::{Case, Choice, choose};
use super::flow;
use super::gate::Inner;
use super::identity::{message_hash, raw_fingerprint};
use super::messages;
use super::persist::{self, Committed, TokenRequest, Writes, finish_alone};
use super::policy::{Decision, ledger_state};
use super::render::{self, Failure};
use super::step::{Feedback, PendingApproval, Step, ToolCall, ToolOutput};
use super::view::TaskView;
use crate::Effects;

/// Everything one decision produces.
pub(super) struct Settled {
    /// The task's new record, when it changed in more than its context size.
    /// Boxed, like `intent`: a settled success carries neither, and the
    /// struct is moved on every call.
    pub(super) task: Option<Box<TaskRecord>>,
    /// The context size the task has grown to: kept in memory even when
    /// the task is not written.
    pub(super) context_tokens: u64,
    pub(super) record: DecisionRecord,
    pub(super) step: Step,
    /// For an internal retry: the pause before the resend.
    pub(super) resend_after: Option<Duration>,
    /// How the intent the call held ended, committed with the decision.
    pub(super) intent: Option<Box<(Lease, Finish)>>,
    /// The approval request the decision makes, stored with it.
    pub(super) approval: Option<Box<ApprovalRecord>>,
}

impl Writes for Settled {
    fn task(&self) -> Option<&TaskRecord> {
        self.task.as_deref()
    }
    fn decision(&self) -> Option<&DecisionRecord> {
        Some(&self.record)
    }
    fn intent(&self) -> Option<(&Lease, &Finish)> {
        self.intent.as_deref().map(|(lease, finish)| (lease, finish))
    }
    fn approval(&self) -> Option<&ApprovalRecord> {
        self.approval.as_deref()
    }
}

/// A decision's identity in the store, the same on every send of its
/// commit, so that a commit which landed unseen is recognised: the task
/// write's writer token, the record's id and time.
pub(super) struct Stamp<'w> {
    pub(super) writer: &'w str,
    pub(super) id: DecisionId,
    pub(super) at: Timestamp,
}

/// Commits `choice` about `case` once: reserves its tokens in the user's
/// window and writes the queued `earlier` records, the intent's finish, the
/// task's state and the decision record in one transaction, sent again
/// while the store is unavailable.
pub(super) async fn commit(
    gate: &Inner,
    task: TaskView<'_>,
    case: &Case<'_, '_>,
    choice: &Choice,
    earlier: &[DecisionRecord],
) -> Committed<Settled> {
    let limit = gate.budget.token_limit();
    // One writer token and decision id per decision, whatever the number
    // of sends.
    let writer = new_owner_token();
    let at = gate.store.now();
    let stamp = Stamp {
        writer: &writer,
        id: DecisionId::at(at),
        at,
    };
    let tokens = (choice.tokens > 0).then(|| TokenRequest {
        user: task.user,
        limit: &limit,
        tokens: choice.tokens,
    });
    persist::commit_decision(&*gate.store, tokens, earlier, gate.store_patience, |answer| {
        settle(gate, task, case, choice, answer, &stamp)
    })
    .await
}

/// Turns a choice and the window's `answer` into the step, the task's new
/// state and the decision record. Pure: the commit may call it again.
pub(super) fn settle(
    gate: &Inner,
    task: TaskView<'_>,
    case: &Case<'_, '_>,
    choice: &Choice,
    answer: Option<Result<Reservation, TokensExhausted>>,
    stamp: &Stamp<'_>,
) -> Settled {
    let mut budget = task_budget(&gate.budget, &task.record.state, case.attempt.failed_after());
    let (decision, reservation) = under_the_window(choice, answer, &mut budget);
    let effects = case.admitted.map_or(Effects::new(), |a| a.spec().effects());
    let settling = Settling {
        gate,
        task,
        case,
        choice,
        stamp,
        decision,
        effects,
        intent_key: recorded_key(task, case.call, case.admitted),
        failed_state: match (&case.attempt, choice.class) {
            (Attempt::Failed { lease: Some(_), .. }, Some(class)) => Some(ledger_state(class, decision, effects)),
            _ => None,
        },
        budget,
    };
    // The state is copied, the rest of the record only if the task changed.
    let mut state = task.record.state.clone();
    let (step, failure, resend_after) = settling.carry_out(&mut state);
    mark_delivered(case, &mut state);
    if let Some(r) = reservation.filter(|r| r.tokens > 0) {
        state.pending_tokens.push(r);
    }
    state.budget = settling.budget.state();
    let record = settling.record(&step, &mut state);
    let intent = intent_finish(&case.attempt, choice, settling.failed_state);
    let context_tokens = state.context_tokens;
    let approval = match (&case.attempt, &step) {
        (Attempt::AwaitingApproval { request, new: true }, Step::AwaitingApproval(_)) => {
            Some(Box::new(ApprovalRecord {
                call_id: case.call.id.clone(),
                ..ApprovalRecord::clone(request)
            }))
        }
        _ => None,
    };
    Settled {
        task: task_write(task.record, state, failure, stamp.writer),
        context_tokens,
        record,
        step,
        resend_after,
        intent,
        approval,
    }
}

/// A decided request reaches the task when the call it approved runs, or
/// its refusal is given as the call's result: the task stops offering it
/// (`Task::take_decided`), and keeps it for the identical call.
fn mark_delivered(case: &Case<'_, '_>, state: &mut TaskState) {
    let delivered = match (&case.attempt, case.admitted.and_then(Admitted::approved)) {
        (
            Attempt::Declined {
                approval_id: Some(id), ..
            },
            _,
        ) => id.as_str(),
        (_, Some(request)) => request.id.as_str(),
        _ => return,
    };
    for made in state.approvals.iter_mut().filter(|o| o.id == delivered) {
        made.delivered = true;
    }
}

/// The decision once the user's token window answered, and the reservation
/// it made: a window that refused, or task budgets that cannot take the
/// repair planned with the tokens reserved, close and the policy decides
/// again. A reservation the transaction made is the task's to settle,
/// whatever the decision: it is written with it.
fn under_the_window(
    choice: &Choice,
    answer: Option<Result<Reservation, TokensExhausted>>,
    budget: &mut TaskBudget,
) -> (Decision, Option<Reservation>) {
    let (mut decision, reservation) = match answer {
        Some(Ok(reservation)) => (choice.decision, Some(reservation)),
        Some(Err(exhausted)) => (choice.after_refusal(closed(&Refusal::Tokens(exhausted))), None),
        None => (choice.decision, None),
    };
    if decision.is_repair()
        && let Some(plan) = choice.plan
        && let Err(refusal) = budget.commit(plan, reservation.map_or(0, |r| r.tokens))
    {
        decision = choice.after_refusal(closed(&refusal));
    }
    (decision, reservation)
}

/// One decision being settled: its inputs, and what follows from them
/// before the task's state is touched.
struct Settling<'a, 'c> {
    gate: &'a Inner,
    task: TaskView<'a>,
    case: &'a Case<'a, 'c>,
    choice: &'a Choice,
    stamp: &'a Stamp<'a>,
    /// The decision as the budgets left it.
    decision: Decision,
    /// The called tool's effects (none for a call that was not admitted).
    effects: Effects,
    /// The key the record names.
    intent_key: Option<String>,
    /// The state a failed run's intent is left in.
    failed_state: Option<State>,
    /// The task's budgets, this decision's spending included.
    budget: TaskBudget,
}

impl Settling<'_, '_> {
    /// Carries the decision out on the task's `state`: the step, the report
    /// that ends the task (if it does), and the pause before a resend.
    fn carry_out(&self, state: &mut TaskState) -> (Step, Option<FailureReport>, Option<Duration>) {
        let (call, attempt, choice) = (self.case.call, &self.case.attempt, self.choice);
        let feedback = |class: FailureClass, text: String| Feedback {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            class,
            text,
        };
        let step = match self.decision {
            Decision::Reject | Decision::RefuseRepeat => {
                let text = choice.feedback.clone().unwrap_or_default();
                if let Attempt::Refused { message, .. } = attempt {
                    state.episode_rejections.push(message_hash(message));
                }
                state.rejections += 1;
                state.repair_turn_pending = true;
                grow_context(state, &text);
                Step::Reject(feedback(FailureClass::Structural, text))
            }
            Decision::RetryWithCorrection(_) => {
                let text = choice.feedback.clone().unwrap_or_default();
                state.corrections_in_step += 1;
                remember_failed_call(state, &call_fp(self.case));
                state.repair_turn_pending = true;
                grow_context(state, &text);
                Step::Retry(feedback(choice.class.unwrap_or(FailureClass::Transient), text))
            }
            Decision::RetryInternally => {
                let delay = choice.plan.map_or(Duration::ZERO, |p| p.delay());
                let error_text = choice.error_text.as_deref().unwrap_or_default();
                let text = messages::internal_retry(&call.name, error_text, delay);
                let step = Step::Retry(feedback(choice.class.unwrap_or(FailureClass::Transient), text));
                return (step, None, Some(delay));
            }
            Decision::Return => Step::Return(self.returned(state)),
            Decision::AwaitApproval => match attempt {
                Attempt::AwaitingApproval { request, new } => self.awaiting(state, request, *new),
                // Only a waiting call is decided so; anything else is gate's bug.
                _ => {
                    let report = self.failure_report(FailureReason::Internal);
                    return (Step::Fail(Box::new(report)), None, None);
                }
            },
            Decision::Fail(reason) => {
                let report = self.failure_report(reason);
                let ends_task = reason.ends_task().then(|| report.clone());
                return (Step::Fail(Box::new(report)), ends_task, None);
            }
        };
        (step, None, None)
    }

    /// What the model reads of a returned call: the result, or a failure
    /// the policy hands it as an error result.
    fn returned(&self, state: &mut TaskState) -> ToolOutput {
        let (value, is_error, replayed) = match &self.case.attempt {
            Attempt::Returned {
                value,
                is_error,
                replayed,
                ..
            } => {
                // What a tool returned joins what the guard knows the task read.
                flow::note_result(
                    &mut state.flow,
                    self.effects,
                    &self.case.call.name,
                    &self.case.call.id,
                    value,
                );
                (value.clone(), *is_error, *replayed)
            }
            _ => (
                json!({"error": self.choice.error_text.as_deref().unwrap_or_default()}),
                true,
                false,
            ),
        };
        state.corrections_in_step = 0;
        if is_error {
            // The same call would get the same answer (rule 3).
            remember_failed_call(state, &call_fp(self.case));
        } else {
            // A successful call ends the repair episode (rule 1).
            state.episode_rejections.clear();
        }
        // A person's refusal is gate's text, not the tool's: it is not
        // marked as data from outside, whatever the tool reads.
        let effects = match self.case.attempt {
            Attempt::Declined { .. } => Effects::new(),
            _ => self.effects,
        };
        let out = render::output(self.gate.result_sanitizer.as_ref(), value, effects, is_error, replayed);
        grow_context(state, &out.text);
        out
    }

    /// What the model reads of a call that waits for a person; a new
    /// request joins the task's, found by the identical call from now on.
    fn awaiting(&self, state: &mut TaskState, request: &ApprovalRecord, new: bool) -> Step {
        let call = self.case.call;
        if new {
            state.approvals.push(OpenApproval {
                id: request.id.clone(),
                call_fp: call_fp(self.case),
                delivered: false,
            });
        }
        let text = messages::awaiting_approval(&request.tool, &request.id, request.expires_at);
        let text = render::for_model(&self.gate.sanitizer, &text);
        grow_context(state, &text);
        Step::AwaitingApproval(PendingApproval {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            approval_id: request.id.clone(),
            expires_at: request.expires_at,
            text,
        })
    }

    /// The Fail step's report.
    fn failure_report(&self, reason: FailureReason) -> FailureReport {
        let failure = Failure {
            reason,
            class: self.choice.class,
            error_text: self.choice.error_text.as_deref(),
            at: self.stamp.at,
            call_fp: call_fp(self.case),
            intent_key: self.intent_key.as_deref(),
            budget: &self.budget,
            ledger_state: self.failed_state,
        };
        render::failure_report(
            &self.gate.sanitizer,
            self.task,
            self.case.call,
            &self.case.attempt,
            failure,
        )
    }

    /// The record of the decision: what it was, what it spent (the task's
    /// budgets since the last record, now logged in `state`) and what the
    /// model was told.
    fn record(&self, step: &Step, state: &mut TaskState) -> DecisionRecord {
        let spent_tokens = to_i64(state.budget.repair_tokens) - to_i64(state.logged_repair_tokens);
        let added_ms = to_i64(state.budget.added_latency_ms) - to_i64(state.logged_latency_ms);
        state.logged_repair_tokens = state.budget.repair_tokens;
        state.logged_latency_ms = state.budget.added_latency_ms;
        let action = match step {
            Step::Return(out) if out.replayed => Action::Replay,
            _ => self.decision.action(),
        };
        DecisionRecord {
            id: self.stamp.id,
            at: self.stamp.at,
            task_id: self.task.id.clone(),
            user: self.task.user.clone(),
            call_id: self.case.call.id.clone(),
            tool: recorded_tool(self.case.call, self.case.admitted),
            class: self.choice.class,
            action,
            fail_reason: match self.decision {
                Decision::Fail(reason) => Some(reason),
                _ => None,
            },
            attempt: self.case.attempt_no,
            attempts_used: i64::from(state.budget.repairs),
            repair_tokens: spent_tokens,
            latency_added_ms: added_ms,
            message_hash: match step {
                Step::Return(_) => String::new(),
                _ => message_hash(step.model_text()),
            },
            intent_key: self.intent_key.clone(),
        }
    }
}

/// How the intent a run held ends with this decision: a success as it
/// returned, a failure in the state the decision leaves it in.
fn intent_finish(attempt: &Attempt, choice: &Choice, failed_state: Option<State>) -> Option<Box<(Lease, Finish)>> {
    match attempt {
        Attempt::Returned {
            value,
            lease: Some(lease),
            ..
        } => Some(Box::new((Lease::clone(lease), Finish::Succeeded(value.clone())))),
        Attempt::Failed {
            error,
            lease: Some(lease),
            ..
        } => failed_state.map(|state| {
            let error_text = choice.error_text.as_deref().unwrap_or_default();
            let operator_error = messages::operator_cause(error, error_text);
            Box::new((Lease::clone(lease), failure_finish(state, error_text, &operator_error)))
        }),
        _ => None,
    }
}

/// What a failed call's decision means for its intent, as the ledger
/// stores it: `error_text` is what a replay shows the model,
/// `operator_error` what a person reconciling an unknown outcome reads.
fn failure_finish(state: State, error_text: &str, operator_error: &str) -> Finish {
    match state {
        State::FailedPermanent => Finish::FailedPermanent {
            body: json!({"error": error_text}),
            error: error_text.to_owned(),
        },
        State::FailedRetryable => Finish::FailedRetryable {
            error: error_text.to_owned(),
        },
        _ => Finish::OutcomeUnknown {
            error: operator_error.to_owned(),
        },
    }
}

/// The task's new record, when the decision changed it in more than its
/// context size; `failure` ends the task.
fn task_write(
    stored: &TaskRecord,
    state: TaskState,
    failure: Option<FailureReport>,
    writer: &str,
) -> Option<Box<TaskRecord>> {
    let terminal = failure.is_some() || stored.terminal;
    let changed = terminal != stored.terminal || state_changed(&stored.state, &state);
    changed.then(|| {
        Box::new(TaskRecord {
            writer: writer.to_owned(),
            state,
            terminal,
            failure: failure.or_else(|| stored.failure.clone()),
            ..stored.clone()
        })
    })
}

/// The call's fingerprint for rules 1 and 3 (only a failure needs it).
fn call_fp(case: &Case<'_, '_>) -> String {
    match (case.admitted, &case.attempt) {
        (Some(a), _) => a.identity().call_fp.clone(),
        (None, Attempt::Refused { call_fp, .. }) => call_fp.clone(),
        (None, _) => raw_fingerprint(case.call),
    }
}

/// A decision the store did not take (`store_error` says why). A repair
/// that cannot be recorded is not handed out (its guarantees would not
/// survive a restart): the call fails as "store unavailable". Other
/// decisions stand, and the task keeps them in memory until a later write
/// stores them. The intent's finish is sent once on its own: a success it
/// records is returned, a success it cannot record fails as "outcome not
/// recorded", with the value, so a person can record it. A new approval
/// request that was not stored fails as "store unavailable".
pub(super) async fn unrecorded(gate: &Inner, task: TaskView<'_>, case: Case<'_, '_>, store_error: &str) -> Settled {
    let store = &*gate.store;
    let attempt = match case.attempt {
        Attempt::Returned {
            value,
            is_error,
            replayed,
            lease: Some(lease),
        } => {
            if finish_alone(store, &lease, Finish::Succeeded(value.clone())).await {
                Attempt::Returned {
                    value,
                    is_error,
                    replayed,
                    lease: None,
                }
            } else {
                Attempt::NotRecorded {
                    value,
                    error: store_error.to_owned(),
                }
            }
        }
        // A request the store did not take asks nobody: telling the model a
        // person was asked would be untrue.
        Attempt::AwaitingApproval { new: true, .. } => Attempt::StoreDown(store_error.to_owned()),
        other => other,
    };
    let case = Case { attempt, ..case };
    let choice = choose(gate, task, &case).without_repair(FailureReason::LedgerUnavailable);
    // Not committed, so no writer token: the task's next commit writes its own.
    let at = store.now();
    let stamp = Stamp {
        writer: "",
        id: DecisionId::at(at),
        at,
    };
    let mut settled = settle(gate, task, &case, &choice, None, &stamp);
    if let Some(intent) = settled.intent.take() {
        let (lease, finish) = *intent;
        finish_alone(store, &lease, finish).await;
    }
    tracing::error!(
        target: "gate::store",
        error = %store_error,
        task = %task.id,
        call_id = %case.call.id,
        action = %settled.record.action,
        "decision not stored"
    );
    settled
}

/// Counts `text` into the context a repair would replay, while the provider
/// has not reported real usage.
pub(super) fn grow_context(state: &mut TaskState, text: &str) {
    if !state.usage_reported {
        state.context_tokens = state.context_tokens.saturating_add(estimate_tokens(text));
    }
}

/// Whether the task's stored state must be written. The context size alone
/// is not worth a write: it is an estimate, refreshed by the next usage report.
/// (Every field is named, so a new one cannot be forgotten here.)
fn state_changed(old: &TaskState, new: &TaskState) -> bool {
    let TaskState {
        rejections,
        episode_rejections,
        failed_calls,
        corrections_in_step,
        budget,
        context_tokens: _,
        usage_reported: _,
        pending_tokens,
        logged_repair_tokens,
        logged_latency_ms,
        repair_turn_pending,
        approvals,
        flow,
    } = new;
    old.rejections != *rejections
        || old.episode_rejections != *episode_rejections
        || old.failed_calls != *failed_calls
        || old.corrections_in_step != *corrections_in_step
        || old.budget != *budget
        || old.pending_tokens != *pending_tokens
        || old.logged_repair_tokens != *logged_repair_tokens
        || old.logged_latency_ms != *logged_latency_ms
        || old.repair_turn_pending != *repair_turn_pending
        || old.approvals != *approvals
        || old.flow != *flow
}

/// Rule 3's memory: the call that failed, once.
fn remember_failed_call(state: &mut TaskState, call_fp: &str) {
    if !state.failed_calls.iter().any(|fp| fp == call_fp) {
        state.failed_calls.push(call_fp.to_owned());
    }
}

/// The intent key a decision record names: the key the admitted call
/// claims or declares, or, for a call refused before admission, the
/// declared intent's key for the tool it named.
pub(super) fn recorded_key(task: TaskView<'_>, call: &ToolCall, admitted: Option<&Admitted<'_>>) -> Option<String> {
    admitted
        .and_then(|a| a.logged_key(task.id).map(str::to_owned))
        .or_else(|| task.intent_key_for(&call.name))
}

/// The tool a decision record names: the toolbox's own string when the
/// call was admitted, shared; the name as the model sent it otherwise (an
/// unknown tool's, a call refused before admission).
fn recorded_tool(call: &ToolCall, admitted: Option<&Admitted<'_>>) -> Arc<str> {
    admitted.map_or_else(|| Arc::from(call.name.as_str()), |a| a.spec().shared_name().clone())
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
