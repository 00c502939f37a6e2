//! Host I/O overlapped with compute: `runs` runs of a package back to back,
//! the host link streaming run i+1's inputs and run i-1's outputs while run
//! i computes, scheduled against the simulated run's supersteps.
//!
//! The device side is the simulated run: every run takes its supersteps'
//! simulated cycles (the runs read the same inputs, and the cycles do not
//! depend on the values). The host link is one channel at the target's
//! host-link rate, shared by both directions (as `hostIoCycles` counts it),
//! and serves at every cycle the open transfer needed soonest (earliest
//! deadline first, a transfer paused when a more urgent one opens). A
//! superstep starts only when every transfer it needs has landed.
//!
//! When a transfer may run comes from where the compile placed the streams'
//! bytes (its memory report: every buffer on every tile, its address and
//! the supersteps it is alive):
//!
//! * **double-buffered** streams: a tile whose free data memory holds two
//!   copies of every stream piece it keeps gives them a copy per run
//!   parity, used by nothing else. Run i's input lands in its copy any time
//!   after run i-2 last read that copy, before the superstep that first
//!   reads it in run i; run i's output leaves after run i ends, before run
//!   i+2's producer writes the copy again.
//! * otherwise the stream's bytes are shared with the buffers storage
//!   placement put there: run i's input lands after every earlier user of
//!   those bytes is dead (in run i-1, or earlier in run i), before its first
//!   reader in run i; run i's output leaves after run i ends, before run
//!   i+1 first writes any buffer on those bytes.
//!
//! Without a memory report (a package compiled elsewhere) nothing is known
//! of the placement: every input lands before its run starts, after the
//! previous run's outputs left, and no transfer overlaps a run.

use ipu_lowering::exchange_to_machine::memory::{Category, MemoryReport};
use ipu_package::{Direction, Package};
use ipu_runtime::chip::ChipReport;
use ipu_target::Target;

/// When a transfer may start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Open {
    /// After this global superstep (run * steps + step) has ended.
    after_step: Option<usize>,
    /// After every output transfer of this run has left.
    after_outputs_of: Option<usize>,
}

impl Open {
    fn later(self, o: Open) -> Open {
        Open {
            after_step: self.after_step.max(o.after_step),
            after_outputs_of: self.after_outputs_of.max(o.after_outputs_of),
        }
    }
}

/// One stream's window in a run, relative to that run: when its transfer
/// may start and the superstep that needs it done.
#[derive(Clone, Debug)]
struct StreamPlan {
    name: String,
    input: bool,
    cycles: u64,
    double: bool,
    /// Input: the first superstep reading it. Output: the first superstep
    /// of the next run using its bytes (single) or writing it (double).
    need: usize,
    /// Input, single-buffered: the last superstep of the previous run using
    /// its bytes, and whether a result read back shares them.
    prev_last: Option<usize>,
    prev_at_end: bool,
    /// Input, single-buffered: the last superstep of an earlier user in
    /// the same run.
    same_run_before: Option<usize>,
    /// Input, double-buffered: its own last reader in a run.
    own_last: usize,
}

/// One slice of the host link's time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSlice {
    pub run: usize,
    pub stream: String,
    pub input: bool,
    pub start: u64,
    pub end: u64,
}

/// The schedule of `runs` runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub runs: usize,
    /// Each run's device start and end.
    pub device: Vec<(u64, u64)>,
    /// Each run's completion: its device end and its outputs back.
    pub complete: Vec<u64>,
    pub link: Vec<LinkSlice>,
    /// Streams given a second copy (double buffers), of all streams.
    pub double_buffered: usize,
    pub streams: usize,
    /// The placement was known (a memory report of the compile).
    pub placed: bool,
}

impl Schedule {
    /// Cycles per run over the second half of the runs (the first ones
    /// find the link free of outputs): the larger of the spacing of their
    /// starts (a run starts once the inputs its first superstep reads have
    /// landed, and stalls at a superstep whose inputs have not, or whose
    /// bytes the previous run's outputs still hold) and of their
    /// completions (device done and outputs back). One run's cycles with
    /// its host I/O when `runs` is 1.
    pub fn steady_cycles_per_run(&self) -> u64 {
        let n = self.complete.len();
        if n < 2 {
            return self.complete.first().copied().unwrap_or(0);
        }
        let h = (n - 1) / 2;
        let per_run =
            |first: u64, last: u64| last.saturating_sub(first).div_ceil((n - 1 - h) as u64);
        let starts = per_run(self.device[h].0, self.device[n - 1].0);
        starts.max(per_run(self.complete[h], self.complete[n - 1]))
    }
}

/// Every superstep's simulated cycles, sync included, in program order.
fn step_cycles(report: &ChipReport) -> Vec<u64> {
    let mut start = 0u64;
    let mut out = Vec::with_capacity(report.supersteps.len());
    for s in &report.supersteps {
        let end = s.release_cycle.unwrap_or(s.end_cycle.max(start)).max(start);
        out.push(end - start);
        start = end;
    }
    if let Some(last) = out.last_mut() {
        *last += report.cycles.saturating_sub(start);
    }
    out
}

/// The tiles whose free data memory holds two copies of every stream piece
/// they keep (one per run parity, neither shared with another buffer).
fn double_buffer_tiles(pkg: &Package, memory: &MemoryReport) -> Vec<bool> {
    let mut need = vec![0u64; memory.tiles.len()];
    for s in pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction != Direction::Load)
    {
        for t in s.transfers() {
            if let Some(n) = need.get_mut(t.tile as usize) {
                *n += u64::from(t.len);
            }
        }
    }
    memory
        .tiles
        .iter()
        .zip(&need)
        .map(|(m, &n)| 2 * n <= m.bytes[Category::Free.index()])
        .collect()
}

/// The plan of each input and output stream from the placement.
fn placed_plans(pkg: &Package, target: &Target, memory: &MemoryReport) -> Vec<StreamPlan> {
    let steps = memory.steps.len();
    let room = double_buffer_tiles(pkg, memory);
    let mut plans = Vec::new();
    for s in pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction != Direction::Load)
    {
        let input = s.direction.to_device();
        let mut plan = StreamPlan {
            name: s.name.clone(),
            input,
            // The placed buffer crosses the link (an input the host widens
            // goes over widened).
            cycles: target.host_link_cycles(s.byte_len().unwrap_or(u64::MAX)),
            double: true,
            need: if input { steps } else { usize::MAX },
            prev_last: None,
            prev_at_end: false,
            same_run_before: None,
            own_last: 0,
        };
        let own_op = format!("host input {}", s.name);
        for t in s.transfers() {
            let Some(tm) = memory.tiles.get(t.tile as usize) else {
                continue;
            };
            plan.double &= room.get(t.tile as usize).copied().unwrap_or(false);
            let (lo, hi) = (
                u64::from(t.tile_address),
                u64::from(t.tile_address) + u64::from(t.len),
            );
            let users: Vec<_> = tm
                .placements
                .iter()
                .filter(|p| p.address < hi && lo < p.address + p.bytes)
                .collect();
            let is_own = |p: &&ipu_lowering::exchange_to_machine::memory::Placement| {
                let b = &memory.buffers[p.buffer];
                if input {
                    b.op == own_op || b.op.starts_with("host input")
                } else {
                    p.last as usize >= steps
                }
            };
            let own = users.iter().filter(|p| is_own(p));
            let own_first = own.clone().map(|p| p.first as usize).min().unwrap_or(0);
            let own_last = own.map(|p| p.last as usize).max().unwrap_or(steps);
            if input {
                plan.need = plan.need.min(own_first);
                plan.own_last = plan.own_last.max(own_last);
                for p in &users {
                    let (first, last) = (p.first as usize, p.last as usize);
                    if !is_own(p) && last < own_first {
                        plan.same_run_before = plan.same_run_before.max(Some(last));
                    }
                    if last >= steps {
                        plan.prev_at_end = true;
                    }
                    plan.prev_last = plan.prev_last.max(Some(last.min(steps - 1).max(first)));
                }
            } else {
                let first_use = users.iter().map(|p| p.first as usize).min().unwrap_or(0);
                plan.need = plan
                    .need
                    .min(if plan.double { own_first } else { first_use });
            }
        }
        plans.push(plan);
    }
    plans
}

/// The plan of each stream when the placement is unknown: no overlap.
fn unplaced_plans(pkg: &Package, target: &Target, steps: usize) -> Vec<StreamPlan> {
    pkg.meta
        .streams
        .iter()
        .filter(|s| s.direction != Direction::Load)
        .map(|s| StreamPlan {
            name: s.name.clone(),
            input: s.direction.to_device(),
            cycles: target.host_link_cycles(s.byte_len().unwrap_or(u64::MAX)),
            double: false,
            need: 0,
            prev_last: Some(steps.saturating_sub(1)),
            prev_at_end: true,
            same_run_before: None,
            own_last: steps.saturating_sub(1),
        })
        .collect()
}

/// One transfer of one run.
#[derive(Clone, Debug)]
struct Transfer {
    run: usize,
    plan: usize,
    input: bool,
    open: Open,
    /// The global superstep that needs it done (past the last run's: none).
    deadline: usize,
    left: u64,
    done: Option<u64>,
}

/// The transfers of `runs` runs of `steps` supersteps.
fn transfers(plans: &[StreamPlan], runs: usize, steps: usize) -> Vec<Transfer> {
    let mut out = Vec::new();
    let g = |run: usize, step: usize| run * steps + step;
    for run in 0..runs {
        for (i, p) in plans.iter().enumerate() {
            let mut open = Open::default();
            let deadline;
            if p.input {
                deadline = g(run, p.need.min(steps.saturating_sub(1)));
                if p.double {
                    if run >= 2 {
                        open.after_step = Some(g(run - 2, p.own_last.min(steps - 1)));
                    }
                } else {
                    if run >= 1 {
                        open.after_step = p.prev_last.map(|l| g(run - 1, l));
                        if p.prev_at_end {
                            open.after_outputs_of = Some(run - 1);
                        }
                    }
                    if let Some(b) = p.same_run_before {
                        open = open.later(Open {
                            after_step: Some(g(run, b)),
                            after_outputs_of: None,
                        });
                    }
                }
            } else {
                open.after_step = Some(g(run, steps - 1));
                // Past the last run, the deadline the next run would set:
                // it keeps the link's order of a longer stream of runs.
                let next = if p.double { run + 2 } else { run + 1 };
                deadline = g(next, p.need.min(steps));
            }
            out.push(Transfer {
                run,
                plan: i,
                input: p.input,
                open,
                deadline,
                left: p.cycles,
                done: None,
            });
        }
    }
    out
}

/// The host link's state while the runs are laid out.
struct Link<'a> {
    xfers: Vec<Transfer>,
    plans: &'a [StreamPlan],
    /// End cycle of every global superstep laid out so far.
    ends: Vec<u64>,
    t: u64,
    slices: Vec<LinkSlice>,
}

impl Link<'_> {
    /// When transfer `i` opens, if that is known yet.
    fn opens(&self, i: usize) -> Option<u64> {
        let x = &self.xfers[i];
        let mut at = 0u64;
        if let Some(s) = x.open.after_step {
            at = at.max(*self.ends.get(s)?);
        }
        if let Some(r) = x.open.after_outputs_of {
            for y in self.xfers.iter().filter(|y| y.run == r && !y.input) {
                at = at.max(y.done?);
            }
        }
        Some(at)
    }

    /// Serves the open transfers, most urgent first, until cycle `until`
    /// or until `enough` holds; `Err` when nothing can open.
    fn serve(&mut self, until: u64, enough: &dyn Fn(&Link) -> bool) -> Result<(), String> {
        while self.t < until && !enough(self) {
            let pending: Vec<(usize, Option<u64>)> = (0..self.xfers.len())
                .filter(|&i| self.xfers[i].left > 0)
                .map(|i| (i, self.opens(i)))
                .collect();
            let now = pending
                .iter()
                .filter(|(_, o)| o.is_some_and(|o| o <= self.t))
                .min_by_key(|(i, _)| (self.xfers[*i].deadline, self.xfers[*i].run, *i));
            let Some(&(i, _)) = now else {
                match pending
                    .iter()
                    .filter_map(|(_, o)| *o)
                    .filter(|&o| o > self.t)
                    .min()
                {
                    Some(o) => self.t = o.min(until),
                    None if until == u64::MAX => {
                        return Err("a needed host transfer can never start".into())
                    }
                    None => self.t = until,
                }
                continue;
            };
            // Until it is done, `until`, or a more urgent transfer opens.
            let urgent = pending
                .iter()
                .filter(|(j, o)| {
                    o.is_some_and(|o| o > self.t)
                        && self.xfers[*j].deadline < self.xfers[i].deadline
                })
                .filter_map(|(_, o)| *o)
                .min()
                .unwrap_or(u64::MAX);
            let end = (self.t + self.xfers[i].left).min(until).min(urgent);
            let x = &mut self.xfers[i];
            x.left -= end - self.t;
            if x.left == 0 {
                x.done = Some(end);
            }
            let p = &self.plans[x.plan];
            match self.slices.last_mut() {
                Some(s) if s.end == self.t && s.run == x.run && s.stream == p.name => s.end = end,
                _ => self.slices.push(LinkSlice {
                    run: x.run,
                    stream: p.name.clone(),
                    input: p.input,
                    start: self.t,
                    end,
                }),
            }
            self.t = end;
        }
        Ok(())
    }
}

/// Lays out `runs` runs of the simulated `report` with their host streams.
pub fn schedule(
    pkg: &Package,
    target: &Target,
    report: &ChipReport,
    memory: Option<&MemoryReport>,
    runs: usize,
) -> Result<Schedule, String> {
    let cycles = step_cycles(report);
    let steps = cycles.len().max(1);
    let runs = runs.max(1);
    // The chip's supersteps are the program's, then the one its tiles halt
    // in after the last sync.
    let placed = memory.filter(|m| {
        !m.steps.is_empty() && (m.steps.len() == cycles.len() || m.steps.len() + 1 == cycles.len())
    });
    let plans = match placed {
        Some(m) => placed_plans(pkg, target, m),
        None => unplaced_plans(pkg, target, steps),
    };
    let (device, complete, link) = lay_out(&plans, &cycles, runs)?;
    Ok(Schedule {
        runs,
        device,
        complete,
        link,
        double_buffered: plans.iter().filter(|p| p.double).count(),
        streams: plans.len(),
        placed: placed.is_some(),
    })
}

/// Each run's device start and end, its completion, and the link's slices
/// of `runs` runs of supersteps taking `cycles` with the streams `plans`.
#[allow(clippy::type_complexity)]
fn lay_out(
    plans: &[StreamPlan],
    cycles: &[u64],
    runs: usize,
) -> Result<(Vec<(u64, u64)>, Vec<u64>, Vec<LinkSlice>), String> {
    let steps = cycles.len().max(1);
    let mut link = Link {
        xfers: transfers(plans, runs, steps),
        plans,
        ends: Vec::with_capacity(runs * steps),
        t: 0,
        slices: Vec::new(),
    };
    let mut device = Vec::with_capacity(runs);
    let mut now = 0u64;
    for g in 0..runs * steps {
        link.serve(now, &|_| false)?;
        let needed = |l: &Link| l.xfers.iter().all(|x| x.deadline > g || x.left == 0);
        link.serve(u64::MAX, &needed)?;
        let ready = link
            .xfers
            .iter()
            .filter(|x| x.deadline <= g)
            .filter_map(|x| x.done)
            .max()
            .unwrap_or(0);
        let start = now.max(ready);
        if g % steps == 0 {
            device.push((start, start));
        }
        now = start + cycles.get(g % steps).copied().unwrap_or(0);
        link.ends.push(now);
        if let Some(d) = device.last_mut() {
            d.1 = now;
        }
    }
    link.serve(u64::MAX, &|l: &Link| l.xfers.iter().all(|x| x.left == 0))?;
    let complete = (0..runs)
        .map(|r| {
            link.xfers
                .iter()
                .filter(|x| x.run == r && !x.input)
                .filter_map(|x| x.done)
                .fold(device[r].1, u64::max)
        })
        .collect();
    Ok((device, complete, link.slices))
}

/// The schedule as trace events: a process "host link" (after `pid - 1`
/// processes) with a track of the device's runs and a track of the link's
/// transfers, thread ids from `tid`.
pub fn trace_events(s: &Schedule, pid: u32, tid: u32) -> Vec<serde_json::Value> {
    use serde_json::json;
    let mut ev = vec![
        json!({"name": "process_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": format!("host link ({} runs)", s.runs)}}),
        json!({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": pid}}),
        json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": "device runs"}}),
        json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid + 1, "args": {"name": "host link"}}),
    ];
    for (r, &(start, end)) in s.device.iter().enumerate() {
        ev.push(json!({"name": format!("run {r}"), "cat": "device_run", "ph": "X", "pid": pid, "tid": tid,
            "ts": start, "dur": end - start, "args": {"run": r, "complete": s.complete[r]}}));
    }
    for l in &s.link {
        let dir = if l.input { "in" } else { "out" };
        ev.push(json!({"name": format!("run {} {dir} {}", l.run, l.stream), "cat": "host_stream", "ph": "X",
            "pid": pid, "tid": tid + 1, "ts": l.start, "dur": l.end - l.start,
            "args": {"run": l.run, "stream": l.stream, "direction": dir}}));
    }
    ev
}

/// What `ipu-run` prints after `cycles=C`: [`crate::device::cycle_figures`],
/// ` floorCycles=F` when the model has a floor, ` cyclesPerRunSteadyState=S`
/// (for one run, `cyclesWithHostIo`) and, for more than one run, ` runs=N doubleBufferedStreams=D/T`; with
/// the schedule they come from.
pub fn run_figures(
    pkg: &Package,
    target: &Target,
    report: &ChipReport,
    floor: Option<u64>,
    memory: Option<&MemoryReport>,
    runs: usize,
) -> Result<(String, Schedule), String> {
    let mut figures = crate::device::cycle_figures(pkg, target, report.cycles);
    if let Some(f) = floor {
        figures.push_str(&format!(" floorCycles={f}"));
    }
    let s = schedule(pkg, target, report, memory, runs)?;
    // One run has no steady state: it is the run with its streams before
    // and after it, whether the placement is known or not.
    let steady = if s.runs > 1 {
        s.steady_cycles_per_run()
    } else {
        report
            .cycles
            .saturating_add(crate::device::host_io_cycles(pkg, target))
    };
    figures.push_str(&format!(" cyclesPerRunSteadyState={steady}"));
    if s.runs > 1 {
        figures.push_str(&format!(
            " runs={} doubleBufferedStreams={}/{}",
            s.runs, s.double_buffered, s.streams
        ));
    }
    Ok((figures, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream of `cycles` link cycles: an input read from superstep
    /// `need` to `last`, or an output first written in superstep `need`.
    fn plan(input: bool, cycles: u64, double: bool, need: usize, last: usize) -> StreamPlan {
        StreamPlan {
            name: if input { "x" } else { "y" }.into(),
            input,
            cycles,
            double,
            need,
            prev_last: Some(last),
            prev_at_end: false,
            same_run_before: None,
            own_last: last,
        }
    }

    fn steady(plans: &[StreamPlan], cycles: &[u64], runs: usize) -> (u64, Schedule) {
        let (device, complete, link) = lay_out(plans, cycles, runs).unwrap();
        let s = Schedule {
            runs,
            device,
            complete,
            link,
            double_buffered: 0,
            streams: plans.len(),
            placed: true,
        };
        (s.steady_cycles_per_run(), s)
    }

    #[test]
    fn double_buffers_hide_the_link_behind_a_longer_run() {
        // Two supersteps of 100 cycles; 50 cycles in, 30 out per run.
        let plans = [plan(true, 50, true, 0, 0), plan(false, 30, true, 1, 1)];
        let (per_run, s) = steady(&plans, &[100, 100], 6);
        assert_eq!(per_run, 200);
        // The first run waits for its input; the others start back to back.
        assert_eq!(s.device[0], (50, 250));
        assert!(s.device.windows(2).all(|w| w[1].0 == w[0].1));
        // Run 1's input streams while run 0 computes.
        let r1 = s.link.iter().find(|l| l.run == 1 && l.input).unwrap();
        assert!(r1.end <= s.device[0].1, "{r1:?}");
    }

    #[test]
    fn the_link_sets_the_pace_when_it_needs_more_than_the_run() {
        // 300 cycles in and 200 out per run against 200 cycles of compute.
        let plans = [plan(true, 300, true, 0, 0), plan(false, 200, true, 1, 1)];
        let (per_run, _) = steady(&plans, &[100, 100], 12);
        assert_eq!(per_run, 500);
    }

    #[test]
    fn an_input_whose_bytes_stay_busy_waits_for_the_previous_run() {
        // Single-buffered, read in both supersteps, its bytes shared with a
        // result read back: the next input lands only after this run's
        // outputs leave, so nothing overlaps.
        let mut input = plan(true, 50, false, 0, 1);
        input.prev_at_end = true;
        let plans = [input, plan(false, 30, false, 0, 1)];
        let (per_run, _) = steady(&plans, &[100, 100], 5);
        assert_eq!(per_run, 50 + 200 + 30);
    }

    #[test]
    fn an_input_read_early_streams_in_during_the_rest_of_the_run() {
        // Single-buffered, last read in superstep 0 of 3: the next run's
        // input lands during supersteps 1 and 2.
        let plans = [plan(true, 150, false, 0, 0), plan(false, 30, false, 2, 2)];
        let (per_run, _) = steady(&plans, &[100, 100, 100], 5);
        assert_eq!(per_run, 300);
    }
}
