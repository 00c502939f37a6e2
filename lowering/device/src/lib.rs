//! How an op reaches the device: one [`DeviceOp`] per op family, the only
//! place the lowerings look at op names.
//!
//! A device op says, for the `nn` ops it lowers:
//! * how they may be mapped over tiles ([`DeviceOp::operand_mappings`], the
//!   layouts it wants its operands in, and [`DeviceOp::to_tile`], which
//!   chooses the result's mapping and the kernel specialisation, and builds
//!   the `tile` op recording both with the cost from the kernel's own cycle
//!   formula, [`kernel_cycles`]);
//! * what each tile reads and calls ([`DeviceOp::to_program`], which turns
//!   the tile op into exchange phases and compute sets of kernel calls with
//!   their state records, through a [`ProgramBuilder`]).
//!
//! `convert-nn-to-tile` and `convert-tile-to-exchange` dispatch through
//! [`for_nn`] and [`for_tile`]; `convert-exchange-to-machine` needs no op
//! knowledge at all (the exchange stage is calls and transfers). The
//! elementwise family is a table ([`map::ELEMENTWISE`]): adding an op whose
//! kernel exists is one row.
//!
//! Depends on the program model (`ipu-program`) and below, never on a
//! pass: [`ProgramBuilder`] is a trait defined here and implemented by
//! `ipu-tile-to-exchange`, which passes [`peak_tile_cycles`] to its builder.

pub mod builder;
pub mod constants;
pub mod gather;
pub mod ints;
pub mod map;
pub mod matmul;
pub mod matmul_plan;
pub mod predicate;
pub mod reduce;
pub mod rows;
pub mod view;

pub use builder::{Delivery, EpilogueRule, Home, OperandAt, ProgramBuilder};
pub use ipu_program::kernel_cycles;
pub use ipu_program::records;

use ipu_dialects::nn;
use ipu_dialects::tile::{self, Mapping};
use ipu_ir::{Context, Diagnostic, Op, Value};
use ipu_target::Target;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// What `to_tile` knows about the program lowered so far.
pub struct TileEnv<'a> {
    pub target: &'a Target,
    /// The mapping of every value lowered so far.
    pub mappings: &'a FxHashMap<Value, Mapping>,
    /// What else is resident on the tiles of the ops that plan within
    /// memory ([`DeviceOp::plans_within_memory`]).
    pub resident: &'a FxHashMap<Op, Resident>,
}

impl TileEnv<'_> {
    /// What else is resident on the tiles while `op` runs (nothing, for an
    /// op the function's resident ledger does not list).
    pub fn resident_at(&self, op: Op) -> Resident {
        self.resident.get(&op).cloned().unwrap_or_default()
    }
}

/// Bytes per tile (from tile 0) of the data resident from load, constants
/// and parameters, which sit in the buffers of the ops that read them from
/// load until those run, besides an op's own.
#[derive(Clone, Debug, Default)]
pub struct Resident {
    /// Held while the op runs: what the ops after it read.
    pub during: Arc<Vec<u64>>,
    /// Held at load: what every other op reads.
    pub at_load: Arc<Vec<u64>>,
    /// Per operand, whether it is resident from load.
    pub operands: Vec<bool>,
    /// The most tiles that may hold a copy of a resident operand's element
    /// (`None`: as many as read it), so a deep model's parameters fit.
    pub max_copies: Option<u64>,
    /// How many times the function runs in the program (once per call of
    /// it; 0 or 1: once), each run with resident operands of its own: a
    /// matmul holds its own resident operands that many times.
    pub instances: u64,
}

/// The lowering of one family of ops to the device.
pub trait DeviceOp: Sync {
    /// The `nn` ops it lowers.
    fn nn_ops(&self) -> Vec<&'static str>;
    /// The `tile` op it builds.
    fn tile_op(&self) -> &'static str;
    /// Layouts it wants operands in (operand index, mapping); the first
    /// consumer of a value decides its producer's layout.
    fn operand_mappings(&self, _cx: &Context, _op: Op, _env: &TileEnv) -> Vec<(usize, Mapping)> {
        Vec::new()
    }
    /// Whether its mapping depends on the memory left on its tiles, so it
    /// needs to know what else is resident there ([`TileEnv::resident_at`]).
    fn plans_within_memory(&self) -> bool {
        false
    }
    /// Whether an op that plans within memory finds a plan beside what
    /// `env` says is resident on its tiles.
    fn fits_in_memory(&self, _cx: &Context, _op: Op, _env: &TileEnv) -> bool {
        true
    }
    /// The bytes per tile `(tile, bytes)` its operands resident from load
    /// (`resident(i)` for operand `i`) take in its operand buffers: by
    /// default each block of the layout it wants the operand in, or of the
    /// operand spread over the tiles.
    fn resident_operand_bytes(
        &self,
        cx: &Context,
        op: Op,
        env: &TileEnv,
        resident: &dyn Fn(usize) -> bool,
    ) -> Vec<(u32, u64)> {
        let wants = self.operand_mappings(cx, op, env);
        let mut out = Vec::new();
        for (i, &v) in cx.operands(op).iter().enumerate() {
            if !resident(i) {
                continue;
            }
            let shape = cx.value_shape(v);
            let m = wants
                .iter()
                .find(|(j, _)| *j == i)
                .map(|(_, m)| m.clone())
                .unwrap_or_else(|| ipu_program::geometry::spread(&shape, env.target.tiles()));
            let eb = cx
                .tensor_parts(cx.value_type(v))
                .and_then(|(_, e)| ipu_ir::numeric::storage_bytes(cx.type_kind(e)))
                .unwrap_or(4) as i64;
            for b in ipu_program::geometry::blocks(&m, &shape) {
                let n: i64 = b.lo.iter().zip(&b.hi).map(|(l, h)| h - l).product();
                out.push((b.tile, ipu_program::stored_bytes((n * eb).max(0) as u64)));
            }
        }
        out
    }
    /// nn -> tile: builds the tile op that replaces `op` (not yet inserted);
    /// its result's mapping is its `mapping` attribute.
    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic>;
    /// tile -> exchange: the supersteps of tile op `op`.
    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic>;
    /// Whether its tile op reads operands only from operand buffers the
    /// exchange fills, so a value only such ops read needs no blocks of
    /// its own (a home).
    fn reads_operand_buffers(&self) -> bool {
        false
    }
    /// The cycles one tile would take for tile op `op`'s arithmetic at the
    /// target's peak rate for the model's types: the roofline spreads them
    /// over every tile. By default one vector instruction per cycle over the
    /// op's largest operand or result.
    fn peak_tile_cycles(&self, cx: &Context, op: Op, target: &Target) -> u64 {
        vector_peak_tile_cycles(cx, op, target)
    }
}

/// Elements and widest element bytes of the tensors an op reads and writes.
fn tensor_extent(cx: &Context, op: Op) -> (u64, u64) {
    let mut elements = 0u64;
    let mut bytes = 1u64;
    let values = cx.operands(op).iter().copied().chain(cx.results(op));
    for v in values {
        if let Some((shape, e)) = cx.tensor_parts(cx.value_type(v)) {
            let n = shape.iter().map(|&d| d.max(0) as u64).product::<u64>();
            elements = elements.max(n);
            let eb = ipu_ir::numeric::storage_bytes(cx.type_kind(e)).unwrap_or(4) as u64;
            bytes = bytes.max(eb);
        }
    }
    (elements, bytes)
}

/// One vector instruction per tile cycle (the worker contexts issue in
/// turn), each on a datapath's worth of the op's widest elements.
pub fn vector_peak_tile_cycles(cx: &Context, op: Op, target: &Target) -> u64 {
    let (elements, bytes) = tensor_extent(cx, op);
    let v = &target.vector;
    let lanes = match bytes {
        1 => v.f8_lanes,
        2 => v.f16_lanes,
        4 => v.f32_lanes,
        b => (v.datapath_bits / (8 * b as u32)).max(1),
    };
    elements.div_ceil(u64::from(lanes.max(1)))
}

static DEVICE_OPS: &[&dyn DeviceOp] = &[
    &matmul::Matmul,
    &map::Map,
    &view::Views,
    &reduce::Reduce,
    &rows::Softmax,
    &rows::LayerNorm,
    &predicate::Predicates,
    &predicate::Select,
    &gather::Gather,
];

/// The device lowering of an `nn` op, if it has one.
pub fn for_nn(cx: &Context, op: Op) -> Option<&'static dyn DeviceOp> {
    let name = cx.name_str(op);
    DEVICE_OPS
        .iter()
        .copied()
        .find(|d| d.nn_ops().contains(&name))
}

/// The device lowering that builds tile op `op`.
pub fn for_tile(cx: &Context, op: Op) -> Option<&'static dyn DeviceOp> {
    let name = cx.name_str(op);
    DEVICE_OPS.iter().copied().find(|d| d.tile_op() == name)
}

/// The peak-rate cycles of tile op `op` on one tile
/// ([`DeviceOp::peak_tile_cycles`]; 0 for an op no device op builds): the
/// function `ipu-tile-to-exchange` gives its builder for compute-set bounds.
pub fn peak_tile_cycles(cx: &Context, op: Op, target: &Target) -> u64 {
    for_tile(cx, op).map_or(0, |d| d.peak_tile_cycles(cx, op, target))
}

/// The power-of-two scale of an FP8 value (its logical value is the stored
/// code times 2^scale): set by the cast that made it, or by the `scale` of
/// a constant or host input that holds FP8 codes (a weight cast at compile
/// time), kept by views, 0 for anything else.
pub fn fp8_scale(cx: &Context, v: Value) -> i32 {
    let is_f8 = ipu_program::elem::value_elem(cx, v).is_some_and(ipu_program::elem::is_f8);
    let Some(op) = cx.defining_op(v).filter(|_| is_f8) else {
        return 0;
    };
    if let Some(c) = tile::Constant::cast(cx, op) {
        return c.scale(cx).unwrap_or(0) as i32;
    }
    if let Some(h) = tile::HostInput::cast(cx, op) {
        return h.scale(cx).unwrap_or(0) as i32;
    }
    // The casts to FP8 (`nn.cast`, `tile.map`) carry it.
    let scale = match nn::Cast::cast(cx, op) {
        Some(c) => c.scale(cx),
        None => tile::Map::cast(cx, op).and_then(|m| m.scale(cx)),
    };
    if let Some(s) = scale {
        return s as i32;
    }
    let keeps_scale = tile::View::isa(cx, op)
        || tile::Gather::isa(cx, op)
        || for_nn(cx, op).is_some_and(|d| d.tile_op() == tile::View::NAME);
    if keeps_scale && !cx.operands(op).is_empty() {
        return fp8_scale(cx, cx.operand(op, 0));
    }
    0
}

/// Builds an op from its parts (not inserted anywhere).
pub fn build_op(
    cx: &mut Context,
    name: &str,
    operands: &[Value],
    result: Option<ipu_ir::Type>,
    attrs: Vec<(&str, ipu_ir::Attr)>,
    loc: ipu_ir::Loc,
) -> Op {
    let n = cx.op_name(name);
    let mut st = ipu_ir::OperationState::new(n, loc);
    st.operands.extend_from_slice(operands);
    st.result_types.extend(result);
    let entries = attrs.into_iter().map(|(k, v)| (cx.sym(k), v)).collect();
    st.attrs = cx.dict_attr(entries);
    cx.create_op(st)
}

/// The largest block of `shape` under `m`, in bytes of `eb`-byte elements.
pub(crate) fn block_bytes_of(m: &Mapping, shape: &[i64], eb: i64) -> u64 {
    (m.block_shape(shape).iter().product::<i64>() * eb).max(0) as u64
}

/// Bytes of a tile's memory available for data when planning (the target's
/// memory less what planning keeps back for code and tables).
pub(crate) fn data_bytes(target: &Target) -> u64 {
    target
        .sram_bytes()
        .saturating_sub(target.memory.code_reserve_bytes)
}
