//! Times the sanitizer on each adversarial shape at two sizes, to spot
//! anything that grows faster than linearly.
use gate_sanitize::Sanitizer;
use std::time::Instant;

fn fill(unit: &str, len: usize) -> String {
    let mut s = unit.repeat(len / unit.len() + 1);
    s.truncate(len);
    s
}

fn main() {
    let s = Sanitizer::builder().max_len(usize::MAX).build().unwrap();
    let shapes = [
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
    ];
    for shape in shapes {
        let mut times = Vec::new();
        for kb in [64usize, 128] {
            let input = fill(shape, kb << 10);
            let t = Instant::now();
            let out = s.sanitize(&input);
            times.push((t.elapsed().as_secs_f64() * 1000.0, out.findings.len()));
        }
        println!(
            "{shape:?}: 64K {:.1}ms ({} f), 128K {:.1}ms ({} f)",
            times[0].0, times[0].1, times[1].0, times[1].1
        );
    }
}
