//! The scheduling entry points: variant selection, paired mode, and reuse.
//!
//! [`schedule`] validates the phase, runs every [`engine::VARIANTS`] order
//! (and, when some bytes go to both tiles of a supertile, the same orders in
//! paired mode, when pairing lowers the bound) in parallel, improves the
//! best by a few rounds of iterated greedy, and among the schedules within
//! [`HORIZON_SLACK_PERMILLE`] of the shortest horizon keeps the one with the
//! smallest exchange-table row; ties go to the earlier variant, so the result
//! does not depend on the thread count. Every schedule is checked by
//! [`verify`] before it is returned.
//!
//! [`ExchangeScheduler`] adds a cache: a phase that equals an earlier one up to
//! relocation (same transfers, tiles, lengths and multicast structure, other
//! byte offsets) reuses the earlier schedule with its fragments relocated,
//! kind `reused`. The relocated schedule is checked only for what the move
//! can change (byte ranges and the lower bound, [`verify_moved`]): its
//! timing, ports and coverage are those already proven for the earlier phase.

use super::engine::{self, Placement, Variant};
use super::phase::{build_jobs, lower_bound_from_jobs, validate_phase, Phase, PhaseError};
use super::rows::{row_stats, RowStats};
use super::verify::{verify_moved, verify_valid, VerifyError};
use super::{Fragment, Schedule, ScheduleKind};
use ipu_target::Target;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use thiserror::Error;

/// Why no schedule was produced.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScheduleError {
    #[error("cannot schedule exchange phase: {0}")]
    Phase(#[from] PhaseError),
    /// A scheduler bug caught by the verifier; the first errors are kept.
    #[error("internal error: the exchange scheduler produced an invalid schedule: {}", .0.first().map(|e| e.to_string()).unwrap_or_default())]
    Invalid(Vec<VerifyError>),
}

/// Horizons within this many thousandths of the best count as equal when
/// choosing a variant; among those the smallest exchange-table row wins,
/// since rows cost SRAM on every tile for every phase.
pub const HORIZON_SLACK_PERMILLE: u64 = 10;

/// Rounds of iterated greedy (late streams first) after the variants.
pub const IMPROVE_ROUNDS: usize = 4;

/// One variant's outcome, for diagnostics and benchmarks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantReport {
    pub variant: Variant,
    pub horizon: u64,
    pub max_row_words: u32,
    pub fragments: usize,
}

/// Everything one scheduling run produced.
struct Runs {
    jobs: Vec<super::phase::Job>,
    /// Index = `paired as usize`.
    prepared: Vec<engine::Prepared>,
    placements: Vec<Placement>,
    bound: u64,
}

/// Indices into [`engine::VARIANTS`] run first (see `run_all`).
const STAGE_ONE: [usize; 3] = [0, 2, 4];

/// Runs the variants; `exhaustive` disables the early stop after stage one.
fn run_all(phase: &Phase, target: &Target, exhaustive: bool) -> Result<Runs, ScheduleError> {
    validate_phase(phase, target)?;
    Ok(run_all_valid(phase, target, exhaustive))
}

/// [`run_all`] of a validated phase.
fn run_all_valid(phase: &Phase, target: &Target, exhaustive: bool) -> Runs {
    let jobs = build_jobs(phase, target.exchange.multicast);
    let bound = lower_bound_from_jobs(&jobs, target.tiles() as usize, target);
    let mut variants: Vec<Variant> = engine::VARIANTS
        .iter()
        .map(|&(order, min_chunk)| Variant {
            order,
            min_chunk,
            paired: false,
        })
        .collect();
    // Paired variants only when pairing relaxes the bound: otherwise the
    // busiest tiles gain nothing from a second port and the run is wasted.
    let use_pairs =
        engine::has_shared_pairs(&jobs, target) && bound.cycles < unpaired_bound(&bound, target);
    // Index = `paired as usize`.
    let modes: &[bool] = if use_pairs { &[false, true] } else { &[false] };
    if use_pairs {
        variants.extend(engine::VARIANTS.iter().map(|&(order, min_chunk)| Variant {
            order,
            min_chunk,
            paired: true,
        }));
    }
    // Streams once per receive mode; orders per variant; identical
    // (mode, order, chunking) runs only once (the first keeps its place).
    let prepared: Vec<engine::Prepared> = modes
        .par_iter()
        .map(|&paired| engine::prepare(&jobs, target, paired))
        .collect();
    let orders: Vec<Vec<usize>> = variants
        .par_iter()
        .map(|v| engine::plan_order(&prepared[v.paired as usize], v.order, target))
        .collect();
    let unique: Vec<usize> = (0..variants.len())
        .filter(|&i| {
            !(0..i).any(|k| {
                variants[k].paired == variants[i].paired
                    && variants[k].min_chunk == variants[i].min_chunk
                    && orders[k] == orders[i]
            })
        })
        .collect();
    let run = |set: &[usize]| -> Vec<(usize, Placement)> {
        set.par_iter()
            .map(|&i| {
                let v = variants[i];
                let p = engine::run_variant(&prepared[v.paired as usize], &orders[i], target, v);
                (i, p)
            })
            .collect()
    };
    // Stage one: the baseline plus the orders that most often win, in the
    // mode the bound favours. When one lands within a route latency of the
    // bound, the other orders cannot shorten it meaningfully: skip them.
    let per_mode = engine::VARIANTS.len();
    let (first, rest): (Vec<usize>, Vec<usize>) = unique.iter().partition(|&&i| {
        i == 0 || (STAGE_ONE.contains(&(i % per_mode)) && variants[i].paired == use_pairs)
    });
    let mut placements = run(&first);
    let near = bound.cycles + target.max_route_latency() as u64;
    let best = placements.iter().map(|(_, p)| p.horizon).min().unwrap_or(0);
    if exhaustive || best > near {
        placements.extend(run(&rest));
    }
    placements.sort_by_key(|(i, _)| *i);
    let placements = placements.into_iter().map(|(_, p)| p).collect();
    Runs {
        jobs,
        prepared,
        placements,
        bound: bound.cycles,
    }
}

/// The bound if every receive came at the single-port rate.
fn unpaired_bound(b: &super::phase::LowerBound, target: &Target) -> u64 {
    let send = target.exchange.send_bytes_per_cycle.max(1) as u64;
    let recv = target.exchange.receive_bytes_per_cycle.max(1) as u64;
    let s = b
        .bytes_sent
        .iter()
        .map(|x| x.div_ceil(send))
        .max()
        .unwrap_or(0);
    let r = b
        .bytes_received
        .iter()
        .map(|x| x.div_ceil(recv))
        .max()
        .unwrap_or(0);
    s.max(r)
}

/// Runs every variant and reports each (no selection, no verification).
pub fn evaluate_variants(
    phase: &Phase,
    target: &Target,
) -> Result<Vec<VariantReport>, ScheduleError> {
    let runs = run_all(phase, target, true)?;
    Ok(runs
        .placements
        .par_iter()
        .map(|p| {
            let prepared = &runs.prepared[p.variant.paired as usize];
            let fragments = engine::fragments(p, &runs.jobs, prepared, target);
            VariantReport {
                variant: p.variant,
                horizon: p.horizon,
                max_row_words: row_stats(phase, &fragments, target).max_row_words,
                fragments: fragments.len(),
            }
        })
        .collect())
}

/// Schedules one phase from scratch (no reuse).
pub fn schedule(phase: &Phase, target: &Target) -> Result<Schedule, ScheduleError> {
    validate_phase(phase, target)?;
    schedule_valid(phase, target)
}

/// [`schedule`] of a validated phase.
fn schedule_valid(phase: &Phase, target: &Target) -> Result<Schedule, ScheduleError> {
    let Runs {
        jobs,
        prepared,
        mut placements,
        bound,
    } = run_all_valid(phase, target, false);
    let initial_horizon = placements.first().map_or(0, |p| p.horizon);
    // Iterated greedy on the best variant; an improvement joins the candidates.
    let mut improved: Option<(usize, usize)> = None;
    if let Some(first_best) = placements.iter().min_by_key(|p| p.horizon) {
        let start = first_best.clone();
        let paired = start.variant.paired as usize;
        let (better, rounds) =
            engine::improve(&prepared[paired], target, start, bound, IMPROVE_ROUNDS);
        if rounds > 0 {
            tracing::debug!(
                rounds,
                horizon = better.horizon,
                "neighbourhood improvements"
            );
            improved = Some((placements.len(), rounds));
            placements.push(better);
        }
    }
    let best_horizon = placements.iter().map(|p| p.horizon).min().unwrap_or(0);
    let limit = best_horizon + best_horizon * HORIZON_SLACK_PERMILLE / 1000;
    // Fragments and rows only for the candidates within the slack, and once
    // for candidates that placed every chunk alike (same mode, same chunks).
    let within: Vec<(usize, Placement)> = placements
        .into_iter()
        .enumerate()
        .filter(|(_, p)| p.horizon <= limit)
        .collect();
    let same_as: Vec<Option<usize>> = (0..within.len())
        .map(|c| {
            (0..c).find(|&e| {
                within[e].1.variant.paired == within[c].1.variant.paired
                    && within[e].1.chunks == within[c].1.chunks
            })
        })
        .collect();
    // Each class of alike candidates is represented by its first; it
    // stands for the class's best (horizon, variant).
    let mut class: Vec<Option<(u64, usize, usize)>> = vec![None; within.len()];
    for (c, (i, p)) in within.iter().enumerate() {
        let r = same_as[c].unwrap_or(c);
        let k = (p.horizon, *i, c);
        class[r] = Some(class[r].map_or(k, |o| o.min(k)));
    }
    // Candidates within the slack, and classes given fragments and rows.
    tracing::debug!(
        within = within.len(),
        classes = same_as.iter().filter(|s| s.is_none()).count(),
        "row candidates"
    );
    // Only the best so far is held, keyed (largest row, horizon, variant):
    // the minimum of a total order, so the choice does not depend on the
    // thread count.
    type Best = ((u32, u64, usize), usize, Vec<Fragment>, RowStats);
    let best: std::sync::Mutex<Option<Best>> = std::sync::Mutex::new(None);
    within
        .par_iter()
        .enumerate()
        .filter(|(c, _)| same_as[*c].is_none())
        .for_each(|(c, (_, p))| {
            let Some((horizon, i, pick)) = class[c] else {
                return;
            };
            let f = engine::fragments(p, &jobs, &prepared[p.variant.paired as usize], target);
            let stats = row_stats(phase, &f, target);
            let key = (stats.max_row_words, horizon, i);
            let made = Some((key, pick, f, stats));
            let mut b = best.lock().unwrap_or_else(|e| e.into_inner());
            let worse = if b.as_ref().is_none_or(|x| key < x.0) {
                std::mem::replace(&mut *b, made)
            } else {
                made
            };
            drop(b);
            drop(worse);
        });
    let chosen = best.into_inner().unwrap_or_else(|e| e.into_inner());
    let Some(((_, _, chosen_index), best, (fragments, rows))) = chosen
        .and_then(|(key, pick, f, stats)| Some((key, within.into_iter().nth(pick)?.1, (f, stats))))
    else {
        // run_all always yields at least one variant.
        return Err(ScheduleError::Invalid(Vec::new()));
    };
    let kind = if best.variant.paired {
        ScheduleKind::Paired
    } else {
        ScheduleKind::CompactStreams
    };
    let s = Schedule {
        kind,
        horizon: best.horizon,
        initial_horizon,
        lower_bound: bound,
        transfers: phase.transfers.len(),
        fragments,
        rows,
        improvements: match improved {
            Some((index, rounds)) if index == chosen_index => rounds,
            _ => 0,
        },
    };
    verify_valid(phase, &s, target, bound).map_err(ScheduleError::Invalid)?;
    Ok(s)
}

/// The canonical form of a phase up to relocation: transfer order, source
/// tiles, lengths, destination tiles, and which transfers share identical
/// source bytes (the multicast structure). Byte offsets are left out.
fn canonical_key(phase: &Phase) -> Vec<u32> {
    let mut key = Vec::with_capacity(phase.transfers.len() * 5 + 1);
    key.push(phase.transfers.len() as u32);
    let mut first_of: FxHashMap<(u32, u32, u32), u32> = FxHashMap::default();
    for (i, t) in phase.transfers.iter().enumerate() {
        let class = *first_of
            .entry((t.src_tile, t.src_offset, t.len))
            .or_insert(i as u32);
        key.extend([t.src_tile, t.len, class, t.dsts.len() as u32]);
        key.extend(t.dsts.iter().map(|d| d.tile));
    }
    key
}

fn key_hash(key: &[u32]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    key.hash(&mut h);
    h.finish()
}

/// Statistics of a scheduler's cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub scheduled: u64,
    pub reused: u64,
    /// Cache hits whose relocated schedule failed to verify (scheduled afresh).
    pub rejected: u64,
}

/// A cached phase and its schedule (shared with the memo).
type CacheEntry = Arc<(Arc<Phase>, Arc<Schedule>)>;

/// Schedules by (target, phase), under the hash of [`memo_key`].
type MemoTable = FxHashMap<u64, Vec<Arc<(Arc<Target>, Arc<Phase>, Arc<Schedule>)>>>;

/// A memo of [`ExchangeScheduler::schedule_memo`].
pub(crate) type Memo = std::sync::Mutex<MemoTable>;

/// The process-wide memo.
fn process_memo() -> &'static Memo {
    static MEMO: std::sync::OnceLock<Memo> = std::sync::OnceLock::new();
    MEMO.get_or_init(Default::default)
}

fn memo_key(target: &Target, phase: &Phase) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    target.name.hash(&mut h);
    phase.hash(&mut h);
    h.finish()
}

/// The memo's schedule of `phase` for `target`, if any.
fn memo_get(memo: &Memo, key: u64, target: &Target, phase: &Phase) -> Option<Arc<Schedule>> {
    let m = memo.lock().ok()?;
    m.get(&key)?
        .iter()
        .find(|e| *e.0 == *target && *e.1 == *phase)
        .map(|e| e.2.clone())
}

fn memo_put(memo: &Memo, key: u64, target: &Arc<Target>, phase: &Arc<Phase>, s: &Arc<Schedule>) {
    if let Ok(mut m) = memo.lock() {
        m.entry(key)
            .or_default()
            .push(Arc::new((target.clone(), phase.clone(), s.clone())));
    }
}

/// A phase's memo hash, its validation, and its canonical key (when valid).
type Checked = (u64, Result<(), PhaseError>, Option<Vec<u32>>);

/// A fresh schedule made on the pool, or the panic that ended its making.
type Made = (
    usize,
    std::thread::Result<Result<Arc<Schedule>, ScheduleError>>,
);

/// A canonical form's phases in a queue: relocated from the cached entry,
/// or from the queue's first phase of that form, scheduled afresh.
struct Group {
    cached: Option<CacheEntry>,
    fresh: Option<usize>,
    moved: Vec<usize>,
}

/// Phases to be answered as [`ExchangeScheduler::schedule_memo`] of each in
/// turn would, by [`ExchangeScheduler::answer`]. Each phase pushed that the
/// pass in order is expected to schedule afresh (the first of its canonical
/// form, not in the memo, the cache or the queue already) starts at once on
/// the rayon pool, so the caller goes on building while it is scheduled;
/// the later phases of its form are relocated from it when answered.
pub struct PhaseQueue<'m> {
    memo: &'m Memo,
    phases: Vec<Arc<Phase>>,
    checked: Vec<Checked>,
    /// Queued phases by memo hash (repeats the memo will answer).
    same: FxHashMap<u64, Vec<usize>>,
    group_of: FxHashMap<Vec<u32>, usize>,
    groups: Vec<Group>,
    /// Fresh schedules started on the pool, and those left to the answer.
    spawned: usize,
    deferred: Vec<usize>,
    sender: std::sync::mpsc::Sender<Made>,
    receiver: std::sync::mpsc::Receiver<Made>,
}

impl Default for PhaseQueue<'static> {
    fn default() -> Self {
        PhaseQueue::new()
    }
}

impl PhaseQueue<'static> {
    /// A queue answered from and into the process-wide memo.
    pub fn new() -> Self {
        PhaseQueue::with_memo(process_memo())
    }
}

impl<'m> PhaseQueue<'m> {
    pub(crate) fn with_memo(memo: &'m Memo) -> Self {
        let (sender, receiver) = std::sync::mpsc::channel();
        PhaseQueue {
            memo,
            phases: Vec::new(),
            checked: Vec::new(),
            same: FxHashMap::default(),
            group_of: FxHashMap::default(),
            groups: Vec::new(),
            spawned: 0,
            deferred: Vec::new(),
            sender,
            receiver,
        }
    }

    pub fn len(&self) -> usize {
        self.phases.len()
    }

    pub fn is_empty(&self) -> bool {
        self.phases.is_empty()
    }

    /// Queues `phase` for `scheduler` (the one that will answer the queue).
    pub fn push(&mut self, scheduler: &ExchangeScheduler, phase: Arc<Phase>) {
        let target = &scheduler.target;
        let i = self.phases.len();
        let key = memo_key(target, &phase);
        let valid = validate_phase(&phase, target);
        let canonical = valid.is_ok().then(|| canonical_key(&phase));
        let known = memo_get(self.memo, key, target, &phase).is_some();
        let same = self.same.entry(key).or_default();
        let repeat = same.iter().any(|&j| *self.phases[j] == *phase);
        if !known && !repeat {
            same.push(i);
            if let Some(c) = &canonical {
                match self.group_of.get(c) {
                    Some(&g) => self.groups[g].moved.push(i),
                    None => {
                        let cached = scheduler.lookup(c);
                        // On a thread of the pool the queue could end up
                        // waiting, in the pool, for a job nested under it:
                        // those fresh schedules are made when answered.
                        if cached.is_none() && rayon::current_thread_index().is_some() {
                            self.deferred.push(i);
                        } else if cached.is_none() {
                            let (p, t, tx) = (phase.clone(), target.clone(), self.sender.clone());
                            rayon::spawn(move || {
                                let made =
                                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                        schedule_valid(&p, &t).map(Arc::new)
                                    }));
                                // The queue may be gone (its caller failed): nobody waits.
                                let _ = tx.send((i, made));
                            });
                            self.spawned += 1;
                        }
                        self.group_of.insert(c.clone(), self.groups.len());
                        self.groups.push(Group {
                            fresh: cached.is_none().then_some(i),
                            moved: if cached.is_some() {
                                vec![i]
                            } else {
                                Vec::new()
                            },
                            cached,
                        });
                    }
                }
            }
        }
        self.phases.push(phase);
        self.checked.push((key, valid, canonical));
    }

    /// The fresh schedules: those started on the pool when all are made (a
    /// panic in one goes on here), and the deferred ones, made now.
    fn wait(&self, target: &Target) -> Vec<(usize, Result<Arc<Schedule>, ScheduleError>)> {
        let phases = &self.phases;
        let mut out: Vec<_> = self
            .deferred
            .par_iter()
            .map(|&i| (i, schedule_valid(&phases[i], target).map(Arc::new)))
            .collect();
        for _ in 0..self.spawned {
            match self.receiver.recv() {
                Ok((i, Ok(r))) => out.push((i, r)),
                Ok((_, Err(panic))) => std::panic::resume_unwind(panic),
                Err(_) => unreachable!("the queue holds a sender"),
            }
        }
        out
    }
}

/// A schedule relocated from the cached schedule named first.
type Moved = (Arc<Schedule>, Result<Schedule, Vec<VerifyError>>);

/// Work done ahead for one phase of a batch: its fresh schedule, or its
/// schedule relocated from a cached one (named by its schedule).
#[derive(Default)]
struct Ahead {
    fresh: Option<Result<Arc<Schedule>, ScheduleError>>,
    moved: Option<Moved>,
}

/// A scheduler for one target that reuses schedules of repeated phases.
#[derive(Debug)]
pub struct ExchangeScheduler {
    target: Arc<Target>,
    /// Hash of the canonical key -> phases with that hash and their schedules
    /// (the key itself is recomputed on a hit, not stored: it is large).
    cache: FxHashMap<u64, Vec<CacheEntry>>,
    stats: CacheStats,
    next_id: u64,
}

impl ExchangeScheduler {
    pub fn new(target: Arc<Target>) -> Self {
        ExchangeScheduler {
            target,
            cache: FxHashMap::default(),
            stats: CacheStats::default(),
            next_id: 0,
        }
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// [`ExchangeScheduler::schedule`], answered from a process-wide memo
    /// when this exact phase was scheduled for this exact target before (the
    /// code generator schedules again the phases the exchange stage
    /// scheduled in the same process). The answer is the one the scheduler
    /// gave then, so it is what the scheduler gives for the same sequence
    /// of phases: output does not depend on the memo.
    /// The flag says whether the memo answered. The schedule is shared with
    /// the memo (a large phase's fragments are not copied per answer).
    pub fn schedule_memo(&mut self, phase: &Phase) -> Result<(Arc<Schedule>, bool), ScheduleError> {
        self.schedule_memo_in(process_memo(), phase)
    }

    /// [`Self::schedule_memo`] with memo `memo`.
    pub(crate) fn schedule_memo_in(
        &mut self,
        memo: &Memo,
        phase: &Phase,
    ) -> Result<(Arc<Schedule>, bool), ScheduleError> {
        let key = memo_key(&self.target, phase);
        if let Some(hit) = memo_get(memo, key, &self.target, phase) {
            return Ok((hit, true));
        }
        let shared = Arc::new(phase.clone());
        let valid = validate_phase(phase, &self.target);
        let s = self.schedule_shared_ahead(phase, Some(&shared), valid, None, Ahead::default())?;
        memo_put(memo, key, &self.target, &shared, &s);
        Ok((s, false))
    }

    /// [`Self::schedule_memo`] of each phase in turn, the work done in
    /// parallel (see [`PhaseQueue`]). The results, the scheduler's state
    /// and the memo do not depend on the thread count.
    pub fn schedule_memo_all(
        &mut self,
        phases: &[Phase],
    ) -> Vec<Result<(Arc<Schedule>, bool), ScheduleError>> {
        self.schedule_memo_all_in(process_memo(), phases)
    }

    /// [`Self::schedule_memo_all`] with memo `memo`.
    pub(crate) fn schedule_memo_all_in(
        &mut self,
        memo: &Memo,
        phases: &[Phase],
    ) -> Vec<Result<(Arc<Schedule>, bool), ScheduleError>> {
        let mut q = PhaseQueue::with_memo(memo);
        for p in phases {
            q.push(self, Arc::new(p.clone()));
        }
        self.answer(q)
    }

    /// The answers to a queue's phases: what [`Self::schedule_memo`] of each
    /// in turn gives, and the state it leaves (counts, logs, cache, memo).
    /// Work done ahead against a cache entry this pass in order does not
    /// see again is redone here. Call it on the thread that filled the
    /// queue: a thread outside the pool waits here for the pool's jobs.
    pub fn answer(
        &mut self,
        q: PhaseQueue<'_>,
    ) -> Vec<Result<(Arc<Schedule>, bool), ScheduleError>> {
        let target = self.target.clone();
        let n = q.phases.len();
        let mut ahead: Vec<Ahead> = (0..n).map(|_| Ahead::default()).collect();
        for (i, r) in q.wait(&target) {
            ahead[i].fresh = Some(r);
        }
        // Relocations from each canonical form's source, in parallel.
        let mut moves: Vec<(usize, &Phase, Arc<Schedule>)> = Vec::new();
        for g in &q.groups {
            let from = match (&g.cached, g.fresh) {
                (Some(e), _) => Some((&*e.0, e.1.clone())),
                (None, Some(j)) => match &ahead[j].fresh {
                    Some(Ok(s)) => Some((&*q.phases[j], s.clone())),
                    _ => None,
                },
                (None, None) => None,
            };
            if let Some((old, s)) = from {
                moves.extend(g.moved.iter().map(|&i| (i, old, s.clone())));
            }
        }
        let moved: Vec<(usize, Moved)> = moves
            .into_par_iter()
            .map(|(i, old, s)| {
                let r = relocate(old, &s, &q.phases[i], &target);
                (i, (s, r))
            })
            .collect();
        for (i, m) in moved {
            ahead[i].moved = Some(m);
        }
        let mut checked = q.checked;
        let mut out = Vec::with_capacity(n);
        for (i, phase) in q.phases.iter().enumerate() {
            let (key, valid, canonical) = &mut checked[i];
            if let Some(hit) = memo_get(q.memo, *key, &target, phase) {
                out.push(Ok((hit, true)));
                continue;
            }
            let r = self.schedule_shared_ahead(
                phase,
                Some(phase),
                valid.clone(),
                canonical.take(),
                std::mem::take(&mut ahead[i]),
            );
            if let Ok(s) = &r {
                memo_put(q.memo, *key, &target, phase, s);
            }
            out.push(r.map(|s| (s, false)));
        }
        out
    }

    /// Schedules a phase, reusing a cached schedule when the phase is
    /// identical up to relocation to one scheduled before.
    pub fn schedule(&mut self, phase: &Phase) -> Result<Schedule, ScheduleError> {
        self.schedule_shared(phase).map(Arc::unwrap_or_clone)
    }

    /// [`Self::schedule`], sharing a fresh schedule with the cache.
    fn schedule_shared(&mut self, phase: &Phase) -> Result<Arc<Schedule>, ScheduleError> {
        let valid = validate_phase(phase, &self.target);
        self.schedule_shared_ahead(phase, None, valid, None, Ahead::default())
    }

    /// [`Self::schedule_shared`] of a phase whose validation (`valid`), canonical
    /// key (when given) and possibly schedule (`ahead`) were found beforehand.
    fn schedule_shared_ahead(
        &mut self,
        phase: &Phase,
        shared: Option<&Arc<Phase>>,
        valid: Result<(), PhaseError>,
        key: Option<Vec<u32>>,
        ahead: Ahead,
    ) -> Result<Arc<Schedule>, ScheduleError> {
        let id = self.next_id;
        self.next_id += 1;
        valid?;
        let key = key.unwrap_or_else(|| canonical_key(phase));
        if let Some(entry) = self.lookup(&key) {
            let moved = match ahead.moved {
                // Relocated ahead from this very entry.
                Some((from, r)) if Arc::ptr_eq(&from, &entry.1) => r,
                _ => relocate(&entry.0, &entry.1, phase, &self.target),
            };
            match moved {
                Ok(s) => {
                    self.stats.reused += 1;
                    tracing::debug!(
                        phase = id,
                        transfers = s.transfers,
                        initial_horizon = s.initial_horizon,
                        selected_horizon = s.horizon,
                        endpoint_lower_bound = s.lower_bound,
                        lower_bound_gap = s.gap(),
                        selected_kind = s.kind.as_str(),
                        row_words = s.rows.max_row_words,
                        "reused exchange schedule after validating relocated rows"
                    );
                    return Ok(Arc::new(s));
                }
                Err(errs) => {
                    self.stats.rejected += 1;
                    tracing::debug!(phase = id, error = %errs.first().map(|e| e.to_string()).unwrap_or_default(), "relocated schedule rejected");
                }
            }
        }
        let s = match ahead.fresh {
            Some(r) => r?,
            None => Arc::new(schedule_valid(phase, &self.target)?),
        };
        self.record_fresh(id, key, phase, shared, &s);
        Ok(s)
    }

    /// The cached phase and schedule with this canonical key, if any.
    fn lookup(&self, key: &[u32]) -> Option<CacheEntry> {
        self.cache
            .get(&key_hash(key))?
            .iter()
            .find(|e| canonical_key(&e.0) == key)
            .cloned()
    }

    /// Counts, logs and caches a freshly scheduled phase.
    /// `shared`, when given, is `phase` shared (the cache keeps it, no copy).
    fn record_fresh(
        &mut self,
        id: u64,
        key: Vec<u32>,
        phase: &Phase,
        shared: Option<&Arc<Phase>>,
        s: &Arc<Schedule>,
    ) {
        self.stats.scheduled += 1;
        tracing::debug!(
            phase = id,
            transfers = s.transfers,
            initial_horizon = s.initial_horizon,
            selected_horizon = s.horizon,
            endpoint_lower_bound = s.lower_bound,
            lower_bound_gap = s.gap(),
            selected_kind = s.kind.as_str(),
            row_words = s.rows.max_row_words,
            row_tile = s.rows.max_row_tile,
            neighborhood_improvements = s.improvements,
            "optimized exchange schedule"
        );
        let phase = shared.cloned().unwrap_or_else(|| Arc::new(phase.clone()));
        let entry = Arc::new((phase, s.clone()));
        let slot = self.cache.entry(key_hash(&key)).or_default();
        match slot.iter().position(|e| canonical_key(&e.0) == key) {
            Some(i) => slot[i] = entry,
            None => slot.push(entry),
        }
    }

    /// Schedules many phases, in parallel where they are new: the first
    /// phase of each canonical form not yet cached is scheduled on the rayon
    /// pool, every other phase goes through [`Self::schedule`] in order. The
    /// results, logs and cache are exactly those of calling [`Self::schedule`]
    /// on each phase in turn, whatever the thread count.
    pub fn schedule_all(&mut self, phases: &[Phase]) -> Vec<Result<Schedule, ScheduleError>> {
        let target = self.target.clone();
        let keys: Vec<Option<Vec<u32>>> = phases
            .par_iter()
            .map(|p| validate_phase(p, &target).ok().map(|()| canonical_key(p)))
            .collect();
        let mut seen: FxHashMap<&[u32], ()> = FxHashMap::default();
        let mut fresh: Vec<usize> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            if let Some(k) = k {
                if self.lookup(k).is_none() && seen.insert(k.as_slice(), ()).is_none() {
                    fresh.push(i);
                }
            }
        }
        let mut computed: FxHashMap<usize, Result<Schedule, ScheduleError>> = fresh
            .par_iter()
            .map(|&i| (i, schedule_valid(&phases[i], &target)))
            .collect::<Vec<_>>()
            .into_iter()
            .collect();
        let mut out = Vec::with_capacity(phases.len());
        for (i, phase) in phases.iter().enumerate() {
            match (computed.remove(&i), &keys[i]) {
                (Some(result), Some(key)) => {
                    let id = self.next_id;
                    self.next_id += 1;
                    if let Ok(s) = &result {
                        self.record_fresh(id, key.clone(), phase, None, &Arc::new(s.clone()));
                    }
                    out.push(result);
                }
                _ => out.push(self.schedule(phase)),
            }
        }
        out
    }
}

/// Moves a schedule of `old` onto `new` (equal canonical keys): cycles and
/// receivers stay, source offsets follow their transfers. `s` was proven for
/// `old`, so only what byte offsets decide is checked again
/// ([`verify_moved`]); when an offset cannot move exactly (it would leave
/// the u32 range), the relocated schedule is verified in full instead.
fn relocate(
    old: &Phase,
    s: &Schedule,
    new: &Phase,
    target: &Target,
) -> Result<Schedule, Vec<VerifyError>> {
    let mut fragments = s.fragments.clone();
    let mut exact = true;
    for f in &mut fragments {
        let Some(r) = f.receives.first() else {
            exact = false;
            continue;
        };
        let (Some(o), Some(n)) = (
            old.transfers.get(r.transfer as usize),
            new.transfers.get(r.transfer as usize),
        ) else {
            exact = false;
            continue;
        };
        let delta = f.src_offset.checked_sub(o.src_offset);
        match delta.and_then(|d| n.src_offset.checked_add(d)) {
            Some(moved) => f.src_offset = moved,
            None => {
                exact = false;
                let delta = f.src_offset.saturating_sub(o.src_offset);
                f.src_offset = n.src_offset.saturating_add(delta);
            }
        }
    }
    let jobs = build_jobs(new, target.exchange.multicast);
    let bound = lower_bound_from_jobs(&jobs, target.tiles() as usize, target);
    let rows = row_stats(new, &fragments, target);
    let out = Schedule {
        kind: ScheduleKind::Reused,
        fragments,
        horizon: s.horizon,
        initial_horizon: s.initial_horizon,
        lower_bound: bound.cycles,
        transfers: new.transfers.len(),
        rows,
        improvements: s.improvements,
    };
    if exact {
        verify_moved(&out, target, bound.cycles)?;
    } else {
        verify_valid(new, &out, target, bound.cycles)?;
    }
    Ok(out)
}
