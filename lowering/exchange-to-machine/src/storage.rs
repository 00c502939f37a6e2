//! Storage placement: per tile, every buffer gets an offset for its
//! lifetime. Buffers are placed largest first at the lowest 8-byte-aligned
//! offset free for their whole lifetime, so buffers never alive together
//! share memory. A call frame's buffer is alive in each call's steps only
//! (`spans`), so other buffers may use its bytes between calls.

/// One buffer of one tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub name: String,
    pub size: u64,
    /// First and last step it is alive.
    pub first: u32,
    pub last: u32,
    /// When not empty, the only steps within `first..=last` it is alive:
    /// disjoint, increasing, inclusive ranges (a call frame's buffer, one
    /// range per call).
    pub spans: Vec<(u32, u32)>,
}

impl Buffer {
    /// Whether it is alive in step `s`.
    pub fn alive_at(&self, s: u32) -> bool {
        self.first <= s
            && s <= self.last
            && (self.spans.is_empty() || self.spans.iter().any(|&(a, b)| a <= s && s <= b))
    }

    /// Whether it is alive in some step `other` is.
    pub fn meets(&self, other: &Buffer) -> bool {
        if self.first > other.last || other.first > self.last {
            return false;
        }
        let (one_a, one_b) = ([(self.first, self.last)], [(other.first, other.last)]);
        let a: &[(u32, u32)] = if self.spans.is_empty() {
            &one_a
        } else {
            &self.spans
        };
        let b: &[(u32, u32)] = if other.spans.is_empty() {
            &one_b
        } else {
            &other.spans
        };
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if a[i].0 <= b[j].1 && b[j].0 <= a[i].1 {
                return true;
            }
            if a[i].1 < b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        false
    }
}

/// Where each buffer goes: offsets (from the start of data memory), in the
/// buffers' order, and the bytes used.
pub fn place(buffers: &[Buffer]) -> (Vec<u64>, u64) {
    place_from(buffers, &vec![0; buffers.len()])
}

/// [`place`] with each buffer at or above its floor (`floors[i]`, an
/// offset): the buffers with the highest floor first, each group largest
/// first, so a region only some buffers may use (the interleaved one)
/// takes them before the others fill its spare bytes.
pub fn place_from(buffers: &[Buffer], floors: &[u64]) -> (Vec<u64>, u64) {
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by(|&a, &b| {
        floors[b]
            .cmp(&floors[a])
            .then(buffers[b].size.cmp(&buffers[a].size))
            .then(buffers[a].name.cmp(&buffers[b].name))
    });
    let mut offsets = vec![0u64; buffers.len()];
    // The placed buffers' address ranges, by start: (start, end, buffer).
    let mut placed: Vec<(u64, u64, usize)> = Vec::with_capacity(buffers.len());
    let mut used = 0;
    for i in order {
        let b = &buffers[i];
        // The lowest offset from the floor up that no placed buffer alive
        // at the same time overlaps, the ranges taken by start; whether a
        // buffer meets `b` is asked only of those that would move it up.
        let mut at = floors[i];
        for &(lo, hi, j) in &placed {
            if at + b.size <= lo {
                break;
            }
            let above = hi.div_ceil(8) * 8;
            if above > at && buffers[j].meets(b) {
                at = above;
            }
        }
        offsets[i] = at;
        used = used.max(at + b.size);
        let range = (at, at + b.size, i);
        let k = placed.partition_point(|x| *x < range);
        placed.insert(k, range);
    }
    (offsets, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(name: &str, size: u64, first: u32, last: u32) -> Buffer {
        Buffer {
            name: name.into(),
            size,
            first,
            last,
            spans: Vec::new(),
        }
    }

    #[test]
    fn buffers_alive_together_never_overlap_and_others_share() {
        let bufs = vec![buf("a", 100, 0, 1), buf("b", 50, 1, 2), buf("c", 100, 2, 3)];
        let (off, used) = place(&bufs);
        // a and b overlap in time: disjoint addresses; c reuses a's space.
        assert!(off[0] + 100 <= off[1] || off[1] + 50 <= off[0]);
        assert_eq!(off[2], off[0]);
        assert_eq!((off[1], used), (104, 154)); // b after a, 8-byte aligned
    }

    #[test]
    fn frame_buffers_share_memory_with_buffers_alive_between_their_calls() {
        // f is alive in steps 2-4 and 8-10 (two calls); g in 5-7 only, h in 3-9.
        let mut f = buf("f", 100, 2, 10);
        f.spans = vec![(2, 4), (8, 10)];
        let bufs = vec![f, buf("g", 100, 5, 7), buf("h", 10, 3, 9)];
        let (off, _) = place(&bufs);
        assert_eq!(off[1], off[0], "g lives between f's calls, in its bytes");
        assert!(off[2] >= off[0] + 100, "h meets f in both calls");
        assert!(bufs[0].meets(&bufs[2]) && !bufs[0].meets(&bufs[1]));
    }

    #[test]
    fn placement_is_the_plain_first_fit() {
        // The plain first fit: every placed buffer alive at the same time,
        // by start, scanned from the floor.
        let plain = |buffers: &[Buffer], floors: &[u64]| {
            let mut order: Vec<usize> = (0..buffers.len()).collect();
            order.sort_by(|&a, &b| {
                floors[b]
                    .cmp(&floors[a])
                    .then(buffers[b].size.cmp(&buffers[a].size))
                    .then(buffers[a].name.cmp(&buffers[b].name))
            });
            let mut offsets = vec![0u64; buffers.len()];
            let mut placed: Vec<usize> = Vec::new();
            let mut used = 0;
            for i in order {
                let b = &buffers[i];
                let mut busy: Vec<(u64, u64)> = placed
                    .iter()
                    .filter(|&&j| buffers[j].meets(b))
                    .map(|&j| (offsets[j], offsets[j] + buffers[j].size))
                    .collect();
                busy.sort_unstable();
                let mut at = floors[i];
                for (lo, hi) in busy {
                    if at + b.size <= lo {
                        break;
                    }
                    at = at.max(hi.div_ceil(8) * 8);
                }
                offsets[i] = at;
                used = used.max(at + b.size);
                placed.push(i);
            }
            (offsets, used)
        };
        let mut x = 7u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..300 {
            let n = 1 + next(40) as usize;
            let bufs: Vec<Buffer> = (0..n)
                .map(|k| {
                    let first = next(30) as u32;
                    let mut b = buf(
                        &format!("b{k}"),
                        next(5) * 24 + next(3),
                        first,
                        first + next(20) as u32,
                    );
                    if next(3) == 0 {
                        b.spans = vec![
                            (b.first, b.first + 2),
                            (b.first + 5, b.last.max(b.first + 5)),
                        ];
                        b.last = b.last.max(b.first + 5);
                    }
                    b
                })
                .collect();
            let floors: Vec<u64> = (0..n).map(|_| [0, 0, 64, 100][next(4) as usize]).collect();
            assert_eq!(
                place_from(&bufs, &floors),
                plain(&bufs, &floors),
                "{bufs:?} {floors:?}"
            );
        }
    }

    #[test]
    fn buffers_with_a_floor_go_above_it_and_the_others_fill_around_them() {
        // i must be at 64 or above (an interleaved region); a and b may go
        // anywhere: the 48 bytes below 64 take b, a goes above i.
        let bufs = vec![buf("a", 32, 0, 1), buf("b", 48, 0, 1), buf("i", 32, 0, 1)];
        let (off, used) = place_from(&bufs, &[0, 0, 64]);
        assert_eq!(off[2], 64);
        assert_eq!(off[1], 0);
        assert_eq!((off[0], used), (96, 128));
        // Without floors, the same as place.
        assert_eq!(place_from(&bufs, &[0; 3]), place(&bufs));
    }
}
