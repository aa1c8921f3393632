//! Where a detector may cut or stop in a text: char boundaries for the
//! bounded windows every detector scans, word boundaries for the rules
//! that must not start or end inside a word.
//!
//! Shared by the engine and the detectors, so it lives in neither.

/// Whether `b` is a word byte (`[A-Za-z0-9_]`), as `\b` reads it.
pub(crate) fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The largest char boundary of `s` not above `i`.
pub(crate) fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
