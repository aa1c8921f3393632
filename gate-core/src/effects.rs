//! Declared side effects of a tool.
//!
//! gate decides whether a failed call may be retried from what the tool says it
//! does, never from what the model hopes. These flags are that declaration; they
//! map one to one onto MCP's `readOnlyHint`, `idempotentHint`, `destructiveHint`
//! and `openWorldHint`, but unlike MCP hints gate *acts* on them, so they are
//! checked for consistency when a tool is built.

use serde::{Deserialize, Serialize};

/// What a tool does to the world when it runs.
///
/// Build one with the `const` methods, e.g. `Effects::new().destructive().external()`.
/// `read_only` implies `idempotent` and conflicts with `destructive`; the
/// combination is checked by [`Effects::check`] (and at compile time by `#[tool]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Effects {
    read_only: bool,
    idempotent: bool,
    destructive: bool,
    external: bool,
}

/// An inconsistent set of effect flags.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a tool cannot be both `read_only` and `destructive`: read_only means it changes nothing")]
pub struct EffectsError(());

impl Effects {
    /// No flags: the tool writes, is not idempotent, not destructive, and only
    /// touches systems the operator owns.
    pub const fn new() -> Self {
        Effects {
            read_only: false,
            idempotent: false,
            destructive: false,
            external: false,
        }
    }

    /// The tool changes nothing; calling it again is always safe.
    pub const fn read_only(mut self) -> Self {
        self.read_only = true;
        self.idempotent = true;
        self
    }

    /// Repeating the call with the same arguments has no further business effect.
    pub const fn idempotent(mut self) -> Self {
        self.idempotent = true;
        self
    }

    /// The tool may delete or overwrite, not just add.
    pub const fn destructive(mut self) -> Self {
        self.destructive = true;
        self
    }

    /// The tool reaches systems outside the operator's control (payments, e-mail, the web).
    pub const fn external(mut self) -> Self {
        self.external = true;
        self
    }

    /// Refuses combinations that contradict each other.
    pub const fn check(self) -> Result<Self, EffectsError> {
        if self.read_only && self.destructive {
            Err(EffectsError(()))
        } else {
            Ok(self)
        }
    }

    /// True when the tool changes nothing.
    pub const fn is_read_only(self) -> bool {
        self.read_only
    }

    /// True when repeating a call has no further effect (read-only tools included).
    pub const fn is_idempotent(self) -> bool {
        self.idempotent || self.read_only
    }

    /// True when the tool may delete or overwrite.
    pub const fn is_destructive(self) -> bool {
        self.destructive
    }

    /// True when the tool reaches systems outside the operator's control.
    pub const fn is_external(self) -> bool {
        self.external
    }

    /// True when resending a call can never cause a second side effect, so an
    /// ambiguous failure may be retried.
    pub const fn is_retry_safe(self) -> bool {
        self.is_idempotent()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_implies_idempotent() {
        let e = Effects::new().read_only();
        assert!(e.is_idempotent() && e.is_retry_safe() && !e.is_destructive());
    }

    #[test]
    fn read_only_and_destructive_conflict() {
        assert!(Effects::new().read_only().destructive().check().is_err());
        assert!(Effects::new().idempotent().destructive().check().is_ok());
    }

    #[test]
    fn plain_write_is_not_retry_safe() {
        assert!(!Effects::new().external().is_retry_safe());
    }
}
