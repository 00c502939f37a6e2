//! Matmul on the AMP (`tile.matmul`).
//!
//! Forms: `[M, K] x [K, N]`; a batched lhs times shared weights
//! (`[..., M, K] x [K, N]`) is that product on the rows of all batches
//! (reshape views around a 2-D matmul); a batch of products
//! (`[..., M, K] x [..., K, N]`, either batch possibly 1 or missing) is a
//! rank-3 `tile.matmul` over `[B, M, K] x [B, K, N]`, one group of tiles
//! per batch (reshape views flatten the batch dimensions). A transposed
//! operand (`q x k^T`) is a transpose view: the exchange delivers the
//! operand's blocks in the layout the GEMM reads. A transposed B that the
//! GEMM reads in one K-chunk is given to it as it lies instead (the
//! `tile.matmul` takes `rhs_transposed`, B as [..., N, K]; the kernel's
//! `BT` form loads the AMP banks column by column, `ampswapt`), so the
//! exchange moves whole runs of B's rows rather than 2-byte elements.
//!
//! Mapping: the planner ([`plan_matmul`]) cuts each product into a
//! pm x pn x pk grid of blocks, one per tile (a row block is pk shares of
//! rows). The GEMM writes each tile's partials row-major (any width: a
//! block of more than 16 columns costs the kernel one issue per row). With
//! split K the pk tiles of a block add it up together: each sends the
//! other shares of its partials to their tiles and adds the shares it
//! receives to its own (one `partials` pass per six of them, its own
//! first, then in K order), so the result is the (batch x) (pm * pk) x pn
//! grid on all the matmul's tiles, and an elementwise epilogue runs on all
//! of them. A 2-D matmul's operands are wanted in the plan's grids (A as
//! pm x pk, its rows spread over the free tiles so that no tile sends a
//! whole block; B as pk x pn), A on tiles outside the matmul when the
//! kernel reads it in K-chunks, so every matmul tile receives its block
//! already chunked. Kernel: `gemm_amp` specialised for the block (chunked
//! when K x 16 weights exceed an AMP bank), with the re-layouts it needs
//! (A in K-chunks and B in 16-column blocks when read in place, which the
//! exchange or the load otherwise delivers them as; FP8 widened to f16
//! unless it arrived so: an FP8 parameter or constant only the matmul reads
//! is widened at load or at compile time, `nn_to_tile::legalize`), then the
//! split-K shares added up and converted to the result type.

use super::matmul_plan::{
    gemm_spec, plan_matmul, result_kernels, tile_kernels, MatmulPlan, ResultEpilogue,
    ResultKernels, TileBudget,
};
use super::{build_op, fp8_scale, kernel_cycles, records, DeviceOp, TileEnv};
use crate::ProgramBuilder;
use ipu_dialects::nn;
use ipu_dialects::tile::{self, Mapping};
use ipu_ir::{Context, Diagnostic, Loc, Op, Type, Value};
use ipu_isa::kernels::{ElemType, EwOp, KernelSpec};
use ipu_program::elem::{is_f8, value_elem};
use ipu_program::gemm::{GemmBlocks, GemmMode, N_BLOCK};
use ipu_program::geometry::{blocks, mapping_of, spread, Block, Layout, Run};
use ipu_program::Word;
use ipu_target::Target;
use rustc_hash::{FxHashMap, FxHashSet};

pub struct Matmul;

/// The operands' shapes, B as [..., K, N] (a `tile.matmul` given B
/// transposed holds it as [..., N, K]).
fn shapes(cx: &Context, op: Op) -> (Vec<i64>, Vec<i64>) {
    let mut b = cx.value_shape(cx.operand(op, 1));
    if rhs_transposed(cx, op) && b.len() >= 2 {
        let r = b.len();
        b.swap(r - 2, r - 1);
    }
    (cx.value_shape(cx.operand(op, 0)), b)
}

/// Whether `op` (a `tile.matmul`) reads its rhs transposed, [..., N, K].
fn rhs_transposed(cx: &Context, op: Op) -> bool {
    tile::Matmul(op).rhs_transposed(cx)
}

/// Whether `v` is a transpose view that puts its input's last (contiguous)
/// dimension second to last: the matmul's K. Read as B, every column of it
/// lies scattered over rows of the input; given transposed ([..., N, K],
/// the input's own rows) the exchange moves it in whole runs.
fn is_transposed_rows(cx: &Context, v: Value) -> bool {
    let Some(d) = cx.defining_op(v).and_then(|d| tile::View::cast(cx, d)) else {
        return false;
    };
    let p = d.permutation(cx).unwrap_or(&[]);
    let r = p.len();
    d.kind(cx) == "transpose" && r >= 2 && p[r - 2] == r as i64 - 1
}

/// The gemm_amp specialisation for `g`, reading B transposed (`BT`) when
/// `bt`.
fn gemm_spec_for(g: &GemmBlocks, bt: bool) -> KernelSpec {
    let mut spec = gemm_spec(g);
    if bt {
        spec.params.insert("BT".into(), 1);
    }
    spec
}

/// The element types of a matmul's operands and result.
fn elems_of(cx: &Context, op: Op) -> Result<[ElemType; 3], String> {
    let e = |v| value_elem(cx, v).ok_or("has an element type without kernels");
    Ok([
        e(cx.operand(op, 0))?,
        e(cx.operand(op, 1))?,
        e(cx.result(op, 0))?,
    ])
}

/// The AMP mode of a matmul (nn or tile op: same operands and result).
fn mode_of(cx: &Context, op: Op) -> Result<GemmMode, String> {
    let [a, b, r] = elems_of(cx, op)?;
    GemmMode::select(a, b, r)
}

/// How a matmul's operands are arranged.
enum Form {
    Plain,
    /// `[..., M, K] x [K, N]`: the rows of every batch times shared weights.
    Rows {
        rows: i64,
    },
    /// `[..., M, K] x [..., K, N]`: `batch` products; whether each side has it.
    Batch {
        batch: i64,
        a: bool,
        b: bool,
    },
}

fn form_of(a: &[i64], b: &[i64]) -> Result<Form, String> {
    if a.len() < 2 || b.len() < 2 {
        return Err(format!(
            "is not lowered yet for rank {} x rank {} operands (operands of rank 1 are not)",
            a.len(),
            b.len()
        ));
    }
    let (ba, bb) = (&a[..a.len() - 2], &b[..b.len() - 2]);
    if ba.is_empty() && bb.is_empty() {
        return Ok(Form::Plain);
    }
    let prod = |s: &[i64]| s.iter().product::<i64>();
    if bb.is_empty() {
        return Ok(Form::Rows {
            rows: prod(ba) * a[a.len() - 2],
        });
    }
    // Batch dimensions broadcast against each other; each side must have
    // them all or none of them (a batch of 1).
    let n = ba.len().max(bb.len());
    let pad = |s: &[i64]| -> Vec<i64> {
        let mut v = vec![1; n - s.len()];
        v.extend_from_slice(s);
        v
    };
    let (pa, pb) = (pad(ba), pad(bb));
    let full: Vec<i64> = pa.iter().zip(&pb).map(|(&x, &y)| x.max(y)).collect();
    let side = |p: &[i64]| -> Option<bool> {
        if p == full.as_slice() {
            Some(true)
        } else if p.iter().all(|&d| d == 1) {
            Some(false)
        } else {
            None
        }
    };
    match (side(&pa), side(&pb)) {
        (Some(a), Some(b)) => Ok(Form::Batch {
            batch: prod(&full),
            a: a || prod(&full) == 1,
            b,
        }),
        _ => Err(format!(
            "broadcasts batch dimensions {ba:?} against {bb:?} partially, which is not lowered yet"
        )),
    }
}

/// Plans the 2-D or per-batch product of `[m, k] x [k, n]`.
#[allow(clippy::too_many_arguments)]
fn plan_2d(
    target: &Target,
    tiles: u64,
    m: i64,
    k: i64,
    n: i64,
    mode: GemmMode,
    elems: [ElemType; 3],
    budget: &TileBudget,
    ep: &ResultEpilogue,
) -> Result<MatmulPlan, String> {
    plan_matmul(
        target, tiles, m as u64, k as u64, n as u64, mode, elems, budget, ep,
    )
    .map_err(|e| format!("[{m}x{k}] x [{k}x{n}] on target {}: {e}", target.name))
}

/// What the readers of `op`'s result do that its reduction may take in
/// (each the one reader of the value before): a row vector of its columns
/// added (a bias), then a GELU, then a cast.
fn result_epilogue(cx: &Context, op: Op) -> ResultEpilogue {
    let mut ep = ResultEpilogue::NONE;
    let only_reader = |v: Value| match cx.uses(v) {
        [u] => Some((u.op, u.index as usize)),
        _ => None,
    };
    let mut v = cx.result(op, 0);
    let Some((add, i)) = only_reader(v) else {
        return ep;
    };
    if cx.name_str(add) != nn::Add::NAME || cx.operands(add).len() != 2 {
        return ep;
    }
    let vec = cx.operand(add, 1 - i);
    let (rs, vs) = (cx.value_shape(v), cx.value_shape(vec));
    ep.bias = vs.last() == rs.last()
        && vs[..vs.len().saturating_sub(1)].iter().all(|&d| d == 1)
        && value_elem(cx, vec) == value_elem(cx, v);
    if !ep.bias {
        return ep;
    }
    v = cx.result(add, 0);
    if let Some((gelu, _)) = only_reader(v).filter(|&(o, _)| cx.name_str(o) == nn::Gelu::NAME) {
        ep.act = Some(EwOp::Gelu);
        v = cx.result(gelu, 0);
    }
    if let Some((cast, _)) = only_reader(v).filter(|&(o, _)| cx.name_str(o) == nn::Cast::NAME) {
        ep.cast = value_elem(cx, cx.result(cast, 0));
    }
    ep
}

/// The plan of matmul `op` (nn), its blocks and its batch, within the
/// memory its tiles have left beside what else is resident there.
fn plan_op(
    cx: &Context,
    op: Op,
    env: &TileEnv,
) -> Result<(MatmulPlan, GemmBlocks, Option<i64>), String> {
    let (a, b) = shapes(cx, op);
    let mode = mode_of(cx, op)?;
    let elems = elems_of(cx, op)?;
    let target = env.target;
    let tiles = target.tiles() as u64;
    let resident = env.resident_at(op);
    let flag = |i: usize| resident.operands.get(i).copied().unwrap_or(false);
    let mut budget = TileBudget {
        during: &resident.during,
        at_load: &resident.at_load,
        resident: [flag(0), flag(1)],
        groups: 1,
        max_copies: resident.max_copies,
        instances: resident.instances.max(1),
    };
    let (m, k, n) = (a[a.len() - 2], a[a.len() - 1], b[b.len() - 1]);
    let ep = result_epilogue(cx, op);
    Ok(match form_of(&a, &b)? {
        Form::Plain => {
            let p = plan_2d(target, tiles, m, k, n, mode, elems, &budget, &ep)?;
            let g = p.blocks(m as u64, k as u64, n as u64);
            (p, g, None)
        }
        Form::Rows { rows } => {
            let p = plan_2d(target, tiles, rows, k, n, mode, elems, &budget, &ep)?;
            let g = p.blocks(rows as u64, k as u64, n as u64);
            (p, g, None)
        }
        Form::Batch {
            batch,
            a: ab,
            b: bb,
        } => {
            if batch as u64 > tiles {
                return Err(format!(
                    "has a batch of {batch} products, more than the {tiles} tiles of {}, which is not lowered yet",
                    target.name
                ));
            }
            budget.groups = batch as u64;
            let p = plan_2d(
                target,
                tiles / batch as u64,
                m,
                k,
                n,
                mode,
                elems,
                &budget,
                &ep,
            )?;
            let g = p
                .blocks(m as u64, k as u64, n as u64)
                .batched(batch as u64, ab, bb);
            (p, g, Some(batch))
        }
    })
}

/// The blocks of a `tile.matmul` from its `plan`.
fn blocks_of(cx: &Context, op: Op) -> Result<(GemmBlocks, [u64; 2]), String> {
    let (plan, tiles) = (tile::Matmul(op).plan(cx), tile::Matmul(op).tiles(cx));
    let &[first, stride] = tiles else {
        return Err("has malformed tiles".into());
    };
    let (a, b) = shapes(cx, op);
    let mode = mode_of(cx, op)?;
    let g = match (plan, a.len()) {
        (&[pm, pn, pk], 2) => GemmBlocks::new(
            a[0] as u64,
            a[1] as u64,
            b[1] as u64,
            [pm as u64, pn as u64, pk as u64],
            mode,
        ),
        (&[pb, pm, pn, pk], 3) => {
            let batch = a[0].max(b[0]);
            if pb != batch {
                return Err(format!(
                    "plans {pb} batch groups for a batch of {batch}; one group per batch is lowered"
                ));
            }
            GemmBlocks::new(
                a[1] as u64,
                a[2] as u64,
                b[2] as u64,
                [pm as u64, pn as u64, pk as u64],
                mode,
            )
            .batched(batch as u64, a[0] == batch, b[0] == batch)
        }
        _ => return Err("has a plan that does not match its operands".into()),
    };
    Ok((g, [first as u64, stride as u64]))
}

/// What the kernel calls can lay out today: K split evenly into multiples of
/// the AMP's K-block (and of its K-chunk), N evenly into 16-column blocks.
fn check_blocks(g: &GemmBlocks, target: &Target) -> Result<(), String> {
    let k_block = g.mode.k_block(target).unwrap_or(16);
    let (pm, pn, pk) = (g.pm, g.pn, g.pk);
    let (bm, bk, bn) = (g.bm, g.bk, g.bn);
    if !g.k.is_multiple_of(pk)
        || !g.n.is_multiple_of(pn)
        || !bk.is_multiple_of(k_block)
        || !bn.is_multiple_of(N_BLOCK)
    {
        return Err(format!(
            "is planned as {pm}x{pn}x{pk} blocks of {bm}x{bk}x{bn}: the code generator needs K split evenly into multiples of {k_block} and N split evenly into multiples of {N_BLOCK}"
        ));
    }
    if let Some(kc) = g.k_chunk() {
        if bk % kc != 0 {
            return Err(format!(
                "has a K block of {bk}, not a multiple of the AMP chunk {kc}"
            ));
        }
    }
    Ok(())
}

/// The rectangles of operand `i` each tile reads (B's as [N, K] when it is
/// given transposed, `bt`).
fn needs(g: &GemmBlocks, [first, stride]: [u64; 2], i: usize, bt: bool) -> Vec<Block> {
    let mut out = Vec::new();
    for bi in 0..g.pb {
        for k in 0..g.pk {
            for im in 0..g.pm {
                for jn in 0..g.pn {
                    let tile = g.tile(first, stride, bi, k, im, jn);
                    let (mut lo, mut hi) = if i == 0 {
                        (
                            vec![(im * g.bm) as i64, (k * g.bk) as i64],
                            vec![
                                ((im + 1) * g.bm).min(g.m) as i64,
                                ((k + 1) * g.bk).min(g.k) as i64,
                            ],
                        )
                    } else {
                        let (mut lo, mut hi) = (
                            vec![(k * g.bk) as i64, (jn * g.bn) as i64],
                            vec![
                                ((k + 1) * g.bk).min(g.k) as i64,
                                ((jn + 1) * g.bn).min(g.n) as i64,
                            ],
                        );
                        if bt {
                            lo.swap(0, 1);
                            hi.swap(0, 1);
                        }
                        (lo, hi)
                    };
                    if g.ranked_batch {
                        let own = if i == 0 { g.a_batched } else { g.b_batched };
                        let b = if own { bi as i64 } else { 0 };
                        lo.insert(0, b);
                        hi.insert(0, b + 1);
                    }
                    let blk = Block { tile, lo, hi };
                    if !blk.is_empty() {
                        out.push(blk);
                    }
                }
            }
        }
    }
    out
}

/// `v` with its last two dimensions swapped, as a view inserted before
/// `at`; `v` being a transpose view itself, one view of its input (or that
/// input itself, when the two transposes cancel).
fn transpose_last_two(cx: &mut Context, v: Value, at: Op, loc: Loc, tiles: u32) -> Value {
    let (shape, e) = cx.tensor_parts(cx.value_type(v)).expect("a tensor");
    let (mut shape, r) = (shape.to_vec(), shape.len());
    shape.swap(r - 2, r - 1);
    let mut perm: Vec<i64> = (0..r as i64).collect();
    perm.swap(r - 2, r - 1);
    let (mut input, mut loc) = (v, loc);
    if let Some(d) = cx
        .defining_op(v)
        .and_then(|d| tile::View::cast(cx, d))
        .filter(|d| d.kind(cx) == "transpose")
    {
        let p = d.permutation(cx).unwrap_or(&[]).to_vec();
        let d = d.op();
        if p.len() == r && p.iter().all(|&i| (0..r as i64).contains(&i)) {
            // Dimension i of the result is dimension perm[i] of v, which is
            // dimension p[perm[i]] of v's input.
            perm = perm.iter().map(|&i| p[i as usize]).collect();
            input = cx.operand(d, 0);
            loc = cx.fused_loc(vec![cx.op_loc(d), loc]);
            if perm.iter().enumerate().all(|(i, &j)| j == i as i64) {
                return input;
            }
        }
    }
    let ty = cx.tensor_type(&shape, e);
    let attrs = vec![
        ("kind", cx.string_attr("transpose")),
        ("mapping", spread(&shape, tiles).to_attr(cx)),
        ("permutation", cx.i64_array_attr(perm)),
    ];
    let o = build_op(cx, tile::View::NAME, &[input], Some(ty), attrs, loc);
    cx.insert_op_before(at, o);
    cx.result(o, 0)
}

/// A reshape view of `v` to `shape`, inserted before `at`.
fn reshape(cx: &mut Context, v: Value, shape: &[i64], at: Op, loc: Loc, tiles: u32) -> Value {
    let (_, e) = cx.tensor_parts(cx.value_type(v)).expect("a tensor");
    let ty = cx.tensor_type(shape, e);
    let attrs = vec![
        ("kind", cx.string_attr("reshape")),
        ("mapping", spread(shape, tiles).to_attr(cx)),
    ];
    let o = build_op(cx, tile::View::NAME, &[v], Some(ty), attrs, loc);
    cx.insert_op_before(at, o);
    cx.result(o, 0)
}

impl DeviceOp for Matmul {
    fn reads_operand_buffers(&self) -> bool {
        true
    }

    fn plans_within_memory(&self) -> bool {
        true
    }

    fn fits_in_memory(&self, cx: &Context, op: Op, env: &TileEnv) -> bool {
        plan_op(cx, op, env).is_ok()
    }

    /// Its resident operands' blocks on its tiles, in the operand buffers
    /// the code generator sizes for them.
    fn resident_operand_bytes(
        &self,
        cx: &Context,
        op: Op,
        env: &TileEnv,
        resident: &dyn Fn(usize) -> bool,
    ) -> Vec<(u32, u64)> {
        let Ok((_, g, _)) = plan_op(cx, op, env) else {
            return Vec::new();
        };
        let eb = |i: usize| value_elem(cx, cx.operand(op, i)).map_or(4, |e| e.bytes() as u64);
        let mut out = Vec::new();
        for i in (0..2).filter(|&i| resident(i)) {
            let bytes = if i == 0 {
                g.bm * g.bk * eb(0)
            } else {
                g.bk * g.bn * eb(1) + 8 * g.bm
            };
            // Each held in a buffer of its own, with the kernels' slack.
            let bytes = ipu_program::stored_bytes(bytes);
            out.extend(needs(&g, [0, 1], i, false).iter().map(|b| (b.tile, bytes)));
        }
        out
    }

    fn nn_ops(&self) -> Vec<&'static str> {
        vec![nn::MatMul::NAME]
    }

    fn tile_op(&self) -> &'static str {
        tile::Matmul::NAME
    }

    /// The MACs at the AMP mode the types select (its MACs per cycle).
    fn peak_tile_cycles(&self, cx: &Context, op: Op, target: &Target) -> u64 {
        let (a, _) = shapes(cx, op);
        let k = a.last().copied().unwrap_or(0).max(0) as u64;
        let out: u64 = cx
            .value_shape(cx.result(op, 0))
            .iter()
            .map(|&d| d.max(0) as u64)
            .product();
        let rate = mode_of(cx, op)
            .ok()
            .and_then(|m| {
                target.amp_mode(
                    ipu_program::elem::amp_class(m.input),
                    ipu_program::elem::amp_class(m.partials),
                )
            })
            .map_or(1, |m| u64::from(m.macs_per_cycle.max(1)));
        (out * k).div_ceil(rate)
    }

    fn operand_mappings(&self, cx: &Context, op: Op, env: &TileEnv) -> Vec<(usize, Mapping)> {
        let target = env.target;
        let (a, b) = shapes(cx, op);
        let Ok(Form::Plain) = form_of(&a, &b) else {
            return Vec::new();
        };
        let Ok((p, g, _)) = plan_op(cx, op, env) else {
            return Vec::new();
        };
        // When the GEMM reads A in K-chunks, A's blocks are best kept on
        // tiles outside the matmul, so that every matmul tile receives its
        // block already chunked instead of re-laying it out (the slowest
        // tile bounds the superstep).
        let all = target.tiles() as u64;
        let apart = g.k_chunk().is_some() && p.tiles() + p.pm * p.pk <= all;
        // Each A block goes to pn tiles: held by one tile, its send would
        // bound the exchange, so its rows are spread over as many tiles as
        // there are (each A block's receivers, pairs of neighbouring N
        // blocks, take it at the supertile's rate).
        let avail = if apart { all - p.tiles() } else { all };
        let rows = (p.pm * (avail / (p.pm * p.pk)).max(1)).min(g.m.max(1));
        vec![
            (
                0,
                Mapping {
                    grid: vec![rows as i64, p.pk as i64],
                    first_tile: if apart { p.tiles() as i64 } else { 0 },
                    stride: 1,
                },
            ),
            (
                1,
                Mapping {
                    grid: vec![p.pk as i64, p.pn as i64],
                    first_tile: 0,
                    stride: 1,
                },
            ),
        ]
    }

    fn to_tile(&self, cx: &mut Context, op: Op, env: &TileEnv) -> Result<Op, Diagnostic> {
        let loc = cx.op_loc(op);
        let err = |m: String| Diagnostic::error(loc, format!("'nn.matmul' op {m}"));
        let (a, b) = shapes(cx, op);
        let target = env.target;
        let tiles = target.tiles();
        let (mut av, mut bv) = (cx.operand(op, 0), cx.operand(op, 1));
        let result_ty: Type = cx.value_type(cx.result(op, 0));
        let rshape = cx.value_shape(cx.result(op, 0));
        let form = form_of(&a, &b).map_err(err)?;
        let (m, k, n) = (a[a.len() - 2], a[a.len() - 1], b[b.len() - 1]);
        // The product planned: 2-D, or per batch over its share of the tiles.
        let (plan, g, batch) = plan_op(cx, op, env).map_err(err)?;
        // B a transpose view of rows computed on the device, read in one
        // K-chunk: given transposed, the GEMM's banks take it column by
        // column (`BT`) and the exchange moves whole runs of its rows.
        let rhs_resident = env
            .resident_at(op)
            .operands
            .get(1)
            .copied()
            .unwrap_or(false);
        let bt = g.k_chunk().is_none() && !rhs_resident && is_transposed_rows(cx, bv);
        if bt {
            bv = transpose_last_two(cx, bv, op, loc, tiles);
        }
        match form {
            Form::Plain => {}
            Form::Rows { rows } => av = reshape(cx, av, &[rows, k], op, loc, tiles),
            Form::Batch {
                batch,
                a: ab,
                b: bb,
            } => {
                av = reshape(cx, av, &[if ab { batch } else { 1 }, m, k], op, loc, tiles);
                let (r, c) = if bt { (n, k) } else { (k, n) };
                bv = reshape(cx, bv, &[if bb { batch } else { 1 }, r, c], op, loc, tiles);
            }
        }
        check_blocks(&g, target).map_err(err)?;
        let spec = gemm_spec_for(&g, bt);
        let cycles = kernel_cycles(&spec).map_err(err)?;
        let plan_attr = match batch {
            None => vec![plan.pm as i64, plan.pn as i64, plan.pk as i64],
            Some(bt) => vec![bt, plan.pm as i64, plan.pn as i64, plan.pk as i64],
        };
        // With split K each K tile holds a share of its block's rows.
        let m_map = Mapping {
            grid: g.result_grid(),
            first_tile: 0,
            stride: 1,
        };
        let partials = ipu_program::elem::ir_type(plan.mode.partials);
        let mut attrs = vec![
            ("plan", cx.i64_array_attr(plan_attr)),
            ("tiles", cx.i64_array_attr(vec![0, 1])),
            ("kernel", cx.string_attr(&spec.name())),
            ("cycles", cx.i64_attr(cycles as i64)),
            ("partials", cx.type_attr(partials)),
            ("mapping", m_map.to_attr(cx)),
        ];
        if bt {
            attrs.push(("rhs_transposed", ipu_ir::types::Attr::UNIT));
        }
        let (_, e) = cx.tensor_parts(result_ty).expect("a tensor");
        let mm_shape: Vec<i64> = match (&form, batch) {
            (Form::Plain, _) => rshape.clone(),
            (Form::Rows { rows }, _) => vec![*rows, n],
            (_, Some(bt)) => vec![bt, m, n],
            _ => rshape.clone(),
        };
        let mm_ty = cx.tensor_type(&mm_shape, e);
        let mm = build_op(cx, tile::Matmul::NAME, &[av, bv], Some(mm_ty), attrs, loc);
        if mm_shape == rshape {
            return Ok(mm);
        }
        // Back to the result's shape.
        cx.insert_op_before(op, mm);
        let mv = cx.result(mm, 0);
        let attrs = vec![
            ("kind", cx.string_attr("reshape")),
            ("mapping", spread(&rshape, tiles).to_attr(cx)),
        ];
        Ok(build_op(
            cx,
            tile::View::NAME,
            &[mv],
            Some(result_ty),
            attrs,
            loc,
        ))
    }

    fn to_program(&self, op: Op, b: &mut dyn ProgramBuilder<'_>) -> Result<(), Diagnostic> {
        let cx = b.cx();
        let (g, tiles) = blocks_of(cx, op).map_err(|e| b.err(op, e))?;
        let (av, bv) = (cx.operand(op, 0), cx.operand(op, 1));
        let ae = value_elem(cx, av).ok_or_else(|| b.err(op, "has an lhs type without kernels"))?;
        let be = value_elem(cx, bv).ok_or_else(|| b.err(op, "has an rhs type without kernels"))?;
        let out = value_elem(cx, cx.result(op, 0))
            .ok_or_else(|| b.err(op, "has a result type without kernels"))?;
        let (pb, pm, pn, pk) = (g.pb as usize, g.pm as usize, g.pn as usize, g.pk as usize);
        let (bm, bk, bn) = (g.bm as usize, g.bk as usize, g.bn as usize);
        let in_e = g.mode.input;
        let pt = g.mode.partials;
        let ib = in_e.bytes();
        check_blocks(&g, b.target()).map_err(|e| b.err(op, e))?;
        let bt = rhs_transposed(cx, op);
        if let Some(kc) = g.k_chunk().filter(|_| bt) {
            return Err(b.err(
                op,
                format!(
                    "reads its rhs transposed ([N, K]), which the GEMM takes only with K in one chunk, but its \
                     K block of {} needs chunks of {kc} (16 columns of {kc} fill an AMP bank)",
                    g.bk
                ),
            ));
        }
        let kernels = tile_kernels(&g, ae, be);
        let spec = gemm_spec_for(&g, bt);
        let recorded = tile::Matmul(op).kernel(cx);
        if recorded != spec.name() {
            return Err(b.err(
                op,
                format!(
                    "records kernel '{recorded}', but its plan calls for '{}'",
                    spec.name()
                ),
            ));
        }
        let kc = g.k_chunk().map_or(bk, |kc| kc as usize);
        let nkc = bk / kc;
        let set = b.next_set();
        let (sa, sb) = (fp8_scale(cx, av), fp8_scale(cx, bv));
        let (aeb, beb) = (ae.bytes() as u64, be.bytes() as u64);
        // Both operands in one phase: one phase's fixed cost and sync.
        b.begin_one_phase();
        let a_at = b.operand(
            op,
            0,
            &needs(&g, tiles, 0, false),
            g.a_layout(),
            (bm * bk) as u64 * aeb,
            true,
        )?;
        // Given transposed, B's rows (N x K row-major) are the layout the
        // GEMM reads.
        let b_at = b.operand(
            op,
            1,
            &needs(&g, tiles, 1, bt),
            if bt { Layout::RowMajor } else { g.b_layout() },
            (bk * bn) as u64 * beb + 8 * bm as u64,
            true,
        )?;
        b.end_one_phase(op)?;
        b.begin_compute(op, "", tile::Matmul::NAME);
        let psize = (bm * bn * pt.bytes()) as u64;
        let result = cx.result(op, 0);
        let rmap = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
        let finish = result_kernels(&g, out);
        // A result block the GEMM writes as it is: without split K the
        // GEMMs write the result buffer itself (allocated here, in the
        // GEMM's set).
        let in_place = finish.in_place
            && pk == 1
            && rmap
                .block_shape(&cx.value_shape(result))
                .iter()
                .product::<i64>()
                == (bm * bn) as i64;
        let direct = if in_place {
            Some(b.home(op, result, &rmap, &format!("s{set}.result"), false)?)
        } else {
            None
        };
        let tile = |bi: usize, kk: usize, i: usize, j: usize| {
            g.tile(tiles[0], tiles[1], bi as u64, kk as u64, i as u64, j as u64)
        };
        // Each tile's partials buffer and its K block.
        let mut partials: FxHashMap<u32, (usize, usize)> = FxHashMap::default();
        for bi in 0..pb {
            for kk in 0..pk {
                for i in 0..pm {
                    for j in 0..pn {
                        let tl = tile(bi, kk, i, j);
                        let (Some(&a0), Some(&b0)) = (a_at.at.get(&tl), b_at.at.get(&tl)) else {
                            continue;
                        };
                        let unary = |b: &mut dyn ProgramBuilder<'_>,
                                     spec: KernelSpec,
                                     src: usize,
                                     name: &str,
                                     bytes: u64|
                         -> Result<usize, Diagnostic> {
                            let dst = b.alloc(op, tl, &format!("s{set}.{name}"), bytes, true)?;
                            b.call(
                                tl,
                                records::unary(&spec, Word::Buf(src, 0), Word::Buf(dst, 0)),
                            );
                            Ok(dst)
                        };
                        // Widening FP8 to f16 applies the operand's scale.
                        let widen = |b: &mut dyn ProgramBuilder<'_>,
                                     spec: KernelSpec,
                                     src: usize,
                                     name: &str,
                                     bytes: u64,
                                     scale: i32|
                         -> Result<usize, Diagnostic> {
                            let dst = b.alloc(op, tl, &format!("s{set}.{name}"), bytes, true)?;
                            let (s, _) = records::cast_scales(&spec, scale, 0);
                            b.call(
                                tl,
                                records::cast(&spec, Word::Buf(src, 0), Word::Buf(dst, 0), s, 0),
                            );
                            Ok(dst)
                        };
                        let mut a_cur = a0;
                        if let Some(spec) = kernels.widen_a.clone() {
                            a_cur = widen(b, spec, a_cur, "lhs_f16", (bm * bk * 2) as u64, sa)?;
                        }
                        // A received from other tiles arrives in K-chunks; a
                        // block read in place is row-major and is re-laid out here.
                        if nkc > 1 && a_at.in_place.contains(&tl) {
                            let spec = KernelSpec::copy2d(
                                nkc,
                                bm,
                                kc * ib / 8,
                                (bk * ib, kc * ib),
                                (kc * ib, bm * kc * ib),
                            );
                            a_cur = unary(b, spec, a_cur, "lhs_chunks", (bm * bk * ib) as u64 + 8)?;
                        }
                        // B arrives in 16-column blocks; a block read in
                        // place is row-major and is cut into them here.
                        let mut b_cur = b0;
                        let b_bytes = |eb: usize| (bk * bn * eb) as u64 + 8 * bm as u64;
                        if let Some(spec) = kernels
                            .block_b
                            .clone()
                            .filter(|_| !bt && b_at.in_place.contains(&tl))
                        {
                            b_cur = unary(b, spec, b_cur, "rhs_blocked", b_bytes(be.bytes()))?;
                        }
                        if let Some(spec) = kernels.widen_b.clone() {
                            b_cur = widen(b, spec, b_cur, "rhs_f16", b_bytes(2), sb)?;
                        }
                        let c = match direct {
                            Some(res) => res,
                            None => b.alloc(op, tl, &format!("s{set}.partials"), psize, true)?,
                        };
                        partials.insert(tl, (c, kk));
                        // K-chunks of more than 16 columns add up in T.
                        let acc = match spec.gemm_accumulator_bytes() {
                            Some(bytes) => Some(Word::Buf(
                                b.alloc(op, tl, &format!("s{set}.acc"), bytes as u64, true)?,
                                0,
                            )),
                            None => None,
                        };
                        b.call(
                            tl,
                            records::gemm(
                                &spec,
                                Word::Buf(a_cur, 0),
                                Word::Buf(b_cur, 0),
                                Word::Buf(c, 0),
                                acc,
                                if is_f8(in_e) { sa + sb } else { 0 },
                            ),
                        );
                    }
                }
            }
        }
        let (res, incoming) = if pk > 1 {
            exchange_partials(b, op, &g, tiles, &partials, &rmap)?
        } else {
            let res = match direct {
                Some(res) => res,
                None => b.home(op, result, &rmap, &format!("s{set}.result"), false)?,
            };
            (res, FxHashMap::default())
        };
        let epilogue_tiles = result_calls(b, op, &g, &finish, &partials, &incoming, res, in_place);
        b.end_compute(op)?;
        if let Some(tiles) = epilogue_tiles.filter(|t| !t.is_empty()) {
            b.offer_epilogue(result, res, tiles, records::partials_epilogue);
        }
        b.finish_op();
        Ok(())
    }
}

/// With split K, the pk tiles of a block add its partials up, each one
/// share of its rows (its block of the result grid): every tile sends the
/// other shares of its partials to their tiles. Ends the GEMM's compute
/// set, and opens the reduction's: the result's buffer, and each receiving
/// tile's buffer of incoming partials.
fn exchange_partials(
    b: &mut dyn ProgramBuilder<'_>,
    op: Op,
    g: &GemmBlocks,
    tiles: [u64; 2],
    partials: &FxHashMap<u32, (usize, usize)>,
    rmap: &Mapping,
) -> Result<(usize, FxHashMap<u32, usize>), Diagnostic> {
    let cx = b.cx();
    let result = cx.result(op, 0);
    let set = b.next_set();
    let (pb, pm, pn, pk) = (g.pb as usize, g.pm as usize, g.pn as usize, g.pk as usize);
    // The bytes of one tile's share of its block's rows.
    let sbytes = g.share_rows() * g.bn * g.mode.partials.bytes() as u64;
    let tile = |bi: usize, kk: usize, i: usize, j: usize| {
        g.tile(tiles[0], tiles[1], bi as u64, kk as u64, i as u64, j as u64)
    };
    let mut incoming: FxHashMap<u32, usize> = FxHashMap::default();
    let homes: FxHashSet<u32> = blocks(rmap, &cx.value_shape(result))
        .iter()
        .map(|bl| bl.tile)
        .collect();
    let mut runs = Vec::new();
    let mut src = None;
    for bi in 0..pb {
        for i in 0..pm {
            for j in 0..pn {
                for kk in 0..pk {
                    let from = tile(bi, kk, i, j);
                    let Some(&(c, _)) = partials.get(&from) else {
                        continue;
                    };
                    src = Some(c);
                    for share in (0..pk).filter(|&s| s != kk) {
                        let to = tile(bi, share, i, j);
                        if !homes.contains(&to) {
                            continue;
                        }
                        // In K order, the receiving tile's own left out.
                        let slot = (kk - usize::from(kk > share)) as u64;
                        runs.push(Run {
                            src_tile: from,
                            src_off: share as u64 * sbytes,
                            dst_tile: to,
                            dst_off: slot * sbytes,
                            len: sbytes,
                        });
                    }
                }
            }
        }
    }
    let mut inc = None;
    let mut receivers: Vec<u32> = partials
        .keys()
        .copied()
        .filter(|t| homes.contains(t))
        .collect();
    receivers.sort_unstable();
    for tl in receivers {
        let buf = b.alloc(
            op,
            tl,
            &format!("s{set}.partials_in"),
            sbytes * (pk - 1) as u64,
            true,
        )?;
        incoming.insert(tl, buf);
        inc = Some(buf);
    }
    let (Some(src), Some(dst)) = (src, inc) else {
        return Err(b.err(op, "has no partial sums to reduce"));
    };
    b.end_compute(op)?;
    b.exchange(
        op,
        &format!("partial sums of s{set} tile.matmul"),
        vec![(src, dst, runs)],
    )?;
    b.begin_compute(op, ".reduce", "tile.matmul reduction");
    let res = b.home(op, result, rmap, &format!("s{set}.result"), false)?;
    Ok((res, incoming))
}

/// The calls after the GEMMs on each tile of the result's blocks: the
/// incoming partials added to its own share, the conversion to the result
/// type, or a copy into a result block of another shape. Returns the tiles
/// whose last call writes the result, a `partials` call into the result
/// block itself, when a following elementwise op may fold into them
/// (`records::partials_epilogue`).
#[allow(clippy::too_many_arguments)]
fn result_calls(
    b: &mut dyn ProgramBuilder<'_>,
    op: Op,
    g: &GemmBlocks,
    finish: &ResultKernels,
    partials: &FxHashMap<u32, (usize, usize)>,
    incoming: &FxHashMap<u32, usize>,
    res: usize,
    in_place: bool,
) -> Option<Vec<u32>> {
    let result = b.cx().result(op, 0);
    let (pk, bm, bn) = (g.pk as usize, g.bm as usize, g.bn as usize);
    let pt = g.mode.partials;
    // The bytes of one tile's share of its block's rows.
    let sbytes = g.share_rows() * g.bn * pt.bytes() as u64;
    let home_tiles: Vec<u32> = b
        .home_of(result)
        .map(|h| h.blocks.iter().map(|bl| bl.tile).collect())
        .unwrap_or_default();
    // The result written by each tile's last call, a `partials` call
    // into the result block itself: a following elementwise op may fold
    // into it (`records::partials_epilogue`).
    let mut epilogue_tiles = Some(Vec::new()).filter(|_| pk > 1 && finish.convert.is_none());
    for tl in home_tiles {
        let Some(&(c, kk)) = partials.get(&tl) else {
            epilogue_tiles = None;
            continue;
        };
        // The tile's own share of its partials.
        let own = Word::Buf(c, (kk as u64 * sbytes) as u32);
        if let Some(&inc) = incoming.get(&tl) {
            if let Some(t) = &mut epilogue_tiles {
                t.push(tl);
            }
            // The incoming partials added to its own in K order, one
            // pass per run of them (`partials.S`); the last pass writes
            // the result unless it is converted.
            let last = finish.reduce.len() - 1;
            let mut first = 0;
            for (pass, spec) in finish.reduce.iter().enumerate() {
                let out = if pass == last && finish.convert.is_none() {
                    Word::Buf(res, 0)
                } else {
                    own
                };
                b.call(
                    tl,
                    records::partials(spec, own, Word::Buf(inc, (first * sbytes) as u32), out),
                );
                first += spec.param("P") as u64;
            }
        } else {
            epilogue_tiles = None;
        }
        match &finish.convert {
            Some(convert) => b.call(tl, records::unary(convert, own, Word::Buf(res, 0))),
            None if in_place || pk > 1 => {}
            // Partials of the result type, but a result block of another
            // shape than the GEMM's: copied.
            None => b.call(
                tl,
                records::unary(
                    &KernelSpec::elementwise(ipu_isa::kernels::EwOp::Copy, pt, bm * bn),
                    own,
                    Word::Buf(res, 0),
                ),
            ),
        }
    }
    epilogue_tiles
}
