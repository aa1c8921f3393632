//! Adversarial input shapes shared by the linear-time test and the
//! `shapes` example: each is a prefix a detector anchors on, repeated so that
//! a backtracking or rescanning detector would go quadratic.

/// The shapes: anchors, partial secrets, trace markers and address prefixes.
pub const SHAPES: [&str; 34] = [
    "AKIA",
    "ghp_",
    "pypi-AgEIcHlwaS5vcmc",
    "-----BEGIN RSA PRIVATE KEY-----",
    "a.local.-",
    "::",
    "fd",
    "10.",
    "1.10.0.",
    "://",
    "eyJ",
    "password=",
    "key=key=",
    "ignore ",
    "system:",
    "  at x(",
    "\n\tat a.B(C.java:1)",
    "\n  File \"x.py\", line 1",
    "x",
    "Authorization: Bearer ",
    "sig=",
    "-us",
    ":AA",
    "Q~",
    "eyJ-",
    "ya29.-",
    "sk-",
    "password=$",
    "://a:",
    "x-api-key: ",
    "A\u{200b}",
    "QUtJQUlPU0ZPRE5ON0VYQU1QTEUg",
    "\"a ",
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.",
];

/// Repeats `unit` up to `len` bytes (cut on a character boundary).
pub fn fill(unit: &str, len: usize) -> String {
    let mut s = unit.repeat(len / unit.len() + 1);
    let mut cut = len.min(s.len());
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}
