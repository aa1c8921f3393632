//! gate's sanitizer: secrets, stack traces, internal addresses and echoed or
//! hostile text never reach the model.
//!
//! Tool error bodies carry stack traces, internal hostnames, credentials and
//! quoted user content, and a model treats all of it as context. Every text
//! gate hands to a model goes through a [`Sanitizer`] first:
//!
//! * secrets (cloud keys, VCS and SaaS tokens, JWTs, PEM private keys,
//!   passwords in URLs and connection strings, `Authorization:` headers,
//!   generic `key=`/`secret=`/`password=` assignments) become
//!   `[redacted:KIND]`;
//! * stack traces (Rust, Python, Java/JS/C#, Go, Ruby, PHP) become
//!   `[stack trace removed]`, keeping the one-line error message;
//! * private IPs and internal hostnames become `[internal address]`;
//! * spans that echo the call's own argument values become
//!   `[echoed argument]`, long quoted free text (reflected content: an
//!   error that quotes prose back) becomes `"[quoted text removed]"` while
//!   short quoted identifiers stay, and instruction-like text (override
//!   phrases, imperatives aimed at the model, role markers, framing aimed
//!   at automated readers) becomes `[instruction-like text removed]`;
//! * results of tools that reach outside the system can be wrapped by
//!   [`spotlight`] in delimiters with one line saying they are data, not
//!   instructions;
//! * the result is capped at [`DEFAULT_MAX_LEN`] bytes (configurable) with a
//!   `[truncated: N bytes]` marker.
//!
//! Beside the text, [`Sanitized::findings`] says what was removed, by kind
//! and byte range of the *original* text — never the removed text itself —
//! so it can go to the decision log.
//!
//! ```
//! use toolgate_sanitize::{Category, Sanitizer};
//!
//! let s = Sanitizer::default();
//! let out = s.sanitize("connect failed: postgres://app:hunter22@db.internal:5432/x");
//! assert_eq!(
//!     out.text,
//!     "connect failed: postgres://app:[redacted:url-password]@[internal address]/x"
//! );
//! assert_eq!(out.findings[0].category, Category::Secret);
//! ```
//!
//! # Time and space
//!
//! Sanitizing is linear in the input: one Aho-Corasick pass finds literal
//! anchors, and each rule's regex (the `regex` crate, which never
//! backtracks) runs anchored at an anchor over a bounded window. Detectors
//! that look at whole lines remember how far they have looked, so no byte is
//! examined more than a constant number of times.
//!
//! # Idempotence
//!
//! Placeholders match no rule, and after rendering the output is scanned
//! again: a placeholder can complete a match its original text did not
//! (`x.local` followed by a redacted key now ends at `[`), and anything
//! found that way is folded back into the findings and the text rendered
//! again, so `sanitize(sanitize(x)) == sanitize(x)`. Clean text is scanned
//! once.
//!
//! # Disguised secrets
//!
//! Secrets split by zero-width characters, or wrapped in base64, are
//! decoded once and scanned: `AKIA\u{200b}IOSFODNN7EXAMPLE` and a base64
//! run that decodes to `password=hunter22!` are both redacted. Decoding is
//! not repeated (base64 inside base64 passes), and URL-, hex- or otherwise
//! encoded secrets, or secrets split across lines, are not decoded.
//!
//! # Known limits
//!
//! The sanitizer targets credentials that leak into error text by accident
//! or by a simple disguise. Generic `password=` values must look like a
//! password (six or more characters with a digit, symbol or mixed case, or
//! twelve or more of anything), so `password: required` is kept.
//!
//! # Feature `testing`
//!
//! For gate's own tests and benches, not covered by semver: `baseline`, the
//! naive one-regex-after-another loop over the same rules that the
//! benchmark measures the engine against.
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod addr;
#[cfg(feature = "testing")]
pub mod baseline;
mod boundary;
mod candidate;
mod config;
mod disguise;
mod engine;
mod keyed;
mod kinds;
mod quoted;
mod reflect;
mod render;
mod rules;
mod spotlight;
mod stack;
mod tokens;
mod vendored;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;

pub use config::{SanitizerBuilder, SanitizerConfigError};
pub use spotlight::{UNTRUSTED_BEGIN, UNTRUSTED_END, UNTRUSTED_NOTICE, spotlight};

/// The default length cap, in bytes, of sanitized text.
///
/// 4 KiB keeps a tool error to roughly a thousand tokens: enough for the
/// message and the context a model needs to correct a call, small enough
/// that a runaway error body cannot crowd the conversation out.
pub const DEFAULT_MAX_LEN: usize = 4096;

/// The smallest accepted length cap: the truncation marker must fit with
/// room to spare.
pub const MIN_MAX_LEN: usize = 64;

/// The default minimum length, in characters, of an argument value for its
/// echo to be replaced; shorter values (`"id"`, `"true"`, `"42"`) occur in
/// ordinary text by chance.
pub const DEFAULT_ECHO_MIN_CHARS: usize = 8;

/// Placeholder for a stack trace.
pub const STACK_TRACE_PLACEHOLDER: &str = "[stack trace removed]";
/// Placeholder for a private IP address or an internal hostname.
pub const INTERNAL_ADDRESS_PLACEHOLDER: &str = "[internal address]";
/// Placeholder for a span echoing one of the call's own argument values.
pub const ECHO_PLACEHOLDER: &str = "[echoed argument]";
/// Placeholder for long quoted free text inside a text (reflected
/// content); the quotes around it are kept.
pub const QUOTED_PLACEHOLDER: &str = "[quoted text removed]";
/// Placeholder for instruction-like text (prompt injection).
pub const INSTRUCTION_PLACEHOLDER: &str = "[instruction-like text removed]";

/// What a [`Finding`] removed, coarsely; [`Finding::kind`] is the fine kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// A credential, key or token: `[redacted:KIND]`.
    Secret,
    /// A stack trace or a source location from one.
    StackTrace,
    /// A private IP address or an internal hostname.
    InternalAddress,
    /// Text echoing the call's own argument values, or long quoted free
    /// text (someone else's prose) inside it.
    Reflected,
    /// Instruction-like text: injection phrases, role markers, tool-call
    /// look-alikes.
    Instruction,
    /// The tail cut off by the length cap.
    Truncated,
}

/// One thing the sanitizer removed.
///
/// It names the kind and where it was in the original text, never the
/// removed text itself, so a finding can be logged safely.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The fine kind, e.g. `"aws-access-key-id"`, `"stack-trace"`,
    /// `"internal-ip"`, `"echoed-argument"`; for a secret it is the `KIND`
    /// in `[redacted:KIND]`.
    pub kind: Cow<'static, str>,
    /// The coarse category of `kind`.
    pub category: Category,
    /// Byte range in the *original* text.
    pub range: Range<usize>,
}

/// The sanitized text and what was removed from it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sanitized {
    /// The text that may be shown to a model.
    pub text: String,
    /// What was removed, in order of position in the original text.
    pub findings: Vec<Finding>,
    /// Length in bytes of the original text.
    pub original_len: usize,
}

impl Sanitized {
    /// Whether nothing was removed (the text is the original).
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// Whether the length cap cut the text.
    pub fn truncated(&self) -> bool {
        self.findings.iter().any(|f| f.category == Category::Truncated)
    }

    /// The findings report for the decision log and `gate sanitize --json`:
    /// counts by kind plus every finding, without the sanitized text.
    pub fn report(&self) -> Report<'_> {
        let mut by_kind = BTreeMap::new();
        for f in &self.findings {
            *by_kind.entry(f.kind.as_ref()).or_insert(0usize) += 1;
        }
        Report {
            original_len: self.original_len,
            sanitized_len: self.text.len(),
            truncated: self.truncated(),
            by_kind,
            findings: &self.findings,
        }
    }
}

/// A serializable summary of a [`Sanitized`]; see [`Sanitized::report`].
#[derive(Clone, Debug, Serialize)]
pub struct Report<'a> {
    /// Length in bytes of the original text.
    pub original_len: usize,
    /// Length in bytes of the sanitized text.
    pub sanitized_len: usize,
    /// Whether the length cap cut the text.
    pub truncated: bool,
    /// Number of findings per kind.
    pub by_kind: BTreeMap<&'a str, usize>,
    /// Every finding, in order of position.
    pub findings: &'a [Finding],
}

/// Rewrites text so that nothing secret, internal or hostile reaches a
/// model.
///
/// Build it once (it compiles every rule) and share it: cloning is an
/// `Arc` bump and it is `Send + Sync`. [`Sanitizer::default`] has every
/// built-in rule and a [`DEFAULT_MAX_LEN`] cap; [`Sanitizer::builder`]
/// adds patterns, allow-listed hosts, disabled kinds and another cap.
#[derive(Clone)]
pub struct Sanitizer {
    inner: Arc<engine::Engine>,
}

impl std::fmt::Debug for Sanitizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sanitizer")
            .field("max_len", &self.inner.max_len)
            .field("rules", &self.inner.rule_count())
            .finish_non_exhaustive()
    }
}

impl Default for Sanitizer {
    /// Every built-in rule, a [`DEFAULT_MAX_LEN`] cap, no allow-listed host.
    fn default() -> Self {
        Sanitizer {
            inner: Arc::new(engine::Engine::default_engine()),
        }
    }
}

impl Sanitizer {
    /// Compiles a configuration [`SanitizerBuilder::build`] has checked.
    fn compile(cfg: &SanitizerBuilder) -> Result<Sanitizer, SanitizerConfigError> {
        Ok(Sanitizer {
            inner: Arc::new(engine::Engine::build(cfg)?),
        })
    }

    /// A builder for a configured sanitizer; see [`SanitizerBuilder`].
    pub fn builder() -> SanitizerBuilder {
        SanitizerBuilder::new()
    }

    /// Sanitizes `text`.
    pub fn sanitize(&self, text: &str) -> Sanitized {
        self.inner.sanitize(Cow::Borrowed(text), &[])
    }

    /// [`sanitize`](Self::sanitize) for a text the caller gives away: a
    /// clean one comes back as it is, without a copy (what a runtime that
    /// sanitizes every tool result wants).
    pub fn sanitize_owned(&self, text: String) -> Sanitized {
        self.inner.sanitize(Cow::Owned(text), &[])
    }

    /// Sanitizes `text`, an error returned by a call whose string argument
    /// values are `echoes`.
    ///
    /// Spans of `text` equal to an echo of at least
    /// [`DEFAULT_ECHO_MIN_CHARS`] characters (configurable) become
    /// [`ECHO_PLACEHOLDER`]: the model already knows what it sent, and an
    /// error that quotes it back is the usual carrier of reflected prompt
    /// injection.
    pub fn sanitize_with_echoes(&self, text: &str, echoes: &[&str]) -> Sanitized {
        self.inner.sanitize(Cow::Borrowed(text), echoes)
    }

    /// The length cap in bytes.
    pub fn max_len(&self) -> usize {
        self.inner.max_len
    }

    /// Every built-in kind this sanitizer can report, including switched-off
    /// ones; the names accepted by [`SanitizerBuilder::disable`].
    pub fn builtin_kinds() -> Vec<&'static str> {
        kinds::builtin_kinds()
    }

    /// The category of a built-in kind, or `None` if `kind` is not one.
    pub fn builtin_category(kind: &str) -> Option<Category> {
        kinds::builtin_category(kind)
    }
}
