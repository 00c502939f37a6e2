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
    // Every tile's selects and captures in one buffer each, placed by a
    // first count: a big multicast phase has close to a million receives,
    // and a list per tile (or per slice of fragments) costs more in
    // allocations and fresh pages than the counting does.
    let (per_port, per_tile) = super::verify::receive_counts(phase, fragments, n);
    let mut selects: Flat<SelectRun> = Flat::with_counts(&per_port[..n]);
    let mut captures: Flat<CaptureRun> = Flat::with_counts(&per_tile[..n]);
    let mut sends: Vec<SendRun> = Vec::with_capacity(fragments.len());
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
            let end = sat(u64::from(start).saturating_add(w));
            if (r.port as usize) < n {
                selects.push(r.port as usize, (start, end, f.src_tile));
            }
            if (d.tile as usize) < n {
                captures.push(
                    d.tile as usize,
                    (
                        r.port,
                        start,
                        end,
                        sat(at),
                        sat(at.saturating_add(f.len as u64)),
                    ),
                );
            }
        }
    }
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
    let groups = selects.groups_mut().into_iter().zip(captures.groups_mut());
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
    per_tile(phase, fragments, target, |_, s, sel, cap| {
        row_of(s, sel, cap)
    })
}

/// Sizes of every tile's row (the sizes of [`tile_rows`]' rows, counted
/// without building them).
pub fn row_stats(phase: &Phase, fragments: &[Fragment], target: &Target) -> RowStats {
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
