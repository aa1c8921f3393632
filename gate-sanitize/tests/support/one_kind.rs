//! A sanitizer running one built-in kind alone, as scanners validate each
//! rule with a single-rule detector: shared by the tests of gitleaks',
//! Nosey Parker's and Kingfisher's own examples, which check rule by rule.

use toolgate_sanitize::Sanitizer;

/// A sanitizer running `kind` alone, without a length cap.
pub fn only(kind: &str) -> Sanitizer {
    let mut b = Sanitizer::builder().max_len(usize::MAX);
    for k in Sanitizer::builtin_kinds() {
        if k != kind {
            b = b.disable(k);
        }
    }
    b.build().expect("a single-kind sanitizer builds")
}
