//! NaN, infinities and signed zeros through every kernel family of
//! `kernels/` (elementwise, rows, cast, gemm_amp, copy2d, fill), run on the
//! tile simulator and compared with the reference interpreter's evaluation
//! of the op the kernel implements (`ipu_reference::evaluate`):
//!
//! * NaN in, NaN out (ONNX and IEEE 754: Relu(NaN), Max/Min with a NaN
//!   operand, sums and products with NaN); inf - inf and 0 x inf give NaN,
//!   also inside the AMP;
//! * infinities keep their sign, and casts to FP8 saturate them; casts of
//!   NaN to FP8 give the reference's codes bit for bit (sign kept);
//! * exact operations (add, sub, mul, div, neg, abs, relu, copies, casts)
//!   agree bit for bit, signed zeros included, except the sign of a zero
//!   picked by max/min from (+0, -0), which the reference leaves to the
//!   host's `f32::max`; transcendentals agree within a tolerance.
//!
//! Padding the kernels may read but must not use is filled with NaN, so a
//! NaN that leaks into a result fails the test.

mod common;

use ipu_isa::kernels::elementwise_state;

use common::*;
use ipu_isa::float::{bf16_bits, bf16_value, f16_bits, f16_value};
use ipu_reference::{
    evaluate, ElementType as Ty, Fp8Format, GeluApproximation, OpKind, ReduceKind, Tensor,
};

const IN0: u32 = DATA;
const IN1: u32 = DATA + 0x10000;
const IN2: u32 = DATA + 0x20000;
const IN3: u32 = DATA + 0x30000;
const OUT: u32 = DATA + 0x40000;

/// A byte pattern that is NaN in every format (f32, f16, bf16, both FP8).
const POISON: u8 = 0xFF;

/// The f32 special values, with finite ones around them.
fn specials() -> Vec<f32> {
    f32_specials().to_vec()
}

/// How a device value must match the reference's.
#[derive(Clone, Copy, Debug)]
enum Cmp {
    /// Bit for bit (NaN: both NaN).
    Exact,
    /// Exact, but a zero's sign is free (max/min of +0 and -0).
    ExactValue,
    /// NaN, infinities and zeros as the reference; finite values within a
    /// relative tolerance (with an absolute floor for subnormals).
    Tol(f64),
}

fn check(what: &str, got: f32, want: f32, cmp: Cmp) {
    let ok = if want.is_nan() || got.is_nan() {
        want.is_nan() && got.is_nan()
    } else {
        match cmp {
            Cmp::Exact => got.to_bits() == want.to_bits(),
            Cmp::ExactValue => got == want,
            Cmp::Tol(t) => {
                if want.is_infinite() || want == 0.0 {
                    got == want
                } else {
                    let (g, w) = (got as f64, want as f64);
                    (g - w).abs() <= t * w.abs() + 1e-37
                }
            }
        }
    };
    assert!(
        ok,
        "{what}: device {got:e} ({:#x}), reference {want:e} ({:#x})",
        got.to_bits(),
        want.to_bits()
    );
}

fn reference(op: &OpKind, inputs: &[&Tensor]) -> Vec<f32> {
    evaluate(op, inputs)
        .unwrap_or_else(|e| panic!("{op:?}: {e}"))
        .to_f32_vec()
}

/// Element type 0 (f32) or 1 (f16): its reference type, bytes and values.
fn ty_of(ty: i64) -> Ty {
    if ty == 0 {
        Ty::F32
    } else {
        Ty::F16
    }
}

fn encode(v: &[f32], ty: i64) -> Vec<u8> {
    if ty == 0 {
        f32_bytes(v)
    } else {
        u16_bytes(&v.iter().map(|&x| f16_bits(x)).collect::<Vec<_>>())
    }
}

fn decode(t: &ipu_runtime::Tile, addr: u32, n: usize, ty: i64) -> Vec<f32> {
    if ty == 0 {
        rd_f32(t, addr, n)
    } else {
        rd_u16(t, addr, n).into_iter().map(f16_value).collect()
    }
}

/// `n` values of type `ty` padded with poison to whole 64-bit granules.
fn padded(v: &[f32], ty: i64) -> Vec<u8> {
    let mut b = encode(v, ty);
    b.resize(b.len().div_ceil(8) * 8, POISON);
    b
}

#[test]
fn elementwise_binary_ops_propagate_nan_and_infinity() {
    let sp = specials();
    // Every ordered pair of specials, one short of a whole granule in f32.
    let pairs: Vec<(f32, f32)> = sp
        .iter()
        .flat_map(|&x| sp.iter().map(move |&y| (x, y)))
        .take(99)
        .collect();
    let n = pairs.len();
    let ops: [(i64, OpKind, Cmp); 6] = [
        (0, OpKind::Add, Cmp::Exact),
        (1, OpKind::Sub, Cmp::Exact),
        (2, OpKind::Mul, Cmp::Exact),
        (3, OpKind::Div, Cmp::Exact),
        (4, OpKind::Max, Cmp::ExactValue),
        (5, OpKind::Min, Cmp::ExactValue),
    ];
    for ty in [0i64, 1] {
        let x: Vec<f32> = pairs.iter().map(|p| p.0).collect();
        let y: Vec<f32> = pairs.iter().map(|p| p.1).collect();
        let tx = Tensor::from_f32(vec![n], ty_of(ty), x.clone()).unwrap();
        let tyv = Tensor::from_f32(vec![n], ty_of(ty), y.clone()).unwrap();
        for (code, op, cmp) in &ops {
            let t = run_kernel(
                "elementwise",
                "elementwise",
                &[("OP", *code), ("TYPE", ty), ("N", n as i64)],
                &elementwise_state(ty, n as u64, IN0, Some(IN1), OUT),
                &[(IN0, padded(&x, ty)), (IN1, padded(&y, ty))],
            );
            let want = reference(op, &[&tx, &tyv]);
            let got = decode(&t, OUT, n, ty);
            for i in 0..n {
                let what = format!(
                    "{op:?} type {ty}: {} op {}",
                    tx.to_f32_vec()[i],
                    tyv.to_f32_vec()[i]
                );
                check(&what, got[i], want[i], *cmp);
            }
        }
    }
}

#[test]
fn elementwise_unary_ops_propagate_nan_and_infinity() {
    // Specials and a few finite values, one short of a whole f32 granule.
    let mut x = specials();
    x.extend([3.0, -0.75, 80.0, -80.0, 1e-3]);
    let n = x.len();
    let tol = |ty: i64| Cmp::Tol(if ty == 0 { 2e-6 } else { 1e-3 });
    let ops: Vec<(i64, OpKind, bool)> = vec![
        (16, OpKind::Relu, true),
        (
            17,
            OpKind::Gelu {
                approximate: GeluApproximation::None,
            },
            false,
        ),
        (18, OpKind::Exp, false),
        (19, OpKind::Tanh, false),
        (20, OpKind::Erf, false),
        (21, OpKind::Rsqrt, false),
        (22, OpKind::Sqrt, false),
        (23, OpKind::Neg, true),
        (24, OpKind::Abs, true),
        (25, OpKind::Sigmoid, false),
        (26, OpKind::Reciprocal, true),
        (27, OpKind::Log, false),
    ];
    for ty in [0i64, 1] {
        let tx = Tensor::from_f32(vec![n], ty_of(ty), x.clone()).unwrap();
        for (code, op, exact) in &ops {
            let t = run_kernel(
                "elementwise",
                "elementwise",
                &[("OP", *code), ("TYPE", ty), ("N", n as i64)],
                &elementwise_state(ty, n as u64, IN0, None, OUT),
                &[(IN0, padded(&x, ty))],
            );
            let want = reference(op, &[&tx]);
            let got = decode(&t, OUT, n, ty);
            for i in 0..n {
                let what = format!("{op:?} type {ty} of {}", tx.to_f32_vec()[i]);
                // recip is exact in f32 (one IEEE division); in f16 it is
                // computed in f32 and rounded once, as the reference does.
                let cmp = if *exact { Cmp::Exact } else { tol(ty) };
                check(&what, got[i], want[i], cmp);
            }
        }
        // Copy keeps every bit, NaN payloads included.
        let t = run_kernel(
            "elementwise",
            "elementwise",
            &[("OP", 28), ("TYPE", ty), ("N", n as i64)],
            &elementwise_state(ty, n as u64, IN0, None, OUT),
            &[(IN0, padded(&x, ty))],
        );
        let bytes = encode(&x, ty);
        assert_eq!(
            t.read(OUT, bytes.len()).unwrap(),
            &bytes[..],
            "copy type {ty}"
        );
    }
}

/// A matrix of rows holding specials, its stride padded with poison.
fn rows_matrix(rows: &[Vec<f32>], ty: i64) -> (Vec<u8>, usize) {
    let c = rows[0].len();
    let epg = if ty == 0 { 2 } else { 4 };
    let stride = c.div_ceil(epg) * epg;
    let mut b = Vec::new();
    for r in rows {
        let mut row = encode(r, ty);
        row.resize(stride * if ty == 0 { 4 } else { 2 }, POISON);
        b.extend(row);
    }
    (b, stride)
}

/// Rows of NaN and infinities, 8 elements each: whole 64-bit granules in
/// f32 and f16, as the row kernels require.
fn special_rows() -> Vec<Vec<f32>> {
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    let tail = [0.25, -1.0, 3.0];
    let rows = vec![
        vec![1.0, 2.0, -3.0, 0.5, 4.0],
        vec![1.0, nan, 2.0, 0.5, 4.0],
        vec![-nan, 1.0, 2.0, 0.5, 4.0],
        vec![1.0, 2.0, inf, 0.5, 4.0],
        vec![1.0, -inf, 2.0, 0.5, 4.0],
        vec![inf, 1.0, -inf, 0.5, 4.0],
        vec![-inf, -inf, -inf, -inf, -inf],
        vec![-2.0, -0.0, -1.0, -3.0, -4.0],
    ];
    rows.into_iter()
        .map(|mut r| {
            // The all -inf row stays all -inf.
            let t = if r.iter().all(|&v| v == -inf) {
                [-inf; 3]
            } else {
                tail
            };
            r.extend(t);
            r
        })
        .collect()
}

fn row_tensor(rows: &[Vec<f32>], ty: Ty) -> Tensor {
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    Tensor::from_f32(vec![rows.len(), rows[0].len()], ty, flat).unwrap()
}

#[test]
fn row_sums_and_maxima_propagate_nan() {
    let rows = special_rows();
    let (r, c) = (rows.len(), rows[0].len());
    for ty in [0i64, 1] {
        let (m, _) = rows_matrix(&rows, ty);
        // The reductions in f32 of the values as stored.
        let vals: Vec<Vec<f32>> = rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|&v| if ty == 0 { v } else { f16_value(f16_bits(v)) })
                    .collect()
            })
            .collect();
        let x = row_tensor(&vals, Ty::F32);
        for (op, kind, cmp) in [
            (0i64, ReduceKind::Sum, Cmp::Tol(1e-6)),
            (1, ReduceKind::Max, Cmp::ExactValue),
        ] {
            let t = run_kernel(
                "rows",
                "rows",
                &[("OP", op), ("TYPE", ty), ("R", r as i64), ("C", c as i64)],
                &[IN0, IN1, 0, 0, OUT],
                &[(IN0, m.clone())],
            );
            let want = reference(
                &OpKind::Reduce {
                    kind,
                    axes: vec![1],
                    keepdims: false,
                },
                &[&x],
            );
            let got = rd_f32(&t, OUT, r);
            for i in 0..r {
                check(
                    &format!("{kind:?} type {ty} of {:?}", vals[i]),
                    got[i],
                    want[i],
                    cmp,
                );
            }
        }
    }
}

#[test]
fn softmax_propagates_nan_and_infinity() {
    let rows = special_rows();
    let (r, c) = (rows.len(), rows[0].len());
    let (m, stride) = rows_matrix(&rows, 0);
    for (op, log) in [(3i64, false), (4, true)] {
        let t = run_kernel(
            "rows",
            "rows",
            &[("OP", op), ("R", r as i64), ("C", c as i64)],
            &[IN0, 0, 0, 0, OUT],
            &[(IN0, m.clone())],
        );
        let y = rd_f32(&t, OUT, r * stride);
        let kind = if log {
            OpKind::LogSoftmax { axis: 1 }
        } else {
            OpKind::Softmax { axis: 1 }
        };
        let want = reference(&kind, &[&row_tensor(&rows, Ty::F32)]);
        for i in 0..r {
            for j in 0..c {
                check(
                    &format!("softmax (log {log}) of {:?} [{j}]", rows[i]),
                    y[i * stride + j],
                    want[i * c + j],
                    Cmp::Tol(1e-5),
                );
            }
        }
    }
}

#[test]
fn layer_norm_propagates_nan_and_infinity() {
    let rows = special_rows();
    let (r, c) = (rows.len(), rows[0].len());
    let (m, stride) = rows_matrix(&rows, 0);
    let eps = 1e-5f32;
    let gamma: Vec<f32> = (0..stride).map(|j| 0.5 + j as f32 * 0.25).collect();
    let beta: Vec<f32> = (0..stride).map(|j| j as f32 * -0.125).collect();
    let t = run_kernel(
        "rows",
        "rows",
        &[
            ("OP", 5),
            ("R", r as i64),
            ("C", c as i64),
            ("GAMMA", 1),
            ("BETA", 1),
            ("INV_C", (1.0f32 / c as f32).to_bits() as i64),
            ("EPS", eps.to_bits() as i64),
        ],
        &[IN0, 0, IN2, IN3, OUT],
        &[(IN0, m), (IN2, f32_bytes(&gamma)), (IN3, f32_bytes(&beta))],
    );
    let y = rd_f32(&t, OUT, r * stride);
    let g = Tensor::from_f32(vec![c], Ty::F32, gamma[..c].to_vec()).unwrap();
    let b = Tensor::from_f32(vec![c], Ty::F32, beta[..c].to_vec()).unwrap();
    let op = OpKind::LayerNorm {
        axis: 1,
        epsilon: eps,
        has_scale: true,
        has_bias: true,
    };
    let want = reference(&op, &[&row_tensor(&rows, Ty::F32), &g, &b]);
    for i in 0..r {
        for j in 0..c {
            check(
                &format!("layer norm of {:?} [{j}]", rows[i]),
                y[i * stride + j],
                want[i * c + j],
                Cmp::Tol(1e-4),
            );
        }
    }
}

#[test]
fn row_vector_broadcasts_propagate_nan() {
    let sp = specials();
    let rows: Vec<Vec<f32>> = sp.chunks(5).map(|c| c.to_vec()).collect();
    let v = vec![1.0, f32::NAN, f32::NEG_INFINITY, -0.0, 2.0];
    let (r, c) = (rows.len(), v.len());
    for ty in [0i64, 1] {
        let (m, stride) = rows_matrix(&rows, ty);
        let vb = padded(&v, ty);
        let x = row_tensor(&rows, ty_of(ty));
        let tv = Tensor::from_f32(vec![c], ty_of(ty), v.clone()).unwrap();
        for (op, kind) in [(6i64, OpKind::Add), (7, OpKind::Mul)] {
            let t = run_kernel(
                "rows",
                "rows",
                &[("OP", op), ("TYPE", ty), ("R", r as i64), ("C", c as i64)],
                &[IN0, 0, IN2, 0, OUT],
                &[(IN0, m.clone()), (IN2, vb.clone())],
            );
            let want = reference(&kind, &[&x, &tv]);
            let got = decode(&t, OUT, r * stride, ty);
            for i in 0..r {
                for j in 0..c {
                    let what = format!("{kind:?} type {ty}: {} and {}", rows[i][j], v[j]);
                    check(&what, got[i * stride + j], want[i * c + j], Cmp::Exact);
                }
            }
        }
    }
}

/// The cast kernel's types: 0 f32, 1 f16, 2 bf16, 3 f8E4M3FN, 4 f8E5M2.
const CAST_TYPES: [Ty; 5] = [Ty::F32, Ty::F16, Ty::BF16, Ty::F8E4M3FN, Ty::F8E5M2];

fn fp8(ty: usize) -> Option<Fp8Format> {
    match ty {
        3 => Some(Fp8Format::E4M3FN),
        4 => Some(Fp8Format::E5M2),
        _ => None,
    }
}

/// Element bytes and the reference's bit pattern of one value of type `ty`.
fn cast_bits(v: f32, ty: usize) -> Vec<u8> {
    match ty {
        0 => v.to_le_bytes().to_vec(),
        1 => f16_bits(v).to_le_bytes().to_vec(),
        _ => bf16_bits(v).to_le_bytes().to_vec(),
    }
}

#[test]
fn casts_keep_nan_and_saturate_infinity_like_the_reference() {
    let eb = [4usize, 2, 2, 1, 1];
    let mut floats = specials();
    floats.extend([1e6, -1e6, 300.0, -0.3, 3.0, 7e-3]);
    // FP8 inputs: NaN codes of both signs, infinities (E5M2), the largest
    // values, zeros and subnormals.
    let codes: [&[u8]; 2] = [
        &[
            0x7F, 0xFF, 0x7E, 0xFE, 0x00, 0x80, 0x01, 0x81, 0x38, 0xB8, 0x77, 0x08, 0x7F, 0x40,
            0xC4, 0x3F,
        ],
        &[
            0x7C, 0xFC, 0x7D, 0xFE, 0x7F, 0x7B, 0xFB, 0x00, 0x80, 0x01, 0x3C, 0xBC, 0x7E, 0x42,
            0x04, 0xC0,
        ],
    ];
    let n = 16;
    for from in 0..5usize {
        for to in 0..5usize {
            let (s_in, s_out) = (if from >= 3 { -1 } else { 0 }, if to >= 3 { 2 } else { 0 });
            let (input, x) = match fp8(from) {
                Some(f) => {
                    let c = codes[from - 3];
                    (
                        c.to_vec(),
                        Tensor::from_fp8_codes(vec![n], f, c, s_in).unwrap(),
                    )
                }
                None => {
                    let x = Tensor::from_f32(vec![n], CAST_TYPES[from], floats.clone()).unwrap();
                    let bytes: Vec<u8> = x
                        .to_f32_vec()
                        .iter()
                        .flat_map(|&v| cast_bits(v, from))
                        .collect();
                    (bytes, x)
                }
            };
            let state_scale = if from >= 3 { s_in } else { s_out };
            let t = run_cast((from, to, n), (IN0, OUT), input, (state_scale, s_out));
            let op = OpKind::Cast {
                to: CAST_TYPES[to],
                saturate: true,
                scale: if to >= 3 { s_out } else { 0 },
            };
            let y = evaluate(&op, &[&x]).unwrap_or_else(|e| panic!("{op:?}: {e}"));
            let got = t.read(OUT, n * eb[to]).unwrap();
            let xv = x.to_f32_vec();
            let yv = y.to_f32_vec();
            let ycodes = y.fp8_codes();
            for i in 0..n {
                let g = &got[i * eb[to]..(i + 1) * eb[to]];
                let what = format!("cast {from} -> {to} of {}", xv[i]);
                match fp8(to) {
                    // FP8 codes bit for bit; infinities saturate. A NaN result
                    // has the code the reference's encoder gives the input
                    // (its sign kept: the result tensor holds values, and a
                    // NaN value has no code of its own).
                    Some(f) => {
                        let want = match (&ycodes, yv[i].is_nan()) {
                            (_, true) => f.encode_scaled(xv[i], true, s_out),
                            (Some(c), false) => c[i],
                            (None, false) => panic!("{what}: no FP8 codes"),
                        };
                        assert_eq!(g[0], want, "{what}: reference {}", yv[i]);
                    }
                    None => {
                        let v = match to {
                            0 => f32::from_le_bytes([g[0], g[1], g[2], g[3]]),
                            1 => f16_value(u16::from_le_bytes([g[0], g[1]])),
                            _ => bf16_value(u16::from_le_bytes([g[0], g[1]])),
                        };
                        check(&what, v, yv[i], Cmp::Exact);
                    }
                }
            }
        }
    }
}

/// GEMM TYPE (0 f16 -> f32, 1 f16 -> f16, 2 E4M3FN -> f16, 3 E5M2 -> f16)
/// on M x K x N with NaN and infinities at chosen places, against the
/// reference's MatMul of the exact values.
fn gemm_with_specials(ty: i64) {
    let (m, k, n) = (8usize, 32usize, 32usize);
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    let f8 = match ty {
        2 => Some(Fp8Format::E4M3FN),
        3 => Some(Fp8Format::E5M2),
        _ => None,
    };
    // Small finite values, exact in every input format.
    let base = |i: usize, s: usize| ((i * 7 + s * 3) % 9) as f32 * 0.125 - 0.5;
    let mut a: Vec<f32> = (0..m * k).map(|i| base(i, 1)).collect();
    let mut b: Vec<f32> = (0..k * n).map(|i| base(i, 2)).collect();
    let has_inf = ty != 2;
    a[k + 3] = nan; // row 1: all NaN
    a[4 * k + 13] = 0.0;
    b[11 * n + 20] = -nan; // column 20: all NaN
    if has_inf {
        a[2 * k + 5] = inf; // row 2: +-inf by B[5]'s sign, NaN where it is 0
        b[5 * n] = 0.0;
        b[5 * n + 1] = -0.5;
        b[5 * n + 2] = 0.25;
        a[3 * k + 7] = -inf; // row 3: inf - inf where B[7] and B[9] are positive
        a[3 * k + 9] = inf;
        for j in 0..16 {
            b[7 * n + j] = 0.5;
            b[9 * n + j] = 0.25;
        }
        b[13 * n + 25] = inf; // column 25: inf x A[.][13], NaN at row 4 (0)
    }
    let enc = |v: f32| -> Vec<u8> {
        match f8 {
            // Not saturating, so that E5M2 keeps its infinities.
            Some(f) => vec![f.encode_scaled(v, false, 0)],
            None => f16_bits(v).to_le_bytes().to_vec(),
        }
    };
    let ab: Vec<u8> = a.iter().flat_map(|&v| enc(v)).collect();
    // B blocked: [n/16][k][16].
    let mut bb = Vec::new();
    for nb in 0..n / 16 {
        for kk in 0..k {
            for c in 0..16 {
                bb.extend(enc(b[kk * n + nb * 16 + c]));
            }
        }
    }
    // The slack after A and B (which the kernel may read) holds NaN.
    let b_addr = IN0 + ((ab.len() as u32 + 64 + 15) & !15);
    let c_addr = b_addr + ((bb.len() as u32 + 8 * m as u32 + 64 + 15) & !15);
    let mut a_region = ab.clone();
    a_region.resize((b_addr - IN0) as usize, POISON);
    let mut b_region = bb.clone();
    b_region.resize((c_addr - b_addr) as usize, POISON);
    let pb = if ty == 0 { 4 } else { 2 };
    let t = run_kernel(
        "gemm_amp",
        "gemm_amp",
        &[
            ("TYPE", ty),
            ("M", m as i64),
            ("K", k as i64),
            ("N", n as i64),
        ],
        &[IN0, b_addr, c_addr, 0],
        &[
            (IN0, a_region),
            (b_addr, b_region),
            (c_addr, vec![POISON; m * n * pb + 8]),
        ],
    );
    // The reference on the values the device holds.
    let dec = |bytes: &[u8]| -> Vec<f32> {
        match f8 {
            Some(f) => bytes.iter().map(|&q| f.decode(q)).collect(),
            None => bytes
                .chunks(2)
                .map(|c| f16_value(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        }
    };
    let (av, bv) = (dec(&ab), {
        let enc_b: Vec<u8> = b.iter().flat_map(|&v| enc(v)).collect();
        dec(&enc_b)
    });
    let ta = Tensor::from_f32(vec![m, k], Ty::F32, av.clone()).unwrap();
    let tb = Tensor::from_f32(vec![k, n], Ty::F32, bv.clone()).unwrap();
    let want = reference(&OpKind::MatMul, &[&ta, &tb]);
    let out = t.read(c_addr, m * n * pb).unwrap();
    let mut specials_seen = [0usize; 3];
    for row in 0..m {
        for col in 0..n {
            // C is M x N row-major.
            let idx = row * n + col;
            let got = if pb == 4 {
                f32::from_le_bytes(out[4 * idx..4 * idx + 4].try_into().unwrap())
            } else {
                f16_value(u16::from_le_bytes([out[2 * idx], out[2 * idx + 1]]))
            };
            let w = want[row * n + col];
            let w = if pb == 2 { f16_value(f16_bits(w)) } else { w };
            let mag: f32 = (0..k)
                .map(|kk| (av[row * k + kk] * bv[kk * n + col]).abs())
                .sum();
            let what = format!("gemm TYPE {ty}: C[{row}][{col}]");
            if w.is_nan() || w.is_infinite() || got.is_nan() || got.is_infinite() {
                check(&what, got, w, Cmp::Exact);
                specials_seen[if w.is_nan() {
                    0
                } else if w > 0.0 {
                    1
                } else {
                    2
                }] += 1;
            } else {
                let tol = if pb == 2 { 2e-3 } else { 1e-6 } * (1.0 + mag);
                assert!(
                    (got - w).abs() <= tol,
                    "{what}: device {got}, reference {w}"
                );
            }
        }
    }
    // The cases the data was built for occurred: NaN rows and columns, and
    // (with infinities) both signs of infinity and 0 x inf.
    assert!(
        specials_seen[0] >= n + m - 1,
        "TYPE {ty}: {specials_seen:?}"
    );
    if has_inf {
        assert!(
            specials_seen[1] > 0 && specials_seen[2] > 0,
            "TYPE {ty}: {specials_seen:?}"
        );
    }
}

#[test]
fn gemm_propagates_nan_and_infinity_through_the_amp() {
    for ty in 0..4 {
        gemm_with_specials(ty);
    }
}

/// The GEMM's blocked output to row-major: every bit moves, NaN payloads
/// and signed zeros included; the values are the reference's transpose.
#[test]
fn copy2d_moves_nan_payloads_bit_for_bit() {
    let (m, n) = (5usize, 32usize);
    let patterns = [
        0x7C01u16, 0xFE00, 0x7E55, 0x7C00, 0xFC00, 0x8000, 0x0000, 0x3C00, 0x0001,
    ];
    let blocked: Vec<u16> = (0..m * n).map(|i| patterns[i % patterns.len()]).collect();
    let out = copy2d_gemm_to_rows(m, n, &blocked, (IN0, OUT));
    let x = Tensor::from_f32(
        vec![n / 16, m, 16],
        Ty::F16,
        blocked.iter().map(|&h| f16_value(h)).collect(),
    )
    .unwrap();
    let want = reference(
        &OpKind::Transpose {
            perm: vec![1, 0, 2],
        },
        &[&x],
    );
    for row in 0..m {
        for col in 0..n {
            let src = blocked[(col / 16) * m * 16 + row * 16 + col % 16];
            assert_eq!(out[row * n + col], src, "[{row}][{col}]");
            check(
                &format!("copy2d [{row}][{col}]"),
                f16_value(out[row * n + col]),
                want[row * n + col],
                Cmp::Exact,
            );
        }
    }
}

/// Fill with a NaN or infinity pattern writes exactly that pattern: the
/// reference's broadcast of the scalar.
#[test]
fn fill_writes_nan_and_infinity_patterns() {
    for pattern in [0x7FC0_0001u32, 0xFFC0_0000, 0x7F80_0000, 0xFF80_0000] {
        let g = 13usize;
        let t = run_kernel(
            "fill",
            "fill",
            &[("G", g as i64), ("VALUE", pattern as i64)],
            &[OUT],
            &[(OUT, vec![0; g * 8])],
        );
        let s = Tensor::from_f32(vec![], Ty::F32, vec![f32::from_bits(pattern)]).unwrap();
        let want = reference(&OpKind::Broadcast { shape: vec![2 * g] }, &[&s]);
        assert_eq!(want.len(), 2 * g);
        for (i, &w) in want.iter().enumerate() {
            let got = rd32(&t, OUT + 4 * i as u32);
            assert_eq!(got, pattern, "word {i}");
            check(
                &format!("fill {pattern:#x} [{i}]"),
                f32::from_bits(got),
                w,
                Cmp::Exact,
            );
        }
    }
}
