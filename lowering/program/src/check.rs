//! [`Program::check`]: refuses a program whose phases no longer deliver what
//! its compute sets read (a hand-edited phase, say), at the phase; and
//! whose kernels' paired loads read buffers not placed for them.

use crate::model::*;
use ipu_ir::{Diagnostic, Loc};

impl Program {
    fn on(&self, b: BufId, tile: u32) -> bool {
        let ts = &self.buffers[b].tiles;
        // Most buffers are on a run of consecutive tiles: try the slot tile
        // would have in one before searching.
        let guess = ts
            .first()
            .and_then(|&f| tile.checked_sub(f))
            .and_then(|i| ts.get(i as usize));
        guess == Some(&tile) || ts.binary_search(&tile).is_ok()
    }

    /// Checks a move's transfers against its buffers.
    fn check_move(&self, m: &Move, loc: Loc, who: &str) -> Result<(), Diagnostic> {
        let (sb, db) = (&self.buffers[m.src], &self.buffers[m.dst]);
        for t in &m.transfers {
            let len = t.len as u64;
            if !self.on(m.src, t.src_tile) || t.src_offset as u64 + len > sb.bytes {
                return Err(Diagnostic::error(
                    loc,
                    format!(
                        "{who} reads bytes [{}, {}) of @{} on tile {}, which does not hold them",
                        t.src_offset,
                        t.src_offset as u64 + len,
                        sb.name,
                        t.src_tile
                    ),
                ));
            }
            for d in &t.dsts {
                let end = d.offset as u64 + len;
                if !self.on(m.dst, d.tile) || end > db.bytes {
                    return Err(Diagnostic::error(
                        loc,
                        format!(
                            "{who} writes bytes [{}, {end}) of @{} on tile {}, which does not hold them",
                            d.offset, db.name, d.tile
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks what the machine stage relies on, cheaply and before anything
    /// expensive: every tile inside the target, every buffer reference on a
    /// tile that has the buffer and inside it, every host stream's blocks in
    /// their buffer, and every byte a compute set reads from a delivered
    /// buffer written exactly once by the phases and local copies.
    /// A buffer a kernel reads with paired loads must be flagged
    /// `interleaved`, or placement may put it where those loads fault.
    fn check_wide_reads(&self, c: &ComputeSet, v: &Vertex) -> Result<(), Diagnostic> {
        let Kernel::Lib(spec) = &v.call.kernel else {
            return Ok(());
        };
        let Ok((layout, _)) = crate::records::record_layout(spec) else {
            return Ok(()); // check_record refuses it where the record is read
        };
        for (i, (w, slot)) in v.call.record.iter().zip(&layout).enumerate() {
            if let (Word::Buf(b, _), crate::records::Slot::Wide) = (*w, slot) {
                let buf = &self.buffers[b];
                if !buf.interleaved {
                    return Err(Diagnostic::error(
                        c.loc,
                        format!(
                            "compute set {}: {} reads @{} (record word {i}) with paired 64-bit loads, but @{} is not `interleaved`",
                            c.name,
                            spec.name(),
                            buf.name,
                            buf.name
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn check(&self, target: &ipu_target::Target) -> Result<(), Diagnostic> {
        let tiles = target.tiles();
        let sram = target.sram_bytes();
        for b in &self.buffers {
            if let Some(&t) = b.tiles.iter().find(|&&t| t >= tiles) {
                return Err(Diagnostic::error(
                    b.loc,
                    format!(
                        "buffer @{} is on tile {t}, but target {} has {tiles} tiles",
                        b.name, target.name
                    ),
                ));
            }
            if b.bytes > sram {
                return Err(Diagnostic::error(
                    b.loc,
                    format!(
                        "buffer @{} needs {} bytes, but a tile of {} has {sram}",
                        b.name, b.bytes, target.name
                    ),
                ));
            }
        }
        let placed: Vec<Placed> = self
            .inputs
            .iter()
            .filter_map(|i| i.at.placed())
            .chain(self.constants.iter().filter_map(|c| c.at.placed()))
            .chain(self.outputs.iter().map(|o| o.at.clone()))
            .chain(self.probes.iter().map(|p| p.at.clone()))
            .collect();
        for p in &self.probes {
            if !matches!(self.steps.get(p.after), Some(Step::Compute(_))) {
                return Err(Diagnostic::error(
                    p.at.loc,
                    "probes a value after a step that is not a compute set",
                ));
            }
        }
        let stored = self
            .inputs
            .iter()
            .map(|i| &i.at)
            .chain(self.constants.iter().map(|c| &c.at));
        for at in stored {
            for p in &at.placements {
                let buf = &self.buffers[p.buffer];
                for r in &p.rects {
                    let (count, len, stride) = p.layout.filled(r, at.elem_bytes as i64);
                    let end = (count - 1) * stride + len;
                    if !self.on(p.buffer, r.tile) || end > buf.bytes {
                        return Err(Diagnostic::error(
                            at.loc,
                            format!(
                                "places [{:?}, {:?}) in @{} on tile {}, which does not hold {end} bytes of it",
                                r.lo, r.hi, buf.name, r.tile
                            ),
                        ));
                    }
                }
            }
        }
        for at in &placed {
            let shape = (at.shape.clone(), at.elem_bytes);
            if at.mapping.grid.len() != shape.0.len() {
                return Err(Diagnostic::error(
                    at.loc,
                    "has a mapping whose rank is not the value's",
                ));
            }
            // Before the blocks are listed: a grid can have billions of them.
            if at.mapping.last_tile() >= i64::from(tiles) {
                return Err(Diagnostic::error(
                    at.loc,
                    format!(
                        "has a mapping whose blocks reach tile {}, but target {} has {tiles} tiles",
                        at.mapping.last_tile(),
                        target.name
                    ),
                ));
            }
            let full: i64 = at.mapping.block_shape(&shape.0).iter().product();
            let bytes = full.max(0) as u64 * shape.1;
            let buf = &self.buffers[at.buffer];
            if bytes > buf.bytes {
                return Err(Diagnostic::error(
                    at.loc,
                    format!(
                        "needs {bytes} bytes per block, but buffer @{} has {}",
                        buf.name, buf.bytes
                    ),
                ));
            }
            for blk in crate::geometry::blocks(&at.mapping, &shape.0) {
                if !self.on(at.buffer, blk.tile) {
                    return Err(Diagnostic::error(
                        at.loc,
                        format!(
                            "puts a block on tile {}, where buffer @{} is not",
                            blk.tile, buf.name
                        ),
                    ));
                }
            }
        }
        // Each step's own checks (its records and its moves' bounds) on
        // their own, in parallel; the first error in program order.
        use rayon::prelude::*;
        let mut tasks: Vec<StepCheck<'_>> = Vec::new();
        // Per task, whether it is a relocated step of a call.
        let mut relocated: Vec<bool> = Vec::new();
        for (i, s) in self.steps.iter().enumerate() {
            // A call's relocated step is its callee's, checked there
            // (`read_expanded` checks each callee before expanding it):
            // relocation keeps every buffer's tiles and bytes, so only
            // which moves write each buffer remains to be checked.
            let callee_step = self.is_relocated_step(i);
            let before = tasks.len();
            match s {
                Step::Compute(c) => {
                    tasks.push(StepCheck::Vertices(c));
                    tasks.extend(c.copies.iter().map(|m| StepCheck::Copy(c, m)));
                }
                Step::Exchange(p) => tasks.extend(p.moves.iter().map(|m| StepCheck::Phase(p, m))),
                // Its bindings are checked against the callee where the
                // call is expanded (`Program::expand_calls`).
                Step::Call(_) => {}
            }
            relocated.resize(relocated.len() + tasks.len() - before, callee_step);
        }
        if let Some(Err(e)) = tasks
            .par_iter()
            .zip(&relocated)
            .filter(|(_, &r)| !r)
            .map(|(t, _)| self.check_task(t))
            .find_first(|r| r.is_err())
        {
            return Err(e);
        }
        // Per delivered buffer, the moves writing it (in program order) and where they are.
        let mut writers: Vec<Vec<(&Move, Loc)>> = vec![Vec::new(); self.buffers.len()];
        // Per buffer, whether a move outside a call's relocated steps writes it.
        let mut unrelocated = vec![false; self.buffers.len()];
        for (t, &r) in tasks.iter().zip(&relocated) {
            let (m, loc) = match t {
                StepCheck::Vertices(_) => continue,
                StepCheck::Copy(c, m) => (*m, c.loc),
                StepCheck::Phase(p, m) => (*m, p.loc),
            };
            if !self.buffers[m.dst].reads.is_empty() {
                writers[m.dst].push((m, loc));
                unrelocated[m.dst] |= !r;
            }
        }
        // Each delivered buffer's bytes checked on its own; the first error
        // in buffer order. A buffer only a call's relocated steps write is
        // that call's copy of a callee buffer, written by exactly the
        // callee's moves: checked in the callee.
        let delivered: Vec<BufId> = (0..self.buffers.len())
            .filter(|&b| !self.buffers[b].reads.is_empty())
            .filter(|&b| writers[b].is_empty() || unrelocated[b])
            .collect();
        match delivered
            .par_iter()
            .map(|&b| self.check_delivered(b, &writers[b], tiles))
            .find_first(|r| r.is_err())
        {
            Some(Err(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Whether step `s` is a callee's step relocated to a call's buffers
    /// by [`Program::expand_calls`] (not the call's copies in and out),
    /// before [`Program::fold_frames`].
    fn is_relocated_step(&self, s: usize) -> bool {
        !self.frames.folded
            && self.frames.call_of(s) != 0
            && !self.frames.copy_step.get(s).copied().unwrap_or(true)
    }

    /// One step's check of [`Program::check`]: a compute set's records, or
    /// one move's transfers against its buffers.
    fn check_task(&self, t: &StepCheck<'_>) -> Result<(), Diagnostic> {
        match *t {
            StepCheck::Vertices(c) => {
                for v in &c.vertices {
                    for w in &v.call.record {
                        let Word::Buf(b, off) = *w else { continue };
                        let buf = &self.buffers[b];
                        if off as u64 > buf.bytes {
                            return Err(Diagnostic::error(
                                c.loc,
                                format!(
                                    "compute set {} refers to byte {off} of @{}, which has {} bytes",
                                    c.name, buf.name, buf.bytes
                                ),
                            ));
                        }
                        if let Some(&t) = v.tiles.iter().find(|&&t| !self.on(b, t)) {
                            return Err(Diagnostic::error(
                                c.loc,
                                format!(
                                    "compute set {} refers to @{} on tile {t}, where it is not",
                                    c.name, buf.name
                                ),
                            ));
                        }
                    }
                }
                for v in &c.vertices {
                    self.check_wide_reads(c, v)?;
                }
                Ok(())
            }
            StepCheck::Copy(c, m) => self.check_move(m, c.loc, &format!("compute set {}", c.name)),
            StepCheck::Phase(p, m) => {
                self.check_move(m, p.loc, &format!("exchange.phase @{}", p.name))
            }
        }
    }

    /// Checks that the moves `writers` (in program order) write every byte
    /// the readers of delivered buffer `b` read, and none twice.
    fn check_delivered(
        &self,
        b: BufId,
        writers: &[(&Move, Loc)],
        tiles: u32,
    ) -> Result<(), Diagnostic> {
        let buf = &self.buffers[b];
        // Each tile's writes, in program order: (start, end, writer).
        let n = tiles as usize;
        let mut start = vec![0usize; n + 1];
        for (m, _) in writers {
            for t in &m.transfers {
                for d in &t.dsts {
                    start[d.tile as usize + 1] += 1;
                }
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut writes = vec![(0u64, 0u64, 0u32); start[n]];
        for (k, (m, _)) in writers.iter().enumerate() {
            for t in &m.transfers {
                let len = t.len as u64;
                for d in &t.dsts {
                    let at = &mut fill[d.tile as usize];
                    writes[*at] = (d.offset as u64, d.offset as u64 + len, k as u32);
                    *at += 1;
                }
            }
        }
        let mut taken = vec![false; n];
        let mut bits = Bits::default();
        for r in &buf.reads {
            for &t in &r.tiles {
                // A tile's writes are checked once; a tile listed again has none left.
                let w: &mut [(u64, u64, u32)] = match taken.get_mut(t as usize) {
                    Some(done) if !*done => {
                        *done = true;
                        &mut writes[start[t as usize]..start[t as usize + 1]]
                    }
                    _ => &mut [],
                };
                // Most tiles' writes cover their reads exactly once: seen
                // without sorting them; any other tile is checked in order.
                if bits.written_once(w, r, buf.bytes) {
                    continue;
                }
                w.sort_by_key(|x| (x.0, x.1));
                for pair in w.windows(2) {
                    if pair[1].0 < pair[0].1 {
                        return Err(Diagnostic::error(
                            writers[pair[1].2 as usize].1,
                            format!(
                                "writes bytes [{}, {}) of @{} on tile {t} a second time",
                                pair[1].0,
                                pair[0].1.min(pair[1].1),
                                buf.name
                            ),
                        ));
                    }
                }
                let reach = reaches(w);
                for k in 0..r.count {
                    let (lo, hi) = (k * r.stride, k * r.stride + r.len);
                    // The part of [lo, hi) the writes leave uncovered, if any.
                    let at = covered_to(w, &reach, lo, hi);
                    if at < hi {
                        let (loc, who) = self.blame(b);
                        let gap_end = w
                            .iter()
                            .map(|x| x.0)
                            .filter(|&s| s > at)
                            .min()
                            .unwrap_or(hi)
                            .min(hi);
                        return Err(Diagnostic::error(
                            loc,
                            format!(
                                "{who} does not deliver bytes [{at}, {gap_end}) of @{} on tile {t}, which the next compute set reads",
                                buf.name
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Where to blame a buffer's missing bytes: the first phase writing it.
    fn blame(&self, b: BufId) -> (Loc, String) {
        for s in &self.steps {
            if let Step::Exchange(p) = s {
                if p.moves.iter().any(|m| m.dst == b) {
                    return (p.loc, format!("exchange.phase @{}", p.name));
                }
            }
        }
        let loc = self.steps.iter().find_map(|s| match s {
            Step::Compute(c)
                if c.vertices.iter().any(|v| {
                    v.call
                        .record
                        .iter()
                        .any(|w| matches!(w, Word::Buf(x, _) if *x == b))
                }) =>
            {
                Some(c.loc)
            }
            _ => None,
        });
        (
            loc.unwrap_or(self.buffers[b].loc),
            "no exchange phase".to_string(),
        )
    }
}

/// Per write of `w` (sorted by start), the furthest end of the writes
/// before it.
fn reaches(w: &[(u64, u64, u32)]) -> Vec<u64> {
    let mut reach = Vec::with_capacity(w.len());
    let mut furthest = 0;
    for x in w {
        reach.push(furthest);
        furthest = furthest.max(x.1);
    }
    reach
}

/// How far from `lo` (up to `hi`) the writes `w` (sorted by start) cover
/// without a gap; `reach` is [`reaches`] of `w`.
fn covered_to(w: &[(u64, u64, u32)], reach: &[u64], lo: u64, hi: u64) -> u64 {
    let mut at = lo;
    // The writes before `first` all end by `lo`: none of them can cover it.
    let first = reach.partition_point(|&e| e <= lo).saturating_sub(1);
    for &(s, e, _) in &w[first..] {
        if e <= at || s >= hi {
            continue;
        }
        if s > at {
            break;
        }
        at = at.max(e);
    }
    at
}

/// A bit per byte of a buffer on one tile (reused from tile to tile).
#[derive(Default)]
struct Bits {
    words: Vec<u64>,
}

impl Bits {
    /// Whether the writes `w` (start, end, writer), none empty, share no
    /// byte and cover every range `r` reads, in a buffer of `bytes` bytes.
    /// False says only that the writes need the exact check.
    fn written_once(&mut self, w: &[(u64, u64, u32)], r: &Reads, bytes: u64) -> bool {
        let n = bytes.div_ceil(64) as usize;
        self.words.clear();
        self.words.resize(n, 0);
        // Bits lo..hi of word i, lo < hi <= 64.
        let mask = |lo: u64, hi: u64| (u64::MAX >> (64 - (hi - lo))) << lo;
        for &(s, e, _) in w {
            if s >= e || e > bytes {
                return false;
            }
            let mut at = s;
            while at < e {
                let (i, lo) = ((at / 64) as usize, at % 64);
                let hi = (e - at + lo).min(64);
                let m = mask(lo, hi);
                if self.words[i] & m != 0 {
                    return false;
                }
                self.words[i] |= m;
                at += hi - lo;
            }
        }
        for k in 0..r.count {
            let (lo, hi) = (k * r.stride, k * r.stride + r.len);
            if hi > bytes {
                return false;
            }
            let mut at = lo;
            while at < hi {
                let (i, l) = ((at / 64) as usize, at % 64);
                let h = (hi - at + l).min(64);
                let m = mask(l, h);
                if self.words[i] & m != m {
                    return false;
                }
                at += h - l;
            }
        }
        true
    }
}

/// One part of [`Program::check`]'s per-step checks.
enum StepCheck<'a> {
    Vertices(&'a ComputeSet),
    Copy(&'a ComputeSet, &'a Move),
    Phase(&'a PhaseDecl, &'a Move),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_skipping_ended_writes_matches_a_plain_scan() {
        // The plain scan: every write from the first.
        let plain = |w: &[(u64, u64, u32)], lo: u64, hi: u64| {
            let mut at = lo;
            for &(s, e, _) in w {
                if e <= at || s >= hi {
                    continue;
                }
                if s > at {
                    break;
                }
                at = at.max(e);
            }
            at
        };
        let mut x = 12345u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..500 {
            let n = next(12) as usize;
            let mut w: Vec<(u64, u64, u32)> = (0..n)
                .map(|k| {
                    let s = next(64);
                    (s, s + 1 + next(24), k as u32)
                })
                .collect();
            w.sort_by_key(|x| (x.0, x.1));
            let reach = reaches(&w);
            for lo in 0..80 {
                for len in [1, 3, 8, 40] {
                    assert_eq!(
                        covered_to(&w, &reach, lo, lo + len),
                        plain(&w, lo, lo + len),
                        "{w:?} [{lo}, {})",
                        lo + len
                    );
                }
            }
        }
    }

    #[test]
    fn writes_seen_once_by_bits_are_what_the_ordered_check_passes() {
        // The ordered check: no two writes overlap, and every read range is covered.
        let ordered = |w: &[(u64, u64, u32)], r: &Reads| {
            let mut w = w.to_vec();
            w.sort_by_key(|x| (x.0, x.1));
            if w.windows(2).any(|p| p[1].0 < p[0].1) {
                return false;
            }
            let reach = reaches(&w);
            (0..r.count).all(|k| {
                let (lo, hi) = (k * r.stride, k * r.stride + r.len);
                covered_to(&w, &reach, lo, hi) >= hi
            })
        };
        let mut x = 99u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut bits = Bits::default();
        let (mut passed, mut failed) = (0, 0);
        for _ in 0..4000 {
            let bytes = 1 + next(300);
            // Mostly a tiling of the buffer in a shuffled order, sometimes disturbed.
            let mut w = Vec::new();
            let mut at = 0;
            while at < bytes {
                let len = (1 + next(90)).min(bytes - at);
                w.push((at, at + len, w.len() as u32));
                at += len;
            }
            for i in (1..w.len()).rev() {
                w.swap(i, next(i as u64 + 1) as usize);
            }
            match next(4) {
                0 if !w.is_empty() => {
                    let i = next(w.len() as u64) as usize;
                    w.remove(i);
                }
                1 => {
                    let s = next(bytes);
                    w.push((s, (s + 1 + next(8)).min(bytes), 7));
                }
                _ => {}
            }
            let stride = 1 + next(80);
            let r = Reads {
                tiles: vec![0],
                count: 1 + next(5),
                len: 1 + next(stride),
                stride,
            };
            let want = ordered(&w, &r);
            assert_eq!(
                bits.written_once(&w, &r, bytes),
                want,
                "{w:?} {r:?} {bytes}"
            );
            if want {
                passed += 1;
            } else {
                failed += 1;
            }
        }
        assert!(passed > 100 && failed > 100, "{passed} {failed}");
    }
}
