//! The built-in kinds: what [`Sanitizer::builtin_kinds`](crate::Sanitizer::builtin_kinds)
//! lists, what a builder may disable, and each one's category.
//!
//! Both the builder (which checks the kinds it is asked to disable) and the
//! engine (which refuses custom kinds that clash) need this list, so it
//! lives in neither.

use crate::Category;
use crate::candidate::{KIND_ECHO, KIND_HOST, KIND_INSTRUCTION, KIND_IP, KIND_PRIVATE_KEY, KIND_QUOTED, KIND_STACK};
use crate::rules::SECRET_RULES;
use crate::vendored;

/// Non-table kinds that can be switched off, with their category.
const OTHER_KINDS: &[(&str, Category)] = &[
    (KIND_PRIVATE_KEY, Category::Secret),
    (KIND_STACK, Category::StackTrace),
    (KIND_IP, Category::InternalAddress),
    (KIND_HOST, Category::InternalAddress),
    (KIND_INSTRUCTION, Category::Instruction),
    (KIND_ECHO, Category::Reflected),
    (KIND_QUOTED, Category::Reflected),
];

/// The kinds of the vendored rules the engine runs: all but those a gate
/// detector supersedes.
fn vendored_kinds() -> impl Iterator<Item = &'static str> {
    vendored::RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !vendored::SUPERSEDED.contains(id))
}

pub(crate) fn builtin_kinds() -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = Vec::new();
    for k in SECRET_RULES.iter().map(|r| r.kind).chain(vendored_kinds()) {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    kinds.extend(OTHER_KINDS.iter().map(|(k, _)| *k));
    kinds
}

pub(crate) fn builtin_category(kind: &str) -> Option<Category> {
    if SECRET_RULES.iter().any(|r| r.kind == kind) || vendored_kinds().any(|k| k == kind) {
        return Some(Category::Secret);
    }
    OTHER_KINDS.iter().find(|(k, _)| *k == kind).map(|(_, c)| *c)
}
