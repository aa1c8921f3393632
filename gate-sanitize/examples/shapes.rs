//! Times the sanitizer on each adversarial shape at two sizes, to spot
//! anything that grows faster than linearly.
#[path = "../tests/support/shapes.rs"]
mod shapes;

use std::time::Instant;
use toolgate_sanitize::Sanitizer;

fn main() {
    let s = Sanitizer::builder().max_len(usize::MAX).build().unwrap();
    let shapes = shapes::SHAPES;
    for shape in shapes {
        let mut times = Vec::new();
        for kb in [128usize, 256] {
            let input = shapes::fill(shape, kb << 10);
            let t = Instant::now();
            let out = s.sanitize(&input);
            times.push((t.elapsed().as_secs_f64() * 1000.0, out.findings.len()));
        }
        println!(
            "{shape:?}: 128K {:.1}ms ({} f), 256K {:.1}ms ({} f)",
            times[0].0, times[0].1, times[1].0, times[1].1
        );
    }
}
