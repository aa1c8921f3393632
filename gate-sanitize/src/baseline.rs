//! The naive baseline the benchmark compares against: every built-in
//! pattern (gate's table and the vendored rules the engine runs) compiled
//! on its own and applied one after another with `replace_all` (feature
//! `testing`, off by default; for gate's own tests and benches, not covered
//! by semver). It exists so the benchmark measures the anchored engine
//! against the obvious implementation on exactly the same rules, which are
//! private to this crate: that is why it is here and not in the bench.
//! [`vendored_rules`] lists the same vendored rules for the tests of each
//! rule set's own examples.

use regex::Regex;

use crate::rules::SECRET_RULES;
use crate::vendored;

/// Every built-in rule as a stand-alone regex, applied in sequence.
pub struct NaiveLoop {
    rules: Vec<(Regex, String)>,
}

impl Default for NaiveLoop {
    fn default() -> Self {
        Self::new()
    }
}

impl NaiveLoop {
    /// Compiles every built-in rule unanchored.
    pub fn new() -> NaiveLoop {
        let mut rules = Vec::new();
        for r in SECRET_RULES {
            let p = r.pattern.replace(r"\b", r"(?-u:\b)");
            if let Ok(re) = Regex::new(&p) {
                rules.push((re, crate::render::redacted(r.kind)));
            }
        }
        for r in vendored::RULES {
            if vendored::SUPERSEDED.contains(&r.id) {
                continue;
            }
            if let Ok(re) = regex::RegexBuilder::new(r.regex).size_limit(1 << 24).build() {
                rules.push((re, crate::render::redacted(r.id)));
            }
        }
        let extra: &[(&str, &str)] = &[
            (
                r"(?s)-----BEGIN [A-Z ]*PRIVATE KEY[A-Z ]*-----.*?-----END [A-Z ]*-----",
                "[redacted:private-key]",
            ),
            (
                r"(?m)^Traceback \(most recent call last\):\n(?:[ \t]+.*\n)*",
                crate::STACK_TRACE_PLACEHOLDER,
            ),
            (r"(?m)(?:^[\t ]+(?:eval )?at \S.*\n?)+", crate::STACK_TRACE_PLACEHOLDER),
            (
                r"(?m)^goroutine \d+ \[[^\]]*\]:\n(?:.+\n)*",
                crate::STACK_TRACE_PLACEHOLDER,
            ),
            (
                r"(?m)^stack backtrace:\n(?:[ \t]+.*\n)*",
                crate::STACK_TRACE_PLACEHOLDER,
            ),
            (
                r"(?-u:\b)(?:10\.\d{1,3}|127\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])|192\.168|169\.254|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7]))\.\d{1,3}\.\d{1,3}(?::\d{1,5})?(?-u:\b)",
                crate::INTERNAL_ADDRESS_PLACEHOLDER,
            ),
            (
                r"(?i)(?-u:\b)(?:fc|fd|fe[89ab])[0-9a-f]{2}:[0-9a-f:]*|::1(?-u:\b)",
                crate::INTERNAL_ADDRESS_PLACEHOLDER,
            ),
            (
                r"(?i)(?-u:\b)[a-z0-9][a-z0-9.\-]*\.(?:local|internal|intranet|corp|lan|home\.arpa|localhost|localdomain|svc|consul|private)(?-u:\b)(?::\d{1,5})?",
                crate::INTERNAL_ADDRESS_PLACEHOLDER,
            ),
            (
                r"(?i)(?:ignore|disregard|forget)\s+(?:all\s+)?(?:previous|prior|above)\s+instructions.*",
                crate::INSTRUCTION_PLACEHOLDER,
            ),
        ];
        for (p, ph) in extra {
            if let Ok(re) = Regex::new(p) {
                rules.push((re, (*ph).to_string()));
            }
        }
        NaiveLoop { rules }
    }

    /// How many regexes the loop runs.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether the loop has no rule (never, for the built-in set).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Applies every rule in turn.
    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (re, placeholder) in &self.rules {
            if let std::borrow::Cow::Owned(s) = re.replace_all(&out, placeholder.as_str()) {
                out = s;
            }
        }
        out
    }
}

/// Every vendored rule the engine runs, as (its id in its own rule set,
/// the kind its findings report): what the per-rule tests of gitleaks' and
/// Nosey Parker's examples need to switch one rule's kind on alone.
pub fn vendored_rules() -> Vec<(&'static str, &'static str)> {
    vendored::RULES
        .iter()
        .filter(|r| !vendored::SUPERSEDED.contains(&r.id))
        .map(|r| (r.origin, r.id))
        .collect()
}
