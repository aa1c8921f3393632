//! Failure classes: what a failed call means for the world.
//!
//! The policy never looks at error codes or messages; it looks at the class,
//! because the class answers the only question that matters for a retry: did
//! something happen, did nothing happen, or can we not know?

use serde::{Deserialize, Serialize};

use crate::ToolError;

/// The class of a failed (or refused) call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The call itself is wrong and the error says how: unknown tool, bad
    /// JSON, missing field, wrong type. Nothing ran.
    Structural,
    /// The call ran and the answer does not say what to change: a 403 with no
    /// body, an empty result, an unreadable response, an unknown resource.
    Ambiguous,
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

impl FailureClass {
    /// The stable name used in logs and reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            FailureClass::Structural => "structural",
            FailureClass::Ambiguous => "ambiguous",
            FailureClass::Transient => "transient",
            FailureClass::OutcomeUnknown => "outcome_unknown",
            FailureClass::Definitive => "definitive",
            FailureClass::Internal => "internal",
        }
    }

    /// Every class, for tables and tests.
    pub const ALL: [FailureClass; 6] = [
        FailureClass::Structural,
        FailureClass::Ambiguous,
        FailureClass::Transient,
        FailureClass::OutcomeUnknown,
        FailureClass::Definitive,
        FailureClass::Internal,
    ];
}

/// What kind of correction an ambiguous failure calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ambiguity {
    /// Access refused without a reason, or the resource does not exist: the
    /// model probably named the wrong thing; the discovery tool lists the right ones.
    WrongTarget,
    /// Nothing was found: the filter was probably too narrow.
    NothingFound,
    /// The answer could not be read: one retry may get a readable one.
    Unreadable,
}

/// The class of a tool's error, and for ambiguous ones the kind of correction.
pub fn classify(error: &ToolError) -> (FailureClass, Option<Ambiguity>) {
    use FailureClass as C;
    match error {
        ToolError::Forbidden { body: None } | ToolError::NotFound | ToolError::Denied { reason: None } => {
            (C::Ambiguous, Some(Ambiguity::WrongTarget))
        }
        ToolError::Forbidden { body: Some(b) } if b.trim().is_empty() => (C::Ambiguous, Some(Ambiguity::WrongTarget)),
        ToolError::Denied { reason: Some(r) } if r.trim().is_empty() => (C::Ambiguous, Some(Ambiguity::WrongTarget)),
        ToolError::Empty => (C::Ambiguous, Some(Ambiguity::NothingFound)),
        ToolError::Unreadable => (C::Ambiguous, Some(Ambiguity::Unreadable)),
        ToolError::Forbidden { body: Some(_) } | ToolError::Denied { reason: Some(_) } | ToolError::Rejected { .. } => {
            (C::Definitive, None)
        }
        ToolError::Timeout | ToolError::ConnectionLost { sent: true } => (C::OutcomeUnknown, None),
        ToolError::ConnectionLost { sent: false } | ToolError::RateLimited { .. } | ToolError::Unavailable => {
            (C::Transient, None)
        }
        ToolError::Internal(_) => (C::Internal, None),
    }
}
