//! Host stream layouts: where each byte of a stream's host buffer goes on
//! (or comes from) the tiles, as the package's pieces (single transfers and
//! grids of them).
//!
//! A weight replicated over the tiles that read it is hundreds of thousands
//! of row transfers (a 768 x 768 FP8 matrix in 256 x 16 GEMM blocks, ten
//! copies, is 368,640 transfers of 16 B). They are made as strips, a
//! rectangle's rows at a constant step each, never one by one: sorted,
//! merged and folded a strip at a time, with the result the transfer by
//! transfer method gives (`tests::strips_give_what_transfers_give` checks
//! them against each other).

use super::StoredRects;
use ipu_package::{GridDim, StreamPiece, Transfer};
use ipu_program::geometry::{strides, Block, Layout};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Per tile, the address of each of its buffers.
pub(crate) type Addresses = BTreeMap<u32, Vec<u64>>;

/// `count` transfers on one tile, the `i`-th at `first` + `i` steps, all of
/// `first.len` bytes; `count` > 1 only with `address_step` >= `len` > 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Strip {
    first: Transfer,
    count: u32,
    address_step: u32,
    host_step: u64,
}

impl Strip {
    fn one(t: Transfer) -> Strip {
        Strip {
            first: t,
            count: 1,
            address_step: 0,
            host_step: 0,
        }
    }

    /// The `i`-th transfer (`i` < `count`).
    fn at(&self, i: u32) -> Transfer {
        Transfer {
            tile_address: self.first.tile_address + i * self.address_step,
            host_offset: self.first.host_offset + u64::from(i) * self.host_step,
            ..self.first
        }
    }

    fn last(&self) -> Transfer {
        self.at(self.count - 1)
    }

    /// The strip without its first `n` transfers (`n` < `count`).
    fn skip(&self, n: u32) -> Strip {
        Strip {
            first: self.at(n),
            count: self.count - n,
            ..*self
        }
    }

    /// Whether each transfer ends where the next starts, on the tile and in
    /// the host buffer.
    fn contiguous(&self) -> bool {
        self.count > 1
            && self.address_step == self.first.len
            && self.host_step == u64::from(self.first.len)
    }
}

/// The layout pieces of the stream stored at `at`: its transfers sorted by
/// tile and address, merged where contiguous on the tile and in the host
/// buffer, then folded into grids (a run of pieces of the same shape at
/// evenly stepped tiles, addresses and host offsets becomes one piece with
/// one more dimension) as far as they fold.
pub(crate) fn stream_layout(at: &StoredRects, addrs: &Addresses) -> Vec<StreamPiece> {
    // Rectangles in tile order (stably, so each tile's in the order of the
    // rectangles); each tile's transfers are sorted by address on their
    // own. That is the order of (tile, address, host offset, length), which
    // is total (equal keys are equal transfers).
    let mut order: Vec<(u32, usize)> = at
        .rects
        .iter()
        .enumerate()
        .map(|(i, (r, _, _))| (r.tile, i))
        .collect();
    order.sort_by_key(|x| x.0);
    let by_tile: Vec<&[(u32, usize)]> = order.chunk_by(|a, b| a.0 == b.0).collect();
    let per_tile: Vec<Vec<Strip>> = by_tile
        .par_iter()
        .map(|group| merged(sorted(tile_strips(at, &addrs[&group[0].0], group))))
        .collect();
    let count: u64 = per_tile.iter().flatten().map(|s| u64::from(s.count)).sum();
    let mut pieces = fold_strips(&per_tile.concat());
    let mut before = count;
    while pieces.len() > 1 && pieces.len() as u64 != before {
        before = pieces.len() as u64;
        pieces = fold_grids(pieces);
    }
    pieces
        .into_iter()
        .map(|(first, dims)| {
            if dims.is_empty() {
                StreamPiece::Single(first)
            } else {
                StreamPiece::Grid { first, dims }
            }
        })
        .collect()
}

/// The strips of one tile's rectangles (`group`, in order), each
/// rectangle's in ascending address order.
fn tile_strips(at: &StoredRects, a: &[u64], group: &[(u32, usize)]) -> Vec<Strip> {
    let mut out = Vec::new();
    let (mut scratch, mut runs) = (Vec::new(), Vec::new());
    for &(tile, i) in group {
        let (rect, buf, layout) = &at.rects[i];
        let base = a[*buf];
        let done = match *layout {
            Layout::RowMajor => row_major_strips(&at.whole, rect, at.elem_bytes, base, &mut out),
            Layout::Chunks { kc, rows } => {
                chunk_strips(&at.whole, rect, at.elem_bytes, base, (kc, rows), &mut out)
            }
        };
        if done {
            continue;
        }
        runs.clear();
        at.runs(i, &mut scratch, &mut runs);
        out.extend(runs.iter().map(|&(off, host, len)| {
            Strip::one(Transfer {
                tile,
                tile_address: (base + off) as u32,
                host_offset: host,
                len: len as u32,
            })
        }));
    }
    out
}

/// The transfers of `rect` (inside `whole`, stored row-major at `base`) as
/// strips, appended to `out`, when it has any and their figures fit the
/// transfers' fields; false (nothing appended) otherwise.
///
/// With the dimensions after `j` whole in `rect` and `j` not (or the
/// first), a transfer is a row of dimensions `j..` (the rows of a run of
/// whole rows are contiguous on both sides, as `runs_for_layout` merges
/// them); its index over dimensions `..j` steps the tile address by the
/// transfer's length and the host offset by the tensor's stride. The
/// innermost of those dimensions makes a strip.
fn row_major_strips(
    whole: &Block,
    rect: &Block,
    elem_bytes: i64,
    base: u64,
    out: &mut Vec<Strip>,
) -> bool {
    let rank = rect.lo.len();
    let inside = rank > 0
        && whole.lo.len() == rank
        && elem_bytes > 0
        && (0..rank).all(|d| {
            whole.lo[d] <= rect.lo[d] && rect.lo[d] < rect.hi[d] && rect.hi[d] <= whole.hi[d]
        });
    if !inside {
        return false;
    }
    let ext = rect.extent();
    let wext = whole.extent();
    let mut j = rank - 1;
    while j > 0 && ext[j] == wext[j] {
        j -= 1;
    }
    let src: Vec<i64> = strides(&wext).iter().map(|s| s * elem_bytes).collect();
    let len: i64 = ext[j..].iter().product::<i64>() * elem_bytes;
    let start: i64 = (0..rank).map(|d| (rect.lo[d] - whole.lo[d]) * src[d]).sum();
    let Ok(len) = u32::try_from(len) else {
        return false;
    };
    let (count, host_step) = match j.checked_sub(1) {
        Some(d) => (ext[d], src[d]),
        None => (1, 0),
    };
    let Ok(count) = u32::try_from(count) else {
        return false;
    };
    // Strips over the dimensions before the strip's, in row-major order.
    let outer = j.saturating_sub(1);
    let strips: i64 = ext[..outer].iter().product();
    let mut pos = vec![0i64; outer];
    for k in 0..strips {
        let mut rem = k;
        for d in (0..outer).rev() {
            pos[d] = rem % ext[d];
            rem /= ext[d];
        }
        // A strip's first transfer: its rows before it are whole strips.
        let host = start + (0..outer).map(|d| pos[d] * src[d]).sum::<i64>();
        let off = k * i64::from(count) * i64::from(len);
        out.push(Strip {
            first: Transfer {
                tile: rect.tile,
                tile_address: (base + off as u64) as u32,
                host_offset: host as u64,
                len,
            },
            count,
            address_step: if count > 1 { len } else { 0 },
            host_step: if count > 1 { host_step as u64 } else { 0 },
        });
    }
    true
}

/// [`row_major_strips`] for a matrix `rect` stored in K-chunks
/// ([`Layout::Chunks`]: chunks of `kc` columns, each `rows` x `kc`
/// row-major, one after another): a transfer is a row of a chunk, and each
/// chunk's rows make a strip, stepping a chunk row on the tile and a tensor
/// row in the host buffer.
fn chunk_strips(
    whole: &Block,
    rect: &Block,
    elem_bytes: i64,
    base: u64,
    (kc, rows): (i64, i64),
    out: &mut Vec<Strip>,
) -> bool {
    let fits = rect.lo.len() == 2
        && whole.lo.len() == 2
        && elem_bytes > 0
        && kc > 0
        && (0..2).all(|d| {
            whole.lo[d] <= rect.lo[d] && rect.lo[d] < rect.hi[d] && rect.hi[d] <= whole.hi[d]
        });
    if !fits {
        return false;
    }
    let [h, w] = [rect.hi[0] - rect.lo[0], rect.hi[1] - rect.lo[1]];
    let row_bytes = (whole.hi[1] - whole.lo[1]) * elem_bytes;
    let (Ok(count), Ok(step)) = (u32::try_from(h), u32::try_from(kc * elem_bytes)) else {
        return false;
    };
    if rows < h {
        return false;
    }
    let start = (rect.lo[0] - whole.lo[0]) * row_bytes + (rect.lo[1] - whole.lo[1]) * elem_bytes;
    for c in 0..(w + kc - 1) / kc {
        let Ok(len) = u32::try_from((kc.min(w - c * kc)) * elem_bytes) else {
            return false;
        };
        out.push(Strip {
            first: Transfer {
                tile: rect.tile,
                tile_address: (base + (c * rows * kc * elem_bytes) as u64) as u32,
                host_offset: (start + c * kc * elem_bytes) as u64,
                len,
            },
            count,
            address_step: if count > 1 { step } else { 0 },
            host_step: if count > 1 { row_bytes as u64 } else { 0 },
        });
    }
    true
}

/// One tile's strips in the order of their transfers' (address, host
/// offset, length): by their first transfers when no strip's address range
/// reaches into the next one's, else transfer by transfer.
fn sorted(mut strips: Vec<Strip>) -> Vec<Strip> {
    let key = |s: &Strip| (s.first.tile_address, s.first.host_offset, s.first.len);
    // Mostly ascending stretches (a block's rows): the stable sort merges them.
    strips.sort_by_key(key);
    let apart = strips.windows(2).all(|w| {
        let end = u64::from(w[0].last().tile_address) + u64::from(w[0].first.len);
        end <= u64::from(w[1].first.tile_address)
    });
    if apart {
        return strips;
    }
    let mut ts: Vec<Transfer> = strips
        .iter()
        .flat_map(|s| (0..s.count).map(|i| s.at(i)))
        .collect();
    ts.sort_by_key(|t| (t.tile_address, t.host_offset, t.len));
    ts.into_iter().map(Strip::one).collect()
}

/// Merges one tile's sorted transfers where each ends where the next
/// starts, on the tile and in the host buffer (while the length fits 32
/// bits), as a left-to-right pass over the transfers would.
fn merged(strips: Vec<Strip>) -> Vec<Strip> {
    let mut out: Vec<Strip> = Vec::with_capacity(strips.len());
    for s in strips {
        if s.count == 1 || s.contiguous() {
            for i in 0..s.count {
                let t = s.at(i);
                if !merge_into(&mut out, t) {
                    out.push(Strip::one(t));
                }
            }
        } else if merge_into(&mut out, s.first) {
            // Only its first can continue the transfer before it: no
            // transfer of it continues the one before it.
            out.push(s.skip(1));
        } else {
            out.push(s);
        }
    }
    out
}

/// Merges `t` into the last transfer of `out` when it continues it on the
/// tile and in the host buffer and the sum of their lengths fits.
fn merge_into(out: &mut Vec<Strip>, t: Transfer) -> bool {
    let Some(s) = out.last_mut() else {
        return false;
    };
    let l = s.last();
    let continues = u64::from(l.tile_address) + u64::from(l.len) == u64::from(t.tile_address)
        && l.host_offset + u64::from(l.len) == t.host_offset;
    let Some(len) = l.len.checked_add(t.len).filter(|_| continues) else {
        return false;
    };
    let m = Transfer { len, ..l };
    if s.count == 1 {
        s.first = m;
    } else {
        s.count -= 1;
        out.push(Strip::one(m));
    }
    true
}

/// The first folding pass of [`stream_layout`] ([`fold_grids`] over the
/// transfers of `strips`, in order), a strip at a time: a strip whose step
/// is the fold's is taken whole.
fn fold_strips(strips: &[Strip]) -> Vec<(Transfer, Vec<GridDim>)> {
    // The transfer at (strip, index) and the position after it.
    let get = |(j, i): (usize, u32)| strips.get(j).map(|s| s.at(i));
    let next = |(j, i): (usize, u32)| {
        if i + 1 < strips[j].count {
            (j, i + 1)
        } else {
            (j + 1, 0)
        }
    };
    let mut out = Vec::new();
    let mut at = (0usize, 0u32);
    while let Some(a) = get(at) {
        let after = next(at);
        let Some(d) = get(after).and_then(|b| step(&a, &b)) else {
            out.push((a, Vec::new()));
            at = after;
            continue;
        };
        let (mut count, mut last, mut pos) = (1u32, a, after);
        while let Some(b) = get(pos) {
            let fits = b.len == a.len
                && (
                    u64::from(last.tile) + u64::from(d.tile_step),
                    u64::from(last.tile_address) + u64::from(d.address_step),
                    last.host_offset.checked_add(d.host_step),
                ) == (
                    u64::from(b.tile),
                    u64::from(b.tile_address),
                    Some(b.host_offset),
                )
                && count < u32::MAX;
            if !fits {
                break;
            }
            let s = &strips[pos.0];
            let rest = s.count - pos.1;
            // The rest of a strip stepping as the fold does, at once.
            let take = if rest > 1
                && d.tile_step == 0
                && d.address_step == s.address_step
                && d.host_step == s.host_step
            {
                rest.min(u32::MAX - count)
            } else {
                1
            };
            count += take;
            last = s.at(pos.1 + take - 1);
            pos = if pos.1 + take < s.count {
                (pos.0, pos.1 + take)
            } else {
                (pos.0 + 1, 0)
            };
        }
        out.push((a, vec![GridDim { count, ..d }]));
        at = pos;
    }
    out
}

/// The step from transfer `a` to `b`, when `b` can follow `a` in one
/// dimension of a grid (no step negative).
fn step(a: &Transfer, b: &Transfer) -> Option<GridDim> {
    if a.len != b.len {
        return None;
    }
    Some(GridDim {
        count: 0,
        tile_step: b.tile.checked_sub(a.tile)?,
        address_step: b.tile_address.checked_sub(a.tile_address)?,
        host_step: b.host_offset.checked_sub(a.host_offset)?,
    })
}

/// One pass of [`stream_layout`]'s folding: each maximal run of at least two
/// consecutive pieces with the same length and dimensions whose first
/// transfers step evenly (no step negative) becomes one piece.
fn fold_grids(
    pieces: impl IntoIterator<Item = (Transfer, Vec<GridDim>)>,
) -> Vec<(Transfer, Vec<GridDim>)> {
    // The step from `a` to `b`, when `b` can follow `a` in one more
    // dimension: pieces of one shape, with a dimension to spare.
    let piece_step = |a: &(Transfer, Vec<GridDim>), b: &(Transfer, Vec<GridDim>)| {
        (a.1 == b.1 && a.1.len() < ipu_package::MAX_GRID_DIMS)
            .then(|| step(&a.0, &b.0))
            .flatten()
    };
    let mut out = Vec::new();
    let mut rest = pieces.into_iter().peekable();
    while let Some(a) = rest.next() {
        let Some(d) = rest.peek().and_then(|b| piece_step(&a, b)) else {
            out.push(a);
            continue;
        };
        let mut count = 1u32;
        let mut last = a.0;
        while let Some(b) = rest.peek() {
            let next = (
                u64::from(last.tile) + u64::from(d.tile_step),
                u64::from(last.tile_address) + u64::from(d.address_step),
                last.host_offset.checked_add(d.host_step),
            );
            let fits = b.0.len == a.0.len
                && b.1 == a.1
                && next
                    == (
                        u64::from(b.0.tile),
                        u64::from(b.0.tile_address),
                        Some(b.0.host_offset),
                    )
                && count < u32::MAX;
            if !fits {
                break;
            }
            last = b.0;
            count += 1;
            rest.next();
        }
        let (first, inner) = a;
        let mut dims = Vec::with_capacity(inner.len() + 1);
        dims.push(GridDim { count, ..d });
        dims.extend(inner);
        out.push((first, dims));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`stream_layout`] transfer by transfer: every rectangle's runs made
    /// one by one, each tile's sorted and merged in one pass, then folded.
    fn by_transfers(at: &StoredRects, addrs: &Addresses) -> Vec<StreamPiece> {
        let mut ts: Vec<Transfer> = Vec::new();
        let mut tiles: Vec<u32> = at.rects.iter().map(|r| r.0.tile).collect();
        tiles.sort_unstable();
        tiles.dedup();
        for tile in tiles {
            let mut mine = Vec::new();
            for (i, (rect, buf, _)) in at.rects.iter().enumerate() {
                if rect.tile != tile {
                    continue;
                }
                let mut runs = Vec::new();
                at.runs(i, &mut Vec::new(), &mut runs);
                mine.extend(runs.iter().map(|&(off, host, len)| Transfer {
                    tile,
                    tile_address: (addrs[&tile][*buf] + off) as u32,
                    host_offset: host,
                    len: len as u32,
                }));
            }
            mine.sort_by_key(|t| (t.tile_address, t.host_offset, t.len));
            for t in mine {
                match ts.last_mut() {
                    Some(l)
                        if l.tile == t.tile
                            && u64::from(l.tile_address) + u64::from(l.len)
                                == u64::from(t.tile_address)
                            && l.host_offset + u64::from(l.len) == t.host_offset
                            && l.len.checked_add(t.len).is_some() =>
                    {
                        l.len += t.len
                    }
                    _ => ts.push(t),
                }
            }
        }
        let count = ts.len();
        let mut pieces = fold_grids(ts.into_iter().map(|t| (t, Vec::new())));
        let mut before = count;
        while pieces.len() > 1 && pieces.len() != before {
            before = pieces.len();
            pieces = fold_grids(pieces);
        }
        pieces
            .into_iter()
            .map(|(first, dims)| match dims.is_empty() {
                true => StreamPiece::Single(first),
                false => StreamPiece::Grid { first, dims },
            })
            .collect()
    }

    /// A small deterministic generator (a 64-bit LCG's high bits).
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: i64) -> i64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n.max(1) as u64) as i64
        }
    }

    /// Random streams: tensors of rank 1 to 3, rectangles of them on a few
    /// tiles (several a tile, some whole rows, some chunked, some
    /// overlapping others on the tile), buffers placed back to back, apart,
    /// or over each other.
    #[test]
    fn strips_give_what_transfers_give() {
        let mut r = Lcg(7);
        let mut grids = 0;
        for case in 0..3000 {
            let rank = 1 + r.below(3) as usize;
            let shape: Vec<i64> = (0..rank).map(|_| 1 + r.below(12)).collect();
            let elem_bytes = [1, 2, 4][r.below(3) as usize];
            let whole = Block {
                tile: 0,
                lo: vec![0; rank],
                hi: shape.clone(),
            };
            let tiles = 1 + r.below(4) as u32;
            let nrects = 1 + r.below(10) as usize;
            // Half the rectangles as wide as each other (as GEMM blocks are),
            // so that one's transfers can continue another's.
            let width = 1 + r.below(shape[rank - 1]);
            let mut rects = Vec::new();
            for _ in 0..nrects {
                let mut lo: Vec<i64> = shape.iter().map(|&s| r.below(s)).collect();
                let mut hi: Vec<i64> = lo
                    .iter()
                    .zip(&shape)
                    .map(|(&l, &s)| match r.below(3) {
                        0 => s,
                        _ => l + 1 + r.below(s - l),
                    })
                    .collect();
                if r.below(2) == 0 {
                    lo[rank - 1] = r.below(shape[rank - 1] - width + 1);
                    hi[rank - 1] = lo[rank - 1] + width;
                }
                let rect = Block {
                    tile: r.below(i64::from(tiles)) as u32 * [1, 3][r.below(2) as usize],
                    lo,
                    hi,
                };
                let ext = rect.extent();
                let layout = if rank == 2 && r.below(4) == 0 {
                    Layout::Chunks {
                        kc: 1 + r.below(ext[1]),
                        rows: ext[0] + r.below(3),
                    }
                } else {
                    Layout::RowMajor
                };
                rects.push((rect, rects.len(), layout));
            }
            let mut addrs = Addresses::new();
            for (rect, _, _) in &rects {
                if addrs.contains_key(&rect.tile) {
                    continue;
                }
                // Each buffer after the one before: back to back, apart, or
                // over it.
                let mut a = Vec::new();
                let mut next = 0x4_0000u64;
                for (b, _, l) in &rects {
                    a.push(next);
                    let bytes = match l {
                        Layout::Chunks { rows, .. } => b.extent()[1] * rows,
                        Layout::RowMajor => b.elements(),
                    } as u64
                        * elem_bytes as u64;
                    next = match r.below(4) {
                        0 => next + bytes + 8 * r.below(3) as u64,
                        1 => next + bytes / 2,
                        _ => next + bytes,
                    };
                }
                addrs.insert(rect.tile, a);
            }
            let at = StoredRects {
                whole: whole.clone(),
                elem_bytes,
                rects,
            };
            let want = by_transfers(&at, &addrs);
            let got = stream_layout(&at, &addrs);
            assert_eq!(got, want, "case {case}: {shape:?} x{elem_bytes}");
            grids += got
                .iter()
                .filter(|p| matches!(p, StreamPiece::Grid { .. }))
                .count();
        }
        // The cases fold: grids of strips are made, not only single transfers.
        assert!(grids > 1000, "{grids} grids");
    }

    /// A weight in GEMM blocks, copied to many tiles: a strip a rectangle,
    /// folded over the tiles into one grid a copy.
    #[test]
    fn replicated_blocks_fold_into_a_grid_each() {
        let whole = Block {
            tile: 0,
            lo: vec![0, 0],
            hi: vec![64, 48],
        };
        let mut rects = Vec::new();
        for copy in 0..4u32 {
            for nb in 0..3 {
                let rect = Block {
                    tile: copy * 3 + nb,
                    lo: vec![0, 16 * nb as i64],
                    hi: vec![64, 16 * (nb as i64 + 1)],
                };
                rects.push((rect, 0, Layout::RowMajor));
            }
        }
        let addrs: Addresses = (0..12).map(|t| (t, vec![0x8_0000])).collect();
        let at = StoredRects {
            whole,
            elem_bytes: 1,
            rects,
        };
        let got = stream_layout(&at, &addrs);
        assert_eq!(got, by_transfers(&at, &addrs));
        // 768 transfers of 16 B: rows step 16 on the tile and 48 in the host
        // buffer; the three blocks step a tile and 16 B; the four copies
        // three tiles.
        let first = Transfer {
            tile: 0,
            tile_address: 0x8_0000,
            host_offset: 0,
            len: 16,
        };
        let dims = vec![
            GridDim {
                count: 4,
                tile_step: 3,
                address_step: 0,
                host_step: 0,
            },
            GridDim {
                count: 3,
                tile_step: 1,
                address_step: 0,
                host_step: 16,
            },
            GridDim {
                count: 64,
                tile_step: 0,
                address_step: 16,
                host_step: 48,
            },
        ];
        assert_eq!(got, vec![StreamPiece::Grid { first, dims }]);
    }
}
