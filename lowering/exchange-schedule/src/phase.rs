//! The scheduler's input: an exchange phase (a list of transfers), its
//! validation, and its endpoint lower bound.
//!
//! Offsets are byte offsets from the start of a tile's SRAM (not addresses),
//! so a phase can be checked against any target's memory size.

use super::bucket::Groups;
use ipu_target::Target;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use thiserror::Error;

/// Where one destination tile writes a transfer's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Destination {
    pub tile: u32,
    /// Byte offset in the destination tile's SRAM.
    pub offset: u32,
}

/// `len` bytes at `src_offset` on `src_tile`, copied to every destination.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Transfer {
    pub src_tile: u32,
    /// Byte offset in the source tile's SRAM.
    pub src_offset: u32,
    pub len: u32,
    pub dsts: SmallVec<[Destination; 2]>,
}

impl Transfer {
    /// A transfer to one destination.
    pub fn unicast(
        src_tile: u32,
        src_offset: u32,
        len: u32,
        dst_tile: u32,
        dst_offset: u32,
    ) -> Self {
        Transfer {
            src_tile,
            src_offset,
            len,
            dsts: smallvec::smallvec![Destination {
                tile: dst_tile,
                offset: dst_offset
            }],
        }
    }
}

/// One exchange phase: every transfer happens between two syncs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Phase {
    pub transfers: Vec<Transfer>,
}

impl Phase {
    pub fn new(transfers: Vec<Transfer>) -> Self {
        Phase { transfers }
    }

    /// Total (transfer, destination) byte count.
    pub fn delivered_bytes(&self) -> u64 {
        self.transfers
            .iter()
            .map(|t| t.len as u64 * t.dsts.len() as u64)
            .sum()
    }
}

/// Why a phase cannot be scheduled. Each names the transfer at fault.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PhaseError {
    #[error("transfer {transfer}: source tile {tile} is out of range (target has {tiles} tiles)")]
    SourceTileOutOfRange {
        transfer: usize,
        tile: u32,
        tiles: u32,
    },
    #[error("transfer {transfer}: destination {dst} tile {tile} is out of range (target has {tiles} tiles)")]
    DestTileOutOfRange {
        transfer: usize,
        dst: usize,
        tile: u32,
        tiles: u32,
    },
    #[error("transfer {transfer}: source bytes [{start}, {end}) on tile {tile} exceed the tile's {size} B of SRAM")]
    SourceOutOfMemory {
        transfer: usize,
        tile: u32,
        start: u64,
        end: u64,
        size: u64,
    },
    #[error("transfer {transfer}: destination {dst} bytes [{start}, {end}) on tile {tile} exceed the tile's {size} B of SRAM")]
    DestOutOfMemory {
        transfer: usize,
        dst: usize,
        tile: u32,
        start: u64,
        end: u64,
        size: u64,
    },
    #[error("transfer {transfer} has no destinations")]
    NoDestinations { transfer: usize },
    #[error(
        "transfers {first} and {second} both write tile {tile} bytes [{start}, {end}) in the same phase"
    )]
    OverlappingWrites {
        first: usize,
        second: usize,
        tile: u32,
        start: u64,
        end: u64,
    },
    #[error("phase has {count} transfers, more than the supported {max}")]
    TooManyTransfers { count: usize, max: usize },
}

/// Largest phase the scheduler accepts (indices are stored as u32).
pub const MAX_TRANSFERS: usize = 1 << 24;

/// Checks tiles, memory ranges, and that no two transfers write the same bytes.
pub fn validate_phase(phase: &Phase, target: &Target) -> Result<(), PhaseError> {
    let tiles = target.tiles();
    let size = target.sram_bytes();
    if phase.transfers.len() > MAX_TRANSFERS {
        return Err(PhaseError::TooManyTransfers {
            count: phase.transfers.len(),
            max: MAX_TRANSFERS,
        });
    }
    // (tile, start, end, transfer) of every destination write, by tile.
    let n = tiles as usize;
    let mut per_tile = vec![0usize; n + 1];
    for t in phase.transfers.iter().filter(|t| t.len > 0) {
        for d in &t.dsts {
            per_tile[(d.tile as usize).min(n)] += 1;
        }
    }
    let mut writes: Groups<(u32, u64, u64, usize)> = Groups::with_counts(&per_tile);
    for (i, t) in phase.transfers.iter().enumerate() {
        if t.src_tile >= tiles {
            return Err(PhaseError::SourceTileOutOfRange {
                transfer: i,
                tile: t.src_tile,
                tiles,
            });
        }
        let (start, end) = (t.src_offset as u64, t.src_offset as u64 + t.len as u64);
        if end > size {
            return Err(PhaseError::SourceOutOfMemory {
                transfer: i,
                tile: t.src_tile,
                start,
                end,
                size,
            });
        }
        if t.dsts.is_empty() {
            return Err(PhaseError::NoDestinations { transfer: i });
        }
        for (j, d) in t.dsts.iter().enumerate() {
            if d.tile >= tiles {
                return Err(PhaseError::DestTileOutOfRange {
                    transfer: i,
                    dst: j,
                    tile: d.tile,
                    tiles,
                });
            }
            let (start, end) = (d.offset as u64, d.offset as u64 + t.len as u64);
            if end > size {
                return Err(PhaseError::DestOutOfMemory {
                    transfer: i,
                    dst: j,
                    tile: d.tile,
                    start,
                    end,
                    size,
                });
            }
            if t.len > 0 {
                writes.push(d.tile as usize, (d.tile, start, end, i));
            }
        }
    }
    // Groups hold distinct tiles: no two groups' writes can overlap.
    let writes = writes.finish(|_| ());
    for w in writes.iter().flat_map(|g| g.windows(2)) {
        let (a, b) = (w[0], w[1]);
        if a.0 == b.0 && b.1 < a.2 {
            let (first, second) = if a.3 <= b.3 { (a.3, b.3) } else { (b.3, a.3) };
            return Err(PhaseError::OverlappingWrites {
                first,
                second,
                tile: a.0,
                start: b.1,
                end: a.2.min(b.2),
            });
        }
    }
    Ok(())
}

/// A set of receivers of the same source bytes: the unit a multicast sends once.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub src_tile: u32,
    pub src_offset: u32,
    pub len: u32,
    /// (transfer, destination index, destination tile), tiles distinct, sorted by tile.
    pub receivers: Vec<(u32, u32, u32)>,
}

/// Groups (transfer, destination) pairs that take identical source bytes into
/// jobs, so each byte range is sent once however many tiles receive it. A tile
/// that receives the same bytes twice (two destination offsets) gets a second
/// job, since one selection delivers one copy. Zero-length transfers vanish.
/// Jobs come out in order of their first transfer, so the result is deterministic.
pub(crate) fn build_jobs(phase: &Phase, multicast: bool) -> Vec<Job> {
    let mut jobs: Vec<Job> = Vec::new();
    // Source (src_tile, src_offset, len) of each transfer, as an index.
    let mut index: FxHashMap<(u32, u32, u32), u32> = FxHashMap::default();
    let mut source_of: Vec<u32> = Vec::with_capacity(phase.transfers.len());
    // Per source: jobs with it, in creation order, and transfers using it.
    let mut slots: Vec<SmallVec<[u32; 1]>> = Vec::new();
    let mut users: Vec<u32> = Vec::new();
    let mut max_tile = 0u32;
    for t in &phase.transfers {
        let key = (t.src_tile, t.src_offset, t.len);
        let k = *index.entry(key).or_insert_with(|| {
            slots.push(SmallVec::new());
            users.push(0);
            slots.len() as u32 - 1
        });
        users[k as usize] += 1;
        source_of.push(k);
        max_tile = t.dsts.iter().fold(max_tile, |m, d| m.max(d.tile));
    }
    // The k-th time a tile takes a source (counting from 0) it joins that
    // source's k-th job, a new one when there are k: the first job not yet
    // holding the tile, as each tile's jobs are always the first ones.
    // Counts per tile for a source of one transfer; a map for the rest.
    let mut seen_by: Vec<usize> = vec![usize::MAX; max_tile as usize + 1];
    let mut seen: Vec<u32> = vec![0; max_tile as usize + 1];
    let mut shared: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    for (ti, t) in phase.transfers.iter().enumerate() {
        if t.len == 0 {
            continue;
        }
        let k = source_of[ti] as usize;
        for (di, d) in t.dsts.iter().enumerate() {
            let rec = (ti as u32, di as u32, d.tile);
            let tile = d.tile as usize;
            let taken = if !multicast {
                u32::MAX
            } else if users[k] == 1 {
                if seen_by[tile] != ti {
                    (seen_by[tile], seen[tile]) = (ti, 0);
                }
                seen[tile] += 1;
                seen[tile] - 1
            } else {
                let c = shared.entry((k as u32, d.tile)).or_insert(0);
                *c += 1;
                *c - 1
            };
            let slot = &mut slots[k];
            match slot.get(taken as usize) {
                Some(&j) => jobs[j as usize].receivers.push(rec),
                None => {
                    slot.push(jobs.len() as u32);
                    jobs.push(Job {
                        src_tile: t.src_tile,
                        src_offset: t.src_offset,
                        len: t.len,
                        receivers: vec![rec],
                    });
                }
            }
        }
    }
    for j in &mut jobs {
        j.receivers.sort_unstable_by_key(|r| (r.2, r.0, r.1));
    }
    jobs
}

/// The endpoint lower bound of a phase and the per-tile figures behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerBound {
    /// max over tiles of max(send cycles, receive cycles).
    pub cycles: u64,
    /// A tile attaining the bound (the lowest such), if the phase moves data.
    pub tile: Option<u32>,
    /// Distinct source bytes each tile sends (a multicast counts once).
    pub bytes_sent: Vec<u64>,
    /// Bytes each tile receives.
    pub bytes_received: Vec<u64>,
    /// Of `bytes_received`, bytes its supertile partner receives too (same source bytes).
    pub bytes_shared: Vec<u64>,
}

/// Computes the endpoint lower bound: max over tiles t of
/// max(ceil(sent_t / send_rate), receive bound_t). Without supertiles the
/// receive bound is ceil(received_t / receive_rate). With pairs, bytes both
/// tiles of a pair receive can come at the shared rate (8 B/cycle): private
/// bytes still need the tile's own port, so the bound is
/// max(ceil(private_t / 4), ceil((private_t + private_partner + shared) / 8)).
/// This is docs/target.md's "rate = 8 only for supertile-shared receives"
/// applied per pair, which keeps it a true lower bound when a tile mixes both.
/// The phase is validated first, since the bound indexes tiles.
pub fn lower_bound(phase: &Phase, target: &Target) -> Result<LowerBound, PhaseError> {
    validate_phase(phase, target)?;
    Ok(lower_bound_of_valid(phase, target))
}

/// [`lower_bound`] for a phase already validated against `target`.
pub(crate) fn lower_bound_of_valid(phase: &Phase, target: &Target) -> LowerBound {
    let jobs = build_jobs(phase, target.exchange.multicast);
    lower_bound_from_jobs(&jobs, target.tiles() as usize, target)
}

pub(crate) fn lower_bound_from_jobs(jobs: &[Job], n: usize, target: &Target) -> LowerBound {
    let mut sent = vec![0u64; n];
    let mut recv = vec![0u64; n];
    let mut shared = vec![0u64; n];
    let paired = target.exchange.supertile_tiles == 2;
    // Distinct source bytes per tile: union of the jobs' source ranges.
    let mut ranges: Vec<(u32, u64, u64)> = jobs
        .iter()
        .map(|j| {
            (
                j.src_tile,
                j.src_offset as u64,
                j.src_offset as u64 + j.len as u64,
            )
        })
        .collect();
    ranges.sort_unstable();
    let mut cur: Option<(u32, u64, u64)> = None;
    for (tile, s, e) in ranges {
        match cur {
            Some((ct, cs, ce)) if ct == tile && s <= ce => cur = Some((ct, cs, ce.max(e))),
            _ => {
                if let Some((ct, cs, ce)) = cur {
                    sent[ct as usize] += ce - cs;
                }
                cur = Some((tile, s, e));
            }
        }
    }
    if let Some((ct, cs, ce)) = cur {
        sent[ct as usize] += ce - cs;
    }
    if !target.exchange.multicast {
        // Without multicast every destination costs its own send.
        sent.iter_mut().for_each(|s| *s = 0);
        for j in jobs {
            sent[j.src_tile as usize] += j.len as u64 * j.receivers.len() as u64;
        }
    }
    for j in jobs {
        for (k, r) in j.receivers.iter().enumerate() {
            recv[r.2 as usize] += j.len as u64;
            if paired {
                let partner = r.2 ^ 1;
                // Receivers are sorted by tile, so the partner is adjacent.
                let has_partner = (k > 0 && j.receivers[k - 1].2 == partner)
                    || j.receivers.get(k + 1).is_some_and(|n| n.2 == partner);
                if has_partner {
                    shared[r.2 as usize] += j.len as u64;
                }
            }
        }
    }
    let send_rate = target.exchange.send_bytes_per_cycle.max(1) as u64;
    let recv_rate = target.exchange.receive_bytes_per_cycle.max(1) as u64;
    let pair_rate = target
        .exchange
        .supertile_shared_receive_bytes_per_cycle
        .max(1) as u64;
    let mut best = (0u64, None);
    for t in 0..n {
        let send = sent[t].div_ceil(send_rate);
        let private = recv[t] - shared[t];
        let mut receive = private.div_ceil(recv_rate);
        if paired && (t ^ 1) < n {
            let p = t ^ 1;
            let pair_private = recv[p] - shared[p];
            // shared[t] == shared[p]: both count the same jobs.
            receive = receive.max((private + pair_private + shared[t]).div_ceil(pair_rate));
        } else {
            receive = recv[t].div_ceil(recv_rate);
        }
        let c = send.max(receive);
        if c > best.0 {
            best = (c, Some(t as u32));
        }
    }
    LowerBound {
        cycles: best.0,
        tile: best.1,
        bytes_sent: sent,
        bytes_received: recv,
        bytes_shared: shared,
    }
}
