//! Declarative assembly formats, a subset of MLIR's ODS syntax:
//! `` `lit` ``, `$operand`, `$attr`, `$region`, `$successor`, `attr-dict`,
//! `attr-dict-with-keyword`, `type($x)`, `type(operands)`, `type(results)`,
//! `functional-type(operands, results)`, `operands`, `regions`.
//!
//! A format is checked once when its dialect is registered; parsing and
//! printing then follow the same directive list, so they cannot disagree.

use crate::context::Op;
use crate::diag::Diagnostic;
use crate::lexer::Tok;
use crate::opdef::{Arity, OpDef, Trait};
use crate::parser::{OpParser, OperandRef, PResult};
use crate::printer::Printer;
use crate::types::Type;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TypeRef {
    Operand(usize),
    Result(usize),
    AllOperands,
    AllResults,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Directive {
    Literal(String),
    Operand(usize),
    AllOperands,
    Attribute(usize),
    Region(usize),
    AllRegions,
    Successor(usize),
    AttrDict { with_keyword: bool },
    TypeOf(TypeRef),
    FunctionalType,
}

#[derive(Clone, Debug)]
pub struct Format {
    pub(crate) directives: Vec<Directive>,
}

pub(crate) fn parse_format(def: &OpDef, text: &str) -> Result<Format, String> {
    let mut directives = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('`') {
            let end = r.find('`').ok_or("unterminated literal")?;
            let lit = &r[..end];
            if lit.is_empty() {
                return Err("empty literal".into());
            }
            directives.push(Directive::Literal(lit.to_string()));
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix('$') {
            let end = r
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(r.len());
            let name = &r[..end];
            directives.push(resolve_var(def, name)?);
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("attr-dict-with-keyword") {
            directives.push(Directive::AttrDict { with_keyword: true });
            rest = r;
        } else if let Some(r) = rest.strip_prefix("attr-dict") {
            directives.push(Directive::AttrDict {
                with_keyword: false,
            });
            rest = r;
        } else if let Some(r) = rest.strip_prefix("functional-type(operands, results)") {
            directives.push(Directive::FunctionalType);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("type(") {
            let end = r.find(')').ok_or("unterminated type(...)")?;
            let arg = r[..end].trim();
            let t = match arg {
                "operands" => TypeRef::AllOperands,
                "results" => TypeRef::AllResults,
                _ => {
                    let name = arg
                        .strip_prefix('$')
                        .ok_or("type(...) takes $name, operands or results")?;
                    if let Some(i) = def.operands.iter().position(|o| o.name == name) {
                        TypeRef::Operand(i)
                    } else if let Some(i) = def.results.iter().position(|o| o.name == name) {
                        TypeRef::Result(i)
                    } else {
                        return Err(format!("type(${name}) names no operand or result"));
                    }
                }
            };
            directives.push(Directive::TypeOf(t));
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix("operands") {
            directives.push(Directive::AllOperands);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("regions") {
            directives.push(Directive::AllRegions);
            rest = r;
        } else {
            return Err(format!("unexpected text in format: '{rest}'"));
        }
        rest = rest.trim_start();
    }
    let f = Format { directives };
    check_complete(def, &f)?;
    Ok(f)
}

fn resolve_var(def: &OpDef, name: &str) -> Result<Directive, String> {
    if let Some(i) = def.operands.iter().position(|o| o.name == name) {
        return Ok(Directive::Operand(i));
    }
    if let Some(i) = def.attributes.iter().position(|a| a.name == name) {
        return Ok(Directive::Attribute(i));
    }
    if let Some(i) = def.regions.iter().position(|r| r.name == name) {
        return Ok(Directive::Region(i));
    }
    if let Some(i) = def.successors.iter().position(|s| s.name == name) {
        return Ok(Directive::Successor(i));
    }
    Err(format!(
        "${name} names no operand, attribute, region or successor"
    ))
}

/// Every operand, result type, region and required attribute must be reachable.
fn check_complete(def: &OpDef, f: &Format) -> Result<(), String> {
    let has = |d: &Directive| f.directives.contains(d);
    let all_operands = has(&Directive::AllOperands);
    for (i, o) in def.operands.iter().enumerate() {
        if !all_operands && !has(&Directive::Operand(i)) {
            return Err(format!("operand '{}' is not in the format", o.name));
        }
    }
    let same = def.has_trait(Trait::SameOperandsAndResultType);
    let functional = has(&Directive::FunctionalType);
    let any_type = f
        .directives
        .iter()
        .any(|d| matches!(d, Directive::TypeOf(_)));
    for (i, o) in def.operands.iter().enumerate() {
        let typed = functional
            || has(&Directive::TypeOf(TypeRef::Operand(i)))
            || has(&Directive::TypeOf(TypeRef::AllOperands))
            || (same && any_type);
        if !typed {
            return Err(format!("type of operand '{}' is not in the format", o.name));
        }
    }
    for (i, r) in def.results.iter().enumerate() {
        let typed = functional
            || has(&Directive::TypeOf(TypeRef::Result(i)))
            || has(&Directive::TypeOf(TypeRef::AllResults))
            || (same && any_type);
        if !typed {
            return Err(format!("type of result '{}' is not in the format", r.name));
        }
    }
    let all_regions = has(&Directive::AllRegions);
    for (i, r) in def.regions.iter().enumerate() {
        if !all_regions && !has(&Directive::Region(i)) {
            return Err(format!("region '{}' is not in the format", r.name));
        }
    }
    let non_single = def
        .operands
        .iter()
        .filter(|o| o.arity != Arity::Single)
        .count();
    if non_single > 1 {
        return Err("at most one optional or variadic operand group is supported".into());
    }
    if def
        .results
        .iter()
        .filter(|o| o.arity != Arity::Single)
        .count()
        > 1
    {
        return Err("at most one optional or variadic result group is supported".into());
    }
    if !f
        .directives
        .iter()
        .any(|d| matches!(d, Directive::AttrDict { .. }))
    {
        return Err("the format needs attr-dict".into());
    }
    Ok(())
}

/// Whether literal `di` introduces only type lists that are empty: then it is
/// neither printed nor required (`test.print :` reads as `test.print`).
/// `empty_operand_group(i)` tells whether operand group `i` has no values.
fn dangling_type_literal(
    f: &Format,
    di: usize,
    empty_operand_group: &dyn Fn(usize) -> bool,
) -> bool {
    let rest = &f.directives[di + 1..];
    let mut saw_type = false;
    for d in rest {
        match d {
            Directive::TypeOf(TypeRef::Operand(i)) if empty_operand_group(*i) => saw_type = true,
            Directive::Literal(_) => break,
            Directive::AttrDict { .. } => {}
            _ => return false,
        }
    }
    saw_type
}

/// Names of attributes a format prints itself (elided from attr-dict).
fn format_attr_names(def: &OpDef, f: &Format) -> Vec<&'static str> {
    f.directives
        .iter()
        .filter_map(|d| match d {
            Directive::Attribute(i) => Some(def.attributes[*i].name),
            _ => None,
        })
        .collect()
}

pub(crate) fn parse_with_format(p: &mut OpParser<'_, '_, '_>, f: &Format) -> PResult<()> {
    let def = p.def;
    let mut operand_refs: Vec<Vec<OperandRef>> = vec![Vec::new(); def.operands.len()];
    let mut operand_types: Vec<Option<Vec<Type>>> = vec![None; def.operands.len()];
    let mut result_types: Vec<Option<Vec<Type>>> = vec![None; def.results.len()];
    let mut seen_operands = false;
    // Set when an elided literal means the type directives after it are absent.
    let mut skip_types_after = false;
    let start_loc = p.p.cur_loc();
    for (di, d) in f.directives.iter().enumerate() {
        match d {
            Directive::Literal(l) => {
                let elidable = dangling_type_literal(f, di, &|i| operand_refs[i].is_empty());
                skip_types_after = false;
                if elidable {
                    skip_types_after = !p.p.consume_literal(l);
                } else {
                    p.p.expect_literal(l)?;
                }
            }
            Directive::Operand(i) => {
                let arity = def.operands[*i].arity;
                operand_refs[*i] = parse_operand_group(p, arity)?;
            }
            Directive::AllOperands => {
                seen_operands = true;
                let refs = parse_operand_group(p, Arity::Variadic)?;
                distribute_refs(def, refs, &mut operand_refs).map_err(|m| p.p.error_here(m))?;
            }
            Directive::Attribute(i) => {
                let a = p.p.parse_attribute()?;
                p.add_attr(def.attributes[*i].name, a);
            }
            Directive::Region(_) => p.parse_region(&[])?,
            Directive::AllRegions => {
                while p.p.peek() == Tok::LBrace {
                    p.parse_region(&[])?;
                    if !p.p.consume_if(Tok::Comma) {
                        break;
                    }
                }
            }
            Directive::Successor(_) => {
                return Err(p
                    .p
                    .error_here("successors in declarative formats are not supported"));
            }
            Directive::AttrDict { with_keyword } => {
                if *with_keyword {
                    p.parse_optional_attr_dict_with_keyword()?
                } else {
                    p.parse_optional_attr_dict()?
                }
            }
            Directive::TypeOf(_) if skip_types_after => {}
            Directive::TypeOf(t) => match t {
                TypeRef::Operand(i) => {
                    let n = operand_refs[*i].len();
                    operand_types[*i] = Some(parse_types_n(p, def.operands[*i].arity, n)?);
                }
                TypeRef::Result(i) => {
                    let tys = parse_types_n(p, def.results[*i].arity, usize::MAX)?;
                    result_types[*i] = Some(tys);
                }
                TypeRef::AllOperands => {
                    let n: usize = operand_refs.iter().map(|r| r.len()).sum();
                    let tys = if n == 0 {
                        Vec::new()
                    } else {
                        p.p.parse_type_list()?
                    };
                    split_types(def, &operand_refs, tys, &mut operand_types)
                        .map_err(|m| p.p.error_here(m))?;
                }
                TypeRef::AllResults => {
                    let tys = p.p.parse_type_list()?;
                    assign_result_types(def, tys, &mut result_types)
                        .map_err(|m| p.p.error_here(m))?;
                }
            },
            Directive::FunctionalType => {
                let pos = p.p.cur_loc();
                let t = p.p.parse_type()?;
                let (inputs, results) = match p.p.cx.type_kind(t) {
                    crate::types::TypeKind::Function { inputs, results } => {
                        (inputs.clone(), results.clone())
                    }
                    _ => return Err(Diagnostic::error(pos, "expected a function type")),
                };
                split_types(def, &operand_refs, inputs, &mut operand_types)
                    .map_err(|m| Diagnostic::error(pos, m))?;
                assign_result_types(def, results, &mut result_types)
                    .map_err(|m| Diagnostic::error(pos, m))?;
            }
        }
    }
    let _ = seen_operands;
    // Infer the missing types from the same-type trait.
    if def.has_trait(Trait::SameOperandsAndResultType) {
        let known = operand_types
            .iter()
            .chain(result_types.iter())
            .flatten()
            .flat_map(|v| v.first().copied())
            .next();
        if let Some(t) = known {
            for (i, slot) in operand_types.iter_mut().enumerate() {
                if slot.is_none() {
                    *slot = Some(vec![t; operand_refs[i].len()]);
                }
            }
            for (i, slot) in result_types.iter_mut().enumerate() {
                if slot.is_none() {
                    let n = match def.results[i].arity {
                        Arity::Single => 1,
                        _ => 0,
                    };
                    *slot = Some(vec![t; n]);
                }
            }
        }
    }
    for (i, refs) in operand_refs.into_iter().enumerate() {
        let tys = operand_types[i].take().unwrap_or_default();
        if tys.len() != refs.len() {
            return Err(Diagnostic::error(
                start_loc,
                format!(
                    "operand group '{}' has {} values but {} types",
                    def.operands[i].name,
                    refs.len(),
                    tys.len()
                ),
            ));
        }
        for (r, t) in refs.into_iter().zip(tys) {
            p.add_operand(r, t)?;
        }
    }
    for tys in result_types.into_iter() {
        for t in tys.unwrap_or_default() {
            p.add_result_type(t);
        }
    }
    Ok(())
}

fn parse_operand_group<'s>(
    p: &mut OpParser<'_, 's, '_>,
    arity: Arity,
) -> PResult<Vec<OperandRef<'s>>> {
    let mut refs = Vec::new();
    match arity {
        Arity::Single => refs.push(p.p.parse_operand_ref()?),
        Arity::Optional => {
            if p.p.peek() == Tok::ValueId {
                refs.push(p.p.parse_operand_ref()?);
            }
        }
        Arity::Variadic => {
            if p.p.peek() == Tok::ValueId {
                loop {
                    refs.push(p.p.parse_operand_ref()?);
                    if p.p.peek() != Tok::Comma {
                        break;
                    }
                    p.p.bump();
                }
            }
        }
    }
    Ok(refs)
}

fn parse_types_n(p: &mut OpParser<'_, '_, '_>, arity: Arity, n: usize) -> PResult<Vec<Type>> {
    match arity {
        Arity::Single => Ok(vec![p.p.parse_type()?]),
        _ if n == 0 => Ok(Vec::new()),
        _ => p.p.parse_type_list(),
    }
}

/// Splits a flat operand list across the declared groups (at most one non-single).
fn distribute_refs<'s>(
    def: &OpDef,
    refs: Vec<OperandRef<'s>>,
    out: &mut [Vec<OperandRef<'s>>],
) -> Result<(), String> {
    let sizes = group_sizes(def.operands.iter().map(|o| o.arity), refs.len()).ok_or_else(|| {
        format!(
            "expected {} operands, found {}",
            def.operands.len(),
            refs.len()
        )
    })?;
    let mut it = refs.into_iter();
    for (slot, n) in out.iter_mut().zip(sizes) {
        *slot = it.by_ref().take(n).collect();
    }
    Ok(())
}

fn split_types(
    def: &OpDef,
    refs: &[Vec<OperandRef>],
    tys: Vec<Type>,
    out: &mut [Option<Vec<Type>>],
) -> Result<(), String> {
    let total: usize = refs.iter().map(|r| r.len()).sum();
    if tys.len() != total {
        return Err(format!(
            "{} operands present, but expected {} types",
            total,
            tys.len()
        ));
    }
    let _ = def;
    let mut it = tys.into_iter();
    for (slot, r) in out.iter_mut().zip(refs) {
        *slot = Some(it.by_ref().take(r.len()).collect());
    }
    Ok(())
}

fn assign_result_types(
    def: &OpDef,
    tys: Vec<Type>,
    out: &mut [Option<Vec<Type>>],
) -> Result<(), String> {
    let n = tys.len();
    let sizes = group_sizes(def.results.iter().map(|o| o.arity), n)
        .ok_or_else(|| format!("expected {} result types, found {n}", def.results.len()))?;
    let mut it = tys.into_iter();
    for (slot, k) in out.iter_mut().zip(sizes) {
        *slot = Some(it.by_ref().take(k).collect());
    }
    Ok(())
}

/// Sizes of each group given the total, when at most one group is not single.
fn group_sizes(arities: impl Iterator<Item = Arity> + Clone, total: usize) -> Option<Vec<usize>> {
    let singles = arities.clone().filter(|a| *a == Arity::Single).count();
    let flexible = arities.clone().count() - singles;
    if total < singles || (flexible == 0 && total != singles) {
        return None;
    }
    let rest = total - singles;
    Some(
        arities
            .map(|a| match a {
                Arity::Single => 1,
                Arity::Optional if rest > 1 => usize::MAX,
                _ => rest,
            })
            .collect::<Vec<_>>(),
    )
    .filter(|v| !v.contains(&usize::MAX))
}

/// Operands of group `i` of `op`.
pub fn operand_group(
    cx: &crate::context::Context,
    op: Op,
    def: &OpDef,
    i: usize,
) -> Vec<crate::context::Value> {
    let all = cx.operands(op);
    let sizes = group_sizes(def.operands.iter().map(|o| o.arity), all.len()).unwrap_or_default();
    let start: usize = sizes.iter().take(i).sum();
    let n = sizes.get(i).copied().unwrap_or(0);
    all.get(start..start + n)
        .map(|s| s.to_vec())
        .unwrap_or_default()
}

fn result_group(
    cx: &crate::context::Context,
    op: Op,
    def: &OpDef,
    i: usize,
) -> Vec<crate::context::Value> {
    let all: Vec<_> = cx.results(op).collect();
    let sizes = group_sizes(def.results.iter().map(|o| o.arity), all.len()).unwrap_or_default();
    let start: usize = sizes.iter().take(i).sum();
    let n = sizes.get(i).copied().unwrap_or(0);
    all.get(start..start + n)
        .map(|s| s.to_vec())
        .unwrap_or_default()
}

pub(crate) fn print_with_format(p: &mut Printer<'_>, op: Op, f: &Format) -> std::fmt::Result {
    let cx = p.cx;
    let def = cx.def(op).expect("registered op");
    let elided = format_attr_names(def, f);
    // Spacing like MLIR's: a space before each element except after an opening
    // bracket and before closing punctuation and commas.
    let mut after_open = false;
    let mut last_was_punct = false;
    let mut first = true;
    let mut skip_types_after = false;
    for (di, d) in f.directives.iter().enumerate() {
        if let Directive::Literal(_) = d {
            skip_types_after =
                dangling_type_literal(f, di, &|i| operand_group(cx, op, def, i).is_empty());
            if skip_types_after {
                continue;
            }
        }
        if skip_types_after && matches!(d, Directive::TypeOf(_)) {
            continue;
        }
        let (no_space_before, opens) = match d {
            Directive::Literal(l) => {
                let bracket = l.len() == 1 && "<>(){}[],".contains(l.as_str());
                let no_space = bracket && (!last_was_punct || ">)}],".contains(l.as_str()));
                (no_space, matches!(l.as_str(), "(" | "[" | "<"))
            }
            _ => (false, false),
        };
        let prints_itself = matches!(d, Directive::AttrDict { .. });
        if !prints_itself {
            let empty = match d {
                Directive::Operand(i) => operand_group(cx, op, def, *i).is_empty(),
                Directive::TypeOf(TypeRef::Operand(i)) => operand_group(cx, op, def, *i).is_empty(),
                Directive::TypeOf(TypeRef::AllOperands) | Directive::AllOperands => {
                    cx.operands(op).is_empty()
                }
                Directive::TypeOf(TypeRef::Result(i)) => result_group(cx, op, def, *i).is_empty(),
                Directive::AllRegions => cx.num_regions(op) == 0,
                _ => false,
            };
            if empty {
                continue;
            }
            if first || !(no_space_before || after_open) {
                p.write(" ");
            }
            first = false;
            after_open = opens;
            last_was_punct =
                matches!(d, Directive::Literal(l) if !l.starts_with(|c: char| c.is_alphanumeric()));
        }
        match d {
            Directive::Literal(l) => p.write(l),
            Directive::Operand(i) => {
                let vs = operand_group(cx, op, def, *i);
                p.print_values(&vs);
            }
            Directive::AllOperands => {
                let vs = cx.operands(op).to_vec();
                p.print_values(&vs);
            }
            Directive::Attribute(i) => {
                if let Some(a) = cx.get_attr(op, def.attributes[*i].name) {
                    p.print_attr(a);
                }
            }
            Directive::Region(i) => p.print_region(cx.region(op, *i), true, false),
            Directive::AllRegions => {
                for (k, r) in cx.regions(op).enumerate() {
                    if k > 0 {
                        p.write(", ");
                    }
                    p.print_region(r, true, false);
                }
            }
            Directive::Successor(_) => {}
            Directive::AttrDict { with_keyword } => {
                if *with_keyword {
                    p.print_attr_dict_with_keyword(op, &elided)
                } else {
                    p.print_attr_dict(op, &elided)
                }
            }
            Directive::TypeOf(t) => {
                let tys: Vec<Type> = match t {
                    TypeRef::Operand(i) => operand_group(cx, op, def, *i)
                        .iter()
                        .map(|&v| cx.value_type(v))
                        .collect(),
                    TypeRef::Result(i) => result_group(cx, op, def, *i)
                        .iter()
                        .map(|&v| cx.value_type(v))
                        .collect(),
                    TypeRef::AllOperands => cx.operand_types(op).collect(),
                    TypeRef::AllResults => cx.result_types(op).collect(),
                };
                p.print_types(tys);
            }
            Directive::FunctionalType => {
                let mut s = String::new();
                let inputs: Vec<Type> = cx.operand_types(op).collect();
                let results: Vec<Type> = cx.result_types(op).collect();
                s.push('(');
                for (i, &t) in inputs.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    crate::printer::write_type(cx, t, &mut s);
                }
                s.push_str(") -> ");
                if results.len() == 1 {
                    crate::printer::write_type(cx, results[0], &mut s);
                } else {
                    s.push('(');
                    for (i, &t) in results.iter().enumerate() {
                        if i > 0 {
                            s.push_str(", ");
                        }
                        crate::printer::write_type(cx, t, &mut s);
                    }
                    s.push(')');
                }
                p.write(&s);
            }
        }
    }
    Ok(())
}
