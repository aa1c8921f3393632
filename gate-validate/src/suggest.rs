//! "Did you mean" for field names, enum values and tool names, and the
//! unknown-tool rejection.
//!
//! Suggestions only ever *name* candidates; nothing here picks one for the
//! model or lets a near miss through. A wrong guess would execute a tool the
//! model did not ask for, which is worse than one more round trip.

use serde::Serialize;

use crate::render::{short_name, truncate_chars};

/// How many tool names are listed in full before only the closest are shown.
pub const LIST_ALL_UP_TO: usize = 8;
/// How many closest names are shown when there are too many to list.
pub const CLOSEST: usize = 3;

/// Lowercases and drops `_`, `-` and spaces, so `customerId`,
/// `customer-id` and `Customer_ID` all meet `customer_id`.
fn fold(s: &str) -> String {
    if s.is_ascii() {
        // Field and tool names are nearly always ASCII: skip Unicode case mapping.
        return s
            .bytes()
            .filter(|b| !matches!(b, b'_' | b'-' | b' '))
            .map(|b| b.to_ascii_lowercase() as char)
            .collect();
    }
    s.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Similarity in `[0, 1]` of a sent name to a candidate.
pub(crate) fn similarity(sent: &str, candidate: &str) -> f64 {
    // Bounded so that a megabyte-long key cannot make edit distance quadratic-slow.
    let a = fold(&truncate_chars(sent, 64));
    let b = fold(&truncate_chars(candidate, 64));
    if a == b {
        return 1.0;
    }
    // Optimal string alignment: edits plus adjacent transpositions
    // (`histroy`), without the hash map Damerau-Levenshtein needs.
    let longest = a.chars().count().max(b.chars().count()).max(1);
    let lev = 1.0 - strsim::osa_distance(&a, &b) as f64 / longest as f64;
    let jw = strsim::jaro_winkler(&a, &b);
    lev.max(jw * 0.9)
}

/// The single best candidate if it is close enough to be a likely slip.
pub(crate) fn did_you_mean<'c>(sent: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let mut best: Option<(&str, f64)> = None;
    for c in candidates {
        let s = similarity(sent, c);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((c, s));
        }
    }
    best.filter(|(c, s)| *s >= 0.75 && *c != sent).map(|(c, _)| c)
}

/// Candidates sorted by similarity (best first, ties by name), for listing.
pub(crate) fn closest<'c>(sent: &str, candidates: &[&'c str], n: usize) -> Vec<&'c str> {
    let mut scored: Vec<(&str, f64)> = candidates.iter().map(|c| (*c, similarity(sent, c))).collect();
    scored.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(y.0)));
    scored.into_iter().take(n).map(|(c, _)| c).collect()
}

/// A call to a tool name the toolbox does not have. It is never executed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownTool {
    /// The name as sent, shortened for display (at most 64 characters).
    pub name: String,
    /// The names offered to the model: all of them when there are at most
    /// [`LIST_ALL_UP_TO`], otherwise the [`CLOSEST`] closest.
    pub suggestions: Vec<String>,
    /// How many valid names are not in `suggestions`.
    pub more: usize,
}

/// Builds the rejection for a call to tool `name`, which is not in `valid`.
///
/// Lists every valid name when there are at most [`LIST_ALL_UP_TO`] (in the
/// order given, so the caller controls determinism), otherwise the
/// [`CLOSEST`] most similar and how many more exist. Even an exact match
/// modulo case or punctuation is only listed, never chosen.
pub fn unknown_tool(name: &str, valid: &[&str]) -> UnknownTool {
    let (suggestions, more) = if valid.len() <= LIST_ALL_UP_TO {
        (valid.iter().map(|s| s.to_string()).collect(), 0)
    } else {
        let best = closest(name, valid, CLOSEST);
        (best.iter().map(|s| s.to_string()).collect(), valid.len() - CLOSEST)
    };
    UnknownTool {
        name: short_name(name),
        suggestions,
        more,
    }
}

impl UnknownTool {
    /// The text for the model, e.g.
    /// ``There is no tool named `lookup_custmer`. Available tools: `lookup_customer`, `charge_card`. Call one of them by its exact name.``
    pub fn message(&self) -> String {
        let names = self
            .suggestions
            .iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ");
        if self.suggestions.is_empty() {
            format!(
                "There is no tool named `{}`, and no tools are available. Answer without calling a tool.",
                self.name
            )
        } else if self.more == 0 {
            format!(
                "There is no tool named `{}`. Available tools: {names}. Call one of them by its exact name.",
                self.name
            )
        } else {
            format!(
                "There is no tool named `{}`. Closest available tools: {names} (and {} more). Call a tool by its exact name.",
                self.name, self.more
            )
        }
    }

    /// A stable hash of [`UnknownTool::message`], to detect the same rejection twice.
    pub fn fingerprint(&self) -> crate::Fingerprint {
        crate::Fingerprint::of(&self.message())
    }
}
