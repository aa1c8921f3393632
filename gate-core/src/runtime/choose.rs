//! Choosing: the policy's decision about an attempt, under the budgets the
//! task and the gate can answer before anything is written.
//!
//! [`choose`] classifies a failure, gathers the task's history, asks
//! [`decide`], and, for a repair, asks the task's own budgets (attempts and
//! latency, from its stored state) and the gate's retry budget. The user's
//! token window answers later, inside the commit that records the decision
//! (`settle`), since it is shared by every worker. A budget that refuses
//! closes and the same policy decides again ([`Choice::after_refusal`], the
//! one place that is written): a budget can refuse a repair, never create
//! one.
//!
//! Choosing changes nothing: it runs again whenever the commit must be
//! redone (another worker changed the task, the ledger refused the intent's
//! finish, the store stayed down), so the retry budget is only read here,
//! and a resend is paid for where it happens (`Task::handle`). The one thing
//! it draws on is the backoff's random jitter.

use std::time::Duration;

use serde_json::Value;
use toolgate_budget::{Pushback, RepairPlan, repair_cost};
use toolgate_ledger::{FailureClass, FailureReason};

use super::admit::Admitted;
use super::attempt::Attempt;
use super::budget::{RESENDS_REFUSED, closed, task_budget};
use super::class::classify;
use super::gate::Inner;
use super::identity::message_hash;
use super::messages;
use super::policy::{BudgetVerdict, Decision, History, Situation, decide};
use super::render;
use super::step::ToolCall;
use super::view::TaskView;
use crate::{Effects, ToolError};

/// One attempt as the decision takes it: the call, what admission made of
/// it (`None` when it was refused before), what the attempt came to, and
/// which attempt of the call it was (gate's own resends count up).
pub(super) struct Case<'a, 'c> {
    pub(super) call: &'a ToolCall,
    pub(super) admitted: Option<&'a Admitted<'c>>,
    pub(super) attempt: Attempt,
    pub(super) attempt_no: i64,
}

/// The decision before the token window answered.
pub(super) struct Choice {
    pub(super) decision: Decision,
    pub(super) class: Option<FailureClass>,
    /// For a repair: the situation, to decide again if a budget refuses.
    situation: Option<Situation>,
    /// For a repair the task's budgets allow: what it spends of them.
    pub(super) plan: Option<RepairPlan>,
    /// Tokens the repair needs from the user's window.
    pub(super) tokens: u64,
    /// The sanitized text a repair shows the model.
    pub(super) feedback: Option<String>,
    /// The sanitized error of a failed tool call.
    pub(super) error_text: Option<String>,
}

impl Choice {
    /// A decision no budget is asked about.
    pub(super) fn fixed(decision: Decision, class: Option<FailureClass>) -> Self {
        Choice {
            decision,
            class,
            situation: None,
            plan: None,
            tokens: 0,
            feedback: None,
            error_text: None,
        }
    }

    /// The choice where a repair cannot be handed out: a repair fails for
    /// `reason` (the error a failed run gave is kept for the report);
    /// every other decision stands.
    pub(super) fn without_repair(self, reason: FailureReason) -> Choice {
        if !self.decision.is_repair() {
            return self;
        }
        Choice {
            error_text: self.error_text,
            ..Choice::fixed(Decision::Fail(reason), self.class)
        }
    }

    /// The decision once `budget` refused the repair chosen: the same
    /// situation with that budget closed, decided again. A decision no
    /// budget was asked about stands.
    pub(super) fn after_refusal(&self, budget: BudgetVerdict) -> Decision {
        match &self.situation {
            Some(situation) => decide(&Situation { budget, ..*situation }),
            None => self.decision,
        }
    }
}

/// The policy's decision about `case` in `task` and, for a repair, what the
/// task's own budgets and the gate's retry budget allow.
pub(super) fn choose(gate: &Inner, task: TaskView<'_>, case: &Case<'_, '_>) -> Choice {
    let choice = wanted(gate, task, case);
    if choice.decision.is_repair() {
        under_the_budgets(gate, task, case, choice)
    } else {
        choice
    }
}

/// What the policy wants for `case` before any budget is asked, with the
/// texts a repair would show.
fn wanted(gate: &Inner, task: TaskView<'_>, case: &Case<'_, '_>) -> Choice {
    let state = &task.record.state;
    let (class, situation, feedback, error_text) = match &case.attempt {
        Attempt::TaskFailed => return Choice::fixed(Decision::Fail(FailureReason::TaskFailed), None),
        Attempt::StoreDown(_) => return Choice::fixed(Decision::Fail(FailureReason::LedgerUnavailable), None),
        // Another worker failed the task while this call was deciding.
        _ if task.record.terminal => return Choice::fixed(Decision::Fail(FailureReason::TaskFailed), None),
        Attempt::Returned { .. } => return Choice::fixed(Decision::Return, None),
        Attempt::NotRecorded { .. } => return Choice::fixed(Decision::Fail(FailureReason::OutcomeNotRecorded), None),
        Attempt::Stopped { reason, class, .. } => return Choice::fixed(Decision::Fail(*reason), *class),
        Attempt::AwaitingApproval { .. } => return Choice::fixed(Decision::AwaitApproval, None),
        // A person's refusal is the call's definitive answer.
        Attempt::Declined { text, .. } => {
            return Choice {
                error_text: Some(text.clone()),
                ..Choice::fixed(Decision::Return, Some(FailureClass::Definitive))
            };
        }
        Attempt::Refused {
            message,
            call_fp,
            repeat,
        } => {
            let mut history = history(gate, task, call_fp);
            history.repeats_failed_call = *repeat;
            history.same_rejection_before = state.episode_rejections.contains(&message_hash(message));
            let situation = Situation {
                effects: Effects::new(),
                class: FailureClass::Structural,
                history,
                budget: BudgetVerdict::OPEN,
            };
            let feedback = render::for_model(&gate.sanitizer, message);
            (FailureClass::Structural, situation, feedback, None)
        }
        Attempt::Failed { error, .. } => {
            let class = classify(error);
            let (effects, call_fp, args) = match case.admitted {
                Some(a) => (a.spec().effects(), a.identity().call_fp.as_str(), &a.identity().args),
                None => (Effects::new(), "", &Value::Null),
            };
            let error_text = render::tool_error(&gate.sanitizer, error, args);
            let spec = case.admitted.map(Admitted::spec);
            let correction = messages::correction(
                &case.call.name,
                spec.and_then(|s| s.discovery()),
                spec.and_then(|s| s.widen()),
                class.ambiguity(),
                &error_text,
            );
            let situation = Situation {
                effects,
                class,
                history: history(gate, task, call_fp),
                budget: BudgetVerdict::OPEN,
            };
            let feedback = render::for_model(&gate.sanitizer, &correction);
            (class, situation, feedback, Some(error_text))
        }
    };
    Choice {
        decision: decide(&situation),
        class: Some(class),
        situation: Some(situation),
        plan: None,
        tokens: 0,
        feedback: Some(feedback),
        error_text,
    }
}

/// The repair `choice` wants, as the task's budgets and the gate's retry
/// budget leave it: planned (with the tokens it needs from the user's
/// window), or decided again with the budget that refused closed.
fn under_the_budgets(gate: &Inner, task: TaskView<'_>, case: &Case<'_, '_>, mut choice: Choice) -> Choice {
    let state = &task.record.state;
    let budget = task_budget(&gate.budget, state, case.attempt.failed_after());
    let internal = choice.decision == Decision::RetryInternally;
    let planned = if internal {
        let pushback = match &case.attempt {
            Attempt::Failed {
                error: ToolError::RateLimited { retry_after },
                ..
            } => Pushback::from(*retry_after),
            _ => Pushback::None,
        };
        let mut rng = gate.rng.lock().unwrap_or_else(|p| p.into_inner());
        budget.plan_retry(pushback, Duration::ZERO, &mut *rng)
    } else {
        budget.plan_reject(Duration::ZERO)
    };
    match planned {
        // Asked last, so a resend the task's own budgets refuse is not
        // measured against the budget every call shares.
        Ok(_) if internal && !resend_available(gate) => choice.decision = choice.after_refusal(RESENDS_REFUSED),
        Ok(plan) => {
            choice.plan = Some(plan);
            // The model is not involved in an internal retry: no tokens are replayed.
            if !internal {
                let text = choice.feedback.as_deref().unwrap_or_default();
                choice.tokens = repair_cost(state.context_tokens, text);
            }
        }
        Err(refusal) => choice.decision = choice.after_refusal(closed(&refusal)),
    }
    choice
}

/// Whether the gate's retry budget, if it has one, holds a resend now.
/// Only read: the resend withdraws it once it is recorded and happens.
fn resend_available(gate: &Inner) -> bool {
    gate.retry_budget.as_ref().is_none_or(|b| b.available() > 0)
}

/// What the policy reads of the task's history for a call with
/// fingerprint `call_fp`.
fn history(gate: &Inner, task: TaskView<'_>, call_fp: &str) -> History {
    let state = &task.record.state;
    History {
        same_rejection_before: false,
        rejections: state.rejections,
        rejection_cap: gate.rejection_cap,
        repeats_failed_call: state.failed_calls.iter().any(|fp| fp == call_fp),
        corrections_in_step: state.corrections_in_step,
        corrections_per_step: gate.corrections_per_step,
    }
}
