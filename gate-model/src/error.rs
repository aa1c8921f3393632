//! One opaque error type for every back end, in the style of `hyper::Error`:
//! the agent loop asks predicates (is it a rate limit? how long to wait?) rather
//! than matching variants, so new causes can be added without breaking callers,
//! and the underlying library errors stay behind [`std::error::Error::source`].

use std::time::Duration;

toolgate_error::opaque_error! {
    /// Why a model turn could not be produced.
    ///
    /// `Display` is one short line meant for operators; it never contains the API
    /// key, and response bodies appear only as a short excerpt with control
    /// characters and key-like tokens removed.
    pub struct ModelError(Box<ModelErrorImpl>);
    enum Kind {
        /// The provider refused for rate or quota reasons (HTTP 429). Waiting
        /// [`retry_after`](Self::retry_after), when given, is the remedy.
        RateLimited {
            status: Option<u16>,
            retry_after: Option<Duration>,
        } => is_rate_limited,
        /// The server answered with a non-2xx status other than 429.
        HttpStatus {
            status: u16,
            retry_after: Option<Duration>,
        } => is_http_status,
        /// The response arrived but was not a Chat Completions answer: not JSON,
        /// missing `choices` or `message`, wrong field types, or too large.
        Malformed => is_malformed_response,
        /// The request did not complete: connection refused or reset, DNS, TLS,
        /// timeout, or the body could not be read.
        Transport { timeout: bool } => is_transport,
        /// A [`ScriptedModel`](crate::ScriptedModel) was asked for more turns than
        /// its script holds.
        ScriptExhausted => is_script_exhausted,
        // No generated predicate: `is_config` below exists in every build,
        // false where the feature, and so this kind, is off.
        #[cfg(feature = "openai")]
        Config,
    }
}

impl Kind {
    fn name(&self) -> &'static str {
        match self {
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

impl ModelError {
    pub(crate) fn rate_limited(status: Option<u16>, retry_after: Option<Duration>, detail: impl Into<String>) -> Self {
        Self::described(Kind::RateLimited { status, retry_after }, detail)
    }

    pub(crate) fn http_status(status: u16, retry_after: Option<Duration>, detail: impl Into<String>) -> Self {
        Self::described(Kind::HttpStatus { status, retry_after }, detail)
    }

    pub(crate) fn malformed(detail: impl Into<String>) -> Self {
        Self::described(Kind::Malformed, detail)
    }

    pub(crate) fn transport(timeout: bool, detail: impl Into<String>) -> Self {
        Self::described(Kind::Transport { timeout }, detail)
    }

    pub(crate) fn script_exhausted(detail: impl Into<String>) -> Self {
        Self::described(Kind::ScriptExhausted, detail)
    }

    #[cfg(feature = "openai")]
    pub(crate) fn config(detail: impl Into<String>) -> Self {
        Self::described(Kind::Config, detail)
    }

    #[cfg(feature = "openai")]
    pub(crate) fn with_cause(mut self, cause: impl Into<toolgate_error::Cause>) -> Self {
        self.inner.source = Some(cause.into());
        self
    }

    /// The text names the kind of failure first, so an operator reading one
    /// line knows whether to wait, fix the setup or report the provider.
    fn described(kind: Kind, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        let message = if detail.is_empty() {
            kind.name().to_owned()
        } else {
            format!("{}: {detail}", kind.name())
        };
        Self::new(kind, message, None)
    }

    /// How long the provider asked us to wait (`retry-after-ms` or
    /// `Retry-After`, in seconds or as an HTTP-date; a date in the past is
    /// zero). `None` when no such header came or it did not parse.
    pub fn retry_after(&self) -> Option<Duration> {
        match self.inner.kind {
            Kind::RateLimited { retry_after, .. } | Kind::HttpStatus { retry_after, .. } => retry_after,
            _ => None,
        }
    }

    /// The HTTP status of the response, for both [`is_http_status`](Self::is_http_status)
    /// and [`is_rate_limited`](Self::is_rate_limited) (always 429 there, or
    /// `None` for a scripted rate limit).
    pub fn status(&self) -> Option<u16> {
        match self.inner.kind {
            Kind::HttpStatus { status, .. } => Some(status),
            Kind::RateLimited { status, .. } => status,
            _ => None,
        }
    }

    /// A transport error caused by the request timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self.inner.kind, Kind::Transport { timeout: true })
    }

    /// The back end could not be set up (invalid base URL, TLS setup failed).
    /// Only the HTTP client (feature `openai`) has a setup that can fail, so
    /// without it this is always false.
    pub fn is_config(&self) -> bool {
        #[cfg(feature = "openai")]
        let config = matches!(self.inner.kind, Kind::Config);
        #[cfg(not(feature = "openai"))]
        let config = false;
        config
    }

    /// Whether asking again later may succeed: rate limits, transport errors,
    /// and 408/409/5xx statuses. Malformed responses, other 4xx, configuration
    /// errors and an exhausted script are not retryable.
    pub fn is_retryable(&self) -> bool {
        match self.inner.kind {
            Kind::RateLimited { .. } | Kind::Transport { .. } => true,
            Kind::HttpStatus { status, .. } => status == 408 || status == 409 || status >= 500,
            Kind::Malformed | Kind::ScriptExhausted => false,
            #[cfg(feature = "openai")]
            Kind::Config => false,
        }
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
        use std::error::Error;

        let e = ModelError::malformed("x").with_cause(std::io::Error::other("inner"));
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("inner"));
        assert!(ModelError::malformed("x").source().is_none());
    }
}
