//! `ipu-translate`: conversions between the IR and other formats.
//! `--import-onnx model.onnx` maps an ONNX model to the `nn` dialect: node
//! names become locations, graph input/output names become `ipu.name`
//! argument/result attributes, and large constants go to a weights side file
//! (or, when printing to stdout without one, to the resource section).
//! `--to-ipuexe in.mlir -o out.ipuexe` writes the package a machine-stage
//! module holds (`machine.package` and friends) as an `.ipuexe` file;
//! `--from-ipuexe in.ipuexe` prints a package file back as those ops.

use clap::{Arg, ArgAction, Command};
use ipu_dialects::machine::emit_package;
use ipu_ir::printer::{PrintOptions, Printer};
use ipu_ir::{Context, Op};
use ipu_onnx::import::{ImportOptions, WeightsPrecision};
use std::ffi::OsString;
use std::io::Write;

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
        .arg(
            Arg::new("to-ipuexe")
                .long("to-ipuexe")
                .action(ArgAction::SetTrue)
                .conflicts_with_all(["import-onnx", "import-mlir", "from-ipuexe"])
                .help("Write the package of a machine-stage module (machine.package, machine.image, ...) as an .ipuexe file (-o)"),
        )
        .arg(
            Arg::new("source")
                .long("source")
                .value_name("FILE")
                .requires("to-ipuexe")
                .help("With --to-ipuexe: the nn-dialect model the package was compiled from, stored in the package (and its SHA-256 as the source hash) as the reference ipu-run checks against"),
        )
        .arg(
            Arg::new("from-ipuexe")
                .long("from-ipuexe")
                .action(ArgAction::SetTrue)
                .conflicts_with_all(["import-onnx", "import-mlir"])
                .help("Print an .ipuexe package as machine-dialect IR"),
        )
        .arg(Arg::new("output").short('o').value_name("FILE").default_value("-").help("Output file"))
        .arg(
            Arg::new("weights-file")
                .long("weights-file")
                .value_name("FILE")
                .help("Side file for large constants (default with -o: <output>.weights; with stdout: inline resources)"),
        )
        .arg(
            Arg::new("allow-external-weights")
                .long("allow-external-weights")
                .action(ArgAction::SetTrue)
                .help("Allow a weights file outside the IR's folder: with --import-onnx, a --weights-file elsewhere (recorded with '..'); with --to-ipuexe, reading one the module names there"),
        )
        .arg(Arg::new("input-shape").long("input-shape").value_name("NAME=DxDx...").action(ArgAction::Append).help("Static shape of a graph input"))
        .arg(Arg::new("weights-precision").long("weights-precision").value_name("TYPE").help("With --import-onnx: the element type of matmul weights (constant right-hand operands): f32 (default) or f8E4M3FN (a saturating cast at a per-tensor power-of-two scale; biases, norms and embeddings stay f32)"))
        .arg(Arg::new("outline-layers").long("outline-layers").action(ArgAction::SetTrue).help("With --import-onnx: emit the exporter's repeated layers (the nodes of a numbered scope, e.g. /encoder/layer.3/ or /stages.1/layers.2/, searched outermost first; each class of alike layers) as one function per class called per layer, each call passing its layer's weights; a layer alike to no other stays inline"))
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
    if m.get_flag("to-ipuexe") {
        return to_ipuexe(m);
    }
    if m.get_flag("from-ipuexe") {
        return from_ipuexe(m);
    }
    if !m.get_flag("import-onnx") {
        return Err(
            "choose a translation: --import-onnx, --import-mlir, --to-ipuexe or --from-ipuexe"
                .into(),
        );
    }
    let input = m.get_one::<String>("input").expect("required");
    let weights_precision = match m.get_one::<String>("weights-precision") {
        Some(p) => p
            .parse::<WeightsPrecision>()
            .map_err(|e| format!("--weights-precision: {e}"))?,
        None => WeightsPrecision::default(),
    };
    let mut opts = ImportOptions {
        default_dim: m.get_one::<usize>("default-dim").copied(),
        weights_precision,
        outline_layers: m.get_flag("outline-layers"),
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
    for w in &graph.warnings {
        eprintln!("ipu-translate: warning: {input}: {w}");
    }
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
    let module = ipu_onnx::emit::emit_graph(&mut cx, &graph, &file_name)?;
    ipu_ir::verify::verify(&cx, module).map_err(|d| format!("imported IR does not verify: {d}"))?;
    // The weights file is written only once the IR verified, and the IR
    // records it relative to its own folder with its size and SHA-256, so a
    // run never reads another model's weights (issue 32 finding 4). When the
    // IR then fails to be written, the old IR's hash refuses the new weights.
    if let Some(w) = weights.as_ref().filter(|_| !cx.resources.blobs.is_empty()) {
        let reference =
            crate::load::weights_reference(output, w, m.get_flag("allow-external-weights"))?;
        let bytes = ipu_ir::resources::side_file::write(&cx.resources);
        crate::load::bind_weights(&mut cx, module, &reference, &bytes);
        crate::cli::write_output(w, &bytes)?;
    }
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

/// `--to-ipuexe`: machine-stage IR -> `.ipuexe`.
fn to_ipuexe(m: &clap::ArgMatches) -> Result<(), String> {
    let input = m.get_one::<String>("input").expect("required");
    let output = m.get_one::<String>("output").expect("default");
    let registry = crate::full_registry();
    let loaded = match crate::load::load(&registry, input, m.get_flag("allow-external-weights")) {
        Ok(l) => l,
        Err(crate::load::LoadError::Io(msg)) => return Err(msg),
        Err(crate::load::LoadError::Diag(l, d)) => {
            l.sources
                .render(&l.cx, &d, &mut crate::cli::stderr_stream());
            return Err(format!("cannot read '{input}'"));
        }
    };
    let pkg = match ipu_dialects::machine::read_package(&loaded.cx, loaded.module) {
        Ok(p) => p,
        Err(d) => {
            loaded
                .sources
                .render(&loaded.cx, &d, &mut crate::cli::stderr_stream());
            return Err(format!("'{input}' does not hold a valid package"));
        }
    };
    let mut pkg = pkg;
    if let Some(src) = m.get_one::<String>("source") {
        let (_, text) = crate::load::read_text(src)?;
        pkg.meta.source_sha256 = ipu_package::Digest::of(text.as_bytes());
        pkg.meta.source = Some(text);
    }
    let bytes = pkg.try_to_elf_bytes().map_err(|e| e.to_string())?;
    tracing::info!(
        tiles = pkg.meta.target.tile_count,
        bytes = bytes.len(),
        "writing application package"
    );
    if output == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes)
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot write the output: {e}"))
    } else {
        crate::cli::write_output(output, &bytes)
    }
}

/// Reads a package file (`-`: standard input), checked.
pub fn read_package_file(path: &str) -> Result<ipu_package::Package, String> {
    let (_, bytes) = crate::load::read_bytes(path)?;
    ipu_package::Package::from_elf_bytes(&bytes).map_err(|e| format!("{path}: {e}"))
}

/// `--from-ipuexe`: `.ipuexe` -> machine-stage IR.
fn from_ipuexe(m: &clap::ArgMatches) -> Result<(), String> {
    let input = m.get_one::<String>("input").expect("required");
    let pkg = read_package_file(input)?;
    let mut cx = Context::new(crate::full_registry());
    let loc = cx.file_loc(input, 0, 0);
    let module = ipu_ir::builtin::create_module(&mut cx, loc);
    let body = cx
        .entry_block(cx.region(module, 0))
        .ok_or("internal error: a new module has no body")?;
    emit_package(&mut cx, body, &pkg, loc);
    write_module(&cx, module, m)
}

/// Prints `module` to `-o` (standard output by default).
fn write_module(cx: &Context, module: Op, m: &clap::ArgMatches) -> Result<(), String> {
    let output = m.get_one::<String>("output").expect("default");
    let opts = PrintOptions {
        generic: false,
        debug_info: m.get_flag("mlir-print-debuginfo"),
    };
    let mut sink = crate::cli::Output::open(output)?;
    let mut p = Printer::with_sink(cx, opts, &mut sink);
    p.print_top(module)
        .map_err(|e| format!("cannot write the output: {e}"))?;
    drop(p);
    sink.commit()
        .map_err(|e| format!("cannot write the output: {e}"))
}
