//! Intent keys and fingerprints.
//!
//! The ledger is only as good as its keys: two calls that mean the same intent
//! must map to one key, and one key must never silently stand for two different
//! requests. This module fixes the byte-level scheme so that every process, and
//! every version of gate that keeps the `v1` prefixes, computes the same keys.
//!
//! * [`fingerprint`]: hex SHA-256 of the canonical JSON of the `key` arguments
//!   (all arguments when none is marked): object keys sorted by their UTF-8
//!   bytes, no whitespace, strings escaped as `serde_json` escapes them, numbers
//!   normalised so that `1`, `1.0` and `1e0` are the same number (integral values
//!   with magnitude below 2^53 print as integers, `-0` prints as `0`, every other
//!   float prints as Rust's `{:e}` does: the shortest round-trip digits in
//!   exponent form, e.g. `5e-1`, `1.25e300`). Floats are compared as the f64
//!   the JSON text parses to (this crate enables `serde_json/float_roundtrip` so
//!   that parsing is exact).
//! * [`minted_intent_key`]: `gk1m-` + hex SHA-256 over (task, label), for an intent
//!   declared with `task.intent("pay INV-42")`. Deterministic so that a task
//!   resumed after a restart, or a call the model regenerates while replanning,
//!   lands on the same key; unique across tasks because task ids are.
//! * [`derived_intent_key`]: `gk1d-` + hex SHA-256 over (task, tool, fingerprint),
//!   for calls made without a declared intent.
//!
//! Inputs are hashed with a domain-separation tag and length prefixes, so no two
//! different (task, label) pairs can collide by concatenation, and no raw user
//! data (an email used as a label or a task id) ever appears in a key: keys are
//! logged, shown in reports and sent downstream (e.g. as a Stripe
//! `Idempotency-Key`), and Stripe's guidance is to keep personal data out of them.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::LedgerError;

/// The longest intent key the ledger accepts, in bytes (Stripe's limit).
pub const MAX_KEY_LEN: usize = 255;
/// The shortest intent key the ledger accepts, in bytes.
pub const MIN_KEY_LEN: usize = 16;
/// The fewest distinct characters a key must contain; a cheap guard against
/// low-entropy keys such as `aaaaaaaaaaaaaaaa` or `0000000000000001`.
pub const MIN_DISTINCT_KEY_CHARS: usize = 6;

/// The canonical JSON text of `value` (see the module docs for the rules).
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    // Serialising a &str cannot fail; the fallback keeps this total anyway.
    match serde_json::to_string(s) {
        Ok(text) => out.push_str(&text),
        Err(_) => out.push_str("\"\""),
    }
}

/// 2^53: below it every integer is exactly representable as an f64, so an
/// integral float in that range and the integer are the same number.
const EXACT_INT_LIMIT: f64 = 9_007_199_254_740_992.0;

fn write_number(n: &serde_json::Number, out: &mut String) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(u) = n.as_u64() {
        out.push_str(&u.to_string());
    } else if let Some(f) = n.as_f64() {
        if f.is_finite() && f.fract() == 0.0 && f.abs() < EXACT_INT_LIMIT {
            // The range check above makes the cast exact; -0.0 becomes 0.
            out.push_str(&(f as i64).to_string());
        } else {
            // Rust's LowerExp prints the shortest digits that round-trip, in
            // a form fixed by the standard library rather than by a JSON
            // crate's version; non-finite values cannot occur in JSON.
            out.push_str(&format!("{f:e}"));
        }
    } else {
        out.push_str(&n.to_string());
    }
}

/// Hex SHA-256 of the canonical JSON of `args`: the business fingerprint of a call.
pub fn fingerprint(args: &Value) -> String {
    canonical_fingerprint(&canonical_json(args))
}

/// [`fingerprint`] of arguments whose [`canonical_json`] is already at
/// hand, so a caller that needs the canonical text too renders it once.
pub fn canonical_fingerprint(canonical: &str) -> String {
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

fn tagged_hash(tag: &str, parts: &[&str]) -> String {
    let mut h = Sha256::new();
    h.update(tag.as_bytes());
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p.as_bytes());
    }
    hex::encode(h.finalize())
}

/// The fingerprint of a call from its full arguments and the names of the
/// arguments marked `#[arg(key)]`: only the marked ones count, all of them when
/// none is marked. A marked argument the call omitted is left out (it is not
/// the same as an explicit `null`). Non-object arguments are fingerprinted
/// whole.
pub fn key_args_fingerprint(args: &Value, key_args: &[&str]) -> String {
    match args {
        Value::Object(map) if !key_args.is_empty() => {
            let selected: serde_json::Map<String, Value> = map
                .iter()
                .filter(|(k, _)| key_args.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            fingerprint(&Value::Object(selected))
        }
        _ => fingerprint(args),
    }
}

/// The key of an intent declared explicitly in `task` under `label`.
///
/// Format: `gk1m-` followed by 64 hex digits.
pub fn minted_intent_key(task: &str, label: &str) -> String {
    format!("gk1m-{}", tagged_hash("gate/intent-key/minted/v1", &[task, label]))
}

/// The key of a call made in `task` without a declared intent.
///
/// Format: `gk1d-` followed by 64 hex digits.
pub fn derived_intent_key(task: &str, tool: &str, fingerprint: &str) -> String {
    format!(
        "gk1d-{}",
        tagged_hash("gate/intent-key/derived/v1", &[task, tool, fingerprint])
    )
}

/// Checks that `key` is acceptable as an intent key: between [`MIN_KEY_LEN`] and
/// [`MAX_KEY_LEN`] bytes of printable ASCII without spaces, with at least
/// [`MIN_DISTINCT_KEY_CHARS`] distinct characters.
///
/// Keys produced by [`minted_intent_key`] and [`derived_intent_key`] always pass.
pub fn validate_key(key: &str) -> Result<(), LedgerError> {
    if key.is_empty() {
        return Err(LedgerError::invalid_key("the intent key is empty"));
    }
    if key.len() > MAX_KEY_LEN {
        return Err(LedgerError::invalid_key(format!(
            "the intent key is {} bytes long; at most {MAX_KEY_LEN} are allowed",
            key.len()
        )));
    }
    if key.len() < MIN_KEY_LEN {
        return Err(LedgerError::invalid_key(format!(
            "the intent key is {} bytes long; at least {MIN_KEY_LEN} are required",
            key.len()
        )));
    }
    if !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(LedgerError::invalid_key(
            "the intent key must be printable ASCII without whitespace",
        ));
    }
    let mut seen = [false; 128];
    let mut distinct = 0usize;
    for b in key.bytes() {
        let slot = &mut seen[usize::from(b & 0x7f)];
        if !*slot {
            *slot = true;
            distinct += 1;
        }
    }
    if distinct < MIN_DISTINCT_KEY_CHARS {
        return Err(LedgerError::invalid_key(
            "the intent key has too little entropy (too few distinct characters)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_sorts_and_normalises() {
        let a: Value = serde_json::from_str(r#"{ "b": 1.0, "a": [1, 2.5, -0.0] }"#).unwrap_or_default();
        assert_eq!(canonical_json(&a), r#"{"a":[1,2.5e0,0],"b":1}"#);
    }

    #[test]
    fn keys_have_documented_shape() {
        let k = minted_intent_key("task-1", "pay INV-42 for ann@example.com");
        assert!(k.starts_with("gk1m-"));
        assert_eq!(k.len(), 5 + 64);
        assert!(!k.contains('@'));
        assert!(validate_key(&k).is_ok());
        let d = derived_intent_key("task-1", "charge", &fingerprint(&json!({"a": 1})));
        assert!(d.starts_with("gk1d-"));
        assert!(validate_key(&d).is_ok());
        assert_ne!(
            minted_intent_key("ab", "c"),
            minted_intent_key("a", "bc"),
            "length prefixes keep concatenations apart"
        );
    }
}
