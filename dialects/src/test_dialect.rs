//! The `test` dialect: small ops that exercise the IR core (constants and
//! folding, patterns, regions, isolation, successors) in lit tests, like
//! MLIR's own test dialect. Not part of any compilation pipeline.

use ipu_ir::context::{Context, Op};
use ipu_ir::opdef::{
    constraints, Arity, AttrDef, Dialect, FoldResult, FoldValue, OpDef, RegionDef, SuccessorDef,
    Trait, ValueDef,
};
use ipu_ir::rewrite::{RewritePattern, Rewriter};
use ipu_ir::types::{Attr, AttrKind, Loc, Type};

const SCALAR: ValueDef = ValueDef {
    name: "input",
    arity: Arity::Single,
    constraint: constraints::INT_OR_FLOAT_OR_INDEX,
};

pub static CONSTANT: OpDef = OpDef {
    name: "test.constant",
    summary: "A scalar constant; its result type is the value's type.",
    results: &[ValueDef {
        name: "result",
        arity: Arity::Single,
        constraint: constraints::ANY_TYPE,
    }],
    attributes: &[AttrDef {
        name: "value",
        optional: false,
        constraint: constraints::TYPED_ATTR,
    }],
    traits: &[Trait::ConstantLike, Trait::Pure],
    custom_assembly: Some(ipu_ir::constant::CONSTANT_ASSEMBLY),
    verify: Some(ipu_ir::constant::verify_constant),
    ..OpDef::EMPTY
};

pub static ADD: OpDef = OpDef {
    name: "test.add",
    summary: "Integer addition; folds constants and `x + 0`.",
    operands: &[
        ValueDef {
            name: "lhs",
            ..SCALAR
        },
        ValueDef {
            name: "rhs",
            ..SCALAR
        },
    ],
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
    ..OpDef::EMPTY
};

pub static NEG: OpDef = OpDef {
    name: "test.neg",
    summary: "Integer negation; `neg(neg(x))` canonicalizes to `x`.",
    operands: &[SCALAR],
    results: &[ValueDef {
        name: "result",
        ..SCALAR
    }],
    traits: &[Trait::Pure, Trait::SameOperandsAndResultType],
    assembly_format: Some("$input attr-dict `:` type($result)"),
    canonicalization_patterns: Some(|| vec![Box::new(DoubleNegation)]),
    ..OpDef::EMPTY
};

pub static PRINT: OpDef = OpDef {
    name: "test.print",
    summary: "Consumes values with a side effect; never removed as dead.",
    operands: &[ValueDef {
        name: "inputs",
        arity: Arity::Variadic,
        constraint: constraints::ANY_TYPE,
    }],
    assembly_format: Some("$inputs attr-dict `:` type($inputs)"),
    ..OpDef::EMPTY
};

pub static REGION: OpDef = OpDef {
    name: "test.region",
    summary: "Holds one region that sees values from above.",
    regions: &[RegionDef {
        name: "body",
        arity: Arity::Single,
        single_block: false,
    }],
    traits: &[Trait::NoTerminator],
    assembly_format: Some("$body attr-dict"),
    ..OpDef::EMPTY
};

pub static ISOLATED: OpDef = OpDef {
    name: "test.isolated",
    summary: "Holds one region isolated from above.",
    regions: &[RegionDef {
        name: "body",
        arity: Arity::Single,
        single_block: false,
    }],
    traits: &[Trait::NoTerminator, Trait::IsolatedFromAbove],
    assembly_format: Some("$body attr-dict"),
    ..OpDef::EMPTY
};

pub static BR: OpDef = OpDef {
    name: "test.br",
    summary: "Unconditional branch (generic form only).",
    successors: &[SuccessorDef {
        name: "dest",
        arity: Arity::Single,
    }],
    traits: &[Trait::Terminator],
    ..OpDef::EMPTY
};

pub static COND_BR: OpDef = OpDef {
    name: "test.cond_br",
    summary: "Conditional branch on an i1 (generic form only).",
    operands: &[ValueDef {
        name: "condition",
        arity: Arity::Single,
        constraint: constraints::ANY_INTEGER,
    }],
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
    ..OpDef::EMPTY
};

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
        (_, Some(0)) => FoldResult::Replace(vec![FoldValue::Value(cx.operand(op, 0))]),
        (Some(0), _) => FoldResult::Replace(vec![FoldValue::Value(cx.operand(op, 1))]),
        _ => FoldResult::None,
    }
}

struct DoubleNegation;

impl RewritePattern for DoubleNegation {
    fn root(&self) -> Option<&'static str> {
        Some("test.neg")
    }
    fn name(&self) -> &'static str {
        "test-double-negation"
    }
    fn match_and_rewrite(&self, rw: &mut Rewriter<'_>, op: Op) -> bool {
        let input = rw.cx.operand(op, 0);
        let Some(inner) = rw
            .cx
            .defining_op(input)
            .filter(|&d| rw.cx.is(d, "test.neg"))
        else {
            return false;
        };
        let x = rw.cx.operand(inner, 0);
        rw.replace_op(op, &[x]);
        true
    }
}

fn materialize_constant(cx: &mut Context, value: Attr, ty: Type, loc: Loc) -> Option<Op> {
    ipu_ir::constant::create_constant(cx, "test.constant", value, ty, loc)
}
