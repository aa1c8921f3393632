//! Values known by the name of their key: `DB_PASSWORD=…`, `"password":
//! "…"`, `$password = "…";`, `:password => '…'`, `my_password := "…"`,
//! `if creds.Secret != "…"`, `<add key="Password" value="…"/>`,
//! `<password>…</password>`, `password '…'` in a build script,
//! `Password=…;` in a connection string, `--password …` on a command line,
//! `?token=…` in a URL.
//!
//! A password has no shape a pattern could know; what marks it is the key
//! in front of it, and error bodies carry keys in every format a program
//! reads (YAML, INI, TOML, `.env`, properties, JSON, XML, code). One regex
//! per format would be a dozen regexes with a dozen ways to miss; this
//! detector instead reads the one structure they share: an identifier
//! ending in a secret's name, the punctuation a format puts between a key
//! and its value, and the value in its quotes or up to its terminator.
//! The key must end in the name (`password_hint`, `token_url` and
//! `max_tokens` name other things), and the value must not be a reference
//! to the secret instead of the secret itself (`$PASSWORD`, `${DB_PASS}`,
//! `%PASS%`, `{{ .Values.password }}`, `os.environ[…]`, `config.password`)
//! or a placeholder (`****`, `<password>`, `changeme`, `YOUR_API_KEY`).
//! Work per anchor is bounded by [`KEY_REACH`] and [`VALUE_REACH`].

use crate::Category;
use crate::boundary::floor_boundary;
use crate::candidate::{Cand, cand};
use crate::render::REDACTED_PREFIX;
use crate::tokens::{is_reference, masked, plausible_password};

/// Literals that start the detector (ASCII case-insensitive): each is the
/// end of a secret's name.
pub(crate) const ANCHORS: &[&str] = &["pass", "pwd", "secret", "token", "key", "access", "private"];

/// How far back from an anchor a key's identifier may start.
const KEY_REACH: usize = 64;

/// The longest value read after a key.
const VALUE_REACH: usize = 512;

/// What a key names, and so the kind of its value's finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Named {
    Password,
    Secret,
    Token,
    Key,
    /// A word that names a key only in front of one (`cryptocompare
    /// ACCESS …`, `buddynsPRIVATE=…`): the value must be key-like.
    SecretLike,
    /// `key` after a vendor's name: the value must be key-like.
    KeyLike,
}

impl Named {
    pub(crate) fn kind(self) -> &'static str {
        match self {
            Named::Password => "generic-password",
            Named::Secret | Named::SecretLike => "generic-secret",
            Named::Token => "generic-token",
            Named::Key | Named::KeyLike => "generic-key",
        }
    }
}

/// Which of the kinds are on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyedKinds {
    pub password: bool,
    pub secret: bool,
    pub token: bool,
    pub key: bool,
}

impl KeyedKinds {
    fn on(self, n: Named) -> bool {
        match n {
            Named::Password => self.password,
            Named::Secret | Named::SecretLike => self.secret,
            Named::Token => self.token,
            Named::Key | Named::KeyLike => self.key,
        }
    }

    pub(crate) fn any(self) -> bool {
        self.password || self.secret || self.token || self.key
    }
}

/// What comes before `key` in a name that makes it an API key's (`api_key`,
/// `secret_key`, `private_key`); `monkey`, `hotkey` and `sort_key` are not.
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "license",
    "licence",
    "master",
    "encryption",
    "signing",
    "client",
    "app",
    "account",
    "subscription",
    "service",
    "consumer",
    "admin",
    "webhook",
    "storage",
    "shared",
];

/// Values that stand for a secret without being one.
const PLACEHOLDERS: &[&str] = &[
    "changeme",
    "change_me",
    "placeholder",
    "example",
    "dummy",
    "redacted",
    "hidden",
    "masked",
    "secret",
    "password",
    "passwd",
    "token",
    "apikey",
    "api_key",
    "null",
    "none",
    "nil",
    "undefined",
    "true",
    "false",
    "required",
    "optional",
    "missing",
    "empty",
    "invalid",
    "incorrect",
    "expired",
    "unknown",
];

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// What the key of the identifier `key` names, if it names a secret: the
/// name lowercased without separators must end in one.
fn named(key: &str) -> Option<Named> {
    let raw = key.to_ascii_lowercase();
    let flat: String = raw.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let before = |suffix: &str| &flat[..flat.len() - suffix.len()];
    if ["password", "passwd", "passphrase", "pwd"]
        .iter()
        .any(|s| flat.ends_with(s))
    {
        return Some(Named::Password);
    }
    if flat.ends_with("pass") {
        // `pass` alone or after a separator (`db_pass`, `smtp.pass`), not
        // the end of a word (`bypass`, `compass`).
        let sep = raw.len() > 4 && matches!(raw.as_bytes()[raw.len() - 5], b'_' | b'-' | b'.');
        return (flat == "pass" || sep).then_some(Named::Password);
    }
    if flat.ends_with("secret") {
        return Some(Named::Secret);
    }
    if flat.ends_with("token") {
        return Some(Named::Token);
    }
    if flat.ends_with("key") {
        let head = before("key");
        if KEY_QUALIFIERS.iter().any(|q| head.ends_with(q)) {
            return Some(Named::Key);
        }
        // A vendor's name glued to `key` (`opencagedata_key`,
        // `apitemplateKEY`) names one too, if what follows is key-like.
        return (!head.is_empty()).then_some(Named::KeyLike);
    }
    if flat.ends_with("access") || flat.ends_with("private") {
        return Some(Named::SecretLike);
    }
    None
}

/// How a key is tied to its value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tie {
    /// `=`, `:`, `:=`, `=>`, `==`, `!=` and the like.
    Operator,
    /// Only whitespace or one dash (`password 'x'`, `--password x`,
    /// `SECRET-…`): the value must be quoted, the key a command-line flag,
    /// or the value key-like.
    Space,
    /// `<password>…`: the value runs to the next `<`.
    Element,
}

/// Finds a value by its key around the anchor at `start..end`. `done` is
/// where the last identifier read ended, so an identifier holding several
/// anchors (`secret_token`) is read once.
pub(crate) fn keyed_at(
    text: &str,
    start: usize,
    end: usize,
    kinds: KeyedKinds,
    done: &mut usize,
    cands: &mut Vec<Cand>,
) {
    let b = text.as_bytes();
    if start < *done {
        return;
    }
    let floor = start.saturating_sub(KEY_REACH);
    let mut left = start;
    while left > floor && is_ident(b[left - 1]) {
        left -= 1;
    }
    let mut right = end;
    while right < b.len() && right - left < 2 * KEY_REACH && (b[right].is_ascii_alphanumeric() || b[right] == b'_') {
        right += 1;
    }
    *done = right;
    // Leading dashes make the name a command-line flag (`--password`).
    let ident = &text[left..right];
    let key = ident.trim_start_matches(['-', '.']);
    let flag = ident.starts_with('-');
    let Some(what) = named(key) else { return };
    // `no_password`, `not_secret`: a name that says there is none.
    let lower = key.to_ascii_lowercase();
    if ["no_", "not_", "no-", "not-"].iter().any(|p| lower.starts_with(p)) {
        return;
    }
    if !kinds.on(what) {
        return;
    }
    if let Some((value, tie, quoted)) = value_after(text, left, right)
        && admissible(&text[value.0..value.1], what, tie, quoted, flag)
    {
        cands.push(cand(value.0..value.1, what.kind(), Category::Secret));
    }
}

/// The value tied to the key at `left..right`: its range, how it was tied
/// and whether it was quoted.
fn value_after(text: &str, left: usize, right: usize) -> Option<((usize, usize), Tie, bool)> {
    let b = text.as_bytes();
    let mut i = right;
    // The key's own closing quote (`"password": …`, `\"password\": …`).
    let opened = left.checked_sub(1).map(|l| b[l]);
    let mut inside_string = matches!(opened, Some(b'"' | b'\'' | b'`'));
    if inside_string && b.get(i) == opened.as_ref() {
        i += 1;
        inside_string = false;
    } else if opened == Some(b'"') && b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'"') {
        i += 2;
        inside_string = false;
    }
    // `<password>…</password>`
    if opened == Some(b'<') && b.get(i) == Some(&b'>') {
        let from = i + 1;
        let limit = floor_boundary(text, (from + VALUE_REACH).min(b.len()));
        let to = from + b[from..limit].iter().position(|&c| c == b'<' || c == b'\n')?;
        return (b.get(to) == Some(&b'<')).then_some(((from, to), Tie::Element, true));
    }
    let spaces = |mut i: usize| {
        while i < b.len() && matches!(b[i], b' ' | b'\t') {
            i += 1;
        }
        i
    };
    let after_key = spaces(i);
    i = after_key;
    // `<add key="Password" value="…"/>`: the key was an attribute's value.
    if matches!(opened, Some(b'"' | b'\'')) && b.len() >= i + 6 && b[i..i + 6].eq_ignore_ascii_case(b"value=") {
        i += 6;
    }
    let operator_start = i;
    for op in ["!==", "===", "!=", "==", "=>", ":=", "->", "=", ":"] {
        if text[i..].starts_with(op) {
            i += op.len();
            break;
        }
    }
    let mut tie = if i > operator_start { Tie::Operator } else { Tie::Space };
    // `setPassword("…")`, `.password('…')`
    if tie == Tie::Space && b.get(i) == Some(&b'(') {
        i += 1;
        tie = Tie::Operator;
    }
    // `apifonica-SECRET-…`: one dash between a name and its value.
    if tie == Tie::Space && i == right && b.get(i) == Some(&b'-') {
        i += 1;
    } else if tie == Tie::Space && i == right {
        return None;
    }
    i = spaces(i);
    if i >= b.len() {
        return None;
    }
    let limit = floor_boundary(text, (i + VALUE_REACH).min(b.len()));
    // A key inside a string (`"Password:"`) is text; the quote after it
    // closes that string rather than opening a value.
    if inside_string && Some(b[i]) == opened {
        return None;
    }
    let (quote, from) = match b[i] {
        q @ (b'"' | b'\'' | b'`') => (Some(vec![q]), i + 1),
        b'\\' if b.get(i + 1) == Some(&b'"') => (Some(b"\\\"".to_vec()), i + 2),
        _ => (None, i),
    };
    match quote {
        Some(q) => {
            let body = &b[from.min(limit)..limit];
            let close = body
                .windows(q.len())
                .position(|w| w == q.as_slice() || w[0] == b'\n')
                .filter(|&p| body[p] != b'\n')?;
            Some(((from, from + close), tie, true))
        }
        None => {
            let len = b[from..limit]
                .iter()
                .position(|&c| {
                    c.is_ascii_whitespace()
                        || matches!(
                            c,
                            b';' | b'&' | b',' | b'"' | b'\'' | b'<' | b'>' | b')' | b']' | b'}' | b'\\'
                        )
                })
                .unwrap_or(limit - from);
            (len > 0).then_some(((from, from + len), tie, false))
        }
    }
}

/// Whether `value`, tied to a key naming `what`, is the secret itself.
fn admissible(value: &str, what: Named, tie: Tie, quoted: bool, flag: bool) -> bool {
    // Without an operator, an unquoted value counts after a flag
    // (`--password …`) or when it looks like a key rather than a word
    // (`bugsnag secret 123e4567-e89b-…`); a password needs the flag.
    let key_like = what != Named::Password && token_like(value);
    if tie == Tie::Space && !(quoted || flag || key_like) {
        return false;
    }
    if value.starts_with(REDACTED_PREFIX) || is_reference(value) || placeholder(value) {
        return false;
    }
    let spaces = value.bytes().filter(|&c| c == b' ').count();
    match what {
        Named::SecretLike | Named::KeyLike => token_like(value),
        Named::Password if quoted => value.len() >= 4 && spaces <= 1,
        Named::Password => plausible_password(value),
        _ if spaces > 0 => false,
        _ if quoted => value.len() >= 8,
        _ => value.len() >= 16 || value.len() >= 8 && plausible_password(value),
    }
}

/// Long enough and mixed enough to be a key: 16 or more characters, a digit
/// among them, no spaces.
fn token_like(v: &str) -> bool {
    v.len() >= 16 && v.bytes().any(|c| c.is_ascii_digit()) && !v.contains(' ')
}

/// A placeholder: a known word, one character repeated, a "your …" template.
fn placeholder(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    masked(v)
        || PLACEHOLDERS.contains(&lower.as_str())
        || lower.starts_with("your")
        || lower.starts_with("my-") && lower.contains("here")
        || ["xxxx", "fake", "dummy", "example", "placeholder"]
            .iter()
            .any(|w| lower.contains(w))
        || lower.contains("****")
        || lower.ends_with("-here")
        || lower.ends_with("_here")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_ends_on_a_character_boundary() {
        // The value runs past VALUE_REACH inside a three-byte character.
        for pad in 0..3 {
            let text = format!(
                "password={}{}",
                "a1".repeat(VALUE_REACH / 2 - 1 + pad),
                "日本語".repeat(4)
            );
            let mut cands = Vec::new();
            let kinds = KeyedKinds {
                password: true,
                secret: true,
                token: true,
                key: true,
            };
            keyed_at(&text, 0, 4, kinds, &mut 0, &mut cands);
            assert!(cands.iter().all(|c| text.is_char_boundary(c.end)), "{pad}");
            assert_eq!(cands.len(), 1, "{pad}");
        }
    }

    #[test]
    fn names_end_in_the_secret() {
        let table: &[(&str, Option<Named>)] = &[
            ("password", Some(Named::Password)),
            ("DB_PASSWORD", Some(Named::Password)),
            ("my_password", Some(Named::Password)),
            ("smtp.pass", Some(Named::Password)),
            ("Pwd", Some(Named::Password)),
            ("bypass", None),
            ("compass", None),
            ("password_hint", None),
            ("client_secret", Some(Named::Secret)),
            ("CROWDIN_SECRET", Some(Named::Secret)),
            ("centralstationcrmTOKEN", Some(Named::Token)),
            ("max_tokens", None),
            ("token_url", None),
            ("api_key", Some(Named::Key)),
            ("AXONAUT_API_KEY", Some(Named::Key)),
            ("key", None),
            ("monkey", Some(Named::KeyLike)),
            ("opencagedata_key", Some(Named::KeyLike)),
            ("buddynsPRIVATE", Some(Named::SecretLike)),
            ("ACCESS", Some(Named::SecretLike)),
        ];
        for &(key, want) in table {
            assert_eq!(named(key), want, "{key}");
        }
    }
}
