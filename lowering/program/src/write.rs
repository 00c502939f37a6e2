//! Writing a [`Program`] as IR in the `exchange` dialect ([`Program::emit`]):
//! what `convert-tile-to-exchange` leaves in the function.

use crate::geometry::Layout;
use crate::model::*;
use crate::transfers::compress;
use ipu_dialects::machine::tiles_to_string;
use ipu_ir::{Attr, Context, Loc, Op, OperationState, Type, Value};
use ipu_package::TileSet;

fn build_op(
    cx: &mut Context,
    name: &str,
    operands: &[Value],
    results: &[Type],
    attrs: Vec<(&str, Attr)>,
    regions: u32,
    loc: Loc,
) -> Op {
    let n = cx.op_name(name);
    let mut st = OperationState::new(n, loc);
    st.operands.extend_from_slice(operands);
    st.result_types.extend_from_slice(results);
    let entries = attrs.into_iter().map(|(k, v)| (cx.sym(k), v)).collect();
    st.attrs = cx.dict_attr(entries);
    st.num_regions = regions;
    let op = cx.create_op(st);
    for i in 0..regions as usize {
        let r = cx.region(op, i);
        cx.create_block(r, &[]);
    }
    op
}

/// `count` rectangle groups, the k-th with every bound of `lo`/`hi` moved
/// by k * shift[1..] and every tile by k * shift[0].
struct RectRun {
    lo: Vec<i64>,
    hi: Vec<i64>,
    tiles: Vec<u32>,
    count: i64,
    shift: Option<Vec<i64>>,
}

impl RectRun {
    /// Takes the next group if it continues the run.
    fn extend(&mut self, lo: &[i64], hi: &[i64], tiles: &[u32]) -> bool {
        if tiles.len() != self.tiles.len() || lo.len() != self.lo.len() {
            return false;
        }
        let k = self.count;
        let dt = tiles[0] as i64 - self.tiles[0] as i64;
        let dlo: Vec<i64> = lo.iter().zip(&self.lo).map(|(a, b)| a - b).collect();
        let dhi: Vec<i64> = hi.iter().zip(&self.hi).map(|(a, b)| a - b).collect();
        let mut shift = vec![dt];
        shift.extend(&dlo);
        let step: Vec<i64> = match &self.shift {
            None => shift.clone(),
            Some(s) => s.clone(),
        };
        let same = shift.iter().zip(&step).all(|(a, b)| *a == b * k)
            && dlo == dhi
            && tiles
                .iter()
                .zip(&self.tiles)
                .all(|(a, b)| *a as i64 - *b as i64 == step[0] * k);
        if same {
            self.shift = Some(step);
            self.count += 1;
        }
        same
    }
}

fn tiles_attr(cx: &mut Context, tiles: &[u32]) -> Attr {
    let s = tiles_to_string(&TileSet::from_tiles(tiles.iter().copied()));
    cx.string_attr(&s)
}

impl Program {
    /// Replaces the body of function `f` with the program's ops.
    pub fn emit(&self, cx: &mut Context, f: Op, loc: Loc) {
        let entry = cx
            .entry_block(cx.region(f, 0))
            .expect("a function with a body");
        let args = cx.block_args(entry).to_vec();
        for op in cx.block_ops_vec(entry) {
            cx.erase_op(op);
        }
        let buf_ref = |cx: &mut Context, b: BufId| cx.symbol_ref_attr(&self.buffers[b].name);
        for b in &self.buffers {
            let mut attrs = vec![
                ("sym_name", cx.string_attr(&b.name)),
                ("tiles", tiles_attr(cx, &b.tiles)),
                ("bytes", cx.i64_attr(b.bytes as i64)),
            ];
            if b.interleaved {
                attrs.push(("interleaved", Attr::UNIT));
            }
            if !b.reads.is_empty() {
                let entries = b
                    .reads
                    .iter()
                    .map(|r| {
                        let e = vec![
                            (cx.sym("tiles"), tiles_attr(cx, &r.tiles)),
                            (
                                cx.sym("ranges"),
                                cx.i64_array_attr(vec![
                                    r.count as i64,
                                    r.len as i64,
                                    r.stride as i64,
                                ]),
                            ),
                        ];
                        cx.dict_attr(e)
                    })
                    .collect();
                attrs.push(("reads", cx.array_attr(entries)));
            }
            let op = build_op(cx, "exchange.buffer", &[], &[], attrs, 0, b.loc);
            cx.append_op(entry, op);
        }
        for i in &self.inputs {
            let mut attrs = self.stored_attrs(cx, &i.at);
            if i.load {
                attrs.push(("load", Attr::UNIT));
            }
            // A parameter the host widens when it loads it.
            if cx.value_type(args[i.arg]) != i.at.ty {
                attrs.push(("tile_type", cx.type_attr(i.at.ty)));
            }
            let op = build_op(
                cx,
                "exchange.host_input",
                &[args[i.arg]],
                &[],
                attrs,
                0,
                i.at.loc,
            );
            cx.append_op(entry, op);
        }
        for c in &self.constants {
            let mut attrs = self.stored_attrs(cx, &c.at);
            attrs.push(("value", c.value));
            let op = build_op(cx, "exchange.constant", &[], &[], attrs, 0, c.at.loc);
            cx.append_op(entry, op);
        }
        let mut probes = self.probes.iter().peekable();
        for (si, s) in self.steps.iter().enumerate() {
            let op = match s {
                Step::Compute(c) => self.emit_compute(cx, c),
                Step::Exchange(p) => self.emit_phase(cx, p),
                Step::Call(c) => {
                    // Not a superstep: the callee's steps end in their syncs.
                    let op = self.emit_call(cx, c, &args);
                    cx.append_op(entry, op);
                    continue;
                }
            };
            cx.append_op(entry, op);
            let sync = build_op(cx, "exchange.sync", &[], &[], vec![], 0, s.loc());
            cx.append_op(entry, sync);
            while let Some(pr) = probes.peek().filter(|pr| pr.after == si) {
                let Step::Compute(c) = &self.steps[pr.after] else {
                    unreachable!("probes follow compute sets (checked by Program::check)")
                };
                let attrs = vec![
                    ("buffer", buf_ref(cx, pr.at.buffer)),
                    ("mapping", pr.at.mapping.to_attr(cx)),
                    ("after", cx.symbol_ref_attr(&c.name)),
                    ("type", cx.type_attr(pr.at.ty)),
                    ("source", cx.string_attr(&pr.source)),
                    ("op", cx.string_attr(&pr.op)),
                ];
                let op = build_op(cx, "exchange.probe", &[], &[], attrs, 0, pr.at.loc);
                cx.append_op(entry, op);
                probes.next();
            }
        }
        let mut results = Vec::new();
        for o in &self.outputs {
            let mut attrs = vec![
                ("buffer", buf_ref(cx, o.at.buffer)),
                ("mapping", o.at.mapping.to_attr(cx)),
                ("name", cx.string_attr(&o.name)),
            ];
            if o.host_ty.is_some() {
                attrs.push(("tile_type", cx.type_attr(o.at.ty)));
            }
            let op = build_op(
                cx,
                "exchange.host_output",
                &[],
                &[o.host_ty.unwrap_or(o.at.ty)],
                attrs,
                0,
                o.at.loc,
            );
            cx.append_op(entry, op);
            results.push(cx.result(op, 0));
        }
        let ret = build_op(cx, "func.return", &results, &[], vec![], 0, loc);
        cx.append_op(entry, ret);
    }

    /// `buffer` and `mapping` of a home, and `placements`.
    fn stored_attrs(&self, cx: &mut Context, at: &Stored) -> Vec<(&'static str, Attr)> {
        let mut attrs = Vec::new();
        if let Some((b, m)) = &at.home {
            attrs.push(("buffer", cx.symbol_ref_attr(&self.buffers[*b].name)));
            attrs.push(("mapping", m.to_attr(cx)));
        }
        if !at.placements.is_empty() {
            let ps = at
                .placements
                .iter()
                .map(|p| {
                    // Rectangles grouped by extent, each with its tiles.
                    let mut groups: Vec<(&[i64], &[i64], Vec<u32>)> = Vec::new();
                    for r in &p.rects {
                        match groups
                            .iter_mut()
                            .find(|g| g.0 == r.lo.as_slice() && g.1 == r.hi.as_slice())
                        {
                            Some(g) => g.2.push(r.tile),
                            None => groups.push((&r.lo, &r.hi, vec![r.tile])),
                        }
                    }
                    // Consecutive groups that step evenly (rectangle and
                    // tiles) print as one, with a count and the step.
                    let mut runs: Vec<RectRun> = Vec::new();
                    for (lo, hi, tiles) in groups {
                        if let Some(r) = runs.last_mut() {
                            if r.extend(lo, hi, &tiles) {
                                continue;
                            }
                        }
                        runs.push(RectRun {
                            lo: lo.to_vec(),
                            hi: hi.to_vec(),
                            tiles,
                            count: 1,
                            shift: None,
                        });
                    }
                    let rects: Vec<Attr> = runs
                        .into_iter()
                        .map(|r| {
                            let mut e = vec![
                                (cx.sym("tiles"), tiles_attr(cx, &r.tiles)),
                                (cx.sym("lo"), cx.i64_array_attr(r.lo.clone())),
                                (cx.sym("hi"), cx.i64_array_attr(r.hi.clone())),
                            ];
                            if let Some(shift) = r.shift.filter(|_| r.count > 1) {
                                e.push((cx.sym("count"), cx.i64_attr(r.count)));
                                e.push((cx.sym("shift"), cx.i64_array_attr(shift)));
                            }
                            cx.dict_attr(e)
                        })
                        .collect();
                    let mut e = vec![
                        (
                            cx.sym("buffer"),
                            cx.symbol_ref_attr(&self.buffers[p.buffer].name),
                        ),
                        (cx.sym("rects"), cx.array_attr(rects)),
                    ];
                    if let Layout::Chunks { kc, rows } = p.layout {
                        e.push((cx.sym("chunks"), cx.i64_array_attr(vec![kc, rows])));
                    }
                    cx.dict_attr(e)
                })
                .collect();
            attrs.push(("placements", cx.array_attr(ps)));
        }
        attrs
    }

    fn word_attr(&self, cx: &mut Context, w: &Word) -> Attr {
        match *w {
            // Words with the top bit set read as negative (FP8 scales).
            Word::Val(v) => cx.i64_attr(v as i32 as i64),
            Word::Buf(b, 0) => cx.symbol_ref_attr(&self.buffers[b].name),
            Word::Buf(b, off) => {
                let r = cx.symbol_ref_attr(&self.buffers[b].name);
                let o = cx.i64_attr(off as i64);
                cx.array_attr(vec![r, o])
            }
        }
    }

    fn emit_compute(&self, cx: &mut Context, c: &ComputeSet) -> Op {
        let mut attrs = vec![
            ("sym_name", cx.string_attr(&c.name)),
            ("label", cx.string_attr(&c.label)),
        ];
        if let Some(cy) = c.cycles {
            attrs.push(("cycles", cx.i64_attr(cy as i64)));
        }
        if let Some(b) = c.bound {
            attrs.push(("bound", cx.i64_attr(b as i64)));
        }
        let op = build_op(cx, "exchange.compute_set", &[], &[], attrs, 1, c.loc);
        let body = cx.entry_block(cx.region(op, 0)).expect("created");
        for m in &c.copies {
            let o = self.emit_move(cx, "exchange.copy", m, c.loc);
            cx.append_op(body, o);
        }
        for v in &c.vertices {
            let record: Vec<Attr> = v
                .call
                .record
                .iter()
                .map(|w| self.word_attr(cx, w))
                .collect();
            let mut attrs = vec![
                ("tiles", tiles_attr(cx, &v.tiles)),
                ("record", cx.array_attr(record)),
            ];
            let Kernel::Lib(spec) = &v.call.kernel else {
                unreachable!("local copies are exchange.copy ops, not vertices")
            };
            attrs.push(("kernel", cx.string_attr(spec.source)));
            attrs.push(("name", cx.string_attr(&spec.name())));
            let params: Vec<_> = spec
                .params
                .iter()
                .map(|(k, &v)| (cx.sym(k), cx.i64_attr(v)))
                .collect();
            attrs.push(("params", cx.dict_attr(params)));
            if v.call.scratch > 0 {
                attrs.push(("scratch", cx.i64_attr(v.call.scratch as i64)));
            }
            let o = build_op(cx, "exchange.vertex", &[], &[], attrs, 0, c.loc);
            cx.append_op(body, o);
        }
        op
    }

    fn emit_phase(&self, cx: &mut Context, p: &PhaseDecl) -> Op {
        let f = &p.figures;
        let patterns: Vec<_> = f.patterns.iter().map(|l| cx.string_attr(l)).collect();
        let mut attrs: Vec<(&str, Attr)> = vec![
            ("sym_name", cx.string_attr(&p.name)),
            ("moves", cx.string_attr(&p.label)),
            ("kind", cx.string_attr(&f.kind)),
            ("patterns", cx.array_attr(patterns)),
        ];
        for (k, v) in [
            ("transfers", f.transfers),
            ("bytes", f.bytes),
            ("local_bytes", f.local_bytes),
            ("horizon", f.horizon),
            ("initial_horizon", f.initial_horizon),
            ("lower_bound", f.lower_bound),
            ("gap", f.gap),
            ("row_words", f.row_words),
        ] {
            attrs.push((k, cx.i64_attr(v as i64)));
        }
        let op = build_op(cx, "exchange.phase", &[], &[], attrs, 1, p.loc);
        let body = cx.entry_block(cx.region(op, 0)).expect("created");
        for m in &p.moves {
            let o = self.emit_move(cx, "exchange.move", m, p.loc);
            cx.append_op(body, o);
        }
        op
    }

    /// `exchange.call @callee(params) {args, results}`: the parameters
    /// passed are operands (the caller's arguments), `args` names each
    /// callee argument's binding (a constant parameter's value inline).
    fn emit_call(&self, cx: &mut Context, c: &CallStep, fn_args: &[Value]) -> Op {
        let mut params = Vec::new();
        let args: Vec<Attr> = c
            .args
            .iter()
            .map(|a| match *a {
                CallArg::Buffer(b) => cx.symbol_ref_attr(&self.buffers[b].name),
                CallArg::Param(k) => {
                    params.push(fn_args[k]);
                    cx.i64_attr(params.len() as i64 - 1)
                }
                CallArg::Const { value, .. } => value,
                CallArg::Unused => Attr::UNIT,
            })
            .collect();
        let results: Vec<Attr> = c
            .results
            .iter()
            .map(|&b| cx.symbol_ref_attr(&self.buffers[b].name))
            .collect();
        let attrs = vec![
            ("callee", cx.symbol_ref_attr(&c.callee)),
            ("args", cx.array_attr(args)),
            ("results", cx.array_attr(results)),
            ("source", cx.string_attr(&c.source)),
        ];
        build_op(cx, "exchange.call", &params, &[], attrs, 0, c.loc)
    }

    fn emit_move(&self, cx: &mut Context, name: &str, m: &Move, loc: Loc) -> Op {
        let runs: Vec<Attr> = compress(&m.transfers)
            .iter()
            .map(|r| cx.i64_array_attr(r.encode()))
            .collect();
        let attrs = vec![
            ("src", cx.symbol_ref_attr(&self.buffers[m.src].name)),
            ("dst", cx.symbol_ref_attr(&self.buffers[m.dst].name)),
            ("runs", cx.array_attr(runs)),
        ];
        build_op(cx, name, &[], &[], attrs, 0, loc)
    }
}
