//! The runs delivering a rectangle of a value that may be a view: each
//! element of the rectangle is traced through the views to the stored
//! value holding it, and consecutive elements contiguous on both sides
//! merge into one run. [`Sources::runs`] traces whole lines of elements at
//! once (as far as every view and block on the way moves them evenly);
//! what it gives is what tracing each element alone gives.

use ipu_device::Home;
use ipu_program::geometry::{Block, Run};
use ipu_program::view::{Index, View};
use ipu_program::BufId;
use rustc_hash::FxHashMap;
use std::hash::Hash;

/// A consumer's runs out of a view: (source buffer, run), per rectangle.
pub type ViewRuns = Vec<(BufId, Run)>;

const UNMAPPED: &str = "reads a value with no tile mapping";

/// The stored values and the views over them.
pub struct Sources<'a, K> {
    pub homes: &'a FxHashMap<K, Home>,
    pub views: &'a FxHashMap<K, (View, Vec<K>)>,
}

/// Runs being merged, element by element of the rectangle (row-major).
struct Merge {
    out: ViewRuns,
    cur: Option<(BufId, Run)>,
    /// The rectangle's next element.
    k: u64,
    dst_tile: u32,
}

impl Merge {
    /// The next element is `eb` bytes at `off` on `tile`, in `buf`.
    fn element(&mut self, buf: BufId, tile: u32, off: u64, eb: u64) {
        let dst_off = self.k * eb;
        self.k += 1;
        match self.cur.as_mut() {
            Some((b, r))
                if *b == buf
                    && r.src_tile == tile
                    && r.src_off + r.len == off
                    && r.dst_off + r.len == dst_off =>
            {
                r.len += eb
            }
            _ => {
                self.out.extend(self.cur.take());
                self.cur = Some((
                    buf,
                    Run {
                        src_tile: tile,
                        src_off: off,
                        dst_tile: self.dst_tile,
                        dst_off,
                        len: eb,
                    },
                ));
            }
        }
    }

    /// The next `count` elements are at `off + j * step` (bytes).
    fn piece(&mut self, buf: BufId, tile: u32, off: u64, step: i64, count: i64, eb: u64) {
        self.element(buf, tile, off, eb);
        if count <= 1 {
            return;
        }
        if step == eb as i64 {
            // Each one extends the run the one before it is in.
            if let Some((_, r)) = self.cur.as_mut() {
                r.len += (count - 1) as u64 * eb;
            }
            self.k += (count - 1) as u64;
        } else {
            for j in 1..count {
                self.element(buf, tile, (off as i64 + j * step) as u64, eb);
            }
        }
    }
}

impl<K: Copy + Eq + Hash> Sources<'_, K> {
    /// The runs delivering rectangle `need` of `v` (read through `via`
    /// first, when given: an implicit broadcast), row-major on `need.tile`,
    /// each with the buffer it comes from.
    pub fn runs(&self, v: K, via: Option<&View>, need: &Block) -> Result<ViewRuns, String> {
        let ext = need.extent();
        if ext.iter().product::<i64>() <= 0 {
            return Ok(Vec::new());
        }
        let mut m = Merge {
            out: Vec::new(),
            cur: None,
            k: 0,
            dst_tile: need.tile,
        };
        let rank = ext.len();
        if rank == 0 {
            self.top(v, via, &[], &[], 1, &mut m)?;
        } else {
            // Line by line along the last dimension.
            let last = rank - 1;
            let mut step: Index = Index::from_elem(0, rank);
            step[last] = 1;
            let mut idx: Index = Index::from_slice(&need.lo);
            loop {
                self.top(v, via, &idx, &step, ext[last], &mut m)?;
                let mut d = last;
                loop {
                    if d == 0 {
                        m.out.extend(m.cur.take());
                        return Ok(m.out);
                    }
                    d -= 1;
                    idx[d] += 1;
                    if idx[d] < need.hi[d] {
                        break;
                    }
                    idx[d] = need.lo[d];
                }
            }
        }
        m.out.extend(m.cur.take());
        Ok(m.out)
    }

    fn top(
        &self,
        v: K,
        via: Option<&View>,
        idx: &[i64],
        step: &[i64],
        n: i64,
        m: &mut Merge,
    ) -> Result<(), String> {
        match via {
            None => self.line(v, idx, step, n, m),
            // Whichever input the broadcast names, it reads `v`.
            Some(view) => {
                Self::through(view, idx, step, n, |_, s, st, c| self.line(v, s, st, c, m))
            }
        }
    }

    /// Elements `idx + j * step` (j < n) of `v`.
    fn line(&self, v: K, idx: &[i64], step: &[i64], n: i64, m: &mut Merge) -> Result<(), String> {
        if let Some(home) = self.homes.get(&v) {
            home_line(home, idx, step, n, m);
            return Ok(());
        }
        let (view, inputs) = self.views.get(&v).ok_or(UNMAPPED)?;
        Self::through(view, idx, step, n, |k, s, st, c| {
            self.line(inputs[k], s, st, c, m)
        })
    }

    /// Splits a line of `view` into the lines of its inputs, in order.
    fn through(
        view: &View,
        idx: &[i64],
        step: &[i64],
        n: i64,
        mut f: impl FnMut(usize, &[i64], &[i64], i64) -> Result<(), String>,
    ) -> Result<(), String> {
        let (mut at, mut src, mut src_step) = (Index::from_slice(idx), Index::new(), Index::new());
        let mut left = n;
        while left > 0 {
            let (k, c) = view.source_line(&at, step, left, &mut src, &mut src_step);
            f(k, &src, &src_step, c)?;
            left -= c;
            for (a, s) in at.iter_mut().zip(step) {
                *a += c * s;
            }
        }
        Ok(())
    }

    /// [`Sources::runs`], each element traced alone (the definition).
    #[cfg(test)]
    pub fn runs_by_element(
        &self,
        v: K,
        via: Option<&View>,
        need: &Block,
    ) -> Result<ViewRuns, String> {
        let ext = need.extent();
        let total: i64 = ext.iter().product();
        let mut m = Merge {
            out: Vec::new(),
            cur: None,
            k: 0,
            dst_tile: need.tile,
        };
        let mut idx = need.lo.clone();
        let (mut top, mut cur, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..total.max(0) {
            cur.clear();
            match via {
                Some(view) => {
                    view.source(&idx, &mut top);
                    cur.extend_from_slice(&top);
                }
                None => cur.extend_from_slice(&idx),
            }
            let mut val = v;
            while !self.homes.contains_key(&val) {
                let (view, inputs) = self.views.get(&val).ok_or(UNMAPPED)?;
                let k = view.source(&cur, &mut scratch);
                val = inputs[k];
                std::mem::swap(&mut cur, &mut scratch);
            }
            let home = &self.homes[&val];
            let (tile, off) = home.locate(&cur);
            m.element(home.buf, tile, off, home.elem_bytes as u64);
            for d in (0..idx.len()).rev() {
                idx[d] += 1;
                if idx[d] < need.hi[d] {
                    break;
                }
                idx[d] = need.lo[d];
            }
        }
        m.out.extend(m.cur.take());
        Ok(m.out)
    }
}

/// Elements `idx + j * step` (j < n) of a stored value, as pieces of even
/// steps within one block each.
fn home_line(home: &Home, idx: &[i64], step: &[i64], n: i64, m: &mut Merge) {
    let (shape, bs, map) = (&home.shape, &home.grid.bs, &home.mapping);
    let rank = shape.len();
    let eb = home.elem_bytes;
    let mut s = Index::from_slice(idx);
    let mut left = n;
    while left > 0 {
        let inside = s.len() == rank
            && step.len() == rank
            && (0..rank).all(|d| s[d] >= 0 && s[d] < shape[d]);
        if !inside {
            // Not an element of the value: as `locate` places it.
            let (tile, off) = home.locate(&s);
            m.element(home.buf, tile, off, eb as u64);
            left -= 1;
            for (a, st) in s.iter_mut().zip(step) {
                *a += st;
            }
            continue;
        }
        // The block holding `s`, the element's offset in it (row-major in
        // its own extent), and how far the line stays in it.
        let (mut block, mut off, mut by, mut count) = (0i64, 0i64, 0i64, left);
        let mut stride = 1i64;
        for d in (0..rank).rev() {
            let c = s[d] / bs[d];
            let lo = c * bs[d];
            let hi = (lo + bs[d]).min(shape[d]);
            off += (s[d] - lo) * stride;
            by += step[d] * stride;
            stride *= hi - lo;
            count = count.min(match step[d] {
                0 => left,
                st if st > 0 => (hi - 1 - s[d]) / st + 1,
                st => (s[d] - lo) / -st + 1,
            });
        }
        for d in 0..rank {
            block = block * map.grid[d] + s[d] / bs[d];
        }
        let tile = (map.first_tile + block * map.stride) as u32;
        m.piece(home.buf, tile, (off * eb) as u64, by * eb, count, eb as u64);
        left -= count;
        for (a, st) in s.iter_mut().zip(step) {
            *a += count * st;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_dialects::tile::Mapping;
    use ipu_program::geometry::blocks;
    use ipu_program::view::ViewKind;

    /// The crate's deterministic generator, drawing i64s.
    struct Rng(ipu_exchange_schedule::patterns::Rng);
    impl Rng {
        fn below(&mut self, n: i64) -> i64 {
            self.0.below(n.max(1) as u64) as i64
        }
    }

    fn home(shape: &[i64], grid: Vec<i64>, first: i64, stride: i64, buf: BufId, eb: i64) -> Home {
        let m = Mapping {
            grid,
            first_tile: first,
            stride,
        };
        Home::new(blocks(&m, shape), buf, m, shape.to_vec(), eb)
    }

    fn random_grid(r: &mut Rng, shape: &[i64]) -> Vec<i64> {
        shape.iter().map(|&d| 1 + r.below(d.min(5))).collect()
    }

    fn random_rect(r: &mut Rng, shape: &[i64]) -> Block {
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        for &d in shape {
            let a = r.below(d);
            lo.push(a);
            hi.push(a + 1 + r.below(d - a));
        }
        Block { tile: 7, lo, hi }
    }

    fn check(s: &Sources<u32>, v: u32, via: Option<&View>, need: &Block) {
        assert_eq!(
            s.runs(v, via, need),
            s.runs_by_element(v, via, need),
            "rectangle {need:?}"
        );
    }

    #[test]
    fn lines_give_what_single_elements_give() {
        let mut r = Rng(ipu_exchange_schedule::patterns::Rng::new(
            0x9e37_79b9_7f4a_7c15,
        ));
        for case in 0..60 {
            let mut homes = FxHashMap::default();
            let mut views = FxHashMap::default();
            // A stored [a, b, c] value and a chain of views over it.
            let shape = vec![1 + r.below(6), 1 + r.below(7), 1 + r.below(9)];
            let eb = [1, 2, 4][case % 3];
            let grid = random_grid(&mut r, &shape);
            homes.insert(0u32, home(&shape, grid, 3, 1 + (case as i64 % 2), 0, eb));
            // A second stored value to concat with, along dimension 1.
            let other = vec![shape[0], 1 + r.below(5), shape[2]];
            let grid = random_grid(&mut r, &other);
            homes.insert(1u32, home(&other, grid, 40, 1, 1, eb));
            let cat = vec![shape[0], shape[1] + other[1], shape[2]];
            views.insert(
                2u32,
                (
                    View {
                        kind: ViewKind::Concat { axis: 1 },
                        input_shapes: vec![shape.clone(), other.clone()],
                        shape: cat.clone(),
                    },
                    vec![0, 1],
                ),
            );
            // Transpose it, then reshape the last two dimensions into one.
            let perm = [[1, 0, 2], [2, 1, 0], [0, 2, 1], [1, 2, 0]][case % 4];
            let tshape: Vec<i64> = perm.iter().map(|&p| cat[p]).collect();
            let mut inv = [0usize; 3];
            for (i, &p) in perm.iter().enumerate() {
                inv[p] = i;
            }
            views.insert(
                3u32,
                (
                    View {
                        kind: ViewKind::Transpose(perm.to_vec()),
                        input_shapes: vec![cat.clone()],
                        shape: tshape.clone(),
                    },
                    vec![2],
                ),
            );
            let rshape = vec![tshape[0], tshape[1] * tshape[2]];
            views.insert(
                4u32,
                (
                    View {
                        kind: ViewKind::Reshape,
                        input_shapes: vec![tshape.clone()],
                        shape: rshape.clone(),
                    },
                    vec![3],
                ),
            );
            // A slice of the reshape, stepping backwards along rows.
            let (s0, s1) = (r.below(rshape[0]), rshape[1] - 1 - r.below(rshape[1]));
            let sshape = vec![(rshape[0] - s0 + 1) / 2, s1 / 3 + 1];
            views.insert(
                5u32,
                (
                    View {
                        kind: ViewKind::Slice {
                            starts: vec![s0, s1],
                            steps: vec![2, -3],
                        },
                        input_shapes: vec![rshape.clone()],
                        shape: sshape.clone(),
                    },
                    vec![4],
                ),
            );
            // Rows of the transpose by constant indices, and a broadcast.
            let indices: Vec<i64> = (0..4).map(|_| r.below(tshape[0])).collect();
            let gshape = vec![2, 2, tshape[1], tshape[2]];
            views.insert(
                6u32,
                (
                    View {
                        kind: ViewKind::Gather {
                            axis: 0,
                            indices: indices.clone(),
                        },
                        input_shapes: vec![tshape.clone()],
                        shape: gshape.clone(),
                    },
                    vec![3],
                ),
            );
            let bshape = vec![3, shape[1], shape[2]];
            let one = vec![1, shape[1], shape[2]];
            homes.insert(7u32, home(&one, vec![1, 1, 1 + r.below(3)], 60, 1, 2, eb));
            views.insert(
                8u32,
                (
                    View {
                        kind: ViewKind::Broadcast,
                        input_shapes: vec![one.clone()],
                        shape: bshape.clone(),
                    },
                    vec![7],
                ),
            );
            let s = Sources {
                homes: &homes,
                views: &views,
            };
            for _ in 0..6 {
                check(&s, 0, None, &random_rect(&mut r, &shape));
                check(&s, 2, None, &random_rect(&mut r, &cat));
                check(&s, 3, None, &random_rect(&mut r, &tshape));
                check(&s, 4, None, &random_rect(&mut r, &rshape));
                check(&s, 5, None, &random_rect(&mut r, &sshape));
                check(&s, 6, None, &random_rect(&mut r, &gshape));
                check(&s, 8, None, &random_rect(&mut r, &bshape));
            }
            // Read through an implicit broadcast of the reshape.
            let via = View {
                kind: ViewKind::Broadcast,
                input_shapes: vec![vec![1, rshape[1]]],
                shape: vec![4, rshape[1]],
            };
            let bview = View {
                kind: ViewKind::Slice {
                    starts: vec![r.below(rshape[0]), 0],
                    steps: vec![1, 1],
                },
                input_shapes: vec![rshape.clone()],
                shape: vec![1, rshape[1]],
            };
            views.insert(9u32, (bview, vec![4]));
            let s = Sources {
                homes: &homes,
                views: &views,
            };
            check(&s, 9, Some(&via), &random_rect(&mut r, &[4, rshape[1]]));
        }
    }

    #[test]
    fn unmapped_values_are_refused_either_way() {
        let homes: FxHashMap<u32, Home> = FxHashMap::default();
        let mut views = FxHashMap::default();
        views.insert(
            1u32,
            (
                View {
                    kind: ViewKind::Reshape,
                    input_shapes: vec![vec![4]],
                    shape: vec![2, 2],
                },
                vec![0],
            ),
        );
        let s = Sources {
            homes: &homes,
            views: &views,
        };
        let need = Block {
            tile: 0,
            lo: vec![0, 0],
            hi: vec![2, 2],
        };
        assert_eq!(s.runs(1, None, &need), Err(UNMAPPED.to_string()));
        assert_eq!(s.runs_by_element(1, None, &need), Err(UNMAPPED.to_string()));
    }
}
