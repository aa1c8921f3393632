//! gate's argument validator: every violation of a tool's JSON Schema, each
//! with a message that names the fix.
//!
//! A model that sends `{"customer_id": 12345}` to a tool that wants a string
//! id plus `include_history` should need exactly one round trip to fix it.
//! This crate is the reject path of the runtime ("structural"
//! failures): it validates the raw argument text of a call against the
//! tool's schema (JSON Schema 2020-12 as schemars emits it), reports every
//! violation at once, and renders a short deterministic message that ends
//! with what to do. It also rejects unknown tool names ([`unknown_tool`]).
//!
//! # Example
//!
//! ```
//! use toolgate_validate::{Validator, unknown_tool};
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {
//!         "customer_id": {"type": "string"},
//!         "include_history": {"type": "boolean"}
//!     },
//!     "required": ["customer_id", "include_history"],
//!     "additionalProperties": false
//! });
//! let validator = Validator::new(&schema)?;
//!
//! let ok = validator.validate(r#"{"customer_id": "c_1", "include_history": true}"#);
//! assert!(ok.is_ok());
//!
//! let rejection = validator.validate(r#"{"customer_id": 12345}"#).unwrap_err();
//! assert_eq!(
//!     rejection.message("lookup_customer"),
//!     "`lookup_customer` was called with invalid arguments (2 problems):\n\
//!      - /customer_id: expected string, got integer 12345\n\
//!      - /include_history: required field is missing (expected boolean)\n\
//!      Call `lookup_customer` again with these fields corrected, sending the complete arguments object."
//! );
//!
//! let unknown = unknown_tool("lookup_custmer", &["lookup_customer", "charge_card"]);
//! assert!(unknown.message().starts_with("There is no tool named `lookup_custmer`. Available tools:"));
//! # Ok::<(), toolgate_validate::SchemaError>(())
//! ```
//!
//! # Design
//!
//! [`Validator::new`] compiles the schema once into a node graph (`$ref`s
//! resolved, regexes built). [`Validator::validate`] first runs a *fast
//! pass*: one scan over the raw bytes checking JSON syntax and the schema
//! together, allocating nothing for ordinary shapes. If it says valid, the
//! text is handed on unchanged for `serde_json::from_str::<T>`. Otherwise a
//! *diagnostic pass* parses the text (with serde_json's parser, so line and
//! column match what serde would say) and walks it to collect every
//! violation. The diagnostic pass is the authority; the fast pass only
//! short-cuts it and is tested never to accept what it rejects.
//!
//! # Semantics
//!
//! - **Integers** are what serde_json reads as `u64`/`i64`: no fraction, no
//!   exponent, within 64 bits, and not `-0` (serde_json reads `1.0`, `1e2`
//!   and `-0` as floats, and serde refuses floats for integer fields).
//!   `format`s `int8`…`int64`, `uint8`…`uint64`, `int`, `uint` are enforced
//!   as ranges; `float`/`double` accept any number.
//! - **String formats** (`date-time`, `email`, `uuid`, …) are **not**
//!   checked: serde does not check them for `String` fields either, and a
//!   tool that needs them parses them itself.
//! - **Patterns** use the `regex` crate (close to, not identical with,
//!   ECMA-262) and are unanchored searches, as JSON Schema specifies.
//! - **Null for optional fields**: an explicit `null` for a property that is
//!   not `required` and whose schema rejects null is treated as absent; the
//!   returned text then omits it (strict provider dialects make models send
//!   `"note": null`).
//! - **Duplicate keys** for declared properties are violations (serde's
//!   struct derive rejects them); duplicates elsewhere are allowed.
//! - **Strings** with unpaired UTF-16 surrogate escapes (`"\ud800"`) are
//!   rejected everywhere, even in fields serde would skip.
//! - **Depth**: nesting deeper than 127 arrays/objects is a syntax violation
//!   (serde_json's own limit); applicator recursion is bounded by
//!   [`MAX_SCHEMA_DEPTH`] and reported as a violation, never a stack
//!   overflow; [`Validator::new`] refuses schemas nested deeper than 64
//!   levels (counting `$ref` hops), which no derived schema comes near.
//! - **Unsupported keywords** that restrict validity (`if`/`then`/`else`,
//!   `dependentRequired`, `dependentSchemas`, `unevaluated*`, `contains`,
//!   `propertyNames`, `$dynamicRef`) make [`Validator::new`] fail rather than
//!   be ignored. Annotations (`title`, `description`, `default`,
//!   `examples`, …) are ignored.
//! - **Paths** are JSON Pointers, `""` for the root (shown as `(root)`).
//! - **Order**: a value's own problems, then its fields and items in the
//!   order sent, then that object's missing required fields in schema order.
//! - **Targets are never truncated.** Allowed values (enum members,
//!   `const`s), declared field names and tool names appear whole in every
//!   message, because the model cannot hit a target it cannot read; only
//!   what the model sent is shortened (to [`MAX_ECHO_CHARS`]). A list of
//!   targets is shown whole while it fits in [`LIST_BUDGET_CHARS`]; past it,
//!   the closest to what was sent come first, each whole, followed by how
//!   many were left out (`… and 1940 more not listed`). See [`unknown_tool`] for tools.
#![forbid(unsafe_code)]

use std::borrow::Cow;

use serde_json::Value;

mod check;
mod diagnose;
mod display;
mod fast;
mod render;
mod report;
mod schema;
mod suggest;
mod tree;

pub use display::{LIST_BUDGET_CHARS, MAX_ECHO_CHARS};
pub use report::{Fingerprint, MAX_LISTED, Rejection, Violation, ViolationKind};
pub use schema::SchemaError;
pub use suggest::{UnknownTool, unknown_tool};

/// Deepest nesting of arrays/objects accepted, as in serde_json (which
/// refuses the 128th level).
pub const MAX_NESTING: u32 = 128;

/// Most applicator hops (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`) entered
/// on one path through the data; past it the value gets a
/// [`ViolationKind::TooDeep`] violation. Keeps adversarial schemas off the
/// stack limit: a debug build stays within a 2 MiB thread stack at twice
/// this bound. Plain nesting is bounded separately by [`MAX_NESTING`].
pub const MAX_SCHEMA_DEPTH: u32 = 256;

/// A tool's compiled argument schema. Cheap to clone; `Send + Sync`.
#[derive(Debug, Clone)]
pub struct Validator {
    compiled: std::sync::Arc<schema::Compiled>,
    /// A one-line skeleton of the arguments, offered when the text is not JSON.
    shape: Option<String>,
}

impl Validator {
    /// Compiles a JSON Schema (2020-12 as schemars emits it).
    ///
    /// Fails on malformed keywords, unresolvable or cyclic `$ref`s, invalid
    /// patterns and unsupported validation keywords (see the crate docs).
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        let compiled = schema::compile(schema)?;
        let shape = shape(&compiled);
        Ok(Validator {
            compiled: std::sync::Arc::new(compiled),
            shape,
        })
    }

    /// Validates the raw argument text of a call.
    ///
    /// `Ok` holds the text to deserialize: `raw` itself, or, when optional
    /// fields were sent as `null` and dropped, a normalized copy. `Err` holds
    /// every violation found.
    pub fn validate<'a>(&self, raw: &'a str) -> Result<Cow<'a, str>, Rejection> {
        if fast::validate(&self.compiled, raw) == fast::Fast::Valid {
            return Ok(Cow::Borrowed(raw));
        }
        self.diagnose(raw)
    }

    /// Raw text to typed arguments: the valid path of a macro tool.
    ///
    /// **Contract:** `T` must be the type this validator's schema was
    /// derived from by schemars (as `#[tool]` guarantees). When every
    /// keyword in the schema is one serde's derive enforces by itself
    /// ([`Validator::serde_checks_everything`]), a successful
    /// `serde_json::from_str::<T>` already proves the arguments valid, so
    /// the valid path costs one serde parse; the validator runs only when
    /// serde refuses, to say why. Otherwise the text is validated first.
    /// The differential tests hold both routes to the same answers.
    ///
    /// If the validator accepts what `T`'s `Deserialize` still refuses (a
    /// custom impl stricter than its schema), the serde error becomes a
    /// single [`ViolationKind::Deserialize`] violation.
    pub fn parse<T: serde::de::DeserializeOwned>(&self, raw: &str) -> Result<T, Rejection> {
        if self.compiled.serde_implied
            && let Ok(value) = serde_json::from_str::<T>(raw)
        {
            return Ok(value);
        }
        let text = self.validate(raw)?;
        serde_json::from_str::<T>(&text).map_err(|e| {
            let full = e.to_string();
            let got = display::truncate_chars(&full, 160);
            Rejection {
                violations: vec![Violation::new(
                    "",
                    ViolationKind::Deserialize,
                    "arguments the tool's argument type accepts".into(),
                    got,
                )],
                shape: None,
            }
        })
    }

    /// Whether every keyword in the schema is one serde's derive enforces
    /// by itself (types, required fields, unknown fields, enums and tags,
    /// integer widths): then [`Validator::parse`] needs no separate
    /// validation pass on the valid path.
    pub fn serde_checks_everything(&self) -> bool {
        self.compiled.serde_implied
    }

    /// Whether `raw` is valid, without building messages. Same answer as
    /// `validate(raw).is_ok()`.
    pub fn is_valid(&self, raw: &str) -> bool {
        fast::validate(&self.compiled, raw) == fast::Fast::Valid || self.diagnose(raw).is_ok()
    }

    /// The diagnostic pass alone (exposed for tests and benchmarks that
    /// compare it with the fast pass).
    #[doc(hidden)]
    pub fn validate_slow<'a>(&self, raw: &'a str) -> Result<Cow<'a, str>, Rejection> {
        self.diagnose(raw)
    }

    /// The fast pass alone: `true` means certainly valid as sent.
    #[doc(hidden)]
    pub fn fast_accepts(&self, raw: &str) -> bool {
        fast::validate(&self.compiled, raw) == fast::Fast::Valid
    }

    fn diagnose<'a>(&self, raw: &'a str) -> Result<Cow<'a, str>, Rejection> {
        let mut t = match tree::parse(raw) {
            Ok(t) => t,
            Err(e) => {
                return Err(Rejection {
                    violations: vec![syntax_violation(raw, &e)],
                    shape: self.shape.clone(),
                });
            }
        };
        let out = diagnose::run(&self.compiled.nodes, &t);
        if out.violations.is_empty() {
            if out.drops.is_empty() {
                return Ok(Cow::Borrowed(raw));
            }
            // Later paths first, so earlier indices stay valid.
            for path in out.drops.iter().rev() {
                remove(&mut t, path);
            }
            let mut text = String::with_capacity(raw.len());
            t.write_json(&mut text);
            return Ok(Cow::Owned(text));
        }
        let mut violations = out.violations;
        if let (Tree::Str(inner), Some(first)) = (&t, violations.first_mut())
            && first.path.is_empty()
            && first.kind == ViolationKind::Type
            && matches!(tree::parse(inner), Ok(Tree::Obj(_)))
        {
            first.hint = Some(
                "the arguments are a JSON object wrapped in a string; send the object itself, not a string containing it"
                    .into(),
            );
        }
        Err(Rejection {
            violations,
            shape: None,
        })
    }
}

use tree::Tree;

fn remove(t: &mut Tree, path: &[usize]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = t;
    for &i in parents {
        cur = match cur {
            Tree::Arr(items) if i < items.len() => &mut items[i],
            Tree::Obj(fields) if i < fields.len() => &mut fields[i].1,
            _ => return,
        };
    }
    if let Tree::Obj(fields) = cur
        && *last < fields.len()
    {
        fields.remove(*last);
    }
}

/// `{"customer_id": <string>, "include_history"?: <boolean>}` for the root
/// object, so a model that sent broken JSON sees what to send instead.
fn shape(c: &schema::Compiled) -> Option<String> {
    let root = c.nodes.first()?;
    let mut node = root;
    // schemars roots are plain objects, but a `$ref` root is common by hand.
    if node.object.is_none() && node.all_of.len() == 1 {
        node = &c.nodes[node.all_of[0]];
    }
    let obj = node.object.as_ref()?;
    let d = diagnose::describer(&c.nodes);
    let mut parts = Vec::new();
    for (i, (name, child)) in obj.properties.iter().enumerate() {
        if i == 8 {
            parts.push(format!("… ({} fields in all)", obj.properties.len()));
            break;
        }
        let opt = if obj.required[i] { "" } else { " (optional)" };
        let mut desc = d.describe(*child, 2);
        if desc.chars().count() > 40 {
            // Too long for a skeleton, and cutting it could cut an allowed
            // value in the middle: the types alone (the next rejection, on
            // parsed arguments, lists the values whole).
            desc = d.describe_types(*child);
        }
        // Field names are targets: whole, as JSON strings.
        parts.push(format!("{}: <{desc}{opt}>", render::target_str(name)));
    }
    Some(format!("{{{}}}", parts.join(", ")))
}

/// Turns a serde_json parse error into one violation with a hint for the
/// usual slips.
fn syntax_violation(raw: &str, e: &serde_json::Error) -> Violation {
    let full = e.to_string();
    let detail = match full.rfind(" at line ") {
        Some(i) => &full[..i],
        None => &full,
    };
    let (line, column) = (e.line(), e.column());
    let offset = byte_offset(raw, line, column);
    let at = raw[offset..].chars().next();
    let trimmed = raw.trim_start();
    let hint: Option<&str> = if raw.trim().is_empty() {
        Some("the arguments are empty; send a JSON object such as {}")
    } else if trimmed.starts_with("```") {
        Some("send bare JSON, without a ``` code fence around it")
    } else if detail.starts_with("trailing comma") {
        Some("remove the comma after the last element")
    } else if at == Some('{') && detail.starts_with("key must be a string") {
        Some("an object cannot start with a second `{`; send one JSON object")
    } else if at == Some('\'') {
        Some("JSON needs double quotes (\") around keys and strings, not single quotes")
    } else if at == Some('/') || at == Some('#') {
        Some("JSON does not allow comments; remove them")
    } else if detail.starts_with("key must be a string") {
        Some("put every field name in double quotes")
    } else if detail.starts_with("expected value") || detail.starts_with("expected ident") {
        let word: String = raw[offset..].chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        match word.as_str() {
            "True" | "False" | "None" | "TRUE" | "FALSE" | "NULL" | "Null" | "undefined" | "nil" => {
                Some("use the JSON literals true, false and null (lowercase)")
            }
            "NaN" | "Infinity" => Some("JSON has no NaN or Infinity; send a number or null"),
            "" => None,
            _ => Some("strings need double quotes"),
        }
    } else if detail.starts_with("EOF while parsing") {
        Some("the text ends early; close every string, array and object")
    } else if detail.starts_with("trailing characters") {
        Some("send exactly one JSON object and nothing after it")
    } else if detail.starts_with("control character") {
        Some("escape line breaks and tabs inside strings as \\n and \\t")
    } else if detail.starts_with("invalid escape") {
        Some("escape a backslash inside a string as \\\\")
    } else if detail.starts_with("recursion limit exceeded") {
        Some("nest arrays and objects at most 127 levels deep")
    } else if detail.starts_with("number out of range") {
        Some("send a number within the range of a 64-bit float")
    } else if detail.starts_with("expected `,` or `}`") && at == Some('"') {
        Some("add a comma between fields")
    } else if detail.starts_with("expected `,` or `]`") {
        Some("separate array items with commas")
    } else if detail.starts_with("expected `:`") {
        Some("separate each field name from its value with a colon")
    } else {
        None
    };
    let near = snippet(raw, offset);
    let got = if raw.trim().is_empty() {
        "empty text".to_string()
    } else {
        format!("{detail} at line {line} column {column}, near `{near}`")
    };
    let mut v = Violation::new("", ViolationKind::Syntax, "valid JSON".into(), got).with_hint(hint.map(str::to_string));
    v.position = Some((line, column));
    v
}

/// Byte offset of serde_json's (line, column); columns count bytes, 1-based.
fn byte_offset(raw: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match raw[start..].find('\n') {
            Some(i) => start += i + 1,
            None => break,
        }
    }
    let mut off = (start + column.saturating_sub(1)).min(raw.len());
    while !raw.is_char_boundary(off) {
        off -= 1;
    }
    off
}

/// Up to 20 characters before the error and 5 after, on one line.
fn snippet(raw: &str, offset: usize) -> String {
    let before: Vec<char> = raw[..offset].chars().rev().take(20).collect();
    let after: String = raw[offset..].chars().take(5).collect();
    let mut s: String = before.into_iter().rev().collect();
    s.push_str(&after);
    s.chars()
        .map(|c| {
            if c.is_control() {
                ' '
            } else if c == '`' {
                '\''
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
