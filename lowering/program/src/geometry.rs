//! Tile geometry: the blocks of a mapping, the rectangles a consumer reads,
//! and the contiguous runs of bytes that move one into the other.
//!
//! A mapping cuts a tensor into blocks, each stored row-major (in its own
//! extents) on its tile. A consumer tile needs a rectangle of an operand,
//! stored in its own buffer in a [`Layout`]. For every source block the
//! rectangle overlaps, each row of the overlap is a contiguous run on both
//! sides; consecutive runs that stay contiguous merge, and identical source
//! runs wanted by several tiles become one multicast transfer. Runs whose
//! source and destination are the same tile are local copies, not exchange.

use ipu_dialects::tile::Mapping;
use ipu_exchange_schedule::{Destination, Transfer};
use ipu_ir::{Context, Op, Value};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::collections::hash_map::Entry;

/// A block of a tensor on a tile: `[lo, hi)` per dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    pub tile: u32,
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
}

impl Block {
    pub fn extent(&self) -> Vec<i64> {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(l, h)| (h - l).max(0))
            .collect()
    }
    pub fn is_empty(&self) -> bool {
        self.lo.iter().zip(&self.hi).any(|(l, h)| h <= l)
    }
    pub fn elements(&self) -> i64 {
        self.extent().iter().product()
    }
}

/// The non-empty blocks of `mapping` over `shape`, in grid order.
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

/// Blocks spread over `tiles` tiles, outer dimensions first. The last
/// dimension of a tensor of rank 2 or more is cut evenly (into the most
/// blocks that divide it), as the elementwise kernels need.
pub fn spread(shape: &[i64], tiles: u32) -> Mapping {
    let mut remaining = tiles.max(1) as i64;
    let rank = shape.len();
    let grid = shape
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let mut g = d.max(1).min(remaining);
            if rank >= 2 && i == rank - 1 {
                while d.max(1) % g != 0 {
                    g -= 1;
                }
            }
            remaining /= g;
            g
        })
        .collect();
    Mapping {
        grid,
        first_tile: 0,
        stride: 1,
    }
}

/// Row-major strides (in elements) of a buffer of `extent`.
pub fn strides(extent: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; extent.len()];
    for d in (0..extent.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * extent[d + 1];
    }
    s
}

/// One contiguous run: from `src` (tile, byte offset) to `dst`, `len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub src_tile: u32,
    pub src_off: u64,
    pub dst_tile: u32,
    pub dst_off: u64,
    pub len: u64,
}

/// How a consumer stores the rectangle it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Row-major, the rectangle's own extents.
    RowMajor,
    /// The GEMM's chunked A: K cut into chunks of `kc` columns, each chunk
    /// `rows` x `kc` row-major, chunks one after another (`rows` is the
    /// kernel's M, which may exceed the rectangle's rows).
    Chunks { kc: i64, rows: i64 },
}

impl Layout {
    /// The byte ranges of a buffer holding `rect` in this layout that carry
    /// data, as (count, len, stride): ranges `[k * stride, k * stride + len)`.
    pub fn filled(self, rect: &Block, elem_bytes: i64) -> (u64, u64, u64) {
        let ext = rect.extent();
        let all = (rect.elements() * elem_bytes) as u64;
        match self {
            Layout::RowMajor => (1, all, all),
            Layout::Chunks { kc, rows } => {
                // Rows are everything but the last dimension (a batched
                // operand's rectangle has a batch of one in front).
                let c = *ext.last().unwrap_or(&1);
                let r: i64 = ext[..ext.len().saturating_sub(1)].iter().product();
                let chunks = ((c + kc - 1) / kc).max(1);
                if chunks == 1 || r == rows {
                    (1, all, all)
                } else {
                    (
                        chunks as u64,
                        (r * kc * elem_bytes) as u64,
                        (rows * kc * elem_bytes) as u64,
                    )
                }
            }
        }
    }
}

/// Runs moving `need` (a rectangle stored in `layout` on `need.tile`) out of `sources`.
pub fn runs_for_layout(
    need: &Block,
    sources: &[Block],
    elem_bytes: i64,
    layout: Layout,
    out: &mut Vec<Run>,
) {
    let start = out.len();
    runs_row_major(need, sources, elem_bytes, out);
    if let Layout::Chunks { .. } = layout {
        let row_major: Vec<Run> = out.drain(start..).collect();
        relayout_into(&row_major, need, elem_bytes, layout, out);
    }
}

/// Runs into `need` stored row-major, re-addressed for `layout`: each run
/// (one row of the rectangle, several whole rows, or part of a row) is cut
/// where a chunk ends.
pub fn relayout_runs(runs: Vec<Run>, need: &Block, elem_bytes: i64, layout: Layout) -> Vec<Run> {
    let Layout::Chunks { .. } = layout else {
        return runs;
    };
    let mut out = Vec::with_capacity(runs.len());
    relayout_into(&runs, need, elem_bytes, layout, &mut out);
    out
}

/// [`relayout_runs`], appending to `out`.
pub fn relayout_into(
    runs: &[Run],
    need: &Block,
    elem_bytes: i64,
    layout: Layout,
    out: &mut Vec<Run>,
) {
    let Layout::Chunks { kc, rows } = layout else {
        out.extend_from_slice(runs);
        return;
    };
    let last = need.lo.len() - 1;
    let width = (need.hi[last] - need.lo[last]) * elem_bytes;
    out.reserve(runs.len());
    for r in runs {
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

/// Index buffers [`overlap_runs`] works in, made once per rectangle: a
/// consumer's rectangle is checked against many source blocks.
struct Overlap {
    dstr: Vec<i64>,
    lo: Vec<i64>,
    hi: Vec<i64>,
    pos: Vec<i64>,
    sstr: Vec<i64>,
}

impl Overlap {
    fn new(need: &Block) -> Self {
        let rank = need.lo.len();
        Overlap {
            dstr: strides(&need.extent()),
            lo: vec![0; rank],
            hi: vec![0; rank],
            pos: vec![0; rank],
            sstr: vec![1; rank],
        }
    }
}

/// The runs of `need` (row-major on `need.tile`) out of the source block
/// `[src_lo, src_hi)` on `src_tile`, if they overlap.
fn overlap_runs(
    need: &Block,
    src_tile: u32,
    src_lo: &[i64],
    src_hi: &[i64],
    elem_bytes: i64,
    w: &mut Overlap,
    out: &mut Vec<Run>,
) {
    let rank = need.lo.len();
    if (0..rank).any(|d| need.hi[d].min(src_hi[d]) <= need.lo[d].max(src_lo[d])) {
        return;
    }
    let Overlap {
        dstr,
        lo,
        hi,
        pos,
        sstr,
    } = w;
    for d in 0..rank {
        lo[d] = need.lo[d].max(src_lo[d]);
        hi[d] = need.hi[d].min(src_hi[d]);
    }
    // Row-major strides of the source block's extent (as `strides`).
    for d in (0..rank.saturating_sub(1)).rev() {
        sstr[d] = sstr[d + 1] * (src_hi[d + 1] - src_lo[d + 1]).max(0);
    }
    let row = if rank == 0 {
        1
    } else {
        hi[rank - 1] - lo[rank - 1]
    };
    // Every index of the overlap except the last dimension.
    let outer = rank.saturating_sub(1);
    let count: i64 = (0..outer).map(|d| hi[d] - lo[d]).product();
    let mut last: Option<Run> = None;
    for c in 0..count.max(1) {
        let mut rem = c;
        pos.copy_from_slice(lo);
        for d in (0..outer).rev() {
            let ext = hi[d] - lo[d];
            pos[d] = lo[d] + rem % ext;
            rem /= ext;
        }
        let soff: i64 = (0..rank).map(|d| (pos[d] - src_lo[d]) * sstr[d]).sum();
        let doff: i64 = (0..rank).map(|d| (pos[d] - need.lo[d]) * dstr[d]).sum();
        let run = Run {
            src_tile,
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

/// Runs moving `need` (a rectangle stored row-major on `need.tile`) out of `sources`.
pub fn runs_row_major(need: &Block, sources: &[Block], elem_bytes: i64, out: &mut Vec<Run>) {
    let mut w = Overlap::new(need);
    for src in sources {
        overlap_runs(need, src.tile, &src.lo, &src.hi, elem_bytes, &mut w, out);
    }
}

/// A mapping's blocks over a shape, found by position: the blocks a
/// rectangle overlaps without looking at the others.
#[derive(Clone, Debug)]
pub struct Grid {
    pub mapping: Mapping,
    pub shape: Vec<i64>,
    /// The mapping's block shape.
    pub bs: Vec<i64>,
}

impl Grid {
    pub fn new(mapping: &Mapping, shape: &[i64]) -> Self {
        Grid {
            bs: mapping.block_shape(shape),
            mapping: mapping.clone(),
            shape: shape.to_vec(),
        }
    }

    /// The tile of the block at grid position `c`.
    fn tile(&self, c: &[i64]) -> u32 {
        let lin = c
            .iter()
            .zip(&self.mapping.grid)
            .fold(0i64, |l, (&c, &g)| l * g + c);
        (self.mapping.first_tile + lin * self.mapping.stride) as u32
    }

    /// Whether `need` is one of the (non-empty) blocks, on its tile.
    pub fn is_block(&self, need: &Block) -> bool {
        let rank = self.shape.len();
        if need.lo.len() != rank || need.hi.len() != rank {
            return false;
        }
        let mut c = Vec::with_capacity(rank);
        for d in 0..rank {
            let (lo, bs, n) = (need.lo[d], self.bs[d], self.shape[d]);
            if bs <= 0 || lo < 0 || lo >= n || lo % bs != 0 || need.hi[d] != (lo + bs).min(n) {
                return false;
            }
            c.push(lo / bs);
        }
        self.tile(&c) == need.tile
    }

    /// [`runs_row_major`] out of the grid's blocks (what `blocks` lists),
    /// visiting only those `need` overlaps, in grid order.
    pub fn runs_row_major(&self, need: &Block, elem_bytes: i64, out: &mut Vec<Run>) {
        let rank = self.shape.len();
        if need.lo.len() != rank {
            // Not a rectangle of this tensor: the plain walk decides.
            let all = blocks(&self.mapping, &self.shape);
            return runs_row_major(need, &all, elem_bytes, out);
        }
        // Grid positions whose blocks can overlap, per dimension (inclusive).
        let (mut first, mut last) = (vec![0i64; rank], vec![0i64; rank]);
        for d in 0..rank {
            let (bs, n) = (self.bs[d], self.shape[d]);
            let (lo, hi) = (need.lo[d].max(0), need.hi[d].min(n));
            if bs <= 0 || hi <= lo {
                return;
            }
            first[d] = lo / bs;
            last[d] = (hi - 1) / bs;
        }
        let mut w = Overlap::new(need);
        let (mut c, mut lo, mut hi) = (first.clone(), vec![0i64; rank], vec![0i64; rank]);
        loop {
            for d in 0..rank {
                lo[d] = c[d] * self.bs[d];
                hi[d] = (lo[d] + self.bs[d]).min(self.shape[d]);
            }
            overlap_runs(need, self.tile(&c), &lo, &hi, elem_bytes, &mut w, out);
            // Next position, row-major.
            let mut d = rank;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                if c[d] < last[d] {
                    c[d] += 1;
                    break;
                }
                c[d] = first[d];
            }
        }
    }
}

/// The exchange transfers of `runs` (identical source runs become one
/// multicast transfer, in first-seen order) and the local runs, which stay
/// on their tile.
pub fn transfers_of(runs: &[Run]) -> (Vec<Transfer>, Vec<Run>) {
    let mut set = TransferSet::default();
    let ids: Vec<u32> = runs
        .iter()
        .map(|r| {
            if r.src_tile == r.dst_tile {
                set.local(*r);
                return u32::MAX;
            }
            let t = set.transfer_of(r);
            set.count(t);
            t
        })
        .collect();
    set.reserve();
    for (r, t) in runs.iter().zip(ids) {
        if t != u32::MAX {
            set.push(t, r.dst_tile, r.dst_off);
        }
    }
    set.finish()
}

/// [`transfers_of`] built in two passes over the runs: each exchanged run's
/// transfer found and its destination counted, then (after
/// [`TransferSet::reserve`]) each destination placed, so every transfer's
/// destinations are allocated once.
#[derive(Default)]
pub struct TransferSet {
    /// Each source run's transfer.
    by_source: FxHashMap<(u32, u64, u64), u32>,
    transfers: Vec<Transfer>,
    /// The destinations counted per transfer.
    counts: Vec<u32>,
    local: Vec<Run>,
}

impl TransferSet {
    /// The transfer sending run `r`'s source (made, with no destination yet, if new).
    pub fn transfer_of(&mut self, r: &Run) -> u32 {
        match self.by_source.entry((r.src_tile, r.src_off, r.len)) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let t = self.transfers.len() as u32;
                self.transfers.push(Transfer {
                    src_tile: r.src_tile,
                    src_offset: r.src_off as u32,
                    len: r.len as u32,
                    dsts: SmallVec::new(),
                });
                self.counts.push(0);
                *e.insert(t)
            }
        }
    }

    /// One more destination for transfer `t`.
    pub fn count(&mut self, t: u32) {
        self.counts[t as usize] += 1;
    }

    /// A run that stays on its tile.
    pub fn local(&mut self, r: Run) {
        self.local.push(r);
    }

    /// Room for the destinations counted.
    pub fn reserve(&mut self) {
        for (t, &n) in self.transfers.iter_mut().zip(&self.counts) {
            t.dsts.reserve_exact(n as usize);
        }
    }

    /// A destination of transfer `t`: `offset` on `tile`.
    pub fn push(&mut self, t: u32, tile: u32, offset: u64) {
        self.transfers[t as usize].dsts.push(Destination {
            tile,
            offset: offset as u32,
        });
    }

    /// The transfers and the local runs.
    pub fn finish(self) -> (Vec<Transfer>, Vec<Run>) {
        (self.transfers, self.local)
    }
}

/// The bytes of block `b` of a row-major tensor, stored row-major.
pub fn block_bytes(all: &[u8], shape: &[i64], b: &Block, eb: usize) -> Vec<u8> {
    let rank = shape.len();
    if rank == 0 {
        return all.to_vec();
    }
    let st = strides(shape);
    let ext = b.extent();
    let row = ext[rank - 1] as usize * eb;
    let outer: i64 = ext[..rank - 1].iter().product();
    let mut out = Vec::with_capacity(outer.max(1) as usize * row);
    for r in 0..outer.max(1) {
        let mut rem = r;
        let mut at = b.lo[rank - 1];
        for d in (0..rank - 1).rev() {
            at += (b.lo[d] + rem % ext[d]) * st[d];
            rem /= ext[d];
        }
        let start = at as usize * eb;
        out.extend_from_slice(&all[start..start + row]);
    }
    out
}

/// Bytes of one element of a tensor value.
pub fn elem_bytes(cx: &Context, v: Value) -> i64 {
    cx.tensor_parts(cx.value_type(v))
        .and_then(|(_, e)| ipu_ir::numeric::storage_bytes(cx.type_kind(e)))
        .unwrap_or(4) as i64
}

/// The `mapping` attribute of an op.
pub fn mapping_of(cx: &Context, op: Op) -> Option<Mapping> {
    Mapping::from_attr(cx, cx.get_attr(op, "mapping")?).ok()
}

/// Per result block of `m` over `rshape`, the rectangle of an operand of
/// shape `vshape` it reads under numpy broadcasting (size-1 dimensions
/// read index 0; missing leading dimensions are broadcast).
pub fn broadcast_needs(m: &Mapping, rshape: &[i64], vshape: &[i64]) -> Vec<Block> {
    let offset = rshape.len() - vshape.len();
    blocks(m, rshape)
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
        .collect()
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
        let cells: i64 = b.iter().map(Block::elements).sum();
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
    fn spread_cuts_the_last_dimension_evenly() {
        // 3 x 37 over 16 tiles: 37 does not split over the 5 tiles left.
        assert_eq!(spread(&[3, 37], 16).grid, vec![3, 1]);
        assert_eq!(spread(&[8, 6], 16).grid, vec![8, 2]);
        assert_eq!(spread(&[2, 3, 10], 16).grid, vec![2, 3, 2]);
        // A 1-D tensor is cut into short blocks at its end instead.
        assert_eq!(spread(&[1000], 16).grid, vec![16]);
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
    fn grid_lookup_matches_the_walk_over_every_block() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut below = |n: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as i64
        };
        for case in 0..400 {
            let rank = case % 4;
            let shape: Vec<i64> = (0..rank).map(|_| below(9)).collect();
            let m = Mapping {
                grid: shape.iter().map(|&d| 1 + below(d + 2)).collect(),
                first_tile: below(5),
                stride: below(3),
            };
            let grid = Grid::new(&m, &shape);
            let all = blocks(&m, &shape);
            // Rectangles partly outside the tensor too, and the blocks themselves.
            let mut needs: Vec<Block> = all.clone();
            for _ in 0..8 {
                let lo: Vec<i64> = shape.iter().map(|&d| below(d + 2) - 1).collect();
                let hi = lo.iter().map(|&l| l + below(6)).collect();
                needs.push(Block {
                    tile: below(12) as u32,
                    lo,
                    hi,
                });
            }
            for need in &needs {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                runs_row_major(need, &all, 2, &mut a);
                grid.runs_row_major(need, 2, &mut b);
                assert_eq!(a, b, "{m:?} over {shape:?}, {need:?}");
                let plain = all
                    .iter()
                    .any(|b| b.tile == need.tile && b.lo == need.lo && b.hi == need.hi);
                assert_eq!(grid.is_block(need), plain, "{m:?} over {shape:?}, {need:?}");
            }
        }
    }

    #[test]
    fn transfer_sets_match_a_plain_grouping() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut below = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let runs: Vec<Run> = (0..3000)
            .map(|_| Run {
                src_tile: below(6) as u32,
                src_off: below(8) * 4,
                dst_tile: below(6) as u32,
                dst_off: below(1000),
                len: 4 << below(2),
            })
            .collect();
        // The plain grouping: a scan for each run's first equal source run.
        let local: Vec<Run> = runs
            .iter()
            .filter(|r| r.src_tile == r.dst_tile)
            .copied()
            .collect();
        let mut plain: Vec<Transfer> = Vec::new();
        for r in runs.iter().filter(|r| r.src_tile != r.dst_tile) {
            let d = Destination {
                tile: r.dst_tile,
                offset: r.dst_off as u32,
            };
            match plain.iter_mut().find(|t| {
                (t.src_tile, t.src_offset, t.len) == (r.src_tile, r.src_off as u32, r.len as u32)
            }) {
                Some(t) => t.dsts.push(d),
                None => plain.push(Transfer::unicast(
                    r.src_tile,
                    r.src_off as u32,
                    r.len as u32,
                    r.dst_tile,
                    r.dst_off as u32,
                )),
            }
        }
        assert!(plain.iter().any(|t| t.dsts.len() > 2));
        assert_eq!(transfers_of(&runs), (plain, local));
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
        let layout = Layout::Chunks { kc: 4, rows: 4 };
        runs_for_layout(&need, &[src], 2, layout, &mut out);
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
        // Two chunks of 3 rows x 4 columns land 4 rows apart.
        assert_eq!(layout.filled(&need, 2), (2, 24, 32));
    }

    #[test]
    fn broadcast_reads_index_zero_of_size_one_dimensions() {
        let m = Mapping {
            grid: vec![2, 2],
            first_tile: 0,
            stride: 1,
        };
        let n = broadcast_needs(&m, &[4, 6], &[6]);
        assert_eq!(n.len(), 4);
        assert_eq!((n[1].lo.clone(), n[1].hi.clone()), (vec![3], vec![6]));
        let n = broadcast_needs(&m, &[4, 6], &[4, 1]);
        assert_eq!((n[3].lo.clone(), n[3].hi.clone()), (vec![2, 0], vec![4, 1]));
    }
}
