//! When an injected instruction counts as neutralized: no run of four
//! consecutive words of it survives in the sanitized text (whitespace
//! normalized), so cutting it down to a harmless fragment counts and keeping
//! its payload does not. Shared by the injection test and the figures
//! example, so both count by the same rule.

fn normalized(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether no four consecutive words of `instruction` survive in `out`.
pub fn neutralized(out: &str, instruction: &str) -> bool {
    let out = normalized(out);
    let words: Vec<&str> = instruction.split_whitespace().collect();
    if words.len() < 4 {
        return !out.contains(&normalized(instruction));
    }
    !words.windows(4).any(|w| out.contains(&w.join(" ")))
}
