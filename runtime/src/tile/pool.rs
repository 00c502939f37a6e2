//! Tile memories kept for reuse within one process.
//!
//! A chip's tile memories are large (624 KiB each on `ipu21`, 918 MB for
//! the chip) and a fresh one is zeroed by the operating system page by
//! page as it is first written. A process that simulates chip after chip
//! (the tests, sweeps, a benchmark's runs) would pay that again for every
//! chip, or a full `memset` when the allocator hands back memory it has
//! kept. Here a dropped tile's memory is kept instead, with the pages its
//! tile ever wrote ([`Dirty`]), and a new tile of the same size takes it
//! back after zeroing only those pages: the pages stay mapped, and
//! untouched pages are never touched. At most [`POOL_BYTES`] are kept.

use std::sync::Mutex;

/// The most bytes of tile memory kept (about one `ipu21` chip).
const POOL_BYTES: usize = 1 << 30;

/// Log2 of the bytes of a page [`Dirty`] tracks.
const PAGE_SHIFT: u32 = 12;

/// The pages of a tile's memory ever written (every other byte is zero).
#[derive(Debug, Default)]
pub(super) struct Dirty {
    bits: Vec<u64>,
}

impl Dirty {
    /// No page written, of a memory of `n` bytes.
    pub(super) fn of_bytes(n: usize) -> Dirty {
        Dirty {
            bits: vec![0; n.div_ceil(1 << PAGE_SHIFT).div_ceil(64)],
        }
    }

    /// Marks the page of byte `a`.
    #[inline(always)]
    pub(super) fn mark_byte(&mut self, a: usize) {
        let p = a >> PAGE_SHIFT;
        if let Some(w) = self.bits.get_mut(p >> 6) {
            *w |= 1 << (p & 63);
        }
    }

    /// Marks every page of the bytes `r`.
    pub(super) fn mark(&mut self, r: std::ops::Range<usize>) {
        if !r.is_empty() {
            for p in r.start >> PAGE_SHIFT..=(r.end - 1) >> PAGE_SHIFT {
                self.mark_byte(p << PAGE_SHIFT);
            }
        }
    }

    /// Whether no page of the bytes `r` was written (they are all zero).
    pub(super) fn clean(&self, r: std::ops::Range<usize>) -> bool {
        r.is_empty()
            || (r.start >> PAGE_SHIFT..=(r.end - 1) >> PAGE_SHIFT).all(|p| {
                self.bits
                    .get(p >> 6)
                    .is_some_and(|w| w & (1 << (p & 63)) == 0)
            })
    }

    /// Zeroes the marked pages of `mem`.
    fn zero(&self, mem: &mut [u8]) {
        for (k, &w) in self.bits.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                let p = k * 64 + w.trailing_zeros() as usize;
                w &= w - 1;
                let lo = (p << PAGE_SHIFT).min(mem.len());
                let hi = ((p + 1) << PAGE_SHIFT).min(mem.len());
                mem[lo..hi].fill(0);
            }
        }
    }
}

/// Kept memories, each with its written pages.
struct Pool {
    kept: Vec<(Vec<u8>, Dirty)>,
    bytes: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    kept: Vec::new(),
    bytes: 0,
});

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    // A panic elsewhere while holding the lock leaves the pool consistent
    // (each operation is one push or one removal).
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `n` zero bytes: a kept memory of that size if there is one, else a
/// new one.
pub(super) fn take(n: usize) -> Vec<u8> {
    let found = {
        let mut p = pool();
        let i = p.kept.iter().rposition(|(m, _)| m.len() == n);
        i.map(|i| {
            let (m, dirty) = p.kept.swap_remove(i);
            p.bytes -= m.len();
            (m, dirty)
        })
    };
    match found {
        Some((mut m, dirty)) => {
            dirty.zero(&mut m);
            m
        }
        None => vec![0; n],
    }
}

/// Keeps `mem`, whose bytes outside the `dirty` pages are zero, if there
/// is room; else frees it.
pub(super) fn give(mem: Vec<u8>, dirty: Dirty) {
    let mut p = pool();
    if !mem.is_empty() && p.bytes + mem.len() <= POOL_BYTES {
        p.bytes += mem.len();
        p.kept.push((mem, dirty));
    }
}
