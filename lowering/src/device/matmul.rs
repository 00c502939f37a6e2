//! Matmul on the AMP (`tile.matmul`).
//!
//! Mapping: the planner ([`plan_matmul`]) cuts `[M, K] x [K, N]` into a
//! pm x pn x pk grid of blocks, one per tile; the result lives on the
//! k = 0 tiles as the M x N grid. The operands are wanted in the plan's
//! grids (A as pm x pk, B as pk x pn), A on tiles outside the matmul when
//! the kernel reads it in K-chunks, so every matmul tile receives its block
//! already chunked. Kernel: `gemm_amp` specialised for the block (chunked
//! when K x 16 weights exceed an AMP bank), with the re-layouts it needs
//! (A in K-chunks when read in place, B in 16-column blocks, FP8 widened to
//! f16), then split-K partials sent to the k = 0 tiles, added up, converted
//! to the result type and laid out row-major.

use super::matmul_plan::{gemm_spec, plan_matmul, MatmulPlan};
use super::{build_op, fp8_scale, kernel_cycles, records, DeviceOp, TileEnv};
use crate::elem::{is_f8, value_elem};
use crate::gemm::{GemmBlocks, GemmMode, N_BLOCK};
use crate::geometry::{mapping_of, Block, Layout, Run};
use crate::program::Word;
use crate::tile_to_exchange::ProgramBuilder;
use ipu_dialects::tile::Mapping;
use ipu_ir::{Context, Diagnostic, Op, Type};
use ipu_isa::kernels::{EwOp, KernelSpec};
use ipu_target::Target;
use rustc_hash::FxHashMap;

pub struct Matmul;

fn shapes(cx: &Context, op: Op) -> (Vec<i64>, Vec<i64>) {
    (
        cx.value_shape(cx.operand(op, 0)),
        cx.value_shape(cx.operand(op, 1)),
    )
}

/// The AMP mode of a matmul (nn or tile op: same operands and result).
fn mode_of(cx: &Context, op: Op) -> Result<GemmMode, String> {
    let e = |v| value_elem(cx, v).ok_or("has an element type without kernels");
    GemmMode::select(
        e(cx.operand(op, 0))?,
        e(cx.operand(op, 1))?,
        e(cx.result(op, 0))?,
    )
}

fn plan(cx: &Context, op: Op, target: &Target) -> Result<MatmulPlan, String> {
    let (a, b) = shapes(cx, op);
    if a.len() != 2 || b.len() != 2 {
        return Err(format!(
            "is not lowered yet for rank {} x rank {} operands (2-D matmuls are)",
            a.len(),
            b.len()
        ));
    }
    let mode = mode_of(cx, op)?;
    plan_matmul(target, a[0] as u64, a[1] as u64, b[1] as u64, mode).map_err(|e| {
        format!(
            "[{}x{}] x [{}x{}] on target {}: {e}",
            a[0], a[1], b[0], b[1], target.name
        )
    })
}

/// The blocks of a `tile.matmul` from its `plan`.
fn blocks_of(cx: &Context, op: Op) -> Result<(GemmBlocks, [u64; 2]), String> {
    let plan = cx.get_i64_array_attr(op, "plan").ok_or("has no plan")?;
    let tiles = cx.get_i64_array_attr(op, "tiles").ok_or("has no tiles")?;
    let (&[pm, pn, pk], &[first, stride]) = (plan, tiles) else {
        return Err("has a malformed plan or tiles".into());
    };
    let (a, b) = shapes(cx, op);
    let mode = mode_of(cx, op)?;
    let g = GemmBlocks::new(
        a[0] as u64,
        a[1] as u64,
        b[1] as u64,
        [pm as u64, pn as u64, pk as u64],
        mode,
    );
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

/// The rectangles of operand `i` each tile reads.
fn needs(g: &GemmBlocks, [first, stride]: [u64; 2], i: usize) -> Vec<Block> {
    let mut out = Vec::new();
    for k in 0..g.pk {
        for im in 0..g.pm {
            for jn in 0..g.pn {
                let tile = g.tile(first, stride, k, im, jn);
                let (lo, hi) = if i == 0 {
                    (
                        vec![(im * g.bm) as i64, (k * g.bk) as i64],
                        vec![
                            ((im + 1) * g.bm).min(g.m) as i64,
                            ((k + 1) * g.bk).min(g.k) as i64,
                        ],
                    )
                } else {
                    (
                        vec![(k * g.bk) as i64, (jn * g.bn) as i64],
                        vec![
                            ((k + 1) * g.bk).min(g.k) as i64,
                            ((jn + 1) * g.bn).min(g.n) as i64,
                        ],
                    )
                };
                let blk = Block { tile, lo, hi };
                if !blk.is_empty() {
                    out.push(blk);
                }
            }
        }
    }
    out
}

impl DeviceOp for Matmul {
    fn nn_ops(&self) -> Vec<&'static str> {
        vec!["nn.matmul"]
    }

    fn tile_op(&self) -> &'static str {
        "tile.matmul"
    }

    fn operand_mappings(&self, cx: &Context, op: Op, target: &Target) -> Vec<(usize, Mapping)> {
        let Ok(p) = plan(cx, op, target) else {
            return Vec::new();
        };
        let (a, b) = shapes(cx, op);
        let g = p.blocks(a[0] as u64, a[1] as u64, b[1] as u64);
        // When the GEMM reads A in K-chunks, A's blocks are best kept on
        // tiles outside the matmul, so that every matmul tile receives its
        // block already chunked instead of re-laying it out (the slowest
        // tile bounds the superstep).
        let apart = g.k_chunk().is_some() && p.tiles() + p.pm * p.pk <= target.tiles() as u64;
        vec![
            (
                0,
                Mapping {
                    grid: vec![p.pm as i64, p.pk as i64],
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
        let p = plan(cx, op, env.target).map_err(err)?;
        let (a, b) = shapes(cx, op);
        let g = p.blocks(a[0] as u64, a[1] as u64, b[1] as u64);
        check_blocks(&g, env.target).map_err(err)?;
        let spec = gemm_spec(&g);
        let cycles = kernel_cycles(&spec).map_err(err)?;
        let m = Mapping {
            grid: vec![p.pm as i64, p.pn as i64],
            first_tile: 0,
            stride: 1,
        };
        let partials = crate::elem::ir_type(p.mode.partials);
        let attrs = vec![
            (
                "plan",
                cx.i64_array_attr(vec![p.pm as i64, p.pn as i64, p.pk as i64]),
            ),
            ("tiles", cx.i64_array_attr(vec![0, 1])),
            ("kernel", cx.string_attr(&spec.name())),
            ("cycles", cx.i64_attr(cycles as i64)),
            ("partials", cx.type_attr(partials)),
            ("mapping", m.to_attr(cx)),
        ];
        let operands = cx.operands(op).to_vec();
        let ty: Type = cx.value_type(cx.result(op, 0));
        Ok(build_op(cx, "tile.matmul", &operands, Some(ty), attrs, loc))
    }

    fn to_program(&self, op: Op, b: &mut ProgramBuilder) -> Result<(), Diagnostic> {
        let cx = b.cx;
        let (g, tiles) = blocks_of(cx, op).map_err(|e| b.err(op, e))?;
        let (av, bv) = (cx.operand(op, 0), cx.operand(op, 1));
        let ae = value_elem(cx, av).ok_or_else(|| b.err(op, "has an lhs type without kernels"))?;
        let be = value_elem(cx, bv).ok_or_else(|| b.err(op, "has an rhs type without kernels"))?;
        let out = value_elem(cx, cx.result(op, 0))
            .ok_or_else(|| b.err(op, "has a result type without kernels"))?;
        let (pm, pn, pk) = (g.pm as usize, g.pn as usize, g.pk as usize);
        let (bm, bk, bn) = (g.bm as usize, g.bk as usize, g.bn as usize);
        let in_e = g.mode.input;
        let pt = g.mode.partials;
        let ib = in_e.bytes();
        let nb = N_BLOCK as usize;
        check_blocks(&g, b.target).map_err(|e| b.err(op, e))?;
        let spec = gemm_spec(&g);
        let recorded = cx.get_str_attr(op, "kernel").unwrap_or("");
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
        let a_at = b.operand(
            op,
            0,
            &needs(&g, tiles, 0),
            g.a_layout(),
            (bm * bk) as u64 * aeb,
            true,
        )?;
        let b_at = b
            .operand(
                op,
                1,
                &needs(&g, tiles, 1),
                Layout::RowMajor,
                (bk * bn) as u64 * beb + 8 * bm as u64,
                true,
            )?
            .at;
        b.begin_compute(op, "", "tile.matmul");
        let psize = (bm * bn * pt.bytes()) as u64;
        let tile = |kk: usize, i: usize, j: usize| {
            g.tile(tiles[0], tiles[1], kk as u64, i as u64, j as u64)
        };
        let mut partials: FxHashMap<u32, usize> = FxHashMap::default();
        for kk in 0..pk {
            for i in 0..pm {
                for j in 0..pn {
                    let tl = tile(kk, i, j);
                    let (Some(&a0), Some(&b0)) = (a_at.at.get(&tl), b_at.get(&tl)) else {
                        continue;
                    };
                    let unary = |b: &mut ProgramBuilder,
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
                    let widen = |b: &mut ProgramBuilder,
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
                    if ae != in_e {
                        let spec = KernelSpec::cast(ae, in_e, (bm * bk).div_ceil(8) * 8);
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
                    let mut b_cur = b0;
                    let b_bytes = |eb: usize| (bk * bn * eb) as u64 + 8 * bm as u64;
                    if bn > nb {
                        let eb = be.bytes();
                        let spec = KernelSpec::copy2d(
                            bn / nb,
                            bk,
                            nb * eb / 8,
                            (bn * eb, nb * eb),
                            (nb * eb, bk * nb * eb),
                        );
                        b_cur = unary(b, spec, b_cur, "rhs_blocked", b_bytes(eb))?;
                    }
                    if be != in_e {
                        let spec = KernelSpec::cast(be, in_e, bk * bn);
                        b_cur = widen(b, spec, b_cur, "rhs_f16", b_bytes(2), sb)?;
                    }
                    let c = b.alloc(op, tl, &format!("s{set}.partials"), psize, true)?;
                    partials.insert(tl, c);
                    b.call(
                        tl,
                        records::gemm(
                            &spec,
                            Word::Buf(a_cur, 0),
                            Word::Buf(b_cur, 0),
                            Word::Buf(c, 0),
                            if is_f8(in_e) { sa + sb } else { 0 },
                        ),
                    );
                }
            }
        }
        let result = cx.result(op, 0);
        let rmap = mapping_of(cx, op).ok_or_else(|| b.err(op, "has no mapping"))?;
        // The k = 0 tiles receive the other partials, add them up and
        // convert the sum into the result block.
        let mut incoming: FxHashMap<u32, usize> = FxHashMap::default();
        if pk > 1 {
            let mut runs = Vec::new();
            let len = psize;
            for kk in 1..pk {
                for i in 0..pm {
                    for j in 0..pn {
                        runs.push(Run {
                            src_tile: tile(kk, i, j),
                            src_off: 0,
                            dst_tile: tile(0, i, j),
                            dst_off: (kk as u64 - 1) * len,
                            len,
                        });
                    }
                }
            }
            let mut inc = None;
            for i in 0..pm {
                for j in 0..pn {
                    let tl = tile(0, i, j);
                    let buf = b.alloc(
                        op,
                        tl,
                        &format!("s{set}.partials_in"),
                        psize * (pk - 1) as u64,
                        true,
                    )?;
                    incoming.insert(tl, buf);
                    inc = Some(buf);
                }
            }
            let (Some(&src), Some(dst)) = (partials.values().next(), inc) else {
                return Err(b.err(op, "has no partial sums to reduce"));
            };
            b.end_compute(op)?;
            b.exchange(
                op,
                &format!("partial sums of s{set} tile.matmul"),
                vec![(src, dst, runs)],
            )?;
            b.begin_compute(op, ".reduce", "tile.matmul reduction");
        }
        // Without split K the result is laid out in the GEMM's superstep.
        let res = b.home(op, result, &rmap, &format!("s{set}.result"), false)?;
        let home_tiles: Vec<u32> = b
            .home_of(result)
            .map(|h| h.blocks.iter().map(|bl| bl.tile).collect())
            .unwrap_or_default();
        for tl in home_tiles {
            let Some(&c) = partials.get(&tl) else {
                continue;
            };
            if let Some(&inc) = incoming.get(&tl) {
                let add = KernelSpec::elementwise(EwOp::Add, pt, bm * bn);
                for kk in 0..pk - 1 {
                    b.call(
                        tl,
                        records::add(
                            &add,
                            Word::Buf(c, 0),
                            Word::Buf(inc, (kk as u64 * psize) as u32),
                            Word::Buf(c, 0),
                        ),
                    );
                }
            }
            let oeb = out.bytes();
            if bn == nb {
                let spec = if pt == out {
                    KernelSpec::elementwise(EwOp::Copy, pt, bm * bn)
                } else {
                    KernelSpec::cast(pt, out, bm * bn)
                };
                b.call(
                    tl,
                    records::unary(&spec, Word::Buf(c, 0), Word::Buf(res, 0)),
                );
            } else {
                let mut src = c;
                if pt != out {
                    let spec = KernelSpec::cast(pt, out, bm * bn);
                    let dst = b.alloc(
                        op,
                        tl,
                        &format!("s{set}.result_blocked"),
                        (bm * bn * oeb) as u64,
                        true,
                    )?;
                    b.call(
                        tl,
                        records::unary(&spec, Word::Buf(src, 0), Word::Buf(dst, 0)),
                    );
                    src = dst;
                }
                let spec = KernelSpec::copy2d(
                    bn / nb,
                    bm,
                    nb * oeb / 8,
                    (nb * oeb, bm * nb * oeb),
                    (bn * oeb, nb * oeb),
                );
                b.call(
                    tl,
                    records::unary(&spec, Word::Buf(src, 0), Word::Buf(res, 0)),
                );
            }
        }
        b.end_compute(op)?;
        b.finish_op();
        Ok(())
    }
}
