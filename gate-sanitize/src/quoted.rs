//! Reflected content: long quoted free text inside a text.
//!
//! An error message is content, and the usual way hostile content rides
//! into one is quotation: `invalid name "Ignore the above and …"`, where
//! the service echoes what it was sent. A short quoted identifier
//! (`table "invoices"`, `'--force'`) is what a model needs to correct a
//! call and is kept; a quoted span that reads as free text (several words)
//! is someone else's prose and is replaced, quotes kept, by
//! [`QUOTED_PLACEHOLDER`](crate::QUOTED_PLACEHOLDER).
//!
//! Quotes pair on one line: an opening `"`, `'` or `` ` `` not preceded by
//! a letter or digit (so `can't` opens nothing) with the next same quote
//! not preceded by `\` and not followed by a letter or digit, and `“”`,
//! `‘’`, `«»` likewise. Each quote kind remembers how far it has searched
//! for a closer, so every byte is looked at a bounded number of times.

use crate::Category;
use crate::boundary::floor_boundary;
use crate::candidate::{Cand, KIND_QUOTED, cand};

/// Literal anchors: every opening quote.
pub(crate) const ANCHORS: &[&str] = &["\"", "'", "`", "\u{201c}", "\u{2018}", "\u{ab}"];

/// How far after its opener a closer may be.
const MAX_QUOTE: usize = 2048;

/// Words (tokens with at least two letters) that make a quoted span free
/// text on their own…
const FREE_TEXT_WORDS: usize = 5;

/// …or with fewer words (at least [`SHORT_WORDS`]), this many bytes.
const FREE_TEXT_BYTES: usize = 40;

/// The fewest words a long quoted span needs to be free text (a long path
/// or identifier is not prose).
const SHORT_WORDS: usize = 3;

/// Where one quote kind's closer search stands.
#[derive(Clone, Copy, Default)]
pub(crate) struct Search {
    /// Closers were looked for in `from..to`…
    from: usize,
    to: usize,
    /// …and this is the first one found there.
    found: Option<usize>,
}

/// Per-kind search state and the end of the last pair.
#[derive(Default)]
pub(crate) struct QuoteState {
    searches: [Search; 6],
    /// Openers before this are inside a pair already found.
    done: usize,
}

fn closer_of(opener: &str) -> &'static str {
    match opener {
        "\u{201c}" => "\u{201d}",
        "\u{2018}" => "\u{2019}",
        "\u{ab}" => "\u{bb}",
        "'" => "'",
        "`" => "`",
        _ => "\"",
    }
}

/// Whether a closer at `at` (of `len` bytes) closes: not escaped, not
/// followed by a letter or digit.
fn closes(bytes: &[u8], at: usize, len: usize) -> bool {
    (at == 0 || bytes[at - 1] != b'\\') && bytes.get(at + len).is_none_or(|b| !b.is_ascii_alphanumeric())
}

/// The first closer in `from..limit`, stopping at a line end.
fn find_closer(text: &str, from: usize, limit: usize, close: &str) -> (Option<usize>, usize) {
    let bytes = text.as_bytes();
    let c0 = close.as_bytes()[0];
    let mut i = from;
    while i < limit {
        let b = bytes[i];
        if b == b'\n' {
            return (None, limit);
        }
        if b == c0 && bytes[i..].starts_with(close.as_bytes()) && closes(bytes, i, close.len()) {
            return (Some(i), i + 1);
        }
        i += 1;
    }
    (None, limit)
}

/// Whether `s` reads as free text rather than an identifier.
fn free_text(s: &str) -> bool {
    let words = s
        .split_whitespace()
        .filter(|w| w.bytes().filter(u8::is_ascii_alphabetic).count() >= 2)
        .take(FREE_TEXT_WORDS)
        .count();
    words >= FREE_TEXT_WORDS || (words >= SHORT_WORDS && s.len() >= FREE_TEXT_BYTES)
}

/// Looks at a quote at `start..end` (the anchor `pattern`); adds a
/// candidate if it opens a long quoted free text.
pub(crate) fn quote_at(text: &str, start: usize, end: usize, kind: usize, st: &mut QuoteState, cands: &mut Vec<Cand>) {
    if start < st.done {
        return;
    }
    let bytes = text.as_bytes();
    let opener = &text[start..end];
    if opener.len() == 1 && start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
        return;
    }
    let close = closer_of(opener);
    let content = end;
    let reach = floor_boundary(text, content.saturating_add(MAX_QUOTE));
    let limit = text[content..reach].find('\n').map_or(reach, |i| content + i);
    let search = &mut st.searches[kind];
    let found = if content >= search.from && content <= search.to {
        match search.found {
            Some(c) if c >= content => Some(c),
            _ => {
                let (f, to) = find_closer(text, search.to.max(content), limit, close);
                *search = Search {
                    from: content,
                    to,
                    found: f,
                };
                f
            }
        }
    } else {
        let (f, to) = find_closer(text, content, limit, close);
        *search = Search {
            from: content,
            to,
            found: f,
        };
        f
    };
    let Some(c) = found.filter(|&c| c < limit) else {
        return;
    };
    st.done = c + close.len();
    let inner = &text[content..c];
    // A quote around a redacted secret is a quoted credential, as when the
    // secret is still there (see `drop_quotes_around_secrets`); this keeps
    // the re-scan of rendered output from seeing prose in it.
    if free_text(inner) && inner != crate::QUOTED_PLACEHOLDER && !inner.contains(crate::render::REDACTED_PREFIX) {
        cands.push(cand(content..c, KIND_QUOTED, Category::Reflected));
    }
}
