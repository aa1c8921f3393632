//! Literal anchors for a rule that does not list keywords (Nosey Parker's
//! rules name none: Hyperscan runs each whole pattern). The engine finds
//! every rule through one Aho-Corasick pass, so `build.rs` derives for each
//! such pattern a small set of literals of which every match must contain
//! one, from the parsed pattern: a rule `(?i)tavily.{0,20}(tvly-[a-z0-9]{32})`
//! is anchored on `tavily`, `\$2[aby]\$\d\d\$…` on `$2a$`, `$2b$`, `$2y$`.
//! A pattern with no such set of useful length gets none, and the build
//! says so rather than scanning the whole text for it.

use std::collections::BTreeSet;

use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind};

/// The most strings a set may hold before it stops being a useful anchor.
const MAX_STRINGS: usize = 64;

/// The shortest anchor worth a hit: shorter ones fire on ordinary text.
pub const MIN_ANCHOR: usize = 3;

/// What a piece of a pattern tells about the literals its matches hold.
enum Lits {
    /// Every match is exactly one of these strings (lowercased).
    Exact(BTreeSet<Vec<u8>>),
    /// Every match contains one of these strings (lowercased).
    Inner(BTreeSet<Vec<u8>>),
    /// Nothing useful.
    Unknown,
}

/// The anchors of `pattern`: lowercase literals, at least [`MIN_ANCHOR`]
/// bytes each, one of which every match contains; `None` when the pattern
/// has no such set. The pattern's possible prefixes (as `regex-syntax`
/// extracts them) are taken when they are long enough; otherwise the
/// better of its possible suffixes and a literal factor every match holds
/// (`lits`).
/// Case-insensitivity flags are dropped first: the engine's automaton
/// matches anchors ASCII case-insensitively, so the case-sensitive
/// pattern's literals, lowercased, cover every case of a match.
pub fn anchors(pattern: &str) -> Result<Option<Anchors>, String> {
    let parse = |p: &str| {
        regex_syntax::ParserBuilder::new()
            .build()
            .parse(p)
            .map_err(|e| e.to_string())
    };
    parse(pattern)?;
    let hir = parse(&without_case_flags(pattern))?;
    let extracted = |kind| {
        let seq = Extractor::new().kind(kind).limit_total(4 * MAX_STRINGS).extract(&hir);
        let set: BTreeSet<Vec<u8>> = seq
            .literals()?
            .iter()
            .map(|l| l.as_bytes().to_ascii_lowercase())
            .collect();
        (set.len() <= MAX_STRINGS).then_some(set)
    };
    let factor = match lits(&hir) {
        Lits::Exact(s) | Lits::Inner(s) => Some(s),
        Lits::Unknown => None,
    };
    let useful = |s: &BTreeSet<Vec<u8>>| !s.is_empty() && s.iter().all(|l| l.len() >= MIN_ANCHOR);
    let strings = |set: BTreeSet<Vec<u8>>| {
        set.into_iter()
            .map(|s| String::from_utf8_lossy(&s).into_owned())
            .collect()
    };
    let max_len = hir.properties().maximum_len();
    // Prefixes first: a match then starts at its anchor, so the engine's
    // window behind a hit never has to reach back for it.
    if let Some(prefixes) = extracted(ExtractKind::Prefix).filter(useful) {
        return Ok(Some(Anchors {
            literals: strings(prefixes),
            prefix: true,
            max_len,
        }));
    }
    let best = [extracted(ExtractKind::Suffix), factor]
        .into_iter()
        .flatten()
        .filter(useful)
        .max_by_key(score);
    Ok(best.map(|set| Anchors {
        literals: strings(set),
        prefix: false,
        max_len,
    }))
}

/// A pattern's anchors and what they say about where its matches lie.
pub struct Anchors {
    /// Lowercase literals, one of which every match holds.
    pub literals: Vec<String>,
    /// Every match starts with one of them.
    pub prefix: bool,
    /// The longest match the pattern has, in bytes, if it has a longest.
    pub max_len: Option<usize>,
}

/// `pattern` with its `i` flags removed: `(?xi)` becomes `(?x)`, `(?i:` a
/// plain group, and `(?i)` goes.
fn without_case_flags(pattern: &str) -> String {
    let b = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            out.push_str(&pattern[i..floor(pattern, i + 2)]);
            i = floor(pattern, i + 2);
            continue;
        }
        if b[i] == b'(' && b.get(i + 1) == Some(&b'?') {
            let flags_end = b[i + 2..]
                .iter()
                .position(|c| !(c.is_ascii_alphabetic() || *c == b'-'))
                .map(|n| i + 2 + n);
            if let Some(end) = flags_end.filter(|&e| matches!(b[e], b')' | b':')) {
                let flags = pattern[i + 2..end].replace('i', "");
                let flags = flags.trim_end_matches('-');
                if flags.is_empty() && b[end] == b')' {
                    i = end + 1;
                } else {
                    out.push_str("(?");
                    out.push_str(flags);
                    i = end;
                }
                continue;
            }
        }
        let next = floor(pattern, i + 1);
        out.push_str(&pattern[i..next]);
        i = next;
    }
    out
}

/// The first character boundary of `s` at or after `i`.
fn floor(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i.min(s.len())
}

fn lits(hir: &Hir) -> Lits {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Lits::Exact(BTreeSet::from([Vec::new()])),
        HirKind::Literal(l) => Lits::Exact(BTreeSet::from([l.0.to_ascii_lowercase()])),
        HirKind::Class(c) => class(c).map_or(Lits::Unknown, Lits::Exact),
        HirKind::Capture(c) => lits(&c.sub),
        HirKind::Repetition(r) => match (r.min, r.max, lits(&r.sub)) {
            (1, Some(1), l) => l,
            (0, Some(1), Lits::Exact(mut s)) => {
                s.insert(Vec::new());
                Lits::Exact(s)
            }
            (0, _, _) | (_, _, Lits::Unknown) => Lits::Unknown,
            (_, _, Lits::Exact(s) | Lits::Inner(s)) => Lits::Inner(s),
        },
        HirKind::Alternation(alts) => {
            let mut all_exact = true;
            let mut union = BTreeSet::new();
            for a in alts {
                match lits(a) {
                    Lits::Exact(s) => union.extend(s),
                    Lits::Inner(s) => {
                        all_exact = false;
                        union.extend(s);
                    }
                    Lits::Unknown => return Lits::Unknown,
                }
            }
            if union.len() > MAX_STRINGS {
                Lits::Unknown
            } else if all_exact {
                Lits::Exact(union)
            } else {
                Lits::Inner(union)
            }
        }
        HirKind::Concat(items) => concat(items),
    }
}

/// A run of exact pieces multiplies out into longer strings; anything else
/// closes the run, and the best set seen anywhere in the concatenation
/// anchors it.
fn concat(items: &[Hir]) -> Lits {
    let mut run: BTreeSet<Vec<u8>> = BTreeSet::from([Vec::new()]);
    let mut best: Option<BTreeSet<Vec<u8>>> = None;
    let mut exact = true;
    let offer = |s: BTreeSet<Vec<u8>>, best: &mut Option<BTreeSet<Vec<u8>>>| {
        if best.as_ref().is_none_or(|b| score(&s) > score(b)) {
            *best = Some(s);
        }
    };
    for item in items {
        match lits(item) {
            Lits::Exact(s) => {
                let product: BTreeSet<Vec<u8>> = run
                    .iter()
                    .flat_map(|a| s.iter().map(move |b| [a.as_slice(), b].concat()))
                    .collect();
                if product.len() > MAX_STRINGS {
                    offer(std::mem::take(&mut run), &mut best);
                    exact = false;
                    run = s;
                } else {
                    run = product;
                }
            }
            other => {
                exact = false;
                offer(std::mem::replace(&mut run, BTreeSet::from([Vec::new()])), &mut best);
                if let Lits::Inner(s) = other {
                    offer(s, &mut best);
                }
            }
        }
    }
    if exact {
        return Lits::Exact(run);
    }
    offer(run, &mut best);
    match best {
        Some(b) if score(&b).0 > 0 => Lits::Inner(b),
        _ => Lits::Unknown,
    }
}

/// A set is better when its shortest string is longer, then when it has
/// fewer strings.
fn score(s: &BTreeSet<Vec<u8>>) -> (usize, isize) {
    let shortest = s.iter().map(Vec::len).min().unwrap_or(0);
    (shortest, -(s.len() as isize))
}

/// The non-ASCII characters Unicode case folding adds to an ASCII letter:
/// the Kelvin sign for `k`, the long s for `s`. Text that spells a keyword
/// with them is not worth an anchor; any other non-ASCII character in a
/// class makes it no anchor at all, since a match could hold it instead.
const CASE_FOLDS: [char; 2] = ['\u{212A}', '\u{17F}'];

/// The characters of a small class, lowercased: one letter in both cases
/// (what `(?i)` makes of a literal, Unicode's extra folds such as the
/// Kelvin sign aside) or up to four ASCII characters.
fn class(c: &Class) -> Option<BTreeSet<Vec<u8>>> {
    let mut chars = BTreeSet::new();
    match c {
        Class::Unicode(u) => {
            for r in u.ranges() {
                if (r.end() as u32) - (r.start() as u32) > 64 {
                    return None;
                }
                for ch in r.start()..=r.end() {
                    if ch.is_ascii() {
                        chars.insert(ch.to_ascii_lowercase() as u8);
                    } else if !CASE_FOLDS.contains(&ch) {
                        return None;
                    }
                }
            }
        }
        Class::Bytes(b) => {
            for r in b.ranges() {
                for byte in r.start()..=r.end() {
                    if byte.is_ascii() {
                        chars.insert(byte.to_ascii_lowercase());
                    }
                }
            }
        }
    }
    (!chars.is_empty() && chars.len() <= 4).then(|| chars.into_iter().map(|b| vec![b]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pattern, its anchors, whether they are its prefixes, its longest
    /// match.
    type Case = (&'static str, Option<&'static [&'static str]>, bool, Option<usize>);

    /// Each pattern with the anchors and placement a person reads off it.
    #[test]
    fn anchors_are_read_off_the_pattern() {
        let table: &[Case] = &[
            (r"\b(tvly-[a-zA-Z0-9]{32})\b", Some(&["tvly-"]), true, Some(37)),
            (r"(?i)\b(TVLY-[a-z]{4})", Some(&["tvly-"]), true, Some(9)),
            // `\d` is any Unicode digit, up to four bytes each.
            (
                r"\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}",
                Some(&["$2a$", "$2b$", "$2y$"]),
                true,
                Some(66),
            ),
            (
                r"(?i)(?:api_key|apikey)\s*=\s*([0-9a-f]{32})",
                Some(&["api_key", "apikey"]),
                true,
                None,
            ),
            (
                r"(?x) [a-z]{4} \s+ token-secret: \s+ ([a-z0-9]{16})",
                Some(&["token-secret:"]),
                false,
                None,
            ),
            (r"(?xi) [0-9]{8} : AA [a-z]{8}", Some(&[":aa"]), false, Some(19)),
            (r"[A-Za-z0-9]{40}", None, false, Some(40)),
            (
                r"(?i)\$5(?:\$rounds=\d+)?\$[a-z]{8}",
                Some(&["$5$", "$5$rounds="]),
                true,
                None,
            ),
        ];
        for &(pattern, literals, prefix, max_len) in table {
            let got = anchors(pattern).expect("parses");
            match (got, literals) {
                (None, None) => {}
                (Some(a), Some(want)) => {
                    assert_eq!(a.literals, want, "{pattern}");
                    assert_eq!(a.prefix, prefix, "{pattern}");
                    assert_eq!(a.max_len, max_len, "{pattern}");
                }
                (got, want) => panic!("{pattern}: got {:?}, want {want:?}", got.map(|a| a.literals)),
            }
        }
    }

    #[test]
    fn case_flags_go_and_other_flags_stay() {
        assert_eq!(
            without_case_flags("(?xi)a(?i:b)(?i)c(?-i)d\\(?i)"),
            "(?x)a(?:b)cd\\(?i)"
        );
    }

    #[test]
    fn non_ascii_literals_anchor_as_bytes() {
        let a = anchors("[aé]bc").expect("parses").map(|a| a.literals);
        assert_eq!(a, Some(vec!["abc".to_string(), "ébc".to_string()]));
        // The Kelvin sign `(?i)` adds to `k` does not stop `key` anchoring.
        assert_eq!(
            anchors("(?i)keys").expect("parses").map(|a| a.literals),
            Some(vec!["keys".to_string()])
        );
    }
}
