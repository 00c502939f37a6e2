//! The model's floor: the fewest cycles any plan could take on the target,
//! computed from the `nn` model and the target's figures alone (never from
//! the chosen plan), so that simulated cycles can be read against the
//! machine and not only against the compiler's own roofline.
//!
//! Every op is spread over all the target's tiles. Its floor is
//!
//! * **compute**: a matmul's MACs at the AMP rate of its types (operand
//!   class, partials of the result's class; the fastest mode of the operand
//!   class when none matches; integers at one MAC per vector lane), any
//!   other op's vector work, one vector instruction per datapath's worth of
//!   its largest tensor at its widest element type (the workers issue one
//!   instruction per tile cycle between them), both divided over all tiles;
//! * **exchange**: the least any partition of the op over all tiles must
//!   move, the bytes that cannot already be where they are needed, spread
//!   evenly over the tiles at the target's receive rate; each exchange phase
//!   also costs the phase's fixed cycles and one sync (the dependent step it
//!   opens). Function arguments (weights loaded with the program, host
//!   inputs streamed where they are read) and constants can be placed, and
//!   copied, wherever they are needed; a value an op computes exists once,
//!   where its producer made it (the best case: laid out as its consumer
//!   wants it).
//!   - elementwise ops, views, gathers and the like: nothing;
//!   - a matmul (batch `B`, `M x K` times `K x N`) split into a grid
//!     `pb x pm x pn x pk` of all tiles: each computed operand is copied to
//!     every tile of its grid line (`A` to `pn - 1` more tiles, `B` to
//!     `pm - 1`), in one phase at the supertile's shared receive rate (a
//!     pair of tiles hears the same words), and when `K` is split the
//!     `pk - 1` partial sums of each output are moved in a second phase at
//!     the receive rate. The least over the grids (continuous factors, at
//!     most each dimension; batches split first, as they share nothing) of
//!     those bytes, the phases' fixed cycles and their syncs;
//!   - a softmax, layer norm or reduction with fewer rows (outputs) than
//!     tiles: each row is split over `tiles / rows` tiles, whose partial
//!     statistics must be combined: at least one 4-byte value per statistic
//!     per tile, in one phase per dependent statistic (softmax: the maximum,
//!     then the sum; layer norm: the sum and the sum of squares together;
//!     a reduction: its one value).
//!
//! The model's floor is the longest dependency chain of op floors (ops of
//! independent chains could run side by side). It is a floor for plans that
//! spread every op over the whole chip, as this compiler's do.

use ipu_ir::{Context, Op, Value, ValueDef};
use ipu_reference::{ElementType, OpKind};
use ipu_target::{ElemType, Target};

/// One op's floor, in cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpFloor {
    pub op: Op,
    /// Its work at the peak rate over all tiles.
    pub compute: u64,
    /// Its exchange phases: the bytes' cycles, the phases' fixed cycles and
    /// one sync each.
    pub exchange: u64,
    /// Exchange phases (each a dependent step with its sync).
    pub phases: u32,
    /// The longest chain of op floors ending here, this op included.
    pub chain: u64,
}

impl OpFloor {
    pub fn cycles(&self) -> u64 {
        self.compute + self.exchange
    }
}

/// The floor of a function: its ops' floors and the longest chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Floor {
    pub cycles: u64,
    pub ops: Vec<OpFloor>,
}

/// The floor of `f` (a function of `nn` ops) on `target`. `Err` names an
/// op that is not an `nn` op (the floor is of the model, before lowering).
/// A `func.call` counts its callee's ops, each chain through the callee
/// starting where the call's operand's chain ends.
pub fn floor(cx: &Context, f: Op, target: &Target) -> Result<Floor, String> {
    floor_in(cx, f, target, &[], 0).map(|(fl, _)| fl)
}

/// [`floor`] of `f` whose arguments' chains end at `starts` (0 where not
/// given); also the chains ending at its results.
fn floor_in(
    cx: &Context,
    f: Op,
    target: &Target,
    starts: &[u64],
    depth: usize,
) -> Result<(Floor, Vec<u64>), String> {
    let Some(entry) = cx.entry_block(cx.region(f, 0)) else {
        let floor = Floor {
            cycles: 0,
            ops: Vec::new(),
        };
        return Ok((floor, Vec::new()));
    };
    let mut chain: std::collections::HashMap<Value, u64> = cx
        .block_args(entry)
        .iter()
        .zip(starts)
        .map(|(&a, &s)| (a, s))
        .collect();
    let at = |chain: &std::collections::HashMap<Value, u64>, op: Op| {
        cx.operands(op)
            .iter()
            .filter_map(|v| chain.get(v).copied())
            .collect::<Vec<_>>()
    };
    let mut ops = Vec::new();
    let mut longest = 0u64;
    let mut results = Vec::new();
    for op in cx.block_ops(entry) {
        if cx.has_trait(op, ipu_ir::Trait::ReturnLike) {
            results = cx
                .operands(op)
                .iter()
                .map(|v| chain.get(v).copied().unwrap_or(0))
                .collect();
            continue;
        }
        if let Some(call) = ipu_dialects::func::Call::cast(cx, op) {
            let name = cx.str(call.callee(cx));
            let g = cx
                .nearest_symbol_table(op)
                .and_then(|t| cx.lookup_symbol(t, name))
                .filter(|_| depth < 64)
                .ok_or_else(|| format!("the floor is computed on nn ops: a call of @{name}, which it cannot follow"))?;
            let operand_chains: Vec<u64> = cx
                .operands(op)
                .iter()
                .map(|v| chain.get(v).copied().unwrap_or(0))
                .collect();
            let (sub, ends) = floor_in(cx, g, target, &operand_chains, depth + 1)?;
            longest = longest.max(sub.cycles);
            ops.extend(sub.ops);
            for (r, e) in cx.results(op).zip(ends) {
                chain.insert(r, e);
            }
            continue;
        }
        let kind = ipu_dialects::nn::op_kind(cx, op)
            .map_err(|e| format!("the floor is computed on nn ops: {e}"))?;
        let (compute, exchange, phases) = op_floor(cx, op, &kind, target);
        let before = at(&chain, op).into_iter().max().unwrap_or(0);
        let here = before + compute + exchange;
        for r in cx.results(op) {
            chain.insert(r, here);
        }
        longest = longest.max(here);
        ops.push(OpFloor {
            op,
            compute,
            exchange,
            phases,
            chain: here,
        });
    }
    let floor = Floor {
        cycles: longest,
        ops,
    };
    Ok((floor, results))
}

/// The shape and element type of a value (`None` for a non-tensor).
fn tensor(cx: &Context, v: Value) -> Option<(Vec<u64>, ElementType)> {
    let t = ipu_dialects::nn::tensor_type(cx, cx.value_type(v)).ok()?;
    Some((t.shape.iter().map(|&d| d as u64).collect(), t.dtype))
}

fn numel(shape: &[u64]) -> u64 {
    shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
}

/// Whether a view: an op that moves no element through the datapath.
fn is_view(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Reshape { .. }
            | OpKind::Transpose { .. }
            | OpKind::Broadcast { .. }
            | OpKind::Slice { .. }
            | OpKind::Concat { .. }
            | OpKind::Constant(_)
    )
}

/// Whether `v` can be placed, and copied, wherever it is needed: a function
/// argument or a constant, or a view of one.
fn placeable(cx: &Context, v: Value) -> bool {
    match cx.value_def(v) {
        ValueDef::BlockArg(..) => true,
        ValueDef::Result(op, _) => match ipu_dialects::nn::op_kind(cx, op) {
            Ok(OpKind::Constant(_)) => true,
            Ok(k) if is_view(&k) => cx.operands(op).iter().all(|&o| placeable(cx, o)),
            _ => false,
        },
    }
}

/// Vector lanes of an element of `bytes` bytes on the datapath.
fn lanes(target: &Target, bytes: u64) -> u64 {
    let v = &target.vector;
    u64::from(match bytes {
        1 => v.f8_lanes,
        2 => v.f16_lanes,
        4 => v.f32_lanes,
        b => (v.datapath_bits / (8 * b.max(1) as u32)).max(1),
    })
    .max(1)
}

/// One vector instruction per datapath's worth of the op's largest tensor at
/// its widest element, over all tiles.
fn vector_cycles(cx: &Context, op: Op, target: &Target) -> u64 {
    let (mut elements, mut bytes) = (0u64, 1u64);
    for v in cx.operands(op).iter().copied().chain(cx.results(op)) {
        if let Some((shape, e)) = tensor(cx, v) {
            elements = elements.max(numel(&shape));
            bytes = bytes.max(e.byte_size() as u64);
        }
    }
    let per_tile = lanes(target, bytes) * u64::from(target.tiles().max(1));
    elements.div_ceil(per_tile)
}

/// The AMP class of an element type, if the AMP takes it.
fn amp_class(e: ElementType) -> Option<ElemType> {
    match e {
        ElementType::F32 => Some(ElemType::F32),
        ElementType::F16 | ElementType::BF16 => Some(ElemType::F16),
        ElementType::F8E4M3FN | ElementType::F8E5M2 => Some(ElemType::F8),
        _ => None,
    }
}

/// MACs per tile cycle and the partial sums' bytes of a matmul of
/// `input` operands into a `result`.
fn mac_rate(target: &Target, input: ElementType, result: ElementType) -> (u64, u64) {
    let partial_bytes = |p: ElemType| match p {
        ElemType::F32 => 4,
        ElemType::F16 => 2,
        ElemType::F8 => 1,
    };
    if let Some(class) = amp_class(input) {
        let exact = amp_class(result).and_then(|p| target.amp_mode(class, p));
        let fastest = target
            .amp
            .iter()
            .filter(|a| a.input == class)
            .max_by_key(|a| a.macs_per_cycle);
        if let Some(a) = exact.or(fastest) {
            return (
                u64::from(a.macs_per_cycle.max(1)),
                partial_bytes(a.partials),
            );
        }
    }
    let b = result.byte_size().max(1) as u64;
    (lanes(target, b), b)
}

/// Compute cycles, exchange cycles and exchange phases of one op.
fn op_floor(cx: &Context, op: Op, kind: &OpKind, target: &Target) -> (u64, u64, u32) {
    if is_view(kind) {
        return (0, 0, 0);
    }
    let tiles = u64::from(target.tiles().max(1));
    let x = &target.exchange;
    let phase = |bytes_per_tile: u64| {
        u64::from(x.phase_fixed_cycles)
            + bytes_per_tile.div_ceil(u64::from(x.receive_bytes_per_cycle.max(1)))
            + u64::from(x.sync_cycles)
    };
    let result = cx.results(op).next().and_then(|r| tensor(cx, r));
    let input = cx.operands(op).first().and_then(|&v| tensor(cx, v));
    match (kind, &input, &result) {
        (OpKind::MatMul, Some((a, ae)), Some((out, re))) if a.len() >= 2 && out.len() >= 2 => {
            let (ae, re) = (*ae, *re);
            let k = a[a.len() - 1];
            let (m, n) = (out[out.len() - 2], out[out.len() - 1]);
            let batch = numel(&out[..out.len() - 2]);
            let (rate, partial) = mac_rate(target, ae, re);
            let macs = numel(&[batch, m, n, k]);
            let compute = macs.div_ceil(rate * tiles);
            let b_operand = cx.operand(op, 1);
            let be = tensor(cx, b_operand).map_or(ae, |(_, e)| e);
            let grid = MatmulGrid {
                batch,
                m,
                n,
                k,
                a_bytes: ae.byte_size() as u64,
                b_bytes: be.byte_size() as u64,
                partial_bytes: partial,
                a_placeable: placeable(cx, cx.operand(op, 0)),
                b_placeable: placeable(cx, b_operand),
            };
            let (exchange, phases) = grid.least_exchange(target);
            (compute, exchange, phases)
        }
        (OpKind::Softmax { axis } | OpKind::LogSoftmax { axis }, Some((s, _)), _) => {
            let len = s.get(*axis).copied().unwrap_or(1).max(1);
            let split = split_rows(numel(s) / len, len, tiles);
            let phases = if split { 2 } else { 0 };
            (
                vector_cycles(cx, op, target),
                u64::from(phases) * phase(4),
                phases,
            )
        }
        (OpKind::LayerNorm { axis, .. }, Some((s, _)), _) => {
            let row = numel(s.get(*axis..).unwrap_or(&[]));
            let rows = numel(s) / row.max(1);
            let split = split_rows(rows, row, tiles);
            (
                vector_cycles(cx, op, target),
                if split { phase(8) } else { 0 },
                u32::from(split),
            )
        }
        (OpKind::Reduce { .. }, Some((s, _)), Some((out, _))) => {
            let outputs = numel(out).max(1);
            let split = split_rows(outputs, numel(s) / outputs, tiles);
            (
                vector_cycles(cx, op, target),
                if split { phase(4) } else { 0 },
                u32::from(split),
            )
        }
        _ => (vector_cycles(cx, op, target), 0, 0),
    }
}

/// Whether spreading `rows` rows of `len` elements over all tiles splits
/// rows between tiles.
fn split_rows(rows: u64, len: u64, tiles: u64) -> bool {
    rows < tiles && len > 1
}

/// A matmul's dimensions and operands, for its least exchange.
#[derive(Clone, Copy, Debug)]
pub struct MatmulGrid {
    pub batch: u64,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub a_bytes: u64,
    pub b_bytes: u64,
    pub partial_bytes: u64,
    /// The operand can be placed (and copied) where needed at no cost.
    pub a_placeable: bool,
    pub b_placeable: bool,
}

impl MatmulGrid {
    /// The least exchange cycles of any grid of all tiles, and its phases.
    pub fn least_exchange(&self, target: &Target) -> (u64, u32) {
        let x = &target.exchange;
        let tiles = f64::from(target.tiles().max(1));
        let per_phase = u64::from(x.phase_fixed_cycles) + u64::from(x.sync_cycles);
        // Tiles per batch: batches share nothing.
        let q = tiles / (self.batch.max(1) as f64).min(tiles);
        if q <= 1.0 {
            return (0, 0);
        }
        let b = self.batch as f64;
        let bytes = |x: u64, y: u64, e: u64| b * x as f64 * y as f64 * e as f64;
        // The grid's factors (pm, pn, pk): their bounds and the bytes each
        // one more tile along it moves (0: free to grow).
        let cost_m = if self.b_placeable {
            0.0
        } else {
            bytes(self.k, self.n, self.b_bytes)
        };
        let cost_n = if self.a_placeable {
            0.0
        } else {
            bytes(self.m, self.k, self.a_bytes)
        };
        let cost_k = bytes(self.m, self.n, self.partial_bytes);
        let dims = [
            (self.m as f64, cost_m),
            (self.n as f64, cost_n),
            (self.k as f64, cost_k),
        ];
        let shared = f64::from(
            x.supertile_shared_receive_bytes_per_cycle
                .max(x.receive_bytes_per_cycle)
                .max(1),
        );
        let receive = f64::from(x.receive_bytes_per_cycle.max(1));
        let mut best: Option<(u64, u32)> = None;
        // Which costly factors may exceed 1: every subset, as each brings a
        // phase's fixed cycles and sync.
        for mask in 0u32..8 {
            let grows: Vec<bool> = (0..3)
                .map(|i| dims[i].1 == 0.0 || mask & (1 << i) != 0)
                .collect();
            let Some(f) = least_bytes(&dims, &grows, q) else {
                continue;
            };
            let moves = |i: usize| dims[i].1 > 0.0 && f[i] > 1.0 + 1e-9;
            let copied = dims[0].1 * (f[0] - 1.0) + dims[1].1 * (f[1] - 1.0);
            let partials = dims[2].1 * (f[2] - 1.0);
            let mut cycles = 0u64;
            let mut phases = 0u32;
            if moves(0) || moves(1) {
                phases += 1;
                cycles += per_phase + (copied / (tiles * shared)).ceil() as u64;
            }
            if moves(2) {
                phases += 1;
                cycles += per_phase + (partials / (tiles * receive)).ceil() as u64;
            }
            if best.is_none_or(|(c, _)| cycles < c) {
                best = Some((cycles, phases));
            }
        }
        best.unwrap_or((0, 0))
    }
}

/// The factors `f` (each in `[1, bound]`, fixed at 1 unless it `grows`)
/// whose product is `q` and whose bytes `sum cost * (f - 1)` are least;
/// `None` when the bounds cannot reach `q`. Free factors (cost 0) take what
/// they can first; the others share the rest where their marginal bytes
/// meet (`cost * f` equal), found by bisection.
fn least_bytes(dims: &[(f64, f64); 3], grows: &[bool], q: f64) -> Option<[f64; 3]> {
    let mut f = [1.0f64; 3];
    let mut rest = q;
    for i in 0..3 {
        if grows[i] && dims[i].1 == 0.0 {
            f[i] = dims[i].0.max(1.0).min(rest);
            rest /= f[i];
        }
    }
    let costly: Vec<usize> = (0..3).filter(|&i| grows[i] && dims[i].1 > 0.0).collect();
    if rest <= 1.0 + 1e-12 {
        return Some(f);
    }
    let reach: f64 = costly.iter().map(|&i| dims[i].0.max(1.0)).product();
    if reach < rest * (1.0 - 1e-12) {
        return None;
    }
    let at = |lambda: f64, f: &mut [f64; 3]| {
        let mut p = 1.0;
        for &i in &costly {
            f[i] = (lambda / dims[i].1).clamp(1.0, dims[i].0.max(1.0));
            p *= f[i];
        }
        p
    };
    let (mut lo, mut hi) = (0f64, 0f64);
    for &i in &costly {
        lo = lo.min((dims[i].1).ln());
        hi = hi.max((dims[i].1 * dims[i].0.max(1.0)).ln());
    }
    lo = lo.min(hi) - 1.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if at(mid.exp(), &mut f) < rest {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    at(hi.exp(), &mut f);
    Some(f)
}
