//! Detectors and validators that a regex alone cannot express: multi-line
//! PEM private keys, JWTs whose segments must decode to JSON, entropy of
//! generic `key=` values, and what a plausible password looks like.
//!
//! They exist to keep false positives down without giving up linear time:
//! each looks only at a span a regex or anchor already found.

use regex::Regex;

use crate::Category;
use crate::boundary::floor_boundary;
use crate::candidate::{Cand, KIND_PRIVATE_KEY, cand};

/// Base64 characters a PEM body needs before the block counts as a key; an
/// empty `BEGIN…END` pair (documentation, tests) is not a secret.
const PEM_MIN_BODY: usize = 16;

/// Finds a PEM private key block whose `-----BEGIN` is at `start`.
///
/// `ends` holds the positions of every `-----END` in the text, sorted, so
/// the block's end is a binary search rather than a scan. Without an END
/// the key was cut off: the header line's remainder and following lines
/// of base64 are taken instead.
pub(crate) fn pem_at(text: &str, start: usize, ends: &[usize], header: &Regex, footer: &Regex) -> Option<Cand> {
    let window = floor_boundary(text, start + 128);
    let h = header.find(&text[start..window])?;
    let body_start = start + h.end();
    let idx = ends.partition_point(|&e| e < body_start);
    let bytes = text.as_bytes();
    if let Some(&end_pos) = ends.get(idx) {
        let body = &bytes[body_start..end_pos];
        let b64 = body
            .iter()
            .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
            .take(PEM_MIN_BODY)
            .count();
        if b64 < PEM_MIN_BODY {
            return None;
        }
        let fw = floor_boundary(text, end_pos + 128);
        let end = match footer.find(&text[end_pos..fw]) {
            Some(f) => end_pos + f.end(),
            None => end_pos + "-----END".len(),
        };
        return Some(cand(start..end, KIND_PRIVATE_KEY, Category::Secret));
    }
    // No END: a truncated key. Take the header line's base64 (or escaped
    // `\n`) remainder and following lines of base64 or short
    // `Name: value` headers, scanning byte by byte so that a long line
    // costs only what is consumed.
    let is_body = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\\');
    let len = bytes.len();
    let mut pos = body_start;
    let mut end = body_start;
    let mut b64 = 0usize;
    loop {
        let mut i = pos;
        while i < len && is_body(bytes[i]) {
            i += 1;
        }
        b64 += i - pos;
        if i > pos {
            end = i;
        }
        let mut j = i;
        if j < len && bytes[j] == b'\r' {
            j += 1;
        }
        if j < len && bytes[j] == b'\n' {
            if i == pos && pos != body_start {
                break;
            }
            pos = j + 1;
            continue;
        }
        if j >= len || i != pos || pos == body_start {
            break;
        }
        let lim = floor_boundary(text, pos + 128);
        match text[pos..lim].find('\n') {
            Some(nl) if text[pos..pos + nl].contains(": ") => {
                end = pos + nl;
                pos += nl + 1;
            }
            _ => break,
        }
    }
    (b64 >= PEM_MIN_BODY).then(|| cand(start..end, KIND_PRIVATE_KEY, Category::Secret))
}

/// Shannon entropy in bits per byte.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// A generic `key=`/`secret=`/`token=` value that looks machine-made:
/// at least 12 bytes, letters and digits, and at least 3 bits of entropy
/// per byte (placeholders like `your_api_key_here` have no digit;
/// `aaaa1111aaaa1111` has too little entropy).
pub(crate) fn high_entropy(s: &str) -> bool {
    s.len() >= 12
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_alphabetic())
        && entropy(s) >= 3.0
}

/// Words that follow `password:` in error messages and configuration
/// templates without being a password.
const NOT_PASSWORDS: &[&str] = &[
    "null",
    "none",
    "nil",
    "true",
    "false",
    "undefined",
    "redacted",
    "hidden",
    "empty",
    "required",
    "invalid",
    "incorrect",
    "missing",
    "optional",
    "string",
    "password",
    "masked",
    "omitted",
    "unset",
    "default",
    "expired",
];

/// A `password=` value worth hiding: not a placeholder word, template
/// variable or mask, and either long or not plain lowercase letters
/// (`password: required` is an error message; `password=hunter22` is a
/// password).
/// A reference to a secret rather than the secret: a variable, a template,
/// an environment lookup, a path, a field of an object.
pub(crate) fn is_reference(v: &str) -> bool {
    // A value quoted twice (`"'$PASSWORD'"`) is judged by what is inside.
    let v = v.trim_matches(['"', '\'']);
    let lower = v.to_ascii_lowercase();
    if v.starts_with(['$', '%', '<', '@', '[', '{', '#', '/', '*', '?'])
        || ["&lt;", "&#", "arn:"].iter().any(|p| lower.starts_with(p))
        || v.contains("{{")
        || v.contains("${")
        || [
            "process.env",
            "os.environ",
            "os.getenv",
            "getenv",
            "env(",
            "env[",
            "system.getenv",
            "secrets.",
        ]
        .iter()
        .any(|p| lower.starts_with(p))
    {
        return true;
    }
    // `config.password`, `self.secret`, `params[:token]`, `getPass()`
    let code = v.contains('(')
        || v.contains('[')
        || v.split('.').count() > 1
            && v.split('.').all(|part| {
                // Names are short; a JWT's segments are not.
                !part.is_empty()
                    && part.len() <= 24
                    && part.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                    && part.as_bytes()[0].is_ascii_alphabetic()
            });
    // An upper-case snake-case name is a variable (`DB_PASSWORD`).
    let variable = v.contains('_')
        && v.bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
    code || variable
}

/// A mask standing where a secret was: one character repeated, separators
/// aside (`*****`, `xxxxxxxx`, `00000000-0000-0000-0000-000000000000`).
pub(crate) fn masked(v: &str) -> bool {
    let mut chars = v.chars().filter(|c| !matches!(c, '-' | '_' | '.' | ' '));
    chars.next().is_some_and(|c0| chars.all(|c| c == c0))
}

pub(crate) fn plausible_password(s: &str) -> bool {
    if s.starts_with(crate::render::REDACTED_PREFIX) || s.len() < 4 {
        return false;
    }
    let first = s.as_bytes()[0];
    if matches!(first, b'$' | b'%' | b'*' | b'#' | b'<' | b'{' | b'?' | b'/') {
        return false;
    }
    // A path (`/en/…/creating-a-strong-password`) or an AWS resource name
    // (`arn:aws:iam::aws:policy/IAMUserChangePassword`) named after a
    // password is not one.
    if s.starts_with("arn:") {
        return false;
    }
    if is_reference(s) {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    if NOT_PASSWORDS.contains(&lower.as_str()) {
        return false;
    }
    let mut chars = s.chars();
    if let Some(c0) = chars.next()
        && chars.all(|c| c == c0)
    {
        return false;
    }
    // An upper-case snake-case name (`DOCKER_PASSWORD`, `DB_PASS`) is a
    // template variable in usage text, not a password.
    if s.contains('_')
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    {
        return false;
    }
    let has_digit = s.bytes().any(|b| b.is_ascii_digit());
    let has_symbol = s.bytes().any(|b| !b.is_ascii_alphanumeric());
    let has_upper = s.bytes().any(|b| b.is_ascii_uppercase());
    let has_lower = s.bytes().any(|b| b.is_ascii_lowercase());
    s.len() >= 12 || (s.len() >= 6 && (has_digit || has_symbol || (has_upper && has_lower)))
}

/// One of a JWT's first two segments must be a base64url JSON object;
/// this is what separates `eyJhbGciOi…` tokens from look-alikes such as
/// `eyJAAAA.eyJBBB`. One is enough: a token whose header was mangled
/// (gitleaks' `jwt` examples have one) still carries a readable payload.
pub(crate) fn valid_jwt(s: &str) -> bool {
    let mut parts = s.split('.');
    let (Some(h), Some(p)) = (parts.next(), parts.next()) else {
        return false;
    };
    json_object(h) || json_object(p)
}

fn json_object(seg: &str) -> bool {
    let seg = seg.trim_matches(|c| c == '\r' || c == '\n');
    match base64url_decode(seg) {
        Some(bytes) => matches!(
            serde_json::from_slice::<serde_json::Value>(&bytes),
            Ok(serde_json::Value::Object(_))
        ),
        None => false,
    }
}

/// Decodes unpadded or padded base64url (and plain base64); `None` on any
/// other byte.
pub(crate) fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            b'=' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}
