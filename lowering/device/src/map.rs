//! The elementwise family (`tile.map`): unary and binary arithmetic from
//! the table [`ELEMENTWISE`], row-vector broadcasts, and casts.
//!
//! Mapping: the result follows the mapping of an operand of its shape when
//! one has been placed (so chains of elementwise ops exchange nothing),
//! else it is spread over the tiles; each tile reads the matching
//! (broadcast) rectangle of every operand. Kernel: `elementwise` over the
//! block for same-shape operands, `rows` with a row vector for a bias-like
//! broadcast of the last dimension, `cast` for conversions.

use super::{
    block_bytes_of, build_op, data_bytes, fp8_scale, kernel_cycles, records, DeviceOp, TileEnv,
};
use crate::{Delivery, ProgramBuilder};
use ipu_dialects::nn;
use ipu_dialects::tile::{self, MapFn, Mapping};
use ipu_ir::{Context, Diagnostic, Op};
use ipu_isa::kernels::{ElemType, EwOp, KernelSpec, RowOp};
use ipu_program::elem::{name as elem_name, value_elem};
use ipu_program::geometry::{broadcast_needs, elem_bytes, mapping_of, spread, Layout};
use ipu_program::view::{View, ViewKind};
use ipu_program::Word;
use records::cast_scales;

/// One elementwise op: the `nn` op, its `tile.map` function, its kernel op.
pub struct EwRow {
    pub nn: &'static str,
    pub f: MapFn,
    pub op: EwOp,
}

const fn row(nn: &'static str, f: MapFn, op: EwOp) -> EwRow {
    EwRow { nn, f, op }
}

/// The elementwise ops with a kernel (`kernels/elementwise.S`, f32 and f16).
pub static ELEMENTWISE: &[EwRow] = &[
    row(nn::Add::NAME, MapFn::Add, EwOp::Add),
    row(nn::Sub::NAME, MapFn::Sub, EwOp::Sub),
    row(nn::Mul::NAME, MapFn::Mul, EwOp::Mul),
    row(nn::Div::NAME, MapFn::Div, EwOp::Div),
    row(nn::Max::NAME, MapFn::Max, EwOp::Max),
    row(nn::Min::NAME, MapFn::Min, EwOp::Min),
    row(nn::Relu::NAME, MapFn::Relu, EwOp::Relu),
    row(nn::Gelu::NAME, MapFn::Gelu, EwOp::Gelu),
    row(nn::Exp::NAME, MapFn::Exp, EwOp::Exp),
    row(nn::Tanh::NAME, MapFn::Tanh, EwOp::Tanh),
    row(nn::Erf::NAME, MapFn::Erf, EwOp::Erf),
    row(nn::Rsqrt::NAME, MapFn::Rsqrt, EwOp::Rsqrt),
    row(nn::Sqrt::NAME, MapFn::Sqrt, EwOp::Sqrt),
    row(nn::Neg::NAME, MapFn::Neg, EwOp::Neg),
    row(nn::Abs::NAME, MapFn::Abs, EwOp::Abs),
    row(nn::Sigmoid::NAME, MapFn::Sigmoid, EwOp::Sigmoid),
    row(nn::Reciprocal::NAME, MapFn::Reciprocal, EwOp::Recip),
    row(nn::Log::NAME, MapFn::Log, EwOp::Log),
    row(nn::Pow::NAME, MapFn::Pow, EwOp::Pow),
    // `nn.gelu {approximate = "tanh"}`.
    row(nn::Gelu::NAME, MapFn::GeluTanh, EwOp::GeluTanh),
];

/// The row-vector kernel of a broadcast binary op, where there is one.
fn row_vector_op(f: MapFn) -> Option<RowOp> {
    match f {
        MapFn::Add => Some(RowOp::AddRowVector),
        MapFn::Mul => Some(RowOp::MulRowVector),
        _ => None,
    }
}

pub struct Map;

/// The kernel a map calls on each tile.
enum Choice {
    /// Same-shaped operands; broadcast operands are delivered expanded to
    /// the result's block.
    Ew(EwOp),
    /// A row-vector op; the operand holding the matrix.
    Row(usize),
    Cast,
    /// Integers or booleans (`intew.S`); broadcast operands as for `Ew`.
    Int,
}

fn round_up(v: usize, to: usize) -> usize {
    v.div_ceil(to.max(1)) * to.max(1)
}

/// Chooses the kernel for `op` (an nn op or its tile.map: both have the
/// same operands and result) computing `f` over the blocks of `m`.
/// The unit attribute of a `tile.map` cast to FP8 that overflows to NaN or
/// infinity (ONNX `saturate=0`) instead of saturating.
const NONSATURATING: &str = "nonsaturating";

fn choose(cx: &Context, op: Op, f: MapFn, m: &Mapping) -> Result<(Choice, KernelSpec), String> {
    let result = cx.result(op, 0);
    let rshape = cx.value_shape(result);
    let bshape = m.block_shape(&rshape);
    let full = bshape.iter().product::<i64>().max(1) as usize;
    let rank = rshape.len();
    if rank >= 2 && rshape[rank - 1] % m.grid[rank - 1] != 0 {
        return Err(
            "splits its last dimension unevenly, which the code generator does not lay out yet"
                .into(),
        );
    }
    if let Some(r) = super::ints::kernel(cx, op, Some(f), full) {
        return r.map(|spec| (Choice::Int, spec));
    }
    let out = value_elem(cx, result).ok_or("has a result type without kernels")?;
    let n_ops = cx.operands(op).len();
    if f == MapFn::Cast {
        let input = cx.operand(op, 0);
        if let Some(code) = int_cast_code(cx, input) {
            if !matches!(out, ElemType::F32 | ElemType::F16) {
                return Err(format!(
                    "casts integers to {}, but the cast kernel takes them to f32 and f16 only",
                    elem_name(out)
                ));
            }
            // N padded to the kernel's whole groups, which its workers
            // split (each worker's first group lies in the block).
            let g = ipu_isa::kernels::cast_group(code, out as i64) as usize;
            return Ok((Choice::Cast, int_cast(code, out, round_up(full, g))));
        }
        let from = value_elem(cx, input).ok_or("casts from a type without kernels")?;
        let g = ipu_isa::kernels::cast_group(from as i64, out as i64) as usize;
        let mut spec = KernelSpec::cast(from, out, round_up(full, g));
        // nn casts to FP8 saturate with `saturate`; tile casts unless marked.
        let nonsaturating = ipu_program::elem::is_f8(out)
            && match nn::Cast::cast(cx, op) {
                Some(c) => !c.saturate(cx),
                // An undeclared unit attribute of `tile.map`: any value is on.
                None => cx.get_attr(op, NONSATURATING).is_some(),
            };
        if nonsaturating {
            spec.params.insert("SAT".into(), 0);
        }
        return Ok((Choice::Cast, spec));
    }
    let ew = ELEMENTWISE
        .iter()
        .find(|r| r.f == f)
        .ok_or_else(|| format!("'{}' has no elementwise kernel", f.name()))?;
    if !matches!(out, ElemType::F32 | ElemType::F16) {
        return Err(format!(
            "'{}' on {} elements has no kernel (f32 and f16 do)",
            f.name(),
            elem_name(out)
        ));
    }
    if ew.op.is_binary() != (n_ops == 2) {
        return Err(format!("'{}' takes {} operands", f.name(), n_ops));
    }
    for i in 0..n_ops {
        if value_elem(cx, cx.operand(op, i)) != Some(out) {
            return Err(format!(
                "has operand #{i} of type {}, but its kernel computes in {} (cast it first)",
                ipu_ir::printer::type_to_string(cx, cx.value_type(cx.operand(op, i))),
                elem_name(out)
            ));
        }
    }
    let same: Vec<bool> = (0..n_ops)
        .map(|i| cx.value_shape(cx.operand(op, i)) == rshape)
        .collect();
    if same.iter().all(|&s| s) {
        let granule = 8 / out.bytes().min(8);
        return Ok((
            Choice::Ew(ew.op),
            KernelSpec::elementwise(ew.op, out, round_up(full, granule)),
        ));
    }
    let granule = 8 / out.bytes().min(8);
    let expanded = || {
        Ok((
            Choice::Ew(ew.op),
            KernelSpec::elementwise(ew.op, out, round_up(full, granule)),
        ))
    };
    // A bias-like row vector has a kernel of its own; any other broadcast
    // operand is delivered expanded.
    let Some(mat) = same.iter().position(|&s| s) else {
        return expanded();
    };
    let vshape = cx.value_shape(cx.operand(op, 1 - mat));
    let row_vector = vshape.last() == rshape.last()
        && vshape[..vshape.len().saturating_sub(1)]
            .iter()
            .all(|&d| d == 1);
    let cols = *bshape.last().unwrap_or(&1) as usize;
    match row_vector_op(f).filter(|_| row_vector && (cols * out.bytes()).is_multiple_of(8)) {
        Some(r) => {
            let rows = full / cols.max(1);
            Ok((Choice::Row(mat), KernelSpec::rows(r, out, rows, cols, 0.0)))
        }
        None => expanded(),
    }
}

/// `FROM` of `cast.S` for a signless or signed integer `v` of 32 or 64
/// bits (5 i32, 6 i64).
fn int_cast_code(cx: &Context, v: ipu_ir::Value) -> Option<i64> {
    use ipu_ir::types::{Signedness, TypeKind};
    let (_, e) = cx.tensor_parts(cx.value_type(v))?;
    match cx.type_kind(e) {
        TypeKind::Integer {
            width: 32,
            signedness,
        } if *signedness != Signedness::Unsigned => Some(5),
        TypeKind::Integer {
            width: 64,
            signedness,
        } if *signedness != Signedness::Unsigned => Some(6),
        _ => None,
    }
}

/// The cast kernel from integers (`FROM` 5 or 6) to `to`, over `n` elements.
fn int_cast(from: i64, to: ElemType, n: usize) -> KernelSpec {
    let params = [("FROM", from), ("TO", to as i64), ("N", n as i64)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    KernelSpec {
        source: "cast",
        entry: "cast",
        params,
    }
}

/// Elements of the rectangle of an operand of `vshape` one result block of
/// `bshape` reads (broadcast dimensions read one element).
fn operand_elems(rshape: &[i64], bshape: &[i64], vshape: &[i64]) -> i64 {
    let off = rshape.len() - vshape.len();
    vshape
        .iter()
        .enumerate()
        .map(|(d, &n)| if n == 1 { 1 } else { bshape[d + off] })
        .product()
}

/// A `tile.constant` of `v`'s splat value at `shape` under `m`, when `v` is
/// a splat constant, placed before `at`: the one an earlier reader placed
/// when there is one (splats are loaded with the image and never written,
/// so their readers share them).
pub(crate) fn splat_at(
    cx: &mut Context,
    at: Op,
    v: ipu_ir::Value,
    shape: &[i64],
    m: &Mapping,
    loc: ipu_ir::Loc,
) -> Option<ipu_ir::Value> {
    use ipu_ir::types::{AttrKind, DenseData};
    let c = cx
        .defining_op(v)
        .and_then(|c| tile::Constant::cast(cx, c))?;
    let AttrKind::DenseElements { ty, data } = cx.attr_kind(c.value(cx)) else {
        return None;
    };
    let eb = cx
        .tensor_parts(*ty)
        .and_then(|(_, e)| ipu_ir::numeric::storage_bytes(cx.type_kind(e)))?;
    let splat = data.splat || (data.bytes.len() == eb);
    if !splat || data.bytes.len() != eb {
        return None;
    }
    let bytes = data.bytes.clone();
    let (_, e) = cx.tensor_parts(cx.value_type(v))?;
    let ty = cx.tensor_type(shape, e);
    let value = cx.attr(AttrKind::DenseElements {
        ty,
        data: DenseData { splat: true, bytes },
    });
    let mapping = m.to_attr(cx);
    let mut prev = cx.prev_op(at);
    while let Some(p) = prev {
        if tile::Constant::isa(cx, p)
            && cx.get_attr(p, "value") == Some(value)
            && cx.get_attr(p, "mapping") == Some(mapping)
        {
            return Some(cx.result(p, 0));
        }
        prev = cx.prev_op(p);
    }
    let attrs = vec![("value", value), ("mapping", mapping)];
    let c = build_op(cx, tile::Constant::NAME, &[], Some(ty), attrs, loc);
    cx.insert_op_before(at, c);
    Some(cx.result(c, 0))
}

fn map_fn_of_nn(name: &str) -> Option<MapFn> {
    if name == nn::Cast::NAME {
        return Some(MapFn::Cast);
    }
    ELEMENTWISE.iter().find(|r| r.nn == name).map(|r| r.f)
}

/// Offers `op` as an epilogue to the calls producing its input
/// ([`ProgramBuilder::fold_epilogue`]): a bias-like row-vector add, or an
/// exact f16 -> f32 widening. Whether it folded.
#[allow(clippy::too_many_arguments)]
fn fold(
    op: Op,
    b: &mut dyn ProgramBuilder<'_>,
    f: MapFn,
    choice: &Choice,
    spec: &KernelSpec,
    at: &[rustc_hash::FxHashMap<u32, usize>],
    home: (&Mapping, &str),
    label: &str,
) -> Result<bool, Diagnostic> {
    let cx = b.cx();
    let param = |k: &str| spec.params.get(k).copied().unwrap_or(0);
    // The input's value read by nothing but `op`.
    let only_reader = |v: ipu_ir::Value| cx.uses(v).iter().all(|u| u.op == op);
    let folded = match *choice {
        Choice::Row(mat) if f == MapFn::Add && param("OP") == RowOp::AddRowVector as i64 => {
            let input = cx.operand(op, mat);
            // The input's buffer then holds no longer the input.
            if !only_reader(input) {
                return Ok(false);
            }
            let cols = param("C") as usize;
            let vector = &at[1 - mat];
            b.fold_epilogue(op, input, home, label, true, &mut |t, res| {
                Some(records::Epilogue::AddRowVector {
                    cols,
                    vector: Word::Buf(*vector.get(&t)?, 0),
                    out: Word::Buf(res, 0),
                })
            })?
        }
        Choice::Cast
            if param("FROM") == ElemType::F16 as i64
                && param("TO") == ElemType::F32 as i64
                && spec.params.len() == 3 =>
        {
            let input = cx.operand(op, 0);
            let only = only_reader(input);
            b.fold_epilogue(op, input, home, label, only, &mut |_, res| {
                Some(records::Epilogue::Widen {
                    out: Word::Buf(res, 0),
                    only,
                })
            })?
        }
        // GELU of an f16 value, in the producing pass (a split-K sum's).
        Choice::Ew(e @ (EwOp::Gelu | EwOp::GeluTanh)) if param("TYPE") == 1 => {
            let input = cx.operand(op, 0);
            if !only_reader(input) {
                return Ok(false);
            }
            b.fold_epilogue(op, input, home, label, true, &mut |_, res| {
                Some(records::Epilogue::Activate {
                    op: e,
                    out: Word::Buf(res, 0),
                })
            })?
        }
        // A saturating f16 -> FP8 cast, stored by the producing pass beside
        // its f16 input (which stays, so the cast is checked on it).
        Choice::Cast
            if param("FROM") == ElemType::F16 as i64
                && matches!(param("TO"), 3 | 4)
                && spec.params.len() == 3 =>
        {
            let input = cx.operand(op, 0);
            let to = if param("TO") == 3 {
                ElemType::F8E4M3FN
            } else {
                ElemType::F8E5M2
            };
            let (scale, _) =
                cast_scales(spec, fp8_scale(cx, input), fp8_scale(cx, cx.result(op, 0)));
            b.fold_epilogue(op, input, home, label, false, &mut |_, res| {
                Some(records::Epilogue::CastCopy {
                    to,
                    scale,
                    out: Word::Buf(res, 0),
                })
            })?
        }
        // f32 -> f16 or FP8 (saturating) of a value nothing else reads,
        // cast by its producer's last pass as it writes it.
        Choice::Cast
            if param("FROM") == ElemType::F32 as i64
                && [ElemType::F16, ElemType::F8E4M3FN, ElemType::F8E5M2]
                    .iter()
                    .any(|&t| param("TO") == t as i64)
                && spec.params.len() == 3 =>
        {
            let input = cx.operand(op, 0);
            if !only_reader(input) {
                return Ok(false);
            }
            let to = match param("TO") {
                1 => ElemType::F16,
                3 => ElemType::F8E4M3FN,
                _ => ElemType::F8E5M2,
            };
            let (scale, _) = cast_scales(spec, 0, fp8_scale(cx, cx.result(op, 0)));
            b.fold_epilogue(op, input, home, label, true, &mut |_, res| {
                Some(records::Epilogue::Cast {
                    to,
                    scale,
                    out: Word::Buf(res, 0),
                })
            })?
        }
        _ => None,
    };
    Ok(folded.is_some())
}

impl DeviceOp for Map {
    fn reads_operand_buffers(&self) -> bool {
        true
    }

    fn nn_ops(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = ELEMENTWISE.iter().map(|r| r.nn).collect();
        v.push(nn::Cast::NAME);
        v
    }

    fn tile_op(&self) -> &'static str {
        tile::Map::NAME
    }

    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic> {
        let name = cx.name_str(op).to_string();
        let loc = cx.op_loc(op);
        let err = |m: String| Diagnostic::error(loc, format!("'{name}' op {m}"));
        let mut f = map_fn_of_nn(&name).ok_or_else(|| err("is not an elementwise op".into()))?;
        if f == MapFn::Gelu && nn::Gelu(op).approximate(cx) == "tanh" {
            f = MapFn::GeluTanh;
        }
        let result = cx.result(op, 0);
        let to_f8 = value_elem(cx, result).is_some_and(ipu_program::elem::is_f8);
        let nonsaturating = f == MapFn::Cast && to_f8 && !nn::Cast(op).saturate(cx);
        let from_f32_f16 = value_elem(cx, cx.operand(op, 0))
            .is_some_and(|e| matches!(e, ElemType::F32 | ElemType::F16));
        if nonsaturating && !from_f32_f16 {
            return Err(err(
                "to FP8 without saturate (overflow becomes NaN or infinity) has a kernel from f32 and f16 only; cast through one, or add `saturate`".into(),
            ));
        }
        let scale = nn::Cast::cast(cx, op).and_then(|c| c.scale(cx));
        let rshape = cx.value_shape(result);
        let mut operands = cx.operands(op).to_vec();
        if f == MapFn::Pow {
            // A constant exponent of another type (ONNX Pow allows any)
            // becomes the base's type when that changes none of its values.
            if let Some(c) =
                super::constants::converted_to(cx, operands[1], cx.value_type(operands[0]), loc)
                    .map_err(err)?
            {
                cx.insert_op_before(op, c);
                operands[1] = cx.result(c, 0);
                // The kernel choice below reads the op's own operands.
                cx.set_operand(op, 1, operands[1]);
            }
        }
        let m = operands
            .iter()
            .find(|&&v| cx.value_shape(v) == rshape)
            .and_then(|v| env.mappings.get(v).cloned())
            .unwrap_or_else(|| spread(&rshape, env.target.tiles()));
        // The operand the row-vector kernel would read as its vector (the
        // kernel takes it only for whole 64-bit rows of a block).
        let vector = match choose(cx, op, f, &m) {
            Ok((Choice::Row(mat), _)) => Some(1 - mat),
            _ => None,
        };
        // A splat constant broadcast to the result is a constant of the
        // result's shape and mapping, loaded with the image: read in place,
        // never exchanged.
        for (i, v) in operands.iter_mut().enumerate() {
            if cx.value_shape(*v) != rshape {
                if let Some(c) = splat_at(cx, op, *v, &rshape, &m, loc) {
                    *v = c;
                    // The kernel choice below reads the op's own operands,
                    // as `to_program` reads the tile op's: both see the
                    // splat at the result's shape (a splat row vector would
                    // otherwise pick the row-vector kernel here only).
                    cx.set_operand(op, i, *v);
                    continue;
                }
                // Any other constant read expanded (not as a bias-like row
                // vector: an exchange cannot broadcast a constant loaded
                // with the image) is expanded at compile time, likewise.
                if vector != Some(i) {
                    if let Some(c) =
                        super::constants::broadcast_to(cx, *v, &rshape, &m, loc).map_err(err)?
                    {
                        cx.insert_op_before(op, c);
                        *v = cx.result(c, 0);
                    }
                }
            }
        }
        // Memory first: a block that cannot fit a tile is refused before
        // anything proportional to the tensor runs.
        let bshape = m.block_shape(&rshape);
        let mut need = block_bytes_of(&m, &rshape, elem_bytes(cx, result));
        for &v in &operands {
            let rect = operand_elems(&rshape, &bshape, &cx.value_shape(v)) as u64;
            need = need.saturating_add(rect.saturating_mul(elem_bytes(cx, v) as u64));
        }
        let available = data_bytes(env.target);
        if need > available {
            return Err(err(format!(
                "does not fit: {rshape:?} over a {:?} grid needs {need} bytes per tile for its blocks, but a tile of {} has {available} for data",
                m.grid, env.target.name
            )));
        }
        let (_, spec) = choose(cx, op, f, &m).map_err(err)?;
        let cycles = kernel_cycles(&spec).map_err(err)?;
        let mut attrs = vec![
            ("fn", f.to_attr(cx)),
            ("kernel", cx.string_attr(&spec.name())),
            ("cycles", cx.i64_attr(cycles as i64)),
            ("mapping", m.to_attr(cx)),
        ];
        if let Some(s) = scale {
            attrs.push(("scale", cx.i64_attr(s)));
        }
        if nonsaturating {
            attrs.push((NONSATURATING, ipu_ir::Attr::UNIT));
        }
        let ty = cx.value_type(result);
        Ok(build_op(
            cx,
            tile::Map::NAME,
            &operands,
            Some(ty),
            attrs,
            loc,
        ))
    }

    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic> {
        let cx = b.cx();
        let f = tile::Map(op).map_fn(cx);
        let m = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
        let (choice, spec) = choose(cx, op, f, &m).map_err(|e| b.err(op, e))?;
        let recorded = tile::Map(op).kernel(cx);
        if recorded != spec.name() {
            return Err(b.err(
                op,
                format!(
                    "records kernel '{recorded}', but its operands and mapping call for '{}'",
                    spec.name()
                ),
            ));
        }
        let result = cx.result(op, 0);
        let rshape = cx.value_shape(result);
        let bshape = m.block_shape(&rshape);
        let n_ops = cx.operands(op).len();
        let mut at = Vec::new();
        // Every operand that moves in one phase: one fixed cost and sync.
        b.begin_one_phase();
        for i in 0..n_ops {
            let v = cx.operand(op, i);
            let vshape = cx.value_shape(v);
            let eb = elem_bytes(cx, v) as u64;
            // Paired loads: the float kernels' binary ops.
            let binary = n_ops == 2 && !matches!(choice, Choice::Int);
            // An elementwise kernel reads every operand at the result's shape.
            let expand = matches!(choice, Choice::Ew(_) | Choice::Int) && vshape != rshape;
            let got = if expand {
                let via = View {
                    kind: ViewKind::Broadcast,
                    input_shapes: vec![vshape],
                    shape: rshape.clone(),
                };
                let need = ipu_program::geometry::blocks(&m, &rshape);
                let full: i64 = bshape.iter().product();
                let want = Delivery {
                    need: &need,
                    layout: Layout::RowMajor,
                    bytes: full as u64 * eb,
                    interleaved: binary,
                };
                b.operand_via(op, i, Some(&via), want)?
            } else {
                let elems = operand_elems(&rshape, &bshape, &vshape);
                let need = broadcast_needs(&m, &rshape, &vshape);
                b.operand(op, i, &need, Layout::RowMajor, elems as u64 * eb, binary)?
            };
            at.push(got.at);
        }
        b.end_one_phase(op)?;
        let set = b.next_set();
        let label = format!("tile.map {}", f.name());
        let name = format!("s{set}.result");
        if fold(op, b, f, &choice, &spec, &at, (&m, &name), &label)? {
            b.finish_op();
            return Ok(());
        }
        b.begin_compute(op, "", &label);
        let res = b.home(op, result, &m, &name, false)?;
        let tiles: Vec<u32> = b
            .home_of(result)
            .map(|h| h.blocks.iter().map(|bl| bl.tile).collect())
            .unwrap_or_default();
        for tl in tiles {
            let ins: Option<Vec<_>> = at.iter().map(|a| a.get(&tl).copied()).collect();
            let Some(ins) = ins else {
                return Err(b.err(op, format!("has no operand buffer on tile {tl}")));
            };
            let call = match choice {
                Choice::Ew(e) => records::elementwise(
                    &spec,
                    Word::Buf(ins[0], 0),
                    e.is_binary().then(|| Word::Buf(ins[1], 0)),
                    Word::Buf(res, 0),
                ),
                Choice::Row(mat) => records::rows_vector(
                    &spec,
                    Word::Buf(ins[mat], 0),
                    Word::Buf(ins[1 - mat], 0),
                    Word::Buf(res, 0),
                ),
                Choice::Int => {
                    let ins: Vec<Word> = ins.iter().map(|&i| Word::Buf(i, 0)).collect();
                    records::intew(&spec, &ins, Word::Buf(res, 0))
                }
                Choice::Cast => {
                    let (s_in, s_out) = (fp8_scale(cx, cx.operand(op, 0)), fp8_scale(cx, result));
                    let (scale, out_scale) = cast_scales(&spec, s_in, s_out);
                    records::cast(
                        &spec,
                        Word::Buf(ins[0], 0),
                        Word::Buf(res, 0),
                        scale,
                        out_scale,
                    )
                }
            };
            b.call(tl, call);
        }
        b.end_compute(op)?;
        b.finish_op();
        Ok(())
    }
}
