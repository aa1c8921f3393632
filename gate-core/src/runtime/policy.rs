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
//! | structural (unknown tool, invalid arguments, scope not granted) | **Reject** with the fix; **Fail** if the same rejection was already given in this repair episode, since the task's last successful call (rule 1), the task's rejection cap is reached (rule 2), or a budget is spent |
//! | a call equal to one that already failed (ambiguous, definitive, rejected) | **Refuse** the hopeful retry without running it (a rejection, under rules 1 and 2) (rule 3) |
//! | ambiguous (403 without body, not found, empty), retry-safe tool | **Retry with a correction** (discovery tool, widen hint); **Fail** after one correction per step or when a budget is spent |
//! | ambiguous: unreadable answer, retry-safe tool | **Return** the failure to the model: its arguments were valid, no correction can be named, and resending the same bytes would be a hopeful retry (rule 3), so the identical call is refused from then on |
//! | ambiguous, other tools | **Fail** |
//! | transient (nothing happened) | **Retry** the same call after a backoff, within the attempt, latency and retry budgets |
//! | outcome unknown, tool resend-safe (`read_only`, `idempotent`, `keyed`) | **Retry** with the same intent key, within the attempt, latency and retry budgets |
//! | outcome unknown, other tools | **Fail and reconcile**; no budget can change this |
//! | definitive | **Return** the error to the model as the tool's result |
//! | internal | **Fail** |
//!
//! The rules the table, the runtime and the docs cite by number hold over
//! every class:
//!
//! 1. Never the same rejection twice: a call that earns a rejection message
//!    already given in the current repair episode (since the task's last
//!    successful call) is not actionable: **Fail**.
//! 2. Rejections per task are capped (default 2); the next one **Fails**.
//! 3. A retry must change something: a call whose tool and canonical
//!    arguments equal a call that already failed (ambiguous, definitive or
//!    rejected) is a hopeful retry, refused without running the tool.
//! 4. Budgets (repairs per task, added latency per task, repair tokens per
//!    user over a rolling window, and gate's own resends as a share of first
//!    attempts) are asked only after the policy chose a repair: a budget can
//!    refuse a repair, never create one, and never turn an unknown outcome
//!    into a retry.
//! 5. The decision is a pure function of the declared effects, the failure
//!    class, the task's history and the budgets' verdicts ([`decide`]); the
//!    model never decides.
//! 6. Every text that reaches the model passes the sanitizer.
//! 7. A failed task is terminal: every later call in it returns **Fail**
//!    without running anything, until a person reopens it.
//! 8. A corrected retry is a new attempt of the same intent: under
//!    `task.intent(..)` the corrected call runs under the same intent key
//!    with its new arguments, instead of being refused as a reused key.

use toolgate_ledger::{Action, Ambiguity, FailureClass, FailureReason, State};

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
    /// The gate's retry budget (resends as a share of first attempts, across
    /// calls) allows one more retry without the model. Repairs through the
    /// model do not ask it: each costs a model turn and repair tokens, which
    /// the token window meters, while a resend runs at machine speed.
    pub retries: bool,
}

impl BudgetVerdict {
    /// Every budget allows a repair.
    pub const OPEN: BudgetVerdict = BudgetVerdict {
        attempts: true,
        tokens: true,
        latency: true,
        retries: true,
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
#[non_exhaustive]
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
    Fail(FailureReason),
    /// The call waits for a person's approval; nothing runs until one
    /// agrees. Never [`decide`]'s answer (a failure is not a reason to ask
    /// a person): the approval stage takes it before the call runs.
    AwaitApproval,
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
            Decision::AwaitApproval => Action::AwaitApproval,
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
                Fail(FailureReason::NotActionable)
            } else if h.rejections >= h.rejection_cap {
                Fail(FailureReason::RejectionCap)
            } else if let Some(reason) = model_repair_budget(s.budget) {
                Fail(reason)
            } else if h.repeats_failed_call {
                RefuseRepeat
            } else {
                Reject
            }
        }
        C::Ambiguous(_) if !retry_safe => Fail(FailureReason::UnsafeToRetry),
        // No correction can be named and the same bytes would most likely get
        // the same answer: the model hears the failure and plans around it.
        C::Ambiguous(Ambiguity::Unreadable) => Return,
        C::Ambiguous(ambiguity) => {
            if h.corrections_in_step >= h.corrections_per_step {
                Fail(FailureReason::CorrectionDidNotHelp)
            } else if let Some(reason) = model_repair_budget(s.budget) {
                Fail(reason)
            } else {
                RetryWithCorrection(ambiguity)
            }
        }
        C::Transient => internal_retry(s.budget),
        // Rule: a budget can never turn an unknown outcome into a retry; only
        // the declared effects can.
        C::OutcomeUnknown if s.effects.is_resend_safe() => internal_retry(s.budget),
        C::OutcomeUnknown => Fail(FailureReason::OutcomeUnknown),
        C::Definitive => Return,
        C::Internal => Fail(FailureReason::Internal),
    }
}

/// A repair that goes through the model costs an attempt, tokens, and the
/// model's turn in wall-clock time: all three budgets must allow it.
fn model_repair_budget(b: BudgetVerdict) -> Option<FailureReason> {
    if !b.attempts {
        Some(FailureReason::AttemptBudget)
    } else if !b.tokens {
        Some(FailureReason::TokenBudget)
    } else if !b.latency {
        Some(FailureReason::LatencyBudget)
    } else {
        None
    }
}

/// A retry without the model costs an attempt, latency, and a share of the
/// dependency's traffic.
fn internal_retry(b: BudgetVerdict) -> Decision {
    if !b.attempts {
        Decision::Fail(FailureReason::AttemptBudget)
    } else if !b.latency {
        Decision::Fail(FailureReason::LatencyBudget)
    } else if !b.retries {
        Decision::Fail(FailureReason::RetryBudget)
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
/// tool may run it again. A `keyed` tool that is not idempotent stays
/// OutcomeUnknown once gate stops resending it: the key protects a resend
/// of the same call, not the new arguments a later attempt may bring.
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

    /// Every consistent combination of the six effect flags.
    fn effect_combinations() -> Vec<Effects> {
        let mut all = Vec::new();
        for bits in 0u8..64 {
            let mut e = Effects::new();
            let flags: [fn(Effects) -> Effects; 6] = [
                Effects::read_only,
                Effects::idempotent,
                Effects::writes,
                Effects::destructive,
                Effects::external,
                Effects::keyed,
            ];
            for (i, flag) in flags.iter().enumerate() {
                if bits & (1 << i) != 0 {
                    e = flag(e);
                }
            }
            if e.check().is_ok() && !all.contains(&e) {
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
                "no_attempts",
                BudgetVerdict {
                    attempts: false,
                    ..open
                },
            ),
            ("no_tokens", BudgetVerdict { tokens: false, ..open }),
            ("no_latency", BudgetVerdict { latency: false, ..open }),
            ("no_retries", BudgetVerdict { retries: false, ..open }),
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
                "same_rejection",
                History {
                    same_rejection_before: true,
                    rejections: 1,
                    ..fresh
                },
            ),
            ("cap_reached", History { rejections: 2, ..fresh }),
            (
                "repeat",
                History {
                    repeats_failed_call: true,
                    ..fresh
                },
            ),
            (
                "corrected",
                History {
                    corrections_in_step: 1,
                    ..fresh
                },
            ),
        ]
    }

    /// The policy as a table, written from the module docs (and the README's
    /// decision table), not from `decide`. Columns: class, effects (`safe`:
    /// read-only or idempotent; `keyed`: keyed but not idempotent; `unsafe`:
    /// the rest), history, budget, decision. `*` is any value, `a|b` either;
    /// every situation must match exactly one row.
    const TABLE: &str = "
        structural      *            same_rejection                  *           fail not_actionable
        structural      *            cap_reached                     *           fail rejection_cap
        structural      *            fresh|corrected|repeat          no_attempts fail attempt_budget
        structural      *            fresh|corrected|repeat          no_tokens   fail token_budget
        structural      *            fresh|corrected|repeat          no_latency  fail latency_budget
        structural      *            fresh|corrected                 open|no_retries  reject
        structural      *            repeat                          open|no_retries  refuse_repeat
        ambiguous_wrong_target|ambiguous_nothing_found|ambiguous_unreadable  keyed|unsafe  *  *  fail unsafe_to_retry
        ambiguous_wrong_target|ambiguous_nothing_found  safe  corrected                      *           fail correction_did_not_help
        ambiguous_wrong_target|ambiguous_nothing_found  safe  fresh|same_rejection|cap_reached|repeat  open|no_retries  retry_with_correction
        ambiguous_wrong_target|ambiguous_nothing_found  safe  fresh|same_rejection|cap_reached|repeat  no_attempts  fail attempt_budget
        ambiguous_wrong_target|ambiguous_nothing_found  safe  fresh|same_rejection|cap_reached|repeat  no_tokens    fail token_budget
        ambiguous_wrong_target|ambiguous_nothing_found  safe  fresh|same_rejection|cap_reached|repeat  no_latency   fail latency_budget
        ambiguous_unreadable  safe   *                               *           return
        transient       *            *                               open|no_tokens  retry_internally
        transient       *            *                               no_attempts fail attempt_budget
        transient       *            *                               no_latency  fail latency_budget
        transient       *            *                               no_retries  fail retry_budget
        outcome_unknown unsafe       *                               *           fail outcome_unknown
        outcome_unknown safe|keyed   *                               open|no_tokens  retry_internally
        outcome_unknown safe|keyed   *                               no_attempts fail attempt_budget
        outcome_unknown safe|keyed   *                               no_latency  fail latency_budget
        outcome_unknown safe|keyed   *                               no_retries  fail retry_budget
        definitive      *            *                               *           return
        internal        *            *                               *           fail internal
    ";

    fn effect_kind(e: Effects) -> &'static str {
        if e.is_idempotent() {
            "safe"
        } else if e.is_keyed() {
            "keyed"
        } else {
            "unsafe"
        }
    }

    fn matches(pattern: &str, value: &str) -> bool {
        pattern == "*" || pattern.split('|').any(|p| p == value)
    }

    fn decision_named(words: &[&str], class: C) -> Decision {
        match words {
            ["reject"] => Reject,
            ["refuse_repeat"] => RefuseRepeat,
            ["return"] => Return,
            ["retry_internally"] => RetryInternally,
            ["retry_with_correction"] => RetryWithCorrection(class.ambiguity().expect("an ambiguous class")),
            ["fail", reason] => Fail(reason.parse().expect("a fail reason")),
            other => panic!("unknown decision {other:?} in the table"),
        }
    }

    #[test]
    fn every_class_effect_budget_and_history_gets_the_tabled_decision() {
        let rows: Vec<Vec<&str>> = TABLE
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|w| !w.is_empty())
            .collect();
        let mut used = vec![0usize; rows.len()];
        let mut situations = 0;
        for effects in effect_combinations() {
            for &class in C::ALL {
                for (bname, budget) in budgets() {
                    for (hname, history) in histories() {
                        let key = [class.as_str(), effect_kind(effects), hname, bname];
                        let hits: Vec<usize> = (0..rows.len())
                            .filter(|&i| key.iter().zip(&rows[i][..4]).all(|(v, p)| matches(p, v)))
                            .collect();
                        assert_eq!(hits.len(), 1, "{key:?} matches rows {hits:?}");
                        let want = decision_named(&rows[hits[0]][4..], class);
                        let s = Situation {
                            effects,
                            class,
                            history,
                            budget,
                        };
                        assert_eq!(decide(&s), want, "{effects:?} {key:?}");
                        used[hits[0]] += 1;
                        situations += 1;
                    }
                }
            }
        }
        assert!(used.iter().all(|n| *n > 0), "a row matches nothing: {used:?}");
        assert_eq!(effect_combinations().len(), 26);
        assert_eq!(situations, 26 * 8 * 5 * 5);
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
            (
                C::Transient,
                Fail(FailureReason::AttemptBudget),
                charge,
                FailedRetryable,
            ),
            // An ambiguous answer that is not retried is stored like a definitive one.
            (
                C::Ambiguous(WrongTarget),
                Fail(FailureReason::UnsafeToRetry),
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
                Fail(FailureReason::UnsafeToRetry),
                charge,
                OutcomeUnknown,
            ),
            (
                C::OutcomeUnknown,
                Fail(FailureReason::OutcomeUnknown),
                charge,
                OutcomeUnknown,
            ),
            (C::OutcomeUnknown, RetryInternally, refund, FailedRetryable),
            (
                C::OutcomeUnknown,
                Fail(FailureReason::AttemptBudget),
                refund,
                FailedRetryable,
            ),
            // A crash while dispatched: only an idempotent tool may run again.
            (C::Internal, Fail(FailureReason::Internal), charge, OutcomeUnknown),
            (C::Internal, Fail(FailureReason::Internal), refund, FailedRetryable),
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
        for effects in effect_combinations().into_iter().filter(|e| !e.is_resend_safe()) {
            for (_, budget) in budgets() {
                for (_, history) in histories() {
                    let s = Situation {
                        effects,
                        class: C::OutcomeUnknown,
                        history,
                        budget,
                    };
                    assert_eq!(decide(&s), Fail(FailureReason::OutcomeUnknown));
                }
            }
        }
    }

    #[test]
    fn retries_happen_only_for_retry_safe_tools_keyed_resends_or_when_nothing_happened() {
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
                        effects.is_idempotent()
                            || class == C::Transient
                            || (class == C::OutcomeUnknown && effects.is_resend_safe()),
                        "{effects:?} {class:?}"
                    );
                }
            }
        }
    }
}
