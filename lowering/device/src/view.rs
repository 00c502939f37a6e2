//! Layout ops (`tile.view`): transpose, reshape, broadcast, slice and
//! concat (and gathers by constant indices, built by [`super::gather`]). They run nowhere: each is a view of its inputs
//! ([`crate::tile_to_exchange::view`]), and the exchange phase that feeds
//! a reader moves the right elements of the inputs' blocks straight into
//! the layout the reader wants. Only a view streamed to the host gets
//! storage, filled by an exchange phase of its own.
//!
//! Mapping: a view's `mapping` is where its blocks would go if stored: a
//! transpose permutes its input's grid, anything else is spread over the
//! tiles; readers that follow their operand's mapping (elementwise ops)
//! take it.

use super::{build_op, DeviceOp, TileEnv};
use crate::ProgramBuilder;
use ipu_dialects::nn;
use ipu_dialects::tile::{self, Mapping};
use ipu_ir::{Attr, Context, Diagnostic, Op};
use ipu_program::geometry::spread;
use ipu_program::view::{View, ViewKind};
use ipu_reference::ops::OpKind;
use ipu_target::Target;

pub struct Views;

/// The view a `tile.view` (or the nn op it came from) describes.
pub fn view_of(cx: &Context, op: Op) -> Result<View, String> {
    let shape = cx.value_shape(cx.result(op, 0));
    let input_shapes: Vec<Vec<i64>> = cx.operands(op).iter().map(|&v| cx.value_shape(v)).collect();
    let v = tile::View(op);
    let ints = |a: Option<&[i64]>, n: &str| a.map(<[i64]>::to_vec).ok_or(format!("has no '{n}'"));
    let kind = match v.kind(cx) {
        "transpose" => ViewKind::Transpose(
            ints(v.permutation(cx), "permutation")?
                .into_iter()
                .map(|p| p as usize)
                .collect(),
        ),
        "reshape" => ViewKind::Reshape,
        "broadcast" => ViewKind::Broadcast,
        "slice" => ViewKind::Slice {
            starts: ints(v.starts(cx), "starts")?,
            steps: ints(v.steps(cx), "steps")?,
        },
        "concat" => ViewKind::Concat {
            axis: v.axis(cx).ok_or("has no axis")? as usize,
        },
        "gather" => ViewKind::Gather {
            axis: v.axis(cx).ok_or("has no axis")? as usize,
            indices: ints(v.indices(cx), "indices")?,
        },
        other => return Err(format!("has an unknown view kind '{other}'")),
    };
    Ok(View {
        kind,
        input_shapes,
        shape,
    })
}

impl DeviceOp for Views {
    fn nn_ops(&self) -> Vec<&'static str> {
        vec![
            nn::Transpose::NAME,
            nn::Reshape::NAME,
            nn::Broadcast::NAME,
            nn::Slice::NAME,
            nn::Concat::NAME,
        ]
    }

    fn tile_op(&self) -> &'static str {
        tile::View::NAME
    }

    /// Layout only: no arithmetic (its bytes move in exchanges).
    fn peak_tile_cycles(&self, _cx: &Context, _op: Op, _target: &Target) -> u64 {
        0
    }

    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic> {
        let loc = cx.op_loc(op);
        let name = cx.name_str(op).to_string();
        let err = |m: String| Diagnostic::error(loc, format!("'{name}' op {m}"));
        let kind = ipu_dialects::nn::op_kind(cx, op).map_err(err)?;
        let result = cx.result(op, 0);
        let shape = cx.value_shape(result);
        let tiles = env.target.tiles();
        let input = cx.operand(op, 0);
        let mut attrs: Vec<(&str, Attr)> = Vec::new();
        let mapping = match &kind {
            OpKind::Transpose { perm } => {
                attrs.push(("kind", cx.string_attr("transpose")));
                attrs.push((
                    "permutation",
                    cx.i64_array_attr(perm.iter().map(|&p| p as i64).collect()),
                ));
                match env.mappings.get(&input) {
                    Some(m) => Mapping {
                        grid: perm.iter().map(|&p| m.grid[p]).collect(),
                        ..m.clone()
                    },
                    None => spread(&shape, tiles),
                }
            }
            OpKind::Reshape { .. } => {
                attrs.push(("kind", cx.string_attr("reshape")));
                spread(&shape, tiles)
            }
            OpKind::Broadcast { .. } => {
                attrs.push(("kind", cx.string_attr("broadcast")));
                spread(&shape, tiles)
            }
            OpKind::Slice {
                starts,
                ends,
                steps,
            } => {
                attrs.push(("kind", cx.string_attr("slice")));
                attrs.push(("starts", cx.i64_array_attr(starts.clone())));
                attrs.push(("ends", cx.i64_array_attr(ends.clone())));
                attrs.push(("steps", cx.i64_array_attr(steps.clone())));
                spread(&shape, tiles)
            }
            OpKind::Concat { axis } => {
                attrs.push(("kind", cx.string_attr("concat")));
                attrs.push(("axis", cx.i64_attr(*axis as i64)));
                spread(&shape, tiles)
            }
            _ => return Err(err("is not a layout op".into())),
        };
        attrs.push(("mapping", mapping.to_attr(cx)));
        let operands = cx.operands(op).to_vec();
        let ty = cx.value_type(result);
        Ok(build_op(
            cx,
            tile::View::NAME,
            &operands,
            Some(ty),
            attrs,
            loc,
        ))
    }

    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic> {
        let cx = b.cx();
        let view = view_of(cx, op).map_err(|e| b.err(op, e))?;
        for (i, &v) in cx.operands(op).iter().enumerate() {
            if b.home_of(v).is_none() && !b.is_view(v) {
                return Err(b.err(op, format!("operand #{i} has no tile mapping")));
            }
        }
        b.add_view(cx.result(op, 0), view, cx.operands(op).to_vec());
        Ok(())
    }
}
