//! The parsed form of the arguments used by the diagnostic pass.
//!
//! It exists instead of `serde_json::Value` for two reasons: it keeps
//! duplicate keys (serde's struct derive rejects them, so the validator must
//! see them), and it keeps serde_json's own number classification (`u64`,
//! `i64` or `f64`, with `-0` and out-of-range integers as `f64`), which is
//! what decides whether serde accepts a number for an integer field.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::schema::render_f64;

/// A JSON number as serde_json classifies it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    pub(crate) fn is_integer(self) -> bool {
        !matches!(self, Num::F(_))
    }
    pub(crate) fn as_i128(self) -> Option<i128> {
        match self {
            Num::U(u) => Some(u as i128),
            Num::I(i) => Some(i as i128),
            Num::F(_) => None,
        }
    }
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::U(u) => u as f64,
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }
    pub(crate) fn render(self) -> String {
        match self {
            Num::U(u) => u.to_string(),
            Num::I(i) => i.to_string(),
            Num::F(f) => render_f64(f),
        }
    }
}

/// A parsed JSON value that remembers duplicate keys and key order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tree {
    Null,
    Bool(bool),
    Num(Num),
    Str(String),
    Arr(Vec<Tree>),
    Obj(Vec<(String, Tree)>),
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_none<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
        Ok(Tree::Num(Num::U(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Tree, E> {
        Ok(Tree::Num(Num::I(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Tree, E> {
        Ok(Tree::Num(Num::F(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
        Ok(Tree::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Tree, E> {
        Ok(Tree::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(t) = seq.next_element::<Tree>()? {
            items.push(t);
        }
        Ok(Tree::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut fields = Vec::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value::<Tree>()?;
            fields.push((k, v));
        }
        Ok(Tree::Obj(fields))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
        Tree::deserialize(d)
    }
    fn visit_bytes<E: de::Error>(self, _v: &[u8]) -> Result<Tree, E> {
        Err(E::custom("unexpected bytes"))
    }
}

/// Parses `raw` with serde_json's parser (same grammar, same recursion limit).
pub(crate) fn parse(raw: &str) -> Result<Tree, serde_json::Error> {
    serde_json::from_str(raw)
}

impl Tree {
    /// The JSON type name used in messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Tree::Null => "null",
            Tree::Bool(_) => "boolean",
            Tree::Num(n) if n.is_integer() => "integer",
            Tree::Num(_) => "number",
            Tree::Str(_) => "string",
            Tree::Arr(_) => "array",
            Tree::Obj(_) => "object",
        }
    }

    /// Equality with a schema value, as JSON Schema defines it (`1 == 1.0`,
    /// key order irrelevant).
    pub(crate) fn eq_value(&self, v: &Value) -> bool {
        match (self, v) {
            (Tree::Null, Value::Null) => true,
            (Tree::Bool(a), Value::Bool(b)) => a == b,
            (Tree::Num(a), Value::Number(b)) => {
                let bi = b.as_u64().map(i128::from).or_else(|| b.as_i64().map(i128::from));
                match (a.as_i128(), bi) {
                    (Some(x), Some(y)) => x == y,
                    _ => Some(a.as_f64()) == b.as_f64(),
                }
            }
            (Tree::Str(a), Value::String(b)) => a == b,
            (Tree::Arr(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.eq_value(y)),
            (Tree::Obj(a), Value::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, x)| b.get(k).is_some_and(|y| x.eq_value(y)))
            }
            _ => false,
        }
    }

    /// Serializes back to JSON text (used only when optional nulls were dropped).
    pub(crate) fn write_json(&self, out: &mut String) {
        match self {
            Tree::Null => out.push_str("null"),
            Tree::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Tree::Num(n) => match n {
                // Keep floats floats: `1.0` must not come back as `1`.
                Num::F(f) => out.push_str(&serde_json::to_string(f).unwrap_or_else(|_| "null".into())),
                _ => out.push_str(&n.render()),
            },
            Tree::Str(s) => write_str(s, out),
            Tree::Arr(items) => {
                out.push('[');
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    t.write_json(out);
                }
                out.push(']');
            }
            Tree::Obj(fields) => {
                out.push('{');
                for (i, (k, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(k, out);
                    out.push(':');
                    t.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

fn write_str(s: &str, out: &mut String) {
    // Serializing a &str to JSON cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}
