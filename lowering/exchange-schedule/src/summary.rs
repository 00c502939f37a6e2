//! A compact, pattern-grouped description of a phase's transfers, for IR.
//!
//! Big phases have tens of thousands of transfers; the IR prints them as a
//! few lines such as `tiles 0..1470 step 2 -> +1, 256 B each (736 transfers)`.
//! Transfers are grouped by (length, destinations relative to the source
//! tile); a group left with a single source tile is regrouped by its absolute
//! destinations (so broadcasts from several tiles to the same set read as one
//! line). Tile sets are written as inclusive arithmetic runs `a..b step s`,
//! and equal runs repeating with a period as `{0..14} every 16 x92`.
//! Groups keep the order of their first transfer, so the text is stable.

use super::phase::Phase;
use rustc_hash::FxHashMap;
use std::fmt;

/// Where a group's transfers go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DstPattern {
    /// Destination tile = source tile + each delta.
    Relative(Vec<i64>),
    /// The same destination tiles for every source.
    Absolute(Vec<u32>),
}

/// Transfers of one length and destination pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternGroup {
    pub len: u32,
    /// Source tiles, sorted, distinct.
    pub src_tiles: Vec<u32>,
    pub dst: DstPattern,
    /// Transfers in the group (a tile may send several).
    pub transfers: usize,
}

/// The grouped transfers of a phase.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PhaseSummary {
    pub groups: Vec<PatternGroup>,
    pub transfers: usize,
    /// Total bytes delivered (a multicast counts once per destination).
    pub bytes: u64,
}

/// (length, destination deltas, source tiles, member transfers).
type RelGroup = (u32, Vec<i64>, Vec<u32>, Vec<usize>);

/// Groups a phase's transfers by pattern.
pub fn summarize(phase: &Phase) -> PhaseSummary {
    let mut rel: Vec<RelGroup> = Vec::new();
    let mut index: FxHashMap<(u32, Vec<i64>), usize> = FxHashMap::default();
    for (i, t) in phase.transfers.iter().enumerate() {
        let deltas: Vec<i64> = t
            .dsts
            .iter()
            .map(|d| d.tile as i64 - t.src_tile as i64)
            .collect();
        let key = (t.len, deltas);
        let g = *index.entry(key.clone()).or_insert_with(|| {
            rel.push((key.0, key.1, Vec::new(), Vec::new()));
            rel.len() - 1
        });
        rel[g].2.push(t.src_tile);
        rel[g].3.push(i);
    }
    // Regroup single-source groups by absolute destinations.
    let mut groups: Vec<(usize, PatternGroup)> = Vec::new();
    let mut abs_index: FxHashMap<(u32, Vec<u32>), usize> = FxHashMap::default();
    for (len, deltas, mut srcs, members) in rel {
        srcs.sort_unstable();
        srcs.dedup();
        let first = members[0];
        if srcs.len() == 1 {
            let src = srcs[0] as i64;
            let mut dsts: Vec<u32> = deltas.iter().map(|d| (src + d) as u32).collect();
            dsts.sort_unstable();
            let key = (len, dsts.clone());
            if let Some(&g) = abs_index.get(&key) {
                let grp = &mut groups[g].1;
                grp.src_tiles.push(srcs[0]);
                grp.src_tiles.sort_unstable();
                grp.src_tiles.dedup();
                grp.transfers += members.len();
                continue;
            }
            abs_index.insert(key, groups.len());
            groups.push((
                first,
                PatternGroup {
                    len,
                    src_tiles: srcs,
                    dst: DstPattern::Absolute(dsts),
                    transfers: members.len(),
                },
            ));
        } else {
            groups.push((
                first,
                PatternGroup {
                    len,
                    src_tiles: srcs,
                    dst: DstPattern::Relative(deltas),
                    transfers: members.len(),
                },
            ));
        }
    }
    groups.sort_by_key(|(first, _)| *first);
    PhaseSummary {
        groups: groups.into_iter().map(|(_, g)| g).collect(),
        transfers: phase.transfers.len(),
        bytes: phase.delivered_bytes(),
    }
}

/// Splits sorted values into maximal arithmetic runs (first, last, step).
fn runs(values: &[i64]) -> Vec<(i64, i64, i64)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < values.len() {
        if i + 1 == values.len() {
            out.push((values[i], values[i], 1));
            break;
        }
        let step = values[i + 1] - values[i];
        let mut j = i + 1;
        while j + 1 < values.len() && values[j + 1] - values[j] == step {
            j += 1;
        }
        // Two values with a gap read better as two singletons than as a run.
        if j == i + 1 && step != 1 {
            out.push((values[i], values[i], 1));
            i += 1;
            continue;
        }
        out.push((values[i], values[j], step));
        i = j + 1;
    }
    out
}

fn fmt_runs(values: &[i64], signed: bool) -> String {
    let v = |x: i64| {
        if signed && x >= 0 {
            format!("+{x}")
        } else {
            x.to_string()
        }
    };
    let run = |(a, b, s): (i64, i64, i64)| {
        if a == b {
            v(a)
        } else if s == 1 {
            format!("{}..{}", v(a), v(b))
        } else {
            format!("{}..{} step {s}", v(a), v(b))
        }
    };
    let rs = runs(values);
    // Equal runs repeating with a fixed period (e.g. every tile of each
    // 16-tile group but the last) print as one run and its repetition.
    if let [first, second, ..] = rs[..] {
        let period = second.0 - first.0;
        let same = rs.windows(2).all(|w| {
            w[1].0 - w[0].0 == period && w[1].1 - w[1].0 == w[0].1 - w[0].0 && w[1].2 == w[0].2
        });
        if rs.len() >= 3 && first.1 > first.0 && same {
            return format!("{{{}}} every {period} x{}", run(first), rs.len());
        }
    }
    let parts: Vec<String> = rs.into_iter().map(run).collect();
    if parts.len() == 1 {
        parts.into_iter().next().unwrap_or_default()
    } else {
        format!("{{{}}}", parts.join(", "))
    }
}

/// `tile 5`, `tiles 0..1471`, `tiles 0..1470 step 2`, `tiles {0..3, 9}`.
pub fn fmt_tiles(tiles: &[u32]) -> String {
    let v: Vec<i64> = tiles.iter().map(|&t| t as i64).collect();
    if v.len() == 1 {
        format!("tile {}", v[0])
    } else {
        format!("tiles {}", fmt_runs(&v, false))
    }
}

impl fmt::Display for PatternGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dst = match &self.dst {
            DstPattern::Relative(d) => {
                let mut d = d.clone();
                d.sort_unstable();
                fmt_runs(&d, true)
            }
            DstPattern::Absolute(t) => fmt_tiles(t),
        };
        let each = if self.transfers > 1 { " each" } else { "" };
        write!(
            f,
            "{} -> {dst}, {} B{each}",
            fmt_tiles(&self.src_tiles),
            self.len
        )?;
        if self.transfers > 1 {
            write!(f, " ({} transfers)", self.transfers)?;
        }
        Ok(())
    }
}

impl PhaseSummary {
    /// At most `max_lines` group lines, then a line counting the rest.
    pub fn lines(&self, max_lines: usize) -> Vec<String> {
        let mut out: Vec<String> = self
            .groups
            .iter()
            .take(max_lines)
            .map(|g| g.to_string())
            .collect();
        if self.groups.len() > max_lines {
            let rest = &self.groups[max_lines..];
            let transfers: usize = rest.iter().map(|g| g.transfers).sum();
            out.push(format!(
                "... {} more groups ({} transfers)",
                rest.len(),
                transfers
            ));
        }
        out
    }
}

impl fmt::Display for PhaseSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} transfers, {} B delivered, {} groups",
            self.transfers,
            self.bytes,
            self.groups.len()
        )?;
        for g in &self.groups {
            writeln!(f, "  {g}")?;
        }
        Ok(())
    }
}
