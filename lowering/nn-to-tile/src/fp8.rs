//! FP8 weights kept in FP8: a cast to FP8 of a constant (the form
//! `ipu-translate --weights-precision f8E4M3FN` gives a matmul weight,
//! `nn.cast {saturate, scale = s}` of an f32 constant) is done now, by the
//! reference's rounding, and the constant holds the FP8 codes (one byte an
//! element) with the cast's scale, which the `tile.constant` keeps
//! (`scale`): its value is the codes times 2^scale, as the cast's. The
//! matmuls that read it widen its blocks on their tiles as they read them
//! (`ipu_device::fp8_scale` gives them the scale), so the weights are FP8
//! in tile memory and no cast runs per run.
//!
//! Inside the pass the folded `nn.constant` carries the scale as the
//! attribute `scale`, which only this pass writes and reads
//! ([`constant_scale`]); the constant's bytes are the codes.

use ipu_dialects::nn::{self, element_type};
use ipu_ir::types::AttrKind;
use ipu_ir::{Attr, Context, Op, Type, Value};
use ipu_reference::OpKind;

/// The scale of a folded FP8 `nn.constant` (`None` for any other op).
pub fn constant_scale(cx: &Context, op: Op) -> Option<i64> {
    if !nn::Constant::isa(cx, op) {
        return None;
    }
    match cx.get_attr(op, "scale").map(|a| cx.attr_kind(a)) {
        Some(AttrKind::Integer { value, .. }) => Some(*value as i64),
        _ => None,
    }
}

/// Whether `op` is a cast to FP8 of a constant that every reader of which
/// is a matmul: folded by [`fold_weight_casts`].
fn is_weight_cast(cx: &Context, op: Op) -> bool {
    if !nn::Cast::isa(cx, op) {
        return false;
    }
    let y = cx.result(op, 0);
    let to = cx
        .tensor_parts(cx.value_type(y))
        .and_then(|(_, e)| element_type(cx, e));
    to.is_some_and(|t| t.is_fp8())
        && cx
            .defining_op(cx.operand(op, 0))
            .is_some_and(|d| nn::Constant::isa(cx, d) && constant_scale(cx, d).is_none())
        && cx.has_uses(y)
        && cx.uses(y).iter().all(|u| nn::MatMul::isa(cx, u.op))
}

/// A resource handle not yet taken, from `base`.
fn fresh_handle(cx: &Context, base: &str) -> String {
    let mut name = format!("{base}_f8");
    let mut n = 1;
    while cx.resources.get(&name).is_some() {
        name = format!("{base}_f8_{n}");
        n += 1;
    }
    name
}

/// The attribute of the FP8 codes `inline` holds for constant `source`: a
/// resource blob beside the source's when the source is one, else inline.
fn codes_attr(cx: &mut Context, source: Attr, inline: Attr) -> Attr {
    let AttrKind::DenseResource { handle, .. } = cx.attr_kind(source).clone() else {
        return inline;
    };
    let AttrKind::DenseElements { ty, data } = cx.attr_kind(inline).clone() else {
        return inline;
    };
    if data.splat {
        return inline;
    }
    let name = fresh_handle(cx, cx.str(handle));
    cx.resource_attr(&name, ty, &data.bytes)
}

/// An FP8 `nn.constant` (inserted before `at`) of constant `src` cast by
/// `kind` (an `nn.cast` to FP8 of type `ty`) at compile time: its codes and
/// the cast's scale. `None` when the constant cannot be read.
fn folded(cx: &mut Context, src: Op, kind: &OpKind, ty: Type, at: Op) -> Option<Value> {
    let OpKind::Cast {
        to,
        saturate,
        scale,
    } = kind
    else {
        return None;
    };
    let t = nn::constant_tensor(cx, src).ok()?;
    // The codes the cast's result stores, made once.
    let codes = ipu_reference::eval::cast_fp8_codes(&t, *to, *saturate, *scale)?;
    let inline = nn::fp8_codes_attr(cx, ty, codes)?;
    let source = cx.get_attr(src, "value")?;
    let value = codes_attr(cx, source, inline);
    let c = ipu_ir::constant::create_constant(cx, nn::Constant::NAME, value, ty, cx.op_loc(at))?;
    let s = cx.i64_attr(i64::from(*scale));
    cx.set_attr(c, "scale", s);
    cx.insert_op_before(at, c);
    Some(cx.result(c, 0))
}

/// Erases constant `c` when nothing reads it any more.
fn erase_if_unread(cx: &mut Context, c: Op) {
    if !cx.has_uses(cx.result(c, 0)) {
        cx.erase_op(c);
    }
}

/// Folds each cast to FP8 of a constant read only by matmuls
/// ([`is_weight_cast`]) into an FP8 constant of its codes and scale; the
/// source constant goes when nothing else reads it. A cast whose constant
/// cannot be read stays (its lowering casts on the tiles).
pub fn fold_weight_casts(cx: &mut Context, f: Op) {
    let entry = cx.entry_block(cx.region(f, 0)).expect("checked");
    for op in cx.block_ops_vec(entry) {
        if !is_weight_cast(cx, op) {
            continue;
        }
        let Ok(kind) = nn::op_kind(cx, op) else {
            continue;
        };
        let src = cx.defining_op(cx.operand(op, 0)).expect("a constant");
        let ty = cx.value_type(cx.result(op, 0));
        let Some(new) = folded(cx, src, &kind, ty, op) else {
            continue;
        };
        let old = cx.result(op, 0);
        cx.replace_all_uses(old, new);
        cx.erase_op(op);
        erase_if_unread(cx, src);
    }
}

/// The argument attribute of a parameter narrowed to FP8
/// ([`narrow_parameters`]): the scale of its codes.
pub const SCALE_ARG_ATTR: &str = "ipu.fp8_scale";

/// The scale of argument `i` of `f` when it is a parameter narrowed to FP8.
pub fn parameter_scale(cx: &Context, f: Op, i: usize) -> Option<i64> {
    let AttrKind::Array(items) = cx.attr_kind(cx.get_attr(f, "arg_attrs")?) else {
        return None;
    };
    let AttrKind::Dictionary(es) = cx.attr_kind(*items.get(i)?) else {
        return None;
    };
    es.iter()
        .find(|(k, _)| cx.str(*k) == SCALE_ARG_ATTR)
        .and_then(|&(_, v)| match cx.attr_kind(v) {
            AttrKind::Integer { value, .. } => Some(*value as i64),
            _ => None,
        })
}

/// The scale of FP8 weight `v` of `f`: a folded constant's or a narrowed
/// parameter's (`None` for any other value).
pub fn value_scale(cx: &Context, f: Op, v: Value) -> Option<i64> {
    if let Some(d) = cx.defining_op(v) {
        return constant_scale(cx, d);
    }
    let entry = cx.entry_block(cx.region(f, 0))?;
    let i = cx.block_args(entry).iter().position(|&a| a == v)?;
    parameter_scale(cx, f, i)
}

/// The one cast to FP8 that every reader of parameter `a` is, each read
/// only by matmuls: its kind and result type.
fn parameter_cast(cx: &Context, a: Value) -> Option<(OpKind, Type)> {
    let mut found: Option<(OpKind, Type)> = None;
    for u in cx.uses(a) {
        if !nn::Cast::isa(cx, u.op) {
            return None;
        }
        let y = cx.result(u.op, 0);
        let ty = cx.value_type(y);
        let fp8 = cx
            .tensor_parts(ty)
            .and_then(|(_, e)| element_type(cx, e))
            .is_some_and(|t| t.is_fp8());
        if !fp8 || !cx.uses(y).iter().all(|r| nn::MatMul::isa(cx, r.op)) {
            return None;
        }
        let kind = nn::op_kind(cx, u.op).ok()?;
        match &found {
            Some((k, t)) if *k != kind || *t != ty => return None,
            _ => found = Some((kind, ty)),
        }
    }
    found
}

/// The calls of the function named `name` in `module`.
fn calls_of(cx: &Context, module: Op, name: &str) -> Vec<Op> {
    let mut calls = Vec::new();
    for f in ipu_program::target::functions(cx, module) {
        let Some(entry) = cx.entry_block(cx.region(f, 0)) else {
            continue;
        };
        for op in cx.block_ops_vec(entry) {
            if ipu_dialects::func::Call::isa(cx, op)
                && cx.str(ipu_dialects::func::Call(op).callee(cx)) == name
            {
                calls.push(op);
            }
        }
    }
    calls
}

/// Narrows each parameter of callee `g` that it only casts to FP8 for
/// matmuls and that every call binds to a constant: each call passes the
/// constant cast at compile time (an FP8 constant of the codes and the
/// scale, [`folded`]), the parameter takes the FP8 type and the scale as
/// its [`SCALE_ARG_ATTR`], and the cast goes. The matmuls read it as FP8
/// in tile memory, widened on their tiles. Run before `g` is lowered, its
/// callers not yet.
pub fn narrow_parameters(cx: &mut Context, module: Op, g: Op) {
    let Some(name) = cx.get_str_attr(g, "sym_name").map(str::to_string) else {
        return;
    };
    let Some(entry) = cx.entry_block(cx.region(g, 0)) else {
        return;
    };
    let calls = calls_of(cx, module, &name);
    let args = cx.block_args(entry).to_vec();
    for (i, &a) in args.iter().enumerate() {
        if calls.is_empty() || !super::is_weight(cx, g, i) {
            continue;
        }
        let Some((kind, ty)) = parameter_cast(cx, a) else {
            continue;
        };
        let OpKind::Cast { scale, .. } = kind else {
            continue;
        };
        let bound = |cx: &Context, c: Op| {
            cx.defining_op(cx.operand(c, i))
                .filter(|&d| nn::Constant::isa(cx, d) && constant_scale(cx, d).is_none())
        };
        if !calls.iter().all(|&c| bound(cx, c).is_some()) {
            continue;
        }
        // Every call's constant, cast now (a constant several calls pass is
        // cast once for them).
        let mut done: Vec<(Op, Value)> = Vec::new();
        let mut ok = true;
        for &c in &calls {
            let src = bound(cx, c).expect("checked");
            let new = match done.iter().find(|(s, _)| *s == src) {
                Some(&(_, v)) => v,
                None => match folded(cx, src, &kind, ty, src) {
                    Some(v) => {
                        done.push((src, v));
                        v
                    }
                    None => {
                        ok = false;
                        break;
                    }
                },
            };
            cx.set_operand(c, i, new);
        }
        if !ok {
            // A constant that cannot be read: the calls pass the others'
            // sources again, and the parameter stays.
            for &c in &calls {
                if let Some(&(src, _)) = done.iter().find(|(_, v)| cx.operand(c, i) == *v) {
                    let v = cx.result(src, 0);
                    cx.set_operand(c, i, v);
                }
            }
            for (_, v) in done {
                if let Some(d) = cx.defining_op(v) {
                    erase_if_unread(cx, d);
                }
            }
            continue;
        }
        for (src, _) in done {
            erase_if_unread(cx, src);
        }
        // The callee: the parameter is the FP8 codes.
        cx.set_value_type(a, ty);
        for u in cx.uses(a).to_vec() {
            let y = cx.result(u.op, 0);
            cx.replace_all_uses(y, a);
            cx.erase_op(u.op);
        }
        set_parameter_type(cx, g, i, ty, i64::from(scale));
    }
}

/// Argument `i` of `g` takes type `ty` in its signature and the scale
/// `scale` as its [`SCALE_ARG_ATTR`].
fn set_parameter_type(cx: &mut Context, g: Op, i: usize, ty: Type, scale: i64) {
    let (mut inputs, results) = ipu_dialects::func::function_type(cx, g).unwrap_or_default();
    if let Some(t) = inputs.get_mut(i) {
        *t = ty;
    }
    let n = inputs.len();
    let fty = cx.function_type(inputs, results);
    let fty = cx.type_attr(fty);
    cx.set_attr(g, "function_type", fty);
    let mut items = match cx.get_attr(g, "arg_attrs").map(|a| cx.attr_kind(a)) {
        Some(AttrKind::Array(items)) => items.clone(),
        _ => vec![Attr::EMPTY_DICT; n],
    };
    let Some(&old) = items.get(i) else {
        return;
    };
    let mut entries = match cx.attr_kind(old) {
        AttrKind::Dictionary(es) => es.clone(),
        _ => Vec::new(),
    };
    let key = cx.sym(SCALE_ARG_ATTR);
    entries.retain(|(k, _)| *k != key);
    entries.push((key, cx.i64_attr(scale)));
    items[i] = cx.dict_attr(entries);
    let a = cx.array_attr(items);
    cx.set_attr(g, "arg_attrs", a);
}

/// The resource blobs the ops of `module` name (in any attribute, arrays
/// and dictionaries searched).
pub fn named_blobs(cx: &Context, module: Op) -> std::collections::BTreeSet<String> {
    fn visit(cx: &Context, a: Attr, out: &mut std::collections::BTreeSet<String>) {
        match cx.attr_kind(a) {
            AttrKind::DenseResource { handle, .. } => {
                out.insert(cx.str(*handle).to_string());
            }
            AttrKind::Array(items) => items.iter().for_each(|&i| visit(cx, i, out)),
            AttrKind::Dictionary(es) => es.iter().for_each(|&(_, v)| visit(cx, v, out)),
            _ => {}
        }
    }
    let mut out = std::collections::BTreeSet::new();
    cx.walk_preorder(module, &mut |op| visit(cx, cx.attrs(op), &mut out));
    out
}

/// Drops the blobs of `before` (named before the pass) that no op names
/// any more: the f32 weights whose FP8 codes replaced them.
pub fn drop_unnamed_blobs(
    cx: &mut Context,
    module: Op,
    before: &std::collections::BTreeSet<String>,
) {
    let after = named_blobs(cx, module);
    for name in before.difference(&after) {
        cx.resources.blobs.remove(name);
    }
}
