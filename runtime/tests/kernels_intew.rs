//! The integer and boolean kernel (`intew.S`) on the tile simulator against
//! the reference interpreter's evaluation of each op, exactly: i32 and i64
//! arithmetic (wrapping; truncating division; pow with negative exponents
//! and products past the width), comparisons, select, the casts between
//! booleans, integers and floats, and the boolean reductions; odd sizes,
//! with every buffer ending at the end of tile memory (a read past its last
//! element faults); a zero divisor faults.

mod common;

use common::*;
use ipu_reference::{evaluate, ElementType as Ty, OpKind, ReduceKind, Tensor};
use ipu_runtime::{NoExchange, Tile};
use rand::{Rng, SeedableRng};

const EDGES: [i64; 12] = [
    i64::MIN,
    i64::MAX,
    i32::MIN as i64,
    i32::MAX as i64,
    -1,
    0,
    1,
    2,
    -7,
    1 << 32,
    (1 << 32) - 1,
    65536,
];

fn values(r: &mut rand::rngs::StdRng, n: usize, w: usize, nonzero: bool) -> Vec<i64> {
    (0..n)
        .map(|_| loop {
            let v = match r.gen_range(0..3) {
                0 => EDGES[r.gen_range(0..EDGES.len())],
                1 => r.gen_range(-40..40),
                _ => r.gen::<i64>(),
            };
            // i32 values are i64 values cut to 32 bits.
            let v = if w == 4 { v as i32 as i64 } else { v };
            if !nonzero || v != 0 {
                break v;
            }
        })
        .collect()
}

fn bytes(v: &[i64], w: usize) -> Vec<u8> {
    v.iter()
        .flat_map(|x| x.to_le_bytes()[..w].to_vec())
        .collect()
}

fn read(t: &Tile, addr: u32, n: usize, w: usize) -> Vec<i64> {
    let b = t.read(addr, n * w).unwrap();
    b.chunks(w)
        .map(|c| match w {
            1 => c[0] as i64,
            2 => u16::from_le_bytes([c[0], c[1]]) as i64,
            4 => i32::from_le_bytes(c.try_into().unwrap()) as i64,
            _ => i64::from_le_bytes(c.try_into().unwrap()),
        })
        .collect()
}

fn ty(w: usize) -> Ty {
    match w {
        1 => Ty::I1,
        4 => Ty::I32,
        _ => Ty::I64,
    }
}

/// Runs `intew` with `params` on inputs `ins` (each of its byte width),
/// every buffer ending at the end of tile memory; the output's `n * ow`
/// bytes.
fn run(params: &[(&str, i64)], ins: &[Vec<u8>], out_bytes: usize) -> (Tile, u32) {
    let end = config().memory_end();
    let out = end - out_bytes.div_ceil(8) as u32 * 8 - 0x4000;
    let mut at = out - 0x1000;
    let mut state = [0u32; 4];
    let mut data = Vec::new();
    for (i, b) in ins.iter().enumerate() {
        // Input i ends at the end of memory (0), or below the one before.
        let a = if i == 0 {
            end - b.len() as u32
        } else {
            at - b.len() as u32
        };
        at = a & !7;
        state[i] = a;
        data.push((a, b.clone()));
    }
    state[3] = out;
    let t = run_kernel("intew", "intew", params, &state, &data);
    (t, out)
}

#[test]
fn integer_arithmetic_and_comparisons_match_the_reference() {
    let mut r = rand::rngs::StdRng::seed_from_u64(7);
    let ops = [
        (0, OpKind::Add, false),
        (1, OpKind::Sub, false),
        (2, OpKind::Mul, false),
        (3, OpKind::Div, false),
        (4, OpKind::Max, false),
        (5, OpKind::Min, false),
        (6, OpKind::Pow, false),
        (8, OpKind::Equal, true),
        (9, OpKind::Less, true),
        (10, OpKind::Greater, true),
    ];
    for w in [4usize, 8] {
        for n in [1usize, 2, 3, 7, 17, 40] {
            for (code, kind, to_bool) in &ops {
                let x = values(&mut r, n, w, false);
                let mut y = values(&mut r, n, w, *code == 3);
                if *code == 6 {
                    y = (0..n).map(|_| r.gen_range(-3..70)).collect();
                }
                let ow = if *to_bool { 1 } else { w };
                let (t, out) = run(
                    &[("OP", *code), ("W", w as i64), ("N", n as i64)],
                    &[bytes(&x, w), bytes(&y, w)],
                    n * ow,
                );
                let tx = Tensor::from_i64(vec![n], ty(w), x).unwrap();
                let tyy = Tensor::from_i64(vec![n], ty(w), y).unwrap();
                let want = evaluate(kind, &[&tx, &tyy]).unwrap().to_i64_vec();
                assert_eq!(read(&t, out, n, ow), want, "{kind:?} w {w} n {n}");
            }
        }
    }
}

#[test]
fn select_and_casts_match_the_reference() {
    let mut r = rand::rngs::StdRng::seed_from_u64(8);
    for n in [1usize, 3, 8, 13, 33] {
        let c: Vec<i64> = (0..n).map(|_| r.gen_range(0..2)).collect();
        for w in [4usize, 8] {
            let (a, b) = (values(&mut r, n, w, false), values(&mut r, n, w, false));
            let (t, out) = run(
                &[("OP", 12), ("W", w as i64), ("N", n as i64)],
                &[bytes(&c, 1), bytes(&a, w), bytes(&b, w)],
                n * w,
            );
            let tc = Tensor::from_i64(vec![n], Ty::I1, c.clone()).unwrap();
            let (ta, tb) = (
                Tensor::from_i64(vec![n], ty(w), a.clone()).unwrap(),
                Tensor::from_i64(vec![n], ty(w), b).unwrap(),
            );
            let want = evaluate(&OpKind::Select, &[&tc, &ta, &tb]).unwrap();
            assert_eq!(read(&t, out, n, w), want.to_i64_vec(), "select w {w} n {n}");
            // Casts: (OP, W, input width, output type, output width).
            let casts = [
                (16, w, w, Ty::I1, 1),
                (17, w, 1, ty(w), w),
                (19, 4, 4, Ty::I64, 8),
                (20, 8, 8, Ty::I32, 4),
            ];
            for (code, kw, iw, to, ow) in casts {
                let input = if iw == 1 {
                    c.clone()
                } else {
                    values(&mut r, n, iw, false)
                };
                let (t, out) = run(
                    &[("OP", code), ("W", kw as i64), ("N", n as i64)],
                    &[bytes(&input, iw)],
                    n * ow,
                );
                let tx = Tensor::from_i64(vec![n], ty(iw), input).unwrap();
                let cast = OpKind::Cast {
                    to,
                    saturate: true,
                    scale: 0,
                };
                let want = evaluate(&cast, &[&tx]).unwrap().to_i64_vec();
                assert_eq!(read(&t, out, n, ow), want, "cast OP {code} n {n}");
            }
        }
        // Booleans compared and selected (W = 1).
        let (a, b): (Vec<i64>, Vec<i64>) = (0..n)
            .map(|_| (r.gen_range(0..2), r.gen_range(0..2)))
            .unzip();
        let (ta, tb, tc) = (
            Tensor::from_i64(vec![n], Ty::I1, a.clone()).unwrap(),
            Tensor::from_i64(vec![n], Ty::I1, b.clone()).unwrap(),
            Tensor::from_i64(vec![n], Ty::I1, c.clone()).unwrap(),
        );
        for (code, kind) in [(8, OpKind::Equal), (9, OpKind::Less), (10, OpKind::Greater)] {
            let (t, out) = run(
                &[("OP", code), ("W", 1), ("N", n as i64)],
                &[bytes(&a, 1), bytes(&b, 1)],
                n,
            );
            let want = evaluate(&kind, &[&ta, &tb]).unwrap().to_i64_vec();
            assert_eq!(read(&t, out, n, 1), want, "{kind:?} of booleans n {n}");
        }
        let (t, out) = run(
            &[("OP", 12), ("W", 1), ("N", n as i64)],
            &[bytes(&c, 1), bytes(&a, 1), bytes(&b, 1)],
            n,
        );
        let want = evaluate(&OpKind::Select, &[&tc, &ta, &tb]).unwrap();
        assert_eq!(
            read(&t, out, n, 1),
            want.to_i64_vec(),
            "select of booleans n {n}"
        );
        // Booleans to f32 and f16: 0.0 and 1.0.
        for (w, one) in [(4usize, 0x3F80_0000i64), (2, 0x3C00)] {
            let (t, out) = run(
                &[("OP", 18), ("W", w as i64), ("N", n as i64)],
                &[bytes(&c, 1)],
                n * w,
            );
            let want: Vec<i64> = c.iter().map(|&b| b * one).collect();
            assert_eq!(read(&t, out, n, w), want, "bool to float w {w} n {n}");
        }
    }
}

#[test]
fn casts_from_f32_match_the_reference() {
    let mut r = rand::rngs::StdRng::seed_from_u64(10);
    let specials = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        0.5,
        -0.999,
        1.0,
        -1.5,
        2147483648.0,
        -2147483648.0,
        3.0e9,
        -3.0e9,
        9.2233715e18,
        9.223372e18,
        -9.223372e18,
        1.0e19,
        -1.0e30,
        f32::MIN_POSITIVE,
        16777215.0,
        1.2345679e11,
    ];
    for n in [1usize, 5, 22, 41] {
        let x: Vec<f32> = (0..n)
            .map(|i| match r.gen_range(0..3) {
                0 => specials[(i + n) % specials.len()],
                1 => r.gen_range(-1.0e6f32..1.0e6),
                _ => f32::from_bits(r.gen::<u32>()),
            })
            .collect();
        let xb: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        let tx = Tensor::from_f32(vec![n], Ty::F32, x).unwrap();
        for (code, w, to, ow) in [(23, 4, Ty::I32, 4), (23, 8, Ty::I64, 8), (24, 4, Ty::I1, 1)] {
            let (t, out) = run(
                &[("OP", code), ("W", w), ("N", n as i64)],
                std::slice::from_ref(&xb),
                n * ow,
            );
            let cast = OpKind::Cast {
                to,
                saturate: true,
                scale: 0,
            };
            let want = evaluate(&cast, &[&tx]).unwrap().to_i64_vec();
            assert_eq!(read(&t, out, n, ow), want, "f32 to {to:?} n {n}");
        }
    }
}

#[test]
fn boolean_reductions_match_the_reference() {
    let mut r = rand::rngs::StdRng::seed_from_u64(9);
    for (outer, len, inner) in [
        (1usize, 1usize, 1usize),
        (1, 9, 1),
        (3, 5, 1),
        (2, 3, 4),
        (1, 40, 3),
    ] {
        for all in [false, true] {
            // Mostly one value, so that any and all both vary.
            let p = if all { 0.9 } else { 0.1 };
            let x: Vec<i64> = (0..outer * len * inner)
                .map(|_| r.gen_bool(p) as i64)
                .collect();
            let n = outer * inner;
            let (t, out) = run(
                &[
                    ("OP", 21 + all as i64),
                    ("N", n as i64),
                    ("L", len as i64),
                    ("I", inner as i64),
                ],
                &[bytes(&x, 1)],
                n,
            );
            let tx = Tensor::from_i64(vec![outer, len, inner], Ty::I1, x).unwrap();
            let kind = OpKind::Reduce {
                kind: if all {
                    ReduceKind::Min
                } else {
                    ReduceKind::Max
                },
                axes: vec![1],
                keepdims: false,
            };
            let want = evaluate(&kind, &[&tx]).unwrap().to_i64_vec();
            assert_eq!(read(&t, out, n, 1), want, "all {all} {outer}x{len}x{inner}");
        }
    }
}

#[test]
fn a_zero_divisor_faults() {
    for w in [4usize, 8] {
        let params: std::collections::BTreeMap<String, i64> =
            [("OP", 3), ("W", w as i64), ("N", 2)]
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect();
        let kernel = ipu_isa::kernels::assemble_kernel("intew", &params).unwrap();
        let harness = ipu_isa::asm::assemble(
            "harness.S",
            &format!(".globl main\nmain: setzi $m0, {STATE}\n call $m15, intew\n halt\n"),
            &Default::default(),
        )
        .unwrap();
        let cfg = config();
        let img = ipu_isa::link::link(
            &[("main", &harness.object), ("intew", &kernel.object)],
            &ipu_isa::link::LinkLayout::new(CODE, cfg.memory_end()),
        )
        .unwrap();
        let mut t = Tile::new(cfg);
        t.load(&img).unwrap();
        let state: Vec<u8> = [DATA, DATA + 64, 0, DATA + 128]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        t.write(STATE, &state).unwrap();
        t.write(DATA, &bytes(&[5, 6], w)).unwrap();
        t.write(DATA + 64, &bytes(&[1, 0], w)).unwrap();
        t.start(img.symbol("main").unwrap(), 0);
        let fault = t.run_to_halt(&mut NoExchange, 1_000_000);
        assert!(fault.is_err(), "w {w}: a division by zero runs on");
    }
}
