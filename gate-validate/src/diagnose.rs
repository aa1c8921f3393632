//! The diagnostic pass: runs only when the fast pass is unsure, walks the
//! parsed arguments against the compiled schema and collects *every*
//! violation, each with its path, expectation and a rendering of what was
//! sent. It is the authority on validity; the fast pass only short-cuts it.
//!
//! It also carries out the null rule: an explicit `null` for a property that
//! is not required and whose schema rejects null counts as absent, and is
//! recorded for removal from the text handed on.
//!
//! What each violation says, in words, is [`crate::render`]'s: this module
//! decides the kind, the path and which rules or values were broken, and
//! passes those on to be worded.

use std::collections::HashSet;

use serde_json::Value;

use crate::MAX_SCHEMA_DEPTH;
use crate::check::{self, NumFail, StrFail};
use crate::render::{
    self, array_constraints, got, number_constraints, one_of_values, pointer_segment, pointer_target,
    string_constraints, type_names,
};
use crate::report::{Violation, ViolationKind};
use crate::schema::{Node, NodeId, T_ALL, T_ARRAY, T_BOOL, T_INTEGER, T_NULL, T_NUMBER, T_OBJECT, T_STRING};
use crate::suggest;
use crate::tree::Tree;

/// Violations found and nulls to drop (as index paths into the tree).
#[derive(Debug, Default)]
pub(crate) struct Out {
    pub violations: Vec<Violation>,
    pub drops: Vec<Vec<usize>>,
}

impl Out {
    fn merge(&mut self, other: Out) {
        self.violations.extend(other.violations);
        self.drops.extend(other.drops);
    }
}

/// Walk state: the current path, both as a pointer and as tree indices.
pub(crate) struct Diag<'a> {
    nodes: &'a [Node],
    path: String,
    index: Vec<usize>,
    frames: u32,
}

/// Runs the diagnostic pass over a parsed value.
pub(crate) fn run(nodes: &[Node], t: &Tree) -> Out {
    let mut d = Diag {
        nodes,
        path: String::new(),
        index: Vec::new(),
        frames: 0,
    };
    let mut out = Out::default();
    d.node(0, t, &mut out);
    // Several alternatives or allOf members can report the very same problem.
    let mut seen = HashSet::new();
    out.violations
        .retain(|v| seen.insert((v.path.clone(), v.expected.clone(), v.kind)));
    out.drops.sort();
    out.drops.dedup();
    out
}

/// A walker with no data, for describing schemas (the root's shape).
pub(crate) fn describer(nodes: &[Node]) -> Diag<'_> {
    Diag {
        nodes,
        path: String::new(),
        index: Vec::new(),
        frames: 0,
    }
}

/// The type bit of a parsed value.
fn bit(t: &Tree) -> u8 {
    match t {
        Tree::Null => T_NULL,
        Tree::Bool(_) => T_BOOL,
        Tree::Num(n) if n.is_integer() => T_INTEGER,
        Tree::Num(_) => T_NUMBER,
        Tree::Str(_) => T_STRING,
        Tree::Arr(_) => T_ARRAY,
        Tree::Obj(_) => T_OBJECT,
    }
}

/// Whether a type set accepts a value's type (`number` accepts integers).
fn accepts(types: u8, t: &Tree) -> bool {
    let b = bit(t);
    types & b != 0 || (b == T_INTEGER && types & T_NUMBER != 0)
}

fn value_type_bit(v: &Value) -> u8 {
    match v {
        Value::Null => T_NULL,
        Value::Bool(_) => T_BOOL,
        Value::Number(n) if n.is_i64() || n.is_u64() => T_INTEGER | T_NUMBER,
        Value::Number(_) => T_NUMBER,
        Value::String(_) => T_STRING,
        Value::Array(_) => T_ARRAY,
        Value::Object(_) => T_OBJECT,
    }
}

impl<'a> Diag<'a> {
    /// The set of types a node can accept at all, looking through applicators.
    fn type_set(&self, id: NodeId, depth: u32) -> u8 {
        if depth > 8 {
            return T_ALL;
        }
        let n = &self.nodes[id];
        if let Some(b) = n.always {
            return if b { T_ALL } else { 0 };
        }
        let mut s = n.types;
        if let Some(values) = &n.enum_values {
            s &= values.iter().fold(0, |acc, v| acc | value_type_bit(v));
        }
        for &sub in &n.all_of {
            s &= self.type_set(sub, depth + 1);
        }
        if !n.any_of.is_empty() {
            s &= n.any_of.iter().fold(0, |acc, &b| acc | self.type_set(b, depth + 1));
        }
        if !n.one_of.is_empty() {
            s &= n.one_of.iter().fold(0, |acc, &b| acc | self.type_set(b, depth + 1));
        }
        s
    }

    /// What a node wants, in words, for `expected`.
    pub(crate) fn describe(&self, id: NodeId, depth: u32) -> String {
        let n = &self.nodes[id];
        if let Some(b) = n.always {
            return if b { render::ANY_VALUE } else { render::NO_VALUE }.into();
        }
        if depth > 4 {
            return render::DOCUMENTED_SHAPE.into();
        }
        if let Some(values) = &n.enum_values {
            return one_of_values(values, None);
        }
        if n.types == T_ALL && !n.has_own {
            let mut alts: Vec<String> = Vec::new();
            let branches = if !n.any_of.is_empty() { &n.any_of } else { &n.one_of };
            if !branches.is_empty() {
                for &b in branches {
                    let d = self.describe(b, depth + 1);
                    if !alts.contains(&d) {
                        alts.push(d);
                    }
                }
                return alts.join(" or ");
            }
            if let Some(&first) = n.all_of.first() {
                return self.describe(first, depth + 1);
            }
            return render::ANY_VALUE.into();
        }
        let mut names: Vec<String> = Vec::new();
        let t = if n.types == T_ALL {
            self.type_set(id, 0)
        } else {
            n.types
        };
        for (b, name) in type_names(t) {
            let mut s = name.to_string();
            if b == T_STRING {
                s.push_str(&string_constraints(n.string.as_ref()));
            } else if b == T_INTEGER || b == T_NUMBER {
                s.push_str(&number_constraints(n.num.as_ref()));
            } else if b == T_ARRAY {
                s.push_str(&array_constraints(n.array.as_ref()));
            }
            names.push(s);
        }
        if names.is_empty() {
            return render::NO_VALUE.into();
        }
        names.join(" or ")
    }

    /// The types a node accepts, in words, without constraints or values
    /// (`string`, `object or null`): for the compact skeleton of the root.
    pub(crate) fn describe_types(&self, id: NodeId) -> String {
        let t = self.type_set(id, 0);
        if t == T_ALL {
            return render::ANY_VALUE.into();
        }
        let names: Vec<&str> = type_names(t).map(|(_, name)| name).collect();
        if names.is_empty() {
            render::NO_VALUE.into()
        } else {
            names.join(" or ")
        }
    }

    fn push_path(&mut self, seg: &str, index: usize) -> usize {
        let len = self.path.len();
        self.path.push('/');
        self.path.push_str(seg);
        self.index.push(index);
        len
    }

    fn pop_path(&mut self, len: usize) {
        self.path.truncate(len);
        self.index.pop();
    }

    fn violation(&self, kind: ViolationKind, expected: String, got: String) -> Violation {
        Violation::new(&self.path, kind, expected, got)
    }

    /// Validates `t` against node `id`, appending what is wrong to `out`.
    fn node(&mut self, id: NodeId, t: &Tree, out: &mut Out) {
        self.frames += 1;
        if self.frames > MAX_SCHEMA_DEPTH {
            out.violations.push(self.violation(
                ViolationKind::TooDeep,
                render::nesting_limit(MAX_SCHEMA_DEPTH),
                render::DEEPER_VALUE.into(),
            ));
        } else {
            self.node_inner(id, t, out);
        }
        self.frames -= 1;
    }

    fn node_inner(&mut self, id: NodeId, t: &Tree, out: &mut Out) {
        let nodes = self.nodes;
        let n = &nodes[id];
        if let Some(b) = n.always {
            if !b {
                out.violations
                    .push(self.violation(ViolationKind::Forbidden, render::NO_VALUE.into(), got(t)));
            }
            return;
        }
        if n.has_own && !self.own(id, t, out) {
            // The type is wrong: what the alternatives would add is noise.
            return;
        }
        for &sub in &n.all_of {
            self.node(sub, t, out);
        }
        if !n.any_of.is_empty() {
            let mut results = Vec::with_capacity(n.any_of.len());
            for &b in &n.any_of {
                let mut o = Out::default();
                self.node(b, t, &mut o);
                if o.violations.is_empty() {
                    out.drops.extend(o.drops);
                    results.clear();
                    break;
                }
                results.push(o);
            }
            if !results.is_empty() {
                self.alternatives(&n.any_of, t, results, out);
            }
        }
        if !n.one_of.is_empty() {
            let mut results = Vec::with_capacity(n.one_of.len());
            for &b in &n.one_of {
                let mut o = Out::default();
                self.node(b, t, &mut o);
                results.push(o);
            }
            let passing: Vec<usize> = (0..results.len())
                .filter(|&i| results[i].violations.is_empty())
                .collect();
            match passing.len() {
                1 => out.drops.append(&mut results[passing[0]].drops),
                0 => self.alternatives(&n.one_of, t, results, out),
                _ => out.violations.push(self.violation(
                    ViolationKind::AmbiguousAlternative,
                    render::exactly_one_of(&self.describe(id, 0)),
                    render::matching_several(&got(t), passing.len()),
                )),
            }
        }
        if let Some(sub) = n.not {
            let mut o = Out::default();
            self.node(sub, t, &mut o);
            if o.violations.is_empty() {
                out.violations.push(self.violation(
                    ViolationKind::Forbidden,
                    render::anything_except(&self.describe(sub, 1)),
                    got(t),
                ));
            }
        }
    }

    /// Explains why no alternative of an `anyOf`/`oneOf` matched, by finding
    /// the alternative the model most likely meant.
    fn alternatives(&mut self, branches: &[NodeId], t: &Tree, mut results: Vec<Out>, out: &mut Out) {
        // Internally tagged enums: the tag says which alternative was meant.
        if let Tree::Obj(fields) = t
            && let Some((tag, values)) = self.discriminator(branches)
        {
            let sent = fields.iter().position(|(k, _)| *k == tag);
            match sent {
                Some(pos) => {
                    let v = &fields[pos].1;
                    if let Some(b) = values.iter().position(|c| v.eq_value(c)) {
                        out.violations.append(&mut results[b].violations);
                    } else {
                        let len = self.push_path(&pointer_target(&tag), pos);
                        let hint = match v {
                            Tree::Str(s) => suggest::did_you_mean(s, values.iter().filter_map(|c| c.as_str()))
                                .map(render::did_you_mean),
                            _ => None,
                        };
                        let owned: Vec<Value> = values.iter().map(|v| (*v).clone()).collect();
                        let viol = self
                            .violation(ViolationKind::Enum, one_of_values(&owned, Some(v)), got(v))
                            .with_hint(hint);
                        out.violations.push(viol);
                        self.pop_path(len);
                    }
                }
                None => {
                    let len = self.push_path(&pointer_target(&tag), usize::MAX);
                    let owned: Vec<Value> = values.iter().map(|v| (*v).clone()).collect();
                    out.violations.push(self.violation(
                        ViolationKind::Required,
                        one_of_values(&owned, None),
                        render::NOTHING.into(),
                    ));
                    self.pop_path(len);
                }
            }
            return;
        }
        let candidates: Vec<usize> = (0..branches.len())
            .filter(|&i| accepts(self.type_set(branches[i], 0), t))
            .collect();
        match candidates.as_slice() {
            [] => {
                let mut alts: Vec<String> = Vec::new();
                for &b in branches {
                    let d = self.describe(b, 1);
                    if !alts.contains(&d) {
                        alts.push(d);
                    }
                }
                out.violations
                    .push(self.violation(ViolationKind::Type, alts.join(" or "), got(t)));
            }
            [only] => out.violations.append(&mut results[*only].violations),
            many => {
                // Several alternatives take this type: the closest one (fewest
                // problems, first on ties) is the likeliest intent.
                let best = many
                    .iter()
                    .copied()
                    .min_by_key(|&i| results[i].violations.len())
                    .unwrap_or(many[0]);
                if results[best].violations.is_empty() {
                    out.violations.push(self.violation(
                        ViolationKind::NoAlternative,
                        self.describe_alternatives(branches),
                        got(t),
                    ));
                } else {
                    out.violations.append(&mut results[best].violations);
                }
            }
        }
    }

    fn describe_alternatives(&self, branches: &[NodeId]) -> String {
        let mut alts: Vec<String> = Vec::new();
        for &b in branches {
            let d = self.describe(b, 1);
            if !alts.contains(&d) {
                alts.push(d);
            }
        }
        alts.join(" or ")
    }

    /// The declared properties of a node, looking through `$ref`/`allOf`.
    fn object_props(&self, id: NodeId, depth: u32) -> Vec<(&'a str, NodeId, bool)> {
        let nodes = self.nodes;
        let n = &nodes[id];
        let mut props = Vec::new();
        if depth > 4 {
            return props;
        }
        if let Some(o) = &n.object {
            for (i, (name, child)) in o.properties.iter().enumerate() {
                props.push((name.as_str(), *child, o.required[i]));
            }
        }
        for &sub in &n.all_of {
            props.extend(self.object_props(sub, depth + 1));
        }
        props
    }

    /// A required string-constant property present in every alternative
    /// (`"kind": {"const": "Circle"}`), with each alternative's constant.
    fn discriminator(&self, branches: &[NodeId]) -> Option<(String, Vec<&'a Value>)> {
        let nodes = self.nodes;
        let single = |child: NodeId| -> Option<&'a Value> {
            let c = &nodes[child];
            let mut cur = c;
            // A `$ref` to a one-value enum is still a tag.
            if cur.enum_values.is_none() && cur.all_of.len() == 1 {
                cur = &nodes[cur.all_of[0]];
            }
            match &cur.enum_values {
                Some(v) if v.len() == 1 && v[0].is_string() => Some(&v[0]),
                _ => None,
            }
        };
        let first = self.object_props(*branches.first()?, 0);
        'names: for (name, child, required) in first {
            if !required || single(child).is_none() {
                continue;
            }
            let mut values = Vec::with_capacity(branches.len());
            for &b in branches {
                let props = self.object_props(b, 0);
                match props
                    .iter()
                    .find(|(n, _, r)| *n == name && *r)
                    .and_then(|(_, c, _)| single(*c))
                {
                    Some(v) => {
                        if values.contains(&v) {
                            continue 'names;
                        }
                        values.push(v)
                    }
                    None => continue 'names,
                }
            }
            return Some((name.to_string(), values));
        }
        None
    }

    /// Checks the node's own keywords. Returns false when the type is wrong.
    fn own(&mut self, id: NodeId, t: &Tree, out: &mut Out) -> bool {
        let nodes = self.nodes;
        let n = &nodes[id];
        if !accepts(n.types, t) {
            out.violations
                .push(self.violation(ViolationKind::Type, self.describe(id, 0), got(t)));
            return false;
        }
        if let Some(values) = &n.enum_values
            && !values.iter().any(|v| t.eq_value(v))
        {
            let hint = match t {
                Tree::Str(s) => {
                    suggest::did_you_mean(s, values.iter().filter_map(Value::as_str)).map(render::did_you_mean)
                }
                _ => None,
            };
            out.violations.push(
                self.violation(ViolationKind::Enum, one_of_values(values, Some(t)), got(t))
                    .with_hint(hint),
            );
        }
        match t {
            Tree::Num(num) => {
                if let Some(r) = &n.num
                    && let Err(fail) = check::number(r, *num)
                {
                    let expected = match fail {
                        NumFail::MultipleOf => render::multiple_of(r.multiple_of.unwrap_or(1.0)),
                        NumFail::NotInteger | NumFail::Range => {
                            let base = if n.types & T_NUMBER != 0 && r.int_format.is_none() {
                                "number"
                            } else {
                                "integer"
                            };
                            format!("{base}{}", number_constraints(n.num.as_ref()))
                        }
                    };
                    let kind = if fail == NumFail::NotInteger {
                        ViolationKind::Type
                    } else {
                        ViolationKind::Range
                    };
                    out.violations.push(self.violation(kind, expected, got(t)));
                }
            }
            Tree::Str(s) => {
                if let Some(r) = &n.string
                    && let Err(fail) = check::string(r, s)
                {
                    let kind = match fail {
                        StrFail::Length => ViolationKind::Length,
                        StrFail::Pattern => ViolationKind::Pattern,
                    };
                    let expected = format!("string{}", string_constraints(n.string.as_ref()));
                    let mut g = got(t);
                    if fail == StrFail::Length {
                        g.push_str(&render::of_length(s.chars().count() as u64));
                    }
                    out.violations.push(self.violation(kind, expected, g));
                }
            }
            Tree::Arr(items) => self.array(n, items, out),
            Tree::Obj(fields) => self.object(n, fields, out),
            _ => {}
        }
        true
    }

    fn array(&mut self, n: &'a Node, items: &[Tree], out: &mut Out) {
        let Some(r) = &n.array else {
            return;
        };
        let count = items.len() as u64;
        if r.min_items.is_some_and(|m| count < m) || r.max_items.is_some_and(|m| count > m) {
            let expected = format!("array{}", array_constraints(n.array.as_ref()));
            out.violations
                .push(self.violation(ViolationKind::ItemCount, expected, render::array_of(count)));
        }
        for (i, item) in items.iter().enumerate() {
            let schema = r.prefix_items.get(i).copied().or(r.items);
            if let Some(s) = schema {
                let len = self.push_path(&i.to_string(), i);
                self.node(s, item, out);
                self.pop_path(len);
            }
        }
        if r.unique_items {
            let mut first_at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
            for (i, item) in items.iter().enumerate() {
                let key = canonical(item);
                if let Some(&j) = first_at.get(&key) {
                    let len = self.push_path(&i.to_string(), i);
                    out.violations.push(self.violation(
                        ViolationKind::UniqueItems,
                        render::UNIQUE_ITEMS.into(),
                        render::repeating(&got(item), j),
                    ));
                    self.pop_path(len);
                } else {
                    first_at.insert(key, i);
                }
            }
        }
    }

    fn object(&mut self, n: &'a Node, fields: &[(String, Tree)], out: &mut Out) {
        let Some(r) = &n.object else {
            return;
        };
        let count = fields.len() as u64;
        if r.min_properties.is_some_and(|m| count < m) || r.max_properties.is_some_and(|m| count > m) {
            out.violations.push(self.violation(
                ViolationKind::PropertyCount,
                render::property_count(r.min_properties, r.max_properties),
                render::fields_sent(count),
            ));
        }
        let mut seen = vec![false; r.properties.len()];
        let mut listed_allowed = false;
        let mut extra_seen = vec![false; r.required_extra.len()];
        for (mi, (key, value)) in fields.iter().enumerate() {
            let declared = r.find(key.as_bytes());
            // A declared name is a target and shown whole; an undeclared key
            // is only what the model sent.
            let seg = if declared.is_some() {
                pointer_target(key)
            } else {
                pointer_segment(key)
            };
            let len = self.push_path(&seg, mi);
            if let Some(i) = declared {
                if seen[i] {
                    out.violations.push(self.violation(
                        ViolationKind::DuplicateField,
                        render::EACH_FIELD_ONCE.into(),
                        render::field_again(key),
                    ));
                } else {
                    seen[i] = true;
                    let child = r.properties[i].1;
                    if matches!(value, Tree::Null) && !r.required[i] {
                        let mut o = Out::default();
                        self.node(child, value, &mut o);
                        if o.violations.is_empty() {
                            out.merge(o);
                        } else {
                            // The null rule: an optional field sent as null is absent.
                            out.drops.push(self.index.clone());
                        }
                    } else {
                        self.node(child, value, out);
                    }
                }
            } else {
                if let Some(j) = r.required_extra.iter().position(|x| x == key) {
                    extra_seen[j] = true;
                }
                let mut matched = false;
                for (re, child) in &r.pattern_properties {
                    if re.is_match(key) {
                        matched = true;
                        self.node(*child, value, out);
                    }
                }
                if !matched && let Some(a) = r.additional {
                    if self.nodes[a].always == Some(false) {
                        let names: Vec<&str> = r.properties.iter().map(|(k, _)| k.as_str()).collect();
                        let text = render::unknown_field(&names, key, value, listed_allowed);
                        listed_allowed |= text.lists_allowed;
                        out.violations.push(
                            self.violation(ViolationKind::UnknownField, text.expected, text.got)
                                .with_hint(Some(text.hint)),
                        );
                    } else {
                        self.node(a, value, out);
                    }
                }
            }
            self.pop_path(len);
        }
        for (i, (name, child)) in r.properties.iter().enumerate() {
            if r.required[i] && !seen[i] {
                let len = self.push_path(&pointer_target(name), usize::MAX);
                let sent_as = fields
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .filter(|k| r.find(k.as_bytes()).is_none())
                    .find(|k| suggest::did_you_mean(k, [name.as_str()]).is_some())
                    .map(render::sent_as);
                out.violations.push(
                    self.violation(
                        ViolationKind::Required,
                        self.describe(*child, 0),
                        render::NOTHING.into(),
                    )
                    .with_hint(sent_as),
                );
                self.pop_path(len);
            }
        }
        for (j, name) in r.required_extra.iter().enumerate() {
            if !extra_seen[j] {
                let len = self.push_path(&pointer_target(name), usize::MAX);
                out.violations.push(self.violation(
                    ViolationKind::Required,
                    render::A_VALUE.into(),
                    render::NOTHING.into(),
                ));
                self.pop_path(len);
            }
        }
    }
}

/// A canonical text form for `uniqueItems`: equal exactly when JSON Schema
/// calls two values equal (`1` and `1.0` are; key order does not matter).
fn canonical(t: &Tree) -> String {
    match t {
        Tree::Num(n) => match n.as_i128() {
            Some(i) => i.to_string(),
            None => {
                let f = n.as_f64();
                if f.fract() == 0.0 && f.abs() < 1e30 {
                    format!("{}", f as i128)
                } else {
                    crate::schema::render_f64(f)
                }
            }
        },
        Tree::Arr(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        Tree::Obj(fields) => {
            let mut parts: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap_or_default(), canonical(v)))
                .collect();
            parts.sort();
            format!("{{{}}}", parts.join(","))
        }
        Tree::Str(s) => serde_json::to_string(s).unwrap_or_default(),
        other => {
            let mut s = String::new();
            other.write_json(&mut s);
            s
        }
    }
}
