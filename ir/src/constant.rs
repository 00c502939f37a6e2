//! What every constant op shares: a typed `value` attribute whose type is
//! the result type. Dialects declare their constant ops with
//! [`CONSTANT_ASSEMBLY`] (`dialect.constant <attr>`), [`verify_constant`]
//! and [`create_constant`] for their materializer.

use crate::context::{Context, Op, OperationState};
use crate::diag::Diagnostic;
use crate::opdef::CustomAssembly;
use crate::parser::OpParser;
use crate::printer::Printer;
use crate::types::{Attr, AttrKind, Loc, Type};

/// The type a typed attribute carries (integers, floats, bools, elements).
pub fn attr_type(cx: &Context, a: Attr) -> Option<Type> {
    match cx.attr_kind(a) {
        AttrKind::Integer { ty, .. } | AttrKind::Float { ty, .. } => Some(*ty),
        AttrKind::DenseElements { ty, .. } | AttrKind::DenseResource { ty, .. } => Some(*ty),
        AttrKind::Bool(_) => Some(Type::I1),
        _ => None,
    }
}

/// `op.constant {attrs} <typed attribute>`; the result type is the attribute's.
pub const CONSTANT_ASSEMBLY: CustomAssembly = CustomAssembly {
    parse: parse_constant,
    print: print_constant,
};

fn parse_constant(p: &mut OpParser<'_, '_, '_>) -> Result<(), Diagnostic> {
    p.parse_optional_attr_dict()?;
    let loc = p.p.cur_loc();
    let a = p.p.parse_attribute()?;
    let Some(ty) = attr_type(p.p.cx, a) else {
        return Err(Diagnostic::error(
            loc,
            "expected a typed attribute (integer, float or elements)",
        ));
    };
    p.add_attr("value", a);
    p.add_result_type(ty);
    Ok(())
}

fn print_constant(p: &mut Printer<'_>, op: Op) -> std::fmt::Result {
    p.print_attr_dict(op, &["value"]);
    if let Some(a) = p.cx.get_attr(op, "value") {
        p.write(" ");
        p.print_attr(a);
    }
    Ok(())
}

/// The `value` attribute's type is the result type.
pub fn verify_constant(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let value = cx.get_attr(op, "value").and_then(|a| attr_type(cx, a));
    if value != Some(cx.value_type(cx.result(op, 0))) {
        return Err(crate::verify::op_error(
            cx,
            op,
            "value type does not match the result type",
        ));
    }
    Ok(())
}

/// A detached constant op `name` holding `value`, when the value's type is `ty`.
pub fn create_constant(
    cx: &mut Context,
    name: &str,
    value: Attr,
    ty: Type,
    loc: Loc,
) -> Option<Op> {
    if attr_type(cx, value) != Some(ty) {
        return None;
    }
    let name = cx.op_name(name);
    let mut st = OperationState::new(name, loc);
    st.result_types.push(ty);
    let key = cx.sym("value");
    st.attrs = cx.dict_attr(vec![(key, value)]);
    Some(cx.create_op(st))
}
