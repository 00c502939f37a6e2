//! The `test` dialect: small ops that exercise the IR core (constants and
//! folding, patterns, regions, isolation, successors) in lit tests, like
//! MLIR's own test dialect. Not part of any compilation pipeline.

use ipu_ir::context::{Context, Op};
use ipu_ir::declare_op;
use ipu_ir::opdef::{
    constraints, Arity, Dialect, FoldResult, FoldValue, RegionDef, SuccessorDef, Trait, ValueDef,
};
use ipu_ir::rewrite::{RewritePattern, Rewriter};
use ipu_ir::types::{Attr, AttrKind, Loc, Type};

const SCALAR: ValueDef = ValueDef {
    name: "input",
    arity: Arity::Single,
    constraint: constraints::INT_OR_FLOAT_OR_INDEX,
};

declare_op! {
    pub static CONSTANT: Constant = "test.constant" {
        operands: [],
        attributes: [
            value: Attr [constraints::TYPED_ATTR],
        ],
        summary: "A scalar constant; its result type is the value's type.",
        results: &[ValueDef {
            name: "result",
            arity: Arity::Single,
            constraint: constraints::ANY_TYPE,
        }],
        traits: &[Trait::ConstantLike, Trait::Pure],
        custom_assembly: Some(ipu_ir::constant::CONSTANT_ASSEMBLY),
        verify: Some(ipu_ir::constant::verify_constant),
    }
}

declare_op! {
    pub static ADD: Add = "test.add" {
        operands: [lhs: constraints::INT_OR_FLOAT_OR_INDEX, rhs: constraints::INT_OR_FLOAT_OR_INDEX],
        attributes: [],
        summary: "Integer addition; folds constants and `x + 0`.",
        results: &[ValueDef {
            name: "result",
            ..SCALAR
        }],
        traits: &[
            Trait::Pure,
            Trait::Commutative,
            Trait::SameOperandsAndResultType,
        ],
        assembly_format: Some("$lhs `,` $rhs attr-dict `:` type($result)"),
        fold: Some(fold_add),
    }
}

declare_op! {
    pub static NEG: Neg = "test.neg" {
        operands: [input: constraints::INT_OR_FLOAT_OR_INDEX],
        attributes: [],
        summary: "Integer negation; `neg(neg(x))` canonicalizes to `x`.",
        results: &[ValueDef {
            name: "result",
            ..SCALAR
        }],
        traits: &[Trait::Pure, Trait::SameOperandsAndResultType],
        assembly_format: Some("$input attr-dict `:` type($result)"),
        canonicalization_patterns: Some(|| vec![Box::new(DoubleNegation)]),
    }
}

declare_op! {
    pub static PRINT: Print = "test.print" {
        operands: [],
        variadic: [inputs: constraints::ANY_TYPE],
        attributes: [],
        summary: "Consumes values with a side effect; never removed as dead.",
        assembly_format: Some("$inputs attr-dict `:` type($inputs)"),
    }
}

declare_op! {
    pub static REGION: RegionOp = "test.region" {
        operands: [],
        attributes: [],
        summary: "Holds one region that sees values from above.",
        regions: &[RegionDef {
            name: "body",
            arity: Arity::Single,
            single_block: false,
        }],
        traits: &[Trait::NoTerminator],
        assembly_format: Some("$body attr-dict"),
    }
}

declare_op! {
    pub static ISOLATED: Isolated = "test.isolated" {
        operands: [],
        attributes: [],
        summary: "Holds one region isolated from above.",
        regions: &[RegionDef {
            name: "body",
            arity: Arity::Single,
            single_block: false,
        }],
        traits: &[Trait::NoTerminator, Trait::IsolatedFromAbove],
        assembly_format: Some("$body attr-dict"),
    }
}

declare_op! {
    pub static BR: Br = "test.br" {
        operands: [],
        attributes: [],
        summary: "Unconditional branch (generic form only).",
        successors: &[SuccessorDef {
            name: "dest",
            arity: Arity::Single,
        }],
        traits: &[Trait::Terminator],
    }
}

declare_op! {
    pub static COND_BR: CondBr = "test.cond_br" {
        operands: [condition: constraints::ANY_INTEGER],
        attributes: [],
        summary: "Conditional branch on an i1 (generic form only).",
        successors: &[
            SuccessorDef {
                name: "true_dest",
                arity: Arity::Single,
            },
            SuccessorDef {
                name: "false_dest",
                arity: Arity::Single,
            },
        ],
        traits: &[Trait::Terminator],
    }
}

pub static TEST_DIALECT: Dialect = Dialect {
    name: "test",
    description: "Ops for testing the IR core.",
    ops: &[
        &CONSTANT, &ADD, &NEG, &PRINT, &REGION, &ISOLATED, &BR, &COND_BR,
    ],
    materialize_constant: Some(materialize_constant),
};

fn int_value(cx: &Context, a: Option<Attr>) -> Option<i128> {
    match cx.attr_kind(a?) {
        AttrKind::Integer { value, .. } => Some(*value),
        _ => None,
    }
}

/// Wraps `v` to the integer type's width (two's complement).
fn wrap(cx: &Context, v: i128, ty: Type) -> i128 {
    match cx.type_kind(ty).bit_width() {
        Some(w) if w < 128 => {
            let m = v & ((1i128 << w) - 1);
            if m >> (w - 1) & 1 == 1 {
                m - (1i128 << w)
            } else {
                m
            }
        }
        _ => v,
    }
}

fn fold_add(cx: &mut Context, op: Op, consts: &[Option<Attr>]) -> FoldResult {
    let ty = cx.value_type(cx.result(op, 0));
    if !cx.type_kind(ty).is_int_or_index() {
        return FoldResult::None;
    }
    match (int_value(cx, consts[0]), int_value(cx, consts[1])) {
        (Some(a), Some(b)) => {
            let v = wrap(cx, a + b, ty);
            FoldResult::Replace(vec![FoldValue::Constant(cx.int_attr(v, ty))])
        }
        (_, Some(0)) => FoldResult::Replace(vec![FoldValue::Value(Add(op).lhs(cx))]),
        (Some(0), _) => FoldResult::Replace(vec![FoldValue::Value(Add(op).rhs(cx))]),
        _ => FoldResult::None,
    }
}

struct DoubleNegation;

impl RewritePattern for DoubleNegation {
    fn root(&self) -> Option<&'static str> {
        Some(Neg::NAME)
    }
    fn name(&self) -> &'static str {
        "test-double-negation"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let cx = &*rw.cx;
        let Some(inner) = cx
            .defining_op(Neg(op).input(cx))
            .and_then(|d| Neg::cast(cx, d))
        else {
            return false;
        };
        let x = inner.input(cx);
        rw.replace_op(op, &[x]);
        true
    }
}

fn materialize_constant(cx: &mut Context, value: Attr, ty: Type, loc: Loc) -> Option<Op> {
    ipu_ir::constant::create_constant(cx, Constant::NAME, value, ty, loc)
}
