//! Layout ops: reshapes, squeezes, concatenation and splitting, slices,
//! transposes, broadcasts, tiling, padding, depth/space rearrangement and
//! triangular masks. Several took an attribute that later became an input
//! (`Reshape` 5, `Slice` 10, `Pad` 11, `Squeeze`/`Unsqueeze`/`Split` 13):
//! one declaration per form.

use ipu_reference::{broadcast_shapes, normalize_slice, ElementType, OpKind, PadMode, Tensor};

use super::super::importer::{
    check_alloc, invalid, norm_axis, numel, unsupported, Importer, NResult, NodeErr, PadRecord,
};
use super::{op, unary, AttrKind as A, Binder, IntsFrom, OnnxOp};
use crate::import::ValueId;

const AXES_ATTR: IntsFrom = IntsFrom::Attr("axes");
const AXES_INPUT: IntsFrom = IntsFrom::Input(1);
const AXES: &[(&str, A)] = &[("axes", A::Ints)];

pub(super) const OPS: &[OnnxOp] = &[
    op("Identity", 1, &[], identity),
    op(
        "Reshape",
        1,
        &[("shape", A::Ints), ("allowzero", A::Int)],
        reshape_1,
    )
    .until(4),
    op("Reshape", 5, &[("allowzero", A::Int)], reshape_5),
    op("Flatten", 1, &[("axis", A::Int)], flatten),
    op("Unsqueeze", 1, AXES, |im, n| unsqueeze(im, n, AXES_ATTR)).until(12),
    op("Unsqueeze", 13, &[], |im, n| unsqueeze(im, n, AXES_INPUT)),
    op("Squeeze", 1, AXES, |im, n| squeeze(im, n, AXES_ATTR)).until(12),
    op("Squeeze", 13, &[], |im, n| squeeze(im, n, AXES_INPUT)),
    op("Concat", 1, &[("axis", A::Int)], concat),
    op(
        "Split",
        1,
        &[("axis", A::Int), ("split", A::Ints)],
        |im, n| split(im, n, IntsFrom::Attr("split"), false),
    )
    .until(12),
    op("Split", 13, &[("axis", A::Int)], |im, n| {
        split(im, n, IntsFrom::Input(1), false)
    })
    .until(17),
    op(
        "Split",
        18,
        &[("axis", A::Int), ("num_outputs", A::Int)],
        |im, n| split(im, n, IntsFrom::Input(1), true),
    ),
    op(
        "Slice",
        1,
        &[("starts", A::Ints), ("ends", A::Ints), ("axes", A::Ints)],
        slice_1,
    )
    .until(9),
    op("Slice", 10, &[], slice_10),
    op("Transpose", 1, &[("perm", A::Ints)], transpose),
    op("Expand", 8, &[], expand),
    op("Tile", 1, &[], tile),
    op(
        "Pad",
        1,
        &[("pads", A::Ints), ("value", A::Float), ("mode", A::String)],
        pad_1,
    )
    .until(10),
    op("Pad", 11, &[("mode", A::String)], pad_11),
    op("CenterCropPad", 18, AXES, center_crop_pad),
    op(
        "DepthToSpace",
        1,
        &[("blocksize", A::Int), ("mode", A::String)],
        depth_to_space,
    ),
    op("SpaceToDepth", 1, &[("blocksize", A::Int)], space_to_depth),
    op("Trilu", 14, &[("upper", A::Int)], trilu),
];

fn identity(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    im.bind(n, &[Some(x)])
}

/// Before opset 5 the target shape is an attribute.
fn reshape_1(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let spec = n.attr_ints("shape")?.unwrap_or_default();
    reshape(im, n, x, spec)
}

fn reshape_5(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let s = im.req(n, 1)?;
    let spec = im.static_ints(s)?;
    reshape(im, n, x, spec)
}

/// `x` reshaped to `spec` (0: the input's dimension unless `allowzero`;
/// -1: inferred).
fn reshape(im: &mut Importer, n: &Binder, x: ValueId, spec: Vec<i64>) -> NResult<()> {
    let allowzero = n.attr_i("allowzero", 0)? != 0;
    let in_shape = im.ty(x).shape.clone();
    let mut shape = Vec::with_capacity(spec.len());
    let mut infer = None;
    for (i, &d) in spec.iter().enumerate() {
        shape.push(match d {
            0 if !allowzero => match in_shape.get(i) {
                Some(&v) => v,
                None => return invalid("0 in shape beyond input rank"),
            },
            -1 => {
                if infer.replace(i).is_some() {
                    return invalid("more than one -1 in shape");
                }
                1
            }
            d if d < 0 => return invalid(format!("invalid dimension {d}")),
            d => d as usize,
        });
    }
    if let Some(i) = infer {
        let known = numel(&shape);
        let total = numel(&in_shape);
        if known == 0 || total % known != 0 {
            return invalid(format!("cannot reshape {in_shape:?} to {spec:?}"));
        }
        shape[i] = total / known;
    }
    unary(im, n, OpKind::Reshape { shape })
}

fn flatten(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let shape = im.ty(x).shape.clone();
    let r = shape.len() as i64;
    let a = n.attr_i("axis", 1)?;
    let a = if a < 0 { a + r } else { a };
    if a < 0 || a > r {
        return invalid(format!("axis {a} out of range"));
    }
    let a = a as usize;
    let y = im.reshape(x, vec![numel(&shape[..a]), numel(&shape[a..])], n.name)?;
    im.bind(n, &[Some(y)])
}

fn unsqueeze(im: &mut Importer, n: &Binder, axes: IntsFrom) -> NResult<()> {
    let x = im.req(n, 0)?;
    let axes = axes.read(im, n)?;
    let shape = im.ty(x).shape.clone();
    let axes = axes.ok_or(NodeErr::Invalid("Unsqueeze needs axes".into()))?;
    let r = shape.len() + axes.len();
    let mut norm = axes
        .iter()
        .map(|&a| norm_axis(a, r))
        .collect::<NResult<Vec<_>>>()?;
    norm.sort_unstable();
    if norm.windows(2).any(|w| w[0] == w[1]) {
        return invalid("repeated axis");
    }
    let mut it = shape.iter();
    let out = (0..r)
        .map(|i| {
            if norm.contains(&i) {
                1
            } else {
                it.next().copied().unwrap_or(1)
            }
        })
        .collect();
    let y = im.op(OpKind::Reshape { shape: out }, &[x], n.name)?;
    im.bind(n, &[Some(y)])
}

fn squeeze(im: &mut Importer, n: &Binder, axes: IntsFrom) -> NResult<()> {
    let x = im.req(n, 0)?;
    let axes = axes.read(im, n)?;
    let shape = im.ty(x).shape.clone();
    let out = match axes {
        None => shape.iter().copied().filter(|&d| d != 1).collect(),
        Some(a) => {
            let norm = a
                .iter()
                .map(|&a| norm_axis(a, shape.len()))
                .collect::<NResult<Vec<_>>>()?;
            for &a in &norm {
                if shape[a] != 1 {
                    return invalid(format!("cannot squeeze axis {a} of size {}", shape[a]));
                }
            }
            shape
                .iter()
                .enumerate()
                .filter(|(i, _)| !norm.contains(i))
                .map(|(_, &d)| d)
                .collect()
        }
    };
    let y = im.op(OpKind::Reshape { shape: out }, &[x], n.name)?;
    im.bind(n, &[Some(y)])
}

fn concat(im: &mut Importer, n: &Binder) -> NResult<()> {
    let ins = (0..n.inputs.len())
        .map(|i| im.req(n, i))
        .collect::<NResult<Vec<_>>>()?;
    if ins.is_empty() {
        return invalid("no inputs");
    }
    let rank = im.ty(ins[0]).shape.len();
    let axis = norm_axis(n.attr_i("axis", 0)?, rank)?;
    let y = im.op(OpKind::Concat { axis }, &ins, n.name)?;
    im.bind(n, &[Some(y)])
}

/// `Split` into the given sizes, or into equal parts, one per output.
/// From opset 18 (`opset18`) the count may be the `num_outputs`
/// attribute and the last part may be smaller.
fn split(im: &mut Importer, n: &Binder, sizes: IntsFrom, opset18: bool) -> NResult<()> {
    let x = im.req(n, 0)?;
    let shape = im.ty(x).shape.clone();
    let axis = norm_axis(n.attr_i("axis", 0)?, shape.len())?;
    let dim = shape[axis];
    let sizes: Vec<usize> = match sizes.read(im, n)? {
        Some(v) => {
            let total = v.iter().try_fold(0i64, |a, &d| a.checked_add(d));
            if v.iter().any(|&d| d < 0) || total != Some(dim as i64) {
                return invalid(format!("split sizes {v:?} do not sum to {dim}"));
            }
            v.iter().map(|&d| d as usize).collect()
        }
        None => equal_parts(n, dim, opset18)?,
    };
    let mut outs = Vec::with_capacity(sizes.len());
    let mut at = 0usize;
    for sz in sizes {
        let mut starts = vec![0i64; shape.len()];
        let mut ends: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        starts[axis] = at as i64;
        ends[axis] = (at + sz) as i64;
        let steps = vec![1i64; shape.len()];
        let slice = OpKind::Slice {
            starts,
            ends,
            steps,
        };
        outs.push(Some(im.op(slice, &[x], n.name)?));
        at += sz;
    }
    im.bind(n, &outs)
}

/// The sizes of `Split`'s equal parts of `dim`.
fn equal_parts(n: &Binder, dim: usize, opset18: bool) -> NResult<Vec<usize>> {
    let k = if opset18 {
        n.attr_i("num_outputs", n.outputs.len() as i64)?
    } else {
        n.outputs.len() as i64
    };
    if k != n.outputs.len() as i64 {
        return invalid(format!(
            "num_outputs {k} differs from {} outputs",
            n.outputs.len()
        ));
    }
    let k = k as usize;
    if k == 0 {
        return invalid("no outputs");
    }
    let chunk = dim.div_ceil(k);
    if !opset18 && dim % k != 0 {
        return invalid(format!("{dim} does not split evenly into {k}"));
    }
    Ok((0..k)
        .map(|i| chunk.min(dim.saturating_sub(i * chunk)))
        .collect())
}

/// Before opset 10 the bounds are attributes (and every step 1).
fn slice_1(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let starts = n.attr_ints("starts")?.unwrap_or_default();
    let ends = n.attr_ints("ends")?.unwrap_or_default();
    let axes = n.attr_ints("axes")?;
    slice(im, n, x, [starts, ends], axes, None)
}

fn slice_10(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let starts = im.static_ints_input(n, 1)?.unwrap_or_default();
    let ends = im.static_ints_input(n, 2)?.unwrap_or_default();
    let axes = im.static_ints_input(n, 3)?;
    let steps = im.static_ints_input(n, 4)?;
    slice(im, n, x, [starts, ends], axes, steps)
}

/// `x[starts..ends:steps]` on `axes` (default: the first ones).
fn slice(
    im: &mut Importer,
    n: &Binder,
    x: ValueId,
    [starts, ends]: [Vec<i64>; 2],
    axes: Option<Vec<i64>>,
    steps: Option<Vec<i64>>,
) -> NResult<()> {
    let shape = im.ty(x).shape.clone();
    let rank = shape.len();
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return invalid("starts, ends, axes and steps differ in length");
    }
    let mut st: Vec<i64> = vec![0; rank];
    let mut en: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let mut sp: Vec<i64> = vec![1; rank];
    let mut seen = vec![false; rank];
    for i in 0..starts.len() {
        let a = norm_axis(axes[i], rank)?;
        if std::mem::replace(&mut seen[a], true) {
            return invalid("repeated axis");
        }
        if steps[i] == 0 {
            return invalid("step 0");
        }
        let (s, e) = normalize_slice(starts[i], ends[i], steps[i], shape[a]);
        st[a] = s;
        en[a] = e;
        sp[a] = steps[i];
    }
    let slice = OpKind::Slice {
        starts: st,
        ends: en,
        steps: sp,
    };
    unary(im, n, slice)
}

fn transpose(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let rank = im.ty(x).shape.len();
    let perm = match n.attr_ints("perm")? {
        Some(p) => p
            .iter()
            .map(|&a| norm_axis(a, rank))
            .collect::<NResult<Vec<_>>>()?,
        None => (0..rank).rev().collect(),
    };
    unary(im, n, OpKind::Transpose { perm })
}

fn expand(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let s = im.req(n, 1)?;
    let spec = im.static_ints(s)?;
    if spec.iter().any(|&d| d < 0) {
        return invalid("negative dimension");
    }
    let spec: Vec<usize> = spec.iter().map(|&d| d as usize).collect();
    let shape = broadcast_shapes(&im.ty(x).shape, &spec).ok_or_else(|| {
        NodeErr::Invalid(format!("cannot expand {:?} to {spec:?}", im.ty(x).shape))
    })?;
    unary(im, n, OpKind::Broadcast { shape })
}

/// Each axis repeated by concatenation (an empty constant for 0 repeats).
fn tile(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let r = im.req(n, 1)?;
    let reps = im.static_ints(r)?;
    let rank = im.ty(x).shape.len();
    if reps.len() != rank || reps.iter().any(|&v| v < 0) {
        return invalid(format!("repeats {reps:?} do not match rank {rank}"));
    }
    let mut y = x;
    for (axis, &k) in reps.iter().enumerate() {
        if k == 0 {
            let mut shape = im.ty(y).shape.clone();
            shape[axis] = 0;
            check_alloc(&shape, im.ty(y).dtype)?;
            let z = Tensor::zeros(shape, im.ty(y).dtype);
            let zn = im.fresh_name(name);
            y = im.constant(z, &zn);
        } else if k > 1 << 20 {
            return invalid(format!("repeat count {k} is too large"));
        } else if k > 1 {
            let mut shape = im.ty(y).shape.clone();
            shape[axis] = shape[axis].saturating_mul(k.min(u32::MAX as i64) as usize);
            check_alloc(&shape, im.ty(y).dtype)?;
            let parts = vec![y; k as usize];
            y = im.op(OpKind::Concat { axis }, &parts, name)?;
        }
    }
    im.bind(n, &[Some(y)])
}

/// Before opset 11 the pads and the value are attributes.
fn pad_1(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let pads = n.attr_ints("pads")?.unwrap_or_default();
    let value = n.attr_f("value", 0.0)? as f64;
    pad(im, n, x, pads, value, None)
}

fn pad_11(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let p = im.req(n, 1)?;
    let pads = im.static_ints(p)?;
    let value = match im.input(n, 2)? {
        Some(v) => match im.static_tensor(v)?.data() {
            ipu_reference::TensorData::F32(d) => d.first().copied().unwrap_or(0.0) as f64,
            ipu_reference::TensorData::I64(d) => d.first().copied().unwrap_or(0) as f64,
        },
        None => 0.0,
    };
    let axes = im.static_ints_input(n, 3)?;
    pad(im, n, x, pads, value, axes)
}

/// `x` padded by `pads` (all lows, then all highs) on `axes` (default:
/// all) in the node's `mode`.
fn pad(
    im: &mut Importer,
    n: &Binder,
    x: ValueId,
    pads: Vec<i64>,
    value: f64,
    axes: Option<Vec<i64>>,
) -> NResult<()> {
    let rank = im.ty(x).shape.len();
    let axes: Vec<usize> = match axes {
        Some(a) => a
            .iter()
            .map(|&v| norm_axis(v, rank))
            .collect::<NResult<_>>()?,
        None => (0..rank).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return invalid(format!("pads {pads:?} do not match {} axes", axes.len()));
    }
    let mut low = vec![0i64; rank];
    let mut high = vec![0i64; rank];
    for (i, &a) in axes.iter().enumerate() {
        low[a] = pads[i];
        high[a] = pads[i + axes.len()];
    }
    let mode = match n.attr_s("mode")?.as_deref() {
        None | Some("constant") => PadMode::Constant,
        Some("reflect") => PadMode::Reflect,
        Some("edge") => PadMode::Edge,
        Some("wrap") => PadMode::Wrap,
        Some(m) => return unsupported(format!("pad mode `{m}`")),
    };
    // A zero pad of the spatial axes only is what a following conv can take
    // into its own pads (ops/conv.rs), as onnxruntime's pad fusion does.
    let spatial_zero = mode == PadMode::Constant
        && value == 0.0
        && rank >= 3
        && low[..2].iter().chain(&high[..2]).all(|&p| p == 0)
        && low.iter().chain(&high).all(|&p| p >= 0);
    let spatial_pads: Option<Vec<usize>> = spatial_zero.then(|| {
        low[2..]
            .iter()
            .chain(&high[2..])
            .map(|&p| p as usize)
            .collect()
    });
    let pad = OpKind::Pad {
        low,
        high,
        mode,
        value,
    };
    let y = im.op(pad, &[x], n.name)?;
    if let Some(pads) = spatial_pads.filter(|_| !im.consts.contains_key(&y)) {
        im.zero_pads.insert(y, PadRecord { x, pads });
    }
    im.bind(n, &[Some(y)])
}

fn center_crop_pad(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let sid = im.req(n, 1)?;
    let target = im.static_ints(sid)?;
    let shape = im.ty(x).shape.clone();
    let rank = shape.len();
    let axes: Vec<usize> = match n.attr_ints("axes")? {
        Some(a) => a
            .iter()
            .map(|&v| norm_axis(v, rank))
            .collect::<NResult<_>>()?,
        None => (0..rank).collect(),
    };
    if axes.len() != target.len() || target.iter().any(|&t| t < 0) {
        return invalid("shape must have one non-negative size per axis");
    }
    // Negative pads crop: centred, the odd element on the right.
    let mut low = vec![0i64; rank];
    let mut high = vec![0i64; rank];
    for (&a, &t) in axes.iter().zip(&target) {
        let diff = t - shape[a] as i64;
        if diff >= 0 {
            low[a] = diff / 2;
            high[a] = diff - diff / 2;
        } else {
            let crop = -diff;
            low[a] = -(crop / 2);
            high[a] = -(crop - crop / 2);
        }
    }
    let pad = OpKind::Pad {
        low,
        high,
        mode: PadMode::Constant,
        value: 0.0,
    };
    unary(im, n, pad)
}

/// The 4-D input of `DepthToSpace`/`SpaceToDepth`, its dimensions and the
/// block size.
fn blocked_input(im: &Importer, n: &Binder) -> NResult<(ValueId, [usize; 4], usize)> {
    let x = im.req(n, 0)?;
    let s = im.ty(x).shape.clone();
    let [nb, c, h, w] = s[..] else {
        return invalid("input must be 4-D");
    };
    let b = n.attr_i("blocksize", 0)?;
    if b <= 0 || b > 1 << 16 {
        return invalid("blocksize must be in 1..=65536");
    }
    Ok((x, [nb, c, h, w], b as usize))
}

/// `x` reshaped to `r1`, transposed by `perm`, reshaped to `r2`.
fn rearrange(
    im: &mut Importer,
    n: &Binder,
    x: ValueId,
    r1: Vec<usize>,
    perm: Vec<usize>,
    r2: Vec<usize>,
) -> NResult<()> {
    let y = im.reshape(x, r1, n.name)?;
    let y = im.op(OpKind::Transpose { perm }, &[y], n.name)?;
    let y = im.reshape(y, r2, n.name)?;
    im.bind(n, &[Some(y)])
}

fn depth_to_space(im: &mut Importer, n: &Binder) -> NResult<()> {
    let (x, [nb, c, h, w], b) = blocked_input(im, n)?;
    if c % (b * b) != 0 {
        return invalid("channels not divisible by blocksize^2");
    }
    let c2 = c / (b * b);
    let out = vec![nb, c2, h.saturating_mul(b), w.saturating_mul(b)];
    if n.attr_s("mode")?.as_deref() == Some("CRD") {
        rearrange(
            im,
            n,
            x,
            vec![nb, c2, b, b, h, w],
            vec![0, 1, 4, 2, 5, 3],
            out,
        )
    } else {
        rearrange(
            im,
            n,
            x,
            vec![nb, b, b, c2, h, w],
            vec![0, 3, 4, 1, 5, 2],
            out,
        )
    }
}

fn space_to_depth(im: &mut Importer, n: &Binder) -> NResult<()> {
    let (x, [nb, c, h, w], b) = blocked_input(im, n)?;
    if h % b != 0 || w % b != 0 {
        return invalid("spatial dims not divisible by blocksize");
    }
    let blocks = vec![nb, c, h / b, b, w / b, b];
    let out = vec![nb, c.saturating_mul(b * b), h / b, w / b];
    rearrange(im, n, x, blocks, vec![0, 3, 5, 1, 2, 4], out)
}

/// The upper (or lower) triangle from diagonal `k` on, the rest zero.
fn trilu(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let x = im.req(n, 0)?;
    let ty = im.ty(x).clone();
    let r = ty.shape.len();
    if r < 2 {
        return invalid("input must have rank >= 2");
    }
    let k = match im.input(n, 1)? {
        Some(id) => im.static_ints(id)?.first().copied().unwrap_or(0),
        None => 0,
    };
    let upper = n.attr_i("upper", 1)? != 0;
    let (rows, cols) = (ty.shape[r - 2], ty.shape[r - 1]);
    check_alloc(&[rows, cols], ElementType::I64)?;
    let mask: Vec<bool> = (0..rows * cols)
        .map(|e| {
            let d = (e % cols) as i64 - (e / cols) as i64;
            if upper {
                d >= k
            } else {
                d <= k
            }
        })
        .collect();
    let m = Tensor::from_bool(vec![rows, cols], mask)?;
    let mname = im.fresh_name(name);
    let m = im.constant(m, &mname);
    let zero = im.scalar(0.0, ty.dtype, name)?;
    let y = im.op(OpKind::Select, &[m, x, zero], name)?;
    im.bind(n, &[Some(y)])
}
