//! gate's vocabulary: failure classes, actions and fail reasons.
//!
//! The runtime decides with these, the store keeps them, `gate report` counts
//! them and the CLI prints them, so they are enums end to end and travel by
//! name (`"outcome_unknown"`, `"retry_internally"`, `"rejection_cap"`), never
//! as free strings: a report cannot miss a class the runtime can produce, and
//! a stored name that no variant has is a decoding error, not a silent
//! "other". Each name is written once, in the table of its enum below.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A name that no variant of the vocabulary has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// What was being parsed (`failure class`, `action`, ...).
    pub kind: &'static str,
    /// The name found.
    pub name: String,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} {:?}", self.kind, self.name)
    }
}

impl std::error::Error for UnknownName {}

/// Implements, from one table of `variant => "name"`, the stable names of an
/// enum: `ALL`, `as_str`, `FromStr`, `Display` and serde by name.
macro_rules! by_name {
    ($ty:ident, $kind:literal { $( $variant:ident $( ($inner:path) )? => $name:literal, )+ }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[ $( $ty::$variant $( ($inner) )? ),+ ];

            /// The stable name used in logs, stores and reports.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $ty::$variant $( ($inner) )? => $name, )+
                }
            }
        }

        impl FromStr for $ty {
            type Err = UnknownName;

            fn from_str(name: &str) -> Result<Self, Self::Err> {
                match name {
                    $( $name => Ok($ty::$variant $( ($inner) )?), )+
                    _ => Err(UnknownName { kind: $kind, name: name.to_owned() }),
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
                name.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// What kind of correction an ambiguous failure calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ambiguity {
    /// Access refused without a reason, or the resource does not exist: the
    /// model probably named the wrong thing; the discovery tool lists the right ones.
    WrongTarget,
    /// Nothing was found: the filter was probably too narrow.
    NothingFound,
    /// The answer could not be read: one retry may get a readable one.
    Unreadable,
}

by_name!(Ambiguity, "ambiguity" {
    WrongTarget => "wrong_target",
    NothingFound => "nothing_found",
    Unreadable => "unreadable",
});

/// The class of a failed (or refused) call: what it means for the world.
///
/// The policy never looks at error codes or messages; it looks at the class,
/// because the class answers the only question that matters for a retry: did
/// something happen, did nothing happen, or can we not know? An ambiguous
/// failure carries the kind of correction it calls for, so "ambiguous without
/// a correction" cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureClass {
    /// The call itself is wrong and the error says how: unknown tool, bad
    /// JSON, missing field, wrong type. Nothing ran.
    Structural,
    /// The call ran and the answer does not say what to change: a 403 with no
    /// body, an empty result, an unreadable response, an unknown resource.
    Ambiguous(Ambiguity),
    /// Nothing happened and trying again later may work: rate limited,
    /// unavailable, connection lost before the request was sent.
    Transient,
    /// The side effect may or may not have happened: a timeout, a connection
    /// lost after sending, a crash while dispatched.
    OutcomeUnknown,
    /// A definitive business answer with a reason (card declined).
    Definitive,
    /// A bug in the tool (a panic, an unexpected error).
    Internal,
}

by_name!(FailureClass, "failure class" {
    Structural => "structural",
    Ambiguous(Ambiguity::WrongTarget) => "ambiguous_wrong_target",
    Ambiguous(Ambiguity::NothingFound) => "ambiguous_nothing_found",
    Ambiguous(Ambiguity::Unreadable) => "ambiguous_unreadable",
    Transient => "transient",
    OutcomeUnknown => "outcome_unknown",
    Definitive => "definitive",
    Internal => "internal",
});

impl FailureClass {
    /// The correction an ambiguous failure calls for; `None` for the others.
    pub const fn ambiguity(self) -> Option<Ambiguity> {
        match self {
            FailureClass::Ambiguous(a) => Some(a),
            _ => None,
        }
    }
}

/// What gate did with a call: the action of one decision record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Action {
    /// The tool's result (or its definitive error) went to the model.
    Return,
    /// A finished intent's stored outcome went to the model; the tool did not run.
    Replay,
    /// The call was refused with what to change; it did not run.
    Reject,
    /// The model was told what to do differently before calling again.
    RetryWithCorrection,
    /// gate ran the same call again after a backoff, without the model.
    RetryInternally,
    /// The task stopped with a report for a person.
    Fail,
    /// The call waits for a person's approval; it did not run.
    AwaitApproval,
}

by_name!(Action, "action" {
    Return => "return",
    Replay => "replay",
    Reject => "reject",
    RetryWithCorrection => "retry_with_correction",
    RetryInternally => "retry_internally",
    Fail => "fail",
    AwaitApproval => "await_approval",
});

impl Action {
    /// The call reached the tool (or its stored outcome) after passing
    /// validation: what counts as a valid call after a rejection.
    pub const fn passed_validation(self) -> bool {
        matches!(
            self,
            Action::Return | Action::Replay | Action::RetryWithCorrection | Action::RetryInternally
        )
    }
}

/// Where an approval request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApprovalStatus {
    /// Waiting for a person.
    Pending,
    /// A person agreed: the call runs, once.
    Approved,
    /// A person declined: the call never runs.
    Denied,
    /// Nobody decided before the request's expiry: the call never runs.
    Expired,
}

by_name!(ApprovalStatus, "approval status" {
    Pending => "pending",
    Approved => "approved",
    Denied => "denied",
    Expired => "expired",
});

impl ApprovalStatus {
    /// Whether the request is decided for good (approved, denied or expired).
    pub const fn is_final(self) -> bool {
        !matches!(self, ApprovalStatus::Pending)
    }
}

/// Why a task failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FailureReason {
    /// The same rejection was about to be given twice in one repair episode:
    /// it was not actionable.
    NotActionable,
    /// The task reached its rejection cap.
    RejectionCap,
    /// The task used its repairs.
    AttemptBudget,
    /// The user's repair tokens for the window are spent.
    TokenBudget,
    /// The task may add no more latency.
    LatencyBudget,
    /// gate's own resends of failing calls used the gate's retry budget (a
    /// share of first attempts over a rolling window): the tool's dependency
    /// is failing for many calls at once.
    RetryBudget,
    /// An ambiguous failure of a tool that is not safe to retry.
    UnsafeToRetry,
    /// A correction was given in this step and the next call failed too.
    CorrectionDidNotHelp,
    /// The side effect may have happened: recorded for reconciliation.
    OutcomeUnknown,
    /// The tool ran, but what it did could not be recorded in the ledger: a
    /// person records it from the report.
    OutcomeNotRecorded,
    /// The tool has a bug.
    Internal,
    /// Another worker is running the same intent right now (the ledger's
    /// answer, not a policy decision).
    InProgress,
    /// The intent key was already used with different arguments (the ledger's answer).
    KeyReused,
    /// The store could not be reached, so nothing was run and nothing recorded.
    LedgerUnavailable,
    /// The task had already failed: it runs nothing until a person reopens it.
    TaskFailed,
    /// The call needs a person's approval and the task already has as many
    /// requests pending as its budget allows. The call did not run and the
    /// task goes on: the requests pending are decided first.
    ApprovalsPending,
}

by_name!(FailureReason, "fail reason" {
    NotActionable => "not_actionable",
    RejectionCap => "rejection_cap",
    AttemptBudget => "attempt_budget",
    TokenBudget => "token_budget",
    LatencyBudget => "latency_budget",
    RetryBudget => "retry_budget",
    UnsafeToRetry => "unsafe_to_retry",
    CorrectionDidNotHelp => "correction_did_not_help",
    OutcomeUnknown => "outcome_unknown",
    OutcomeNotRecorded => "outcome_not_recorded",
    Internal => "internal",
    InProgress => "in_progress",
    KeyReused => "key_reused",
    LedgerUnavailable => "ledger_unavailable",
    TaskFailed => "task_failed",
    ApprovalsPending => "approvals_pending",
});

impl FailureReason {
    /// Whether a Fail for this reason makes the task terminal.
    ///
    /// Every failure does, except three: `LedgerUnavailable` (nothing ran
    /// and the store that would hold the terminal flag is down, so the task
    /// may simply be resumed), `TaskFailed` (the task already is terminal)
    /// and `ApprovalsPending` (the task waits for people, it did not fail).
    pub const fn ends_task(self) -> bool {
        !matches!(
            self,
            FailureReason::LedgerUnavailable | FailureReason::TaskFailed | FailureReason::ApprovalsPending
        )
    }

    /// Whether a side effect may have happened that nobody recorded: the
    /// person must look downstream before the task goes on.
    pub const fn needs_reconciliation(self) -> bool {
        matches!(self, FailureReason::OutcomeUnknown | FailureReason::OutcomeNotRecorded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<T>(all: &[T])
    where
        T: Copy + PartialEq + fmt::Debug + FromStr<Err = UnknownName> + Serialize + for<'de> Deserialize<'de>,
        T: fmt::Display,
    {
        let mut names = std::collections::HashSet::new();
        for v in all {
            let name = v.to_string();
            assert!(names.insert(name.clone()), "duplicate name {name}");
            assert_eq!(name.parse::<T>(), Ok(*v));
            let json = serde_json::to_string(v).expect("serializes");
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<T>(&json).expect("deserializes"), *v);
        }
    }

    #[test]
    fn every_name_is_unique_and_round_trips() {
        round_trips(Ambiguity::ALL);
        round_trips(FailureClass::ALL);
        round_trips(Action::ALL);
        round_trips(FailureReason::ALL);
        round_trips(ApprovalStatus::ALL);
        assert_eq!(
            (
                Ambiguity::ALL.len(),
                FailureClass::ALL.len(),
                Action::ALL.len(),
                FailureReason::ALL.len(),
                ApprovalStatus::ALL.len()
            ),
            (3, 8, 7, 16, 4)
        );
    }

    #[test]
    fn an_unknown_name_is_an_error_naming_what_was_parsed() {
        let e = "none".parse::<FailureClass>().unwrap_err();
        assert_eq!(e.to_string(), "unknown failure class \"none\"");
        assert!(serde_json::from_str::<Action>("\"retry\"").is_err());
    }

    #[test]
    fn only_ambiguous_classes_carry_a_correction() {
        for class in FailureClass::ALL {
            assert_eq!(
                class.ambiguity().is_some(),
                class.as_str().starts_with("ambiguous_"),
                "{class}"
            );
        }
    }
}
