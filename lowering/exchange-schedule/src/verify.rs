//! An independent checker that proves a schedule correct for its phase.
//!
//! It shares no code with the schedulers beyond the phase validation and the
//! lower bound, so a scheduler bug shows up here rather than as a simulator
//! fault. It checks that:
//! * the phase is valid (tiles and byte ranges in range, no two writes to the
//!   same destination bytes), and each fragment's bytes lie in its source tile;
//! * every receive names a real transfer and destination whose source bytes
//!   contain the fragment's, listens on the destination's own port or (paired)
//!   its supertile partner's while the partner captures the same word, and
//!   selects exactly when the data arrives (send cycle + route latency);
//! * no tile sends more than one word (4 B) per cycle;
//! * no port selects two senders in one cycle and no tile captures two words
//!   from one port in one cycle;
//! * every destination of every transfer gets each byte exactly once;
//! * every word lands before the horizon, and the reported lower bound is
//!   the phase's.
//!
//! Errors are values naming the tile, the cycle and the transfers involved;
//! at most [`MAX_ERRORS`] are returned, in a deterministic order.

use super::bucket::{each_group, sort_by_lead, Groups};
use super::phase::{lower_bound_of_valid, validate_phase, Phase, PhaseError};
use super::{Fragment, Schedule, ScheduleKind};
use ipu_target::Target;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use thiserror::Error;

/// Most errors one call reports.
pub const MAX_ERRORS: usize = 64;

/// One violated schedule property.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum VerifyError {
    #[error("invalid phase: {0}")]
    Phase(#[from] PhaseError),
    #[error("fragment {fragment}: empty (0 bytes)")]
    EmptyFragment { fragment: usize },
    #[error("fragment {fragment}: has no receivers")]
    NoReceivers { fragment: usize },
    #[error(
        "fragment {fragment}: source tile {tile} bytes [{start}, {end}) are outside the target"
    )]
    SourceOutOfRange {
        fragment: usize,
        tile: u32,
        start: u64,
        end: u64,
    },
    #[error("fragment {fragment}: receive names transfer {transfer} destination {dst}, which does not exist")]
    BadReference {
        fragment: usize,
        transfer: u32,
        dst: u32,
    },
    #[error(
        "fragment {fragment}: tile {tile} bytes [{start}, {end}) are not source bytes of transfer {transfer}"
    )]
    NotTransferBytes {
        fragment: usize,
        transfer: u32,
        tile: u32,
        start: u64,
        end: u64,
    },
    #[error(
        "fragment {fragment}: transfer {transfer} destination tile {tile} listens on port {port}, which is neither its own nor its supertile partner's{}",
        if *.paired_allowed { "" } else { " (paired receives are not allowed in this schedule)" }
    )]
    BadPort {
        fragment: usize,
        transfer: u32,
        tile: u32,
        port: u32,
        paired_allowed: bool,
    },
    #[error(
        "fragment {fragment}: tile {tile} captures from partner port {port} in cycles [{start}, {end}) but tile {port} does not capture the same words"
    )]
    PartnerNotCapturing {
        fragment: usize,
        tile: u32,
        port: u32,
        start: u64,
        end: u64,
    },
    #[error(
        "fragment {fragment}: port {port} selects tile {sender} at cycle {select_cycle} but its data (sent at cycle {send_cycle}) arrives at cycle {arrival} (transfer {transfer})"
    )]
    WrongSelectCycle {
        fragment: usize,
        transfer: u32,
        port: u32,
        sender: u32,
        send_cycle: u64,
        select_cycle: u64,
        arrival: u64,
    },
    #[error(
        "tile {tile} sends two words in cycle {cycle}: fragment {first} (transfer {first_transfer}) and fragment {second} (transfer {second_transfer})"
    )]
    SenderOverlap {
        tile: u32,
        cycle: u64,
        first: usize,
        first_transfer: u32,
        second: usize,
        second_transfer: u32,
    },
    #[error(
        "port {port} hears two senders in cycle {cycle}: tile {first_sender} (fragment {first}, transfer {first_transfer}) and tile {second_sender} (fragment {second}, transfer {second_transfer})"
    )]
    ReceiverConflict {
        port: u32,
        cycle: u64,
        first: usize,
        first_sender: u32,
        first_transfer: u32,
        second: usize,
        second_sender: u32,
        second_transfer: u32,
    },
    #[error(
        "tile {tile} captures two words from port {port} in cycle {cycle}: transfer {first_transfer} (fragment {first}) and transfer {second_transfer} (fragment {second})"
    )]
    DoubleCapture {
        tile: u32,
        port: u32,
        cycle: u64,
        first: usize,
        first_transfer: u32,
        second: usize,
        second_transfer: u32,
    },
    #[error("transfer {transfer} destination {dst} (tile {tile}): bytes [{start}, {end}) are never received")]
    Uncovered {
        transfer: u32,
        dst: u32,
        tile: u32,
        start: u64,
        end: u64,
    },
    #[error("transfer {transfer} destination {dst} (tile {tile}): bytes [{start}, {end}) are received more than once")]
    Duplicate {
        transfer: u32,
        dst: u32,
        tile: u32,
        start: u64,
        end: u64,
    },
    #[error(
        "fragment {fragment}: transfer {transfer} tile {tile} receives until cycle {end}, after the phase ends at cycle {horizon}"
    )]
    Late {
        fragment: usize,
        transfer: u32,
        tile: u32,
        end: u64,
        horizon: u64,
    },
    #[error("schedule reports lower bound {reported}, the phase's is {actual}")]
    WrongLowerBound { reported: u64, actual: u64 },
    #[error("schedule reports horizon {reported} below the phase's lower bound {bound}")]
    HorizonBelowBound { reported: u64, bound: u64 },
    #[error(
        "schedule horizon {horizon} does not fit 32 bits (no exchange row holds a later cycle)"
    )]
    HorizonTooLarge { horizon: u64 },
}

/// How a destination's received ranges look, for the coverage check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Whole {
    /// No range yet.
    Nothing,
    /// One range, all of the transfer's bytes.
    Once,
    /// Anything else: its ranges are sorted and checked one by one.
    Other,
}

/// Fragments per slice checked on one thread.
const SLICE: usize = 4096;

/// (port, start, end, fragment, sender, transfer): a port selection.
type Selection = (u32, u32, u32, u32, u32, u32);
/// (tile, port, start, end, fragment, transfer): a capture.
type Capture = (u32, u32, u32, u32, u32, u32);

/// What checking a slice of fragments found (see [`verify_valid`]).
///
/// Cycles, fragment and destination indices and byte offsets are 32 bits:
/// a big phase has millions of events. The horizon is checked to fit 32
/// bits first, and every cycle past it is an error of its own (`Late`,
/// `WrongSelectCycle`), so saturating ([`super::sat`]) a later one loses
/// no verdict.
struct Events {
    errs: Vec<VerifyError>,
    sends: Vec<(u32, u32, u32, u32, u32)>,
    selects: Groups<(u32, u32, u32, u32, u32, u32)>,
    captures: Groups<(u32, u32, u32, u32, u32, u32)>,
    got: Vec<(u32, u32, u32)>,
}

/// Checks `schedule` against `phase` on `target`; all violations found (up to
/// [`MAX_ERRORS`]) are returned.
pub fn verify(phase: &Phase, schedule: &Schedule, target: &Target) -> Result<(), Vec<VerifyError>> {
    if let Err(e) = validate_phase(phase, target) {
        return Err(vec![e.into()]);
    }
    verify_valid(
        phase,
        schedule,
        target,
        lower_bound_of_valid(phase, target).cycles,
    )
}

/// The checks of [`verify`] that byte offsets decide, for `schedule`
/// relocated from a schedule proven for a phase with the same canonical key
/// (same transfers, tiles, lengths and multicast structure): every fragment
/// keeps its offset relative to its transfers, so its timing, ports and
/// coverage are proven already. What is left: the phase is valid (the caller
/// validates it), each fragment's source bytes lie in SRAM, and the horizon
/// is not below `bound`, the phase's lower bound, which the schedule reports.
pub(crate) fn verify_moved(
    schedule: &Schedule,
    target: &Target,
    bound: u64,
) -> Result<(), Vec<VerifyError>> {
    let (tiles, size) = (target.tiles(), target.sram_bytes());
    let mut errs: Vec<VerifyError> = Vec::new();
    for (fi, f) in schedule.fragments.iter().enumerate() {
        let (start, end) = (f.src_offset as u64, f.src_offset as u64 + f.len as u64);
        if f.src_tile >= tiles || end > size {
            errs.push(VerifyError::SourceOutOfRange {
                fragment: fi,
                tile: f.src_tile,
                start,
                end,
            });
        }
    }
    bound_checks(schedule, bound, errs)
}

/// Cycles of rows (ports, or a tile's two capture ports) as bits, marked
/// from several threads at once: a cycle marked twice is a clash. This is
/// how the verifier first checks a schedule's port selections and captures
/// (a valid schedule has no clash, and any two overlapping intervals clash
/// in some cycle); only on a clash does it gather, sort and pair the
/// intervals to name the conflicts ([`VerifyError::ReceiverConflict`],
/// [`VerifyError::DoubleCapture`]).
struct Occupancy {
    words_per_row: usize,
    rows: usize,
    bits: Vec<AtomicU64>,
    clash: AtomicBool,
}

/// Largest occupancy map (in 64-bit words, 16 MiB); a longer phase is
/// checked by sorting its intervals.
const MAX_OCCUPANCY_WORDS: usize = 1 << 21;

impl Occupancy {
    fn new(rows: usize, horizon: u64) -> Option<Self> {
        let words_per_row = usize::try_from(horizon.div_ceil(64)).ok()?.max(1);
        let total = rows.checked_mul(words_per_row)?;
        (total <= MAX_OCCUPANCY_WORDS).then(|| Occupancy {
            words_per_row,
            rows,
            bits: (0..total).map(|_| AtomicU64::new(0)).collect(),
            clash: AtomicBool::new(false),
        })
    }

    /// Marks cycles `[start, end)` of `row`; a row or cycle outside the map
    /// counts as a clash (the sorting check then names what is wrong).
    fn mark(&self, row: usize, start: u32, end: u32) {
        let (mut c, end) = (start as usize, end as usize);
        if row >= self.rows || end > self.words_per_row * 64 {
            self.clash.store(true, Ordering::Relaxed);
            return;
        }
        let base = row * self.words_per_row;
        while c < end {
            let w = c / 64;
            let (lo, hi) = (c % 64, (end - w * 64).min(64));
            let mask = if hi - lo == 64 {
                u64::MAX
            } else {
                ((1u64 << (hi - lo)) - 1) << lo
            };
            if self.bits[base + w].fetch_or(mask, Ordering::Relaxed) & mask != 0 {
                self.clash.store(true, Ordering::Relaxed);
            }
            c = w * 64 + hi;
        }
    }

    fn clashed(&self) -> bool {
        self.clash.load(Ordering::Relaxed)
    }
}

/// [`verify`] of a phase the caller has validated, whose endpoint lower
/// bound (from [`lower_bound_of_valid`]'s computation) it already holds.
pub(crate) fn verify_valid(
    phase: &Phase,
    schedule: &Schedule,
    target: &Target,
    bound: u64,
) -> Result<(), Vec<VerifyError>> {
    let n = target.tiles() as usize;
    // Selections per port; captures per tile from its own port and its partner's.
    let maps = Occupancy::new(n, schedule.horizon).zip(Occupancy::new(2 * n, schedule.horizon));
    if let Some(maps) = &maps {
        if let Some(r) = verify_events(phase, schedule, target, bound, Some(maps)) {
            return r;
        }
    }
    // Too long for the maps, or they clash: the sorting check names the conflicts.
    verify_sorted(phase, schedule, target, bound)
}

/// [`verify_events`] without the maps, which always finishes.
fn verify_sorted(
    phase: &Phase,
    schedule: &Schedule,
    target: &Target,
    bound: u64,
) -> Result<(), Vec<VerifyError>> {
    verify_events(phase, schedule, target, bound, None).expect("only the maps' check stops early")
}

/// [`verify`] with every selection and capture gathered and sorted (no
/// occupancy maps): the check the maps' must agree with.
#[cfg(test)]
pub(crate) fn verify_by_sorting(
    phase: &Phase,
    schedule: &Schedule,
    target: &Target,
) -> Result<(), Vec<VerifyError>> {
    if let Err(e) = validate_phase(phase, target) {
        return Err(vec![e.into()]);
    }
    verify_sorted(
        phase,
        schedule,
        target,
        lower_bound_of_valid(phase, target).cycles,
    )
}

/// The checks of [`verify_valid`]. With `maps`, selections and captures are
/// marked on them instead of gathered: `None` when they clash (the caller
/// checks again without them, to name the conflicts).
fn verify_events(
    phase: &Phase,
    schedule: &Schedule,
    target: &Target,
    bound: u64,
    maps: Option<&(Occupancy, Occupancy)>,
) -> Option<Result<(), Vec<VerifyError>>> {
    let paired_allowed =
        target.exchange.supertile_tiles == 2 && schedule.kind != ScheduleKind::CompactStreams;
    let n = target.tiles() as usize;
    if schedule.horizon > u64::from(u32::MAX) {
        return Some(Err(vec![VerifyError::HorizonTooLarge {
            horizon: schedule.horizon,
        }]));
    }
    // Destination index of (transfer, dst) = first_dst[transfer] + dst.
    let mut first_dst: Vec<usize> = Vec::with_capacity(phase.transfers.len() + 1);
    // Bytes each destination (by index) takes: its transfer's length.
    let mut dst_len: Vec<u32> = Vec::new();
    let mut dsts = 0usize;
    for t in &phase.transfers {
        first_dst.push(dsts);
        dsts += t.dsts.len();
        dst_len.extend(t.dsts.iter().map(|_| t.len));
    }
    // Slices of fragments are checked in parallel; their findings are
    // joined in fragment order, so errors and events are one pass's.
    let c = SliceCheck {
        phase,
        schedule,
        target,
        maps,
        first_dst: &first_dst,
        paired_allowed,
    };
    let check = |base: usize, frags: &[Fragment]| check_slice(&c, base, frags);
    let fragments = &schedule.fragments;
    let mut parts: Vec<Events> = if fragments.len() > SLICE {
        fragments
            .par_chunks(SLICE)
            .enumerate()
            .map(|(c, fs)| check(c * SLICE, fs))
            .collect()
    } else {
        vec![check(0, fragments)]
    };
    let mut errs: Vec<VerifyError> = Vec::new();
    let mut sends = Vec::with_capacity(fragments.len());
    let (mut selects, mut captures, mut got) = (Vec::new(), Vec::new(), Vec::new());
    for p in parts.drain(..) {
        errs.extend(p.errs);
        sends.extend(p.sends);
        selects.push(p.selects);
        captures.push(p.captures);
        got.push(p.got);
    }

    if let Some((ports, caps)) = maps {
        if ports.clashed() || caps.clashed() {
            return None;
        }
    }
    check_overlaps(sends, &selects, &captures, n, &mut errs);
    check_coverage(phase, &first_dst, &dst_len, got, &mut errs);
    Some(bound_checks(schedule, bound, errs))
}

/// What each slice of fragments is checked against ([`check_slice`]).
struct SliceCheck<'a> {
    phase: &'a Phase,
    schedule: &'a Schedule,
    target: &'a Target,
    maps: Option<&'a (Occupancy, Occupancy)>,
    /// Destination index of (transfer, dst) = first_dst[transfer] + dst.
    first_dst: &'a [usize],
    paired_allowed: bool,
}

/// The per-fragment checks of [`verify_events`] on fragments `frags`,
/// the first numbered `base`: their errors, and the events the checks
/// across fragments sort.
fn check_slice(c: &SliceCheck<'_>, base: usize, frags: &[Fragment]) -> Events {
    let (phase, schedule, target, maps) = (c.phase, c.schedule, c.target, c.maps);
    let (first_dst, paired_allowed) = (c.first_dst, c.paired_allowed);
    let word = target.exchange_word_bytes();
    let tiles = target.tiles();
    let size = target.sram_bytes();
    let n = tiles as usize;
    let sat = super::sat;
    let mut errs: Vec<VerifyError> = Vec::new();
    // (tile, start, end, fragment, transfer): sender occupancy.
    let mut sends: Vec<(u32, u32, u32, u32, u32)> = Vec::new();
    // (port, start, end, fragment, sender, transfer): port selections,
    // grouped by port as they are made.
    // Sized by a first count of the receives that name a destination
    // (none when they are marked on the maps instead).
    let (per_port, per_tile) = match maps {
        None => receive_counts(phase, frags, n),
        Some(_) => (vec![0; n + 1], vec![0; n + 1]),
    };
    let mut selects: Groups<(u32, u32, u32, u32, u32, u32)> = Groups::with_counts(&per_port);
    // (tile, port, start, end, fragment, transfer): captures, by tile.
    let mut captures: Groups<(u32, u32, u32, u32, u32, u32)> = Groups::with_counts(&per_tile);
    // Per port, the (fragment, cycle) of the last selection marked on
    // the maps: one fragment's receives on one port share it.
    let mut marked: Vec<(u32, u32)> = match maps {
        Some(_) => vec![(u32::MAX, u32::MAX); n],
        None => Vec::new(),
    };
    // (destination index, start, end): received transfer-relative byte ranges.
    let mut got: Vec<(u32, u32, u32)> = Vec::new();
    // Ports on which some receive of the current fragment is its own tile's.
    let mut own_ports: Vec<u32> = Vec::new();
    for (k, f) in frags.iter().enumerate() {
        let fi = base + k;
        let (start, end) = (f.src_offset as u64, f.src_offset as u64 + f.len as u64);
        if f.len == 0 {
            errs.push(VerifyError::EmptyFragment { fragment: fi });
            continue;
        }
        if f.receives.is_empty() {
            errs.push(VerifyError::NoReceivers { fragment: fi });
            continue;
        }
        if f.src_tile >= tiles || end > size {
            errs.push(VerifyError::SourceOutOfRange {
                fragment: fi,
                tile: f.src_tile,
                start,
                end,
            });
            continue;
        }
        let words = f.words(word);
        let first_transfer = f.receives[0].transfer;
        own_ports.clear();
        let mut own_ports_known = false;
        sends.push((
            f.src_tile,
            sat(f.send_cycle),
            sat(f.send_cycle.saturating_add(words)),
            sat(fi as u64),
            first_transfer,
        ));
        for r in &f.receives {
            let found = phase
                .transfers
                .get(r.transfer as usize)
                .and_then(|t| Some((t, t.dsts.get(r.dst as usize)?)));
            let Some((t, d)) = found else {
                errs.push(VerifyError::BadReference {
                    fragment: fi,
                    transfer: r.transfer,
                    dst: r.dst,
                });
                continue;
            };
            let (ts, te) = (t.src_offset as u64, t.src_offset as u64 + t.len as u64);
            if t.src_tile != f.src_tile || start < ts || end > te {
                errs.push(VerifyError::NotTransferBytes {
                    fragment: fi,
                    transfer: r.transfer,
                    tile: f.src_tile,
                    start,
                    end,
                });
                continue;
            }
            let partner_ok = paired_allowed && target.supertile_partner(d.tile) == Some(r.port);
            if r.port != d.tile && !partner_ok {
                errs.push(VerifyError::BadPort {
                    fragment: fi,
                    transfer: r.transfer,
                    tile: d.tile,
                    port: r.port,
                    paired_allowed,
                });
                continue;
            }
            let rs = u64::from(r.select_cycle);
            let re = rs.saturating_add(words);
            if r.port != d.tile {
                // The partner must capture the same words from its own port.
                if !own_ports_known {
                    own_ports.extend(f.receives.iter().filter_map(|o| {
                        phase
                            .transfers
                            .get(o.transfer as usize)
                            .and_then(|t| t.dsts.get(o.dst as usize))
                            .filter(|od| od.tile == o.port)
                            .map(|_| o.port)
                    }));
                    own_ports.sort_unstable();
                    own_ports_known = true;
                }
                let partner_captures = own_ports.binary_search(&r.port).is_ok();
                if !partner_captures {
                    errs.push(VerifyError::PartnerNotCapturing {
                        fragment: fi,
                        tile: d.tile,
                        port: r.port,
                        start: rs,
                        end: re,
                    });
                }
            }
            let arrival = f
                .send_cycle
                .saturating_add(target.route_latency(f.src_tile, r.port) as u64);
            if rs != arrival {
                errs.push(VerifyError::WrongSelectCycle {
                    fragment: fi,
                    transfer: r.transfer,
                    port: r.port,
                    sender: f.src_tile,
                    send_cycle: f.send_cycle,
                    select_cycle: rs,
                    arrival,
                });
            }
            if re > schedule.horizon {
                errs.push(VerifyError::Late {
                    fragment: fi,
                    transfer: r.transfer,
                    tile: d.tile,
                    end: re,
                    horizon: schedule.horizon,
                });
            }
            let (rs, re, fk) = (sat(rs), sat(re), sat(fi as u64));
            match maps {
                Some((ports, caps)) => {
                    match marked.get_mut(r.port as usize) {
                        Some(m) if *m == (fk, rs) => {}
                        Some(m) => {
                            *m = (fk, rs);
                            ports.mark(r.port as usize, rs, re);
                        }
                        // Outside the map: a clash, for the sorting check.
                        None => ports.mark(usize::MAX, rs, re),
                    }
                    let from_partner = usize::from(r.port != d.tile);
                    caps.mark(2 * d.tile as usize + from_partner, rs, re);
                }
                None => {
                    selects.push(
                        r.port as usize,
                        (r.port, rs, re, fk, f.src_tile, r.transfer),
                    );
                    captures.push(d.tile as usize, (d.tile, r.port, rs, re, fk, r.transfer));
                }
            }
            // Within the transfer: its length is 32 bits.
            got.push((
                sat((first_dst[r.transfer as usize] + r.dst as usize) as u64),
                (start - ts) as u32,
                (end - ts) as u32,
            ));
        }
    }
    Events {
        errs,
        sends,
        selects,
        captures,
        got,
    }
}

/// Senders sending two words at once, ports selecting two senders at
/// once, and tiles capturing two words on one port at once.
fn check_overlaps(
    mut sends: Vec<(u32, u32, u32, u32, u32)>,
    selects: &[Groups<Selection>],
    captures: &[Groups<Capture>],
    n: usize,
    errs: &mut Vec<VerifyError>,
) {
    // Sender bandwidth: one word per cycle.
    sort_by_lead(&mut sends, n, |s| s.0 as usize);
    for w in sends.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.0 == b.0 && b.1 < a.2 {
            errs.push(VerifyError::SenderOverlap {
                tile: a.0,
                cycle: b.1.into(),
                first: a.3 as usize,
                first_transfer: a.4,
                second: b.3 as usize,
                second_transfer: b.4,
            });
        }
    }
    // Port selections: one sender per cycle (one selection per fragment).
    // Groups hold distinct ports (but the last), so no pair across two
    // groups could conflict or be a duplicate.
    let conflicts = each_group(selects, |_, g| {
        g.dedup_by(|b, a| a.0 == b.0 && a.3 == b.3 && a.1 == b.1);
        let mut errs = Vec::new();
        for w in g.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a.0 == b.0 && b.1 < a.2 {
                errs.push(VerifyError::ReceiverConflict {
                    port: a.0,
                    cycle: b.1.into(),
                    first: a.3 as usize,
                    first_sender: a.4,
                    first_transfer: a.5,
                    second: b.3 as usize,
                    second_sender: b.4,
                    second_transfer: b.5,
                });
            }
        }
        errs
    });
    errs.extend(conflicts.into_iter().flatten());
    // Captures: one word per port per tile per cycle.
    let doubles = each_group(captures, |_, g| {
        let mut errs = Vec::new();
        for w in g.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a.0 == b.0 && a.1 == b.1 && b.2 < a.3 {
                errs.push(VerifyError::DoubleCapture {
                    tile: a.0,
                    port: a.1,
                    cycle: b.2.into(),
                    first: a.4 as usize,
                    first_transfer: a.5,
                    second: b.4 as usize,
                    second_transfer: b.5,
                });
            }
        }
        errs
    });
    errs.extend(doubles.into_iter().flatten());
}

/// Coverage errors: destination bytes `got` (per slice: destination index,
/// start, end) missed or received twice.
fn check_coverage(
    phase: &Phase,
    first_dst: &[usize],
    dst_len: &[u32],
    got: Vec<Vec<(u32, u32, u32)>>,
    errs: &mut Vec<VerifyError>,
) {
    let dsts = dst_len.len();
    // Coverage: every byte of every destination exactly once.
    // A destination that got its transfer's bytes in one piece is covered
    // exactly once: only the ranges of the others are sorted and walked.
    let mut whole = vec![Whole::Nothing; dsts];
    for &(here, s, e) in got.iter().flatten() {
        let here = here as usize;
        whole[here] = match whole[here] {
            Whole::Nothing if s == 0 && e == dst_len[here] => Whole::Once,
            _ => Whole::Other,
        };
    }
    let mut rest: Vec<(u32, u32, u32)> = got
        .iter()
        .flatten()
        .filter(|g| whole[g.0 as usize] == Whole::Other)
        .copied()
        .collect();
    drop(got);
    sort_by_lead(&mut rest, dsts, |g| g.0 as usize);
    let mut next = 0usize;
    for (ti, t) in phase.transfers.iter().enumerate() {
        for (di, d) in t.dsts.iter().enumerate() {
            let tile = d.tile;
            let here = first_dst[ti] + di;
            if whole[here] == Whole::Once {
                continue;
            }
            let from = next;
            while next < rest.len() && rest[next].0 as usize == here {
                next += 1;
            }
            let mut covered = 0u64;
            for &(_, s, e) in &rest[from..next] {
                let (s, e) = (u64::from(s), u64::from(e));
                if s > covered {
                    errs.push(VerifyError::Uncovered {
                        transfer: ti as u32,
                        dst: di as u32,
                        tile,
                        start: covered,
                        end: s,
                    });
                } else if s < covered {
                    errs.push(VerifyError::Duplicate {
                        transfer: ti as u32,
                        dst: di as u32,
                        tile,
                        start: s,
                        end: e.min(covered),
                    });
                }
                covered = covered.max(e);
            }
            if covered < t.len as u64 {
                errs.push(VerifyError::Uncovered {
                    transfer: ti as u32,
                    dst: di as u32,
                    tile,
                    start: covered,
                    end: t.len as u64,
                });
            }
        }
    }
}
/// The checks of the schedule's recorded bound and horizon against the
/// bound its fragments give, after the per-fragment errors `errs`.
fn bound_checks(
    schedule: &Schedule,
    bound: u64,
    mut errs: Vec<VerifyError>,
) -> Result<(), Vec<VerifyError>> {
    if schedule.lower_bound != bound {
        errs.push(VerifyError::WrongLowerBound {
            reported: schedule.lower_bound,
            actual: bound,
        });
    }
    if schedule.horizon < bound {
        errs.push(VerifyError::HorizonBelowBound {
            reported: schedule.horizon,
            bound,
        });
    }
    if errs.is_empty() {
        Ok(())
    } else {
        errs.truncate(MAX_ERRORS);
        Err(errs)
    }
}

/// Per port and per destination tile (`n` and above counted at `n`), the
/// receives of `frags` that name a destination: the sizes of the groups
/// the verifier and the row counter make.
pub(super) fn receive_counts(
    phase: &Phase,
    frags: &[Fragment],
    n: usize,
) -> (Vec<usize>, Vec<usize>) {
    let (mut per_port, mut per_tile) = (vec![0usize; n + 1], vec![0usize; n + 1]);
    for f in frags {
        for r in &f.receives {
            let dst = phase.transfers.get(r.transfer as usize);
            if let Some(d) = dst.and_then(|t| t.dsts.get(r.dst as usize)) {
                per_port[(r.port as usize).min(n)] += 1;
                per_tile[(d.tile as usize).min(n)] += 1;
            }
        }
    }
    (per_port, per_tile)
}
