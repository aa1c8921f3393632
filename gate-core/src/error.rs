//! How a tool reports failure.
//!
//! The variants are failure *classes*, not error codes: each one tells the
//! policy what may have happened in the world (nothing, something, or we
//! cannot know), which is all it needs to choose between reject, retry and
//! fail-and-reconcile. Texts in these variants are shown to the model only
//! after sanitizing; the source of `Internal` never is.

use std::time::Duration;

/// A boxed error used as the hidden cause of an internal failure.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A failed tool call, classified by what it means for a retry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// Access refused. Without a body the cause is ambiguous (wrong resource,
    /// wrong scope): a discovery call usually tells the model what to use.
    #[error("forbidden{}", fmt_opt(.body))]
    Forbidden {
        /// The response body, if the backend gave one.
        body: Option<String>,
    },
    /// The named resource does not exist.
    #[error("not found")]
    NotFound,
    /// The call succeeded but found nothing.
    #[error("empty result")]
    Empty,
    /// The backend answered with something that could not be read.
    #[error("unreadable response")]
    Unreadable,
    /// A policy said no; with a reason it is definitive, without one ambiguous.
    #[error("denied{}", fmt_opt(.reason))]
    Denied {
        /// Why, if the backend said.
        reason: Option<String>,
    },
    /// No answer in time: the effect may or may not have happened.
    #[error("timed out")]
    Timeout,
    /// The connection broke. `sent: true` means the request left this process,
    /// so the effect may have happened.
    #[error("connection lost ({})", if *.sent { "after the request was sent" } else { "before the request was sent" })]
    ConnectionLost {
        /// Whether the request had been sent when the connection broke.
        sent: bool,
    },
    /// The backend asked us to slow down.
    #[error("rate limited")]
    RateLimited {
        /// How long the backend asked us to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// The backend is down; nothing happened.
    #[error("service unavailable")]
    Unavailable,
    /// A definitive business answer (card declined, rule violated) with its reason.
    #[error("rejected: {reason}")]
    Rejected {
        /// The reason, shown to the model after sanitizing.
        reason: String,
    },
    /// A bug or panic. The cause stays in operator logs and is never shown to the model.
    #[error("internal error")]
    Internal(#[source] BoxError),
}

fn fmt_opt(text: &Option<String>) -> String {
    text.as_deref().map(|t| format!(": {t}")).unwrap_or_default()
}

impl ToolError {
    /// An internal failure with a hidden cause.
    pub fn internal(cause: impl Into<BoxError>) -> Self {
        ToolError::Internal(cause.into())
    }

    /// A definitive business rejection.
    pub fn rejected(reason: impl Into<String>) -> Self {
        ToolError::Rejected { reason: reason.into() }
    }
}

impl From<std::io::Error> for ToolError {
    /// I/O kinds whose meaning for a retry is clear map to their class; the
    /// rest are internal.
    fn from(error: std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        match error.kind() {
            K::TimedOut | K::WouldBlock => ToolError::Timeout,
            K::NotFound => ToolError::NotFound,
            K::PermissionDenied => ToolError::Forbidden { body: None },
            K::ConnectionRefused | K::NotConnected | K::AddrNotAvailable => ToolError::ConnectionLost { sent: false },
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
                ToolError::ConnectionLost { sent: true }
            }
            K::InvalidData => ToolError::Unreadable,
            _ => ToolError::Internal(Box::new(error)),
        }
    }
}

impl From<serde_json::Error> for ToolError {
    /// A response that does not parse is unreadable; anything else is a bug.
    fn from(error: serde_json::Error) -> Self {
        if error.is_syntax() || error.is_eof() || error.is_data() {
            ToolError::Unreadable
        } else {
            ToolError::Internal(Box::new(error))
        }
    }
}

impl From<std::convert::Infallible> for ToolError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}
