//! List schedulers that place an exchange phase's words in time.
//!
//! The phase's jobs (source bytes sent once to a set of tiles, see
//! [`super::phase`]) are packed into streams: all jobs from one sender to the
//! same receiver set, in phase order, so a receiver keeps one sender selected
//! as long as possible. Each stream needs its sender and one receive port per
//! receiver (or, in paired mode, one port of each supertile pair that takes
//! it). Every resource has a timeline of busy intervals, in its own time
//! domain: the sender in send cycles, a port in arrival cycles (send cycle +
//! route latency from the sender). Streams are placed one after another, each
//! into the earliest windows where all its resources are free (filling gaps
//! left by earlier streams, splitting a stream across windows of at least
//! [`Variant::min_chunk`] words when it does not fit whole).
//!
//! Quality comes from the order streams are placed in; [`VARIANTS`] lists
//! the orders tried (rotation, critical-first, receiver rotation,
//! largest-first, with and without splitting). The caller runs them all,
//! then improves the best by iterated greedy (streams still sending after
//! the lower bound are placed first next time, while that helps).

use super::phase::Job;
use super::{Fragment, Receive};
use ipu_target::Target;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::collections::hash_map::Entry;

const INF: u64 = u64::MAX / 4;

/// Busy intervals of one resource, sorted, disjoint and never touching.
#[derive(Debug, Clone, Default)]
struct Timeline {
    busy: Vec<(u64, u64)>,
}

impl Timeline {
    /// The first free window at or after `x`: (start, end), start >= x.
    fn free_at(&self, x: u64) -> (u64, u64) {
        let i = self.busy.partition_point(|iv| iv.1 <= x);
        match self.busy.get(i) {
            Some(&(s, e)) if s <= x => (e, self.busy.get(i + 1).map_or(INF, |n| n.0)),
            Some(&(s, _)) => (x, s),
            None => (x, INF),
        }
    }

    /// Marks [s, e) busy; the caller guarantees it was free.
    fn insert(&mut self, s: u64, e: u64) {
        let i = self.busy.partition_point(|iv| iv.1 <= s);
        let merge_prev = i > 0 && self.busy[i - 1].1 == s;
        let merge_next = self.busy.get(i).is_some_and(|n| n.0 == e);
        match (merge_prev, merge_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = e,
            (false, true) => self.busy[i].0 = s,
            (false, false) => self.busy.insert(i, (s, e)),
        }
    }
}

/// A receive-port requirement of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Demand {
    /// This tile's own port.
    Port(u32),
    /// Either port of the supertile pair (even tile given); both tiles capture.
    Pair(u32),
}

/// Jobs from one sender to one receiver set, sent back to back.
#[derive(Debug, Clone)]
struct Stream {
    src: u32,
    /// Job indices in phase order.
    jobs: Vec<u32>,
    words: u64,
    /// Receiver tiles, sorted.
    tiles: Vec<u32>,
    demands: Vec<Demand>,
    /// Route latency to each demand's port(s) (pairs share a column).
    lat: Vec<u64>,
    /// Route latency to the odd port of each pair demand (= `lat` for a port demand).
    lat_odd: Vec<u64>,
    /// Demand index of each receiver tile (index = position in `tiles`).
    demand_of: Vec<u32>,
}

/// The order in which streams are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Per sender, destinations in rotated order ((dst - src) mod tiles);
    /// senders interleaved by rank, so all-to-all shifts form diagonals.
    Rotation,
    /// Streams touching the most loaded endpoint first.
    CriticalFirst,
    /// Per receiver, senders in rotated order, interleaved by rank (gathers).
    ReceiverRotation,
    /// Longest streams first.
    LargestFirst,
}

/// One scheduler configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub order: Order,
    /// Smallest window (words) a stream is split into, unless it is the rest.
    pub min_chunk: u64,
    /// Receive shared bytes on either port of a supertile pair.
    pub paired: bool,
}

/// Variants the scheduler tries, the first being the baseline ("initial").
/// `WHOLE` as a minimum chunk keeps every stream in one window (smallest rows).
pub const VARIANTS: &[(Order, u64)] = &[
    (Order::Rotation, 8),
    (Order::CriticalFirst, 8),
    (Order::ReceiverRotation, 8),
    (Order::LargestFirst, 8),
    (Order::CriticalFirst, WHOLE),
    (Order::LargestFirst, WHOLE),
];

/// A minimum chunk larger than any stream: streams are never split.
pub const WHOLE: u64 = u64::MAX;

/// Result of one variant: its chunks, turned into fragments by
/// [`fragments`] only for the placements that are candidates.
#[derive(Debug, Clone)]
pub struct Placement {
    pub variant: Variant,
    pub horizon: u64,
    pub chunks: Vec<Chunk>,
    /// The placement order used (stream indices).
    pub order: Vec<usize>,
    /// Cycle after each stream's last word is sent (index = stream).
    pub stream_end: Vec<u64>,
}

/// Groups jobs into streams and computes their port demands.
fn build_streams(jobs: &[Job], target: &Target, paired: bool) -> Vec<Stream> {
    let word = target.exchange_word_bytes() as u64;
    let mut index: FxHashMap<(u32, Vec<u32>), usize> = FxHashMap::default();
    let mut streams: Vec<Stream> = Vec::new();
    for (ji, j) in jobs.iter().enumerate() {
        let tiles: Vec<u32> = j.receivers.iter().map(|r| r.2).collect();
        let words = (j.len as u64).div_ceil(word);
        match index.entry((j.src_tile, tiles)) {
            Entry::Occupied(e) => {
                let si = *e.get();
                streams[si].jobs.push(ji as u32);
                streams[si].words += words;
            }
            Entry::Vacant(e) => {
                let tiles = e.key().1.clone();
                e.insert(streams.len());
                let mut demands = Vec::with_capacity(tiles.len());
                let mut demand_of = Vec::with_capacity(tiles.len());
                let mut k = 0;
                while k < tiles.len() {
                    let t = tiles[k];
                    let pair_next =
                        paired && t.is_multiple_of(2) && tiles.get(k + 1) == Some(&(t + 1));
                    let d = demands.len() as u32;
                    if pair_next {
                        demands.push(Demand::Pair(t));
                        demand_of.extend([d, d]);
                        k += 2;
                    } else {
                        demands.push(Demand::Port(t));
                        demand_of.push(d);
                        k += 1;
                    }
                }
                let lat = demands
                    .iter()
                    .map(|d| match *d {
                        Demand::Port(p) | Demand::Pair(p) => {
                            target.route_latency(j.src_tile, p) as u64
                        }
                    })
                    .collect();
                let lat_odd = demands
                    .iter()
                    .zip(&lat)
                    .map(|(d, &l)| match *d {
                        Demand::Port(_) => l,
                        Demand::Pair(p) => target.route_latency(j.src_tile, p + 1) as u64,
                    })
                    .collect();
                streams.push(Stream {
                    src: j.src_tile,
                    jobs: vec![ji as u32],
                    words,
                    tiles,
                    demands,
                    lat,
                    lat_odd,
                    demand_of,
                });
            }
        }
    }
    streams
}

/// Stream indices in the variant's placement order (total, deterministic).
fn order_streams(streams: &[Stream], order: Order, tiles: u32) -> Vec<usize> {
    let n = tiles.max(1) as u64;
    let rot = |from: u32, to: u32| (to as u64 + n - from as u64 % n) % n;
    // Keys are computed once into a flat array: sorting through the streams
    // themselves chases pointers and was most of the scheduling time.
    let first: Vec<u32> = streams
        .iter()
        .map(|s| s.tiles.first().copied().unwrap_or(0))
        .collect();
    let mut keys: Vec<([u64; 4], u32)> = match order {
        Order::Rotation | Order::ReceiverRotation => {
            // Rank of each stream among its sender's (or first receiver's) streams.
            let by_receiver = order == Order::ReceiverRotation;
            let mut by_owner: Vec<(u64, u64, u32)> = streams
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let (owner, dist) = if by_receiver {
                        (first[i], rot(first[i], s.src))
                    } else {
                        (s.src, rot(s.src, first[i]))
                    };
                    (owner as u64, dist, i as u32)
                })
                .collect();
            by_owner.sort_unstable();
            let mut keys = Vec::with_capacity(streams.len());
            let mut rank = 0u64;
            for (k, &(owner, dist, i)) in by_owner.iter().enumerate() {
                rank = if k > 0 && by_owner[k - 1].0 == owner {
                    rank + 1
                } else {
                    0
                };
                keys.push(([rank, dist, owner, 0], i));
            }
            keys
        }
        Order::CriticalFirst => {
            let mut send = vec![0u64; n as usize];
            let mut port = vec![0u64; n as usize];
            for s in streams {
                send[s.src as usize] += s.words;
                for d in &s.demands {
                    match *d {
                        Demand::Port(p) => port[p as usize] += s.words,
                        Demand::Pair(p) => {
                            // Half on each port of the pair, rounded up.
                            port[p as usize] += s.words.div_ceil(2);
                            port[p as usize + 1] += s.words.div_ceil(2);
                        }
                    }
                }
            }
            streams
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let mut c = send[s.src as usize];
                    for d in &s.demands {
                        c = c.max(match *d {
                            Demand::Port(p) => port[p as usize],
                            Demand::Pair(p) => port[p as usize].max(port[p as usize + 1]),
                        });
                    }
                    (
                        [
                            u64::MAX - c,
                            u64::MAX - s.words,
                            rot(s.src, first[i]),
                            s.src as u64,
                        ],
                        i as u32,
                    )
                })
                .collect()
        }
        Order::LargestFirst => streams
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (
                    [u64::MAX - s.words, rot(s.src, first[i]), s.src as u64, 0],
                    i as u32,
                )
            })
            .collect(),
    };
    keys.sort_unstable();
    keys.into_iter().map(|(_, i)| i as usize).collect()
}

/// A placed piece of a stream: words [w0, w0 + words) at send cycle `t`,
/// with the port chosen for each demand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    stream: u32,
    w0: u64,
    words: u64,
    t: u64,
    ports: SmallVec<[u32; 4]>,
}

/// State of one variant's run.
struct Engine<'a> {
    streams: &'a [Stream],
    send: Vec<Timeline>,
    port: Vec<Timeline>,
    /// Words still to place that only this tile's own port can take.
    private_left: Vec<u64>,
}

impl Engine<'_> {
    /// Earliest window at or after `t` where the stream's sender and ports
    /// are all free for at least `need` words; returns (start, length, ports).
    fn window(&self, s: &Stream, mut t: u64, need: u64) -> (u64, u64, SmallVec<[u32; 4]>) {
        // Resources are probed cyclically (0 = sender, k = demand k - 1) from
        // the last one that moved `t`, so a busy receiver is retried first
        // and the search stops as soon as all agree on one window.
        let m = s.demands.len() + 1;
        let mut ports: SmallVec<[u32; 4]> = smallvec::smallvec![0; m - 1];
        let (mut i, mut agreed, mut end) = (0usize, 0usize, INF);
        loop {
            let (a, b) = if i == 0 {
                self.send[s.src as usize].free_at(t)
            } else {
                let l = s.lat[i - 1];
                let (port, a, b) = match s.demands[i - 1] {
                    Demand::Port(p) => {
                        let (a, b) = self.port[p as usize].free_at(t + l);
                        (p, a, b)
                    }
                    Demand::Pair(p) => {
                        let (a0, b0) = self.port[p as usize].free_at(t + l);
                        let (a1, b1) = self.port[p as usize + 1].free_at(t + l);
                        // Both free now: leave the port with more private work
                        // to come alone, then prefer the longer window; else
                        // take the port that frees first.
                        let key = |a: u64, b: u64, q: u32| {
                            (a, self.private_left[q as usize], std::cmp::Reverse(b))
                        };
                        if key(a0, b0, p) <= key(a1, b1, p + 1) {
                            (p, a0, b0)
                        } else {
                            (p + 1, a1, b1)
                        }
                    }
                };
                ports[i - 1] = port;
                (a - l, b.saturating_sub(l))
            };
            if a > t {
                (t, end, agreed) = (a, b, 1);
            } else {
                end = end.min(b);
                agreed += 1;
            }
            if end - t < need {
                // Too short: every resource must be probed again past it.
                (t, end, agreed) = (end, INF, 0);
            } else if agreed == m {
                return (t, end - t, ports);
            }
            i = (i + 1) % m;
        }
    }

    fn place(&mut self, si: usize, min_chunk: u64, out: &mut Vec<Chunk>) {
        let s = &self.streams[si];
        let mut done = 0u64;
        let mut t = 0u64;
        while done < s.words {
            let rest = s.words - done;
            let need = rest.min(min_chunk.max(1));
            let (start, len, ports) = self.window(s, t, need);
            let w = len.min(rest);
            self.send[s.src as usize].insert(start, start + w);
            for ((&p, &l), d) in ports.iter().zip(&s.lat).zip(&s.demands) {
                self.port[p as usize].insert(start + l, start + l + w);
                if let Demand::Port(_) = d {
                    let left = &mut self.private_left[p as usize];
                    *left = left.saturating_sub(w);
                }
            }
            out.push(Chunk {
                stream: si as u32,
                w0: done,
                words: w,
                t: start,
                ports,
            });
            done += w;
            t = start + w;
        }
    }
}

/// Streams of a phase for one receive mode, shared by the variants using it.
pub(crate) struct Prepared {
    streams: Vec<Stream>,
}

/// Packs the jobs into streams (paired: pair demands where both tiles receive).
pub(crate) fn prepare(jobs: &[Job], target: &Target, paired: bool) -> Prepared {
    Prepared {
        streams: build_streams(jobs, target, paired),
    }
}

/// The placement order of a variant.
pub(crate) fn plan_order(prepared: &Prepared, order: Order, target: &Target) -> Vec<usize> {
    order_streams(&prepared.streams, order, target.tiles())
}

/// Places the streams in `order` and returns the variant's fragments.
pub(crate) fn run_variant(
    prepared: &Prepared,
    order: &[usize],
    target: &Target,
    variant: Variant,
) -> Placement {
    let streams = &prepared.streams;
    let n = target.tiles() as usize;
    let mut private_left = vec![0u64; n];
    for st in streams {
        for d in &st.demands {
            if let Demand::Port(p) = *d {
                private_left[p as usize] += st.words;
            }
        }
    }
    let mut engine = Engine {
        streams,
        send: vec![Timeline::default(); n],
        port: vec![Timeline::default(); n],
        private_left,
    };
    let mut chunks = Vec::with_capacity(streams.len());
    for &si in order {
        engine.place(si, variant.min_chunk, &mut chunks);
    }
    let mut stream_end = vec![0u64; streams.len()];
    let mut horizon = 0;
    for c in &chunks {
        let s = &streams[c.stream as usize];
        let lat = s.lat.iter().copied().max().unwrap_or(0);
        let e = &mut stream_end[c.stream as usize];
        *e = (*e).max(c.t + c.words);
        // The receiver farthest away sees the last word last.
        horizon = horizon.max(c.t + c.words + lat);
    }
    Placement {
        variant,
        horizon,
        chunks,
        order: order.to_vec(),
        stream_end,
    }
}

/// The fragments of a placement made from `prepared` (its receive mode).
pub(crate) fn fragments(
    placement: &Placement,
    jobs: &[Job],
    prepared: &Prepared,
    target: &Target,
) -> Vec<Fragment> {
    to_fragments(&placement.chunks, &prepared.streams, jobs, target)
}

/// Iterated greedy: streams still sending after `bound` are moved to the front
/// of the order (keeping their relative order) and the phase is placed
/// again, for up to `rounds` rounds while the horizon shrinks. Returns the
/// best placement and the number of improving rounds.
pub(crate) fn improve(
    prepared: &Prepared,
    target: &Target,
    start: Placement,
    bound: u64,
    rounds: usize,
) -> (Placement, usize) {
    let floor = bound + target.exchange.route_latency_base_cycles as u64;
    let mut best = start;
    let mut improvements = 0;
    for _ in 0..rounds {
        if best.horizon <= floor {
            break;
        }
        let (late, rest): (Vec<usize>, Vec<usize>) = best
            .order
            .iter()
            .partition(|&&si| best.stream_end[si] > bound);
        if late.is_empty() || rest.is_empty() {
            break;
        }
        let order: Vec<usize> = late.into_iter().chain(rest).collect();
        let next = run_variant(prepared, &order, target, best.variant);
        if next.horizon >= best.horizon {
            break;
        }
        best = next;
        improvements += 1;
    }
    (best, improvements)
}

/// A piece of a chunk inside one job, before it becomes a fragment.
#[derive(Clone, Copy)]
struct Piece {
    src_tile: u32,
    send_cycle: u64,
    job: u32,
    chunk: u32,
    /// Byte range inside the job.
    byte0: u64,
    byte1: u64,
}

/// Splits chunks at job boundaries into fragments, sorted by (sender, cycle),
/// merging pieces of one job that follow each other in time and bytes.
fn to_fragments(
    chunks: &[Chunk],
    streams: &[Stream],
    jobs: &[Job],
    target: &Target,
) -> Vec<Fragment> {
    let word = target.exchange_word_bytes() as u64;
    let mut pieces: Vec<Piece> = Vec::with_capacity(chunks.len());
    for (ci, c) in chunks.iter().enumerate() {
        let s = &streams[c.stream as usize];
        // Word offset of each job inside its stream.
        let mut job_start = 0u64;
        for &ji in &s.jobs {
            if job_start >= c.w0 + c.words {
                break;
            }
            let j = &jobs[ji as usize];
            let jw = (j.len as u64).div_ceil(word);
            let (lo, hi) = (c.w0.max(job_start), (c.w0 + c.words).min(job_start + jw));
            if lo < hi {
                let byte0 = (lo - job_start) * word;
                pieces.push(Piece {
                    src_tile: j.src_tile,
                    send_cycle: c.t + (lo - c.w0),
                    job: ji,
                    chunk: ci as u32,
                    byte0,
                    byte1: ((hi - job_start) * word).min(j.len as u64),
                });
            }
            job_start += jw;
        }
    }
    // (sender, cycle) is unique: a sender sends one word per cycle.
    pieces.sort_unstable_by_key(|p| (p.src_tile, p.send_cycle, p.job));
    let mut out: Vec<Fragment> = Vec::with_capacity(pieces.len());
    let mut i = 0;
    while i < pieces.len() {
        let first = pieces[i];
        let mut last = first;
        let mut k = i + 1;
        // Pieces of one job back to back in time and bytes, on the same
        // ports (so their selects are back to back too), make one fragment.
        while let Some(&next) = pieces.get(k) {
            let words = (last.byte1 - last.byte0).div_ceil(word);
            let contiguous = next.job == last.job
                && next.src_tile == last.src_tile
                && last.send_cycle + words == next.send_cycle
                && last.byte1 == next.byte0
                && (last.byte1 - first.byte0).is_multiple_of(word)
                && chunks[next.chunk as usize].ports == chunks[first.chunk as usize].ports;
            if !contiguous {
                break;
            }
            last = next;
            k += 1;
        }
        let j = &jobs[first.job as usize];
        let c = &chunks[first.chunk as usize];
        let s = &streams[c.stream as usize];
        // Receiver k of every job of a stream is the stream's tile k.
        let mut receives: SmallVec<[Receive; 2]> = SmallVec::with_capacity(j.receivers.len());
        for (pos, &(transfer, dst, _)) in j.receivers.iter().enumerate() {
            let d = s.demand_of[pos] as usize;
            let port = c.ports[d];
            let lat = match s.demands[d] {
                Demand::Pair(p) if port != p => s.lat_odd[d],
                _ => s.lat[d],
            };
            receives.push(Receive {
                transfer,
                dst,
                port,
                select_cycle: super::sat(first.send_cycle + lat),
            });
        }
        out.push(Fragment {
            src_tile: j.src_tile,
            src_offset: j.src_offset + first.byte0 as u32,
            len: (last.byte1 - first.byte0) as u32,
            send_cycle: first.send_cycle,
            receives,
        });
        i = k;
    }
    out
}

/// True if some job is received by both tiles of a supertile pair, i.e. the
/// paired variants could do better than compact streams.
pub(crate) fn has_shared_pairs(jobs: &[Job], target: &Target) -> bool {
    target.exchange.supertile_tiles == 2
        && jobs.iter().any(|j| {
            j.receivers
                .windows(2)
                .any(|w| w[0].2.is_multiple_of(2) && w[1].2 == w[0].2 + 1)
        })
}
