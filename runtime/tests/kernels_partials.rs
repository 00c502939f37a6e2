//! `partials.S`: split-K partial sums added up in one pass. Its result is
//! byte for byte that of the same adds made one partial at a time
//! (((c + p1) + p2) + ..., each rounded), padding lanes included, and its
//! cycle formula tracks the simulated run.

mod common;

use common::*;
use ipu_isa::float::{f16_bits, f16_value};
use ipu_isa::kernels::{assemble_kernel, partials_max, ElemType};
use rand::{Rng, SeedableRng};

const C: u32 = DATA;
const PARTIALS: u32 = DATA + 0x10000;
const OUT: u32 = DATA + 0x48000;

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

/// (TYPE, N, P) of the plain form's cases: one to 64 partials, shares of
/// under a granule per worker to thousands of elements, and partials far
/// enough apart that they take several group pointers (f16 N 3000: three
/// partials a pointer; f32 N 3000: two).
fn plain_cases() -> Vec<(i64, usize, usize)> {
    let mut cases = Vec::new();
    for p in [1, 2, 3, 5, 6, 7, 12, 23, 32, 64] {
        for (ty, n) in [
            (1i64, 416usize),
            (1, 4),
            (1, 333),
            (1, 96),
            (0, 1000),
            (0, 7),
            (0, 208),
        ] {
            cases.push((ty, n, p));
        }
    }
    for p in [4, 8, 13, 22] {
        cases.push((1, 3000, p));
    }
    for p in [3, 6, 15] {
        cases.push((0, 3000, p));
    }
    // Within the kernel's limit for the share and the test's memory.
    cases.retain(|&(ty, n, p)| {
        let elem = if ty == 0 {
            ElemType::F32
        } else {
            ElemType::F16
        };
        let gb = (n * elem.bytes()).div_ceil(8) * 8;
        p <= partials_max(elem, n) && p * gb <= (OUT - PARTIALS) as usize
    });
    cases
}

#[test]
fn partials_equal_the_adds_one_at_a_time() {
    let mut seed = 1;
    for (ty, n, p) in plain_cases() {
        for in_place in [false, true] {
            seed += 1;
            let (c, parts, got, _) = run(ty, n, p, in_place, seed);
            let want = sequential(ty, &c, &parts, p);
            assert_eq!(got, want, "TYPE {ty} N {n} P {p} in place {in_place}");
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
    // Blocks of at least a granule per worker (the split-K blocks).
    for (ty, n, p) in plain_cases().into_iter().filter(|c| c.1 >= 96) {
        let (_, _, _, simulated) = run(ty, n, p, true, 7);
        check_formula(&[("TYPE", ty), ("N", n as i64), ("P", p as i64)], simulated);
    }
}

const BIAS: u32 = DATA + 0x50000;
const WIDE_OUT: u32 = DATA + 0x58000;

/// Runs the row-vector form (`C` bias columns, `WIDE`) on random c,
/// partials and bias; returns the f16/f32 result at +8, the f32 result at
/// +16 (WIDE 1), the reference's two and the simulated cycles.
#[allow(clippy::type_complexity)]
fn run_bias(
    (ty, n, cols, wide, gran): BiasCase,
    p: usize,
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
            ("GRAN", gran),
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

/// (TYPE, N, C, WIDE, GRAN) of a row-vector form's case.
type BiasCase = (i64, usize, usize, i64, i64);

/// The row-vector form's cases: split by rows (GRAN 0), rows of one to
/// sixteen granules, rows fewer than, a multiple of and not a multiple of
/// the six workers; split by granules (GRAN 1), one long row, rows that
/// start and end inside a worker's share, short rows many to a worker.
const BIAS_CASES: &[BiasCase] = &[
    (1, 416, 16, 0, 0),
    (1, 416, 16, 1, 0),
    (1, 416, 16, 2, 0),
    (1, 64, 4, 2, 0),
    (1, 12, 4, 1, 0),
    (1, 768, 64, 2, 0),
    (1, 480, 8, 0, 0),
    (0, 208, 16, 0, 0),
    (0, 60, 2, 0, 0),
    (0, 1024, 32, 0, 0),
    (1, 96, 96, 0, 1),
    (1, 192, 96, 0, 1),
    (1, 1200, 600, 1, 1),
    (1, 416, 16, 2, 1),
    (1, 12, 4, 0, 1),
    (1, 480, 8, 1, 1),
    (0, 1000, 500, 0, 1),
    (0, 60, 2, 0, 1),
    (0, 208, 104, 0, 1),
];

/// The partial counts each row-vector case runs with: up to 6 (5
/// widening) split by rows, up to 32 split by granules.
fn bias_ps(case: &BiasCase) -> Vec<usize> {
    match (case.4, case.3) {
        (0, 0) => (1..=6).collect(),
        (0, _) => (1..=5).collect(),
        _ => vec![1, 2, 3, 6, 7, 23, 32],
    }
}

#[test]
fn partials_with_a_bias_equal_the_adds_then_the_bias() {
    let mut seed = 100;
    for case in BIAS_CASES {
        for p in bias_ps(case) {
            for in_place in [false, true] {
                seed += 1;
                let (got, got_wide, want, want_wide, _) = run_bias(*case, p, in_place, seed);
                let what = format!("{case:?} P {p} in place {in_place}");
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
    if std::env::var_os("PARTIALS_FIT").is_some() {
        eprintln!("FIT {params:?} formula {formula} simulated {simulated} ratio {ratio:.3}");
        return;
    }
    assert!(
        (0.97..=1.03).contains(&ratio),
        "{params:?}: formula {formula}, simulated {simulated}"
    );
}

#[test]
fn partials_with_a_bias_cycle_formula_tracks_the_simulator() {
    for case in BIAS_CASES {
        let (ty, n, cols, wide, gran) = *case;
        for p in bias_ps(case) {
            let (.., simulated) = run_bias(*case, p, true, 9);
            let params = [
                ("TYPE", ty),
                ("N", n as i64),
                ("P", p as i64),
                ("C", cols as i64),
                ("WIDE", wide),
                ("GRAN", gran),
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
    (n, cols, p, act, to8, scl, gran): PostCase,
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
            ("GRAN", gran),
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

/// (N, C, P, ACT, TO8, SCL, GRAN) of an activation's case.
type PostCase = (usize, usize, usize, i64, i64, i64, i64);

/// GELU in both forms, with and without the FP8 result in both formats,
/// FP8 alone; rows fewer than, a multiple of and not a multiple of the six
/// workers; split by rows and by granules (one long row, many partials).
const POST_CASES: &[PostCase] = &[
    (576, 32, 2, 29, 3, -2, 0),
    (416, 16, 3, 17, 0, 0, 0),
    (416, 16, 1, 29, 0, 0, 0),
    (64, 4, 1, 0, 3, 1, 0),
    (480, 8, 5, 29, 4, 0, 0),
    (12, 4, 2, 17, 3, -3, 0),
    (768, 64, 4, 0, 4, -1, 0),
    (96, 96, 23, 29, 3, -2, 1),
    (768, 64, 9, 17, 0, 0, 1),
    (1200, 600, 2, 0, 4, 1, 1),
    (480, 8, 32, 29, 0, 0, 1),
];

#[test]
fn partials_with_an_activation_and_an_fp8_result_equal_the_separate_kernels() {
    for (k, case) in POST_CASES.iter().enumerate() {
        let (got, got8, want, want8, _) = run_post(*case, 300 + k as u64);
        let what = format!("(N, C, P, ACT, TO8, SCL, GRAN) {case:?}");
        assert_eq!(got, want, "{what}");
        assert_eq!(got8, want8, "{what} (FP8)");
    }
}

#[test]
fn partials_with_an_activation_cycle_formula_tracks_the_simulator() {
    for &case in POST_CASES {
        let (n, cols, p, act, to8, scl, gran) = case;
        let (.., simulated) = run_post(case, 9);
        let params = [
            ("TYPE", 1),
            ("N", n as i64),
            ("P", p as i64),
            ("C", cols as i64),
            ("ACT", act),
            ("TO8", to8),
            ("SCL", scl),
            ("GRAN", gran),
        ];
        check_formula(&params, simulated);
    }
}
