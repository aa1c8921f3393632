//! Arbitrary bytes (read as lossy UTF-8) never make the sanitizer panic,
//! and its invariants hold: output within the cap, findings inside the
//! input, sanitizing twice changes nothing. The first byte splits off an
//! echo so `sanitize_with_echoes` is covered too.
#![no_main]

use toolgate_sanitize::Sanitizer;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn sanitizers() -> &'static [Sanitizer; 2] {
    static S: OnceLock<[Sanitizer; 2]> = OnceLock::new();
    S.get_or_init(|| {
        [
            Sanitizer::default(),
            Sanitizer::builder()
                .max_len(96)
                .build()
                .expect("a 96-byte cap is valid"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let split = data.first().map_or(0, |&b| usize::from(b)).min(text.len());
    let split = (0..=split).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let echo = &text[..split];
    for s in sanitizers() {
        let out = s.sanitize(&text);
        assert!(out.text.len() <= s.max_len());
        for f in &out.findings {
            assert!(f.range.start <= f.range.end && f.range.end <= text.len());
        }
        assert_eq!(s.sanitize(&out.text).text, out.text);
        let echoed = s.sanitize_with_echoes(&text, &[echo]);
        assert!(echoed.text.len() <= s.max_len());
    }
});
