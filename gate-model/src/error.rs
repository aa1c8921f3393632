//! One opaque error type for every back end, in the style of `hyper::Error`:
//! the agent loop asks predicates (is it a rate limit? how long to wait?) rather
//! than matching variants, so new causes can be added without breaking callers,
//! and the underlying library errors stay behind [`std::error::Error::source`].

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

type Cause = Box<dyn StdError + Send + Sync + 'static>;

/// Why a model turn could not be produced.
///
/// `Display` is one short line meant for operators; it never contains the API
/// key, and response bodies appear only as a short excerpt with control
/// characters and key-like tokens removed.
pub struct ModelError {
    kind: Kind,
    detail: String,
    cause: Option<Cause>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    RateLimited {
        status: Option<u16>,
        retry_after: Option<Duration>,
    },
    HttpStatus {
        status: u16,
        retry_after: Option<Duration>,
    },
    Malformed,
    Transport {
        timeout: bool,
    },
    ScriptExhausted,
    #[cfg(feature = "openai")]
    Config,
}

impl ModelError {
    pub(crate) fn rate_limited(status: Option<u16>, retry_after: Option<Duration>, detail: impl Into<String>) -> Self {
        Self::new(Kind::RateLimited { status, retry_after }, detail)
    }

    pub(crate) fn http_status(status: u16, retry_after: Option<Duration>, detail: impl Into<String>) -> Self {
        Self::new(Kind::HttpStatus { status, retry_after }, detail)
    }

    pub(crate) fn malformed(detail: impl Into<String>) -> Self {
        Self::new(Kind::Malformed, detail)
    }

    pub(crate) fn transport(timeout: bool, detail: impl Into<String>) -> Self {
        Self::new(Kind::Transport { timeout }, detail)
    }

    pub(crate) fn script_exhausted(detail: impl Into<String>) -> Self {
        Self::new(Kind::ScriptExhausted, detail)
    }

    #[cfg(feature = "openai")]
    pub(crate) fn config(detail: impl Into<String>) -> Self {
        Self::new(Kind::Config, detail)
    }

    #[cfg(feature = "openai")]
    pub(crate) fn with_cause(mut self, cause: impl Into<Cause>) -> Self {
        self.cause = Some(cause.into());
        self
    }

    fn new(kind: Kind, detail: impl Into<String>) -> Self {
        ModelError {
            kind,
            detail: detail.into(),
            cause: None,
        }
    }

    /// The provider refused for rate or quota reasons (HTTP 429). Waiting
    /// [`retry_after`](Self::retry_after), when given, is the remedy.
    pub fn is_rate_limited(&self) -> bool {
        matches!(self.kind, Kind::RateLimited { .. })
    }

    /// How long the provider asked us to wait (`retry-after-ms` or
    /// `Retry-After`, in seconds or as an HTTP-date; a date in the past is
    /// zero). `None` when no such header came or it did not parse.
    pub fn retry_after(&self) -> Option<Duration> {
        match self.kind {
            Kind::RateLimited { retry_after, .. } | Kind::HttpStatus { retry_after, .. } => retry_after,
            _ => None,
        }
    }

    /// The server answered with a non-2xx status other than 429.
    pub fn is_http_status(&self) -> bool {
        matches!(self.kind, Kind::HttpStatus { .. })
    }

    /// The HTTP status of the response, for both [`is_http_status`](Self::is_http_status)
    /// and [`is_rate_limited`](Self::is_rate_limited) (always 429 there, or
    /// `None` for a scripted rate limit).
    pub fn status(&self) -> Option<u16> {
        match self.kind {
            Kind::HttpStatus { status, .. } => Some(status),
            Kind::RateLimited { status, .. } => status,
            _ => None,
        }
    }

    /// The response arrived but was not a Chat Completions answer: not JSON,
    /// missing `choices` or `message`, wrong field types, or too large.
    pub fn is_malformed_response(&self) -> bool {
        matches!(self.kind, Kind::Malformed)
    }

    /// The request did not complete: connection refused or reset, DNS, TLS,
    /// timeout, or the body could not be read.
    pub fn is_transport(&self) -> bool {
        matches!(self.kind, Kind::Transport { .. })
    }

    /// A transport error caused by the request timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self.kind, Kind::Transport { timeout: true })
    }

    /// A [`ScriptedModel`](crate::ScriptedModel) was asked for more turns than
    /// its script holds.
    pub fn is_script_exhausted(&self) -> bool {
        matches!(self.kind, Kind::ScriptExhausted)
    }

    /// The back end could not be set up (invalid base URL, TLS setup failed).
    /// Only the HTTP client (feature `openai`) has a setup that can fail, so
    /// without it this is always false.
    pub fn is_config(&self) -> bool {
        #[cfg(feature = "openai")]
        let config = matches!(self.kind, Kind::Config);
        #[cfg(not(feature = "openai"))]
        let config = false;
        config
    }

    /// Whether asking again later may succeed: rate limits, transport errors,
    /// and 408/409/5xx statuses. Malformed responses, other 4xx, configuration
    /// errors and an exhausted script are not retryable.
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            Kind::RateLimited { .. } | Kind::Transport { .. } => true,
            Kind::HttpStatus { status, .. } => status == 408 || status == 409 || status >= 500,
            Kind::Malformed | Kind::ScriptExhausted => false,
            #[cfg(feature = "openai")]
            Kind::Config => false,
        }
    }

    fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::RateLimited { .. } => "rate limited",
            Kind::HttpStatus { .. } => "HTTP error status",
            Kind::Malformed => "malformed model response",
            Kind::Transport { timeout: true } => "model request timed out",
            Kind::Transport { timeout: false } => "model transport error",
            Kind::ScriptExhausted => "script exhausted",
            #[cfg(feature = "openai")]
            Kind::Config => "model configuration error",
        }
    }
}

impl fmt::Debug for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ModelError");
        d.field("kind", &self.kind).field("detail", &self.detail);
        if let Some(cause) = &self.cause {
            d.field("cause", cause);
        }
        d.finish()
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.detail.is_empty() {
            f.write_str(self.kind_name())
        } else {
            write!(f, "{}: {}", self.kind_name(), self.detail)
        }
    }
}

impl StdError for ModelError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.cause.as_deref().map(|c| c as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_are_exclusive_per_kind() {
        let errors = [
            ModelError::rate_limited(Some(429), Some(Duration::from_secs(3)), "HTTP 429"),
            ModelError::http_status(500, None, "HTTP 500"),
            ModelError::malformed("not JSON"),
            ModelError::transport(false, "refused"),
            ModelError::script_exhausted("3 turns"),
            #[cfg(feature = "openai")]
            ModelError::config("bad url"),
        ];
        for (i, e) in errors.iter().enumerate() {
            let flags = [
                e.is_rate_limited(),
                e.is_http_status(),
                e.is_malformed_response(),
                e.is_transport(),
                e.is_script_exhausted(),
                #[cfg(feature = "openai")]
                e.is_config(),
            ];
            let expected: Vec<bool> = (0..flags.len()).map(|j| j == i).collect();
            assert_eq!(flags.to_vec(), expected, "{e}");
        }
    }

    #[test]
    fn retryability_follows_the_cause() {
        assert!(ModelError::rate_limited(None, None, "").is_retryable());
        assert!(ModelError::transport(true, "").is_retryable());
        assert!(ModelError::http_status(503, None, "").is_retryable());
        assert!(!ModelError::http_status(400, None, "").is_retryable());
        assert!(!ModelError::malformed("").is_retryable());
        assert!(!ModelError::script_exhausted("").is_retryable());
    }

    #[cfg(feature = "openai")]
    #[test]
    fn source_exposes_the_cause() {
        let e = ModelError::malformed("x").with_cause(std::io::Error::other("inner"));
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("inner"));
        assert!(ModelError::malformed("x").source().is_none());
    }
}
