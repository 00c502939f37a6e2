//! `convert-exchange-to-machine`: the code generator. From the tile-stage
//! program (mappings, compute sets, and the exchange phases the previous
//! stage scheduled) it builds what every tile runs and holds, as an
//! [`ipu_package::Package`]:
//!
//! * **Program.** The bulk-synchronous program is a list of supersteps:
//!   each compute set (and, for a split-K matmul, its reduction after the
//!   partial sums arrive) and each exchange phase is one superstep ended by
//!   a chip-wide `sync 1`. Every started tile runs every superstep, so all
//!   tiles leave each sync at one cycle.
//! * **Compute.** A tile's part of a compute set is a list of library
//!   kernel calls (`call $m15, <specialisation>.<entry>`), each with a state
//!   record holding its buffer addresses: the AMP GEMM, with the re-layouts
//!   it needs (A in K-chunks, B in 16-column blocks, f8 widened to f16),
//!   split-K partials added up, partials cast and laid out row-major;
//!   elementwise maps, row-vector broadcasts and casts. Operand runs that
//!   stay on their tile are copied by a supervisor routine.
//! * **Exchange.** Each phase is scheduled again (the scheduler is
//!   deterministic, so the schedule is the one the exchange stage recorded;
//!   the horizons are checked against it) and becomes one exchange-table
//!   row per tile, run by the tile's exchange engine (`exch`): sends,
//!   port selects and captures at fixed cycles. Tiles with nothing to do
//!   run an empty row, so every tile's program has the same timing.
//! * **Storage.** Per tile, every buffer gets an address for its lifetime
//!   (in supersteps); buffers never alive together share memory
//!   ([`storage::place`]). Buffers the kernels read with
//!   128-bit loads go to the interleaved region. Code, the tile's pointer
//!   table, kernel records and exchange rows go in the memory kept for code
//!   and exchange tables.
//! * **Code.** The supervisor program reads every record and row pointer
//!   from a per-tile table at a fixed address, so tiles calling the same
//!   kernels run byte-identical code and share one program group.
//! * **Host streams.** Inputs and outputs are described block by block,
//!   compressed into regular pieces.

mod emit;
pub mod storage;

use crate::exchange_schedule::{tile_rows, verify, ExchangeScheduler, Phase, RowEntry};
use crate::nn_to_tile::{module_target, TARGET_OPTION};
use crate::tile_to_exchange::{
    blocks, elem_bytes, gemm_chunk, gemm_input_bytes, mapping_of, needs, operand_layout,
    partial_runs, runs_for_layout, transfers_of, Block, Run,
};
use ipu_dialects::tile::Mapping;
use ipu_ir::pass::{Pass, PassInfo, PassOptionInfo, PassOptions, Statistic};
use ipu_ir::{Context, Diagnostic, Loc, Op, Type, TypeKind, Value};
use ipu_isa::kernels::{ElemType, EwOp, GemmType, KernelSpec, RowOp, GEMM_STATE_BYTES};
use ipu_package::{Package, StepKind, StepSummary};
use ipu_target::Target;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use storage::Buffer;

use emit::build_package_from;

pub const INFO: PassInfo = PassInfo {
    argument: "convert-exchange-to-machine",
    name: "ConvertExchangeToMachine",
    description: "Generate every tile's program: kernel calls with their state records, exchange-table rows \
                  for the exchange engine, storage placement, linked code shared by tiles with the same \
                  program, host stream layouts; the function becomes the machine-dialect package.",
    anchor: Some("builtin.module"),
    options: &[
        TARGET_OPTION,
        PassOptionInfo {
            name: "print-rows",
            description: "Also print every exchange phase's rows readably (machine.exchange_row, one per \
                          group of tiles with the same row)",
            default: "false",
        },
    ],
    create,
};

fn create(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    Ok(Box::new(Codegen {
        target_option: o
            .get("target")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        stats: Stats::default(),
        print_rows: o.get_bool("print-rows", false)?,
    }))
}

#[derive(Default, Clone, Copy)]
pub struct Stats {
    pub tiles: u64,
    pub groups: u64,
    pub supersteps: u64,
    pub max_code_bytes: u64,
    pub max_data_bytes: u64,
    pub max_table_bytes: u64,
}

struct Codegen {
    target_option: Option<String>,
    stats: Stats,
    print_rows: bool,
}

impl Pass for Codegen {
    fn run(&mut self, cx: &mut Context, module: Op) -> Result<(), Diagnostic> {
        let target = module_target(cx, module, self.target_option.as_deref())?;
        let funcs: Vec<Op> = cx
            .nested_ops(module)
            .into_iter()
            .filter(|&f| cx.is(f, "func.func") && cx.entry_block(cx.region(f, 0)).is_some())
            .collect();
        let [f] = funcs[..] else {
            return Err(Diagnostic::error(
                cx.op_loc(module),
                format!(
                    "the machine stage compiles exactly one function with a body; this module has {}",
                    funcs.len()
                ),
            ));
        };
        let (pkg, stats, summary) = build_package_with(cx, f, &target, self.print_rows)?;
        self.stats = stats;
        let loc = cx.op_loc(f);
        let body = cx
            .entry_block(cx.region(module, 0))
            .expect("a module has a body");
        for op in cx.block_ops_vec(body) {
            cx.erase_op(op);
        }
        for op in cx.block_ops_vec(body) {
            cx.erase_op(op);
        }
        emit_summary(cx, body, &summary, loc);
        if self.print_rows {
            emit_rows(cx, body, &summary, loc);
        }
        ipu_dialects::machine::emit_package(cx, body, &pkg, loc);
        Ok(())
    }

    fn statistics(&self) -> Vec<Statistic> {
        let s = self.stats;
        vec![
            Statistic {
                name: "tiles",
                description: "Tiles started",
                value: s.tiles,
            },
            Statistic {
                name: "program-groups",
                description: "Distinct tile programs",
                value: s.groups,
            },
            Statistic {
                name: "supersteps",
                description: "Supersteps (compute sets and exchange phases)",
                value: s.supersteps,
            },
            Statistic {
                name: "max-code-bytes",
                description: "Largest tile code image",
                value: s.max_code_bytes,
            },
            Statistic {
                name: "max-table-bytes",
                description: "Largest tile pointer table, records and exchange rows",
                value: s.max_table_bytes,
            },
            Statistic {
                name: "max-data-bytes",
                description: "Most data bytes used on one tile",
                value: s.max_data_bytes,
            },
        ]
    }
}

/// Human-readable summaries the pass prints before the package.
#[derive(Default, Debug, Clone)]
pub struct Summary {
    pub memory_maps: Vec<MemoryMap>,
    pub code: Vec<CodeSummary>,
    /// Per exchange phase (its label's first word), the tiles running each
    /// distinct row and the row's entries, readable.
    pub rows: Vec<(String, Vec<RowGroup>)>,
}

/// Tiles running one exchange row, and its entries (readable).
pub type RowGroup = (Vec<u32>, Vec<String>);

/// Tiles with the same buffers at the same addresses.
#[derive(Debug, Clone)]
pub struct MemoryMap {
    pub tiles: Vec<u32>,
    pub used: u64,
    pub free: u64,
    /// `0x80000 4112 B s1.partials`, by address.
    pub buffers: Vec<String>,
}

/// Tiles running the same code.
#[derive(Debug, Clone)]
pub struct CodeSummary {
    pub tiles: Vec<u32>,
    pub kernels: Vec<String>,
    /// Per superstep: `x0: exch` or `s1: call a, call b` or `s1: sync`.
    pub program: Vec<String>,
    pub code_bytes: u64,
    pub exec: String,
}

/// A 32-bit word of a kernel state record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Word {
    Val(u32),
    /// The address of a buffer of the same tile, plus a byte offset.
    Buf(usize, u32),
}

/// What a call runs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kernel {
    Lib(KernelSpec),
    /// The supervisor byte copy of the program (record: src, dst, len).
    Memcpy,
}

#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub kernel: Kernel,
    pub record: Vec<Word>,
    /// Zero bytes after the words (the GEMM's worker records).
    pub scratch: usize,
}

/// One tile's exchange row of a phase, with offsets relative to its
/// source and destination buffers.
#[derive(Clone, Debug)]
pub(crate) struct RowWork {
    pub entries: Vec<RowEntry>,
    pub src: Option<usize>,
    pub dst: Option<usize>,
}

/// One tile: its buffers and its work per superstep.
#[derive(Default)]
pub(crate) struct TileWork {
    pub bufs: Vec<Buffer>,
    pub interleaved: Vec<bool>,
    pub calls: BTreeMap<usize, Vec<Call>>,
    pub rows: BTreeMap<usize, RowWork>,
}

/// A host stream: its name, element type, shape and the value's blocks
/// with their buffers.
pub(crate) struct StreamSpec {
    pub name: String,
    pub output: bool,
    pub ty: Type,
    pub shape: Vec<i64>,
    pub blocks: Vec<(Block, usize)>,
    pub elem_bytes: u64,
}

/// The whole program before placement.
pub(crate) struct Plan {
    pub tiles: BTreeMap<u32, TileWork>,
    /// Constant blocks loaded with the images: (tile, buffer, bytes).
    pub init: Vec<(u32, usize, Vec<u8>)>,
    pub steps: Vec<StepSummary>,
    pub streams: Vec<StreamSpec>,
}

/// A value's blocks and the buffer holding each.
struct Home {
    blocks: Vec<Block>,
    bufs: Vec<usize>,
}

fn pad(bytes: u64) -> u64 {
    // Kernels process whole groups (up to 8 FP8 elements as f32 = 32 B)
    // and may read 8 bytes past their buffers.
    bytes.div_ceil(32) * 32 + 16
}

fn round_up(v: usize, to: usize) -> usize {
    v.div_ceil(to.max(1)) * to.max(1)
}

fn kernel_elem(cx: &Context, t: Type) -> Option<ElemType> {
    Some(match cx.type_kind(t) {
        TypeKind::F32 => ElemType::F32,
        TypeKind::F16 => ElemType::F16,
        TypeKind::BF16 => ElemType::Bf16,
        TypeKind::F8E4M3FN => ElemType::F8E4M3FN,
        TypeKind::F8E5M2 => ElemType::F8E5M2,
        _ => return None,
    })
}

fn value_elem(cx: &Context, v: Value) -> Option<ElemType> {
    cx.tensor_parts(cx.value_type(v))
        .and_then(|(_, e)| kernel_elem(cx, e))
}

struct Planner<'a> {
    cx: &'a Context,
    target: &'a Arc<Target>,
    scheduler: ExchangeScheduler,
    tiles: BTreeMap<u32, TileWork>,
    steps: Vec<StepSummary>,
    homes: FxHashMap<Value, Home>,
    /// Horizons the exchange stage recorded, in order.
    recorded: Vec<(i64, Loc)>,
    phases: usize,
    compute_sets: usize,
    /// Local copies and operand buffers of the compute set being built,
    /// attached to its superstep once it exists.
    pending_copies: Vec<(u32, usize, usize, Run)>,
    pending_touch: Vec<(u32, usize)>,
}

impl Planner<'_> {
    fn err(&self, op: Op, m: impl std::fmt::Display) -> Diagnostic {
        Diagnostic::error(
            self.cx.op_loc(op),
            format!("'{}' op {m}", self.cx.name_str(op)),
        )
    }

    fn alloc(&mut self, tile: u32, name: String, size: u64, step: usize, il: bool) -> usize {
        let t = self.tiles.entry(tile).or_default();
        t.bufs.push(Buffer {
            name,
            size: pad(size),
            first: step as u32,
            last: step as u32,
        });
        t.interleaved.push(il);
        t.bufs.len() - 1
    }

    /// Each block of `v`: its tile and the buffer holding it there.
    fn home_bufs(&self, v: Value) -> Vec<(u32, usize)> {
        self.homes.get(&v).map_or_else(Vec::new, |h| {
            h.blocks
                .iter()
                .map(|b| b.tile)
                .zip(h.bufs.iter().copied())
                .collect()
        })
    }

    fn touch(&mut self, tile: u32, buf: usize, step: usize) {
        let b = &mut self.tiles.get_mut(&tile).expect("tile with buffers").bufs[buf];
        b.first = b.first.min(step as u32);
        b.last = b.last.max(step as u32);
    }

    fn call(&mut self, tile: u32, step: usize, kernel: Kernel, record: Vec<Word>, scratch: usize) {
        self.tiles
            .entry(tile)
            .or_default()
            .calls
            .entry(step)
            .or_default()
            .push(Call {
                kernel,
                record,
                scratch,
            });
    }

    fn lib(&mut self, tile: u32, step: usize, spec: KernelSpec, record: Vec<Word>) {
        self.call(tile, step, Kernel::Lib(spec), record, 0);
    }

    /// Calls a one-input kernel (`cast`, `copy2d`, a unary `elementwise`)
    /// from buffer `src` into buffer `dst`.
    fn unary(&mut self, tile: u32, step: usize, spec: KernelSpec, src: usize, dst: usize) {
        let (i, o) = (Word::Buf(src, 0), Word::Buf(dst, 0));
        let record = match spec.source {
            // +0 in, +4 out, +8 scale, +12 output scale
            "cast" => vec![i, o, Word::Val(0), Word::Val(0)],
            // +0 in0, +4 in1, +8 out
            "elementwise" => vec![i, Word::Val(0), o],
            // +0 src, +4 dst
            _ => vec![i, o],
        };
        self.lib(tile, step, spec, record);
    }

    /// [`Planner::unary`] into a new interleaved buffer of `bytes`, returned.
    fn unary_new(
        &mut self,
        tile: u32,
        step: usize,
        spec: KernelSpec,
        src: usize,
        name: String,
        bytes: u64,
    ) -> usize {
        let dst = self.alloc(tile, name, bytes, step, true);
        self.unary(tile, step, spec, src, dst);
        dst
    }

    /// Gives a value's blocks their buffers, alive from `step`.
    fn home(&mut self, v: Value, m: &Mapping, label: &str, step: usize, il: bool) {
        let shape = self.cx.value_shape(v);
        let eb = elem_bytes(self.cx, v) as u64;
        let full: i64 = m.block_shape(&shape).iter().product();
        let bl = blocks(m, &shape);
        let bufs = bl
            .iter()
            .map(|b| self.alloc(b.tile, label.to_string(), full as u64 * eb, step, il))
            .collect();
        self.homes.insert(v, Home { blocks: bl, bufs });
    }

    /// Schedules one exchange phase made of `runs` as superstep `step`;
    /// each tile's row is relative to its source buffer (`src_buf`) and
    /// destination buffer (`dst_buf`).
    fn exchange(
        &mut self,
        op: Op,
        runs: &[Run],
        label: String,
        src_buf: &dyn Fn(u32) -> Option<usize>,
        dst_buf: &dyn Fn(u32) -> Option<usize>,
    ) -> Result<(), Diagnostic> {
        let (transfers, _) = transfers_of(runs);
        if transfers.is_empty() {
            return Ok(());
        }
        let phase = Phase::new(transfers);
        let (schedule, known) = self
            .scheduler
            .schedule_memo(&phase)
            .map_err(|e| self.err(op, format!("exchange of {label}: {e}")))?;
        // A schedule the exchange stage made in this process was verified
        // there; a new one is verified here.
        if !known {
            if let Err(errors) = verify(&phase, &schedule, self.target) {
                return Err(self.err(
                    op,
                    format!(
                        "exchange of {label}: the schedule fails verification, first: {}",
                        errors.first().map(|e| e.to_string()).unwrap_or_default()
                    ),
                ));
            }
        }
        let n = self.phases;
        if let Some(&(h, loc)) = self.recorded.get(n) {
            if h != schedule.horizon as i64 {
                return Err(Diagnostic::error(
                    loc,
                    format!(
                        "'exchange.phase' op records horizon {h}, but the code generator's schedule of this phase has horizon {}; the program changed after convert-tile-to-exchange",
                        schedule.horizon
                    ),
                ));
            }
        }
        tracing::info!(
            phase = n,
            tile = schedule.rows.max_row_tile,
            row_words = schedule.rows.max_row_words,
            horizon = schedule.horizon,
            transfers = phase.transfers.len(),
            "finished physical exchange phase"
        );
        self.phases += 1;
        let step = self.steps.len();
        self.steps.push(StepSummary {
            kind: StepKind::Exchange,
            label: format!(
                "x{n} {label} (horizon {}, lower bound {}, {})",
                schedule.horizon,
                schedule.lower_bound,
                schedule.kind.as_str()
            ),
            cycles: Some(self.target.exchange_phase_cycles(schedule.horizon)),
        });
        let rows = tile_rows(&phase, &schedule.fragments, self.target);
        for (tile, entries) in rows.into_iter().enumerate() {
            if entries.is_empty() {
                continue;
            }
            let tile = tile as u32;
            let sends = entries.iter().any(|e| matches!(e, RowEntry::Send { .. }));
            let captures = entries
                .iter()
                .any(|e| matches!(e, RowEntry::Capture { .. }));
            let src = if sends { src_buf(tile) } else { None };
            let dst = if captures { dst_buf(tile) } else { None };
            if sends && src.is_none() || captures && dst.is_none() {
                return Err(self.err(
                    op,
                    format!("exchange of {label}: tile {tile} has a row but no buffer for it"),
                ));
            }
            for b in [src, dst].into_iter().flatten() {
                self.touch(tile, b, step);
            }
            self.tiles
                .entry(tile)
                .or_default()
                .rows
                .insert(step, RowWork { entries, src, dst });
        }
        Ok(())
    }

    /// Where operand `i` of compute op `op` is read on each tile: the
    /// producer's block itself, or a buffer filled by the exchange phase of
    /// this operand (scheduled here) and by local copies.
    fn operand(
        &mut self,
        op: Op,
        i: usize,
        sizes: &dyn Fn(&Block) -> u64,
        il: bool,
    ) -> Result<FxHashMap<u32, usize>, Diagnostic> {
        Ok(self.operand_in_place(op, i, sizes, il)?.0)
    }

    /// [`Planner::operand`], with the tiles that read the producer's block
    /// in place (in its row-major layout, whatever `operand_layout` wants).
    fn operand_in_place(
        &mut self,
        op: Op,
        i: usize,
        sizes: &dyn Fn(&Block) -> u64,
        il: bool,
    ) -> Result<(FxHashMap<u32, usize>, FxHashSet<u32>), Diagnostic> {
        let cx = self.cx;
        let v = cx.operand(op, i);
        let Some(home) = self.homes.get(&v) else {
            return Err(self.err(op, format!("operand #{i} has no tile mapping")));
        };
        let (hblocks, hbufs) = (home.blocks.clone(), home.bufs.clone());
        let need = needs(cx, op, i).map_err(|m| self.err(op, m))?;
        let eb = elem_bytes(cx, v);
        let step_after = self.steps.len();
        let set = self.compute_sets + 1;
        let mut at: FxHashMap<u32, usize> = FxHashMap::default();
        let mut in_place: FxHashSet<u32> = FxHashSet::default();
        let layout = operand_layout(cx, op, i);
        let mut runs = Vec::new();
        for n in &need {
            if let Some(k) = hblocks
                .iter()
                .position(|b| b.tile == n.tile && b.lo == n.lo && b.hi == n.hi)
            {
                at.insert(n.tile, hbufs[k]);
                in_place.insert(n.tile);
                continue;
            }
            // The buffer is written from the exchange phase on (its step is
            // fixed below, once we know whether there is one).
            let b = self.alloc(
                n.tile,
                format!("s{set}.operand{i}"),
                sizes(n),
                step_after,
                il,
            );
            at.insert(n.tile, b);
            runs_for_layout(n, &hblocks, eb, layout, &mut runs);
        }
        let src_of = |t: u32| -> Option<usize> {
            hblocks.iter().position(|b| b.tile == t).map(|k| hbufs[k])
        };
        let at2 = at.clone();
        let name = cx.name_str(op).to_string();
        self.exchange(
            op,
            &runs,
            format!("operand #{i} of s{set} {name}"),
            &src_of,
            &|t| at2.get(&t).copied(),
        )?;
        // Local runs: copied on the tile at the start of the compute set.
        for r in runs.iter().filter(|r| r.src_tile == r.dst_tile) {
            if let Some(src) = src_of(r.src_tile) {
                self.pending_copies
                    .push((r.src_tile, src, at[&r.dst_tile], *r));
            }
        }
        let mut touched: Vec<(u32, usize)> = at.iter().map(|(&t, &b)| (t, b)).collect();
        touched.sort_unstable();
        self.pending_touch.extend(touched);
        Ok((at, in_place))
    }

    fn compute_step(&mut self, label: String, cycles: Option<u64>) -> usize {
        self.steps.push(StepSummary {
            kind: StepKind::Compute,
            label,
            cycles,
        });
        let step = self.steps.len() - 1;
        for (t, b) in std::mem::take(&mut self.pending_touch) {
            self.touch(t, b, step);
        }
        for (t, src, dst, r) in std::mem::take(&mut self.pending_copies) {
            self.touch(t, src, step);
            self.call(
                t,
                step,
                Kernel::Memcpy,
                vec![
                    Word::Buf(src, r.src_off as u32),
                    Word::Buf(dst, r.dst_off as u32),
                    Word::Val(r.len as u32),
                ],
                0,
            );
        }
        step
    }

    fn matmul(&mut self, op: Op) -> Result<(), Diagnostic> {
        let cx = self.cx;
        let plan = cx
            .get_i64_array_attr(op, "plan")
            .ok_or_else(|| self.err(op, "has no plan"))?
            .to_vec();
        let t = cx
            .get_i64_array_attr(op, "tiles")
            .ok_or_else(|| self.err(op, "has no tiles"))?
            .to_vec();
        let (pm, pn, pk) = (plan[0] as usize, plan[1] as usize, plan[2] as usize);
        let (av, bv) = (cx.operand(op, 0), cx.operand(op, 1));
        let (a, b) = (cx.value_shape(av), cx.value_shape(bv));
        if a.len() != 2 || b.len() != 2 {
            return Err(self.err(op, "is not a 2-D matmul"));
        }
        let (m, k, n) = (a[0] as usize, a[1] as usize, b[1] as usize);
        let (bm, bk, bn) = (m.div_ceil(pm), k.div_ceil(pk), n.div_ceil(pn));
        let (ae, be) = (
            value_elem(cx, av).ok_or_else(|| self.err(op, "has an lhs type without kernels"))?,
            value_elem(cx, bv).ok_or_else(|| self.err(op, "has an rhs type without kernels"))?,
        );
        let out = value_elem(cx, cx.result(op, 0))
            .ok_or_else(|| self.err(op, "has a result type without kernels"))?;
        let pt = match cx.get_attr(op, "partials").map(|p| cx.attr_kind(p)) {
            Some(ipu_ir::AttrKind::Type(ty)) => kernel_elem(cx, *ty).unwrap_or(ElemType::F32),
            _ => ElemType::F32,
        };
        let f8 = |e: ElemType| matches!(e, ElemType::F8E4M3FN | ElemType::F8E5M2);
        let (gemm, input, gt) = match (ae, be) {
            (ElemType::F8E4M3FN, ElemType::F8E4M3FN) => {
                (GemmType::F8E4M3FN, ipu_target::ElemType::F8, ElemType::F16)
            }
            (ElemType::F8E5M2, ElemType::F8E5M2) => {
                (GemmType::F8E5M2, ipu_target::ElemType::F8, ElemType::F16)
            }
            _ if pt == ElemType::F32 => {
                (GemmType::F16F32, ipu_target::ElemType::F16, ElemType::F32)
            }
            _ => (GemmType::F16F16, ipu_target::ElemType::F16, ElemType::F16),
        };
        let pt = gt;
        let in_e = if gemm_input_bytes(cx, av, bv) == 1 {
            ae
        } else {
            ElemType::F16
        };
        if !f8(in_e) && [ae, be].iter().any(|&e| !f8(e) && e != ElemType::F16) {
            return Err(self.err(
                op,
                "has operands the AMP GEMM cannot take (f16, or f8 widened to f16, or two f8 of one format)",
            ));
        }
        let ib = in_e.bytes();
        let k_block = self
            .target
            .amp
            .iter()
            .find(|mode| mode.input == input)
            .map(|mode| mode.k_block as usize)
            .unwrap_or(16);
        if k % pk != 0 || n % pn != 0 || bk % k_block != 0 || bn % 16 != 0 {
            return Err(self.err(
                op,
                format!(
                    "is planned as {pm}x{pn}x{pk} blocks of {bm}x{bk}x{bn}: the code generator needs K split evenly into multiples of {k_block} and N split evenly into multiples of 16"
                ),
            ));
        }
        // K-chunks: decided once, for the exchange stage and here.
        let kc = gemm_chunk(cx, op).map_or(bk, |(kc, _)| kc as usize);
        if bk % kc != 0 {
            return Err(self.err(
                op,
                format!("has a K block of {bk}, not a multiple of the AMP chunk {kc}"),
            ));
        }
        let nkc = bk / kc;
        let gemm_spec = if nkc > 1 {
            KernelSpec::gemm_chunked(gemm, bm, bk, kc, bn)
        } else {
            KernelSpec::gemm(gemm, bm, bk, bn)
        };
        let tile = |kk: usize, i: usize, j: usize| {
            (t[0] as usize + ((kk * pm + i) * pn + j) * t[1] as usize) as u32
        };
        let (aeb, beb) = (ae.bytes() as u64, be.bytes() as u64);
        let (a_at, a_in_place) = self.operand_in_place(op, 0, &|_| (bm * bk) as u64 * aeb, true)?;
        let b_at = self.operand(op, 1, &|_| (bk * bn) as u64 * beb + 8 * bm as u64, true)?;
        let set = self.compute_sets + 1;
        let cycles = cx.get_int_attr(op, "cycles").map(|c| c as u64);
        let step = self.compute_step(format!("s{set} tile.matmul"), cycles);
        let psize = (bm * bn * pt.bytes()) as u64;
        let mut partials: FxHashMap<u32, usize> = FxHashMap::default();
        for kk in 0..pk {
            for i in 0..pm {
                for j in 0..pn {
                    let tl = tile(kk, i, j);
                    let (Some(&a0), Some(&b0)) = (a_at.get(&tl), b_at.get(&tl)) else {
                        continue;
                    };
                    let mut a_cur = a0;
                    if ae != in_e {
                        let spec = KernelSpec::cast(ae, in_e, round_up(bm * bk, 8));
                        let bytes = (bm * bk * 2) as u64;
                        a_cur =
                            self.unary_new(tl, step, spec, a_cur, format!("s{set}.lhs_f16"), bytes);
                    }
                    // A received from other tiles arrives in K-chunks; a block read
                    // in place is row-major and is re-laid out here.
                    if nkc > 1 && a_in_place.contains(&tl) {
                        let spec = KernelSpec::copy2d(
                            nkc,
                            bm,
                            kc * ib / 8,
                            (bk * ib, kc * ib),
                            (kc * ib, bm * kc * ib),
                        );
                        let bytes = (bm * bk * ib) as u64 + 8;
                        a_cur = self.unary_new(
                            tl,
                            step,
                            spec,
                            a_cur,
                            format!("s{set}.lhs_chunks"),
                            bytes,
                        );
                    }
                    let mut b_cur = b0;
                    let b_bytes = |eb: usize| (bk * bn * eb) as u64 + 8 * bm as u64;
                    if bn > 16 {
                        let eb = be.bytes();
                        let spec = KernelSpec::copy2d(
                            bn / 16,
                            bk,
                            16 * eb / 8,
                            (bn * eb, 16 * eb),
                            (16 * eb, bk * 16 * eb),
                        );
                        b_cur = self.unary_new(
                            tl,
                            step,
                            spec,
                            b_cur,
                            format!("s{set}.rhs_blocked"),
                            b_bytes(eb),
                        );
                    }
                    if be != in_e {
                        let spec = KernelSpec::cast(be, in_e, bk * bn);
                        b_cur = self.unary_new(
                            tl,
                            step,
                            spec,
                            b_cur,
                            format!("s{set}.rhs_f16"),
                            b_bytes(2),
                        );
                    }
                    let c = self.alloc(tl, format!("s{set}.partials"), psize, step, true);
                    partials.insert(tl, c);
                    self.call(
                        tl,
                        step,
                        Kernel::Lib(gemm_spec.clone()),
                        vec![
                            Word::Buf(a_cur, 0),
                            Word::Buf(b_cur, 0),
                            Word::Buf(c, 0),
                            Word::Val(0),
                        ],
                        GEMM_STATE_BYTES - 16,
                    );
                }
            }
        }
        self.compute_sets += 1;
        let result = cx.result(op, 0);
        let rmap = mapping_of(cx, op).ok_or_else(|| self.err(op, "has no mapping"))?;
        // The k = 0 tiles receive the other partials, add them up and
        // convert the sum into the result block.
        let mut fin = step;
        let mut incoming: FxHashMap<u32, usize> = FxHashMap::default();
        if pk > 1 {
            for i in 0..pm {
                for j in 0..pn {
                    let tl = tile(0, i, j);
                    let b = self.alloc(
                        tl,
                        format!("s{set}.partials_in"),
                        psize * (pk - 1) as u64,
                        self.steps.len(),
                        true,
                    );
                    incoming.insert(tl, b);
                }
            }
            let runs = partial_runs(cx, op);
            let p2 = partials.clone();
            let in2 = incoming.clone();
            self.exchange(
                op,
                &runs,
                format!("partial sums of s{set} tile.matmul"),
                &|t| p2.get(&t).copied(),
                &|t| in2.get(&t).copied(),
            )?;
            fin = self.compute_step(format!("s{set} tile.matmul reduction"), None);
        }
        self.home(result, &rmap, &format!("s{set}.result"), fin, false);
        let home_bufs = self.home_bufs(result);
        for (tl, res) in home_bufs {
            let Some(&c) = partials.get(&tl) else {
                continue;
            };
            self.touch(tl, c, fin);
            if let Some(&inc) = incoming.get(&tl) {
                self.touch(tl, inc, fin);
                for kk in 0..pk - 1 {
                    self.lib(
                        tl,
                        fin,
                        KernelSpec::elementwise(EwOp::Add, pt, bm * bn),
                        vec![
                            Word::Buf(c, 0),
                            Word::Buf(inc, (kk as u64 * psize) as u32),
                            Word::Buf(c, 0),
                        ],
                    );
                }
            }
            let oeb = out.bytes();
            if bn == 16 {
                let spec = if pt == out {
                    KernelSpec::elementwise(EwOp::Copy, pt, bm * bn)
                } else {
                    KernelSpec::cast(pt, out, bm * bn)
                };
                self.unary(tl, fin, spec, c, res);
            } else {
                let mut src = c;
                if pt != out {
                    let spec = KernelSpec::cast(pt, out, bm * bn);
                    let bytes = (bm * bn * oeb) as u64;
                    src = self.unary_new(tl, fin, spec, c, format!("s{set}.result_blocked"), bytes);
                }
                let spec = KernelSpec::copy2d(
                    bn / 16,
                    bm,
                    16 * oeb / 8,
                    (16 * oeb, bm * 16 * oeb),
                    (bn * oeb, 16 * oeb),
                );
                self.unary(tl, fin, spec, src, res);
            }
        }
        Ok(())
    }

    fn map(&mut self, op: Op) -> Result<(), Diagnostic> {
        let cx = self.cx;
        let result = cx.result(op, 0);
        let rshape = cx.value_shape(result);
        let m = mapping_of(cx, op).ok_or_else(|| self.err(op, "has no mapping"))?;
        let bshape = m.block_shape(&rshape);
        let full: usize = bshape.iter().product::<i64>() as usize;
        let f = cx.get_str_attr(op, "fn").unwrap_or("").to_string();
        let out = value_elem(cx, result)
            .ok_or_else(|| self.err(op, "has a result type without kernels"))?;
        let rank = rshape.len();
        if rank >= 2 && rshape[rank - 1] % m.grid[rank - 1] != 0 {
            return Err(self.err(
                op,
                "splits its last dimension unevenly, which the code generator does not lay out yet",
            ));
        }
        let nops = cx.operands(op).len();
        let mut at = Vec::new();
        for i in 0..nops {
            let v = cx.operand(op, i);
            let vshape = cx.value_shape(v);
            let eb = elem_bytes(cx, v) as u64;
            let off = rank - vshape.len();
            let elems: i64 = vshape
                .iter()
                .enumerate()
                .map(|(d, &n)| if n == 1 { 1 } else { bshape[d + off] })
                .product();
            let binary = nops == 2;
            at.push(self.operand(op, i, &|_| elems as u64 * eb, binary)?);
        }
        let set = self.compute_sets + 1;
        let cycles = cx.get_int_attr(op, "cycles").map(|c| c as u64);
        let step = self.compute_step(format!("s{set} tile.map {f}"), cycles);
        self.compute_sets += 1;
        self.home(result, &m, &format!("s{set}.result"), step, false);
        let ew_ok = matches!(out, ElemType::F32 | ElemType::F16);
        let granule = 8 / out.bytes().min(8);
        let n = round_up(full, granule);
        // Which kernel, and which operand is the matrix.
        enum K {
            Ew(EwOp),
            Row(RowOp, usize),
            Cast(ElemType),
        }
        let kind = match f.as_str() {
            "relu" | "gelu" if ew_ok => K::Ew(if f == "relu" { EwOp::Relu } else { EwOp::Gelu }),
            "add" | "mul" if ew_ok => {
                let same: Vec<bool> = (0..nops)
                    .map(|i| cx.value_shape(cx.operand(op, i)) == rshape)
                    .collect();
                if same.iter().all(|&s| s) {
                    K::Ew(if f == "add" { EwOp::Add } else { EwOp::Mul })
                } else {
                    let Some(mat) = same.iter().position(|&s| s) else {
                        return Err(
                            self.err(op, "broadcasts both operands, which has no kernel yet")
                        );
                    };
                    let vec = 1 - mat;
                    let vshape = cx.value_shape(cx.operand(op, vec));
                    let row_vector = vshape.last() == rshape.last()
                        && vshape[..vshape.len() - 1].iter().all(|&d| d == 1);
                    let cols = *bshape.last().unwrap_or(&1) as usize;
                    if !row_vector || !(cols * out.bytes()).is_multiple_of(8) {
                        return Err(self.err(op, "broadcasts an operand other than a row vector over rows of whole 64-bit granules, which has no kernel yet"));
                    }
                    K::Row(
                        if f == "add" {
                            RowOp::AddRowVector
                        } else {
                            RowOp::MulRowVector
                        },
                        mat,
                    )
                }
            }
            "cast" => {
                let from = value_elem(cx, cx.operand(op, 0))
                    .ok_or_else(|| self.err(op, "casts from a type without kernels"))?;
                K::Cast(from)
            }
            other => {
                return Err(self.err(op, format!("'{other}' on this element type has no kernel")));
            }
        };
        let homes = self.home_bufs(result);
        for (tl, res) in homes {
            let ins: Option<Vec<usize>> = at.iter().map(|a| a.get(&tl).copied()).collect();
            let Some(ins) = ins else {
                return Err(self.err(op, format!("has no operand buffer on tile {tl}")));
            };
            match kind {
                K::Ew(e) => {
                    let in1 = if e.is_binary() {
                        Word::Buf(ins[1], 0)
                    } else {
                        Word::Val(0)
                    };
                    self.lib(
                        tl,
                        step,
                        KernelSpec::elementwise(e, out, n),
                        vec![Word::Buf(ins[0], 0), in1, Word::Buf(res, 0)],
                    );
                }
                K::Row(r, mat) => {
                    let cols = *bshape.last().unwrap_or(&1) as usize;
                    let rows = full / cols.max(1);
                    self.lib(
                        tl,
                        step,
                        KernelSpec::rows(r, out, rows, cols, 0.0),
                        vec![
                            Word::Buf(ins[mat], 0),
                            Word::Val(0),
                            Word::Buf(ins[1 - mat], 0),
                            Word::Val(0),
                            Word::Buf(res, 0),
                        ],
                    );
                }
                K::Cast(from) => {
                    let spec = KernelSpec::cast(from, out, round_up(full, 8));
                    self.unary(tl, step, spec, ins[0], res);
                }
            }
        }
        Ok(())
    }
}

/// Appends the memory maps and code summaries to `block`.
fn emit_summary(cx: &mut Context, block: ipu_ir::Block, s: &Summary, loc: Loc) {
    for m in &s.memory_maps {
        let set = ipu_package::TileSet::from_tiles(m.tiles.iter().copied()).to_string();
        let bufs: Vec<_> = m.buffers.iter().map(|b| cx.string_attr(b)).collect();
        let attrs = vec![
            (cx.sym("tiles"), cx.string_attr(&set)),
            (cx.sym("used"), cx.i64_attr(m.used as i64)),
            (cx.sym("free"), cx.i64_attr(m.free as i64)),
            (cx.sym("buffers"), cx.array_attr(bufs)),
        ];
        let name = cx.op_name("machine.memory_map");
        let mut st = ipu_ir::OperationState::new(name, loc);
        st.attrs = cx.dict_attr(attrs);
        let o = cx.create_op(st);
        cx.append_op(block, o);
    }
    for c in &s.code {
        let set = ipu_package::TileSet::from_tiles(c.tiles.iter().copied()).to_string();
        let names: Vec<_> = c.kernels.iter().map(|k| cx.string_attr(k)).collect();
        let attrs = vec![
            (cx.sym("tiles"), cx.string_attr(&set)),
            (cx.sym("kernels"), cx.array_attr(names)),
            (cx.sym("code_bytes"), cx.i64_attr(c.code_bytes as i64)),
            (cx.sym("exec"), cx.string_attr(&c.exec)),
            (cx.sym("program"), {
                let steps: Vec<_> = c.program.iter().map(|p| cx.string_attr(p)).collect();
                cx.array_attr(steps)
            }),
        ];
        let name = cx.op_name("machine.code");
        let mut st = ipu_ir::OperationState::new(name, loc);
        st.attrs = cx.dict_attr(attrs);
        let o = cx.create_op(st);
        cx.append_op(block, o);
    }
}

/// Appends the readable exchange rows to `block`.
fn emit_rows(cx: &mut Context, block: ipu_ir::Block, s: &Summary, loc: Loc) {
    for (phase, groups) in &s.rows {
        for (tiles, entries) in groups {
            let set = ipu_package::TileSet::from_tiles(tiles.iter().copied()).to_string();
            let es: Vec<_> = entries.iter().map(|e| cx.string_attr(e)).collect();
            let attrs = vec![
                (cx.sym("tiles"), cx.string_attr(&set)),
                (cx.sym("phase"), cx.string_attr(phase)),
                (cx.sym("entries"), cx.array_attr(es)),
            ];
            let name = cx.op_name("machine.exchange_row");
            let mut st = ipu_ir::OperationState::new(name, loc);
            st.attrs = cx.dict_attr(attrs);
            let o = cx.create_op(st);
            cx.append_op(block, o);
        }
    }
}

/// Plans the program of function `f` (tile stage, with its exchange phases).
pub(crate) fn plan(cx: &Context, f: Op, target: &Arc<Target>) -> Result<Plan, Diagnostic> {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    let ops = cx.block_ops_vec(entry);
    let recorded = ops
        .iter()
        .filter(|&&o| cx.is(o, "exchange.phase"))
        .map(|&o| {
            (
                cx.get_int_attr(o, "horizon").unwrap_or(-1) as i64,
                cx.op_loc(o),
            )
        })
        .collect();
    let mut p = Planner {
        cx,
        target,
        scheduler: ExchangeScheduler::new(target.clone()),
        tiles: BTreeMap::new(),
        steps: Vec::new(),
        homes: FxHashMap::default(),
        recorded,
        phases: 0,
        compute_sets: 0,
        pending_copies: Vec::new(),
        pending_touch: Vec::new(),
    };
    let args = cx.block_args(entry).to_vec();
    let mut streams = Vec::new();
    let mut init = Vec::new();
    let mut inputs = 0;
    let mut consts = 0;
    for &op in &ops {
        let name = cx.name_str(op);
        match name {
            "tile.host_input" => {
                let v = cx.result(op, 0);
                let m = mapping_of(cx, op).ok_or_else(|| p.err(op, "has no mapping"))?;
                p.home(v, &m, &format!("input{inputs}"), 0, false);
                inputs += 1;
                let arg = cx.operand(op, 0);
                let idx = args.iter().position(|&a| a == arg).ok_or_else(|| {
                    p.err(op, "streams a value that is not an argument of the function")
                })?;
                let sname = ipu_dialects::func::io_name(cx, f, "arg_attrs", idx)
                    .unwrap_or_else(|| format!("arg{idx}"));
                streams.push(stream_spec(&p, v, sname, false));
            }
            "tile.constant" => {
                let v = cx.result(op, 0);
                let m = mapping_of(cx, op).ok_or_else(|| p.err(op, "has no mapping"))?;
                let bytes = constant_bytes(cx, op).map_err(|e| p.err(op, e))?;
                p.home(v, &m, &format!("const{consts}"), 0, false);
                consts += 1;
                let shape = cx.value_shape(v);
                let eb = elem_bytes(cx, v) as usize;
                let home = &p.homes[&v];
                for (b, &buf) in home.blocks.iter().zip(&home.bufs) {
                    init.push((b.tile, buf, block_bytes(&bytes, &shape, b, eb)));
                }
            }
            "tile.matmul" => p.matmul(op)?,
            "tile.map" => p.map(op)?,
            "tile.host_output" => {
                let v = cx.operand(op, 0);
                if !p.homes.contains_key(&v) {
                    return Err(p.err(op, "streams a value with no tile mapping"));
                }
                for (t, b) in p.home_bufs(v) {
                    p.tiles.get_mut(&t).expect("tile").bufs[b].last = u32::MAX;
                }
                let sname = cx
                    .get_str_attr(op, "name")
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("result{}", streams.iter().filter(|s: &&StreamSpec| s.output).count()));
                streams.push(stream_spec(&p, v, sname, true));
            }
            "exchange.phase" | "func.return" | "machine.memory_map" | "machine.code" => {}
            _ => {
                return Err(p.err(
                    op,
                    "is not lowered to the machine stage yet (the code generator takes tile.host_input, tile.constant, tile.matmul, tile.map, tile.host_output and exchange.phase)",
                ))
            }
        }
    }
    if p.phases != p.recorded.len() && !p.recorded.is_empty() {
        return Err(Diagnostic::error(
            cx.op_loc(f),
            format!(
                "the function records {} exchange phases, but its program needs {}; run convert-tile-to-exchange on the tile-stage program",
                p.recorded.len(),
                p.phases
            ),
        ));
    }
    Ok(Plan {
        tiles: p.tiles,
        init,
        steps: p.steps,
        streams,
    })
}

/// The little-endian element bytes of a constant's value (splats expanded).
fn constant_bytes(cx: &Context, op: Op) -> Result<Vec<u8>, String> {
    use ipu_ir::types::{AttrKind, DenseData};
    let a = cx.get_attr(op, "value").ok_or("has no value")?;
    let v = cx.result(op, 0);
    let n: i64 = cx.value_shape(v).iter().product();
    let eb = elem_bytes(cx, v) as usize;
    let (splat, bytes): (bool, &[u8]) = match cx.attr_kind(a) {
        AttrKind::DenseElements {
            data: DenseData { splat, bytes },
            ..
        } => (*splat, bytes),
        AttrKind::DenseResource { handle, .. } => {
            let name = cx.str(*handle);
            let blob = cx.resources.get(name).ok_or_else(|| {
                format!("has a resource blob '{name}' that is not present (missing weights file?)")
            })?;
            (false, &blob.data[..])
        }
        _ => return Err("has a value that is not dense elements".into()),
    };
    let want = n as usize * eb;
    if splat && bytes.len() == eb {
        return Ok(bytes.repeat(n as usize));
    }
    if bytes.len() != want {
        return Err(format!(
            "holds {} bytes of elements, but its type needs {want}",
            bytes.len()
        ));
    }
    Ok(bytes.to_vec())
}

/// The bytes of block `b` of a row-major tensor, stored row-major.
fn block_bytes(all: &[u8], shape: &[i64], b: &Block, eb: usize) -> Vec<u8> {
    let rank = shape.len();
    if rank == 0 {
        return all.to_vec();
    }
    let mut strides = vec![1i64; rank];
    for d in (0..rank - 1).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let ext: Vec<i64> = b.lo.iter().zip(&b.hi).map(|(l, h)| h - l).collect();
    let row = ext[rank - 1] as usize * eb;
    let outer: i64 = ext[..rank - 1].iter().product();
    let mut out = Vec::with_capacity(outer.max(1) as usize * row);
    for r in 0..outer.max(1) {
        let mut rem = r;
        let mut at = b.lo[rank - 1];
        for d in (0..rank - 1).rev() {
            at += (b.lo[d] + rem % ext[d]) * strides[d];
            rem /= ext[d];
        }
        let start = at as usize * eb;
        out.extend_from_slice(&all[start..start + row]);
    }
    out
}

fn stream_spec(p: &Planner<'_>, v: Value, name: String, output: bool) -> StreamSpec {
    let home = &p.homes[&v];
    StreamSpec {
        name,
        output,
        ty: p.cx.value_type(v),
        shape: p.cx.value_shape(v),
        blocks: home
            .blocks
            .iter()
            .cloned()
            .zip(home.bufs.iter().copied())
            .collect(),
        elem_bytes: elem_bytes(p.cx, v) as u64,
    }
}

/// Builds the package of function `f`, with the build's figures.
pub fn build_package(
    cx: &Context,
    f: Op,
    target: &Arc<Target>,
) -> Result<(Package, Stats, Summary), Diagnostic> {
    build_package_with(cx, f, target, false)
}

/// [`build_package`], with readable exchange rows in the summary when
/// `rows` is set.
pub fn build_package_with(
    cx: &Context,
    f: Op,
    target: &Arc<Target>,
    rows: bool,
) -> Result<(Package, Stats, Summary), Diagnostic> {
    let operations = cx
        .block_ops(cx.entry_block(cx.region(f, 0)).expect("checked"))
        .count();
    let span = tracing::info_span!(
        "ipu_codegen.package.build",
        tile_count = target.tiles(),
        operations = operations
    );
    let _g = span.enter();
    let plan = timed_phase("plan_package", || plan(cx, f, target))?;
    build_package_from(cx, f, target, plan, rows)
}

/// Runs one build phase inside its tracing span and logs its time.
pub(crate) fn timed_phase<T>(
    phase: &'static str,
    body: impl FnOnce() -> Result<T, Diagnostic>,
) -> Result<T, Diagnostic> {
    let span = tracing::info_span!("ipu_codegen.package.phase", phase = phase);
    let _g = span.enter();
    let t0 = Instant::now();
    let r = body();
    tracing::info!(
        phase = phase,
        elapsed_ms = t0.elapsed().as_millis() as u64,
        success = r.is_ok(),
        "package build phase finished"
    );
    r
}
