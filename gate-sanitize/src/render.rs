//! Rendering: each finding replaced by its placeholder, then the length cap.
//!
//! Kept apart from detection because it is the one place output is made:
//! a rendering records, for every piece of output, the original bytes it
//! stands for, so the engine's re-scan of the output (which makes
//! sanitizing idempotent) can fold what it finds back into the original's
//! findings. The cap cuts at a boundary that a re-scan cannot read
//! differently: never inside a placeholder, preferably after whitespace.

use std::borrow::Cow;
use std::ops::Range;

use crate::boundary::floor_boundary;
use crate::candidate::{Cand, KIND_QUOTED, KIND_TRUNCATED};
use crate::{
    Category, ECHO_PLACEHOLDER, Finding, INSTRUCTION_PLACEHOLDER, INTERNAL_ADDRESS_PLACEHOLDER, QUOTED_PLACEHOLDER,
    STACK_TRACE_PLACEHOLDER, Sanitized,
};

/// Room kept for the truncation marker (`[truncated: N bytes]` with a
/// 20-digit N is 39 bytes).
const MARKER_RESERVE: usize = 40;

/// Replaces each finding with its placeholder and caps the result at
/// `max_len` bytes, keeping the map from output back to original that a
/// re-scan needs.
pub(crate) fn render(text: &str, findings: &[Cand], max_len: usize) -> Rendered {
    let mut out = String::with_capacity(text.len().min(max_len.saturating_add(64)));
    let mut segs: Vec<Seg> = Vec::with_capacity(findings.len() * 2 + 1);
    let mut pos = 0;
    for f in findings {
        if f.start > pos {
            let o = out.len();
            out.push_str(&text[pos..f.start]);
            segs.push(Seg {
                out: o..out.len(),
                orig: pos..f.start,
                placeholder: false,
            });
        }
        let o = out.len();
        push_placeholder(&mut out, f);
        segs.push(Seg {
            out: o..out.len(),
            orig: f.start..f.end,
            placeholder: true,
        });
        pos = f.end;
    }
    if pos < text.len() {
        let o = out.len();
        out.push_str(&text[pos..]);
        segs.push(Seg {
            out: o..out.len(),
            orig: pos..text.len(),
            placeholder: false,
        });
    }
    let mut cut = None;
    if out.len() > max_len {
        let at = cut_point(&out, &segs, max_len - MARKER_RESERVE);
        let orig_cut = original_offset(&segs, at, text.len());
        let dropped = out.len() - at;
        out.truncate(at);
        segs.retain(|s| s.out.start < at);
        if let Some(last) = segs.last_mut()
            && !last.placeholder
            && last.out.end > at
        {
            last.orig.end = last.orig.start + (at - last.out.start);
            last.out.end = at;
        }
        out.push_str(&format!("[truncated: {dropped} bytes]"));
        segs.push(Seg {
            out: at..out.len(),
            orig: orig_cut..text.len(),
            placeholder: true,
        });
        cut = Some(orig_cut);
    }
    Rendered { text: out, segs, cut }
}

/// One piece of rendered output and the original bytes it stands for.
pub(crate) struct Seg {
    out: Range<usize>,
    orig: Range<usize>,
    placeholder: bool,
}

/// Rendered output before it is handed out.
pub(crate) struct Rendered {
    pub(crate) text: String,
    segs: Vec<Seg>,
    /// Where the cap cut the original, if it did.
    pub(crate) cut: Option<usize>,
}

impl Rendered {
    /// Maps an output range back to the original: a position inside a
    /// placeholder widens to the whole span the placeholder replaced.
    pub(crate) fn to_original(&self, start: usize, end: usize, orig_len: usize) -> (usize, usize) {
        let find = |p: usize| {
            let idx = self.segs.partition_point(|s| s.out.start <= p);
            idx.checked_sub(1).filter(|&k| p < self.segs[k].out.end)
        };
        let s = match find(start) {
            Some(i) if self.segs[i].placeholder => self.segs[i].orig.start,
            Some(i) => self.segs[i].orig.start + (start - self.segs[i].out.start),
            None => orig_len,
        };
        let e = match find(end.saturating_sub(1).max(start)) {
            Some(i) if self.segs[i].placeholder => self.segs[i].orig.end,
            Some(i) => self.segs[i].orig.start + (end - self.segs[i].out.start),
            None => orig_len,
        };
        (s.min(orig_len), e.min(orig_len).max(s.min(orig_len)))
    }

    pub(crate) fn finish(self, text: &str, findings: Vec<Cand>) -> Sanitized {
        let mut findings: Vec<Finding> = findings
            .into_iter()
            .map(|c| Finding {
                kind: c.kind,
                category: c.category,
                range: c.start..c.end,
            })
            .collect();
        if let Some(orig_cut) = self.cut {
            findings.push(Finding {
                kind: Cow::Borrowed(KIND_TRUNCATED),
                category: Category::Truncated,
                range: orig_cut..text.len(),
            });
        }
        Sanitized {
            text: self.text,
            findings,
            original_len: text.len(),
        }
    }
}

fn push_placeholder(out: &mut String, c: &Cand) {
    match c.category {
        Category::Secret => {
            out.push_str(REDACTED_PREFIX);
            out.push_str(&c.kind);
            out.push(']');
        }
        Category::StackTrace => out.push_str(STACK_TRACE_PLACEHOLDER),
        Category::InternalAddress => out.push_str(INTERNAL_ADDRESS_PLACEHOLDER),
        Category::Reflected if c.kind == KIND_QUOTED => out.push_str(QUOTED_PLACEHOLDER),
        Category::Reflected => out.push_str(ECHO_PLACEHOLDER),
        Category::Instruction => out.push_str(INSTRUCTION_PLACEHOLDER),
        Category::Truncated => {}
    }
}

/// The placeholders that are the same for every finding of their category
/// (a secret's names its kind, the cap's its byte count).
pub(crate) const FIXED_PLACEHOLDERS: [&str; 5] = [
    STACK_TRACE_PLACEHOLDER,
    INTERNAL_ADDRESS_PLACEHOLDER,
    ECHO_PLACEHOLDER,
    QUOTED_PLACEHOLDER,
    INSTRUCTION_PLACEHOLDER,
];

/// How a secret's placeholder and the cap's marker begin.
pub(crate) const REDACTED_PREFIX: &str = "[redacted:";
pub(crate) const TRUNCATED_PREFIX: &str = "[truncated:";

/// The placeholder of a secret of `kind`.
pub(crate) fn redacted(kind: &str) -> String {
    format!("[redacted:{kind}]")
}

/// Chooses where the cap cuts the rendered text: at most `limit` bytes,
/// never inside a placeholder, and preferably just after whitespace or
/// punctuation so that the last kept token is whole; a half token could
/// match a rule that the whole one did not, and then sanitizing the output
/// again would change it.
fn cut_point(out: &str, segs: &[Seg], limit: usize) -> usize {
    // A cut strictly inside a placeholder moves to the placeholder's start.
    let snap = |i: usize| {
        let idx = segs.partition_point(|s| s.out.start < i);
        match idx.checked_sub(1).map(|k| &segs[k]) {
            Some(s) if s.placeholder && i < s.out.end => s.out.start,
            _ => i,
        }
    };
    let cut = snap(floor_boundary(out, limit));
    let bytes = out.as_bytes();
    let floor = cut.saturating_sub(256);
    for pick in [
        |b: u8| b.is_ascii_whitespace(),
        |b: u8| {
            matches!(
                b,
                b',' | b';' | b'"' | b'\'' | b'<' | b'>' | b'(' | b')' | b'{' | b'}' | b'|' | b']'
            )
        },
    ] {
        let mut i = cut;
        while i > floor {
            if pick(bytes[i - 1]) && snap(i) == i {
                return i;
            }
            i -= 1;
        }
    }
    cut
}

fn original_offset(segs: &[Seg], out_pos: usize, orig_len: usize) -> usize {
    let idx = segs.partition_point(|s| s.out.start <= out_pos);
    if idx == 0 {
        return 0;
    }
    let seg = &segs[idx - 1];
    if seg.placeholder {
        if out_pos == seg.out.start {
            seg.orig.start
        } else {
            seg.orig.end
        }
    } else {
        (seg.orig.start + (out_pos - seg.out.start))
            .min(seg.orig.end)
            .min(orig_len)
    }
}
