//! Go (RE2) regex syntax to the Rust `regex` crate's, for gitleaks' rules.
//!
//! The two dialects agree on almost everything; where they differ the rule
//! would silently mean something else, so the differences are rewritten:
//! Go's `\w`, `\d`, `\s` and `\b` are ASCII-only while the `regex` crate's
//! are Unicode-aware, and inside a character class Go reads `[`, `&&`, `--`
//! and `~~` literally where the `regex` crate reads nested classes and set
//! operations. Anything else is passed through, so a construct the `regex`
//! crate lacks (look-around, back-references, `\Q…\E`) fails to compile and
//! the build names the rule. Shared by `build.rs` (which checks every rule)
//! and the crate's unit tests.

/// Rewrites a Go regex for the `regex` crate.
pub fn go_to_rust(p: &str) -> String {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 16);
    let mut i = 0;
    let mut in_class = false;
    // Position just after `[` or `[^`, where `]` is a literal.
    let mut class_open = false;
    while i < chars.len() {
        let c = chars[i];
        let at_class_start = class_open;
        class_open = false;
        if c == '\\' && i + 1 < chars.len() {
            let e = chars[i + 1];
            let rewritten = match (e, in_class) {
                ('w', false) => Some("[[:word:]]"),
                ('w', true) => Some("[:word:]"),
                ('W', false) => Some("[^[:word:]]"),
                ('W', true) => Some("[:^word:]"),
                ('d', false) => Some("[0-9]"),
                ('d', true) => Some("0-9"),
                ('D', false) => Some("[^0-9]"),
                ('D', true) => Some("[:^digit:]"),
                ('s', false) => Some(r"[\t\n\f\r ]"),
                ('s', true) => Some(r"\t\n\f\r "),
                ('S', false) => Some(r"[^\t\n\f\r ]"),
                ('S', true) => Some("[:^space:]"),
                ('b', false) => Some(r"(?-u:\b)"),
                ('B', false) => Some(r"(?-u:\B)"),
                _ => None,
            };
            match rewritten {
                Some(r) => out.push_str(r),
                None => {
                    out.push(c);
                    out.push(e);
                }
            }
            i += 2;
            continue;
        }
        if in_class {
            match c {
                ']' if !at_class_start => {
                    in_class = false;
                    out.push(']');
                }
                '[' if chars.get(i + 1) == Some(&':') => {
                    // A POSIX class such as `[:alpha:]`: copy it whole.
                    let rest: String = chars[i..].iter().collect();
                    match rest.find(":]") {
                        Some(end) => {
                            out.push_str(&rest[..end + 2]);
                            i += rest[..end + 2].chars().count();
                            continue;
                        }
                        None => out.push_str(r"\["),
                    }
                }
                '[' => out.push_str(r"\["),
                '&' | '-' | '~' if chars.get(i + 1) == Some(&c) => {
                    out.push('\\');
                    out.push(c);
                }
                _ => out.push(c),
            }
            i += 1;
            continue;
        }
        if c == '{' {
            // Go reads a `{` that does not open `{n}`, `{n,}` or `{n,m}`
            // as a literal; the `regex` crate rejects it.
            let len = repetition_len(&chars[i..]);
            if len > 0 {
                out.extend(&chars[i..i + len]);
                i += len;
            } else {
                out.push_str(r"\{");
                i += 1;
            }
            continue;
        }
        if c == '}' {
            out.push_str(r"\}");
            i += 1;
            continue;
        }
        if c == '[' {
            in_class = true;
            out.push('[');
            if chars.get(i + 1) == Some(&'^') {
                out.push('^');
                i += 1;
            }
            class_open = true;
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// gitleaks' generator ends a token at what ends one in source code: a
/// quote, whitespace, `;`, an escaped newline or the end. In error text a
/// token is as often followed by `,` `)` `]` `}` `>` `<` `&` `|` `:` or
/// a full stop that ends the sentence (`key AIza… expired, retry`;
/// `(token ghp_…)`), so the rules that use that suffix accept those too.
/// A `.` followed by more text stays a non-boundary: `ico-….png` is a
/// file name, not an Infracost token.
pub fn widen_suffix(go: &str) -> String {
    go.replace(SOURCE_SUFFIX, TEXT_SUFFIX)
}

/// The token suffix of gitleaks' generated rules (`secretSuffix`).
const SOURCE_SUFFIX: &str = r#"(?:[\x60'"\s;]|\\[nr]|$)"#;

/// The same suffix, with the punctuation that ends a token in prose.
const TEXT_SUFFIX: &str = r#"(?:[\x60'"\s;,)\]}>|&<:]|\.(?:\s|$)|\\[nr]|$)"#;

/// The length of a `{n}`, `{n,}` or `{n,m}` repetition at the start of
/// `s`, or 0.
fn repetition_len(s: &[char]) -> usize {
    let digits = |from: usize| s[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let n = digits(1);
    if n == 0 {
        return 0;
    }
    let mut i = 1 + n;
    if s.get(i) == Some(&',') {
        i += 1 + digits(i + 1);
    }
    if s.get(i) == Some(&'}') { i + 1 } else { 0 }
}

/// Compiles a translated rule regex the way the sanitizer will, naming the
/// rule in the error.
pub fn check(id: &str, what: &str, translated: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(translated)
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| format!("rule `{id}`: its {what} does not compile with the regex crate: {e}"))
}

/// The compiled-size limit every gitleaks regex must fit in.
pub const SIZE_LIMIT: usize = 1 << 24;

/// Removes `(?#…)` comments, which Nosey Parker's patterns use (Hyperscan
/// and PCRE read them) and the `regex` crate does not.
pub fn strip_comments(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class && pattern_at(&chars, "?#") => {
                for n in chars.by_ref() {
                    if n == ')' {
                        break;
                    }
                }
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Whether the characters still to come start with `prefix`.
fn pattern_at(chars: &std::iter::Peekable<std::str::Chars<'_>>, prefix: &str) -> bool {
    chars.clone().take(prefix.len()).eq(prefix.chars())
}
