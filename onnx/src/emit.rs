//! The mapped ONNX graph as `nn` dialect IR: `func.func @main` whose
//! arguments and results carry the graph's input/output names (`ipu.name`),
//! whose ops carry the ONNX node names as locations, and whose large
//! constants are named blobs (`dense_resource`) in the context's resource
//! table, for a weights side file.

use crate::import::MappedGraph;
use ipu_dialects::nn;
use ipu_ir::resources::Blob;
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
    let name = cx.op_name("func.func");
    let mut st = OperationState::new(name, file_loc);
    st.num_regions = 1;
    st.attrs = cx.dict_attr(attrs);
    let f = cx.create_op(st);
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
    for n in &g.nodes {
        let loc = cx.name_loc(&n.name, file_loc);
        let operands = n
            .inputs
            .iter()
            .map(|i| {
                values.get(i).copied().ok_or_else(|| {
                    format!(
                        "node '{}' uses value '{}' before its definition",
                        n.name, g.values[*i].name
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let op = match &n.op {
            OpKind::Constant(t) if t.numel() > INLINE_ELEMENTS => {
                constant_blob(cx, t, &g.values[n.outputs[0]].name, &mut blob_names, loc)?
            }
            kind => nn::build_op(cx, kind, &operands, loc)
                .map_err(|e| format!("node '{}': {e}", n.name))?,
        };
        cx.append_op(entry, op);
        let expected = type_of(cx, n.outputs[0])?;
        let got = cx.value_type(cx.result(op, 0));
        if got != expected {
            return Err(format!(
                "node '{}': the nn op infers {}, the importer {}",
                n.name,
                ipu_ir::printer::type_to_string(cx, got),
                ipu_ir::printer::type_to_string(cx, expected)
            ));
        }
        values.insert(n.outputs[0], cx.result(op, 0));
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

/// A `nn.constant` whose elements live in a named blob.
fn constant_blob(
    cx: &mut Context,
    t: &Tensor,
    value_name: &str,
    used: &mut HashMap<String, usize>,
    loc: Loc,
) -> Result<Op, String> {
    let value = elements_value(cx, t, value_name, used)?;
    let ty = match cx.attr_kind(value) {
        AttrKind::DenseElements { .. } => {
            return nn::build_op(cx, &OpKind::Constant(t.clone()), &[], loc)
        }
        AttrKind::DenseResource { ty, .. } => *ty,
        _ => return Err("constant did not encode as elements".into()),
    };
    let name = cx.op_name("nn.constant");
    let mut st = OperationState::new(name, loc);
    st.result_types.push(ty);
    let key = cx.sym("value");
    st.attrs = cx.dict_attr(vec![(key, value)]);
    Ok(cx.create_op(st))
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
    cx.resources.insert(
        &handle,
        Blob {
            alignment: 64,
            data: data.bytes.to_vec().into(),
        },
    );
    let h = cx.sym(&handle);
    Ok(cx.attr(AttrKind::DenseResource { ty, handle: h }))
}
