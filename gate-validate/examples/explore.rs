//! Prints rejection messages for hand-picked calls (a quick look at wording).
use gate_validate::Validator;
use serde_json::json;

fn main() {
    let schema = json!({
        "type": "object",
        "properties": {
            "customer_id": {"type": "string", "minLength": 3, "pattern": "^c_[a-z0-9]+$"},
            "include_history": {"type": "boolean", "default": false},
            "status": {"type": "string", "enum": ["open", "closed", "pending"]},
            "qty": {"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "maxItems": 3},
            "shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"}, "r": {"type": "number"}}, "required": ["kind", "r"]},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "square"}, "side": {"type": "number"}}, "required": ["kind", "side"]}
            ]},
            "note": {"type": ["string", "null"]},
            "addr": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}]}
        },
        "required": ["customer_id", "status"],
        "additionalProperties": false,
        "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}, "n": {"type": "integer", "format": "int32"}}, "required": ["sku"]}}
    });
    let v = Validator::new(&schema).unwrap();
    for raw in [
        r#"{"customer_id": 12345}"#,
        r#"{"custmer_id": "c_1", "status": "opne"}"#,
        r#"{"customer_id": "C-1", "status": "open", "qty": 300, "items": [{"sku": "a"}, {"sku": "b"}, {"sku": 3, "n": 1.5}, {}]}"#,
        r#"{"customer_id": "c_abc", "status": "open", "shape": {"kind": "circle"}}"#,
        r#"{"customer_id": "c_abc", "status": "open", "shape": {"kind": "triangle"}}"#,
        r#"{"customer_id": "c_abc", "status": "open", "addr": {"n": "x"}}"#,
        r#"{"customer_id": "c_abc", "status": "open", "include_history": null}"#,
        r#"{"customer_id": "c_abc", "status": "open",}"#,
        r#"{'customer_id': 'c_abc'}"#,
        r#"{"customer_id": "c_abc", "status": True}"#,
        r#""{\"customer_id\": \"c_abc\"}""#,
        r#"[1,2]"#,
        r#""#,
        r#"{"customer_id": "c_abc", "status": "open""#,
        r#"{"customer_id": "c_abc" "status": "open"}"#,
        r#"{"customer_id": "this is a very long string value that goes on and on and on forever", "status": "open", "customer_id": "x"}"#,
    ] {
        println!("RAW {raw}");
        match v.validate(raw) {
            Ok(t) => println!("OK {t}\n"),
            Err(r) => println!("{}\n", r.message("lookup_customer")),
        }
    }
    let names = ["lookup_customer", "charge_card", "list_customers"];
    println!("{}", gate_validate::unknown_tool("lookup_custmer", &names).message());
    let many: Vec<String> = (0..12).map(|i| format!("tool_{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).chain(["lookup_customer"]).collect();
    println!("{}", gate_validate::unknown_tool("lookup_custmer", &many).message());
}
