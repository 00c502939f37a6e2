//! The windowed ops of convolutional networks: `Conv`, `ConvTranspose`,
//! `MaxPool`, `AveragePool` (the dialect's `conv`, `conv_transpose`,
//! `max_pool`, `avg_pool`, a bias added after), and the integer convs
//! `ConvInteger` and `QLinearConv` (the zero points subtracted in i32, an
//! exact i32 conv, then for `QLinearConv` requantized), and `Resize`
//! (nearest, linear, cubic). `auto_pad` is resolved to explicit pads here, as
//! onnxruntime resolves it.

use ipu_reference::{ElementType, NearestMode, OpKind, ResizeCoordinate, ResizeMode};

use super::super::importer::{invalid, unsupported, Importer, NResult, NodeErr};
use super::{op, AttrKind as A, Binder, OnnxOp};
use crate::import::ValueId;

const CONV: &[(&str, A)] = &[
    ("auto_pad", A::String),
    ("dilations", A::Ints),
    ("group", A::Int),
    ("kernel_shape", A::Ints),
    ("pads", A::Ints),
    ("strides", A::Ints),
];
const CONV_TRANSPOSE: &[(&str, A)] = &[
    ("auto_pad", A::String),
    ("dilations", A::Ints),
    ("group", A::Int),
    ("kernel_shape", A::Ints),
    ("output_padding", A::Ints),
    ("output_shape", A::Ints),
    ("pads", A::Ints),
    ("strides", A::Ints),
];
const MAX_POOL: &[(&str, A)] = &[
    ("auto_pad", A::String),
    ("ceil_mode", A::Int),
    ("dilations", A::Ints),
    ("kernel_shape", A::Ints),
    ("pads", A::Ints),
    ("storage_order", A::Int),
    ("strides", A::Ints),
];
const AVG_POOL: &[(&str, A)] = &[
    ("auto_pad", A::String),
    ("ceil_mode", A::Int),
    ("count_include_pad", A::Int),
    ("dilations", A::Ints),
    ("kernel_shape", A::Ints),
    ("pads", A::Ints),
    ("strides", A::Ints),
];

pub(super) const OPS: &[OnnxOp] = &[
    op("Conv", 1, CONV, conv),
    op("ConvTranspose", 1, CONV_TRANSPOSE, conv_transpose),
    op("MaxPool", 1, MAX_POOL, max_pool),
    op("AveragePool", 1, AVG_POOL, avg_pool),
    op("ConvInteger", 10, CONV, conv_integer),
    op("QLinearConv", 10, CONV, qlinear_conv),
    op("Resize", 10, &[("mode", A::String)], resize_10).until(10),
    op(
        "Upsample",
        7,
        &[("mode", A::String), ("scales", A::Floats)],
        upsample_7,
    )
    .until(8),
    op("Upsample", 9, &[("mode", A::String)], resize_10),
    op("Resize", 11, RESIZE, resize),
];

const RESIZE: &[(&str, A)] = &[
    ("antialias", A::Int),
    ("axes", A::Ints),
    ("coordinate_transformation_mode", A::String),
    ("cubic_coeff_a", A::Float),
    ("exclude_outside", A::Int),
    ("extrapolation_value", A::Float),
    ("keep_aspect_ratio_policy", A::String),
    ("mode", A::String),
    ("nearest_mode", A::String),
];

/// A spatial attribute list as sizes: `n` entries (the default `fill`
/// when absent), each at least `min`.
fn spatial(n: &Binder, key: &str, count: usize, fill: usize, min: usize) -> NResult<Vec<usize>> {
    let Some(v) = n.attr_ints(key)? else {
        return Ok(vec![fill; count]);
    };
    if v.len() != count {
        return invalid(format!(
            "`{key}` has {} entries for {count} spatial axes",
            v.len()
        ));
    }
    v.iter()
        .map(|&x| match usize::try_from(x) {
            Ok(u) if u >= min && x <= i32::MAX as i64 => Ok(u),
            _ => invalid(format!("`{key}` holds {x}")),
        })
        .collect()
}

/// How a window's pads are chosen.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AutoPad {
    NotSet,
    SameUpper,
    SameLower,
    Valid,
}

fn auto_pad(n: &Binder) -> NResult<AutoPad> {
    Ok(match n.attr_s("auto_pad")?.as_deref() {
        None | Some("NOTSET") => AutoPad::NotSet,
        Some("SAME_UPPER") => AutoPad::SameUpper,
        Some("SAME_LOWER") => AutoPad::SameLower,
        Some("VALID") => AutoPad::Valid,
        Some(other) => return invalid(format!("unknown auto_pad `{other}`")),
    })
}

/// A forward window's strides, dilations and resolved pads (lows, then
/// highs) over `input`'s spatial dims with `kernel`.
struct Window {
    strides: Vec<usize>,
    dilations: Vec<usize>,
    pads: Vec<usize>,
}

fn window(n: &Binder, input: &[usize], kernel: &[usize], dilated: bool) -> NResult<Window> {
    let s = input.len();
    if let Some(k) = n.attr_ints("kernel_shape")? {
        if k.len() != s || k.iter().zip(kernel).any(|(&a, &b)| a != b as i64) {
            return invalid(format!(
                "kernel_shape {k:?} does not match the kernel {kernel:?}"
            ));
        }
    }
    let strides = spatial(n, "strides", s, 1, 1)?;
    let dilations = if dilated {
        spatial(n, "dilations", s, 1, 1)?
    } else {
        vec![1; s]
    };
    let mode = auto_pad(n)?;
    let pads = match mode {
        AutoPad::NotSet => spatial(n, "pads", 2 * s, 0, 0)?,
        AutoPad::Valid => vec![0; 2 * s],
        AutoPad::SameUpper | AutoPad::SameLower => {
            let (mut low, mut high) = (Vec::with_capacity(s), Vec::with_capacity(s));
            for a in 0..s {
                let k = (kernel[a] - 1) * dilations[a] + 1;
                let out = input[a].div_ceil(strides[a]);
                let total = ((out.max(1) - 1) * strides[a] + k).saturating_sub(input[a]);
                let small = total / 2;
                let (l, h) = if mode == AutoPad::SameUpper {
                    (small, total - small)
                } else {
                    (total - small, small)
                };
                low.push(l);
                high.push(h);
            }
            low.extend(high);
            low
        }
    };
    Ok(Window {
        strides,
        dilations,
        pads,
    })
}

/// `x` `[N, C, S...]` with at least one spatial axis.
fn spatial_input(im: &Importer, x: ValueId) -> NResult<Vec<usize>> {
    let shape = &im.ty(x).shape;
    if shape.len() < 3 {
        return invalid(format!(
            "the input must be [N, C, spatial...], got {shape:?}"
        ));
    }
    Ok(shape[2..].to_vec())
}

/// The conv op of a node on `x` and weights `w`.
fn conv_kind(im: &Importer, n: &Binder, x: ValueId, w: ValueId) -> NResult<OpKind> {
    let input = spatial_input(im, x)?;
    let wshape = &im.ty(w).shape;
    if wshape.len() != input.len() + 2 {
        return invalid(format!(
            "weights {wshape:?} do not match the input's {} spatial axes",
            input.len()
        ));
    }
    let kernel = wshape[2..].to_vec();
    if kernel.contains(&0) {
        return invalid(format!("weights {wshape:?} have an empty kernel axis"));
    }
    let group = n.attr_i("group", 1)?;
    let group = usize::try_from(group)
        .ok()
        .filter(|&g| g >= 1)
        .ok_or_else(|| NodeErr::Invalid(format!("group {group}")))?;
    let win = window(n, &input, &kernel, true)?;
    Ok(OpKind::Conv {
        strides: win.strides,
        dilations: win.dilations,
        pads: win.pads,
        group,
    })
}

/// `y + bias` with the bias (`[M]`) along the channel axis.
fn add_bias(im: &mut Importer, y: ValueId, bias: Option<ValueId>, name: &str) -> NResult<ValueId> {
    let Some(b) = bias else {
        return Ok(y);
    };
    let shape = im.ty(y).shape.clone();
    if im.ty(b).shape != [shape[1]] {
        return invalid(format!(
            "the bias {:?} is not one value per output channel ({})",
            im.ty(b).shape,
            shape[1]
        ));
    }
    let mut bs = vec![1usize; shape.len() - 1];
    bs[0] = shape[1];
    let b = im.reshape(b, bs, name)?;
    im.op(OpKind::Add, &[y, b], name)
}

fn conv(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let (x, w) = (im.req(n, 0)?, im.req(n, 1)?);
    let bias = im.input(n, 2)?;
    let mut kind = conv_kind(im, n, x, w)?;
    let x = absorb_zero_pad(im, n, x, &mut kind);
    let c = im.op(kind.clone(), &[x, w], name)?;
    let y = add_bias(im, c, bias, name)?;
    im.note_conv(y, x, w, bias, kind);
    im.bind(n, &[Some(y)])
}

/// A conv whose input is a constant-zero `Pad` of the spatial axes, read by
/// this conv only, convolves the pad's input with the pad added to its own
/// pads (the same result: the conv's pads are zeros too); the `Pad` is then
/// dead. Exporters write TensorFlow's SAME padding this way (an explicit
/// `Pad` before a conv with no pads); onnxruntime fuses it the same way.
fn absorb_zero_pad(im: &Importer, n: &Binder, x: ValueId, kind: &mut OpKind) -> ValueId {
    let only_reader = n.inputs.first().and_then(|i| im.readers.get(i)) == Some(&1);
    match (im.zero_pads.get(&x), kind) {
        (Some(rec), OpKind::Conv { pads, .. }) if only_reader && pads.len() == rec.pads.len() => {
            for (p, q) in pads.iter_mut().zip(&rec.pads) {
                *p += q;
            }
            rec.x
        }
        _ => x,
    }
}

/// `BatchNormalization` (inference) of a conv's result, folded into the
/// conv when the normalization is the conv's only reader and the weights,
/// the conv's bias and the four statistics are constants of the input's
/// type, as onnxruntime's conv-BN fusion does:
/// `s = scale / sqrt(var + eps)`, weights times `s` per output channel,
/// bias `(b - mean) * s + beta`. `None` when it does not apply.
pub(super) fn fold_batch_norm(
    im: &mut Importer,
    n: &Binder,
    x: ValueId,
    params: [ValueId; 4],
    eps: f32,
) -> NResult<Option<ValueId>> {
    let Some(rec) = im.convs.get(&x).cloned() else {
        return Ok(None);
    };
    if n.inputs.first().and_then(|i| im.readers.get(i)) != Some(&1) {
        return Ok(None);
    }
    let dt = im.ty(x).dtype;
    let mut constant = vec![rec.w];
    constant.extend(rec.bias);
    constant.extend(params);
    let m = im.ty(x).shape[1];
    let fits = constant
        .iter()
        .all(|v| im.consts.contains_key(v) && im.ty(*v).dtype == dt)
        && params.iter().all(|&p| im.ty(p).shape == [m]);
    if !fits {
        return Ok(None);
    }
    let name = n.name;
    let [scale, beta, mean, var] = params;
    let e = im.scalar(eps, dt, name)?;
    let ve = im.op(OpKind::Add, &[var, e], name)?;
    let sd = im.op(OpKind::Sqrt, &[ve], name)?;
    let s = im.op(OpKind::Div, &[scale, sd], name)?;
    let rank = im.ty(rec.w).shape.len();
    let mut ws = vec![1usize; rank];
    ws[0] = m;
    let sw = im.reshape(s, ws, name)?;
    let w = im.op(OpKind::Mul, &[rec.w, sw], name)?;
    let b = match rec.bias {
        Some(b) => im.op(OpKind::Sub, &[b, mean], name)?,
        None => im.op(OpKind::Neg, &[mean], name)?,
    };
    let b = im.op(OpKind::Mul, &[b, s], name)?;
    let b = im.op(OpKind::Add, &[b, beta], name)?;
    let c = im.op(rec.kind.clone(), &[rec.x, w], name)?;
    let y = add_bias(im, c, Some(b), name)?;
    im.note_conv(y, rec.x, w, Some(b), rec.kind);
    Ok(Some(y))
}

fn conv_transpose(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let (x, w) = (im.req(n, 0)?, im.req(n, 1)?);
    let bias = im.input(n, 2)?;
    let input = spatial_input(im, x)?;
    let s = input.len();
    let wshape = im.ty(w).shape.clone();
    if wshape.len() != s + 2 {
        return invalid(format!(
            "weights {wshape:?} do not match the input's {s} spatial axes"
        ));
    }
    let kernel = wshape[2..].to_vec();
    if kernel.contains(&0) {
        return invalid(format!("weights {wshape:?} have an empty kernel axis"));
    }
    if let Some(k) = n.attr_ints("kernel_shape")? {
        if k.len() != s || k.iter().zip(&kernel).any(|(&a, &b)| a != b as i64) {
            return invalid(format!(
                "kernel_shape {k:?} does not match the kernel {kernel:?}"
            ));
        }
    }
    let group = n.attr_i("group", 1)?;
    let group = usize::try_from(group)
        .ok()
        .filter(|&g| g >= 1)
        .ok_or_else(|| NodeErr::Invalid(format!("group {group}")))?;
    let strides = spatial(n, "strides", s, 1, 1)?;
    let dilations = spatial(n, "dilations", s, 1, 1)?;
    let mut output_padding = spatial(n, "output_padding", s, 0, 0)?;
    let mode = auto_pad(n)?;
    let wanted = match n.attr_ints("output_shape")? {
        Some(o) => {
            // The spatial dims, or (as some exporters write) all of them.
            let o = if o.len() == s + 2 { o[2..].to_vec() } else { o };
            Some(spatial_from(&o, s)?)
        }
        None if matches!(mode, AutoPad::SameUpper | AutoPad::SameLower) => {
            Some(input.iter().zip(&strides).map(|(&i, &st)| i * st).collect())
        }
        None => None,
    };
    let pads = match (wanted, mode) {
        (Some(out), _) => {
            let (mut low, mut high) = (Vec::new(), Vec::new());
            for a in 0..s {
                let k = (kernel[a] - 1) * dilations[a] + 1;
                let full = (input[a].max(1) - 1) * strides[a] + output_padding[a] + k;
                let total = full.saturating_sub(out[a]);
                // An output larger than the full one is zero-filled at the end.
                output_padding[a] += out[a].saturating_sub(full);
                let small = total / 2;
                let (l, h) = if mode == AutoPad::SameLower {
                    (total - small, small)
                } else {
                    (small, total - small)
                };
                low.push(l);
                high.push(h);
            }
            low.extend(high);
            low
        }
        (None, AutoPad::Valid) => vec![0; 2 * s],
        (None, _) => spatial(n, "pads", 2 * s, 0, 0)?,
    };
    let kind = OpKind::ConvTranspose {
        strides,
        dilations,
        pads,
        output_padding,
        group,
    };
    let c = im.op(kind, &[x, w], name)?;
    let y = add_bias(im, c, bias, name)?;
    im.bind(n, &[Some(y)])
}

fn spatial_from(v: &[i64], s: usize) -> NResult<Vec<usize>> {
    if v.len() != s {
        return invalid(format!(
            "`output_shape` has {} entries for {s} spatial axes",
            v.len()
        ));
    }
    v.iter()
        .map(|&x| {
            usize::try_from(x)
                .ok()
                .filter(|&u| u <= i32::MAX as usize)
                .ok_or_else(|| NodeErr::Invalid(format!("`output_shape` holds {x}")))
        })
        .collect()
}

/// A pool's kernel (`kernel_shape`, required) and window.
fn pool_window(
    im: &Importer,
    n: &Binder,
    x: ValueId,
    dilated: bool,
) -> NResult<(Vec<usize>, Window)> {
    let input = spatial_input(im, x)?;
    let Some(k) = n.attr_ints("kernel_shape")? else {
        return invalid("missing attribute `kernel_shape`");
    };
    let kernel = spatial_from(&k, input.len())?;
    if kernel.contains(&0) {
        return invalid(format!("kernel_shape {k:?} holds 0"));
    }
    let win = window(n, &input, &kernel, dilated)?;
    Ok((kernel, win))
}

/// `MaxPool`, and its Indices output where asked: positions in the input,
/// row-major, or with `storage_order` 1 column-major over the spatial
/// axes (the plane's offset stays row-major, as ONNX's reference has it).
fn max_pool(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let (kernel, win) = pool_window(im, n, x, true)?;
    let ceil_mode = n.attr_i("ceil_mode", 0)? != 0;
    let kind = |indices| OpKind::MaxPool {
        kernel: kernel.clone(),
        strides: win.strides.clone(),
        dilations: win.dilations.clone(),
        pads: win.pads.clone(),
        ceil_mode,
        indices,
    };
    let y = im.op(kind(false), &[x], n.name)?;
    let mut outs = vec![Some(y), None];
    if Importer::wants_output(n, 1) {
        let mut i = im.op(kind(true), &[x], n.name)?;
        if n.attr_i("storage_order", 0)? != 0 {
            let spatial = im.ty(x).shape[2..].to_vec();
            i = column_major(im, i, &spatial, n.name)?;
        }
        outs[1] = Some(i);
    }
    im.bind(n, &outs)
}

/// Row-major input positions `p` (i64) re-expressed column-major over the
/// spatial dims `dims`: `plane * size + sum_a index_a * prod(dims[..a])`.
fn column_major(im: &mut Importer, p: ValueId, dims: &[usize], name: &str) -> NResult<ValueId> {
    let size: usize = dims.iter().product();
    let int = |im: &mut Importer, v: usize| im.scalar(v as f32, ElementType::I64, name);
    let sz = int(im, size)?;
    let plane = im.op(OpKind::Div, &[p, sz], name)?;
    let mut rest = im.op(OpKind::Mod { fmod: false }, &[p, sz], name)?;
    let base = im.op(OpKind::Mul, &[plane, sz], name)?;
    // Row-major strides (in `rest`) and column-major ones, per axis.
    let mut acc = base;
    let mut row = size;
    let mut col = 1usize;
    for &d in dims {
        row /= d.max(1);
        let r = int(im, row)?;
        let idx = im.op(OpKind::Div, &[rest, r], name)?;
        rest = im.op(OpKind::Mod { fmod: false }, &[rest, r], name)?;
        let c = int(im, col)?;
        let term = im.op(OpKind::Mul, &[idx, c], name)?;
        acc = im.op(OpKind::Add, &[acc, term], name)?;
        col *= d;
    }
    Ok(acc)
}

fn avg_pool(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let (kernel, win) = pool_window(im, n, x, n.opset >= 19)?;
    let kind = OpKind::AvgPool {
        kernel,
        strides: win.strides,
        dilations: win.dilations,
        pads: win.pads,
        ceil_mode: n.attr_i("ceil_mode", 0)? != 0,
        count_include_pad: n.attr_i("count_include_pad", 0)? != 0,
    };
    let y = im.op(kind, &[x], n.name)?;
    im.bind(n, &[Some(y)])
}

/// `ConvInteger(x, w, x_zero_point?, w_zero_point?)` -> i32: the centred
/// operands (the input's zero point one value, the weights' one or one
/// per output channel) convolved exactly in i32.
fn conv_integer(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let (x, w) = (im.req(n, 0)?, im.req(n, 1)?);
    let (zx, zw) = (im.input(n, 2)?, im.input(n, 3)?);
    let kind = conv_kind(im, n, x, w)?;
    let xc = im.centred_conv_operand(x, zx, false, name)?;
    let wc = im.centred_conv_operand(w, zw, true, name)?;
    let y = im.op(kind, &[xc, wc], name)?;
    im.bind(n, &[Some(y)])
}

/// `QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?)`:
/// the exact i32 conv of the centred operands plus the i32 bias, times
/// `x_scale * w_scale / y_scale` (one or one per output channel), plus
/// `y_zp`, rounded half to even and saturated.
fn qlinear_conv(im: &mut Importer, n: &Binder) -> NResult<()> {
    let name = n.name;
    let (x, sx, zx) = (im.req(n, 0)?, im.req(n, 1)?, im.req(n, 2)?);
    let (w, sw, zw) = (im.req(n, 3)?, im.req(n, 4)?, im.req(n, 5)?);
    let (sy, zy) = (im.req(n, 6)?, im.req(n, 7)?);
    let bias = im.input(n, 8)?;
    let kind = conv_kind(im, n, x, w)?;
    let xc = im.centred_conv_operand(x, Some(zx), false, name)?;
    let wc = im.centred_conv_operand(w, Some(zw), true, name)?;
    let acc = im.op(kind, &[xc, wc], name)?;
    let acc = match bias {
        Some(b) => {
            if im.ty(b).dtype != ElementType::I32 {
                return invalid(format!("the bias is {}, not i32", im.ty(b).dtype));
            }
            add_bias(im, acc, Some(b), name)?
        }
        None => acc,
    };
    let rank = im.ty(acc).shape.len();
    let channels = im.ty(acc).shape[1];
    let per_channel = |im: &mut Importer, p: ValueId| -> NResult<ValueId> {
        let c = im.ty(p).numel();
        if c == 1 {
            return im.reshape(p, vec![], name);
        }
        if c != channels {
            return invalid(format!(
                "a parameter of {c} values for {channels} output channels"
            ));
        }
        let mut s = vec![1usize; rank - 1];
        s[0] = c;
        im.reshape(p, s, name)
    };
    let sx = im.reshape(sx, vec![], name)?;
    let sw = per_channel(im, sw)?;
    let sy = im.reshape(sy, vec![], name)?;
    let zy = im.reshape(zy, vec![], name)?;
    let y = im.requantize(acc, [sx, sw, sy], zy, name)?;
    im.bind(n, &[Some(y)])
}

impl Importer {
    /// An integer conv operand minus its zero point, in i32: the input's
    /// zero point is one value; the weights' one, or (`weights`) one per
    /// output channel.
    fn centred_conv_operand(
        &mut self,
        v: ValueId,
        zp: Option<ValueId>,
        weights: bool,
        name: &str,
    ) -> NResult<ValueId> {
        let dt = self.ty(v).dtype;
        if !matches!(dt, ElementType::U8 | ElementType::I8) {
            return unsupported(format!("quantized operands of type {dt} (u8 and i8 are)"));
        }
        let shape = self.ty(v).shape.clone();
        let v32 = self.cast(v, ElementType::I32, name)?;
        let Some(z) = zp else {
            return Ok(v32);
        };
        if self.ty(z).dtype != dt {
            return invalid(format!(
                "the zero point is {}, its operand {dt}",
                self.ty(z).dtype
            ));
        }
        let c = self.ty(z).numel();
        let z = if c == 1 {
            self.reshape(z, vec![], name)?
        } else if weights && c == shape[0] {
            let mut s = vec![1usize; shape.len()];
            s[0] = c;
            self.reshape(z, s, name)?
        } else {
            return invalid(format!(
                "a zero point of {c} values for an operand of shape {shape:?}"
            ));
        };
        let z32 = self.cast(z, ElementType::I32, name)?;
        self.op(OpKind::Sub, &[v32, z32], name)
    }
}

/// A resize's `mode` (`bilinear`, an old spelling, is linear).
fn resize_mode(n: &Binder) -> NResult<ResizeMode> {
    match n.attr_s("mode")?.as_deref() {
        None => Ok(ResizeMode::Nearest),
        Some("bilinear") => Ok(ResizeMode::Linear),
        Some(m) => ResizeMode::from_name(m)
            .ok_or_else(|| NodeErr::Invalid(format!("unknown resize mode `{m}`"))),
    }
}

/// The output shape and per-axis scales of a resize of `input` by
/// `scales`: each size `floor(in * scale)`.
fn sizes_of_scales(input: &[usize], scales: &[f64]) -> NResult<Vec<usize>> {
    input
        .iter()
        .zip(scales)
        .map(|(&d, &s)| {
            let o = (d as f64 * s).floor();
            if !(s.is_finite() && s > 0.0) || o > i32::MAX as f64 {
                return invalid(format!("scale {s} for a dimension of {d}"));
            }
            Ok(o as usize)
        })
        .collect()
}

/// Opset 10: `Resize(X, scales)` (and `Upsample`), asymmetric
/// coordinates, the nearest index rounded down when enlarging and up when
/// shrinking (onnxruntime's rule for these ops).
fn resize_10(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let scales = im.static_tensor(im.req(n, 1)?)?.to_f32_vec();
    resize_asymmetric(im, n, x, &scales)
}

/// `Upsample` before opset 9: the scales are an attribute.
fn upsample_7(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let scales = match n.attr("scales")? {
        Some(crate::model::Attribute::Floats(v)) => v.clone(),
        _ => return invalid("missing attribute `scales`"),
    };
    resize_asymmetric(im, n, x, &scales)
}

/// The resize of `Resize`-10 and `Upsample`.
fn resize_asymmetric(im: &mut Importer, n: &Binder, x: ValueId, scales: &[f32]) -> NResult<()> {
    let input = im.ty(x).shape.clone();
    let scales: Vec<f64> = scales.iter().map(|&s| s as f64).collect();
    if scales.len() != input.len() {
        return invalid(format!("{} scales for rank {}", scales.len(), input.len()));
    }
    let shape = sizes_of_scales(&input, &scales)?;
    let mode = resize_mode(n)?;
    if mode == ResizeMode::Cubic {
        return invalid("this opset's resize is nearest or linear");
    }
    let nearest = if scales.iter().all(|&s| s >= 1.0) {
        NearestMode::Floor
    } else if scales.iter().all(|&s| s <= 1.0) {
        NearestMode::Ceil
    } else {
        return unsupported("an opset-10 resize that enlarges some axes and shrinks others");
    };
    let kind = OpKind::Resize {
        shape,
        scales,
        coordinate: ResizeCoordinate::Asymmetric,
        roi: Vec::new(),
        extrapolation_value: 0.0,
        mode,
        nearest,
        antialias: false,
        cubic_coeff_a: -0.75,
        exclude_outside: false,
    };
    let y = im.op(kind, &[x], n.name)?;
    im.bind(n, &[Some(y)])
}

/// A crop's `roi` input (a start per axis of `axes`, then an end), as a
/// start and an end for each of the `rank` axes (the others whole).
fn crop_roi(im: &Importer, n: &Binder, axes: &[usize], rank: usize) -> NResult<Vec<f64>> {
    let Some(roi) = resize_operand(im, n, 1)? else {
        return invalid("tf_crop_and_resize needs a roi");
    };
    let roi = roi.to_f32_vec();
    if roi.len() != 2 * axes.len() {
        return invalid(format!(
            "a roi of {} values for {} axes",
            roi.len(),
            axes.len()
        ));
    }
    let mut full = vec![0.0; rank];
    full.extend(vec![1.0; rank]);
    for (i, &a) in axes.iter().enumerate() {
        full[a] = roi[i] as f64;
        full[rank + a] = roi[axes.len() + i] as f64;
    }
    Ok(full)
}

/// A resize's scales or sizes input (an empty tensor counts as absent).
fn resize_operand(im: &Importer, n: &Binder, i: usize) -> NResult<Option<ipu_reference::Tensor>> {
    match im.input(n, i)? {
        Some(v) => {
            let t = im.static_tensor(v)?;
            Ok((t.numel() > 0).then(|| t.clone()))
        }
        None => Ok(None),
    }
}

/// `Resize(X, roi, scales, sizes)` from opset 11: scales or sizes (for
/// `axes`, opset 18) as constants; sizes with `keep_aspect_ratio_policy`.
fn resize(im: &mut Importer, n: &Binder) -> NResult<()> {
    let x = im.req(n, 0)?;
    let input = im.ty(x).shape.clone();
    let rank = input.len();
    let mode = resize_mode(n)?;
    let coord = n.attr_s("coordinate_transformation_mode")?;
    let coordinate = match coord.as_deref() {
        None => ResizeCoordinate::HalfPixel,
        Some(c) => ResizeCoordinate::from_name(c)
            .ok_or_else(|| NodeErr::Invalid(format!("unknown coordinate transformation `{c}`")))?,
    };
    let nearest = match n.attr_s("nearest_mode")?.as_deref() {
        None => NearestMode::RoundPreferFloor,
        Some(m) => NearestMode::from_name(m)
            .ok_or_else(|| NodeErr::Invalid(format!("unknown nearest_mode `{m}`")))?,
    };
    let axes: Vec<usize> = match n.attr_ints("axes")? {
        Some(a) => a
            .iter()
            .map(|&a| super::super::importer::norm_axis(a, rank))
            .collect::<NResult<_>>()?,
        None => (0..rank).collect(),
    };
    let (shape, scales) = if let Some(sizes) = resize_operand(im, n, 3)? {
        let sizes = sizes.to_i64_vec();
        if sizes.len() != axes.len() {
            return invalid(format!("{} sizes for {} axes", sizes.len(), axes.len()));
        }
        let mut shape = input.clone();
        for (&a, &s) in axes.iter().zip(&sizes) {
            shape[a] = usize::try_from(s)
                .ok()
                .filter(|&s| s <= i32::MAX as usize)
                .ok_or_else(|| NodeErr::Invalid(format!("size {s}")))?;
        }
        let ratio = |a: usize| {
            if input[a] == 0 {
                1.0
            } else {
                shape[a] as f64 / input[a] as f64
            }
        };
        let mut scales: Vec<f64> = (0..rank).map(ratio).collect();
        match n.attr_s("keep_aspect_ratio_policy")?.as_deref() {
            None | Some("stretch") => {}
            Some(p @ ("not_larger" | "not_smaller")) => {
                let pick = axes.iter().map(|&a| scales[a]);
                let s = if p == "not_larger" {
                    pick.fold(f64::INFINITY, f64::min)
                } else {
                    pick.fold(0.0, f64::max)
                };
                for &a in &axes {
                    scales[a] = s;
                    shape[a] = (s * input[a] as f64 + 0.5).floor() as usize;
                }
            }
            Some(p) => return invalid(format!("unknown keep_aspect_ratio_policy `{p}`")),
        }
        (shape, scales)
    } else if let Some(s) = resize_operand(im, n, 2)? {
        let s: Vec<f64> = s.to_f32_vec().iter().map(|&v| v as f64).collect();
        if s.len() != axes.len() {
            return invalid(format!("{} scales for {} axes", s.len(), axes.len()));
        }
        let mut scales = vec![1.0; rank];
        for (&a, &v) in axes.iter().zip(&s) {
            scales[a] = v;
        }
        (sizes_of_scales(&input, &scales)?, scales)
    } else {
        return invalid("Resize needs scales or sizes");
    };
    let roi = if coordinate == ResizeCoordinate::TfCropAndResize {
        crop_roi(im, n, &axes, rank)?
    } else {
        Vec::new()
    };
    let kind = OpKind::Resize {
        shape,
        scales,
        coordinate,
        roi,
        extrapolation_value: n.attr_f("extrapolation_value", 0.0)? as f64,
        mode,
        nearest,
        antialias: n.attr_i("antialias", 0)? != 0,
        cubic_coeff_a: n.attr_f("cubic_coeff_a", -0.75)? as f64,
        exclude_outside: n.attr_i("exclude_outside", 0)? != 0,
    };
    let y = im.op(kind, &[x], n.name)?;
    im.bind(n, &[Some(y)])
}
