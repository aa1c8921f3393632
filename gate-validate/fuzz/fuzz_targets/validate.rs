//! Fuzz target: arbitrary bytes as the argument text of a call, against a
//! few schemas covering every keyword family. The validator must never
//! panic, and every rejection must render.
#![no_main]

use std::sync::LazyLock;

use toolgate_validate::Validator;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

static VALIDATORS: LazyLock<Vec<Validator>> = LazyLock::new(|| {
    [
        json!(true),
        serde_json::from_str(include_str!("../../tests/support/every_keyword.json")).expect("every_keyword.json is JSON"),
        json!({"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#"}}, {"type": "object", "additionalProperties": {"$ref": "#"}}]}),
        json!({"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "minProperties": 1, "not": {"required": ["bad"]}}),
    ]
    .iter()
    .map(|s| Validator::new(s).expect("fuzz schemas compile"))
    .collect()
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for v in VALIDATORS.iter() {
        match v.validate(&text) {
            Ok(out) => {
                // What is handed on must be valid in turn.
                assert!(v.validate(&out).is_ok());
            }
            Err(r) => {
                assert!(!r.violations().is_empty());
                let _ = r.message("fuzz_tool");
                let _ = r.fingerprint("fuzz_tool");
            }
        }
        if v.fast_accepts(&text) {
            assert!(v.validate_slow(&text).is_ok());
        }
    }
});
