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
/// Build one with the `const` methods, e.g. `Effects::new().writes().external()`.
/// A tool is one of `read_only`, `idempotent`, `writes` or `destructive`;
/// `external` and `keyed` modify it. `read_only` implies `idempotent` and
/// conflicts with `writes`, `destructive` and `keyed`; `writes` means "not
/// idempotent" and conflicts with `idempotent`; `destructive` implies that
/// the tool writes.
/// The combination is checked by [`Effects::check`] (and at compile time by
/// `#[tool]`).
///
/// What each flag lets gate do after a failure:
///
/// | flag | an ambiguous failure (403 without body, empty) | an unknown outcome (timeout, 502) |
/// |---|---|---|
/// | `read_only`, `idempotent` | retried with a correction | resent with the same intent key |
/// | `keyed` | as the base flag | resent with the same intent key (the downstream deduplicates by it) |
/// | `writes`, `destructive` | fail | fail and reconcile |
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Effects {
    read_only: bool,
    idempotent: bool,
    #[serde(default)]
    writes: bool,
    destructive: bool,
    external: bool,
    #[serde(default)]
    keyed: bool,
    #[serde(default)]
    approval: bool,
    #[serde(default)]
    private: bool,
    #[serde(default)]
    untrusted: bool,
    #[serde(default)]
    trusted: bool,
}

/// An inconsistent set of effect flags.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EffectsError(&'static str);

impl Effects {
    /// No flags: what gate assumes of a tool that says nothing (a dynamic
    /// tool, say): it may write, is not idempotent, not destructive, and only
    /// touches systems the operator owns. Nothing it does is retried after an
    /// unknown outcome.
    pub const fn new() -> Self {
        Effects {
            read_only: false,
            idempotent: false,
            writes: false,
            destructive: false,
            external: false,
            keyed: false,
            approval: false,
            private: false,
            untrusted: false,
            trusted: false,
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

    /// The tool changes state additively and is not idempotent: it creates a
    /// ticket, sends a message. Calling it twice makes two.
    pub const fn writes(mut self) -> Self {
        self.writes = true;
        self
    }

    /// The tool may delete or overwrite, not just add (it writes; it may
    /// also be idempotent, as a delete by id is).
    pub const fn destructive(mut self) -> Self {
        self.destructive = true;
        self
    }

    /// The tool reaches systems outside the operator's control (payments, e-mail, the web).
    pub const fn external(mut self) -> Self {
        self.external = true;
        self
    }

    /// The tool forwards [`Ctx::intent_key`](crate::Ctx::intent_key) to a
    /// downstream system that deduplicates by it (a payment provider's
    /// idempotency key), so the same call sent again after an unknown
    /// outcome cannot take effect twice.
    pub const fn keyed(mut self) -> Self {
        self.keyed = true;
        self
    }

    /// Every call of the tool waits for a person's approval before it runs
    /// (and runs once after it).
    pub const fn approval(mut self) -> Self {
        self.approval = true;
        self
    }

    /// The tool's results hold the user's private data (a CRM record, an
    /// inbox, a balance): the information-flow guard stops it leaving
    /// through an `external` call once the task has read untrusted text.
    pub const fn private(mut self) -> Self {
        self.private = true;
        self
    }

    /// The tool's results hold text written by third parties (emails
    /// received, web pages, shared files, reviews, chat messages): the
    /// information-flow guard stops a value from it steering a call that
    /// changes state or reaches outside.
    pub const fn untrusted(mut self) -> Self {
        self.untrusted = true;
        self
    }

    /// The results of this `external` read are not third-party text (an
    /// exchange-rate service, the operator's own API behind a gateway):
    /// without it, a read of an `external` tool is `untrusted`.
    pub const fn trusted(mut self) -> Self {
        self.trusted = true;
        self
    }

    /// Refuses combinations that contradict each other.
    pub const fn check(self) -> Result<Self, EffectsError> {
        if self.read_only && self.destructive {
            Err(EffectsError(
                "a tool cannot be both `read_only` and `destructive`: read_only means it changes nothing",
            ))
        } else if self.read_only && self.writes {
            Err(EffectsError(
                "a tool cannot be both `read_only` and `writes`: read_only means it changes nothing",
            ))
        } else if self.read_only && self.keyed {
            Err(EffectsError(
                "a `read_only` tool cannot be `keyed`: it has no effect for a downstream to deduplicate",
            ))
        } else if self.writes && self.idempotent {
            Err(EffectsError(
                "a tool cannot be both `writes` and `idempotent`: writes means a second call makes a second change; an idempotent write is just `idempotent`",
            ))
        } else if self.untrusted && self.trusted {
            Err(EffectsError(
                "a tool cannot be both `untrusted` and `trusted`: untrusted says third parties write its results",
            ))
        } else if self.trusted && !(self.external && self.read_only) {
            Err(EffectsError(
                "`trusted` only applies to an `external` `read_only` tool, whose results are untrusted without it; other tools' results are trusted already",
            ))
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

    /// True when the tool declared that it writes (destructive tools included).
    pub const fn is_writes(self) -> bool {
        self.writes || self.destructive
    }

    /// True when the tool may delete or overwrite.
    pub const fn is_destructive(self) -> bool {
        self.destructive
    }

    /// True when the tool reaches systems outside the operator's control.
    pub const fn is_external(self) -> bool {
        self.external
    }

    /// True when the tool forwards the intent key to a deduplicating downstream.
    pub const fn is_keyed(self) -> bool {
        self.keyed
    }

    /// True when every call of the tool waits for a person's approval.
    pub const fn needs_approval(self) -> bool {
        self.approval
    }

    /// True when the tool's results hold the user's private data.
    pub const fn is_private(self) -> bool {
        self.private
    }

    /// True when the tool's results hold text third parties wrote: it says
    /// `untrusted`, or it is an `external` read that does not say `trusted`.
    pub const fn is_untrusted(self) -> bool {
        self.untrusted || (self.external && self.read_only && !self.trusted)
    }

    /// True when the tool's results carry a label the information-flow
    /// guard follows (`private` or untrusted).
    pub const fn is_labelled(self) -> bool {
        self.is_private() || self.is_untrusted()
    }

    /// True when the information-flow guard is asked about the tool's
    /// calls: it changes state or reaches outside.
    pub const fn is_guarded(self) -> bool {
        !self.read_only || self.external
    }

    /// gate's names of the flags set, as manifests carry them (MCP `_meta`,
    /// `gate/effects`): `read_only`, `idempotent`, `writes`, `destructive`,
    /// `external`, `keyed`, `approval`, `private`, `untrusted`, `trusted`,
    /// in that order. An idempotent flag
    /// implied by `read_only` is not repeated.
    pub fn names(self) -> Vec<&'static str> {
        let flags = [
            (self.read_only, "read_only"),
            (self.idempotent && !self.read_only, "idempotent"),
            (self.writes, "writes"),
            (self.destructive, "destructive"),
            (self.external, "external"),
            (self.keyed, "keyed"),
            (self.approval, "approval"),
            (self.private, "private"),
            (self.untrusted, "untrusted"),
            (self.trusted, "trusted"),
        ];
        flags
            .into_iter()
            .filter(|(set, _)| *set)
            .map(|(_, name)| name)
            .collect()
    }

    /// The effects `names` declare (as [`names`](Self::names) writes them),
    /// checked; an unknown name is an error that lists the known ones.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut effects = Effects::new();
        for name in names {
            effects = match name {
                "read_only" => effects.read_only(),
                "idempotent" => effects.idempotent(),
                "writes" => effects.writes(),
                "destructive" => effects.destructive(),
                "external" => effects.external(),
                "keyed" => effects.keyed(),
                "approval" => effects.approval(),
                "private" => effects.private(),
                "untrusted" => effects.untrusted(),
                "trusted" => effects.trusted(),
                other => {
                    return Err(format!(
                        "unknown effect {other:?}: gate's effects are read_only, idempotent, writes, destructive, external, keyed, approval, private, untrusted, trusted"
                    ));
                }
            };
        }
        effects.check().map_err(|e| e.to_string())
    }

    /// True when resending a call can never cause a second side effect, so an
    /// ambiguous failure may be retried with a correction (a call with new
    /// arguments).
    pub const fn is_retry_safe(self) -> bool {
        self.is_idempotent()
    }

    /// True when the *same* call, with the same intent key, may be sent again
    /// after an unknown outcome: the tool is idempotent, or the downstream
    /// deduplicates by the key.
    pub const fn is_resend_safe(self) -> bool {
        self.is_idempotent() || self.keyed
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
        assert!(!Effects::new().writes().is_resend_safe());
    }

    #[test]
    fn read_only_and_writes_conflict() {
        let err = Effects::new().read_only().writes().check().unwrap_err();
        assert!(err.to_string().contains("`writes`"), "{err}");
        assert!(Effects::new().writes().external().check().is_ok());
        assert!(Effects::new().writes().idempotent().check().is_err());
        assert!(Effects::new().read_only().keyed().check().is_err());
        assert!(Effects::new().destructive().idempotent().keyed().check().is_ok());
    }

    #[test]
    fn destructive_writes() {
        assert!(Effects::new().destructive().is_writes());
        assert!(!Effects::new().idempotent().is_writes());
    }

    #[test]
    fn names_round_trip() {
        let charge = Effects::new().writes().external().approval();
        assert_eq!(charge.names(), ["writes", "external", "approval"]);
        assert_eq!(Effects::from_names(charge.names()), Ok(charge));
        assert_eq!(Effects::new().read_only().names(), ["read_only"]);
        let every = [
            "read_only",
            "idempotent",
            "writes",
            "destructive",
            "external",
            "keyed",
            "approval",
        ];
        assert!(Effects::from_names(every).is_err(), "read_only and writes conflict");
        assert!(
            Effects::from_names(["writes", "lethal"])
                .unwrap_err()
                .contains("\"lethal\"")
        );
    }

    #[test]
    fn labels_as_the_guard_reads_them() {
        let inbox = Effects::new().read_only().private().untrusted();
        assert!(inbox.is_private() && inbox.is_untrusted() && !inbox.is_guarded());
        let web = Effects::new().read_only().external();
        assert!(web.is_untrusted() && web.is_guarded(), "an external read is untrusted");
        let rates = web.trusted();
        assert!(!rates.is_untrusted() && rates.check().is_ok());
        let charge = Effects::new().writes().external();
        assert!(
            !charge.is_untrusted() && charge.is_guarded(),
            "a write's answer is not third-party text"
        );
        assert!(!Effects::new().read_only().is_labelled() && !Effects::new().read_only().is_guarded());
        assert!(Effects::new().writes().is_guarded());
        assert!(web.untrusted().trusted().check().is_err());
        assert!(Effects::new().writes().external().trusted().check().is_err());
        assert_eq!(inbox.names(), ["read_only", "private", "untrusted"]);
        assert_eq!(Effects::from_names(rates.names()), Ok(rates));
    }

    #[test]
    fn keyed_makes_a_write_resend_safe_but_not_retry_safe() {
        let charge = Effects::new().writes().external().keyed();
        assert!(charge.is_resend_safe() && !charge.is_retry_safe() && !charge.is_idempotent());
    }
}
