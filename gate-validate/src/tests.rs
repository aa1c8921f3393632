//! Unit tests for the message wording; the behaviour is covered in tests/.

use super::*;
use serde_json::json;

fn lookup() -> Validator {
    Validator::new(&json!({
        "type": "object",
        "properties": {
            "customer_id": {"type": "string"},
            "include_history": {"type": "boolean"}
        },
        "required": ["customer_id", "include_history"],
        "additionalProperties": false
    }))
    .unwrap()
}

#[test]
fn lead_example_message() {
    let r = lookup().validate(r#"{"customer_id": 12345}"#).unwrap_err();
    assert_eq!(
        r.message("lookup_customer"),
        "`lookup_customer` was called with invalid arguments (2 problems):\n\
         - /customer_id: expected string, got integer 12345\n\
         - /include_history: required field is missing (expected boolean)\n\
         Call `lookup_customer` again with these fields corrected, sending the complete arguments object."
    );
}
