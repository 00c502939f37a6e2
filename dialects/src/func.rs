//! The `func` dialect: functions, calls and returns, with MLIR's syntax.

use ipu_ir::context::{Context, Op};
use ipu_ir::declare_op;
use ipu_ir::diag::Diagnostic;
use ipu_ir::lexer::Tok;
use ipu_ir::opdef::{constraints, Arity, CustomAssembly, Dialect, RegionDef, Trait, ValueDef};
use ipu_ir::parser::{OpParser, OperandRef};
use ipu_ir::printer::{type_to_string, Printer};
use ipu_ir::types::{Attr, AttrKind, Loc, Sym, Type, TypeKind};
use ipu_ir::verify::op_error as err;

declare_op! {
    pub static FUNC: Func = "func.func" {
        operands: [],
        attributes: [
            sym_name: &str [constraints::SYMBOL_NAME_ATTR],
            function_type: Type [constraints::FUNCTION_TYPE_ATTR],
            sym_visibility: Option<&str> [constraints::STRING_ATTR],
            arg_attrs: Option<Attr> [constraints::DICT_ARRAY_ATTR],
            res_attrs: Option<Attr> [constraints::DICT_ARRAY_ATTR],
        ],
        summary: "A function: a symbol with a signature and an optional body.",
        regions: &[RegionDef {
            name: "body",
            arity: Arity::Single,
            single_block: false,
        }],
        traits: &[Trait::IsolatedFromAbove, Trait::Symbol],
        custom_assembly: Some(CustomAssembly {
            parse: parse_func,
            print: print_func,
        }),
        default_dialect: Some("func"),
        verify: Some(verify_func),
    }
}

declare_op! {
    pub static RETURN: Return = "func.return" {
        operands: [],
        variadic: [operands: constraints::ANY_TYPE],
        attributes: [],
        summary: "Returns from the enclosing function with the given values.",
        traits: &[Trait::Terminator, Trait::ReturnLike],
        custom_assembly: Some(CustomAssembly {
            parse: parse_return,
            print: print_return,
        }),
        verify: Some(verify_return),
    }
}

declare_op! {
    pub static CALL: Call = "func.call" {
        operands: [],
        variadic: [operands: constraints::ANY_TYPE],
        attributes: [
            callee: Sym [constraints::FLAT_SYMBOL_REF_ATTR],
        ],
        summary: "Calls a function of the enclosing symbol table by name.",
        results: &[ValueDef {
            name: "results",
            arity: Arity::Variadic,
            constraint: constraints::ANY_TYPE,
        }],
        assembly_format: Some(
            "$callee `(` $operands `)` attr-dict `:` functional-type(operands, results)",
        ),
        verify: Some(verify_call),
    }
}

pub static FUNC_DIALECT: Dialect = Dialect {
    name: "func",
    description: "Functions, calls and returns.",
    ops: &[&FUNC, &RETURN, &CALL],
    materialize_constant: None,
};

/// The signature `(inputs) -> results` of a `func.func`.
pub fn function_type(cx: &Context, f: Op) -> Option<(Vec<Type>, Vec<Type>)> {
    match cx.attr_kind(cx.get_attr(f, "function_type")?) {
        AttrKind::Type(t) => match cx.type_kind(*t) {
            TypeKind::Function { inputs, results } => Some((inputs.clone(), results.clone())),
            _ => None,
        },
        _ => None,
    }
}

fn parse_func(p: &mut OpParser<'_, '_, '_>) -> Result<(), Diagnostic> {
    for vis in ["private", "public", "nested"] {
        if p.p.consume_keyword(vis) {
            let a = p.cx().string_attr(vis);
            p.add_attr("sym_visibility", a);
            break;
        }
    }
    let name = p.p.parse_symbol_name()?;
    let a = p.cx().string_attr(&name);
    p.add_attr("sym_name", a);
    // Arguments: named (`%a: t {attrs} loc(..)`) for definitions, bare types for declarations.
    p.p.expect(Tok::LParen)?;
    let mut args: Vec<(OperandRef, Type, Loc)> = Vec::new();
    let mut inputs = Vec::new();
    let mut arg_attrs = Vec::new();
    if !p.p.consume_if(Tok::RParen) {
        loop {
            if p.p.peek() == Tok::ValueId {
                let r = p.p.parse_operand_ref()?;
                p.p.expect(Tok::Colon)?;
                let ty = p.p.parse_type()?;
                let attrs = parse_optional_dict(p)?;
                let loc = match p.parse_optional_arg_loc()? {
                    Some(l) => l,
                    None => p.p.loc_at(r.pos),
                };
                args.push((r, ty, loc));
                inputs.push(ty);
                arg_attrs.push(attrs);
            } else {
                if !args.is_empty() {
                    return Err(p.p.error_here("expected SSA identifier"));
                }
                let ty = p.p.parse_type()?;
                let attrs = parse_optional_dict(p)?;
                inputs.push(ty);
                arg_attrs.push(attrs);
            }
            if !p.p.consume_if(Tok::Comma) {
                break;
            }
        }
        p.p.expect(Tok::RParen)?;
    }
    let mut results = Vec::new();
    let mut res_attrs = Vec::new();
    if p.p.consume_if(Tok::Arrow) {
        if p.p.consume_if(Tok::LParen) {
            if !p.p.consume_if(Tok::RParen) {
                loop {
                    results.push(p.p.parse_type()?);
                    res_attrs.push(parse_optional_dict(p)?);
                    if !p.p.consume_if(Tok::Comma) {
                        break;
                    }
                }
                p.p.expect(Tok::RParen)?;
            }
        } else {
            results.push(p.p.parse_type()?);
            res_attrs.push(ipu_ir::Attr::EMPTY_DICT);
        }
    }
    let fty = p.cx().function_type(inputs.clone(), results);
    let fty = p.cx().type_attr(fty);
    p.add_attr("function_type", fty);
    if arg_attrs.iter().any(|&a| a != ipu_ir::Attr::EMPTY_DICT) {
        let a = p.cx().array_attr(arg_attrs);
        p.add_attr("arg_attrs", a);
    }
    if res_attrs.iter().any(|&a| a != ipu_ir::Attr::EMPTY_DICT) {
        let a = p.cx().array_attr(res_attrs);
        p.add_attr("res_attrs", a);
    }
    p.parse_optional_attr_dict_with_keyword()?;
    if p.p.peek() == Tok::LBrace {
        if args.len() != inputs.len() {
            return Err(p
                .p
                .error_here("expected named arguments for a function with a body"));
        }
        p.parse_region(&args)?;
    } else {
        p.add_region(Vec::new());
    }
    Ok(())
}

fn parse_optional_dict(p: &mut OpParser<'_, '_, '_>) -> Result<ipu_ir::Attr, Diagnostic> {
    if p.p.peek() != Tok::LBrace {
        return Ok(ipu_ir::Attr::EMPTY_DICT);
    }
    let mut entries = Vec::new();
    p.p.parse_attr_dict_into(&mut entries)?;
    Ok(p.cx().dict_attr(entries))
}

fn dict_at(cx: &Context, f: Op, name: &str, i: usize) -> Option<ipu_ir::Attr> {
    match cx.attr_kind(cx.get_attr(f, name)?) {
        AttrKind::Array(items) => items
            .get(i)
            .copied()
            .filter(|&a| a != ipu_ir::Attr::EMPTY_DICT),
        _ => None,
    }
}

fn print_func(p: &mut Printer<'_>, op: Op) -> std::fmt::Result {
    let cx = p.cx;
    if let Some(vis) = cx.get_str_attr(op, "sym_visibility") {
        p.write(" ");
        p.write(vis);
    }
    p.write(" ");
    p.print_symbol_name(cx.get_str_attr(op, "sym_name").unwrap_or(""));
    let (inputs, results) = function_type(cx, op).unwrap_or_default();
    let body = cx.region(op, 0);
    let entry = cx.entry_block(body);
    p.write("(");
    for (i, &t) in inputs.iter().enumerate() {
        if i > 0 {
            p.write(", ");
        }
        match entry.and_then(|b| cx.block_args(b).get(i).copied()) {
            Some(v) => {
                p.print_value(v);
                p.write(": ");
                p.print_type(t);
            }
            None => p.print_type(t),
        }
        if let Some(a) = dict_at(cx, op, "arg_attrs", i) {
            p.write(" ");
            p.print_attr(a);
        }
        if let (Some(b), true) = (entry, p.opts.debug_info) {
            if let Some(&v) = cx.block_args(b).get(i) {
                p.write(" ");
                p.print_loc(cx.block_arg_loc(v));
            }
        }
    }
    p.write(")");
    let has_res_attrs = (0..results.len()).any(|i| dict_at(cx, op, "res_attrs", i).is_some());
    if !results.is_empty() {
        p.write(" -> ");
        let single = results.len() == 1
            && !has_res_attrs
            && !matches!(cx.type_kind(results[0]), TypeKind::Function { .. });
        if !single {
            p.write("(");
        }
        for (i, &t) in results.iter().enumerate() {
            if i > 0 {
                p.write(", ");
            }
            p.print_type(t);
            if let Some(a) = dict_at(cx, op, "res_attrs", i) {
                p.write(" ");
                p.print_attr(a);
            }
        }
        if !single {
            p.write(")");
        }
    }
    p.print_attr_dict_with_keyword(
        op,
        &[
            "sym_name",
            "function_type",
            "sym_visibility",
            "arg_attrs",
            "res_attrs",
        ],
    );
    if entry.is_some() {
        p.write(" ");
        p.print_region(body, false, false);
    }
    Ok(())
}

fn verify_func(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let (inputs, results) = function_type(cx, op).unwrap_or_default();
    for (name, n) in [("arg_attrs", inputs.len()), ("res_attrs", results.len())] {
        if let Some(a) = cx.get_attr(op, name) {
            if let AttrKind::Array(items) = cx.attr_kind(a) {
                if items.len() != n {
                    return Err(err(
                        cx,
                        op,
                        format!(
                            "expects {name} to have {n} entries, but found {}",
                            items.len()
                        ),
                    ));
                }
            }
        }
    }
    for (i, &t) in inputs.iter().enumerate() {
        let Some(a) = arg_default(cx, op, i) else {
            continue;
        };
        let ty = match cx.attr_kind(a) {
            AttrKind::DenseElements { ty, .. } | AttrKind::DenseResource { ty, .. } => *ty,
            _ => {
                return Err(err(
                    cx,
                    op,
                    format!("argument #{i}: '{DEFAULT_ATTR}' must be a dense elements or resource attribute"),
                ))
            }
        };
        if ty != t {
            return Err(err(
                cx,
                op,
                format!(
                    "argument #{i}: '{DEFAULT_ATTR}' is {}, but the argument is {}",
                    type_to_string(cx, ty),
                    type_to_string(cx, t)
                ),
            ));
        }
    }
    for (i, &t) in inputs.iter().enumerate() {
        let Some(a) = io_attr(cx, op, "arg_attrs", i, RANDOM_ATTR) else {
            continue;
        };
        if random_range(cx, a).is_none() {
            return Err(err(
                cx,
                op,
                format!("argument #{i}: '{RANDOM_ATTR}' must be two finite numbers [lo, hi] with lo < hi"),
            ));
        }
        let is_float = matches!(cx.type_kind(t), TypeKind::Tensor { element, .. } if cx.type_kind(*element).is_float());
        if !is_float {
            return Err(err(
                cx,
                op,
                format!(
                    "argument #{i}: '{RANDOM_ATTR}' needs a float tensor, but the argument is {}",
                    type_to_string(cx, t)
                ),
            ));
        }
    }
    let body = cx.region(op, 0);
    let Some(entry) = cx.entry_block(body) else {
        if cx.get_str_attr(op, "sym_visibility") == Some("public")
            || cx.get_str_attr(op, "sym_visibility").is_none()
        {
            return Err(err(
                cx,
                op,
                "symbol declaration cannot have public visibility",
            ));
        }
        return Ok(());
    };
    let args = cx.block_args(entry);
    if args.len() != inputs.len() {
        return Err(err(
            cx,
            op,
            format!(
                "entry block must have {} arguments to match function signature",
                inputs.len()
            ),
        ));
    }
    for (i, (&a, &t)) in args.iter().zip(&inputs).enumerate() {
        if cx.value_type(a) != t {
            return Err(err(
                cx,
                op,
                format!(
                    "type of entry block argument #{i}('{}') must match the type of the corresponding argument in function signature('{}')",
                    type_to_string(cx, cx.value_type(a)),
                    type_to_string(cx, t)
                ),
            ));
        }
    }
    Ok(())
}

fn parse_return(p: &mut OpParser<'_, '_, '_>) -> Result<(), Diagnostic> {
    p.parse_optional_attr_dict()?;
    if p.p.peek() != Tok::ValueId {
        return Ok(());
    }
    let mut refs = vec![p.p.parse_operand_ref()?];
    while p.p.consume_if(Tok::Comma) {
        refs.push(p.p.parse_operand_ref()?);
    }
    p.p.expect(Tok::Colon)?;
    let pos = p.p.cur_loc();
    let tys = p.p.parse_type_list()?;
    if tys.len() != refs.len() {
        return Err(Diagnostic::error(
            pos,
            format!(
                "{} operands present, but expected {}",
                refs.len(),
                tys.len()
            ),
        ));
    }
    for (r, t) in refs.into_iter().zip(tys) {
        p.add_operand(r, t)?;
    }
    Ok(())
}

fn print_return(p: &mut Printer<'_>, op: Op) -> std::fmt::Result {
    p.print_attr_dict(op, &[]);
    let ops = p.cx.operands(op).to_vec();
    if !ops.is_empty() {
        p.write(" ");
        p.print_values(&ops);
        p.write(" : ");
        p.print_types(p.cx.operand_types(op).collect::<Vec<_>>());
    }
    Ok(())
}

fn verify_return(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let Some(f) = cx.parent_op(op).filter(|&f| Func::isa(cx, f)) else {
        return Err(err(cx, op, "expects parent op 'func.func'"));
    };
    let (_, results) = function_type(cx, f).unwrap_or_default();
    let name = Func(f).sym_name(cx);
    let n = cx.operands(op).len();
    if n != results.len() {
        return Err(err(
            cx,
            op,
            format!(
                "has {n} operands, but enclosing function (@{name}) returns {}",
                results.len()
            ),
        ));
    }
    for (i, (t, &r)) in cx.operand_types(op).zip(&results).enumerate() {
        if t != r {
            return Err(err(
                cx,
                op,
                format!(
                    "type of return operand {i} ('{}') doesn't match function result type ('{}') in function @{name}",
                    type_to_string(cx, t),
                    type_to_string(cx, r)
                ),
            ));
        }
    }
    Ok(())
}

fn verify_call(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let callee = cx.str(Call(op).callee(cx));
    let Some(f) = cx
        .nearest_symbol_table(op)
        .and_then(|t| cx.lookup_symbol(t, callee))
        .filter(|&f| Func::isa(cx, f))
    else {
        return Err(err(
            cx,
            op,
            format!("'{callee}' does not reference a valid function"),
        ));
    };
    let (inputs, results) = function_type(cx, f).unwrap_or_default();
    let operand_types: Vec<Type> = cx.operand_types(op).collect();
    if operand_types.len() != inputs.len() {
        return Err(err(cx, op, "incorrect number of operands for callee"));
    }
    for (i, (&a, &b)) in operand_types.iter().zip(&inputs).enumerate() {
        if a != b {
            return Err(err(
                cx,
                op,
                format!(
                    "operand type mismatch: expected operand type '{}', but provided '{}' for operand number {i}",
                    type_to_string(cx, b),
                    type_to_string(cx, a)
                ),
            ));
        }
    }
    let result_types: Vec<Type> = cx.result_types(op).collect();
    if result_types != results {
        return Err(err(
            cx,
            op,
            "result type mismatch with the callee's signature",
        ));
    }
    Ok(())
}

/// The `ipu.name` of argument or result `i` of function `f` (`attrs` is
/// `arg_attrs` or `res_attrs`), if it has one.
pub fn io_name(cx: &Context, f: Op, attrs: &str, i: usize) -> Option<String> {
    match cx.attr_kind(io_attr(cx, f, attrs, i, "ipu.name")?) {
        AttrKind::String(s) => Some(s.to_string()),
        _ => None,
    }
}

/// The argument attribute marking a parameter: an argument loaded once,
/// with the program, not streamed per run.
pub const WEIGHT_ATTR: &str = "ipu.weight";

/// Whether argument `i` of `f` is a parameter ([`WEIGHT_ATTR`]).
pub fn is_weight_arg(cx: &Context, f: Op, i: usize) -> bool {
    io_attr(cx, f, "arg_attrs", i, WEIGHT_ATTR).is_some()
}

/// The argument attribute holding an argument's default value: the value a
/// run gives that argument when the caller does not (an ONNX initializer
/// that is also a graph input). A dense elements or resource attribute of
/// the argument's type.
pub const DEFAULT_ATTR: &str = "ipu.default";

/// The default value of argument `i` of `f` ([`DEFAULT_ATTR`]), if it has one.
pub fn arg_default(cx: &Context, f: Op, i: usize) -> Option<ipu_ir::Attr> {
    io_attr(cx, f, "arg_attrs", i, DEFAULT_ATTR)
}

/// The argument attribute giving the range `[lo, hi]` that a run draws an
/// argument's random values from when the caller gives none (default
/// `[-1, 1]`): `ipu.random = [-0.03, 0.03]`, two floats, `lo < hi`, on a
/// float argument. Lets a model say what its parameters look like (weights
/// near zero, layer-norm gains near one) without carrying their values.
pub const RANDOM_ATTR: &str = "ipu.random";

/// The random range of argument `i` of `f` ([`RANDOM_ATTR`]), if it has a
/// well-formed one (the verifier rejects the others).
pub fn arg_random_range(cx: &Context, f: Op, i: usize) -> Option<(f64, f64)> {
    random_range(cx, io_attr(cx, f, "arg_attrs", i, RANDOM_ATTR)?)
}

fn random_range(cx: &Context, a: ipu_ir::Attr) -> Option<(f64, f64)> {
    let AttrKind::Array(items) = cx.attr_kind(a) else {
        return None;
    };
    let float = |a: &ipu_ir::Attr| match cx.attr_kind(*a) {
        AttrKind::Float { bits, .. } => Some(f64::from_bits(*bits)),
        AttrKind::Integer { value, .. } => Some(*value as f64),
        _ => None,
    };
    match items.as_slice() {
        [lo, hi] => {
            let (lo, hi) = (float(lo)?, float(hi)?);
            (lo.is_finite() && hi.is_finite() && lo < hi).then_some((lo, hi))
        }
        _ => None,
    }
}

/// Attribute `key` of argument or result `i` of `f`.
fn io_attr(cx: &Context, f: Op, attrs: &str, i: usize, key: &str) -> Option<ipu_ir::Attr> {
    let AttrKind::Array(items) = cx.attr_kind(cx.get_attr(f, attrs)?) else {
        return None;
    };
    let AttrKind::Dictionary(entries) = cx.attr_kind(*items.get(i)?) else {
        return None;
    };
    entries
        .iter()
        .find(|(k, _)| cx.str(*k) == key)
        .map(|&(_, v)| v)
}
