//! Failure classes: what a failed call means for the world.
//!
//! The policy never looks at error codes or messages; it looks at the class,
//! because the class answers the only question that matters for a retry: did
//! something happen, did nothing happen, or can we not know? The classes
//! themselves are gate's shared vocabulary ([`FailureClass`], stored by name
//! in the decision log); this module maps a tool's error onto them.

pub use toolgate_ledger::{Ambiguity, FailureClass};

use crate::ToolError;

/// The class of a tool's error; an ambiguous one carries the kind of
/// correction it calls for.
pub fn classify(error: &ToolError) -> FailureClass {
    use FailureClass as C;
    match error {
        ToolError::Forbidden { body: None } | ToolError::NotFound | ToolError::Denied { reason: None } => {
            C::Ambiguous(Ambiguity::WrongTarget)
        }
        ToolError::Forbidden { body: Some(b) } if b.trim().is_empty() => C::Ambiguous(Ambiguity::WrongTarget),
        ToolError::Denied { reason: Some(r) } if r.trim().is_empty() => C::Ambiguous(Ambiguity::WrongTarget),
        ToolError::Empty => C::Ambiguous(Ambiguity::NothingFound),
        ToolError::Unreadable => C::Ambiguous(Ambiguity::Unreadable),
        ToolError::Forbidden { body: Some(_) } | ToolError::Denied { reason: Some(_) } | ToolError::Rejected { .. } => {
            C::Definitive
        }
        ToolError::Timeout | ToolError::ConnectionLost { sent: true } | ToolError::UpstreamFailed { .. } => {
            C::OutcomeUnknown
        }
        ToolError::ConnectionLost { sent: false } | ToolError::RateLimited { .. } | ToolError::Unavailable => {
            C::Transient
        }
        ToolError::Internal(_) => C::Internal,
    }
}
