//! `ipu-run`: runs a model and checks it.
//!
//! `--reference-only` runs the reference interpreter alone (on an `.mlir`
//! model, or on the `nn` source a package carries): inputs from `.npy`
//! files by argument name, results written to `--output-dir` as
//! `<name>.npy`. An input not given takes its default value when the model
//! has one (an argument's `ipu.default`, e.g. an ONNX initializer that is
//! also a graph input), else values from a fixed-seed generator; either is
//! said on stderr. Both runs feed the device and the reference the same
//! inputs.
//!
//! Otherwise the model runs on the simulated device: an `.ipuexe` package
//! (recognised by its ELF magic or extension; the reference model is the
//! `nn` source the package carries), or an `.mlir` model compiled with the
//! `ipu-lower-to-machine` pipeline (the reference is the model itself).
//! The run holds the device lock, writes the inputs through the input
//! streams, runs every tile, reads the outputs, compares them with the
//! reference interpreter's on the same inputs and prints the verdict lines:
//!
//! ```text
//! tiles=4 cycles=1234 rooflineCycles=700 hostIoCycles=12 cyclesWithHostIo=1246
//!                                          (profile=FILE tiles=.. cycles=.. with --profile)
//! referenceMaximumAbsoluteError=0.000977 numericalTest=PASS
//! package=model.ipuexe tiles=4 hardwareTest=PASS
//! ```
//!
//! With `--check-ops`, the per-op table of [`crate::check_ops`] follows.
//! An output that depends on a cast to FP8 of a computed value is judged
//! against the reference whose such casts take the device's values
//! ([`crate::check_ops::anchored_reference`]).

use crate::device::{self, DeviceLock};
use crate::load::{entry_function, load_text, value_name, LoadError, Loaded};
use crate::streams;
use clap::{Arg, ArgAction, Command};
use codespan_reporting::term::termcolor::StandardStream;
use ipu_package::{HostStream, Package};
use ipu_reference::{ElementType, Tensor, TensorData, TensorType};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const TOLERANCE_HELP: &str = "Numerical tolerances (per output, M = max(1, largest |reference| value)): \
f32 128 ulps of f32 at M (about 1.5e-5 x M), f16 and bf16 8 ulps of their format at M, f8E4M3FN and f8E5M2 \
1 ulp at M; integers and booleans exact. NaN must match NaN, infinities the same infinity. \
A result that depends on a cast to FP8 of a computed value is compared with the reference whose FP8 casts take the device's FP8 values (each such cast first checked exact on the device's own input): a value near an FP8 rounding boundary falls either side after tiny upstream differences, and one FP8 step dwarfs every other error. referenceMaximumAbsoluteError is against the plain reference. Exit code: 0 when numericalTest and hardwareTest both PASS (and, with --check-ops, every op is within its tolerance), else 1.";

fn command() -> Command {
    Command::new("ipu-run")
        .about("Run a model on the simulated device and check it against the reference interpreter (or, with --reference-only, run the reference alone)")
        .version(env!("CARGO_PKG_VERSION"))
        .after_help(TOLERANCE_HELP)
        .arg(Arg::new("model").required(true).help("Model: an .ipuexe package, or an .mlir file (or '-' for standard input) compiled with ipu-lower-to-machine"))
        .arg(Arg::new("reference-only").long("reference-only").action(ArgAction::SetTrue).help("Run the reference interpreter only"))
        .arg(Arg::new("input").long("input").value_name("NAME=FILE.npy").action(ArgAction::Append).help("An input by argument name"))
        .arg(Arg::new("output-dir").long("output-dir").value_name("DIR").help("Write each result to DIR/<name>.npy (device results on the device path)"))
        .arg(Arg::new("output-names").long("output-names").value_name("model|index").default_value("model").value_parser(["model", "index"]).help("How --output-dir names its files: by the model's result names (DIR/<name>.npy; a name that is not a plain file name is refused), or by position (DIR/result<i>.npy, for models whose names hold '/' or ':')"))
        .arg(Arg::new("entry").long("entry").value_name("NAME").help("Function to run (default: @main, or the only public one)"))
        .arg(Arg::new("seed").long("seed").value_name("N").default_value("0").value_parser(clap::value_parser!(u64)).help("Seed of the generator for inputs not given"))
        .arg(Arg::new("print-outputs").long("print-outputs").action(ArgAction::SetTrue).help("Print every result's values"))
        .arg(Arg::new("target").long("target").value_name("NAME|FILE").help("Target description (default: the package's target; for .mlir, the module's ipu.target or the pipeline's default)"))
        .arg(Arg::new("profile").long("profile").value_name("FILE.json").help("Write a Chrome trace (Perfetto) of the device run: supersteps with their step summaries, per-tile cycles and memory"))
        .arg(Arg::new("report").long("report").value_name("DIR").help("Write DIR/report.html (one self-contained page: tile x superstep heat map, cycles against the estimates and bounds, exchange horizons against their lower bounds, memory per tile by category with the bytes in use per superstep) and, for an .mlir model, the compile's memory report DIR/memory.json with its summary DIR/memory.txt"))
        .arg(Arg::new("device-lock").long("device-lock").value_name("PATH").help("Lock file guarding the device (default: $TMPDIR/ipu-run-device.lock, one per machine)"))
        .arg(Arg::new("write-package").long("write-package").value_name("FILE.ipuexe").help("With an .mlir model: also write the compiled package (carrying the model as its source) to FILE"))
        .arg(Arg::new("check-ops").long("check-ops").action(ArgAction::SetTrue).help("Check every op on the device: each op's device result (read where the package's probes say, after its superstep) against the reference evaluated on the device's values of its operands; prints a table in program order and names the first op outside its tolerance (exit 1 then)"))
        .arg(Arg::new("allow-external-weights").long("allow-external-weights").action(ArgAction::SetTrue).help("Read a weights file the model names outside its own folder (an absolute path, or one with '..')"))
        .arg(Arg::new("runs").long("runs").value_name("N").default_value("1").value_parser(clap::value_parser!(u64).range(1..=4096)).help("Lay out N runs back to back with the host link streaming run i+1's inputs and run i-1's outputs while run i computes (double-buffered where tile memory allows), from the simulated run's supersteps; prints cyclesPerRunSteadyState, and with --profile the host link's track"))
        .arg(Arg::new("max-cycles").long("max-cycles").value_name("N").default_value("1000000000").value_parser(clap::value_parser!(u64)).help("Cycle budget of the device run (exceeding it fails the hardware test)"))
}

pub fn main(args: impl IntoIterator<Item = OsString>) -> i32 {
    crate::init_tracing_default("info");
    let m = match crate::cli::parse_args(command(), args) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let mut stderr = crate::cli::stderr_stream();
    let r = if m.get_flag("reference-only") {
        reference_only(&m, &mut stderr)
    } else {
        device_run(&m, &mut stderr)
    };
    match r {
        Ok(code) => code,
        Err(msg) => {
            let _ = writeln!(stderr, "ipu-run: {msg}");
            1
        }
    }
}

/// Renders a load failure; `Err` for I/O problems, `Ok(())` after rendering.
fn render_load_error(e: LoadError, stderr: &mut StandardStream) -> Result<(), String> {
    match e {
        LoadError::Io(msg) => Err(msg),
        LoadError::Diag(l, d) => {
            l.sources.render(&l.cx, &d, stderr);
            Ok(())
        }
    }
}

/// The inputs of `f`: from `--input NAME=FILE.npy`, else the argument's
/// default value (`ipu.default`), else random (both said on stderr). Names
/// are the arguments' `ipu.name`s (`argN` without). `Ok(None)`: a
/// diagnostic at the argument was rendered.
fn gather_inputs(
    loaded: &Loaded,
    f: ipu_ir::Op,
    m: &clap::ArgMatches,
    stderr: &mut StandardStream,
) -> Result<Option<Vec<(String, Tensor)>>, String> {
    let cx = &loaded.cx;
    let (inputs_ty, _) =
        ipu_dialects::func::function_type(cx, f).ok_or("entry function has no signature")?;
    let given = given_inputs(m)?;
    let args: Vec<ipu_ir::Value> = cx
        .entry_block(cx.region(f, 0))
        .map(|b| cx.block_args(b).to_vec())
        .unwrap_or_default();
    let mut rng = SplitMix::new(*m.get_one::<u64>("seed").expect("default"));
    let mut inputs = Vec::new();
    let mut used = vec![false; given.len()];
    for (i, &t) in inputs_ty.iter().enumerate() {
        let name = value_name(cx, f, "arg_attrs", i, "arg");
        let ty =
            ipu_dialects::nn::tensor_type(cx, t).map_err(|e| format!("input '{name}': {e}"))?;
        let loc = args.get(i).map_or(cx.op_loc(f), |&a| cx.block_arg_loc(a));
        let located = |message: String, stderr: &mut StandardStream| {
            let d = ipu_ir::diag::Diagnostic::error(loc, message);
            loaded.sources.render(cx, &d, stderr);
        };
        if let Some(k) = given.iter().position(|(n, _)| *n == name) {
            used[k] = true;
            let file = &given[k].1;
            let tensor =
                ipu_reference::npy::read_npy(file).map_err(|e| format!("input '{name}': {e}"))?;
            if tensor.ty() != ty {
                return Err(format!(
                    "input '{name}' from {file} is {}, but the model takes {ty}",
                    tensor.ty()
                ));
            }
            inputs.push((name, tensor));
        } else if let Some(a) = ipu_dialects::func::arg_default(cx, f, i) {
            let tensor = match ipu_dialects::nn::elements_to_tensor(cx, a) {
                Ok(t) => t,
                Err(e) => {
                    located(format!("input '{name}': its default value: {e}"), stderr);
                    return Ok(None);
                }
            };
            let _ = writeln!(
                stderr,
                "note: input '{name}' ({ty}) not given: using its default value"
            );
            inputs.push((name, tensor));
        } else {
            if let Err(e) = ipu_reference::check_tensor_size(
                &format!("random values for input '{name}'"),
                &ty.shape,
                ty.dtype,
            ) {
                located(e.to_string(), stderr);
                return Ok(None);
            }
            let range = ipu_dialects::func::arg_random_range(cx, f, i);
            let (lo, hi) = range.unwrap_or((-1.0, 1.0));
            let _ = writeln!(
                stderr,
                "note: input '{name}' ({ty}) not given: using random values in [{lo}, {hi}) (seed {})",
                rng.seed
            );
            inputs.push((name, random_tensor_in(&ty, range, &mut rng)?));
        }
    }
    if let Some(k) = used.iter().position(|u| !u) {
        return Err(format!("the model has no input named '{}'", given[k].0));
    }
    Ok(Some(inputs))
}

/// The `--input NAME=FILE.npy` arguments, each name at most once.
fn given_inputs(m: &clap::ArgMatches) -> Result<Vec<(String, String)>, String> {
    let mut given: Vec<(String, String)> = Vec::new();
    for spec in m.get_many::<String>("input").into_iter().flatten() {
        let (n, file) = spec
            .split_once('=')
            .ok_or_else(|| format!("--input expects NAME=FILE.npy, got '{spec}'"))?;
        if given.iter().any(|(g, _)| g == n) {
            return Err(format!("--input '{n}' is given more than once"));
        }
        given.push((n.to_string(), file.to_string()));
    }
    Ok(given)
}

/// The model argument, read: a package with its reference (the `nn`
/// source it carries), or IR text.
enum Model {
    Package {
        pkg: Box<Package>,
        reference: Box<Loaded>,
    },
    Text {
        name: String,
        text: Arc<str>,
        reference: Box<Loaded>,
    },
}

impl Model {
    fn reference(&self) -> &Loaded {
        match self {
            Model::Package { reference, .. } | Model::Text { reference, .. } => reference,
        }
    }
}

/// Reads the model argument: a package (ELF magic, or the `.ipuexe`
/// extension) or IR text. `Ok(None)`: its diagnostics were rendered.
fn read_model(
    registry: &Arc<ipu_ir::Registry>,
    m: &clap::ArgMatches,
    stderr: &mut StandardStream,
) -> Result<Option<Model>, String> {
    let path = m.get_one::<String>("model").expect("required");
    let allow_external = m.get_flag("allow-external-weights");
    let (name, bytes) = crate::load::read_bytes(path)?;
    let base = Path::new(path)
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    if bytes.starts_with(b"\x7fELF") || path.ends_with(".ipuexe") {
        tracing::info!("reading application package");
        let pkg = Package::from_elf_bytes(&bytes).map_err(|e| format!("{path}: {e}"))?;
        tracing::info!(
            tiles = pkg.meta.target.tile_count,
            compiler = %pkg.meta.compiler_version,
            "application package read"
        );
        let Some(src) = pkg.meta.source.clone() else {
            return Err(format!(
                "{path}: the package carries no source model (Metadata::source), so there is no reference to run"
            ));
        };
        let reference = match load_text(
            registry,
            &format!("{path}(source)"),
            src.into(),
            &base,
            allow_external,
        ) {
            Ok(l) => l,
            Err(e) => {
                render_load_error(e, stderr)?;
                return Err(format!("{path}: the package's source model does not load"));
            }
        };
        return Ok(Some(Model::Package {
            pkg: Box::new(pkg),
            reference: Box::new(reference),
        }));
    }
    let text: Arc<str> = crate::load::utf8_text(&name, bytes)?.into();
    match load_text(registry, &name, text.clone(), &base, allow_external) {
        Ok(reference) => Ok(Some(Model::Text {
            name,
            text,
            reference: Box::new(reference),
        })),
        Err(e) => {
            render_load_error(e, stderr)?;
            Ok(None)
        }
    }
}

/// Makes `dir` (and its parents) and checks that a file can be written in
/// it, so an unusable output directory is reported before any run.
fn prepare_output_dir(dir: &str) -> Result<(), String> {
    create_dir(Path::new(dir))?;
    let probe = Path::new(dir).join(format!(".ipu-run-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| format!("cannot write in the output directory '{dir}': {e}"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Checks that `file` can be written (its folder made, a temporary made
/// and removed beside it), before any run; the file is written later. The
/// file itself is not touched, so a run that fails leaves it as it was.
fn prepare_output_file(file: &str) -> Result<(), String> {
    create_parent(file)?;
    if Path::new(file).is_dir() {
        return Err(format!("cannot write '{file}': it is a directory"));
    }
    ipu_files::AtomicFile::create(file)
        .map(drop)
        .map_err(|e| format!("cannot write '{file}': {e}"))
}

fn reference_only(m: &clap::ArgMatches, stderr: &mut StandardStream) -> Result<i32, String> {
    if m.get_one::<String>("write-package").is_some() {
        return Err("--write-package needs a device run (it writes the compiled package); drop --reference-only".into());
    }
    if m.get_one::<String>("report").is_some() {
        return Err(
            "--report needs a device run (it shows the simulated run); drop --reference-only"
                .into(),
        );
    }
    let out_dir = m.get_one::<String>("output-dir");
    if let Some(dir) = out_dir {
        prepare_output_dir(dir)?;
    }
    let registry = crate::full_registry();
    let Some(model) = read_model(&registry, m, stderr)? else {
        return Ok(1);
    };
    let loaded = model.reference();
    let cx = &loaded.cx;
    let f = entry_function(
        cx,
        loaded.module,
        m.get_one::<String>("entry").map(|s| s.as_str()),
    )?;
    let Some(inputs) = gather_inputs(loaded, f, m, stderr)? else {
        return Ok(1);
    };
    let inputs: Vec<Tensor> = inputs.into_iter().map(|(_, t)| t).collect();
    let start = Instant::now();
    let outputs = match ipu_dialects::interpret::interpret(cx, f, &inputs) {
        Ok(o) => o,
        Err(d) => {
            loaded.sources.render(cx, &d, stderr);
            return Ok(1);
        }
    };
    let elapsed = start.elapsed();
    let files = out_dir.is_some() && !by_index(m);
    let Some(names) = result_names(loaded, f, outputs.len(), files, stderr) else {
        return Ok(1);
    };
    let mut stdout = std::io::stdout().lock();
    for (i, (t, name)) in outputs.iter().zip(&names).enumerate() {
        if let Some(dir) = out_dir {
            let file = output_file(m, dir, i, name);
            ipu_reference::npy::write_npy(&file, t).map_err(|e| e.to_string())?;
        }
        if m.get_flag("print-outputs") {
            let _ = writeln!(stdout, "{name}: {} = {}", t.ty(), format_values(t));
        }
    }
    let _ = writeln!(
        stdout,
        "referenceRun=OK outputs={} referenceMilliseconds={:.3}",
        outputs.len(),
        elapsed.as_secs_f64() * 1e3
    );
    Ok(0)
}

/// Checks, before a device run compiles anything, that the results' names
/// can be the file names `--output-dir` writes (the reference run checks
/// them again). `Ok(false)`: a diagnostic was rendered.
fn names_fit_files(
    m: &clap::ArgMatches,
    loaded: &Loaded,
    stderr: &mut StandardStream,
) -> Result<bool, String> {
    if m.get_one::<String>("output-dir").is_none() || by_index(m) {
        return Ok(true);
    }
    let cx = &loaded.cx;
    let f = entry_function(
        cx,
        loaded.module,
        m.get_one::<String>("entry").map(|s| s.as_str()),
    )?;
    let count = cx
        .entry_block(cx.region(f, 0))
        .and_then(|b| cx.last_op(b))
        .map_or(0, |r| cx.operands(r).len());
    Ok(result_names(loaded, f, count, true, stderr).is_some())
}

/// Whether `--output-dir` names its files by position (`--output-names index`).
fn by_index(m: &clap::ArgMatches) -> bool {
    m.get_one::<String>("output-names").map(String::as_str) == Some("index")
}

/// The file `--output-dir DIR` writes result `i` (named `name`) to.
fn output_file(m: &clap::ArgMatches, dir: &str, i: usize, name: &str) -> std::path::PathBuf {
    let file = if by_index(m) {
        format!("result{i}.npy")
    } else {
        format!("{name}.npy")
    };
    std::path::Path::new(dir).join(file)
}

/// The names of `f`'s `count` results (`ipu.name`, else `resultN`), checked
/// ([`crate::names::check_result_names`]; `files`: they become file names).
/// `None`: a diagnostic at the offending result's value was rendered.
fn result_names(
    loaded: &Loaded,
    f: ipu_ir::Op,
    count: usize,
    files: bool,
    stderr: &mut StandardStream,
) -> Option<Vec<String>> {
    let cx = &loaded.cx;
    let names: Vec<String> = (0..count)
        .map(|i| value_name(cx, f, "res_attrs", i, "result"))
        .collect();
    let Some((i, message)) = crate::names::check_result_names(&names, files) else {
        return Some(names);
    };
    // The result's location: where the returned value is made.
    let ret = cx
        .entry_block(cx.region(f, 0))
        .and_then(|b| cx.last_op(b))
        .filter(|&r| i < cx.operands(r).len());
    let loc = ret.map_or(cx.op_loc(f), |r| {
        let v = cx.operand(r, i);
        cx.defining_op(v)
            .map_or_else(|| cx.block_arg_loc(v), |d| cx.op_loc(d))
    });
    let d = ipu_ir::diag::Diagnostic::error(loc, message);
    loaded.sources.render(cx, &d, stderr);
    None
}

/// Compiles a module with `ipu-lower-to-machine` (for `target` when given)
/// and reads the package its machine-stage ops hold.
pub fn compile_to_package(
    registry: &Arc<ipu_ir::Registry>,
    loaded: &mut Loaded,
    target: Option<&str>,
    stderr: &mut StandardStream,
) -> Result<Package, String> {
    let cx = &mut loaded.cx;
    if let Some(t) = target {
        let a = cx.string_attr(t);
        cx.set_attr(loaded.module, ipu_lowering::target::TARGET_ATTR, a);
    }
    let mut pm = ipu_ir::pass::PassManager::new("builtin.module");
    pm.add_by_name(registry, "ipu-lower-to-machine", "")?;
    let _s = tracing::info_span!("compile").entered();
    let r = pm.run(cx, loaded.module, &mut std::io::stderr());
    for d in std::mem::take(&mut cx.diagnostics) {
        loaded.sources.render(&loaded.cx, &d, stderr);
    }
    if let Err(d) = r {
        loaded.sources.render(&loaded.cx, &d, stderr);
        return Err("compilation failed".into());
    }
    ipu_dialects::machine::read_package(&loaded.cx, loaded.module).map_err(|d| {
        loaded.sources.render(&loaded.cx, &d, stderr);
        "the compiled module holds no valid package (ipu-lower-to-machine must end with the package ops)".to_string()
    })
}

fn device_run(m: &clap::ArgMatches, stderr: &mut StandardStream) -> Result<i32, String> {
    let path = m.get_one::<String>("model").expect("required");
    let registry = crate::full_registry();
    let Some(model) = read_model(&registry, m, stderr)? else {
        return Ok(1);
    };
    prepare_device_outputs(m, &model, path)?;
    if !names_fit_files(m, model.reference(), stderr)? {
        return Ok(1);
    }
    let Some(built) = build_package(&registry, m, path, model, stderr)? else {
        return Ok(1);
    };
    let pkg = &built.pkg;
    let target = package_target(m.get_one::<String>("target").map(|s| s.as_str()), pkg)?;
    let out_dir = m.get_one::<String>("output-dir");
    let Some(rr) = reference_run(
        m,
        &built.reference,
        out_dir.is_some() && !by_index(m),
        stderr,
    )?
    else {
        return Ok(1);
    };
    let cx = &built.reference.cx;
    let host_inputs = stream_inputs(pkg, &rr.inputs, stderr)?;
    let out_streams = output_streams(pkg, &rr, stderr)?;
    let entry = streams::entry_point(pkg)?;

    // The device run, holding the device.
    let lock_path = m
        .get_one::<String>("device-lock")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(device::default_lock_path);
    let check_ops = m.get_flag("check-ops");
    if check_ops && pkg.meta.probes.is_empty() {
        return Err(format!(
            "--check-ops needs the package's probes (its .ipu.debug section), but {} has none",
            built.package_name
        ));
    }
    let fp8_casts = crate::check_ops::anchored_casts(cx, rr.f);
    let run = {
        let _lock = DeviceLock::acquire(&lock_path)?;
        device::run_on_chip_probed(
            pkg,
            &target,
            &host_inputs,
            &entry,
            *m.get_one::<u64>("max-cycles").expect("default"),
            check_ops || fp8_casts > 0,
        )?
    };
    // Per-op checks: for the table, and to anchor the FP8 casts.
    let probed = crate::check_ops::Probed::new(pkg, &run.probes);
    let op_rows = if run.hardware_pass() && (check_ops || fp8_casts > 0) {
        let start = Instant::now();
        let (rows, _) = crate::check_ops::check_ops(cx, rr.f, &rr.tensors, &probed)?;
        tracing::info!(milliseconds = %format!("{:.3}", start.elapsed().as_secs_f64() * 1e3), "per-op checks");
        Some(rows)
    } else {
        None
    };
    let anchored = match &op_rows {
        Some(rows) if fp8_casts > 0 => {
            Some(anchored_outputs(cx, &rr, &probed, rows, fp8_casts, stderr)?)
        }
        _ => None,
    };
    let mut stdout = std::io::stdout().lock();
    let floor = model_floor(cx, rr.f, &target);
    print_cycles(&mut stdout, m, &built, &target, &run, floor)?;
    let hardware = run.hardware_pass();
    let (numerical, max_err) = if hardware {
        compare_outputs(
            &mut stdout,
            stderr,
            m,
            &rr,
            &out_streams,
            &run,
            anchored.as_deref(),
        )?
    } else {
        report_incomplete_run(stderr, m, &run);
        (false, 0.0)
    };
    print_verdict(&mut stdout, &built, hardware, numerical, max_err);
    let mut ops_pass = true;
    if check_ops {
        match &op_rows {
            Some(rows) => {
                let _ = write!(stdout, "{}", crate::check_ops::render(rows));
                ops_pass = crate::check_ops::first_failure(rows).is_none();
            }
            None => {
                let _ = writeln!(
                    stderr,
                    "ipu-run: no per-op checks: the run did not complete"
                );
                ops_pass = false;
            }
        }
    }
    if let Some(dir) = m.get_one::<String>("report") {
        let golden = op_rows.as_deref().filter(|_| check_ops).map(golden_rows);
        let verdict = crate::report::Verdict {
            hardware,
            numerical,
            max_abs_error: hardware.then_some(max_err),
        };
        write_report(
            &mut stdout,
            Path::new(dir),
            path,
            &built,
            &run,
            &target,
            verdict,
            golden.as_deref(),
            floor,
        )?;
    }
    Ok(if hardware && numerical && ops_pass {
        0
    } else {
        1
    })
}

/// Checks every output place of a device run before the model is compiled
/// or run: the folders made and writable, the files creatable.
fn prepare_device_outputs(m: &clap::ArgMatches, model: &Model, path: &str) -> Result<(), String> {
    if matches!(model, Model::Package { .. }) && m.get_one::<String>("write-package").is_some() {
        return Err(format!(
            "--write-package writes the package compiled from an .mlir model, but '{path}' is already a package"
        ));
    }
    for dir in ["output-dir", "report"]
        .iter()
        .filter_map(|k| m.get_one::<String>(k))
    {
        prepare_output_dir(dir)?;
    }
    for file in ["profile", "write-package"]
        .iter()
        .filter_map(|k| m.get_one::<String>(k))
    {
        prepare_output_file(file)?;
    }
    Ok(())
}

/// The package a device run runs, with its reference model, the name the
/// verdict gives it and (when compiled here) the compile's memory report.
struct Built {
    pkg: Package,
    reference: Loaded,
    package_name: String,
    memory: Option<ipu_lowering::exchange_to_machine::memory::MemoryReport>,
}

/// The package of the model argument: read, or compiled from IR (and
/// written with `--write-package`). `Ok(None)`: diagnostics were rendered.
fn build_package(
    registry: &Arc<ipu_ir::Registry>,
    m: &clap::ArgMatches,
    path: &str,
    model: Model,
    stderr: &mut StandardStream,
) -> Result<Option<Built>, String> {
    let (name, text, reference) = match model {
        Model::Package { pkg, reference } => {
            return Ok(Some(Built {
                pkg: *pkg,
                reference: *reference,
                package_name: path.to_string(),
                memory: None,
            }))
        }
        Model::Text {
            name,
            text,
            reference,
        } => (name, text, reference),
    };
    let base = Path::new(path)
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let allow_external = m.get_flag("allow-external-weights");
    let mut compiled = match load_text(registry, &name, text.clone(), &base, allow_external) {
        Ok(l) => l,
        Err(e) => {
            render_load_error(e, stderr)?;
            return Ok(None);
        }
    };
    let target_opt = m.get_one::<String>("target").map(|s| s.as_str());
    let (pkg, mut reports) = ipu_lowering::exchange_to_machine::memory::collecting(|| {
        compile_to_package(registry, &mut compiled, target_opt, stderr)
    });
    let mut pkg = pkg?;
    let memory = reports.pop();
    // The model is the package's reference.
    pkg.meta.source_sha256 = ipu_package::Digest::of(text.as_bytes());
    pkg.meta.source = Some(text.to_string());
    let mut package_name = path.to_string();
    if let Some(out) = m.get_one::<String>("write-package") {
        tracing::info!(
            tiles = pkg.meta.target.tile_count,
            "writing application package"
        );
        create_parent(out)?;
        pkg.write_file(out)
            .map_err(|e| format!("cannot write '{out}': {e}"))?;
        tracing::info!("application package written");
        package_name = out.clone();
    }
    Ok(Some(Built {
        pkg,
        reference: *reference,
        package_name,
        memory,
    }))
}

/// The target to run on (`--target`, else the package's), checked against
/// the machine the package was built for.
fn package_target(target_opt: Option<&str>, pkg: &Package) -> Result<ipu_target::Target, String> {
    let target_name = target_opt.unwrap_or(&pkg.meta.target.name);
    let target = ipu_target::Target::load(target_name).map_err(|e| e.to_string())?;
    let t = &pkg.meta.target;
    if target.tiles() != t.tile_count
        || target.memory.base_address != u64::from(t.memory_base)
        || target.sram_bytes() != u64::from(t.memory_bytes)
    {
        return Err(format!(
            "target {} ({} tiles, memory {:#x} + {}) does not match the package's {} ({} tiles, memory {:#x} + {})",
            target.name,
            target.tiles(),
            target.memory.base_address,
            target.sram_bytes(),
            t.name,
            t.tile_count,
            t.memory_base,
            t.memory_bytes
        ));
    }
    if ipu_package::Digest::of(target.source_text.as_bytes()) != t.description_sha256 {
        tracing::warn!(
            target = %target.name,
            "the target description differs from the one the package was compiled for (SHA-256 mismatch)"
        );
    }
    Ok(target)
}

/// The reference side of a device run: the entry function, its inputs
/// (given to the device too), its results and their checked names.
struct ReferenceRun {
    f: ipu_ir::Op,
    inputs: Vec<(String, Tensor)>,
    tensors: Vec<Tensor>,
    outputs: Vec<Tensor>,
    names: Vec<String>,
    precision: Vec<Option<ipu_package::ElementType>>,
}

/// Runs the reference on the inputs the device gets too. `Ok(None)`:
/// diagnostics were rendered.
fn reference_run(
    m: &clap::ArgMatches,
    reference: &Loaded,
    files: bool,
    stderr: &mut StandardStream,
) -> Result<Option<ReferenceRun>, String> {
    let cx = &reference.cx;
    let f = entry_function(
        cx,
        reference.module,
        m.get_one::<String>("entry").map(|s| s.as_str()),
    )?;
    let Some(inputs) = gather_inputs(reference, f, m, stderr)? else {
        return Ok(None);
    };
    let start = Instant::now();
    let tensors: Vec<Tensor> = inputs.iter().map(|(_, t)| t.clone()).collect();
    let outputs = match ipu_dialects::interpret::interpret(cx, f, &tensors) {
        Ok(o) => o,
        Err(d) => {
            reference.sources.render(cx, &d, stderr);
            return Ok(None);
        }
    };
    tracing::info!(milliseconds = %format!("{:.3}", start.elapsed().as_secs_f64() * 1e3), "reference run");
    let Some(names) = result_names(reference, f, outputs.len(), files, stderr) else {
        return Ok(None);
    };
    let precision = device::computed_precision(cx, f);
    Ok(Some(ReferenceRun {
        f,
        inputs,
        tensors,
        outputs,
        names,
        precision,
    }))
}

/// The inputs as the bytes of their streams ([`streams::input_bytes`]),
/// its notes on stderr.
fn stream_inputs(
    pkg: &Package,
    inputs: &[(String, Tensor)],
    stderr: &mut StandardStream,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut notes = Vec::new();
    let bytes = streams::input_bytes(pkg, inputs, &mut notes);
    print_notes(&notes, stderr);
    bytes
}

/// The output stream of each result ([`streams::output_streams`]), its
/// notes on stderr.
fn output_streams<'p>(
    pkg: &'p Package,
    rr: &ReferenceRun,
    stderr: &mut StandardStream,
) -> Result<Vec<&'p HostStream>, String> {
    let mut notes = Vec::new();
    let found = streams::output_streams(pkg, &rr.names, &rr.outputs, &mut notes);
    print_notes(&notes, stderr);
    found
}

fn print_notes(notes: &[String], stderr: &mut StandardStream) {
    for n in notes {
        let _ = writeln!(stderr, "{n}");
    }
}

/// The reference whose casts to FP8 of computed values take the device's
/// values (those checked exact on the device's own input).
fn anchored_outputs(
    cx: &ipu_ir::Context,
    rr: &ReferenceRun,
    probed: &crate::check_ops::Probed<'_>,
    rows: &[crate::check_ops::OpCheck],
    fp8_casts: usize,
    stderr: &mut StandardStream,
) -> Result<Vec<Tensor>, String> {
    let exact: std::collections::HashSet<String> = rows
        .iter()
        .filter(|r| {
            r.observed
                .as_ref()
                .is_some_and(|o| o.pass() && o.fp8.is_some())
        })
        .map(|r| r.location.clone())
        .collect();
    let (outs, n) = crate::check_ops::anchored_reference(cx, rr.f, &rr.tensors, probed, &exact)?;
    tracing::info!(
        anchored = n,
        of = fp8_casts,
        "FP8 casts of computed values anchored to the device's values"
    );
    if n < fp8_casts {
        let _ = writeln!(
            stderr,
            "note: {} of {fp8_casts} casts to FP8 of computed values are not anchored to the device's values (not stored, or not exact on the device's input): the plain reference is used there",
            fp8_casts - n
        );
    }
    Ok(outs)
}

/// The cycles line (with `--profile`, after writing the trace): the run's
/// figures, the model's floor ([`crate::floor`]) when it has one, and the
/// steady state of `--runs` runs ([`crate::steady`]).
fn print_cycles(
    stdout: &mut impl Write,
    m: &clap::ArgMatches,
    built: &Built,
    target: &ipu_target::Target,
    run: &device::DeviceRun,
    floor: Option<u64>,
) -> Result<(), String> {
    let pkg = &built.pkg;
    let tiles = pkg.meta.target.tile_count;
    let runs = *m.get_one::<u64>("runs").expect("default") as usize;
    let (figures, schedule) =
        crate::steady::run_figures(pkg, target, &run.report, floor, built.memory.as_ref(), runs)?;
    if let Some(prof) = m.get_one::<String>("profile") {
        let extra = if runs > 1 {
            let (pid, tid) = device::free_trace_ids(pkg);
            crate::steady::trace_events(&schedule, pid, tid)
        } else {
            Vec::new()
        };
        let trace = device::chrome_trace_with(
            pkg,
            &run.report,
            &built.package_name,
            built.memory.as_ref(),
            extra,
        );
        create_parent(prof)?;
        crate::cli::write_output(prof, trace)?;
        let _ = writeln!(
            stdout,
            "profile={prof} tiles={tiles} cycles={}{figures}",
            run.report.cycles,
        );
    } else {
        let _ = writeln!(
            stdout,
            "tiles={tiles} cycles={}{figures}",
            run.report.cycles
        );
    }
    Ok(())
}

/// The model's floor on `target` ([`crate::floor`]); `None` (said in the
/// log) when the model has ops that are not `nn` ops.
fn model_floor(cx: &ipu_ir::Context, f: ipu_ir::Op, target: &ipu_target::Target) -> Option<u64> {
    match crate::floor::floor(cx, f, target) {
        Ok(fl) => Some(fl.cycles),
        Err(e) => {
            tracing::warn!("no floor: {e}");
            None
        }
    }
}

/// Why a run gave no results: its faults, or the tiles that did not halt.
fn report_incomplete_run(
    stderr: &mut StandardStream,
    m: &clap::ArgMatches,
    run: &device::DeviceRun,
) {
    for line in device::describe_faults(&run.faults) {
        let _ = writeln!(stderr, "ipu-run: device fault: {line}");
    }
    if run.faults.is_empty() {
        let stuck: Vec<String> = run
            .started
            .iter()
            .filter(|&&t| !run.report.tiles.get(t as usize).is_some_and(|r| r.halted))
            .take(8)
            .map(|t| t.to_string())
            .collect();
        let _ = writeln!(
            stderr,
            "ipu-run: the device did not finish within {} cycles (tiles not halted: {}{})",
            m.get_one::<u64>("max-cycles").expect("default"),
            stuck.join(", "),
            if stuck.len() == 8 { ", ..." } else { "" }
        );
    }
    let _ = writeln!(
        stderr,
        "ipu-run: no device results to compare: the run did not complete"
    );
}

/// Reads each result from the device, writes it (`--output-dir`), prints it
/// (`--print-outputs`) and compares it with the reference (FP8-anchored when
/// there is one). Returns whether all pass and the largest error against
/// the plain reference.
fn compare_outputs(
    stdout: &mut impl Write,
    stderr: &mut StandardStream,
    m: &clap::ArgMatches,
    rr: &ReferenceRun,
    out_streams: &[&HostStream],
    run: &device::DeviceRun,
    anchored: Option<&[Tensor]>,
) -> Result<(bool, f64), String> {
    let out_dir = m.get_one::<String>("output-dir");
    let mut numerical = true;
    let mut max_err = 0f64;
    for (i, ((name, reference), s)) in rr
        .names
        .iter()
        .zip(&rr.outputs)
        .zip(out_streams)
        .enumerate()
    {
        let bytes = &run.outputs[&s.name];
        let dev = device::bytes_to_tensor(
            bytes,
            reference.shape(),
            s.host_type(),
            reference.fp8_scale(),
        )
        .map_err(|e| format!("output '{name}': {e}"))?;
        if let Some(dir) = out_dir {
            let file = output_file(m, dir, i, name);
            ipu_reference::npy::write_npy(&file, &dev).map_err(|e| e.to_string())?;
        }
        if m.get_flag("print-outputs") {
            let _ = writeln!(stdout, "{name}: {} = {}", dev.ty(), format_values(&dev));
        }
        let compared = device::compared_type(s.host_type(), rr.precision.get(i).copied().flatten());
        // The verdict's reference: FP8-anchored when there is one.
        let gate = anchored.map_or(reference, |o| &o[i]);
        let c = device::compare(&dev, gate, compared);
        // The reported error is against the plain reference.
        let plain = device::compare(&dev, reference, compared);
        tracing::info!(
            output = %name,
            max_abs_error = c.max_abs_error,
            tolerance = c.tolerance,
            max_abs_reference = c.max_abs_reference,
            "compared with the reference"
        );
        max_err = max_err.max(plain.max_abs_error);
        if !c.pass() {
            numerical = false;
            let _ = writeln!(
                stderr,
                "ipu-run: output '{name}': {} of {} elements beyond the tolerance {:e} (largest |reference| {}, largest error {})",
                c.failure_count,
                dev.numel(),
                c.tolerance,
                c.max_abs_reference,
                c.max_abs_error
            );
            for (i, d, r) in &c.failures {
                let _ = writeln!(
                    stderr,
                    "  at {} (element {i}): device {d}, reference {r}, error {}",
                    device::multi_index(reference.shape(), *i),
                    (d - r).abs()
                );
            }
        }
    }
    Ok((numerical, max_err))
}

/// The verdict lines.
fn print_verdict(
    stdout: &mut impl Write,
    built: &Built,
    hardware: bool,
    numerical: bool,
    max_err: f64,
) {
    if hardware {
        let _ = writeln!(
            stdout,
            "referenceMaximumAbsoluteError={max_err:.6} numericalTest={}",
            if numerical { "PASS" } else { "FAIL" }
        );
    } else {
        let _ = writeln!(
            stdout,
            "referenceMaximumAbsoluteError=n/a numericalTest=FAIL"
        );
    }
    let _ = writeln!(
        stdout,
        "package={} tiles={} hardwareTest={}",
        built.package_name,
        built.pkg.meta.target.tile_count,
        if hardware { "PASS" } else { "FAIL" }
    );
}

/// The per-op table's rows as the report shows them.
fn golden_rows(rows: &[crate::check_ops::OpCheck]) -> Vec<crate::report::GoldenRow> {
    rows.iter()
        .filter_map(|r| {
            r.observed.as_ref().map(|o| crate::report::GoldenRow {
                op: r.op.clone(),
                loc: r.location.clone(),
                max_abs_error: o.max_abs_error,
                tolerance: o.tolerance,
                pass: o.pass(),
            })
        })
        .collect()
}

/// `--report DIR`: the HTML page, and the compile's memory report beside it.
#[allow(clippy::too_many_arguments)]
fn write_report(
    stdout: &mut impl Write,
    dir: &Path,
    path: &str,
    built: &Built,
    run: &device::DeviceRun,
    target: &ipu_target::Target,
    verdict: crate::report::Verdict,
    golden: Option<&[crate::report::GoldenRow]>,
    floor: Option<u64>,
) -> Result<(), String> {
    let page = crate::report::html(&crate::report::ReportInput {
        name: path,
        package: (built.package_name != path).then_some(built.package_name.as_str()),
        pkg: &built.pkg,
        run: &run.report,
        target,
        memory: built.memory.as_ref(),
        verdict: Some(verdict),
        bounds: None,
        golden,
        floor,
    });
    let html = dir.join("report.html");
    crate::cli::write_output(&html, page)?;
    let mut line = format!("report={}", html.display());
    if let Some(mem) = &built.memory {
        let json = dir.join("memory.json");
        crate::memory_report::write(mem, &json)?;
        line.push_str(&format!(" memory={}", json.display()));
    }
    let _ = writeln!(stdout, "{line}");
    Ok(())
}

/// A small deterministic generator (SplitMix64) for inputs not given.
pub struct SplitMix {
    pub seed: u64,
    state: u64,
}

impl SplitMix {
    pub fn new(seed: u64) -> SplitMix {
        SplitMix { seed, state: seed }
    }
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

/// Random values for a tensor type: floats in [-1, 1), integers in [0, 4), booleans.
pub fn random_tensor(ty: &TensorType, rng: &mut SplitMix) -> Result<Tensor, String> {
    random_tensor_in(ty, None, rng)
}

/// [`random_tensor`], with floats in `[lo, hi)` when a range is given (the
/// argument's `ipu.random`).
pub fn random_tensor_in(
    ty: &TensorType,
    range: Option<(f64, f64)>,
    rng: &mut SplitMix,
) -> Result<Tensor, String> {
    let n = ty.numel();
    let err = |e: ipu_reference::EvalError| e.to_string();
    if ty.dtype.is_float() {
        let (lo, hi) = range.unwrap_or((-1.0, 1.0));
        let (mid, half) = ((hi + lo) / 2.0, (hi - lo) / 2.0);
        let v = (0..n)
            .map(|_| (mid + half * f64::from(rng.next_f32())) as f32)
            .collect();
        Tensor::from_f32(ty.shape.clone(), ty.dtype, v).map_err(err)
    } else if ty.dtype == ElementType::I1 {
        let v = (0..n).map(|_| rng.next_u64() & 1 == 1).collect();
        Tensor::from_bool(ty.shape.clone(), v).map_err(err)
    } else {
        let v = (0..n).map(|_| (rng.next_u64() % 4) as i64).collect();
        Tensor::from_i64(ty.shape.clone(), ty.dtype, v).map_err(err)
    }
}

/// Values in nested brackets, at most 64 shown.
pub fn format_values(t: &Tensor) -> String {
    let shown = 64;
    let vals: Vec<String> = match t.data() {
        TensorData::F32(v) => v.iter().take(shown).map(|x| format!("{x}")).collect(),
        TensorData::I64(v) => v.iter().take(shown).map(|x| format!("{x}")).collect(),
    };
    let mut s = String::from("[");
    s.push_str(&vals.join(", "));
    if t.numel() > shown {
        s.push_str(&format!(", ... ({} more)", t.numel() - shown));
    }
    s.push(']');
    s
}

/// Creates the folder a file is written to, when it is missing.
fn create_parent(file: &str) -> Result<(), String> {
    match std::path::Path::new(file).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => create_dir(dir),
        _ => Ok(()),
    }
}

/// Makes `dir` and its parents; a component that is a file is named, where
/// `create_dir_all` would only say "File exists".
fn create_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| match dir.ancestors().find(|a| a.is_file()) {
        Some(f) => format!(
            "cannot create '{}': '{}' is a file, not a directory",
            dir.display(),
            f.display()
        ),
        None => format!("cannot create '{}': {e}", dir.display()),
    })
}
