//! Calls expanded ([`Program::expand_calls`]): each `exchange.call` of a
//! program replaced by the callee's steps, relocated to that call's
//! buffers.
//!
//! The callee's program was planned and scheduled once; a call copies its
//! activation inputs from buffers of the caller laid out as the callee's
//! (checked here: the same tiles and bytes) into the callee's input
//! buffers, on each tile, and its results back out of the callee's output
//! buffers; its parameters are the caller's arguments (or constants of the
//! caller), loaded straight into that call's copies of the callee's
//! operand buffers (a constant with the image). Every buffer of
//! the callee is the call's own, so the expanded program is checked again
//! as a whole (`Program::check`: each buffer written once).
//!
//! Then [`Program::fold_frames`] gives all calls of a callee one frame:
//! the buffers that hold no parameter become one buffer each, written once
//! per call. Calls never overlap in time, so that is safe; and a step of
//! the callee that touches only frame buffers has the same kernel records
//! and exchange rows at every call, which the machine stage stores once
//! per tile.

use crate::model::*;
use ipu_ir::Diagnostic;
use rustc_hash::FxHashMap;

/// The set copying the results of the call just expanded, while the next
/// step may still join it.
struct Pending {
    step: usize,
    pairs: Vec<(BufId, BufId)>,
    name: String,
    loc: ipu_ir::Loc,
}

/// Where each buffer of a callee goes in the caller, for one call.
struct Relocation {
    to: Vec<BufId>,
    prefix: String,
    /// Steps of the call before the callee's first (the arguments' copy).
    shift: usize,
}

impl Relocation {
    fn buf(&self, b: BufId) -> BufId {
        self.to[b]
    }

    fn stored(&self, at: &Stored) -> Stored {
        let mut at = at.clone();
        if let Some((b, _)) = &mut at.home {
            *b = self.buf(*b);
        }
        for p in &mut at.placements {
            p.buffer = self.buf(p.buffer);
        }
        at
    }

    /// Step `s` with its buffers relocated, in place (its name kept).
    fn relocate(&self, s: &mut Step) {
        let moves = |ms: &mut [Move]| {
            for m in ms {
                (m.src, m.dst) = (self.buf(m.src), self.buf(m.dst));
            }
        };
        match s {
            Step::Compute(c) => {
                moves(&mut c.copies);
                for v in &mut c.vertices {
                    for w in &mut v.call.record {
                        if let Word::Buf(b, _) = w {
                            *b = self.buf(*b);
                        }
                    }
                }
            }
            Step::Exchange(p) => moves(&mut p.moves),
            Step::Call(_) => {}
        }
    }

    /// Step `s` relocated, named with the prefix (cloned once).
    fn step(&self, s: &Step) -> Step {
        let mut s = s.clone();
        self.relocate(&mut s);
        match &mut s {
            Step::Compute(c) => c.name = format!("{}{}", self.prefix, c.name),
            Step::Exchange(p) => p.name = format!("{}{}", self.prefix, p.name),
            Step::Call(_) => {}
        }
        s
    }
}

impl Program {
    /// Whether some step calls another function's program.
    pub fn has_calls(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Call(_)))
    }

    /// The program with every call replaced by the callee's steps (the
    /// callee's program, itself without calls, from `callees`), relocated
    /// to the call's own buffers, between a local copy of its activation
    /// arguments in and one of its results out. The callee's probes follow
    /// its steps, their sources the callee's op keys at the call's
    /// ([`CallStep::source`], [`ipu_ir::diag::key_in_call`]): one op of a
    /// callee is probed once per call. [`Program::frames`] records which
    /// call each step belongs to and each callee buffer's frame slot.
    pub fn expand_calls(
        &self,
        callees: &FxHashMap<String, Program>,
    ) -> Result<Program, Diagnostic> {
        let mut out = Program {
            buffers: self.buffers.clone(),
            inputs: self.inputs.clone(),
            constants: self.constants.clone(),
            outputs: self.outputs.clone(),
            steps: Vec::with_capacity(self.steps.len()),
            probes: Vec::new(),
            frames: Frames::default(),
        };
        out.frames.slot = vec![None; self.buffers.len()];
        let mut index = vec![0; self.steps.len()];
        // Per callee: how many calls so far, and its first frame slot.
        let mut calls: Vec<(&str, usize, u32)> = Vec::new();
        let mut slots = 0u32;
        let mut number = 0u32;
        let uses = self.buffer_uses();
        let mut pending: Option<Pending> = None;
        let mut probes: Vec<Probe> = Vec::new();
        for (i, s) in self.steps.iter().enumerate() {
            let Step::Call(c) = s else {
                index[i] = out.steps.len();
                out.steps.push(s.clone());
                out.frames.call_of_step.push(0);
                out.frames.copy_step.push(false);
                pending = None;
                continue;
            };
            let callee = callees.get(&c.callee).ok_or_else(|| {
                Diagnostic::error(
                    c.loc,
                    format!(
                        "'exchange.call' op calls @{}, which has no exchange-stage program",
                        c.callee
                    ),
                )
            })?;
            if callee.has_calls() {
                return Err(Diagnostic::error(
                    c.loc,
                    format!(
                        "'exchange.call' op calls @{}, whose own calls are not expanded",
                        c.callee
                    ),
                ));
            }
            let callee_no = calls
                .iter()
                .position(|(n, _, _)| *n == c.callee)
                .unwrap_or(calls.len()) as u32;
            out.frames.callee_of_call.push(callee_no);
            let (k, slot) = match calls.iter_mut().find(|(n, _, _)| *n == c.callee) {
                Some((_, k, slot)) => {
                    *k += 1;
                    (*k, *slot)
                }
                None => {
                    out.frames.callees.push(c.callee.clone());
                    let slot = slots;
                    slots += callee.buffers.len() as u32;
                    calls.push((&c.callee, 0, slot));
                    (0, slot)
                }
            };
            number += 1;
            let base = out.steps.len();
            let r = out.inline(callee, c, (k, slot, number), &uses, &mut pending)?;
            probes.extend(callee.probes.iter().map(|p| {
                let mut p = p.clone();
                p.after += base + r.shift;
                p.source = ipu_ir::diag::key_in_call(&p.source, &c.source);
                p.at.buffer = r.buf(p.at.buffer);
                p
            }));
        }
        probes.extend(self.probes.iter().map(|p| Probe {
            after: index[p.after],
            ..p.clone()
        }));
        // In the order of their steps (stable: a step's probes keep theirs).
        probes.sort_by_key(|p| p.after);
        out.probes = probes;
        Ok(out)
    }

    /// Appends call `c` of `callee` (`(k, slot, number)`: the `k`-th call
    /// of it, its first frame slot, the call's number in the program);
    /// returns where the callee's buffers went.
    fn inline(
        &mut self,
        callee: &Program,
        c: &CallStep,
        (k, slot, number): (usize, u32, u32),
        uses: &[u32],
        pending: &mut Option<Pending>,
    ) -> Result<Relocation, Diagnostic> {
        let err = |m: String| Diagnostic::error(c.loc, format!("'exchange.call' op {m}"));
        if c.results.len() != callee.outputs.len() {
            return Err(err(format!(
                "binds {} results, but @{} has {}",
                c.results.len(),
                c.callee,
                callee.outputs.len()
            )));
        }
        // Buffers that hold a parameter are the call's; the others are the frame's.
        let mut param = vec![false; callee.buffers.len()];
        // A parameter's home (the blocks exchanges read it from) is the
        // frame's, as an activation's: each call loads its own copy and
        // copies it in, so the callee's exchange rows read the same buffer
        // at every call and the machine stage stores them once.
        let mut param_homes: Vec<BufId> = Vec::new();
        // (caller buffer, callee buffer) copied in, then out.
        let mut ins: Vec<(BufId, BufId)> = Vec::new();
        let mut outs: Vec<(BufId, BufId)> = Vec::new();
        for inp in &callee.inputs {
            let bind = c.args.get(inp.arg).copied().unwrap_or(CallArg::Unused);
            match (inp.load, bind, &inp.at.home) {
                (false, CallArg::Buffer(b), Some((home, _))) => {
                    self.same_storage(callee, *home, b, c)?;
                    ins.push((b, *home));
                }
                (true, CallArg::Const { ty, .. }, _) if ty != inp.at.ty => {
                    return Err(err(format!(
                        "binds argument #{} of @{}, a parameter, to a constant of another type",
                        inp.arg, c.callee
                    )));
                }
                (true, CallArg::Param(_) | CallArg::Const { .. }, _) => {
                    if let Some((b, _)) = &inp.at.home {
                        param_homes.push(*b);
                    }
                    for p in &inp.at.placements {
                        param[p.buffer] = true;
                    }
                }
                (load, _, _) => {
                    let what = if load { "a parameter" } else { "an activation" };
                    let to = match bind {
                        CallArg::Buffer(b) => format!("buffer @{}", self.buffers[b].name),
                        CallArg::Param(k) => format!("argument #{k} of the caller"),
                        CallArg::Const { .. } => "a constant".to_string(),
                        CallArg::Unused => "nothing".to_string(),
                    };
                    return Err(err(format!(
                        "binds argument #{} of @{}, {what}, to {to}",
                        inp.arg, c.callee
                    )));
                }
            }
        }
        for (o, &b) in callee.outputs.iter().zip(&c.results) {
            self.same_storage(callee, o.at.buffer, b, c)?;
            if let Some(&(_, x)) = outs.iter().find(|(_, r)| *r == b) {
                return Err(err(format!(
                    "binds @{} to both @{} and @{} of @{}",
                    self.buffers[b].name,
                    callee.buffers[x].name,
                    callee.buffers[o.at.buffer].name,
                    c.callee
                )));
            }
            outs.push((o.at.buffer, b));
        }
        let prefix = format!("{}{k}.", c.callee);
        let mut to = Vec::with_capacity(callee.buffers.len());
        for (i, d) in callee.buffers.iter().enumerate() {
            to.push(self.buffers.len());
            let mut d = d.clone();
            // The first call's frame buffers are the frame's, named for the callee.
            d.name = match (k, param[i]) {
                (0, false) => format!("{}.{}", c.callee, d.name),
                _ => format!("{prefix}{}", d.name),
            };
            self.buffers.push(d);
            self.frames
                .slot
                .push((!param[i]).then_some(slot + i as u32));
        }
        // Each parameter home's copy of this call, loaded with the image.
        let mut loads: FxHashMap<BufId, BufId> = FxHashMap::default();
        for &h in &param_homes {
            let mut d = callee.buffers[h].clone();
            d.name = format!("{prefix}{}.load", d.name);
            loads.insert(h, self.buffers.len());
            ins.push((self.buffers.len(), h));
            self.buffers.push(d);
            self.frames.slot.push(None);
        }
        let r = Relocation {
            to,
            prefix,
            shift: 0,
        };
        for inp in callee.inputs.iter().filter(|i| i.load) {
            let mut at = r.stored(&inp.at);
            if let (Some((b, _)), Some((h, _))) = (&mut at.home, &inp.at.home) {
                *b = loads.get(h).copied().unwrap_or(*b);
            }
            match c.args.get(inp.arg) {
                Some(CallArg::Param(arg)) => self.inputs.push(HostInput {
                    arg: *arg,
                    load: true,
                    at,
                }),
                Some(CallArg::Const { value, .. }) => {
                    self.constants.push(ConstantDecl { value: *value, at })
                }
                _ => {}
            }
        }
        for cd in &callee.constants {
            self.constants.push(ConstantDecl {
                value: cd.value,
                at: r.stored(&cd.at),
            });
        }
        let ins: Vec<(BufId, BufId)> = ins.iter().map(|&(b, h)| (b, r.buf(h))).collect();
        let outs: Vec<(BufId, BufId)> = outs.iter().map(|&(o, b)| (r.buf(o), b)).collect();
        // An argument the call just before returned is copied from that
        // call's output buffer in the same set as its result (and only
        // there, when nothing else reads the result): one superstep
        // between chained calls.
        let mut fresh = Vec::new();
        let last = self.steps.len();
        let merge = pending.as_mut().filter(|p| p.step + 1 == last);
        match merge {
            Some(p) => {
                for (b, h) in ins {
                    match p.pairs.iter().position(|x| x.1 == b) {
                        Some(i) => {
                            p.pairs.push((p.pairs[i].0, h));
                            if uses.get(b) == Some(&2) {
                                p.pairs.remove(i);
                            }
                        }
                        None => fresh.push((b, h)),
                    }
                }
                let set = self.copy_set(p.name.clone(), "call results", &p.pairs, p.loc)?;
                self.steps[p.step] = set;
            }
            None => fresh = ins,
        }
        let push = |me: &mut Program, step: Step, copy: bool| {
            me.steps.push(step);
            me.frames.call_of_step.push(number);
            me.frames.copy_step.push(copy);
        };
        let shift = usize::from(!fresh.is_empty());
        if !fresh.is_empty() {
            let set =
                self.copy_set(format!("{}args", r.prefix), "call arguments", &fresh, c.loc)?;
            push(self, set, true);
        }
        for st in &callee.steps {
            push(self, r.step(st), false);
        }
        *pending = None;
        if !outs.is_empty() {
            let name = format!("{}results", r.prefix);
            let set = self.copy_set(name.clone(), "call results", &outs, c.loc)?;
            push(self, set, true);
            *pending = Some(Pending {
                step: self.steps.len() - 1,
                pairs: outs,
                name,
                loc: c.loc,
            });
        }
        Ok(Relocation { shift, ..r })
    }

    /// A compute set copying each pair's source buffer whole into its
    /// destination, on every tile of the destination (the same tiles and
    /// bytes, checked by [`Self::same_storage`]), with its estimate.
    fn copy_set(
        &self,
        name: String,
        label: &str,
        pairs: &[(BufId, BufId)],
        loc: ipu_ir::Loc,
    ) -> Result<Step, Diagnostic> {
        let mut cycles: FxHashMap<u32, u64> = FxHashMap::default();
        let mut copies = Vec::with_capacity(pairs.len());
        for &(src, dst) in pairs {
            let d = &self.buffers[dst];
            let len = u32::try_from(d.bytes).map_err(|_| {
                Diagnostic::error(
                    loc,
                    format!(
                        "'exchange.call' op copies @{}, of {} bytes",
                        d.name, d.bytes
                    ),
                )
            })?;
            let cost: u64 = crate::records::local_copy_calls(&[(0, 0, len)])
                .map_err(|e| Diagnostic::error(loc, e))?
                .iter()
                .map(|g| g.1)
                .sum();
            for &t in &d.tiles {
                *cycles.entry(t).or_default() += cost;
            }
            copies.push(Move {
                src,
                dst,
                transfers: d
                    .tiles
                    .iter()
                    .map(|&t| ipu_exchange_schedule::Transfer::unicast(t, 0, len, t, 0))
                    .collect::<Vec<_>>()
                    .into(),
            });
        }
        Ok(Step::Compute(ComputeSet {
            name,
            label: label.to_string(),
            cycles: Some(cycles.values().copied().max().unwrap_or(0)),
            bound: None,
            copies,
            vertices: Vec::new(),
            loc,
        }))
    }

    /// Checks that the caller's buffer `b` can stand for the callee's `cb`:
    /// the same tiles and bytes.
    fn same_storage(
        &self,
        callee: &Program,
        cb: BufId,
        b: BufId,
        c: &CallStep,
    ) -> Result<(), Diagnostic> {
        let (d, e) = (&callee.buffers[cb], &self.buffers[b]);
        if d.tiles != e.tiles || d.bytes != e.bytes {
            return Err(Diagnostic::error(
                c.loc,
                format!(
                    "'exchange.call' op binds @{} ({} bytes on {} tiles) to @{} of @{} ({} bytes on {} tiles)",
                    e.name,
                    e.bytes,
                    e.tiles.len(),
                    d.name,
                    c.callee,
                    d.bytes,
                    d.tiles.len()
                ),
            ));
        }
        Ok(())
    }

    /// Per buffer, how many times the program names it: in copies, moves,
    /// records, calls' arguments and results, outputs and probes.
    fn buffer_uses(&self) -> Vec<u32> {
        let mut n = vec![0u32; self.buffers.len()];
        let mut one = |b: BufId| {
            if let Some(x) = n.get_mut(b) {
                *x += 1;
            }
        };
        for s in &self.steps {
            match s {
                Step::Compute(c) => {
                    for m in &c.copies {
                        one(m.src);
                        one(m.dst);
                    }
                    for v in &c.vertices {
                        for w in &v.call.record {
                            if let Word::Buf(b, _) = w {
                                one(*b);
                            }
                        }
                    }
                }
                Step::Exchange(p) => {
                    for m in &p.moves {
                        one(m.src);
                        one(m.dst);
                    }
                }
                Step::Call(c) => {
                    for a in &c.args {
                        if let CallArg::Buffer(b) = a {
                            one(*b);
                        }
                    }
                    for &b in &c.results {
                        one(b);
                    }
                }
            }
        }
        for o in &self.outputs {
            one(o.at.buffer);
        }
        for p in &self.probes {
            one(p.at.buffer);
        }
        for i in &self.inputs {
            if let Some((b, _)) = &i.at.home {
                one(*b);
            }
            for p in &i.at.placements {
                one(p.buffer);
            }
        }
        n
    }

    /// Per step: the step of its callee's first call that it repeats
    /// exactly, when there is one. After [`Program::fold_frames`] a
    /// callee's step that names only frame buffers names the same buffers
    /// at every call, so the `i`-th step of a later call is then equal to
    /// the `i`-th of the first: an exchange phase with the same moves and
    /// recorded figures, or a compute set with the same copies, vertices
    /// and estimates whose step before is a repeat too (a local copy may
    /// run during the exchange before it). A repeated step's work (its
    /// schedule, rows and kernel records on each tile) is the first's.
    pub fn repeated_steps(&self) -> Vec<Option<usize>> {
        let mut out = vec![None; self.steps.len()];
        if !self.frames.folded {
            return out;
        }
        let mut first: FxHashMap<u32, std::ops::Range<usize>> = FxHashMap::default();
        for (r, callee) in self.frames.call_ranges() {
            let r0 = first.entry(callee).or_insert_with(|| r.clone()).clone();
            if r0 == r || r0.len() != r.len() {
                continue;
            }
            for (s0, s) in r0.zip(r) {
                let same = match (&self.steps[s0], &self.steps[s]) {
                    (Step::Exchange(a), Step::Exchange(b)) => {
                        a.moves == b.moves && a.figures == b.figures
                    }
                    (Step::Compute(a), Step::Compute(b)) => {
                        let (p, p0) = (s.checked_sub(1), s0.checked_sub(1));
                        let before = match p.map(|p| (p, &self.steps[p])) {
                            Some((p, Step::Exchange(_))) => p0.is_some() && out[p] == p0,
                            Some(_) => {
                                !matches!(p0.map(|p| &self.steps[p]), Some(Step::Exchange(_)))
                            }
                            None => false,
                        };
                        before
                            && a.copies == b.copies
                            && a.vertices == b.vertices
                            && (a.cycles, a.bound) == (b.cycles, b.bound)
                    }
                    _ => false,
                };
                if same {
                    out[s] = Some(s0);
                }
            }
        }
        out
    }

    /// Gives all calls of a callee one frame (after [`Program::check`] of
    /// the expanded program, which needs each buffer written once): the
    /// buffers of one frame slot become its first buffer, and a constant
    /// loaded into a frame buffer is loaded once. The other buffers stay,
    /// unused.
    pub fn fold_frames(&mut self) {
        if self.frames.call_of_step.is_empty() || self.frames.folded {
            return;
        }
        let mut first: FxHashMap<u32, BufId> = FxHashMap::default();
        let to: Vec<BufId> = (0..self.buffers.len())
            .map(|b| match self.frames.slot.get(b).copied().flatten() {
                Some(s) => *first.entry(s).or_insert(b),
                None => b,
            })
            .collect();
        let r = Relocation {
            to,
            prefix: String::new(),
            shift: 0,
        };
        for s in &mut self.steps {
            r.relocate(s);
        }
        for p in &mut self.probes {
            p.at.buffer = r.buf(p.at.buffer);
        }
        // A constant whose buffers are all another call's copies of frame
        // buffers is the first call's, loaded there already.
        let again = |b: BufId| r.to[b] != b;
        self.constants.retain(|cd| {
            let mut bufs = cd.at.home.iter().map(|h| h.0);
            let mut bufs = bufs
                .by_ref()
                .chain(cd.at.placements.iter().map(|p| p.buffer))
                .peekable();
            bufs.peek().is_none() || !bufs.all(again)
        });
        for cd in &mut self.constants {
            cd.at = r.stored(&cd.at);
        }
        for o in &mut self.outputs {
            o.at.buffer = r.buf(o.at.buffer);
        }
        for i in &mut self.inputs {
            i.at = r.stored(&i.at);
        }
        self.frames.folded = true;
    }
}
