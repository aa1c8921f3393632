//! Stack traces: Rust panics and backtraces, Python tracebacks, Java, JS and
//! C# frames, Go goroutine dumps, Ruby and PHP traces.
//!
//! A trace is a run of lines, so this detector works on lines: an anchor
//! marks a line that may start a trace, the line is classified, and a
//! trace extends over following frame-like lines. The one-line error
//! message is not part of the run (above it for Java and Go, below it for
//! Python, between the location and the backtrace for Rust) and is kept;
//! the other detectors still sanitize it.
//!
//! Rules follow Google's fluent-plugin-detect-exceptions state machine and
//! the Rust panic formats before and after 1.73.

use regex::{Regex, RegexSet};

use crate::Category;
use crate::candidate::{Cand, KIND_STACK, cand};

/// Literals that occur on a line that may start a trace.
pub(crate) const ANCHORS: &[&str] = &[
    "traceback (most recent call last)",
    "file \"",
    "\tat ",
    "  at ",
    ".rb:",
    ".go:",
    "stack backtrace:",
    "panicked at",
    "rust_backtrace",
    "goroutine ",
    "stack trace:",
    "\tfrom ",
    "eval at ",
    "#0 ",
];

/// Lines that can start a trace.
const START: &[&str] = &[
    r"^Traceback \(most recent call last\):",
    r#"^[\t ]+File "[^"]*", line \d+"#,
    r"^[\t ]+(?:eval )?at \S.*(?:\(|:\d|(?-u:\b)in(?-u:\b)|\)$)",
    r"^[\t ]+\S.*\.rb:\d+:in ",
    r"^#0\s+\S",
    r"^stack backtrace:",
    r"^thread '[^']*' panicked at \S+:\d+:\d+:\s*$",
    r"^note: (?:run with `RUST_BACKTRACE|Some details are omitted)",
    r"^goroutine \d+ \[[^\]]*\]:\s*$",
    r"^(?:PHP )?Stack trace:",
    r"^\t\S+\.go:\d+",
];

/// Lines that continue a trace once one has started.
const CONTINUE: &[&str] = &[
    r"^[\t ]+\S",
    r"^\d+: \S",
    r"^created by ",
    r"^#\d+ ",
    r"^(?:Caused by|Suppressed): ",
    r"^--- End of ",
    r"^\S+\(.*\)\s*$",
    r"^\[signal ",
    r"^\{main\}",
    r"^<asynchronous suspension>",
];

/// Compiled line classifiers.
pub(crate) struct StackRules {
    start: RegexSet,
    cont: RegexSet,
    old_panic: Regex,
}

impl StackRules {
    pub(crate) fn new() -> StackRules {
        // Fixed patterns; the test suite compiles them on every run.
        let compile = |p: &[&str]| match RegexSet::new(p) {
            Ok(s) => s,
            Err(e) => unreachable!("built-in stack-trace patterns are invalid: {e}"),
        };
        StackRules {
            start: compile(START),
            cont: compile(CONTINUE),
            old_panic: match Regex::new(r"^thread '[^']*' panicked at '.*', (\S+:\d+:\d+)\s*$") {
                Ok(r) => r,
                Err(e) => unreachable!("built-in panic pattern is invalid: {e}"),
            },
        }
    }

    fn is_start(&self, line: &str) -> bool {
        self.start.is_match(line)
    }

    fn is_continuation(&self, line: &str) -> bool {
        self.is_start(line) || self.cont.is_match(line)
    }

    /// Looks at the line containing `at` (no earlier than `floor`, which
    /// is at a line start); records a trace if one starts there and
    /// returns the position up to which lines have been classified.
    pub(crate) fn scan(&self, text: &str, at: usize, floor: usize, cands: &mut Vec<Cand>) -> usize {
        let ls = text[floor..at].rfind('\n').map_or(floor, |i| floor + i + 1);
        let (le, next) = line_end(text, ls);
        let line = trim_cr(&text[ls..le]);
        if let Some(c) = self.old_panic.captures(line) {
            // Rust before 1.73 puts the message inside the panic line:
            // keep `thread 'main' panicked at 'msg', ` and drop the
            // location.
            if let Some(loc) = c.get(1) {
                cands.push(cand(ls + loc.start()..ls + loc.end(), KIND_STACK, Category::StackTrace));
            }
            return next;
        }
        if !self.is_start(line) {
            return next;
        }
        let mut end = ls + line.len();
        let mut pos = next;
        while pos < text.len() {
            let (le, nx) = line_end(text, pos);
            let line = trim_cr(&text[pos..le]);
            if line.trim().is_empty() {
                // A blank line ends the trace unless another trace part
                // (a further goroutine, a chained cause) follows at once.
                let (le2, _) = line_end(text, nx.min(text.len()));
                let after = trim_cr(&text[nx.min(text.len())..le2]);
                if nx < text.len() && self.is_start(after) {
                    pos = nx;
                    continue;
                }
                break;
            }
            if !self.is_continuation(line) {
                break;
            }
            end = pos + line.len();
            pos = nx;
        }
        cands.push(cand(ls..end, KIND_STACK, Category::StackTrace));
        end
    }
}

/// The end of the line starting at `ls` (excluding `\n`) and the start of
/// the next line.
fn line_end(text: &str, ls: usize) -> (usize, usize) {
    match text[ls..].find('\n') {
        Some(i) => (ls + i, ls + i + 1),
        None => (text.len(), text.len()),
    }
}

fn trim_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}
