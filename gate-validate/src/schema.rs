//! Compiling a JSON Schema (2020-12, as schemars emits it) into a flat graph of
//! nodes, once, so that validating a call never re-reads the schema document,
//! never resolves a `$ref` by string and never compiles a regex.
//!
//! Keywords that would change what is valid but that this validator does not
//! implement are refused with [`SchemaError::Unsupported`] instead of being
//! silently ignored: a validator that quietly accepts more than the schema
//! says would hand the tool arguments it never promised to handle.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// Index of a compiled node in [`Compiled::nodes`].
pub(crate) type NodeId = usize;

/// JSON type bits; a node's `types` is the union of the types it accepts.
pub(crate) const T_NULL: u8 = 1;
pub(crate) const T_BOOL: u8 = 2;
pub(crate) const T_OBJECT: u8 = 4;
pub(crate) const T_ARRAY: u8 = 8;
/// Any number, integers included.
pub(crate) const T_NUMBER: u8 = 16;
/// Numbers that serde_json reads as `u64`/`i64` (no fraction, no exponent).
pub(crate) const T_INTEGER: u8 = 32;
pub(crate) const T_STRING: u8 = 64;
pub(crate) const T_ALL: u8 = 127;

/// Why a schema could not be compiled into a validator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A keyword has a value of the wrong shape (e.g. `"required": 3`).
    #[error("invalid schema at {path}: {reason}")]
    Invalid {
        /// JSON Pointer of the offending keyword inside the schema.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `$ref` points outside the document or at nothing.
    #[error("unresolvable $ref {reference:?} at {path}")]
    UnresolvedRef {
        /// JSON Pointer of the `$ref` keyword inside the schema.
        path: String,
        /// The reference as written.
        reference: String,
    },
    /// A keyword that changes validity but is not implemented here.
    #[error("unsupported keyword `{keyword}` at {path}")]
    Unsupported {
        /// JSON Pointer of the schema object holding the keyword.
        path: String,
        /// The keyword.
        keyword: String,
    },
    /// `pattern` is not a regular expression the `regex` crate accepts.
    #[error("invalid pattern at {path}: {reason}")]
    Pattern {
        /// JSON Pointer of the `pattern` keyword.
        path: String,
        /// The regex compiler's complaint.
        reason: String,
    },
    /// `$ref`/`allOf`/`anyOf`/`oneOf`/`not` form a loop that never descends
    /// into the data, so validating anything against it would never end.
    #[error("reference cycle that never reaches a property or item, through {path}")]
    RefCycle {
        /// JSON Pointer of a schema on the cycle.
        path: String,
    },
}

/// A numeric bound kept exactly when it is an integer, so that `maximum:
/// 18446744073709551615` is not rounded by a trip through `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Bound {
    Int(i128),
    Float(f64),
}

impl Bound {
    fn from_value(v: &Value) -> Option<Bound> {
        let n = v.as_number()?;
        if let Some(u) = n.as_u64() {
            Some(Bound::Int(u as i128))
        } else if let Some(i) = n.as_i64() {
            Some(Bound::Int(i as i128))
        } else {
            n.as_f64().map(Bound::Float)
        }
    }
    pub(crate) fn render(&self) -> String {
        match self {
            Bound::Int(i) => i.to_string(),
            Bound::Float(f) => render_f64(*f),
        }
    }
}

/// Renders a float the way serde_json would print it, so messages match what
/// the model sees elsewhere.
pub(crate) fn render_f64(f: f64) -> String {
    match serde_json::Number::from_f64(f) {
        Some(n) => n.to_string(),
        None => f.to_string(),
    }
}

/// Numeric keywords, including the ranges implied by schemars' integer formats.
#[derive(Debug, Clone, Default)]
pub(crate) struct NumRules {
    pub minimum: Option<Bound>,
    pub maximum: Option<Bound>,
    pub exclusive_minimum: Option<Bound>,
    pub exclusive_maximum: Option<Bound>,
    pub multiple_of: Option<f64>,
    /// From `format: uint8` etc.: the value must be an integer in this range,
    /// because that is what serde accepts for the Rust integer type.
    pub int_format: Option<(&'static str, i128, i128)>,
}

/// String keywords.
#[derive(Debug, Clone, Default)]
pub(crate) struct StrRules {
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<(String, regex::Regex)>,
}

/// Array keywords.
#[derive(Debug, Clone, Default)]
pub(crate) struct ArrRules {
    pub prefix_items: Vec<NodeId>,
    pub items: Option<NodeId>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
}

/// Object keywords.
#[derive(Debug, Clone, Default)]
pub(crate) struct ObjRules {
    /// Declared properties, in schema order.
    pub properties: Vec<(String, NodeId)>,
    /// `required[i]` tells whether `properties[i]` is required.
    pub required: Vec<bool>,
    /// Required names that have no entry in `properties`.
    pub required_extra: Vec<String>,
    pub pattern_properties: Vec<(regex::Regex, NodeId)>,
    /// `additionalProperties`; `None` means anything goes.
    pub additional: Option<NodeId>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    /// Per property: name length and its first 8 bytes as a little-endian
    /// word (zero-padded), so most key comparisons are one integer compare.
    pub keys: Vec<(usize, u64)>,
}

/// The first (up to) 8 bytes of `b` as a little-endian word, zero-padded.
#[inline]
pub(crate) fn prefix_word(b: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    for (d, s) in buf.iter_mut().zip(b) {
        *d = *s;
    }
    u64::from_le_bytes(buf)
}

impl ObjRules {
    /// Index of a declared property by name.
    #[inline]
    pub(crate) fn find(&self, key: &[u8]) -> Option<usize> {
        self.properties.iter().position(|(name, _)| name.as_bytes() == key)
    }

    /// Like [`ObjRules::find`] for a key whose first 8 bytes (zero-padded)
    /// are `word`, trying index `guess` first: models send fields in schema
    /// order, so the next field is nearly always the one after the last.
    #[inline]
    pub(crate) fn find_word(&self, key: &[u8], word: u64, guess: usize) -> Option<usize> {
        let hit = |i: usize| {
            let (len, w) = self.keys[i];
            len == key.len() && w == word && (len <= 8 || self.properties[i].0.as_bytes()[8..] == key[8..])
        };
        if guess < self.keys.len() && hit(guess) {
            return Some(guess);
        }
        (0..self.keys.len()).find(|&i| hit(i))
    }
}

/// The rules of an object schema that says nothing about its fields.
pub(crate) static EMPTY_OBJECT: ObjRules = ObjRules {
    properties: Vec::new(),
    required: Vec::new(),
    required_extra: Vec::new(),
    pattern_properties: Vec::new(),
    additional: None,
    min_properties: None,
    max_properties: None,
    keys: Vec::new(),
};

/// One compiled schema.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    /// `Some(b)` for the boolean schemas `true`/`false`.
    pub always: Option<bool>,
    /// Union of accepted type bits; `T_ALL` when `type` is absent.
    pub types: u8,
    /// `enum` (and `const`, as a one-element enum) values.
    pub enum_values: Option<Vec<Value>>,
    /// Whether the enum came from `const` (changes the message wording).
    pub is_const: bool,
    pub num: Option<NumRules>,
    pub string: Option<StrRules>,
    pub array: Option<ArrRules>,
    pub object: Option<ObjRules>,
    /// `$ref` targets and `allOf` members: all must pass.
    pub all_of: Vec<NodeId>,
    pub any_of: Vec<NodeId>,
    pub one_of: Vec<NodeId>,
    pub not: Option<NodeId>,
    /// Whether any keyword other than applicators applies, i.e. whether this
    /// node must look at the value itself.
    pub has_own: bool,
    /// No applicators and not a boolean schema: the fast pass can check
    /// the value's own keywords directly.
    pub simple: bool,
    /// Where the schema sits in the document, for error messages.
    pub location: String,
}

/// The compiled graph; node 0 is the root.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    pub nodes: Vec<Node>,
    /// Whether every keyword reachable in the schema is one that serde's
    /// derive enforces by itself for the type schemars derived it from
    /// (types, required fields, unknown fields, enums and tags, integer
    /// widths). See `Validator::parse`.
    pub serde_implied: bool,
}

/// Keywords that restrict validity and that this crate deliberately does not implement.
const UNSUPPORTED: &[&str] = &[
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "$dynamicRef",
    "$recursiveRef",
];

struct Compiler<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    by_pointer: HashMap<String, NodeId>,
    serde_implied: bool,
    /// Current nesting of `compile_at`, bounded so that a pathological
    /// schema (or a long `$ref` chain) cannot overflow the stack here.
    depth: u32,
}

/// Deepest schema nesting (including `$ref` hops) accepted by [`compile`].
pub(crate) const MAX_COMPILE_DEPTH: u32 = 64;

/// Compiles `schema` into a node graph.
pub(crate) fn compile(schema: &Value) -> Result<Compiled, SchemaError> {
    let mut c = Compiler {
        root: schema,
        nodes: Vec::new(),
        by_pointer: HashMap::new(),
        serde_implied: true,
        depth: 0,
    };
    c.compile_at(schema, String::new())?;
    check_cycles(&c.nodes)?;
    Ok(Compiled {
        nodes: c.nodes,
        serde_implied: c.serde_implied,
    })
}

fn invalid(path: &str, key: &str, reason: &str) -> SchemaError {
    SchemaError::Invalid {
        path: format!("{path}/{key}"),
        reason: reason.to_string(),
    }
}

fn escape_pointer(seg: &str) -> String {
    seg.replace('~', "~0").replace('/', "~1")
}

fn as_u64(map: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u64>, SchemaError> {
    match map.get(key) {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) => Ok(Some(n)),
            // `2.0` is a legal way to write a count in JSON Schema.
            None => match v.as_f64() {
                Some(f) if f >= 0.0 && f.fract() == 0.0 => Ok(Some(f.min(u64::MAX as f64) as u64)),
                _ => Err(invalid(path, key, "expected a non-negative integer")),
            },
        },
    }
}

fn int_format(format: &str) -> Option<(&'static str, i128, i128)> {
    Some(match format {
        "int8" => ("int8", i8::MIN as i128, i8::MAX as i128),
        "int16" => ("int16", i16::MIN as i128, i16::MAX as i128),
        "int32" => ("int32", i32::MIN as i128, i32::MAX as i128),
        "int64" | "int" => ("int64", i64::MIN as i128, i64::MAX as i128),
        "uint8" => ("uint8", 0, u8::MAX as i128),
        "uint16" => ("uint16", 0, u16::MAX as i128),
        "uint32" => ("uint32", 0, u32::MAX as i128),
        "uint64" | "uint" => ("uint64", 0, u64::MAX as i128),
        // serde_json without arbitrary_precision never yields more than 64 bits.
        "int128" => ("int128", i64::MIN as i128, u64::MAX as i128),
        "uint128" => ("uint128", 0, u64::MAX as i128),
        _ => return None,
    })
}

impl<'s> Compiler<'s> {
    fn alloc(&mut self, location: String) -> NodeId {
        self.nodes.push(Node {
            location,
            ..Node::default()
        });
        self.nodes.len() - 1
    }

    /// Compiles the schema found at `pointer` (reusing it if already compiled,
    /// which is what makes recursive `$ref`s terminate).
    fn compile_ref(&mut self, pointer: &str, at: &str, reference: &str) -> Result<NodeId, SchemaError> {
        if let Some(&id) = self.by_pointer.get(pointer) {
            return Ok(id);
        }
        let target = self.root.pointer(pointer).ok_or_else(|| SchemaError::UnresolvedRef {
            path: at.to_string(),
            reference: reference.to_string(),
        })?;
        self.compile_at(target, pointer.to_string())
    }

    fn compile_at(&mut self, schema: &'s Value, path: String) -> Result<NodeId, SchemaError> {
        if self.depth >= MAX_COMPILE_DEPTH {
            return Err(SchemaError::Invalid {
                path,
                reason: format!("schema nested deeper than {MAX_COMPILE_DEPTH} levels"),
            });
        }
        self.depth += 1;
        let result = self.compile_node(schema, path);
        self.depth -= 1;
        result
    }

    fn compile_node(&mut self, schema: &'s Value, path: String) -> Result<NodeId, SchemaError> {
        let id = self.alloc(path.clone());
        self.by_pointer.entry(path.clone()).or_insert(id);
        let map = match schema {
            Value::Bool(b) => {
                self.nodes[id].always = Some(*b);
                return Ok(id);
            }
            Value::Object(m) => m,
            _ => {
                return Err(SchemaError::Invalid {
                    path,
                    reason: "a schema must be an object or a boolean".into(),
                });
            }
        };
        for kw in UNSUPPORTED {
            if map.contains_key(*kw) {
                return Err(SchemaError::Unsupported {
                    path,
                    keyword: (*kw).to_string(),
                });
            }
        }
        let mut node = Node {
            location: path.clone(),
            types: T_ALL,
            ..Node::default()
        };

        if let Some(t) = map.get("type") {
            let mut bits = 0u8;
            let mut add = |s: &Value| -> Result<(), SchemaError> {
                bits |= match s.as_str() {
                    Some("null") => T_NULL,
                    Some("boolean") => T_BOOL,
                    Some("object") => T_OBJECT,
                    Some("array") => T_ARRAY,
                    Some("number") => T_NUMBER | T_INTEGER,
                    Some("integer") => T_INTEGER,
                    Some("string") => T_STRING,
                    _ => return Err(invalid(&path, "type", "unknown type name")),
                };
                Ok(())
            };
            match t {
                Value::Array(list) => {
                    for s in list {
                        add(s)?;
                    }
                }
                other => add(other)?,
            }
            node.types = bits;
            node.has_own = true;
        }

        if let Some(v) = map.get("enum") {
            let list = v
                .as_array()
                .ok_or_else(|| invalid(&path, "enum", "expected an array"))?;
            node.enum_values = Some(list.clone());
            node.has_own = true;
        }
        if let Some(v) = map.get("const") {
            node.enum_values = Some(vec![v.clone()]);
            node.is_const = true;
            node.has_own = true;
        }

        // Numbers.
        let mut num = NumRules::default();
        let mut any_num = false;
        for (key, slot) in [
            ("minimum", &mut num.minimum),
            ("maximum", &mut num.maximum),
            ("exclusiveMinimum", &mut num.exclusive_minimum),
            ("exclusiveMaximum", &mut num.exclusive_maximum),
        ] {
            if let Some(v) = map.get(key) {
                *slot = Some(Bound::from_value(v).ok_or_else(|| invalid(&path, key, "expected a number"))?);
                any_num = true;
            }
        }
        if let Some(v) = map.get("multipleOf") {
            let f = v
                .as_f64()
                .filter(|f| *f > 0.0)
                .ok_or_else(|| invalid(&path, "multipleOf", "expected a positive number"))?;
            num.multiple_of = Some(f);
            any_num = true;
        }
        let format = map.get("format").and_then(Value::as_str);
        if let Some(f) = format.and_then(int_format) {
            num.int_format = Some(f);
            any_num = true;
        }
        if any_num {
            node.num = Some(num);
            node.has_own = true;
        }

        // Strings.
        let mut st = StrRules {
            min_length: as_u64(map, "minLength", &path)?,
            max_length: as_u64(map, "maxLength", &path)?,
            pattern: None,
        };
        if let Some(p) = map.get("pattern") {
            let p = p
                .as_str()
                .ok_or_else(|| invalid(&path, "pattern", "expected a string"))?;
            let re = regex::RegexBuilder::new(p)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| SchemaError::Pattern {
                    path: format!("{path}/pattern"),
                    reason: e.to_string(),
                })?;
            st.pattern = Some((p.to_string(), re));
        }
        if st.min_length.is_some() || st.max_length.is_some() || st.pattern.is_some() {
            node.string = Some(st);
            node.has_own = true;
        }

        // Arrays.
        let mut arr = ArrRules {
            min_items: as_u64(map, "minItems", &path)?,
            max_items: as_u64(map, "maxItems", &path)?,
            unique_items: map.get("uniqueItems").and_then(Value::as_bool).unwrap_or(false),
            ..ArrRules::default()
        };
        if let Some(v) = map.get("prefixItems") {
            let list = v
                .as_array()
                .ok_or_else(|| invalid(&path, "prefixItems", "expected an array"))?;
            for (i, s) in list.iter().enumerate() {
                let child = self.compile_at(s, format!("{path}/prefixItems/{i}"))?;
                arr.prefix_items.push(child);
            }
        }
        if let Some(v) = map.get("items") {
            // Draft-07 style tuple `items: [..]` still appears in hand-written schemas.
            if let Value::Array(list) = v {
                for (i, s) in list.iter().enumerate() {
                    let child = self.compile_at(s, format!("{path}/items/{i}"))?;
                    arr.prefix_items.push(child);
                }
                if let Some(extra) = map.get("additionalItems") {
                    arr.items = Some(self.compile_at(extra, format!("{path}/additionalItems"))?);
                }
            } else {
                arr.items = Some(self.compile_at(v, format!("{path}/items"))?);
            }
        }
        if arr.min_items.is_some()
            || arr.max_items.is_some()
            || arr.unique_items
            || !arr.prefix_items.is_empty()
            || arr.items.is_some()
        {
            node.array = Some(arr);
            node.has_own = true;
        }

        // Objects.
        let mut obj = ObjRules {
            min_properties: as_u64(map, "minProperties", &path)?,
            max_properties: as_u64(map, "maxProperties", &path)?,
            ..ObjRules::default()
        };
        let mut any_obj = obj.min_properties.is_some() || obj.max_properties.is_some();
        if let Some(v) = map.get("properties") {
            let props = v
                .as_object()
                .ok_or_else(|| invalid(&path, "properties", "expected an object"))?;
            for (name, s) in props {
                let child = self.compile_at(s, format!("{path}/properties/{}", escape_pointer(name)))?;
                obj.properties.push((name.clone(), child));
            }
            any_obj = true;
        }
        obj.required = vec![false; obj.properties.len()];
        if let Some(v) = map.get("required") {
            let list = v
                .as_array()
                .ok_or_else(|| invalid(&path, "required", "expected an array of strings"))?;
            for r in list {
                let r = r
                    .as_str()
                    .ok_or_else(|| invalid(&path, "required", "expected an array of strings"))?;
                match obj.find(r.as_bytes()) {
                    Some(i) => obj.required[i] = true,
                    None => {
                        if !obj.required_extra.iter().any(|x| x == r) {
                            obj.required_extra.push(r.to_string());
                        }
                    }
                }
            }
            any_obj = true;
        }
        if let Some(v) = map.get("patternProperties") {
            let pats = v
                .as_object()
                .ok_or_else(|| invalid(&path, "patternProperties", "expected an object"))?;
            for (p, s) in pats {
                let re = regex::RegexBuilder::new(p)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| SchemaError::Pattern {
                        path: format!("{path}/patternProperties"),
                        reason: e.to_string(),
                    })?;
                let child = self.compile_at(s, format!("{path}/patternProperties/{}", escape_pointer(p)))?;
                obj.pattern_properties.push((re, child));
            }
            any_obj = true;
        }
        if let Some(v) = map.get("additionalProperties") {
            obj.additional = Some(self.compile_at(v, format!("{path}/additionalProperties"))?);
            any_obj = true;
        }
        if any_obj {
            obj.keys = obj
                .properties
                .iter()
                .map(|(k, _)| (k.len(), prefix_word(k.as_bytes())))
                .collect();
            node.object = Some(obj);
            node.has_own = true;
        }

        // Applicators.
        if let Some(r) = map.get("$ref") {
            let r = r.as_str().ok_or_else(|| invalid(&path, "$ref", "expected a string"))?;
            let at = format!("{path}/$ref");
            let pointer = r.strip_prefix('#').ok_or_else(|| SchemaError::UnresolvedRef {
                path: at.clone(),
                reference: r.to_string(),
            })?;
            let pointer = percent_decode(pointer);
            let target = self.compile_ref(&pointer, &at, r)?;
            node.all_of.push(target);
        }
        for (key, which) in [("allOf", 0), ("anyOf", 1), ("oneOf", 2)] {
            if let Some(v) = map.get(key) {
                let list = v
                    .as_array()
                    .filter(|l| !l.is_empty())
                    .ok_or_else(|| invalid(&path, key, "expected a non-empty array"))?;
                for (i, s) in list.iter().enumerate() {
                    let child = self.compile_at(s, format!("{path}/{key}/{i}"))?;
                    match which {
                        0 => node.all_of.push(child),
                        1 => node.any_of.push(child),
                        _ => node.one_of.push(child),
                    }
                }
            }
        }
        if let Some(v) = map.get("not") {
            node.not = Some(self.compile_at(v, format!("{path}/not"))?);
        }

        if !serde_implies(map, &node) {
            self.serde_implied = false;
        }
        node.simple = node.has_own
            && node.all_of.is_empty()
            && node.any_of.is_empty()
            && node.one_of.is_empty()
            && node.not.is_none();
        self.nodes[id] = node;
        Ok(id)
    }
}

/// Whether serde's derive enforces everything this schema object says, for
/// the type schemars derived it from: anything that adds a constraint serde
/// does not know about (lengths, patterns, bounds beyond an integer width,
/// `uniqueItems`, which a `HashSet` silently dedups) answers no.
fn serde_implies(map: &Map<String, Value>, node: &Node) -> bool {
    const EXTRA: &[&str] = &[
        "pattern",
        "minLength",
        "maxLength",
        "uniqueItems",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minProperties",
        "maxProperties",
        "patternProperties",
        "not",
        "allOf",
        "additionalItems",
    ];
    if EXTRA.iter().any(|k| map.contains_key(*k)) || map.get("items").is_some_and(Value::is_array) {
        return false;
    }
    if let Some(r) = &node.num {
        let (lo, hi) = match r.int_format {
            Some((_, lo, hi)) => (lo, hi),
            None if r.minimum.is_none() && r.maximum.is_none() => (0, 0),
            None => return false,
        };
        if r.minimum.is_some_and(|b| b != Bound::Int(lo)) || r.maximum.is_some_and(|b| b != Bound::Int(hi)) {
            return false;
        }
    }
    if let Some(a) = &node.array {
        // Tuples: serde checks the length itself.
        let n = a.prefix_items.len() as u64;
        let tuple = n > 0 && a.items.is_none();
        let len_ok = |m: Option<u64>| m.is_none() || (tuple && m == Some(n));
        if !len_ok(a.min_items) || !len_ok(a.max_items) {
            return false;
        }
    }
    if node.object.as_ref().is_some_and(|o| !o.required_extra.is_empty()) {
        return false;
    }
    true
}

/// `$ref` fragments are URI fragments; schemars never percent-encodes, but
/// hand-written schemas with spaces in `$defs` names do.
fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Rejects applicator loops that never descend into the data (`$defs/A =
/// {"$ref": "#/$defs/A"}`): they would make validation recurse forever.
fn check_cycles(nodes: &[Node]) -> Result<(), SchemaError> {
    // 0 = unvisited, 1 = on the stack, 2 = done. Iterative so that a huge
    // adversarial schema cannot overflow the stack here either.
    let mut state = vec![0u8; nodes.len()];
    for start in 0..nodes.len() {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(NodeId, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&mut (n, ref mut next)) = stack.last_mut() {
            let node = &nodes[n];
            let edges = node.all_of.len() + node.any_of.len() + node.one_of.len() + usize::from(node.not.is_some());
            if *next < edges {
                let i = *next;
                *next += 1;
                let child = applicator_edge(node, i);
                match state[child] {
                    1 => {
                        return Err(SchemaError::RefCycle {
                            path: nodes[child].location.clone(),
                        });
                    }
                    0 => {
                        state[child] = 1;
                        stack.push((child, 0));
                    }
                    _ => {}
                }
            } else {
                state[n] = 2;
                stack.pop();
            }
        }
    }
    Ok(())
}

fn applicator_edge(node: &Node, mut i: usize) -> NodeId {
    if i < node.all_of.len() {
        return node.all_of[i];
    }
    i -= node.all_of.len();
    if i < node.any_of.len() {
        return node.any_of[i];
    }
    i -= node.any_of.len();
    if i < node.one_of.len() {
        return node.one_of[i];
    }
    node.not.unwrap_or(0)
}
