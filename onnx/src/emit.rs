//! The mapped ONNX graph as `nn` dialect IR: `func.func @main` whose
//! arguments and results carry the graph's input/output names (`ipu.name`),
//! whose ops carry the ONNX node names as locations, and whose large
//! constants are named blobs (`dense_resource`) in the context's resource
//! table, for a weights side file.

use crate::import::outline::{Operand, Outline};
use crate::import::{MappedGraph, MappedNode};
use ipu_dialects::nn;
use ipu_ir::types::{AttrKind, Loc};
use ipu_ir::{Attr, Context, Op, OperationState};
use ipu_reference::{OpKind, Tensor};
use std::collections::HashMap;

/// Constants with more elements than this go to a named blob.
pub const INLINE_ELEMENTS: usize = 256;

/// Emits a mapped ONNX graph as `func.func @main` of `nn` ops in a new module.
pub fn emit_graph(cx: &mut Context, g: &MappedGraph, file: &str) -> Result<Op, String> {
    let file_loc = cx.file_loc(file, 1, 1);
    let module = ipu_ir::builtin::create_module(cx, file_loc);
    let body = cx.entry_block(cx.region(module, 0)).expect("module body");
    let type_of = |cx: &mut Context, id: usize| {
        nn::ir_tensor_type(cx, &g.values[id].ty).ok_or_else(|| {
            format!(
                "value '{}' has type {} which the IR lacks",
                g.values[id].name, g.values[id].ty
            )
        })
    };
    let inputs = g
        .inputs
        .iter()
        .map(|&i| type_of(cx, i))
        .collect::<Result<Vec<_>, _>>()?;
    let results = g
        .outputs
        .iter()
        .map(|&i| type_of(cx, i))
        .collect::<Result<Vec<_>, _>>()?;
    let fty = cx.function_type(inputs.clone(), results.clone());
    let name_dicts = |cx: &mut Context, names: &[&str]| {
        let key = cx.sym("ipu.name");
        let dicts = names
            .iter()
            .map(|n| {
                let s = cx.string_attr(n);
                cx.dict_attr(vec![(key, s)])
            })
            .collect();
        cx.array_attr(dicts)
    };
    let input_names: Vec<&str> = g
        .inputs
        .iter()
        .map(|&i| g.values[i].name.as_str())
        .collect();
    // Results take the graph's output names (a value may leave under another name).
    let output_names: Vec<&str> = g
        .outputs
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            g.output_names
                .get(k)
                .map(String::as_str)
                .unwrap_or(g.values[i].name.as_str())
        })
        .collect();
    let mut blob_names: HashMap<String, usize> = HashMap::new();
    // Arguments: the input's name, and its default value when it has one.
    let mut arg_dicts = Vec::with_capacity(g.inputs.len());
    for (k, name) in input_names.iter().enumerate() {
        let mut entries = vec![(cx.sym("ipu.name"), cx.string_attr(name))];
        if let Some(t) = g.input_defaults.get(k).and_then(Option::as_ref) {
            let v = elements_value(cx, t, name, &mut blob_names)?;
            entries.push((cx.sym(ipu_dialects::func::DEFAULT_ATTR), v));
        }
        arg_dicts.push(cx.dict_attr(entries));
    }
    let arg_attrs = cx.array_attr(arg_dicts);
    let attrs = vec![
        (cx.sym("sym_name"), cx.string_attr("main")),
        (cx.sym("function_type"), cx.type_attr(fty)),
        (cx.sym("arg_attrs"), arg_attrs),
        (cx.sym("res_attrs"), name_dicts(cx, &output_names)),
    ];
    let f = new_func(cx, attrs, file_loc);
    cx.append_op(body, f);
    let arg_types: Vec<_> = inputs
        .iter()
        .zip(&g.inputs)
        .map(|(&t, &i)| {
            let l = cx.name_loc(&g.values[i].name, Loc::UNKNOWN);
            (t, l)
        })
        .collect();
    let fbody = cx.region(f, 0);
    let entry = cx.create_block(fbody, &arg_types);
    let mut values: HashMap<usize, ipu_ir::Value> = HashMap::new();
    for (k, &i) in g.inputs.iter().enumerate() {
        values.insert(i, cx.block_args(entry)[k]);
    }
    let mut consts = Consts {
        attrs: HashMap::new(),
        blob_names,
    };
    // Per outline: its function's name, each unique.
    let mut callees: Vec<String> = Vec::with_capacity(g.outlines.len());
    for o in &g.outlines {
        let name = emit_layer(cx, g, o, f, file_loc, &mut consts, &callees)?;
        callees.push(name);
    }
    // Per node: the outline and layer it belongs to, and whether it is the
    // layer's last.
    let mut in_layer: HashMap<usize, (usize, usize, bool)> = HashMap::new();
    for (x, o) in g.outlines.iter().enumerate() {
        for (k, ns) in o.nodes.iter().enumerate() {
            for (p, &n) in ns.iter().enumerate() {
                in_layer.insert(n, (x, k, p + 1 == ns.len()));
            }
        }
    }
    let mut readers: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        for &v in &n.inputs {
            readers.entry(v).or_default().push(i);
        }
    }
    let graph_outputs: std::collections::HashSet<usize> = g.outputs.iter().copied().collect();
    for (i, n) in g.nodes.iter().enumerate() {
        let loc = cx.name_loc(&n.name, file_loc);
        if let Some(&(x, k, last)) = in_layer.get(&i) {
            if last {
                let o = &g.outlines[x];
                let y = emit_call(cx, g, o, k, &callees[x], &values, entry, loc, &mut consts)?;
                values.insert(g.nodes[o.nodes[k][o.output.0]].outputs[o.output.1], y);
            }
            continue;
        }
        // A constant only outlined layers read is theirs.
        let v0 = n.outputs[0];
        if matches!(n.op, OpKind::Constant(_))
            && !graph_outputs.contains(&v0)
            && readers
                .get(&v0)
                .is_some_and(|r| r.iter().all(|x| in_layer.contains_key(x)))
        {
            continue;
        }
        let operands = operands_of(g, n, &values)?;
        let v = emit_node(cx, g, n, &operands, entry, loc, &mut consts)?;
        values.insert(v0, v);
    }
    let rets = g
        .outputs
        .iter()
        .map(|i| {
            values
                .get(i)
                .copied()
                .ok_or_else(|| format!("output '{}' is never computed", g.values[*i].name))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let name = cx.op_name("func.return");
    let mut st = OperationState::new(name, file_loc);
    st.operands.extend(rets);
    let r = cx.create_op(st);
    cx.append_op(entry, r);
    Ok(module)
}

/// The elements attributes of the constants emitted so far (by value), so
/// that a constant emitted in several places is one blob.
struct Consts {
    attrs: HashMap<usize, Attr>,
    blob_names: HashMap<String, usize>,
}

/// The operands of node `n`, each already emitted.
fn operands_of(
    g: &MappedGraph,
    n: &MappedNode,
    values: &HashMap<usize, ipu_ir::Value>,
) -> Result<Vec<ipu_ir::Value>, String> {
    n.inputs
        .iter()
        .map(|i| {
            values.get(i).copied().ok_or_else(|| {
                format!(
                    "node '{}' uses value '{}' before its definition",
                    n.name, g.values[*i].name
                )
            })
        })
        .collect()
}

/// Appends node `n` (its operands `operands`) to `block`; returns its value.
fn emit_node(
    cx: &mut Context,
    g: &MappedGraph,
    n: &MappedNode,
    operands: &[ipu_ir::Value],
    block: ipu_ir::Block,
    loc: Loc,
    consts: &mut Consts,
) -> Result<ipu_ir::Value, String> {
    let op = match &n.op {
        OpKind::Constant(t) if t.numel() > INLINE_ELEMENTS => {
            constant_op(cx, g, n.outputs[0], t, consts, loc)?
        }
        kind => {
            nn::build_op(cx, kind, operands, loc).map_err(|e| format!("node '{}': {e}", n.name))?
        }
    };
    cx.append_op(block, op);
    let expected = tensor_type(cx, g, n.outputs[0])?;
    let got = cx.value_type(cx.result(op, 0));
    if got != expected {
        return Err(format!(
            "node '{}': the nn op infers {}, the importer {}",
            n.name,
            ipu_ir::printer::type_to_string(cx, got),
            ipu_ir::printer::type_to_string(cx, expected)
        ));
    }
    Ok(cx.result(op, 0))
}

/// The IR type of value `id`.
fn tensor_type(cx: &mut Context, g: &MappedGraph, id: usize) -> Result<ipu_ir::Type, String> {
    nn::ir_tensor_type(cx, &g.values[id].ty).ok_or_else(|| {
        format!(
            "value '{}' has type {} which the IR lacks",
            g.values[id].name, g.values[id].ty
        )
    })
}

/// A `nn.constant` of value `id` (tensor `t`), its elements inline or in a
/// named blob, made once per value however often it is emitted.
fn constant_op(
    cx: &mut Context,
    g: &MappedGraph,
    id: usize,
    t: &Tensor,
    consts: &mut Consts,
    loc: Loc,
) -> Result<Op, String> {
    let value = match consts.attrs.get(&id) {
        Some(&a) => a,
        None => {
            let a = elements_value(cx, t, &g.values[id].name, &mut consts.blob_names)?;
            consts.attrs.insert(id, a);
            a
        }
    };
    let ty = match cx.attr_kind(value) {
        AttrKind::DenseElements { ty, .. } | AttrKind::DenseResource { ty, .. } => *ty,
        _ => return Err("constant did not encode as elements".into()),
    };
    let name = cx.op_name("nn.constant");
    let mut st = OperationState::new(name, loc);
    st.result_types.push(ty);
    let key = cx.sym("value");
    st.attrs = cx.dict_attr(vec![(key, value)]);
    Ok(cx.create_op(st))
}

/// The constant tensor of value `id`.
fn constant_of(g: &MappedGraph, id: usize) -> Option<&Tensor> {
    g.nodes.iter().find_map(|n| match &n.op {
        OpKind::Constant(t) if n.outputs[0] == id => Some(t),
        _ => None,
    })
}

/// `t` as an elements attribute: inline when small or a splat, else a
/// `dense_resource` whose bytes are a named blob (named after `value_name`,
/// made unique).
fn elements_value(
    cx: &mut Context,
    t: &Tensor,
    value_name: &str,
    used: &mut HashMap<String, usize>,
) -> Result<Attr, String> {
    let dense = nn::elements_attr(cx, t).ok_or("constant element type has no IR equivalent")?;
    let AttrKind::DenseElements { ty, data } = cx.attr_kind(dense).clone() else {
        return Err("constant did not encode as dense elements".into());
    };
    if data.splat || t.numel() <= INLINE_ELEMENTS {
        return Ok(dense);
    }
    // Blob names are identifiers derived from the ONNX value name, made unique.
    let mut base: String = value_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
        base.insert(0, 'w');
    }
    let n = used.entry(base.clone()).or_insert(0);
    let handle = if *n == 0 {
        base.clone()
    } else {
        format!("{base}_{n}")
    };
    *n += 1;
    Ok(cx.resource_attr(&handle, ty, &data.bytes))
}

/// The function of outlined layers `o` (the first layer's nodes), inserted
/// before `main`: its activation arguments, then its parameters
/// (`ipu.weight`, a layer's constants that differ between layers); the
/// constants equal in every layer are its own. Its name is the scope's,
/// with a number after it when a function in `taken` has that name (two
/// classes of one scope). Returns its name.
fn emit_layer(
    cx: &mut Context,
    g: &MappedGraph,
    o: &Outline,
    main: Op,
    file_loc: Loc,
    consts: &mut Consts,
    taken: &[String],
) -> Result<String, String> {
    let mut name: String = o
        .scope
        .trim_matches(|c: char| c == '/' || c == '.' || c == '_')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if name.is_empty() || name == "main" || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert_str(0, "layer_");
    }
    let base = name.clone();
    for n in 1.. {
        if !taken.contains(&name) {
            break;
        }
        name = format!("{base}_{n}");
    }
    let params: Vec<usize> = (0..o.fixed.len()).filter(|&c| !o.fixed[c]).collect();
    let args: Vec<usize> = o.inputs[0]
        .iter()
        .copied()
        .chain(params.iter().map(|&c| o.consts[0][c]))
        .collect();
    let types = args
        .iter()
        .map(|&v| tensor_type(cx, g, v))
        .collect::<Result<Vec<_>, _>>()?;
    let out = g.nodes[o.nodes[0][o.output.0]].outputs[o.output.1];
    let out_ty = tensor_type(cx, g, out)?;
    let fty = cx.function_type(types.clone(), vec![out_ty]);
    let (name_key, weight_key) = (cx.sym("ipu.name"), cx.sym("ipu.weight"));
    let arg_dicts = args
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let mut e = vec![(name_key, cx.string_attr(&g.values[v].name))];
            if k >= o.inputs[0].len() {
                e.push((weight_key, Attr::UNIT));
            }
            cx.dict_attr(e)
        })
        .collect();
    let res = vec![(name_key, cx.string_attr(&g.values[out].name))];
    let res_dicts = vec![cx.dict_attr(res)];
    let attrs = vec![
        (cx.sym("sym_name"), cx.string_attr(&name)),
        (cx.sym("function_type"), cx.type_attr(fty)),
        (cx.sym("sym_visibility"), cx.string_attr("private")),
        (cx.sym("arg_attrs"), cx.array_attr(arg_dicts)),
        (cx.sym("res_attrs"), cx.array_attr(res_dicts)),
    ];
    let f = new_func(cx, attrs, file_loc);
    cx.insert_op_before(main, f);
    let arg_types: Vec<_> = types
        .iter()
        .zip(&args)
        .map(|(&t, &v)| (t, cx.name_loc(&g.values[v].name, Loc::UNKNOWN)))
        .collect();
    let body = cx.region(f, 0);
    let entry = cx.create_block(body, &arg_types);
    let fargs = cx.block_args(entry).to_vec();
    let mut results: Vec<ipu_ir::Value> = Vec::with_capacity(o.operands.len());
    let mut fixed: HashMap<usize, ipu_ir::Value> = HashMap::new();
    for (p, &n) in o.nodes[0].iter().enumerate() {
        let node = &g.nodes[n];
        let loc = cx.name_loc(&node.name, file_loc);
        let mut operands = Vec::with_capacity(node.inputs.len());
        for a in &o.operands[p] {
            operands.push(match *a {
                Operand::Node(q, _) => results[q],
                Operand::Input(i) => fargs[i],
                Operand::Const(c) if o.fixed[c] => match fixed.get(&c) {
                    Some(&v) => v,
                    None => {
                        let id = o.consts[0][c];
                        let t = constant_of(g, id).ok_or("an outlined constant has no node")?;
                        let op = constant_op(cx, g, id, t, consts, loc)?;
                        cx.append_op(entry, op);
                        let v = cx.result(op, 0);
                        fixed.insert(c, v);
                        v
                    }
                },
                Operand::Const(c) => {
                    let k = params.iter().position(|&x| x == c).expect("a parameter");
                    fargs[o.inputs[0].len() + k]
                }
            });
        }
        results.push(emit_node(cx, g, node, &operands, entry, loc, consts)?);
    }
    let ret = cx.op_name("func.return");
    let mut st = OperationState::new(ret, file_loc);
    st.operands.push(results[o.output.0]);
    let r = cx.create_op(st);
    cx.append_op(entry, r);
    Ok(name)
}

/// Appends the call of layer `k` of `o` to `block`: its activations, then
/// its parameters' constants. Returns its result.
#[allow(clippy::too_many_arguments)]
fn emit_call(
    cx: &mut Context,
    g: &MappedGraph,
    o: &Outline,
    k: usize,
    callee: &str,
    values: &HashMap<usize, ipu_ir::Value>,
    block: ipu_ir::Block,
    loc: Loc,
    consts: &mut Consts,
) -> Result<ipu_ir::Value, String> {
    let mut operands = Vec::new();
    for &v in &o.inputs[k] {
        operands.push(*values.get(&v).ok_or_else(|| {
            format!(
                "layer {k} of {} uses value '{}' before its definition",
                o.scope, g.values[v].name
            )
        })?);
    }
    for c in (0..o.fixed.len()).filter(|&c| !o.fixed[c]) {
        let id = o.consts[k][c];
        let t = constant_of(g, id).ok_or("an outlined constant has no node")?;
        let op = constant_op(cx, g, id, t, consts, loc)?;
        cx.append_op(block, op);
        operands.push(cx.result(op, 0));
    }
    let out = g.nodes[o.nodes[k][o.output.0]].outputs[o.output.1];
    let ty = tensor_type(cx, g, out)?;
    let name = cx.op_name("func.call");
    let mut st = OperationState::new(name, loc);
    st.operands.extend(operands);
    st.result_types.push(ty);
    let callee = cx.symbol_ref_attr(callee);
    let key = cx.sym("callee");
    st.attrs = cx.dict_attr(vec![(key, callee)]);
    let op = cx.create_op(st);
    cx.append_op(block, op);
    Ok(cx.result(op, 0))
}

/// A `func.func` with attributes `attrs` and one (empty) region, not yet
/// inserted.
fn new_func(cx: &mut Context, attrs: Vec<(ipu_ir::Sym, ipu_ir::Attr)>, loc: Loc) -> ipu_ir::Op {
    let mut st = OperationState::new(cx.op_name("func.func"), loc);
    st.num_regions = 1;
    st.attrs = cx.dict_attr(attrs);
    cx.create_op(st)
}
