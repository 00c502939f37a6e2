//! The parser and verifier never panic: every lit input, cut at many points
//! and with bytes replaced, yields IR or a diagnostic. (The cargo-fuzz target
//! in `fuzz/` explores the same property without bounds.)

use ipu_test::{context, lit_inputs};

/// A small deterministic generator (xorshift) so the test is reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const NOISE: &[&str] = &[
    "%", "^", "@", "#", "!", "(", ")", "{", "}", "<", ">", "[", "]", ",", ":", "=", "->", "\"",
    "x", "0x", "-", "1e999", "tensor<", "dense<", "loc(", "{-#", "#-}", "\\", "%0#9", "?", "*",
    "\u{e9}", "\n",
];

fn exercise(src: &str) {
    let mut cx = context();
    cx.allow_unregistered = true;
    if let Ok(m) = ipu_ir::parser::parse_source(&mut cx, "fuzz.mlir", src) {
        if ipu_ir::verify::verify(&cx, m).is_ok() {
            let _ = ipu_test::print(&cx, m, Default::default());
        }
    }
}

#[test]
fn truncated_and_mutated_inputs_never_panic() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut cases = 0;
    for (_, src) in lit_inputs() {
        // Every 7th prefix.
        let cuts: Vec<usize> = (0..src.len())
            .step_by(7)
            .filter(|&i| src.is_char_boundary(i))
            .collect();
        for &c in &cuts {
            exercise(&src[..c]);
            cases += 1;
        }
        // Random splices of syntax noise.
        for _ in 0..60 {
            let mut s = src.clone();
            for _ in 0..1 + rng.next() % 3 {
                let mut at = (rng.next() as usize) % (s.len() + 1);
                while !s.is_char_boundary(at) {
                    at -= 1;
                }
                let noise = NOISE[(rng.next() as usize) % NOISE.len()];
                if rng.next().is_multiple_of(2) {
                    s.insert_str(at, noise);
                } else {
                    let mut end = (at + 1 + (rng.next() as usize) % 8).min(s.len());
                    while !s.is_char_boundary(end) {
                        end += 1;
                    }
                    s.replace_range(at..end, noise);
                }
            }
            exercise(&s);
            cases += 1;
        }
    }
    assert!(cases > 1000, "only {cases} cases");
}

#[test]
fn deep_nesting_is_an_error_or_ir_not_a_crash() {
    let depth = 2000;
    let src = format!(
        "{}{}",
        "\"a.b\"() ({\n".repeat(depth),
        "}) : () -> ()\n".repeat(depth)
    );
    exercise(&src);
    let attr = format!(
        "\"a.b\"() {{x = {}1{}}} : () -> ()",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    exercise(&attr);
}
