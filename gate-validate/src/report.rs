//! The rejection: the list of violations and the text the model reads.
//!
//! The message is the product. It is built to be fixed in one round trip:
//! one line per problem, each naming the JSON path, what the schema wants
//! and what was sent, then one closing line saying what to do. It is
//! deterministic (same call, same text, same fingerprint) so the runtime can
//! tell when a model resends a call that was already rejected.

use std::fmt;

use serde::Serialize;
use sha2::{Digest, Sha256};

/// At most this many violations are listed in a message; the rest are counted.
pub const MAX_LISTED: usize = 20;

/// The category of a violation, for programs that react to rejections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// The arguments are not JSON (line and column in [`Violation::position`]).
    Syntax,
    /// Wrong JSON type (including a non-object root).
    Type,
    /// A required field is absent.
    Required,
    /// Not one of the allowed values (`enum`), or not the one allowed (`const`).
    Enum,
    /// Outside `minimum`/`maximum`/exclusive bounds or an integer format's range,
    /// or not a multiple of `multipleOf`.
    Range,
    /// A string shorter or longer than allowed.
    Length,
    /// A string that does not match `pattern`.
    Pattern,
    /// An array with too few or too many items.
    ItemCount,
    /// An array whose items repeat under `uniqueItems`.
    UniqueItems,
    /// A field the schema does not allow.
    UnknownField,
    /// A field sent more than once.
    DuplicateField,
    /// An object with too few or too many fields.
    PropertyCount,
    /// A value that matches none of the alternatives of `anyOf`/`oneOf`
    /// and for which no single alternative could be singled out.
    NoAlternative,
    /// A value that matches more than one alternative of a `oneOf`.
    AmbiguousAlternative,
    /// A value where the schema allows none (`false`, `not`).
    Forbidden,
    /// Nesting deeper than the validator follows.
    TooDeep,
    /// The schema was satisfied but the tool's argument type still refused
    /// the value (only from [`crate::Validator::parse`]).
    Deserialize,
}

/// One thing wrong with the arguments.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Violation {
    /// JSON Pointer (RFC 6901) of the value; `""` is the root. Control
    /// characters are escaped, and a segment for a key the schema does not
    /// declare (what the model sent) is cut at 40 characters with `…`, so the
    /// pointer is for reading, not for resolving. Segments naming a declared
    /// property (a missing required field, say) are never cut: the model has
    /// to send that exact name.
    pub path: String,
    /// What the schema wants, in words: `string`, `one of "a", "b"`,
    /// `integer ≥ 0`, `string matching ^[a-z]+$`, `required field (boolean)`.
    /// Allowed values in it are whole; a list longer than
    /// [`LIST_BUDGET_CHARS`](crate::LIST_BUDGET_CHARS) shows the closest to
    /// what was sent first and counts the rest
    /// (`one of 2000 values, closest first: "a", "b", … and 1940 more not listed`).
    pub expected: String,
    /// What was sent: its JSON type and a short rendering of the value (cut
    /// at [`MAX_ECHO_CHARS`](crate::MAX_ECHO_CHARS) characters with `…`).
    pub got: String,
    /// The category.
    pub kind: ViolationKind,
    /// A concrete fix when one is known ("did you mean `customer_id`?").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Line and column (1-based) for syntax errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<(usize, usize)>,
}

impl Violation {
    pub(crate) fn new(path: &str, kind: ViolationKind, expected: String, got: String) -> Self {
        Violation {
            path: path.to_string(),
            expected,
            got,
            kind,
            hint: None,
            position: None,
        }
    }

    pub(crate) fn with_hint(mut self, hint: Option<String>) -> Self {
        self.hint = hint;
        self
    }

    /// The path as shown in messages: the pointer, or `(root)` for the root.
    pub fn display_path(&self) -> &str {
        if self.path.is_empty() { "(root)" } else { &self.path }
    }

    /// The message line for this violation, without the leading `- `.
    pub fn line(&self) -> String {
        let p = self.display_path();
        let hint = self.hint.as_deref().map(|h| format!("; {h}")).unwrap_or_default();
        match self.kind {
            ViolationKind::Required => format!("{p}: required field is missing (expected {}){hint}", self.expected),
            ViolationKind::UnknownField => format!("{p}: unknown field{hint}"),
            ViolationKind::DuplicateField => {
                format!("{p}: field is sent more than once; send it once")
            }
            _ => format!("{p}: expected {}, got {}{hint}", self.expected, self.got),
        }
    }
}

/// Why a call's arguments were refused: every violation found, in document
/// order (a value's own problems, then its fields' and items' in the order
/// sent, then the object's missing required fields in schema order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejection {
    pub(crate) violations: Vec<Violation>,
    /// A skeleton of the expected arguments, offered when the text is not JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shape: Option<String>,
}

impl Rejection {
    /// Every violation, in the documented order. Never empty.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Whether the arguments were not JSON at all.
    pub fn is_syntax(&self) -> bool {
        self.violations.first().is_some_and(|v| v.kind == ViolationKind::Syntax)
    }

    /// The text for the model.
    ///
    /// ```text
    /// `lookup_customer` was called with invalid arguments (2 problems):
    /// - /customer_id: expected string, got integer 12345
    /// - /include_history: required field is missing (expected boolean)
    /// Call `lookup_customer` again with these fields corrected, sending the complete arguments object.
    /// ```
    ///
    /// The tool name is shown whole (it is the name to call again).
    pub fn message(&self, tool_name: &str) -> String {
        let tool = crate::display::code(tool_name);
        let n = self.violations.len();
        let problems = crate::render::plural(n as u64, "problem", "problems");
        let mut out = if self.is_syntax() {
            format!("{tool} was called with arguments that are not valid JSON:\n")
        } else {
            format!("{tool} was called with invalid arguments ({problems}):\n")
        };
        for v in self.violations.iter().take(MAX_LISTED) {
            out.push_str("- ");
            out.push_str(&v.line());
            out.push('\n');
        }
        if n > MAX_LISTED {
            let rest = n - MAX_LISTED;
            let noun = if rest == 1 { "problem" } else { "problems" };
            out.push_str(&format!("- … and {rest} more {noun}\n"));
        }
        if self.is_syntax() {
            match &self.shape {
                Some(shape) => out.push_str(&format!(
                    "Call {tool} again with the arguments as one JSON object, shaped like {shape}."
                )),
                None => out.push_str(&format!(
                    "Call {tool} again with the arguments as one valid JSON value."
                )),
            }
        } else {
            out.push_str(&format!(
                "Call {tool} again with these fields corrected, sending the complete arguments object."
            ));
        }
        out
    }

    /// A stable hash of [`Rejection::message`] for `tool_name`: equal exactly
    /// when the model would read the same text.
    pub fn fingerprint(&self, tool_name: &str) -> Fingerprint {
        Fingerprint::of(&self.message(tool_name))
    }
}

/// SHA-256 of a text the model reads (a rejection, a correction), so the
/// runtime can detect "the same rejection twice" without keeping the text;
/// the runtime stores it in its hex form ([`fmt::Display`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// Hashes a message.
    pub fn of(message: &str) -> Self {
        Fingerprint(Sha256::digest(message.as_bytes()).into())
    }

    /// The first 8 bytes as a big-endian integer, for compact storage.
    pub fn to_u64(&self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[..8]);
        u64::from_be_bytes(b)
    }
}

impl fmt::Display for Fingerprint {
    /// Lowercase hex of all 32 bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut hex = [0u8; 64];
        for (i, b) in self.0.iter().enumerate() {
            hex[2 * i] = DIGITS[usize::from(b >> 4)];
            hex[2 * i + 1] = DIGITS[usize::from(b & 0xf)];
        }
        // Every byte written is an ASCII digit.
        f.write_str(std::str::from_utf8(&hex).map_err(|_| fmt::Error)?)
    }
}
