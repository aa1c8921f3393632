//! "Did you mean" for field names, enum values and tool names, and the
//! unknown-tool rejection.
//!
//! Suggestions only ever *name* candidates; nothing here picks one for the
//! model or lets a near miss through. A wrong guess would execute a tool the
//! model did not ask for, which is worse than one more round trip.
//!
//! Candidates are targets, so they are always shown whole (see
//! [`crate::render`]); the same similarity that picks "did you mean" orders
//! a list that is too long for [`LIST_BUDGET_CHARS`].

use serde::Serialize;

use crate::display::{LIST_BUDGET_CHARS, code, fitting_prefix, joined_len, short_name, truncate_chars};

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

/// Indices of `candidates`, most similar to `sent` first; ties keep the
/// given order.
fn ranked(sent: &str, candidates: &[&str]) -> Vec<usize> {
    let mut scored: Vec<(usize, f64)> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (i, similarity(sent, c)))
        .collect();
    // Stable: equal scores stay in the given order.
    scored.sort_by(|x, y| y.1.total_cmp(&x.1));
    scored.into_iter().map(|(i, _)| i).collect()
}

/// Which targets of a list to show within a budget, each whole.
#[derive(Debug)]
pub(crate) struct Listing {
    /// Indices of the items shown, in display order.
    pub shown: Vec<usize>,
    /// How many items were left out.
    pub more: usize,
    /// Whether `shown` is ordered closest to what was sent first.
    pub closest_first: bool,
}

impl Listing {
    /// The shown items of `rendered`, joined with `", "`.
    pub(crate) fn joined(&self, rendered: &[String]) -> String {
        self.shown
            .iter()
            .map(|&i| rendered[i].as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Chooses which of the rendered targets to show within `budget` characters
/// (joined with `", "`). `rendered[i]` displays `keys[i]`, the text compared
/// with `sent`.
///
/// When everything fits and `always_rank` is off, everything is shown in the
/// given order. Otherwise the items are ordered closest to `sent` first
/// (given order when nothing comparable was sent) and the longest prefix
/// that fits is shown, at least one item. No item is ever cut.
pub(crate) fn listing(
    rendered: &[String],
    keys: &[&str],
    sent: Option<&str>,
    budget: usize,
    always_rank: bool,
) -> Listing {
    debug_assert_eq!(rendered.len(), keys.len());
    let fits = joined_len(rendered) <= budget;
    if fits && !always_rank {
        return Listing {
            shown: (0..rendered.len()).collect(),
            more: 0,
            closest_first: false,
        };
    }
    let (mut order, closest_first) = match sent {
        Some(s) => (ranked(s, keys), true),
        None => ((0..rendered.len()).collect(), false),
    };
    let total = order.len();
    let n = if fits {
        total
    } else {
        let in_order: Vec<&str> = order.iter().map(|&i| rendered[i].as_str()).collect();
        fitting_prefix(&in_order, budget)
    };
    order.truncate(n);
    Listing {
        shown: order,
        more: total - n,
        closest_first,
    }
}

/// A call to a tool name the toolbox does not have. It is never executed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownTool {
    /// The name as sent, shortened for display (at most
    /// [`MAX_ECHO_CHARS`](crate::MAX_ECHO_CHARS) characters and `…`).
    pub name: String,
    /// The valid names offered to the model, each whole, closest to the
    /// sent name first (ties by name): all of them when the message fits in
    /// [`LIST_BUDGET_CHARS`], otherwise as many as fit.
    pub suggestions: Vec<String>,
    /// How many valid names are not in `suggestions`.
    pub more: usize,
}

/// Builds the rejection for a call to tool `name`, which is not in `valid`.
///
/// Lists every valid name, whole (a tool name is a target, and the model
/// cannot call a name it cannot read), closest to `name` first and ties by
/// name, so the text does not depend on the order of `valid`. When the
/// message would pass [`LIST_BUDGET_CHARS`] it lists as many of the closest
/// as fit (at least one) and says how many were left out. Even an exact
/// match modulo case or punctuation is only listed, never chosen.
pub fn unknown_tool(name: &str, valid: &[&str]) -> UnknownTool {
    let shown = short_name(name);
    let mut sorted: Vec<&str> = valid.to_vec();
    sorted.sort_unstable();
    // The fixed text around the names, counted with the widest "more" count.
    let overhead = message_text(&shown, "", valid.len()).chars().count();
    let rendered: Vec<String> = sorted.iter().map(|s| code(s)).collect();
    let budget = LIST_BUDGET_CHARS.saturating_sub(overhead);
    let listed = listing(&rendered, &sorted, Some(name), budget, true);
    let suggestions = listed.shown.iter().map(|&i| sorted[i].to_string()).collect();
    UnknownTool {
        name: shown,
        suggestions,
        more: listed.more,
    }
}

/// The unknown-tool text: `names` already rendered and joined.
fn message_text(name: &str, names: &str, more: usize) -> String {
    if more == 0 {
        format!("There is no tool named `{name}`. Available tools: {names}. Call one of them by its exact name.")
    } else {
        format!(
            "There is no tool named `{name}`. Available tools, closest first: {names}, … and {more} more not listed. Call one of them by its exact name."
        )
    }
}

impl UnknownTool {
    /// The text for the model, e.g.
    /// ``There is no tool named `lookup_custmer`. Available tools: `lookup_customer`, `charge_card`. Call one of them by its exact name.``
    ///
    /// With more tools than fit in [`LIST_BUDGET_CHARS`]:
    /// ``There is no tool named `x`. Available tools, closest first: `a`, `b`, … and 412 more not listed. Call one of them by its exact name.``
    pub fn message(&self) -> String {
        if self.suggestions.is_empty() {
            return format!(
                "There is no tool named `{}`, and no tools are available. Answer without calling a tool.",
                self.name
            );
        }
        let names = self.suggestions.iter().map(|s| code(s)).collect::<Vec<_>>().join(", ");
        message_text(&self.name, &names, self.more)
    }

    /// A stable hash of [`UnknownTool::message`], to detect the same rejection twice.
    pub fn fingerprint(&self) -> crate::Fingerprint {
        crate::Fingerprint::of(&self.message())
    }
}
