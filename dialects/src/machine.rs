//! The `machine` dialect: what each tile holds. So far the memory maps:
//! tiles whose buffers sit at the same addresses share one
//! `machine.memory_map`, printed once with the set of tiles it covers.

use ipu_ir::opdef::{constraints, AttrConstraint, AttrDef, Dialect, OpDef};
use ipu_ir::types::AttrKind;

const I64_ATTR: AttrConstraint = AttrConstraint {
    description: "64-bit integer attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Integer { ty, .. } if *ty == ipu_ir::Type::I64),
};

pub static MEMORY_MAP: OpDef = OpDef {
    name: "machine.memory_map",
    summary: "The data memory of a set of tiles: every buffer with its address, size and what it holds \
              (buffers whose lifetimes do not overlap share addresses), the bytes used and still free.",
    attributes: &[
        AttrDef { name: "tiles", optional: false, constraint: constraints::STRING_ATTR },
        AttrDef { name: "used", optional: false, constraint: I64_ATTR },
        AttrDef { name: "free", optional: false, constraint: I64_ATTR },
        AttrDef { name: "buffers", optional: false, constraint: constraints::ARRAY_ATTR },
    ],
    assembly_format: Some("attr-dict"),
    ..OpDef::EMPTY
};

pub static CODE: OpDef = OpDef {
    name: "machine.code",
    summary: "The code image of a set of tiles: the kernel specialisations linked into it, its size and its \
              executable ranges.",
    attributes: &[
        AttrDef { name: "tiles", optional: false, constraint: constraints::STRING_ATTR },
        AttrDef { name: "kernels", optional: false, constraint: constraints::ARRAY_ATTR },
        AttrDef { name: "code_bytes", optional: false, constraint: I64_ATTR },
        AttrDef { name: "exec", optional: false, constraint: constraints::STRING_ATTR },
    ],
    assembly_format: Some("attr-dict"),
    ..OpDef::EMPTY
};

pub static MACHINE_DIALECT: Dialect = Dialect {
    name: "machine",
    description: "Per-tile code images and memory maps (and, next, programs) of the machine.",
    ops: &[&MEMORY_MAP, &CODE],
    materialize_constant: None,
};
