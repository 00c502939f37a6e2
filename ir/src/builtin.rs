//! The builtin dialect: `builtin.module`, the top-level container.

use crate::context::{Context, Op, OperationState};
use crate::diag::Diagnostic;
use crate::lexer::Tok;
use crate::opdef::{constraints, Arity, AttrDef, CustomAssembly, Dialect, OpDef, RegionDef, Trait};
use crate::parser::OpParser;
use crate::printer::Printer;
use crate::types::Loc;

pub static MODULE: OpDef = OpDef {
    name: "builtin.module",
    summary: "A top-level container of operations, with an optional symbol name.",
    attributes: &[
        AttrDef {
            name: "sym_name",
            optional: true,
            constraint: constraints::SYMBOL_NAME_ATTR,
        },
        AttrDef {
            name: "sym_visibility",
            optional: true,
            constraint: constraints::STRING_ATTR,
        },
    ],
    regions: &[RegionDef {
        name: "bodyRegion",
        arity: Arity::Single,
        single_block: true,
    }],
    traits: &[
        Trait::IsolatedFromAbove,
        Trait::SymbolTable,
        Trait::NoTerminator,
        Trait::GraphRegion,
    ],
    custom_assembly: Some(CustomAssembly {
        parse: parse_module,
        print: print_module,
    }),
    ..OpDef::EMPTY
};

pub static BUILTIN_DIALECT: Dialect = Dialect {
    name: "builtin",
    description: "Core container ops.",
    ops: &[&MODULE],
    materialize_constant: None,
};

/// A new, detached, empty module.
pub fn create_module(cx: &mut Context, loc: Loc) -> Op {
    let name = cx.op_name("builtin.module");
    let mut st = OperationState::new(name, loc);
    st.num_regions = 1;
    let m = cx.create_op(st);
    let r = cx.region(m, 0);
    cx.create_block(r, &[]);
    m
}

fn parse_module(p: &mut OpParser<'_, '_, '_>) -> Result<(), Diagnostic> {
    if p.p.peek() == Tok::SymbolRef {
        let name = p.p.parse_symbol_name()?;
        let a = p.cx().string_attr(&name);
        p.add_attr("sym_name", a);
    }
    p.parse_optional_attr_dict_with_keyword()?;
    p.parse_region(&[])?;
    if p.regions[0].is_empty() {
        let b = p.cx().create_detached_block(&[]);
        p.regions[0].push(b);
    }
    Ok(())
}

fn print_module(p: &mut Printer<'_>, op: Op) -> std::fmt::Result {
    if let Some(name) = p.cx.get_str_attr(op, "sym_name") {
        p.write(" ");
        p.print_symbol_name(name);
    }
    p.print_attr_dict_with_keyword(op, &["sym_name"]);
    p.write(" ");
    p.print_region(p.cx.region(op, 0), false, false);
    Ok(())
}
