//! Calls expanded ([`Program::expand_calls`]): each `exchange.call` of a
//! program replaced by the callee's steps, relocated to that call's
//! buffers.
//!
//! The callee's program was planned and scheduled once; a call binds its
//! activation inputs and its results to buffers of the caller laid out as
//! the callee's (checked here: the same tiles and bytes), and its
//! parameters to the caller's arguments, loaded straight into that call's
//! copies of the callee's operand buffers. Every other buffer of the callee
//! (and its constants) is the call's own. The expanded program is checked
//! again as a whole (`Program::check`) before the machine stage lowers it.

use crate::model::*;
use ipu_ir::Diagnostic;
use rustc_hash::FxHashMap;

/// Where each buffer of a callee goes in the caller, for one call.
struct Relocation {
    to: Vec<BufId>,
    prefix: String,
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

    fn moves(&self, ms: &[Move]) -> Vec<Move> {
        ms.iter()
            .map(|m| Move {
                src: self.buf(m.src),
                dst: self.buf(m.dst),
                transfers: m.transfers.clone(),
            })
            .collect()
    }

    fn step(&self, s: &Step) -> Step {
        match s {
            Step::Compute(c) => {
                let mut c = c.clone();
                c.name = format!("{}{}", self.prefix, c.name);
                c.copies = self.moves(&c.copies);
                for v in &mut c.vertices {
                    for w in &mut v.call.record {
                        if let Word::Buf(b, _) = w {
                            *b = self.buf(*b);
                        }
                    }
                }
                Step::Compute(c)
            }
            Step::Exchange(p) => {
                let mut p = p.clone();
                p.name = format!("{}{}", self.prefix, p.name);
                p.moves = self.moves(&p.moves);
                Step::Exchange(p)
            }
            Step::Call(c) => Step::Call(c.clone()),
        }
    }
}

impl Program {
    /// Whether some step calls another function's program.
    pub fn has_calls(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Call(_)))
    }

    /// The program with every call replaced by the callee's steps (the
    /// callee's program, itself without calls, from `callees`), relocated
    /// to the call's buffers. The callee's probes follow its steps, their
    /// sources the callee's op keys at the call's ([`CallStep::source`],
    /// [`ipu_ir::diag::key_in_call`]): one op of a callee is probed once
    /// per call.
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
        };
        let mut index = vec![0; self.steps.len()];
        let mut calls: Vec<(&str, usize)> = Vec::new();
        let mut probes: Vec<Probe> = Vec::new();
        for (i, s) in self.steps.iter().enumerate() {
            let Step::Call(c) = s else {
                index[i] = out.steps.len();
                out.steps.push(s.clone());
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
            let k = match calls.iter_mut().find(|(n, _)| *n == c.callee) {
                Some((_, k)) => {
                    *k += 1;
                    *k
                }
                None => {
                    calls.push((&c.callee, 0));
                    0
                }
            };
            let base = out.steps.len();
            let r = out.inline(callee, c, k)?;
            probes.extend(callee.probes.iter().map(|p| {
                let mut p = p.clone();
                p.after += base;
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

    /// Appends call `c` (the `k`-th of its callee) of `callee`; returns
    /// where the callee's buffers went.
    fn inline(
        &mut self,
        callee: &Program,
        c: &CallStep,
        k: usize,
    ) -> Result<Relocation, Diagnostic> {
        let err = |m: String| Diagnostic::error(c.loc, format!("'exchange.call' op {m}"));
        let mut to: Vec<Option<BufId>> = vec![None; callee.buffers.len()];
        if c.results.len() != callee.outputs.len() {
            return Err(err(format!(
                "binds {} results, but @{} has {}",
                c.results.len(),
                c.callee,
                callee.outputs.len()
            )));
        }
        for inp in &callee.inputs {
            let bind = c.args.get(inp.arg).copied().unwrap_or(CallArg::Unused);
            match (inp.load, bind, &inp.at.home) {
                (false, CallArg::Buffer(b), Some((home, _))) => {
                    self.bind(callee, &mut to, *home, b, c)?
                }
                (true, CallArg::Param(_), _) => {}
                (load, _, _) => {
                    let what = if load { "a parameter" } else { "an activation" };
                    let to = match bind {
                        CallArg::Buffer(b) => format!("buffer @{}", self.buffers[b].name),
                        CallArg::Param(k) => format!("argument #{k} of the caller"),
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
            self.bind(callee, &mut to, o.at.buffer, b, c)?;
        }
        let prefix = format!("{}{k}.", c.callee);
        for (i, d) in callee.buffers.iter().enumerate() {
            if to[i].is_none() {
                to[i] = Some(self.buffers.len());
                let mut d = d.clone();
                d.name = format!("{prefix}{}", d.name);
                self.buffers.push(d);
            }
        }
        let r = Relocation {
            to: to
                .into_iter()
                .map(|b| b.expect("every buffer placed"))
                .collect(),
            prefix,
        };
        for inp in callee.inputs.iter().filter(|i| i.load) {
            if let Some(CallArg::Param(arg)) = c.args.get(inp.arg) {
                self.inputs.push(HostInput {
                    arg: *arg,
                    load: true,
                    at: r.stored(&inp.at),
                });
            }
        }
        for cd in &callee.constants {
            self.constants.push(ConstantDecl {
                value: cd.value,
                at: r.stored(&cd.at),
            });
        }
        self.steps.extend(callee.steps.iter().map(|s| r.step(s)));
        Ok(r)
    }

    /// Binds the callee's buffer `cb` to the caller's `b`: the same tiles
    /// and bytes, and one caller buffer per callee buffer.
    fn bind(
        &mut self,
        callee: &Program,
        to: &mut [Option<BufId>],
        cb: BufId,
        b: BufId,
        c: &CallStep,
    ) -> Result<(), Diagnostic> {
        let (d, e) = (&callee.buffers[cb], &self.buffers[b]);
        let err = |m: String| Diagnostic::error(c.loc, format!("'exchange.call' op {m}"));
        if d.tiles != e.tiles || d.bytes != e.bytes {
            return Err(err(format!(
                "binds @{} ({} bytes on {} tiles) to @{} of @{} ({} bytes on {} tiles)",
                e.name,
                e.bytes,
                e.tiles.len(),
                d.name,
                c.callee,
                d.bytes,
                d.tiles.len()
            )));
        }
        match to[cb] {
            Some(x) if x != b => {
                return Err(err(format!(
                    "binds both @{} and @{} to @{} of @{}",
                    self.buffers[x].name, e.name, d.name, c.callee
                )))
            }
            _ => to[cb] = Some(b),
        }
        let reads = d.reads.clone();
        let interleaved = d.interleaved;
        let e = &mut self.buffers[b];
        e.interleaved |= interleaved;
        if !reads.is_empty() {
            if !e.reads.is_empty() && e.reads != reads {
                return Err(err(format!(
                    "binds @{}, which the caller's readers read, to @{} of @{}, which the callee's read",
                    e.name, d.name, c.callee
                )));
            }
            e.reads = reads;
        }
        Ok(())
    }
}
