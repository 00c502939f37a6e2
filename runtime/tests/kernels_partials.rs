//! `partials.S`: split-K partial sums added up in one pass. Its result is
//! byte for byte that of the same adds made one partial at a time
//! (((c + p1) + p2) + ..., each rounded), padding lanes included, and its
//! cycle formula tracks the simulated run.

mod common;

use common::*;
use ipu_isa::float::{f16_bits, f16_value};
use ipu_isa::kernels::assemble_kernel;
use rand::{Rng, SeedableRng};

const C: u32 = DATA;
const PARTIALS: u32 = DATA + 0x10000;
const OUT: u32 = DATA + 0x30000;

/// `count` random values in [-4, 4) as f32 (`ty` 0) or f16 (`ty` 1) bytes.
fn random_elems(r: &mut rand::rngs::StdRng, ty: i64, count: usize) -> Vec<u8> {
    (0..count)
        .flat_map(|_| enc(ty, r.gen_range(-4.0f32..4.0)))
        .collect()
}

/// `v` as f32 (`ty` 0) or f16 (`ty` 1) bytes.
fn enc(ty: i64, v: f32) -> Vec<u8> {
    if ty == 0 {
        v.to_le_bytes().to_vec()
    } else {
        f16_bits(v).to_le_bytes().to_vec()
    }
}

/// Runs `partials` on random c and partials; returns (c, partials, out)
/// as lanes of f64 (every lane of every granule) and the simulated cycles.
fn run(ty: i64, n: usize, p: usize, in_place: bool, seed: u64) -> (Vec<u8>, Vec<u8>, Vec<u8>, u64) {
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let eb = if ty == 0 { 4 } else { 2 };
    let gb = (n * eb).div_ceil(8) * 8;
    let lanes = gb / eb;
    let mut gen = |count: usize| random_elems(&mut r, ty, count);
    let c = gen(lanes);
    let parts = gen(lanes * p);
    let out = if in_place { C } else { OUT };
    let t = run_kernel(
        "partials",
        "partials",
        &[("TYPE", ty), ("N", n as i64), ("P", p as i64)],
        &[C, PARTIALS, out],
        &[(C, c.clone()), (PARTIALS, parts.clone())],
    );
    let got = t.read(out, gb).unwrap().to_vec();
    (c, parts, got, t.cycle())
}

/// ((c + p1) + p2) + ..., rounded after each add, lane by lane.
fn sequential(ty: i64, c: &[u8], parts: &[u8], p: usize) -> Vec<u8> {
    let eb = if ty == 0 { 4 } else { 2 };
    let lanes = c.len() / eb;
    let lane = |b: &[u8], i: usize| -> f32 {
        if ty == 0 {
            f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
        } else {
            f16_value(u16::from_le_bytes([b[2 * i], b[2 * i + 1]]))
        }
    };
    let mut out = Vec::with_capacity(c.len());
    for i in 0..lanes {
        let mut acc = lane(c, i);
        for k in 0..p {
            let s = acc + lane(parts, k * lanes + i);
            acc = if ty == 0 { s } else { f16_value(f16_bits(s)) };
        }
        if ty == 0 {
            out.extend_from_slice(&acc.to_le_bytes());
        } else {
            out.extend_from_slice(&f16_bits(acc).to_le_bytes());
        }
    }
    out
}

#[test]
fn partials_equal_the_adds_one_at_a_time() {
    let mut seed = 1;
    for p in 1..=6 {
        for (ty, n) in [
            (1i64, 416usize),
            (1, 4),
            (1, 333),
            (0, 1000),
            (0, 7),
            (0, 208),
        ] {
            for in_place in [false, true] {
                seed += 1;
                let (c, parts, got, _) = run(ty, n, p, in_place, seed);
                let want = sequential(ty, &c, &parts, p);
                assert_eq!(got, want, "TYPE {ty} N {n} P {p} in place {in_place}");
            }
        }
    }
}

#[test]
fn partials_rounds_after_every_add() {
    // 2048 + 1 + 1 in f16: (2048 + 1) rounds to 2048 (ties to even), twice;
    // adding 1 + 1 first would give 2050.
    let v = |x: f32| f16_bits(x).to_le_bytes().to_vec();
    let c: Vec<u8> = (0..4).flat_map(|_| v(2048.0)).collect();
    let parts: Vec<u8> = (0..8).flat_map(|_| v(1.0)).collect();
    let t = run_kernel(
        "partials",
        "partials",
        &[("TYPE", 1), ("N", 4), ("P", 2)],
        &[C, PARTIALS, OUT],
        &[(C, c), (PARTIALS, parts)],
    );
    assert_eq!(rd_u16(&t, OUT, 4), vec![f16_bits(2048.0); 4]);
}

#[test]
fn partials_cycle_formula_tracks_the_simulator() {
    for p in 1..=6 {
        // Blocks of at least a granule per worker (the split-K blocks).
        for (ty, n) in [(1i64, 416usize), (1, 96), (1, 3000), (0, 1000), (0, 208)] {
            let params: std::collections::BTreeMap<String, i64> =
                [("TYPE", ty), ("N", n as i64), ("P", p as i64)]
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect();
            let formula = assemble_kernel("partials", &params)
                .unwrap()
                .meta
                .cycles
                .unwrap() as u64;
            let (_, _, _, simulated) = run(ty, n, p, true, 7);
            let ratio = formula as f64 / simulated as f64;
            assert!(
                (0.97..=1.03).contains(&ratio),
                "TYPE {ty} N {n} P {p}: formula {formula}, simulated {simulated}"
            );
        }
    }
}

const BIAS: u32 = DATA + 0x38000;
const WIDE_OUT: u32 = DATA + 0x40000;

/// Runs the row-vector form (`C` bias columns, `WIDE`) on random c,
/// partials and bias; returns the f16/f32 result at +8, the f32 result at
/// +16 (WIDE 1), the reference's two and the simulated cycles.
#[allow(clippy::type_complexity)]
fn run_bias(
    ty: i64,
    n: usize,
    cols: usize,
    p: usize,
    wide: i64,
    in_place: bool,
    seed: u64,
) -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>, u64) {
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let eb = if ty == 0 { 4 } else { 2 };
    let mut gen = |count: usize| random_elems(&mut r, ty, count);
    let c = gen(n);
    let parts = gen(n * p);
    let bias = gen(cols);
    let out = if in_place && wide != 2 { C } else { OUT };
    let t = run_kernel(
        "partials",
        "partials",
        &[
            ("TYPE", ty),
            ("N", n as i64),
            ("P", p as i64),
            ("C", cols as i64),
            ("WIDE", wide),
        ],
        &[C, PARTIALS, out, BIAS, if wide == 1 { WIDE_OUT } else { 0 }],
        &[
            (C, c.clone()),
            (PARTIALS, parts.clone()),
            (BIAS, bias.clone()),
        ],
    );
    // The sum rounded after every add, then the bias added and rounded.
    let sum = sequential(ty, &c, &parts, p);
    let lane = |b: &[u8], i: usize| -> f32 {
        if ty == 0 {
            f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
        } else {
            f16_value(u16::from_le_bytes([b[2 * i], b[2 * i + 1]]))
        }
    };
    let mut want = Vec::new();
    let mut want_wide = Vec::new();
    for i in 0..n {
        let s = lane(&sum, i) + lane(&bias, i % cols);
        let s = if ty == 0 { s } else { f16_value(f16_bits(s)) };
        want.extend(enc(ty, s));
        want_wide.extend(s.to_le_bytes());
    }
    let (got, got_wide) = match wide {
        0 => (t.read(out, n * eb).unwrap().to_vec(), Vec::new()),
        1 => (
            t.read(out, n * eb).unwrap().to_vec(),
            t.read(WIDE_OUT, n * 4).unwrap().to_vec(),
        ),
        _ => (Vec::new(), t.read(out, n * 4).unwrap().to_vec()),
    };
    let want = if wide == 2 { Vec::new() } else { want };
    let want_wide = if wide == 0 { Vec::new() } else { want_wide };
    (got, got_wide, want, want_wide, t.cycle())
}

/// (TYPE, N, C, WIDE) of the row-vector form's cases: rows of one to
/// sixteen granules, rows fewer than, a multiple of and not a multiple of
/// the six workers.
const BIAS_CASES: &[(i64, usize, usize, i64)] = &[
    (1, 416, 16, 0),
    (1, 416, 16, 1),
    (1, 416, 16, 2),
    (1, 64, 4, 2),
    (1, 12, 4, 1),
    (1, 768, 64, 2),
    (1, 480, 8, 0),
    (0, 208, 16, 0),
    (0, 60, 2, 0),
    (0, 1024, 32, 0),
];

#[test]
fn partials_with_a_bias_equal_the_adds_then_the_bias() {
    let mut seed = 100;
    for p in 1..=6 {
        for &(ty, n, cols, wide) in BIAS_CASES.iter().filter(|c| p <= 5 || c.3 == 0) {
            for in_place in [false, true] {
                seed += 1;
                let (got, got_wide, want, want_wide, _) =
                    run_bias(ty, n, cols, p, wide, in_place, seed);
                let what =
                    format!("TYPE {ty} N {n} C {cols} P {p} WIDE {wide} in place {in_place}");
                assert_eq!(got, want, "{what}");
                assert_eq!(got_wide, want_wide, "{what} (f32)");
            }
        }
    }
}

/// Checks `partials`' `.cycles` formula for `params` within 3% of the
/// `simulated` cycles.
fn check_formula(params: &[(&str, i64)], simulated: u64) {
    let map: std::collections::BTreeMap<String, i64> =
        params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let formula = assemble_kernel("partials", &map)
        .unwrap()
        .meta
        .cycles
        .unwrap() as u64;
    let ratio = formula as f64 / simulated as f64;
    assert!(
        (0.97..=1.03).contains(&ratio),
        "{params:?}: formula {formula}, simulated {simulated}"
    );
}

#[test]
fn partials_with_a_bias_cycle_formula_tracks_the_simulator() {
    for p in 1..=6 {
        for &(ty, n, cols, wide) in BIAS_CASES.iter().filter(|c| p <= 5 || c.3 == 0) {
            let (.., simulated) = run_bias(ty, n, cols, p, wide, true, 9);
            let params = [
                ("TYPE", ty),
                ("N", n as i64),
                ("P", p as i64),
                ("C", cols as i64),
                ("WIDE", wide),
            ];
            check_formula(&params, simulated);
        }
    }
}

/// Runs the row-vector form with an activation (`ACT`, elementwise.S's
/// code) and an FP8 copy of its result (`TO8` at scale `scl`) on f16 c,
/// partials and bias; returns the f16 result and the FP8 one, the
/// reference's two (the sum rounded after every add, the bias added and
/// rounded, then the activation's instruction and the FP8 conversion, as
/// the separate kernels compute them) and the simulated cycles.
fn run_post(
    n: usize,
    cols: usize,
    p: usize,
    act: i64,
    to8: i64,
    scl: i64,
    seed: u64,
) -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>, u64) {
    use ipu_isa::float::{f8_from_f64, F8Format};
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let mut gen = |count: usize| random_elems(&mut r, 1, count);
    let c = gen(n);
    let parts = gen(n * p);
    let bias = gen(cols);
    let t = run_kernel(
        "partials",
        "partials",
        &[
            ("TYPE", 1),
            ("N", n as i64),
            ("P", p as i64),
            ("C", cols as i64),
            ("ACT", act),
            ("TO8", to8),
            ("SCL", scl),
        ],
        &[C, PARTIALS, OUT, BIAS, if to8 > 0 { WIDE_OUT } else { 0 }],
        &[
            (C, c.clone()),
            (PARTIALS, parts.clone()),
            (BIAS, bias.clone()),
        ],
    );
    let sum = sequential(1, &c, &parts, p);
    let lane = |b: &[u8], i: usize| f16_value(u16::from_le_bytes([b[2 * i], b[2 * i + 1]]));
    let round = |x: f32| f16_value(f16_bits(x));
    let (mut want, mut want8) = (Vec::new(), Vec::new());
    for i in 0..n {
        let s = round(lane(&sum, i) + lane(&bias, i % cols));
        let a = match act {
            17 => round(0.5 * s * (1.0 + libm::erff(s * std::f32::consts::FRAC_1_SQRT_2))),
            29 => {
                let x = s as f64;
                let k = (2.0 / std::f64::consts::PI).sqrt();
                round((0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh())) as f32)
            }
            _ => s,
        };
        want.extend(f16_bits(a).to_le_bytes());
        match to8 {
            3 => want8.push(f8_from_f64(a as f64, scl as i32, F8Format::E4M3FN)),
            4 => want8.push(f8_from_f64(a as f64, scl as i32, F8Format::E5M2)),
            _ => {}
        }
    }
    let got = t.read(OUT, want.len()).unwrap().to_vec();
    let got8 = t.read(WIDE_OUT, want8.len()).unwrap().to_vec();
    (got, got8, want, want8, t.cycle())
}

/// (N, C, P, ACT, TO8, SCL): GELU in both forms, with and without the FP8
/// result in both formats, FP8 alone; rows fewer than, a multiple of and
/// not a multiple of the six workers.
const POST_CASES: &[(usize, usize, usize, i64, i64, i64)] = &[
    (576, 32, 2, 29, 3, -2),
    (416, 16, 3, 17, 0, 0),
    (416, 16, 1, 29, 0, 0),
    (64, 4, 1, 0, 3, 1),
    (480, 8, 5, 29, 4, 0),
    (12, 4, 2, 17, 3, -3),
    (768, 64, 4, 0, 4, -1),
];

#[test]
fn partials_with_an_activation_and_an_fp8_result_equal_the_separate_kernels() {
    for (k, &(n, cols, p, act, to8, scl)) in POST_CASES.iter().enumerate() {
        let (got, got8, want, want8, _) = run_post(n, cols, p, act, to8, scl, 300 + k as u64);
        let what = format!("N {n} C {cols} P {p} ACT {act} TO8 {to8} SCL {scl}");
        assert_eq!(got, want, "{what}");
        assert_eq!(got8, want8, "{what} (FP8)");
    }
}

#[test]
fn partials_with_an_activation_cycle_formula_tracks_the_simulator() {
    for &(n, cols, p, act, to8, scl) in POST_CASES {
        let (.., simulated) = run_post(n, cols, p, act, to8, scl, 9);
        let params = [
            ("TYPE", 1),
            ("N", n as i64),
            ("P", p as i64),
            ("C", cols as i64),
            ("ACT", act),
            ("TO8", to8),
            ("SCL", scl),
        ];
        check_formula(&params, simulated);
    }
}
