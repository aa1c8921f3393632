//! Reflected and instruction-like text.
//!
//! An error that quotes the call's own arguments hands the model back what
//! it (or a document it read) wrote, which is how prompt injection travels
//! through tool errors. Echoes of argument values are replaced outright;
//! text that reads like instructions to a model (override phrases, chat
//! role markers, special tokens, tool-call look-alikes) is replaced from
//! the marker to the end of its line, since the rest of that line is the
//! payload.

use std::borrow::Cow;

use aho_corasick::{AhoCorasickBuilder, MatchKind};
use regex::Regex;

use crate::Category;
use crate::engine::{Cand, KIND_ECHO};

/// How an instruction anchor is confirmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InstrAnchor {
    /// An override verb; the phrase regex must match here.
    Phrase,
    /// A special token or tag that has no business in an error.
    Token,
    /// A chat role marker (`system:`), only at the start of a line.
    RoleLine,
    /// A JSON `"role"` key naming a chat role.
    RoleJson,
}

/// Literal anchors (matched case-insensitively) and how each is confirmed.
pub(crate) const ANCHORS: &[(&str, InstrAnchor)] = &[
    ("ignore", InstrAnchor::Phrase),
    ("disregard", InstrAnchor::Phrase),
    ("forget", InstrAnchor::Phrase),
    ("override", InstrAnchor::Phrase),
    ("you are now", InstrAnchor::Phrase),
    ("new instructions", InstrAnchor::Phrase),
    ("system prompt", InstrAnchor::Phrase),
    ("from now on", InstrAnchor::Phrase),
    ("<|im_start|>", InstrAnchor::Token),
    ("<|im_end|>", InstrAnchor::Token),
    ("<|system|>", InstrAnchor::Token),
    ("<|assistant|>", InstrAnchor::Token),
    ("<|user|>", InstrAnchor::Token),
    ("<|endoftext|>", InstrAnchor::Token),
    ("<|eot_id|>", InstrAnchor::Token),
    ("<|start_header_id|>", InstrAnchor::Token),
    ("[inst]", InstrAnchor::Token),
    ("[/inst]", InstrAnchor::Token),
    ("<<sys>>", InstrAnchor::Token),
    ("<</sys>>", InstrAnchor::Token),
    ("<system>", InstrAnchor::Token),
    ("</system>", InstrAnchor::Token),
    ("<tool_call>", InstrAnchor::Token),
    ("<tool_use>", InstrAnchor::Token),
    ("<function_call", InstrAnchor::Token),
    ("<function_calls>", InstrAnchor::Token),
    ("<invoke", InstrAnchor::Token),
    ("\"tool_calls\"", InstrAnchor::Token),
    ("\"function_call\"", InstrAnchor::Token),
    ("### instruction", InstrAnchor::Token),
    ("### system", InstrAnchor::Token),
    ("system:", InstrAnchor::RoleLine),
    ("assistant:", InstrAnchor::RoleLine),
    ("user:", InstrAnchor::RoleLine),
    ("human:", InstrAnchor::RoleLine),
    ("developer:", InstrAnchor::RoleLine),
    ("\"role\"", InstrAnchor::RoleJson),
];

/// Compiled confirmation regexes.
pub(crate) struct ReflectRules {
    phrase: Regex,
    role_json: Regex,
}

impl ReflectRules {
    pub(crate) fn new() -> ReflectRules {
        let phrase = Regex::new(concat!(
            r"^(?i:(?:ignore|disregard|forget|override)\s+(?:(?:all|any|every|the|your|my|of|these|those|previous|prior|above|earlier|preceding)\s+){0,4}",
            r"(?:previous|prior|above|earlier|preceding|system|original|existing|all|your)\s+",
            r"(?:instructions?|prompts?|directions?|directives?|rules|messages?|context|guidelines|guardrails)",
            r"|you are now\s+(?:a|an|the|in|acting|free|no longer|unrestricted|dan|my)(?-u:\b)|new instructions\s*:|(?:reveal|print|show|repeat|output)?\s*(?:your|the)?\s*system prompt",
            r"|from now on,?\s+(?:you|act|respond|ignore|only))",
        ));
        let role_json = Regex::new(r#"^"role"\s*:\s*"(?i:system|assistant|user|tool|developer)""#);
        match (phrase, role_json) {
            (Ok(phrase), Ok(role_json)) => ReflectRules { phrase, role_json },
            (Err(e), _) | (_, Err(e)) => {
                unreachable!("built-in instruction patterns are invalid: {e}")
            }
        }
    }

    /// Confirms an instruction anchor at `start..anchor_end`; returns the
    /// end of the span to replace (the end of the line).
    pub(crate) fn instruction_at(
        &self,
        text: &str,
        start: usize,
        anchor_end: usize,
        kind: InstrAnchor,
    ) -> Option<usize> {
        let bytes = text.as_bytes();
        let ok = match kind {
            InstrAnchor::Phrase => {
                (start == 0 || !crate::engine::is_word(bytes[start - 1]))
                    && self
                        .phrase
                        .is_match(&text[start..crate::engine::floor_boundary(text, start + 256)])
            }
            InstrAnchor::Token => true,
            InstrAnchor::RoleLine => {
                let ls = line_start_of_marker(text, start);
                ls != usize::MAX && ls <= start
            }
            InstrAnchor::RoleJson => self
                .role_json
                .is_match(&text[start..crate::engine::floor_boundary(text, start + 64)]),
        };
        if !ok {
            return None;
        }
        if kind == InstrAnchor::RoleLine && line_start_of_marker(text, start) == usize::MAX {
            return None;
        }
        let end = text[anchor_end..].find('\n').map_or(text.len(), |i| anchor_end + i);
        let end = if end > start && bytes[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        Some(end.max(anchor_end))
    }
}

/// The start of the line holding a role marker at `start`, if only spaces
/// or tabs (at most 32) precede the marker on it; `usize::MAX` otherwise.
pub(crate) fn line_start_of_marker(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = start;
    while i > 0 && start - i < 32 && matches!(bytes[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    if i == 0 || bytes[i - 1] == b'\n' { i } else { usize::MAX }
}

/// Adds a candidate for every occurrence of an echo at least `min_chars`
/// characters long.
pub(crate) fn echoes(text: &str, echoes: &[&str], min_chars: usize, cands: &mut Vec<Cand>) {
    let pats: Vec<&str> = echoes
        .iter()
        .copied()
        .filter(|e| e.chars().count() >= min_chars)
        .collect();
    if pats.is_empty() {
        return;
    }
    let Ok(ac) = AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostLongest)
        .build(&pats)
    else {
        return;
    };
    for m in ac.find_iter(text) {
        cands.push(Cand {
            start: m.start(),
            end: m.end(),
            kind: Cow::Borrowed(KIND_ECHO),
            category: Category::Reflected,
        });
    }
}
