//! [`ExchangeBuilder`]: the [`ProgramBuilder`] device ops use to turn a tile
//! op into supersteps of the [`Program`]: buffers, exchange phases that move
//! operands into the layout a compute set reads (scheduled and verified
//! together, in parallel, by [`ExchangeBuilder::schedule_pending`]), and
//! compute sets of per-tile kernel calls.

use crate::resolve::{Sources, ViewRuns};
use ipu_device::{Delivery, EpilogueRule, Home, OperandAt, ProgramBuilder};
use ipu_dialects::tile::Mapping;
use ipu_exchange_schedule::{summarize, ExchangeScheduler, Phase, PhaseQueue, Transfer};
use ipu_ir::{Context, Diagnostic, Loc, Op, Value};
use ipu_program::geometry::{
    blocks, elem_bytes, mapping_of, relayout_into, transfers_of, Block, Layout, Run, TransferSet,
};
use ipu_program::records::{self, Epilogue};
use ipu_program::view::View;
use ipu_program::{
    kernel_cycles, BufId, BufferDecl, Call, CallStep, ComputeSet, Kernel, Move, PhaseDecl,
    PhaseFigures, Placed, Placement, Probe, Program, Reads, Step, Vertex, Word,
};
use ipu_target::Target;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Figures of the phases built, for the pass statistics.
#[derive(Default, Clone, Copy)]
pub struct Totals {
    pub phases: u64,
    pub transfers: u64,
    pub horizon: u64,
    pub lower_bound: u64,
    pub compute_cycles: u64,
    pub exchange_cycles: u64,
    pub steps: u64,
}

/// Where a value that is in memory before the program runs comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resident {
    /// `Program::inputs[i]`, a load stream.
    Input(usize),
    /// `Program::constants[i]`, in the image.
    Constant(usize),
}

/// What an operand delivery was asked for ([`ProgramBuilder::operand`]).
#[derive(Clone, PartialEq, Eq, Hash)]
struct DeliveryKey {
    value: Value,
    need: Vec<(u32, Vec<i64>, Vec<i64>)>,
    layout: Layout,
    bytes: u64,
    interleaved: bool,
}

#[derive(Clone)]
struct OpenSet {
    name: String,
    label: String,
    loc: Loc,
    copies: Vec<Move>,
    calls: BTreeMap<u32, Vec<Call>>,
    /// The tile ops' arithmetic at the target's peak, in one tile's cycles.
    peak_tile_cycles: u64,
}

/// An exchange phase built but not yet scheduled.
struct Pending {
    /// Its step in the program (exchange steps are never removed).
    step: usize,
    /// Its number (`x<number>`).
    number: usize,
    local_bytes: u64,
    loc: Loc,
    /// What a scheduling error is prefixed with: the op and the phase's label.
    what: String,
}

/// Calls of the last compute set that may do an elementwise op after
/// their own work ([`ProgramBuilder::offer_epilogue`]).
#[derive(Clone)]
struct EpilogueSite {
    /// The value they write, and where.
    value: Value,
    buf: BufId,
    /// The tiles making them (each its tile's last call).
    tiles: Vec<u32>,
    /// The record word holding the address they write `buf` at.
    out_word: usize,
    /// The producing kernel's rule: the call with the epilogue, if it takes it.
    accept: EpilogueRule,
}

pub struct ExchangeBuilder<'a> {
    pub cx: &'a Context,
    pub target: &'a Arc<Target>,
    scheduler: &'a mut ExchangeScheduler,
    program: Program,
    names: FxHashMap<String, BufId>,
    homes: FxHashMap<Value, Home>,
    views: FxHashMap<Value, (View, Vec<Value>)>,
    residents: FxHashMap<Value, Resident>,
    /// Buffers only loads fill (residents' operand buffers): the program
    /// never writes them.
    loaded: FxHashSet<BufId>,
    /// Runs of a view's rectangle (the destination tile set to 0), by
    /// (value, lo, hi): many tiles read the same rectangle.
    view_memo: FxHashMap<(Value, Vec<i64>, Vec<i64>), ViewRuns>,
    /// Operands an exchange has delivered, by what was asked for: a later
    /// op reading the same value in the same blocks and layout reads those
    /// buffers instead of exchanging it again (values never change, and
    /// nothing writes an operand buffer after the exchange that fills it).
    delivered: FxHashMap<DeliveryKey, (FxHashMap<u32, BufId>, FxHashSet<u32>)>,
    /// Tile ops given compute sets so far (they are numbered from 1).
    sets: usize,
    phases: usize,
    /// Operand runs that stay on their tile, copied at the start of the next
    /// compute set: (source buffer, destination buffer, run).
    pending_copies: Vec<(BufId, BufId, Run)>,
    open: Option<OpenSet>,
    /// The last compute set, while it is the last superstep: a compute set
    /// that needs no exchange and no copies joins it instead of costing a
    /// superstep of its own (an epilogue fused into its producer).
    closed: Option<(OpenSet, u64)>,
    /// The calls of the last compute set that may take an epilogue, while
    /// it is [`Self::closed`] (see [`Self::offer_epilogue`]).
    epilogue: Option<EpilogueSite>,
    /// Probe sources of values an epilogue folded away, for the probes of
    /// the op that folded (by op): its probe answers for the chain.
    fused_sources: FxHashMap<Op, Vec<String>>,
    /// Compute sets closed so far (fused ones count again).
    ends: usize,
    /// Tile ops whose peak work is counted in a compute set's bound (the
    /// first set each opens).
    bounded: FxHashSet<Op>,
    /// Phases waiting for [`Self::schedule_pending`], in program order, the
    /// scheduler's view of each, and the queue scheduling them meanwhile.
    pending: Vec<Pending>,
    pending_phases: Vec<Arc<Phase>>,
    queue: PhaseQueue<'static>,
    /// Exchanges gathered into one phase while set
    /// ([`Self::begin_one_phase`]): their labels and moves.
    gathering: Option<(Vec<String>, PhaseMoves)>,
    pub totals: &'a mut Totals,
    /// The peak-rate cycles of a tile op on one tile, for compute-set
    /// bounds (`ipu_device::peak_tile_cycles`: the builder knows no op).
    peak: fn(&Context, Op, &Target) -> u64,
}

/// An exchange's moves: source and destination buffers, the transfers,
/// the runs that stay on their tile.
type PhaseMoves = Vec<(BufId, BufId, Vec<Transfer>, Vec<Run>)>;

impl<'a> ExchangeBuilder<'a> {
    /// Gives resident operand `i` of `op` (a parameter or constant, loaded
    /// straight into its readers' buffers) its blocks too, loaded with it:
    /// an elementwise op reads a broadcast operand through a view, which
    /// the exchange expands from the operand's blocks.
    fn resident_home(&mut self, op: Op, i: usize) -> Result<(), Diagnostic> {
        let v = self.cx.operand(op, i);
        let Some(&r) = self.residents.get(&v) else {
            return Ok(());
        };
        let m = self
            .cx
            .defining_op(v)
            .and_then(|d| mapping_of(self.cx, d))
            .ok_or_else(|| self.err(op, format!("operand #{i} has no tile mapping")))?;
        let name = match r {
            Resident::Input(k) => format!("input{k}.blocks"),
            Resident::Constant(k) => format!("const{k}.blocks"),
        };
        let buf = self.home(op, v, &m, &name, false)?;
        let at = match r {
            Resident::Input(k) => &mut self.program.inputs[k].at,
            Resident::Constant(k) => &mut self.program.constants[k].at,
        };
        at.home = Some((buf, m));
        Ok(())
    }

    pub fn new(
        cx: &'a Context,
        target: &'a Arc<Target>,
        scheduler: &'a mut ExchangeScheduler,
        totals: &'a mut Totals,
        peak: fn(&Context, Op, &Target) -> u64,
    ) -> Self {
        ExchangeBuilder {
            cx,
            target,
            scheduler,
            program: Program::default(),
            names: FxHashMap::default(),
            homes: FxHashMap::default(),
            views: FxHashMap::default(),
            residents: FxHashMap::default(),
            loaded: FxHashSet::default(),
            view_memo: FxHashMap::default(),
            delivered: FxHashMap::default(),
            sets: 0,
            phases: 0,
            pending_copies: Vec::new(),
            open: None,
            closed: None,
            epilogue: None,
            fused_sources: FxHashMap::default(),
            ends: 0,
            bounded: FxHashSet::default(),
            pending: Vec::new(),
            pending_phases: Vec::new(),
            queue: PhaseQueue::new(),
            gathering: None,
            totals,
            peak,
        }
    }

    pub fn err(&self, op: Op, m: impl std::fmt::Display) -> Diagnostic {
        ipu_ir::verify::op_error(self.cx, op, m.to_string())
    }

    /// Records `v` as in memory before the program runs: its readers get
    /// their rectangles placed in their operand buffers, no exchange.
    pub fn add_resident(&mut self, v: Value, r: Resident) {
        self.residents.insert(v, r);
    }

    /// Places rectangle `rect` of resident `r` in `buffer`, in `layout`.
    fn place(&mut self, r: Resident, buffer: BufId, layout: Layout, rect: Block) {
        let at = match r {
            Resident::Input(i) => &mut self.program.inputs[i].at,
            Resident::Constant(i) => &mut self.program.constants[i].at,
        };
        match at
            .placements
            .iter_mut()
            .find(|p| p.buffer == buffer && p.layout == layout)
        {
            Some(p) => p.rects.push(rect),
            None => at.placements.push(Placement {
                buffer,
                layout,
                rects: vec![rect],
            }),
        }
    }

    /// The runs delivering rectangle `need` of `v` (read through `via`
    /// first, when given: an implicit broadcast), row-major on `need.tile`,
    /// each with the buffer it comes from.
    fn view_runs(
        &mut self,
        v: Value,
        via: Option<&View>,
        need: &Block,
    ) -> Result<ViewRuns, String> {
        let key = (v, need.lo.clone(), need.hi.clone());
        if via.is_none() {
            if let Some(r) = self.view_memo.get(&key) {
                return Ok(r
                    .iter()
                    .map(|&(b, r)| {
                        (
                            b,
                            Run {
                                dst_tile: need.tile,
                                ..r
                            },
                        )
                    })
                    .collect());
            }
        }
        let out = Sources {
            homes: &self.homes,
            views: &self.views,
        }
        .runs(v, via, need)?;
        if via.is_none() {
            self.view_memo.insert(
                key,
                out.iter()
                    .map(|&(b, r)| (b, Run { dst_tile: 0, ..r }))
                    .collect(),
            );
        }
        Ok(out)
    }

    /// Gives view `v` storage of its own under mapping `m` (for a view the
    /// host reads): an exchange phase fills buffer `name` from the blocks
    /// underneath.
    pub fn materialize(
        &mut self,
        op: Op,
        v: Value,
        m: &Mapping,
        name: &str,
    ) -> Result<BufId, Diagnostic> {
        let shape = self.cx.value_shape(v);
        let bl = blocks(m, &shape);
        let eb = elem_bytes(self.cx, v);
        let mut moves: Vec<(BufId, Vec<Run>)> = Vec::new();
        for n in &bl {
            for (src, r) in self.view_runs(v, None, n).map_err(|e| self.err(op, e))? {
                match moves.iter_mut().find(|(s, _)| *s == src) {
                    Some((_, rs)) => rs.push(r),
                    None => moves.push((src, vec![r])),
                }
            }
        }
        self.views.remove(&v);
        let buf = self.home(op, v, m, name, false)?;
        let _ = eb;
        let moves = moves.into_iter().map(|(s, r)| (s, buf, r)).collect();
        self.exchange(op, &format!("{name} of {}", self.cx.name_str(op)), moves)?;
        Ok(buf)
    }

    /// A buffer laid out as `want` (a buffer of a callee: its tiles, its
    /// bytes on each).
    fn frame_buffer(&mut self, op: Op, want: &BufferDecl, name: &str) -> Result<BufId, Diagnostic> {
        let mut buf = None;
        for &t in &want.tiles {
            buf = Some(self.alloc(op, t, name, want.bytes, want.interleaved)?);
        }
        match buf {
            Some(b) => Ok(b),
            None => self.alloc(op, 0, name, want.bytes, want.interleaved),
        }
    }

    /// The buffer holding `v` as a callee reads an input: its blocks under
    /// `m` in a buffer like `want`. The value's own home when it is that
    /// already, else a buffer `name` an exchange phase fills (a re-layout
    /// before the call).
    pub fn call_operand(
        &mut self,
        op: Op,
        v: Value,
        m: &Mapping,
        want: &BufferDecl,
        name: &str,
    ) -> Result<BufId, Diagnostic> {
        if let (false, Some(h)) = (self.is_view(v), self.homes.get(&v)) {
            let d = &self.program.buffers[h.buf];
            let mut tiles = d.tiles.clone();
            tiles.sort_unstable();
            tiles.dedup();
            if h.mapping == *m && d.bytes == want.bytes && tiles == want.tiles {
                return Ok(h.buf);
            }
        }
        let shape = self.cx.value_shape(v);
        let mut moves: Vec<(BufId, Vec<Run>)> = Vec::new();
        for n in &blocks(m, &shape) {
            for (src, r) in self.view_runs(v, None, n).map_err(|e| self.err(op, e))? {
                match moves.iter_mut().find(|(s, _)| *s == src) {
                    Some((_, rs)) => rs.push(r),
                    None => moves.push((src, vec![r])),
                }
            }
        }
        let buf = self.frame_buffer(op, want, name)?;
        let moves = moves.into_iter().map(|(s, r)| (s, buf, r)).collect();
        self.exchange(op, &format!("{name} of {}", self.cx.name_str(op)), moves)?;
        Ok(buf)
    }

    /// The home of call result `v`: a buffer like the callee's output
    /// buffer `want`, its blocks under `m`.
    pub fn call_result(
        &mut self,
        op: Op,
        v: Value,
        m: &Mapping,
        want: &BufferDecl,
        name: &str,
    ) -> Result<BufId, Diagnostic> {
        let buf = self.frame_buffer(op, want, name)?;
        let shape = self.cx.value_shape(v);
        let eb = elem_bytes(self.cx, v) as i64;
        self.homes
            .insert(v, Home::new(blocks(m, &shape), buf, m.clone(), shape, eb));
        Ok(buf)
    }

    /// Ends what is open (local copies) and adds call `c`: nothing after
    /// it joins a compute set before it.
    pub fn push_call(&mut self, op: Op, c: CallStep) -> Result<(), Diagnostic> {
        self.flush_copies(op)?;
        self.program.steps.push(Step::Call(c));
        self.closed = None;
        self.epilogue = None;
        Ok(())
    }

    /// [`Self::exchange`] of runs already made into transfers.
    fn exchange_sets(&mut self, op: Op, label: &str, moves: PhaseMoves) -> Result<(), Diagnostic> {
        if let Some((labels, gathered)) = self.gathering.as_mut() {
            labels.push(label.to_string());
            gathered.extend(moves);
            return Ok(());
        }
        // Local copies into a buffer this phase sends from must happen first.
        if self
            .pending_copies
            .iter()
            .any(|&(_, d, _)| moves.iter().any(|(s, _, _, _)| *s == d))
        {
            self.flush_copies(op)?;
        }
        let mut decl = PhaseDecl {
            name: format!("x{}", self.phases),
            label: label.to_string(),
            moves: Vec::new(),
            figures: PhaseFigures::default(),
            loc: self.cx.op_loc(op),
        };
        let mut local_bytes = 0;
        for (src, dst, transfers, local) in moves {
            for r in local {
                local_bytes += r.len;
                self.pending_copies.push((src, dst, r));
            }
            if !transfers.is_empty() {
                decl.moves.push(Move {
                    src,
                    dst,
                    transfers: transfers.into(),
                });
            }
        }
        if decl.moves.is_empty() {
            return Ok(());
        }
        // The phase as the scheduler sees it now: later allocations may grow
        // the buffers its virtual spaces are laid out from.
        let phase = Arc::new(self.program.virtual_phase(&decl).0);
        self.queue.push(self.scheduler, phase.clone());
        self.pending.push(Pending {
            step: self.program.steps.len(),
            number: self.phases,
            local_bytes,
            loc: decl.loc,
            what: format!("'{}' op, exchange of {label}", self.cx.name_str(op)),
        });
        self.pending_phases.push(phase);
        let t = &mut *self.totals;
        t.phases += 1;
        t.steps += 1;
        self.phases += 1;
        self.closed = None;
        self.epilogue = None;
        self.program.steps.push(Step::Exchange(decl));
        Ok(())
    }

    /// Answers the phases built since the last call (their fresh schedules
    /// were started on the rayon pool as they were built; what each gets is
    /// what scheduling them one by one gives, see [`PhaseQueue`]), and fills
    /// in their figures. The first phase in program order that cannot be
    /// scheduled is the error.
    pub fn schedule_pending(&mut self) -> Result<(), Diagnostic> {
        let pending = std::mem::take(&mut self.pending);
        let phases = std::mem::take(&mut self.pending_phases);
        let queue = std::mem::take(&mut self.queue);
        if phases.is_empty() {
            return Ok(());
        }
        tracing::debug!(phases = phases.len(), "scheduling exchange phases");
        // The scheduler proves every schedule it returns by the verifier
        // (a memo answer was proven when it was made).
        // Summaries first, here, while the pool makes the schedules.
        let summaries: Vec<_> = phases.iter().map(|p| summarize(p)).collect();
        let results = self.scheduler.answer(queue);
        for (((p, phase), result), summary) in
            pending.iter().zip(&phases).zip(results).zip(summaries)
        {
            let (schedule, _) =
                result.map_err(|e| Diagnostic::error(p.loc, format!("{}: {e}", p.what)))?;
            tracing::info!(
                phase = p.number,
                transfers = phase.transfers.len(),
                initial_horizon = schedule.initial_horizon,
                selected_horizon = schedule.horizon,
                endpoint_lower_bound = schedule.lower_bound,
                lower_bound_gap = schedule.gap(),
                selected_kind = schedule.kind.as_str(),
                row_words = schedule.rows.max_row_words,
                "optimized physical exchange schedule"
            );
            let Some(Step::Exchange(decl)) = self.program.steps.get_mut(p.step) else {
                unreachable!("exchange steps stay where they were pushed");
            };
            decl.figures = PhaseFigures {
                transfers: phase.transfers.len() as u64,
                bytes: summary.bytes,
                local_bytes: p.local_bytes,
                horizon: schedule.horizon,
                initial_horizon: schedule.initial_horizon,
                lower_bound: schedule.lower_bound,
                gap: schedule.gap(),
                kind: schedule.kind.as_str().to_string(),
                row_words: schedule.rows.max_row_words as u64,
                patterns: summary.lines(8),
            };
            let t = &mut *self.totals;
            t.transfers += phase.transfers.len() as u64;
            t.horizon += schedule.horizon;
            t.lower_bound += schedule.lower_bound;
            t.exchange_cycles += self.target.exchange.sync_cycles as u64
                + self.target.exchange_phase_cycles(schedule.horizon);
        }
        Ok(())
    }

    fn open_set(&mut self, op: Op, suffix: &str, label: &str, peak: u64) {
        if self.pending_copies.is_empty() {
            if let Some((mut set, cycles)) = self.closed.take() {
                // Nothing to exchange or copy since the last compute set:
                // these calls join it.
                self.program.steps.pop();
                self.totals.compute_cycles -= cycles;
                self.totals.steps -= 1;
                // Calls after the producer's: it no longer makes the tiles' last ones.
                self.epilogue = None;
                set.label = format!("{}, {label}", set.label);
                set.peak_tile_cycles += peak;
                self.open = Some(set);
                return;
            }
        }
        self.closed = None;
        self.epilogue = None;
        let name = format!("s{}{suffix}", self.next_set());
        let mut copies: Vec<Move> = Vec::new();
        let mut index: FxHashMap<(BufId, BufId), usize> = FxHashMap::default();
        for (src, dst, r) in std::mem::take(&mut self.pending_copies) {
            let i = *index.entry((src, dst)).or_insert_with(|| {
                copies.push(Move {
                    src,
                    dst,
                    transfers: Default::default(),
                });
                copies.len() - 1
            });
            copies[i].transfers.push(Transfer::unicast(
                r.src_tile,
                r.src_off as u32,
                r.len as u32,
                r.dst_tile,
                r.dst_off as u32,
            ));
        }
        self.open = Some(OpenSet {
            name,
            label: label.to_string(),
            loc: self.cx.op_loc(op),
            copies,
            calls: BTreeMap::new(),
            peak_tile_cycles: peak,
        });
    }

    /// Splits off the prologues ([`records::Prologue`]) that the exchange
    /// phase just before this compute set can hide: on each tile, the first
    /// call of a kernel source with one, the largest prologue whose buffers
    /// are filled only by loads and that the phase takes at least as long
    /// as ([`Self::phase_floor`]). The code generator runs those
    /// in the phase's superstep.
    fn split_prologues(&self, open: &mut OpenSet) -> Result<(), String> {
        let Some(Step::Exchange(_)) = self.program.steps.last() else {
            return Ok(());
        };
        let step = self.program.steps.len() - 1;
        let mut bound = None;
        for calls in open.calls.values_mut() {
            let mut sources: Vec<&'static str> = Vec::new();
            for call in calls.iter_mut() {
                let Kernel::Lib(spec) = &call.kernel else {
                    continue;
                };
                let source = spec.source;
                if sources.contains(&source) {
                    continue;
                }
                sources.push(source);
                for (pre, cycles) in records::prologue_splits(spec)? {
                    let Some(p) = records::prologue(&pre) else {
                        continue;
                    };
                    let reads_loaded = p.reads.iter().all(|&w| {
                        matches!(call.record.get(w), Some(Word::Buf(b, _)) if self.loaded.contains(b))
                    });
                    let phase = *bound.get_or_insert_with(|| self.phase_floor(step));
                    if reads_loaded && cycles <= phase {
                        call.kernel = Kernel::Lib(Arc::new(pre));
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// The least cycles exchange step `step` takes: the target's fixed cost
    /// of a phase and a bound on its transfers, the most bytes one tile
    /// receives at the fastest rate a tile receives (a supertile pair's
    /// shared rate). It is at most the phase's endpoint lower bound, and
    /// cheap: one pass over the destinations.
    fn phase_floor(&self, step: usize) -> u64 {
        let x = &self.target.exchange;
        let Step::Exchange(d) = &self.program.steps[step] else {
            return 0;
        };
        let mut received = vec![0u64; self.target.tiles() as usize];
        for m in &d.moves {
            for t in &m.transfers {
                for dst in &t.dsts {
                    if let Some(r) = received.get_mut(dst.tile as usize) {
                        *r += u64::from(t.len);
                    }
                }
            }
        }
        let most = received.into_iter().max().unwrap_or(0);
        let rate = u64::from(
            x.receive_bytes_per_cycle
                .max(x.supertile_shared_receive_bytes_per_cycle)
                .max(1),
        );
        u64::from(x.phase_fixed_cycles) + most.div_ceil(rate)
    }

    /// Makes the pending local copies in a compute set of their own.
    pub fn flush_copies(&mut self, op: Op) -> Result<(), Diagnostic> {
        if self.pending_copies.is_empty() {
            return Ok(());
        }
        // Copies are data movement: no arithmetic of `op` counts here.
        self.open_set(op, ".copies", "local copies", 0);
        self.end_compute(op)
    }

    /// The number of compute sets closed so far: before and after a tile
    /// op's lowering, whether it computed anything.
    pub fn compute_sets_closed(&self) -> usize {
        self.ends
    }

    /// Notes where each stored result of `op` is complete: its home, at the
    /// end of the last compute set so far (the one that made it; a later
    /// op fused into that set writes other buffers). Views have no home.
    pub fn probe_results(&mut self, op: Op) {
        let Some(after) = self
            .program
            .steps
            .iter()
            .rposition(|s| matches!(s, Step::Compute(_)))
        else {
            return;
        };
        let cx = self.cx;
        let mut source = ipu_ir::diag::loc_key(cx, cx.op_loc(op));
        if let Some(keys) = self.fused_sources.get(&op).filter(|k| !k.is_empty()) {
            let own = match ipu_ir::diag::fused_key_parts(&source) {
                Some(parts) => parts.join(", "),
                None => source.clone(),
            };
            source = format!("fused[{}, {own}]", keys.join(", "));
        }
        for v in cx.results(op) {
            let Some(home) = self.homes.get(&v) else {
                continue;
            };
            let at = Placed::new(
                cx,
                home.buf,
                home.mapping.clone(),
                cx.value_type(v),
                cx.op_loc(op),
            );
            self.program.probes.push(Probe {
                after,
                at,
                source: source.clone(),
                op: cx.name_str(op).to_string(),
            });
        }
    }

    /// The program, every phase scheduled.
    pub fn finish(mut self, last: Op) -> Result<Program, Diagnostic> {
        // The phases come before the copies in program order: theirs is the first error.
        let flushed = self.flush_copies(last);
        self.schedule_pending()?;
        flushed?;
        let saved = crate::chain::chain_gemms(&mut self.program, &self.loaded)
            .map_err(|e| self.err(last, e))?;
        self.totals.compute_cycles -= saved;
        for b in &mut self.program.buffers {
            b.tiles.sort_unstable();
            b.tiles.dedup();
        }
        Ok(self.program)
    }
}

impl<'a> ProgramBuilder<'a> for ExchangeBuilder<'a> {
    fn cx(&self) -> &'a Context {
        self.cx
    }

    fn target(&self) -> &'a Arc<Target> {
        self.target
    }

    fn next_set(&self) -> usize {
        self.sets + 1
    }

    fn alloc(
        &mut self,
        op: Op,
        tile: u32,
        name: &str,
        bytes: u64,
        interleaved: bool,
    ) -> Result<BufId, Diagnostic> {
        let sram = self.target.sram_bytes();
        if bytes > sram {
            return Err(self.err(
                op,
                format!(
                    "does not fit: buffer {name} needs {bytes} bytes on tile {tile}, which has {sram}"
                ),
            ));
        }
        let id = match self.names.get(name) {
            Some(&b) => b,
            None => {
                let b = self.program.buffers.len();
                self.program.buffers.push(BufferDecl {
                    name: name.to_string(),
                    tiles: Vec::new(),
                    bytes,
                    interleaved,
                    reads: Vec::new(),
                    loc: self.cx.op_loc(op),
                });
                self.names.insert(name.to_string(), b);
                b
            }
        };
        let d = &mut self.program.buffers[id];
        d.bytes = d.bytes.max(bytes);
        d.interleaved |= interleaved;
        d.tiles.push(tile);
        Ok(id)
    }

    fn home(
        &mut self,
        op: Op,
        v: Value,
        m: &Mapping,
        name: &str,
        interleaved: bool,
    ) -> Result<BufId, Diagnostic> {
        let shape = self.cx.value_shape(v);
        let eb = elem_bytes(self.cx, v) as u64;
        let full: i64 = m.block_shape(&shape).iter().product();
        let bl = blocks(m, &shape);
        let mut buf = None;
        for b in &bl {
            buf = Some(self.alloc(op, b.tile, name, full as u64 * eb, interleaved)?);
        }
        let buf = match buf {
            Some(b) => b,
            // A tensor with no elements still names a buffer.
            None => self.alloc(op, m.first_tile as u32, name, 8, interleaved)?,
        };
        self.homes
            .insert(v, Home::new(bl, buf, m.clone(), shape, eb as i64));
        Ok(buf)
    }

    fn home_of(&self, v: Value) -> Option<&Home> {
        self.homes.get(&v)
    }

    fn add_view(&mut self, v: Value, view: View, inputs: Vec<Value>) {
        self.views.insert(v, (view, inputs));
    }

    fn is_view(&self, v: Value) -> bool {
        self.views.contains_key(&v)
    }

    fn operand_via(
        &mut self,
        op: Op,
        i: usize,
        via: Option<&View>,
        want: Delivery<'_>,
    ) -> Result<OperandAt, Diagnostic> {
        let Delivery {
            need,
            layout,
            bytes,
            interleaved,
        } = want;
        let cx = self.cx;
        let v = cx.operand(op, i);
        if let (None, Some(&r)) = (via, self.residents.get(&v)) {
            // Loaded straight into the operand buffers: nothing to exchange.
            let set = self.next_set();
            let name = format!("s{set}.operand{i}");
            let mut at: FxHashMap<u32, BufId> = FxHashMap::default();
            for n in need {
                let b = self.alloc(op, n.tile, &name, bytes, interleaved)?;
                self.place(r, b, layout, n.clone());
                self.loaded.insert(b);
                at.insert(n.tile, b);
            }
            return Ok(OperandAt {
                at,
                in_place: FxHashSet::default(),
            });
        }
        if via.is_some() && !self.homes.contains_key(&v) && !self.views.contains_key(&v) {
            self.resident_home(op, i)?;
        }
        // The source blocks by position (the home itself is not cloned).
        let home = self.homes.get(&v).map(|h| (h.buf, h.grid.clone()));
        if home.is_none() && !self.views.contains_key(&v) {
            return Err(self.err(op, format!("operand #{i} has no tile mapping")));
        }
        let key = via.is_none().then(|| DeliveryKey {
            value: v,
            need: need
                .iter()
                .map(|n| (n.tile, n.lo.clone(), n.hi.clone()))
                .collect(),
            layout,
            bytes,
            interleaved,
        });
        if let Some((at, in_place)) = key.as_ref().and_then(|k| self.delivered.get(k)) {
            return Ok(OperandAt {
                at: at.clone(),
                in_place: in_place.clone(),
            });
        }
        let eb = elem_bytes(cx, v);
        let set = self.next_set();
        let name = format!("s{set}.operand{i}");
        let mut at: FxHashMap<u32, BufId> = FxHashMap::default();
        let mut in_place: FxHashSet<u32> = FxHashSet::default();
        // Transfers per source buffer, in first-seen order.
        let mut moves: Vec<(BufId, TransferSet)> = Vec::new();
        let mut filled: BTreeMap<(u64, u64, u64), Vec<u32>> = BTreeMap::new();
        // Many tiles read the same rectangle: its runs (to whichever tile;
        // in the order they are added, each with its source's entry in
        // `moves`) are made once, and each run's transfer found once.
        let mut rect_of: FxHashMap<(&[i64], &[i64]), usize> = FxHashMap::default();
        let mut rects: Vec<RectRuns> = Vec::new();
        // The tiles reading a rectangle, in order.
        let mut uses: Vec<(u32, usize)> = Vec::new();
        let (mut row_major, mut runs): (Vec<Run>, Vec<Run>) = (Vec::new(), Vec::new());
        for n in need {
            if let Some((buf, grid)) = home.as_ref().filter(|_| via.is_none()) {
                if grid.is_block(n) {
                    at.insert(n.tile, *buf);
                    in_place.insert(n.tile);
                    continue;
                }
            }
            let b = self.alloc(op, n.tile, &name, bytes, interleaved)?;
            filled.entry(layout.filled(n, eb)).or_default().push(n.tile);
            at.insert(n.tile, b);
            let k = match rect_of.get(&(&n.lo[..], &n.hi[..])) {
                Some(&k) => k,
                None => {
                    let mut rect = RectRuns::default();
                    match home.as_ref().filter(|_| via.is_none()) {
                        Some((buf, grid)) => {
                            row_major.clear();
                            grid.runs_row_major(n, eb, &mut row_major);
                            let m = set_of(&mut moves, *buf);
                            runs.clear();
                            relayout_into(&row_major, n, eb, layout, &mut runs);
                            rect.runs.extend(runs.iter().map(|&r| (m, r)));
                        }
                        None => {
                            let vr = self.view_runs(v, via, n).map_err(|e| self.err(op, e))?;
                            let mut by_buf: Vec<(BufId, Vec<Run>)> = Vec::new();
                            for (src, r) in vr {
                                match by_buf.iter_mut().find(|(s, _)| *s == src) {
                                    Some((_, rs)) => rs.push(r),
                                    None => by_buf.push((src, vec![r])),
                                }
                            }
                            for (src, rs) in by_buf {
                                let m = set_of(&mut moves, src);
                                runs.clear();
                                relayout_into(&rs, n, eb, layout, &mut runs);
                                rect.runs.extend(runs.iter().map(|&r| (m, r)));
                            }
                        }
                    }
                    rect.ids = vec![u32::MAX; rect.runs.len()];
                    rects.push(rect);
                    rect_of.insert((&n.lo[..], &n.hi[..]), rects.len() - 1);
                    rects.len() - 1
                }
            };
            uses.push((n.tile, k));
        }
        place_uses(&mut rects, &uses, &mut moves);
        if let Some(&dst) = self.names.get(&name) {
            let mut reads: Vec<Reads> = filled
                .into_iter()
                .map(|((count, len, stride), mut tiles)| {
                    tiles.sort_unstable();
                    Reads {
                        tiles,
                        count,
                        len,
                        stride,
                    }
                })
                .collect();
            reads.sort_by(|a, b| a.tiles[0].cmp(&b.tiles[0]));
            self.program.buffers[dst].reads = reads;
            let label = format!("operand #{i} of s{set} {}", cx.name_str(op));
            let moves = moves
                .into_iter()
                .map(|(s, t)| {
                    let (transfers, local) = t.finish();
                    (s, dst, transfers, local)
                })
                .collect();
            self.exchange_sets(op, &label, moves)?;
        }
        if let Some(k) = key {
            self.delivered.insert(k, (at.clone(), in_place.clone()));
        }
        Ok(OperandAt { at, in_place })
    }

    /// Scheduled by [`ExchangeBuilder::schedule_pending`].
    fn exchange(
        &mut self,
        op: Op,
        label: &str,
        moves: Vec<(BufId, BufId, Vec<Run>)>,
    ) -> Result<(), Diagnostic> {
        let moves = moves
            .into_iter()
            .map(|(s, d, runs)| {
                let (transfers, local) = transfers_of(&runs);
                (s, d, transfers, local)
            })
            .collect();
        self.exchange_sets(op, label, moves)
    }

    fn begin_one_phase(&mut self) {
        self.gathering.get_or_insert_with(Default::default);
    }

    fn end_one_phase(&mut self, op: Op) -> Result<(), Diagnostic> {
        match self.gathering.take() {
            Some((labels, moves)) if !labels.is_empty() => {
                self.exchange_sets(op, &labels.join(", "), moves)
            }
            _ => Ok(()),
        }
    }

    fn begin_compute(&mut self, op: Op, suffix: &str, label: &str) {
        let peak = if self.bounded.insert(op) {
            (self.peak)(self.cx, op, self.target)
        } else {
            0
        };
        self.open_set(op, suffix, label, peak);
    }

    fn call(&mut self, tile: u32, call: Call) {
        let open = self.open.as_mut().expect("a compute set is open");
        open.calls.entry(tile).or_default().push(call);
    }

    fn last_call(&self, tile: u32) -> Option<&Call> {
        self.open.as_ref()?.calls.get(&tile)?.last()
    }

    fn replace_last_call(&mut self, tile: u32, call: Call) {
        let open = self.open.as_mut().expect("a compute set is open");
        let last = open
            .calls
            .get_mut(&tile)
            .and_then(|c| c.last_mut())
            .expect("a call to replace");
        *last = call;
    }

    /// Its vertices merge the tiles' call lists: each vertex is one call
    /// made by every tile whose next call it is (the call most tiles make
    /// next first, ties to the lowest tile), so each tile's calls keep their
    /// order and tiles making the same calls share vertices. Its estimate is
    /// the busiest tile's kernels by their cycle formulas.
    fn end_compute(&mut self, op: Op) -> Result<(), Diagnostic> {
        let mut open = self.open.take().expect("a compute set is open");
        self.split_prologues(&mut open)
            .map_err(|e| self.err(op, e))?;
        let mut per_tile: BTreeMap<u32, u64> = BTreeMap::new();
        for m in &open.copies {
            for (tile, c) in copy_cycles(&m.transfers).map_err(|e| self.err(op, e))? {
                *per_tile.entry(tile).or_default() += c;
            }
        }
        let mut memo: FxHashMap<&Call, u64> = FxHashMap::default();
        for (&t, calls) in &open.calls {
            let c = per_tile.entry(t).or_default();
            for call in calls {
                *c += match memo.get(call) {
                    Some(&v) => v,
                    None => {
                        let v = call_cycles(call).map_err(|e| self.err(op, e))?;
                        memo.insert(call, v);
                        v
                    }
                };
            }
        }
        let cycles = per_tile.values().copied().max().unwrap_or(0);
        let mut cursor: Vec<(u32, &Vec<Call>, usize)> =
            open.calls.iter().map(|(&t, c)| (t, c, 0)).collect();
        let mut vertices = Vec::new();
        loop {
            let mut heads: FxHashMap<&Call, Vec<usize>> = FxHashMap::default();
            for (i, (_, calls, at)) in cursor.iter().enumerate() {
                if let Some(c) = calls.get(*at) {
                    heads.entry(c).or_default().push(i);
                }
            }
            let Some((call, members)) = heads
                .into_iter()
                .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(b.1[0].cmp(&a.1[0])))
            else {
                break;
            };
            let tiles = members.iter().map(|&i| cursor[i].0).collect();
            vertices.push(Vertex {
                tiles,
                call: call.clone(),
            });
            for i in members {
                cursor[i].2 += 1;
            }
        }
        // What a kernel reads with paired loads must be placed where they work.
        for v in &vertices {
            if let Kernel::Lib(spec) = &v.call.kernel {
                let (layout, _) = records::record_layout(spec).map_err(|e| self.err(op, e))?;
                for (w, slot) in v.call.record.iter().zip(&layout) {
                    if let (Word::Buf(b, _), records::Slot::Wide) = (*w, slot) {
                        self.program.buffers[b].interleaved = true;
                    }
                }
            }
        }
        self.totals.compute_cycles += cycles;
        self.totals.steps += 1;
        let set = ComputeSet {
            name: open.name.clone(),
            label: open.label.clone(),
            cycles: Some(cycles),
            bound: Some(
                open.peak_tile_cycles
                    .div_ceil(u64::from(self.target.tiles().max(1))),
            ),
            copies: open.copies.clone(),
            vertices,
            loc: open.loc,
        };
        self.closed = Some((open, cycles));
        self.ends += 1;
        self.program.steps.push(Step::Compute(set));
        Ok(())
    }

    fn offer_epilogue_at(
        &mut self,
        v: Value,
        buf: BufId,
        tiles: Vec<u32>,
        out_word: usize,
        accept: EpilogueRule,
    ) {
        if self.closed.is_some() && self.pending_copies.is_empty() {
            self.epilogue = Some(EpilogueSite {
                value: v,
                buf,
                tiles,
                out_word,
                accept,
            });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fold_epilogue(
        &mut self,
        op: Op,
        input: Value,
        home: (&Mapping, &str),
        label: &str,
        replaces_input: bool,
        epilogue: &mut dyn FnMut(u32, BufId) -> Option<Epilogue>,
    ) -> Result<Option<BufId>, Diagnostic> {
        let Some(site) = self.epilogue.clone() else {
            return Ok(None);
        };
        let joinable = site.value == input
            && self.pending_copies.is_empty()
            && self.open.is_none()
            && self.closed.is_some();
        if !joinable {
            return Ok(None);
        }
        // The result laid out as the input: block for block, tile for tile.
        let result = self.cx.result(op, 0);
        let same_blocks = self
            .homes
            .get(&input)
            .is_some_and(|h| h.mapping == *home.0 && h.shape == self.cx.value_shape(result));
        let tiles: Vec<u32> = blocks(home.0, &self.cx.value_shape(result))
            .iter()
            .map(|b| b.tile)
            .collect();
        if !same_blocks || tiles != site.tiles {
            return Ok(None);
        }
        // The calls as they would be (with a stand-in for the result's
        // buffer, not yet allocated): all must take the epilogue.
        let Some((set, _)) = &self.closed else {
            return Ok(None);
        };
        let stand_in = usize::MAX;
        for &t in &tiles {
            let last = set.calls.get(&t).and_then(|c| c.last());
            let ok = match (last, epilogue(t, stand_in)) {
                (Some(call), Some(ep)) => {
                    call.record.get(site.out_word) == Some(&Word::Buf(site.buf, 0))
                        && (site.accept)(call, &ep).is_some()
                }
                _ => false,
            };
            if !ok {
                return Ok(None);
            }
        }
        let step = self.program.steps.len() - 1;
        self.begin_compute(op, "", label);
        let res = self.home(op, result, home.0, home.1, false)?;
        let open = self.open.as_mut().expect("the set joined");
        for &t in &tiles {
            let calls = open.calls.get_mut(&t).expect("checked");
            let last = calls.last_mut().expect("checked");
            let ep = epilogue(t, res).expect("checked");
            *last = (site.accept)(last, &ep).expect("checked");
        }
        self.end_compute(op)?;
        if replaces_input {
            let mut sources = Vec::new();
            self.program.probes.retain(|p| {
                let stale = p.after == step && p.at.buffer == site.buf;
                if stale {
                    sources.push(p.source.clone());
                }
                !stale
            });
            // A value an earlier fold replaced answers through its source.
            let mut keys = Vec::new();
            for s in &sources {
                match ipu_ir::diag::fused_key_parts(s) {
                    Some(parts) => keys.extend(parts.into_iter().map(str::to_string)),
                    None => keys.push(s.clone()),
                }
            }
            self.fused_sources.insert(op, keys);
        }
        self.epilogue = Some(EpilogueSite {
            value: result,
            buf: res,
            tiles,
            out_word: site.out_word,
            accept: site.accept,
        });
        Ok(Some(res))
    }

    fn finish_op(&mut self) {
        self.sets += 1;
    }

    fn program_mut(&mut self) -> &mut Program {
        &mut self.program
    }
}

/// The runs of one rectangle of an operand, each with its entry in the
/// operand's moves, and its transfer there once found (`u32::MAX`: not yet).
#[derive(Default)]
struct RectRuns {
    runs: Vec<(usize, Run)>,
    ids: Vec<u32>,
}

/// Adds the runs of each use (a tile reading a rectangle), in order, to
/// the transfers of their source buffers: what [`transfers_of`] makes of each
/// buffer's runs in that order. Two passes: the first keeps the local runs,
/// finds each run's transfer (once per rectangle) and counts destinations;
/// the second places them.
fn place_uses(rects: &mut [RectRuns], uses: &[(u32, usize)], moves: &mut [(BufId, TransferSet)]) {
    for &(tile, k) in uses {
        let rect = &mut rects[k];
        for (&(m, r), id) in rect.runs.iter().zip(&mut rect.ids) {
            let set = &mut moves[m].1;
            if r.src_tile == tile {
                set.local(Run {
                    dst_tile: tile,
                    ..r
                });
                continue;
            }
            if *id == u32::MAX {
                *id = set.transfer_of(&r);
            }
            set.count(*id);
        }
    }
    for (_, set) in moves.iter_mut() {
        set.reserve();
    }
    for &(tile, k) in uses {
        let rect = &rects[k];
        for (&(m, r), &id) in rect.runs.iter().zip(&rect.ids) {
            if r.src_tile != tile {
                moves[m].1.push(id, tile, r.dst_off);
            }
        }
    }
}

/// The entry of source buffer `src` in `moves` (kept in first-seen order).
fn set_of(moves: &mut Vec<(BufId, TransferSet)>, src: BufId) -> usize {
    match moves.iter().position(|(s, _)| *s == src) {
        Some(i) => i,
        None => {
            moves.push((src, TransferSet::default()));
            moves.len() - 1
        }
    }
}

/// Estimated cycles of one library kernel call: its cycle formula.
pub fn call_cycles(c: &Call) -> Result<u64, String> {
    match &c.kernel {
        Kernel::Lib(spec) => kernel_cycles(spec),
        Kernel::Memcpy => Err("the supervisor copy is not a library kernel".into()),
    }
}

/// Estimated cycles of the local transfers of one move, per tile: as the
/// machine stage makes them (`records::local_copy_calls`: each stepped group
/// on the workers or, where that is cheaper, the supervisor's byte copy).
pub fn copy_cycles(transfers: &[Transfer]) -> Result<BTreeMap<u32, u64>, String> {
    let mut by_tile: BTreeMap<u32, Vec<(u32, u32, u32)>> = BTreeMap::new();
    for t in transfers {
        by_tile
            .entry(t.src_tile)
            .or_default()
            .push((t.src_offset, t.dsts[0].offset, t.len));
    }
    by_tile
        .into_iter()
        .map(|(tile, ts)| {
            let calls = records::local_copy_calls(&ts)?;
            Ok((tile, calls.iter().map(|c| c.1).sum()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_give_what_grouping_every_run_gives() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut below = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..50 {
            let buffers = 1 + below(3) as usize;
            let mut rects: Vec<RectRuns> = (0..1 + below(6))
                .map(|_| {
                    let runs: Vec<(usize, Run)> = (0..below(12))
                        .map(|_| {
                            let r = Run {
                                src_tile: below(5) as u32,
                                src_off: below(6) * 8,
                                dst_tile: 99,
                                dst_off: below(64),
                                len: 8,
                            };
                            (below(buffers as u64) as usize, r)
                        })
                        .collect();
                    RectRuns {
                        ids: vec![u32::MAX; runs.len()],
                        runs,
                    }
                })
                .collect();
            let uses: Vec<(u32, usize)> = (0..below(20))
                .map(|_| (below(5) as u32, below(rects.len() as u64) as usize))
                .collect();
            // Plain: every use's runs, retargeted, grouped per buffer in order.
            let mut plain: Vec<Vec<Run>> = vec![Vec::new(); buffers];
            for &(tile, k) in &uses {
                for &(m, r) in &rects[k].runs {
                    plain[m].push(Run {
                        dst_tile: tile,
                        ..r
                    });
                }
            }
            let mut moves: Vec<(BufId, TransferSet)> =
                (0..buffers).map(|b| (b, TransferSet::default())).collect();
            place_uses(&mut rects, &uses, &mut moves);
            for ((_, set), runs) in moves.into_iter().zip(&plain) {
                assert_eq!(set.finish(), transfers_of(runs));
            }
        }
    }
}
