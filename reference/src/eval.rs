//! The reference evaluator: one op at a time, f32 compute with f64
//! accumulation, results rounded exactly to the result element type.

use rayon::prelude::*;

use crate::dtype::ElementType;
use crate::error::EvalError;
use crate::float8::{round_slice, Fp8Format};
use crate::ops::{infer_type, GeluApproximation, OpKind, PadMode, ReduceKind, ScatterReduction};
use crate::tensor::{f32_to_i64, Tensor, TensorData, TensorType};

/// Work (elements) above which loops are split over rayon's pool.
const PAR_MIN: usize = 1 << 14;

/// Evaluate `op` on `inputs`. Operand count, shapes and types are checked
/// with [`infer_type`] first; every failure is an [`EvalError`].
pub fn evaluate(op: &OpKind, inputs: &[&Tensor]) -> Result<Tensor, EvalError> {
    let types: Vec<TensorType> = inputs.iter().map(|t| t.ty()).collect();
    let out = infer_type(op, &types)?;
    let name = op.name();
    crate::limits::check_tensor_size(name, &out.shape, out.dtype)?;
    let x = inputs.first().copied();
    let result = match op {
        OpKind::Constant(t) => return Ok(t.clone()),
        OpKind::MatMul => matmul(inputs[0], inputs[1], &out),
        OpKind::Pow => pow(inputs[0], inputs[1], &out),
        o if o.is_elementwise_binary() => binary(o, inputs[0], inputs[1], &out)?,
        o if o.is_elementwise_unary() => unary(o, inputs[0], &out),
        OpKind::Softmax { axis } => softmax(inputs[0], *axis, false, &out),
        OpKind::LogSoftmax { axis } => softmax(inputs[0], *axis, true, &out),
        OpKind::LayerNorm {
            axis,
            epsilon,
            has_scale,
            has_bias,
        } => {
            let scale = has_scale.then(|| inputs[1]);
            let bias = has_bias.then(|| inputs[1 + *has_scale as usize]);
            layer_norm(inputs[0], *axis, *epsilon, scale, bias, &out)
        }
        OpKind::Reduce { kind, axes, .. } => reduce(inputs[0], *kind, axes, &out),
        OpKind::ArgMax {
            axis,
            select_last_index,
            ..
        } => arg_extreme(inputs[0], *axis, true, *select_last_index, &out),
        OpKind::ArgMin {
            axis,
            select_last_index,
            ..
        } => arg_extreme(inputs[0], *axis, false, *select_last_index, &out),
        OpKind::CumSum {
            axis,
            exclusive,
            reverse,
        } => cumulative(inputs[0], *axis, *exclusive, *reverse, false),
        OpKind::CumProd {
            axis,
            exclusive,
            reverse,
        } => cumulative(inputs[0], *axis, *exclusive, *reverse, true),
        OpKind::Pad {
            low, mode, value, ..
        } => pad(inputs[0], low, *mode, *value, &out),
        OpKind::GatherElements { axis } => gather_elements(inputs[0], inputs[1], *axis)?,
        OpKind::TopK { axis, k, largest } => topk(inputs[0], *axis, *k, *largest, &out),
        OpKind::ScatterElements { axis, reduction } => {
            scatter_elements(inputs[0], inputs[1], inputs[2], *axis, *reduction)?
        }
        OpKind::ScatterNd { reduction } => scatter_nd(inputs[0], inputs[1], inputs[2], *reduction)?,
        OpKind::Transpose { perm } => {
            let x = inputs[0];
            let st = contiguous_strides(x.shape());
            let strides: Vec<isize> = perm.iter().map(|&p| st[p] as isize).collect();
            let data = strided(x.data(), &out.shape, &strides, 0);
            Tensor::raw(out.shape, out.dtype, data).with_scale(x.fp8_scale())
        }
        OpKind::Reshape { .. } => {
            let x = inputs[0];
            Tensor::raw(out.shape, out.dtype, x.data().clone()).with_scale(x.fp8_scale())
        }
        OpKind::Broadcast { shape } => {
            let x = inputs[0];
            let strides = broadcast_strides(x.shape(), shape);
            let data = strided(x.data(), &out.shape, &strides, 0);
            Tensor::raw(out.shape, out.dtype, data).with_scale(x.fp8_scale())
        }
        OpKind::Slice { starts, steps, .. } => {
            let x = inputs[0];
            let st = contiguous_strides(x.shape());
            let mut base = 0isize;
            let mut strides = Vec::with_capacity(st.len());
            for i in 0..st.len() {
                if out.shape[i] > 0 {
                    base += starts[i] as isize * st[i] as isize;
                }
                // A step only matters when more than one element is taken
                // (then |step| < dim, so this cannot overflow).
                strides.push(if out.shape[i] > 1 {
                    steps[i] as isize * st[i] as isize
                } else {
                    0
                });
            }
            let data = if out.numel() == 0 {
                empty_like(x.data())
            } else {
                strided(x.data(), &out.shape, &strides, base)
            };
            Tensor::raw(out.shape, out.dtype, data).with_scale(x.fp8_scale())
        }
        OpKind::Concat { axis } => concat(inputs, *axis, &out),
        OpKind::Gather { axis } => gather(inputs[0], inputs[1], *axis, &out)?,
        OpKind::Select => select(inputs[0], inputs[1], inputs[2], &out),
        OpKind::Cast {
            to,
            saturate,
            scale,
        } => cast(inputs[0], *to, *saturate, *scale),
        OpKind::Conv { .. }
        | OpKind::ConvTranspose { .. }
        | OpKind::MaxPool { .. }
        | OpKind::AvgPool { .. } => crate::window::evaluate(op, inputs, &out)?,
        OpKind::Resize { .. } => crate::resize::evaluate_op(op, inputs[0], &out)?,
        _ => {
            return Err(EvalError::attr(
                name,
                format!(
                    "no evaluator for {} operand(s)",
                    x.map_or(0, |_| inputs.len())
                ),
            ))
        }
    };
    Ok(result)
}

// ---------------------------------------------------------------- helpers

pub(crate) fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Strides (in elements of `shape`'s contiguous layout) to read `shape`
/// broadcast to `out` (0 along broadcast dims).
fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<isize> {
    let st = contiguous_strides(shape);
    let off = out.len() - shape.len();
    (0..out.len())
        .map(|d| {
            if d < off || (shape[d - off] == 1 && out[d] != 1) {
                0
            } else {
                st[d - off] as isize
            }
        })
        .collect()
}

fn empty_like(d: &TensorData) -> TensorData {
    match d {
        TensorData::F32(_) => TensorData::F32(vec![]),
        TensorData::I64(_) => TensorData::I64(vec![]),
    }
}

/// Offset of row `row` (all dims but the last) under `strides`.
#[inline]
fn row_offset(shape: &[usize], strides: &[isize], mut row: usize) -> isize {
    let mut off = 0isize;
    for d in (0..shape.len().saturating_sub(1)).rev() {
        let i = row % shape[d];
        row /= shape[d];
        off += i as isize * strides[d];
    }
    off
}

/// Run `body(row_index, row)` over the rows (last dim) of `out`, in
/// parallel when large.
fn for_rows<T: Send>(out: &mut [T], inner: usize, body: impl Fn(usize, &mut [T]) + Sync + Send) {
    let inner = inner.max(1);
    if out.len() >= PAR_MIN {
        let min_rows = (4096 / inner).max(1);
        out.par_chunks_mut(inner)
            .with_min_len(min_rows)
            .enumerate()
            .for_each(|(r, c)| body(r, c));
    } else {
        out.chunks_mut(inner)
            .enumerate()
            .for_each(|(r, c)| body(r, c));
    }
}

/// Generic strided gather: `out[i] = src[base + sum_d i_d * strides[d]]`.
fn strided_vec<T: Copy + Send + Sync + Default>(
    src: &[T],
    shape: &[usize],
    strides: &[isize],
    base: isize,
) -> Vec<T> {
    let n: usize = shape.iter().product();
    let mut out = vec![T::default(); n];
    if n == 0 {
        return out;
    }
    let rank = shape.len();
    if rank == 0 {
        out[0] = src[base as usize];
        return out;
    }
    let inner = shape[rank - 1];
    let is = strides[rank - 1];
    for_rows(&mut out, inner, |row, chunk| {
        let off = base + row_offset(shape, strides, row);
        if is == 1 {
            let s = off as usize;
            chunk.copy_from_slice(&src[s..s + chunk.len()]);
        } else {
            for (j, o) in chunk.iter_mut().enumerate() {
                *o = src[(off + j as isize * is) as usize];
            }
        }
    });
    out
}

fn strided(src: &TensorData, shape: &[usize], strides: &[isize], base: isize) -> TensorData {
    match src {
        TensorData::F32(v) => TensorData::F32(strided_vec(v, shape, strides, base)),
        TensorData::I64(v) => TensorData::I64(strided_vec(v, shape, strides, base)),
    }
}

/// Elementwise map of two broadcast operands.
fn map2<A, B, R>(
    a: &[A],
    sa: &[usize],
    b: &[B],
    sb: &[usize],
    out: &[usize],
    f: impl Fn(A, B) -> R + Sync + Send,
) -> Vec<R>
where
    A: Copy + Sync,
    B: Copy + Sync,
    R: Copy + Send + Default,
{
    let n: usize = out.iter().product();
    let mut res = vec![R::default(); n];
    if n == 0 {
        return res;
    }
    if sa == out && sb == out {
        if n >= PAR_MIN {
            res.par_iter_mut()
                .with_min_len(4096)
                .zip(a.par_iter().zip(b.par_iter()))
                .for_each(|(o, (&x, &y))| *o = f(x, y));
        } else {
            for ((o, &x), &y) in res.iter_mut().zip(a).zip(b) {
                *o = f(x, y);
            }
        }
        return res;
    }
    let ra = broadcast_strides(sa, out);
    let rb = broadcast_strides(sb, out);
    let rank = out.len();
    let inner = if rank == 0 { 1 } else { out[rank - 1] };
    let (ia, ib) = if rank == 0 {
        (0, 0)
    } else {
        (ra[rank - 1], rb[rank - 1])
    };
    for_rows(&mut res, inner, |row, chunk| {
        let oa = row_offset(out, &ra, row);
        let ob = row_offset(out, &rb, row);
        for (j, o) in chunk.iter_mut().enumerate() {
            let j = j as isize;
            *o = f(a[(oa + j * ia) as usize], b[(ob + j * ib) as usize]);
        }
    });
    res
}

fn map1<A: Copy + Sync, R: Copy + Send + Default>(
    a: &[A],
    f: impl Fn(A) -> R + Sync + Send,
) -> Vec<R> {
    if a.len() >= PAR_MIN {
        a.par_iter().with_min_len(4096).map(|&x| f(x)).collect()
    } else {
        a.iter().map(|&x| f(x)).collect()
    }
}

fn float_tensor(shape: Vec<usize>, dtype: ElementType, mut v: Vec<f32>) -> Tensor {
    round_slice(&mut v, dtype);
    Tensor::raw(shape, dtype, TensorData::F32(v))
}

fn int_tensor(shape: Vec<usize>, dtype: ElementType, mut v: Vec<i64>) -> Tensor {
    if !matches!(dtype, ElementType::I64 | ElementType::U64) {
        v.iter_mut().for_each(|x| *x = dtype.wrap_int(*x));
    }
    Tensor::raw(shape, dtype, TensorData::I64(v))
}

#[inline]
fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        a.max(b)
    }
}

#[inline]
fn fmin(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        a.min(b)
    }
}

// ------------------------------------------------------------ elementwise

fn binary(op: &OpKind, a: &Tensor, b: &Tensor, out: &TensorType) -> Result<Tensor, EvalError> {
    let (sa, sb, so) = (a.shape(), b.shape(), &out.shape[..]);
    let shape = out.shape.clone();
    match (a.data(), b.data()) {
        (TensorData::F32(x), TensorData::F32(y)) => {
            let cmp = |f: fn(f32, f32) -> bool| {
                let v = map2(x, sa, y, sb, so, move |p, q| f(p, q) as i64);
                Tensor::raw(shape.clone(), ElementType::I1, TensorData::I64(v))
            };
            let r: Vec<f32> = match op {
                OpKind::Add => map2(x, sa, y, sb, so, |p, q| p + q),
                OpKind::Sub => map2(x, sa, y, sb, so, |p, q| p - q),
                OpKind::Mul => map2(x, sa, y, sb, so, |p, q| p * q),
                OpKind::Div => map2(x, sa, y, sb, so, |p, q| p / q),
                OpKind::Max => map2(x, sa, y, sb, so, fmax),
                OpKind::Min => map2(x, sa, y, sb, so, fmin),
                OpKind::Mod { fmod: true } => map2(x, sa, y, sb, so, |p, q| p % q),
                OpKind::Mod { fmod: false } => map2(x, sa, y, sb, so, |p, q| {
                    let r = p % q;
                    if r != 0.0 && (r < 0.0) != (q < 0.0) {
                        r + q
                    } else {
                        r
                    }
                }),
                OpKind::Equal => return Ok(cmp(|p, q| p == q)),
                OpKind::Less => return Ok(cmp(|p, q| p < q)),
                OpKind::Greater => return Ok(cmp(|p, q| p > q)),
                _ => return Err(EvalError::ty(op.name(), a.dtype(), "")),
            };
            Ok(float_tensor(shape, out.dtype, r))
        }
        (TensorData::I64(x), TensorData::I64(y)) => {
            let unsigned = matches!(
                a.dtype(),
                ElementType::U64 | ElementType::U32 | ElementType::U16 | ElementType::U8
            );
            let r: Vec<i64> = match op {
                OpKind::Add => map2(x, sa, y, sb, so, i64::wrapping_add),
                OpKind::Sub => map2(x, sa, y, sb, so, i64::wrapping_sub),
                OpKind::Mul => map2(x, sa, y, sb, so, i64::wrapping_mul),
                OpKind::Div => {
                    if y.contains(&0) {
                        return Err(EvalError::DivisionByZero { op: op.name() });
                    }
                    if a.dtype() == ElementType::U64 {
                        map2(x, sa, y, sb, so, |p, q| ((p as u64) / (q as u64)) as i64)
                    } else {
                        map2(x, sa, y, sb, so, i64::wrapping_div)
                    }
                }
                OpKind::Mod { fmod } => {
                    if y.contains(&0) {
                        return Err(EvalError::DivisionByZero { op: op.name() });
                    }
                    if a.dtype() == ElementType::U64 {
                        map2(x, sa, y, sb, so, |p, q| ((p as u64) % (q as u64)) as i64)
                    } else if *fmod {
                        map2(x, sa, y, sb, so, i64::wrapping_rem)
                    } else {
                        map2(x, sa, y, sb, so, |p, q| {
                            let r = p.wrapping_rem(q);
                            if r != 0 && (r < 0) != (q < 0) {
                                r + q
                            } else {
                                r
                            }
                        })
                    }
                }
                OpKind::Max if a.dtype() == ElementType::U64 => {
                    map2(x, sa, y, sb, so, |p, q| (p as u64).max(q as u64) as i64)
                }
                OpKind::Min if a.dtype() == ElementType::U64 => {
                    map2(x, sa, y, sb, so, |p, q| (p as u64).min(q as u64) as i64)
                }
                OpKind::Max => map2(x, sa, y, sb, so, i64::max),
                OpKind::Min => map2(x, sa, y, sb, so, i64::min),
                OpKind::Equal => map2(x, sa, y, sb, so, |p, q| (p == q) as i64),
                OpKind::Less if unsigned => {
                    map2(x, sa, y, sb, so, |p, q| ((p as u64) < (q as u64)) as i64)
                }
                OpKind::Greater if unsigned => {
                    map2(x, sa, y, sb, so, |p, q| ((p as u64) > (q as u64)) as i64)
                }
                OpKind::Less => map2(x, sa, y, sb, so, |p, q| (p < q) as i64),
                OpKind::Greater => map2(x, sa, y, sb, so, |p, q| (p > q) as i64),
                OpKind::And => map2(x, sa, y, sb, so, |p, q| (p != 0 && q != 0) as i64),
                OpKind::Or => map2(x, sa, y, sb, so, |p, q| (p != 0 || q != 0) as i64),
                _ => return Err(EvalError::ty(op.name(), a.dtype(), "")),
            };
            Ok(int_tensor(shape, out.dtype, r))
        }
        _ => Err(EvalError::ty(op.name(), b.dtype(), "mixed operand storage")),
    }
}

fn int_pow(base: i64, exp: i64) -> i64 {
    if exp < 0 {
        return match base {
            1 => 1,
            -1 => {
                if exp % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    base.wrapping_pow(exp.min(u32::MAX as i64) as u32)
}

fn pow(a: &Tensor, b: &Tensor, out: &TensorType) -> Tensor {
    let (sa, sb, so) = (a.shape(), b.shape(), &out.shape[..]);
    match a.data() {
        TensorData::F32(x) => {
            let y = b.to_f32_vec();
            let r = map2(x, sa, &y, sb, so, |p, q| (p as f64).powf(q as f64) as f32);
            float_tensor(out.shape.clone(), out.dtype, r)
        }
        TensorData::I64(x) => {
            let r = match b.data() {
                TensorData::I64(y) => map2(x, sa, y, sb, so, int_pow),
                TensorData::F32(y) => map2(x, sa, y, sb, so, |p, q| {
                    f32_to_i64((p as f64).powf(q as f64) as f32)
                }),
            };
            int_tensor(out.shape.clone(), out.dtype, r)
        }
    }
}

fn erf(x: f64) -> f64 {
    libm::erf(x)
}

fn unary(op: &OpKind, x: &Tensor, out: &TensorType) -> Tensor {
    let shape = out.shape.clone();
    match x.data() {
        TensorData::F32(v) => {
            let f: fn(f32) -> f32 = match op {
                OpKind::Neg => |a| -a,
                OpKind::Abs => f32::abs,
                OpKind::Exp => |a| (a as f64).exp() as f32,
                OpKind::Log => |a| (a as f64).ln() as f32,
                OpKind::Sqrt => |a| (a as f64).sqrt() as f32,
                OpKind::Rsqrt => |a| (1.0 / (a as f64).sqrt()) as f32,
                OpKind::Reciprocal => |a| 1.0 / a,
                OpKind::Tanh => |a| (a as f64).tanh() as f32,
                OpKind::Erf => |a| erf(a as f64) as f32,
                OpKind::Sigmoid => |a| (1.0 / (1.0 + (-(a as f64)).exp())) as f32,
                OpKind::Sin => |a| (a as f64).sin() as f32,
                OpKind::Cos => |a| (a as f64).cos() as f32,
                OpKind::Relu => |a| if a < 0.0 { 0.0 } else { a },
                OpKind::Floor => f32::floor,
                OpKind::Ceil => f32::ceil,
                OpKind::Round => f32::round_ties_even,
                OpKind::Gelu {
                    approximate: GeluApproximation::None,
                } => |a| {
                    let x = a as f64;
                    (0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2))) as f32
                },
                OpKind::Gelu {
                    approximate: GeluApproximation::Tanh,
                } => |a| {
                    let x = a as f64;
                    let c = (2.0 / std::f64::consts::PI).sqrt();
                    (0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())) as f32
                },
                _ => |a| a,
            };
            float_tensor(shape, out.dtype, map1(v, f))
        }
        TensorData::I64(v) => {
            let f: fn(i64) -> i64 = match op {
                OpKind::Neg => i64::wrapping_neg,
                OpKind::Abs => i64::wrapping_abs,
                OpKind::Relu => |a| a.max(0),
                OpKind::Not => |a| (a == 0) as i64,
                _ => |a| a,
            };
            let r = if matches!(op, OpKind::Abs | OpKind::Relu)
                && matches!(
                    x.dtype(),
                    ElementType::U8 | ElementType::U16 | ElementType::U32 | ElementType::U64
                ) {
                v.clone()
            } else {
                map1(v, f)
            };
            int_tensor(shape, out.dtype, r)
        }
    }
}

// --------------------------------------------------------------- matmul

/// Output rows per parallel task.
const MM_ROWS: usize = 16;
/// Register tile: rows x columns of f64 accumulators.
const MR: usize = 4;
const NR: usize = 8;

/// `out[r, j] = sum_k a[r, k] * b[k, j]` for a block of rows of one matrix
/// product. f64 accumulation in increasing k order (products of f32 values
/// are exact in f64, so the result equals the sequential f64 sum), rounded
/// once to f32. A is packed per 4-row group, B per 8-column panel, and a
/// 4x8 tile of accumulators stays in registers.
#[inline(always)]
fn gemm_rows_body<const FMA: bool>(a: &[f32], b: &[f32], out: &mut [f32], k: usize, n: usize) {
    let rows = out.len() / n.max(1);
    let groups = rows.div_ceil(MR);
    // apack[g][kk * MR + r] = a[g * MR + r, kk] (0 for missing rows).
    let mut apack = vec![0f64; groups * k * MR];
    for g in 0..groups {
        for r in 0..MR.min(rows - g * MR) {
            let src = &a[(g * MR + r) * k..(g * MR + r + 1) * k];
            let dst = &mut apack[g * k * MR..(g + 1) * k * MR];
            for (kk, &v) in src.iter().enumerate() {
                dst[kk * MR + r] = v as f64;
            }
        }
    }
    let mut bpanel = vec![0f64; k * NR];
    let full = n - n % NR;
    for j0 in (0..full).step_by(NR) {
        for kk in 0..k {
            let src = &b[kk * n + j0..kk * n + j0 + NR];
            for (d, &v) in bpanel[kk * NR..kk * NR + NR].iter_mut().zip(src) {
                *d = v as f64;
            }
        }
        for g in 0..groups {
            let ap = &apack[g * k * MR..(g + 1) * k * MR];
            let mut c = [[0f64; NR]; MR];
            for (ak, bk) in ap.chunks_exact(MR).zip(bpanel.chunks_exact(NR)) {
                for r in 0..MR {
                    let av = ak[r];
                    for j in 0..NR {
                        // The f64 product of two f32 values is exact, so a
                        // fused multiply-add rounds exactly like mul + add.
                        c[r][j] = if FMA {
                            av.mul_add(bk[j], c[r][j])
                        } else {
                            c[r][j] + av * bk[j]
                        };
                    }
                }
            }
            for (r, cr) in c.iter().enumerate().take(rows - g * MR) {
                let row = g * MR + r;
                for (o, &v) in out[row * n + j0..row * n + j0 + NR].iter_mut().zip(cr) {
                    *o = v as f32;
                }
            }
        }
    }
    // Remaining columns.
    for row in 0..rows {
        let ar = &a[row * k..(row + 1) * k];
        for j in full..n {
            let mut s = 0f64;
            for (kk, &av) in ar.iter().enumerate() {
                s += av as f64 * b[kk * n + j] as f64;
            }
            out[row * n + j] = s as f32;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
/// # Safety
/// The CPU must support AVX2 and FMA.
unsafe fn gemm_rows_avx2_fma(a: &[f32], b: &[f32], out: &mut [f32], k: usize, n: usize) {
    gemm_rows_body::<true>(a, b, out, k, n)
}

fn gemm_rows(a: &[f32], b: &[f32], out: &mut [f32], k: usize, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            unsafe { gemm_rows_avx2_fma(a, b, out, k, n) };
            return;
        }
    }
    gemm_rows_body::<false>(a, b, out, k, n)
}

/// A matmul's operands as batches of matrices, a of M x K and b of K x N
/// (a vector a read as one row, b as one column), their batch dimensions
/// broadcast.
struct MatmulDims {
    m: usize,
    k: usize,
    n: usize,
    batch: Vec<usize>,
    stra: Vec<isize>,
    strb: Vec<isize>,
}

impl MatmulDims {
    fn of(a: &Tensor, b: &Tensor) -> MatmulDims {
        let sa: Vec<usize> = if a.rank() == 1 {
            vec![1, a.shape()[0]]
        } else {
            a.shape().to_vec()
        };
        let sb: Vec<usize> = if b.rank() == 1 {
            vec![b.shape()[0], 1]
        } else {
            b.shape().to_vec()
        };
        let (m, k) = (sa[sa.len() - 2], sa[sa.len() - 1]);
        let n = sb[sb.len() - 1];
        let (ba, bb) = (&sa[..sa.len() - 2], &sb[..sb.len() - 2]);
        let batch = crate::ops::broadcast_shapes(ba, bb).unwrap_or_default();
        let stra = broadcast_strides(ba, &batch);
        let strb = broadcast_strides(bb, &batch);
        MatmulDims {
            m,
            k,
            n,
            batch,
            stra,
            strb,
        }
    }

    /// The result's matrices (the batch's elements).
    fn matrices(&self) -> usize {
        self.batch.iter().product()
    }

    /// The first elements of result matrix `bi`'s a and b matrices.
    fn starts(&self, bi: usize) -> (usize, usize) {
        let (mut oa, mut ob, mut r) = (0isize, 0isize, bi);
        for d in (0..self.batch.len()).rev() {
            let i = r % self.batch[d];
            r /= self.batch[d];
            oa += i as isize * self.stra[d];
            ob += i as isize * self.strb[d];
        }
        (oa as usize * self.m * self.k, ob as usize * self.k * self.n)
    }
}

fn matmul(a: &Tensor, b: &Tensor, out: &TensorType) -> Tensor {
    if !out.dtype.is_float() {
        return matmul_int(a, b, out);
    }
    let av = a.to_f32_vec();
    let bv = b.to_f32_vec();
    let dims = MatmulDims::of(a, b);
    let (m, k, n) = (dims.m, dims.k, dims.n);
    let nb = dims.matrices();
    let mut res = vec![0f32; nb * m * n];
    let mat = m * n;
    if mat > 0 {
        let work = nb * m * n * k.max(1);
        let job = |(idx, chunk): (usize, &mut [f32])| {
            // idx enumerates (batch, row block).
            let blocks = m.div_ceil(MM_ROWS);
            let (bi, blk) = (idx / blocks, idx % blocks);
            let (a0, b0) = dims.starts(bi);
            let a0 = a0 + blk * MM_ROWS * k;
            let rows = chunk.len() / n;
            gemm_rows(&av[a0..a0 + rows * k], &bv[b0..b0 + k * n], chunk, k, n);
        };
        // Chunks must not straddle matrices: split per matrix, then rows.
        let chunks: Vec<&mut [f32]> = res
            .chunks_mut(mat)
            .flat_map(|mtx| mtx.chunks_mut(MM_ROWS * n))
            .collect();
        if work >= PAR_MIN * 8 {
            chunks.into_par_iter().enumerate().for_each(job);
        } else {
            chunks.into_iter().enumerate().for_each(job);
        }
    }
    float_tensor(out.shape.clone(), out.dtype, res)
}

/// Integer matmul: exact products and sums (wrapping i64, as numpy's
/// fixed-width arithmetic wraps), the result wrapped to its type.
fn matmul_int(a: &Tensor, b: &Tensor, out: &TensorType) -> Tensor {
    let av = a.to_i64_vec();
    let bv = b.to_i64_vec();
    let dims = MatmulDims::of(a, b);
    let (m, k, n) = (dims.m, dims.k, dims.n);
    let mut res = vec![0i64; dims.matrices() * m * n];
    for (bi, mtx) in res.chunks_mut((m * n).max(1)).enumerate() {
        let (a0, b0) = dims.starts(bi);
        for (i, row) in mtx.chunks_mut(n.max(1)).enumerate() {
            for kk in 0..k {
                let x = av[a0 + i * k + kk];
                for (j, o) in row.iter_mut().enumerate() {
                    *o = o.wrapping_add(x.wrapping_mul(bv[b0 + kk * n + j]));
                }
            }
        }
    }
    int_tensor(out.shape.clone(), out.dtype, res)
}

// ------------------------------------------------------------ normalizers

fn softmax(x: &Tensor, axis: usize, log: bool, out: &TensorType) -> Tensor {
    let v = x.as_f32().unwrap_or(&[]);
    let shape = x.shape();
    let len = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let block = (len * inner).max(1);
    let mut res = vec![0f32; v.len()];
    let job = |(o, chunk): (usize, &mut [f32])| {
        let src = &v[o * block..o * block + chunk.len()];
        let mut e = vec![0f64; len];
        for i in 0..inner {
            let mut mx = f32::NEG_INFINITY;
            for j in 0..len {
                mx = fmax(mx, src[j * inner + i]);
            }
            let mx = mx as f64;
            let mut sum = 0f64;
            for (j, ej) in e.iter_mut().enumerate() {
                *ej = src[j * inner + i] as f64 - mx;
                if !log {
                    *ej = ej.exp();
                    sum += *ej;
                } else {
                    sum += ej.exp();
                }
            }
            let ls = sum.ln();
            for (j, &ej) in e.iter().enumerate() {
                chunk[j * inner + i] = if log {
                    (ej - ls) as f32
                } else {
                    (ej / sum) as f32
                };
            }
        }
    };
    if v.len() >= PAR_MIN {
        res.par_chunks_mut(block).enumerate().for_each(job);
    } else {
        res.chunks_mut(block).enumerate().for_each(job);
    }
    float_tensor(out.shape.clone(), out.dtype, res)
}

fn layer_norm(
    x: &Tensor,
    axis: usize,
    eps: f32,
    scale: Option<&Tensor>,
    bias: Option<&Tensor>,
    out: &TensorType,
) -> Tensor {
    let v = x.as_f32().unwrap_or(&[]);
    let norm_shape = &x.shape()[axis..];
    let width: usize = norm_shape.iter().product();
    let expand = |t: Option<&Tensor>| -> Option<Vec<f32>> {
        t.map(|t| {
            let s = broadcast_strides(t.shape(), norm_shape);
            strided_vec(&t.to_f32_vec(), norm_shape, &s, 0)
        })
    };
    let (sc, bi) = (expand(scale), expand(bias));
    let mut res = vec![0f32; v.len()];
    if width > 0 {
        let eps = eps as f64;
        for_rows(&mut res, width, |r, row| {
            let src = &v[r * width..(r + 1) * width];
            let mean = src.iter().map(|&a| a as f64).sum::<f64>() / width as f64;
            let var = src
                .iter()
                .map(|&a| {
                    let d = a as f64 - mean;
                    d * d
                })
                .sum::<f64>()
                / width as f64;
            let inv = 1.0 / (var + eps).sqrt();
            for (j, o) in row.iter_mut().enumerate() {
                let mut y = (src[j] as f64 - mean) * inv;
                if let Some(s) = &sc {
                    y *= s[j] as f64;
                }
                if let Some(b) = &bi {
                    y += b[j] as f64;
                }
                *o = y as f32;
            }
        });
    }
    float_tensor(out.shape.clone(), out.dtype, res)
}

fn reduce(x: &Tensor, kind: ReduceKind, axes: &[usize], out: &TensorType) -> Tensor {
    let shape = x.shape();
    let rank = shape.len();
    // Output strides in the keepdims layout, 0 along reduced axes.
    let kept: Vec<usize> = (0..rank)
        .map(|d| if axes.contains(&d) { 1 } else { shape[d] })
        .collect();
    let ks = contiguous_strides(&kept);
    let ostr: Vec<usize> = (0..rank)
        .map(|d| if axes.contains(&d) { 0 } else { ks[d] })
        .collect();
    let n_out: usize = kept.iter().product();
    let count: usize = axes.iter().map(|&a| shape[a]).product();
    // Odometer over the input in row-major order.
    let walk = |f: &mut dyn FnMut(usize, usize)| {
        let n = x.numel();
        let mut idx = vec![0usize; rank];
        let mut off = 0usize;
        for i in 0..n {
            f(off, i);
            for d in (0..rank).rev() {
                idx[d] += 1;
                off += ostr[d];
                if idx[d] < shape[d] {
                    break;
                }
                off -= ostr[d] * shape[d];
                idx[d] = 0;
            }
        }
    };
    match x.data() {
        TensorData::F32(v) => {
            let r: Vec<f32> = match kind {
                ReduceKind::Sum | ReduceKind::Mean => {
                    let mut acc = vec![0f64; n_out];
                    walk(&mut |o, i| acc[o] += v[i] as f64);
                    let div = if kind == ReduceKind::Mean {
                        count as f64
                    } else {
                        1.0
                    };
                    acc.iter().map(|&s| (s / div) as f32).collect()
                }
                ReduceKind::Prod => {
                    let mut acc = vec![1f64; n_out];
                    walk(&mut |o, i| acc[o] *= v[i] as f64);
                    acc.iter().map(|&s| s as f32).collect()
                }
                ReduceKind::Max | ReduceKind::Min => {
                    let max = kind == ReduceKind::Max;
                    let init = if max {
                        f32::NEG_INFINITY
                    } else {
                        f32::INFINITY
                    };
                    let mut acc = vec![init; n_out];
                    walk(&mut |o, i| {
                        let (a, b) = (acc[o], v[i]);
                        let better = if max { b > a } else { b < a };
                        if b.is_nan() || better {
                            acc[o] = b;
                        }
                    });
                    acc
                }
            };
            float_tensor(out.shape.clone(), out.dtype, r)
        }
        TensorData::I64(v) => {
            let r: Vec<i64> = match kind {
                ReduceKind::Sum | ReduceKind::Mean => {
                    let mut acc = vec![0i64; n_out];
                    walk(&mut |o, i| acc[o] = acc[o].wrapping_add(v[i]));
                    if kind == ReduceKind::Mean && count > 0 {
                        acc.iter_mut().for_each(|a| *a /= count as i64);
                    }
                    acc
                }
                ReduceKind::Prod => {
                    let mut acc = vec![1i64; n_out];
                    walk(&mut |o, i| acc[o] = acc[o].wrapping_mul(v[i]));
                    acc
                }
                ReduceKind::Max => {
                    let mut acc = vec![i64::MIN; n_out];
                    walk(&mut |o, i| acc[o] = acc[o].max(v[i]));
                    acc
                }
                ReduceKind::Min => {
                    let mut acc = vec![i64::MAX; n_out];
                    walk(&mut |o, i| acc[o] = acc[o].min(v[i]));
                    acc
                }
            };
            int_tensor(out.shape.clone(), out.dtype, r)
        }
    }
}

fn arg_extreme(x: &Tensor, axis: usize, max: bool, last: bool, out: &TensorType) -> Tensor {
    let shape = x.shape();
    let len = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let vals = x.to_f32_vec();
    let ints = x.as_i64();
    let mut res = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| o * len * inner + j * inner + i;
            let mut best = 0usize;
            for j in 1..len {
                let better = match ints {
                    Some(v) => {
                        let (a, b) = (v[at(j)], v[at(best)]);
                        if max {
                            a > b || (last && a == b)
                        } else {
                            a < b || (last && a == b)
                        }
                    }
                    None => {
                        let (a, b) = (vals[at(j)], vals[at(best)]);
                        if b.is_nan() {
                            false // the first NaN wins
                        } else if a.is_nan() {
                            true
                        } else if max {
                            a > b || (last && a == b)
                        } else {
                            a < b || (last && a == b)
                        }
                    }
                };
                if better {
                    best = j;
                }
            }
            res.push(best as i64);
        }
    }
    Tensor::raw(out.shape.clone(), ElementType::I64, TensorData::I64(res))
}

fn cumulative(x: &Tensor, axis: usize, exclusive: bool, reverse: bool, prod: bool) -> Tensor {
    let shape = x.shape().to_vec();
    let len = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let order: Vec<usize> = if reverse {
        (0..len).rev().collect()
    } else {
        (0..len).collect()
    };
    match x.data() {
        TensorData::F32(v) => {
            let mut res = vec![0f32; v.len()];
            for o in 0..outer {
                for i in 0..inner {
                    let mut acc = if prod { 1f64 } else { 0f64 };
                    for &j in &order {
                        let at = o * len * inner + j * inner + i;
                        let before = acc;
                        if prod {
                            acc *= v[at] as f64;
                        } else {
                            acc += v[at] as f64;
                        }
                        res[at] = if exclusive { before } else { acc } as f32;
                    }
                }
            }
            float_tensor(shape, x.dtype(), res)
        }
        TensorData::I64(v) => {
            let mut res = vec![0i64; v.len()];
            for o in 0..outer {
                for i in 0..inner {
                    let mut acc = prod as i64;
                    for &j in &order {
                        let at = o * len * inner + j * inner + i;
                        let before = acc;
                        acc = if prod {
                            acc.wrapping_mul(v[at])
                        } else {
                            acc.wrapping_add(v[at])
                        };
                        res[at] = if exclusive { before } else { acc };
                    }
                }
            }
            int_tensor(shape, x.dtype(), res)
        }
    }
}

/// Source index along one axis for each output position (`None`: fill).
fn pad_map(dim: usize, low: i64, out: usize, mode: PadMode) -> Vec<Option<usize>> {
    let d = dim as i64;
    (0..out as i64)
        .map(|o| {
            let i = o - low;
            if (0..d).contains(&i) {
                return Some(i as usize);
            }
            match mode {
                PadMode::Constant => None,
                PadMode::Edge => Some(i.clamp(0, d - 1) as usize),
                PadMode::Wrap => Some(i.rem_euclid(d) as usize),
                PadMode::Reflect => {
                    if d == 1 {
                        return Some(0);
                    }
                    let p = 2 * (d - 1);
                    let m = i.rem_euclid(p);
                    Some(if m < d { m } else { p - m } as usize)
                }
            }
        })
        .collect()
}

fn pad_vec<T: Copy + Send + Sync + Default>(
    src: &[T],
    in_shape: &[usize],
    maps: &[Vec<Option<usize>>],
    out_shape: &[usize],
    fill: T,
) -> Vec<T> {
    let n: usize = out_shape.iter().product();
    let mut out = vec![fill; n];
    if n == 0 {
        return out;
    }
    let rank = out_shape.len();
    if rank == 0 {
        out[0] = src[0];
        return out;
    }
    let st = contiguous_strides(in_shape);
    let inner = out_shape[rank - 1];
    for_rows(&mut out, inner, |row, chunk| {
        let mut r = row;
        let mut base = 0usize;
        for d in (0..rank - 1).rev() {
            let i = r % out_shape[d];
            r /= out_shape[d];
            match maps[d][i] {
                Some(s) => base += s * st[d],
                None => return,
            }
        }
        for (j, o) in chunk.iter_mut().enumerate() {
            if let Some(s) = maps[rank - 1][j] {
                *o = src[base + s];
            }
        }
    });
    out
}

fn pad(x: &Tensor, low: &[i64], mode: PadMode, value: f64, out: &TensorType) -> Tensor {
    let maps: Vec<Vec<Option<usize>>> = (0..x.rank())
        .map(|d| pad_map(x.shape()[d], low[d], out.shape[d], mode))
        .collect();
    match x.data() {
        TensorData::F32(v) => {
            let fill = crate::float8::round_to_type(value as f32, x.dtype());
            let r = pad_vec(v, x.shape(), &maps, &out.shape, fill);
            Tensor::raw(out.shape.clone(), out.dtype, TensorData::F32(r)).with_scale(x.fp8_scale())
        }
        TensorData::I64(v) => {
            let fill = x.dtype().wrap_int(value as i64);
            let r = pad_vec(v, x.shape(), &maps, &out.shape, fill);
            Tensor::raw(out.shape.clone(), out.dtype, TensorData::I64(r))
        }
    }
}

fn gather_elements(x: &Tensor, indices: &Tensor, axis: usize) -> Result<Tensor, EvalError> {
    let xs = x.shape();
    let is = indices.shape();
    let dim = xs[axis] as i64;
    let st = contiguous_strides(xs);
    let idx = indices.as_i64().unwrap_or(&[]);
    let rank = is.len();
    let mut offs = Vec::with_capacity(idx.len());
    let mut pos = vec![0usize; rank];
    for &raw in idx {
        let j = if raw < 0 { raw + dim } else { raw };
        if j < 0 || j >= dim {
            return Err(EvalError::IndexOutOfRange {
                op: "gather_elements",
                index: raw,
                size: dim as usize,
            });
        }
        let mut off = 0usize;
        for d in 0..rank {
            let p = if d == axis { j as usize } else { pos[d] };
            if p >= xs[d] {
                return Err(EvalError::shape(
                    "gather_elements",
                    format!("indices shape {is:?} exceeds data shape {xs:?}"),
                ));
            }
            off += p * st[d];
        }
        offs.push(off);
        for d in (0..rank).rev() {
            pos[d] += 1;
            if pos[d] < is[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    let data = match x.data() {
        TensorData::F32(v) => TensorData::F32(offs.iter().map(|&o| v[o]).collect()),
        TensorData::I64(v) => TensorData::I64(offs.iter().map(|&o| v[o]).collect()),
    };
    Ok(Tensor::raw(is.to_vec(), x.dtype(), data).with_scale(x.fp8_scale()))
}

fn topk(x: &Tensor, axis: usize, k: usize, largest: bool, out: &TensorType) -> Tensor {
    let shape = x.shape();
    let len = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let vals = x.to_f32_vec();
    let ints = x.as_i64();
    let mut res = vec![0i64; outer * k * inner];
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| o * len * inner + j * inner + i;
            let mut order: Vec<usize> = (0..len).collect();
            order.sort_by(|&a, &b| {
                let c = match ints {
                    Some(v) => v[at(a)].cmp(&v[at(b)]),
                    None => vals[at(a)].total_cmp(&vals[at(b)]),
                };
                let c = if largest { c.reverse() } else { c };
                c.then(a.cmp(&b))
            });
            for (r, &j) in order.iter().take(k).enumerate() {
                res[o * k * inner + r * inner + i] = j as i64;
            }
        }
    }
    Tensor::raw(out.shape.clone(), ElementType::I64, TensorData::I64(res))
}

fn combine_f(r: ScatterReduction, old: f32, new: f32) -> f32 {
    match r {
        ScatterReduction::None => new,
        ScatterReduction::Add => old + new,
        ScatterReduction::Mul => old * new,
        ScatterReduction::Max => fmax(old, new),
        ScatterReduction::Min => fmin(old, new),
    }
}

fn combine_i(r: ScatterReduction, old: i64, new: i64) -> i64 {
    match r {
        ScatterReduction::None => new,
        ScatterReduction::Add => old.wrapping_add(new),
        ScatterReduction::Mul => old.wrapping_mul(new),
        ScatterReduction::Max => old.max(new),
        ScatterReduction::Min => old.min(new),
    }
}

/// Apply `(target offset, update offset)` writes in order.
fn scatter_apply(
    x: &Tensor,
    upd: &Tensor,
    writes: &[(usize, usize)],
    r: ScatterReduction,
) -> Tensor {
    let data = match (x.data(), upd.data()) {
        (TensorData::F32(d), TensorData::F32(u)) => {
            let mut o = d.clone();
            for &(t, s) in writes {
                o[t] = combine_f(r, o[t], u[s]);
            }
            crate::float8::round_slice(&mut o, x.dtype());
            TensorData::F32(o)
        }
        (TensorData::I64(d), TensorData::I64(u)) => {
            let mut o = d.clone();
            for &(t, s) in writes {
                o[t] = x.dtype().wrap_int(combine_i(r, o[t], u[s]));
            }
            TensorData::I64(o)
        }
        (d, _) => d.clone(),
    };
    Tensor::raw(x.shape().to_vec(), x.dtype(), data)
}

fn scatter_elements(
    x: &Tensor,
    indices: &Tensor,
    upd: &Tensor,
    axis: usize,
    r: ScatterReduction,
) -> Result<Tensor, EvalError> {
    let xs = x.shape();
    let is = indices.shape();
    let st = contiguous_strides(xs);
    let dim = xs[axis] as i64;
    let rank = is.len();
    let mut pos = vec![0usize; rank];
    let mut writes = Vec::with_capacity(indices.numel());
    for (s, &raw) in indices.as_i64().unwrap_or(&[]).iter().enumerate() {
        let j = if raw < 0 { raw + dim } else { raw };
        if j < 0 || j >= dim {
            return Err(EvalError::IndexOutOfRange {
                op: "scatter_elements",
                index: raw,
                size: dim as usize,
            });
        }
        let t: usize = (0..rank)
            .map(|d| if d == axis { j as usize } else { pos[d] } * st[d])
            .sum();
        writes.push((t, s));
        for d in (0..rank).rev() {
            pos[d] += 1;
            if pos[d] < is[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    Ok(scatter_apply(x, upd, &writes, r))
}

fn scatter_nd(
    x: &Tensor,
    indices: &Tensor,
    upd: &Tensor,
    r: ScatterReduction,
) -> Result<Tensor, EvalError> {
    let xs = x.shape();
    let is = indices.shape();
    let q = is[is.len() - 1];
    let st = contiguous_strides(xs);
    let slice: usize = xs[q..].iter().product();
    let idx = indices.as_i64().unwrap_or(&[]);
    let tuples = idx
        .len()
        .checked_div(q)
        .unwrap_or_else(|| is[..is.len() - 1].iter().product());
    let mut writes = Vec::with_capacity(tuples * slice);
    for t in 0..tuples {
        let mut base = 0usize;
        for d in 0..q {
            let raw = idx[t * q + d];
            let dim = xs[d] as i64;
            let j = if raw < 0 { raw + dim } else { raw };
            if j < 0 || j >= dim {
                return Err(EvalError::IndexOutOfRange {
                    op: "scatter_nd",
                    index: raw,
                    size: dim as usize,
                });
            }
            base += j as usize * st[d];
        }
        for e in 0..slice {
            writes.push((base + e, t * slice + e));
        }
    }
    Ok(scatter_apply(x, upd, &writes, r))
}

// ------------------------------------------------------------- movement

fn concat_vec<T: Copy + Default>(parts: &[&[T]], widths: &[usize], outer: usize) -> Vec<T> {
    let total: usize = widths.iter().sum();
    let mut out = Vec::with_capacity(total * outer);
    for o in 0..outer {
        for (p, &w) in parts.iter().zip(widths) {
            out.extend_from_slice(&p[o * w..(o + 1) * w]);
        }
    }
    out
}

fn concat(inputs: &[&Tensor], axis: usize, out: &TensorType) -> Tensor {
    let outer: usize = out.shape[..axis].iter().product();
    let widths: Vec<usize> = inputs
        .iter()
        .map(|t| t.shape()[axis..].iter().product())
        .collect();
    let data = match inputs[0].data() {
        TensorData::F32(_) => {
            let parts: Vec<&[f32]> = inputs.iter().map(|t| t.as_f32().unwrap_or(&[])).collect();
            TensorData::F32(concat_vec(&parts, &widths, outer))
        }
        TensorData::I64(_) => {
            let parts: Vec<&[i64]> = inputs.iter().map(|t| t.as_i64().unwrap_or(&[])).collect();
            TensorData::I64(concat_vec(&parts, &widths, outer))
        }
    };
    // Mixed FP8 scales cannot share one scale: re-round to scale 0.
    let scale = inputs[0].fp8_scale();
    if inputs.iter().all(|t| t.fp8_scale() == scale) {
        Tensor::raw(out.shape.clone(), out.dtype, data).with_scale(scale)
    } else {
        match data {
            TensorData::F32(v) => float_tensor(out.shape.clone(), out.dtype, v),
            d => Tensor::raw(out.shape.clone(), out.dtype, d),
        }
    }
}

fn gather_vec<T: Copy + Default>(
    src: &[T],
    idx: &[usize],
    pre: usize,
    dim: usize,
    post: usize,
) -> Vec<T> {
    let mut out = Vec::with_capacity(pre * idx.len() * post);
    for p in 0..pre {
        for &i in idx {
            let s = (p * dim + i) * post;
            out.extend_from_slice(&src[s..s + post]);
        }
    }
    out
}

fn gather(
    x: &Tensor,
    indices: &Tensor,
    axis: usize,
    out: &TensorType,
) -> Result<Tensor, EvalError> {
    let shape = x.shape();
    let dim = shape[axis];
    let pre: usize = shape[..axis].iter().product();
    let post: usize = shape[axis + 1..].iter().product();
    let idx = indices
        .as_i64()
        .unwrap_or(&[])
        .iter()
        .map(|&i| {
            let j = if i < 0 { i + dim as i64 } else { i };
            if j < 0 || j >= dim as i64 {
                Err(EvalError::IndexOutOfRange {
                    op: "gather",
                    index: i,
                    size: dim,
                })
            } else {
                Ok(j as usize)
            }
        })
        .collect::<Result<Vec<usize>, _>>()?;
    let data = match x.data() {
        TensorData::F32(v) => TensorData::F32(gather_vec(v, &idx, pre, dim, post)),
        TensorData::I64(v) => TensorData::I64(gather_vec(v, &idx, pre, dim, post)),
    };
    Ok(Tensor::raw(out.shape.clone(), out.dtype, data).with_scale(x.fp8_scale()))
}

fn select(c: &Tensor, a: &Tensor, b: &Tensor, out: &TensorType) -> Tensor {
    let cv = c.as_i64().unwrap_or(&[]);
    // Broadcast everything to the output, then pick.
    let expand = |t: &Tensor| {
        strided(
            t.data(),
            &out.shape,
            &broadcast_strides(t.shape(), &out.shape),
            0,
        )
    };
    let cond = strided_vec(cv, &out.shape, &broadcast_strides(c.shape(), &out.shape), 0);
    let data = match (expand(a), expand(b)) {
        (TensorData::F32(x), TensorData::F32(y)) => TensorData::F32(
            cond.iter()
                .zip(x.iter().zip(&y))
                .map(|(&c, (&p, &q))| if c != 0 { p } else { q })
                .collect(),
        ),
        (TensorData::I64(x), TensorData::I64(y)) => TensorData::I64(
            cond.iter()
                .zip(x.iter().zip(&y))
                .map(|(&c, (&p, &q))| if c != 0 { p } else { q })
                .collect(),
        ),
        (d, _) => d,
    };
    if a.fp8_scale() == b.fp8_scale() {
        Tensor::raw(out.shape.clone(), out.dtype, data).with_scale(a.fp8_scale())
    } else {
        match data {
            TensorData::F32(v) => float_tensor(out.shape.clone(), out.dtype, v),
            d => Tensor::raw(out.shape.clone(), out.dtype, d),
        }
    }
}

/// The FP8 codes of `x` cast to FP8 type `to` (`saturate`, `scale`), as
/// the result of that `Cast` stores them ([`Tensor::fp8_codes`]: a NaN is
/// the format's positive NaN code); `None` when `to` is not FP8.
pub fn cast_fp8_codes(x: &Tensor, to: ElementType, saturate: bool, scale: i32) -> Option<Vec<u8>> {
    Some(fp8_codes(x, to.fp8_format()?, saturate, scale))
}

/// [`cast_fp8_codes`] in format `fmt`.
fn fp8_codes(x: &Tensor, fmt: Fp8Format, saturate: bool, scale: i32) -> Vec<u8> {
    let encode = |a: f32| {
        let c = fmt.encode_scaled(a, saturate, scale);
        if fmt.is_nan(c) {
            fmt.nan_code()
        } else {
            c
        }
    };
    match x.data() {
        TensorData::F32(v) => map1(v, encode),
        TensorData::I64(_) => map1(&x.to_f32_vec(), encode),
    }
}

fn cast(x: &Tensor, to: ElementType, saturate: bool, scale: i32) -> Tensor {
    let shape = x.shape().to_vec();
    if let Some(fmt) = to.fp8_format() {
        let table = fmt.decode_table(scale);
        let codes = fp8_codes(x, fmt, saturate, scale);
        let r = codes.iter().map(|&c| table[c as usize]).collect();
        return Tensor::raw(shape, to, TensorData::F32(r)).with_scale(scale);
    }
    match (x.data(), to.is_float()) {
        (TensorData::F32(v), true) => float_tensor(shape, to, v.clone()),
        (TensorData::I64(v), true) => {
            let f = if x.dtype() == ElementType::U64 {
                v.iter().map(|&a| a as u64 as f32).collect()
            } else {
                v.iter().map(|&a| a as f32).collect()
            };
            float_tensor(shape, to, f)
        }
        (TensorData::F32(v), false) => {
            let r = if to == ElementType::I1 {
                v.iter().map(|&a| (a != 0.0) as i64).collect()
            } else if to == ElementType::U64 {
                v.iter().map(|&a| a as u64 as i64).collect()
            } else {
                v.iter().map(|&a| f32_to_i64(a)).collect()
            };
            int_tensor(shape, to, r)
        }
        (TensorData::I64(v), false) => int_tensor(shape, to, v.clone()),
    }
}
