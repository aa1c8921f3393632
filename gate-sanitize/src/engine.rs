//! The scanning engine: one Aho-Corasick pass over literal anchors, then the
//! detectors those anchors name, then overlap resolution; rendering and the
//! length cap are `render`'s.
//!
//! Splitting "where might something be" (the anchor pass, a few GB/s) from
//! "is it really there" (a regex or parser run at that spot only) is what
//! makes clean text cheap and keeps every path linear.

use std::borrow::Cow;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::Regex;

use crate::boundary::{floor_boundary, is_word};
use crate::candidate::{
    Cand, KIND_ECHO, KIND_HOST, KIND_INSTRUCTION, KIND_IP, KIND_PRIVATE_KEY, KIND_QUOTED, KIND_STACK, KIND_TRUNCATED,
    cand,
};
use crate::config::{SanitizerBuilder, SanitizerConfigError, valid_kind_name};
use crate::kinds::{builtin_category, builtin_kinds};
use crate::render::{self, redacted};
use crate::rules::{Back, Check, SECRET_RULES};
use crate::{Category, Sanitized};
use crate::{addr, disguise, keyed, quoted, reflect, stack, tokens, vendored};

/// Bytes after a match start that an anchored secret regex may look at.
const SECRET_WINDOW: usize = 16 * 1024;

/// Re-scans of the output after the first; each must remove more of the
/// original than the last, and real text converges in one.
const MAX_PASSES: usize = 4;

/// What an anchor hit asks for.
#[derive(Clone, Copy, Debug)]
enum Action {
    /// Run `SECRET_RULES[i]` anchored here.
    Secret(usize),
    /// A keyword of `vendored::RULES[i]`: open (or widen) its window.
    Vendored(usize),
    PemBegin,
    PemEnd,
    Stack,
    Ipv4,
    Ipv6,
    /// A hostname suffix such as `.internal`.
    HostSuffix,
    /// The literal `localhost`.
    Localhost,
    /// `://`: a URL whose host may be a single label.
    UrlHost,
    Instruction(reflect::InstrAnchor),
    /// An opening quote, `quoted::ANCHORS[i]`.
    Quote(usize),
    /// The end of a secret's name (`pass`, `token`…): a value by its key.
    Keyed,
}

struct CompiledSecret {
    rule: usize,
    matcher: Matcher,
    /// The first vendored rule of the same kind, whose entropy threshold and
    /// allowlists this rule's findings must pass too.
    shared: Option<usize>,
}

/// How a rule's regex is run. Capture groups are avoided where the
/// pattern's shape allows: a capture-free `find` runs on the lazy DFA,
/// while `captures` falls back to the backtracker or the PikeVM, which
/// made findings-dense text several times slower.
enum Matcher {
    /// `(TOKEN)END`: find `TOKEN`, check `END` by hand.
    Token { re: Regex, end: EndCheck },
    /// `PREFIX(VALUE)END`: find `PREFIX`, then `VALUE` right after it,
    /// then check `END` (if any) by hand.
    Split {
        prefix: Regex,
        value: Regex,
        end: Option<EndCheck>,
    },
    /// Anything else: `captures`; the first participating group is the
    /// secret.
    Captures(Regex),
}

/// What must follow a token (or the end of the text).
enum EndCheck {
    /// `\b` after the token: not `[A-Za-z0-9_]`.
    Word,
    /// A byte matching this one-character class, e.g. `[^A-Za-z0-9_-]`.
    Class(Regex),
}

/// Parses an end condition written after a rule's capture group: `\b`
/// or a one-character terminator class `(?:[^…]|$)`; `None` for any other
/// tail.
fn end_check(tail: &str) -> Option<EndCheck> {
    if tail == r"\b" {
        return Some(EndCheck::Word);
    }
    let class = tail.strip_prefix("(?:[^")?.strip_suffix("|$)")?;
    Regex::new(&format!("^[^{class}")).ok().map(EndCheck::Class)
}

/// Splits a pattern at its first capture group into the text before it,
/// the group's contents and the text after it, skipping escapes, classes
/// and non-capturing groups.
fn split_capture(p: &str) -> Option<(&str, &str, &str)> {
    let b = p.as_bytes();
    let (mut i, mut in_class, mut open, mut depth) = (0, false, None, 0usize);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'(' if !in_class => {
                if open.is_none() && b.get(i + 1) != Some(&b'?') {
                    open = Some(i);
                    depth = 0;
                } else if open.is_some() {
                    depth += 1;
                }
            }
            b')' if !in_class && open.is_some() => {
                if depth == 0 {
                    let o = open?;
                    return Some((&p[..o], &p[o + 1..i], &p[i + 1..]));
                }
                depth -= 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Chooses the cheapest matcher a rule pattern's shape allows.
fn compile_matcher(pattern: &str) -> Result<Matcher, regex::Error> {
    let anchored = |p: &str| Regex::new(&format!("^(?:{})", ascii_boundaries(p)));
    if let Some((prefix, value, tail)) = split_capture(pattern) {
        // No second capture group, so the split is the whole story.
        if split_capture(value).is_none() && split_capture(tail).is_none() {
            let end = if tail.is_empty() {
                Some(None)
            } else {
                end_check(tail).map(Some)
            };
            if let Some(end) = end {
                if prefix.is_empty() {
                    if let Some(end) = end {
                        return Ok(Matcher::Token {
                            re: anchored(value)?,
                            end,
                        });
                    }
                } else {
                    return Ok(Matcher::Split {
                        prefix: anchored(prefix)?,
                        value: anchored(value)?,
                        end,
                    });
                }
            }
        }
    }
    Ok(Matcher::Captures(anchored(pattern)?))
}

struct CustomRule {
    kind: String,
    re: Regex,
    group: Option<usize>,
}

/// Which non-table detectors are on.
#[derive(Clone, Copy)]
struct Enabled {
    pem: bool,
    stack: bool,
    ip: bool,
    host: bool,
    instruction: bool,
    echo: bool,
    quoted: bool,
}

/// The compiled sanitizer shared behind `Sanitizer`'s `Arc`.
pub(crate) struct Engine {
    ac: AhoCorasick,
    actions: Vec<Vec<Action>>,
    secrets: Vec<Option<CompiledSecret>>,
    vendored: vendored::Rules,
    /// How many vendored rules are on.
    vendored_count: usize,
    custom: Vec<CustomRule>,
    keyed: keyed::KeyedKinds,
    allow_hosts: addr::AllowedHosts,
    enabled: Enabled,
    stack: stack::StackRules,
    reflect: reflect::ReflectRules,
    pem_header: Regex,
    pem_footer: Regex,
    pub(crate) max_len: usize,
    echo_min_chars: usize,
}

impl Engine {
    pub(crate) fn default_engine() -> Engine {
        // The built-in configuration is fixed; a failure here is a bug in
        // the rule table, which the test suite exercises on every build.
        match Engine::build(&SanitizerBuilder::new()) {
            Ok(e) => e,
            Err(e) => unreachable!("built-in sanitizer rules are invalid: {e}"),
        }
    }

    pub(crate) fn rule_count(&self) -> usize {
        self.secrets.iter().flatten().count() + self.vendored_count + self.custom.len()
    }

    pub(crate) fn build(cfg: &SanitizerBuilder) -> Result<Engine, SanitizerConfigError> {
        let off = |k: &str| cfg.disabled.iter().any(|d| d == k);
        let enabled = Enabled {
            pem: !off(KIND_PRIVATE_KEY),
            stack: !off(KIND_STACK),
            ip: !off(KIND_IP),
            host: !off(KIND_HOST),
            instruction: !off(KIND_INSTRUCTION),
            echo: !off(KIND_ECHO),
            quoted: !off(KIND_QUOTED),
        };

        let mut anchors: Vec<String> = Vec::new();
        let mut actions: Vec<Vec<Action>> = Vec::new();
        let mut add = |lit: &str, action: Action| {
            let lit = lit.to_ascii_lowercase();
            match anchors.iter().position(|a| *a == lit) {
                Some(i) => actions[i].push(action),
                None => {
                    anchors.push(lit);
                    actions.push(vec![action]);
                }
            }
        };

        let mut secrets = Vec::with_capacity(SECRET_RULES.len());
        for (i, rule) in SECRET_RULES.iter().enumerate() {
            if off(rule.kind) {
                secrets.push(None);
                continue;
            }
            let matcher = compile_matcher(rule.pattern).map_err(|e| SanitizerConfigError::InvalidPattern {
                kind: rule.kind.to_string(),
                source: Box::new(e),
            })?;
            for a in rule.anchors {
                add(a, Action::Secret(i));
            }
            let shared = vendored::Rules::index_of(rule.kind);
            secrets.push(Some(CompiledSecret {
                rule: i,
                matcher,
                shared,
            }));
        }
        let mut vendored_count = 0;
        for (i, rule) in vendored::RULES.iter().enumerate() {
            if vendored::SUPERSEDED.contains(&rule.id) || off(rule.id) {
                continue;
            }
            vendored_count += 1;
            for k in rule.keywords {
                add(k, Action::Vendored(i));
            }
        }
        let keyed = keyed::KeyedKinds {
            password: !off(keyed::Named::Password.kind()),
            secret: !off(keyed::Named::Secret.kind()),
            token: !off(keyed::Named::Token.kind()),
            key: !off(keyed::Named::Key.kind()),
        };
        if keyed.any() {
            for a in keyed::ANCHORS {
                add(a, Action::Keyed);
            }
        }
        if enabled.pem {
            add("-----BEGIN", Action::PemBegin);
            add("-----END", Action::PemEnd);
        }
        if enabled.stack {
            for a in stack::ANCHORS {
                add(a, Action::Stack);
            }
        }
        if enabled.ip {
            for a in addr::IPV4_ANCHORS {
                add(a, Action::Ipv4);
            }
            for a in addr::IPV6_ANCHORS {
                add(a, Action::Ipv6);
            }
        }
        if enabled.host {
            for a in addr::HOST_SUFFIXES {
                add(a, Action::HostSuffix);
            }
            add("localhost", Action::Localhost);
            add("://", Action::UrlHost);
        }
        if enabled.instruction {
            for (a, kind) in reflect::ANCHORS {
                add(a, Action::Instruction(*kind));
            }
        }
        if enabled.quoted {
            for (i, a) in quoted::ANCHORS.iter().enumerate() {
                add(a, Action::Quote(i));
            }
        }

        // Overlapping search reports anchors hidden inside longer ones
        // (`key` in `accountkey=`, `sk-` in `sk-ant-`), so no rule depends
        // on which anchor the automaton prefers.
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&anchors)
            .or_else(|_| {
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .build(&anchors)
            })
            .map_err(|e| SanitizerConfigError::InvalidPattern {
                kind: "anchors".to_string(),
                source: Box::new(regex::Error::Syntax(e.to_string())),
            })?;

        let mut custom = Vec::new();
        for (kind, pattern) in &cfg.patterns {
            if !valid_kind_name(kind) {
                return Err(SanitizerConfigError::InvalidKindName { kind: kind.clone() });
            }
            if builtin_category(kind).is_some()
                || kind == KIND_TRUNCATED
                || custom.iter().any(|c: &CustomRule| c.kind == *kind)
            {
                return Err(SanitizerConfigError::DuplicateKind { kind: kind.clone() });
            }
            let re = regex::RegexBuilder::new(pattern)
                .size_limit(1 << 22)
                .build()
                .map_err(|e| SanitizerConfigError::InvalidPattern {
                    kind: kind.clone(),
                    source: Box::new(e),
                })?;
            if re.is_match("") {
                return Err(SanitizerConfigError::EmptyMatch { kind: kind.clone() });
            }
            let group = re.capture_names().position(|n| n == Some("secret"));
            custom.push(CustomRule {
                kind: kind.clone(),
                re,
                group,
            });
        }
        // Every placeholder that can appear in output, built-in or custom.
        let mut placeholders: Vec<String> = render::FIXED_PLACEHOLDERS.iter().map(|p| p.to_string()).collect();
        placeholders.push("[truncated: 18446744073709551615 bytes]".into());
        placeholders.extend(builtin_kinds().iter().map(|k| redacted(k)));
        placeholders.extend(custom.iter().map(|c| redacted(&c.kind)));
        for c in &custom {
            if let Some(p) = placeholders.iter().find(|p| c.re.is_match(p)) {
                return Err(SanitizerConfigError::MatchesPlaceholder {
                    kind: c.kind.clone(),
                    placeholder: p.clone(),
                });
            }
        }

        let stack = stack::StackRules::new();
        let reflect = reflect::ReflectRules::new();
        let pem_header = Regex::new(r"^-----BEGIN ((?:[A-Z0-9]+ ){0,4})PRIVATE KEY(?: BLOCK)?-----").map_err(|e| {
            SanitizerConfigError::InvalidPattern {
                kind: KIND_PRIVATE_KEY.into(),
                source: Box::new(e),
            }
        })?;
        let pem_footer =
            Regex::new(r"^-----END [A-Z0-9 ]{0,64}-----").map_err(|e| SanitizerConfigError::InvalidPattern {
                kind: KIND_PRIVATE_KEY.into(),
                source: Box::new(e),
            })?;

        Ok(Engine {
            ac,
            actions,
            secrets,
            vendored: vendored::Rules::new(),
            vendored_count,
            custom,
            keyed,
            allow_hosts: addr::AllowedHosts::new(&cfg.allow_hosts),
            enabled,
            stack,
            reflect,
            pem_header,
            pem_footer,
            max_len: cfg.max_len,
            echo_min_chars: cfg.echo_min_chars,
        })
    }

    pub(crate) fn sanitize(&self, text: Cow<'_, str>, echoes: &[&str]) -> Sanitized {
        let mut cands = self.detect(&text);
        if self.enabled.echo {
            reflect::echoes(&text, echoes, self.echo_min_chars, &mut cands);
        }
        let mut findings = resolve(cands);
        if findings.is_empty() && text.len() <= self.max_len {
            // Nothing to remove and nothing to cut: the text is its own
            // rendering (and an owned one is handed back without a copy).
            let original_len = text.len();
            return Sanitized {
                text: text.into_owned(),
                findings: Vec::new(),
                original_len,
            };
        }
        let text = &*text;
        let mut rendered = render::render(text, &findings, self.max_len);
        // A placeholder can complete a match that its original text did
        // not (`x.local` followed by a redacted key now ends at `[`), and
        // so can the cap. Re-scan the output and fold anything new back
        // into the original's findings until the output is stable, which
        // is what makes `sanitize(sanitize(x)) == sanitize(x)` hold.
        for _ in 0..MAX_PASSES {
            if findings.is_empty() && rendered.cut.is_none() {
                break;
            }
            let again = self.detect(&rendered.text);
            if again.is_empty() {
                break;
            }
            let covered_before: usize = findings.iter().map(|c| c.end - c.start).sum();
            for c in again {
                let (start, end) = rendered.to_original(c.start, c.end, text.len());
                findings.push(Cand { start, end, ..c });
            }
            findings = resolve(findings);
            let covered_after: usize = findings.iter().map(|c| c.end - c.start).sum();
            rendered = render::render(text, &findings, self.max_len);
            if covered_after == covered_before {
                break;
            }
        }
        rendered.finish(text, findings)
    }

    /// Every detector over `text`, then over its disguised forms (see
    /// `disguise`).
    fn detect(&self, text: &str) -> Vec<Cand> {
        let mut cands = self.detect_plain(text);
        let detect_plain = |t: &str| self.detect_plain(t);
        disguise::zero_width(detect_plain, text, &mut cands);
        disguise::escaped_layout(detect_plain, text, &mut cands);
        disguise::base64(detect_plain, text, &mut cands);
        cands
    }

    /// Every detector over `text` as it is.
    pub(crate) fn detect_plain(&self, text: &str) -> Vec<Cand> {
        let mut cands = Vec::new();
        // Most texts (a short result) have no anchor: only the custom rules,
        // which need none, can match. Asking whether any anchor occurs is
        // cheaper than setting up the overlapping search that lists them.
        if !self.ac.is_match(text) {
            self.custom_matches(text, &mut cands);
            return cands;
        }
        let mut hits: Vec<(usize, usize, usize)> = Vec::new();
        for m in self.ac.find_overlapping_iter(text) {
            hits.push((m.start(), m.end(), m.pattern().as_usize()));
        }
        hits.sort_unstable();

        let mut st = ScanState::default();
        let pem_ends: Vec<usize> = if self.enabled.pem {
            hits.iter()
                .filter(|h| self.actions[h.2].iter().any(|a| matches!(a, Action::PemEnd)))
                .map(|h| h.0)
                .collect()
        } else {
            Vec::new()
        };

        // Per vendored rule, the window its hits have opened so far; a hit
        // beyond it runs the rule over it and opens the next. Sized on the
        // first hit: most texts (a short result) have none.
        let mut windows: Vec<Option<vendored::Window>> = Vec::new();
        for &(start, end, pid) in &hits {
            for action in &self.actions[pid] {
                match *action {
                    Action::Secret(i) => self.secret_at(text, start, i, &mut st, &mut cands),
                    Action::Vendored(i) => {
                        if windows.is_empty() {
                            windows.resize(vendored::RULES.len(), None);
                        }
                        let w = vendored::window(text, i, start, end);
                        match windows[i] {
                            Some(open) if w.0 <= open.1 => windows[i] = Some((open.0, w.1.max(open.1))),
                            Some(open) => {
                                self.vendored.scan(text, i, open, &mut cands);
                                windows[i] = Some(w);
                            }
                            None => windows[i] = Some(w),
                        }
                    }
                    Action::PemBegin => {
                        if start >= st.pem_done
                            && let Some(c) = tokens::pem_at(text, start, &pem_ends, &self.pem_header, &self.pem_footer)
                        {
                            st.pem_done = c.end;
                            cands.push(c);
                        }
                    }
                    Action::PemEnd => {}
                    Action::Stack => {
                        if start >= st.stack_done {
                            st.stack_done = self.stack.scan(text, start, st.stack_done, &mut cands);
                        }
                    }
                    Action::Ipv4 => addr::ipv4_at(&self.allow_hosts, text, start, &mut cands),
                    Action::Ipv6 => {
                        if start >= st.v6_done {
                            st.v6_done = addr::ipv6_at(&self.allow_hosts, text, start, &mut cands);
                        }
                    }
                    Action::HostSuffix => {
                        if let Some(e) =
                            addr::host_suffix_at(&self.allow_hosts, text, start, end, st.host_done, &mut cands)
                        {
                            st.host_done = e;
                        }
                    }
                    Action::Localhost => addr::localhost_at(&self.allow_hosts, text, start, end, &mut cands),
                    Action::UrlHost => addr::url_host_at(&self.allow_hosts, text, end, &mut cands),
                    Action::Quote(i) => quoted::quote_at(text, start, end, i, &mut st.quotes, &mut cands),
                    Action::Keyed => keyed::keyed_at(text, start, end, self.keyed, &mut st.keyed_done, &mut cands),
                    Action::Instruction(kind) => {
                        if start >= st.instr_done
                            && let Some(e) = self.reflect.instruction_at(text, start, end, kind)
                        {
                            st.instr_done = e;
                            cands.push(Cand {
                                start: instruction_start(text, start, kind),
                                end: e,
                                kind: Cow::Borrowed(KIND_INSTRUCTION),
                                category: Category::Instruction,
                            });
                        }
                    }
                }
            }
        }

        for (i, w) in windows.into_iter().enumerate() {
            if let Some(w) = w {
                self.vendored.scan(text, i, w, &mut cands);
            }
        }
        drop_quotes_around_secrets(&mut cands);
        self.custom_matches(text, &mut cands);
        cands
    }

    /// The user's own rules, each a regex over the whole text.
    fn custom_matches(&self, text: &str, cands: &mut Vec<Cand>) {
        for c in &self.custom {
            for caps in c.re.captures_iter(text) {
                let m = c.group.and_then(|g| caps.get(g)).or_else(|| caps.get(0));
                if let Some(m) = m
                    && !m.is_empty()
                {
                    cands.push(Cand {
                        start: m.start(),
                        end: m.end(),
                        kind: Cow::Owned(c.kind.clone()),
                        category: Category::Secret,
                    });
                }
            }
        }
    }

    fn secret_at(&self, text: &str, anchor: usize, i: usize, st: &mut ScanState, cands: &mut Vec<Cand>) {
        let Some(Some(compiled)) = self.secrets.get(i) else {
            return;
        };
        let rule = &SECRET_RULES[compiled.rule];
        let bytes = text.as_bytes();
        let start = match rule.back {
            Back::None => anchor,
            Back::Class(class, min, max) => {
                let mut k = 0;
                while k <= max && k < anchor && class(bytes[anchor - k - 1]) {
                    k += 1;
                }
                if k < min || k > max {
                    return;
                }
                anchor - k
            }
        };
        if rule.left_boundary && start > 0 && is_word(bytes[start - 1]) {
            return;
        }
        // A hit inside this rule's previous match (or a second anchor at
        // the same start) is skipped: the match already looked there.
        // Without this, `password=password=…` costs a full value scan per
        // anchor, which is linear but with a large constant.
        if st.rule_until.len() <= i {
            st.rule_until.resize(SECRET_RULES.len(), 0);
        }
        if start < st.rule_until[i] {
            return;
        }
        st.rule_until[i] = start + 1;
        if rule.check == Check::Jwt && !jwt_header_closes(bytes, start, st) {
            return;
        }
        let window_end = floor_boundary(text, start.saturating_add(SECRET_WINDOW));
        let slice = &text[start..window_end];
        let (vs, ve, end) = match &compiled.matcher {
            Matcher::Token { re, end } => {
                let Some(m) = re.find(slice) else {
                    return;
                };
                st.rule_until[i] = start + m.end().max(1);
                if m.end() == slice.len() && window_end < text.len() {
                    // The window cut a longer token; a boundary seen at
                    // the cut is not a real one.
                    return;
                }
                (m.start(), m.end(), Some(end))
            }
            Matcher::Split { prefix, value, end } => {
                let Some(p) = prefix.find(slice) else {
                    return;
                };
                let Some(v) = value.find(&slice[p.end()..]) else {
                    return;
                };
                st.rule_until[i] = start + p.end() + v.end().max(1);
                (p.end() + v.start(), p.end() + v.end(), end.as_ref())
            }
            Matcher::Captures(re) => {
                let Some(caps) = re.captures(slice) else {
                    return;
                };
                let Some(whole) = caps.get(0) else {
                    return;
                };
                st.rule_until[i] = start + whole.end().max(1);
                let m = (1..caps.len()).find_map(|g| caps.get(g)).unwrap_or(whole);
                (m.start(), m.end(), None)
            }
        };
        let value_end = start + ve;
        if let Some(end_check) = end {
            let ended = value_end == text.len()
                || match end_check {
                    EndCheck::Word => !is_word(bytes[value_end]),
                    EndCheck::Class(re) => re.is_match(&text[value_end..floor_boundary(text, value_end + 4)]),
                };
            if !ended {
                return;
            }
        }
        let secret = &slice[vs..ve];
        let range = (start + vs, value_end);
        if vs < ve
            && self.check(rule.check, secret)
            && compiled.shared.is_none_or(|g| {
                let w = vendored::window(text, g, range.0, range.1);
                self.vendored.admits(g, text, range, range, w)
            })
        {
            cands.push(cand(range.0..range.1, rule.kind, Category::Secret));
        }
    }

    fn check(&self, check: Check, secret: &str) -> bool {
        match check {
            Check::None => true,
            Check::Entropy => tokens::high_entropy(secret),
            Check::Password => tokens::plausible_password(secret),
            Check::Jwt => tokens::valid_jwt(secret),
            Check::NotPlaceholder => {
                !secret.starts_with(render::REDACTED_PREFIX) && !tokens::is_reference(secret) && !tokens::masked(secret)
            }
        }
    }
}

/// Where an instruction finding starts: role markers take their whole
/// line, phrases their sentence, tokens start at the token.
fn instruction_start(text: &str, start: usize, kind: reflect::InstrAnchor) -> usize {
    match kind {
        reflect::InstrAnchor::RoleLine => reflect::line_start_of_marker(text, start),
        reflect::InstrAnchor::Phrase => reflect::sentence_start(text, start),
        _ => start,
    }
}

/// A quoted span that holds a secret is a quoted credential (a JSON
/// `"private_key"` value), not prose: the secret's own finding says what
/// it is, so the quoted-text candidate around it is dropped.
fn drop_quotes_around_secrets(cands: &mut Vec<Cand>) {
    if !cands.iter().any(|c| c.kind == KIND_QUOTED) {
        return;
    }
    let mut secrets: Vec<(usize, usize)> = cands
        .iter()
        .filter(|c| c.category == Category::Secret)
        .map(|c| (c.start, c.end))
        .collect();
    secrets.sort_unstable();
    cands.retain(|c| {
        if c.kind != KIND_QUOTED {
            return true;
        }
        let i = secrets.partition_point(|s| s.0 < c.end);
        !secrets[..i]
            .iter()
            .rev()
            .take_while(|s| s.0 >= c.start.saturating_sub(MAX_SECRET_BACK))
            .any(|s| s.1 > c.start)
    });
}

/// How far before a quoted span a secret overlapping it may start (a
/// match of gitleaks' rules or gate's starts at most a window back).
const MAX_SECRET_BACK: usize = SECRET_WINDOW;

/// Sorts candidates and merges overlaps, so every byte any detector wanted
/// gone is gone and each removed byte belongs to exactly one finding (the
/// earliest-starting, then the longest, then the one that says more than
/// `generic-…`: a key found by its vendor's shape is named for it).
fn resolve(mut cands: Vec<Cand>) -> Vec<Cand> {
    // The usual case on a clean text: no sort, no second vector.
    if cands.is_empty() {
        return cands;
    }
    let generic = |c: &Cand| c.kind.starts_with("generic-");
    cands.sort_by(|a, b| {
        a.start
            .cmp(&b.start)
            .then(b.end.cmp(&a.end))
            .then(generic(a).cmp(&generic(b)))
    });
    let mut out: Vec<Cand> = Vec::with_capacity(cands.len());
    for c in cands {
        if c.start >= c.end {
            continue;
        }
        if let Some(last) = out.last_mut()
            && c.start < last.end
        {
            last.end = last.end.max(c.end);
            continue;
        }
        out.push(c);
    }
    out
}

/// Whether the base64url run after `eyJ` at `start` is followed by `.`
/// (after at most two `=`), as a JWT header must be. Every `eyJ` inside
/// one run shares the run's end, so the run is scanned once and
/// remembered: `eyJ-eyJ-…` would otherwise cost a long regex scan per
/// anchor.
fn jwt_header_closes(bytes: &[u8], start: usize, st: &mut ScanState) -> bool {
    let is_b64url = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    if start >= st.jwt_run_end {
        let mut h = start + 3;
        while h < bytes.len() && is_b64url(bytes[h]) {
            h += 1;
        }
        st.jwt_run_end = h;
    }
    let mut k = st.jwt_run_end;
    let mut pad = 0;
    while pad < 2 && k < bytes.len() && bytes[k] == b'=' {
        k += 1;
        pad += 1;
    }
    k < bytes.len() && bytes[k] == b'.'
}

/// How far each position-tracking detector has already looked.
#[derive(Default)]
struct ScanState {
    pem_done: usize,
    stack_done: usize,
    v6_done: usize,
    host_done: usize,
    instr_done: usize,
    /// End of the base64url run holding the last `eyJ` looked at.
    jwt_run_end: usize,
    /// Per secret rule, where its last match (or attempt) ended.
    rule_until: Vec<usize>,
    /// Quote pairing.
    quotes: quoted::QuoteState,
    /// End of the last identifier `keyed` read.
    keyed_done: usize,
}

/// The rule table writes `\b`; the ASCII form lets the lazy DFA run on
/// any input instead of falling back to a slower engine on non-ASCII text.
fn ascii_boundaries(p: &str) -> String {
    p.replace(r"\b", r"(?-u:\b)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule but three takes a capture-free path: the URL password
    /// (whose value is followed by `@host`), the key id (followed by a
    /// quote) and the header rule (two alternative groups) need captures.
    #[test]
    fn most_rules_avoid_captures() {
        for rule in SECRET_RULES {
            let m = compile_matcher(rule.pattern).unwrap();
            let captures = matches!(m, Matcher::Captures(_));
            let expected = matches!(
                rule.kind,
                "url-password" | "authorization-header" | "gcp-service-account-key-id"
            );
            assert_eq!(captures, expected, "{} {}", rule.kind, rule.pattern);
            if rule.left_boundary && !expected {
                assert!(matches!(m, Matcher::Token { .. }), "{}", rule.kind);
            }
        }
    }
}
