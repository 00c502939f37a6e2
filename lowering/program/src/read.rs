//! Reading a [`Program`] back from the `exchange` dialect ([`Program::read`]):
//! all `convert-exchange-to-machine` looks at, so printing the exchange
//! stage, reading it back and lowering it gives the same package as the
//! one-shot pipeline.

use crate::geometry::{Block, Layout};
use crate::model::*;
use crate::transfers::expand;
use ipu_dialects::exchange::{self as ex, TransferRun};
use ipu_dialects::machine::parse_tiles;
use ipu_ir::types::AttrKind;
use ipu_ir::{Attr, Block as IrBlock, Context, Diagnostic, Op, Type};
use ipu_isa::kernels::KernelSpec;
use ipu_package::TileSet;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// A tile set within what a package can hold, checked before it is listed
/// tile by tile (`0 to 4000000000` would be billions).
fn parse_bounded_tiles(s: &str) -> Result<TileSet, String> {
    let t = parse_tiles(s)?;
    match t
        .runs
        .iter()
        .find(|r| r.last().is_none_or(|l| l >= ipu_package::MAX_TILES))
    {
        Some(r) => Err(format!(
            "the run from tile {} goes beyond the {} tiles a package can hold",
            r.first,
            ipu_package::MAX_TILES
        )),
        None => Ok(t),
    }
}

struct Reader<'a> {
    cx: &'a Context,
    names: FxHashMap<String, BufId>,
}

impl Reader<'_> {
    fn err(&self, op: Op, m: impl std::fmt::Display) -> Diagnostic {
        ipu_ir::verify::op_error(self.cx, op, m.to_string())
    }

    fn int(&self, op: Op, name: &str) -> Result<u64, Diagnostic> {
        match self.cx.get_int_attr(op, name) {
            Some(v) if v >= 0 && v <= u64::MAX as i128 => Ok(v as u64),
            _ => Err(self.err(op, format!("needs a non-negative integer '{name}'"))),
        }
    }

    fn str(&self, op: Op, name: &str) -> Result<String, Diagnostic> {
        self.cx
            .get_str_attr(op, name)
            .map(str::to_string)
            .ok_or_else(|| self.err(op, format!("needs a string '{name}'")))
    }

    fn buf_of(&self, op: Op, a: Attr) -> Result<BufId, Diagnostic> {
        match self.cx.attr_kind(a) {
            AttrKind::SymbolRef { root, nested } if nested.is_empty() => {
                let n = self.cx.str(*root);
                self.names.get(n).copied().ok_or_else(|| {
                    self.err(
                        op,
                        format!("refers to @{n}, which no exchange.buffer declares"),
                    )
                })
            }
            _ => Err(self.err(op, "expects a buffer reference @name")),
        }
    }

    fn buf(&self, op: Op, name: &str) -> Result<BufId, Diagnostic> {
        let a = self
            .cx
            .get_attr(op, name)
            .ok_or_else(|| self.err(op, format!("needs '{name}'")))?;
        self.buf_of(op, a)
    }

    fn placed(&self, op: Op, ty: Type) -> Result<Placed, Diagnostic> {
        let mapping = crate::geometry::mapping_of(self.cx, op)
            .ok_or_else(|| self.err(op, "needs a mapping"))?;
        if self.cx.tensor_parts(ty).is_none() {
            return Err(self.err(op, "places a value that is not a tensor"));
        }
        Ok(Placed::new(
            self.cx,
            self.buf(op, "buffer")?,
            mapping,
            ty,
            self.cx.op_loc(op),
        ))
    }

    /// A host input's or constant's home and placements.
    fn stored(&self, op: Op, ty: Type) -> Result<Stored, Diagnostic> {
        let cx = self.cx;
        if cx.tensor_parts(ty).is_none() {
            return Err(self.err(op, "places a value that is not a tensor"));
        }
        let mut at = Stored::new(cx, ty, cx.op_loc(op));
        if cx.get_attr(op, "buffer").is_some() || cx.get_attr(op, "mapping").is_some() {
            let mapping = crate::geometry::mapping_of(cx, op)
                .ok_or_else(|| self.err(op, "needs a mapping with its buffer"))?;
            at.home = Some((self.buf(op, "buffer")?, mapping));
        }
        if let Some(AttrKind::Array(ps)) = cx.get_attr(op, "placements").map(|a| cx.attr_kind(a)) {
            for &p in ps {
                let AttrKind::Dictionary(kv) = cx.attr_kind(p) else {
                    return Err(self.err(op, "placements are dictionaries"));
                };
                let get = |k: &str| kv.iter().find(|(n, _)| cx.str(*n) == k).map(|(_, v)| *v);
                let buffer = self.buf_of(
                    op,
                    get("buffer").ok_or_else(|| self.err(op, "a placement needs a buffer"))?,
                )?;
                let layout = match get("chunks").map(|a| cx.attr_kind(a)) {
                    None => Layout::RowMajor,
                    Some(AttrKind::I64Array(v)) if v.len() == 2 && v[0] > 0 && v[1] > 0 => {
                        Layout::Chunks {
                            kc: v[0],
                            rows: v[1],
                        }
                    }
                    Some(_) => {
                        return Err(self.err(op, "a placement's chunks are array<i64: kc, rows>"))
                    }
                };
                let Some(AttrKind::Array(rs)) = get("rects").map(|a| cx.attr_kind(a)) else {
                    return Err(self.err(op, "a placement needs rects"));
                };
                let mut rects = Vec::new();
                for &rr in rs {
                    let AttrKind::Dictionary(kv) = cx.attr_kind(rr) else {
                        return Err(self.err(op, "rects are dictionaries"));
                    };
                    let get = |k: &str| {
                        kv.iter()
                            .find(|(n, _)| cx.str(*n) == k)
                            .map(|(_, v)| cx.attr_kind(*v))
                    };
                    let (
                        Some(AttrKind::String(ts)),
                        Some(AttrKind::I64Array(lo)),
                        Some(AttrKind::I64Array(hi)),
                    ) = (get("tiles"), get("lo"), get("hi"))
                    else {
                        return Err(self.err(op, "a rect needs tiles, lo and hi"));
                    };
                    let tiles: Vec<u32> = parse_tiles(ts)
                        .map_err(|e| self.err(op, format!("rect tiles: {e}")))?
                        .iter()
                        .collect();
                    let rank = at.shape.len();
                    let (count, shift) = match (get("count"), get("shift")) {
                        (None, None) => (1, vec![0; rank + 1]),
                        (Some(AttrKind::Integer { value, .. }), Some(AttrKind::I64Array(sh)))
                            if (1..=1 << 20).contains(value) && sh.len() == rank + 1 =>
                        {
                            (*value as i64, sh.clone())
                        }
                        _ => return Err(self.err(op, "a rect's count (1 to 2^20) and shift (tile, then one per dimension) go together")),
                    };
                    for k in 0..count {
                        let lo: Vec<i64> = (0..rank).map(|d| lo[d] + k * shift[d + 1]).collect();
                        let hi: Vec<i64> = (0..rank).map(|d| hi[d] + k * shift[d + 1]).collect();
                        let inside = lo.len() == rank
                            && hi.len() == rank
                            && (0..rank)
                                .all(|d| 0 <= lo[d] && lo[d] < hi[d] && hi[d] <= at.shape[d]);
                        if !inside {
                            return Err(self.err(
                                op,
                                format!("a rect [{lo:?}, {hi:?}) is not inside {:?}", at.shape),
                            ));
                        }
                        for &t in &tiles {
                            let t = t as i64 + k * shift[0];
                            if !(0..=u32::MAX as i64).contains(&t) {
                                return Err(
                                    self.err(op, "a rect's shifted tile leaves the u32 range")
                                );
                            }
                            rects.push(Block {
                                tile: t as u32,
                                lo: lo.clone(),
                                hi: hi.clone(),
                            });
                        }
                    }
                }
                at.placements.push(Placement {
                    buffer,
                    layout,
                    rects,
                });
            }
        }
        if at.home.is_none() && at.placements.is_empty() {
            return Err(self.err(op, "needs a buffer and mapping, or placements"));
        }
        Ok(at)
    }

    fn tiles(&self, op: Op) -> Result<Vec<u32>, Diagnostic> {
        let s = self.str(op, "tiles")?;
        let t = parse_bounded_tiles(&s).map_err(|e| self.err(op, format!("tiles: {e}")))?;
        Ok(t.iter().collect())
    }

    fn word(&self, op: Op, a: Attr) -> Result<Word, Diagnostic> {
        match self.cx.attr_kind(a) {
            AttrKind::Integer { value, .. }
                if (i32::MIN as i128..=u32::MAX as i128).contains(value) =>
            {
                Ok(Word::Val(*value as i64 as u32))
            }
            AttrKind::SymbolRef { .. } => Ok(Word::Buf(self.buf_of(op, a)?, 0)),
            AttrKind::Array(pair) if pair.len() == 2 => match self.cx.attr_kind(pair[1]) {
                AttrKind::Integer { value, .. } if (0..=u32::MAX as i128).contains(value) => {
                    Ok(Word::Buf(self.buf_of(op, pair[0])?, *value as u32))
                }
                _ => Err(self.err(op, "a record entry [@b, offset] needs a 32-bit offset")),
            },
            _ => Err(self.err(
                op,
                "record entries are 32-bit integers, buffer references @b, or [@b, offset]",
            )),
        }
    }

    fn vertex(&self, op: Op) -> Result<Vertex, Diagnostic> {
        let cx = self.cx;
        let tiles = self.tiles(op)?;
        let Some(AttrKind::Array(words)) = cx.get_attr(op, "record").map(|a| cx.attr_kind(a))
        else {
            return Err(self.err(op, "needs a record array"));
        };
        let record = words
            .iter()
            .map(|&w| self.word(op, w))
            .collect::<Result<Vec<_>, _>>()?;
        let scratch = match cx.get_attr(op, "scratch") {
            Some(_) => self.int(op, "scratch")? as usize,
            None => 0,
        };
        let kernel = {
            let source = self.str(op, "kernel")?;
            let src = ipu_isa::kernels::source(&source)
                .ok_or_else(|| self.err(op, format!("names no library kernel '{source}'")))?;
            let Some(AttrKind::Dictionary(ps)) = cx.get_attr(op, "params").map(|a| cx.attr_kind(a))
            else {
                return Err(self.err(op, "needs its kernel's params"));
            };
            let mut params = BTreeMap::new();
            for (k, v) in ps {
                let AttrKind::Integer { value, .. } = cx.attr_kind(*v) else {
                    return Err(self.err(op, "kernel params are integers"));
                };
                let value = i64::try_from(*value)
                    .map_err(|_| self.err(op, "a kernel param leaves the i64 range"))?;
                params.insert(cx.str(*k).to_string(), value);
            }
            let spec = KernelSpec {
                source: src.name,
                entry: src.name,
                params,
            };
            let name = self.str(op, "name")?;
            if spec.name() != name {
                return Err(self.err(
                    op,
                    format!(
                        "is named '{name}', but kernel '{source}' with these params is '{}'",
                        spec.name()
                    ),
                ));
            }
            // The record as the kernel's declared layout has it.
            crate::records::check_record(&spec, &record, scratch).map_err(|e| self.err(op, e))?;
            Kernel::Lib(std::sync::Arc::new(spec))
        };
        Ok(Vertex {
            tiles,
            call: Call {
                kernel,
                record,
                scratch,
            },
        })
    }

    /// The `reads` of buffer declaration `op`: where its readers read.
    fn reads(&self, op: Op) -> Result<Vec<Reads>, Diagnostic> {
        let mut reads = Vec::new();
        if let Some(AttrKind::Array(es)) =
            self.cx.get_attr(op, "reads").map(|a| self.cx.attr_kind(a))
        {
            for &e in es {
                let AttrKind::Dictionary(kv) = self.cx.attr_kind(e) else {
                    return Err(self.err(op, "reads entries are dictionaries"));
                };
                let get = |k: &str| {
                    kv.iter()
                        .find(|(n, _)| self.cx.str(*n) == k)
                        .map(|(_, v)| self.cx.attr_kind(*v))
                };
                let (Some(AttrKind::String(ts)), Some(AttrKind::I64Array(rg))) =
                    (get("tiles"), get("ranges"))
                else {
                    return Err(self.err(op, "a reads entry needs tiles and ranges"));
                };
                let tiles = parse_bounded_tiles(ts)
                    .map_err(|e| self.err(op, format!("reads tiles: {e}")))?;
                let &[c, l, s] = &rg[..] else {
                    return Err(self.err(op, "ranges must be [count, len, stride]"));
                };
                if c < 1 || l < 1 || s < l {
                    return Err(self.err(op, "ranges must be [count, len, stride] with count, len >= 1 and stride >= len"));
                }
                reads.push(Reads {
                    tiles: tiles.iter().collect(),
                    count: c as u64,
                    len: l as u64,
                    stride: s as u64,
                });
            }
        }
        Ok(reads)
    }

    /// Compute set `op`: its local copies and vertices.
    fn compute_set(&self, op: Op) -> Result<ComputeSet, Diagnostic> {
        let mut vertices = Vec::new();
        let mut copies = Vec::new();
        for o in body_of(self.cx, op) {
            if ex::LocalCopy::isa(self.cx, o) {
                let m = self.read_move(o)?;
                if let Some(t) = m
                    .transfers
                    .iter()
                    .find(|t| t.dsts.len() != 1 || t.dsts[0].tile != t.src_tile)
                {
                    return Err(self.err(
                        o,
                        format!(
                            "copies from tile {} to another tile; exchange.copy stays on its tile",
                            t.src_tile
                        ),
                    ));
                }
                copies.push(m);
            } else {
                vertices.push(self.vertex(o)?);
            }
        }
        let cycles = match self.cx.get_attr(op, "cycles") {
            Some(_) => Some(self.int(op, "cycles")?),
            None => None,
        };
        let bound = match self.cx.get_attr(op, "bound") {
            Some(_) => Some(self.int(op, "bound")?),
            None => None,
        };
        Ok(ComputeSet {
            name: self.str(op, "sym_name")?,
            label: self.str(op, "label")?,
            cycles,
            bound,
            copies,
            vertices,
            loc: self.cx.op_loc(op),
        })
    }

    fn read_move(&self, m: Op) -> Result<Move, Diagnostic> {
        let cx = self.cx;
        let Some(AttrKind::Array(runs)) = cx.get_attr(m, "runs").map(|a| cx.attr_kind(a)) else {
            return Err(self.err(m, "needs runs"));
        };
        let mut decoded = Vec::new();
        let mut total = 0u64;
        for &r in runs {
            let AttrKind::I64Array(v) = cx.attr_kind(r) else {
                return Err(self.err(m, "a run is an array<i64: ...>"));
            };
            let run = TransferRun::decode(v).map_err(|e| self.err(m, e))?;
            total += run.len();
            if total > ipu_dialects::exchange::MAX_MOVE_TRANSFERS {
                return Err(self.err(m, "holds too many transfers"));
            }
            decoded.push(run);
        }
        Ok(Move {
            src: self.buf(m, "src")?,
            dst: self.buf(m, "dst")?,
            transfers: expand(&decoded).into(),
        })
    }

    fn phase(&self, op: Op, body: &[Op]) -> Result<PhaseDecl, Diagnostic> {
        let cx = self.cx;
        let moves = body
            .iter()
            .map(|&m| self.read_move(m))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(AttrKind::Array(pats)) = cx.get_attr(op, "patterns").map(|a| cx.attr_kind(a))
        else {
            return Err(self.err(op, "needs patterns"));
        };
        let patterns = pats
            .iter()
            .map(|&p| match cx.attr_kind(p) {
                AttrKind::String(s) => Ok(s.to_string()),
                _ => Err(self.err(op, "patterns are strings")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PhaseDecl {
            name: self.str(op, "sym_name")?,
            label: self.str(op, "moves")?,
            moves,
            figures: PhaseFigures {
                transfers: self.int(op, "transfers")?,
                bytes: self.int(op, "bytes")?,
                local_bytes: self.int(op, "local_bytes")?,
                horizon: self.int(op, "horizon")?,
                initial_horizon: self.int(op, "initial_horizon")?,
                lower_bound: self.int(op, "lower_bound")?,
                gap: self.int(op, "gap")?,
                kind: self.str(op, "kind")?,
                row_words: self.int(op, "row_words")?,
                patterns,
            },
            loc: cx.op_loc(op),
        })
    }
}

impl Reader<'_> {
    /// An `exchange.call`: each binding a buffer, an operand (a parameter
    /// of the caller, by its argument index), a constant's elements (a
    /// parameter bound to a constant) or unit.
    fn call(&self, op: Op, fn_args: &[ipu_ir::Value]) -> Result<CallStep, Diagnostic> {
        let cx = self.cx;
        let callee = match cx.get_attr(op, "callee").map(|a| cx.attr_kind(a)) {
            Some(AttrKind::SymbolRef { root, nested }) if nested.is_empty() => {
                cx.str(*root).to_string()
            }
            _ => return Err(self.err(op, "needs a callee @name")),
        };
        let list = |name: &str| match cx.get_attr(op, name).map(|a| cx.attr_kind(a)) {
            Some(AttrKind::Array(v)) => Ok(v.clone()),
            _ => Err(self.err(op, format!("needs an array '{name}'"))),
        };
        let mut args = Vec::new();
        for a in list("args")? {
            args.push(match cx.attr_kind(a) {
                AttrKind::SymbolRef { .. } => CallArg::Buffer(self.buf_of(op, a)?),
                AttrKind::Unit => CallArg::Unused,
                AttrKind::DenseElements { ty, .. } | AttrKind::DenseResource { ty, .. } => {
                    CallArg::Const { value: a, ty: *ty }
                }
                AttrKind::Integer { value, .. } => {
                    let v = usize::try_from(*value)
                        .ok()
                        .and_then(|k| cx.operands(op).get(k).copied())
                        .ok_or_else(|| {
                            self.err(op, format!("binds operand {value}, which it does not have"))
                        })?;
                    let k = fn_args.iter().position(|&x| x == v).ok_or_else(|| {
                        self.err(
                            op,
                            "passes a parameter that is not an argument of the function",
                        )
                    })?;
                    CallArg::Param(k)
                }
                _ => {
                    return Err(self.err(
                        op,
                        "binds an argument to something other than a buffer @b, an operand index, \
                         a constant's elements or unit",
                    ))
                }
            });
        }
        let results = list("results")?
            .into_iter()
            .map(|a| self.buf_of(op, a))
            .collect::<Result<_, _>>()?;
        Ok(CallStep {
            callee,
            args,
            results,
            source: self.str(op, "source")?,
            loc: cx.op_loc(op),
        })
    }
}

fn body_of(cx: &Context, op: Op) -> Vec<Op> {
    cx.entry_block(cx.region(op, 0))
        .map(|b: IrBlock| cx.block_ops_vec(b))
        .unwrap_or_default()
}

impl Program {
    /// Reads the exchange-stage program of function `f`.
    pub fn read(cx: &Context, f: Op) -> Result<Program, Diagnostic> {
        let entry = cx
            .entry_block(cx.region(f, 0))
            .ok_or_else(|| ipu_ir::verify::op_error(cx, f, "has no body"))?;
        let args = cx.block_args(entry).to_vec();
        let ops = cx.block_ops_vec(entry);
        let mut r = Reader {
            cx,
            names: FxHashMap::default(),
        };
        let mut p = Program::default();
        // Buffers first: they may be referenced before their declaration.
        for &op in &ops {
            if ex::Buffer::isa(cx, op) {
                let name = r.str(op, "sym_name")?;
                if r.names.contains_key(&name) {
                    return Err(r.err(op, format!("declares buffer @{name} a second time")));
                }
                let mut tiles = r.tiles(op)?;
                tiles.sort_unstable();
                tiles.dedup();
                let reads = r.reads(op)?;
                r.names.insert(name.clone(), p.buffers.len());
                p.buffers.push(BufferDecl {
                    name,
                    tiles,
                    bytes: r.int(op, "bytes")?,
                    interleaved: cx.get_attr(op, "interleaved").is_some(),
                    reads,
                    loc: cx.op_loc(op),
                });
            }
        }
        let mut expect_sync = false;
        let mut last_step = None;
        // Probes by the compute set they follow, resolved once all are read.
        let mut probes: Vec<(Op, String, Probe)> = Vec::new();
        for &op in &ops {
            let name = cx.name_str(op);
            if expect_sync && name != ex::Sync::NAME {
                return Err(r.err(
                    last_step.unwrap_or(op),
                    "is not followed by an exchange.sync; every superstep ends with one",
                ));
            }
            match name {
                ex::Buffer::NAME | ipu_dialects::func::Return::NAME => {}
                ex::HostInput::NAME => {
                    let a = cx.operand(op, 0);
                    let arg = args
                        .iter()
                        .position(|&x| x == a)
                        .ok_or_else(|| r.err(op, "streams a value that is not an argument of the function"))?;
                    p.inputs.push(HostInput {
                        arg,
                        load: cx.get_attr(op, "load").is_some(),
                        at: r.stored(op, ipu_dialects::exchange::host_input_tile_type(cx, op))?,
                    });
                }
                ex::Constant::NAME => {
                    let value = cx
                        .get_attr(op, "value")
                        .ok_or_else(|| r.err(op, "needs a value"))?;
                    let ty = match cx.attr_kind(value) {
                        AttrKind::DenseElements { ty, .. } | AttrKind::DenseResource { ty, .. } => *ty,
                        _ => return Err(r.err(op, "needs a dense elements value")),
                    };
                    p.constants.push(ConstantDecl {
                        value,
                        at: r.stored(op, ty)?,
                    });
                }
                ex::HostOutput::NAME => {
                    let host = cx.value_type(cx.result(op, 0));
                    let tile = ipu_dialects::exchange::host_output_tile_type(cx, op);
                    p.outputs.push(HostOutput {
                        name: r.str(op, "name")?,
                        at: r.placed(op, tile)?,
                        host_ty: (host != tile).then_some(host),
                    });
                }
                ex::Probe::NAME => {
                    let Some(AttrKind::Type(ty)) = cx.get_attr(op, "type").map(|a| cx.attr_kind(a))
                    else {
                        return Err(r.err(op, "needs a tensor 'type'"));
                    };
                    let after = match cx.get_attr(op, "after").map(|a| cx.attr_kind(a)) {
                        Some(AttrKind::SymbolRef { root, nested }) if nested.is_empty() => {
                            cx.str(*root).to_string()
                        }
                        _ => return Err(r.err(op, "needs 'after', a compute set reference @name")),
                    };
                    let probe = Probe {
                        after: 0,
                        at: r.placed(op, *ty)?,
                        source: r.str(op, "source")?,
                        op: r.str(op, "op")?,
                    };
                    probes.push((op, after, probe));
                }
                ex::ComputeSet::NAME => {
                    p.steps.push(Step::Compute(r.compute_set(op)?));
                    expect_sync = true;
                    last_step = Some(op);
                }
                ex::Phase::NAME => {
                    let body = body_of(cx, op);
                    p.steps.push(Step::Exchange(r.phase(op, &body)?));
                    expect_sync = true;
                    last_step = Some(op);
                }
                ex::Call::NAME => p.steps.push(Step::Call(r.call(op, &args)?)),
                ex::Sync::NAME => {
                    if !expect_sync {
                        return Err(r.err(op, "ends no superstep (two syncs in a row, or a sync before the first step)"));
                    }
                    expect_sync = false;
                }
                other => {
                    return Err(r.err(
                        op,
                        format!("is not an exchange-stage op; convert-exchange-to-machine reads only the exchange dialect (is '{other}' lowered yet? run convert-tile-to-exchange first)"),
                    ))
                }
            }
        }
        if expect_sync {
            return Err(r.err(
                last_step.unwrap_or(f),
                "is not followed by an exchange.sync; every superstep ends with one",
            ));
        }
        let sets: FxHashMap<&str, usize> = p
            .steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Step::Compute(c) => Some((c.name.as_str(), i)),
                Step::Exchange(_) | Step::Call(_) => None,
            })
            .collect();
        let mut resolved = Vec::with_capacity(probes.len());
        for (op, after, mut probe) in probes {
            probe.after = *sets.get(after.as_str()).ok_or_else(|| {
                r.err(
                    op,
                    format!("probes after @{after}, which is not a compute set of the function"),
                )
            })?;
            resolved.push(probe);
        }
        // Stable: probes after one compute set keep their order.
        resolved.sort_by_key(|pr| pr.after);
        p.probes = resolved;
        Ok(p)
    }
}
