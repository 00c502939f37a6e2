//! The `exchange` dialect: the bulk-synchronous program's exchange phases.
//! An `exchange.phase` moves (parts of) a distributed value between tiles
//! before the compute set that reads it; it carries its schedule's figures:
//! horizon (cycles the phase lasts), endpoint lower bound (the busiest
//! tile's bytes over its bandwidth), their gap, the schedule kind chosen,
//! the per-tile exchange-table row size, and the transfers grouped by pattern.

use ipu_ir::opdef::{constraints, Arity, AttrConstraint, AttrDef, Dialect, OpDef, ValueDef};
use ipu_ir::types::AttrKind;

const I64_ATTR: AttrConstraint = AttrConstraint {
    description: "64-bit integer attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Integer { ty, .. } if *ty == ipu_ir::Type::I64),
};
const KIND_ATTR: AttrConstraint = AttrConstraint {
    description: "\"compact-streams\", \"paired\" or \"reused\"",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(s) if matches!(&**s, "compact-streams" | "paired" | "reused")),
};

const fn figure(name: &'static str) -> AttrDef {
    AttrDef {
        name,
        optional: false,
        constraint: I64_ATTR,
    }
}

pub static PHASE: OpDef = OpDef {
    name: "exchange.phase",
    summary: "An exchange phase: it `moves` `value` into the layout an operand of the next compute set needs \
              (\"operand #i\"), or a compute set's split-K partial sums onto the tiles that add them up \
              (\"partial sums\"); with its verified schedule's horizon, lower bound, gap, kind, row size and \
              transfer patterns.",
    operands: &[ValueDef { name: "value", arity: Arity::Single, constraint: constraints::ANY_TENSOR }],
    attributes: &[
        AttrDef { name: "sym_name", optional: false, constraint: constraints::SYMBOL_NAME_ATTR },
        AttrDef { name: "moves", optional: false, constraint: constraints::STRING_ATTR },
        figure("transfers"),
        figure("bytes"),
        figure("local_bytes"),
        figure("horizon"),
        figure("initial_horizon"),
        figure("lower_bound"),
        figure("gap"),
        AttrDef { name: "kind", optional: false, constraint: KIND_ATTR },
        figure("row_words"),
        AttrDef { name: "patterns", optional: false, constraint: constraints::ARRAY_ATTR },
    ],
    assembly_format: Some("$value attr-dict `:` type($value)"),
    ..OpDef::EMPTY
};

pub static EXCHANGE_DIALECT: Dialect = Dialect {
    name: "exchange",
    description: "Exchange phases of the bulk-synchronous program, with their schedules.",
    ops: &[&PHASE],
    materialize_constant: None,
};
