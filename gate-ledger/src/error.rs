//! The ledger's one error type.
//!
//! Callers branch on what happened (key reused, in progress, stale lease, store
//! down), never on how a particular store reported it, so the kind is private
//! and exposed through predicates, hyper style; the store's own error stays
//! available as the `source()` for operators' logs.

use std::fmt;

toolgate_error::opaque_error! {
    /// An error from the ledger.
    ///
    /// Use the `is_*` predicates to decide what to do; [`LedgerError::code`] gives
    /// the stable code of the reference semantics (e.g. `E_IDEMPOTENCY_KEY_REUSED`).
    pub struct LedgerError(Box<LedgerErrorImpl>);
    enum Kind {
        /// The key is empty, too long, not printable ASCII, or of too little entropy
        /// (`E_IDEMPOTENCY_KEY_INVALID`, HTTP 400).
        InvalidKey => is_invalid_key,
        /// A request field other than the key was unusable (empty user/tool, zero lease).
        InvalidInput => is_invalid_input,
        /// The key was first used with a different fingerprint or tool
        /// (`E_IDEMPOTENCY_KEY_REUSED`, IETF 422). Not retryable.
        KeyReused => is_key_reused,
        /// Another worker holds a live lease on the key (`E_IDEMPOTENCY_IN_PROGRESS`,
        /// HTTP 409). Retry after a delay; the wait is not a repair.
        InProgress => is_in_progress,
        /// The caller's lease is no longer the record's current one (a newer attempt
        /// took over, the lease expired, or a sweep moved the record on): its write
        /// was refused and the record is unchanged.
        Stale => is_stale,
        /// The lease is current but the record's state does not allow this
        /// transition (e.g. completing a call that was never dispatched).
        InvalidTransition => is_invalid_transition,
        /// No record has that key.
        NotFound => is_not_found,
        /// More than one user has a record with that key; name the user.
        Ambiguous => is_ambiguous,
        /// The record was already resolved with a different outcome
        /// (`E_RECONCILE_CONFLICT`).
        ReconcileConflict => is_reconcile_conflict,
        /// The store failed (I/O, connection, constraint, timeout)
        /// (`E_LEDGER_UNAVAILABLE`): fail closed, do not run the tool.
        Unavailable => is_unavailable,
        /// The store URL could not be understood, or names a store this build
        /// leaves out (its cargo feature, `sqlite` or `postgres`, is off).
        InvalidUrl => is_invalid_url,
        /// A stored row could not be decoded (unknown state text, bad JSON).
        Corrupt => is_corrupt,
    }
}

impl Kind {
    fn code(&self) -> &'static str {
        match self {
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

impl LedgerError {
    /// Every ledger error's text starts with its stable code, so a log line
    /// alone says which rule of the reference semantics applied.
    fn coded(kind: Kind, message: impl fmt::Display) -> Self {
        let message = format!("{}: {message}", kind.code());
        Self::new(kind, message, None)
    }

    pub(crate) fn invalid_key(message: impl fmt::Display) -> Self {
        Self::coded(Kind::InvalidKey, message)
    }
    pub(crate) fn invalid_input(message: impl fmt::Display) -> Self {
        Self::coded(Kind::InvalidInput, message)
    }
    pub(crate) fn key_reused(message: impl fmt::Display) -> Self {
        Self::coded(Kind::KeyReused, message)
    }
    pub(crate) fn in_progress(message: impl fmt::Display) -> Self {
        Self::coded(Kind::InProgress, message)
    }
    pub(crate) fn stale(message: impl fmt::Display) -> Self {
        Self::coded(Kind::Stale, message)
    }
    pub(crate) fn invalid_transition(message: impl fmt::Display) -> Self {
        Self::coded(Kind::InvalidTransition, message)
    }
    pub(crate) fn not_found(message: impl fmt::Display) -> Self {
        Self::coded(Kind::NotFound, message)
    }
    pub(crate) fn ambiguous(message: impl fmt::Display) -> Self {
        Self::coded(Kind::Ambiguous, message)
    }
    pub(crate) fn reconcile_conflict(message: impl fmt::Display) -> Self {
        Self::coded(Kind::ReconcileConflict, message)
    }
    pub(crate) fn invalid_url(message: impl fmt::Display) -> Self {
        Self::coded(Kind::InvalidUrl, message)
    }
    pub(crate) fn corrupt(message: impl fmt::Display) -> Self {
        Self::coded(Kind::Corrupt, message)
    }
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn unavailable(
        message: impl fmt::Display,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        let mut e = Self::coded(Kind::Unavailable, message);
        e.inner.source = Some(Box::new(source));
        e
    }

    /// The stable error code of the reference semantics.
    pub fn code(&self) -> &'static str {
        self.inner.kind.code()
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl From<sqlx::Error> for LedgerError {
    fn from(e: sqlx::Error) -> Self {
        LedgerError::unavailable("the ledger store failed", e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_call_costs_one_pointer_on_the_error_side() {
        assert_eq!(size_of::<LedgerError>(), size_of::<usize>());
        assert_eq!(size_of::<Result<(), LedgerError>>(), size_of::<usize>());
    }

    #[test]
    fn the_text_starts_with_the_code() {
        let e = LedgerError::in_progress("key k is leased until 12:00");
        assert!(e.is_in_progress() && !e.is_stale());
        assert_eq!(e.code(), "E_IDEMPOTENCY_IN_PROGRESS");
        assert_eq!(e.to_string(), "E_IDEMPOTENCY_IN_PROGRESS: key k is leased until 12:00");
    }
}
