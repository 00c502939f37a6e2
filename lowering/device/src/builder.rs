//! [`ProgramBuilder`]: what a device op asks of the exchange stage while it
//! turns its tile op into supersteps (buffers, operand deliveries, exchange
//! phases, compute sets of kernel calls). The trait lives here and the
//! builder in `ipu-tile-to-exchange`, so the op families never depend on
//! the pass that drives them.

use ipu_dialects::tile::Mapping;
use ipu_ir::{Context, Diagnostic, Op, Value};
use ipu_program::geometry::{Block, Grid, Layout, Run};
use ipu_program::records::Epilogue;
use ipu_program::view::View;
use ipu_program::{BufId, Call, Program};
use ipu_target::Target;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// Where a value lives: its blocks (under `mapping`), and the buffer
/// holding each block on its tile.
#[derive(Clone, Debug)]
pub struct Home {
    pub blocks: Vec<Block>,
    pub buf: BufId,
    pub mapping: Mapping,
    pub shape: Vec<i64>,
    pub elem_bytes: i64,
    /// The blocks by position.
    pub grid: Grid,
}

impl Home {
    pub fn new(
        blocks: Vec<Block>,
        buf: BufId,
        mapping: Mapping,
        shape: Vec<i64>,
        elem_bytes: i64,
    ) -> Self {
        Home {
            grid: Grid::new(&mapping, &shape),
            blocks,
            buf,
            mapping,
            shape,
            elem_bytes,
        }
    }

    /// The tile and byte offset (in its block, row-major) of element `idx`.
    pub fn locate(&self, idx: &[i64]) -> (u32, u64) {
        let bs = &self.grid.bs;
        let (mut block, mut off) = (0i64, 0i64);
        for d in 0..idx.len() {
            let c = idx[d] / bs[d].max(1);
            block = block * self.mapping.grid[d] + c;
        }
        // Row-major within the block's own extent (edge blocks are short).
        for d in 0..idx.len() {
            let c = idx[d] / bs[d].max(1);
            let ext = bs[d].min(self.shape[d] - c * bs[d]);
            off = off * ext + (idx[d] - c * bs[d]);
        }
        (
            (self.mapping.first_tile + block * self.mapping.stride) as u32,
            (off * self.elem_bytes) as u64,
        )
    }
}

/// Where each tile reads an operand.
pub struct OperandAt {
    pub at: FxHashMap<u32, BufId>,
    /// Tiles that read the producer's block in place (row-major, whatever
    /// layout was asked for).
    pub in_place: FxHashSet<u32>,
}

/// A producing kernel's rule for an epilogue: the call doing the epilogue
/// too, or `None` ([`ProgramBuilder::offer_epilogue`]).
pub type EpilogueRule = fn(&Call, &Epilogue) -> Option<Call>;

/// How a consumer wants an operand delivered on each tile: the blocks it
/// reads, their layout, the operand buffer's bytes, and whether the kernel
/// streams it with paired loads (the buffer then lies in the interleaved
/// region).
#[derive(Clone, Copy, Debug)]
pub struct Delivery<'n> {
    pub need: &'n [Block],
    pub layout: Layout,
    pub bytes: u64,
    pub interleaved: bool,
}

/// What device ops use to turn a tile op into supersteps of the [`Program`]:
/// buffers, exchange phases that move operands into the layout a compute
/// set reads, and compute sets of per-tile kernel calls. `'a` is the
/// lifetime of the context and target the builder reads.
pub trait ProgramBuilder<'a> {
    /// The IR being lowered.
    fn cx(&self) -> &'a Context;
    /// The machine it is lowered for.
    fn target(&self) -> &'a Arc<Target>;

    /// The number of the compute set the next tile op gets (`s1`, `s2`...).
    fn next_set(&self) -> usize;

    /// Storage `name` of `bytes` on `tile` (one declaration per name; a
    /// buffer bigger than a tile's memory is refused before anything else).
    fn alloc(
        &mut self,
        op: Op,
        tile: u32,
        name: &str,
        bytes: u64,
        interleaved: bool,
    ) -> Result<BufId, Diagnostic>;

    /// Gives a value's blocks (under `m`) the buffer `name` on their tiles.
    fn home(
        &mut self,
        op: Op,
        v: Value,
        m: &Mapping,
        name: &str,
        interleaved: bool,
    ) -> Result<BufId, Diagnostic>;

    /// Where `v`'s blocks live, if it has a home.
    fn home_of(&self, v: Value) -> Option<&Home>;

    /// Records `v` as a view of `inputs`: it gets no storage; its readers
    /// receive their rectangles from the inputs' blocks.
    fn add_view(&mut self, v: Value, view: View, inputs: Vec<Value>);

    /// Whether `v` is a view ([`Self::add_view`]).
    fn is_view(&self, v: Value) -> bool;

    /// Where operand `i` of `op` is read on each tile of `need`: the
    /// producer's block itself when it is exactly the rectangle, or buffer
    /// `s<set>.operand<i>` filled by an exchange phase and
    /// by local copies at the start of the next compute set.
    fn operand(
        &mut self,
        op: Op,
        i: usize,
        need: &[Block],
        layout: Layout,
        bytes: u64,
        interleaved: bool,
    ) -> Result<OperandAt, Diagnostic> {
        let want = Delivery {
            need,
            layout,
            bytes,
            interleaved,
        };
        self.operand_via(op, i, None, want)
    }

    /// [`Self::operand`], the operand read through `via` (an implicit
    /// broadcast to the consumer's shape, delivered expanded).
    fn operand_via(
        &mut self,
        op: Op,
        i: usize,
        via: Option<&View>,
        want: Delivery<'_>,
    ) -> Result<OperandAt, Diagnostic>;

    /// Adds one exchange phase of `moves` (source buffer, destination
    /// buffer, runs); runs that stay on their tile are copied there at the
    /// start of the next compute set instead.
    fn exchange(
        &mut self,
        op: Op,
        label: &str,
        moves: Vec<(BufId, BufId, Vec<Run>)>,
    ) -> Result<(), Diagnostic>;

    /// From now on the exchanges an op asks for (its operands' deliveries)
    /// are gathered into one phase, built by [`Self::end_one_phase`]: one
    /// phase's fixed cost and sync instead of one per operand.
    fn begin_one_phase(&mut self);

    /// Builds the phase of the exchanges gathered since
    /// [`Self::begin_one_phase`] (none: nothing).
    fn end_one_phase(&mut self, op: Op) -> Result<(), Diagnostic>;

    /// Opens compute set `s<set><suffix>` for tile op `op`; the pending local
    /// copies are made first.
    fn begin_compute(&mut self, op: Op, suffix: &str, label: &str);

    /// Adds a call on `tile` to the open compute set.
    fn call(&mut self, tile: u32, call: Call);

    /// The last call on `tile` in the open compute set: an earlier op's,
    /// when the set joined the one before it (nothing exchanged or copied
    /// between), which an op may take into a call of its own
    /// ([`Self::replace_last_call`]).
    fn last_call(&self, tile: u32) -> Option<&Call>;

    /// Replaces the last call on `tile` in the open compute set by `call`,
    /// which does that call's work (its writes included) and its own.
    fn replace_last_call(&mut self, tile: u32, call: Call);

    /// Closes the open compute set; its estimate is the busiest tile's
    /// kernels by their cycle formulas.
    fn end_compute(&mut self, op: Op) -> Result<(), Diagnostic>;

    /// Declares that the calls just closed (the last compute set), one per
    /// tile of `tiles`, each that tile's last, write value `v` to `buf`
    /// and may take an elementwise op after them as an epilogue: `accept`
    /// is the producing kernel's rule (the call doing the epilogue too, or
    /// `None`). Valid while that set is the last superstep and nothing
    /// joined it.
    fn offer_epilogue(&mut self, v: Value, buf: BufId, tiles: Vec<u32>, accept: EpilogueRule) {
        self.offer_epilogue_at(v, buf, tiles, 2, accept);
    }

    /// [`Self::offer_epilogue`] for calls whose record holds `buf`'s
    /// address in word `out_word`.
    fn offer_epilogue_at(
        &mut self,
        v: Value,
        buf: BufId,
        tiles: Vec<u32>,
        out_word: usize,
        accept: EpilogueRule,
    );

    /// Folds tile op `op` (reading `input`) into the calls that produce
    /// `input`, when they offered an epilogue ([`Self::offer_epilogue`]),
    /// a compute set opened now would join theirs (no exchange or copies
    /// since), and every one takes `epilogue(tile)` (`out` buffer: `op`'s
    /// result's home, allocated here as `home`). On success the calls are
    /// replaced, `op`'s label joins the set, and the probes of `input`
    /// after that set are dropped when `input`'s buffer no longer holds it
    /// (`replaces_input`): `op`'s probes then answer for it (a fused
    /// location). Returns the result's buffer, or `None` (nothing changed).
    fn fold_epilogue(
        &mut self,
        op: Op,
        input: Value,
        home: (&Mapping, &str),
        label: &str,
        replaces_input: bool,
        epilogue: &mut dyn FnMut(u32, BufId) -> Option<Epilogue>,
    ) -> Result<Option<BufId>, Diagnostic>;

    /// Marks the end of a tile op's work: the next op gets the next set number.
    fn finish_op(&mut self);

    /// The program built so far.
    fn program_mut(&mut self) -> &mut Program;
}

impl<'a> dyn ProgramBuilder<'a> + '_ {
    /// An error at `op`.
    pub fn err(&self, op: Op, m: impl std::fmt::Display) -> Diagnostic {
        ipu_ir::verify::op_error(self.cx(), op, m.to_string())
    }
}
