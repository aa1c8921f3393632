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

    /// The class of an HTTP answer, for tools over any HTTP client (reqwest,
    /// hyper, ureq): `response.status().as_u16()`, the body if it says
    /// something, and the parsed `Retry-After`. Returns `None` for 2xx/3xx.
    ///
    /// 401/403 without a body are ambiguous (`Forbidden`), with one they are
    /// definitive; 404 and 410 are `NotFound`; 408 and 504 mean the request
    /// may have been processed (`Timeout`); 429 is `RateLimited`; 502 and 503
    /// mean the request was not processed (`Unavailable`); other 4xx are a
    /// definitive `Rejected` with the body as reason; other 5xx are
    /// `Internal` (the outcome of a failed server-side write is unknown to
    /// the caller, and gate treats internal errors as fail-and-report).
    pub fn from_http(status: u16, body: Option<&str>, retry_after: Option<Duration>) -> Option<Self> {
        let body = body.map(str::trim).filter(|b| !b.is_empty()).map(str::to_owned);
        Some(match status {
            100..=399 => return None,
            401 | 403 => ToolError::Forbidden { body },
            404 | 410 => ToolError::NotFound,
            408 | 504 => ToolError::Timeout,
            429 => ToolError::RateLimited { retry_after },
            502 | 503 => ToolError::Unavailable,
            400..=499 => ToolError::Rejected {
                reason: body.unwrap_or_else(|| format!("HTTP {status}")),
            },
            _ => ToolError::internal(format!("HTTP {status}")),
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_statuses_map_to_classes() {
        assert!(ToolError::from_http(200, None, None).is_none());
        assert!(matches!(
            ToolError::from_http(403, None, None),
            Some(ToolError::Forbidden { body: None })
        ));
        assert!(matches!(
            ToolError::from_http(403, Some("  "), None),
            Some(ToolError::Forbidden { body: None })
        ));
        assert!(matches!(
            ToolError::from_http(403, Some("wrong scope"), None),
            Some(ToolError::Forbidden { body: Some(_) })
        ));
        assert!(matches!(
            ToolError::from_http(404, None, None),
            Some(ToolError::NotFound)
        ));
        assert!(matches!(
            ToolError::from_http(504, None, None),
            Some(ToolError::Timeout)
        ));
        let limited = ToolError::from_http(429, None, Some(Duration::from_secs(3)));
        assert!(
            matches!(limited, Some(ToolError::RateLimited { retry_after: Some(d) }) if d == Duration::from_secs(3))
        );
        assert!(matches!(
            ToolError::from_http(503, None, None),
            Some(ToolError::Unavailable)
        ));
        assert!(
            matches!(ToolError::from_http(422, Some("card declined"), None), Some(ToolError::Rejected { reason }) if reason == "card declined")
        );
        assert!(matches!(
            ToolError::from_http(500, None, None),
            Some(ToolError::Internal(_))
        ));
    }

    #[test]
    fn io_errors_map_where_the_class_is_clear() {
        use std::io::{Error, ErrorKind};
        assert!(matches!(
            ToolError::from(Error::from(ErrorKind::TimedOut)),
            ToolError::Timeout
        ));
        assert!(matches!(
            ToolError::from(Error::from(ErrorKind::ConnectionRefused)),
            ToolError::ConnectionLost { sent: false }
        ));
        assert!(matches!(
            ToolError::from(Error::from(ErrorKind::ConnectionReset)),
            ToolError::ConnectionLost { sent: true }
        ));
        assert!(matches!(ToolError::from(Error::other("x")), ToolError::Internal(_)));
    }
}
