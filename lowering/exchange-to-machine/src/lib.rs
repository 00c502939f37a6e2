//! `convert-exchange-to-machine`: the code generator. From the exchange
//! stage's program (and nothing else: [`Program::read`]) it builds what
//! every tile runs and holds, as an [`ipu_package::Package`]:
//!
//! * **Program.** Each superstep of the exchange stage (a compute set or an
//!   exchange phase) ends with a chip-wide `sync 1`. Every started tile runs
//!   every superstep, so all tiles leave each sync at one cycle.
//! * **Compute.** A tile's part of a compute set is its vertices: library
//!   kernel calls (`call $m15, <specialisation>.<entry>`), each with a state
//!   record of buffer addresses and words; local copies on the workers
//!   (`lcopy`) or by the supervisor's byte copy.
//! * **Exchange.** Each phase's transfers are scheduled again (the
//!   scheduler is deterministic, so the schedule is the one the exchange
//!   stage recorded: the horizon is checked against it, and a schedule not
//!   made in this process is verified) and become one exchange-table row per
//!   tile, run by the tile's exchange engine (`exch`): sends, port selects
//!   and captures at fixed cycles. Tiles with nothing to do run an empty
//!   row, so every tile's program has the same timing.
//! * **Storage.** Per tile, every buffer gets an address for its lifetime
//!   (the supersteps that use it); buffers never alive together share
//!   memory ([`storage::place`]). Interleaved buffers go to the interleaved
//!   region. Code, the tile's pointer table, kernel records and exchange rows
//!   go in the memory kept for code and exchange tables.
//! * **Code.** The supervisor program reads every record and row pointer
//!   from a per-tile table at a fixed address, so tiles calling the same
//!   kernels run byte-identical code and share one program group.
//! * **Host streams.** Inputs and outputs are described block by block,
//!   compressed into regular pieces.
//!
//! Depends on the program model (`ipu-program`) and the exchange scheduler
//! only: no op family, no other pass (its tests lower a model through
//! `ipu-nn-to-tile` and `ipu-tile-to-exchange`, dev-dependencies).

mod emit;
pub mod memory;
pub mod storage;
mod streams;
#[cfg(test)]
mod tests;

use ipu_exchange_schedule::{sat, tile_rows, verify, ExchangeScheduler, RowEntry};
use ipu_ir::pass::{Pass, PassInfo, PassOptionInfo, PassOptions, Statistic};
use ipu_ir::{Context, Diagnostic, Loc, Op, Type};
use ipu_package::{Direction, Package, StepKind, StepSummary};
use ipu_program::geometry::{blocks, runs_for_layout, Block, Layout};
use ipu_program::records::{self, LocalCopyCall};
use ipu_program::target::{functions, module_target, target_option, TARGET_OPTION};
use ipu_program::{BufId, ComputeSet, Program, Step, VirtualSpace};
use ipu_target::Target;
use std::collections::BTreeMap;
use std::sync::{mpsc, Arc};
use std::time::Instant;
use storage::Buffer;

use emit::build_package_from;
pub(crate) use ipu_program::{Call, Kernel, Word};

pub const INFO: PassInfo = PassInfo {
    argument: "convert-exchange-to-machine",
    name: "ConvertExchangeToMachine",
    description: "Generate every tile's program from the exchange-stage program: kernel calls with their state \
                  records, exchange-table rows for the exchange engine, storage placement, linked code shared \
                  by tiles with the same program, host stream layouts; the function becomes the machine-dialect \
                  package.",
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
        target_option: target_option(o),
        stats: Stats::default(),
        print_rows: o.get_bool("print-rows", false)?,
    }))
}

#[derive(Default, Clone, Copy, Debug)]
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
        // The function no other calls; its callees' programs run at their calls.
        let all = functions(cx, module);
        let called: Vec<String> = all
            .iter()
            .flat_map(|&g| ipu_program::target::callees(cx, g))
            .map(|(_, n)| n)
            .collect();
        let funcs: Vec<Op> = all
            .iter()
            .copied()
            .filter(|&g| {
                cx.get_str_attr(g, "sym_name")
                    .is_none_or(|n| !called.iter().any(|c| c == n))
            })
            .collect();
        let [f] = funcs[..] else {
            return Err(Diagnostic::error(
                cx.op_loc(module),
                format!(
                    "the machine stage compiles exactly one function with a body that no other calls; \
                     this module has {}",
                    funcs.len()
                ),
            ));
        };
        let (pkg, stats, mut summary) = build_package_with(cx, f, &target, self.print_rows)?;
        memory::offer(std::mem::take(&mut summary.memory));
        self.stats = stats;
        let loc = cx.op_loc(f);
        let body = cx
            .entry_block(cx.region(module, 0))
            .expect("a module has a body");
        for op in cx.block_ops_vec(body) {
            cx.erase_op(op);
        }
        emit_summary(cx, body, &summary, loc);
        if self.print_rows {
            emit_rows(cx, body, &summary, loc);
        }
        timed_phase("emit_ir", || {
            ipu_dialects::machine::emit_package(cx, body, &pkg, loc);
            Ok(())
        })?;
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
    /// Every byte of every tile by what holds it, and the live bytes.
    pub memory: memory::MemoryReport,
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

/// One tile's exchange row of a phase: each entry with the tile's buffer
/// its offset is relative to (none for selects).
pub(crate) type RowWork = Vec<(RowEntry, Option<u32>)>;

/// One tile: its buffers (indices are local to the tile) and its work per
/// superstep.
#[derive(Default)]
pub(crate) struct TileWork {
    pub bufs: Vec<Buffer>,
    pub interleaved: Vec<bool>,
    /// Calls per superstep, their records' buffers local indices (a
    /// repeated step's, [`Program::repeated_steps`], shared with the step
    /// it repeats).
    pub calls: BTreeMap<usize, Arc<Vec<Call>>>,
    /// Exchange rows per superstep (shared as `calls` are).
    pub rows: BTreeMap<usize, Arc<RowWork>>,
    /// Per exchange step, the calls of the next step (their indices) whose
    /// prologue runs in it, after the `exch`; a call with a prologue that
    /// is not here runs it just before itself.
    pub ahead: BTreeMap<usize, Vec<usize>>,
    /// Per exchange step, the calls of the next step (their indices, in
    /// order) that run whole in it, after the `exch` and before the
    /// prologues: local copies the phase does not disturb.
    pub during: BTreeMap<usize, Vec<usize>>,
    /// Per exchange step, the cycles of the copies in `during`.
    pub during_cycles: BTreeMap<usize, u64>,
    /// Per step that later steps repeat ([`repeat_compute`],
    /// [`repeat_rows`]): its calls' or row's buffers, each once, and
    /// whether a copy run during the phase before uses it.
    repeat_bufs: rustc_hash::FxHashMap<usize, Arc<Vec<(usize, bool)>>>,
    /// Program buffer -> local index ([`NOT_LOCAL`] for none).
    local: Vec<u32>,
    /// Local index -> program buffer.
    pub ids: Vec<BufId>,
    /// Per local index: whether it is a call frame's buffer.
    is_frame: Vec<bool>,
    /// Per local index of a call frame's buffer: (call, first, last) of
    /// each call that uses it (call 0: outside every call); empty for
    /// other buffers. [`Self::settle_spans`] turns them into
    /// [`Buffer::spans`].
    frame_uses: Vec<Vec<(u32, u32, u32)>>,
}

/// Supervisor issues between a phase's `exch` and the first copy it runs
/// (the copy's record address and its call).
const DURING_ISSUE_CYCLES: u64 = 3;

/// Whether local copy `m` of a compute set may run during `phase`, the
/// exchange just before it: the phase captures into nothing the copy reads
/// and sends from nothing it writes, and its captures into the copy's
/// destination buffer land in other bytes of it.
pub(crate) fn runs_during(phase: &ipu_program::PhaseDecl, m: &ipu_program::Move) -> bool {
    if phase.moves.iter().any(|x| x.dst == m.src || x.src == m.dst) {
        return false;
    }
    let into: Vec<&ipu_program::Move> = phase.moves.iter().filter(|x| x.dst == m.dst).collect();
    if into.is_empty() {
        return true;
    }
    // The bytes the copy writes, per tile (by index): sorted, disjoint ranges.
    let mut written: Vec<Vec<(u64, u64)>> = Vec::new();
    for t in &m.transfers {
        for d in &t.dsts {
            let (tile, a) = (d.tile as usize, u64::from(d.offset));
            if written.len() <= tile {
                written.resize_with(tile + 1, Vec::new);
            }
            written[tile].push((a, a + u64::from(t.len)));
        }
    }
    for v in written.iter_mut() {
        v.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(v.len());
        for &(a, b) in v.iter() {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *v = merged;
    }
    !into.iter().any(|x| {
        x.transfers.iter().any(|t| {
            t.dsts.iter().any(|d| {
                written.get(d.tile as usize).is_some_and(|v| {
                    let (a, b) = (u64::from(d.offset), u64::from(d.offset) + u64::from(t.len));
                    // The last range starting before b is the only one that can reach past a.
                    let i = v.partition_point(|r| r.0 < b);
                    i > 0 && v[i - 1].1 > a
                })
            })
        })
    })
}

/// [`TileWork::local`]'s mark of a buffer the tile does not hold.
const NOT_LOCAL: u32 = u32::MAX;

impl TileWork {
    /// This tile's local index of `program`'s buffer `b`, used at `step`.
    fn touch(&mut self, program: &Program, b: BufId, step: u32) -> usize {
        let i = match self.local.get(b) {
            Some(&i) if i != NOT_LOCAL => i as usize,
            _ => {
                let decl = &program.buffers[b];
                self.bufs.push(Buffer {
                    name: decl.name.clone(),
                    size: ipu_program::stored_bytes(decl.bytes),
                    first: step,
                    last: step,
                    spans: Vec::new(),
                });
                self.frame_uses.push(Vec::new());
                self.is_frame.push(program.frames.is_frame(b));
                self.interleaved.push(decl.interleaved);
                self.ids.push(b);
                let i = self.bufs.len() - 1;
                if self.local.len() <= b {
                    self.local.resize(b + 1, NOT_LOCAL);
                }
                self.local[b] = i as u32;
                i
            }
        };
        self.alive_at(program, i, step);
        i
    }

    /// Local buffer `i` is alive at `step`.
    fn alive_at(&mut self, program: &Program, i: usize, step: u32) {
        let buf = &mut self.bufs[i];
        buf.first = buf.first.min(step);
        buf.last = buf.last.max(step);
        if self.is_frame[i] {
            let call = program.frames.call_of(step as usize);
            let uses = &mut self.frame_uses[i];
            // Steps come mostly in program order: the last call first.
            let found = match uses.last_mut() {
                Some(u) if u.0 == call => Some(u),
                _ => uses.iter_mut().find(|u| u.0 == call),
            };
            match found {
                Some(u) => (u.1, u.2) = (u.1.min(step), u.2.max(step)),
                None => uses.push((call, step, step)),
            }
        }
    }

    /// Each call frame's buffer alive only in the calls that use it, unless
    /// something outside every call uses it too (a constant loaded once).
    fn settle_spans(&mut self) {
        for (buf, uses) in self.bufs.iter_mut().zip(&mut self.frame_uses) {
            if uses.len() < 2 || uses.iter().any(|u| u.0 == 0) {
                continue;
            }
            let mut spans: Vec<(u32, u32)> = uses.iter().map(|u| (u.1, u.2)).collect();
            spans.sort_unstable();
            let mut merged: Vec<(u32, u32)> = Vec::with_capacity(spans.len());
            for (a, b) in spans {
                match merged.last_mut() {
                    Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                    _ => merged.push((a, b)),
                }
            }
            if merged.len() > 1 {
                buf.spans = merged;
            }
        }
    }

    /// Puts each call's split-off prologue ([`records::Prologue`]) in the
    /// exchange step before the call's, when nothing between the two
    /// disturbs it there: no call of its kernel source before it in its
    /// step, and neither that phase's captures on this tile nor the calls
    /// before it touch a buffer the prologue reads (the copies run during
    /// the phase, [`Self::during`], come before the prologues there and do
    /// not count). The buffers it reads are then alive from the exchange
    /// step on.
    fn place_prologues(&mut self, program: &Program, kinds: &[StepKind]) {
        // Per step after an exchange: the calls whose prologues run ahead,
        // and the buffers those read. A repeated step's calls, the row
        // before them and the copies run during it are its first step's,
        // shared: the first step's answer is its answer too.
        type Ahead = Arc<(Vec<usize>, Vec<usize>)>;
        // A step's calls, the row before them, the copies run during it.
        type Key<'a> = (*const Vec<Call>, Option<*const RowWork>, &'a [usize]);
        let mut placed: Vec<(usize, Ahead)> = Vec::new();
        let mut seen: rustc_hash::FxHashMap<Key<'_>, Ahead> = Default::default();
        for (&s, calls) in &self.calls {
            if s == 0 || kinds.get(s - 1) != Some(&StepKind::Exchange) {
                continue;
            }
            let row = self.rows.get(&(s - 1));
            // The copies run during the phase come first there.
            let during = self.during.get(&(s - 1)).map_or(&[][..], |v| v.as_slice());
            let ahead = seen
                .entry((Arc::as_ptr(calls), row.map(Arc::as_ptr), during))
                .or_insert_with(|| Arc::new(prologues_ahead(calls, row.map(|r| &r[..]), during)))
                .clone();
            placed.push((s, ahead));
        }
        for (s, ahead) in placed {
            let (calls, reads) = &*ahead;
            for &b in reads {
                self.alive_at(program, b, s as u32 - 1);
            }
            if !calls.is_empty() {
                self.ahead.insert(s - 1, calls.clone());
            }
        }
    }

    /// Record word `w` with its buffer (if any) as this tile's local index.
    fn local_word(&mut self, program: &Program, w: Word, step: u32) -> Word {
        match w {
            Word::Val(v) => Word::Val(v),
            Word::Buf(b, off) => Word::Buf(self.touch(program, b, step), off),
        }
    }
}

/// [`TileWork::place_prologues`] for one step after an exchange: of its
/// `calls`, those whose prologues run in the exchange (after `row`, and
/// after the calls `during` it), and the buffers those prologues read.
fn prologues_ahead(
    calls: &[Call],
    row: Option<&[(RowEntry, Option<u32>)]>,
    during: &[usize],
) -> (Vec<usize>, Vec<usize>) {
    // The buffers the phase captures into, listed once a call has a prologue.
    let mut captured: Option<Vec<usize>> = None;
    let mut ahead = Vec::new();
    let mut reads_ahead: Vec<usize> = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let Kernel::Lib(spec) = &c.kernel else {
            continue;
        };
        let Some(pro) = records::prologue(spec) else {
            continue;
        };
        let before: Vec<&Call> = calls[..i]
            .iter()
            .enumerate()
            .filter(|(k, _)| !during.contains(k))
            .map(|(_, c)| c)
            .collect();
        let same_source = before
            .iter()
            .any(|b| matches!(&b.kernel, Kernel::Lib(x) if x.source == spec.source));
        let reads: Vec<usize> = pro
            .reads
            .iter()
            .filter_map(|&w| match c.record.get(w) {
                Some(Word::Buf(b, _)) => Some(*b),
                _ => None,
            })
            .collect();
        let captured = captured.get_or_insert_with(|| {
            row.into_iter()
                .flatten()
                .filter(|(e, _)| matches!(e, RowEntry::Capture { .. }))
                .filter_map(|&(_, b)| b.map(|b| b as usize))
                .collect()
        });
        let touched = reads.iter().any(|b| {
            captured.contains(b)
                || before.iter().any(|x| {
                    x.record
                        .iter()
                        .any(|w| matches!(w, Word::Buf(y, _) if y == b))
                })
        });
        if same_source || touched {
            continue;
        }
        ahead.push(i);
        reads_ahead.extend(reads);
    }
    (ahead, reads_ahead)
}

/// A host stream: its name, direction, element type, shape, and where its
/// bytes are on the tiles.
pub(crate) struct StreamSpec {
    pub name: String,
    pub direction: Direction,
    pub ty: Type,
    /// The host's type when it differs from `ty` (an argument the host
    /// widens as it writes it, an output it narrows as it reads it).
    pub host_ty: Option<Type>,
    pub shape: Vec<i64>,
    pub at: StoredRects,
}

/// Where a stored value's bytes are: rectangles of the row-major tensor,
/// each on its tile in a local buffer in a layout, in the order its home's
/// blocks and its placements give them. Kept as rectangles, not runs: a
/// weight read in GEMM blocks is a million 16-byte runs, made when they are
/// needed ([`StoredRects::runs`]), a tile at a time.
pub(crate) struct StoredRects {
    /// The whole tensor, the rectangles' source.
    pub whole: Block,
    pub elem_bytes: i64,
    pub rects: Vec<(Block, usize, Layout)>,
}

impl StoredRects {
    /// Appends the runs of rectangle `i` to `out` as (offset in its buffer,
    /// offset in the row-major tensor, bytes); `scratch` is reused.
    pub fn runs(
        &self,
        i: usize,
        scratch: &mut Vec<ipu_program::geometry::Run>,
        out: &mut Vec<(u64, u64, u64)>,
    ) {
        let (rect, _, layout) = &self.rects[i];
        scratch.clear();
        runs_for_layout(
            rect,
            std::slice::from_ref(&self.whole),
            self.elem_bytes,
            *layout,
            scratch,
        );
        out.extend(scratch.iter().map(|r| (r.dst_off, r.src_off, r.len)));
    }
}

/// The whole program before placement.
pub(crate) struct Plan {
    pub tiles: BTreeMap<u32, TileWork>,
    /// Constant blocks loaded with the images: (tile, buffer, bytes).
    pub init: Vec<InitImage>,
    pub steps: Vec<StepSummary>,
    pub streams: Vec<StreamSpec>,
    /// Per probe: (step, op, source, where its bytes are).
    pub probes: Vec<(u32, String, String, StreamSpec)>,
    /// Per program buffer, what it holds (for the memory report).
    pub facts: Vec<memory::BufferFacts>,
    /// Each expanded call's steps and its callee's number, in order.
    pub calls: Vec<(std::ops::Range<usize>, u32)>,
    /// The callees' names, by number.
    pub callees: Vec<String>,
}

struct Planner<'a> {
    program: &'a Program,
    tiles: BTreeMap<u32, TileWork>,
}

impl Planner<'_> {
    /// The tile's local index of program buffer `b`, used at `step`.
    fn touch(&mut self, tile: u32, b: BufId, step: u32) -> usize {
        self.tiles
            .entry(tile)
            .or_default()
            .touch(self.program, b, step)
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

/// One exchange phase ready to merge into the tiles' work: its step, its
/// summary, and per tile with entries (in tile order) its row, each entry
/// with the program buffer its offset is relative to (none for selects).
pub(crate) struct PhaseRows {
    pub step: usize,
    pub summary: StepSummary,
    /// Whether the schedule and rows are an earlier equal phase's.
    pub reused: bool,
    pub rows: Vec<(u32, ProgramRow)>,
    /// The step this one repeats ([`Program::repeated_steps`]): its tiles'
    /// rows are that step's, and `rows` is empty.
    pub same_as: Option<usize>,
}

/// A tile's row before it is merged: each entry with the program buffer its
/// offset is relative to (none for selects).
pub(crate) type ProgramRow = Vec<(RowEntry, Option<u32>)>;

/// An exchange phase scheduled and its tiles' rows built, before the rows'
/// virtual offsets are resolved to its buffers.
struct Scheduled<'a> {
    step: usize,
    decl: &'a ipu_program::PhaseDecl,
    space: VirtualSpace,
    seen: Arc<Seen>,
    /// Whether `seen` is an earlier phase's.
    reused: bool,
    summary: StepSummary,
}

/// A distinct phase of this build (as the scheduler sees it), its schedule
/// and its tiles' rows (entries at virtual offsets).
struct Seen {
    phase: ipu_exchange_schedule::Phase,
    schedule: Arc<ipu_exchange_schedule::Schedule>,
    rows: Vec<Vec<RowEntry>>,
}

/// The distinct phases scheduled so far, by hash. A phase whose virtual
/// phase ([`Program::virtual_phase`]) equals an earlier one's moves the same
/// bytes between the same tiles in the same order, at the same offsets in
/// buffers of the same sizes; only the buffers differ. It reuses that
/// phase's schedule and rows, resolved to its own buffers: the scheduler
/// would answer it from its memo with the same schedule, and the rows are a
/// pure function of the virtual phase and its schedule.
#[derive(Default)]
struct SeenPhases(rustc_hash::FxHashMap<u64, Vec<Arc<Seen>>>);

impl SeenPhases {
    fn key(phase: &ipu_exchange_schedule::Phase) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        phase.hash(&mut h);
        h.finish()
    }

    fn get(&self, key: u64, phase: &ipu_exchange_schedule::Phase) -> Option<Arc<Seen>> {
        self.0
            .get(&key)?
            .iter()
            .find(|s| s.phase == *phase)
            .cloned()
    }
}

/// The rows of every exchange phase, in program order. Schedules are looked
/// up (or made and verified) one phase after another, as the scheduler's
/// cache needs; the rows, a pure function of a phase and its schedule, are
/// built in parallel, each as soon as its phase is scheduled, and collected
/// in order. The list ends at the first phase that fails, with its error;
/// an error in a phase's rows stays at that phase, so the first error in
/// program order is the one reported, as when each phase is done in turn.
#[cfg(test)]
pub(crate) fn exchange_rows(
    program: &Program,
    target: &Arc<Target>,
) -> Vec<Result<PhaseRows, Diagnostic>> {
    let (senders, receivers) = row_channels(program);
    send_exchange_rows(program, target, &program.repeated_steps(), senders);
    receivers.into_iter().map_while(|r| r.recv().ok()).collect()
}

/// What one exchange phase's channel carries, once.
type PhaseResult = Result<PhaseRows, Diagnostic>;

/// One channel per exchange phase of `program`, in program order.
fn row_channels(
    program: &Program,
) -> (
    Vec<mpsc::Sender<PhaseResult>>,
    Vec<mpsc::Receiver<PhaseResult>>,
) {
    let phases = program
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Exchange(_)))
        .count();
    (0..phases).map(|_| mpsc::channel()).unzip()
}

/// [`exchange_rows`], each phase's result sent on its channel as soon as it
/// is made (a reader can take them in order while later phases are built).
/// Phases after the first that fails to schedule are not scheduled: their
/// channels close empty. Returns when every phase's rows are sent.
fn send_exchange_rows(
    program: &Program,
    target: &Arc<Target>,
    repeated: &[Option<usize>],
    senders: Vec<mpsc::Sender<PhaseResult>>,
) {
    let mut scheduler = ExchangeScheduler::new(target.clone());
    let mut seen = SeenPhases::default();
    // Each phase's schedule and rows, by step, for the steps that repeat it.
    let mut by_step: rustc_hash::FxHashMap<usize, Arc<Seen>> = Default::default();
    rayon::scope(|scope| {
        let mut free = senders.into_iter();
        for (s, step) in program.steps.iter().enumerate() {
            let Step::Exchange(ph) = step else { continue };
            let Some(tx) = free.next() else { break };
            // A repeated phase: the same moves and figures as its first, so
            // its schedule is that one's; only its horizon is checked again.
            let first = repeated.get(s).copied().flatten();
            if let Some(x) = first.and_then(|s0| by_step.get(&s0)) {
                let r = phase_summary(target, s, ph, x, true).map(|summary| PhaseRows {
                    step: s,
                    summary,
                    reused: true,
                    rows: Vec::new(),
                    same_as: first,
                });
                let failed = r.is_err();
                let _ = tx.send(r);
                if failed {
                    break;
                }
                continue;
            }
            // A send fails only once the reader has stopped (at an earlier error).
            match schedule_phase(&mut scheduler, &mut seen, program, target, s, ph) {
                Ok(x) => {
                    by_step.insert(s, x.seen.clone());
                    scope.spawn(move |_| {
                        let _ = tx.send(phase_rows(x));
                    })
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        }
    });
}

/// `'exchange.phase' op @name: message`, at the phase.
fn phase_error(ph: &ipu_program::PhaseDecl, m: String) -> Diagnostic {
    Diagnostic::error(ph.loc, format!("'exchange.phase' op @{}: {m}", ph.name))
}

/// Schedules phase `ph` (step `s`) and builds its tiles' rows, or takes
/// both from an equal phase in `seen`; checks the schedule against what the
/// exchange stage recorded, and summarises the step.
fn schedule_phase<'a>(
    scheduler: &mut ExchangeScheduler,
    seen: &mut SeenPhases,
    program: &Program,
    target: &Target,
    s: usize,
    ph: &'a ipu_program::PhaseDecl,
) -> Result<Scheduled<'a>, Diagnostic> {
    let err = |m: String| phase_error(ph, m);
    let (phase, space) = program.virtual_phase(ph);
    let key = SeenPhases::key(&phase);
    let hit = seen.get(key, &phase);
    let reused = hit.is_some();
    let seen = match hit {
        Some(x) => x,
        None => {
            let (schedule, known) = scheduler
                .schedule_memo(&phase)
                .map_err(|e| err(e.to_string()))?;
            // A schedule made in this process was verified when it was made; one
            // made here is verified now.
            if !known {
                if let Err(errors) = verify(&phase, &schedule, target) {
                    return Err(err(format!(
                        "the schedule fails verification, first: {}",
                        errors.first().map(|e| e.to_string()).unwrap_or_default()
                    )));
                }
            }
            let rows = tile_rows(&phase, &schedule.fragments, target);
            let x = Arc::new(Seen {
                phase,
                schedule,
                rows,
            });
            seen.0.entry(key).or_default().push(x.clone());
            x
        }
    };
    let summary = phase_summary(target, s, ph, &seen, reused)?;
    Ok(Scheduled {
        step: s,
        decl: ph,
        space,
        seen,
        reused,
        summary,
    })
}

/// Checks the horizon phase `ph` (step `s`) records against its schedule
/// (`seen`'s) and summarises the step.
fn phase_summary(
    target: &Target,
    s: usize,
    ph: &ipu_program::PhaseDecl,
    seen: &Seen,
    reused: bool,
) -> Result<StepSummary, Diagnostic> {
    let err = |m: String| phase_error(ph, m);
    let schedule = &seen.schedule;
    // The recorded horizon is checked for every phase, reused or not.
    if schedule.horizon != ph.figures.horizon {
        return Err(err(format!(
            "records horizon {}, but the schedule of its transfers has horizon {}; run convert-tile-to-exchange again after changing the program",
            ph.figures.horizon, schedule.horizon
        )));
    }
    tracing::info!(
        phase = s,
        tile = schedule.rows.max_row_tile,
        row_words = schedule.rows.max_row_words,
        horizon = schedule.horizon,
        transfers = seen.phase.transfers.len(),
        reused,
        "finished physical exchange phase"
    );
    let summary = StepSummary {
        kind: StepKind::Exchange,
        label: format!(
            "{} {} (horizon {}, lower bound {}, {})",
            ph.name,
            ph.label,
            schedule.horizon,
            schedule.lower_bound,
            schedule.kind.as_str()
        ),
        cycles: Some(target.exchange_phase_cycles(schedule.horizon)),
        // The endpoint bound: the busiest tile's bytes at the link rate.
        bound: Some(
            target.exchange_phase_cycles(schedule.lower_bound)
                + u64::from(target.exchange.sync_cycles),
        ),
    };
    Ok(summary)
}

/// A scheduled phase's rows, every entry's virtual offset resolved to a
/// buffer of its tile and the offset in it.
fn phase_rows(x: Scheduled<'_>) -> Result<PhaseRows, Diagnostic> {
    let Scheduled {
        step,
        decl,
        space: vs,
        seen,
        reused,
        summary,
    } = x;
    let mut out = Vec::new();
    for (tile, entries) in seen.rows.iter().enumerate() {
        if entries.is_empty() {
            continue;
        }
        let tile = tile as u32;
        let mut row = Vec::with_capacity(entries.len());
        for &e in entries {
            let (space, off) = match e {
                RowEntry::Send { offset, .. } => (&vs.src, offset),
                // A capture from the partner's port writes this tile's memory.
                RowEntry::Capture { offset, .. } => (&vs.dst, offset),
                RowEntry::Select { .. } => {
                    row.push((e, None));
                    continue;
                }
            };
            let resolved = VirtualSpace::resolve(space, tile, u64::from(off))
                .and_then(|(b, rel)| Some((u32::try_from(b).ok()?, sat(rel))));
            let Some((b, rel)) = resolved else {
                return Err(phase_error(
                    decl,
                    format!("tile {tile} has a row entry outside its buffers"),
                ));
            };
            let e = match e {
                RowEntry::Send { cycle, len, .. } => RowEntry::Send {
                    cycle,
                    offset: rel,
                    len,
                },
                RowEntry::Capture {
                    cycle, port, len, ..
                } => RowEntry::Capture {
                    cycle,
                    port,
                    offset: rel,
                    len,
                },
                other => other,
            };
            row.push((e, Some(b)));
        }
        out.push((tile, row));
    }
    Ok(PhaseRows {
        step,
        summary,
        reused,
        rows: out,
        same_as: None,
    })
}

/// A buffer's image loaded with the program: (tile, local buffer, bytes).
type InitImage = (u32, usize, Vec<u8>);

/// Plans every tile's work from the exchange-stage program.
pub(crate) fn plan(
    cx: &Context,
    f: Op,
    program: &Program,
    target: &Arc<Target>,
) -> Result<Plan, Diagnostic> {
    plan_with(cx, f, program, target, program.repeated_steps())
}

/// [`plan`], with the steps that share an earlier step's work given
/// (`repeated`, as [`Program::repeated_steps`]; all `None`: every step
/// planned on its own).
pub(crate) fn plan_with(
    cx: &Context,
    f: Op,
    program: &Program,
    target: &Arc<Target>,
    repeated: Vec<Option<usize>>,
) -> Result<Plan, Diagnostic> {
    let mut p = Planner {
        program,
        tiles: BTreeMap::new(),
    };
    tracing::info!(
        steps = repeated.len(),
        repeated = repeated.iter().filter(|r| r.is_some()).count(),
        "steps that repeat their callee's first call's"
    );
    let repeated = &repeated[..];
    // The steps in program order, each exchange phase's rows merged as they arrive.
    let merge = |p: &mut Planner<'_>,
                 (init, mut streams): (Vec<InitImage>, Vec<StreamSpec>),
                 phases: &mut dyn Iterator<Item = PhaseResult>|
     -> Result<Plan, Diagnostic> {
        let mut steps: Vec<StepSummary> = Vec::with_capacity(program.steps.len());
        let mut reused = 0usize;
        for (s, step) in program.steps.iter().enumerate() {
            let si = s as u32;
            match step {
                Step::Compute(c) => {
                    let summary = match repeated[s] {
                        Some(s0) => repeat_compute(p, s, s0, c, &steps[s0]),
                        None => plan_compute(p, target, s, c)?,
                    };
                    steps.push(summary);
                }
                Step::Call(c) => {
                    return Err(Diagnostic::error(
                        c.loc,
                        "'exchange.call' op is planned only expanded (read_expanded)",
                    ))
                }
                Step::Exchange(_) => {
                    // One entry per phase up to the first that failed, which returns here.
                    let ready = phases
                        .next()
                        .expect("every phase up to the first failure sends its rows")?;
                    debug_assert_eq!(ready.step, s);
                    reused += usize::from(ready.reused);
                    steps.push(ready.summary);
                    if let Some(s0) = ready.same_as {
                        repeat_rows(p, s, s0);
                    }
                    for (tile, mut row) in ready.rows {
                        let w = p.tiles.entry(tile).or_default();
                        // The buffers are touched in the row's order, as its entries were resolved
                        // (an entry in the buffer of the one before needs no second touch).
                        let mut last: Option<(u32, u32)> = None;
                        for (_, buf) in &mut row {
                            if let Some(b) = buf {
                                let i = match last {
                                    Some((pb, pi)) if pb == *b => pi,
                                    // A tile holds fewer buffers than the program.
                                    _ => w.touch(program, *b as BufId, si) as u32,
                                };
                                last = Some((*b, i));
                                *b = i;
                            }
                        }
                        w.rows.insert(s, Arc::new(row));
                    }
                }
            }
        }
        tracing::info!(
            steps = steps.len(),
            reused,
            "exchange phases whose schedule and rows an equal earlier phase gave"
        );
        for o in &program.outputs {
            let at = ipu_program::Stored {
                home: Some((o.at.buffer, o.at.mapping.clone())),
                ..ipu_program::Stored::new(cx, o.at.ty, o.at.loc)
            };
            let at = stored_rects(p, &at, u32::MAX);
            streams.push(StreamSpec {
                name: o.name.clone(),
                direction: Direction::Output,
                ty: o.at.ty,
                host_ty: o.host_ty,
                shape: o.at.shape.clone(),
                at,
            });
        }
        let mut probes = Vec::with_capacity(program.probes.len());
        for pr in &program.probes {
            let at = ipu_program::Stored {
                home: Some((pr.at.buffer, pr.at.mapping.clone())),
                ..ipu_program::Stored::new(cx, pr.at.ty, pr.at.loc)
            };
            let at = stored_rects(p, &at, pr.after as u32);
            let spec = StreamSpec {
                name: pr.source.clone(),
                direction: Direction::Output,
                ty: pr.at.ty,
                host_ty: None,
                shape: pr.at.shape.clone(),
                at,
            };
            probes.push((pr.after as u32, pr.op.clone(), pr.source.clone(), spec));
        }
        let kinds: Vec<StepKind> = steps.iter().map(|s| s.kind).collect();
        for w in p.tiles.values_mut() {
            w.place_prologues(program, &kinds);
            w.settle_spans();
        }
        exchange_estimates(cx, f, p, &mut steps)?;
        Ok(Plan {
            tiles: std::mem::take(&mut p.tiles),
            init,
            steps,
            streams,
            probes,
            facts: memory::buffer_facts(cx, f, program),
            calls: program.frames.call_ranges(),
            callees: program.frames.callees.clone(),
        })
    };
    // The exchange rows are built while the host streams and constants are
    // laid out and while the rows made so far are merged: the rows touch no
    // tile until they are merged, in program order.
    let (senders, receivers) = row_channels(program);
    let rows = move |senders| send_exchange_rows(program, target, repeated, senders);
    let mut arrived = receivers.into_iter().map_while(|r| r.recv().ok());
    if rayon::current_thread_index().is_some() {
        // On a pool's thread, which must not wait for its own pool's work:
        // every row is made before the merge.
        let (io, ()) = rayon::join(|| layout_io(cx, f, program, &mut p), || rows(senders));
        merge(&mut p, io?, &mut arrived)
    } else {
        std::thread::scope(|threads| {
            threads.spawn(move || rows(senders));
            let io = layout_io(cx, f, program, &mut p)?;
            merge(&mut p, io, &mut arrived)
        })
    }
}

/// Inputs and constants: their stream layouts and initial images.
fn layout_io(
    cx: &Context,
    f: Op,
    program: &Program,
    p: &mut Planner<'_>,
) -> Result<(Vec<InitImage>, Vec<StreamSpec>), Diagnostic> {
    let mut init = Vec::new();
    let mut streams = Vec::new();
    // Inputs and constants are there from the start; outputs stay to the end.
    for i in &program.inputs {
        let name = ipu_dialects::func::io_name(cx, f, "arg_attrs", i.arg)
            .unwrap_or_else(|| format!("arg{}", i.arg));
        let direction = if i.load {
            Direction::Load
        } else {
            Direction::Input
        };
        let at = stored_rects(p, &i.at, 0);
        let entry = cx.entry_block(cx.region(f, 0)).expect("verified");
        let host = cx.block_args(entry).get(i.arg).map(|&a| cx.value_type(a));
        streams.push(StreamSpec {
            name,
            direction,
            ty: i.at.ty,
            host_ty: host.filter(|&h| h != i.at.ty),
            shape: i.at.shape.clone(),
            at,
        });
    }
    for c in &program.constants {
        let bytes = constant_bytes(cx, c.value).map_err(|e| Diagnostic::error(c.at.loc, e))?;
        // Each buffer's image: the constant's bytes where the runs put them.
        let mut images: BTreeMap<(u32, usize), Vec<u8>> = BTreeMap::new();
        let at = stored_rects(p, &c.at, 0);
        let (mut scratch, mut runs) = (Vec::new(), Vec::new());
        for (i, (rect, buf, _)) in at.rects.iter().enumerate() {
            let img = images.entry((rect.tile, *buf)).or_default();
            runs.clear();
            at.runs(i, &mut scratch, &mut runs);
            for &(dst, src, len) in &runs {
                let (dst, src, len) = (dst as usize, src as usize, len as usize);
                if img.len() < dst + len {
                    img.resize(dst + len, 0);
                }
                img[dst..dst + len].copy_from_slice(&bytes[src..src + len]);
            }
        }
        for ((tile, buf), img) in images {
            init.push((tile, buf, img));
        }
    }
    Ok((init, streams))
}

/// Compute set `c`, step `s`, on every tile: its local copies (each tile's
/// stepped groups on its workers, or the supervisor's byte copy where
/// cheaper; run during the phase just before, after its `exch`, when that
/// phase cannot disturb them, `runs_during`) and its vertices' calls.
/// Returns the step's summary.
fn plan_compute(
    p: &mut Planner<'_>,
    target: &Target,
    s: usize,
    c: &ComputeSet,
) -> Result<StepSummary, Diagnostic> {
    let program = p.program;
    let si = s as u32;
    // Local copies first: each tile's stepped groups on its
    // workers (lcopy), or the supervisor's byte copy where cheaper.
    // A copy runs during the phase just before (after its
    // `exch`) when that phase cannot disturb it (`runs_during`).
    let phase_before = match si.checked_sub(1).map(|b| &program.steps[b as usize]) {
        Some(Step::Exchange(ph)) => Some(ph),
        _ => None,
    };
    // Per tile: cycles of the copies run during the phase, and of the rest.
    let mut during_cycles: BTreeMap<u32, u64> = BTreeMap::new();
    let mut rest_cycles: BTreeMap<u32, u64> = BTreeMap::new();
    for m in &c.copies {
        let in_phase = phase_before.is_some_and(|ph| runs_during(ph, m));
        let mut by_tile: BTreeMap<u32, Vec<(u32, u32, u32)>> = BTreeMap::new();
        for t in &m.transfers {
            by_tile
                .entry(t.src_tile)
                .or_default()
                .push((t.src_offset, t.dsts[0].offset, t.len));
        }
        for (tile, ts) in by_tile {
            let groups = records::local_copy_calls(&ts).map_err(|e| Diagnostic::error(c.loc, e))?;
            let cost: u64 = groups.iter().map(|g| g.1).sum();
            let cycles = if in_phase {
                &mut during_cycles
            } else {
                &mut rest_cycles
            };
            *cycles.entry(tile).or_default() += cost;
            let mut calls = Vec::new();
            for (group, _) in groups {
                match group {
                    LocalCopyCall::Workers {
                        src_offset,
                        dst_offset,
                        copy,
                    } => calls.push(records::lcopy(
                        &copy,
                        (m.src, src_offset),
                        (m.dst, dst_offset),
                    )),
                    LocalCopyCall::Supervisor(each) => {
                        calls.extend(each.into_iter().map(|(so, d, len)| Call {
                            kernel: Kernel::Memcpy,
                            record: vec![Word::Buf(m.src, so), Word::Buf(m.dst, d), Word::Val(len)],
                            scratch: 0,
                        }))
                    }
                }
            }
            let w = p.tiles.entry(tile).or_default();
            // A copy run during the phase uses its buffers from then on.
            let at = if in_phase { si - 1 } else { si };
            for mut call in calls {
                for x in &mut call.record {
                    *x = w.local_word(program, *x, at);
                }
                let here = Arc::make_mut(w.calls.entry(s).or_default());
                if in_phase {
                    w.during.entry(s - 1).or_default().push(here.len());
                }
                here.push(call);
            }
        }
    }
    for v in &c.vertices {
        for &t in &v.tiles {
            let w = p.tiles.entry(t).or_default();
            let record = v
                .call
                .record
                .iter()
                .map(|&x| w.local_word(program, x, si))
                .collect();
            Arc::make_mut(w.calls.entry(s).or_default()).push(Call {
                kernel: v.call.kernel.clone(),
                record,
                scratch: v.call.scratch,
            });
        }
    }
    // With copies moved into the phase, this set's estimate is
    // the busiest tile's rest (the phase's is raised below).
    let mut cycles = c.cycles;
    if !during_cycles.is_empty() {
        for v in &c.vertices {
            let k = match &v.call.kernel {
                Kernel::Lib(spec) => {
                    ipu_program::kernel_cycles(spec).map_err(|e| Diagnostic::error(c.loc, e))?
                }
                Kernel::Memcpy => 0,
            };
            for &t in &v.tiles {
                *rest_cycles.entry(t).or_default() += k;
            }
        }
        cycles = Some(rest_cycles.values().copied().max().unwrap_or(0));
        for (t, c) in during_cycles {
            p.tiles.entry(t).or_default().during_cycles.insert(s - 1, c);
        }
    }
    Ok(StepSummary {
        kind: StepKind::Compute,
        label: format!("{} {}", c.name, c.label),
        cycles,
        bound: c.bound.map(|b| b + u64::from(target.exchange.sync_cycles)),
    })
}

/// Step `s`, a repeat of compute set `s0` ([`Program::repeated_steps`]):
/// each tile runs `s0`'s calls (shared), with the copies `s0` runs during
/// the phase before it run during `s`'s, and its buffers alive there as at
/// `s0`. Its summary is `s0`'s, named for `s`.
fn repeat_compute(
    p: &mut Planner<'_>,
    s: usize,
    s0: usize,
    c: &ComputeSet,
    first: &StepSummary,
) -> StepSummary {
    let program = p.program;
    let si = s as u32;
    for w in p.tiles.values_mut() {
        let Some(calls) = w.calls.get(&s0).cloned() else {
            continue;
        };
        let during = s0.checked_sub(1).and_then(|x| w.during.get(&x)).cloned();
        if let Some(&c) = s0.checked_sub(1).and_then(|x| w.during_cycles.get(&x)) {
            w.during_cycles.insert(s - 1, c);
        }
        // The step's buffers (each once, with whether a copy run during
        // the phase before uses it), listed at its first repeat.
        let bufs = match w.repeat_bufs.get(&s0) {
            Some(b) => b.clone(),
            None => {
                let mut bufs: Vec<(usize, bool)> = Vec::new();
                for (k, call) in calls.iter().enumerate() {
                    let early = during.as_ref().is_some_and(|d| d.contains(&k));
                    for word in &call.record {
                        if let Word::Buf(b, _) = word {
                            bufs.push((*b, early));
                        }
                    }
                }
                bufs.sort_unstable();
                bufs.dedup();
                let bufs = Arc::new(bufs);
                w.repeat_bufs.insert(s0, bufs.clone());
                bufs
            }
        };
        for &(b, early) in bufs.iter() {
            w.alive_at(program, b, if early { si - 1 } else { si });
        }
        if let Some(d) = during {
            w.during.insert(s - 1, d);
        }
        w.calls.insert(s, calls);
    }
    StepSummary {
        label: format!("{} {}", c.name, c.label),
        ..first.clone()
    }
}

/// Step `s`, a repeat of exchange phase `s0`: each tile's row is `s0`'s
/// (shared), its buffers alive at `s` too.
fn repeat_rows(p: &mut Planner<'_>, s: usize, s0: usize) {
    let program = p.program;
    for w in p.tiles.values_mut() {
        let Some(row) = w.rows.get(&s0).cloned() else {
            continue;
        };
        // The row's buffers, each once, listed at its first repeat.
        let bufs = w
            .repeat_bufs
            .entry(s0)
            .or_insert_with(|| {
                let mut bufs: Vec<(usize, bool)> = row
                    .iter()
                    .filter_map(|&(_, b)| Some((b? as usize, false)))
                    .collect();
                bufs.sort_unstable();
                bufs.dedup();
                Arc::new(bufs)
            })
            .clone();
        for &(b, _) in bufs.iter() {
            w.alive_at(program, b, s as u32);
        }
        w.rows.insert(s, row);
    }
}

/// Raises each exchange step's estimate to the supervisor's work run
/// during it (copies, then prologues) on the busiest tile, when larger.
fn exchange_estimates(
    cx: &Context,
    f: Op,
    p: &Planner<'_>,
    steps: &mut [StepSummary],
) -> Result<(), Diagnostic> {
    // An exchange step's estimate: its phase, or the supervisor's work
    // run during it (copies, then prologues) on the busiest tile.
    let mut during: BTreeMap<usize, u64> = BTreeMap::new();
    let mut pro_memo: rustc_hash::FxHashMap<&ipu_isa::kernels::KernelSpec, u64> =
        rustc_hash::FxHashMap::default();
    for w in p.tiles.values() {
        let mut work = w.during_cycles.clone();
        for (&x, ks) in &w.ahead {
            for &k in ks {
                if let Some(Kernel::Lib(spec)) = w
                    .calls
                    .get(&(x + 1))
                    .and_then(|c| c.get(k))
                    .map(|c| &c.kernel)
                {
                    let c = match pro_memo.get(&**spec) {
                        Some(&c) => c,
                        None => {
                            let c = records::prologue_cycles(spec)
                                .map_err(|e| Diagnostic::error(cx.op_loc(f), e))?;
                            pro_memo.insert(&**spec, c);
                            c
                        }
                    };
                    *work.entry(x).or_default() += c;
                }
            }
        }
        for (x, c) in work {
            let e = during.entry(x).or_default();
            *e = (*e).max(c);
        }
    }
    for (x, c) in during {
        if let Some(step) = steps.get_mut(x) {
            step.cycles = step.cycles.map(|e| e.max(c + DURING_ISSUE_CYCLES));
        }
    }
    Ok(())
}

/// The little-endian element bytes of a constant's value (splats expanded).
fn constant_bytes(cx: &Context, a: ipu_ir::Attr) -> Result<Vec<u8>, String> {
    use ipu_ir::types::{AttrKind, DenseData};
    let (ty, splat, bytes): (Type, bool, &[u8]) = match cx.attr_kind(a) {
        AttrKind::DenseElements {
            ty,
            data: DenseData { splat, bytes },
        } => (*ty, *splat, bytes),
        AttrKind::DenseResource { ty, handle } => {
            let name = cx.str(*handle);
            let blob = cx.resources.get(name).ok_or_else(|| {
                format!("'exchange.constant' op has a resource blob '{name}' that is not present (missing weights file?)")
            })?;
            (*ty, false, &blob.data[..])
        }
        _ => return Err("'exchange.constant' op has a value that is not dense elements".into()),
    };
    let (shape, e) = cx
        .tensor_parts(ty)
        .ok_or("'exchange.constant' op has a value that is not a tensor")?;
    let n: i64 = shape.iter().product();
    let eb = ipu_ir::numeric::storage_bytes(cx.type_kind(e)).unwrap_or(4);
    let want = n as usize * eb;
    if splat && bytes.len() == eb {
        return Ok(bytes.repeat(n as usize));
    }
    if bytes.len() != want {
        return Err(format!(
            "'exchange.constant' op holds {} bytes of elements, but its type needs {want}",
            bytes.len()
        ));
    }
    Ok(bytes.to_vec())
}

/// Where the bytes of a stored value go: its home's blocks, row-major, and
/// its placements, in their layouts, each on its tile in that tile's local
/// buffer; the buffers are used at `step`.
fn stored_rects(p: &mut Planner<'_>, at: &ipu_program::Stored, step: u32) -> StoredRects {
    let mut rects = Vec::new();
    if let Some((buf, m)) = &at.home {
        for b in blocks(m, &at.shape) {
            let local = p.touch(b.tile, *buf, step);
            rects.push((b, local, Layout::RowMajor));
        }
    }
    for pl in &at.placements {
        for r in &pl.rects {
            let local = p.touch(r.tile, pl.buffer, step);
            rects.push((r.clone(), local, pl.layout));
        }
    }
    StoredRects {
        whole: Block {
            tile: u32::MAX,
            lo: vec![0; at.shape.len()],
            hi: at.shape.clone(),
        },
        elem_bytes: at.elem_bytes as i64,
        rects,
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
    let mut program = timed_phase("read_program", || read_expanded(cx, f, target, 0))?;
    timed_phase("check_program", || program.check(target))?;
    // Checked with a buffer per call (each written once); then one frame per callee.
    program.fold_frames();
    let plan = timed_phase("plan_package", || plan(cx, f, &program, target))?;
    build_package_from(cx, f, target, plan, rows)
}

/// The program of function `f` with every call expanded
/// ([`Program::expand_calls`]): each callee read from the module, checked
/// and expanded first, once for all its calls.
fn read_expanded(
    cx: &Context,
    f: Op,
    target: &Target,
    depth: usize,
) -> Result<Program, Diagnostic> {
    let program = Program::read(cx, f)?;
    if !program.has_calls() {
        return Ok(program);
    }
    if depth > 16 {
        return Err(ipu_ir::verify::op_error(cx, f, "calls nest deeper than 16"));
    }
    let module = cx.parent_op(f);
    let mut programs: rustc_hash::FxHashMap<String, Program> = Default::default();
    for (call, name) in ipu_program::target::callees(cx, f) {
        let g = module
            .and_then(|m| cx.lookup_symbol(m, &name))
            .filter(|&g| cx.entry_block(cx.region(g, 0)).is_some())
            .ok_or_else(|| {
                ipu_ir::verify::op_error(
                    cx,
                    call,
                    format!("calls @{name}, which the module does not define"),
                )
            })?;
        let callee = read_expanded(cx, g, target, depth + 1)?;
        callee.check(target)?;
        programs.insert(name, callee);
    }
    program.expand_calls(&programs)
}

/// The process's resident set now, in MB (0 where `/proc` does not say).
fn resident_mb() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| (pages * 4096) >> 20)
}

/// Runs one build phase inside its tracing span and logs its time and the
/// resident set at its end.
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
        rss_mb = resident_mb(),
        success = r.is_ok(),
        "package build phase finished"
    );
    r
}
