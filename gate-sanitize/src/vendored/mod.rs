//! The vendored rule sets, gitleaks' default set, Nosey Parker's default
//! and password-hash sets and Kingfisher's rules, run by the sanitizer's
//! engine.
//!
//! A hand-written rule table misses whole families of credentials (vendor
//! API keys, keys known only by their variable name, vault tokens, webhook
//! URLs). gitleaks, Nosey Parker and Kingfisher each keep a rule for many
//! of them, tuned on real repositories, so the sanitizer runs all three
//! instead of growing its own: `build.rs` turns the vendored
//! `data/gitleaks/gitleaks.toml`, `data/noseyparker/rules.json` and
//! `data/kingfisher/rules.json` into the one [`RULES`] table (and refuses
//! to build if any regex does not compile or a rule has no anchor). Each
//! rule's keywords (gitleaks lists them; for the other two they are derived
//! from the pattern, see `anchors`) join the engine's one Aho-Corasick pass;
//! a keyword hit opens a bounded window around itself, overlapping windows
//! of one rule merge, and the rule's regex runs once over each merged
//! window, so the work per rule is at most one pass over the text whatever
//! the number of hits. The regexes are compiled on first use: text that
//! never mentions a vendor never pays for its rule.
//!
//! A gitleaks match is kept as gitleaks keeps it: the secret is the rule's
//! secret group (or its first non-empty group, or the whole match), its
//! Shannon entropy must exceed the rule's threshold, and neither the global
//! nor the rule's allowlists may allow it. Allowlists by file path or commit
//! cannot apply to text and never allow anything. The `gitleaks:allow`
//! comment is not honoured: in text a tool returns, it would be an
//! attacker's off switch. A Nosey Parker or Kingfisher match reports every
//! capture group as a secret, as those scanners do, except those that only
//! say whose secret it is (a username, a host), and passes the global
//! allowlist; a Kingfisher secret must also exceed its rule's
//! `min_entropy`.

#[cfg(test)]
mod anchors;
#[cfg(test)]
mod translate;

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;
use regex_automata::meta;
use regex_automata::{Anchored, Input};

use crate::Category;
use crate::boundary::floor_boundary;
use crate::candidate::{Cand, cand};
use crate::render::{FIXED_PLACEHOLDERS, REDACTED_PREFIX, TRUNCATED_PREFIX};

/// What an allowlist's regexes are matched against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The secret alone.
    Secret,
    /// The whole match.
    Match,
    /// The line (or lines) holding the match.
    Line,
}

/// One gitleaks allowlist.
#[derive(Debug)]
pub(crate) struct Allowlist {
    pub target: Target,
    /// `condition = "AND"`: every kind of check listed must allow.
    pub all: bool,
    /// It lists paths or commits, which text does not have.
    pub needs_path: bool,
    pub regexes: &'static [&'static str],
    /// Lowercase; a secret containing one is allowed.
    pub stopwords: &'static [&'static str],
}

/// One vendored rule, its regex already in the `regex` crate's dialect.
#[derive(Debug)]
pub(crate) struct Rule {
    /// The finding's kind: gitleaks' rule id, or for a Nosey Parker or
    /// Kingfisher rule the kind `build.rs` gave it.
    pub id: &'static str,
    /// The rule's id in its own rule set (`aws-access-token`,
    /// `np.tavily.1`, `kingfisher.posthog.1`); read by the `testing`
    /// feature's rule list.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub origin: &'static str,
    pub regex: &'static str,
    /// Lowercase literals, one of which the text must contain.
    pub keywords: &'static [&'static str],
    /// How far before a keyword a match may start: 0 when the keywords
    /// are the pattern's prefixes.
    pub back: usize,
    /// How far after a keyword's end a match may reach: the pattern's
    /// longest match when it has one.
    pub forward: usize,
    /// The secret's entropy must be above this (0: no check).
    pub entropy: f64,
    /// The capture group holding the secret (0: the first non-empty one).
    pub secret_group: usize,
    /// Every capture group is a secret (Nosey Parker's and Kingfisher's
    /// convention), but those in `public_groups`.
    pub every_group: bool,
    /// Groups that name whose credential it is (a username, a host, a key
    /// id) and stay in the text.
    pub public_groups: &'static [usize],
    pub allowlists: &'static [Allowlist],
}

include!(concat!(env!("OUT_DIR"), "/vendored_rules.rs"));

/// gitleaks rules whose kind one of gate's own detectors reports better:
/// `jwt` (gate decodes both segments as JSON) and `private-key` (gate's PEM
/// detector handles truncated keys and empty blocks). They are not run.
pub(crate) const SUPERSEDED: &[&str] = &["jwt", "private-key"];

/// Bytes before a keyword where a match may start: gitleaks' identifier
/// prefix allows 50 characters before the keyword and 50 inside it.
pub(crate) const BACK: usize = 256;

/// Bytes after a keyword a match may reach, for a rule whose matches have
/// no bound of their own.
pub(crate) const FORWARD: usize = 2048;

/// A rule's window: `[start, end)`, bytes of the text.
pub(crate) type Window = (usize, usize);

/// The window a keyword hit of rule `i` at `start..end` opens: as far
/// back and forward as the rule's matches can reach from a keyword.
pub(crate) fn window(text: &str, i: usize, start: usize, end: usize) -> Window {
    let (back, forward) = RULES.get(i).map_or((BACK, FORWARD), |r| (r.back, r.forward));
    (
        floor_boundary(text, start.saturating_sub(back)),
        floor_boundary(text, end.saturating_add(forward)),
    )
}

struct CompiledAllowlist {
    list: &'static Allowlist,
    regexes: Vec<Regex>,
    stopwords: Option<AhoCorasick>,
}

impl CompiledAllowlist {
    fn new(list: &'static Allowlist) -> Option<CompiledAllowlist> {
        let regexes = list
            .regexes
            .iter()
            .map(|r| regex::RegexBuilder::new(r).size_limit(SIZE_LIMIT).build().ok())
            .collect::<Option<Vec<_>>>()?;
        let stopwords = if list.stopwords.is_empty() {
            None
        } else {
            Some(AhoCorasick::new(list.stopwords).ok()?)
        };
        Some(CompiledAllowlist {
            list,
            regexes,
            stopwords,
        })
    }

    /// gitleaks' `checkFindingAllowed` for one allowlist.
    fn allows(&self, secret: &str, whole: &str, line: &str) -> bool {
        let target = match self.list.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        let regex = self.regexes.iter().any(|r| r.is_match(target));
        let stop = self
            .stopwords
            .as_ref()
            .is_some_and(|ac| ac.is_match(&secret.to_lowercase()));
        if self.list.all {
            if self.list.needs_path {
                return false;
            }
            let mut checks = Vec::with_capacity(2);
            if !self.regexes.is_empty() {
                checks.push(regex);
            }
            if self.stopwords.is_some() {
                checks.push(stop);
            }
            !checks.is_empty() && checks.iter().all(|&c| c)
        } else {
            regex || stop
        }
    }
}

/// The compiled-size limit of every gitleaks regex; `build.rs` checks each
/// rule against the same limit.
const SIZE_LIMIT: usize = 1 << 24;

struct Compiled {
    re: meta::Regex,
    allowlists: Vec<CompiledAllowlist>,
}

/// The rules compiled on first use, shared by every scan.
pub(crate) struct Rules {
    cells: Vec<OnceLock<Option<Compiled>>>,
    global: OnceLock<Option<CompiledAllowlist>>,
    /// Per rule, the first rule of the same kind when that is another one:
    /// a Nosey Parker rule reporting a gitleaks kind passes that rule's
    /// entropy threshold and allowlists too, so one kind has one notion of
    /// what is a placeholder.
    first_of_kind: Vec<Option<usize>>,
}

impl Rules {
    pub(crate) fn new() -> Rules {
        Rules {
            cells: RULES.iter().map(|_| OnceLock::new()).collect(),
            global: OnceLock::new(),
            first_of_kind: RULES
                .iter()
                .enumerate()
                .map(|(i, r)| Rules::index_of(r.id).filter(|&first| first != i))
                .collect(),
        }
    }

    fn compiled(&self, i: usize) -> Option<&Compiled> {
        self.cells
            .get(i)?
            .get_or_init(|| {
                let rule = RULES.get(i)?;
                let re = meta::Regex::builder()
                    .configure(meta::Config::new().nfa_size_limit(Some(SIZE_LIMIT)))
                    .build(rule.regex)
                    .ok()?;
                let allowlists = rule
                    .allowlists
                    .iter()
                    .map(CompiledAllowlist::new)
                    .collect::<Option<Vec<_>>>()?;
                Some(Compiled { re, allowlists })
            })
            .as_ref()
    }

    /// Runs rule `i` over `w` and adds what it keeps.
    pub(crate) fn scan(&self, text: &str, i: usize, w: Window, cands: &mut Vec<Cand>) {
        let (Some(rule), Some(c)) = (RULES.get(i), self.compiled(i)) else {
            return;
        };
        let mut caps = c.re.create_captures();
        let mut at = w.0;
        while at < w.1 {
            // The lazy DFA finds where the next match is; the slower
            // capturing engines then run over that match alone, so bytes
            // of a window that hold no match never pay for captures.
            let Some(found) = c.re.search(&Input::new(text).span(at..w.1)) else {
                break;
            };
            c.re.search_captures(&Input::new(text).span(found.range()).anchored(Anchored::Yes), &mut caps);
            let Some(m) = caps.get_match() else {
                break;
            };
            at = if m.end() > m.start() {
                m.end()
            } else {
                floor_boundary(text, m.end() + 1).max(m.end() + 1)
            };
            let whole = trim_newlines(text, m.start(), m.end());
            if rule.every_group && caps.group_len() >= 2 {
                for g in (1..caps.group_len()).filter(|g| !rule.public_groups.contains(g)) {
                    if let Some(s) = caps.get_group(g).filter(|s| !s.is_empty())
                        && self.admits_as_its_kind(i, text, (s.start, s.end), whole, w)
                    {
                        cands.push(cand(s.start..token_end(text, s.end), rule.id, Category::Secret));
                    }
                }
                continue;
            }
            let secret = if caps.group_len() >= 2 {
                let g = if rule.secret_group > 0 {
                    caps.get_group(rule.secret_group)
                } else {
                    (1..caps.group_len()).find_map(|g| caps.get_group(g).filter(|s| !s.is_empty()))
                };
                match g {
                    Some(s) => (s.start, s.end),
                    None if rule.secret_group > 0 => continue,
                    None => whole,
                }
            } else {
                whole
            };
            if secret.0 < secret.1 && self.admits_as_its_kind(i, text, secret, whole, w) {
                // A group much shorter than a credential is a piece of the
                // pattern (`([a-z0-9]{4}-){3}` in a webhook URL), not the
                // secret: the whole match goes.
                let (start, end) = if secret.1 - secret.0 < MIN_SECRET && rule.secret_group == 0 {
                    whole
                } else {
                    secret
                };
                cands.push(cand(start..token_end(text, end), rule.id, Category::Secret));
            }
        }
    }

    /// Whether rule `i` keeps the secret at `secret` of the match at
    /// `whole`: its entropy is above the rule's threshold and no allowlist
    /// allows it. gate's own rule for the same kind asks this too, so one
    /// kind has one notion of what is a placeholder.
    pub(crate) fn admits(&self, i: usize, text: &str, secret: Window, whole: Window, w: Window) -> bool {
        let (Some(rule), Some(c)) = (RULES.get(i), self.compiled(i)) else {
            return true;
        };
        let s = &text[secret.0..secret.1];
        if rule.entropy != 0.0 && shannon_entropy(s) <= rule.entropy {
            return false;
        }
        let global = self
            .global
            .get_or_init(|| CompiledAllowlist::new(&GLOBAL_ALLOWLIST))
            .as_ref();
        let line = line_around(text, whole.0, whole.1, w);
        let whole_text = &text[whole.0..whole.1];
        !(global.is_some_and(|g| g.allows(s, whole_text, line))
            || c.allowlists.iter().any(|a| a.allows(s, whole_text, line)))
    }

    /// [`Rules::admits`] by rule `i` and by the first rule of its kind,
    /// for a secret that holds none of gate's own placeholders (a rule
    /// whose value class takes `[`, as `Bearer [A-z…]+` does, must not
    /// redact the text a first pass wrote: sanitizing twice changes
    /// nothing).
    fn admits_as_its_kind(&self, i: usize, text: &str, secret: Window, whole: Window, w: Window) -> bool {
        !holds_placeholder(text, secret)
            && self.admits(i, text, secret, whole, w)
            && self.first_of_kind[i].is_none_or(|first| self.admits(first, text, secret, whole, w))
    }

    /// The index of the rule with this id.
    pub(crate) fn index_of(id: &str) -> Option<usize> {
        RULES.iter().position(|r| r.id == id)
    }
}

/// Whether `text[secret]` holds the start of one of gate's placeholders.
fn holds_placeholder(text: &str, secret: Window) -> bool {
    text[secret.0..secret.1].match_indices('[').any(|(at, _)| {
        let rest = &text[secret.0 + at..];
        [REDACTED_PREFIX, TRUNCATED_PREFIX]
            .iter()
            .chain(&FIXED_PLACEHOLDERS)
            .any(|p| rest.starts_with(p))
    })
}

/// Captured secrets shorter than this are taken as pattern fragments.
const MIN_SECRET: usize = 8;

/// How far a secret is extended to the end of its token.
const TOKEN_REACH: usize = 512;

/// The end of the token a secret ending at `end` belongs to: a rule that
/// matches only a token's prefix (`xoxa-2-511111111` of a longer Slack
/// token) must not leave the rest of it behind. Letters, digits, `_` and
/// `-` continue a token; `.`, `+`, `/` and `=` do when a letter or digit
/// follows.
fn token_end(text: &str, end: usize) -> usize {
    let b = text.as_bytes();
    let limit = end.saturating_add(TOKEN_REACH).min(b.len());
    let mut e = end;
    while e < limit {
        let c = b[e];
        let next_alnum = b.get(e + 1).is_some_and(u8::is_ascii_alphanumeric);
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || (matches!(c, b'.' | b'+' | b'/' | b'=') && next_alnum)
        {
            e += 1;
        } else {
            break;
        }
    }
    e
}

/// gitleaks trims newlines off both ends of a match.
fn trim_newlines(text: &str, start: usize, end: usize) -> (usize, usize) {
    let b = text.as_bytes();
    let (mut s, mut e) = (start, end);
    while s < e && b[s] == b'\n' {
        s += 1;
    }
    while e > s && b[e - 1] == b'\n' {
        e -= 1;
    }
    (s, e)
}

/// The lines holding `start..end`, within the window and at most
/// [`LINE_REACH`] bytes either side (a window of one huge line holds many
/// matches, and each must cost only its own neighbourhood).
fn line_around(text: &str, start: usize, end: usize, w: Window) -> &str {
    let lo = floor_boundary(text, start.saturating_sub(LINE_REACH)).max(w.0);
    let hi = floor_boundary(text, end.saturating_add(LINE_REACH)).min(w.1.max(end));
    let ls = text[lo..start].rfind('\n').map_or(lo, |i| lo + i + 1);
    let le = text[end..hi].find('\n').map_or(hi, |i| end + i);
    &text[ls..le.max(ls)]
}

/// How far [`line_around`] looks for a line's ends.
const LINE_REACH: usize = 1024;

/// gitleaks' `shannonEntropy`: over characters, normalised by the byte
/// length (so non-ASCII text scores as gitleaks scores it).
pub(crate) fn shannon_entropy(s: &str) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts: Vec<(char, u32)> = Vec::new();
    for ch in s.chars() {
        match counts.iter_mut().find(|(c, _)| *c == ch) {
            Some((_, n)) => *n += 1,
            None => counts.push((ch, 1)),
        }
    }
    let inv = 1.0 / s.len() as f64;
    counts
        .iter()
        .map(|&(_, n)| {
            let f = f64::from(n) * inv;
            -f * f.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_regex_and_allowlist_compiles_at_run_time_too() {
        let rules = Rules::new();
        for (i, r) in RULES.iter().enumerate() {
            assert!(rules.compiled(i).is_some(), "{}", r.id);
        }
        assert!(CompiledAllowlist::new(&GLOBAL_ALLOWLIST).is_some());
    }

    #[test]
    fn a_rule_the_regex_crate_cannot_compile_is_an_error_naming_it() {
        for go in [r"(?=lookahead)", r"(a)\1", r"\Qliteral\E"] {
            let e = translate::check("acme-key", "regex", &translate::go_to_rust(go)).unwrap_err();
            assert!(e.contains("rule `acme-key`"), "{e}");
        }
    }

    #[test]
    fn pattern_comments_go_and_nothing_else() {
        assert_eq!(
            translate::strip_comments(r"(?x) a (?# a comment ) [(?#] \(?#x) b"),
            r"(?x) a  [(?#] \(?#x) b"
        );
    }

    #[test]
    fn go_classes_stay_ascii_and_literal() {
        let t = translate::go_to_rust(r"\b[\w.-]{3}\s[[a]&&b--c\d\b");
        let re = Regex::new(&t).unwrap();
        assert!(re.is_match("x ab. [&&b--c7"));
        // Go's \w is ASCII: a Cyrillic letter is not a word character.
        assert!(!Regex::new(&translate::go_to_rust(r"^\w+$")).unwrap().is_match("ключ"));
        assert!(
            Regex::new(&translate::go_to_rust(r"^[\w]+$"))
                .unwrap()
                .is_match("key_1")
        );
    }

    #[test]
    fn tokens_end_at_prose_punctuation_but_not_inside_a_file_name() {
        let go = r#"\b(ico-[a-z0-9]{4})(?:[\x60'"\s;]|\\[nr]|$)"#;
        let re = Regex::new(&translate::go_to_rust(&translate::widen_suffix(go))).unwrap();
        for ok in [
            "ico-ab12, then",
            "(ico-ab12)",
            "ico-ab12.",
            "ico-ab12. Next",
            "ico-ab12",
        ] {
            assert!(re.is_match(ok), "{ok}");
        }
        assert!(!re.is_match("ico-ab12.png"));
        assert!(
            !Regex::new(&translate::go_to_rust(go))
                .unwrap()
                .is_match("ico-ab12, then")
        );
        assert_eq!(SIZE_LIMIT, translate::SIZE_LIMIT);
    }

    #[test]
    fn entropy_matches_gitleaks_definition() {
        assert_eq!(shannon_entropy(""), 0.0);
        assert_eq!(shannon_entropy("aaaa"), 0.0);
        assert!((shannon_entropy("abcd") - 2.0).abs() < 1e-12);
    }
}
