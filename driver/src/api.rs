//! The tools' work as calls on values in memory, for embedders (the Python
//! package in `python/`): load a model from IR text or package bytes,
//! compile it keeping the IR of every stage, and run a package on given
//! inputs, getting its outputs and the verdict lines `ipu-run` prints.
//!
//! Nothing here writes to stdout or stderr: a diagnostic comes back as an
//! [`ApiError`] carrying its rendered text and its location, and what
//! `ipu-run` says on stderr comes back as notes, so an embedder decides
//! where each goes. The verdict follows `ipu-run`'s device path
//! (`crate::run`): the same inputs for a seed, the same comparison
//! (FP8-anchored where the model casts computed values to FP8), the same
//! lines, so a run from an embedder and from the tool agree byte for byte.

use crate::check_ops::{self, OpCheck, Probed};
use crate::device::{self, DeviceLock, DeviceRun};
use crate::load::{entry_function, load_text, value_name, LoadError, Loaded};
use crate::run::{random_tensor_in, SplitMix};
use crate::streams;
use ipu_ir::diag::{Diagnostic, SourceMap};
use ipu_ir::{Context, LocKind, Registry};
pub use ipu_lowering::exchange_to_machine::memory::MemoryReport;
use ipu_package::{HostStream, Package};
use ipu_reference::{Tensor, TensorType};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// A failure, as text: the message, the diagnostic's location
/// (`file:line:col` where it resolves to a source, MLIR's form otherwise)
/// and the diagnostic rendered as the tools print it (the message alone
/// when there is no diagnostic).
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub message: String,
    pub location: Option<String>,
    pub rendered: String,
}

impl ApiError {
    /// An error without a source location (I/O, options).
    pub fn plain(message: impl Into<String>) -> ApiError {
        let message = message.into();
        ApiError {
            rendered: message.clone(),
            message,
            location: None,
        }
    }

    /// A diagnostic of a module read from `sources`.
    pub fn from_diagnostic(sources: &SourceMap, cx: &Context, d: &Diagnostic) -> ApiError {
        ApiError {
            message: d.message.clone(),
            location: Some(located(sources, cx, d.loc)),
            rendered: sources.render_to_string(cx, d),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.rendered)
    }
}

/// `name:line:col` of `loc` where it resolves to a source (as
/// [`SourceMap::resolve`] does: names, call sites and fused locations
/// through their parts), else the location as MLIR prints it.
fn located(sources: &SourceMap, cx: &Context, loc: ipu_ir::Loc) -> String {
    fn file_line_col(cx: &Context, loc: ipu_ir::Loc) -> Option<String> {
        match cx.loc_kind(loc) {
            LocKind::FileLineCol { file, line, col } => {
                Some(format!("{}:{line}:{col}", cx.str(*file)))
            }
            LocKind::Name { child, .. } => file_line_col(cx, *child),
            LocKind::CallSite { callee, .. } => file_line_col(cx, *callee),
            LocKind::Fused { locs, .. } => locs.iter().find_map(|&l| file_line_col(cx, l)),
            LocKind::Unknown => None,
        }
    }
    sources
        .resolve(cx, loc)
        .and_then(|_| file_line_col(cx, loc))
        .unwrap_or_else(|| ipu_ir::diag::print_loc(cx, loc))
}

fn load_error(e: LoadError) -> ApiError {
    match e {
        LoadError::Io(msg) => ApiError::plain(msg),
        LoadError::Diag(l, d) => ApiError::from_diagnostic(&l.sources, &l.cx, &d),
    }
}

/// An `nn` model: its text (the reference a run checks against and the
/// source a compiled package carries) and the folder its weights side file
/// is read from.
pub struct Model {
    pub name: String,
    pub text: Arc<str>,
    pub base: PathBuf,
    /// The model parsed and verified: the reference interpreter's input.
    pub reference: Loaded,
}

impl Model {
    /// Parses and verifies `text` (named `name` in diagnostics).
    pub fn from_text(
        registry: &Arc<Registry>,
        name: &str,
        text: Arc<str>,
        base: &Path,
    ) -> Result<Model, ApiError> {
        let reference = load_text(registry, name, text.clone(), base, false).map_err(load_error)?;
        Ok(Model {
            name: name.to_string(),
            text,
            base: base.to_path_buf(),
            reference,
        })
    }

    /// The entry function's input names and types, in order.
    pub fn inputs(&self, entry: Option<&str>) -> Result<Vec<(String, TensorType)>, ApiError> {
        let cx = &self.reference.cx;
        let f = entry_function(cx, self.reference.module, entry).map_err(ApiError::plain)?;
        let (types, _) = ipu_dialects::func::function_type(cx, f)
            .ok_or_else(|| ApiError::plain("entry function has no signature"))?;
        types
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let name = value_name(cx, f, "arg_attrs", i, "arg");
                let ty = ipu_dialects::nn::tensor_type(cx, t)
                    .map_err(|e| ApiError::plain(format!("input '{name}': {e}")))?;
                Ok((name, ty))
            })
            .collect()
    }
}

/// Reads package bytes, with the model it carries as its reference.
pub fn read_package(
    registry: &Arc<Registry>,
    name: &str,
    bytes: &[u8],
    base: &Path,
) -> Result<(Package, Model), ApiError> {
    let pkg =
        Package::from_elf_bytes(bytes).map_err(|e| ApiError::plain(format!("{name}: {e}")))?;
    let Some(src) = pkg.meta.source.clone() else {
        return Err(ApiError::plain(format!(
            "{name}: the package carries no source model (Metadata::source), so there is no reference to run"
        )));
    };
    let model = Model::from_text(registry, &format!("{name}(source)"), src.into(), base)?;
    Ok((pkg, model))
}

/// How to compile.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Target name or file (default: the module's `ipu.target`, else the pipeline's).
    pub target: Option<String>,
    /// A textual pass pipeline as `ipu-opt --pass-pipeline` takes, run in
    /// place of the stages; it must end with the machine stage.
    pub pipeline: Option<String>,
    /// Keep the IR printed after each stage ([`Compiled::ir`]).
    pub keep_ir: bool,
}

/// A compiled model.
pub struct Compiled {
    /// The package, carrying the model's text as its source.
    pub package: Package,
    /// The machine stage's memory report.
    pub memory: Option<MemoryReport>,
    /// `(stage, IR text)` in order, when asked for: `nn` (the input),
    /// then `tile`, `exchange` and `machine` (or `pipeline` for a given one).
    pub ir: Vec<(String, String)>,
    /// Warnings and remarks the compile rendered.
    pub notes: Vec<String>,
    pub seconds: f64,
}

/// The stages of `ipu-lower-to-machine`, one pipeline each: run in turn,
/// they are that pipeline's passes in its order.
pub const STAGES: [(&str, &str); 3] = [
    ("tile", "builtin.module(ipu-lower-to-tile)"),
    ("exchange", "builtin.module(convert-tile-to-exchange)"),
    ("machine", "builtin.module(convert-exchange-to-machine)"),
];

fn print_module(cx: &Context, module: ipu_ir::Op) -> String {
    let mut p = ipu_ir::printer::Printer::new(cx, ipu_ir::printer::PrintOptions::default());
    // Printing into a string has no sink to fail.
    let _ = p.print_top(module);
    p.finish()
}

/// Compiles `model` to a package; `progress(stage, done, total)` is called
/// before each stage and once at the end.
pub fn compile(
    registry: &Arc<Registry>,
    model: &Model,
    opts: &CompileOptions,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Compiled, ApiError> {
    let start = Instant::now();
    let mut l = load_text(
        registry,
        &model.name,
        model.text.clone(),
        &model.base,
        false,
    )
    .map_err(load_error)?;
    if let Some(t) = &opts.target {
        let a = l.cx.string_attr(t);
        l.cx.set_attr(l.module, ipu_lowering::target::TARGET_ATTR, a);
    }
    let stages: Vec<(&str, &str)> = match &opts.pipeline {
        Some(p) => vec![("pipeline", p.as_str())],
        None => STAGES.to_vec(),
    };
    let mut ir = Vec::new();
    if opts.keep_ir {
        ir.push(("nn".to_string(), print_module(&l.cx, l.module)));
    }
    let mut notes = Vec::new();
    let (r, mut reports) = ipu_lowering::exchange_to_machine::memory::collecting(|| {
        for (i, (stage, pipeline)) in stages.iter().enumerate() {
            progress(stage, i, stages.len());
            let mut pm = ipu_ir::pass::PassManager::new("builtin.module");
            pm.add_pipeline(registry, pipeline)
                .map_err(|e| ApiError::plain(format!("pipeline '{pipeline}': {e}")))?;
            let r = pm.run(&mut l.cx, l.module, &mut std::io::sink());
            for d in std::mem::take(&mut l.cx.diagnostics) {
                notes.push(l.sources.render_to_string(&l.cx, &d));
            }
            r.map_err(|d| ApiError::from_diagnostic(&l.sources, &l.cx, &d))?;
            if opts.keep_ir {
                ir.push((stage.to_string(), print_module(&l.cx, l.module)));
            }
        }
        progress("done", stages.len(), stages.len());
        Ok::<(), ApiError>(())
    });
    r?;
    let mut package = ipu_dialects::machine::read_package(&l.cx, l.module).map_err(|d| {
        let mut e = ApiError::from_diagnostic(&l.sources, &l.cx, &d);
        e.message = format!("the compiled module holds no valid package (the pipeline must end with the machine stage): {}", e.message);
        e
    })?;
    package.meta.source_sha256 = ipu_package::Digest::of(model.text.as_bytes());
    package.meta.source = Some(model.text.to_string());
    Ok(Compiled {
        package,
        memory: reports.pop(),
        ir,
        notes,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The machine-stage IR of a package (what `ipu-translate --from-ipuexe` prints).
pub fn package_ir(registry: &Arc<Registry>, pkg: &Package, name: &str) -> String {
    let mut cx = Context::new(registry.clone());
    let loc = cx.file_loc(name, 0, 0);
    let module = ipu_ir::builtin::create_module(&mut cx, loc);
    if let Some(body) = cx.entry_block(cx.region(module, 0)) {
        ipu_dialects::machine::emit_package(&mut cx, body, pkg, loc);
    }
    print_module(&cx, module)
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The function to run (default: `@main`, or the only public one).
    pub entry: Option<String>,
    /// Seed of the generator for inputs not given (`ipu-run --seed`).
    pub seed: u64,
    pub max_cycles: u64,
    /// Check every op on the device (`ipu-run --check-ops`).
    pub check_ops: bool,
    /// The device lock (default: `ipu-run`'s).
    pub device_lock: Option<PathBuf>,
    /// The package's name in the verdict line (`package=NAME`).
    pub package_name: String,
    /// Target name or file (default: the package's).
    pub target: Option<String>,
    /// Runs laid out back to back for the steady state (`ipu-run --runs`).
    pub runs: usize,
    /// The compile's memory report, which places the host streams' bytes
    /// for the steady state (without it no transfer overlaps a run).
    pub memory: Option<MemoryReport>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            entry: None,
            seed: 0,
            max_cycles: 1_000_000_000,
            check_ops: false,
            device_lock: None,
            package_name: "model.ipuexe".into(),
            target: None,
            runs: 1,
            memory: None,
        }
    }
}

/// What a run gave.
pub struct RunResult {
    /// The device's outputs by result name, in order (empty when the run
    /// did not complete).
    pub outputs: Vec<(String, Tensor)>,
    /// The lines `ipu-run` prints on stdout, in order, without newlines
    /// (the per-op table's lines among them with `check_ops`).
    pub lines: Vec<String>,
    /// What `ipu-run` says on stderr (notes, failures), one entry each.
    pub notes: Vec<String>,
    pub hardware: bool,
    pub numerical: bool,
    /// Every op within its tolerance (true without `check_ops`).
    pub ops_pass: bool,
    pub max_abs_error: f64,
    pub cycles: u64,
    pub op_rows: Option<Vec<OpCheck>>,
    pub device: DeviceRun,
    pub target: ipu_target::Target,
    /// The model's floor on the target (`crate::floor`), when it has one.
    pub floor: Option<u64>,
}

impl RunResult {
    /// `ipu-run`'s exit code: 0 when every verdict passes.
    pub fn passed(&self) -> bool {
        self.hardware && self.numerical && self.ops_pass
    }
}

/// The inputs of the entry function `f`: `given` by name, else the
/// argument's default value, else random values from `rng` (each said in
/// `notes`, as `ipu-run` says it).
fn gather_inputs(
    model: &Model,
    f: ipu_ir::Op,
    mut given: BTreeMap<String, Tensor>,
    rng: &mut SplitMix,
    notes: &mut Vec<String>,
) -> Result<Vec<(String, Tensor)>, ApiError> {
    let (l, cx) = (&model.reference, &model.reference.cx);
    let (types, _) = ipu_dialects::func::function_type(cx, f)
        .ok_or_else(|| ApiError::plain("entry function has no signature"))?;
    let args: Vec<ipu_ir::Value> = cx
        .entry_block(cx.region(f, 0))
        .map(|b| cx.block_args(b).to_vec())
        .unwrap_or_default();
    let mut inputs = Vec::new();
    for (i, &t) in types.iter().enumerate() {
        let name = value_name(cx, f, "arg_attrs", i, "arg");
        let loc = args.get(i).map_or(cx.op_loc(f), |&a| cx.block_arg_loc(a));
        let at = |message: String| {
            ApiError::from_diagnostic(&l.sources, cx, &Diagnostic::error(loc, message))
        };
        let ty =
            ipu_dialects::nn::tensor_type(cx, t).map_err(|e| at(format!("input '{name}': {e}")))?;
        let tensor = if let Some(t) = given.remove(&name) {
            if t.ty() != ty {
                return Err(at(format!(
                    "input '{name}' is {}, but the model takes {ty}",
                    t.ty()
                )));
            }
            t
        } else if let Some(a) = ipu_dialects::func::arg_default(cx, f, i) {
            notes.push(format!(
                "note: input '{name}' ({ty}) not given: using its default value"
            ));
            ipu_dialects::nn::elements_to_tensor(cx, a)
                .map_err(|e| at(format!("input '{name}': its default value: {e}")))?
        } else {
            ipu_reference::check_tensor_size(
                &format!("random values for input '{name}'"),
                &ty.shape,
                ty.dtype,
            )
            .map_err(|e| at(e.to_string()))?;
            let range = ipu_dialects::func::arg_random_range(cx, f, i);
            let (lo, hi) = range.unwrap_or((-1.0, 1.0));
            notes.push(format!(
                "note: input '{name}' ({ty}) not given: using random values in [{lo}, {hi}) (seed {})",
                rng.seed
            ));
            random_tensor_in(&ty, range, rng).map_err(ApiError::plain)?
        };
        inputs.push((name, tensor));
    }
    if let Some(name) = given.keys().next() {
        return Err(ApiError::plain(format!(
            "the model has no input named '{name}'"
        )));
    }
    Ok(inputs)
}

/// The target `pkg` was built for (or `name`), checked against the package.
fn package_target(pkg: &Package, name: Option<&str>) -> Result<ipu_target::Target, ApiError> {
    let t = &pkg.meta.target;
    let target = ipu_target::Target::load(name.unwrap_or(&t.name))
        .map_err(|e| ApiError::plain(e.to_string()))?;
    if target.tiles() != t.tile_count
        || target.memory.base_address != u64::from(t.memory_base)
        || target.sram_bytes() != u64::from(t.memory_bytes)
    {
        return Err(ApiError::plain(format!(
            "target {} ({} tiles) does not match the package's {} ({} tiles)",
            target.name,
            target.tiles(),
            t.name,
            t.tile_count
        )));
    }
    Ok(target)
}

/// Runs `pkg` on the simulated device with `given` inputs (by name; the
/// others as `ipu-run` makes them) and checks its outputs against
/// `model`, the reference, as `ipu-run` does.
pub fn run(
    pkg: &Package,
    model: &Model,
    given: BTreeMap<String, Tensor>,
    opts: &RunOptions,
) -> Result<RunResult, ApiError> {
    let target = package_target(pkg, opts.target.as_deref())?;
    let (l, cx) = (&model.reference, &model.reference.cx);
    let f = entry_function(cx, l.module, opts.entry.as_deref()).map_err(ApiError::plain)?;
    let mut notes = Vec::new();
    let mut rng = SplitMix::new(opts.seed);
    let inputs = gather_inputs(model, f, given, &mut rng, &mut notes)?;
    let tensors: Vec<Tensor> = inputs.iter().map(|(_, t)| t.clone()).collect();
    let reference = ipu_dialects::interpret::interpret(cx, f, &tensors)
        .map_err(|d| ApiError::from_diagnostic(&l.sources, cx, &d))?;
    let out_names: Vec<String> = (0..reference.len())
        .map(|i| value_name(cx, f, "res_attrs", i, "result"))
        .collect();
    let host_inputs = streams::input_bytes(pkg, &inputs, &mut notes).map_err(ApiError::plain)?;
    let out_streams = streams::output_streams(pkg, &out_names, &reference, &mut notes)
        .map_err(ApiError::plain)?;
    if opts.check_ops && pkg.meta.probes.is_empty() {
        return Err(ApiError::plain(format!(
            "check_ops needs the package's probes (its .ipu.debug section), but {} has none",
            opts.package_name
        )));
    }
    let entry = streams::entry_point(pkg).map_err(ApiError::plain)?;
    let fp8_casts = check_ops::anchored_casts(cx, f);
    let lock = opts
        .device_lock
        .clone()
        .unwrap_or_else(device::default_lock_path);
    let run = {
        let _lock = DeviceLock::acquire(&lock).map_err(ApiError::plain)?;
        device::run_on_chip_probed(
            pkg,
            &target,
            &host_inputs,
            &entry,
            opts.max_cycles,
            opts.check_ops || fp8_casts > 0,
        )
        .map_err(ApiError::plain)?
    };
    let judged = Judged {
        pkg,
        model,
        f,
        tensors: &tensors,
        reference: &reference,
        out_names: &out_names,
        out_streams: &out_streams,
        fp8_casts,
        opts,
    };
    judged.verdict(run, target, notes)
}

/// What a device run is judged with.
struct Judged<'a> {
    pkg: &'a Package,
    model: &'a Model,
    f: ipu_ir::Op,
    tensors: &'a [Tensor],
    reference: &'a [Tensor],
    out_names: &'a [String],
    out_streams: &'a [&'a HostStream],
    fp8_casts: usize,
    opts: &'a RunOptions,
}

impl Judged<'_> {
    /// The per-op rows (with `check_ops`, or to anchor FP8 casts) and the
    /// FP8-anchored reference, as `ipu-run` makes them.
    #[allow(clippy::type_complexity)]
    fn op_checks(
        &self,
        run: &DeviceRun,
        notes: &mut Vec<String>,
    ) -> Result<(Option<Vec<OpCheck>>, Option<Vec<Tensor>>), ApiError> {
        let cx = &self.model.reference.cx;
        if !run.hardware_pass() || !(self.opts.check_ops || self.fp8_casts > 0) {
            return Ok((None, None));
        }
        let probed = Probed::new(self.pkg, &run.probes);
        let (rows, _) =
            check_ops::check_ops(cx, self.f, self.tensors, &probed).map_err(ApiError::plain)?;
        if self.fp8_casts == 0 {
            return Ok((Some(rows), None));
        }
        let exact: std::collections::HashSet<String> = rows
            .iter()
            .filter(|r| {
                r.observed
                    .as_ref()
                    .is_some_and(|o| o.pass() && o.fp8.is_some())
            })
            .map(|r| r.location.clone())
            .collect();
        let (outs, n) = check_ops::anchored_reference(cx, self.f, self.tensors, &probed, &exact)
            .map_err(ApiError::plain)?;
        if n < self.fp8_casts {
            notes.push(format!(
                "note: {} of {} casts to FP8 of computed values are not anchored to the device's values (not stored, or not exact on the device's input): the plain reference is used there",
                self.fp8_casts - n,
                self.fp8_casts
            ));
        }
        Ok((Some(rows), Some(outs)))
    }

    /// Compares the device's outputs and makes the verdict lines.
    fn verdict(
        &self,
        run: DeviceRun,
        target: ipu_target::Target,
        mut notes: Vec<String>,
    ) -> Result<RunResult, ApiError> {
        let cx = &self.model.reference.cx;
        let (op_rows, anchored) = self.op_checks(&run, &mut notes)?;
        let precision = device::computed_precision(cx, self.f);
        let tiles = self.pkg.meta.target.tile_count;
        let cycles = run.report.cycles;
        let floor = crate::floor::floor(cx, self.f, &target)
            .ok()
            .map(|f| f.cycles);
        let (figures, _) = crate::steady::run_figures(
            self.pkg,
            &target,
            &run.report,
            floor,
            self.opts.memory.as_ref(),
            self.opts.runs,
        )
        .map_err(ApiError::plain)?;
        let mut lines = vec![format!("tiles={tiles} cycles={cycles}{figures}")];
        let hardware = run.hardware_pass();
        let (mut numerical, mut max_err, mut outputs) = (hardware, 0f64, Vec::new());
        if !hardware {
            notes.extend(
                device::describe_faults(&run.faults)
                    .into_iter()
                    .map(|l| format!("ipu-run: device fault: {l}")),
            );
            notes.push("ipu-run: no device results to compare: the run did not complete".into());
        }
        for (i, (name, reference)) in self.out_names.iter().zip(self.reference).enumerate() {
            let s = self.out_streams[i];
            let Some(bytes) = run.outputs.get(&s.name).filter(|_| hardware) else {
                continue;
            };
            let dev = device::bytes_to_tensor(
                bytes,
                reference.shape(),
                s.host_type(),
                reference.fp8_scale(),
            )
            .map_err(|e| ApiError::plain(format!("output '{name}': {e}")))?;
            let compared =
                device::compared_type(s.host_type(), precision.get(i).copied().flatten());
            let gate = anchored.as_ref().map_or(reference, |o| &o[i]);
            let c = device::compare(&dev, gate, compared);
            max_err = max_err.max(device::compare(&dev, reference, compared).max_abs_error);
            if !c.pass() {
                numerical = false;
                notes.push(format!(
                    "ipu-run: output '{name}': {} of {} elements beyond the tolerance {:e} (largest |reference| {}, largest error {})",
                    c.failure_count, dev.numel(), c.tolerance, c.max_abs_reference, c.max_abs_error
                ));
            }
            outputs.push((name.clone(), dev));
        }
        lines.push(if hardware {
            format!(
                "referenceMaximumAbsoluteError={max_err:.6} numericalTest={}",
                if numerical { "PASS" } else { "FAIL" }
            )
        } else {
            "referenceMaximumAbsoluteError=n/a numericalTest=FAIL".into()
        });
        lines.push(format!(
            "package={} tiles={tiles} hardwareTest={}",
            self.opts.package_name,
            if hardware { "PASS" } else { "FAIL" }
        ));
        let mut ops_pass = true;
        if self.opts.check_ops {
            match &op_rows {
                Some(rows) => {
                    lines.extend(check_ops::render(rows).lines().map(str::to_string));
                    ops_pass = check_ops::first_failure(rows).is_none();
                }
                None => {
                    notes.push("ipu-run: no per-op checks: the run did not complete".into());
                    ops_pass = false;
                }
            }
        }
        Ok(RunResult {
            outputs,
            lines,
            notes,
            hardware,
            numerical,
            ops_pass,
            max_abs_error: max_err,
            cycles,
            op_rows: op_rows.filter(|_| self.opts.check_ops),
            device: run,
            target,
            floor,
        })
    }
}

/// The Chrome trace (Perfetto) of a run, as `ipu-run --profile` writes it.
pub fn profile(pkg: &Package, r: &RunResult, name: &str, memory: Option<&MemoryReport>) -> String {
    device::chrome_trace(pkg, &r.device.report, name, memory)
}

/// Writes `dir/report.html` (and, with a memory report, `dir/memory.json`
/// and `dir/memory.txt`) as `ipu-run --report` does; returns the files.
pub fn write_report(
    dir: &Path,
    name: &str,
    pkg: &Package,
    r: &RunResult,
    memory: Option<&MemoryReport>,
) -> Result<Vec<PathBuf>, ApiError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| ApiError::plain(format!("cannot create '{}': {e}", dir.display())))?;
    let golden: Option<Vec<crate::report::GoldenRow>> = r.op_rows.as_ref().map(|rows| {
        rows.iter()
            .filter_map(|row| {
                row.observed.as_ref().map(|o| crate::report::GoldenRow {
                    op: row.op.clone(),
                    loc: row.location.clone(),
                    max_abs_error: o.max_abs_error,
                    tolerance: o.tolerance,
                    pass: o.pass(),
                })
            })
            .collect()
    });
    let page = crate::report::html(&crate::report::ReportInput {
        name,
        package: None,
        pkg,
        run: &r.device.report,
        target: &r.target,
        memory,
        verdict: Some(crate::report::Verdict {
            hardware: r.hardware,
            numerical: r.numerical,
            max_abs_error: r.hardware.then_some(r.max_abs_error),
        }),
        bounds: None,
        golden: golden.as_deref(),
        floor: r.floor,
    });
    let html = dir.join("report.html");
    ipu_files::write_atomic(&html, page)
        .map_err(|e| ApiError::plain(format!("cannot write '{}': {e}", html.display())))?;
    let mut files = vec![html];
    if let Some(mem) = memory {
        let json = dir.join("memory.json");
        let text = crate::memory_report::write(mem, &json).map_err(ApiError::plain)?;
        files.extend([json, text]);
    }
    Ok(files)
}

/// The memory report as JSON (`ipu-opt --memory-report`'s file).
pub fn memory_json(r: &MemoryReport) -> String {
    crate::memory_report::to_json(r)
}

/// An ONNX model (its bytes) as `nn` IR text, as `ipu-translate
/// --import-onnx` prints it with constants inline; with the importer's warnings.
pub fn import_onnx(
    registry: &Arc<Registry>,
    bytes: &[u8],
    name: &str,
    opts: &ipu_onnx::import::ImportOptions,
) -> Result<(String, Vec<String>), ApiError> {
    let err = |e: ipu_onnx::OnnxError| ApiError::plain(format!("{name}: {e}"));
    let model = ipu_onnx::model::decode_model(bytes).map_err(err)?;
    let graph = ipu_onnx::import::import_model(&model, opts).map_err(err)?;
    let mut cx = Context::new(registry.clone());
    let module = ipu_onnx::emit::emit_graph(&mut cx, &graph, name)
        .map_err(|e| ApiError::plain(format!("{name}: {e}")))?;
    ipu_ir::verify::verify(&cx, module)
        .map_err(|d| ApiError::plain(format!("{name}: imported IR does not verify: {d}")))?;
    Ok((print_module(&cx, module), graph.warnings.clone()))
}

/// `ipu-opt --pass-pipeline PIPELINE` on `text`: the transformed IR.
pub fn opt(
    registry: &Arc<Registry>,
    name: &str,
    text: Arc<str>,
    base: &Path,
    pipeline: &str,
    target: Option<&str>,
) -> Result<String, ApiError> {
    let mut l = load_text(registry, name, text, base, false).map_err(load_error)?;
    if let Some(t) = target {
        let a = l.cx.string_attr(t);
        l.cx.set_attr(l.module, ipu_lowering::target::TARGET_ATTR, a);
    }
    let mut pm = ipu_ir::pass::PassManager::new("builtin.module");
    pm.add_pipeline(registry, pipeline)
        .map_err(|e| ApiError::plain(format!("pipeline '{pipeline}': {e}")))?;
    pm.run(&mut l.cx, l.module, &mut std::io::sink())
        .map_err(|d| ApiError::from_diagnostic(&l.sources, &l.cx, &d))?;
    Ok(print_module(&l.cx, l.module))
}
