//! GEMMs handing the AMP's shadow bank on: a `gemm_amp` call of one weight
//! block whose workers load the next block as they go loads, instead of its
//! own block again, the first block of the next GEMM its tiles run (`NXT`,
//! that GEMM's B an extra record word), and that GEMM then starts on the
//! block it finds there (`HAVE`) instead of loading it on the supervisor.
//!
//! A pair is chained when, on every tile of the first call's vertex, the
//! next AMP call is a vertex of one later compute set with the same
//! specialisation (so the same block shape and the same slack after B),
//! all those calls read the same B, and that B is loaded with the program
//! (so it holds its values while the first call runs). A step calling a
//! function ends every chain. The compute sets' estimates are recomputed.

use crate::builder::{call_cycles, copy_cycles};
use ipu_program::{BufId, Kernel, Program, Step, Word};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

/// A vertex: its compute set's step and its index there.
type At = (usize, usize);

/// The GEMM specialisation of a vertex's call without its prologue split
/// and chain flags: two calls of equal keys load blocks of one shape.
fn chain_key(k: &Kernel) -> Option<Vec<(String, i64)>> {
    let Kernel::Lib(spec) = k else { return None };
    if spec.source != "gemm_amp" {
        return None;
    }
    Some(
        spec.params
            .iter()
            .filter(|(n, _)| !matches!(n.as_str(), "PRE" | "NXT" | "HAVE"))
            .map(|(n, v)| (n.clone(), *v))
            .collect(),
    )
}

fn spec_param(k: &Kernel, name: &str) -> i64 {
    match k {
        Kernel::Lib(spec) => spec.params.get(name).copied().unwrap_or(0),
        Kernel::Memcpy => 0,
    }
}

fn set_param(k: &mut Kernel, name: &str, v: i64) {
    if let Kernel::Lib(spec) = k {
        std::sync::Arc::make_mut(spec).params.insert(name.into(), v);
    }
}

/// Chains the program's GEMM pairs that qualify; returns the estimated
/// cycles it takes off the compute sets.
pub fn chain_gemms(program: &mut Program, loaded: &FxHashSet<BufId>) -> Result<u64, String> {
    let mut last: FxHashMap<u32, At> = FxHashMap::default();
    let mut changed: FxHashSet<usize> = FxHashSet::default();
    for i in 0..program.steps.len() {
        let set = match &program.steps[i] {
            Step::Call(_) => {
                last.clear();
                continue;
            }
            Step::Compute(set) => set,
            _ => continue,
        };
        // The vertices of this set that follow one earlier vertex (of an
        // earlier set or of this one) on all their tiles, grouped by it.
        let mut next: BTreeMap<At, Vec<usize>> = BTreeMap::new();
        for (j, v) in set.vertices.iter().enumerate() {
            if chain_key(&v.call.kernel).is_none() {
                continue;
            }
            let prev: FxHashSet<Option<At>> =
                v.tiles.iter().map(|t| last.get(t).copied()).collect();
            if let [Some(at)] = prev.into_iter().collect::<Vec<_>>()[..] {
                next.entry(at).or_default().push(j);
            }
            for &t in &v.tiles {
                last.insert(t, (i, j));
            }
        }
        for (at, js) in next {
            if chain_pair(program, at, i, &js, loaded) {
                changed.insert(i);
            }
        }
    }
    let mut saved = 0;
    for i in changed {
        let Step::Compute(set) = &mut program.steps[i] else {
            unreachable!()
        };
        let mut per_tile: BTreeMap<u32, u64> = BTreeMap::new();
        for m in &set.copies {
            for (tile, c) in copy_cycles(&m.transfers)? {
                *per_tile.entry(tile).or_default() += c;
            }
        }
        for v in &set.vertices {
            let c = call_cycles(&v.call)?;
            for &t in &v.tiles {
                *per_tile.entry(t).or_default() += c;
            }
        }
        let now = per_tile.values().copied().max().unwrap_or(0);
        saved += set.cycles.unwrap_or(now).saturating_sub(now);
        set.cycles = Some(now);
    }
    Ok(saved)
}

/// Chains vertex `at` to vertices `js` of step `i` when they qualify.
fn chain_pair(
    program: &mut Program,
    at: At,
    i: usize,
    js: &[usize],
    loaded: &FxHashSet<BufId>,
) -> bool {
    let (Step::Compute(first), Step::Compute(then)) = (&program.steps[at.0], &program.steps[i])
    else {
        return false;
    };
    let v0 = &first.vertices[at.1];
    let Kernel::Lib(spec0) = &v0.call.kernel else {
        return false;
    };
    if !spec0.gemm_prefetches() || spec0.param("NXT") == 1 {
        return false;
    }
    let key = chain_key(&v0.call.kernel);
    let mut tiles: Vec<u32> = Vec::new();
    let mut b = None;
    for &j in js {
        let v = &then.vertices[j];
        let word = v.call.record.get(1).copied();
        let ok = chain_key(&v.call.kernel) == key
            && spec_param(&v.call.kernel, "PRE") != 1
            && matches!(word, Some(Word::Buf(buf, _)) if loaded.contains(&buf))
            && b.is_none_or(|w| Some(w) == word);
        if !ok {
            return false;
        }
        b = word;
        tiles.extend(&v.tiles);
    }
    tiles.sort_unstable();
    let mut own = v0.tiles.clone();
    own.sort_unstable();
    let Some(b) = b.filter(|_| tiles == own) else {
        return false;
    };
    if let Step::Compute(first) = &mut program.steps[at.0] {
        let call = &mut first.vertices[at.1].call;
        set_param(&mut call.kernel, "NXT", 1);
        call.record.push(b);
    }
    if let Step::Compute(then) = &mut program.steps[i] {
        for &j in js {
            set_param(&mut then.vertices[j].call.kernel, "HAVE", 1);
        }
    }
    true
}
