//! A call's identities: the fingerprint of the call (rule 1 and rule 3 look
//! it up), the fingerprint of its key arguments (what an intent key stands
//! for) and the intent key derived from it.
//!
//! Each costs a parse of the arguments into a value, their canonical JSON
//! and a hash, which is several times what serving a successful read-only
//! call costs otherwise, and such a call needs none of them: nothing is
//! claimed for it and nothing failed. So they are computed when first asked
//! for, once, from explicit inputs (the tool, the arguments, the key
//! arguments), and the runtime asks only where a claim, a failure or an
//! earlier failure needs them.

use std::borrow::Cow;

use serde_json::Value;
use sha2::{Digest, Sha256};
use toolgate_validate::{Fingerprint, Validator};

use super::step::ToolCall;

/// The identities of a valid call.
pub(super) struct CallIdentity {
    /// The arguments as a value.
    pub(super) args: Value,
    /// The arguments' canonical JSON (sorted keys, no whitespace).
    pub(super) canonical: String,
    /// The tool and its canonical arguments, hashed.
    pub(super) call_fp: String,
    /// The key arguments (all of them when the tool names none), hashed as
    /// [`toolgate_ledger::fingerprint`] does.
    pub(super) key_fp: String,
}

impl CallIdentity {
    /// The identities of a call of `tool` with the valid `arguments`.
    pub(super) fn of(tool: &str, arguments: &str, key_args: &[String]) -> Self {
        let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let canonical = toolgate_ledger::canonical_json(&args);
        let call_fp = call_fingerprint(tool, &canonical);
        // Without key arguments the key covers all of them: the canonical
        // text is the same one.
        let key_fp = if key_args.is_empty() {
            toolgate_ledger::canonical_fingerprint(&canonical)
        } else {
            let names: Vec<&str> = key_args.iter().map(String::as_str).collect();
            toolgate_ledger::key_args_fingerprint(&args, &names)
        };
        CallIdentity {
            args,
            canonical,
            call_fp,
            key_fp,
        }
    }

    /// The key the call of `tool` in `task_id` carries without a declared intent.
    pub(super) fn derived_key(&self, task_id: &str, tool: &str) -> String {
        toolgate_ledger::derived_intent_key(task_id, tool, &self.key_fp)
    }
}

/// `arguments` as `validator` reads them (an optional field sent as null is
/// absent), which is what the identities cover; text that does not
/// validate is read as it was sent.
pub(crate) fn as_validated<'a>(validator: &Validator, arguments: &'a str) -> Cow<'a, str> {
    validator.validate(arguments).unwrap_or(Cow::Borrowed(arguments))
}

/// The key a call of `tool` in `task_id` carries without a declared intent.
pub(crate) fn derived_key(task_id: &str, tool: &str, arguments: &str, key_args: &[String]) -> String {
    CallIdentity::of(tool, arguments, key_args).derived_key(task_id, tool)
}

/// The identity of a call that never parsed as valid arguments: canonical
/// JSON where the text is JSON, the raw text where it is not.
pub(super) fn raw_fingerprint(call: &ToolCall) -> String {
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(v) => call_fingerprint(&call.name, &toolgate_ledger::canonical_json(&v)),
        Err(_) => call_fingerprint(&call.name, &call.arguments),
    }
}

/// The identity of a call for rules 1 and 3: the tool and its canonical arguments.
fn call_fingerprint(tool: &str, canonical_arguments: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(tool.as_bytes());
    hash.update([0]);
    hash.update(canonical_arguments.as_bytes());
    hex::encode(hash.finalize())
}

/// The hash that tells two texts for the model apart (the same rejection
/// twice, a decision's message): the validator's [`Fingerprint`], in hex.
pub(super) fn message_hash(text: &str) -> String {
    Fingerprint::of(text).to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::Ctx;

    #[test]
    fn the_derived_key_stands_for_the_canonical_key_arguments() {
        let all = toolgate_ledger::derived_intent_key(
            "t1",
            "lookup",
            &toolgate_ledger::fingerprint(&json!({"a": 2, "b": 1})),
        );
        assert_eq!(derived_key("t1", "lookup", r#"{"b": 1, "a": 2}"#, &[]), all);
        assert_eq!(derived_key("t1", "lookup", r#"{"a":2,"b":1}"#, &[]), all);
        let only_a =
            toolgate_ledger::derived_intent_key("t1", "lookup", &toolgate_ledger::fingerprint(&json!({"a": 2})));
        assert_eq!(
            derived_key("t1", "lookup", r#"{"b": 1, "a": 2}"#, &["a".to_owned()]),
            only_a
        );
        assert_ne!(only_a, all);
    }

    // Task states stored before the runtime used the validator's
    // fingerprint hold plain SHA-256 hex: the two must agree.
    #[test]
    fn a_message_hash_is_the_sha256_of_the_text_in_lower_case_hex() {
        assert_eq!(
            message_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_call_fingerprint_ignores_key_order_and_names_the_tool() {
        let one = CallIdentity::of("lookup", r#"{"b": 1, "a": 2}"#, &[]);
        let two = CallIdentity::of("lookup", r#"{"a": 2, "b": 1}"#, &[]);
        let other_tool = CallIdentity::of("search", r#"{"a": 2, "b": 1}"#, &[]);
        assert_eq!(one.call_fp, two.call_fp);
        assert_ne!(one.call_fp, other_tool.call_fp);
        assert_eq!(one.key_fp, toolgate_ledger::fingerprint(&json!({"a": 2, "b": 1})));
    }

    #[test]
    fn a_context_derives_its_key_when_first_asked_and_equals_an_eager_one() {
        let schema = json!({
            "type": "object",
            "properties": {"email": {"type": "string"}, "note": {"type": "string"}},
            "required": ["email"],
        });
        let validator = Arc::new(toolgate_validate::Validator::new(&schema).unwrap());
        let task: Arc<str> = Arc::from("t1");
        let user = crate::Principal::new("u1", Vec::<String>::new());
        let of = |arguments: &str| Arc::new(ToolCall::new("c1", "lookup", arguments));
        let arguments = r#"{"email": "a@b.c"}"#;
        let lazy = Ctx::with_derived_key(&task, user.clone(), &of(arguments), &validator, &[]);
        let key = derived_key("t1", "lookup", arguments, &[]);
        let eager = Ctx::new("t1", "u1", "c1", "lookup", key.clone());
        assert_eq!(lazy.intent_key(), key);
        assert_eq!(lazy, eager);
        assert_ne!(lazy, Ctx::new("t1", "u1", "c1", "lookup", "another-key-000000"));
        // Read as the validator reads it: an optional field sent as null is absent.
        let with_null = r#"{"email": "a@b.c", "note": null}"#;
        let lazy = Ctx::with_derived_key(&task, user, &of(with_null), &validator, &[]);
        assert_eq!(lazy.intent_key(), key);
    }
}
