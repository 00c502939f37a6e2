//! `lcopy.S`: a tile's local operand copies as stepped groups of
//! transfers on the workers; the code depends on the alignment only, the
//! copy's shape is in its record ([`LocalCopy`]).

use super::*;

impl KernelSpec {
    /// `lcopy.S` for words of `align` bytes: the code is the same whatever
    /// the copy's shape, which its record carries ([`LocalCopy`]).
    pub fn lcopy(align: u32) -> KernelSpec {
        KernelSpec {
            source: "lcopy",
            entry: "lcopy",
            params: params_of(&[("A", align as i64)]),
        }
    }
    /// `lcopy.S` transposing 2 x 2 blocks of 2-byte elements (T = 1).
    pub fn lcopy_pairs() -> KernelSpec {
        let mut s = KernelSpec::lcopy(2);
        s.params.insert("T".into(), 1);
        s
    }
}

/// One stepped group of local transfers as `lcopy.S` copies it: `repeat`
/// rows of `count` transfers of `words` words of `align` bytes, transfer
/// (r, c) at source `r * rsrc_step + c * src_step` and destination
/// `r * rdst_step + c * dst_step` from the group's first. With `pairs`,
/// a transposition of 2-byte elements: transfer (r, c) is the 2 x 2 block
/// of rows 2r, 2r + 1 (adjacent in the source) and columns 2c, 2c + 1
/// (adjacent in the destination); `src_step` steps one column and
/// `dst_step` is the odd row's destination offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LocalCopy {
    pub pairs: bool,
    pub align: u32,
    pub count: u32,
    pub words: u32,
    pub repeat: u32,
    pub src_step: i64,
    pub dst_step: i64,
    pub rsrc_step: i64,
    pub rdst_step: i64,
}

/// The largest of 8, 4, 2, 1 that divides every value.
pub fn copy_alignment(values: &[i64]) -> u32 {
    let mut a = 8u32;
    for &v in values {
        while v.rem_euclid(i64::from(a)) != 0 {
            a /= 2;
        }
    }
    a
}

impl LocalCopy {
    /// The group of `count` transfers of `len` bytes (source and destination
    /// stepping by `src_step`, `dst_step`), `repeat` times (stepping by
    /// `rsrc_step`, `rdst_step`), from buffer offsets `src_off`, `dst_off`
    /// of 8-aligned buffers; `None` when a figure does not fit the record
    /// (each worker's part is kept in 16-bit fields).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        count: i64,
        len: i64,
        src_step: i64,
        dst_step: i64,
        repeat: i64,
        rsrc_step: i64,
        rdst_step: i64,
        offsets: (i64, i64),
    ) -> Option<LocalCopy> {
        let align = copy_alignment(&[
            offsets.0, offsets.1, len, src_step, dst_step, rsrc_step, rdst_step,
        ]);
        let fits = |v: i64| v.unsigned_abs() < 1 << 30;
        let positive = |v: i64| v > 0 && fits(v);
        let ok = positive(count)
            && positive(len)
            && positive(repeat)
            && fits(count.checked_mul(repeat)?)
            && [src_step, dst_step, rsrc_step, rdst_step]
                .iter()
                .all(|&s| fits(s));
        // A transposition of 2-byte elements, the destination contiguous
        // along a row (as given or with the two loops swapped): 2 x 2 blocks.
        let pair_form = |count: i64, ss: i64, ds: i64, repeat: i64, rs: i64, rd: i64| {
            let four = |v: i64| v % 4 == 0;
            (align == 2
                && len == 2
                && ds == 2
                && rs == 2
                && count % 2 == 0
                && repeat % 2 == 0
                && four(offsets.0)
                && four(offsets.1)
                && four(ss)
                && four(rd))
            .then_some(LocalCopy {
                pairs: true,
                align,
                count: (count / 2) as u32,
                words: 1,
                repeat: (repeat / 2) as u32,
                src_step: ss,
                dst_step: rd,
                rsrc_step: 2 * rs,
                rdst_step: 2 * rd,
            })
        };
        let pairs = ok
            .then(|| {
                pair_form(count, src_step, dst_step, repeat, rsrc_step, rdst_step)
                    .or_else(|| pair_form(repeat, rsrc_step, rdst_step, count, src_step, dst_step))
            })
            .flatten();
        let copy = pairs.or_else(|| {
            ok.then(|| LocalCopy {
                pairs: false,
                align,
                count: count as u32,
                words: (len / i64::from(align)) as u32,
                repeat: repeat as u32,
                src_step,
                dst_step,
                rsrc_step,
                rdst_step,
            })
        })?;
        let half = |v: u64| v < 1 << 16;
        copy.parts()
            .iter()
            .all(|p| half(p.row) && half(p.first) && half(p.transfers) && half(p.words))
            .then_some(copy)
    }

    /// How a one-word transfer walks (the cycle formula's WALK): 1 when the
    /// destination steps by one word, 2 when the source does, else 0.
    pub fn walk(&self) -> u64 {
        let a = i64::from(self.align);
        if self.pairs {
            return 0;
        }
        match self.words {
            1 if self.dst_step == a => 1,
            1 if self.src_step == a => 2,
            _ => 0,
        }
    }

    /// Worker issues per transfer of `w` words (as `lcopy.S` counts them).
    fn per_transfer(&self, w: u64) -> u64 {
        match (w, self.align) {
            _ if self.pairs => 6,
            (1, _) if self.walk() > 0 => 3,
            (1, _) => 4,
            (w, 8) => 6 + w,
            (w, _) => 5 + 2 * w,
        }
    }

    /// Each worker's part. The words of each transfer are split when that
    /// keeps the busiest worker shorter than splitting the transfers.
    pub fn parts(&self) -> Vec<CopyPart> {
        let n = u64::from(WORKER_CONTEXTS);
        let t = u64::from(self.count) * u64::from(self.repeat);
        let w = u64::from(self.words);
        let by_transfers = t.div_ceil(n) * self.per_transfer(w);
        let by_words = t * self.per_transfer(w.div_ceil(n));
        let count = u64::from(self.count);
        (0..n)
            .map(|k| {
                let (tlo, tn, wlo, wn) = if w >= n && by_words < by_transfers {
                    (
                        0,
                        t,
                        k * (w / n) + k.min(w % n),
                        w / n + u64::from(k < w % n),
                    )
                } else {
                    (
                        k * (t / n) + k.min(t % n),
                        t / n + u64::from(k < t % n),
                        0,
                        w,
                    )
                };
                let tn = if wn == 0 { 0 } else { tn };
                CopyPart {
                    row: tlo / count,
                    first: tlo % count,
                    transfers: tn,
                    words: wn,
                    offset: wlo * u64::from(self.align),
                }
            })
            .collect()
    }

    /// The busiest worker's transfers, words per transfer and rows touched
    /// (the cycle formula's TN, WN, SEGS): the worker with the most issues,
    /// counted as `lcopy.S` does (a row some 15 issues).
    pub fn busiest(&self) -> (u64, u64, u64) {
        let mut best = (0, 1, 0, 0);
        for p in self.parts() {
            if p.transfers > 0 {
                let segs = (p.first + p.transfers - 1) / u64::from(self.count) + 1;
                let issues = p.transfers * self.per_transfer(p.words) + 15 * segs;
                if issues > best.3 {
                    best = (p.transfers, p.words, segs, issues);
                }
            }
        }
        (best.0, best.1, best.2)
    }

    /// The specialisation to link: the code depends on the alignment only.
    pub fn spec(&self) -> KernelSpec {
        if self.pairs {
            KernelSpec::lcopy_pairs()
        } else {
            KernelSpec::lcopy(self.align)
        }
    }

    /// The specialisation whose cycle formula is this copy's cost (the same
    /// code; TN, WN, SEGS and WALK enter only the formula).
    pub fn cost_spec(&self) -> KernelSpec {
        let (tn, wn, segs) = self.busiest();
        let mut s = self.spec();
        s.params.insert("TN".into(), tn as i64);
        s.params.insert("WN".into(), wn.max(1) as i64);
        s.params.insert("SEGS".into(), segs as i64);
        s.params.insert("WALK".into(), self.walk() as i64);
        s
    }

    /// The record, word by word (`lcopy.S`'s header): COUNT, the four
    /// steps (two's complement), then per worker the source and destination
    /// of its first row (with its words' byte offset), its first transfer
    /// in that row and its transfers (16 bits each), and its words.
    pub fn record(&self) -> Vec<RecordWord> {
        let mut v = vec![
            RecordWord::Val(self.count),
            RecordWord::Val(self.src_step as u32),
            RecordWord::Val(self.dst_step as u32),
            RecordWord::Val(self.rsrc_step as u32),
            RecordWord::Val(self.rdst_step as u32),
        ];
        for p in self.parts() {
            let (row, off) = (p.row as i64, p.offset as i64);
            v.push(RecordWord::Src(row * self.rsrc_step + off));
            v.push(RecordWord::Dst(row * self.rdst_step + off));
            v.push(RecordWord::Val((p.first | p.transfers << 16) as u32));
            v.push(RecordWord::Val(p.words as u32));
        }
        v
    }
}

/// One word of a [`LocalCopy`]'s record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordWord {
    /// The address this many bytes from the group's first source.
    Src(i64),
    /// The address this many bytes from the group's first destination.
    Dst(i64),
    Val(u32),
}

/// One worker's part of a [`LocalCopy`]: `transfers` transfers from
/// (`row`, `first`) on, of each the `words` words from byte `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyPart {
    pub row: u64,
    pub first: u64,
    pub transfers: u64,
    pub words: u64,
    pub offset: u64,
}

/// COUNT, four steps; per worker two addresses and two words.
fn record_layout(_: &KernelSpec) -> Result<Layout, String> {
    use Slot::{Addr as A, Value as V};
    Ok(([vec![V; 5], [A, A, V, V].repeat(6)].concat(), 0))
}

/// `lcopy` and each parameter (`_<name><value>`).
fn name(params: &Params) -> String {
    generic_name_of("lcopy", params)
}

pub(super) const DECL: KernelDecl = KernelDecl {
    name,
    record_layout,
    prologue: no_prologue,
};
