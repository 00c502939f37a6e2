//! Every instruction against its specification (docs/isa.md): each case
//! runs the instruction on a worker (or the supervisor) with random register
//! inputs and compares the result with an independent Rust model. The last
//! check asserts that every op of the table was exercised.

mod common;

use std::collections::HashSet;
use std::sync::Mutex;

use common::*;
use ipu_isa::float::{
    bf16_bits, bf16_value, f16_bits, f16_value, f8_from_f64, f8_to_f64, F8Format,
};
use ipu_isa::{decode, Op, OPS};
use ipu_runtime::{ContextId, FaultKind, Loopback, Tile};
use rand::{Rng, SeedableRng};

static COVERED: Mutex<Option<HashSet<Op>>> = Mutex::new(None);

const IN: u32 = 0x80000;
const OUT: u32 = 0x80100;

fn note_ops(t: &Tile, img: &ipu_isa::link::TileImage) {
    let mut g = COVERED.lock().unwrap();
    let set = g.get_or_insert_with(HashSet::new);
    for s in &img.segments {
        if s.exec {
            for w in s.bytes.chunks(4) {
                if let Ok(i) = decode(u32::from_le_bytes([w[0], w[1], w[2], w[3]])) {
                    set.insert(i.op);
                }
            }
        }
    }
    let _ = t;
}

/// Runs `body` on worker 0 with `$m0..$m14` and `$a0..$a15` loaded from the
/// given values; returns the registers after it.
fn exec(body: &str, m: [u32; 15], a: [u32; 16], scale: i32) -> ([u32; 15], [u32; 16]) {
    let mut src = String::from(
        ".globl main\nmain:\n setzi $m2, worker\n run $m2, $m2\n sync 0\n halt\nworker:\n",
    );
    src.push_str(&format!(" setzi $m15, {IN}\n"));
    for p in 0..8 {
        src.push_str(&format!(
            " ld64 $a{}:{}, [$m15+{}]\n",
            2 * p,
            2 * p + 1,
            64 + 8 * p
        ));
    }
    src.push_str(&format!(" setzi $m14, {}\n", scale as u32 & 0xfffff));
    src.push_str(" sar $m14, $m14, 0\n shl $m14, $m14, 12\n sar $m14, $m14, 12\n setscl $m14\n");
    for r in 0..15 {
        src.push_str(&format!(" ld32 $m{r}, [$m15+{}]\n", 4 * r));
    }
    src.push_str(body);
    src.push_str(&format!("\n setzi $m15, {OUT}\n"));
    for r in 0..15 {
        src.push_str(&format!(" st32 $m{r}, [$m15+{}]\n", 4 * r));
    }
    for p in 0..8 {
        src.push_str(&format!(
            " st64 $a{}:{}, [$m15+{}]\n",
            2 * p,
            2 * p + 1,
            64 + 8 * p
        ));
    }
    src.push_str(" exit\n");
    let (mut t, img) = tile_with(&src, &[]);
    let mut inb = Vec::new();
    for v in m {
        inb.extend(v.to_le_bytes());
    }
    inb.extend([0; 4]);
    for v in a {
        inb.extend(v.to_le_bytes());
    }
    t.write(IN, &inb).unwrap();
    t.start(img.symbol("main").unwrap(), 0);
    t.run_to_halt(&mut ipu_runtime::NoExchange, 100_000)
        .unwrap_or_else(|f| panic!("{f}\n{src}"));
    note_ops(&t, &img);
    let mut mo = [0; 15];
    let mut ao = [0; 16];
    for (r, v) in mo.iter_mut().enumerate() {
        *v = rd32(&t, OUT + 4 * r as u32);
    }
    for (r, v) in ao.iter_mut().enumerate() {
        *v = rd32(&t, OUT + 64 + 4 * r as u32);
    }
    (mo, ao)
}

fn rng() -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(0x1234)
}

fn rand_regs(r: &mut impl Rng) -> ([u32; 15], [u32; 16]) {
    let mut m = [0u32; 15];
    let mut a = [0u32; 16];
    for v in m.iter_mut() {
        *v = r.gen();
    }
    for v in a.iter_mut() {
        *v = r.gen();
    }
    (m, a)
}

fn f(v: u32) -> f32 {
    f32::from_bits(v)
}

fn h(v: u32, i: usize) -> f32 {
    f16_value((v >> (16 * i)) as u16)
}

fn rand_f32(r: &mut impl Rng) -> u32 {
    (r.gen_range(-4.0f32..4.0)).to_bits()
}

fn rand_f16x2(r: &mut impl Rng) -> u32 {
    f16_bits(r.gen_range(-4.0f32..4.0)) as u32 | (f16_bits(r.gen_range(-4.0f32..4.0)) as u32) << 16
}

#[test]
fn integer_register_ops() {
    let mut r = rng();
    type F = fn(u32, u32) -> u32;
    let ops: &[(&str, F)] = &[
        ("add", |x, y| x.wrapping_add(y)),
        ("sub", |x, y| x.wrapping_sub(y)),
        ("mul", |x, y| x.wrapping_mul(y)),
        ("and", |x, y| x & y),
        ("or", |x, y| x | y),
        ("xor", |x, y| x ^ y),
        ("shl", |x, y| x << (y % 32)),
        ("shr", |x, y| x >> (y % 32)),
        ("sar", |x, y| ((x as i32) >> (y % 32)) as u32),
        ("min", |x, y| (x as i32).min(y as i32) as u32),
        ("max", |x, y| (x as i32).max(y as i32) as u32),
        ("cmpeq", |x, y| (x == y) as u32),
        ("cmplt", |x, y| ((x as i32) < (y as i32)) as u32),
        ("cmpult", |x, y| (x < y) as u32),
        ("divu", |x, y| x / y),
        ("remu", |x, y| x % y),
    ];
    for (mn, model) in ops {
        for trial in 0..3 {
            let (mut m, a) = rand_regs(&mut r);
            if trial == 1 {
                m[4] = m[3];
            }
            if m[4] == 0 {
                m[4] = 7;
            }
            let (mo, _) = exec(&format!(" {mn} $m5, $m3, $m4"), m, a, 0);
            assert_eq!(mo[5], model(m[3], m[4]), "{mn} {:#x} {:#x}", m[3], m[4]);
        }
    }
}

#[test]
fn integer_immediate_ops_and_moves() {
    let mut r = rng();
    type F = fn(u32, i32) -> u32;
    let ops: &[(&str, i32, F)] = &[
        ("add", -1234, |x, i| x.wrapping_add(i as u32)),
        ("and", 0xf0f0, |x, i| x & i as u32),
        ("or", 0x1234, |x, i| x | i as u32),
        ("shl", 5, |x, i| x << i),
        ("shr", 7, |x, i| x >> i),
        ("sar", 9, |x, i| ((x as i32) >> i) as u32),
        ("mul", -3, |x, i| x.wrapping_mul(i as u32)),
        ("cmpeq", 77, |x, i| (x == i as u32) as u32),
        ("cmplt", -5, |x, i| ((x as i32) < i) as u32),
        ("min", 100, |x, i| (x as i32).min(i) as u32),
    ];
    for (mn, imm, model) in ops {
        let (m, a) = rand_regs(&mut r);
        let (mo, _) = exec(&format!(" {mn} $m5, $m3, {imm}"), m, a, 0);
        assert_eq!(mo[5], model(m[3], *imm), "{mn}");
        let mut m2 = m;
        m2[3] = *imm as u32;
        let (mo, _) = exec(&format!(" {mn} $m5, $m3, {imm}"), m2, a, 0);
        assert_eq!(mo[5], model(m2[3], *imm), "{mn} equal");
    }
    let (m, a) = rand_regs(&mut r);
    let (mo, ao) = exec(
        " setzi $m5, 0xabcde\n sethi $m6, 0x1234\n setzi $a7, 0x12345\n sethi $a8, 0xffff\n mov $m9, $m3\n mov $a9, $m4\n mov $m10, $a3\n nop",
        m,
        a,
        0,
    );
    assert_eq!(mo[5], 0xabcde);
    assert_eq!(mo[6], (m[6] & 0xffff) | 0x1234 << 16);
    assert_eq!(ao[7], 0x12345);
    assert_eq!(ao[8], (a[8] & 0xffff) | 0xffff << 16);
    assert_eq!(mo[9], m[3]);
    assert_eq!(ao[9], m[4]);
    assert_eq!(mo[10], a[3]);
}

#[test]
fn loads_and_stores() {
    let mut r = rng();
    let (mut m, a) = rand_regs(&mut r);
    m[3] = 0x90000;
    let body = " st64 $a2:3, [$m3+8]\n st32 $a4, [$m3+16]\n st32 $m5, [$m3+20]\n st16 $m6, [$m3+24]\n st8 $m7, [$m3+27]\n \
                ld64 $a10:11, [$m3+8]\n ld32 $a12, [$m3+16]\n ld32 $m8, [$m3+20]\n ld16 $m9, [$m3+24]\n ld8 $m10, [$m3+27]\n \
                mov $m11, $m3\n ld32 $m12, [$m11+=4]\n ld32 $m12, [$m11+=-4]\n ld128 $a4:7, [$m3+0]\n ld32 $m13, [$m3-0]";
    let (mo, ao) = exec(body, m, a, 0);
    assert_eq!([ao[10], ao[11]], [a[2], a[3]]);
    assert_eq!(ao[12], a[4]);
    assert_eq!(mo[8], m[5]);
    assert_eq!(mo[9], m[6] & 0xffff);
    assert_eq!(mo[10], m[7] & 0xff);
    assert_eq!(mo[11], m[3]);
    assert_eq!(ao[6], a[2]);
    assert_eq!(ao[7], a[3]);
}

#[test]
fn paired_memory_ops() {
    let mut r = rng();
    let (mut m, a) = rand_regs(&mut r);
    m[3] = 0x90000;
    m[4] = 0x90100;
    m[5] = 0x90200;
    m[6] = 0;
    m[7] = 0x90300;
    // Memory: [0x90000] <- a2:3, [0x90100] <- a4:5 first.
    let body = " st64 $a2:3, [$m3]\n st64 $a4:5, [$m4]\n \
                ldst64 $a8:9, [$m3+=8], $a6:7, [$m5+=8]\n \
                add $m3, $m3, -8\n ld2st64 $a10:11, [$m3+=8], $a12:13, [$m4+=8], $a6:7, [$m5+=8]\n \
                add $m3, $m3, -8\n add $m4, $m4, -8\n ld2x64 $a14:15, [$m3+=8], $a0:1, [$m4+=8]\n \
                ld64 $a2:3, [$m7]";
    let (mo, ao) = exec(body, m, a, 0);
    assert_eq!([ao[8], ao[9]], [a[2], a[3]]);
    assert_eq!([ao[10], ao[11]], [a[2], a[3]]);
    assert_eq!([ao[12], ao[13]], [a[4], a[5]]);
    assert_eq!([ao[14], ao[15]], [a[2], a[3]]);
    assert_eq!([ao[0], ao[1]], [a[4], a[5]]);
    assert_eq!(mo[3], 0x90008);
    assert_eq!(mo[4], 0x90108);
    assert_eq!(mo[5], 0x90210);
}

fn f32_bin(mn: &str) -> fn(f32, f32) -> f32 {
    match mn {
        "add" => |x, y| x + y,
        "sub" => |x, y| x - y,
        "mul" => |x, y| x * y,
        "div" => |x, y| x / y,
        "max" => ieee_maximum,
        _ => ieee_minimum,
    }
}

/// IEEE 754-2019 maximum / minimum: NaN if either operand is; otherwise
/// the larger (smaller) in the total order, where -0 < +0.
fn ieee_maximum(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else if x.total_cmp(&y).is_ge() {
        x
    } else {
        y
    }
}

fn ieee_minimum(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else if x.total_cmp(&y).is_le() {
        x
    } else {
        y
    }
}

/// Equal bits, or both NaN (a NaN's sign and payload are not specified).
fn same(got: u32, want: f32) -> bool {
    got == want.to_bits() || (f32::from_bits(got).is_nan() && want.is_nan())
}

fn same16(got: u16, want: u16) -> bool {
    got == want || (f16_value(got).is_nan() && f16_value(want).is_nan())
}

/// NaN, infinities and signed zeros through the float instructions
/// (docs/isa.md section 5): NaN propagates through max/min/relu and the
/// reductions, and conversions to FP8 agree bit for bit with the reference
/// interpreter's encoder (saturating; NaN keeps its sign).
#[test]
fn special_values_follow_ieee_and_onnx() {
    let sp = f32_specials();
    let (m, mut a) = rand_regs(&mut rng());
    for &x in &sp {
        for &y in &sp {
            a[2] = x.to_bits();
            a[3] = y.to_bits();
            a[4] = y.to_bits();
            a[5] = x.to_bits();
            let h2 = |p: f32, q: f32| f16_bits(p) as u32 | (f16_bits(q) as u32) << 16;
            a[6] = h2(x, y);
            a[7] = h2(y, x);
            a[10] = h2(y, x);
            a[11] = h2(x, y);
            let body = " f32v2max $a8:9, $a2:3, $a4:5\n f32v2min $a12:13, $a2:3, $a4:5\n \
                        f32max $a14, $a2, $a3\n f32v2hmax $a15, $a2:3\n \
                        f16v4max $a0:1, $a6:7, $a10:11\n f16v4min $a10:11, $a6:7, $a10:11";
            let (_, ao) = exec(body, m, a, 0);
            let ctx = format!("x = {x}, y = {y}");
            assert!(same(ao[8], ieee_maximum(x, y)), "f32v2max {ctx}");
            assert!(same(ao[9], ieee_maximum(y, x)), "f32v2max {ctx}");
            assert!(same(ao[12], ieee_minimum(x, y)), "f32v2min {ctx}");
            assert!(same(ao[13], ieee_minimum(y, x)), "f32v2min {ctx}");
            assert!(same(ao[14], ieee_maximum(x, y)), "f32max {ctx}");
            assert!(same(ao[15], ieee_maximum(x, y)), "f32v2hmax {ctx}");
            let (hx, hy) = (f16_value(f16_bits(x)), f16_value(f16_bits(y)));
            for (k, (p, q)) in [(hx, hy), (hy, hx), (hy, hx), (hx, hy)]
                .into_iter()
                .enumerate()
            {
                let got = |r: u32| (r >> (16 * (k % 2))) as u16;
                let max = f16_bits(ieee_maximum(p, q));
                let min = f16_bits(ieee_minimum(p, q));
                assert!(same16(got(ao[k / 2]), max), "f16v4max {ctx} lane {k}");
                assert!(same16(got(ao[10 + k / 2]), min), "f16v4min {ctx} lane {k}");
            }
        }
    }
    // relu: x < 0 gives +0, NaN and -0 stay (the reference's Relu).
    for pair in sp.chunks(2) {
        a[2] = pair[0].to_bits();
        a[3] = pair[1].to_bits();
        a[4] = f16_bits(pair[0]) as u32 | (f16_bits(pair[1]) as u32) << 16;
        a[5] = a[4];
        let (_, ao) = exec(
            " f32v2relu $a8:9, $a2:3\n f16v4relu $a10:11, $a4:5\n f16v4hmax $a12, $a4:5",
            m,
            a,
            0,
        );
        let relu = |x: f32| if x < 0.0 { 0.0 } else { x };
        for k in 0..2 {
            assert!(same(ao[8 + k], relu(pair[k])), "f32v2relu {}", pair[k]);
            let hv = f16_value(f16_bits(pair[k]));
            assert!(
                same16((ao[10] >> (16 * k)) as u16, f16_bits(relu(hv))),
                "f16v4relu {hv}"
            );
        }
        let hv = [0, 1].map(|k| f16_value(f16_bits(pair[k])));
        assert!(same(ao[12], ieee_maximum(hv[0], hv[1])), "f16v4hmax {hv:?}");
    }
    // Conversions to FP8 against the reference encoder, at several scales.
    use ipu_reference::Fp8Format as RefFp8;
    for scale in [0, 4, -3] {
        for pair in sp.chunks(2) {
            a[2] = pair[0].to_bits();
            a[3] = pair[1].to_bits();
            a[4] = f16_bits(pair[0]) as u32 | (f16_bits(pair[1]) as u32) << 16;
            a[5] = a[4];
            let body = " cvt.f32.f8e4 $a8, $a2:3\n cvt.f32.f8e5 $a9, $a2:3\n \
                        cvt.f16.f8e4 $a10, $a4:5\n cvt.f16.f8e5 $a11, $a4:5";
            let (_, ao) = exec(body, m, a, scale);
            for (reg, fmt) in [(8, RefFp8::E4M3FN), (9, RefFp8::E5M2)] {
                for (k, &x) in pair.iter().enumerate() {
                    let want = fmt.encode_scaled(x, true, scale);
                    let got = (ao[reg] >> (8 * k)) as u8;
                    assert_eq!(got, want, "cvt.f32 -> {fmt:?} of {x} at scale {scale}");
                }
            }
            for (reg, fmt) in [(10, RefFp8::E4M3FN), (11, RefFp8::E5M2)] {
                for k in 0..4 {
                    let hv = f16_value(f16_bits(pair[k % 2]));
                    let want = fmt.encode_scaled(hv, true, scale);
                    let got = (ao[reg] >> (8 * k)) as u8;
                    assert_eq!(got, want, "cvt.f16 -> {fmt:?} of {hv} at scale {scale}");
                }
            }
        }
    }
}

#[test]
fn vector_binary_ops() {
    let mut r = rng();
    for name in ["add", "sub", "mul", "div", "max", "min"] {
        let model = f32_bin(name);
        let (m, mut a) = rand_regs(&mut r);
        for v in a.iter_mut().take(8) {
            *v = rand_f32(&mut r);
        }
        let (_, ao) = exec(&format!(" f32v2{name} $a8:9, $a2:3, $a4:5"), m, a, 0);
        for k in 0..2 {
            assert_eq!(
                ao[8 + k],
                model(f(a[2 + k]), f(a[4 + k])).to_bits(),
                "f32v2{name}"
            );
        }
        for v in a.iter_mut().take(8) {
            *v = rand_f16x2(&mut r);
        }
        let (_, ao) = exec(&format!(" f16v4{name} $a8:9, $a2:3, $a4:5"), m, a, 0);
        for k in 0..4 {
            let want = f16_bits(model(h(a[2 + k / 2], k % 2), h(a[4 + k / 2], k % 2)));
            assert_eq!(
                (ao[8 + k / 2] >> (16 * (k % 2))) as u16,
                want,
                "f16v4{name}"
            );
        }
        if name != "min" {
            for v in a.iter_mut().take(8) {
                *v = rand_f32(&mut r);
            }
            let (_, ao) = exec(&format!(" f32{name} $a8, $a2, $a4"), m, a, 0);
            assert_eq!(ao[8], model(f(a[2]), f(a[4])).to_bits(), "f32{name}");
        }
    }
    let (m, mut a) = rand_regs(&mut r);
    for v in a.iter_mut().take(10) {
        *v = rand_f32(&mut r);
    }
    let (_, ao) = exec(" f32v2fma $a8:9, $a2:3, $a4:5", m, a, 0);
    for k in 0..2 {
        assert_eq!(
            ao[8 + k],
            f(a[2 + k]).mul_add(f(a[4 + k]), f(a[8 + k])).to_bits()
        );
    }
    for v in a.iter_mut().take(10) {
        *v = rand_f16x2(&mut r);
    }
    let (_, ao) = exec(" f16v4fma $a8:9, $a2:3, $a4:5", m, a, 0);
    for k in 0..4 {
        let want = f16_bits(
            h(a[2 + k / 2], k % 2).mul_add(h(a[4 + k / 2], k % 2), h(a[8 + k / 2], k % 2)),
        );
        assert_eq!((ao[8 + k / 2] >> (16 * (k % 2))) as u16, want);
    }
}

#[test]
fn vector_unary_ops() {
    let mut r = rng();
    type F = fn(f64) -> f64;
    let ops: &[(&str, F)] = &[
        ("exp", f64::exp),
        ("log", f64::ln),
        ("tanh", f64::tanh),
        ("erf", libm::erf),
        ("rsqrt", |x| 1.0 / x.sqrt()),
        ("sqrt", f64::sqrt),
        ("recip", |x| 1.0 / x),
        ("neg", |x| -x),
        ("abs", f64::abs),
        ("sigmoid", |x| 1.0 / (1.0 + (-x).exp())),
        ("gelu", |x| 0.5 * x * (1.0 + libm::erf(x / 2f64.sqrt()))),
        ("relu", |x| if x < 0.0 { 0.0 } else { x }),
    ];
    for (name, model) in ops {
        let positive = ["log", "rsqrt", "sqrt"].contains(name);
        let (m, mut a) = rand_regs(&mut r);
        for v in a.iter_mut().take(4) {
            let x: f32 = r.gen_range(-3.0..3.0);
            *v = (if positive { x.abs() + 0.1 } else { x }).to_bits();
        }
        let (_, ao) = exec(&format!(" f32v2{name} $a8:9, $a2:3"), m, a, 0);
        for k in 0..2 {
            let want = model(f(a[2 + k]) as f64);
            let got = f(ao[8 + k]) as f64;
            assert!(
                (got - want).abs() <= 2e-6 * want.abs().max(1.0),
                "f32v2{name}({}) = {got}, want {want}",
                f(a[2 + k])
            );
        }
        for v in a.iter_mut().take(4) {
            let x: f32 = r.gen_range(-3.0..3.0);
            let x = if positive { x.abs() + 0.1 } else { x };
            let y: f32 = r.gen_range(-3.0..3.0);
            let y = if positive { y.abs() + 0.1 } else { y };
            *v = f16_bits(x) as u32 | (f16_bits(y) as u32) << 16;
        }
        let (_, ao) = exec(&format!(" f16v4{name} $a8:9, $a2:3"), m, a, 0);
        for k in 0..4 {
            let x = h(a[2 + k / 2], k % 2) as f64;
            let want = model(x);
            let got = h(ao[8 + k / 2], k % 2) as f64;
            assert!(
                (got - want).abs() <= 1e-3 * want.abs().max(1.0),
                "f16v4{name}({x}) = {got}, want {want}"
            );
        }
    }
}

#[test]
fn reductions_moves_and_packing() {
    let mut r = rng();
    let (m, mut a) = rand_regs(&mut r);
    for v in a.iter_mut().take(4) {
        *v = rand_f32(&mut r);
    }
    let (_, ao) = exec(" f32v2hadd $a8, $a2:3\n f32v2hmax $a9, $a2:3\n f32v2dup $a10:11, $a4\n mova $a12, $a5\n zero64 $a14:15", m, a, 0);
    assert_eq!(ao[8], (f(a[2]) + f(a[3])).to_bits());
    assert_eq!(ao[9], ieee_maximum(f(a[2]), f(a[3])).to_bits());
    assert_eq!([ao[10], ao[11]], [a[4], a[4]]);
    assert_eq!(ao[12], a[5]);
    assert_eq!([ao[14], ao[15]], [0, 0]);
    for v in a.iter_mut().take(4) {
        *v = rand_f16x2(&mut r);
    }
    let (_, ao) = exec(" f16v4hadd $a8, $a2:3\n f16v4hmax $a9, $a2:3\n f16v4dup $a10:11, $a6\n mov64 $a12:13, $a2:3\n pack16 $a14, $a4, $a5\n hi16 $a15, $a4", m, a, 0);
    let x: Vec<f32> = (0..4).map(|k| h(a[2 + k / 2], k % 2)).collect();
    assert_eq!(ao[8], ((x[0] + x[1]) + (x[2] + x[3])).to_bits());
    assert_eq!(
        ao[9],
        x.iter().cloned().fold(f32::MIN, ieee_maximum).to_bits()
    );
    let hd = f16_bits(f(a[6])) as u32;
    assert_eq!([ao[10], ao[11]], [hd | hd << 16, hd | hd << 16]);
    assert_eq!([ao[12], ao[13]], [a[2], a[3]]);
    assert_eq!(ao[14], (a[4] & 0xffff) | a[5] << 16);
    assert_eq!(ao[15], a[4] >> 16);
}

#[test]
fn conversions() {
    let mut r = rng();
    for scale in [0, 3, -2] {
        let (m, mut a) = rand_regs(&mut r);
        a[2] = r.gen_range(-600.0f32..600.0).to_bits();
        a[3] = r.gen_range(-1.0f32..1.0).to_bits();
        a[4] = rand_f16x2(&mut r);
        a[5] = rand_f16x2(&mut r);
        let body = " cvt.f32.f16 $a8, $a2:3\n cvt.f16.f32 $a10:11, $a4\n cvt.f32.bf16 $a9, $a2:3\n cvt.bf16.f32 $a12:13, $a9\n \
                    cvt.f16.bf16 $a14, $a4\n cvt.bf16.f16 $a15, $a14\n cvt.f32.f8e4 $a0, $a2:3\n cvt.f32.f8e5 $a1, $a2:3\n \
                    cvt.f16.f8e4 $a6, $a4:5\n cvt.f16.f8e5 $a7, $a4:5";
        let (_, ao) = exec(body, m, a, scale);
        assert_eq!(
            ao[8],
            f16_bits(f(a[2])) as u32 | (f16_bits(f(a[3])) as u32) << 16
        );
        assert_eq!(
            [ao[10], ao[11]],
            [h(a[4], 0).to_bits(), h(a[4], 1).to_bits()]
        );
        assert_eq!(
            ao[9],
            bf16_bits(f(a[2])) as u32 | (bf16_bits(f(a[3])) as u32) << 16
        );
        assert_eq!(
            [ao[12], ao[13]],
            [
                bf16_value(ao[9] as u16).to_bits(),
                bf16_value((ao[9] >> 16) as u16).to_bits()
            ]
        );
        assert_eq!(
            ao[14],
            bf16_bits(h(a[4], 0)) as u32 | (bf16_bits(h(a[4], 1)) as u32) << 16
        );
        assert_eq!(
            ao[15],
            f16_bits(bf16_value(ao[14] as u16)) as u32
                | (f16_bits(bf16_value((ao[14] >> 16) as u16)) as u32) << 16
        );
        for (reg, fmt) in [(0, F8Format::E4M3FN), (1, F8Format::E5M2)] {
            let want = f8_from_f64(f(a[2]) as f64, scale, fmt) as u32
                | (f8_from_f64(f(a[3]) as f64, scale, fmt) as u32) << 8;
            assert_eq!(ao[reg], want, "f32 -> {fmt:?} scale {scale}");
        }
        for (reg, fmt) in [(6, F8Format::E4M3FN), (7, F8Format::E5M2)] {
            let mut want = 0u32;
            for k in 0..4 {
                want |= (f8_from_f64(h(a[4 + k / 2], k % 2) as f64, scale, fmt) as u32) << (8 * k);
            }
            assert_eq!(ao[reg], want, "f16 -> {fmt:?}");
        }
        // Back from f8.
        let (m, mut a) = rand_regs(&mut r);
        a[2] = r.gen();
        let (_, ao) = exec(" cvt.f8e4.f16 $a8:9, $a2\n cvt.f8e5.f16 $a10:11, $a2\n cvt.f8e4.f32 $a12:13, $a2\n cvt.f8e5.f32 $a14:15, $a2", m, a, scale);
        for (base, fmt) in [(8, F8Format::E4M3FN), (10, F8Format::E5M2)] {
            for k in 0..4 {
                let q = (a[2] >> (8 * k)) as u8;
                let want = f16_bits(f8_to_f64(q, scale, fmt) as f32);
                let got = (ao[base + k / 2] >> (16 * (k % 2))) as u16;
                let nan = f16_value(want).is_nan() && f16_value(got).is_nan();
                assert!(nan || got == want, "{fmt:?} {q:#x} -> f16");
            }
        }
        for (base, fmt) in [(12, F8Format::E4M3FN), (14, F8Format::E5M2)] {
            for k in 0..2 {
                let q = (a[2] >> (8 * k)) as u8;
                let want = f8_to_f64(q, scale, fmt) as f32;
                let got = f(ao[base + k]);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{fmt:?} {q:#x} -> f32"
                );
            }
        }
    }
}

#[test]
fn branches_calls_and_repeat() {
    let (m, a) = rand_regs(&mut rng());
    let body = " setzi $m3, 0\n setzi $m4, 5\nl1: add $m3, $m3, 2\n add $m4, $m4, -1\n brnz $m4, l1\n \
                setzi $m5, 0\n brz $m5, l2\n setzi $m3, 999\nl2: setzi $m6, 0\n add $m6, $m6, -1\n brneg $m6, l3\n setzi $m3, 998\n\
                l3: call $m7, fn\n br l4\nfn: setzi $m8, 42\n jmp $m7\n\
                l4: setzi $m9, 0\n setzi $m10, 4\n rpt $m10, e1\n add $m9, $m9, 3\n { nop ; f32v2add $a0:1, $a0:1, $a0:1 }\ne1:\n\
                setzi $m10, 0\n setzi $m11, 0\n rpt $m10, e2\n add $m11, $m11, 1\ne2:\n getid $m12\n getc $m13\n gettile $m14";
    let (mo, _) = exec(body, m, a, 0);
    assert_eq!(mo[3], 10);
    assert_eq!(mo[8], 42);
    assert_eq!(mo[9], 12);
    assert_eq!(mo[11], 0);
    assert_eq!(mo[12], 0);
    assert!(mo[13] > 0);
    assert_eq!(mo[14], 0);
}

/// Worker timing: a worker issues once every 6 cycles, and multi-turn
/// instructions (cost 2) skip a turn.
#[test]
fn issue_timing() {
    let src = ".globl main\nmain: setzi $m2, w\n run $m2, $m2\n sync 0\n halt\nw: getc $m3\n nop\n getc $m4\n f32v2exp $a0:1, $a0:1\n getc $m5\n \
               setzi $m6, 0x80000\n st32 $m3, [$m6+0]\n st32 $m4, [$m6+4]\n st32 $m5, [$m6+8]\n exit\n";
    let t = run_with(src, 0, |_| {}).unwrap();
    let (c3, c4, c5) = (rd32(&t, 0x80000), rd32(&t, 0x80004), rd32(&t, 0x80008));
    assert_eq!(c4 - c3, 12);
    assert_eq!(c5 - c4, 18);
    assert_eq!(c3 % 6, 0, "worker 0 issues in slot 0");
    // The supervisor alone issues every cycle.
    let src = ".globl main\nmain: getc $m3\n getc $m4\n delay 5\n getc $m5\n setzi $m6, 0x80000\n st32 $m3, [$m6+0]\n st32 $m4, [$m6+4]\n st32 $m5, [$m6+8]\n halt\n";
    let t = run_with(src, 0, |_| {}).unwrap();
    assert_eq!(rd32(&t, 0x80004) - rd32(&t, 0x80000), 1);
    assert_eq!(rd32(&t, 0x80008) - rd32(&t, 0x80004), 7);
}

#[test]
fn supervisor_control_exchange_and_sync() {
    // Six workers each add their context number into their own slot.
    let src = ".globl main\nmain: setzi $m2, w\n setzi $m3, 0x80000\n rpt $m4, e\n run $m2, $m3\ne: sync 0\n \
               setzi $m5, 0x80100\n setzi $m6, 0x80200\n st32 $m6, [$m5]\n setzi $m7, 0\n recvsel $m7\n send [$m5+=4]\n recv [$m5+=4]\n sync 1\n \
               getc $m8\n st32 $m8, [$m5]\n halt\n\
               w: shl $m3, $m1, 2\n add $m3, $m3, $m0\n add $m1, $m1, 100\n st32 $m1, [$m3]\n exit\n";
    let (mut t, img) = tile_with(src, &[]);
    t.start(img.symbol("main").unwrap(), 0);
    // $m4 = 6 workers.
    let src_set = |t: &mut Tile| t.write(0x80000, &[0; 32]).unwrap();
    src_set(&mut t);
    let _ = src_set;
    let mut port = Loopback::new(1);
    let (mut t, img) = {
        let (mut t2, img2) = tile_with(
            &src.replace("main: setzi $m2, w", "main: setzi $m4, 6\n setzi $m2, w"),
            &[],
        );
        t2.start(img2.symbol("main").unwrap(), 0);
        let _ = t;
        (t2, img2)
    };
    let o = t
        .run_to_halt(&mut port, 100_000)
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(o, ipu_runtime::Outcome::Halted);
    note_ops(&t, &img);
    for w in 0..6 {
        assert_eq!(rd32(&t, 0x80000 + 4 * w), 100 + w);
    }
    assert_eq!(
        rd32(&t, 0x80104),
        0x80200,
        "the word sent came back one cycle later"
    );
    assert!(rd32(&t, 0x80108) >= 90, "sync took its time");
}

/// Records the rows a tile starts.
#[derive(Default)]
struct RowPort(Vec<(u32, ipu_runtime::EngineRow)>);

impl ipu_runtime::ExchangePort for RowPort {
    fn send(&mut self, _: u32, _: u64, _: u32) -> Result<(), u32> {
        Ok(())
    }
    fn receive(&mut self, _: u32, _: u64, _: u32) -> Option<u32> {
        None
    }
    fn start_row(&mut self, tile: u32, row: ipu_runtime::EngineRow) {
        self.0.push((tile, row));
    }
}

/// `exch` on a tile alone: the row it hands to the port (absolute cycles,
/// send bytes read at issue and zero-padded), the sync arrival at the
/// engine end, and the engine faults.
#[test]
fn exchange_engine_on_one_tile() {
    use ipu_isa::exchange_row::{encode_row_bytes, RowEntry, RowError};
    let row = encode_row_bytes(&[
        RowEntry::Select {
            cycle: 0,
            sender: Some(3),
        },
        RowEntry::Send {
            cycle: 2,
            addr: 0x80100,
            len: 6,
        },
        RowEntry::Capture {
            cycle: 5,
            addr: 0x80201,
            len: 8,
            partner: true,
        },
    ]);
    // exch issues in cycle 1: T0 = 1 + 1 + 100 = 102, E = 102 + 5 + 2.
    let src = ".globl main\nmain: setzi $m1, 0x80000\n exch $m1\n setzi $m3, 0x80100\n st32 $m3, [$m3]\n sync 1\n getc $m2\n halt\n";
    let (mut t, img) = tile_with(src, &[]);
    t.write(0x80000, &row).unwrap();
    t.write(0x80100, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    t.start(img.symbol("main").unwrap(), 0);
    let mut port = RowPort::default();
    assert_eq!(
        t.run(&mut port, 1000).unwrap(),
        ipu_runtime::Outcome::Sync { cycle: 109 }
    );
    assert_eq!(t.engine_end(), 109);
    note_ops(&t, &img);
    let (tile, r) = &port.0[0];
    assert_eq!(
        (*tile, r.pc, r.issue, r.t0, r.end),
        (0, CODE + 4, 1, 102, 109)
    );
    assert_eq!(r.selects, vec![(102, 3)]);
    assert_eq!(
        r.sends,
        vec![ipu_runtime::EngineSend {
            start: 104,
            words: 2,
            offset: 0
        }]
    );
    // Read at issue: the store in cycle 3 does not change what is sent.
    assert_eq!(&r.data[..], &[1, 2, 3, 4, 5, 6, 0, 0]);
    assert_eq!(r.word_at(105), Some(0x0605));
    assert_eq!(r.word_at(106), None);
    assert_eq!(r.captures.len(), 1);
    assert_eq!(
        (
            r.captures[0].start,
            r.captures[0].partner,
            r.captures[0].addr
        ),
        (107, true, 0x80201)
    );
    // Alone, the sync then takes `sync_cycles` from the arrival at E.
    t.resume_from_sync(109 + 90);
    assert_eq!(
        t.run(&mut port, 1000).unwrap(),
        ipu_runtime::Outcome::Halted
    );
    assert_eq!(rd32(&t, 0x80100), 0x80100);
    // `sync 0` does not wait for the engine; `halt` before E, and `exch`
    // while the engine runs, are faults.
    let fault = |src: &str, row: &[u8]| {
        let (mut t, img) = tile_with(src, &[]);
        t.write(0x80000, row).unwrap();
        t.start(img.symbol("main").unwrap(), 0);
        t.run_to_halt(&mut RowPort::default(), 10_000).map(|_| t)
    };
    let halt = ".globl main\nmain: setzi $m1, 0x80000\n exch $m1\n sync 0\n setzi $m4, D\n rpt $m4, e\n nop\ne: halt\n";
    // Issue cycles: exch 1, sync 0 2, setzi 3, rpt 4, nops 5.., halt 5 + D.
    let f = fault(&halt.replace("D", "103"), &row).unwrap_err();
    assert_eq!(f.kind, FaultKind::HaltWithEngine { end: 109 });
    assert_eq!((f.cycle, f.instruction.as_str()), (108, "halt"));
    assert!(fault(&halt.replace("D", "104"), &row).is_ok());
    let twice = ".globl main\nmain: setzi $m1, 0x80000\n exch $m1\n exch $m1\n halt\n";
    let f = fault(twice, &row).unwrap_err();
    assert_eq!((&f.kind, f.cycle), (&FaultKind::EngineBusy { end: 109 }, 2));
    assert!(f.instruction.starts_with("exch"), "{f}");
    // An empty row ends at T0; a bad kind is refused at issue.
    let once = ".globl main\nmain: setzi $m1, 0x80000\n exch $m1\n sync 1\n halt\n";
    let t = fault(once, &encode_row_bytes(&[])).unwrap();
    assert_eq!(t.cycle(), 102 + 90 + 1);
    let f = fault(once, &[1, 0, 0, 0, 0, 0, 0, 0xc0]).unwrap_err();
    assert_eq!(f.kind, FaultKind::ExchRow(RowError::BadKind { entry: 0 }));
    assert!(f.to_string().contains("kind 3"), "{f}");
}

/// A program that loads a bank of 16 x 16 f16 weights from 0x81000, makes
/// it active with `swap`, and has one worker run one row of x (0x82000,
/// K = 16: 4 instructions per row; the drain appears during the next row)
/// through the AMP, its 16 f16 results stored at 0x83000.
fn amp_row_program(swap: &str) -> String {
    format!(
        ".globl main\nmain: setzi $m2, 0x81000\n setzi $m3, 0\n setzi $m4, 32\n rpt $m4, e\n wld128 [$m2+=16], $m3\ne: {swap}\n \
         setzi $m2, w\n run $m2, $m2\n sync 0\n halt\n\
         w: setzi $m4, 4\n ampk $m4\n setzi $m5, 0x82000\n setzi $m6, 0x83000\n zero64 $a4:5\n \
         ld64 $a2:3, [$m5+=8]\n {{ ld64 $a2:3, [$m5+=8] ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n {{ ld64 $a2:3, [$m5+=8] ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n\
         {{ ld64 $a2:3, [$m5+=8] ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n {{ nop ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n zero64 $a2:3\n \
         {{ st64 $a0:1, [$m6+=8] ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n {{ st64 $a0:1, [$m6+=8] ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n\
         {{ st64 $a0:1, [$m6+=8] ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n {{ st64 $a0:1, [$m6+=8] ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n\
         st64 $a0:1, [$m6+=8]\n exit\n"
    )
}

/// Random f16 weights w[k][c] (16 x 16, row by row) and one row x of 16.
fn amp_row_inputs() -> (Vec<u16>, Vec<u16>) {
    let mut r = rng();
    let w: Vec<u16> = (0..16 * 16)
        .map(|_| f16_bits(r.gen_range(-1.0f32..1.0)))
        .collect();
    let x: Vec<u16> = (0..16)
        .map(|_| f16_bits(r.gen_range(-1.0f32..1.0)))
        .collect();
    (w, x)
}

/// The row [`amp_row_program`] stored is x times w, column by column.
fn check_amp_row(t: &Tile, w: &[u16], x: &[u16]) {
    let got = rd_u16(t, 0x83000, 16);
    for c in 0..16 {
        let mut acc = 0f32;
        for k in 0..16 {
            acc += f16_value(x[k]) * f16_value(w[k * 16 + c]);
        }
        let g = f16_value(got[c]);
        assert!(
            (g - acc).abs() <= 2e-3 * acc.abs().max(1.0),
            "column {c}: {g} vs {acc}"
        );
    }
}

#[test]
fn amp_weight_loading_and_swap() {
    let (w, x) = amp_row_inputs();
    let t = run_with(&amp_row_program("ampswap"), 0, |t| {
        wr_u16(t, 0x81000, &w);
        wr_u16(t, 0x82000, &x);
    })
    .unwrap();
    // The arithmetic slot runs first, so each store sees the drained partials of row 0.
    check_amp_row(&t, &w, &x);
    assert_eq!(t.stats().amp_macs, 8 * 64);
}

/// `ampswapt`: the bank holds its weights column by column (16 columns of
/// K = 16 f16 weights, column c at c * K), read by the AMP as the same
/// weights row by row would be.
#[test]
fn amp_weights_held_column_by_column() {
    let (w, x) = amp_row_inputs();
    // w[k][c], stored transposed: wt[c][k].
    let wt: Vec<u16> = (0..16 * 16).map(|i| w[(i % 16) * 16 + i / 16]).collect();
    let src = amp_row_program("setzi $m9, 16\n ampswapt $m9");
    let t = run_with(&src, 0, |t| {
        wr_u16(t, 0x81000, &wt);
        wr_u16(t, 0x82000, &x);
    })
    .unwrap();
    let (_, img) = tile_with(&src, &[]);
    note_ops(&t, &img);
    check_amp_row(&t, &w, &x);
    // No rows, or 16 columns of more rows than a bank holds, is a fault;
    // so is a row reaching past the rows the bank holds.
    for rows in [0, 257] {
        let src = format!(".globl main\nmain: setzi $m1, {rows}\n ampswapt $m1\n halt\n");
        let f = run_with(&src, 0, |_| {}).unwrap_err();
        assert!(
            matches!(f.kind, FaultKind::AmpWeights { .. }),
            "{rows}: {f}"
        );
    }
    let src = ".globl main\nmain: setzi $m1, 16\n ampswapt $m1\n setzi $m2, w\n run $m2, $m2\n sync 0\n halt\n\
               w: setzi $m3, 8\n ampk $m3\n .rept 5\n amp.f16f16 $a0:1, $a0:1, $a0:1\n .endr\n exit\n";
    let f = run_with(src, 0, |_| {}).unwrap_err();
    assert!(matches!(f.kind, FaultKind::AmpWeights { .. }), "{f}");
}

/// Weights for the next block stream into the shadow bank (`ldxw`) while
/// the AMP computes with the active one (loaded by `wld64`).
#[test]
fn amp_weights_loaded_by_workers() {
    let mut r = rng();
    let w1: Vec<u16> = (0..256)
        .map(|_| f16_bits(r.gen_range(-1.0f32..1.0)))
        .collect();
    let w2: Vec<u16> = (0..256)
        .map(|_| f16_bits(r.gen_range(-1.0f32..1.0)))
        .collect();
    let x: Vec<u16> = (0..16)
        .map(|_| f16_bits(r.gen_range(-1.0f32..1.0)))
        .collect();
    let row = |tag: &str, out: u32, load: bool| {
        let mut s = format!("{tag}: setzi $m4, 4\n ampk $m4\n setzi $m5, 0x82000\n setzi $m6, {out}\n setzi $m7, 0x84000\n setzi $m8, 0\n zero64 $a4:5\n ld64 $a2:3, [$m5+=8]\n");
        for p in 0..4 {
            let m = if load && p < 3 {
                "ldxw $a2:3, [$m5+=8], [$m7+=8], $m8"
            } else if p < 3 {
                "ld64 $a2:3, [$m5+=8]"
            } else {
                "nop"
            };
            s.push_str(&format!(" {{ {m} ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n"));
        }
        s.push_str(" zero64 $a2:3\n");
        for _ in 0..4 {
            let m = if load {
                "ldxw $a6:7, [$m5+=8], [$m7+=8], $m8"
            } else {
                "nop"
            };
            s.push_str(&format!(
                " {{ {m} ; amp.f16f16 $a0:1, $a2:3, $a4:5 }}\n st64 $a0:1, [$m6+=8]\n"
            ));
        }
        if load {
            s.push_str(" rpt $m4, e2\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8\n setzi $m5, 0x82000\ne2:\n");
        }
        s.push_str(" exit\n");
        s
    };
    // 7 + 57 = 64 weight words through ldxw: 7 in the rows, 4 x 14 in the loop, plus 1 more below.
    let src = format!(
        ".globl main\nmain: setzi $m2, 0x81000\n setzi $m3, 0\n setzi $m4, 64\n rpt $m4, e\n wld64 [$m2+=8], $m3\ne: ampswap\n \
         setzi $m2, w1\n run $m2, $m2\n sync 0\n ampswap\n setzi $m2, w2\n run $m2, $m2\n sync 0\n halt\n{}{}",
        row("w1", 0x83000, true),
        row("w2", 0x83100, false)
    );
    let src = src.replace(
        "setzi $m5, 0x82000\ne2:",
        "setzi $m5, 0x82000\ne2:\n ldxw $a6:7, [$m5+=8], [$m7+=8], $m8",
    );
    let (t0, img) = tile_with(&src, &[]);
    note_ops(&t0, &img);
    let t = run_with(&src, 0, |t| {
        wr_u16(t, 0x81000, &w1);
        wr_u16(t, 0x82000, &x);
        wr_u16(t, 0x84000, &w2);
    })
    .unwrap_or_else(|f| panic!("{f}"));
    for (w, out) in [(&w1, 0x83000), (&w2, 0x83100)] {
        let got = rd_u16(&t, out, 16);
        for c in 0..16 {
            let acc: f32 = (0..16)
                .map(|k| f16_value(x[k]) * f16_value(w[k * 16 + c]))
                .sum();
            let g = f16_value(got[c]);
            assert!(
                (g - acc).abs() <= 2e-3 * acc.abs().max(1.0),
                "{out:#x} column {c}: {g} vs {acc}"
            );
        }
    }
}

#[test]
fn faults_are_values() {
    type Check = fn(&FaultKind) -> bool;
    let cases: &[(&str, Check)] = &[
        (".globl main\nmain: setzi $m1, 0x7ffff\n sethi $m1, 0x7fff\n ld32 $m2, [$m1]\n halt", |k| matches!(k, FaultKind::Misaligned { .. })),
        (".globl main\nmain: setzi $m1, 0xffff0\n sethi $m1, 0x10\n ld32 $m2, [$m1]\n halt", |k| matches!(k, FaultKind::OutOfBounds { .. })),
        (".globl main\nmain: setzi $m1, main\n st32 $m2, [$m1]\n halt", |k| matches!(k, FaultKind::StoreToCode { .. })),
        (".globl main\nmain: setzi $m1, 0x70000\n ld128 $a0:3, [$m1]\n halt", |k| matches!(k, FaultKind::WorkerOnly(_) | FaultKind::NotInterleaved { .. })),
        (".globl main\nmain: f32v2add $a0:1, $a0:1, $a0:1\n halt", |k| matches!(k, FaultKind::WorkerOnly(_))),
        (".globl main\nmain: setzi $m1, 0\n jmp $m1\n halt", |k| matches!(k, FaultKind::PcOutOfCode { .. })),
        (".globl main\nmain: setzi $m1, 0\n divu $m2, $m2, $m1\n halt", |k| matches!(k, FaultKind::DivideByZero)),
        // A bounds check: 5 is not below 5; -1 (unsigned, huge) is not below 9.
        (".globl main\nmain: setzi $m1, 5\n bndchk $m1, $m1\n halt", |k| matches!(k, FaultKind::IndexOutOfRange { index: 5, bound: 5 })),
        (".globl main\nmain: setzi $m1, 0\n add $m1, $m1, -1\n setzi $m2, 9\n bndchk $m1, $m2\n halt", |k| matches!(k, FaultKind::IndexOutOfRange { index: -1, bound: 9 })),
        (".globl main\nmain: recv [$m1]\n halt", |k| matches!(k, FaultKind::NoSender)),
        (".globl main\nmain: recvsel $m1\n setzi $m2, 0x80000\n recv [$m2]\n halt", |k| matches!(k, FaultKind::NoData { .. })),
        (".globl main\nmain: .word 0x7f000000\n halt", |k| matches!(k, FaultKind::IllegalInstruction { .. })),
        (".globl main\nmain: setzi $m2, w\n run $m2, $m2\n halt\nw: exit", |k| matches!(k, FaultKind::HaltWithWorkers)),
        (".globl main\nmain: setzi $m2, w\n run $m2, $m2\n sync 0\n halt\nw: ampk $m15\n amp.f16f16 $a0:1, $a0:1, $a0:1\n exit", |k| {
            matches!(k, FaultKind::AmpRow { .. })
        }),
        (".globl main\nmain: setzi $m2, w\n run $m2, $m2\n sync 0\n halt\nw: exit\n ampswap", |_| false),
    ];
    let more: &[(&str, Check)] = &[
        // (The assembler refuses a `rpt` written inside a repeat body; a call reaches one.)
        (".globl main\nmain: setzi $m1, 2\n rpt $m1, e\n call $m5, f\ne: halt\nf: rpt $m1, g\n nop\ng: jmp $m5", |k| matches!(k, FaultKind::NestedRpt)),
        // Nested even with a count of zero, which would skip its body.
        (".globl main\nmain: setzi $m1, 2\n setzi $m2, 0\n rpt $m1, e\n call $m5, f\ne: halt\nf: rpt $m2, g\n nop\ng: jmp $m5", |k| matches!(k, FaultKind::NestedRpt)),
        // Tile memory is [0x4C000, 0xE8000) on ipu21: address 0, the word
        // below the base and the word at the end are outside it.
        (".globl main\nmain: setzi $m1, 0\n st32 $m2, [$m1]\n halt", |k| matches!(k, FaultKind::OutOfBounds { addr: 0, len: 4, base: 0x4C000, end: 0xE8000 })),
        (".globl main\nmain: setzi $m1, 0x4bffc\n ld32 $m2, [$m1]\n halt", |k| matches!(k, FaultKind::OutOfBounds { addr: 0x4bffc, .. })),
        (".globl main\nmain: setzi $m1, 0x4bfff\n st8 $m2, [$m1]\n halt", |k| matches!(k, FaultKind::OutOfBounds { addr: 0x4bfff, .. })),
        (".globl main\nmain: setzi $m1, 0xe8000\n st32 $m2, [$m1]\n halt", |k| matches!(k, FaultKind::OutOfBounds { addr: 0xe8000, .. })),
        (".globl main\nmain: setzi $m1, 0xe7ff8\n ld64 $a0:1, [$m1+8]\n halt", |k| matches!(k, FaultKind::OutOfBounds { addr: 0xe8000, .. })),
        (".globl main\nmain: setzi $m1, 16\n send [$m1]\n halt", |k| matches!(k, FaultKind::OutOfBounds { addr: 16, .. })),
        // A context that branches to itself never leaves: a livelock, found at once.
        (".globl main\nmain: br .\n halt", |k| matches!(k, FaultKind::SelfLoop)),
        (".globl main\nmain: setzi $m1, 1\n brnz $m1, .\n halt", |k| matches!(k, FaultKind::SelfLoop)),
        (".globl main\nmain: setzi $m1, j\nj: jmp $m1\n halt", |k| matches!(k, FaultKind::SelfLoop)),
        (".globl main\nmain: setzi $m2, w\n run $m2, $m2\n sync 0\n halt\nw: { br . ; f32v2add $a0:1, $a0:1, $a2:3 }\n exit", |k| matches!(k, FaultKind::SelfLoop)),
        (".globl main\nmain: setzi $m2, w\n .rept 7\n run $m2, $m2\n .endr\n sync 0\n halt\nw: setzi $m3, 100\n rpt $m3, e\n f32v2exp $a0:1, $a0:1\ne: exit", |k| {
            // Two-turn instructions leave the supervisor free slots while six workers run.
            matches!(k, FaultKind::NoFreeWorker)
        }),
        (".globl main\nmain: setzi $m2, w\n run $m2, $m2\n sync 0\n halt\nw: run $m2, $m2\n exit", |k| matches!(k, FaultKind::SupervisorOnly(_))),
        (".globl main\nmain: setzi $m2, w\n run $m2, $m2\n sync 0\n halt\nw: setzi $m3, 40\n ampk $m3\n .rept 33\n amp.f16f16 $a0:1, $a0:1, $a0:1\n .endr\n exit", |k| {
            matches!(k, FaultKind::AmpWeights { .. })
        }),
        (".globl main\nmain: .word 0x80000000, 0x00000000\n halt", |k| matches!(k, FaultKind::BadBundle)),
        (".globl main\nmain: setzi $m2, w\n run $m2, $m2\n sync 0\n halt\nw: setzi $m1, 0x70000\n ld128 $a0:3, [$m1]\n exit", |k| matches!(k, FaultKind::NotInterleaved { .. })),
    ];
    for (src, want) in cases[..cases.len() - 1].iter().chain(more) {
        match run_with(src, 0, |_| {}) {
            Err(f) => {
                assert!(want(&f.kind), "{src}: got {f}");
                assert!(!f.instruction.is_empty());
            }
            Ok(_) => panic!("{src}: no fault"),
        }
    }
    let f = run_with(".globl main\nmain: setzi $m2, w\n run $m2, $m2\n sync 0\n halt\nw: setzi $m1, 0\n ld64 $a0:1, [$m1+4]\n exit", 0, |_| {}).unwrap_err();
    assert_eq!(f.context, ContextId::Worker(0));
    assert!(f.to_string().contains("worker 0"), "{f}");
    // A worker's store below the memory base names where and what.
    let f = run_with(".globl main\nmain: setzi $m2, w\n run $m2, $m2\n sync 0\n halt\nw: setzi $m1, 0\n st64 $a0:1, [$m1+8]\n exit", 0, |_| {}).unwrap_err();
    assert_eq!(
        f.kind,
        FaultKind::OutOfBounds {
            addr: 8,
            len: 8,
            base: 0x4C000,
            end: 0xE8000
        }
    );
    assert_eq!(
        (f.context, f.instruction.as_str()),
        (ContextId::Worker(0), "st64 $a0:1, [$m1+8]")
    );
    let msg = f.to_string();
    assert!(
        msg.contains("outside tile memory [0x4c000, 0xe8000)"),
        "{msg}"
    );
    // The first and last words of memory are inside it.
    let t = run_with(".globl main\nmain: setzi $m1, 0xe7ffc\n setzi $m2, 7\n st32 $m2, [$m1]\n setzi $m3, 0x4c000\n ld32 $m4, [$m3]\n st32 $m4, [$m1-4]\n halt", 0, |_| {}).unwrap();
    assert_eq!(rd32(&t, 0xe7ffc), 7);
    assert_eq!(rd32(&t, 0xe7ff8), rd32(&t, 0x4c000));
    // Not self-loops: a branch to itself not taken, and a one-instruction
    // repeat body (the repeat, not a branch, brings the pc back).
    let t = run_with(".globl main\nmain: setzi $m1, 0\n brnz $m1, .\n setzi $m2, 3\n setzi $m4, 0\n rpt $m2, e\n add $m4, $m4, 2\ne: setzi $m3, 0x90000\n st32 $m4, [$m3]\n halt", 0, |_| {}).unwrap();
    assert_eq!(rd32(&t, 0x90000), 6);
    // The host side keeps to the same range.
    let (mut t, _) = tile_with(".globl main\nmain: halt\n", &[]);
    assert!(t.write(0x4bffc, &[0; 4]).is_err());
    assert!(t.write(0xe7ffd, &[0; 4]).is_err());
    assert!(t.read(0, 4).is_err());
    assert!(t.write(0xe7ffc, &[1; 4]).is_ok());
}

/// Runs last by name order within this binary is not guaranteed, so this
/// check runs every other case itself first through the shared set.
#[test]
fn zz_every_op_is_exercised() {
    integer_register_ops();
    integer_immediate_ops_and_moves();
    loads_and_stores();
    paired_memory_ops();
    vector_binary_ops();
    vector_unary_ops();
    reductions_moves_and_packing();
    conversions();
    branches_calls_and_repeat();
    issue_timing_ops();
    supervisor_control_exchange_and_sync();
    exchange_engine_on_one_tile();
    amp_weight_loading_and_swap();
    amp_weights_loaded_by_workers();
    amp_weights_held_column_by_column();
    amp_modes_ops();
    pow_and_gelu_tanh();
    comparisons_selects_and_byte_logic();
    bounds_check_in_range();
    let g = COVERED.lock().unwrap();
    let set = g.as_ref().unwrap();
    let missing: Vec<&str> = OPS
        .iter()
        .filter(|o| !set.contains(&o.op))
        .map(|o| o.mnemonic)
        .collect();
    assert!(
        missing.is_empty(),
        "instructions without a specification test: {missing:?}"
    );
}

fn issue_timing_ops() {
    let src = ".globl main\nmain: delay 1\n halt\n";
    let (t, img) = tile_with(src, &[]);
    note_ops(&t, &img);
}

/// Every AMP mode against a reference of its definition on one row.
fn amp_modes_ops() {
    amp_modes();
}

#[test]
fn amp_modes() {
    let mut r = rng();
    for (mn, kpi, ib, partial_f32, fmt) in [
        ("amp.f32f32", 1usize, 4usize, true, None),
        ("amp.f16f32", 2, 2, true, None),
        ("amp.f16f16", 4, 2, false, None),
        ("amp.f8e4f16", 8, 1, false, Some(F8Format::E4M3FN)),
        ("amp.f8e5f16", 8, 1, false, Some(F8Format::E5M2)),
    ] {
        let ppi = if partial_f32 { 2 } else { 4 };
        let drain = 16 / ppi;
        let k = kpi * drain; // one K-block
        let scale = if fmt.is_some() { -1 } else { 0 };
        // Weights and inputs as raw bytes plus their values.
        let gen = |r: &mut rand::rngs::StdRng| -> (Vec<u8>, f64) {
            let v: f32 = r.gen_range(-1.0..1.0);
            match (ib, fmt) {
                (4, _) => (v.to_le_bytes().to_vec(), v as f64),
                (2, _) => {
                    let b = f16_bits(v);
                    (b.to_le_bytes().to_vec(), f16_value(b) as f64)
                }
                (_, Some(f)) => {
                    let q = f8_from_f64(v as f64 * 4.0, 0, f);
                    (vec![q], f8_to_f64(q, 0, f))
                }
                _ => unreachable!(),
            }
        };
        let mut wb = Vec::new();
        let mut wv = Vec::new();
        for _ in 0..k * 16 {
            let (b, v) = gen(&mut r);
            wb.extend(b);
            wv.push(v);
        }
        let mut xb = Vec::new();
        let mut xv = Vec::new();
        for _ in 0..k {
            let (b, v) = gen(&mut r);
            xb.extend(b);
            xv.push(v);
        }
        // Inputs are read 64 bits at a time; f16f32 and f32f32 use half a pair per instruction.
        let loads_every = if mn == "amp.f16f32" || mn == "amp.f32f32" {
            2
        } else {
            1
        };
        let mut body = String::new();
        for p in 0..drain {
            if p % loads_every == 0 {
                body.push_str(" ld64 $a2:3, [$m5+=8]\n");
            }
            body.push_str(&format!(" {mn} $a0:1, $a2:3, $a4:5\n"));
        }
        body.push_str(" zero64 $a2:3\n");
        for _ in 0..drain {
            body.push_str(&format!(
                " {{ nop ; {mn} $a0:1, $a2:3, $a4:5 }}\n st64 $a0:1, [$m6+=8]\n"
            ));
        }
        let src = format!(
            ".globl main\nmain: setzi $m2, 0x81000\n setzi $m3, 0\n setzi $m4, 256\n rpt $m4, e\n wld128 [$m2+=16], $m3\ne: ampswap\n \
             setzi $m2, w\n run $m2, $m2\n sync 0\n halt\n\
             w: setzi $m4, {drain}\n ampk $m4\n setzi $m4, {}\n sethi $m4, {}\n setscl $m4\n setzi $m5, 0x82000\n setzi $m6, 0x83000\n zero64 $a4:5\n{body} exit\n",
            scale as u32 & 0xffff,
            (scale as u32) >> 16
        );
        let (mut t, img) = tile_with(&src, &[]);
        t.write(0x81000, &wb).unwrap();
        t.write(0x82000, &xb).unwrap();
        t.start(img.symbol("main").unwrap(), 0);
        t.run_to_halt(&mut ipu_runtime::NoExchange, 1_000_000)
            .unwrap_or_else(|f| panic!("{f}"));
        note_ops(&t, &img);
        for c in 0..16 {
            let want: f64 =
                (0..k).map(|kk| xv[kk] * wv[kk * 16 + c]).sum::<f64>() * 2f64.powi(scale);
            let got = if partial_f32 {
                f(rd32(&t, 0x83000 + 4 * c as u32)) as f64
            } else {
                f16_value(rd_u16(&t, 0x83000 + 2 * c as u32, 1)[0]) as f64
            };
            let tol = if partial_f32 { 1e-5 } else { 2e-3 } * want.abs().max(1.0);
            assert!(
                (got - want).abs() <= tol,
                "{mn} column {c}: {got} vs {want}"
            );
        }
        assert_eq!(t.stats().amp_macs as usize, 2 * drain * kpi * 16, "{mn}");
    }
}

/// The reference interpreter's formulas, in double, rounded once.
fn pow_model(x: f32, y: f32) -> f32 {
    (x as f64).powf(y as f64) as f32
}

fn gelu_tanh_model(x: f32) -> f32 {
    let x = x as f64;
    let c = (2.0 / std::f64::consts::PI).sqrt();
    (0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())) as f32
}

#[test]
fn pow_and_gelu_tanh() {
    let mut r = rng();
    let specials = [
        (-2.0f32, 3.0f32),
        (-2.0, 0.5),
        (f32::NAN, 0.0),
        (1.0, f32::NAN),
        (0.0, -1.0),
        (-8.0, 1.0 / 3.0),
    ];
    for trial in 0..4 {
        let (m, mut a) = rand_regs(&mut r);
        for v in a.iter_mut().take(8) {
            *v = rand_f32(&mut r);
        }
        if trial < 3 {
            let (x, y) = (specials[2 * trial], specials[2 * trial + 1]);
            a[2..6].copy_from_slice(&[x.0.to_bits(), y.0.to_bits(), x.1.to_bits(), y.1.to_bits()]);
        }
        let (_, ao) = exec(
            " f32v2pow $a8:9, $a2:3, $a4:5\n f32v2gelutanh $a10:11, $a2:3",
            m,
            a,
            0,
        );
        for k in 0..2 {
            let want = pow_model(f(a[2 + k]), f(a[4 + k]));
            assert!(
                same(ao[8 + k], want),
                "f32v2pow({}, {})",
                f(a[2 + k]),
                f(a[4 + k])
            );
            assert!(same(ao[10 + k], gelu_tanh_model(f(a[2 + k]))));
        }
        for v in a.iter_mut().take(8) {
            *v = rand_f16x2(&mut r);
        }
        let (_, ao) = exec(
            " f16v4pow $a8:9, $a2:3, $a4:5\n f16v4gelutanh $a10:11, $a2:3",
            m,
            a,
            0,
        );
        for k in 0..4 {
            let (x, y) = (h(a[2 + k / 2], k % 2), h(a[4 + k / 2], k % 2));
            let lane = |v: u32| (v >> (16 * (k % 2))) as u16;
            assert!(
                same16(lane(ao[8 + k / 2]), f16_bits(pow_model(x, y))),
                "f16v4pow({x}, {y})"
            );
            assert!(same16(lane(ao[10 + k / 2]), f16_bits(gelu_tanh_model(x))));
        }
    }
}

/// Random f32 bits with many ties, NaN and both zeros.
fn tie_f32(r: &mut impl Rng) -> f32 {
    [f32::NAN, 0.0, -0.0, 1.0, -1.0, f32::INFINITY, 2.5][r.gen_range(0..7)]
}

#[test]
fn comparisons_selects_and_byte_logic() {
    let mut r = rng();
    for _ in 0..8 {
        let (m, mut a) = rand_regs(&mut r);
        for v in a.iter_mut().take(6) {
            *v = tie_f32(&mut r).to_bits();
        }
        let (_, ao) = exec(
            " f32v2cmpeq $a8, $a2:3, $a4:5\n f32v2cmplt $a9, $a2:3, $a4:5",
            m,
            a,
            0,
        );
        let bytes = |f: &dyn Fn(usize) -> bool, n: usize| {
            (0..n).fold(0u32, |w, k| w | (f(k) as u32) << (8 * k))
        };
        assert_eq!(ao[8], bytes(&|k| f(a[2 + k]) == f(a[4 + k]), 2));
        assert_eq!(ao[9], bytes(&|k| f(a[2 + k]) < f(a[4 + k]), 2));
        for v in a.iter_mut().take(6) {
            *v = f16_bits(tie_f32(&mut r)) as u32 | (f16_bits(tie_f32(&mut r)) as u32) << 16;
        }
        let (_, ao) = exec(
            " f16v4cmpeq $a8, $a2:3, $a4:5\n f16v4cmplt $a9, $a2:3, $a4:5",
            m,
            a,
            0,
        );
        let x = |k: usize| h(a[2 + k / 2], k % 2);
        let y = |k: usize| h(a[4 + k / 2], k % 2);
        assert_eq!(ao[8], bytes(&|k| x(k) == y(k), 4));
        assert_eq!(ao[9], bytes(&|k| x(k) < y(k), 4));
        // Selects: lane k from s where byte k of the mask is non-zero.
        let (m, mut a) = rand_regs(&mut r);
        let picks: Vec<bool> = (0..4).map(|_| r.gen_bool(0.5)).collect();
        a[6] = bytes(&|k| picks[k], 4) * [1u32, 7, 0x80][r.gen_range(0..3)];
        let (_, ao) = exec(
            " f32v2sel $a8:9, $a6, $a2:3, $a4:5\n f16v4sel $a10:11, $a6, $a2:3, $a4:5",
            m,
            a,
            0,
        );
        let on = |k: usize| (a[6] >> (8 * k)) & 0xff != 0;
        for k in 0..2 {
            assert_eq!(
                ao[8 + k],
                if on(k) { a[2 + k] } else { a[4 + k] },
                "f32v2sel"
            );
        }
        for k in 0..4 {
            let lane = |v: u32| (v >> (16 * (k % 2))) & 0xffff;
            let want = if on(k) { a[2 + k / 2] } else { a[4 + k / 2] };
            assert_eq!(lane(ao[10 + k / 2]), lane(want), "f16v4sel lane {k}");
        }
        // Byte logic: any non-zero byte is true; results are 0/1.
        let (m, mut a) = rand_regs(&mut r);
        for v in a.iter_mut().take(6) {
            *v &= 0x8101_0301 * r.gen_range(0..2u32);
        }
        let (_, ao) = exec(
            " i1v8and $a8:9, $a2:3, $a4:5\n i1v8or $a10:11, $a2:3, $a4:5\n i1v8not $a12:13, $a2:3",
            m,
            a,
            0,
        );
        let byte = |v: &[u32], i: usize| (v[i / 4] >> (8 * (i % 4))) & 0xff != 0;
        for i in 0..8 {
            let (p, q) = (byte(&a[2..4], i), byte(&a[4..6], i));
            let got = |base: usize| (ao[base + i / 4] >> (8 * (i % 4))) & 0xff;
            assert_eq!(got(8), (p && q) as u32, "i1v8and byte {i}");
            assert_eq!(got(10), (p || q) as u32, "i1v8or byte {i}");
            assert_eq!(got(12), !p as u32, "i1v8not byte {i}");
        }
    }
}

#[test]
fn bounds_check_in_range() {
    // In range: nothing changes and the program goes on.
    let (mut m, a) = rand_regs(&mut rng());
    m[3] = 6;
    m[4] = 7;
    let (mo, ao) = exec(" bndchk $m3, $m4", m, a, 0);
    assert_eq!((mo, ao), (m, a));
}
