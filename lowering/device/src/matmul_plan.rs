//! The matmul planner: how to cut an [M, K] x [K, N] product over the tiles.
//!
//! A plan is a pm x pn x pk grid of blocks, one per tile. Each plan is
//! costed with the target's figures: the kernels each tile runs for its
//! block by their own `.cycles` formulas (the GEMM, the split-K reduction
//! and what it takes in of the result's readers, [`ResultEpilogue`]), the
//! bytes each tile must receive over the receive bandwidth (none for an
//! operand resident from load), the partial-sum reduction's exchange when K
//! is split, and the fixed cost of every sync and exchange phase. Plans are
//! re-costed by the formulas in the order of a lower bound (the exchange
//! and the block's MACs at the AMP's peak), until the bound passes the best
//! cost found. Plans whose per-tile buffers do not fit in a tile's memory
//! beside what else is resident on those tiles ([`TileBudget`]: constants
//! and parameters there from load) are rejected; the cheapest plan wins,
//! ties going to fewer tiles, then to the smaller (pm, pn, pk).

use ipu_isa::kernels::{
    partials_max, ElemType, EwOp, KernelSpec, PartialsPost, PartialsWide, RowOp, WORKER_CONTEXTS,
};
use ipu_program::gemm::{k_chunk, GemmBlocks, GemmMode, N_BLOCK};

/// A row of the GEMM's partials must stay under this many bytes (the
/// kernel steps rows with a 16-bit immediate).
const GEMM_MAX_ROW_BYTES: u64 = 32768;
use ipu_target::Target;

/// A chosen way to run one matmul.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulPlan {
    pub pm: u64,
    pub pn: u64,
    pub pk: u64,
    /// Per-tile block sizes, padded to the kernel's granularity.
    pub bm: u64,
    pub bk: u64,
    pub bn: u64,
    pub mode: GemmMode,
    /// Kernel cycles of one block.
    pub kernel_cycles: u64,
    /// Compute cycles of the op: the kernel, plus adding up split-K partials.
    pub compute_cycles: u64,
    /// Estimated cycles of the whole op (compute, exchange, reduction, syncs).
    pub total_cycles: u64,
    /// Bytes of the largest per-tile working set.
    pub tile_bytes: u64,
}

impl MatmulPlan {
    pub fn tiles(&self) -> u64 {
        self.pm * self.pn * self.pk
    }

    /// The blocks of this plan for `[m, k] x [k, n]`.
    pub fn blocks(&self, m: u64, k: u64, n: u64) -> GemmBlocks {
        GemmBlocks::new(m, k, n, [self.pm, self.pn, self.pk], self.mode)
    }
}

/// The GEMM kernel specialisation one tile of `g` calls.
pub fn gemm_spec(g: &GemmBlocks) -> KernelSpec {
    let (bm, bk, bn) = (g.bm as usize, g.bk as usize, g.bn as usize);
    match g.k_chunk() {
        Some(kc) if (kc as usize) < bk => {
            KernelSpec::gemm_chunked(g.mode.ty, bm, bk, kc as usize, bn)
        }
        _ => KernelSpec::gemm(g.mode.ty, bm, bk, bn),
    }
}

/// The kernels one matmul tile runs per run for its block, in order: the
/// re-layouts its operands need (FP8 widened to the mode's input), then the
/// GEMM. An FP8 parameter or constant that only this matmul reads arrives
/// widened (at load, or at compile time: `nn_to_tile::legalize`). B arrives
/// in the GEMM's 16-column blocks (the exchange or the load lays it out);
/// only a tile that reads its block of B in place, row-major, cuts it into
/// them first (`block_b`, not counted in the plan's cost, as the K-chunks of
/// an A read in place are not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileKernels {
    pub widen_a: Option<KernelSpec>,
    pub block_b: Option<KernelSpec>,
    pub widen_b: Option<KernelSpec>,
    pub gemm: KernelSpec,
}

/// The kernels a tile of `g` runs for operands of element types `a` and `b`.
pub fn tile_kernels(g: &GemmBlocks, a: ElemType, b: ElemType) -> TileKernels {
    let (bm, bk, bn) = (g.bm as usize, g.bk as usize, g.bn as usize);
    let nb = N_BLOCK as usize;
    let input = g.mode.input;
    let eb = b.bytes();
    TileKernels {
        widen_a: (a != input).then(|| KernelSpec::cast(a, input, (bm * bk).div_ceil(8) * 8)),
        block_b: (bn > nb).then(|| {
            KernelSpec::copy2d(
                bn / nb,
                bk,
                nb * eb / 8,
                (bn * eb, nb * eb),
                (nb * eb, bk * nb * eb),
            )
        }),
        widen_b: (b != input).then(|| KernelSpec::cast(b, input, bk * bn)),
        gemm: gemm_spec(g),
    }
}

/// The kernels a tile runs to turn its share of its block's partials (the
/// GEMM writes them row-major; with split K each of the pk tiles of a block
/// adds up 1/pk of its rows) into its result block: `reduce` (the other K
/// tiles' partials of its share added to its own, up to [`partials_max`] of
/// them per call, in K order), then `convert` (partials to the result type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultKernels {
    /// One `partials` call per run of up to [`partials_max`] incoming
    /// partials (none without split K).
    pub reduce: Vec<KernelSpec>,
    pub convert: Option<KernelSpec>,
    /// The partials are of the result type: without split K the GEMMs
    /// write the result buffer, with it the last `partials` pass does; no
    /// copy.
    pub in_place: bool,
}

/// The result kernels of `g` for a result of element type `out`.
pub fn result_kernels(g: &GemmBlocks, out: ElemType) -> ResultKernels {
    let (rows, bn) = (g.share_rows() as usize, g.bn as usize);
    let pt = g.mode.partials;
    ResultKernels {
        in_place: pt == out,
        reduce: partial_runs(g.pk - 1, partials_max(pt, rows * bn))
            .map(|(_, n)| KernelSpec::partials(pt, rows * bn, n))
            .collect(),
        convert: (pt != out).then(|| KernelSpec::cast(pt, out, rows * bn)),
    }
}

/// The incoming partials (`count` of them, K blocks 1..) as the runs one
/// `partials` call each adds, up to `max` a call: (first partial's index
/// from 0, how many).
pub fn partial_runs(count: u64, max: usize) -> impl Iterator<Item = (usize, usize)> {
    let (count, max) = (count as usize, max.max(1));
    (0..count)
        .step_by(max)
        .map(move |first| (first, max.min(count - first)))
}

/// What the readers of a matmul's result do that its reduction may take
/// in as its epilogue (`records::partials_epilogue`): a row vector added
/// (a bias), then an activation, then a cast to FP8 or a widening to f32.
/// The planner costs each plan with them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResultEpilogue {
    pub bias: bool,
    pub act: Option<EwOp>,
    /// The cast after them: to an FP8 type, or (f32) the widening.
    pub cast: Option<ElemType>,
}

impl ResultEpilogue {
    /// Nothing after the matmul.
    pub const NONE: ResultEpilogue = ResultEpilogue {
        bias: false,
        act: None,
        cast: None,
    };

    /// The partials call adding up the last `p` partials of `n` elements
    /// in rows of `cols` with this epilogue, when the kernel takes it all.
    fn last_call(&self, pt: ElemType, n: usize, p: usize, cols: usize) -> Option<KernelSpec> {
        if !self.bias {
            return None;
        }
        let f8 = self.cast.filter(|&e| e.bytes() == 1);
        let wide = self.cast == Some(ElemType::F32);
        let post = PartialsPost {
            wide: if wide {
                PartialsWide::Only
            } else {
                PartialsWide::None
            },
            act: self.act,
            to8: f8.map(|e| (e, 0)),
        };
        KernelSpec::partials_row_vector(pt, n, p, cols, post)
    }

    /// The kernels doing it apart, over `n` elements in rows of `cols` of
    /// type `ty`: the row-vector add, the activation, the cast.
    fn apart(&self, ty: ElemType, n: usize, cols: usize) -> Vec<KernelSpec> {
        let mut out = Vec::new();
        if self.bias {
            out.push(KernelSpec::rows(
                RowOp::AddRowVector,
                ty,
                n / cols.max(1),
                cols,
                0.0,
            ));
        }
        if let Some(op) = self.act {
            out.push(KernelSpec::elementwise(op, ty, n));
        }
        if let Some(to) = self.cast {
            out.push(KernelSpec::cast(ty, to, n));
        }
        out
    }
}

/// Cycles of the kernels of `g`'s tiles per run, from the kernels' own
/// `.cycles` formulas: (before the partials move, after). The result's
/// epilogue `ep` is taken by the last reduction call where its kernel
/// takes it, else costed as the kernels that do it apart.
fn exact_cycles(
    g: &GemmBlocks,
    [a, b, out]: [ElemType; 3],
    ep: &ResultEpilogue,
) -> Option<(u64, u64)> {
    let c = |s: &Option<KernelSpec>| s.as_ref().map_or(Some(0), |s| super::kernel_cycles(s).ok());
    let t = tile_kernels(g, a, b);
    let main = c(&t.widen_a)? + c(&t.widen_b)? + super::kernel_cycles(&t.gemm).ok()?;
    let r = result_kernels(g, out);
    let (pt, bn) = (g.mode.partials, g.bn as usize);
    let share = g.share_rows() as usize * bn;
    let mut specs: Vec<KernelSpec> = r.reduce.clone();
    specs.extend(r.convert.clone());
    let folded = match specs.last().and_then(|s| s.params.get("P").copied()) {
        Some(p) => ep.last_call(pt, share, p as usize, bn),
        None => None,
    };
    match folded {
        Some(spec) => {
            let last = r.reduce.len() - 1;
            specs[last] = spec;
        }
        None => {
            let rows = if r.reduce.is_empty() {
                g.bm as usize
            } else {
                g.share_rows() as usize
            };
            specs.extend(ep.apart(out, rows * bn, bn));
        }
    }
    let mut after = 0;
    for spec in &specs {
        after += super::kernel_cycles(spec).ok()?;
    }
    Some((main, after))
}

/// The most plans of one matmul re-costed with the kernels' own cycle
/// formulas (assembling a kernel per plan costs compile time), in the
/// order of their lower bound.
const EXACT_MAX: usize = 256;

/// `plan` (whose exchange costs `exchange` cycles) with its compute costed
/// by the cycle formulas of the kernels its tiles run.
fn exact_plan(
    mut plan: MatmulPlan,
    exchange: u64,
    [m, k, n]: [u64; 3],
    elems: [ElemType; 3],
    ep: &ResultEpilogue,
) -> MatmulPlan {
    let g = plan.blocks(m, k, n);
    if let Some((main, after)) = exact_cycles(&g, elems, ep) {
        plan.kernel_cycles = super::kernel_cycles(&gemm_spec(&g)).unwrap_or(plan.kernel_cycles);
        plan.compute_cycles = main + after;
        plan.total_cycles = exchange + main + after;
    }
    plan
}

/// What else a matmul's tiles hold, which its plan must leave room for:
/// bytes per tile (from tile 0; tiles past the end hold none) of the data
/// resident from load (constants and parameters, each in the buffers of
/// the ops that read it until they run).
#[derive(Clone, Copy, Debug)]
pub struct TileBudget<'a> {
    /// Held while the matmul runs: what the ops after it read.
    pub during: &'a [u64],
    /// Held at load, besides the matmul's own resident operands.
    pub at_load: &'a [u64],
    /// Whether the lhs / rhs is resident from load (then its blocks are
    /// held on the matmul's tiles from load on).
    pub resident: [bool; 2],
    /// Products planned side by side (batches): a plan over `t` tiles
    /// takes tiles `0..groups * t`.
    pub groups: u64,
    /// The most tiles that may hold a copy of each element of a resident
    /// operand (`pm` for the rhs, `pn` for the lhs), `None` for no limit:
    /// a copy per reading tile saves its exchange, but a deep model's
    /// parameters may not fit the chip so replicated.
    pub max_copies: Option<u64>,
    /// Copies of the matmul's own resident operands held at load: one per
    /// run of the function it is in (a function called several times has
    /// each call's parameters resident).
    pub instances: u64,
}

impl TileBudget<'_> {
    /// Nothing else resident: the matmul alone on its tiles.
    pub const ALONE: TileBudget<'static> = TileBudget {
        during: &[],
        at_load: &[],
        resident: [false, false],
        groups: 1,
        max_copies: None,
        instances: 1,
    };

    /// How many tiles hold a copy of each element of a resident operand
    /// under the split `pm` x `pn` (1 when none is resident).
    pub fn copies(&self, pm: u64, pn: u64) -> u64 {
        let rhs = if self.resident[1] { pm } else { 1 };
        let lhs = if self.resident[0] { pn } else { 1 };
        rhs.max(lhs)
    }
}

/// `out[t]` = the most any of tiles `0..t` holds, for `t` in `0..=tiles`.
fn prefix_max(held: &[u64], tiles: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity(tiles as usize + 1);
    let mut m = 0;
    out.push(0);
    for t in 0..tiles as usize {
        m = m.max(held.get(t).copied().unwrap_or(0));
        out.push(m);
    }
    out
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// The target has no AMP mode or GEMM estimate for this kind.
    Unsupported(String),
    /// Even the most split plan needs more memory per tile than there is.
    DoesNotFit { needed: u64, available: u64 },
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::Unsupported(m) => f.write_str(m),
            PlanError::DoesNotFit { needed, available } => write!(
                f,
                "does not fit: the smallest plan needs {needed} bytes on a tile (with the data resident there from load), which has {available} bytes for data"
            ),
        }
    }
}

/// Candidate split counts for a dimension of `extent`: every count that
/// changes the block size, up to `limit`.
fn candidates(extent: u64, limit: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut last_block = 0;
    for p in 1..=extent.min(limit) {
        let block = extent.div_ceil(p);
        if block != last_block {
            out.push(p);
            last_block = block;
        }
    }
    out
}

/// Plans `[m, k] x [k, n]` in `mode` on `target`, over at most `tiles`
/// tiles; `epilogue`: what the result's readers do that the reduction may take
/// in ([`ResultEpilogue`]), costed with each plan.
#[allow(clippy::too_many_arguments)]
pub fn plan_matmul(
    target: &Target,
    tiles: u64,
    m: u64,
    k: u64,
    n: u64,
    mode: GemmMode,
    [ta, tb, tout]: [ElemType; 3],
    budget: &TileBudget,
    epilogue: &ResultEpilogue,
) -> Result<MatmulPlan, PlanError> {
    let (input, partials) = mode.amp();
    let k_block = mode.k_block(target).ok_or_else(|| {
        PlanError::Unsupported(format!(
            "target {} has no {input} -> {partials} AMP mode",
            target.name
        ))
    })?;
    let estimate = |bm: u64, bk: u64, bn: u64| mode.estimate(target, bm, bk, bn);
    if estimate(1, k_block, N_BLOCK).is_none() {
        return Err(PlanError::Unsupported(format!(
            "target {} has no {input} GEMM estimate",
            target.name,
        )));
    }
    let tiles = tiles.clamp(1, target.tiles() as u64);
    // The GEMM reads its operands and writes its partials with 128-bit
    // accesses, so they must fit the interleaved region.
    let data = super::data_bytes(target);
    let available = target
        .interleaved_range()
        .map_or(data, |r| data.min(r.end - r.start));
    let recv = target.exchange.receive_bytes_per_cycle.max(1) as u64;
    // Tiles of a supertile that receive the same bytes (neighbouring N
    // blocks share their A block) take them at the supertile's rate.
    let x = &target.exchange;
    let shared_recv = if x.supertile_tiles == 2 {
        (x.supertile_shared_receive_bytes_per_cycle as u64).max(recv)
    } else {
        recv
    };
    let phase = target.exchange_phase_cycles(0) + target.exchange.sync_cycles as u64;
    let lanes = target.vector.f32_lanes.max(1) as u64;
    let (ea, ep) = (mode.input_bytes(), mode.partial_bytes());
    let groups = budget.groups.max(1);
    let span = (tiles * groups).min(target.tiles() as u64);
    let (during, at_load) = (
        prefix_max(budget.during, span),
        prefix_max(budget.at_load, span),
    );
    let mut feasible: Vec<(MatmulPlan, u64)> = Vec::new();
    let mut smallest_need = u64::MAX;
    let mut laid_out = false;
    let cap = budget.max_copies.unwrap_or(u64::MAX).max(1);
    for &pk in &candidates(k.div_ceil(k_block), tiles) {
        for &pm in &candidates(m, tiles / pk) {
            for &pn in &candidates(n.div_ceil(N_BLOCK), tiles / (pk * pm)) {
                if budget.copies(pm, pn) > cap {
                    continue;
                }
                // A row block is pk shares of the result grid's rows.
                let bm = pk * m.div_ceil(pm * pk);
                let bk = k.div_ceil(pk).div_ceil(k_block) * k_block;
                let bn = n.div_ceil(pn).div_ceil(N_BLOCK) * N_BLOCK;
                // Only splits the kernel calls can lay out: K evenly into
                // multiples of the K-block (and of the K-chunk), N evenly
                // into 16-column blocks, a row of partials under 32 KiB.
                let even = k.is_multiple_of(pk)
                    && (k / pk) == bk
                    && n.is_multiple_of(pn)
                    && (n / pn) == bn
                    && bn * ep < GEMM_MAX_ROW_BYTES
                    && k_chunk(bk, ea).is_none_or(|kc| bk.is_multiple_of(kc));
                if !even {
                    continue;
                }
                laid_out = true;
                // Split K is added up by the K tiles, each a share of the
                // block's rows.
                let blocks = GemmBlocks::new(m, k, n, [pm, pn, pk], mode);
                let c_bytes = bm * bn * ep;
                let share_bytes = blocks.share_rows() * bn * ep;
                // A tile holds its own partials and receives the other K
                // tiles' partials of its share; the code generator may also re-lay A out in
                // K-chunks (a tile reading A in place) and B in 16-column
                // blocks (read in place) or widened from f8 (one more
                // B-sized buffer), and K-chunks of more than 16 columns
                // accumulate in T.
                let chunked = k_chunk(bk, ea).is_some();
                let relayout = if chunked { bm * bk * ea } else { 0 }
                    + bk * bn * ea
                    + if chunked && bn > N_BLOCK {
                        bm * N_BLOCK * ep + 8
                    } else {
                        0
                    };
                let need =
                    bm * bk * ea + bk * bn * ea + c_bytes + share_bytes * (pk - 1) + relayout;
                // On its busiest tile: its buffers beside what later ops
                // read while it runs; and at load, its resident operand
                // blocks (as the code generator sizes them) beside every
                // other resident byte.
                let t = ((pm * pn * pk * groups) as usize).min(span as usize);
                let own = if budget.resident[0] {
                    bm * bk * ta.bytes() as u64
                } else {
                    0
                } + if budget.resident[1] {
                    bk * bn * tb.bytes() as u64 + 8 * bm
                } else {
                    0
                };
                let held = (need + during[t]).max(own * budget.instances.max(1) + at_load[t]);
                smallest_need = smallest_need.min(held);
                if held > available {
                    continue;
                }
                let kernel = estimate(bm, bk, bn).unwrap_or(u64::MAX / 4);
                // A resident operand is in its buffers from load: no exchange.
                let received = |i: usize, bytes: u64| if budget.resident[i] { 0 } else { bytes };
                let a_recv = if pn > 1 { shared_recv } else { recv };
                let operands_in = received(0, bm * bk * ea).div_ceil(a_recv)
                    + received(1, bk * bn * ea).div_ceil(recv);
                let reduce_compute = (pk - 1) * (share_bytes / ep).div_ceil(lanes);
                let reduce_exchange = if pk > 1 {
                    phase + ((pk - 1) * share_bytes).div_ceil(recv)
                } else {
                    0
                };
                let compute = kernel + reduce_compute;
                let exchange = phase + operands_in + phase + reduce_exchange;
                let plan = MatmulPlan {
                    pm,
                    pn,
                    pk,
                    bm,
                    bk,
                    bn,
                    mode,
                    kernel_cycles: kernel,
                    compute_cycles: compute,
                    total_cycles: exchange + compute,
                    tile_bytes: need,
                };
                feasible.push((plan, exchange));
            }
        }
    }
    let key = |p: &MatmulPlan| (p.total_cycles, p.tiles(), p.pm, p.pn, p.pk);
    // Every plan is bounded below by its exchange and its block's MACs at
    // the AMP's peak, its rows padded to a whole number a worker (the
    // GEMM splits them over the workers, each a row per AMP pass). Plans are re-costed with the
    // cycle formulas of the kernels each tile runs in the order of that
    // bound until the bound passes the best exact cost: the target's
    // one-tile estimate only ranks plans of one exact cost (it is far from
    // the kernel's for blocks of few rows, which it would leave out).
    let macs = target
        .amp_mode(input, partials)
        .map_or(1, |a| u64::from(a.macs_per_cycle.max(1)));
    let workers = u64::from(WORKER_CONTEXTS);
    let bound = |p: &MatmulPlan, x: u64| {
        x + (p.bm.div_ceil(workers) * workers * p.bk * p.bn).div_ceil(macs)
    };
    feasible.sort_by_key(|(p, x)| (bound(p, *x), key(p)));
    let mut best: Option<MatmulPlan> = None;
    for (i, (plan, exchange)) in feasible.into_iter().enumerate() {
        let lower = bound(&plan, exchange);
        if best.as_ref().is_some_and(|b| lower > b.total_cycles) {
            break;
        }
        let plan = exact_plan(plan, exchange, [m, k, n], [ta, tb, tout], epilogue);
        if best.as_ref().is_none_or(|b| key(&plan) < key(b)) {
            best = Some(plan);
        }
        if i + 1 >= EXACT_MAX {
            break;
        }
    }
    if !laid_out {
        return Err(PlanError::Unsupported(format!(
            "no split the code generator can lay out yet: K ({k}) must split evenly into multiples of {k_block} and N ({n}) into multiples of {N_BLOCK}"
        )));
    }
    best.ok_or(PlanError::DoesNotFit {
        needed: smallest_need,
        available,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_isa::kernels::ElemType;

    fn f16() -> GemmMode {
        GemmMode::select(ElemType::F16, ElemType::F16, ElemType::F16).unwrap()
    }
    fn f8() -> GemmMode {
        GemmMode::select(ElemType::F8E4M3FN, ElemType::F8E4M3FN, ElemType::F16).unwrap()
    }

    const F16S: [ElemType; 3] = [ElemType::F16, ElemType::F16, ElemType::F16];
    const F8S: [ElemType; 3] = [ElemType::F8E4M3FN, ElemType::F8E4M3FN, ElemType::F16];

    fn target(name: &str) -> Target {
        Target::load(name).unwrap()
    }

    #[test]
    fn big_matmuls_use_most_of_the_chip() {
        let t = target("ipu21");
        let p = plan_matmul(
            &t,
            t.tiles() as u64,
            128,
            768,
            3072,
            f16(),
            F16S,
            &TileBudget::ALONE,
            &ResultEpilogue::NONE,
        )
        .unwrap();
        assert!(p.tiles() > 700 && p.tiles() <= 1472, "{p:?}");
        assert!(p.tile_bytes <= crate::data_bytes(&t));
        // Blocks cover the problem.
        assert!(p.bm * p.pm >= 128 && p.bk * p.pk >= 768 && p.bn * p.pn >= 3072);
    }

    #[test]
    fn split_k_partials_are_added_up_to_the_kernels_maximum_per_call() {
        let runs = |pk: u64| {
            let g = GemmBlocks::new(8 * pk, 32 * pk, 16, [1, 1, pk], f16());
            let r = result_kernels(&g, ElemType::F16);
            r.reduce
                .iter()
                .map(|s| (s.source, s.params["P"], s.params["N"]))
                .collect::<Vec<_>>()
        };
        assert!(runs(1).is_empty());
        assert_eq!(runs(3), vec![("partials", 2, 128)]);
        assert_eq!(runs(7), vec![("partials", 6, 128)]);
        assert_eq!(runs(24), vec![("partials", 23, 128)]);
        assert_eq!(runs(40), vec![("partials", 32, 128), ("partials", 7, 128)]);
        assert_eq!(partial_runs(8, 6).collect::<Vec<_>>(), vec![(0, 6), (6, 2)]);
    }

    #[test]
    fn a_resident_operand_costs_no_receive() {
        let t = target("ipu21");
        let plan = |resident: [bool; 2]| {
            let budget = TileBudget {
                resident,
                ..TileBudget::ALONE
            };
            plan_matmul(
                &t,
                t.tiles() as u64,
                128,
                3072,
                768,
                f16(),
                F16S,
                &budget,
                &ResultEpilogue::NONE,
            )
            .unwrap()
        };
        let (sent, resident) = (plan([false, false]), plan([false, true]));
        // Its blocks are in place from load: the plan chosen when it is sent
        // costs, resident, what it did less its rhs block's receive (up to
        // the rounding of the operands' receive), and the best resident plan
        // costs no more than that.
        let recv = t.exchange.receive_bytes_per_cycle as u64;
        let b_in = (sent.bk * sent.bn * 2).div_ceil(recv);
        assert!(
            resident.total_cycles + b_in <= sent.total_cycles + 1,
            "{resident:?} vs {sent:?}"
        );
    }

    #[test]
    fn copies_of_a_resident_operand_stay_within_the_limit() {
        let t = target("ipu21");
        let plan = |resident: [bool; 2], max_copies: Option<u64>| {
            let budget = TileBudget {
                resident,
                max_copies,
                ..TileBudget::ALONE
            };
            plan_matmul(
                &t,
                t.tiles() as u64,
                256,
                768,
                768,
                f8(),
                F8S,
                &budget,
                &ResultEpilogue::NONE,
            )
            .unwrap()
        };
        // Unlimited, a resident rhs is copied to every row block's tiles.
        let free = plan([false, true], None);
        assert!(free.pm > 2, "{free:?}");
        // Limited, the plan holds at most that many copies and costs no
        // less than the unlimited one.
        for limit in [1, 2] {
            let p = plan([false, true], Some(limit));
            assert!(p.pm <= limit, "{p:?}");
            assert!(p.total_cycles >= free.total_cycles, "{p:?} vs {free:?}");
        }
        // A resident lhs is copied to every column block's tiles.
        let p = plan([true, false], Some(1));
        assert_eq!(p.pn, 1, "{p:?}");
        // Nothing resident: the limit changes nothing.
        assert_eq!(plan([false, false], Some(1)), plan([false, false], None));
    }

    #[test]
    fn small_matmuls_stay_small() {
        let t = target("test4");
        let p = plan_matmul(
            &t,
            t.tiles() as u64,
            4,
            16,
            16,
            f16(),
            F16S,
            &TileBudget::ALONE,
            &ResultEpilogue::NONE,
        )
        .unwrap();
        assert!(p.tiles() <= 4);
        assert_eq!((p.bk % 16, p.bn % 16), (0, 0));
    }

    #[test]
    fn plans_are_deterministic() {
        let t = target("ipu21");
        let plan = || {
            plan_matmul(
                &t,
                t.tiles() as u64,
                384,
                1024,
                1024,
                f8(),
                F8S,
                &TileBudget::ALONE,
                &ResultEpilogue::NONE,
            )
            .unwrap()
        };
        assert_eq!(plan(), plan());
    }

    #[test]
    fn oversized_problems_are_reported_with_their_size() {
        let t = target("test4");
        match plan_matmul(
            &t,
            t.tiles() as u64,
            4096,
            4096,
            4096,
            f16(),
            F16S,
            &TileBudget::ALONE,
            &ResultEpilogue::NONE,
        ) {
            Err(PlanError::DoesNotFit { needed, available }) => assert!(needed > available),
            other => panic!("expected DoesNotFit, got {other:?}"),
        }
    }

    #[test]
    fn split_k_is_chosen_when_k_dominates() {
        let t = target("ipu21");
        let p = plan_matmul(
            &t,
            t.tiles() as u64,
            16,
            65536,
            16,
            f16(),
            F16S,
            &TileBudget::ALONE,
            &ResultEpilogue::NONE,
        )
        .unwrap();
        assert!(p.pk > 1, "{p:?}");
    }

    #[test]
    fn the_reductions_epilogue_is_costed_with_each_plan() {
        // The FFN's second projection of a BERT-base block: its bias add,
        // folded into the last partials call, costs the plan cycles.
        let t = target("ipu21");
        let plan = |ep: &ResultEpilogue| {
            plan_matmul(
                &t,
                t.tiles() as u64,
                256,
                3072,
                768,
                f8(),
                F8S,
                &TileBudget::ALONE,
                ep,
            )
            .unwrap()
        };
        let bare = plan(&ResultEpilogue::NONE);
        let bias = ResultEpilogue {
            bias: true,
            ..ResultEpilogue::NONE
        };
        let with = plan(&bias);
        assert!(with.pk > 1, "{with:?}");
        assert!(with.total_cycles > bare.total_cycles, "{with:?} {bare:?}");
        // Each plan's cost is its own blocks' kernels: the bias plan costed
        // without the epilogue is no cheaper than the bare plan.
        let g = with.blocks(256, 3072, 768);
        let (main, after) = exact_cycles(&g, F8S, &ResultEpilogue::NONE).unwrap();
        let (_, after_bias) = exact_cycles(&g, F8S, &bias).unwrap();
        assert!(after_bias > after);
        assert!(with.total_cycles - after_bias + after >= bare.total_cycles);
        assert!(main <= with.compute_cycles);
    }

    #[test]
    fn plans_leave_room_for_what_is_resident_on_their_tiles() {
        let t = target("ipu21");
        let plan = |budget: &TileBudget| {
            let ep = &ResultEpilogue::NONE;
            plan_matmul(
                &t,
                t.tiles() as u64,
                256,
                384,
                1536,
                f16(),
                F16S,
                budget,
                ep,
            )
        };
        let alone = plan(&TileBudget::ALONE).unwrap();
        let available = t
            .interleaved_range()
            .map_or(crate::data_bytes(&t), |r| r.end - r.start);
        // The last tile of that plan is full while the matmul runs: the
        // plan must give way to one on the tiles before it.
        let last = alone.tiles() as usize - 1;
        let mut during = vec![0; t.tiles() as usize];
        during[last] = available;
        let budget = TileBudget {
            during: &during,
            ..TileBudget::ALONE
        };
        let p = plan(&budget).unwrap();
        assert!(p.tiles() as usize <= last, "{p:?} beside {alone:?}");
        // Tile 0 holds a little more than the plan leaves free: some other
        // plan that fits beside it, or none.
        let mut during = vec![0; t.tiles() as usize];
        during[0] = available - alone.tile_bytes + 1;
        let budget = TileBudget {
            during: &during,
            ..TileBudget::ALONE
        };
        match plan(&budget) {
            Ok(p) => assert!(p.tile_bytes + during[0] <= available && p != alone, "{p:?}"),
            Err(PlanError::DoesNotFit { needed, .. }) => assert!(needed > available),
            Err(e) => panic!("{e}"),
        }
        // At load, a resident rhs counts beside everything else resident.
        let at_load = vec![available - 1000; t.tiles() as usize];
        let budget = TileBudget {
            at_load: &at_load,
            resident: [false, true],
            ..TileBudget::ALONE
        };
        match plan(&budget) {
            Err(PlanError::DoesNotFit {
                needed,
                available: a,
            }) => {
                assert!(needed > a && a == available)
            }
            other => panic!("expected DoesNotFit, got {other:?}"),
        }
    }
}
