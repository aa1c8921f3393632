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
    /// A gateway or proxy answered for its upstream (HTTP 502, 504): the
    /// request may have reached the upstream and taken effect there, so the
    /// outcome is unknown.
    #[error("the upstream behind a gateway failed (HTTP {status})")]
    UpstreamFailed {
        /// The gateway's status code.
        status: u16,
    },
    /// The backend asked us to slow down.
    #[error("rate limited")]
    RateLimited {
        /// How long the backend asked us to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// The backend did not handle the request (it is down, or closed an
    /// incomplete request); nothing happened.
    #[error("service unavailable")]
    Unavailable,
    /// A definitive business answer (card declined, rule violated) with its reason.
    #[error("rejected: {reason}")]
    Rejected {
        /// The reason, shown to the model after sanitizing.
        reason: String,
    },
    /// A bug or panic. The cause is never shown to the model; the runtime
    /// logs it (`tracing`, target `gate::tool`, level error) for the operator.
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
    /// something, and the parsed `Retry-After`. Returns `None` for 1xx–3xx.
    ///
    /// Each class is what the status says happened to the request (RFC 9110
    /// §15), because that, not the code, decides whether a resend is safe:
    ///
    /// | status | class | why |
    /// |---|---|---|
    /// | 401, 403 without a body | `Forbidden { body: None }` (ambiguous) | wrong resource or wrong scope: a discovery call tells the model what to use |
    /// | 401, 403 with a body | `Forbidden { body }` (definitive) | the body says what is wrong |
    /// | 404, 410 | `NotFound` (ambiguous) | the target does not exist: a discovery call finds one that does |
    /// | 408 | `Unavailable` (nothing happened) | the server closed a request it had not fully received (§15.5.9) |
    /// | 429 | `RateLimited` (nothing happened) | refused before processing; `Retry-After` is kept |
    /// | other 4xx | `Rejected` (definitive), the body as reason | the server understood and refused |
    /// | 502, 504 | `UpstreamFailed` (outcome unknown) | a gateway's upstream may have acted before the gateway gave up on it (§15.6.3, §15.6.5): resending a charge could charge twice |
    /// | 503 | `Unavailable` (nothing happened) | the server did not handle the request (§15.6.4) |
    /// | 500, other 5xx | `Internal` | the server failed in a way the caller cannot interpret; a person looks |
    pub fn from_http(status: u16, body: Option<&str>, retry_after: Option<Duration>) -> Option<Self> {
        let body = body.map(str::trim).filter(|b| !b.is_empty()).map(str::to_owned);
        Some(match status {
            100..=399 => return None,
            401 | 403 => ToolError::Forbidden { body },
            404 | 410 => ToolError::NotFound,
            408 | 503 => ToolError::Unavailable,
            429 => ToolError::RateLimited { retry_after },
            502 | 504 => ToolError::UpstreamFailed { status },
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
    ///
    /// * A timeout (or a socket that would block) may come after the request
    ///   was written: outcome unknown (`Timeout`).
    /// * Refused, unreachable and unconnected sockets fail before anything is
    ///   sent: `ConnectionLost { sent: false }`, safe to resend.
    /// * A reset, abort, broken pipe or early end of stream can come after the
    ///   request left: `ConnectionLost { sent: true }`, outcome unknown.
    /// * `NotFound` and `PermissionDenied` name a wrong target (ambiguous);
    ///   `InvalidData` is an answer that could not be read.
    fn from(error: std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        match error.kind() {
            K::TimedOut | K::WouldBlock => ToolError::Timeout,
            K::NotFound => ToolError::NotFound,
            K::PermissionDenied => ToolError::Forbidden { body: None },
            K::ConnectionRefused
            | K::NotConnected
            | K::AddrNotAvailable
            | K::HostUnreachable
            | K::NetworkUnreachable
            | K::NetworkDown => ToolError::ConnectionLost { sent: false },
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
        for status in [502, 504] {
            assert!(matches!(
                ToolError::from_http(status, None, None),
                Some(ToolError::UpstreamFailed { status: s }) if s == status
            ));
        }
        assert!(matches!(
            ToolError::from_http(408, None, None),
            Some(ToolError::Unavailable)
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
        for status in [500, 501, 505, 507, 599] {
            assert!(matches!(
                ToolError::from_http(status, None, None),
                Some(ToolError::Internal(_))
            ));
        }
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
        assert!(matches!(
            ToolError::from(Error::from(ErrorKind::HostUnreachable)),
            ToolError::ConnectionLost { sent: false }
        ));
        assert!(matches!(
            ToolError::from(Error::from(ErrorKind::BrokenPipe)),
            ToolError::ConnectionLost { sent: true }
        ));
        assert!(matches!(ToolError::from(Error::other("x")), ToolError::Internal(_)));
    }
}
