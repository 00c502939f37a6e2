//! Tile memories kept for reuse within one process.
//!
//! A chip's tile memories are large (624 KiB each on `ipu21`, 918 MB for
//! the chip) and a fresh one is zeroed by the operating system page by
//! page as it is first written. A process that simulates chip after chip
//! (the tests, sweeps, a benchmark's runs) would pay that again for every
//! chip, or a full `memset` when the allocator hands back memory it has
//! kept. Here a dropped tile's memory is kept instead, with the end of
//! the bytes its tile ever wrote, and a new tile of the same size takes it
//! back after zeroing only those bytes: the pages stay mapped, and
//! untouched pages are never touched. At most [`POOL_BYTES`] are kept.

use std::sync::Mutex;

/// The most bytes of tile memory kept (about one `ipu21` chip).
const POOL_BYTES: usize = 1 << 30;

/// Kept memories, each with the end of its written bytes (all of its
/// bytes from there on are zero).
struct Pool {
    kept: Vec<(Vec<u8>, usize)>,
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
            m[..dirty].fill(0);
            m
        }
        None => vec![0; n],
    }
}

/// Keeps `mem`, whose bytes from `dirty` on are zero, if there is room;
/// else frees it.
pub(super) fn give(mem: Vec<u8>, dirty: usize) {
    let dirty = dirty.min(mem.len());
    let mut p = pool();
    if !mem.is_empty() && p.bytes + mem.len() <= POOL_BYTES {
        p.bytes += mem.len();
        p.kept.push((mem, dirty));
    }
}
