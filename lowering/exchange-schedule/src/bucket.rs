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

/// Items grouped by a tile key in one buffer, each group's room counted
/// beforehand: group `b` is `items[start[b]..start[b + 1]]`. The order of
/// items inside a group is the order they came in; the caller sorts.
#[derive(Debug)]
pub(crate) struct Flat<T> {
    items: Vec<T>,
    start: Vec<usize>,
    next: Vec<usize>,
}

impl<T: Copy + Default> Flat<T> {
    /// Room for exactly `counts[b]` items in group `b`.
    pub(crate) fn with_counts(counts: &[usize]) -> Self {
        let mut start = Vec::with_capacity(counts.len() + 1);
        let mut at = 0;
        start.push(0);
        for &c in counts {
            at += c;
            start.push(at);
        }
        Flat {
            items: vec![T::default(); at],
            next: start[..counts.len()].to_vec(),
            start,
        }
    }

    /// Adds `x` to group `b`, which must have room left.
    pub(crate) fn push(&mut self, b: usize, x: T) {
        let i = self.next[b];
        debug_assert!(i < self.start[b + 1], "group {b} is full");
        self.items[i] = x;
        self.next[b] = i + 1;
    }

    /// Items counted.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Every group, in order (each filled to its count).
    pub(crate) fn groups_mut(&mut self) -> Vec<&mut [T]> {
        self.groups_mut_every(1)
    }

    /// The groups, each `k` consecutive groups taken as one (the last
    /// fewer, if `k` does not divide the count).
    pub(crate) fn groups_mut_every(&mut self, k: usize) -> Vec<&mut [T]> {
        debug_assert!(self.next.iter().zip(&self.start[1..]).all(|(a, b)| a == b));
        let mut rest: &mut [T] = &mut self.items;
        let (k, groups) = (k.max(1), self.next.len());
        let mut out = Vec::with_capacity(groups.div_ceil(k));
        let mut from = 0;
        for j in 0..groups.div_ceil(k) {
            let end = self.start[((j + 1) * k).min(groups)];
            let (g, tail) = std::mem::take(&mut rest).split_at_mut(end - from);
            from = end;
            out.push(g);
            rest = tail;
        }
        out
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
        }
    }

    #[test]
    fn flat_groups_hold_what_each_group_was_given() {
        let items: Vec<(u32, u32)> = (0..200u32).map(|i| ((i * 7) % 5, i)).collect();
        let mut counts = [0usize; 5];
        for &(g, _) in &items {
            counts[g as usize] += 1;
        }
        let mut flat = Flat::with_counts(&counts);
        for &x in &items {
            flat.push(x.0 as usize, x);
        }
        assert_eq!(flat.len(), items.len());
        let groups = flat.groups_mut();
        assert_eq!(groups.len(), 5);
        for (g, got) in groups.into_iter().enumerate() {
            let want: Vec<_> = items
                .iter()
                .filter(|x| x.0 as usize == g)
                .copied()
                .collect();
            assert_eq!(got, &want[..]);
        }
        // Taken two and three at a time: consecutive groups as one, the
        // last shorter when the count does not divide.
        for k in [2, 3] {
            let mut flat = Flat::with_counts(&counts);
            for &x in &items {
                flat.push(x.0 as usize, x);
            }
            let groups = flat.groups_mut_every(k);
            assert_eq!(groups.len(), 5usize.div_ceil(k));
            for (g, got) in groups.into_iter().enumerate() {
                let want: Vec<_> = (g * k..(g * k + k).min(5))
                    .flat_map(|h| items.iter().filter(move |x| x.0 as usize == h))
                    .copied()
                    .collect();
                assert_eq!(got, &want[..]);
            }
        }
    }
}
