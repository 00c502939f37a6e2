//! Per-tile exchange-table rows: what each tile does in a phase, and its size.
//!
//! Each tile runs its part of a phase from a row of the exchange table: a
//! header word (entry count) followed by entries in cycle order:
//! * send: 3 words (kind | start cycle, source address, byte count), one per
//!   run of words sent back to back from consecutive source bytes;
//! * select: 2 words (kind | start cycle, sender tile), one per run of cycles
//!   the tile's port listens to one sender without a break;
//! * capture: 3 words (kind | start cycle, destination address, partner flag |
//!   byte count), one per run of words written back to back to consecutive
//!   bytes from one port.
//!
//! The tile's exchange engine runs the row (`exch`, docs/isa.md section 7);
//! the code generator encodes it (`codegen::emit::encode_row`).
//!
//! [`tile_rows`] gives the entries (for the machine dialect and the
//! simulator); [`row_stats`] their sizes, which feed storage placement (rows
//! live in tile SRAM) and the `row_words` report.

use super::bucket::{sort_by_lead, Flat};
use super::phase::Phase;
use super::Fragment;
use ipu_target::Target;
use rayon::prelude::*;

/// Words per entry kind and per row header (the hardware format of
/// `ipu_isa::exchange_row`; a test checks they agree).
pub const HEADER_WORDS: u32 = 1;
pub const SEND_WORDS: u32 = 3;
pub const SELECT_WORDS: u32 = 2;
pub const CAPTURE_WORDS: u32 = 3;

/// One entry of a tile's exchange row. Offsets are SRAM byte offsets.
///
/// Fields are 32 bits, as in the hardware row (`ipu_isa::exchange_row`,
/// whose cycles have 30): a phase's rows are the largest data the machine
/// stage holds, so an entry is 20 bytes, not 40. A cycle or offset past
/// `u32::MAX` is held as `u32::MAX` ([`sat`]), which the encoder refuses
/// as a cycle past 30 bits or an address out of range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowEntry {
    /// Send `len` bytes from `offset`, one word per cycle from `cycle`.
    Send { cycle: u32, offset: u32, len: u32 },
    /// Switch this tile's port to `sender` at `cycle` for `cycles` cycles.
    Select {
        cycle: u32,
        sender: u32,
        cycles: u32,
    },
    /// Write `len` bytes arriving on `port` (this tile or its partner) from
    /// `cycle` to `offset`.
    Capture {
        cycle: u32,
        port: u32,
        offset: u32,
        len: u32,
    },
}

/// `x` as a row field: saturated at `u32::MAX` (no row can hold a larger
/// cycle or address; the encoder refuses that value).
pub fn sat(x: u64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

impl RowEntry {
    /// First cycle of the entry.
    pub fn cycle(&self) -> u32 {
        match *self {
            RowEntry::Send { cycle, .. }
            | RowEntry::Select { cycle, .. }
            | RowEntry::Capture { cycle, .. } => cycle,
        }
    }

    /// Encoded size in words.
    pub fn words(&self) -> u32 {
        match self {
            RowEntry::Send { .. } => SEND_WORDS,
            RowEntry::Select { .. } => SELECT_WORDS,
            RowEntry::Capture { .. } => CAPTURE_WORDS,
        }
    }

    fn order_key(&self) -> (u32, u8) {
        let kind = match self {
            RowEntry::Select { .. } => 0,
            RowEntry::Capture { .. } => 1,
            RowEntry::Send { .. } => 2,
        };
        (self.cycle(), kind)
    }
}

/// Row sizes of one schedule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowStats {
    /// Words of each tile's row (0 for a tile with nothing to do).
    pub words: Vec<u32>,
    /// Largest row, and the lowest tile that has it.
    pub max_row_words: u32,
    pub max_row_tile: u32,
    /// Sum over tiles.
    pub total_words: u64,
}

/// A send run: (tile, start cycle, end cycle, first byte, end byte), each
/// [`sat`]urated to 32 bits as the entries are.
type SendRun = (u32, u32, u32, u32, u32);

/// A capture run: (port, start, end, first byte, end byte).
type CaptureRun = (u32, u32, u32, u32, u32);

/// A select run: (start, end, sender).
type SelectRun = (u32, u32, u32);

/// Receives from which the tiles' runs are sorted and merged on the rayon
/// pool (each tile on one thread, so the result does not depend on the
/// thread count).
const PARALLEL_RECEIVES: usize = 1 << 15;

/// Sends, selects and captures of every fragment, sorted and merged into the
/// runs that become row entries, handed per tile `t` (in parallel, results
/// in tile order) to `each(t, sends, selects, captures)`: the tile's send
/// runs, its port's select runs and its capture runs, each sorted. Runs of
/// tiles outside the target are left out (no row holds them).
fn per_tile<R: Send>(
    phase: &Phase,
    fragments: &[Fragment],
    target: &Target,
    each: impl Fn(usize, &[SendRun], &[SelectRun], &[CaptureRun]) -> R + Sync,
) -> Vec<R> {
    let n = target.tiles() as usize;
    let word = target.exchange_word_bytes();
    let (sends, receives) = sends_and_receives(phase, fragments, word);
    let (mut selects, mut captures) = receive_runs(&receives, n);
    drop(receives);
    let (send_runs, send_from) = send_runs_of(sends, n, word);
    let receives = selects.len() + captures.len();
    let tile = |(t, (sel, cap)): (usize, (&mut [SelectRun], &mut [CaptureRun]))| {
        sel.sort_unstable();
        let k = merge_runs(sel, |p, s| p == s);
        let k = merge_runs(&mut sel[..k], |p, s| {
            let joins = p.1 == s.0 && p.2 == s.2;
            if joins {
                p.1 = s.1;
            }
            joins
        });
        cap.sort_unstable();
        let m = merge_runs(cap, |p, c| {
            let joins = p.0 == c.0 && p.2 == c.1 && p.4 == c.3 && (p.4 - p.3).is_multiple_of(word);
            if joins {
                (p.2, p.4) = (c.2, c.4);
            }
            joins
        });
        each(
            t,
            &send_runs[send_from[t]..send_from[t + 1]],
            &sel[..k],
            &cap[..m],
        )
    };
    let groups = selects
        .groups_mut()
        .into_iter()
        .zip(captures.groups_mut_every(CAPTURE_CLASSES));
    if receives >= PARALLEL_RECEIVES {
        groups
            .collect::<Vec<_>>()
            .into_par_iter()
            .enumerate()
            .map(tile)
            .collect()
    } else {
        groups.enumerate().map(tile).collect()
    }
}

/// The send runs (sorted by tile, then cycle; those of tiles outside the
/// target last) and where each tile's start (index = tile, then the end).
fn send_runs_of(sends: Vec<SendRun>, n: usize, word: u32) -> (Vec<SendRun>, Vec<usize>) {
    let mut sends = sends;
    sort_by_lead(&mut sends, n, |s| s.0 as usize);
    let mut send_runs: Vec<SendRun> = Vec::with_capacity(sends.len());
    for s in sends {
        match send_runs.last_mut() {
            // Back to back in time and bytes, and the previous run ends on a word.
            Some(p)
                if p.0 == s.0 && p.2 == s.1 && p.4 == s.3 && (p.4 - p.3).is_multiple_of(word) =>
            {
                (p.2, p.4) = (s.2, s.4);
            }
            _ => send_runs.push(s),
        }
    }
    // Where each tile's send runs start (sorted by tile).
    let mut send_from = vec![0usize; n + 1];
    for s in &send_runs {
        if (s.0 as usize) < n {
            send_from[s.0 as usize + 1] += 1;
        }
    }
    for t in 0..n {
        send_from[t + 1] += send_from[t];
    }
    (send_runs, send_from)
}

/// One receive of a fragment, as its select and capture runs need it:
/// (start, end, sender, port, destination tile, first byte, end byte),
/// [`sat`]urated as the runs are.
type ReceiveRec = (u32, u32, u32, u32, u32, u32, u32);

/// Capture groups per tile: from a lower port, its own, a higher port.
const CAPTURE_CLASSES: usize = 3;

/// The send run of every fragment (in fragment order) and its receives
/// that name a destination.
fn sends_and_receives(
    phase: &Phase,
    fragments: &[Fragment],
    word: u32,
) -> (Vec<SendRun>, Vec<ReceiveRec>) {
    let mut sends: Vec<SendRun> = Vec::with_capacity(fragments.len());
    let mut receives: Vec<ReceiveRec> = Vec::with_capacity(fragments.len() * 2);
    for f in fragments {
        let w = f.words(word);
        let src = f.src_offset as u64;
        sends.push((
            f.src_tile,
            sat(f.send_cycle),
            sat(f.send_cycle.saturating_add(w)),
            sat(src),
            sat(src + f.len as u64),
        ));
        for r in &f.receives {
            let Some(t) = phase.transfers.get(r.transfer as usize) else {
                continue;
            };
            let Some(d) = t.dsts.get(r.dst as usize) else {
                continue;
            };
            let at = (d.offset as u64).saturating_add(src.saturating_sub(t.src_offset as u64));
            let start = r.select_cycle;
            receives.push((
                start,
                sat(u64::from(start).saturating_add(w)),
                f.src_tile,
                r.port,
                d.tile,
                sat(at),
                sat(at.saturating_add(f.len as u64)),
            ));
        }
    }
    (sends, receives)
}

/// The receives' indices in order of start cycle (stable), by a counting
/// sort; None when the cycles outnumber the receives (and 4096), where the
/// table of cycles would cost more than the sort saves.
fn start_order(receives: &[ReceiveRec]) -> Option<Vec<u32>> {
    let last = receives.iter().map(|r| r.0).max().unwrap_or(0) as usize;
    if last >= receives.len().max(1 << 12) {
        return None;
    }
    let mut at = vec![0u32; last + 2];
    for r in receives {
        at[r.0 as usize + 1] += 1;
    }
    for c in 1..at.len() {
        at[c] += at[c - 1];
    }
    let mut order = vec![0u32; receives.len()];
    for (i, r) in receives.iter().enumerate() {
        order[at[r.0 as usize] as usize] = i as u32;
        at[r.0 as usize] += 1;
    }
    Some(order)
}

/// The class of a receive's capture: its tile's group for captures from a
/// lower port, its own port, or a higher one.
fn capture_class(r: &ReceiveRec) -> usize {
    r.4 as usize * CAPTURE_CLASSES + (r.3.cmp(&r.4) as i8 + 1) as usize
}

/// The select runs of every port and the capture runs of every tile, made
/// in one pass over the receives in order of start cycle, without
/// grouping them: `select(port, run, joins)` and `capture(class, run,
/// joins)` get each receive's run, `joins` when it extends the run before
/// it (to the given end). These are the runs that sorting each group and
/// merging it gives, provided each port's selects and each tile's
/// captures from one port have no two receives of one start cycle that
/// differ, and a tile's captures from lower (higher) ports all come from
/// one port, as in any valid schedule: false otherwise (the runs handed
/// out so far are then not to be used).
fn stream_runs(
    receives: &[ReceiveRec],
    order: &[u32],
    n: usize,
    word: u32,
    mut select: impl FnMut(usize, SelectRun, bool),
    mut capture: impl FnMut(usize, CaptureRun, bool),
) -> bool {
    // Per port and per capture class: the last receive and the run it is in.
    let mut sel: Vec<Option<(SelectRun, SelectRun)>> = vec![None; n];
    let mut cap: Vec<Option<(CaptureRun, CaptureRun)>> = vec![None; n * CAPTURE_CLASSES];
    for &i in order {
        let r = &receives[i as usize];
        if (r.3 as usize) < n {
            let (p, s) = (r.3 as usize, (r.0, r.1, r.2));
            match &mut sel[p] {
                Some((last, _)) if *last == s => {}
                Some((last, _)) if last.0 == s.0 => return false,
                Some((last, run)) => {
                    *last = s;
                    let joins = run.1 == s.0 && run.2 == s.2;
                    if joins {
                        run.1 = s.1;
                    } else {
                        *run = s;
                    }
                    select(p, *run, joins);
                }
                none => {
                    *none = Some((s, s));
                    select(p, s, false);
                }
            }
        }
        if (r.4 as usize) < n {
            let (k, c) = (capture_class(r), (r.3, r.0, r.1, r.5, r.6));
            match &mut cap[k] {
                Some((last, _)) if last.0 != c.0 || (last.1 == c.1 && *last != c) => return false,
                Some((last, run)) => {
                    *last = c;
                    let joins =
                        run.2 == c.1 && run.4 == c.3 && (run.4 - run.3).is_multiple_of(word);
                    if joins {
                        (run.2, run.4) = (c.2, c.4);
                    } else {
                        *run = c;
                    }
                    capture(k, *run, joins);
                }
                none => {
                    *none = Some((c, c));
                    capture(k, c, false);
                }
            }
        }
    }
    true
}

/// [`tile_rows`] by [`stream_runs`], when it can.
fn streamed_rows(
    sends: Vec<SendRun>,
    receives: &[ReceiveRec],
    n: usize,
    word: u32,
) -> Option<Vec<Vec<RowEntry>>> {
    let order = start_order(receives)?;
    let mut selects: Vec<Vec<SelectRun>> = vec![Vec::new(); n];
    let mut captures: Vec<Vec<CaptureRun>> = vec![Vec::new(); n * CAPTURE_CLASSES];
    fn put<T>(runs: &mut Vec<T>, run: T, joins: bool) {
        match runs.last_mut() {
            Some(last) if joins => *last = run,
            _ => runs.push(run),
        }
    }
    let whole = stream_runs(
        receives,
        &order,
        n,
        word,
        |p, run, joins| put(&mut selects[p], run, joins),
        |k, run, joins| put(&mut captures[k], run, joins),
    );
    if !whole {
        return None;
    }
    let (send_runs, send_from) = send_runs_of(sends, n, word);
    let row = |t: usize| {
        let cap = captures[t * CAPTURE_CLASSES..(t + 1) * CAPTURE_CLASSES].concat();
        row_of(
            &send_runs[send_from[t]..send_from[t + 1]],
            &selects[t],
            &cap,
        )
    };
    Some(if receives.len() >= PARALLEL_RECEIVES {
        (0..n).into_par_iter().map(row).collect()
    } else {
        (0..n).map(row).collect()
    })
}

/// [`row_stats`]' words by [`stream_runs`], when it can.
fn streamed_words(
    sends: Vec<SendRun>,
    receives: &[ReceiveRec],
    n: usize,
    word: u32,
) -> Option<Vec<u32>> {
    let order = start_order(receives)?;
    let (mut selects, mut captures) = (vec![0usize; n], vec![0usize; n]);
    let whole = stream_runs(
        receives,
        &order,
        n,
        word,
        |p, _, joins| selects[p] += usize::from(!joins),
        |k, _, joins| captures[k / CAPTURE_CLASSES] += usize::from(!joins),
    );
    if !whole {
        return None;
    }
    let (_, send_from) = send_runs_of(sends, n, word);
    Some(
        (0..n)
            .map(|t| words_of(send_from[t + 1] - send_from[t], selects[t], captures[t]))
            .collect(),
    )
}

/// Every port's selects and every tile's captures (tiles outside the
/// target left out), each group in one buffer. The receives are placed in
/// order of start cycle (a counting sort, when the cycles are few enough),
/// and a tile's captures by port class, so that each group comes out
/// sorted in a valid schedule and the sort of it only checks that; the
/// sort still orders any group, so the runs never depend on this order.
fn receive_runs(receives: &[ReceiveRec], n: usize) -> (Flat<SelectRun>, Flat<CaptureRun>) {
    let mut per_port = vec![0usize; n];
    let mut per_class = vec![0usize; n * CAPTURE_CLASSES];
    for r in receives {
        if (r.3 as usize) < n {
            per_port[r.3 as usize] += 1;
        }
        if (r.4 as usize) < n {
            per_class[capture_class(r)] += 1;
        }
    }
    let mut selects: Flat<SelectRun> = Flat::with_counts(&per_port);
    let mut captures: Flat<CaptureRun> = Flat::with_counts(&per_class);
    let mut place = |r: &ReceiveRec| {
        if (r.3 as usize) < n {
            selects.push(r.3 as usize, (r.0, r.1, r.2));
        }
        if (r.4 as usize) < n {
            captures.push(capture_class(r), (r.3, r.0, r.1, r.5, r.6));
        }
    };
    match start_order(receives) {
        Some(order) => order.iter().for_each(|&i| place(&receives[i as usize])),
        None => receives.iter().for_each(place),
    }
    (selects, captures)
}

/// Merges `v` in place as `Vec::dedup_by` would (`joins(kept, next)` folds
/// `next` into the last kept item, or refuses it); returns how many items
/// are kept, at the front.
fn merge_runs<T: Copy>(v: &mut [T], mut joins: impl FnMut(&mut T, &T) -> bool) -> usize {
    if v.is_empty() {
        return 0;
    }
    let mut kept = 0;
    for i in 1..v.len() {
        let next = v[i];
        if !joins(&mut v[kept], &next) {
            kept += 1;
            v[kept] = next;
        }
    }
    kept + 1
}

/// A tile's row entries in cycle order, from its runs.
fn row_of(sends: &[SendRun], selects: &[SelectRun], captures: &[CaptureRun]) -> Vec<RowEntry> {
    let mut row = Vec::with_capacity(sends.len() + selects.len() + captures.len());
    row.extend(
        sends
            .iter()
            .map(|&(_, cycle, _, offset, end)| RowEntry::Send {
                cycle,
                offset,
                len: end - offset,
            }),
    );
    row.extend(
        selects
            .iter()
            .map(|&(cycle, end, sender)| RowEntry::Select {
                cycle,
                sender,
                cycles: end - cycle,
            }),
    );
    row.extend(
        captures
            .iter()
            .map(|&(port, cycle, _, offset, end)| RowEntry::Capture {
                cycle,
                port,
                offset,
                len: end - offset,
            }),
    );
    // Stable: entries of one cycle and kind keep their runs' order.
    row.sort_by_key(|e| e.order_key());
    row
}

/// Words of a tile's row with these runs (0 for none).
fn words_of(sends: usize, selects: usize, captures: usize) -> u32 {
    if sends + selects + captures == 0 {
        return 0;
    }
    let w = HEADER_WORDS as u64
        + sends as u64 * SEND_WORDS as u64
        + selects as u64 * SELECT_WORDS as u64
        + captures as u64 * CAPTURE_WORDS as u64;
    w.min(u32::MAX as u64) as u32
}

impl RowStats {
    /// The sizes of rows of these words per tile.
    fn of_words(words: Vec<u32>) -> RowStats {
        let (mut max_row_words, mut max_row_tile) = (0, 0);
        for (t, &w) in words.iter().enumerate() {
            if w > max_row_words {
                (max_row_words, max_row_tile) = (w, t as u32);
            }
        }
        let total_words = words.iter().map(|&w| w as u64).sum();
        RowStats {
            words,
            max_row_words,
            max_row_tile,
            total_words,
        }
    }
}

/// Every tile's row entries in cycle order (index = tile). Entries naming a
/// tile outside the target or a missing transfer are skipped (the verifier
/// reports those).
pub fn tile_rows(phase: &Phase, fragments: &[Fragment], target: &Target) -> Vec<Vec<RowEntry>> {
    let (n, word) = (target.tiles() as usize, target.exchange_word_bytes());
    let (sends, receives) = sends_and_receives(phase, fragments, word);
    if let Some(rows) = streamed_rows(sends, &receives, n, word) {
        return rows;
    }
    per_tile(phase, fragments, target, |_, s, sel, cap| {
        row_of(s, sel, cap)
    })
}

/// [`tile_rows`] by sorting every group (what the streamed rows must equal).
#[cfg(test)]
pub(crate) fn sorted_rows(
    phase: &Phase,
    fragments: &[Fragment],
    target: &Target,
) -> Vec<Vec<RowEntry>> {
    per_tile(phase, fragments, target, |_, s, sel, cap| {
        row_of(s, sel, cap)
    })
}

/// Sizes of every tile's row (the sizes of [`tile_rows`]' rows, counted
/// without building them).
pub fn row_stats(phase: &Phase, fragments: &[Fragment], target: &Target) -> RowStats {
    let (n, word) = (target.tiles() as usize, target.exchange_word_bytes());
    let (sends, receives) = sends_and_receives(phase, fragments, word);
    if let Some(words) = streamed_words(sends, &receives, n, word) {
        return RowStats::of_words(words);
    }
    let words = per_tile(phase, fragments, target, |_, s, sel, cap| {
        words_of(s.len(), sel.len(), cap.len())
    });
    RowStats::of_words(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_isa::exchange_row::RowEntry as Hw;

    #[test]
    fn entry_sizes_are_the_hardware_format() {
        let hw = [
            Hw::Select {
                cycle: 0,
                sender: Some(1),
            },
            Hw::Capture {
                cycle: 0,
                addr: 0,
                len: 4,
                partner: false,
            },
            Hw::Send {
                cycle: 0,
                addr: 0,
                len: 4,
            },
        ];
        let ours = [SELECT_WORDS, CAPTURE_WORDS, SEND_WORDS];
        for (h, w) in hw.iter().zip(ours) {
            assert_eq!(h.row_words(), w);
        }
        assert_eq!(
            ipu_isa::exchange_row::encode_row(&[]).len() as u32,
            HEADER_WORDS
        );
    }
}
