//! What every detector hands the engine: a candidate removal, and the kinds
//! of the detectors that are not rule tables.
//!
//! Kept apart from the engine so the arrows run one way: the engine calls
//! the detectors, and the detectors need only this (and `boundary`), never
//! the engine itself.

use std::borrow::Cow;
use std::ops::Range;

use crate::Category;

/// Kind of a PEM private key block.
pub(crate) const KIND_PRIVATE_KEY: &str = "private-key";
/// Kind of a stack trace.
pub(crate) const KIND_STACK: &str = "stack-trace";
/// Kind of a private IP address.
pub(crate) const KIND_IP: &str = "internal-ip";
/// Kind of an internal hostname.
pub(crate) const KIND_HOST: &str = "internal-hostname";
/// Kind of instruction-like text.
pub(crate) const KIND_INSTRUCTION: &str = "instruction";
/// Kind of an echoed argument.
pub(crate) const KIND_ECHO: &str = "echoed-argument";
/// Kind of long quoted free text.
pub(crate) const KIND_QUOTED: &str = "quoted-text";
/// Kind of the truncated tail.
pub(crate) const KIND_TRUNCATED: &str = "truncated";

/// A candidate removal before overlaps are resolved.
#[derive(Clone, Debug)]
pub(crate) struct Cand {
    pub start: usize,
    pub end: usize,
    pub kind: Cow<'static, str>,
    pub category: Category,
}

/// A candidate with a built-in kind, as the detectors produce them.
pub(crate) fn cand(range: Range<usize>, kind: &'static str, category: Category) -> Cand {
    Cand {
        start: range.start,
        end: range.end,
        kind: Cow::Borrowed(kind),
        category,
    }
}
