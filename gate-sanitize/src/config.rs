//! Configuration of a [`Sanitizer`](crate::Sanitizer).
//!
//! Everything that can be wrong with a configuration (an unknown kind, a
//! regex that does not compile or that would match the sanitizer's own
//! placeholders, a cap too small for the truncation marker) is reported by
//! [`SanitizerBuilder::build`], so a sanitizer that exists always works.

use crate::kinds::builtin_category;
use crate::{DEFAULT_ECHO_MIN_CHARS, DEFAULT_MAX_LEN, MIN_MAX_LEN, Sanitizer};

/// Why a sanitizer configuration was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SanitizerConfigError {
    /// `disable` named a kind that is not built in.
    #[error("cannot disable unknown kind `{kind}`; built-in kinds are listed by Sanitizer::builtin_kinds()")]
    UnknownKind {
        /// The unknown kind.
        kind: String,
    },
    /// A custom pattern's kind is not lowercase ASCII letters, digits and
    /// dashes (1 to 64 of them), so it could not appear in
    /// `[redacted:KIND]` without breaking idempotence.
    #[error("invalid kind name `{kind}`: use 1 to 64 of [a-z0-9-], starting with a letter or digit")]
    InvalidKindName {
        /// The rejected kind name.
        kind: String,
    },
    /// A custom pattern reuses a built-in or another custom kind.
    #[error("duplicate kind `{kind}`: a kind names exactly one rule")]
    DuplicateKind {
        /// The repeated kind.
        kind: String,
    },
    /// A custom pattern does not compile.
    #[error("pattern for kind `{kind}` is not a valid regex: {source}")]
    InvalidPattern {
        /// The pattern's kind.
        kind: String,
        /// The regex crate's error.
        #[source]
        source: Box<regex::Error>,
    },
    /// A custom pattern matches the empty string, so it would match
    /// everywhere.
    #[error("pattern for kind `{kind}` matches the empty string")]
    EmptyMatch {
        /// The pattern's kind.
        kind: String,
    },
    /// A custom pattern matches one of the sanitizer's own placeholders,
    /// so sanitizing twice would not give the same text.
    #[error("pattern for kind `{kind}` matches the placeholder `{placeholder}`; sanitizing would not be idempotent")]
    MatchesPlaceholder {
        /// The pattern's kind.
        kind: String,
        /// The placeholder it matches.
        placeholder: String,
    },
    /// An allow-listed host is not a hostname or an IP address.
    #[error("allow-listed host `{host}` is not a hostname or an IP address")]
    InvalidHost {
        /// The rejected host.
        host: String,
    },
    /// The length cap is below [`MIN_MAX_LEN`].
    #[error("max_len {max_len} is too small: the cap must be at least {min} bytes to hold the truncation marker")]
    CapTooSmall {
        /// The requested cap.
        max_len: usize,
        /// The smallest accepted cap.
        min: usize,
    },
    /// The echo minimum length is zero, which would match everywhere.
    #[error("echo_min_chars must be at least 1")]
    EchoMinZero,
}

/// Builds a [`Sanitizer`]; every method records, [`build`](Self::build)
/// validates.
///
/// ```
/// use toolgate_sanitize::Sanitizer;
///
/// let s = Sanitizer::builder()
///     .pattern("acme-ticket-key", r"ACME-[0-9]{6}-[A-Z]{4}")
///     .allow_host("status.corp")
///     .disable("stack-trace")
///     .max_len(8192)
///     .build()
///     .unwrap();
/// let out = s.sanitize("key ACME-123456-QWER from status.corp and billing.corp");
/// assert_eq!(
///     out.text,
///     "key [redacted:acme-ticket-key] from status.corp and [internal address]"
/// );
/// assert!(Sanitizer::builder().disable("no-such-kind").build().is_err());
/// ```
#[derive(Clone, Debug)]
pub struct SanitizerBuilder {
    pub(crate) patterns: Vec<(String, String)>,
    pub(crate) allow_hosts: Vec<String>,
    pub(crate) disabled: Vec<String>,
    pub(crate) max_len: usize,
    pub(crate) echo_min_chars: usize,
}

impl Default for SanitizerBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SanitizerBuilder {
    /// Every built-in rule, a [`DEFAULT_MAX_LEN`] cap.
    pub fn new() -> Self {
        SanitizerBuilder {
            patterns: Vec::new(),
            allow_hosts: Vec::new(),
            disabled: Vec::new(),
            max_len: DEFAULT_MAX_LEN,
            echo_min_chars: DEFAULT_ECHO_MIN_CHARS,
        }
    }

    /// Adds a secret rule: matches of `regex` become `[redacted:KIND]`.
    ///
    /// If the regex has a capture group named `secret`, only that group is
    /// replaced (`token=(?P<secret>\w+)` keeps `token=`). Custom patterns
    /// run over the whole text (they have no literal anchor), which costs
    /// one linear regex pass each.
    pub fn pattern(mut self, kind: impl Into<String>, regex: impl Into<String>) -> Self {
        self.patterns.push((kind.into(), regex.into()));
        self
    }

    /// Leaves `host` (a hostname or IP address, compared
    /// case-insensitively) in the text; `.example.corp` allows every host
    /// under `example.corp`.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allow_hosts.push(host.into());
        self
    }

    /// Switches a built-in kind off; see [`Sanitizer::builtin_kinds`].
    pub fn disable(mut self, kind: impl Into<String>) -> Self {
        self.disabled.push(kind.into());
        self
    }

    /// Sets the length cap in bytes (at least [`MIN_MAX_LEN`]); use
    /// `usize::MAX` for no cap.
    pub fn max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }

    /// Sets the minimum length, in characters, of an argument value whose
    /// echo is replaced (default [`DEFAULT_ECHO_MIN_CHARS`]).
    pub fn echo_min_chars(mut self, n: usize) -> Self {
        self.echo_min_chars = n;
        self
    }

    /// Validates the configuration and compiles the sanitizer.
    pub fn build(self) -> Result<Sanitizer, SanitizerConfigError> {
        if self.max_len < MIN_MAX_LEN {
            return Err(SanitizerConfigError::CapTooSmall {
                max_len: self.max_len,
                min: MIN_MAX_LEN,
            });
        }
        if self.echo_min_chars == 0 {
            return Err(SanitizerConfigError::EchoMinZero);
        }
        for kind in &self.disabled {
            if builtin_category(kind).is_none() {
                return Err(SanitizerConfigError::UnknownKind { kind: kind.clone() });
            }
        }
        for host in &self.allow_hosts {
            if !valid_host(host) {
                return Err(SanitizerConfigError::InvalidHost { host: host.clone() });
            }
        }
        Sanitizer::compile(&self)
    }
}

/// A kind name that can sit inside `[redacted:KIND]` and match nothing.
pub(crate) fn valid_kind_name(kind: &str) -> bool {
    !kind.is_empty()
        && kind.len() <= 64
        && !kind.starts_with('-')
        && kind
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn valid_host(host: &str) -> bool {
    let h = host.strip_prefix('.').unwrap_or(host);
    if h.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    !h.is_empty()
        && h.len() <= 253
        && h.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}
