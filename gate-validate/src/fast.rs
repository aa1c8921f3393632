//! The fast pass: one scan over the raw argument bytes that checks JSON
//! syntax and the schema together, allocates nothing for the usual shapes,
//! and answers only "certainly valid" or "look closer".
//!
//! It exists because the valid path must cost little more than the
//! `serde_json::from_str` that follows it. Whenever it meets something it
//! does not handle cheaply (duplicate-looking keys beyond 64 properties,
//! `uniqueItems`, non-string enums, `patternProperties`, an explicit `null`
//! that must be dropped) it answers [`Fast::Unsure`] and the diagnostic pass
//! decides. It must never answer [`Fast::Valid`] for text the diagnostic
//! pass would reject; a property test holds it to that.

use crate::schema::{
    Compiled, EMPTY_OBJECT, Node, NodeId, T_ARRAY, T_BOOL, T_INTEGER, T_NULL, T_NUMBER, T_OBJECT, T_STRING, prefix_word,
};
use crate::tree::Num;
use crate::{MAX_NESTING, MAX_SCHEMA_DEPTH, check};

/// What the fast pass concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fast {
    /// Valid as sent; hand the text on unchanged.
    Valid,
    /// Invalid, or valid only after normalization: run the diagnostic pass.
    Unsure,
}

/// Runs the fast pass over `raw`.
pub(crate) fn validate(compiled: &Compiled, raw: &str) -> Fast {
    let mut s = Scanner {
        b: raw.as_bytes(),
        pos: 0,
        nesting: 0,
        frames: 0,
        nodes: &compiled.nodes,
    };
    s.ws();
    if !s.value(0) {
        return Fast::Unsure;
    }
    s.ws();
    if s.pos != s.b.len() {
        return Fast::Unsure;
    }
    Fast::Valid
}

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    /// Open arrays/objects, bounded like serde_json's recursion limit.
    nesting: u32,
    /// Schema nodes entered, bounded so adversarial schemas cannot overflow the stack.
    frames: u32,
    nodes: &'a [Node],
}

/// Bytes that end the quick part of a string scan: `"`, `\` and control characters.
static STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Position of the first `"`, `\\` or control byte at or after `pos`,
/// eight bytes at a time (SWAR): the string scan is the fast pass's hottest loop.
#[inline]
fn find_stop(b: &[u8], mut pos: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(pos..pos + 8) {
        let v = u64::from_le_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]);
        let quote = v ^ (ONES * b'"' as u64);
        let backslash = v ^ (ONES * b'\\' as u64);
        // A byte is flagged when it is zero (after the xor) or below 0x20;
        // the lowest flagged byte is always a true match.
        let hits = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (v.wrapping_sub(ONES * 0x20) & !v);
        let hits = hits & HIGH;
        if hits != 0 {
            return Some(pos + (hits.trailing_zeros() / 8) as usize);
        }
        pos += 8;
    }
    b.get(pos..)?.iter().position(|&c| STOP[c as usize]).map(|n| pos + n)
}

/// A scanned string: the bytes between its quotes, and whether it holds escapes.
#[derive(Clone, Copy)]
struct Str {
    start: usize,
    end: usize,
    escaped: bool,
}

impl<'a> Scanner<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    #[inline]
    fn literal(&mut self, word: &[u8]) -> bool {
        let end = self.pos + word.len();
        if end <= self.b.len() && self.b[self.pos..end].iter().zip(word).all(|(a, b)| a == b) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    /// Validates the value at `pos` against node `id` and moves past it.
    #[inline]
    fn value(&mut self, id: NodeId) -> bool {
        let node = &self.nodes[id];
        if node.simple {
            // Recursion through plain nodes descends into the data, which
            // the nesting limit bounds; only applicator chains need `frames`.
            return self.own(node);
        }
        self.frames += 1;
        let ok = self.frames <= MAX_SCHEMA_DEPTH && self.value_inner(id);
        self.frames -= 1;
        ok
    }

    fn value_inner(&mut self, id: NodeId) -> bool {
        let node = &self.nodes[id];
        if let Some(b) = node.always {
            return b && self.skip();
        }
        let start = self.pos;
        let mut end = None;
        if node.has_own {
            if !self.own(node) {
                return false;
            }
            end = Some(self.pos);
        }
        for &sub in &node.all_of {
            self.pos = start;
            if !self.value(sub) {
                return false;
            }
            end.get_or_insert(self.pos);
        }
        if !node.any_of.is_empty() {
            let mut any = false;
            for &sub in &node.any_of {
                self.pos = start;
                if self.value(sub) {
                    any = true;
                    end.get_or_insert(self.pos);
                    break;
                }
            }
            if !any {
                return false;
            }
        }
        if !node.one_of.is_empty() {
            let mut hits = 0;
            for &sub in &node.one_of {
                self.pos = start;
                if self.value(sub) {
                    hits += 1;
                    end.get_or_insert(self.pos);
                }
            }
            if hits != 1 {
                return false;
            }
        }
        if let Some(sub) = node.not {
            self.pos = start;
            if self.value(sub) {
                return false;
            }
        }
        match end {
            Some(e) => {
                self.pos = e;
                true
            }
            None => {
                self.pos = start;
                self.skip()
            }
        }
    }

    /// Checks the node's own (non-applicator) keywords.
    fn own(&mut self, node: &Node) -> bool {
        let start = self.pos;
        let t = node.types;
        match self.peek() {
            Some(b'{') => t & T_OBJECT != 0 && self.object(node) && self.enum_generic(node, start),
            Some(b'[') => t & T_ARRAY != 0 && self.array(node) && self.enum_generic(node, start),
            Some(b'"') => {
                if t & T_STRING == 0 {
                    return false;
                }
                let Some(s) = self.string() else {
                    return false;
                };
                self.string_rules(node, s)
            }
            Some(b't') => t & T_BOOL != 0 && self.literal(b"true") && self.enum_generic(node, start),
            Some(b'f') => t & T_BOOL != 0 && self.literal(b"false") && self.enum_generic(node, start),
            Some(b'n') => t & T_NULL != 0 && self.literal(b"null") && self.enum_generic(node, start),
            Some(b'-' | b'0'..=b'9') => {
                let Some(n) = self.number(node.num.is_some() || node.enum_values.is_some()) else {
                    return false;
                };
                let type_ok = if n.is_integer() {
                    t & (T_INTEGER | T_NUMBER) != 0
                } else {
                    t & T_NUMBER != 0
                };
                type_ok
                    && node.num.as_ref().is_none_or(|r| check::number(r, n).is_ok())
                    && self.enum_generic(node, start)
            }
            _ => false,
        }
    }

    /// Enum/const for non-string values: rare, so it parses the value's text.
    #[inline]
    fn enum_generic(&self, node: &Node, start: usize) -> bool {
        node.enum_values.is_none() || self.enum_slow(node, start)
    }

    #[cold]
    fn enum_slow(&self, node: &Node, start: usize) -> bool {
        let Some(values) = &node.enum_values else {
            return true;
        };
        let text = std::str::from_utf8(&self.b[start..self.pos]).ok();
        match text.and_then(|t| crate::tree::parse(t).ok()) {
            Some(tree) => values.iter().any(|v| tree.eq_value(v)),
            None => false,
        }
    }

    fn string_rules(&self, node: &Node, s: Str) -> bool {
        if node.enum_values.is_none() && node.string.is_none() {
            return true;
        }
        let decoded;
        let text: &str = if s.escaped {
            match self.decode(s) {
                Some(d) => {
                    decoded = d;
                    &decoded
                }
                None => return false,
            }
        } else {
            match std::str::from_utf8(&self.b[s.start..s.end]) {
                Ok(t) => t,
                Err(_) => return false,
            }
        };
        if let Some(values) = &node.enum_values
            && !values.iter().any(|v| v.as_str() == Some(text))
        {
            return false;
        }
        node.string.as_ref().is_none_or(|r| check::string(r, text).is_ok())
    }

    fn decode(&self, s: Str) -> Option<String> {
        // The string was already checked by the scan; re-parse it with quotes.
        let quoted = std::str::from_utf8(&self.b[s.start - 1..s.end + 1]).ok()?;
        serde_json::from_str::<String>(quoted).ok()
    }

    /// Scans a string starting at its opening quote, validating escapes the
    /// way serde_json does when it deserializes into a `String`.
    fn string(&mut self) -> Option<Str> {
        self.pos += 1;
        let start = self.pos;
        let mut escaped = false;
        loop {
            self.pos = find_stop(self.b, self.pos)?;
            match self.peek()? {
                b'"' => {
                    let end = self.pos;
                    self.pos += 1;
                    return Some(Str { start, end, escaped });
                }
                b'\\' => {
                    escaped = true;
                    self.pos += 1;
                    match self.peek()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.pos += 1,
                        b'u' => {
                            self.pos += 1;
                            let n = self.hex4()?;
                            if (0xDC00..=0xDFFF).contains(&n) {
                                return None;
                            }
                            if (0xD800..=0xDBFF).contains(&n) {
                                if !(self.eat(b'\\') && self.eat(b'u')) {
                                    return None;
                                }
                                let m = self.hex4()?;
                                if !(0xDC00..=0xDFFF).contains(&m) {
                                    return None;
                                }
                            }
                        }
                        _ => return None,
                    }
                }
                // A raw control character.
                _ => return None,
            }
        }
    }

    fn hex4(&mut self) -> Option<u16> {
        let digits = self.b.get(self.pos..self.pos + 4)?;
        let mut n: u16 = 0;
        for &d in digits {
            let v = (d as char).to_digit(16)? as u16;
            n = n * 16 + v;
        }
        self.pos += 4;
        Some(n)
    }

    /// Scans a number with serde_json's grammar and classification.
    fn number(&mut self, need_value: bool) -> Option<Num> {
        let start = self.pos;
        let negative = self.eat(b'-');
        let mut significand: u64 = 0;
        let mut overflow = false;
        let digits_start = self.pos;
        match self.peek()? {
            b'0' => {
                self.pos += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return None;
                }
            }
            b'1'..=b'9' => {
                while let Some(c @ b'0'..=b'9') = self.peek() {
                    let d = (c - b'0') as u64;
                    match significand.checked_mul(10).and_then(|x| x.checked_add(d)) {
                        Some(x) => significand = x,
                        None => overflow = true,
                    }
                    self.pos += 1;
                }
            }
            _ => return None,
        }
        let int_digits = (self.pos - digits_start) as i64;
        let mut float = overflow;
        if self.eat(b'.') {
            float = true;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return None;
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        let mut exponent: i64 = 0;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            float = true;
            self.pos += 1;
            let negative_exp = match self.peek() {
                Some(b'-') => {
                    self.pos += 1;
                    true
                }
                Some(b'+') => {
                    self.pos += 1;
                    false
                }
                _ => false,
            };
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return None;
            }
            while let Some(c @ b'0'..=b'9') = self.peek() {
                exponent = (exponent * 10 + (c - b'0') as i64).min(1 << 40);
                self.pos += 1;
            }
            if negative_exp {
                exponent = -exponent;
            }
        }
        if !float {
            if !negative {
                return Some(Num::U(significand));
            }
            let neg = (significand as i64).wrapping_neg();
            if neg < 0 {
                return Some(Num::I(neg));
            }
            // `-0` and integers below i64::MIN: serde_json makes them floats.
        }
        // A float whose magnitude is far from f64's limits is certainly
        // finite; when no rule needs its value, skip the (costly) parse.
        if !need_value && int_digits + exponent < 300 {
            return Some(Num::F(f64::NAN));
        }
        let text = std::str::from_utf8(&self.b[start..self.pos]).ok()?;
        let f: f64 = text.parse().ok()?;
        f.is_finite().then_some(Num::F(f))
    }

    /// Skips any value, checking syntax only.
    fn skip(&mut self) -> bool {
        match self.peek() {
            Some(b'{') => {
                if !self.open() {
                    return false;
                }
                self.ws();
                if self.eat(b'}') {
                    self.nesting -= 1;
                    return true;
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') || self.string().is_none() {
                        return false;
                    }
                    self.ws();
                    if !self.eat(b':') {
                        return false;
                    }
                    self.ws();
                    if !self.skip() {
                        return false;
                    }
                    self.ws();
                    if self.eat(b',') {
                        continue;
                    }
                    if self.eat(b'}') {
                        self.nesting -= 1;
                        return true;
                    }
                    return false;
                }
            }
            Some(b'[') => {
                if !self.open() {
                    return false;
                }
                self.ws();
                if self.eat(b']') {
                    self.nesting -= 1;
                    return true;
                }
                loop {
                    self.ws();
                    if !self.skip() {
                        return false;
                    }
                    self.ws();
                    if self.eat(b',') {
                        continue;
                    }
                    if self.eat(b']') {
                        self.nesting -= 1;
                        return true;
                    }
                    return false;
                }
            }
            Some(b'"') => self.string().is_some(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(false).is_some(),
            _ => false,
        }
    }

    fn open(&mut self) -> bool {
        self.pos += 1;
        self.nesting += 1;
        self.nesting < MAX_NESTING
    }

    fn array(&mut self, node: &Node) -> bool {
        if !self.open() {
            return false;
        }
        let rules = node.array.as_ref();
        if rules.is_some_and(|r| r.unique_items) {
            return false;
        }
        let mut count: u64 = 0;
        self.ws();
        if !self.eat(b']') {
            loop {
                self.ws();
                let schema = rules.and_then(|r| r.prefix_items.get(count as usize).copied().or(r.items));
                let ok = match schema {
                    Some(s) => self.value(s),
                    None => self.skip(),
                };
                if !ok {
                    return false;
                }
                count += 1;
                self.ws();
                if self.eat(b',') {
                    continue;
                }
                if self.eat(b']') {
                    break;
                }
                return false;
            }
        }
        self.nesting -= 1;
        if let Some(r) = rules
            && (r.min_items.is_some_and(|m| count < m) || r.max_items.is_some_and(|m| count > m))
        {
            return false;
        }
        true
    }

    fn object(&mut self, node: &Node) -> bool {
        if !self.open() {
            return false;
        }
        let rules = node.object.as_ref().unwrap_or(&EMPTY_OBJECT);
        if rules.properties.len() > 64 || !rules.required_extra.is_empty() || !rules.pattern_properties.is_empty() {
            return false;
        }
        let mut seen: u64 = 0;
        let mut count: u64 = 0;
        let mut guess = 0;
        self.ws();
        if !self.eat(b'}') {
            loop {
                self.ws();
                if self.peek() != Some(b'"') {
                    return false;
                }
                let Some(key) = self.string() else {
                    return false;
                };
                self.ws();
                if !self.eat(b':') {
                    return false;
                }
                self.ws();
                let index = if key.escaped {
                    match self.decode(key) {
                        Some(k) => rules.find(k.as_bytes()),
                        None => return false,
                    }
                } else {
                    let k = &self.b[key.start..key.end];
                    // The key is followed by at least `":` and a value, so
                    // reading 8 bytes from its start rarely runs off the end.
                    let word = match self.b.get(key.start..key.start + 8) {
                        Some(w) => {
                            let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
                            if k.len() >= 8 {
                                w
                            } else {
                                w & ((1u64 << (8 * k.len())) - 1)
                            }
                        }
                        None => prefix_word(k),
                    };
                    rules.find_word(k, word, guess)
                };
                match index {
                    Some(i) => {
                        if seen & (1 << i) != 0 {
                            // serde rejects duplicate fields; let the diagnostic pass say so.
                            return false;
                        }
                        // An explicit null for an optional field that does
                        // not accept null needs normalizing: leave it to the slow pass.
                        if !self.value(rules.properties[i].1) {
                            return false;
                        }
                        seen |= 1 << i;
                        guess = i + 1;
                    }
                    None => {
                        let ok = match rules.additional {
                            Some(a) => self.value(a),
                            None => self.skip(),
                        };
                        if !ok {
                            return false;
                        }
                    }
                }
                count += 1;
                self.ws();
                if self.eat(b',') {
                    continue;
                }
                if self.eat(b'}') {
                    break;
                }
                return false;
            }
        }
        self.nesting -= 1;
        for (i, req) in rules.required.iter().enumerate() {
            if *req && seen & (1 << i) == 0 {
                return false;
            }
        }
        if rules.min_properties.is_some_and(|m| count < m) || rules.max_properties.is_some_and(|m| count > m) {
            return false;
        }
        true
    }
}
