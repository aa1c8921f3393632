//! The ledger's one error type.
//!
//! Callers branch on what happened (key reused, in progress, stale lease, store
//! down), never on how a particular store reported it, so the kind is private
//! and exposed through predicates, hyper style; the store's own error stays
//! available as the `source()` for operators' logs.

use std::error::Error as StdError;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    InvalidKey,
    InvalidInput,
    KeyReused,
    InProgress,
    Stale,
    InvalidTransition,
    NotFound,
    Ambiguous,
    ReconcileConflict,
    Unavailable,
    InvalidUrl,
    Corrupt,
}

/// An error from the ledger.
///
/// Use the `is_*` predicates to decide what to do; [`LedgerError::code`] gives
/// the stable code of the reference semantics (e.g. `E_IDEMPOTENCY_KEY_REUSED`).
pub struct LedgerError {
    kind: Kind,
    message: String,
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl LedgerError {
    fn new(kind: Kind, message: impl Into<String>) -> Self {
        LedgerError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn invalid_key(message: impl Into<String>) -> Self {
        Self::new(Kind::InvalidKey, message)
    }
    pub(crate) fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(Kind::InvalidInput, message)
    }
    pub(crate) fn key_reused(message: impl Into<String>) -> Self {
        Self::new(Kind::KeyReused, message)
    }
    pub(crate) fn in_progress(message: impl Into<String>) -> Self {
        Self::new(Kind::InProgress, message)
    }
    pub(crate) fn stale(message: impl Into<String>) -> Self {
        Self::new(Kind::Stale, message)
    }
    pub(crate) fn invalid_transition(message: impl Into<String>) -> Self {
        Self::new(Kind::InvalidTransition, message)
    }
    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(Kind::NotFound, message)
    }
    pub(crate) fn ambiguous(message: impl Into<String>) -> Self {
        Self::new(Kind::Ambiguous, message)
    }
    pub(crate) fn reconcile_conflict(message: impl Into<String>) -> Self {
        Self::new(Kind::ReconcileConflict, message)
    }
    pub(crate) fn invalid_url(message: impl Into<String>) -> Self {
        Self::new(Kind::InvalidUrl, message)
    }
    pub(crate) fn corrupt(message: impl Into<String>) -> Self {
        Self::new(Kind::Corrupt, message)
    }
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn unavailable(message: impl Into<String>, source: impl StdError + Send + Sync + 'static) -> Self {
        LedgerError {
            kind: Kind::Unavailable,
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    /// The key is empty, too long, not printable ASCII, or of too little entropy
    /// (`E_IDEMPOTENCY_KEY_INVALID`, HTTP 400).
    pub fn is_invalid_key(&self) -> bool {
        self.kind == Kind::InvalidKey
    }
    /// A request field other than the key was unusable (empty user/tool, zero lease).
    pub fn is_invalid_input(&self) -> bool {
        self.kind == Kind::InvalidInput
    }
    /// The key was first used with a different fingerprint or tool
    /// (`E_IDEMPOTENCY_KEY_REUSED`, IETF 422). Not retryable.
    pub fn is_key_reused(&self) -> bool {
        self.kind == Kind::KeyReused
    }
    /// Another worker holds a live lease on the key (`E_IDEMPOTENCY_IN_PROGRESS`,
    /// HTTP 409). Retry after a delay; the wait is not a repair.
    pub fn is_in_progress(&self) -> bool {
        self.kind == Kind::InProgress
    }
    /// The caller's lease is no longer the record's current one (a newer attempt
    /// took over, the lease expired, or a sweep moved the record on): its write
    /// was refused and the record is unchanged.
    pub fn is_stale(&self) -> bool {
        self.kind == Kind::Stale
    }
    /// The lease is current but the record's state does not allow this
    /// transition (e.g. completing a call that was never dispatched).
    pub fn is_invalid_transition(&self) -> bool {
        self.kind == Kind::InvalidTransition
    }
    /// No record has that key.
    pub fn is_not_found(&self) -> bool {
        self.kind == Kind::NotFound
    }
    /// More than one user has a record with that key; name the user.
    pub fn is_ambiguous(&self) -> bool {
        self.kind == Kind::Ambiguous
    }
    /// The record was already resolved with a different outcome
    /// (`E_RECONCILE_CONFLICT`).
    pub fn is_reconcile_conflict(&self) -> bool {
        self.kind == Kind::ReconcileConflict
    }
    /// The store failed (I/O, connection, constraint, timeout)
    /// (`E_LEDGER_UNAVAILABLE`): fail closed, do not run the tool.
    pub fn is_unavailable(&self) -> bool {
        self.kind == Kind::Unavailable
    }
    /// The store URL could not be understood, or names a store this build
    /// leaves out (its cargo feature, `sqlite` or `postgres`, is off).
    pub fn is_invalid_url(&self) -> bool {
        self.kind == Kind::InvalidUrl
    }
    /// A stored row could not be decoded (unknown state text, bad JSON).
    pub fn is_corrupt(&self) -> bool {
        self.kind == Kind::Corrupt
    }

    /// The stable error code of the reference semantics.
    pub fn code(&self) -> &'static str {
        match self.kind {
            Kind::InvalidKey => "E_IDEMPOTENCY_KEY_INVALID",
            Kind::InvalidInput => "E_LEDGER_INVALID_INPUT",
            Kind::KeyReused => "E_IDEMPOTENCY_KEY_REUSED",
            Kind::InProgress => "E_IDEMPOTENCY_IN_PROGRESS",
            Kind::Stale => "E_LEDGER_STALE_LEASE",
            Kind::InvalidTransition => "E_LEDGER_INVALID_TRANSITION",
            Kind::NotFound => "E_LEDGER_NOT_FOUND",
            Kind::Ambiguous => "E_LEDGER_AMBIGUOUS_KEY",
            Kind::ReconcileConflict => "E_RECONCILE_CONFLICT",
            Kind::Unavailable => "E_LEDGER_UNAVAILABLE",
            Kind::InvalidUrl => "E_LEDGER_INVALID_URL",
            Kind::Corrupt => "E_LEDGER_CORRUPT",
        }
    }
}

impl fmt::Debug for LedgerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("LedgerError");
        d.field("code", &self.code()).field("message", &self.message);
        if let Some(s) = &self.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl fmt::Display for LedgerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.message)
    }
}

impl StdError for LedgerError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_deref().map(|s| s as &(dyn StdError + 'static))
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl From<sqlx::Error> for LedgerError {
    fn from(e: sqlx::Error) -> Self {
        LedgerError::unavailable("the ledger store failed", e)
    }
}
