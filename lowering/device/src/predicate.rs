//! Booleans on the device: comparisons of f32 or f16 values and boolean
//! logic (`tile.predicate`: `nn.equal`, `nn.less`, `nn.greater`, `nn.and`,
//! `nn.or`, `nn.not`; `kernels/compare.S`), and `nn.select`
//! (`tile.select`, `kernels/select.S`). Booleans (`i1`) are one byte 0/1
//! per element, in tile memory as in host streams.
//!
//! Mapping: as the elementwise family's, the result follows the mapping of
//! an operand of its shape when one has been placed, else it is spread over
//! the tiles; every operand is delivered at the result's block (broadcast
//! operands expanded by the exchange, splat constants as constants of the
//! result's shape), so numpy broadcasting of any shape costs no kernel.
//! Every buffer holds its block row-major in the block's own extent, so
//! edge blocks of an uneven split line up element for element too.

use super::map::splat_at;
use super::{block_bytes_of, build_op, data_bytes, kernel_cycles, records, DeviceOp, TileEnv};
use crate::{Delivery, ProgramBuilder};
use ipu_dialects::nn;
use ipu_dialects::tile::{self, MapFn, Mapping};
use ipu_ir::{Context, Diagnostic, Op, TypeKind, Value};
use ipu_isa::kernels::{CompareOp, ElemType, KernelSpec};
use ipu_program::elem::{name as elem_name, value_elem};
use ipu_program::geometry::{blocks, elem_bytes, mapping_of, spread, Layout};
use ipu_program::view::{View, ViewKind};
use ipu_program::Word;

/// The `nn` ops of `tile.predicate`, their function and kernel op.
const PREDICATES: &[(&str, MapFn, CompareOp)] = &[
    (nn::Equal::NAME, MapFn::Equal, CompareOp::Eq),
    (nn::Less::NAME, MapFn::Less, CompareOp::Lt),
    (nn::Greater::NAME, MapFn::Greater, CompareOp::Gt),
    (nn::And::NAME, MapFn::And, CompareOp::And),
    (nn::Or::NAME, MapFn::Or, CompareOp::Or),
    (nn::Not::NAME, MapFn::Not, CompareOp::Not),
];

fn is_bool(cx: &Context, v: Value) -> bool {
    cx.tensor_parts(cx.value_type(v)).is_some_and(|(_, e)| {
        matches!(
            cx.type_kind(e),
            TypeKind::Integer {
                width: 1,
                signedness: ipu_ir::types::Signedness::Signless
            }
        )
    })
}

fn type_name(cx: &Context, v: Value) -> String {
    ipu_ir::printer::type_to_string(cx, cx.value_type(v))
}

/// The element type of `v` as the IR spells it.
fn elem_type_name(cx: &Context, v: Value) -> String {
    let t = cx.value_type(v);
    let e = cx.tensor_parts(t).map_or(t, |(_, e)| e);
    ipu_ir::printer::type_to_string(cx, e)
}

/// The f32 or f16 element type of `v`, or why it has none.
fn float_elem(cx: &Context, v: Value, what: &str) -> Result<ElemType, String> {
    match value_elem(cx, v) {
        Some(e @ (ElemType::F32 | ElemType::F16)) => Ok(e),
        Some(e) => Err(format!(
            "on {} {what} has no kernel (f32 and f16 do)",
            elem_name(e)
        )),
        None => Err(format!(
            "on {} {what} has no kernel (f32 and f16 do; integer comparisons are folded when constant)",
            elem_type_name(cx, v)
        )),
    }
}

/// Elements of one block of the result under `m`.
fn block_elems(cx: &Context, op: Op, m: &Mapping) -> usize {
    let rshape = cx.value_shape(cx.result(op, 0));
    m.block_shape(&rshape).iter().product::<i64>().max(1) as usize
}

/// The kernel of `tile.predicate` `op` (or the nn op it comes from)
/// computing `f` over the blocks of `m`.
fn predicate_kernel(cx: &Context, op: Op, f: MapFn, m: &Mapping) -> Result<KernelSpec, String> {
    let &(_, _, cop) = PREDICATES
        .iter()
        .find(|p| p.1 == f)
        .ok_or_else(|| format!("'{}' is not a comparison or boolean op", f.name()))?;
    let n_ops = cx.operands(op).len();
    if n_ops != 1 + cop.is_binary() as usize {
        return Err(format!("'{}' takes {} operands", f.name(), n_ops));
    }
    if let Some(r) = super::ints::kernel(cx, op, Some(f), block_elems(cx, op, m)) {
        return r;
    }
    let ty = if cop.is_comparison() {
        let a = float_elem(cx, cx.operand(op, 0), "elements")?;
        let b = float_elem(cx, cx.operand(op, 1), "elements")?;
        if a != b {
            return Err(format!(
                "compares {} with {}: both operands need one type",
                elem_name(a),
                elem_name(b)
            ));
        }
        a
    } else {
        if let Some(&v) = cx.operands(op).iter().find(|&&v| !is_bool(cx, v)) {
            return Err(format!(
                "on {} has no kernel (boolean logic takes i1)",
                type_name(cx, v)
            ));
        }
        ElemType::F32
    };
    Ok(KernelSpec::compare(cop, ty, block_elems(cx, op, m)))
}

/// The kernel of `tile.select` `op` (or the `nn.select` it comes from).
fn select_kernel(cx: &Context, op: Op, m: &Mapping) -> Result<KernelSpec, String> {
    if cx.operands(op).len() != 3 {
        return Err("takes a condition and two values".into());
    }
    if !is_bool(cx, cx.operand(op, 0)) {
        return Err(format!(
            "has a condition of type {}, which must be i1",
            type_name(cx, cx.operand(op, 0))
        ));
    }
    if let Some(r) = super::ints::kernel(cx, op, None, block_elems(cx, op, m)) {
        return r;
    }
    let ty = float_elem(cx, cx.operand(op, 1), "values")?;
    Ok(KernelSpec::select(ty, block_elems(cx, op, m)))
}

/// nn -> tile for both ops: the result's mapping, splat constants at the
/// result's shape, the memory check, the kernel from `kernel`, the tile op
/// `tile_op` with `attrs` added.
fn lower(
    cx: &mut Context,
    op: Op,
    env: &TileEnv,
    tile_op: &str,
    kernel: impl Fn(&Context, Op, &Mapping) -> Result<KernelSpec, String>,
    mut attrs: Vec<(&str, ipu_ir::Attr)>,
) -> Result<Op, Diagnostic> {
    let name = cx.name_str(op).to_string();
    let loc = cx.op_loc(op);
    let err = |m: String| Diagnostic::error(loc, format!("'{name}' op {m}"));
    let result = cx.result(op, 0);
    let rshape = cx.value_shape(result);
    let mut operands = cx.operands(op).to_vec();
    let m = operands
        .iter()
        .find(|&&v| cx.value_shape(v) == rshape)
        .and_then(|v| env.mappings.get(v).cloned())
        .unwrap_or_else(|| spread(&rshape, env.target.tiles()));
    let spec = kernel(cx, op, &m).map_err(err)?;
    for v in operands.iter_mut() {
        if cx.value_shape(*v) != rshape {
            if let Some(c) = splat_at(cx, op, *v, &rshape, &m, loc) {
                *v = c;
            }
        }
    }
    // Every operand is read at the result's block.
    let mut need = block_bytes_of(&m, &rshape, elem_bytes(cx, result));
    for &v in &operands {
        need = need.saturating_add(block_bytes_of(&m, &rshape, elem_bytes(cx, v)));
    }
    let available = data_bytes(env.target);
    if need > available {
        return Err(err(format!(
            "does not fit: {rshape:?} over a {:?} grid needs {need} bytes per tile for its blocks, but a tile of {} has {available} for data",
            m.grid, env.target.name
        )));
    }
    let cycles = kernel_cycles(&spec).map_err(err)?;
    attrs.push(("kernel", cx.string_attr(&spec.name())));
    attrs.push(("cycles", cx.i64_attr(cycles as i64)));
    attrs.push(("mapping", m.to_attr(cx)));
    let ty = cx.value_type(result);
    Ok(build_op(cx, tile_op, &operands, Some(ty), attrs, loc))
}

/// tile -> exchange for both ops: every operand delivered at the result's
/// blocks (`interleaved[i]`: read with paired loads), then one call per
/// tile built by `call` from the operand buffers and the result's.
fn program(
    op: Op,
    b: &mut dyn ProgramBuilder<'_>,
    spec: &KernelSpec,
    label: &str,
    interleaved: &[bool],
    call: impl Fn(&[Word], Word) -> ipu_program::Call,
) -> Result<(), Diagnostic> {
    let cx = b.cx();
    let recorded = match tile::Predicate::cast(cx, op) {
        Some(p) => p.kernel(cx),
        None => tile::Select(op).kernel(cx),
    };
    if recorded != spec.name() {
        return Err(b.err(
            op,
            format!(
                "records kernel '{recorded}', but its operands and mapping call for '{}'",
                spec.name()
            ),
        ));
    }
    let m = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
    let result = cx.result(op, 0);
    let rshape = cx.value_shape(result);
    let full: i64 = m.block_shape(&rshape).iter().product();
    let need = blocks(&m, &rshape);
    let mut at = Vec::new();
    for i in 0..cx.operands(op).len() {
        let v = cx.operand(op, i);
        let vshape = cx.value_shape(v);
        let bytes = full as u64 * elem_bytes(cx, v) as u64;
        let il = interleaved.get(i).copied().unwrap_or(false);
        let got = if vshape == rshape {
            b.operand(op, i, &need, Layout::RowMajor, bytes, il)?
        } else {
            let via = View {
                kind: ViewKind::Broadcast,
                input_shapes: vec![vshape],
                shape: rshape.clone(),
            };
            {
                let want = Delivery {
                    need: &need,
                    layout: Layout::RowMajor,
                    bytes,
                    interleaved: il,
                };
                b.operand_via(op, i, Some(&via), want)?
            }
        };
        at.push(got.at);
    }
    let set = b.next_set();
    b.begin_compute(op, "", label);
    let res = b.home(op, result, &m, &format!("s{set}.result"), false)?;
    for n in &need {
        let ins: Option<Vec<Word>> = at
            .iter()
            .map(|a| a.get(&n.tile).map(|&buf| Word::Buf(buf, 0)))
            .collect();
        let Some(ins) = ins else {
            return Err(b.err(op, format!("has no operand buffer on tile {}", n.tile)));
        };
        b.call(n.tile, call(&ins, Word::Buf(res, 0)));
    }
    b.end_compute(op)?;
    b.finish_op();
    Ok(())
}

/// Comparisons and boolean logic: `tile.predicate`.
pub struct Predicates;

impl DeviceOp for Predicates {
    fn nn_ops(&self) -> Vec<&'static str> {
        PREDICATES.iter().map(|p| p.0).collect()
    }

    fn tile_op(&self) -> &'static str {
        tile::Predicate::NAME
    }

    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic> {
        let name = cx.name_str(op);
        let f = PREDICATES
            .iter()
            .find(|p| p.0 == name)
            .map(|p| p.1)
            .ok_or_else(|| {
                Diagnostic::error(cx.op_loc(op), format!("'{name}' op is not a predicate"))
            })?;
        let attrs = vec![("fn", f.to_attr(cx))];
        lower(
            cx,
            op,
            env,
            tile::Predicate::NAME,
            move |cx, op, m| predicate_kernel(cx, op, f, m),
            attrs,
        )
    }

    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic> {
        let cx = b.cx();
        let f = tile::Predicate(op).map_fn(cx);
        let m = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
        let spec = predicate_kernel(cx, op, f, &m).map_err(|e| b.err(op, e))?;
        let int = spec.source == "intew";
        let binary = cx.operands(op).len() == 2 && !int;
        let s = spec.clone();
        program(
            op,
            b,
            &spec,
            &format!("tile.predicate {}", f.name()),
            &[binary, binary],
            move |ins, out| match int {
                true => records::intew(&s, ins, out),
                false => records::compare(&s, ins[0], ins.get(1).copied(), out),
            },
        )
    }
}

/// `nn.select`: `tile.select`.
pub struct Select;

impl DeviceOp for Select {
    fn nn_ops(&self) -> Vec<&'static str> {
        vec![nn::Select::NAME]
    }

    fn tile_op(&self) -> &'static str {
        tile::Select::NAME
    }

    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic> {
        lower(cx, op, env, tile::Select::NAME, select_kernel, Vec::new())
    }

    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic> {
        let cx = b.cx();
        let m = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
        let spec = select_kernel(cx, op, &m).map_err(|e| b.err(op, e))?;
        let int = spec.source == "intew";
        let s = spec.clone();
        program(
            op,
            b,
            &spec,
            tile::Select::NAME,
            &[false, !int, !int],
            move |ins, out| match int {
                true => records::intew(&s, ins, out),
                false => records::select(&s, ins[0], ins[1], ins[2], out),
            },
        )
    }
}
