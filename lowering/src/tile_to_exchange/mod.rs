//! `convert-tile-to-exchange`: derives every transfer that moves data from
//! its producer's mapping into the layout each compute set reads, schedules
//! each phase with the exchange scheduler, proves the schedule with the
//! verifier, and records it as an `exchange.phase` before the compute set.
//!
//! Geometry: a mapping cuts a tensor into blocks, each stored row-major on
//! its tile. A consumer tile needs a rectangle of an operand, stored
//! row-major in its own buffer. For every source block the rectangle
//! overlaps, each row of the overlap is a contiguous run on both sides;
//! consecutive runs that stay contiguous merge, and identical source runs
//! wanted by several tiles become one multicast transfer. Runs whose source
//! and destination are the same tile are local copies, not exchange.

use crate::exchange_schedule::{
    summarize, verify, Destination, ExchangeScheduler, Phase, Transfer,
};
use crate::nn_to_tile::{module_target, TARGET_OPTION};
use ipu_dialects::tile::Mapping;
use ipu_ir::pass::{Pass, PassInfo, PassOptions, Statistic};
use ipu_ir::{Context, Diagnostic, Op, OperationState, Value};
use ipu_target::Target;
use rustc_hash::FxHashMap;
use smallvec::smallvec;
use std::sync::Arc;

pub const INFO: PassInfo = PassInfo {
    argument: "convert-tile-to-exchange",
    name: "ConvertTileToExchange",
    description: "Derive the transfers every compute set needs from the mappings of its operands, schedule each \
                  exchange phase (compact-streams, paired or reused), verify the schedule, and record it as an \
                  exchange.phase with its horizon, endpoint lower bound and gap.",
    anchor: Some("builtin.module"),
    options: &[TARGET_OPTION],
    create,
};

fn create(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(TileToExchange {
        target_option: o
            .get("target")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        totals: Totals::default(),
    }))
}

#[derive(Default)]
struct Totals {
    phases: u64,
    transfers: u64,
    horizon: u64,
    lower_bound: u64,
}

struct TileToExchange {
    target_option: Option<String>,
    totals: Totals,
}

impl Pass for TileToExchange {
    fn run(&mut self, cx: &mut Context, module: Op) -> Result<(), Diagnostic> {
        let target = module_target(cx, module, self.target_option.as_deref())?;
        let mut scheduler = ExchangeScheduler::new(target.clone());
        for f in cx.nested_ops(module) {
            if cx.is(f, "func.func") && cx.entry_block(cx.region(f, 0)).is_some() {
                lower_function(cx, f, &target, &mut scheduler, &mut self.totals)?;
            }
        }
        Ok(())
    }

    fn statistics(&self) -> Vec<Statistic> {
        vec![
            Statistic {
                name: "phases",
                description: "Exchange phases scheduled",
                value: self.totals.phases,
            },
            Statistic {
                name: "transfers",
                description: "Transfers scheduled",
                value: self.totals.transfers,
            },
            Statistic {
                name: "horizon-sum",
                description: "Sum of phase horizons (cycles)",
                value: self.totals.horizon,
            },
            Statistic {
                name: "lower-bound-sum",
                description: "Sum of phase endpoint lower bounds (cycles)",
                value: self.totals.lower_bound,
            },
        ]
    }
}

/// A block of a tensor on a tile: `[lo, hi)` per dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub tile: u32,
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
}

impl Block {
    fn extent(&self) -> Vec<i64> {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(l, h)| (h - l).max(0))
            .collect()
    }
    fn is_empty(&self) -> bool {
        self.lo.iter().zip(&self.hi).any(|(l, h)| h <= l)
    }
}

/// The non-empty blocks of `mapping` over `shape`.
pub fn blocks(m: &Mapping, shape: &[i64]) -> Vec<Block> {
    let bs = m.block_shape(shape);
    let n = m.blocks();
    let mut out = Vec::new();
    for b in 0..n {
        let mut rem = b;
        let mut idx = vec![0i64; shape.len()];
        for d in (0..shape.len()).rev() {
            idx[d] = rem % m.grid[d];
            rem /= m.grid[d];
        }
        let lo: Vec<i64> = idx
            .iter()
            .zip(&bs)
            .zip(shape)
            .map(|((i, s), d)| (i * s).min(*d))
            .collect();
        let hi: Vec<i64> = lo
            .iter()
            .zip(&bs)
            .zip(shape)
            .map(|((l, s), d)| (l + s).min(*d))
            .collect();
        let block = Block {
            tile: (m.first_tile + b * m.stride) as u32,
            lo,
            hi,
        };
        if !block.is_empty() {
            out.push(block);
        }
    }
    out
}

/// Row-major strides (in elements) of a buffer of `extent`.
fn strides(extent: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; extent.len()];
    for d in (0..extent.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * extent[d + 1];
    }
    s
}

/// One contiguous run: from `src` (tile, byte offset) to `dst`, `len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub src_tile: u32,
    pub src_off: u64,
    pub dst_tile: u32,
    pub dst_off: u64,
    pub len: u64,
}

/// How a consumer stores the rectangle it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row-major, the rectangle's own extents.
    RowMajor,
    /// The GEMM's chunked A: K cut into chunks of `kc` columns, each chunk
    /// `rows` x `kc` row-major, chunks one after another (`rows` is the
    /// kernel's M, which may exceed the rectangle's rows).
    Chunks { kc: i64, rows: i64 },
}

/// Where a consumer of `op`'s operand `i` wants its rectangle laid out: the
/// AMP GEMM reads A in K-chunks when one K x 16 weight block exceeds an AMP
/// bank, and receiving it that way saves re-laying it out on the tile.
pub fn operand_layout(cx: &Context, op: Op, i: usize) -> Layout {
    match gemm_chunk(cx, op) {
        Some((kc, rows)) if i == 0 => Layout::Chunks { kc, rows },
        _ => Layout::RowMajor,
    }
}

/// Bytes of one AMP weight bank (docs/isa.md, section 6).
pub const AMP_BANK_BYTES: i64 = 4096;

/// For a `tile.matmul` whose K block needs more than one AMP bank of
/// weights: the chunk width and the kernel's M.
pub fn gemm_chunk(cx: &Context, op: Op) -> Option<(i64, i64)> {
    if !cx.is(op, "tile.matmul") {
        return None;
    }
    let plan = cx.get_i64_array_attr(op, "plan")?.to_vec();
    let (a, b) = (
        cx.value_shape(cx.operand(op, 0)),
        cx.value_shape(cx.operand(op, 1)),
    );
    if plan.len() != 3 || a.len() != 2 || b.len() != 2 {
        return None;
    }
    let in_bytes = gemm_input_bytes(cx, cx.operand(op, 0), cx.operand(op, 1));
    let bk = (a[1] + plan[2] - 1) / plan[2];
    let bm = (a[0] + plan[0] - 1) / plan[0];
    k_chunk(bk, in_bytes).map(|kc| (kc, bm))
}

/// Bytes per element the AMP GEMM reads for `a x b`: 1 when both are f8 of
/// one format (the f8 mode), else 2 (f16, f8 widened to f16).
pub fn gemm_input_bytes(cx: &Context, a: Value, b: Value) -> i64 {
    let elem = |v: Value| cx.tensor_parts(cx.value_type(v)).map(|(_, e)| e);
    let f8 = |v: Value| {
        elem(v).is_some_and(|e| {
            matches!(
                cx.type_kind(e),
                ipu_ir::TypeKind::F8E4M3FN | ipu_ir::TypeKind::F8E5M2
            )
        })
    };
    if f8(a) && elem(a) == elem(b) {
        1
    } else {
        2
    }
}

/// The K-chunk of a GEMM whose per-tile K block is `bk` elements of
/// `in_bytes`: `None` when one K x 16 weight block fits an AMP bank.
pub fn k_chunk(bk: i64, in_bytes: i64) -> Option<i64> {
    (bk * 16 * in_bytes > AMP_BANK_BYTES).then(|| AMP_BANK_BYTES / (16 * in_bytes))
}

/// [`runs_for`] into a rectangle stored in `layout`.
pub(crate) fn runs_for_layout(
    need: &Block,
    sources: &[Block],
    elem_bytes: i64,
    layout: Layout,
    out: &mut Vec<Run>,
) {
    let start = out.len();
    runs_row_major(need, sources, elem_bytes, out);
    let Layout::Chunks { kc, rows } = layout else {
        return;
    };
    // Re-address every run (one row of the rectangle or several whole rows)
    // in the chunked layout, cutting it where a chunk ends.
    let width = (need.hi[1] - need.lo[1]) * elem_bytes;
    let row_major: Vec<Run> = out.drain(start..).collect();
    for r in row_major {
        let mut done = 0;
        while done < r.len as i64 {
            let at = r.dst_off as i64 + done;
            let (row, col) = (at / width, (at % width) / elem_bytes);
            let chunk_end = ((col / kc + 1) * kc).min(width / elem_bytes);
            let n = ((chunk_end - col) * elem_bytes).min(r.len as i64 - done);
            let dst = ((col / kc) * rows * kc + row * kc + col % kc) * elem_bytes;
            out.push(Run {
                src_tile: r.src_tile,
                src_off: r.src_off + done as u64,
                dst_tile: r.dst_tile,
                dst_off: dst as u64,
                len: n as u64,
            });
            done += n;
        }
    }
}

/// Runs moving `need` (a rectangle stored row-major on `need.tile`) out of `sources`.
fn runs_row_major(need: &Block, sources: &[Block], elem_bytes: i64, out: &mut Vec<Run>) {
    let rank = need.lo.len();
    let dext = need.extent();
    let dstr = strides(&dext);
    for src in sources {
        let lo: Vec<i64> = (0..rank).map(|d| need.lo[d].max(src.lo[d])).collect();
        let hi: Vec<i64> = (0..rank).map(|d| need.hi[d].min(src.hi[d])).collect();
        if (0..rank).any(|d| hi[d] <= lo[d]) {
            continue;
        }
        let sext = src.extent();
        let sstr = strides(&sext);
        let row = if rank == 0 {
            1
        } else {
            hi[rank - 1] - lo[rank - 1]
        };
        // Iterate over every index of the overlap except the last dimension.
        let outer: Vec<i64> = (0..rank.saturating_sub(1)).map(|d| hi[d] - lo[d]).collect();
        let count: i64 = outer.iter().product();
        let mut last: Option<Run> = None;
        for c in 0..count.max(1) {
            let mut rem = c;
            let mut pos = lo.clone();
            for d in (0..outer.len()).rev() {
                pos[d] = lo[d] + rem % outer[d];
                rem /= outer[d];
            }
            let soff: i64 = (0..rank).map(|d| (pos[d] - src.lo[d]) * sstr[d]).sum();
            let doff: i64 = (0..rank).map(|d| (pos[d] - need.lo[d]) * dstr[d]).sum();
            let run = Run {
                src_tile: src.tile,
                src_off: (soff * elem_bytes) as u64,
                dst_tile: need.tile,
                dst_off: (doff * elem_bytes) as u64,
                len: (row * elem_bytes) as u64,
            };
            match last.as_mut() {
                Some(l) if l.src_off + l.len == run.src_off && l.dst_off + l.len == run.dst_off => {
                    l.len += run.len
                }
                _ => {
                    if let Some(l) = last.take() {
                        out.push(l);
                    }
                    last = Some(run);
                }
            }
        }
        out.extend(last);
    }
}

pub fn elem_bytes(cx: &Context, v: Value) -> i64 {
    cx.tensor_parts(cx.value_type(v))
        .and_then(|(_, e)| ipu_ir::numeric::storage_bytes(cx.type_kind(e)))
        .unwrap_or(4) as i64
}

pub fn mapping_of(cx: &Context, op: Op) -> Option<Mapping> {
    Mapping::from_attr(cx, cx.get_attr(op, "mapping")?).ok()
}

/// The rectangles of operand `i` each tile of `op` reads.
pub fn needs(cx: &Context, op: Op, i: usize) -> Result<Vec<Block>, String> {
    let v = cx.operand(op, i);
    let vshape = cx.value_shape(v);
    if cx.is(op, "tile.matmul") {
        let plan = cx
            .get_i64_array_attr(op, "plan")
            .ok_or("missing plan")?
            .to_vec();
        let tiles = cx
            .get_i64_array_attr(op, "tiles")
            .ok_or("missing tiles")?
            .to_vec();
        let (pm, pn, pk) = (plan[0], plan[1], plan[2]);
        let (a, b) = (
            cx.value_shape(cx.operand(op, 0)),
            cx.value_shape(cx.operand(op, 1)),
        );
        let (bm, bk, bn) = (
            (a[0] + pm - 1) / pm,
            (a[1] + pk - 1) / pk,
            (b[1] + pn - 1) / pn,
        );
        let mut out = Vec::new();
        for k in 0..pk {
            for im in 0..pm {
                for jn in 0..pn {
                    let tile = (tiles[0] + ((k * pm + im) * pn + jn) * tiles[1]) as u32;
                    let (lo, hi) = if i == 0 {
                        (
                            vec![im * bm, k * bk],
                            vec![((im + 1) * bm).min(a[0]), ((k + 1) * bk).min(a[1])],
                        )
                    } else {
                        (
                            vec![k * bk, jn * bn],
                            vec![((k + 1) * bk).min(b[0]), ((jn + 1) * bn).min(b[1])],
                        )
                    };
                    let blk = Block { tile, lo, hi };
                    if !blk.is_empty() {
                        out.push(blk);
                    }
                }
            }
        }
        return Ok(out);
    }
    // Elementwise: each result block reads the matching (broadcast) elements.
    let m = mapping_of(cx, op).ok_or("missing mapping")?;
    let rshape = cx.value_shape(cx.result(op, 0));
    let offset = rshape.len() - vshape.len();
    Ok(blocks(&m, &rshape)
        .into_iter()
        .map(|rb| {
            let (lo, hi) = vshape
                .iter()
                .enumerate()
                .map(|(d, &n)| {
                    if n == 1 {
                        (0, 1)
                    } else {
                        (rb.lo[d + offset], rb.hi[d + offset])
                    }
                })
                .unzip();
            Block {
                tile: rb.tile,
                lo,
                hi,
            }
        })
        .collect())
}

/// Running figures of one function's program.
struct Program<'a> {
    target: &'a Arc<Target>,
    scheduler: &'a mut ExchangeScheduler,
    totals: &'a mut Totals,
    exchange_cycles: u64,
    steps: u64,
}

impl Program<'_> {
    /// Schedules the phase made of `runs`, verifies it, and records it as an
    /// `exchange.phase` of `value` placed before `at` (or after, for partials).
    fn phase(
        &mut self,
        cx: &mut Context,
        at: Op,
        value: Value,
        runs: &[Run],
        moves: &str,
        after: bool,
    ) -> Result<(), Diagnostic> {
        let (transfers, local) = transfers_of(runs);
        if transfers.is_empty() {
            return Ok(());
        }
        let name = cx.name_str(at).to_string();
        let loc = cx.op_loc(at);
        let err =
            |m: String| Diagnostic::error(loc, format!("'{name}' op, exchange of {moves}: {m}"));
        let phase = Phase::new(transfers);
        let schedule = self
            .scheduler
            .schedule_memo(&phase)
            .map_err(|e| err(e.to_string()))?
            .0;
        if let Err(errors) = verify(&phase, &schedule, self.target) {
            let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
            return Err(err(format!(
                "the schedule fails verification ({} errors), first: {first}",
                errors.len()
            )));
        }
        let summary = summarize(&phase);
        let n = self.totals.phases;
        tracing::info!(
            phase = n,
            transfers = phase.transfers.len(),
            initial_horizon = schedule.initial_horizon,
            selected_horizon = schedule.horizon,
            endpoint_lower_bound = schedule.lower_bound,
            lower_bound_gap = schedule.gap(),
            selected_kind = schedule.kind.as_str(),
            row_words = schedule.rows.max_row_words,
            "optimized physical exchange schedule"
        );
        self.totals.phases += 1;
        self.totals.transfers += phase.transfers.len() as u64;
        self.totals.horizon += schedule.horizon;
        self.totals.lower_bound += schedule.lower_bound;
        self.exchange_cycles += self.target.exchange.sync_cycles as u64
            + self.target.exchange_phase_cycles(schedule.horizon);
        self.steps += 1;
        let patterns: Vec<_> = summary.lines(8).iter().map(|l| cx.string_attr(l)).collect();
        let figures: Vec<(&str, i64)> = vec![
            ("transfers", phase.transfers.len() as i64),
            ("bytes", summary.bytes as i64),
            ("local_bytes", local as i64),
            ("horizon", schedule.horizon as i64),
            ("initial_horizon", schedule.initial_horizon as i64),
            ("lower_bound", schedule.lower_bound as i64),
            ("gap", schedule.gap() as i64),
            ("row_words", schedule.rows.max_row_words as i64),
        ];
        let mut attrs: Vec<_> = figures
            .into_iter()
            .map(|(k, v)| (cx.sym(k), cx.i64_attr(v)))
            .collect();
        attrs.push((cx.sym("sym_name"), cx.string_attr(&format!("x{n}"))));
        attrs.push((cx.sym("moves"), cx.string_attr(moves)));
        attrs.push((cx.sym("kind"), cx.string_attr(schedule.kind.as_str())));
        attrs.push((cx.sym("patterns"), cx.array_attr(patterns)));
        let pname = cx.op_name("exchange.phase");
        let mut st = OperationState::new(pname, loc);
        st.operands.push(value);
        st.attrs = cx.dict_attr(attrs);
        let p = cx.create_op(st);
        match cx.next_op(at).filter(|_| after) {
            Some(next) => cx.insert_op_before(next, p),
            None => cx.insert_op_before(at, p),
        }
        Ok(())
    }
}

/// The exchange transfers of `runs` (identical source runs become one
/// multicast transfer, in first-seen order) and the bytes of the local runs,
/// which stay on their tile.
pub(crate) fn transfers_of(runs: &[Run]) -> (Vec<Transfer>, u64) {
    let local: u64 = runs
        .iter()
        .filter(|r| r.src_tile == r.dst_tile)
        .map(|r| r.len)
        .sum();
    let mut by_source: FxHashMap<(u32, u64, u64), usize> = FxHashMap::default();
    let mut transfers: Vec<Transfer> = Vec::new();
    for r in runs.iter().filter(|r| r.src_tile != r.dst_tile) {
        let dst = Destination {
            tile: r.dst_tile,
            offset: r.dst_off as u32,
        };
        match by_source.get(&(r.src_tile, r.src_off, r.len)) {
            Some(&t) => transfers[t].dsts.push(dst),
            None => {
                by_source.insert((r.src_tile, r.src_off, r.len), transfers.len());
                transfers.push(Transfer {
                    src_tile: r.src_tile,
                    src_offset: r.src_off as u32,
                    len: r.len as u32,
                    dsts: smallvec![dst],
                });
            }
        }
    }
    (transfers, local)
}

/// Runs sending each split-K partial block of `op` to its k = 0 tile, where the
/// blocks land one after another in a receive buffer.
pub(crate) fn partial_runs(cx: &Context, op: Op) -> Vec<Run> {
    let (Some(plan), Some(tiles)) = (
        cx.get_i64_array_attr(op, "plan"),
        cx.get_i64_array_attr(op, "tiles"),
    ) else {
        return Vec::new();
    };
    let (pm, pn, pk) = (plan[0], plan[1], plan[2]);
    let (a, b) = (
        cx.value_shape(cx.operand(op, 0)),
        cx.value_shape(cx.operand(op, 1)),
    );
    let (bm, bn) = ((a[0] + pm - 1) / pm, (b[1] + pn - 1) / pn);
    let pbytes = match cx.get_attr(op, "partials").map(|p| cx.attr_kind(p)) {
        Some(ipu_ir::AttrKind::Type(t)) => {
            ipu_ir::numeric::storage_bytes(cx.type_kind(*t)).unwrap_or(4) as i64
        }
        _ => 4,
    };
    let len = (bm * bn * pbytes) as u64;
    let tile = |k: i64, i: i64, j: i64| (tiles[0] + ((k * pm + i) * pn + j) * tiles[1]) as u32;
    let mut runs = Vec::new();
    for k in 1..pk {
        for i in 0..pm {
            for j in 0..pn {
                runs.push(Run {
                    src_tile: tile(k, i, j),
                    src_off: 0,
                    dst_tile: tile(0, i, j),
                    dst_off: (k as u64 - 1) * len,
                    len,
                });
            }
        }
    }
    runs
}

fn lower_function(
    cx: &mut Context,
    f: Op,
    target: &Arc<Target>,
    scheduler: &mut ExchangeScheduler,
    totals: &mut Totals,
) -> Result<(), Diagnostic> {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let mut produced: FxHashMap<Value, Mapping> = FxHashMap::default();
    let mut compute_cycles = 0i64;
    let mut program = Program {
        target,
        scheduler,
        totals,
        exchange_cycles: 0,
        steps: 0,
    };
    for op in cx.block_ops_vec(entry) {
        let name = cx.name_str(op).to_string();
        let is_compute = name == "tile.matmul" || name == "tile.map";
        if !is_compute {
            if let (Some(m), 1) = (mapping_of(cx, op), cx.num_results(op)) {
                produced.insert(cx.result(op, 0), m);
            }
            continue;
        }
        for i in 0..cx.operands(op).len() {
            let v = cx.operand(op, i);
            let Some(src_map) = produced.get(&v).cloned() else {
                return Err(Diagnostic::error(
                    cx.op_loc(op),
                    format!("'{name}' op operand #{i} has no tile mapping"),
                ));
            };
            let sources = blocks(&src_map, &cx.value_shape(v));
            let need = needs(cx, op, i)
                .map_err(|m| Diagnostic::error(cx.op_loc(op), format!("'{name}' op {m}")))?;
            let eb = elem_bytes(cx, v);
            let mut runs = Vec::new();
            for n in &need {
                runs_for_layout(n, &sources, eb, operand_layout(cx, op, i), &mut runs);
            }
            program.phase(cx, op, v, &runs, &format!("operand #{i}"), false)?;
        }
        program.steps += 1;
        compute_cycles += cx.get_int_attr(op, "cycles").unwrap_or(0) as i64;
        if name == "tile.matmul" {
            let runs = partial_runs(cx, op);
            let r = cx.result(op, 0);
            program.phase(cx, op, r, &runs, "partial sums", true)?;
        }
        produced.insert(
            cx.result(op, 0),
            mapping_of(cx, op).expect("compute sets have mappings"),
        );
    }
    let sync = target.exchange.sync_cycles as i64;
    let (steps, exchange_cycles) = (program.steps as i64, program.exchange_cycles as i64);
    let summary = [
        ("exchange.steps", steps),
        ("exchange.compute_cycles", compute_cycles),
        ("exchange.exchange_cycles", exchange_cycles),
        (
            "exchange.estimated_cycles",
            compute_cycles + exchange_cycles + steps * sync,
        ),
    ];
    for (k, v) in summary {
        let a = cx.i64_attr(v);
        cx.set_attr(f, k, a);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_tensor_once() {
        let m = Mapping {
            grid: vec![3, 2],
            first_tile: 4,
            stride: 2,
        };
        let b = blocks(&m, &[7, 5]);
        let cells: i64 = b.iter().map(|x| x.extent().iter().product::<i64>()).sum();
        assert_eq!(cells, 35);
        assert_eq!(
            b[0],
            Block {
                tile: 4,
                lo: vec![0, 0],
                hi: vec![3, 3]
            }
        );
        assert_eq!(b.last().unwrap().tile, 4 + 5 * 2);
    }

    #[test]
    fn runs_merge_when_rows_are_contiguous() {
        // Source: whole 4x8 block on tile 0; need rows 1..3, all columns, on tile 1.
        let src = Block {
            tile: 0,
            lo: vec![0, 0],
            hi: vec![4, 8],
        };
        let need = Block {
            tile: 1,
            lo: vec![1, 0],
            hi: vec![3, 8],
        };
        let mut out = Vec::new();
        runs_row_major(&need, std::slice::from_ref(&src), 2, &mut out);
        assert_eq!(
            out,
            vec![Run {
                src_tile: 0,
                src_off: 16,
                dst_tile: 1,
                dst_off: 0,
                len: 32
            }]
        );
        // A column slice is one run per row.
        let need = Block {
            tile: 1,
            lo: vec![0, 2],
            hi: vec![4, 4],
        };
        out.clear();
        runs_row_major(&need, &[src], 2, &mut out);
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|r| r.len == 4));
        assert_eq!((out[1].src_off, out[1].dst_off), (16 + 4, 4));
    }

    #[test]
    fn chunked_layout_cuts_rows_at_chunk_ends() {
        // A 3 x 8 rectangle of 2-byte elements wanted in chunks of 4 columns,
        // the kernel's M being 4 rows: chunk c starts at c * 4 * 4 elements.
        let src = Block {
            tile: 0,
            lo: vec![0, 0],
            hi: vec![3, 8],
        };
        let need = Block {
            tile: 1,
            lo: vec![0, 0],
            hi: vec![3, 8],
        };
        let mut out = Vec::new();
        runs_for_layout(
            &need,
            &[src],
            2,
            Layout::Chunks { kc: 4, rows: 4 },
            &mut out,
        );
        let got: Vec<(u64, u64, u64)> = out.iter().map(|r| (r.src_off, r.dst_off, r.len)).collect();
        // Each source row (16 B) splits into two 8 B pieces, one per chunk.
        assert_eq!(
            got,
            vec![
                (0, 0, 8),
                (8, 32, 8),
                (16, 8, 8),
                (24, 40, 8),
                (32, 16, 8),
                (40, 48, 8)
            ]
        );
    }
}
