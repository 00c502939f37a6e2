//! The `exchange` dialect: the bulk-synchronous program, explicitly. After
//! `convert-tile-to-exchange` a function holds nothing but:
//!
//! * `exchange.buffer`: per-tile storage (the same size on every tile of
//!   its set), named by `sym_name` and referenced as `@name`; with `reads`
//!   when exchange phases fill it for a compute set (the byte ranges the
//!   compute set reads, which the phases must deliver);
//! * `exchange.host_input`, `exchange.constant`, `exchange.host_output`:
//!   where a function argument, a constant or a result lives (a buffer and
//!   the `mapping` of the value's blocks over tiles);
//! * `exchange.probe`: where a tile op's result is complete (a buffer, the
//!   `mapping` of its blocks and the compute set `after` which they hold
//!   it), for per-op checks against the reference; a plain run ignores it;
//! * the supersteps, in order, each ended by an `exchange.sync`:
//!   `exchange.compute_set` (per-tile kernel calls, `exchange.vertex`, each
//!   with its state record of buffer references and words) and
//!   `exchange.phase` (transfers between buffers, `exchange.move`, with the
//!   verified schedule's horizon, endpoint lower bound, gap, kind and row
//!   size).
//!
//! Transfers are printed compactly as runs ([`TransferRun`]): one run is a
//! family of transfers whose source tile, source offset and destinations
//! step evenly, so a big phase prints as a few lines, never one per byte
//! range. `convert-exchange-to-machine` reads this and nothing else.

use crate::tile::Mapping;
use ipu_ir::context::{Context, Op};
use ipu_ir::declare_op;
use ipu_ir::diag::Diagnostic;
use ipu_ir::opdef::{constraints, Arity, AttrConstraint, Dialect, RegionDef, Trait, ValueDef};
use ipu_ir::types::AttrKind;
use ipu_ir::types::{Attr, Sym, Type};
use ipu_ir::verify::op_error;

const I64_ATTR: AttrConstraint = AttrConstraint {
    description: "64-bit integer attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Integer { ty, .. } if *ty == ipu_ir::Type::I64),
};
const KIND_ATTR: AttrConstraint = AttrConstraint {
    description: "\"compact-streams\", \"paired\" or \"reused\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if matches!(&**s, "compact-streams" | "paired" | "reused")),
};
// Tile sets and mappings are checked by the op verifiers, which say what is
// wrong with them ([`verify_tiles`], [`Mapping::from_attr`]).
const TILES_ATTR: AttrConstraint = AttrConstraint {
    description: "tile set string (\"0 to 1471 step 2, 5\")",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(_)),
};
const MAPPING_ATTR: AttrConstraint = AttrConstraint {
    description: "tile mapping {grid = array<i64: ...>, tiles = array<i64: first, stride>}",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Dictionary(_)),
};
const DICT_ATTR: AttrConstraint = AttrConstraint {
    description: "dictionary of 64-bit integers",
    check: |cx, a| match cx.attr_kind(a) {
        AttrKind::Dictionary(es) => es
            .iter()
            .all(|(_, v)| matches!(cx.attr_kind(*v), AttrKind::Integer { .. })),
        _ => false,
    },
};

const BODY: &[RegionDef] = &[RegionDef {
    name: "body",
    arity: Arity::Single,
    single_block: true,
}];

declare_op! {
    pub static BUFFER_OP: Buffer = "exchange.buffer" {
        operands: [],
        attributes: [
            sym_name: &str [constraints::SYMBOL_NAME_ATTR],
            tiles: &str [TILES_ATTR],
            bytes: i64 [I64_ATTR],
            interleaved: bool [constraints::ANY_ATTR],
            reads: Option<Attr> [constraints::DICT_ARRAY_ATTR],
        ],
        summary: "Storage of `bytes` bytes on each tile of `tiles`, referenced as @sym_name. Kernels read it with \
                  128-bit loads when `interleaved`. With `reads = [{tiles = \"...\", ranges = array<i64: count, \
                  len, stride>}, ...]` the exchange phases (and local copies) before the compute set that reads it \
                  must write the byte ranges [k * stride, k * stride + len), k < count, exactly once on those tiles.",
        assembly_format: Some("attr-dict"),
        verify: Some(verify_buffer),
    }
}

declare_op! {
    pub static HOST_INPUT: HostInput = "exchange.host_input" {
        operands: [input: constraints::ANY_TENSOR],
        attributes: [
            buffer: Option<Sym> [constraints::FLAT_SYMBOL_REF_ATTR],
            mapping: Option<Mapping> [MAPPING_ATTR],
            placements: Option<Attr> [constraints::DICT_ARRAY_ATTR],
            load: bool [constraints::ANY_ATTR],
            tile_type: Option<Type> [TENSOR_TYPE_ATTR],
        ],
        summary: "A function argument streamed from the host: into `buffer`, its blocks laid out by `mapping`, and into \
                  the operand buffers of its readers (`placements`: [{buffer, rects = [{tiles, lo, hi}], chunks?}], each \
                  rectangle in the layout its reader wants). With `load`, it is a parameter written once when the program \
                  is loaded; otherwise before every run. One with `tile_type` holds on the tiles that type, its \
                  input's elements widened exactly (f8E4M3FN, f8E5M2, i8 or ui8 to f16 or f32, f16, bf16, i16 or ui16 \
                  to f32) by the host as it writes them (at load, or at every run).",
        assembly_format: Some("$input attr-dict `:` type($input)"),
        verify: Some(verify_host_input),
    }
}

declare_op! {
    pub static CONSTANT: Constant = "exchange.constant" {
        operands: [],
        attributes: [
            buffer: Option<Sym> [constraints::FLAT_SYMBOL_REF_ATTR],
            mapping: Option<Mapping> [MAPPING_ATTR],
            placements: Option<Attr> [constraints::DICT_ARRAY_ATTR],
            value: Attr [constraints::TYPED_ATTR],
        ],
        summary: "A constant loaded with the tile images: its blocks (laid out by `mapping`) into `buffer`, and \
                  rectangles into the operand buffers of its readers (`placements`, as for exchange.host_input).",
        assembly_format: Some("attr-dict"),
        verify: Some(verify_mapping_rank),
    }
}

declare_op! {
    pub static HOST_OUTPUT: HostOutput = "exchange.host_output" {
        operands: [],
        attributes: [
            buffer: Sym [constraints::FLAT_SYMBOL_REF_ATTR],
            mapping: Mapping [MAPPING_ATTR],
            name: &str [constraints::STRING_ATTR],
            tile_type: Option<Type> [TENSOR_TYPE_ATTR],
        ],
        summary: "Streams `buffer` (blocks laid out by `mapping`) to the host as output `name`; the result stands for \
                  the streamed value in the function's return. One with `tile_type` holds on the tiles that type \
                  (8- or 16-bit integers as exact floats), which the host narrows to the result's type as it reads \
                  it, each element checked to be an integer of that type.",
        results: &[ValueDef {
            name: "result",
            arity: Arity::Single,
            constraint: constraints::ANY_TENSOR,
        }],
        assembly_format: Some("attr-dict `:` type($result)"),
        verify: Some(verify_host_output),
    }
}

const TENSOR_TYPE_ATTR: AttrConstraint = AttrConstraint {
    description: "tensor type attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Type(t) if cx.tensor_parts(*t).is_some()),
};

declare_op! {
    pub static PROBE: Probe = "exchange.probe" {
        operands: [],
        attributes: [
            buffer: Sym [constraints::FLAT_SYMBOL_REF_ATTR],
            mapping: Mapping [MAPPING_ATTR],
            after: Sym [constraints::FLAT_SYMBOL_REF_ATTR],
            ty = "type": Type [TENSOR_TYPE_ATTR],
            source: &str [constraints::STRING_ATTR],
            source_op = "op": &str [constraints::STRING_ATTR],
        ],
        summary: "Where a value of type `type` is complete: `buffer` (blocks laid out by `mapping`) holds it at the end \
                  of compute set `after`. `source` is the location of the op that made it (in the model the program \
                  was compiled from), `op` that op's name. Debug information for per-op checks (`ipu-run \
                  --check-ops`): a plain run ignores it.",
        assembly_format: Some("attr-dict"),
        verify: Some(verify_mapping_rank),
    }
}

declare_op! {
    pub static COMPUTE_SET: ComputeSet = "exchange.compute_set" {
        operands: [],
        attributes: [
            sym_name: &str [constraints::SYMBOL_NAME_ATTR],
            label: &str [constraints::STRING_ATTR],
            cycles: Option<i64> [I64_ATTR],
            bound: Option<i64> [I64_ATTR],
        ],
        summary: "A compute superstep `sym_name`: every tile makes its copies, then runs the vertices naming it, in \
                  order (`label` says which tile op it computes, `cycles` the estimate from the kernels' cycle \
                  formulas, `bound` the roofline: the tile ops' arithmetic at the peak rate of their types over \
                  every tile).",
        regions: BODY,
        traits: &[Trait::NoTerminator],
        assembly_format: Some("attr-dict-with-keyword $body"),
        verify: Some(verify_compute_set),
    }
}

declare_op! {
    pub static VERTEX: Vertex = "exchange.vertex" {
        operands: [],
        attributes: [
            tiles: &str [TILES_ATTR],
            kernel: &str [constraints::STRING_ATTR],
            name: &str [constraints::STRING_ATTR],
            params: Attr [DICT_ATTR],
            record: Attr [constraints::ARRAY_ATTR],
            scratch: Option<i64> [I64_ATTR],
        ],
        summary: "One kernel call on each tile of `tiles`: library kernel `kernel` specialised by `params` (named \
                  `name`); `record` is its state record, one entry per 32-bit word: an integer, a buffer @b (its \
                  address on the tile), or [@b, offset]; `scratch` zero bytes follow.",
        assembly_format: Some("attr-dict"),
        verify: Some(verify_vertex),
    }
}

declare_op! {
    pub static COPY: LocalCopy = "exchange.copy" {
        operands: [],
        attributes: [
            src: Sym [constraints::FLAT_SYMBOL_REF_ATTR],
            dst: Sym [constraints::FLAT_SYMBOL_REF_ATTR],
            runs: Attr [constraints::ARRAY_ATTR],
        ],
        summary: "Operand bytes that stay on their tile: each tile copies them from buffer `src` to buffer `dst` \
                  itself, before the vertices of its compute set; `runs` as in exchange.move, every transfer's \
                  destination being its source tile.",
        assembly_format: Some("attr-dict"),
        verify: Some(verify_move),
    }
}

declare_op! {
    pub static PHASE: Phase = "exchange.phase" {
        operands: [],
        attributes: [
            sym_name: &str [constraints::SYMBOL_NAME_ATTR],
            moves: &str [constraints::STRING_ATTR],
            transfers: i64 [I64_ATTR],
            bytes: i64 [I64_ATTR],
            local_bytes: i64 [I64_ATTR],
            horizon: i64 [I64_ATTR],
            initial_horizon: i64 [I64_ATTR],
            lower_bound: i64 [I64_ATTR],
            gap: i64 [I64_ATTR],
            kind: &str [KIND_ATTR],
            row_words: i64 [I64_ATTR],
            patterns: Attr [constraints::ARRAY_ATTR],
        ],
        summary: "An exchange superstep `sym_name`: the moves of its body, scheduled together. It `moves` an operand \
                  of the next compute set into the layout it reads, or split-K partial sums onto the tiles that add \
                  them up; with its verified schedule's horizon (cycles after the phase's fixed cost), endpoint \
                  lower bound, gap, kind, largest row (words), and the transfers grouped by pattern for reading.",
        regions: BODY,
        traits: &[Trait::NoTerminator],
        assembly_format: Some("attr-dict-with-keyword $body"),
        verify: Some(verify_phase),
    }
}

declare_op! {
    pub static MOVE: Move = "exchange.move" {
        operands: [],
        attributes: [
            src: Sym [constraints::FLAT_SYMBOL_REF_ATTR],
            dst: Sym [constraints::FLAT_SYMBOL_REF_ATTR],
            runs: Attr [constraints::ARRAY_ATTR],
        ],
        summary: "Transfers from buffer `src` on their source tiles to buffer `dst` on their destination tiles \
                  (offsets relative to the buffers), as runs: array<i64: repeat, repeat_src_tile_step, \
                  repeat_src_offset_step, repeat_dst_tile_step, repeat_dst_offset_step, n, src_tile, src_tile_step, \
                  src_offset, src_offset_step, len, dst_tile_step, dst_offset_step, segments, then per segment \
                  count, tile, tile_step, offset, offset_step>. Transfer (r, i) of a run sends len bytes from \
                  (src_tile + i * src_tile_step + r * repeat_src_tile_step, src_offset + ...) to every destination \
                  of the segments (the j-th of a segment at tile + j * tile_step, offset + j * offset_step), each \
                  moved by i * (dst_tile_step, dst_offset_step) + r * (repeat_dst_tile_step, repeat_dst_offset_step).",
        assembly_format: Some("attr-dict"),
        verify: Some(verify_move),
    }
}

declare_op! {
    pub static SYNC: Sync = "exchange.sync" {
        operands: [],
        attributes: [],
        summary: "The chip-wide sync that ends a superstep: every tile waits until all have arrived.",
        assembly_format: Some("attr-dict"),
    }
}

declare_op! {
    pub static CALL: Call = "exchange.call" {
        operands: [],
        variadic: [params: constraints::ANY_TYPE],
        attributes: [
            callee: Sym [constraints::FLAT_SYMBOL_REF_ATTR],
            args: Attr [constraints::ARRAY_ATTR],
            results: Attr [constraints::ARRAY_ATTR],
            source: &str [constraints::STRING_ATTR],
        ],
        summary: "Runs the exchange-stage program of function `callee` here. `args` binds each of the callee's \
                  arguments: a buffer @b of the caller laid out as the callee's input (an activation), an integer k \
                  (operand k, a parameter of the caller loaded straight into the callee's buffers, per call), or \
                  unit (the callee does not read it); `results` names the caller's buffer of each result, laid out \
                  as the callee leaves it; `source` is the call's location key, at which the callee's probes are keyed per \
                  call. Not a superstep of its own: the callee's steps are.",
        assembly_format: Some(
            "$callee `(` $params `)` attr-dict `:` functional-type(operands, results)",
        ),
    }
}

pub static EXCHANGE_DIALECT: Dialect = Dialect {
    name: "exchange",
    description:
        "The bulk-synchronous program: buffers, compute sets of per-tile kernel calls, syncs, and \
                  exchange phases with their schedules.",
    ops: &[
        &BUFFER_OP,
        &HOST_INPUT,
        &CONSTANT,
        &HOST_OUTPUT,
        &PROBE,
        &COMPUTE_SET,
        &VERTEX,
        &COPY,
        &PHASE,
        &MOVE,
        &SYNC,
        &CALL,
    ],
    materialize_constant: None,
};

/// Most transfers the runs of one move may expand to (a bound checked before
/// anything is expanded).
pub const MAX_MOVE_TRANSFERS: u64 = 1 << 24;

/// One segment of a run's destinations: `count` destinations from
/// (`tile`, `offset`), each the previous moved by (`tile_step`, `offset_step`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DstSegment {
    pub count: i64,
    pub tile: i64,
    pub tile_step: i64,
    pub offset: i64,
    pub offset_step: i64,
}

/// A family of `repeat` x `count` transfers that step evenly (see [`MOVE`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferRun {
    /// The outer repetition: the whole run again, moved each time by these
    /// steps (source tile and offset, every destination's tile and offset).
    pub repeat: i64,
    pub repeat_src_tile_step: i64,
    pub repeat_src_offset_step: i64,
    pub repeat_dst_tile_step: i64,
    pub repeat_dst_offset_step: i64,
    pub count: i64,
    pub src_tile: i64,
    pub src_tile_step: i64,
    pub src_offset: i64,
    pub src_offset_step: i64,
    pub len: i64,
    pub dst_tile_step: i64,
    pub dst_offset_step: i64,
    pub dsts: Vec<DstSegment>,
}

/// One transfer of a run: source (tile, offset), length, destinations.
pub type ExpandedTransfer = (u32, u32, u32, Vec<(u32, u32)>);

impl TransferRun {
    pub fn encode(&self) -> Vec<i64> {
        let mut v = vec![
            self.repeat,
            self.repeat_src_tile_step,
            self.repeat_src_offset_step,
            self.repeat_dst_tile_step,
            self.repeat_dst_offset_step,
            self.count,
            self.src_tile,
            self.src_tile_step,
            self.src_offset,
            self.src_offset_step,
            self.len,
            self.dst_tile_step,
            self.dst_offset_step,
            self.dsts.len() as i64,
        ];
        for d in &self.dsts {
            v.extend([d.count, d.tile, d.tile_step, d.offset, d.offset_step]);
        }
        v
    }

    /// Decodes and checks a run: every count positive, the destination
    /// segments as many as the header says, and every tile and offset of
    /// every transfer within `u32` (the caller checks them against the
    /// target and the buffers).
    pub fn decode(v: &[i64]) -> Result<TransferRun, String> {
        const HEAD: usize = 14;
        if v.len() < HEAD {
            return Err(format!(
                "a transfer run has at least {HEAD} entries, this one {}",
                v.len()
            ));
        }
        let segs = v[HEAD - 1];
        if segs < 1 {
            return Err(format!(
                "a transfer run needs at least one destination segment (entry {}), not {segs}",
                HEAD - 1
            ));
        }
        // In i128: a huge segment count must not overflow.
        let want = HEAD as i128 + 5 * segs as i128;
        if v.len() as i128 != want {
            return Err(format!(
                "a transfer run with {segs} destination segments needs {want} entries, not {}",
                v.len()
            ));
        }
        let run = TransferRun {
            repeat: v[0],
            repeat_src_tile_step: v[1],
            repeat_src_offset_step: v[2],
            repeat_dst_tile_step: v[3],
            repeat_dst_offset_step: v[4],
            count: v[5],
            src_tile: v[6],
            src_tile_step: v[7],
            src_offset: v[8],
            src_offset_step: v[9],
            len: v[10],
            dst_tile_step: v[11],
            dst_offset_step: v[12],
            dsts: v[HEAD..]
                .chunks(5)
                .map(|c| DstSegment {
                    count: c[0],
                    tile: c[1],
                    tile_step: c[2],
                    offset: c[3],
                    offset_step: c[4],
                })
                .collect(),
        };
        let bound = MAX_MOVE_TRANSFERS as i64;
        if !(1..=bound).contains(&run.repeat) || !(1..=bound).contains(&run.count) {
            return Err(format!(
                "a transfer run repeats {} times {} transfers; each needs 1 to {MAX_MOVE_TRANSFERS}",
                run.repeat, run.count
            ));
        }
        if run.len < 1 || run.len > u32::MAX as i64 {
            return Err(format!(
                "a transfer length of {} is out of range (1 to {})",
                run.len,
                u32::MAX
            ));
        }
        let (last, rlast) = (run.count - 1, run.repeat - 1);
        // Every corner of base + i * step + r * repeat_step stays in u32.
        let in_u32 = |base: i64, steps: &[(i64, i64)]| -> bool {
            let mut lo = base as i128;
            let mut hi = base as i128;
            for &(step, n) in steps {
                let d = step as i128 * n as i128;
                lo += d.min(0);
                hi += d.max(0);
            }
            lo >= 0 && hi <= u32::MAX as i128
        };
        if !in_u32(
            run.src_tile,
            &[(run.src_tile_step, last), (run.repeat_src_tile_step, rlast)],
        ) || !in_u32(
            run.src_offset,
            &[
                (run.src_offset_step, last),
                (run.repeat_src_offset_step, rlast),
            ],
        ) {
            return Err("a transfer run's source tile or offset leaves the u32 range".into());
        }
        let mut dsts: u64 = 0;
        for d in &run.dsts {
            if !(1..=bound).contains(&d.count) {
                return Err(format!(
                    "a destination segment has {} destinations; it needs 1 to {MAX_MOVE_TRANSFERS}",
                    d.count
                ));
            }
            dsts += d.count as u64;
            let ok = in_u32(
                d.tile,
                &[
                    (d.tile_step, d.count - 1),
                    (run.dst_tile_step, last),
                    (run.repeat_dst_tile_step, rlast),
                ],
            ) && in_u32(
                d.offset,
                &[
                    (d.offset_step, d.count - 1),
                    (run.dst_offset_step, last),
                    (run.repeat_dst_offset_step, rlast),
                ],
            );
            if !ok {
                return Err(
                    "a transfer run's destination tile or offset leaves the u32 range".into(),
                );
            }
        }
        let total = dsts
            .saturating_mul(run.count as u64)
            .saturating_mul(run.repeat as u64);
        if total > MAX_MOVE_TRANSFERS {
            return Err(format!(
                "a transfer run delivers to {total} destinations, more than {MAX_MOVE_TRANSFERS}"
            ));
        }
        Ok(run)
    }

    /// Transfers in the run.
    pub fn len(&self) -> u64 {
        self.count as u64 * self.repeat as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every transfer of a decoded run, in order (repetitions outermost).
    pub fn expand(&self) -> impl Iterator<Item = ExpandedTransfer> + '_ {
        (0..self.repeat).flat_map(move |r| {
            (0..self.count).map(move |i| {
                let dsts = self
                    .dsts
                    .iter()
                    .flat_map(|d| {
                        (0..d.count).map(move |j| {
                            (
                                (d.tile
                                    + j * d.tile_step
                                    + i * self.dst_tile_step
                                    + r * self.repeat_dst_tile_step)
                                    as u32,
                                (d.offset
                                    + j * d.offset_step
                                    + i * self.dst_offset_step
                                    + r * self.repeat_dst_offset_step)
                                    as u32,
                            )
                        })
                    })
                    .collect();
                (
                    (self.src_tile + i * self.src_tile_step + r * self.repeat_src_tile_step) as u32,
                    (self.src_offset + i * self.src_offset_step + r * self.repeat_src_offset_step)
                        as u32,
                    self.len as u32,
                    dsts,
                )
            })
        })
    }
}

/// The op's `tiles`: a tile set of at least one tile.
fn verify_tiles(cx: &Context, op: Op, tiles: &str) -> Result<(), Diagnostic> {
    match crate::machine::parse_tiles(tiles) {
        Ok(t) if t.is_empty() => Err(op_error(cx, op, "tiles must name at least one tile")),
        Ok(_) => Ok(()),
        Err(e) => Err(op_error(cx, op, format!("tiles: {e}"))),
    }
}

/// Integer attributes that count cycles, bytes or words (name, value if
/// present): not negative.
fn verify_non_negative(
    cx: &Context,
    op: Op,
    values: &[(&str, Option<i64>)],
) -> Result<(), Diagnostic> {
    for &(n, v) in values {
        if let Some(v) = v.filter(|&v| v < 0) {
            return Err(op_error(
                cx,
                op,
                format!("{n} must be non-negative, not {v}"),
            ));
        }
    }
    Ok(())
}

fn verify_buffer(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let buffer = Buffer(op);
    verify_tiles(cx, op, buffer.tiles(cx))?;
    let bytes = i128::from(buffer.bytes(cx));
    if !(1..=u32::MAX as i128).contains(&bytes) {
        return Err(op_error(
            cx,
            op,
            format!("bytes must be between 1 and {}, not {bytes}", u32::MAX),
        ));
    }
    if let Some(AttrKind::Array(entries)) = buffer.reads(cx).map(|a| cx.attr_kind(a)) {
        for (i, &e) in entries.iter().enumerate() {
            let AttrKind::Dictionary(kv) = cx.attr_kind(e) else {
                unreachable!("checked by the constraint")
            };
            let err = |m: String| op_error(cx, op, format!("reads[{i}]: {m}"));
            if let Some((k, _)) = kv
                .iter()
                .find(|(k, _)| !matches!(cx.str(*k), "tiles" | "ranges"))
            {
                return Err(err(format!(
                    "unknown entry '{}' (an entry holds tiles and ranges)",
                    cx.str(*k)
                )));
            }
            let get = |k: &str| {
                kv.iter()
                    .find(|(n, _)| cx.str(*n) == k)
                    .map(|(_, v)| cx.attr_kind(*v))
            };
            match get("tiles") {
                Some(AttrKind::String(s)) => {
                    crate::machine::parse_tiles(s).map_err(|e| err(format!("tiles: {e}")))?;
                }
                _ => return Err(err("needs tiles = \"<tile set>\"".into())),
            }
            let Some(AttrKind::I64Array(r)) = get("ranges") else {
                return Err(err("needs ranges = array<i64: count, len, stride>".into()));
            };
            let [count, len, stride] = r[..] else {
                return Err(err(format!(
                    "ranges must be array<i64: count, len, stride>, not {} entries",
                    r.len()
                )));
            };
            if count < 1 || len < 1 || stride < len {
                return Err(err(format!(
                    "ranges [{count}, {len}, {stride}] need count >= 1, len >= 1 and stride >= len"
                )));
            }
            let end = (count as i128 - 1) * stride as i128 + len as i128;
            if end > bytes {
                return Err(err(format!(
                    "ranges [{count}, {len}, {stride}] end at byte {end}, beyond the buffer's {bytes} bytes"
                )));
            }
        }
    }
    Ok(())
}

/// The type a host input has on the tiles: its `tile_type`, or its input's.
pub fn host_input_tile_type(cx: &Context, op: Op) -> ipu_ir::Type {
    let input = HostInput(op);
    input
        .tile_type(cx)
        .unwrap_or_else(|| cx.value_type(input.input(cx)))
}

fn verify_host_input(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let host = cx.value_type(HostInput(op).input(cx));
    let tile = host_input_tile_type(cx, op);
    if tile != host {
        crate::tile::verify_load_conversion(cx, op, host, tile)?;
    }
    verify_mapping_rank(cx, op)
}

/// The type a host output has on the tiles: its `tile_type`, or its
/// result's.
pub fn host_output_tile_type(cx: &Context, op: Op) -> ipu_ir::Type {
    HostOutput(op)
        .tile_type(cx)
        .unwrap_or_else(|| cx.value_type(cx.result(op, 0)))
}

fn verify_host_output(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let host = cx.value_type(cx.result(op, 0));
    let tile = host_output_tile_type(cx, op);
    if tile != host {
        crate::tile::verify_output_narrowing(cx, op, host, tile)?;
    }
    verify_mapping_rank(cx, op)
}

fn verify_mapping_rank(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let (buffer, mapping) = (cx.get_attr(op, "buffer"), cx.get_attr(op, "mapping"));
    let placements = cx.get_attr(op, "placements").is_some();
    if buffer.is_some() != mapping.is_some() {
        return Err(op_error(
            cx,
            op,
            "needs both buffer and mapping, or neither",
        ));
    }
    let Some(mapping) = mapping else {
        if placements {
            return Ok(());
        }
        return Err(op_error(
            cx,
            op,
            "needs a buffer and mapping, or placements",
        ));
    };
    let m = Mapping::from_attr(cx, mapping).map_err(|e| op_error(cx, op, e))?;
    let ty = if cx.num_results(op) == 1 {
        cx.value_type(cx.result(op, 0))
    } else if let Some(AttrKind::Type(t)) = cx.get_attr(op, "type").map(|a| cx.attr_kind(a)) {
        *t
    } else if !cx.operands(op).is_empty() {
        cx.value_type(cx.operand(op, 0))
    } else {
        match cx.get_attr(op, "value").map(|a| cx.attr_kind(a)) {
            Some(AttrKind::DenseElements { ty, .. } | AttrKind::DenseResource { ty, .. }) => *ty,
            _ => return Err(op_error(
                cx,
                op,
                "value must be dense elements (dense<...> or dense_resource<...>) of a tensor type",
            )),
        }
    };
    let rank = cx.tensor_parts(ty).map(|(s, _)| s.len()).unwrap_or(0);
    if m.grid.len() != rank {
        return Err(op_error(
            cx,
            op,
            format!(
                "mapping grid has rank {}, but the value has rank {rank}",
                m.grid.len()
            ),
        ));
    }
    Ok(())
}

fn body_ops(cx: &Context, op: Op) -> Vec<Op> {
    cx.entry_block(cx.region(op, 0))
        .map(|b| cx.block_ops_vec(b))
        .unwrap_or_default()
}

fn verify_compute_set(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let set = ComputeSet(op);
    verify_non_negative(
        cx,
        op,
        &[("cycles", set.cycles(cx)), ("bound", set.bound(cx))],
    )?;
    let mut vertices = false;
    for o in body_ops(cx, op) {
        if Vertex::isa(cx, o) {
            vertices = true;
        } else if LocalCopy::isa(cx, o) {
            if vertices {
                return Err(op_error(
                    cx,
                    o,
                    "comes after a vertex; a compute set's copies come first",
                ));
            }
        } else {
            return Err(op_error(
                cx,
                o,
                "is not an exchange.copy or exchange.vertex; a compute set holds only those",
            ));
        }
    }
    Ok(())
}

fn verify_phase(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let p = Phase(op);
    verify_non_negative(
        cx,
        op,
        &[
            ("transfers", Some(p.transfers(cx))),
            ("bytes", Some(p.bytes(cx))),
            ("local_bytes", Some(p.local_bytes(cx))),
            ("horizon", Some(p.horizon(cx))),
            ("initial_horizon", Some(p.initial_horizon(cx))),
            ("lower_bound", Some(p.lower_bound(cx))),
            ("gap", Some(p.gap(cx))),
            ("row_words", Some(p.row_words(cx))),
        ],
    )?;
    let ops = body_ops(cx, op);
    if ops.is_empty() {
        return Err(op_error(cx, op, "has no exchange.move"));
    }
    for o in ops {
        if !Move::isa(cx, o) {
            return Err(op_error(
                cx,
                o,
                "is not an exchange.move; a phase holds only moves",
            ));
        }
    }
    Ok(())
}

fn verify_vertex(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let vertex = Vertex(op);
    verify_tiles(cx, op, vertex.tiles(cx))?;
    verify_non_negative(cx, op, &[("scratch", vertex.scratch(cx))])?;
    let AttrKind::Array(words) = cx.attr_kind(vertex.record(cx)) else {
        return Err(op_error(cx, op, "record must be an array"));
    };
    let word = |a| matches!(cx.attr_kind(a), AttrKind::Integer { value, .. } if (0..=u32::MAX as i128).contains(value));
    let buffer =
        |a| matches!(cx.attr_kind(a), AttrKind::SymbolRef { nested, .. } if nested.is_empty());
    for (i, &w) in words.iter().enumerate() {
        let ok = match cx.attr_kind(w) {
            AttrKind::Integer { value, .. } => {
                (i32::MIN as i128..=u32::MAX as i128).contains(value)
            }
            AttrKind::SymbolRef { .. } => buffer(w),
            AttrKind::Array(pair) => matches!(&pair[..], [b, o] if buffer(*b) && word(*o)),
            _ => false,
        };
        if !ok {
            return Err(op_error(
                cx,
                op,
                format!(
                    "record entry #{i} ({}) is not a 32-bit word: an integer in [-2^31, {}], a buffer @b or [@b, offset]",
                    ipu_ir::printer::attr_to_string(cx, w),
                    u32::MAX
                ),
            ));
        }
    }
    Ok(())
}

fn verify_move(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let Some(AttrKind::Array(runs)) = cx.get_attr(op, "runs").map(|a| cx.attr_kind(a)) else {
        return Err(op_error(cx, op, "runs must be an array"));
    };
    if runs.is_empty() {
        return Err(op_error(cx, op, "has no transfer runs"));
    }
    let mut total: u64 = 0;
    for (i, &r) in runs.iter().enumerate() {
        let AttrKind::I64Array(v) = cx.attr_kind(r) else {
            return Err(op_error(
                cx,
                op,
                format!("run #{i} is not an array<i64: ...>"),
            ));
        };
        let run = TransferRun::decode(v).map_err(|e| op_error(cx, op, format!("run #{i}: {e}")))?;
        total += run.len();
        if total > MAX_MOVE_TRANSFERS {
            return Err(op_error(
                cx,
                op,
                format!("holds more than {MAX_MOVE_TRANSFERS} transfers"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_round_trip_and_expand() {
        let r = TransferRun {
            repeat: 2,
            repeat_src_tile_step: 0,
            repeat_src_offset_step: 512,
            repeat_dst_tile_step: 0,
            repeat_dst_offset_step: 1024,
            count: 3,
            src_tile: 8,
            src_tile_step: 1,
            src_offset: 0,
            src_offset_step: 0,
            len: 512,
            dst_tile_step: 1,
            dst_offset_step: 0,
            dsts: vec![DstSegment {
                count: 2,
                tile: 0,
                tile_step: 4,
                offset: 16,
                offset_step: 512,
            }],
        };
        let back = TransferRun::decode(&r.encode()).unwrap();
        assert_eq!(back, r);
        let all: Vec<_> = r.expand().collect();
        assert_eq!(all.len(), 6);
        assert_eq!(all[2], (10, 0, 512, vec![(2, 16), (6, 528)]));
        assert_eq!(all[5], (10, 512, 512, vec![(2, 1040), (6, 1552)]));
    }

    #[test]
    fn bad_runs_are_refused_before_expansion() {
        let mut v = vec![
            1,
            0,
            0,
            0,
            0,
            1i64 << 40,
            0,
            0,
            0,
            0,
            4,
            0,
            0,
            1,
            1,
            0,
            0,
            0,
            0,
        ];
        assert!(TransferRun::decode(&v).unwrap_err().contains("transfers"));
        v[5] = 2;
        v[7] = -1; // the second transfer's source tile is -1
        assert!(TransferRun::decode(&v).unwrap_err().contains("u32"));
        v[7] = 0;
        v[0] = 3;
        v[1] = -1; // the second repetition's source tile is -1
        assert!(TransferRun::decode(&v).unwrap_err().contains("u32"));
        assert!(TransferRun::decode(&v[..15]).is_err());
        // A segment count whose entry count overflows i64 is refused.
        v[13] = i64::MAX;
        assert!(TransferRun::decode(&v).unwrap_err().contains("segments"));
    }
}
