//! `ipu-translate`: conversions between the IR and other formats.
//! `--import-onnx model.onnx` maps an ONNX model to the `nn` dialect: node
//! names become locations, graph input/output names become `ipu.name`
//! argument/result attributes, and large constants go to a weights side file
//! (or, when printing to stdout without one, to the resource section).

use clap::{Arg, ArgAction, Command};
use ipu_dialects::nn;
use ipu_ir::printer::{PrintOptions, Printer};
use ipu_ir::resources::Blob;
use ipu_ir::types::{AttrKind, Loc};
use ipu_ir::{Attr, Context, Op, OperationState};
use ipu_onnx::import::{ImportOptions, MappedGraph};
use ipu_reference::{OpKind, Tensor};
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;

/// Constants with more elements than this go to a named blob.
const INLINE_ELEMENTS: usize = 256;

fn command() -> Command {
    Command::new("ipu-translate")
        .about("Translate between the IR and other formats")
        .version(env!("CARGO_PKG_VERSION"))
        .arg(Arg::new("input").required(true).help("Input file"))
        .arg(Arg::new("import-onnx").long("import-onnx").action(ArgAction::SetTrue).help("Import an ONNX model into the nn dialect"))
        .arg(
            Arg::new("import-mlir")
                .long("import-mlir")
                .action(ArgAction::SetTrue)
                .conflicts_with("import-onnx")
                .help("Import upstream MLIR (func, tosa, linalg, arith) into the nn dialect (needs the `mlir` feature)"),
        )
        .arg(Arg::new("output").short('o').value_name("FILE").default_value("-").help("Output file"))
        .arg(
            Arg::new("weights-file")
                .long("weights-file")
                .value_name("FILE")
                .help("Side file for large constants (default with -o: <output>.weights; with stdout: inline resources)"),
        )
        .arg(Arg::new("input-shape").long("input-shape").value_name("NAME=DxDx...").action(ArgAction::Append).help("Static shape of a graph input"))
        .arg(Arg::new("default-dim").long("default-dim").value_name("N").value_parser(clap::value_parser!(usize)).help("Size of symbolic input dimensions not given by --input-shape"))
        .arg(Arg::new("mlir-print-debuginfo").long("mlir-print-debuginfo").action(ArgAction::SetTrue).help("Print locations"))
}

pub fn main(args: impl IntoIterator<Item = OsString>) -> i32 {
    crate::init_tracing();
    let m = match crate::cli::parse_args(command(), args) {
        Ok(m) => m,
        Err(code) => return code,
    };
    match run(&m) {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("ipu-translate: {msg}");
            1
        }
    }
}

fn run(m: &clap::ArgMatches) -> Result<(), String> {
    if m.get_flag("import-mlir") {
        return import_mlir(m);
    }
    if !m.get_flag("import-onnx") {
        return Err("choose a translation: --import-onnx or --import-mlir".into());
    }
    let input = m.get_one::<String>("input").expect("required");
    let mut opts = ImportOptions {
        default_dim: m.get_one::<usize>("default-dim").copied(),
        ..Default::default()
    };
    for spec in m.get_many::<String>("input-shape").into_iter().flatten() {
        let (name, dims) = spec
            .split_once('=')
            .ok_or_else(|| format!("--input-shape expects NAME=DxD..., got '{spec}'"))?;
        let shape = dims
            .split('x')
            .map(|d| {
                d.parse::<usize>()
                    .map_err(|_| format!("bad dimension '{d}' in --input-shape {spec}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        opts.input_shapes.insert(name.to_string(), shape);
    }
    let graph = ipu_onnx::import::import_file(input, &opts).map_err(|e| format!("{input}: {e}"))?;
    let output = m.get_one::<String>("output").expect("default");
    let weights = match (m.get_one::<String>("weights-file"), output.as_str()) {
        (Some(w), _) => Some(w.clone()),
        (None, "-") => None,
        (None, o) => Some(format!("{o}.weights")),
    };
    let mut cx = Context::new(crate::full_registry());
    let file_name = std::path::Path::new(input)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let module = emit_graph(&mut cx, &graph, &file_name)?;
    if let Some(w) = weights.as_ref().filter(|_| !cx.resources.blobs.is_empty()) {
        // The module names its side file relative to the IR file.
        let rel = std::path::Path::new(w)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| w.clone());
        let a = cx.string_attr(&rel);
        cx.set_attr(module, crate::load::WEIGHTS_ATTR, a);
        std::fs::write(w, ipu_ir::resources::side_file::write(&cx.resources))
            .map_err(|e| format!("cannot write '{w}': {e}"))?;
        cx.resources.side_file = Some(rel);
    }
    ipu_ir::verify::verify(&cx, module).map_err(|d| format!("imported IR does not verify: {d}"))?;
    write_module(&cx, module, m)
}

/// `--import-mlir`: upstream MLIR (parsed by MLIR itself) to the nn dialect.
fn import_mlir(m: &clap::ArgMatches) -> Result<(), String> {
    let input = m.get_one::<String>("input").expect("required");
    let mut cx = Context::new(crate::full_registry());
    let module = match ipu_mlir_import::import_mlir(&mut cx, input) {
        Ok(module) => module,
        Err(d) => {
            let mut sources = ipu_ir::diag::SourceMap::new();
            if let Ok(text) = std::fs::read_to_string(input) {
                sources.add(input, text.into());
            }
            sources.render(&cx, &d, &mut crate::cli::stderr_stream());
            return Err(format!("cannot import '{input}'"));
        }
    };
    write_module(&cx, module, m)
}

/// Prints `module` to `-o` (standard output by default).
fn write_module(cx: &Context, module: Op, m: &clap::ArgMatches) -> Result<(), String> {
    let output = m.get_one::<String>("output").expect("default");
    let opts = PrintOptions {
        generic: false,
        debug_info: m.get_flag("mlir-print-debuginfo"),
    };
    let mut sink: Box<dyn Write> = if output == "-" {
        Box::new(std::io::BufWriter::new(std::io::stdout().lock()))
    } else {
        Box::new(std::io::BufWriter::new(
            std::fs::File::create(output).map_err(|e| format!("cannot write '{output}': {e}"))?,
        ))
    };
    let mut p = Printer::with_sink(cx, opts, &mut *sink);
    p.print_top(module)
        .map_err(|e| format!("cannot write the output: {e}"))?;
    drop(p);
    sink.flush()
        .map_err(|e| format!("cannot write the output: {e}"))
}

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
    let name_dicts = |cx: &mut Context, ids: &[usize]| {
        let key = cx.sym("ipu.name");
        let dicts = ids
            .iter()
            .map(|&i| {
                let s = cx.string_attr(&g.values[i].name);
                cx.dict_attr(vec![(key, s)])
            })
            .collect();
        cx.array_attr(dicts)
    };
    let attrs = vec![
        (cx.sym("sym_name"), cx.string_attr("main")),
        (cx.sym("function_type"), cx.type_attr(fty)),
        (cx.sym("arg_attrs"), name_dicts(cx, &g.inputs)),
        (cx.sym("res_attrs"), name_dicts(cx, &g.outputs)),
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
    let mut blob_names: HashMap<String, usize> = HashMap::new();
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
    let dense = nn::elements_attr(cx, t).ok_or("constant element type has no IR equivalent")?;
    let AttrKind::DenseElements { ty, data } = cx.attr_kind(dense).clone() else {
        return Err("constant did not encode as dense elements".into());
    };
    if data.splat {
        return nn::build_op(cx, &OpKind::Constant(t.clone()), &[], loc);
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
    let value: Attr = cx.attr(AttrKind::DenseResource { ty, handle: h });
    let name = cx.op_name("nn.constant");
    let mut st = OperationState::new(name, loc);
    st.result_types.push(ty);
    let key = cx.sym("value");
    st.attrs = cx.dict_attr(vec![(key, value)]);
    Ok(cx.create_op(st))
}
