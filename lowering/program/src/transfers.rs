//! Transfers as the exchange dialect writes them: runs of evenly stepping
//! transfers ([`compress`]) and back ([`expand`]), exactly.

use ipu_dialects::exchange::{DstSegment, TransferRun};
use ipu_exchange_schedule::{Destination, Transfer};

/// Destinations as arithmetic segments, greedily.
fn segments(dsts: &[Destination]) -> Vec<DstSegment> {
    let mut out: Vec<DstSegment> = Vec::new();
    for d in dsts {
        let (t, o) = (d.tile as i64, d.offset as i64);
        if let Some(s) = out.last_mut() {
            let (nt, no) = (
                s.tile + s.count * s.tile_step,
                s.offset + s.count * s.offset_step,
            );
            if s.count == 1 {
                s.tile_step = t - s.tile;
                s.offset_step = o - s.offset;
                s.count = 2;
                continue;
            }
            if nt == t && no == o {
                s.count += 1;
                continue;
            }
        }
        out.push(DstSegment {
            count: 1,
            tile: t,
            tile_step: 0,
            offset: o,
            offset_step: 0,
        });
    }
    out
}

/// Transfers as runs of evenly stepping transfers (and repetitions of
/// runs that step evenly), in order.
pub fn compress(transfers: &[Transfer]) -> Vec<TransferRun> {
    repeat_runs(single_runs(transfers))
}

/// Whether `b` is `a` moved by `d` (source tile, source offset, destination
/// tile, destination offset), and that move.
fn shift_of(a: &TransferRun, b: &TransferRun) -> Option<[i64; 4]> {
    let same_shape = a.count == b.count
        && a.len == b.len
        && a.src_tile_step == b.src_tile_step
        && a.src_offset_step == b.src_offset_step
        && a.dst_tile_step == b.dst_tile_step
        && a.dst_offset_step == b.dst_offset_step
        && a.dsts.len() == b.dsts.len()
        && a.repeat == 1
        && b.repeat == 1;
    if !same_shape {
        return None;
    }
    let (dt, doff) = (
        b.dsts[0].tile - a.dsts[0].tile,
        b.dsts[0].offset - a.dsts[0].offset,
    );
    let dsts_match = a.dsts.iter().zip(&b.dsts).all(|(x, y)| {
        x.count == y.count
            && x.tile_step == y.tile_step
            && x.offset_step == y.offset_step
            && y.tile - x.tile == dt
            && y.offset - x.offset == doff
    });
    dsts_match.then_some([
        b.src_tile - a.src_tile,
        b.src_offset - a.src_offset,
        dt,
        doff,
    ])
}

/// Folds consecutive runs that repeat with an even shift into one.
fn repeat_runs(runs: Vec<TransferRun>) -> Vec<TransferRun> {
    let mut out: Vec<TransferRun> = Vec::new();
    // The last run as it was before repetition, to compare the next with.
    let mut prev: Option<TransferRun> = None;
    for r in runs {
        if let (Some(last), Some(p)) = (out.last_mut(), prev.as_ref()) {
            if let Some(d) = shift_of(p, &r) {
                let step = [
                    last.repeat_src_tile_step,
                    last.repeat_src_offset_step,
                    last.repeat_dst_tile_step,
                    last.repeat_dst_offset_step,
                ];
                if last.repeat == 1 || step == d {
                    [
                        last.repeat_src_tile_step,
                        last.repeat_src_offset_step,
                        last.repeat_dst_tile_step,
                        last.repeat_dst_offset_step,
                    ] = d;
                    last.repeat += 1;
                    prev = Some(r);
                    continue;
                }
            }
        }
        prev = Some(r.clone());
        out.push(r);
    }
    out
}

/// Transfers as runs of evenly stepping transfers, in order.
fn single_runs(transfers: &[Transfer]) -> Vec<TransferRun> {
    let mut out: Vec<TransferRun> = Vec::new();
    let mut first: Option<&Transfer> = None;
    for t in transfers {
        if let (Some(run), Some(f)) = (out.last_mut(), first) {
            let i = run.count;
            let fits = |r: &mut TransferRun| -> bool {
                if t.len as i64 != r.len || t.dsts.len() != f.dsts.len() {
                    return false;
                }
                let (dt, doff) = (
                    t.dsts[0].tile as i64 - f.dsts[0].tile as i64,
                    t.dsts[0].offset as i64 - f.dsts[0].offset as i64,
                );
                if i == 1 {
                    r.src_tile_step = t.src_tile as i64 - r.src_tile;
                    r.src_offset_step = t.src_offset as i64 - r.src_offset;
                    r.dst_tile_step = dt;
                    r.dst_offset_step = doff;
                } else if t.src_tile as i64 != r.src_tile + i * r.src_tile_step
                    || t.src_offset as i64 != r.src_offset + i * r.src_offset_step
                    || dt != i * r.dst_tile_step
                    || doff != i * r.dst_offset_step
                {
                    return false;
                }
                t.dsts.iter().zip(&f.dsts).all(|(a, b)| {
                    a.tile as i64 - b.tile as i64 == i * r.dst_tile_step
                        && a.offset as i64 - b.offset as i64 == i * r.dst_offset_step
                })
            };
            let saved = (
                run.src_tile_step,
                run.src_offset_step,
                run.dst_tile_step,
                run.dst_offset_step,
            );
            if fits(run) {
                run.count += 1;
                continue;
            }
            (
                run.src_tile_step,
                run.src_offset_step,
                run.dst_tile_step,
                run.dst_offset_step,
            ) = saved;
        }
        out.push(TransferRun {
            repeat: 1,
            repeat_src_tile_step: 0,
            repeat_src_offset_step: 0,
            repeat_dst_tile_step: 0,
            repeat_dst_offset_step: 0,
            count: 1,
            src_tile: t.src_tile as i64,
            src_tile_step: 0,
            src_offset: t.src_offset as i64,
            src_offset_step: 0,
            len: t.len as i64,
            dst_tile_step: 0,
            dst_offset_step: 0,
            dsts: segments(&t.dsts),
        });
        first = Some(t);
    }
    out
}

/// The transfers of decoded runs, in order.
pub fn expand(runs: &[TransferRun]) -> Vec<Transfer> {
    runs.iter()
        .flat_map(|r| r.expand())
        .map(|(src_tile, src_offset, len, dsts)| Transfer {
            src_tile,
            src_offset,
            len,
            dsts: dsts
                .into_iter()
                .map(|(tile, offset)| Destination { tile, offset })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(src: u32, off: u32, len: u32, dsts: &[(u32, u32)]) -> Transfer {
        Transfer {
            src_tile: src,
            src_offset: off,
            len,
            dsts: dsts
                .iter()
                .map(|&(tile, offset)| Destination { tile, offset })
                .collect(),
        }
    }

    #[test]
    fn regular_transfers_compress_to_one_run_and_back() {
        // Rows of a block multicast to 4 tiles, row by row.
        let ts: Vec<Transfer> = (0..8)
            .map(|r| {
                t(
                    0,
                    r * 64,
                    64,
                    &[(1, r * 64), (2, r * 64), (3, r * 64), (4, r * 64)],
                )
            })
            .collect();
        let runs = compress(&ts);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].dsts.len(), 1);
        assert_eq!(expand(&runs), ts);
    }

    #[test]
    fn irregular_transfers_round_trip_exactly() {
        let ts = vec![
            t(3, 0, 16, &[(1, 0)]),
            t(4, 16, 16, &[(2, 0)]),
            t(9, 4, 8, &[(0, 8), (5, 0), (6, 100)]),
            t(10, 4, 8, &[(1, 8), (6, 0), (7, 100)]),
            t(0, 0, 4, &[(15, 0)]),
        ];
        let runs = compress(&ts);
        assert_eq!(expand(&runs), ts);
        assert_eq!(runs.len(), 3);
    }

    #[test]
    fn runs_that_repeat_with_a_shift_fold_into_one() {
        // Two rows of 4 chunks each, every row moved by 512 source bytes and
        // 256 destination bytes: one run repeated.
        let mut ts = Vec::new();
        for row in 0..6u32 {
            for c in 0..4u32 {
                ts.push(t(
                    1152,
                    row * 512 + c * 64,
                    64,
                    &[(c, row * 256), (c + 192, row * 256)],
                ));
            }
        }
        let runs = compress(&ts);
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!((runs[0].repeat, runs[0].count), (6, 4));
        assert_eq!(expand(&runs), ts);
    }
}
