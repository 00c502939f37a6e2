//! Upstream ops to `nn` ops.
//!
//! Every upstream SSA value maps to a [`Mapped`]: an `nn` value, a constant
//! kept as a reference tensor until an op needs it as an operand (so
//! constants that only feed zero points, shifts or shapes leave no op
//! behind), a shape (`!tosa.shape`), or an uninitialised tensor
//! (`tensor.empty`), which is an error to read. Scalars (inside
//! `linalg.generic` bodies, `linalg.fill` values) are rank-0 tensors.

use crate::upstream::{ir_attr, ir_loc, ir_type, plain_loc, text, PlainLoc};
use ipu_dialects::nn;
use ipu_ir::types::AttrKind;
use ipu_ir::{Block, Context, Diagnostic, Loc, Op, OperationState, Type, Value};
use ipu_reference::{ElementType, OpKind, ReduceKind, Tensor, TensorData, TensorType};
use melior::ir::attribute::{
    ArrayAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, FloatAttribute,
    IntegerAttribute, TypeAttribute,
};
use melior::ir::block::BlockLike;
use melior::ir::operation::OperationLike;
use melior::ir::{BlockRef, OperationRef, RegionLike, ValueLike};
use std::collections::HashMap;
use std::rc::Rc;

type MOp<'c, 'a> = OperationRef<'c, 'a>;

/// Converts one upstream op (named, for converters shared by a family)
/// into `nn` ops, recording its results.
type Convert<'x> = fn(&mut Importer<'x>, &MOp<'_, '_>, &str, Loc) -> Result<(), Diagnostic>;

/// Largest rank of a `!tosa.shape` constant.
const MAX_SHAPE_RANK: usize = 64;
/// Largest constant (in elements) the importer expands into a tensor.
const MAX_CONSTANT_ELEMENTS: usize = 1 << 26;

#[derive(Clone, Debug)]
enum Mapped {
    Value(Value),
    Const {
        tensor: Rc<Tensor>,
        loc: Loc,
        value: Option<Value>,
    },
    Shape(Vec<i64>),
    Empty,
    /// A constant the nn dialect cannot hold (an `index` scalar, say): an
    /// error only where it is used.
    Invalid(Diagnostic),
}

/// Identity of an upstream value.
fn key<'c>(v: impl ValueLike<'c>) -> usize {
    v.to_raw().ptr as usize
}

fn op_name(op: &MOp<'_, '_>) -> String {
    op.name()
        .as_string_ref()
        .as_str()
        .unwrap_or("?")
        .to_string()
}

/// Operand `i`, without melior's out-of-range path (which prints the op).
fn operand_at<'c, 'a>(op: &MOp<'c, 'a>, i: usize) -> Result<melior::ir::Value<'c, 'a>, ()> {
    if i < op.operand_count() {
        op.operand(i).map_err(|_| ())
    } else {
        Err(())
    }
}

/// Result `i`, without melior's out-of-range path.
fn result_at<'c, 'a>(
    op: &MOp<'c, 'a>,
    i: usize,
) -> Result<melior::ir::operation::OperationResult<'c, 'a>, ()> {
    if i < op.result_count() {
        op.result(i).map_err(|_| ())
    } else {
        Err(())
    }
}

/// The first block of the first region.
fn body_block<'c, 'a>(op: &MOp<'c, 'a>) -> Option<BlockRef<'c, 'a>> {
    if op.region_count() == 0 {
        return None;
    }
    op.region(0).ok().and_then(|r| r.first_block())
}

/// Operations of a block, in order.
fn block_ops<'c, 'a>(b: BlockRef<'c, 'a>) -> Vec<MOp<'c, 'a>> {
    let mut out = Vec::new();
    let mut cur = b.first_operation();
    while let Some(op) = cur {
        out.push(op);
        cur = op.next_in_block();
    }
    out
}

/// The largest finite value of a float element type.
fn max_finite(e: ElementType) -> Option<f64> {
    Some(match e {
        ElementType::F32 => f32::MAX as f64,
        ElementType::F64 => f64::MAX,
        ElementType::F16 => 65504.0,
        ElementType::BF16 => 3.389_531_389_251_535_5e38,
        _ => return None,
    })
}

/// Range of a signed integer element type.
fn int_range(e: ElementType) -> Option<(i64, i64)> {
    Some(match e {
        ElementType::I8 => (i8::MIN as i64, i8::MAX as i64),
        ElementType::I16 => (i16::MIN as i64, i16::MAX as i64),
        ElementType::I32 => (i32::MIN as i64, i32::MAX as i64),
        ElementType::I64 => (i64::MIN, i64::MAX),
        _ => return None,
    })
}

/// A tensor of `shape` filled with the single element of `t`.
fn splat(t: &Tensor, shape: Vec<usize>) -> Result<Tensor, String> {
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= MAX_CONSTANT_ELEMENTS)
        .ok_or_else(|| format!("a fill larger than {MAX_CONSTANT_ELEMENTS} elements"))?;
    match t.data() {
        TensorData::F32(v) => Tensor::from_f32(shape, t.dtype(), vec![v[0]; n]),
        TensorData::I64(v) => Tensor::from_i64(shape, t.dtype(), vec![v[0]; n]),
    }
    .map_err(|e| e.to_string())
}

/// A rank-0 tensor of element type `e` holding `v`.
fn scalar(e: ElementType, v: f64) -> Result<Tensor, String> {
    if e.is_float() {
        Tensor::from_f32(vec![], e, vec![v as f32])
    } else {
        Tensor::from_i64(vec![], e, vec![v as i64])
    }
    .map_err(|e| e.to_string())
}

/// Whether every element of `t` is the identity of the reduction `k`.
fn is_identity(t: &Tensor, k: ReduceKind) -> bool {
    match (t.data(), k) {
        (TensorData::F32(v), ReduceKind::Sum) => v.iter().all(|&x| x == 0.0),
        (TensorData::F32(v), ReduceKind::Prod) => v.iter().all(|&x| x == 1.0),
        (TensorData::F32(v), ReduceKind::Max) => v.iter().all(|&x| x == f32::NEG_INFINITY),
        (TensorData::F32(v), ReduceKind::Min) => v.iter().all(|&x| x == f32::INFINITY),
        (TensorData::I64(v), ReduceKind::Sum) => v.iter().all(|&x| x == 0),
        (TensorData::I64(v), ReduceKind::Prod) => v.iter().all(|&x| x == 1),
        (TensorData::I64(v), ReduceKind::Max) => {
            int_range(t.dtype()).is_some_and(|(lo, _)| v.iter().all(|&x| x == lo))
        }
        (TensorData::I64(v), ReduceKind::Min) => {
            int_range(t.dtype()).is_some_and(|(_, hi)| v.iter().all(|&x| x == hi))
        }
        _ => false,
    }
}

fn all_zero(t: &Tensor) -> bool {
    match t.data() {
        TensorData::F32(v) => v.iter().all(|&x| x == 0.0),
        TensorData::I64(v) => v.iter().all(|&x| x == 0),
    }
}

/// An indexing map: its number of dimensions, and per result the dimension
/// it reads (None: index 0).
type UnitMap = (usize, Vec<Option<usize>>);

/// An affine map that only permutes or drops dimensions, or reads index 0
/// of a (size-1) operand dimension: `(d0, ..., dn-1) -> (dI, 0, dJ, ...)`,
/// as (n, [Some(I), None, Some(J), ...]).
fn projection_with_units(text: &str) -> Option<UnitMap> {
    let body = text.strip_prefix("affine_map<")?.strip_suffix('>')?;
    let (dims, results) = body.split_once("->")?;
    let list = |s: &str| -> Option<Vec<String>> {
        let s = s.trim().strip_prefix('(')?.strip_suffix(')')?;
        Some(
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect(),
        )
    };
    let dims = list(dims)?;
    for (i, d) in dims.iter().enumerate() {
        if *d != format!("d{i}") {
            return None;
        }
    }
    let results = list(results)?
        .iter()
        .map(|r| {
            if r == "0" {
                return Some(None);
            }
            r.strip_prefix('d')
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n < dims.len())
                .map(Some)
        })
        .collect::<Option<Vec<_>>>()?;
    let mut seen: Vec<usize> = results.iter().flatten().copied().collect();
    let n = seen.len();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != n {
        return None;
    }
    Some((dims.len(), results))
}

/// Elementwise ops shared by tensors at function level and scalars in
/// `linalg.generic` bodies.
fn elementwise_kind(name: &str, op: &MOp<'_, '_>) -> Option<OpKind> {
    Some(match name {
        "arith.addf" | "arith.addi" => OpKind::Add,
        "arith.subf" | "arith.subi" => OpKind::Sub,
        "arith.mulf" | "arith.muli" => OpKind::Mul,
        "arith.divf" | "arith.divsi" => OpKind::Div,
        "arith.maximumf" => OpKind::Max,
        "arith.minimumf" => OpKind::Min,
        "arith.maxsi" => OpKind::Max,
        "arith.minsi" => OpKind::Min,
        "arith.negf" => OpKind::Neg,
        "arith.select" => OpKind::Select,
        "arith.andi" if i1_result(op) => OpKind::And,
        "arith.ori" if i1_result(op) => OpKind::Or,
        "arith.cmpf" => {
            // oeq = 1, ogt = 2, olt = 4: false when either side is NaN.
            match IntegerAttribute::try_from(op.attribute("predicate").ok()?)
                .ok()?
                .value()
            {
                1 => OpKind::Equal,
                2 => OpKind::Greater,
                4 => OpKind::Less,
                _ => return None,
            }
        }
        "arith.cmpi" => {
            // eq = 0, slt = 2, sgt = 4.
            match IntegerAttribute::try_from(op.attribute("predicate").ok()?)
                .ok()?
                .value()
            {
                0 => OpKind::Equal,
                2 => OpKind::Less,
                4 => OpKind::Greater,
                _ => return None,
            }
        }
        "math.exp" => OpKind::Exp,
        "math.log" => OpKind::Log,
        "math.sqrt" => OpKind::Sqrt,
        "math.rsqrt" => OpKind::Rsqrt,
        "math.tanh" => OpKind::Tanh,
        "math.erf" => OpKind::Erf,
        "math.absf" | "math.absi" => OpKind::Abs,
        "math.floor" => OpKind::Floor,
        "math.ceil" => OpKind::Ceil,
        "math.roundeven" => OpKind::Round,
        "math.powf" => OpKind::Pow,
        _ => return None,
    })
}

fn i1_result(op: &MOp<'_, '_>) -> bool {
    result_at(op, 0)
        .map(|r| {
            let t = text(r.r#type());
            t == "i1" || t.ends_with("xi1>") || t == "tensor<i1>"
        })
        .unwrap_or(false)
}

/// Named elementwise linalg ops (their init operand is not read).
fn linalg_elementwise(name: &str) -> Option<OpKind> {
    Some(match name {
        "linalg.add" => OpKind::Add,
        "linalg.sub" => OpKind::Sub,
        "linalg.mul" => OpKind::Mul,
        "linalg.div" => OpKind::Div,
        "linalg.max" => OpKind::Max,
        "linalg.min" => OpKind::Min,
        "linalg.powf" => OpKind::Pow,
        "linalg.exp" => OpKind::Exp,
        "linalg.log" => OpKind::Log,
        "linalg.abs" => OpKind::Abs,
        "linalg.ceil" => OpKind::Ceil,
        "linalg.floor" => OpKind::Floor,
        "linalg.negf" => OpKind::Neg,
        "linalg.reciprocal" => OpKind::Reciprocal,
        "linalg.sqrt" => OpKind::Sqrt,
        "linalg.rsqrt" => OpKind::Rsqrt,
        "linalg.tanh" => OpKind::Tanh,
        "linalg.erf" => OpKind::Erf,
        _ => return None,
    })
}

/// TOSA elementwise ops without extra operands or attributes that matter.
fn tosa_simple(name: &str) -> Option<(OpKind, usize)> {
    Some(match name {
        "tosa.add" => (OpKind::Add, 2),
        "tosa.sub" => (OpKind::Sub, 2),
        "tosa.pow" => (OpKind::Pow, 2),
        "tosa.equal" => (OpKind::Equal, 2),
        "tosa.greater" => (OpKind::Greater, 2),
        "tosa.logical_and" => (OpKind::And, 2),
        "tosa.logical_or" => (OpKind::Or, 2),
        "tosa.logical_not" => (OpKind::Not, 1),
        "tosa.select" => (OpKind::Select, 3),
        "tosa.reciprocal" => (OpKind::Reciprocal, 1),
        "tosa.exp" => (OpKind::Exp, 1),
        "tosa.log" => (OpKind::Log, 1),
        "tosa.rsqrt" => (OpKind::Rsqrt, 1),
        "tosa.tanh" => (OpKind::Tanh, 1),
        "tosa.erf" => (OpKind::Erf, 1),
        "tosa.sigmoid" => (OpKind::Sigmoid, 1),
        "tosa.abs" => (OpKind::Abs, 1),
        "tosa.floor" => (OpKind::Floor, 1),
        "tosa.ceil" => (OpKind::Ceil, 1),
        _ => return None,
    })
}

pub(crate) struct Importer<'x> {
    cx: &'x mut Context,
    filename: String,
    values: HashMap<usize, Mapped>,
    block: Option<Block>,
}

impl<'x> Importer<'x> {
    pub(crate) fn new(cx: &'x mut Context, filename: &str) -> Self {
        Importer {
            cx,
            filename: filename.to_string(),
            values: HashMap::new(),
            block: None,
        }
    }

    fn loc(&mut self, l: melior::ir::Location<'_>) -> Loc {
        let p = plain_loc(l);
        ir_loc(self.cx, &self.filename, &p)
    }

    fn op_loc(&mut self, op: &MOp<'_, '_>) -> Loc {
        self.loc(op.location())
    }

    fn err(&mut self, op: &MOp<'_, '_>, msg: impl std::fmt::Display) -> Diagnostic {
        let loc = self.op_loc(op);
        Diagnostic::error(loc, format!("'{}' op {msg}", op_name(op)))
    }

    // ---- structure ----------------------------------------------------------

    pub(crate) fn module(&mut self, m: MOp<'_, '_>) -> Result<Op, Diagnostic> {
        let first = body_block(&m).and_then(|b| b.first_operation());
        // An implicit module is at line 0 upstream; ours sits at its first op.
        let loc = match (plain_loc(m.location()), first) {
            (PlainLoc::File { line: 0, .. }, Some(f)) => self.op_loc(&f),
            _ => self.op_loc(&m),
        };
        let module = ipu_ir::builtin::create_module(self.cx, loc);
        if let Some(a) = self.copied_attr(&m, "sym_name") {
            self.cx.set_attr(module, "sym_name", a);
        }
        let body = self
            .cx
            .entry_block(self.cx.region(module, 0))
            .expect("a new module has a body");
        let Some(block) = body_block(&m) else {
            return Err(self.err(&m, "has no body"));
        };
        for op in block_ops(block) {
            match op_name(&op).as_str() {
                "func.func" => self.func(op, body)?,
                _ => {
                    return Err(
                        self.err(&op, "is not supported at module level by the MLIR importer")
                    )
                }
            }
        }
        ipu_ir::verify::verify(self.cx, module).map_err(|d| {
            let msg = format!("imported IR does not verify: {}", d.message);
            Diagnostic::error(d.loc, msg)
        })?;
        Ok(module)
    }

    fn func(&mut self, f: MOp<'_, '_>, parent: Block) -> Result<(), Diagnostic> {
        let loc = self.op_loc(&f);
        let name = self
            .copied_attr(&f, "sym_name")
            .and_then(|a| match self.cx.attr_kind(a) {
                AttrKind::String(s) => Some(s.to_string()),
                _ => None,
            })
            .ok_or_else(|| self.err(&f, "has no symbol name the IR can hold"))?;
        let fty = f
            .attribute("function_type")
            .ok()
            .and_then(|a| TypeAttribute::try_from(a).ok())
            .map(|t| t.value())
            .ok_or_else(|| self.err(&f, "has no function type"))?;
        let fty = ir_type(self.cx, fty).map_err(|m| self.err(&f, m))?;
        let Some(entry_up) = body_block(&f) else {
            return Err(self.err(
                &f,
                format!("@{name} is a declaration, which the importer does not take"),
            ));
        };
        if entry_up.next_in_region().is_some() {
            return Err(self.err(
                &f,
                format!("@{name} has several blocks (control flow), which nn cannot express"),
            ));
        }
        let mut args = Vec::new();
        for i in 0..entry_up.argument_count() {
            let a = entry_up
                .argument(i)
                .map_err(|e| self.err(&f, e.to_string()))?;
            let t = ir_type(self.cx, a.r#type()).map_err(|m| self.err(&f, m))?;
            if let Err(m) = nn::tensor_type(self.cx, t) {
                return Err(self.err(&f, format!("argument #{i}: {m}")));
            }
            let l = self.loc(a.location());
            args.push((t, l, key(a)));
        }
        let mut attrs = vec![
            (self.cx.sym("sym_name"), self.cx.string_attr(&name)),
            (self.cx.sym("function_type"), self.cx.type_attr(fty)),
        ];
        if let Some(v) = self.copied_attr(&f, "sym_visibility") {
            attrs.push((self.cx.sym("sym_visibility"), v));
        }
        let op_name = self.cx.op_name("func.func");
        let mut st = OperationState::new(op_name, loc);
        st.num_regions = 1;
        st.attrs = self.cx.dict_attr(attrs);
        let func = self.cx.create_op(st);
        self.cx.append_op(parent, func);
        let arg_types: Vec<_> = args.iter().map(|&(t, l, _)| (t, l)).collect();
        let region = self.cx.region(func, 0);
        let entry = self.cx.create_block(region, &arg_types);
        for (i, &(_, _, k)) in args.iter().enumerate() {
            let v = self.cx.block_args(entry)[i];
            self.values.insert(k, Mapped::Value(v));
        }
        self.block = Some(entry);
        for op in block_ops(entry_up) {
            self.op(op)?;
        }
        self.block = None;
        Ok(())
    }

    // ---- values ---------------------------------------------------------------

    fn mapped(&mut self, op: &MOp<'_, '_>, i: usize) -> Result<Mapped, Diagnostic> {
        let v = operand_at(op, i).map_err(|_| self.err(op, format!("has no operand #{i}")))?;
        match self.values.get(&key(v)) {
            Some(m) => Ok(m.clone()),
            None => Err(self.err(
                op,
                format!("operand #{i} is defined by an op the importer skipped"),
            )),
        }
    }

    /// Operand `i` as an `nn` value (constants are materialized here).
    fn tensor(&mut self, op: &MOp<'_, '_>, i: usize) -> Result<Value, Diagnostic> {
        let m = self.mapped(op, i)?;
        let k = key(operand_at(op, i).map_err(|_| self.err(op, "lost an operand"))?);
        self.materialize(op, k, m, i)
    }

    fn materialize(
        &mut self,
        op: &MOp<'_, '_>,
        k: usize,
        m: Mapped,
        i: usize,
    ) -> Result<Value, Diagnostic> {
        match m {
            Mapped::Value(v) => Ok(v),
            Mapped::Const {
                value: Some(v), ..
            } => Ok(v),
            Mapped::Const { tensor, loc, .. } => {
                let c = nn::build_op(self.cx, &OpKind::Constant((*tensor).clone()), &[], loc)
                    .map_err(|m| self.err(op, format!("operand #{i}: {m}")))?;
                self.append(c);
                let v = self.cx.result(c, 0);
                self.values.insert(
                    k,
                    Mapped::Const {
                        tensor,
                        loc,
                        value: Some(v),
                    },
                );
                Ok(v)
            }
            Mapped::Shape(_) => Err(self.err(op, format!("operand #{i} is a shape, not a tensor"))),
            Mapped::Empty => Err(self.err(
                op,
                format!("operand #{i} reads an uninitialised tensor (tensor.empty), whose contents are undefined"),
            )),
            Mapped::Invalid(d) => Err(d),
        }
    }

    fn tensors(&mut self, op: &MOp<'_, '_>, n: usize) -> Result<Vec<Value>, Diagnostic> {
        (0..n).map(|i| self.tensor(op, i)).collect()
    }

    /// Operand `i` when it is a constant.
    fn constant(&mut self, op: &MOp<'_, '_>, i: usize) -> Result<Option<Rc<Tensor>>, Diagnostic> {
        Ok(match self.mapped(op, i)? {
            Mapped::Const { tensor, .. } => Some(tensor),
            _ => None,
        })
    }

    fn append(&mut self, o: Op) {
        let b = self.block.expect("ops are imported inside a function");
        self.cx.append_op(b, o);
    }

    fn value_tensor_type(&self, v: Value) -> TensorType {
        nn::tensor_type(self.cx, self.cx.value_type(v)).expect("nn values are static tensors")
    }

    /// Builds an `nn` op at the end of the current block.
    fn build(
        &mut self,
        op: &MOp<'_, '_>,
        kind: &OpKind,
        operands: &[Value],
        loc: Loc,
    ) -> Result<Value, Diagnostic> {
        let o = nn::build_op(self.cx, kind, operands, loc).map_err(|m| {
            self.err(
                op,
                format!("maps to nn.{} which rejects it: {m}", kind.name()),
            )
        })?;
        self.append(o);
        Ok(self.cx.result(o, 0))
    }

    fn const_value(&mut self, op: &MOp<'_, '_>, t: Tensor, loc: Loc) -> Result<Value, Diagnostic> {
        self.build(op, &OpKind::Constant(t), &[], loc)
    }

    fn cast(
        &mut self,
        op: &MOp<'_, '_>,
        v: Value,
        to: ElementType,
        loc: Loc,
    ) -> Result<Value, Diagnostic> {
        if self.value_tensor_type(v).dtype == to {
            return Ok(v);
        }
        let k = OpKind::Cast {
            to,
            saturate: false,
            scale: 0,
        };
        self.build(op, &k, &[v], loc)
    }

    /// Result `i` of `op` as a static tensor type.
    fn result_type(
        &mut self,
        op: &MOp<'_, '_>,
        i: usize,
    ) -> Result<(Type, TensorType), Diagnostic> {
        let r = result_at(op, i).map_err(|_| self.err(op, format!("has no result #{i}")))?;
        let t = ir_type(self.cx, r.r#type()).map_err(|m| self.err(op, m))?;
        let tt = nn::tensor_type(self.cx, t).map_err(|m| self.err(op, format!("result: {m}")))?;
        Ok((t, tt))
    }

    /// Records `v` as result 0 of `op`, checking it has the upstream type.
    fn define(&mut self, op: &MOp<'_, '_>, v: Value) -> Result<(), Diagnostic> {
        let (want, _) = self.result_type(op, 0)?;
        let got = self.cx.value_type(v);
        if got != want {
            let g = ipu_ir::printer::type_to_string(self.cx, got);
            let w = ipu_ir::printer::type_to_string(self.cx, want);
            return Err(self.err(
                op,
                format!("maps to a value of type {g}, but upstream has {w}"),
            ));
        }
        self.set(op, 0, Mapped::Value(v))
    }

    fn set(&mut self, op: &MOp<'_, '_>, i: usize, m: Mapped) -> Result<(), Diagnostic> {
        let r = result_at(op, i).map_err(|_| self.err(op, format!("has no result #{i}")))?;
        self.values.insert(key(r), m);
        Ok(())
    }

    /// An attribute carried over as is (through the textual form).
    fn copied_attr(&mut self, op: &MOp<'_, '_>, name: &str) -> Option<ipu_ir::Attr> {
        let a = op.attribute(name).ok()?;
        ir_attr(self.cx, a).ok()
    }

    fn int_attr(&mut self, op: &MOp<'_, '_>, name: &str) -> Result<i64, Diagnostic> {
        op.attribute(name)
            .ok()
            .and_then(|a| IntegerAttribute::try_from(a).ok())
            .map(|a| a.value())
            .ok_or_else(|| self.err(op, format!("needs integer attribute '{name}'")))
    }

    /// An attribute decoded as an `nn` constant.
    fn attr_tensor(&mut self, op: &MOp<'_, '_>, name: &str) -> Result<Tensor, Diagnostic> {
        let a = op
            .attribute(name)
            .map_err(|_| self.err(op, format!("needs attribute '{name}'")))?;
        let a = ir_attr(self.cx, a).map_err(|m| self.err(op, m))?;
        let kind = self.cx.attr_kind(a).clone();
        let t = match kind {
            AttrKind::DenseElements { ty, .. } => {
                let n = self.cx.tensor_parts(ty).map(|(s, _)| {
                    s.iter()
                        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
                });
                match n {
                    Some(Some(n)) if n <= MAX_CONSTANT_ELEMENTS => {
                        nn::elements_to_tensor(self.cx, a)
                    }
                    _ => Err(format!(
                        "constant is larger than {MAX_CONSTANT_ELEMENTS} elements"
                    )),
                }
            }
            AttrKind::Float { bits, ty } => match nn::element_type(self.cx, ty) {
                Some(e) => scalar(e, f64::from_bits(bits)),
                None => Err("unsupported scalar type".into()),
            },
            AttrKind::Integer { value, ty } => match nn::element_type(self.cx, ty) {
                Some(e) if e.is_integer() => i64::try_from(value)
                    .map_err(|_| "integer out of range".to_string())
                    .and_then(|v| Tensor::from_i64(vec![], e, vec![v]).map_err(|e| e.to_string())),
                _ => Err("unsupported scalar type (index?)".into()),
            },
            AttrKind::Bool(b) => Tensor::from_bool(vec![], vec![b]).map_err(|e| e.to_string()),
            AttrKind::DenseResource { .. } => {
                Err("dense_resource constants are not supported".into())
            }
            _ => Err("is not a constant the nn dialect can hold".into()),
        };
        t.map_err(|m| self.err(op, format!("'{name}': {m}")))
    }

    // ---- ops --------------------------------------------------------------------

    /// The converter of the upstream op `name`, for the ops mapped one by
    /// one; the elementwise families go through [`Importer::elementwise`].
    fn converter(name: &str) -> Option<Convert<'x>> {
        let table: [(&str, Convert<'x>); 30] = [
            ("func.return", Self::func_return),
            ("arith.constant", Self::upstream_constant),
            ("tosa.const", Self::upstream_constant),
            ("func.call", Self::func_call),
            ("tosa.const_shape", Self::const_shape),
            ("tensor.empty", Self::tensor_empty),
            ("tosa.matmul", |im, op, _, loc| im.tosa_matmul(op, loc)),
            ("tosa.mul", Self::tosa_mul),
            ("tosa.maximum", Self::tosa_extremum),
            ("tosa.minimum", Self::tosa_extremum),
            ("tosa.negate", Self::tosa_negate),
            ("tosa.clamp", |im, op, _, loc| im.tosa_clamp(op, loc)),
            ("tosa.reduce_sum", Self::tosa_reduce),
            ("tosa.reduce_max", Self::tosa_reduce),
            ("tosa.reduce_min", Self::tosa_reduce),
            ("tosa.reduce_product", Self::tosa_reduce),
            ("tosa.transpose", Self::tosa_transpose),
            ("tosa.reshape", Self::reshape_op),
            ("tensor.expand_shape", Self::reshape_op),
            ("tensor.collapse_shape", Self::reshape_op),
            ("tosa.cast", Self::tosa_cast),
            ("tosa.concat", Self::tosa_concat),
            ("tosa.slice", Self::tosa_slice),
            ("linalg.fill", Self::linalg_fill),
            ("linalg.matmul", |im, op, name, loc| {
                im.linalg_matmul(op, name, loc)
            }),
            ("linalg.batch_matmul", |im, op, name, loc| {
                im.linalg_matmul(op, name, loc)
            }),
            ("linalg.transpose", Self::linalg_transpose),
            ("linalg.broadcast", Self::linalg_broadcast),
            ("linalg.generic", |im, op, _, loc| {
                im.linalg_generic(op, loc)
            }),
            ("linalg.reduce", Self::linalg_reduce),
        ];
        table.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
    }

    fn op(&mut self, op: MOp<'_, '_>) -> Result<(), Diagnostic> {
        let name = op_name(&op);
        let loc = self.op_loc(&op);
        match Self::converter(&name) {
            Some(convert) => convert(self, &op, &name, loc),
            None => self.elementwise(&op, &name, loc),
        }
    }

    fn func_return(&mut self, op: &MOp<'_, '_>, _name: &str, loc: Loc) -> Result<(), Diagnostic> {
        let vals = self.tensors(op, op.operand_count())?;
        let n = self.cx.op_name("func.return");
        let mut st = OperationState::new(n, loc);
        st.operands.extend(vals);
        let r = self.cx.create_op(st);
        self.append(r);
        Ok(())
    }

    fn upstream_constant(
        &mut self,
        op: &MOp<'_, '_>,
        name: &str,
        loc: Loc,
    ) -> Result<(), Diagnostic> {
        let attr = if name == "tosa.const" {
            "values"
        } else {
            "value"
        };
        let m = match self.attr_tensor(op, attr) {
            Ok(tensor) => Mapped::Const {
                tensor: Rc::new(tensor),
                loc,
                value: None,
            },
            Err(d) => Mapped::Invalid(d),
        };
        self.set(op, 0, m)?;
        Ok(())
    }

    fn func_call(&mut self, op: &MOp<'_, '_>, _name: &str, loc: Loc) -> Result<(), Diagnostic> {
        let callee = self
            .copied_attr(op, "callee")
            .filter(|&a| {
                matches!(self.cx.attr_kind(a), AttrKind::SymbolRef { nested, .. } if nested.is_empty())
            })
            .ok_or_else(|| self.err(op, "needs a flat 'callee' symbol"))?;
        let args = self.tensors(op, op.operand_count())?;
        let mut types = Vec::new();
        for i in 0..op.result_count() {
            types.push(self.result_type(op, i)?.0);
        }
        let n = self.cx.op_name("func.call");
        let mut st = OperationState::new(n, loc);
        st.operands.extend(args);
        st.result_types.extend(types);
        let key = self.cx.sym("callee");
        st.attrs = self.cx.dict_attr(vec![(key, callee)]);
        let call = self.cx.create_op(st);
        self.append(call);
        for i in 0..op.result_count() {
            let v = self.cx.result(call, i);
            self.set(op, i, Mapped::Value(v))?;
        }
        Ok(())
    }

    fn const_shape(&mut self, op: &MOp<'_, '_>, _name: &str, _loc: Loc) -> Result<(), Diagnostic> {
        let shape = self.index_values(op, "values")?;
        self.set(op, 0, Mapped::Shape(shape))?;
        Ok(())
    }

    fn tensor_empty(&mut self, op: &MOp<'_, '_>, _name: &str, _loc: Loc) -> Result<(), Diagnostic> {
        self.result_type(op, 0)?;
        self.set(op, 0, Mapped::Empty)?;
        Ok(())
    }

    fn tosa_mul(&mut self, op: &MOp<'_, '_>, _name: &str, loc: Loc) -> Result<(), Diagnostic> {
        let shift = self.constant(op, 2)?;
        match shift {
            Some(s) if all_zero(&s) => {}
            Some(_) => {
                return Err(self.err(op, "has a non-zero shift, which nn.mul cannot express"))
            }
            None => return Err(self.err(op, "has a shift that is not a constant")),
        }
        let (_, rt) = self.result_type(op, 0)?;
        let xs = self.tensors(op, 2)?;
        let a = self.cast(op, xs[0], rt.dtype, loc)?;
        let b = if xs[1] == xs[0] {
            a
        } else {
            self.cast(op, xs[1], rt.dtype, loc)?
        };
        let v = self.build(op, &OpKind::Mul, &[a, b], loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn tosa_extremum(&mut self, op: &MOp<'_, '_>, name: &str, loc: Loc) -> Result<(), Diagnostic> {
        self.check_nan_propagate(op)?;
        let k = if name == "tosa.maximum" {
            OpKind::Max
        } else {
            OpKind::Min
        };
        let xs = self.tensors(op, 2)?;
        let v = self.build(op, &k, &xs, loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn tosa_negate(&mut self, op: &MOp<'_, '_>, _name: &str, loc: Loc) -> Result<(), Diagnostic> {
        for i in 1..op.operand_count() {
            match self.constant(op, i)? {
                Some(z) if all_zero(&z) => {}
                _ => return Err(self.err(op, "has a zero point that is not a constant 0")),
            }
        }
        let x = self.tensor(op, 0)?;
        let v = self.build(op, &OpKind::Neg, &[x], loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn tosa_reduce(&mut self, op: &MOp<'_, '_>, name: &str, loc: Loc) -> Result<(), Diagnostic> {
        let kind = match name {
            "tosa.reduce_sum" => ReduceKind::Sum,
            "tosa.reduce_max" => ReduceKind::Max,
            "tosa.reduce_min" => ReduceKind::Min,
            _ => ReduceKind::Prod,
        };
        if matches!(kind, ReduceKind::Max | ReduceKind::Min) {
            self.check_nan_propagate(op)?;
        }
        let axis = self.int_attr(op, "axis")?;
        let x = self.tensor(op, 0)?;
        let rank = self.value_tensor_type(x).shape.len();
        let axis = usize::try_from(axis)
            .ok()
            .filter(|&a| a < rank)
            .ok_or_else(|| self.err(op, format!("axis {axis} is out of range for rank {rank}")))?;
        let k = OpKind::Reduce {
            kind,
            axes: vec![axis],
            keepdims: true,
        };
        let v = self.build(op, &k, &[x], loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn tosa_transpose(
        &mut self,
        op: &MOp<'_, '_>,
        _name: &str,
        loc: Loc,
    ) -> Result<(), Diagnostic> {
        let perms = op
            .attribute("perms")
            .ok()
            .and_then(|a| DenseI32ArrayAttribute::try_from(a).ok())
            .ok_or_else(|| self.err(op, "needs array<i32> attribute 'perms'"))?;
        let perm = (0..perms.len())
            .map(|i| perms.element(i).ok().and_then(|p| usize::try_from(p).ok()))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| self.err(op, "has a negative permutation entry"))?;
        let x = self.tensor(op, 0)?;
        let v = self.build(op, &OpKind::Transpose { perm }, &[x], loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn reshape_op(&mut self, op: &MOp<'_, '_>, name: &str, loc: Loc) -> Result<(), Diagnostic> {
        let (_, rt) = self.result_type(op, 0)?;
        if name == "tosa.reshape" {
            // The shape operand must be a known shape consistent with the result.
            match self.mapped(op, 1)? {
                Mapped::Shape(s)
                    if s.len() == rt.shape.len()
                        && s.iter()
                            .zip(&rt.shape)
                            .all(|(&a, &b)| a == -1 || a == b as i64) => {}
                Mapped::Shape(s) => {
                    return Err(self.err(op, format!("shape {s:?} disagrees with the result type")))
                }
                _ => return Err(self.err(op, "has a shape operand that is not a tosa.const_shape")),
            }
        }
        let x = self.tensor(op, 0)?;
        let v = self.build(op, &OpKind::Reshape { shape: rt.shape }, &[x], loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn tosa_cast(&mut self, op: &MOp<'_, '_>, _name: &str, loc: Loc) -> Result<(), Diagnostic> {
        let (_, rt) = self.result_type(op, 0)?;
        let x = self.tensor(op, 0)?;
        let v = self.convert(op, x, rt.dtype, loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn tosa_concat(&mut self, op: &MOp<'_, '_>, _name: &str, loc: Loc) -> Result<(), Diagnostic> {
        let axis = self.int_attr(op, "axis")?;
        let xs = self.tensors(op, op.operand_count())?;
        let rank = xs
            .first()
            .map(|&x| self.value_tensor_type(x).shape.len())
            .unwrap_or(0);
        let axis = usize::try_from(axis)
            .ok()
            .filter(|&a| a < rank)
            .ok_or_else(|| self.err(op, format!("axis {axis} is out of range for rank {rank}")))?;
        let v = self.build(op, &OpKind::Concat { axis }, &xs, loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn tosa_slice(&mut self, op: &MOp<'_, '_>, _name: &str, loc: Loc) -> Result<(), Diagnostic> {
        let (start, size) = match (self.mapped(op, 1)?, self.mapped(op, 2)?) {
            (Mapped::Shape(a), Mapped::Shape(b)) => (a, b),
            _ => return Err(self.err(op, "has start/size operands that are not tosa.const_shape")),
        };
        let (_, rt) = self.result_type(op, 0)?;
        if start.len() != rt.shape.len() || size.len() != rt.shape.len() {
            return Err(self.err(op, "start/size ranks disagree with the result"));
        }
        let ends: Vec<i64> = start
            .iter()
            .zip(&rt.shape)
            .map(|(&s, &n)| s + n as i64)
            .collect();
        let x = self.tensor(op, 0)?;
        let k = OpKind::Slice {
            steps: vec![1; start.len()],
            starts: start,
            ends,
        };
        let v = self.build(op, &k, &[x], loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn linalg_fill(&mut self, op: &MOp<'_, '_>, _name: &str, loc: Loc) -> Result<(), Diagnostic> {
        let (_, rt) = self.result_type(op, 0)?;
        match self.mapped(op, 0)? {
            Mapped::Const { tensor, .. } if tensor.numel() == 1 => {
                let t = splat(&tensor, rt.shape).map_err(|m| self.err(op, m))?;
                let t = if t.dtype() == rt.dtype {
                    t
                } else {
                    return Err(self.err(op, "fills with a value of another element type"));
                };
                self.set(
                    op,
                    0,
                    Mapped::Const {
                        tensor: Rc::new(t),
                        loc,
                        value: None,
                    },
                )?;
            }
            _ => {
                let x = self.tensor(op, 0)?;
                let v = self.build(op, &OpKind::Broadcast { shape: rt.shape }, &[x], loc)?;
                self.define(op, v)?;
            }
        }
        Ok(())
    }

    fn linalg_transpose(
        &mut self,
        op: &MOp<'_, '_>,
        _name: &str,
        loc: Loc,
    ) -> Result<(), Diagnostic> {
        let perm = self.i64_array(op, "permutation")?;
        let perm = perm
            .iter()
            .map(|&p| usize::try_from(p).ok())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| self.err(op, "has a negative permutation entry"))?;
        let x = self.tensor(op, 0)?;
        let v = self.build(op, &OpKind::Transpose { perm }, &[x], loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn linalg_broadcast(
        &mut self,
        op: &MOp<'_, '_>,
        _name: &str,
        loc: Loc,
    ) -> Result<(), Diagnostic> {
        let dims = self.i64_array(op, "dimensions")?;
        let (_, rt) = self.result_type(op, 0)?;
        let x = self.tensor(op, 0)?;
        let xt = self.value_tensor_type(x);
        let mut expanded = Vec::with_capacity(rt.shape.len());
        let mut src = xt.shape.iter();
        for d in 0..rt.shape.len() {
            if dims.contains(&(d as i64)) {
                expanded.push(1);
            } else {
                expanded.push(
                    *src.next()
                        .ok_or_else(|| self.err(op, "input rank disagrees with 'dimensions'"))?,
                );
            }
        }
        if src.next().is_some() {
            return Err(self.err(op, "input rank disagrees with 'dimensions'"));
        }
        let x = if expanded != xt.shape {
            self.build(op, &OpKind::Reshape { shape: expanded }, &[x], loc)?
        } else {
            x
        };
        let v = self.build(op, &OpKind::Broadcast { shape: rt.shape }, &[x], loc)?;
        self.define(op, v)?;
        Ok(())
    }

    fn linalg_reduce(&mut self, op: &MOp<'_, '_>, _name: &str, loc: Loc) -> Result<(), Diagnostic> {
        if op.operand_count() != 2 || op.result_count() != 1 {
            return Err(self.err(op, "reduces other than one input into one init"));
        }
        let dims = self.i64_array(op, "dimensions")?;
        let dims = dims
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| self.err(op, "has a negative dimension"))?;
        self.reduction(op, dims, loc)?;
        Ok(())
    }

    /// The elementwise families: simple `tosa` ops, `linalg` named
    /// elementwise ops, function-level `arith`/`math` ops and scalar casts.
    fn elementwise(&mut self, op: &MOp<'_, '_>, name: &str, loc: Loc) -> Result<(), Diagnostic> {
        if let Some((kind, n)) = tosa_simple(name) {
            if op.operand_count() != n {
                return Err(self.err(op, format!("expected {n} operands")));
            }
            let xs = self.tensors(op, n)?;
            let v = self.build(op, &kind, &xs, loc)?;
            self.define(op, v)?;
        } else if let Some(kind) = linalg_elementwise(name) {
            let n = op.operand_count().saturating_sub(1);
            let xs = self.tensors(op, n)?;
            let v = self.build(op, &kind, &xs, loc)?;
            self.define(op, v)?;
        } else if let Some(kind) = elementwise_kind(name, op) {
            // Function level: upstream tensors of one shape.
            let xs = self.tensors(op, op.operand_count())?;
            let v = self.build(op, &kind, &xs, loc)?;
            self.define(op, v)?;
        } else if let Some(to) = self.scalar_cast_target(op, name) {
            let x = self.tensor(op, 0)?;
            let v = self.cast(op, x, to, loc)?;
            self.define(op, v)?;
        } else {
            return Err(self.err(op, "is not supported by the MLIR importer"));
        }
        Ok(())
    }

    fn i64_array(&mut self, op: &MOp<'_, '_>, name: &str) -> Result<Vec<i64>, Diagnostic> {
        let a = op
            .attribute(name)
            .ok()
            .and_then(|a| DenseI64ArrayAttribute::try_from(a).ok())
            .ok_or_else(|| self.err(op, format!("needs array<i64> attribute '{name}'")))?;
        (0..a.len())
            .map(|i| a.element(i).map_err(|e| self.err(op, e.to_string())))
            .collect()
    }

    /// Values of an index elements attribute (tosa.const_shape).
    fn index_values(&mut self, op: &MOp<'_, '_>, name: &str) -> Result<Vec<i64>, Diagnostic> {
        let a = op
            .attribute(name)
            .map_err(|_| self.err(op, format!("needs attribute '{name}'")))?;
        let a = ir_attr(self.cx, a).map_err(|m| self.err(op, m))?;
        let AttrKind::DenseElements { ty, data } = self.cx.attr_kind(a).clone() else {
            return Err(self.err(op, format!("'{name}' is not dense elements")));
        };
        let n: i64 = match self.cx.tensor_parts(ty) {
            Some((shape, _)) => shape.iter().product(),
            None => return Err(self.err(op, format!("'{name}' is not a tensor"))),
        };
        let n = usize::try_from(n).map_err(|_| self.err(op, "has a dynamic shape constant"))?;
        if n > MAX_SHAPE_RANK {
            return Err(self.err(op, format!("'{name}' holds {n} dimensions")));
        }
        let width = if data.splat {
            data.bytes.len()
        } else {
            match data.bytes.len().checked_div(n) {
                Some(w) => w,
                None => return Ok(vec![]),
            }
        };
        if width == 0 || width > 8 || (!data.splat && data.bytes.len() != width * n) {
            return Err(self.err(op, format!("'{name}' has an unexpected encoding")));
        }
        Ok((0..n)
            .map(|i| {
                let i = if data.splat { 0 } else { i };
                let b = &data.bytes[i * width..(i + 1) * width];
                let mut buf = [0u8; 8];
                buf[..width].copy_from_slice(b);
                let raw = i64::from_le_bytes(buf);
                let bits = (width * 8) as u32;
                if bits < 64 {
                    (raw << (64 - bits)) >> (64 - bits)
                } else {
                    raw
                }
            })
            .collect())
    }

    fn check_nan_propagate(&mut self, op: &MOp<'_, '_>) -> Result<(), Diagnostic> {
        if let Ok(a) = op.attribute("nan_mode") {
            if !text(a).contains("PROPAGATE") {
                return Err(self.err(op, format!("has nan_mode {a}; only PROPAGATE maps to nn")));
            }
        }
        Ok(())
    }

    fn scalar_cast_target(&mut self, op: &MOp<'_, '_>, name: &str) -> Option<ElementType> {
        if !matches!(
            name,
            "arith.extf"
                | "arith.truncf"
                | "arith.sitofp"
                | "arith.fptosi"
                | "arith.extsi"
                | "arith.trunci"
        ) {
            return None;
        }
        let r = result_at(op, 0).ok()?;
        let t = ir_type(self.cx, r.r#type()).ok()?;
        let elem = self.cx.tensor_parts(t).map(|(_, e)| e).unwrap_or(t);
        nn::element_type(self.cx, elem)
    }

    /// TOSA's cast: floats to integers round to nearest even and
    /// saturate; integers to i1 compare with zero; the rest is nn.cast.
    fn convert(
        &mut self,
        op: &MOp<'_, '_>,
        x: Value,
        to: ElementType,
        loc: Loc,
    ) -> Result<Value, Diagnostic> {
        let from = self.value_tensor_type(x).dtype;
        if from == to {
            return Ok(x);
        }
        if from.is_float() && to.is_integer() && to != ElementType::I1 {
            let Some((lo, hi)) = int_range(to) else {
                return Err(self.err(op, format!("casts to {to}, which TOSA does not define")));
            };
            let r = self.round_even(op, x, loc)?;
            let wide = self.cast(op, r, ElementType::I64, loc)?;
            if to == ElementType::I64 {
                return Ok(wide);
            }
            let lo = self.const_value(op, Tensor::scalar_i64(lo), loc)?;
            let hi = self.const_value(op, Tensor::scalar_i64(hi), loc)?;
            let a = self.build(op, &OpKind::Max, &[wide, lo], loc)?;
            let b = self.build(op, &OpKind::Min, &[a, hi], loc)?;
            return self.cast(op, b, to, loc);
        }
        if from.is_integer() && to == ElementType::I1 {
            let zero = scalar(from, 0.0).map_err(|m| self.err(op, m))?;
            let z = self.const_value(op, zero, loc)?;
            let eq = self.build(op, &OpKind::Equal, &[x, z], loc)?;
            return self.build(op, &OpKind::Not, &[eq], loc);
        }
        self.cast(op, x, to, loc)
    }

    /// Round to nearest, ties to even: `nn.round` when the dialect has it,
    /// else `(|x| + 2^p) - 2^p` (exact in the type's own rounding, p its
    /// fraction bits) with the sign put back, for `|x| < 2^p`.
    fn round_even(&mut self, op: &MOp<'_, '_>, x: Value, loc: Loc) -> Result<Value, Diagnostic> {
        if self.cx.registry().lookup("nn.round").is_some() {
            return self.build(op, &OpKind::Round, &[x], loc);
        }
        let e = self.value_tensor_type(x).dtype;
        let p = match e {
            ElementType::F32 => 23,
            ElementType::F16 => 10,
            ElementType::BF16 => 7,
            _ => return Err(self.err(op, format!("cannot round {e} to an integer"))),
        };
        let magic = scalar(e, f64::from(1u32 << p)).map_err(|m| self.err(op, m))?;
        let zero = scalar(e, 0.0).map_err(|m| self.err(op, m))?;
        let m = self.const_value(op, magic, loc)?;
        let z = self.const_value(op, zero, loc)?;
        let a = self.build(op, &OpKind::Abs, &[x], loc)?;
        let up = self.build(op, &OpKind::Add, &[a, m], loc)?;
        let r = self.build(op, &OpKind::Sub, &[up, m], loc)?;
        let small = self.build(op, &OpKind::Less, &[a, m], loc)?;
        let s = self.build(op, &OpKind::Select, &[small, r, a], loc)?;
        let ns = self.build(op, &OpKind::Neg, &[s], loc)?;
        let negative = self.build(op, &OpKind::Less, &[x, z], loc)?;
        self.build(op, &OpKind::Select, &[negative, ns, s], loc)
    }

    fn tosa_matmul(&mut self, op: &MOp<'_, '_>, loc: Loc) -> Result<(), Diagnostic> {
        if op.operand_count() != 4 {
            return Err(self.err(op, "expected operands a, b, a_zp, b_zp"));
        }
        let (_, rt) = self.result_type(op, 0)?;
        let mut xs = self.tensors(op, 2)?;
        for (i, x) in xs.iter_mut().enumerate() {
            let zp = self
                .constant(op, i + 2)?
                .ok_or_else(|| self.err(op, format!("zero point #{i} is not a constant")))?;
            if zp.numel() != 1 {
                return Err(self.err(op, "zero points must hold one element"));
            }
            *x = self.cast(op, *x, rt.dtype, loc)?;
            if !all_zero(&zp) {
                if rt.dtype.is_float() {
                    return Err(self.err(op, "has a non-zero zero point on floats"));
                }
                let z = zp.to_i64_vec()[0];
                let zc = Tensor::from_i64(vec![], rt.dtype, vec![z])
                    .map_err(|e| self.err(op, e.to_string()))?;
                let zv = self.const_value(op, zc, loc)?;
                *x = self.build(op, &OpKind::Sub, &[*x, zv], loc)?;
            }
        }
        let v = self.build(op, &OpKind::MatMul, &xs, loc)?;
        self.define(op, v)
    }

    fn tosa_clamp(&mut self, op: &MOp<'_, '_>, loc: Loc) -> Result<(), Diagnostic> {
        self.check_nan_propagate(op)?;
        let x = self.tensor(op, 0)?;
        let e = self.value_tensor_type(x).dtype;
        let bound = |op: &MOp<'_, '_>, name: &str| -> Option<f64> {
            let a = op.attribute(name).ok()?;
            if let Ok(f) = FloatAttribute::try_from(a) {
                return Some(f.value());
            }
            IntegerAttribute::try_from(a).ok().map(|i| i.value() as f64)
        };
        let (Some(lo), Some(hi)) = (bound(op, "min_val"), bound(op, "max_val")) else {
            return Err(self.err(op, "needs numeric 'min_val' and 'max_val'"));
        };
        let top = if e.is_float() {
            max_finite(e)
        } else {
            int_range(e).map(|(_, h)| h as f64)
        };
        let v = if lo == 0.0 && top.is_some_and(|t| hi >= t) {
            self.build(op, &OpKind::Relu, &[x], loc)?
        } else {
            let lo_t = scalar(e, lo).map_err(|m| self.err(op, m))?;
            let hi_t = scalar(e, hi).map_err(|m| self.err(op, m))?;
            let lo_v = self.const_value(op, lo_t, loc)?;
            let hi_v = self.const_value(op, hi_t, loc)?;
            let a = self.build(op, &OpKind::Max, &[x, lo_v], loc)?;
            self.build(op, &OpKind::Min, &[a, hi_v], loc)?
        };
        self.define(op, v)
    }

    fn indexing_maps(&mut self, op: &MOp<'_, '_>) -> Result<Vec<(usize, Vec<usize>)>, Diagnostic> {
        self.indexing_maps_with_units(op)?
            .into_iter()
            .map(|(n, r)| match r.into_iter().collect::<Option<Vec<_>>>() {
                Some(r) => Ok((n, r)),
                None => Err(self.err(op, "has an indexing map reading a fixed index")),
            })
            .collect()
    }

    fn indexing_maps_with_units(&mut self, op: &MOp<'_, '_>) -> Result<Vec<UnitMap>, Diagnostic> {
        let maps = op
            .attribute("indexing_maps")
            .ok()
            .and_then(|a| ArrayAttribute::try_from(a).ok())
            .ok_or_else(|| self.err(op, "needs 'indexing_maps'"))?;
        (0..maps.len())
            .map(|i| {
                let text = maps.element(i).map(text).unwrap_or_default();
                projection_with_units(&text).ok_or_else(|| {
                    self.err(
                        op,
                        format!(
                            "indexing map {text} is not a permutation or projection of dimensions"
                        ),
                    )
                })
            })
            .collect()
    }

    fn linalg_matmul(&mut self, op: &MOp<'_, '_>, name: &str, loc: Loc) -> Result<(), Diagnostic> {
        if op.operand_count() != 3 {
            return Err(self.err(op, "expected two inputs and one init"));
        }
        if let Ok(c) = op.attribute("cast") {
            if text(c).contains("unsigned") {
                return Err(self.err(op, "casts unsigned, which nn.matmul does not"));
            }
        }
        let batch = name == "linalg.batch_matmul";
        let maps = self.indexing_maps(op)?;
        // (m, n, k) dims, with the batch dim first for batch_matmul.
        let (b, m, n, k) = if batch {
            (vec![0], 1, 2, 3)
        } else {
            (vec![], 0, 1, 2)
        };
        let with =
            |v: &[usize]| -> Vec<usize> { b.iter().copied().chain(v.iter().copied()).collect() };
        let dims = b.len() + 3;
        let ok_maps =
            maps.len() == 3 && maps.iter().all(|(d, _)| *d == dims) && maps[2].1 == with(&[m, n]);
        if !ok_maps {
            return Err(self.err(
                op,
                "has indexing maps other than a (possibly transposed) matrix product",
            ));
        }
        let (_, rt) = self.result_type(op, 0)?;
        let mut xs = self.tensors(op, 2)?;
        let normal = [with(&[m, k]), with(&[k, n])];
        let swapped = [with(&[k, m]), with(&[n, k])];
        for i in 0..2 {
            if maps[i].1 == normal[i] {
            } else if maps[i].1 == swapped[i] {
                let r = maps[i].1.len();
                let mut perm: Vec<usize> = (0..r).collect();
                perm.swap(r - 2, r - 1);
                xs[i] = self.build(op, &OpKind::Transpose { perm }, &[xs[i]], loc)?;
            } else {
                return Err(self.err(
                    op,
                    "has indexing maps other than a (possibly transposed) matrix product",
                ));
            }
            xs[i] = self.cast(op, xs[i], rt.dtype, loc)?;
        }
        let product = self.build(op, &OpKind::MatMul, &xs, loc)?;
        // The product accumulates into the init operand.
        let v = match self.mapped(op, 2)? {
            Mapped::Const { tensor, .. } if all_zero(&tensor) => product,
            Mapped::Empty => {
                return Err(self.err(
                    op,
                    "accumulates into an uninitialised tensor (tensor.empty)",
                ));
            }
            init => {
                let k2 = key(operand_at(op, 2).map_err(|_| self.err(op, "lost an operand"))?);
                let c = self.materialize(op, k2, init, 2)?;
                self.build(op, &OpKind::Add, &[c, product], loc)?
            }
        };
        self.define(op, v)
    }

    /// A reduction whose body combines its input (block argument 0) with
    /// the accumulator (argument 1) by one add, mul, max or min: the nn
    /// reduction, then combined with the init unless it is the identity.
    fn reduction(
        &mut self,
        op: &MOp<'_, '_>,
        mut dims: Vec<usize>,
        loc: Loc,
    ) -> Result<(), Diagnostic> {
        let refuse = "has a body that is not one add, mul, maximum or minimum of the input and the accumulator";
        let Some(body) = body_block(op) else {
            return Err(self.err(op, "has no body"));
        };
        let ops = block_ops(body);
        if body.argument_count() != 2 || ops.len() != 2 {
            return Err(self.err(op, refuse));
        }
        let (comb, yield_op) = (ops[0], ops[1]);
        let args = [
            body.argument(0)
                .map(key)
                .map_err(|_| self.err(op, refuse))?,
            body.argument(1)
                .map(key)
                .map_err(|_| self.err(op, refuse))?,
        ];
        let operands: Vec<usize> = (0..comb.operand_count())
            .filter_map(|i| operand_at(&comb, i).ok().map(key))
            .collect();
        let yields_it = op_name(&yield_op) == "linalg.yield"
            && yield_op.operand_count() == 1
            && operand_at(&yield_op, 0).ok().map(key) == result_at(&comb, 0).ok().map(key);
        let uses_both = operands.len() == 2
            && ((operands[0] == args[0] && operands[1] == args[1])
                || (operands[0] == args[1] && operands[1] == args[0]));
        let (kind, combine) = match op_name(&comb).as_str() {
            "arith.addf" | "arith.addi" => (ReduceKind::Sum, OpKind::Add),
            "arith.mulf" | "arith.muli" => (ReduceKind::Prod, OpKind::Mul),
            "arith.maximumf" | "arith.maxsi" => (ReduceKind::Max, OpKind::Max),
            "arith.minimumf" | "arith.minsi" => (ReduceKind::Min, OpKind::Min),
            _ => return Err(self.err(op, refuse)),
        };
        if !yields_it || !uses_both {
            return Err(self.err(op, refuse));
        }
        let x = self.tensor(op, 0)?;
        let rank = self.value_tensor_type(x).shape.len();
        dims.sort_unstable();
        dims.dedup();
        if dims.iter().any(|&d| d >= rank) {
            return Err(self.err(
                op,
                format!("reduces a dimension out of range for rank {rank}"),
            ));
        }
        let r = self.build(
            op,
            &OpKind::Reduce {
                kind,
                axes: dims,
                keepdims: false,
            },
            &[x],
            loc,
        )?;
        let v = match self.mapped(op, 1)? {
            Mapped::Empty => {
                return Err(self.err(
                    op,
                    "accumulates into an uninitialised tensor (tensor.empty)",
                ));
            }
            Mapped::Const { tensor, .. } if is_identity(&tensor, kind) => r,
            init => {
                let k = key(operand_at(op, 1).map_err(|_| self.err(op, "lost an operand"))?);
                let c = self.materialize(op, k, init, 1)?;
                self.build(op, &combine, &[c, r], loc)?
            }
        };
        self.define(op, v)
    }

    fn linalg_generic(&mut self, op: &MOp<'_, '_>, loc: Loc) -> Result<(), Diagnostic> {
        if op.result_count() != 1 {
            return Err(self.err(op, "has several results; only one is supported"));
        }
        let iters = op
            .attribute("iterator_types")
            .ok()
            .and_then(|a| ArrayAttribute::try_from(a).ok())
            .ok_or_else(|| self.err(op, "needs 'iterator_types'"))?;
        let mut reduced = Vec::new();
        for i in 0..iters.len() {
            let t = iters.element(i).map(text).unwrap_or_default();
            if t.contains("reduction") {
                reduced.push(i);
            } else if !t.contains("parallel") {
                return Err(self.err(op, format!("has iterator {t}")));
            }
        }
        let maps = self.indexing_maps_with_units(op)?;
        if !reduced.is_empty() {
            let maps = self.indexing_maps(op)?;
            // One input read in full, the init read at the kept dimensions.
            let n = iters.len();
            let kept: Vec<usize> = (0..n).filter(|d| !reduced.contains(d)).collect();
            let plain = maps.len() == 2
                && op.operand_count() == 2
                && maps[0] == (n, (0..n).collect())
                && maps[1] == (n, kept);
            if !plain {
                return Err(self.err(
                    op,
                    "is a reduction other than one input over some of its dimensions into the rest",
                ));
            }
            return self.reduction(op, reduced, loc);
        }
        let n_ops = op.operand_count();
        if maps.len() != n_ops || n_ops == 0 {
            return Err(self.err(op, "needs one indexing map per operand"));
        }
        let (_, rt) = self.result_type(op, 0)?;
        let rank = rt.shape.len();
        let (out_dims, out_res) = &maps[n_ops - 1];
        if *out_dims != rank || *out_res != (0..rank).map(Some).collect::<Vec<_>>() {
            return Err(self.err(op, "has an output indexing map that is not the identity"));
        }
        let Some(body) = body_block(op) else {
            return Err(self.err(op, "has no body"));
        };
        if body.argument_count() != n_ops {
            return Err(self.err(op, "has a body whose arguments do not match its operands"));
        }
        // Inputs, laid out with the iteration dimensions (size 1 where a
        // map drops one), so numpy broadcasting does the rest.
        for (i, (dims, res)) in maps.iter().cloned().enumerate() {
            let arg = body.argument(i).map_err(|e| self.err(op, e.to_string()))?;
            let m = self.mapped(op, i)?;
            if i == n_ops - 1 {
                // The init: only an error if the body reads it.
                self.values.insert(key(arg), m);
                continue;
            }
            let k = key(operand_at(op, i).map_err(|_| self.err(op, "lost an operand"))?);
            let x = self.materialize(op, k, m, i)?;
            if dims != rank {
                return Err(self.err(
                    op,
                    format!("indexing map #{i} has the wrong number of dimensions"),
                ));
            }
            let xt = self.value_tensor_type(x);
            if xt.shape.len() != res.len() {
                return Err(self.err(
                    op,
                    format!("operand #{i} has a rank its indexing map does not"),
                ));
            }
            // Dimensions read at a fixed index 0 must have size 1: drop them.
            let mut x = x;
            let mut xt = xt;
            if res.contains(&None) {
                if res
                    .iter()
                    .zip(&xt.shape)
                    .any(|(r, &d)| r.is_none() && d != 1)
                {
                    return Err(self.err(
                        op,
                        format!("indexing map #{i} reads index 0 of a dimension larger than 1"),
                    ));
                }
                let shape: Vec<usize> = res
                    .iter()
                    .zip(&xt.shape)
                    .filter(|(r, _)| r.is_some())
                    .map(|(_, &d)| d)
                    .collect();
                x = self.build(op, &OpKind::Reshape { shape }, &[x], loc)?;
                xt = self.value_tensor_type(x);
            }
            let res: Vec<usize> = res.into_iter().flatten().collect();
            let mut order: Vec<usize> = (0..res.len()).collect();
            order.sort_by_key(|&j| res[j]);
            if order.iter().enumerate().any(|(j, &o)| j != o) {
                x = self.build(
                    op,
                    &OpKind::Transpose {
                        perm: order.clone(),
                    },
                    &[x],
                    loc,
                )?;
            }
            let mut full = vec![1usize; rank];
            for &j in &order {
                full[res[j]] = xt.shape[j];
            }
            if full.len() != xt.shape.len() {
                x = self.build(op, &OpKind::Reshape { shape: full }, &[x], loc)?;
            }
            self.values.insert(key(arg), Mapped::Value(x));
        }
        let mut result = None;
        for bop in block_ops(body) {
            let bname = op_name(&bop);
            let bloc = self.op_loc(&bop);
            if bname == "linalg.yield" {
                if bop.operand_count() != 1 {
                    return Err(self.err(&bop, "yields other than one value"));
                }
                result = Some(self.tensor(&bop, 0)?);
                break;
            }
            if bname == "arith.constant" {
                let tensor = self.attr_tensor(&bop, "value")?;
                self.set(
                    &bop,
                    0,
                    Mapped::Const {
                        tensor: Rc::new(tensor),
                        loc: bloc,
                        value: None,
                    },
                )?;
                continue;
            }
            let v = if let Some(kind) = elementwise_kind(&bname, &bop) {
                let xs = self.tensors(&bop, bop.operand_count())?;
                self.build(&bop, &kind, &xs, bloc)?
            } else if let Some(to) = self.scalar_cast_target(&bop, &bname) {
                let x = self.tensor(&bop, 0)?;
                self.cast(&bop, x, to, bloc)?
            } else {
                return Err(self.err(
                    &bop,
                    "is not supported in a linalg.generic body by the MLIR importer",
                ));
            };
            self.set(&bop, 0, Mapped::Value(v))?;
        }
        let Some(mut v) = result else {
            return Err(self.err(op, "has a body without linalg.yield"));
        };
        let vt = self.value_tensor_type(v);
        if vt.dtype != rt.dtype {
            return Err(self.err(
                op,
                format!("body yields {} but the result holds {}", vt.dtype, rt.dtype),
            ));
        }
        if vt.shape != rt.shape {
            v = self.build(op, &OpKind::Broadcast { shape: rt.shape }, &[v], loc)?;
        }
        self.define(op, v)
    }
}
