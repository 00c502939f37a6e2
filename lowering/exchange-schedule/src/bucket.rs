//! Sorting per-tile event lists fast: bucket by the leading tile key, then
//! sort each small bucket. The result is exactly `sort_unstable`'s (a total
//! order on plain tuples, where equal elements cannot be told apart), but a
//! phase's million events sort as 1472 cache-sized lists instead of one.

use rayon::prelude::*;

/// Sorts `v` ascending, as `v.sort_unstable()` would. `lead(x)` must be the
/// first component of `x`'s order (a tile or port); values from `n` up share
/// one last bucket, sorted in full.
pub(crate) fn sort_by_lead<T: Ord + Copy>(v: &mut Vec<T>, n: usize, lead: impl Fn(&T) -> usize) {
    // Schedules often list events in order already (fragments are sorted by
    // sender and cycle).
    if v.len() < 64 || v.is_sorted() {
        if !v.is_sorted() {
            v.sort_unstable();
        }
        return;
    }
    let bucket = |x: &T| lead(x).min(n);
    let mut start = vec![0usize; n + 2];
    for x in v.iter() {
        start[bucket(x) + 1] += 1;
    }
    for b in 1..start.len() {
        start[b] += start[b - 1];
    }
    let mut next = start.clone();
    let mut out = vec![v[0]; v.len()];
    for x in v.iter() {
        let b = bucket(x);
        out[next[b]] = *x;
        next[b] += 1;
    }
    for b in 0..=n {
        out[start[b]..start[b + 1]].sort_unstable();
    }
    *v = out;
}

/// Items grouped by their leading tile key, each group sorted: group `b` is
/// the items with `lead == b` for `b < n`, and group `n` those with a lead
/// of `n` or more. Concatenated, the groups are `sort_by_lead`'s result, but
/// no list of all items is built (large phases would fault in fresh pages
/// for it on every call).
#[derive(Debug)]
pub(crate) struct Groups<T> {
    groups: Vec<Vec<T>>,
    items: usize,
}

/// Items from which sorting the groups is spread over the rayon pool (each
/// group on one thread, so the result does not depend on the thread count).
const PARALLEL_ITEMS: usize = 1 << 15;

impl<T: Ord + Send> Groups<T> {
    /// Empty groups with room for `counts[b]` items in group `b` (the
    /// last count for the overflow group): growing 1473 lists item by item
    /// costs more than counting first.
    pub(crate) fn with_counts(counts: &[usize]) -> Self {
        Groups {
            groups: counts.iter().map(|&c| Vec::with_capacity(c)).collect(),
            items: 0,
        }
    }

    pub(crate) fn push(&mut self, lead: usize, x: T) {
        let last = self.groups.len() - 1;
        self.groups[lead.min(last)].push(x);
        self.items += 1;
    }

    /// Sorts every group, then applies `then` to it; the groups in order
    /// are sorted as a whole. Returns the groups (the overflow group last).
    pub(crate) fn finish(mut self, then: impl Fn(&mut Vec<T>) + Sync) -> Vec<Vec<T>> {
        let each = |g: &mut Vec<T>| {
            g.sort_unstable();
            then(g);
        };
        if self.items >= PARALLEL_ITEMS {
            self.groups.par_iter_mut().for_each(each);
        } else {
            self.groups.iter_mut().for_each(each);
        }
        self.groups
    }
}

/// For each group `b` of the parts (made alike: same number of groups,
/// the same lead), its items from every part, sorted, handed to
/// `each(b, items)`; the results in group order. The items are what
/// `sort_unstable` of the parts' groups `b` joined gives, but no joined copy
/// of the parts is made (in a large multicast phase it would be hundreds of
/// MB of fresh pages): each group is gathered into a buffer its thread reuses.
/// Groups are spread over the rayon pool from [`PARALLEL_ITEMS`] items, each
/// on one thread, so the result does not depend on the thread count.
pub(crate) fn each_group<T, R>(
    parts: &[Groups<T>],
    each: impl Fn(usize, &mut Vec<T>) -> R + Sync,
) -> Vec<R>
where
    T: Ord + Copy + Send + Sync,
    R: Send,
{
    let groups = parts.first().map_or(0, |p| p.groups.len());
    let gather = |buf: &mut Vec<T>, b: usize| {
        buf.clear();
        for p in parts {
            buf.extend_from_slice(&p.groups[b]);
        }
        buf.sort_unstable();
        each(b, buf)
    };
    if parts.iter().map(|p| p.items).sum::<usize>() >= PARALLEL_ITEMS {
        (0..groups)
            .into_par_iter()
            .map_init(Vec::new, gather)
            .collect()
    } else {
        let mut buf = Vec::new();
        (0..groups).map(|b| gather(&mut buf, b)).collect()
    }
}

/// [`each_group`] of two sets of parts with the same groups: group `b` of
/// both, each gathered and sorted, handed to `each(b, a_items, b_items)`.
pub(crate) fn each_group_pair<A, B, R>(
    a: &[Groups<A>],
    b: &[Groups<B>],
    each: impl Fn(usize, &mut Vec<A>, &mut Vec<B>) -> R + Sync,
) -> Vec<R>
where
    A: Ord + Copy + Send + Sync,
    B: Ord + Copy + Send + Sync,
    R: Send,
{
    let groups = a
        .first()
        .map_or(0, |p| p.groups.len())
        .max(b.first().map_or(0, |p| p.groups.len()));
    fn fill<T: Ord + Copy>(buf: &mut Vec<T>, parts: &[Groups<T>], g: usize) {
        buf.clear();
        for p in parts {
            if let Some(x) = p.groups.get(g) {
                buf.extend_from_slice(x);
            }
        }
        buf.sort_unstable();
    }
    let gather = |(x, y): &mut (Vec<A>, Vec<B>), g: usize| {
        fill(x, a, g);
        fill(y, b, g);
        each(g, x, y)
    };
    let items = a.iter().map(|p| p.items).sum::<usize>() + b.iter().map(|p| p.items).sum::<usize>();
    if items >= PARALLEL_ITEMS {
        (0..groups)
            .into_par_iter()
            .map_init(Default::default, gather)
            .collect()
    } else {
        let mut buf = Default::default();
        (0..groups).map(|g| gather(&mut buf, g)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_sort_unstable_including_overflow_keys() {
        // A fixed pseudo-random sequence with leads inside and beyond n.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut v: Vec<(u32, u64, u32)> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x % 40) as u32, (x >> 8) % 97, (x >> 20) as u32 % 5)
            })
            .collect();
        let mut expected = v.clone();
        expected.sort_unstable();
        sort_by_lead(&mut v, 32, |e| e.0 as usize);
        assert_eq!(v, expected);
        let mut sorted = expected.clone();
        sort_by_lead(&mut sorted, 32, |e| e.0 as usize);
        assert_eq!(sorted, expected);
        // No room reserved: the groups grow as items come.
        let mut groups = Groups::with_counts(&[0; 33]);
        for &e in v.iter().rev() {
            groups.push(e.0 as usize, e);
        }
        let flat: Vec<_> = groups.finish(|_| ()).into_iter().flatten().collect();
        assert_eq!(flat, expected);
        // In parts, with or without the pool: each group is the sorted
        // union of the parts' groups, handed over in group order.
        for size in [700, 40_000] {
            let items: Vec<(u32, u64)> = (0..size)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    ((x % 40) as u32, (x >> 8) % 1000)
                })
                .collect();
            let parts: Vec<Groups<(u32, u64)>> = items
                .chunks(size / 3)
                .map(|c| {
                    let mut g = Groups::with_counts(&[0; 33]);
                    for &e in c {
                        g.push(e.0 as usize, e);
                    }
                    g
                })
                .collect();
            let got = each_group(&parts, |b, g| (b, g.clone()));
            let mut expected = items.clone();
            expected.sort_unstable();
            assert_eq!(
                got.iter().map(|(b, _)| *b).collect::<Vec<_>>(),
                (0..33).collect::<Vec<_>>()
            );
            assert!(got
                .iter()
                .all(|(b, g)| g.iter().all(|e| (e.0 as usize).min(32) == *b)));
            let flat: Vec<_> = got.into_iter().flat_map(|(_, g)| g).collect();
            assert_eq!(flat, expected);
            // Two sets at once: each group as `each_group` gives it.
            let pairs = each_group_pair(&parts, &parts[1..], |b, x, y| (b, x.clone(), y.clone()));
            let rest = each_group(&parts[1..], |_, g| g.clone());
            assert_eq!(pairs.len(), 33);
            for ((b, x, y), r) in pairs.into_iter().zip(rest) {
                assert!(x.iter().all(|e| (e.0 as usize).min(32) == b));
                assert_eq!(y, r);
            }
            let paired: Vec<_> = each_group_pair(&parts, &parts, |_, x, _| x.clone())
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(paired, expected);
        }
    }
}
