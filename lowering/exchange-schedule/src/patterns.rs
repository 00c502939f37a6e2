//! Synthetic exchange phases of the shapes a planner produces, for tests,
//! benchmarks and lit fixtures: neighbour shifts, pair swaps, all-to-all
//! redistribution within tile groups, broadcast of weight slices, gathers
//! of partial sums, and seeded random redistribution.
//!
//! Source and destination offsets are packed per tile so every phase is
//! valid on a target with `tiles` tiles (given the sizes fit its SRAM).

use super::phase::{Destination, Phase, Transfer};
use smallvec::SmallVec;

/// A small deterministic generator (xorshift64*), so no RNG crate is needed
/// and a seed always gives the same phase.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, n) (n > 0; returns 0 for n == 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// Hands out consecutive offsets per tile for sources and destinations.
struct Alloc {
    src: Vec<u32>,
    dst: Vec<u32>,
}

impl Alloc {
    fn new(tiles: u32) -> Self {
        Alloc {
            src: vec![0; tiles as usize],
            dst: vec![0; tiles as usize],
        }
    }
    fn src(&mut self, tile: u32, len: u32) -> u32 {
        bump(&mut self.src, tile, len)
    }
    // Destinations start at 256 KiB so they never overlap sources.
    fn dst(&mut self, tile: u32, len: u32) -> u32 {
        bump(&mut self.dst, tile, len).saturating_add(1 << 18)
    }
    fn transfer(&mut self, src: u32, len: u32, dsts: &[u32]) -> Transfer {
        let src_offset = self.src(src, len);
        let dsts: SmallVec<[Destination; 2]> = dsts
            .iter()
            .map(|&t| Destination {
                tile: t,
                offset: self.dst(t, len),
            })
            .collect();
        Transfer {
            src_tile: src,
            src_offset,
            len,
            dsts,
        }
    }
}

/// Returns the tile's next free offset and reserves `len` bytes (word
/// aligned); a tile outside the table gets offset 0 (the phase is then
/// invalid and rejected by validation, never a panic here).
fn bump(next: &mut [u32], tile: u32, len: u32) -> u32 {
    match next.get_mut(tile as usize) {
        Some(o) => {
            let at = *o;
            *o = at.saturating_add(len.saturating_add(3) & !3);
            at
        }
        None => 0,
    }
}

/// Every tile sends `len` bytes to tile + `shift` (mod tiles).
pub fn shift(tiles: u32, shift: u32, len: u32) -> Phase {
    let mut a = Alloc::new(tiles);
    Phase::new(
        (0..tiles)
            .map(|t| a.transfer(t, len, &[((t as u64 + shift as u64) % tiles as u64) as u32]))
            .collect(),
    )
}

/// Even tiles send `len` bytes to their odd neighbour (tiles 0..n step 2 -> +1).
pub fn pair_swap(tiles: u32, len: u32) -> Phase {
    let mut a = Alloc::new(tiles);
    Phase::new(
        (0..tiles)
            .step_by(2)
            .filter(|t| t + 1 < tiles)
            .map(|t| a.transfer(t, len, &[t + 1]))
            .collect(),
    )
}

/// Within each group of `group` consecutive tiles, every tile sends a
/// distinct `len`-byte block to every other member (a transpose).
pub fn all_to_all(tiles: u32, group: u32, len: u32) -> Phase {
    let mut a = Alloc::new(tiles);
    let mut v = Vec::new();
    for base in (0..tiles).step_by(group.max(1) as usize) {
        let end = base.saturating_add(group).min(tiles);
        for s in base..end {
            for d in base..end {
                if s != d {
                    v.push(a.transfer(s, len, &[d]));
                }
            }
        }
    }
    Phase::new(v)
}

/// `senders` tiles (spread over the chip) each multicast a `len`-byte weight
/// slice to every tile.
pub fn broadcast(tiles: u32, senders: u32, len: u32) -> Phase {
    let mut a = Alloc::new(tiles);
    let all: Vec<u32> = (0..tiles).collect();
    let stride = (tiles / senders.max(1)).max(1);
    Phase::new(
        (0..senders.min(tiles))
            .map(|i| a.transfer(i * stride, len, &all))
            .collect(),
    )
}

/// Tiles form groups of `group`; each group needs `slices` weight slices of
/// `len` bytes, each held by a tile of another group and multicast to the
/// whole group.
pub fn group_broadcast(tiles: u32, group: u32, slices: u32, len: u32) -> Phase {
    let mut a = Alloc::new(tiles);
    let mut v = Vec::new();
    let group = group.max(1);
    let groups = tiles / group;
    for g in 0..groups {
        let members: Vec<u32> = (g * group..(g + 1) * group).collect();
        for k in 0..slices {
            // The owner sits in a later group, at a member index that varies.
            let owner_group = (g + 1 + k) % groups;
            let owner = owner_group * group + (g + k * 7) % group;
            v.push(a.transfer(owner, len, &members));
        }
    }
    Phase::new(v)
}

/// A `rows` x `cols` tile grid (tile = row * cols + col) all-gathers matmul
/// operands: tile (i, j) multicasts its `len_a`-byte piece of A to the rest
/// of row i and its `len_b`-byte piece of B to the rest of column j.
pub fn grid_allgather(rows: u32, cols: u32, len_a: u32, len_b: u32) -> Phase {
    let mut a = Alloc::new(rows.saturating_mul(cols));
    let mut v = Vec::new();
    for i in 0..rows {
        for j in 0..cols {
            let me = i * cols + j;
            let row: Vec<u32> = (0..cols)
                .filter(|&c| c != j)
                .map(|c| i * cols + c)
                .collect();
            let col: Vec<u32> = (0..rows)
                .filter(|&r| r != i)
                .map(|r| r * cols + j)
                .collect();
            if !row.is_empty() {
                v.push(a.transfer(me, len_a, &row));
            }
            if !col.is_empty() {
                v.push(a.transfer(me, len_b, &col));
            }
        }
    }
    Phase::new(v)
}

/// Like [`random`] with one in `hot_one_in` blocks sent to one of the first
/// `hot` tiles, so a few receivers bound the phase.
pub fn random_hot(
    tiles: u32,
    per_tile: u32,
    max_len: u32,
    hot: u32,
    hot_one_in: u64,
    seed: u64,
) -> Phase {
    let mut rng = Rng::new(seed);
    let mut a = Alloc::new(tiles);
    let mut v = Vec::new();
    for s in 0..tiles {
        for _ in 0..per_tile {
            let len = 4 + rng.below(max_len.saturating_sub(3) as u64) as u32;
            let d = if rng.below(hot_one_in.max(1)) == 0 {
                rng.below(hot.clamp(1, tiles) as u64) as u32
            } else {
                rng.below(tiles as u64) as u32
            };
            v.push(a.transfer(s, len, &[d]));
        }
    }
    Phase::new(v)
}

/// In each group of `group` tiles, every member sends `len` bytes of
/// partial sums to the group's first tile.
pub fn gather(tiles: u32, group: u32, len: u32) -> Phase {
    let mut a = Alloc::new(tiles);
    let mut v = Vec::new();
    for base in (0..tiles).step_by(group.max(1) as usize) {
        for s in base + 1..base.saturating_add(group).min(tiles) {
            v.push(a.transfer(s, len, &[base]));
        }
    }
    Phase::new(v)
}

/// Every tile sends `per_tile` blocks of 4..=`max_len` bytes to random tiles;
/// one in `multicast_one_in` blocks goes to 2..=4 tiles instead (0: never).
pub fn random(tiles: u32, per_tile: u32, max_len: u32, multicast_one_in: u64, seed: u64) -> Phase {
    let mut rng = Rng::new(seed);
    let mut a = Alloc::new(tiles);
    let mut v = Vec::new();
    for s in 0..tiles {
        for _ in 0..per_tile {
            let len = 4 + rng.below(max_len.saturating_sub(3) as u64) as u32;
            let n = if multicast_one_in > 0 && rng.below(multicast_one_in) == 0 {
                2 + rng.below(3)
            } else {
                1
            };
            let mut dsts: Vec<u32> = Vec::new();
            while (dsts.len() as u64) < n.min(tiles as u64) {
                let d = rng.below(tiles as u64) as u32;
                if !dsts.contains(&d) {
                    dsts.push(d);
                }
            }
            v.push(a.transfer(s, len, &dsts));
        }
    }
    Phase::new(v)
}

/// The same phase with every source and destination offset moved by
/// `delta` bytes (a relocation: what the `reused` kind recognises).
pub fn relocated(phase: &Phase, delta: u32) -> Phase {
    let mut p = phase.clone();
    for t in &mut p.transfers {
        t.src_offset = t.src_offset.saturating_add(delta);
        for d in &mut t.dsts {
            d.offset = d.offset.saturating_add(delta);
        }
    }
    p
}
