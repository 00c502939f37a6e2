//! Storage placement: per tile, every buffer gets an offset for its
//! lifetime. Buffers are placed largest first at the lowest 8-byte-aligned
//! offset free for their whole lifetime, so buffers never alive together
//! share memory.

/// One buffer of one tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub name: String,
    pub size: u64,
    /// First and last step it is alive.
    pub first: u32,
    pub last: u32,
}

/// Where each buffer goes: offsets (from the start of data memory), in the
/// buffers' order, and the bytes used.
pub fn place(buffers: &[Buffer]) -> (Vec<u64>, u64) {
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by(|&a, &b| {
        buffers[b]
            .size
            .cmp(&buffers[a].size)
            .then(buffers[a].name.cmp(&buffers[b].name))
    });
    let mut offsets = vec![0u64; buffers.len()];
    let mut placed: Vec<usize> = Vec::new();
    let mut used = 0;
    for i in order {
        let b = &buffers[i];
        // Address ranges of placed buffers alive at the same time, by start.
        let mut busy: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&j| buffers[j].first <= b.last && b.first <= buffers[j].last)
            .map(|&j| (offsets[j], offsets[j] + buffers[j].size))
            .collect();
        busy.sort_unstable();
        let mut at = 0u64;
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
}
