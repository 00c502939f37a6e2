//! The row kernels (`kernels/rows.S`) on random inputs against f64 models
//! of their math: reductions, softmax, log-softmax and layer norm over rows
//! (f32 and f16) and along columns (f32), with the tolerances of their
//! arithmetic; and every variant's cycle formula against the simulated run.

mod common;

use common::*;
use ipu_isa::float::{f16_bits, f16_value, f8_from_f64, F8Format};
use ipu_isa::kernels::{assemble_kernel, rows_parts, rows_per_worker};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

const X: u32 = DATA;
const OUT: u32 = DATA + 0x30000;
const GAMMA: u32 = DATA + 0x50000;
const BETA: u32 = DATA + 0x58000;
/// A cast result, away from the others.
const OUT2: u32 = DATA + 0x60000;

fn rng(seed: u64) -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// Values as the kernel's element type stores them, and their bytes.
fn encode(v: &[f32], ty: i64) -> (Vec<f64>, Vec<u8>) {
    if ty == 0 {
        (v.iter().map(|&a| a as f64).collect(), f32_bytes(v))
    } else {
        let h: Vec<u16> = v.iter().map(|&a| f16_bits(a)).collect();
        (
            h.iter().map(|&b| f16_value(b) as f64).collect(),
            u16_bytes(&h),
        )
    }
}

fn read(t: &ipu_runtime::Tile, addr: u32, n: usize, ty: i64) -> Vec<f64> {
    if ty == 0 {
        rd_f32(t, addr, n).into_iter().map(|v| v as f64).collect()
    } else {
        rd_u16(t, addr, n)
            .into_iter()
            .map(|b| f16_value(b) as f64)
            .collect()
    }
}

/// Runs `rows` with `params`; checks its cycle formula against the run.
fn run_rows(params: &[(&str, i64)], data: &[(u32, Vec<u8>)]) -> ipu_runtime::Tile {
    let state = rows_state(params, &[X, 0, GAMMA, BETA, OUT]);
    let t = run_kernel("rows", "rows", params, &state, data);
    check_formula(params, &t);
    t
}

/// The state of a `rows` call: its five words, or for a kernel taking one
/// record per worker each worker's, the words moved on to its first row
/// (unused ones stay 0), with its rows, as the compiler writes them.
fn rows_state(params: &[(&str, i64)], words: &[u32; 5]) -> Vec<u32> {
    let p: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    if !rows_per_worker(p.get("OP").copied().unwrap_or(0)) {
        return words.to_vec();
    }
    rows_parts(&p)
        .iter()
        .flat_map(|(off, rows)| {
            let mut w: Vec<u32> = words
                .iter()
                .zip(off)
                .map(|(&a, &o)| if a == 0 { 0 } else { a + o as u32 })
                .collect();
            w.push(*rows);
            w
        })
        .collect()
}

/// The kernel's cycle formula is the simulated run's cycles, a little over.
fn check_formula(params: &[(&str, i64)], t: &ipu_runtime::Tile) {
    let p: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let formula = assemble_kernel("rows", &p).unwrap().meta.cycles.unwrap() as u64;
    // The harness adds its call and halt to the kernel's own cycles.
    let simulated = t.cycle();
    if std::env::var_os("ROWS_PROBE").is_some() {
        eprintln!("PROBE {params:?} formula {formula} simulated {simulated}");
        return;
    }
    assert!(
        formula + 8 >= simulated && formula <= simulated + simulated / 50 + 24,
        "{params:?}: formula {formula} cycles, simulated {simulated}"
    );
}

/// x[r][c][i] of an R x C x I block (pitch `ip` >= I).
fn at(x: &[f64], c: usize, ip: usize, r: usize, k: usize, i: usize) -> f64 {
    x[(r * c + k) * ip + i]
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Red {
    Sum,
    Max,
    Min,
}

fn reduce_model(x: &[f64], r: usize, c: usize, i: usize, ip: usize, op: Red) -> Vec<f64> {
    let mut out = Vec::new();
    for row in 0..r {
        for col in 0..i {
            let vals = (0..c).map(|k| at(x, c, ip, row, k, col));
            out.push(match op {
                Red::Sum => vals.sum(),
                Red::Max => vals.fold(f64::MIN, f64::max),
                Red::Min => vals.fold(f64::MAX, f64::min),
            });
        }
    }
    out
}

#[test]
fn reductions_over_rows_and_columns() {
    let mut g = rng(11);
    // (TYPE, OUT, R, C, I, IP)
    let cases: &[(i64, i64, usize, usize, usize, usize)] = &[
        (0, 0, 13, 38, 1, 1),
        (0, 1, 7, 2, 1, 1),
        (0, 0, 1, 64, 1, 1),
        (1, 1, 9, 44, 1, 1),
        (1, 0, 6, 4, 1, 1),
        (1, 1, 3, 8, 1, 1),
        (0, 0, 3, 5, 6, 6),
        (0, 1, 4, 7, 10, 10),
        (0, 0, 1, 3, 7, 8),
        (0, 1, 1, 4, 5, 6),
        (0, 0, 2, 1, 4, 4),
        (0, 0, 1, 2, 1, 2),
    ];
    for &(ty, out, r, c, i, ip) in cases {
        let raw: Vec<f32> = (0..r * c * ip).map(|_| g.gen_range(-4.0..4.0)).collect();
        let (x, bytes) = encode(&raw, ty);
        for (op, red) in [(0i64, Red::Sum), (1, Red::Max), (2, Red::Min)] {
            for scale in [None, Some(1.0f32 / c as f32)] {
                if scale.is_some() && op != 0 {
                    continue;
                }
                let mut p = vec![
                    ("OP", op),
                    ("TYPE", ty),
                    ("OUT", out),
                    ("R", r as i64),
                    ("C", c as i64),
                ];
                if i > 1 || ip > 1 {
                    p.push(("I", i as i64));
                    p.push(("IP", ip as i64));
                }
                if let Some(s) = scale {
                    p.push(("SCALE", s.to_bits() as i64));
                }
                let t = run_rows(&p, &[(X, bytes.clone())]);
                let got = read(&t, OUT, r * i, out);
                let want = reduce_model(&x, r, c, i, ip, red);
                for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    let w = w * scale.map_or(1.0, |s| s as f64);
                    let tol = if out == 1 {
                        w.abs() * 1e-3 + 1e-4
                    } else if red == Red::Sum {
                        1e-6 * (c as f64) * 4.0
                    } else {
                        0.0
                    };
                    assert!((g - w).abs() <= tol, "{p:?} [{k}]: {g} vs {w}");
                }
                // Nothing is written past the R x I results.
                let past = t
                    .read(OUT + (r * i) as u32 * (4 - 2 * out as u32), 2)
                    .unwrap();
                assert_eq!(past, [0, 0], "{p:?} writes past its output");
            }
        }
    }
}

fn softmax_model(x: &[f64], r: usize, c: usize, i: usize, log: bool) -> Vec<f64> {
    let mut y = vec![0.0; r * c * i];
    for row in 0..r {
        for col in 0..i {
            let v: Vec<f64> = (0..c).map(|k| at(x, c, i, row, k, col)).collect();
            let m = v.iter().cloned().fold(f64::MIN, f64::max);
            let s: f64 = v.iter().map(|a| (a - m).exp()).sum();
            for (k, a) in v.iter().enumerate() {
                y[(row * c + k) * i + col] = if log {
                    a - m - s.ln()
                } else {
                    (a - m).exp() / s
                };
            }
        }
    }
    y
}

#[test]
fn softmax_and_log_softmax() {
    let mut g = rng(12);
    // (TYPE, R, C, I)
    let cases: &[(i64, usize, usize, usize)] = &[
        (0, 10, 34, 1),
        (0, 6, 64, 1),
        (0, 1, 2, 1),
        (0, 7, 4, 1),
        (1, 9, 48, 1),
        (1, 2, 4, 1),
        (1, 13, 8, 1),
        (0, 3, 5, 6),
        (0, 1, 9, 2),
        (0, 2, 1, 4),
        (0, 4, 16, 10),
    ];
    for &(ty, r, c, i) in cases {
        let raw: Vec<f32> = (0..r * c * i).map(|_| g.gen_range(-6.0..6.0)).collect();
        let (x, bytes) = encode(&raw, ty);
        for (op, log) in [(3i64, false), (4, true)] {
            let mut p = vec![("OP", op), ("TYPE", ty), ("R", r as i64), ("C", c as i64)];
            if i > 1 {
                p.push(("I", i as i64));
            }
            let t = run_rows(&p, &[(X, bytes.clone())]);
            let got = read(&t, OUT, r * c * i, ty);
            let want = softmax_model(&x, r, c, i, log);
            for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let tol = match (ty, log) {
                    (0, false) => 1e-6 + 1e-5 * w.abs(),
                    (0, true) => 2e-6 * (1.0 + w.abs()),
                    (_, false) => 3e-3 * w.abs() + 1e-5,
                    (_, true) => 4e-3 * (1.0 + w.abs()),
                };
                assert!((g - w).abs() <= tol, "{p:?} [{k}]: {g} vs {w}");
            }
            let past = t
                .read(OUT + (r * c * i) as u32 * (4 - 2 * ty as u32), 2)
                .unwrap();
            assert_eq!(past, [0, 0], "{p:?} writes past its output");
        }
    }
}

#[test]
fn layer_norm_with_and_without_scale_and_bias() {
    let mut g = rng(13);
    for &(ty, r, c, offset) in &[
        (0i64, 7usize, 48usize, 0.0f32),
        (0, 12, 30, 20.0),
        (0, 2, 2, 0.0),
        (0, 1, 4, 0.0),
        (1, 5, 64, 0.0),
        (1, 9, 12, 30.0),
        (1, 3, 4, 0.0),
    ] {
        let raw: Vec<f32> = (0..r * c)
            .map(|_| offset + g.gen_range(-3.0..3.0))
            .collect();
        let (x, bytes) = encode(&raw, ty);
        let graw: Vec<f32> = (0..c).map(|_| g.gen_range(0.5..1.5)).collect();
        let braw: Vec<f32> = (0..c).map(|_| g.gen_range(-1.0..1.0)).collect();
        let (gv, gb) = encode(&graw, ty);
        let (bv, bb) = encode(&braw, ty);
        let eps = 1e-5f32;
        for (gamma, beta) in [(0i64, 0i64), (1, 0), (0, 1), (1, 1)] {
            let p = [
                ("OP", 5),
                ("TYPE", ty),
                ("R", r as i64),
                ("C", c as i64),
                ("INV_C", (1.0f32 / c as f32).to_bits() as i64),
                ("EPS", eps.to_bits() as i64),
                ("GAMMA", gamma),
                ("BETA", beta),
            ];
            let t = run_rows(
                &p,
                &[(X, bytes.clone()), (GAMMA, gb.clone()), (BETA, bb.clone())],
            );
            let got = read(&t, OUT, r * c, ty);
            for row in 0..r {
                let v = &x[row * c..(row + 1) * c];
                let mean = v.iter().sum::<f64>() / c as f64;
                let var = v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / c as f64;
                let rstd = 1.0 / (var + eps as f64).sqrt();
                for k in 0..c {
                    let mut w = (v[k] - mean) * rstd;
                    if gamma == 1 {
                        w *= gv[k];
                    }
                    if beta == 1 {
                        w += bv[k];
                    }
                    let got = got[row * c + k];
                    let tol = if ty == 0 {
                        2e-5 * (1.0 + w.abs())
                    } else {
                        3e-3 * (1.0 + w.abs())
                    };
                    assert!(
                        (got - w).abs() <= tol,
                        "{p:?} offset {offset} [{row}][{k}]: {got} vs {w}"
                    );
                }
            }
            let past = t
                .read(OUT + (r * c) as u32 * (4 - 2 * ty as u32), 2)
                .unwrap();
            assert_eq!(past, [0, 0], "{p:?} writes past its output");
        }
    }
}

#[test]
fn row_vector_cycle_formula() {
    let mut g = rng(14);
    // Rows of up to 16 granules take the unrolled loop, longer ones the other.
    for &(ty, r, c) in &[
        (0i64, 9usize, 32usize),
        (1, 8, 16),
        (1, 37, 16),
        (1, 13, 4),
        (0, 1, 2),
        (0, 3, 40),
        (1, 7, 100),
    ] {
        let raw: Vec<f32> = (0..r * c).map(|_| g.gen_range(-1.0..1.0)).collect();
        let v: Vec<f32> = (0..c).map(|_| g.gen_range(-1.0..1.0)).collect();
        let (xv, xb) = encode(&raw, ty);
        let (vv, vb) = encode(&v, ty);
        let p = [("OP", 6), ("TYPE", ty), ("R", r as i64), ("C", c as i64)];
        let t = run_rows(&p, &[(X, xb), (GAMMA, vb)]);
        let got = read(&t, OUT, r * c, ty);
        for k in 0..r * c {
            let w = xv[k] + vv[k % c];
            let w = if ty == 1 {
                f16_value(f16_bits(w as f32)) as f64
            } else {
                w as f32 as f64
            };
            assert_eq!(got[k], w, "{p:?} [{k}]");
        }
    }
}

#[test]
fn specialisations_that_cannot_work_are_refused() {
    for bad in [
        vec![("OP", 3), ("TYPE", 0), ("C", 3)], // rows of partial granules
        vec![("OP", 3), ("TYPE", 1), ("C", 6)], // f16 rows of 12 bytes
        vec![("OP", 0), ("TYPE", 1), ("C", 4), ("I", 4)], // f16 columns
        vec![("OP", 5), ("C", 4), ("I", 2)],    // layer norm on columns
        vec![("OP", 0), ("R", 2), ("C", 4), ("I", 3)], // odd I over several rows
        vec![("OP", 3), ("R", 1), ("C", 4), ("I", 3)], // odd I for softmax
        vec![("OP", 1), ("SCALE", 0x3f000000)], // a scaled maximum
        vec![("OP", 3), ("OUT", 1)],            // OUT is for reductions
        vec![("OP", 0), ("C", 2), ("I", 4096)], // pitch beyond post-increment
        vec![("OP", 9), ("TYPE", 1), ("C", 4)], // combining f16 pairs
        vec![("OP", 9), ("R", 2048), ("C", 4)], // groups beyond post-increment
        vec![("OP", 3), ("LOG", 1)],            // LOG is for the cut softmax
        vec![("OP", 10), ("C", 4), ("I", 2)],   // cut softmax on columns
        vec![("OP", 12), ("TYPE", 1), ("C", 4)], // combining f16 pairs
        vec![("OP", 0), ("GAMMA", 1)],          // a scale is for layer norm
        vec![("OP", 13), ("BETA", 2)],          // flags are 0 or 1
        vec![("OP", 3), ("EXPS", 1)],           // EXPS is for the cut softmax
        vec![("OP", 10), ("LOG", 1), ("EXPS", 1)], // log-softmax scales nothing
        vec![("OP", 8), ("EXPS", 2)],           // flags are 0 or 1
        vec![("OP", 3), ("MASK", 1)],           // a prologue is for the statistics
        vec![("OP", 8), ("TYPE", 1), ("WIDEN", 1), ("C", 8)], // in f32
        vec![("OP", 8), ("WIDEN", 1), ("C", 4)], // one granule of x
        vec![("OP", 8), ("MASK", 1), ("C", 6), ("WIDEN", 1)], // f16 rows of 12 bytes
        vec![("OP", 8), ("MULV", 0x3e000000)],  // a multiplier without MUL
        vec![("OP", 8), ("MASK", 2)],           // flags are 0 or 1
    ] {
        let p: BTreeMap<String, i64> = bad.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert!(assemble_kernel("rows", &p).is_err(), "{bad:?} assembles");
    }
}

/// The parts a combining kernel may cut each of `r` rows' `groups` pairs
/// into (P > 1: a divisor of the groups, r * P workers at most six).
fn combine_parts(r: usize, groups: usize) -> Vec<usize> {
    (2..=groups)
        .filter(|&p| groups.is_multiple_of(p) && r * p <= 6)
        .collect()
}

/// Runs a combining kernel in parts (its partial pairs at +4) on the
/// statistics `stats`; checks its cycle formula; its r output pairs.
fn combine_in_parts(p: &[(&str, i64)], stats: &[f32], r: usize) -> Vec<f32> {
    const PARTIALS: u32 = DATA + 0x48000;
    let t = run_kernel(
        "rows",
        "rows",
        p,
        &[X, PARTIALS, 0, 0, OUT],
        &[(X, f32_bytes(stats))],
    );
    check_formula(p, &t);
    rd_f32(&t, OUT, 2 * r)
}

/// Where a cut softmax's tests keep the rows' combined pairs, a piece's
/// own pairs, and the exponentials step 1 stores.
const PAIRS: u32 = DATA + 0x40000;
const OWN: u32 = DATA + 0x44000;
const EXPS_AT: u32 = GAMMA;

/// One piece of a row cut over tiles in a test: piece `k`, `r` rows of `c`
/// columns of rows `full` long, of TYPE `ty`.
#[derive(Clone, Copy, Debug)]
struct Piece {
    ty: i64,
    r: usize,
    c: usize,
    full: usize,
    k: usize,
}

impl Piece {
    fn elem_bytes(&self) -> usize {
        4 - 2 * self.ty as usize
    }
}

/// Softmax of rows cut into `groups` pieces: each piece's statistics, the
/// pieces' statistics combined per row, and each piece normalised, against
/// the softmax of the whole rows. With EXPS the statistics also store each
/// element's exp(x - m) (checked against exp of the piece's own maximum,
/// the pairs the same as without), and the last pass scales them by the
/// row's exp(m - M) / S (into another buffer, or in place).
#[test]
fn softmax_of_rows_cut_into_pieces() {
    let mut g = rng(15);
    for &(ty, r, c, groups) in &[
        (0i64, 7usize, 12usize, 3usize),
        (0, 1, 2, 2),
        (0, 18, 32, 8),
        (0, 5, 6, 2),
        (1, 6, 8, 4),
        (1, 13, 4, 1),
        (1, 9, 24, 3),
        (0, 3, 8, 8),
        (0, 1, 4, 24),
        (0, 2, 4, 9),
    ] {
        let raw: Vec<f32> = (0..r * c * groups)
            .map(|_| g.gen_range(-6.0..6.0))
            .collect();
        let (x, _) = encode(&raw, ty);
        let full = c * groups;
        let piece = |k: usize| Piece { ty, r, c, full, k };
        // Piece k of row i holds columns [k * c, (k + 1) * c).
        let values = |k: usize| -> Vec<f32> {
            (0..r)
                .flat_map(|i| raw[i * full + k * c..i * full + (k + 1) * c].to_vec())
                .collect()
        };
        let mut stats = Vec::new();
        let mut exps = Vec::new();
        for k in 0..groups {
            let (pairs, e) = check_cut_softmax_stats(piece(k), &values(k));
            stats.extend(pairs);
            exps.push(e);
        }
        for log in [0i64, 1] {
            let pairs = check_cut_softmax_combine(r, groups, log, &stats);
            let want = softmax_model(&x, r, full, 1, log == 1);
            for k in 0..groups {
                let (_, bytes) = encode(&values(k), ty);
                let own = f32_bytes(&stats[2 * r * k..2 * r * (k + 1)]);
                // (EXPS, in place)
                let variants: &[(i64, bool)] = if log == 0 {
                    &[(0, false), (1, false), (1, true)]
                } else {
                    &[(0, false)]
                };
                for &variant in variants {
                    let inputs = (&bytes[..], &exps[k][..], &own[..], &pairs[..]);
                    check_cut_softmax_apply(piece(k), log, variant, inputs, &want);
                }
            }
        }
    }
}

/// A cut softmax's step 1 on one piece (`values`): its [max, sum] pairs,
/// the same with EXPS, and the exponentials that stores against exp(x - m);
/// returns the pairs and the exponentials' bytes.
fn check_cut_softmax_stats(pc: Piece, values: &[f32]) -> (Vec<f32>, Vec<u8>) {
    let Piece { ty, r, c, k, .. } = pc;
    let (xk, bytes) = encode(values, ty);
    let p = [("OP", 8), ("TYPE", ty), ("R", r as i64), ("C", c as i64)];
    let t = run_rows(&p, &[(X, bytes.clone())]);
    let pairs = rd_f32(&t, OUT, 2 * r);
    let p = [
        ("OP", 8),
        ("TYPE", ty),
        ("R", r as i64),
        ("C", c as i64),
        ("EXPS", 1),
    ];
    let t = run_rows(&p, &[(X, bytes)]);
    let pe = rd_f32(&t, OUT, 2 * r);
    let same = pairs
        .iter()
        .zip(&pe)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    assert!(
        same,
        "{p:?} piece {k}: pairs {pe:?}, without EXPS {pairs:?}"
    );
    let e = read(&t, EXPS_AT, r * c, ty);
    let past = t
        .read(EXPS_AT + (r * c * pc.elem_bytes()) as u32, 2)
        .unwrap();
    assert_eq!(past, [0, 0], "{p:?} writes past its exponentials");
    for i in 0..r {
        let m = pairs[2 * i] as f64;
        assert_eq!(
            m,
            xk[i * c..(i + 1) * c]
                .iter()
                .cloned()
                .fold(f64::MIN, f64::max),
            "{p:?} piece {k} row {i}: max"
        );
        for j in 0..c {
            // f16: x - m is rounded to f16 before its exp.
            let d = xk[i * c + j] - m;
            let d = if ty == 0 {
                d
            } else {
                f16_value(f16_bits(d as f32)) as f64
            };
            let (gv, w) = (e[i * c + j], d.exp());
            let tol = if ty == 0 {
                1e-6 * w + 1e-7
            } else {
                1e-3 * w + 6e-8
            };
            assert!(
                (gv - w).abs() <= tol,
                "{p:?} piece {k} e[{i}][{j}]: {gv} vs {w}"
            );
        }
    }
    let exps = t.read(EXPS_AT, r * c * pc.elem_bytes()).unwrap().to_vec();
    (pairs, exps)
}

/// A cut softmax's step 2: the pieces' `stats` combined per row, and the
/// same in parts (two rounds of workers) up to rounding; returns the pairs.
fn check_cut_softmax_combine(r: usize, groups: usize, log: i64, stats: &[f32]) -> Vec<f32> {
    let p = [
        ("OP", 9),
        ("R", r as i64),
        ("C", groups as i64),
        ("LOG", log),
    ];
    let t = run_rows(&p, &[(X, f32_bytes(stats))]);
    let pairs = rd_f32(&t, OUT, 2 * r);
    for parts in combine_parts(r, groups) {
        let p = [
            ("OP", 9),
            ("R", r as i64),
            ("C", groups as i64),
            ("LOG", log),
            ("P", parts as i64),
        ];
        let got = combine_in_parts(&p, stats, r);
        for i in 0..r {
            for lane in 0..2 - log as usize {
                let (a, b) = (got[2 * i + lane], pairs[2 * i + lane]);
                assert!(
                    (a - b).abs() <= 2e-6 * b.abs(),
                    "{p:?} row {i} lane {lane}: {a} vs {b}"
                );
            }
        }
    }
    pairs
}

/// A cut softmax's step 3 on one piece, with EXPS `e` (from step 1's
/// exponentials, `in_place` or not): each element against `want`, the
/// whole rows' softmax; from f32 exponentials also the f16 cast on the way
/// out. `inputs`: the piece's x, its exponentials, its own pairs and the
/// rows' combined pairs.
fn check_cut_softmax_apply(
    pc: Piece,
    log: i64,
    (e, in_place): (i64, bool),
    (x, exps, own, pairs): (&[u8], &[u8], &[u8], &[f32]),
    want: &[f64],
) {
    let Piece { ty, r, c, full, k } = pc;
    let eb = pc.elem_bytes();
    let p = [
        ("OP", 10),
        ("TYPE", ty),
        ("R", r as i64),
        ("C", c as i64),
        ("LOG", log),
        ("EXPS", e),
    ];
    let from = if in_place { OUT } else { X };
    let run = |p: &[(&str, i64)], out: u32| {
        if e == 0 {
            let data = [(X, x.to_vec()), (PAIRS, f32_bytes(pairs))];
            run_kernel(
                "rows",
                "rows",
                p,
                &rows_state(p, &[X, PAIRS, 0, 0, out]),
                &data,
            )
        } else {
            let data = [
                (from, exps.to_vec()),
                (PAIRS, f32_bytes(pairs)),
                (OWN, own.to_vec()),
            ];
            let state = rows_state(p, &[from, PAIRS, OWN, 0, out]);
            run_kernel("rows", "rows", p, &state, &data)
        }
    };
    let t = run(&p, OUT);
    check_formula(&p, &t);
    let got = read(&t, OUT, r * c, ty);
    let past = t.read(OUT + (r * c * eb) as u32, 2).unwrap();
    assert_eq!(past, [0, 0], "{p:?} writes past its output");
    if e == 1 && ty == 0 {
        // The f16 cast on the way out: each element the f32 result rounded
        // to f16, as the cast after it.
        let mut pc = p.to_vec();
        pc.push(("CAST", 1));
        let tc = run(&pc, OUT2);
        check_formula(&pc, &tc);
        let want: Vec<u16> = rd_f32(&t, OUT, r * c)
            .iter()
            .map(|&v| f16_bits(v))
            .collect();
        assert_eq!(rd_u16(&tc, OUT2, r * c), want, "{pc:?} piece {k}");
        let past = tc.read(OUT2 + (r * c * 2) as u32, 2).unwrap();
        assert_eq!(past, [0, 0], "{pc:?} writes past its output");
    }
    for i in 0..r {
        for j in 0..c {
            let (gv, w) = (got[i * c + j], want[i * full + k * c + j]);
            let tol = match (ty, log) {
                (0, 0) => 1e-6 + 1e-5 * w.abs(),
                (0, _) => 2e-6 * (1.0 + w.abs()),
                (_, 0) => 3e-3 * w.abs() + 1e-5,
                (_, _) => 4e-3 * (1.0 + w.abs()),
            };
            assert!(
                (gv - w).abs() <= tol,
                "{p:?} in place {in_place} piece {k} [{i}][{j}]: {gv} vs {w}"
            );
        }
    }
}

/// Layer norm of rows cut into `groups` equal pieces: each piece's mean
/// and variance, combined per row, and each piece normalised with its
/// columns of the scale and bias, against the layer norm of whole rows.
#[test]
fn layer_norm_of_rows_cut_into_pieces() {
    const PAIRS: u32 = DATA + 0x40000;
    let mut g = rng(16);
    let eps = 1e-5f32;
    for &(ty, r, c, groups, offset) in &[
        (0i64, 7usize, 12usize, 3usize, 0.0f32),
        (0, 1, 2, 2, 10.0),
        (1, 6, 8, 4, 30.0),
        (1, 13, 4, 1, 0.0),
        (1, 3, 8, 24, 2.0),
        (0, 1, 4, 24, 5.0),
        (0, 2, 8, 6, 1.0),
        (0, 2, 2, 15, -3.0),
    ] {
        let full = c * groups;
        let raw: Vec<f32> = (0..r * full)
            .map(|_| offset + g.gen_range(-3.0..3.0))
            .collect();
        let (x, _) = encode(&raw, ty);
        let graw: Vec<f32> = (0..full).map(|_| g.gen_range(0.5..1.5)).collect();
        let braw: Vec<f32> = (0..full).map(|_| g.gen_range(-1.0..1.0)).collect();
        let (gv, _) = encode(&graw, ty);
        let (bv, _) = encode(&braw, ty);
        let piece = |k: usize| -> Vec<f32> {
            (0..r)
                .flat_map(|i| raw[i * full + k * c..i * full + (k + 1) * c].to_vec())
                .collect()
        };
        let mut stats = Vec::new();
        for k in 0..groups {
            let (_, bytes) = encode(&piece(k), ty);
            let p = [
                ("OP", 11),
                ("TYPE", ty),
                ("R", r as i64),
                ("C", c as i64),
                ("INV_C", (1.0f32 / c as f32).to_bits() as i64),
            ];
            let t = run_rows(&p, &[(X, bytes)]);
            let pairs = rd_f32(&t, OUT, 2 * r);
            if ty == 0 {
                // With ADD the piece is s = a + b, added in the first pass
                // and stored: the same s and the same pairs, bit for bit.
                const B: u32 = DATA + 0x10000;
                const S: u32 = DATA + 0x20000;
                let a: Vec<f32> = piece(k).iter().map(|&v| v - 0.75).collect();
                let b: Vec<f32> = (0..r * c).map(|_| g.gen_range(0.5..1.0)).collect();
                let sum: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
                let t = run_rows(&p, &[(X, f32_bytes(&sum))]);
                let want = rd_f32(&t, OUT, 2 * r);
                let mut pa = p.to_vec();
                pa.push(("ADD", 1));
                let t = run_kernel(
                    "rows",
                    "rows",
                    &pa,
                    &rows_state(&pa, &[X, B, S, 0, OUT]),
                    &[(X, f32_bytes(&a)), (B, f32_bytes(&b))],
                );
                check_formula(&pa, &t);
                let same =
                    |x: &[f32], y: &[f32]| x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits());
                assert!(same(&rd_f32(&t, S, r * c), &sum), "{pa:?} piece {k}: s");
                assert!(
                    same(&rd_f32(&t, OUT, 2 * r), &want),
                    "{pa:?} piece {k}: pairs"
                );
                let past = t.read(S + (r * c * 4) as u32, 2).unwrap();
                assert_eq!(past, [0, 0], "{pa:?} writes past s");
            }
            stats.extend(pairs);
        }
        let p = [
            ("OP", 12),
            ("R", r as i64),
            ("C", groups as i64),
            ("INV_C", (1.0f32 / groups as f32).to_bits() as i64),
            ("EPS", eps.to_bits() as i64),
        ];
        let t = run_rows(&p, &[(X, f32_bytes(&stats))]);
        let pairs = rd_f32(&t, OUT, 2 * r);
        for parts in combine_parts(r, groups) {
            let q = groups / parts;
            let p = [
                ("OP", 12),
                ("R", r as i64),
                ("C", groups as i64),
                ("INV_C", (1.0f32 / groups as f32).to_bits() as i64),
                ("EPS", eps.to_bits() as i64),
                ("P", parts as i64),
                ("INV_Q", (1.0f32 / q as f32).to_bits() as i64),
                ("INV_P", (1.0f32 / parts as f32).to_bits() as i64),
            ];
            let got = combine_in_parts(&p, &stats, r);
            for i in 0..2 * r {
                let (a, b) = (got[i], pairs[i]);
                assert!(
                    (a - b).abs() <= 2e-6 * (b.abs() + 1.0),
                    "{p:?} [{i}]: {a} vs {b}"
                );
            }
        }
        for (gamma, beta) in [(0i64, 0i64), (1, 0), (0, 1), (1, 1)] {
            for k in 0..groups {
                let (_, bytes) = encode(&piece(k), ty);
                let (_, gb) = encode(&graw[k * c..(k + 1) * c], ty);
                let (_, bb) = encode(&braw[k * c..(k + 1) * c], ty);
                let p = [
                    ("OP", 13),
                    ("TYPE", ty),
                    ("R", r as i64),
                    ("C", c as i64),
                    ("GAMMA", gamma),
                    ("BETA", beta),
                ];
                let inputs = [
                    (X, bytes),
                    (PAIRS, f32_bytes(&pairs)),
                    (GAMMA, gb),
                    (BETA, bb),
                ];
                let t = run_kernel(
                    "rows",
                    "rows",
                    &p,
                    &rows_state(&p, &[X, PAIRS, GAMMA, BETA, OUT]),
                    &inputs,
                );
                check_formula(&p, &t);
                let got = read(&t, OUT, r * c, ty);
                if ty == 0 && c % 4 == 0 {
                    // The FP8 cast on the way out, at a few scales: each
                    // element the f32 result converted, as the cast after it.
                    let y = rd_f32(&t, OUT, r * c);
                    for (cast, fmt) in [(3i64, F8Format::E4M3FN), (4, F8Format::E5M2)] {
                        for scl in [-4i64, 0, 3] {
                            let mut pc = p.to_vec();
                            pc.push(("CAST", cast));
                            pc.push(("SCL", scl));
                            let tc = run_kernel(
                                "rows",
                                "rows",
                                &pc,
                                &rows_state(&pc, &[X, PAIRS, GAMMA, BETA, OUT2]),
                                &inputs,
                            );
                            check_formula(&pc, &tc);
                            let want: Vec<u8> = y
                                .iter()
                                .map(|&v| f8_from_f64(v as f64, scl as i32, fmt))
                                .collect();
                            assert_eq!(tc.read(OUT2, r * c).unwrap(), want, "{pc:?} piece {k}");
                            let past = tc.read(OUT2 + (r * c) as u32, 2).unwrap();
                            assert_eq!(past, [0, 0], "{pc:?} writes past its output");
                        }
                    }
                }
                for i in 0..r {
                    let v = &x[i * full..(i + 1) * full];
                    let mean = v.iter().sum::<f64>() / full as f64;
                    let var = v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / full as f64;
                    let rstd = 1.0 / (var + eps as f64).sqrt();
                    for j in 0..c {
                        let col = k * c + j;
                        let mut w = (v[col] - mean) * rstd;
                        if gamma == 1 {
                            w *= gv[col];
                        }
                        if beta == 1 {
                            w += bv[col];
                        }
                        let got = got[i * c + j];
                        let tol = if ty == 0 {
                            2e-5 * (1.0 + w.abs())
                        } else {
                            3e-3 * (1.0 + w.abs())
                        };
                        assert!(
                            (got - w).abs() <= tol,
                            "{p:?} offset {offset} piece {k} [{i}][{j}]: {got} vs {w}"
                        );
                    }
                }
            }
        }
    }
}

/// A cut softmax's statistics taking in what comes before it (WIDEN, MUL,
/// MASK): t = widen(x * MULV) + v, each step rounded as the separate op
/// (an f16 or f32 multiply, an exact widening, an f32 add), stored at
/// +12; the pairs and exponentials those of the plain statistics kernel
/// on t, bit for bit.
#[test]
fn softmax_stats_with_a_prologue() {
    const V: u32 = DATA + 0x40000;
    const T: u32 = DATA + 0x10000;
    const EXPS_AT: u32 = GAMMA;
    let mut g = rng(17);
    for &(r, c) in &[
        (18usize, 32usize),
        (7, 8),
        (5, 12),
        (1, 16),
        (13, 24),
        (6, 4),
    ] {
        for (widen, mul, mask) in [
            (1i64, 1i64, 1i64),
            (1, 0, 1),
            (1, 1, 0),
            (1, 0, 0),
            (0, 1, 1),
            (0, 0, 1),
            (0, 1, 0),
        ] {
            if widen == 1 && c < 8 {
                continue;
            }
            // A power of two and a multiplier that rounds.
            for &m in &[0.125f32, f16_value(f16_bits(0.3))] {
                if mul == 0 && m != 0.125 {
                    continue;
                }
                let raw: Vec<f32> = (0..r * c).map(|_| g.gen_range(-40.0..40.0)).collect();
                // Keys kept (0) and dropped (a large negative value).
                let v: Vec<f32> = (0..c)
                    .map(|_| {
                        if g.gen_bool(0.3) {
                            -1.0e4
                        } else {
                            g.gen_range(-0.5..0.5)
                        }
                    })
                    .collect();
                let (xv, xb) = encode(&raw, widen);
                let t: Vec<f32> = xv
                    .iter()
                    .enumerate()
                    .map(|(k, &x)| {
                        let mut a = x as f32;
                        if mul == 1 {
                            a *= m;
                            if widen == 1 {
                                a = f16_value(f16_bits(a));
                            }
                        }
                        if mask == 1 {
                            a += v[k % c];
                        }
                        a
                    })
                    .collect();
                for exps in [0i64, 1] {
                    let plain = [
                        ("OP", 8),
                        ("TYPE", 0),
                        ("R", r as i64),
                        ("C", c as i64),
                        ("EXPS", exps),
                    ];
                    let tp = run_rows(&plain, &[(X, f32_bytes(&t))]);
                    let mut p = plain.to_vec();
                    p.extend([("WIDEN", widen), ("MUL", mul), ("MASK", mask)]);
                    if mul == 1 {
                        p.push(("MULV", m.to_bits() as i64));
                    }
                    let e_at = if exps == 1 { EXPS_AT } else { 0 };
                    let v_at = if mask == 1 { V } else { 0 };
                    let tk = run_kernel(
                        "rows",
                        "rows",
                        &p,
                        &rows_state(&p, &[X, v_at, e_at, T, OUT]),
                        &[(X, xb.clone()), (V, f32_bytes(&v))],
                    );
                    check_formula(&p, &tk);
                    let bits = |a: &[f32]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&rd_f32(&tk, T, r * c)), bits(&t), "{p:?}: t");
                    assert_eq!(
                        bits(&rd_f32(&tk, OUT, 2 * r)),
                        bits(&rd_f32(&tp, OUT, 2 * r)),
                        "{p:?}: pairs"
                    );
                    if exps == 1 {
                        assert_eq!(
                            bits(&rd_f32(&tk, EXPS_AT, r * c)),
                            bits(&rd_f32(&tp, EXPS_AT, r * c)),
                            "{p:?}: exponentials"
                        );
                    }
                    for (at, n) in [(T, r * c * 4), (OUT, r * 8), (EXPS_AT, r * c * 4)] {
                        if at == EXPS_AT && exps == 0 {
                            continue;
                        }
                        let past = tk.read(at + n as u32, 2).unwrap();
                        assert_eq!(past, [0, 0], "{p:?} writes past {at:#x}");
                    }
                }
            }
        }
    }
}
