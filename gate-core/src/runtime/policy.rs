//! The decision: what gate does about a failed call.
//!
//! [`decide`] is a pure function of the tool's declared effects, the failure
//! class, the task's history and the budgets' verdicts. No I/O, no clock, no
//! randomness, and no input from the model: the model never decides whether
//! it gets another try. The table below is the whole policy for a task that
//! is still running (a task that failed runs nothing, rule 7, before any of
//! this); the runtime only gathers the facts and carries the decision out.
//! [`ledger_state`] says, from the same facts, what the decision leaves a
//! side-effecting call's intent in.
//!
//! | class | decision |
//! |---|---|
//! | structural | **Reject** with the fix; **Fail** if the same rejection was already given in this repair episode, since the task's last successful call (rule 1), the task's rejection cap is reached (rule 2), or a budget is spent |
//! | structural, repeating a failed call | **Refuse** the hopeful retry (a rejection, under rules 1 and 2) (rule 3) |
//! | ambiguous, retry-safe tool | **Retry with a correction** (discovery tool, widen hint); an unreadable answer is retried as is; **Fail** after one correction per step or when a budget is spent |
//! | ambiguous, other tools | **Fail** |
//! | transient (nothing happened) | **Retry** the same call after a backoff, within the attempt and latency budgets |
//! | outcome unknown, retry-safe tool | **Retry** with the same intent key, within budgets |
//! | outcome unknown, other tools | **Fail and reconcile**; no budget can change this |
//! | definitive | **Return** the error to the model as the tool's result |
//! | internal | **Fail** |

use gate_ledger::{Action, Ambiguity, FailReason, FailureClass, State};

use crate::Effects;

/// What the task has already seen; gathered by the runtime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// This rejection message was already given in the current repair
    /// episode (since the task's last successful call).
    pub same_rejection_before: bool,
    /// Rejections given in this task so far.
    pub rejections: u32,
    /// The most rejections a task may receive (default 2).
    pub rejection_cap: u32,
    /// The call equals (tool and arguments) a call that already failed.
    pub repeats_failed_call: bool,
    /// Corrections already given in the current step (since the last success).
    pub corrections_in_step: u32,
    /// The most corrections per step (default 1).
    pub corrections_per_step: u32,
}

/// Whether each budget allows one more repair. The runtime asks the budgets;
/// the policy only reads their answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetVerdict {
    /// Repairs per task.
    pub attempts: bool,
    /// Repair tokens in the user's rolling window.
    pub tokens: bool,
    /// Wall-clock latency the task may still add.
    pub latency: bool,
}

impl BudgetVerdict {
    /// Every budget allows a repair.
    pub const OPEN: BudgetVerdict = BudgetVerdict {
        attempts: true,
        tokens: true,
        latency: true,
    };
}

/// Everything [`decide`] depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Situation {
    /// The tool's declared effects.
    pub effects: Effects,
    /// The failure class (for ambiguous failures, with the correction that fits).
    pub class: FailureClass,
    /// What the task has seen.
    pub history: History,
    /// What the budgets allow.
    pub budget: BudgetVerdict,
}

/// What to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Give the failure to the model as the tool's (error) result.
    Return,
    /// Tell the model exactly what to change.
    Reject,
    /// Refuse a call that repeats a failed one unchanged (rule 3).
    RefuseRepeat,
    /// Tell the model what to do differently, then let it call again.
    RetryWithCorrection(Ambiguity),
    /// Run the same call again after a backoff, without involving the model.
    RetryInternally,
    /// Stop the task with a report.
    Fail(FailReason),
}

impl Decision {
    /// The action the decision log records for it.
    pub const fn action(self) -> Action {
        match self {
            Decision::Return => Action::Return,
            Decision::Reject | Decision::RefuseRepeat => Action::Reject,
            Decision::RetryWithCorrection(_) => Action::RetryWithCorrection,
            Decision::RetryInternally => Action::RetryInternally,
            Decision::Fail(_) => Action::Fail,
        }
    }

    /// Whether the decision is a repair the budgets must allow.
    pub const fn is_repair(self) -> bool {
        matches!(
            self,
            Decision::Reject | Decision::RefuseRepeat | Decision::RetryWithCorrection(_) | Decision::RetryInternally
        )
    }
}

/// The policy. See the module docs for the table.
pub fn decide(s: &Situation) -> Decision {
    use Decision::*;
    use FailureClass as C;
    let h = s.history;
    let retry_safe = s.effects.is_retry_safe();
    match s.class {
        C::Structural => {
            if h.same_rejection_before {
                Fail(FailReason::NotActionable)
            } else if h.rejections >= h.rejection_cap {
                Fail(FailReason::RejectionCap)
            } else if let Some(reason) = model_repair_budget(s.budget) {
                Fail(reason)
            } else if h.repeats_failed_call {
                RefuseRepeat
            } else {
                Reject
            }
        }
        C::Ambiguous(_) if !retry_safe => Fail(FailReason::UnsafeToRetry),
        C::Ambiguous(Ambiguity::Unreadable) => internal_retry(s.budget),
        C::Ambiguous(ambiguity) => {
            if h.corrections_in_step >= h.corrections_per_step {
                Fail(FailReason::CorrectionDidNotHelp)
            } else if let Some(reason) = model_repair_budget(s.budget) {
                Fail(reason)
            } else {
                RetryWithCorrection(ambiguity)
            }
        }
        C::Transient => internal_retry(s.budget),
        // Rule: a budget can never turn an unknown outcome into a retry; only
        // the declared effects can.
        C::OutcomeUnknown if retry_safe => internal_retry(s.budget),
        C::OutcomeUnknown => Fail(FailReason::OutcomeUnknown),
        C::Definitive => Return,
        C::Internal => Fail(FailReason::Internal),
    }
}

/// A repair that goes through the model costs an attempt, tokens, and the
/// model's turn in wall-clock time: all three budgets must allow it.
fn model_repair_budget(b: BudgetVerdict) -> Option<FailReason> {
    if !b.attempts {
        Some(FailReason::AttemptBudget)
    } else if !b.tokens {
        Some(FailReason::TokenBudget)
    } else if !b.latency {
        Some(FailReason::LatencyBudget)
    } else {
        None
    }
}

/// A retry without the model costs an attempt and latency.
fn internal_retry(b: BudgetVerdict) -> Decision {
    if !b.attempts {
        Decision::Fail(FailReason::AttemptBudget)
    } else if !b.latency {
        Decision::Fail(FailReason::LatencyBudget)
    } else {
        Decision::RetryInternally
    }
}

/// The state a failed call leaves its intent in, from the same facts as the
/// decision: one function, so the ledger and the failure report can never
/// disagree.
///
/// A definitive answer is stored and replayed; a failure that will be retried
/// (or where nothing happened) leaves the intent free for a new attempt; an
/// ambiguous answer that is not retried is stored like a definitive one; what
/// is left (timeouts, lost connections after sending, unreadable answers,
/// crashes while dispatched) may have had its effect, so only an idempotent
/// tool may run it again.
pub fn ledger_state(class: FailureClass, decision: Decision, effects: Effects) -> State {
    match (class, decision) {
        (FailureClass::Definitive, _) => State::FailedPermanent,
        (_, Decision::RetryInternally | Decision::RetryWithCorrection(_)) | (FailureClass::Transient, _) => {
            State::FailedRetryable
        }
        (FailureClass::Ambiguous(a), _) if a != Ambiguity::Unreadable => State::FailedPermanent,
        _ if effects.is_idempotent() => State::FailedRetryable,
        _ => State::OutcomeUnknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Decision::*;
    use FailureClass as C;

    /// All 12 consistent effect combinations.
    fn effect_combinations() -> Vec<Effects> {
        let mut all = Vec::new();
        for bits in 0u8..16 {
            let mut e = Effects::new();
            if bits & 1 != 0 {
                e = e.read_only();
            }
            if bits & 2 != 0 {
                e = e.idempotent();
            }
            if bits & 4 != 0 {
                e = e.destructive();
            }
            if bits & 8 != 0 {
                e = e.external();
            }
            if e.check().is_ok() {
                all.push(e);
            }
        }
        all
    }

    fn budgets() -> Vec<(&'static str, BudgetVerdict)> {
        let open = BudgetVerdict::OPEN;
        vec![
            ("open", open),
            (
                "no attempts",
                BudgetVerdict {
                    attempts: false,
                    ..open
                },
            ),
            ("no tokens", BudgetVerdict { tokens: false, ..open }),
            ("no latency", BudgetVerdict { latency: false, ..open }),
        ]
    }

    fn histories() -> Vec<(&'static str, History)> {
        let fresh = History {
            rejection_cap: 2,
            corrections_per_step: 1,
            ..History::default()
        };
        vec![
            ("fresh", fresh),
            (
                "same rejection before",
                History {
                    same_rejection_before: true,
                    rejections: 1,
                    ..fresh
                },
            ),
            ("rejection cap reached", History { rejections: 2, ..fresh }),
            (
                "repeats a failed call",
                History {
                    repeats_failed_call: true,
                    ..fresh
                },
            ),
            (
                "correction given this step",
                History {
                    corrections_in_step: 1,
                    ..fresh
                },
            ),
        ]
    }

    /// The expected decision, written as the policy table reads, row by row.
    fn expected(effects: Effects, class: C, h: History, b: BudgetVerdict) -> Decision {
        let safe = effects.is_idempotent();
        let model_budget = if !b.attempts {
            Some(Fail(FailReason::AttemptBudget))
        } else if !b.tokens {
            Some(Fail(FailReason::TokenBudget))
        } else if !b.latency {
            Some(Fail(FailReason::LatencyBudget))
        } else {
            None
        };
        let internal = if !b.attempts {
            Fail(FailReason::AttemptBudget)
        } else if !b.latency {
            Fail(FailReason::LatencyBudget)
        } else {
            RetryInternally
        };
        match (class, safe) {
            (C::Structural, _) if h.same_rejection_before => Fail(FailReason::NotActionable),
            (C::Structural, _) if h.rejections >= 2 => Fail(FailReason::RejectionCap),
            (C::Structural, _) if model_budget.is_some() => model_budget.unwrap_or(Reject),
            (C::Structural, _) if h.repeats_failed_call => RefuseRepeat,
            (C::Structural, _) => Reject,
            (C::Ambiguous(_), false) => Fail(FailReason::UnsafeToRetry),
            (C::Ambiguous(Ambiguity::Unreadable), true) => internal,
            (C::Ambiguous(_), true) if h.corrections_in_step >= 1 => Fail(FailReason::CorrectionDidNotHelp),
            (C::Ambiguous(a), true) => model_budget.unwrap_or(RetryWithCorrection(a)),
            (C::Transient, _) => internal,
            (C::OutcomeUnknown, true) => internal,
            (C::OutcomeUnknown, false) => Fail(FailReason::OutcomeUnknown),
            (C::Definitive, _) => Return,
            (C::Internal, _) => Fail(FailReason::Internal),
        }
    }

    #[test]
    fn every_class_effect_budget_and_history_gets_the_tabled_decision() {
        let mut rows = 0;
        for effects in effect_combinations() {
            for &class in C::ALL {
                for (bname, budget) in budgets() {
                    for (hname, history) in histories() {
                        let s = Situation {
                            effects,
                            class,
                            history,
                            budget,
                        };
                        let want = expected(effects, class, history, budget);
                        assert_eq!(decide(&s), want, "{effects:?} {class:?} budget={bname} history={hname}");
                        rows += 1;
                    }
                }
            }
        }
        assert_eq!(effect_combinations().len(), 12);
        assert_eq!(rows, 12 * 8 * 4 * 5);
    }

    /// What each decision leaves a side-effecting call's intent in, row by
    /// row from what happened to the world.
    #[test]
    fn the_ledger_state_follows_what_may_have_happened() {
        use Ambiguity::{Unreadable, WrongTarget};
        use State::*;
        let charge = Effects::new().destructive().external();
        let refund = Effects::new().destructive().idempotent();
        let rows = [
            // A definitive answer is stored and replayed.
            (C::Definitive, Return, charge, FailedPermanent),
            // Nothing happened: a new attempt may take the intent.
            (C::Transient, RetryInternally, charge, FailedRetryable),
            (C::Transient, Fail(FailReason::AttemptBudget), charge, FailedRetryable),
            // An ambiguous answer that is not retried is stored like a definitive one.
            (
                C::Ambiguous(WrongTarget),
                Fail(FailReason::UnsafeToRetry),
                charge,
                FailedPermanent,
            ),
            (
                C::Ambiguous(WrongTarget),
                RetryWithCorrection(WrongTarget),
                refund,
                FailedRetryable,
            ),
            // An unreadable answer to a charge may hide a charge.
            (
                C::Ambiguous(Unreadable),
                Fail(FailReason::UnsafeToRetry),
                charge,
                OutcomeUnknown,
            ),
            (
                C::OutcomeUnknown,
                Fail(FailReason::OutcomeUnknown),
                charge,
                OutcomeUnknown,
            ),
            (C::OutcomeUnknown, RetryInternally, refund, FailedRetryable),
            (
                C::OutcomeUnknown,
                Fail(FailReason::AttemptBudget),
                refund,
                FailedRetryable,
            ),
            // A crash while dispatched: only an idempotent tool may run again.
            (C::Internal, Fail(FailReason::Internal), charge, OutcomeUnknown),
            (C::Internal, Fail(FailReason::Internal), refund, FailedRetryable),
        ];
        for (class, decision, effects, state) in rows {
            assert_eq!(
                ledger_state(class, decision, effects),
                state,
                "{class} {decision:?} {effects:?}"
            );
        }
    }

    #[test]
    fn no_budget_turns_an_unknown_outcome_of_an_unsafe_tool_into_a_retry() {
        for effects in effect_combinations().into_iter().filter(|e| !e.is_idempotent()) {
            for (_, budget) in budgets() {
                for (_, history) in histories() {
                    let s = Situation {
                        effects,
                        class: C::OutcomeUnknown,
                        history,
                        budget,
                    };
                    assert_eq!(decide(&s), Fail(FailReason::OutcomeUnknown));
                }
            }
        }
    }

    #[test]
    fn retries_happen_only_for_retry_safe_tools_or_when_nothing_happened() {
        for effects in effect_combinations() {
            for &class in C::ALL {
                let s = Situation {
                    effects,
                    class,
                    history: History {
                        rejection_cap: 2,
                        corrections_per_step: 1,
                        ..History::default()
                    },
                    budget: BudgetVerdict::OPEN,
                };
                let retried = matches!(decide(&s), RetryInternally | RetryWithCorrection(_));
                if retried {
                    assert!(
                        effects.is_idempotent() || class == C::Transient,
                        "{effects:?} {class:?}"
                    );
                }
            }
        }
    }
}
