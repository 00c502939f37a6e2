//! `nn.gather` (an embedding lookup: `data[..., indices, ...]` along
//! `axis`).
//!
//! Constant indices (position ids, folded shape arithmetic) make a view
//! (`tile.view` of kind gather, [`ViewKind::Gather`]): the readers receive
//! the chosen rows straight from the data's blocks, and no kernel runs.
//!
//! Indices known only at run time cannot steer a static exchange, so the
//! lookup is made local (`tile.gather`, `kernels/gather.S`): the data is
//! split over the tiles by its other dimensions only (each tile holds every
//! row of the gathered axis for its slice of the rest, evenly), every tile
//! receives all the indices, and gathers its slice of every output row. The
//! output's blocks are the data blocks' with the axis replaced by the whole
//! index dimensions, on the same tiles. An index outside the axis faults
//! on the device (`bndchk`): the kernel never reads outside its data.

use super::constants::constant_tensor;
use super::{build_op, data_bytes, kernel_cycles, records, DeviceOp, TileEnv};
use crate::ProgramBuilder;
use ipu_dialects::nn;
use ipu_dialects::tile::{self, Mapping};
use ipu_ir::{Context, Diagnostic, Op, TypeKind, Value};
use ipu_isa::kernels::KernelSpec;
use ipu_program::geometry::{blocks, elem_bytes, mapping_of, spread, Block, Layout};
use ipu_program::Word;

pub struct Gather;

/// The largest divisor of `n` that is at most `at_most`.
fn divisor_at_most(n: i64, at_most: i64) -> i64 {
    (1..=at_most.min(n).max(1))
        .rev()
        .find(|g| n % g == 0)
        .unwrap_or(1)
}

/// The data's mapping: the gathered axis whole, the other dimensions split
/// evenly over at most `tiles` tiles, last dimension first.
pub fn data_mapping(shape: &[i64], axis: usize, tiles: u32) -> Mapping {
    let mut remaining = tiles.max(1) as i64;
    let mut grid = vec![1i64; shape.len()];
    for d in (0..shape.len()).rev().filter(|&d| d != axis) {
        grid[d] = divisor_at_most(shape[d].max(1), remaining);
        remaining /= grid[d];
    }
    Mapping {
        grid,
        first_tile: 0,
        stride: 1,
    }
}

/// The output's mapping for data mapping `dm`: the axis replaced by
/// `index_rank` unsplit dimensions (block b of both on the same tile).
fn output_mapping(dm: &Mapping, axis: usize, index_rank: usize) -> Mapping {
    let mut grid = dm.grid[..axis].to_vec();
    grid.extend(std::iter::repeat_n(1, index_rank));
    grid.extend_from_slice(&dm.grid[axis + 1..]);
    Mapping { grid, ..dm.clone() }
}

/// Bytes of an index element the kernel reads (i64 or i32).
fn index_bytes(cx: &Context, v: Value) -> Result<usize, String> {
    let kind = cx
        .tensor_parts(cx.value_type(v))
        .map(|(_, e)| cx.type_kind(e).clone());
    match kind {
        Some(TypeKind::Integer {
            width: w @ (32 | 64),
            signedness: ipu_ir::types::Signedness::Signless | ipu_ir::types::Signedness::Signed,
        }) => Ok(w as usize / 8),
        _ => Err(format!(
            "has indices of type {}; the device gathers with i64 or i32 indices",
            ipu_ir::printer::type_to_string(cx, cx.value_type(v))
        )),
    }
}

/// What the kernel of a run-time gather needs to know.
struct Plan {
    axis: usize,
    data_mapping: Mapping,
    mapping: Mapping,
    spec: KernelSpec,
    data_block_bytes: u64,
    index_buffer_bytes: u64,
}

/// The plan of gather `op` (nn or tile: same operands and result) with its
/// data under `dm`.
fn plan(cx: &Context, op: Op, axis: usize, dm: Mapping) -> Result<Plan, String> {
    let (data, indices) = (cx.operand(op, 0), cx.operand(op, 1));
    let shape = cx.value_shape(data);
    let ishape = cx.value_shape(indices);
    let out = cx.value_shape(cx.result(op, 0));
    if axis >= shape.len() || dm.grid.len() != shape.len() || dm.grid[axis] != 1 {
        return Err("has a data mapping that splits the gathered axis".into());
    }
    if shape.iter().chain(&ishape).any(|&d| d <= 0) {
        return Err("gathers no elements".into());
    }
    if shape.iter().zip(&dm.grid).any(|(&d, &g)| d % g != 0) {
        return Err("has a data mapping that splits a dimension unevenly".into());
    }
    let ib = index_bytes(cx, indices)?;
    let eb = elem_bytes(cx, data);
    let bshape = dm.block_shape(&shape);
    let pre: i64 = bshape[..axis].iter().product();
    let row_bytes = bshape[axis + 1..].iter().product::<i64>() * eb;
    let ni: i64 = ishape.iter().product();
    let mapping = output_mapping(&dm, axis, ishape.len());
    if mapping.grid.len() != out.len() {
        return Err("has a result of the wrong rank".into());
    }
    let spec = KernelSpec::gather(
        row_bytes as usize,
        shape[axis] as usize,
        ni as usize,
        pre as usize,
        ib,
    );
    Ok(Plan {
        axis,
        data_block_bytes: (bshape.iter().product::<i64>() * eb) as u64,
        index_buffer_bytes: ni as u64 * ib as u64,
        data_mapping: dm,
        mapping,
        spec,
    })
}

/// Whether `v` is a constant at the `nn` stage.
fn is_nn_constant(cx: &Context, v: Value) -> bool {
    cx.defining_op(v).is_some_and(|c| nn::Constant::isa(cx, c))
}

impl DeviceOp for Gather {
    /// Its data and indices come only through operand buffers, so a
    /// constant table sits once, in them, with no home of its own.
    fn reads_operand_buffers(&self) -> bool {
        true
    }

    fn nn_ops(&self) -> Vec<&'static str> {
        vec![nn::Gather::NAME]
    }

    fn tile_op(&self) -> &'static str {
        tile::Gather::NAME
    }

    fn operand_mappings(&self, cx: &Context, op: Op, env: &TileEnv) -> Vec<(usize, Mapping)> {
        let target = env.target;
        if is_nn_constant(cx, cx.operand(op, 1)) {
            return Vec::new();
        }
        let axis = nn::Gather(op).axis(cx) as usize;
        let shape = cx.value_shape(cx.operand(op, 0));
        if axis >= shape.len() {
            return Vec::new();
        }
        vec![(0, data_mapping(&shape, axis, target.tiles()))]
    }

    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic> {
        let loc = cx.op_loc(op);
        let err = |m: String| Diagnostic::error(loc, format!("'nn.gather' op {m}"));
        let axis = nn::Gather(op).axis(cx) as usize;
        let (data, indices) = (cx.operand(op, 0), cx.operand(op, 1));
        let shape = cx.value_shape(data);
        let result = cx.result(op, 0);
        let rshape = cx.value_shape(result);
        let ty = cx.value_type(result);
        if let Some(t) = constant_tensor(cx, indices) {
            // Constant indices: a view of the data, checked here.
            let dim = shape[axis];
            let mut idx = t.to_i64_vec();
            for i in idx.iter_mut() {
                let j = if *i < 0 { *i + dim } else { *i };
                if !(0..dim).contains(&j) {
                    return Err(err(format!(
                        "has index {i} out of range for axis {axis} of size {dim}"
                    )));
                }
                *i = j;
            }
            let attrs = vec![
                ("kind", cx.string_attr("gather")),
                ("axis", cx.i64_attr(axis as i64)),
                ("indices", cx.i64_array_attr(idx)),
                ("mapping", spread(&rshape, env.target.tiles()).to_attr(cx)),
            ];
            return Ok(build_op(
                cx,
                tile::View::NAME,
                &[data],
                Some(ty),
                attrs,
                loc,
            ));
        }
        let dm = data_mapping(&shape, axis, env.target.tiles());
        let p = plan(cx, op, axis, dm).map_err(err)?;
        let out_block = (p.mapping.block_shape(&rshape).iter().product::<i64>()
            * elem_bytes(cx, result)) as u64;
        let need = p.data_block_bytes + out_block + p.index_buffer_bytes;
        let available = data_bytes(env.target);
        if need > available {
            return Err(err(format!(
                "does not fit: each tile holds all {} rows of its slice of the data ({} bytes), its output and every index: {need} bytes, but a tile of {} has {available} for data",
                shape[axis], p.data_block_bytes, env.target.name
            )));
        }
        let cycles = kernel_cycles(&p.spec).map_err(err)?;
        let attrs = vec![
            ("axis", cx.i64_attr(p.axis as i64)),
            ("kernel", cx.string_attr(&p.spec.name())),
            ("cycles", cx.i64_attr(cycles as i64)),
            ("mapping", p.mapping.to_attr(cx)),
            ("data_mapping", p.data_mapping.to_attr(cx)),
        ];
        Ok(build_op(
            cx,
            tile::Gather::NAME,
            &[data, indices],
            Some(ty),
            attrs,
            loc,
        ))
    }

    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic> {
        let cx = b.cx();
        let g = tile::Gather(op);
        let (axis, dm) = (g.axis(cx) as usize, g.data_mapping(cx));
        let p = plan(cx, op, axis, dm).map_err(|e| b.err(op, e))?;
        let recorded = g.kernel(cx);
        if recorded != p.spec.name() || mapping_of(cx, op).as_ref() != Some(&p.mapping) {
            return Err(b.err(
                op,
                format!(
                    "records kernel '{recorded}', but its operands and mapping call for '{}'",
                    p.spec.name()
                ),
            ));
        }
        let (data, indices) = (cx.operand(op, 0), cx.operand(op, 1));
        let dblocks = blocks(&p.data_mapping, &cx.value_shape(data));
        let data_at = b.operand(op, 0, &dblocks, Layout::RowMajor, p.data_block_bytes, false)?;
        // Every tile reads every index.
        let ishape = cx.value_shape(indices);
        let ineed: Vec<Block> = dblocks
            .iter()
            .map(|d| Block {
                tile: d.tile,
                lo: vec![0; ishape.len()],
                hi: ishape.clone(),
            })
            .collect();
        let idx_at = b.operand(op, 1, &ineed, Layout::RowMajor, p.index_buffer_bytes, false)?;
        let set = b.next_set();
        b.begin_compute(op, "", tile::Gather::NAME);
        let result = cx.result(op, 0);
        let res = b.home(op, result, &p.mapping, &format!("s{set}.result"), false)?;
        for d in &dblocks {
            let (Some(&db), Some(&ix)) = (data_at.at.get(&d.tile), idx_at.at.get(&d.tile)) else {
                return Err(b.err(op, format!("has no operand buffer on tile {}", d.tile)));
            };
            let call = records::gather(
                &p.spec,
                Word::Buf(db, 0),
                Word::Buf(ix, 0),
                Word::Buf(res, 0),
            );
            b.call(d.tile, call);
        }
        b.end_compute(op)?;
        b.finish_op();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_stays_whole_and_the_rest_splits_evenly() {
        let grid = |s: &[i64], a, t| data_mapping(s, a, t).grid;
        // A GPT-2 sized table over ipu21: one column of all 50257 rows per tile.
        assert_eq!(grid(&[50257, 768], 0, 1472), [1, 768]);
        assert_eq!(grid(&[10, 24], 0, 16), [1, 12]);
        assert_eq!(grid(&[3, 8], 1, 16), [3, 1]);
        // Last dimension first, each split a divisor of its dimension.
        assert_eq!(grid(&[4, 7, 6], 1, 16), [2, 1, 6]);
        assert_eq!(grid(&[13, 5], 0, 4), [1, 1]);
        let dm = data_mapping(&[4, 7, 6], 1, 16);
        let om = output_mapping(&dm, 1, 2);
        assert_eq!(om.grid, [2, 1, 1, 6]);
        assert_eq!((om.first_tile, om.stride), (dm.first_tile, dm.stride));
        // A scalar index drops the axis.
        assert_eq!(output_mapping(&dm, 1, 0).grid, [2, 6]);
    }
}
