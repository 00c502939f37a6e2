//! The assembler's limits: expansion that grows without bound stops with a
//! diagnostic (by size and by depth) instead of eating memory or time,
//! integer arithmetic that leaves 64 bits is an error, and a `rpt` written
//! inside another's body is refused. Each case was a reliability finding.

use std::collections::BTreeMap;

use ipu_isa::asm::expand::{MAX_DEPTH, MAX_LINE_TOKENS, MAX_WORK};
use ipu_isa::asm::{assemble, AsmErrors};

fn errors(src: &str) -> AsmErrors {
    match assemble("t.S", src, &BTreeMap::new()) {
        Ok(_) => panic!("assembled:\n{src}"),
        Err(e) => e,
    }
}

/// The single error of `src`, with its 1-based line.
fn only_error(src: &str) -> (String, usize) {
    let e = errors(src);
    assert_eq!(e.errors.len(), 1, "{e}");
    let (line, _) = e.line_col(e.errors[0].span.start);
    (e.errors[0].message.clone(), line)
}

fn value_of(expr: &str) -> Result<i64, String> {
    let src = format!(".set V, {expr}\n.data\n.word V & 0xffff\n");
    match assemble("t.S", &src, &BTreeMap::new()) {
        Ok(a) => {
            let d = &a.object.sections[0].data;
            Ok(u32::from_le_bytes([d[0], d[1], d[2], d[3]]) as i64)
        }
        Err(e) => Err(e.errors[0].message.clone()),
    }
}

/// 24 levels of `.define` that each double the line took 5.2 GB.
#[test]
fn doubling_defines_stop_at_the_line_limit() {
    let mut src = String::from(".define A0 nop\n");
    for k in 1..=24 {
        src.push_str(&format!(".define A{k} A{} A{}\n", k - 1, k - 1));
    }
    src.push_str("A24\n");
    let (msg, line) = only_error(&src);
    // A13 (2^13 tokens) is the first level past the 4096-token limit.
    assert!(
        msg.contains(&format!("more than {MAX_LINE_TOKENS} tokens")) && msg.contains("A13"),
        "{msg}"
    );
    assert_eq!(line, 14);
    // Below the limit, defines still expand.
    let ok = ".define A0 nop\n.define A1 A0\n.define A2 A1\n.text\nA2\n";
    assert!(assemble("t.S", ok, &BTreeMap::new()).is_ok());
}

/// A recursive macro whose argument doubles never reached the depth check.
#[test]
fn a_recursive_macro_with_a_doubling_argument_stops() {
    let src = ".macro grow x\n grow \\x \\x\n.endm\n.text\n grow nop\n";
    let (msg, line) = only_error(src);
    assert!(
        msg.contains(&format!("more than {MAX_LINE_TOKENS} tokens")),
        "{msg}"
    );
    assert_eq!(line, 2, "the body line that grows");
}

/// A macro that invokes itself twice reaches the depth limit 2^64 times;
/// the first time stops everything.
#[test]
fn runaway_recursion_is_one_error() {
    let src = ".macro twice\n twice\n twice\n.endm\n.text\n twice\n";
    let (msg, _) = only_error(src);
    assert!(
        msg.contains(&format!("nested more than {MAX_DEPTH} deep")),
        "{msg}"
    );
}

/// Repeats that produce nothing are bounded by the work they take.
#[test]
fn nested_empty_repeats_are_bounded() {
    let src = ".rept 1000000\n.rept 1000000\n.endr\n.endr\n";
    let (msg, _) = only_error(src);
    assert!(
        msg.contains(&format!("more than {MAX_WORK} steps")),
        "{msg}"
    );
    // 2^30 invocations, each within the depth limit, that produce nothing.
    let src = ".macro r n\n.if \\n > 0\n r \\n - 1\n r \\n - 1\n.endif\n.endm\n r 30\n";
    let (msg, _) = only_error(src);
    assert!(
        msg.contains(&format!("more than {MAX_WORK} steps")),
        "{msg}"
    );
}

/// `1 << 64` assembled as 1 and multiplications wrapped: now errors.
#[test]
fn integer_overflow_is_an_error() {
    assert_eq!(value_of("1 << 4"), Ok(16));
    assert_eq!(value_of("-8 >> 1"), Ok(0xfffc));
    assert_eq!(value_of("(1 << 62) / (1 << 60)"), Ok(4));
    for (expr, want) in [
        ("1 << 64", "shift by 64"),
        ("1 << -1", "shift by -1"),
        ("1 >> 64", "shift by 64"),
        ("1 << 63", "overflows"),
        ("3 << 62", "overflows"),
        ("0x100000000 * 0x100000000", "overflows"),
        ("0x7fffffffffffffff + 1", "overflows"),
        ("-0x7fffffffffffffff - 2", "overflows"),
        ("(-0x7fffffffffffffff - 1) / -1", "overflows"),
        ("(-0x7fffffffffffffff - 1) % -1", "overflows"),
        ("-(-0x7fffffffffffffff - 1)", "overflows"),
        ("1 / 0", "division by zero"),
    ] {
        let got = value_of(expr);
        assert!(
            got.as_ref().is_err_and(|m| m.contains(want)),
            "{expr}: {got:?}, want an error with `{want}`"
        );
    }
    // A literal beyond 64 signed bits is refused, not wrapped to a negative value.
    let (msg, _) = only_error(".set V, 0xffffffffffffffff\n");
    assert!(msg.contains("fits in a signed 64-bit value"), "{msg}");
    // Address arithmetic stays within what a relocation holds.
    let (msg, _) = only_error(".text\nf: nop\n.data\n.word f + 0x100000000\n");
    assert!(msg.contains("does not fit in 32 bits"), "{msg}");
}

/// A repeat body holding another `rpt` is refused (one repeat state per
/// context); consecutive repeats are fine.
#[test]
fn nested_rpt_is_refused() {
    let src = ".text\n setzi $m1, 2\n rpt $m1, e\n nop\n rpt $m1, f\n nop\nf: nop\ne: nop\n";
    let (msg, line) = only_error(src);
    assert!(
        msg.contains("inside the repeat body of the `rpt` at line 3"),
        "{msg}"
    );
    assert_eq!(line, 5);
    let ok = ".text\n rpt $m1, e\n nop\ne: rpt $m1, f\n nop\nf: halt\n";
    assert!(assemble("t.S", ok, &BTreeMap::new()).is_ok());
}

/// The example of docs/isa.md section 9 assembles as written.
#[test]
fn the_assembly_language_example_of_the_docs_assembles() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/isa.md"))
        .expect("docs/isa.md");
    let section = doc
        .split("## 9. Assembly language")
        .nth(1)
        .expect("section 9");
    let example = section
        .split("```")
        .nth(1)
        .expect("a code block in section 9");
    let a = assemble("example.S", example, &BTreeMap::new()).unwrap_or_else(|e| panic!("{e}"));
    let gemm = a
        .object
        .sections
        .iter()
        .find(|s| s.name == ".text.gemm")
        .expect("the .text.gemm section");
    assert!(gemm.exec && !gemm.write);
    assert_eq!(a.meta.cycles, Some(40 + 6 * 16));
    assert_eq!(a.meta.params.get("K"), Some(&64));
}
