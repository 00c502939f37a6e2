//! The ONNX node tests on the simulated device (`onnx-conformance --device
//! TARGET`): each case of an op in [`DEVICE_OPS`] is imported as the
//! reference mode imports it, compiled with `ipu-lower-to-machine` for the
//! target, run on the chip simulator and its outputs compared with the
//! case's expected outputs at `ipu-run`'s tolerances ([`device::compare`],
//! the type its value is computed through: [`device::computed_precision`]).
//!
//! A case passes, fails (wrong numbers, a device fault, a run that does not
//! finish) or is unsupported: the importer or the IR refuses it, or the
//! compiler does (a lowering diagnostic, whose first line is the reason).

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use clap::Parser;
use rayon::prelude::*;

use ipu_ir::diag::Severity;
use ipu_ir::{Context, Registry};
use ipu_onnx::conformance::{
    case_ops, emit_verified, import_case, run_case_with, ImportedSet, Outcome, REQUIRED,
};
use ipu_onnx::model::element_type;
use ipu_package::{Direction, Package};
use ipu_reference::ElementType;
use ipu_target::Target;

use crate::device;
use crate::load::value_name;

/// The ops whose node tests the device mode runs: the first item
/// (matmul; row ops: softmax, log-softmax, layer norm, reductions;
/// elementwise arithmetic, comparisons, select and the unary functions;
/// layout ops; gather; the shape and index arithmetic exporters emit;
/// casts; conv, transposed conv, pooling and resize). A case belongs to the op of its single node, or for an
/// `_expanded` case to the op of the case it expands
/// ([`ipu_onnx::conformance::case_ops`]).
pub const DEVICE_OPS: &[&str] = &[
    // matmul
    "MatMul",
    "Gemm",
    // row ops
    "Softmax",
    "LogSoftmax",
    "LayerNormalization",
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    // elementwise, with numpy broadcasting
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Neg",
    "Max",
    "Min",
    "Relu",
    "Erf",
    "Tanh",
    "Exp",
    "Log",
    "Sqrt",
    "Reciprocal",
    "Gelu",
    "Equal",
    "Less",
    "LessOrEqual",
    "Greater",
    "GreaterOrEqual",
    "Where",
    // layout
    "Transpose",
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Expand",
    "Slice",
    "Concat",
    // gather, shape and index arithmetic
    "Gather",
    "Shape",
    "ConstantOfShape",
    "Range",
    // casts
    "Cast",
    "CastLike",
    // convolutional networks: implicit GEMM and pooling over window views
    "Conv",
    "ConvTranspose",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
    // resize: weighted sums of gathers by constant indices
    "Resize",
    // quantized graphs: integers as exact f32 (lowering/nn-to-tile/src/quant.rs)
    "Round",
    "QuantizeLinear",
    "DequantizeLinear",
    "DynamicQuantizeLinear",
    "MatMulInteger",
    "QLinearMatMul",
    "ConvInteger",
    "QLinearConv",
];

/// The element types of the first item: the device's floats (the
/// casts between them), and the integers and booleans of indices,
/// comparisons and shape arithmetic. A case of a device op whose graph
/// inputs or outputs have another type (f64, 4-bit, u8, strings, ...) is
/// outside the device mode and not run.
pub const DEVICE_TYPES: &[ElementType] = &[
    ElementType::F32,
    ElementType::F16,
    ElementType::BF16,
    ElementType::F8E4M3FN,
    ElementType::F8E5M2,
    ElementType::I64,
    ElementType::I32,
    ElementType::I1,
];

/// The element types a graph input or output may have besides
/// [`DEVICE_TYPES`]: 8- and 16-bit integers, which the tiles hold as the
/// exact f32 of the same value; the host widens an input as it streams it
/// in and narrows an output as it streams it out
/// (`HostStream::host_element`).
pub const HOST_CONVERTED_TYPES: &[ElementType] = &[
    ElementType::U8,
    ElementType::I8,
    ElementType::U16,
    ElementType::I16,
];

/// Whether the case in `dir` is one the device mode runs: every graph
/// input and output has a type of [`DEVICE_TYPES`] or of
/// [`HOST_CONVERTED_TYPES`]. (A model that does not read is run, to report
/// why.)
pub fn in_device_types(dir: &Path) -> bool {
    let Ok(m) = ipu_onnx::read_model(dir.join("model.onnx")) else {
        return true;
    };
    m.graph.inputs.iter().chain(&m.graph.outputs).all(|d| {
        element_type(d.data_type)
            .is_some_and(|t| DEVICE_TYPES.contains(&t) || HOST_CONVERTED_TYPES.contains(&t))
    })
}

/// What the device mode compiles and runs for.
pub struct DeviceSetup {
    /// The target's name or file, as `--target` takes it.
    pub target_name: String,
    pub target: Target,
    /// The cycle budget of one run; a run that exceeds it fails.
    pub max_cycles: u64,
}

fn registry() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(crate::full_registry).clone()
}

/// Runs one case directory on the device.
pub fn run_case_on_device(dir: &Path, setup: &DeviceSetup) -> Outcome {
    let sets = match import_case(dir, true) {
        Ok(s) => s,
        Err(Outcome::Unsupported(m)) => return Outcome::Unsupported(format!("import: {m}")),
        Err(o) => return o,
    };
    for set in &sets {
        match run_set(set, setup) {
            Outcome::Pass => {}
            Outcome::Fail(m) if sets.len() > 1 => {
                return Outcome::Fail(format!("{}: {m}", set.name))
            }
            other => return other,
        }
    }
    Outcome::Pass
}

/// The first line of the first error among `diags`.
fn first_error_line(diags: &[ipu_ir::diag::Diagnostic]) -> Option<String> {
    diags
        .iter()
        .find(|d| d.severity == Severity::Error)
        .map(|d| d.message.lines().next().unwrap_or("").to_string())
}

/// Compiles the set's graph for the target; `Err` is the outcome.
fn compile(cx: &mut Context, module: ipu_ir::Op, setup: &DeviceSetup) -> Result<Package, Outcome> {
    let a = cx.string_attr(&setup.target_name);
    cx.set_attr(module, ipu_lowering::target::TARGET_ATTR, a);
    let mut pm = ipu_ir::pass::PassManager::new("builtin.module");
    pm.add_by_name(&registry(), "ipu-lower-to-machine", "")
        .map_err(|e| Outcome::Fail(format!("the pipeline: {e}")))?;
    let r = pm.run(cx, module, &mut std::io::sink());
    let mut diags = std::mem::take(&mut cx.diagnostics);
    if let Err(d) = r {
        diags.push(d);
    }
    if let Some(line) = first_error_line(&diags) {
        return Err(Outcome::Unsupported(line));
    }
    ipu_dialects::machine::read_package(cx, module).map_err(|d| {
        Outcome::Fail(format!(
            "the compiled module holds no package: {}",
            d.message
        ))
    })
}

fn run_set(set: &ImportedSet, setup: &DeviceSetup) -> Outcome {
    match try_run_set(set, setup) {
        Ok(()) => Outcome::Pass,
        Err(o) => o,
    }
}

fn try_run_set(set: &ImportedSet, setup: &DeviceSetup) -> Result<(), Outcome> {
    let fail = |m: String| Outcome::Fail(m);
    let mut cx = Context::new(registry());
    let module = emit_verified(&mut cx, &set.graph).map_err(|o| match o {
        Outcome::Unsupported(m) => Outcome::Unsupported(format!("import: {m}")),
        o => o,
    })?;
    let f = cx.nested_ops(module)[0];
    // Read off the nn function before the lowering rewrites it.
    let reference = ipu_dialects::interpret::interpret(&cx, f, &set.inputs)
        .map_err(|d| fail(format!("reference interpreter: {}", d.message)))?;
    let precision = device::computed_precision(&cx, f);
    let in_names: Vec<String> = (0..set.inputs.len())
        .map(|i| value_name(&cx, f, "arg_attrs", i, "arg"))
        .collect();
    let out_names: Vec<String> = (0..set.expected.len())
        .map(|i| value_name(&cx, f, "res_attrs", i, "result"))
        .collect();
    if reference.len() != set.expected.len() {
        return Err(fail(format!(
            "{} outputs, expected {}",
            reference.len(),
            set.expected.len()
        )));
    }
    let pkg = compile(&mut cx, module, setup)?;

    // Inputs folded into the program (a shape, axes) may have no stream.
    let mut host = BTreeMap::new();
    for s in pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction == Direction::Input)
    {
        let k = in_names
            .iter()
            .position(|n| *n == s.name)
            .ok_or_else(|| fail(format!("input stream `{}` is no input of the case", s.name)))?;
        let bytes = device::tensor_to_bytes(&set.inputs[k], s.host_type())
            .map_err(|e| fail(format!("input '{}': {e}", s.name)))?;
        host.insert(s.name.clone(), bytes);
    }
    let run = device::run_on_chip(&pkg, &setup.target, &host, "main", setup.max_cycles)
        .map_err(|e| fail(format!("loading the device: {e}")))?;
    if !run.hardware_pass() {
        return Err(fail(match device::describe_faults(&run.faults).first() {
            Some(line) => format!("device fault: {line}"),
            None => format!(
                "the device did not finish within {} cycles",
                setup.max_cycles
            ),
        }));
    }
    for (i, name) in out_names.iter().enumerate() {
        let want = &set.expected[i];
        let s = pkg
            .meta
            .streams
            .iter()
            .find(|s| s.direction == Direction::Output && s.name == *name)
            .ok_or_else(|| fail(format!("no output stream for '{name}'")))?;
        if device::reference_type(s.host_type()) != want.dtype() {
            return Err(fail(format!(
                "output '{name}': the stream is {}, expected {}",
                s.host_type(),
                want.dtype()
            )));
        }
        let bytes = run
            .outputs
            .get(&s.name)
            .ok_or_else(|| fail(format!("the device gave no bytes for '{name}'")))?;
        let got =
            device::bytes_to_tensor(bytes, want.shape(), s.host_type(), reference[i].fp8_scale())
                .map_err(|e| fail(format!("output '{name}': {e}")))?;
        let compared = device::compared_type(s.host_type(), precision.get(i).copied().flatten());
        let c = device::compare(&got, want, compared);
        if !c.pass() {
            let first = c
                .failures
                .first()
                .map(|(k, d, e)| {
                    format!(
                        "; at {}: device {d}, expected {e}",
                        device::multi_index(want.shape(), *k)
                    )
                })
                .unwrap_or_default();
            let against_reference = if device::compare(&got, &reference[i], compared).pass() {
                "; the reference interpreter gives the device's values"
            } else {
                ""
            };
            return Err(fail(format!(
                "output '{name}': {} of {} elements beyond the {compared} tolerance {:e}{first}{against_reference}",
                c.failure_count,
                want.numel(),
                c.tolerance
            )));
        }
    }
    Ok(())
}

/// Reads a baseline file: its case names (one a line, `#` comments).
pub fn read_baseline(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[derive(Parser)]
#[command(
    name = "onnx-conformance",
    about = "ONNX backend node-test conformance: the importer + reference interpreter, or (--device) the compiled program on the simulated device"
)]
struct Args {
    /// Directory holding the node test cases (onnx/backend/test/data/node).
    #[arg(long)]
    data: PathBuf,
    /// File listing cases that passed before (one per line); any of them
    /// not passing now makes the run fail.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Write the list of passing cases to this file.
    #[arg(long)]
    write_baseline: Option<PathBuf>,
    /// Write the report (per-op pass/fail/unsupported table, failures,
    /// reasons, totals) to this file.
    #[arg(long)]
    write_table: Option<PathBuf>,
    /// Only run cases whose name contains this.
    #[arg(long)]
    filter: Option<String>,
    /// Print every failing and unsupported case with its reason.
    #[arg(long)]
    details: bool,
    /// Do not give graph-input values to the importer for operands that
    /// must be static (shapes, axes, ...): such cases become unsupported.
    /// Reference mode only.
    #[arg(long, conflicts_with = "device")]
    no_specialize: bool,
    /// Compile the cases of the device ops (DEVICE_OPS) for this target
    /// (name or file), run them on the simulated device and compare the
    /// outputs with the expected ones at ipu-run's tolerances.
    #[arg(long, value_name = "TARGET")]
    device: Option<String>,
    /// Cycle budget of each device run (exceeding it fails the case; the
    /// node tests run in a few hundred cycles).
    #[arg(long, default_value_t = 1_000_000)]
    max_cycles: u64,
    /// Lock file guarding the device, held for the whole device run
    /// (default: $TMPDIR/ipu-run-device.lock, the one ipu-run takes).
    #[arg(long, value_name = "PATH")]
    device_lock: Option<PathBuf>,
}

#[derive(Default)]
struct Count {
    pass: usize,
    fail: usize,
    unsup: usize,
}

impl Count {
    fn add(&mut self, r: &Outcome) {
        match r {
            Outcome::Pass => self.pass += 1,
            Outcome::Fail(_) => self.fail += 1,
            Outcome::Unsupported(_) => self.unsup += 1,
        }
    }

    fn total(&self) -> usize {
        self.pass + self.fail + self.unsup
    }
}

/// The message of a panic payload.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// `onnx-conformance`: runs the node tests, prints the per-op table and
/// checks a baseline. Exit code 0, 1 on a regression, 2 on bad usage.
pub fn main(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args = match Args::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match run(&args) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("error: {msg}");
            2
        }
    }
}

fn run(args: &Args) -> Result<i32, String> {
    let sel = select_cases(args)?;
    let start = std::time::Instant::now();
    let results = run_cases(args, &sel)?;
    let elapsed = start.elapsed();
    let counts = Counts::of(&sel, &results);
    let mut report = String::new();
    report_table(&mut report, &sel, &counts);
    report_cases(&mut report, args, &sel, &results);
    report_totals(&mut report, &sel, &counts, &results, elapsed);
    print!("{report}");
    if let Some(p) = &args.write_table {
        crate::cli::write_output(p, &report)?;
    }
    if let Some(p) = &args.write_baseline {
        let mut s = match &sel.setup {
            Some(d) => format!(
                "# ONNX node tests of the device ops passing on the simulated device ({})\n",
                d.target_name
            ),
            None => String::from("# ONNX node tests passing with ipu-onnx + ipu-reference\n"),
        };
        for (name, r) in &results {
            if *r == Outcome::Pass {
                s.push_str(name);
                s.push('\n');
            }
        }
        crate::cli::write_output(p, s)?;
    }
    match &args.baseline {
        Some(p) => check_baseline(args, p, &results),
        None => Ok(0),
    }
}

/// The cases to run, their ops, and (device mode) the setup and the cases
/// left out for their element types, per op.
struct Selection {
    cases: Vec<(String, PathBuf)>,
    ops: HashMap<String, String>,
    other_types: BTreeMap<String, Vec<String>>,
    setup: Option<DeviceSetup>,
}

impl Selection {
    fn op_of(&self, name: &str) -> String {
        self.ops.get(name).cloned().unwrap_or_default()
    }
}

/// The case directories under `--data` that `--filter` and the mode select.
fn select_cases(args: &Args) -> Result<Selection, String> {
    let mut cases: Vec<(String, PathBuf)> = std::fs::read_dir(&args.data)
        .map_err(|e| format!("cannot read {}: {e}", args.data.display()))?
        .flatten()
        .filter(|e| e.path().join("model.onnx").exists())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(n, _)| args.filter.as_ref().is_none_or(|f| n.contains(f.as_str())))
        .collect();
    cases.sort();
    let ops = case_ops(&cases);
    let op_of = |name: &str| ops.get(name).cloned().unwrap_or_default();
    // Device mode: per op, the cases left out for their element types.
    let mut other_types: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let setup = match &args.device {
        Some(t) => {
            cases.retain(|(n, _)| DEVICE_OPS.contains(&op_of(n).as_str()));
            let (kept, other): (Vec<_>, Vec<_>) =
                cases.into_iter().partition(|(_, d)| in_device_types(d));
            cases = kept;
            for (n, _) in &other {
                other_types.entry(op_of(n)).or_default().push(n.clone());
            }
            let target = Target::load(t).map_err(|e| e.to_string())?;
            Some(DeviceSetup {
                target_name: t.clone(),
                target,
                max_cycles: args.max_cycles,
            })
        }
        None => None,
    };
    if cases.is_empty() {
        return Err(format!("no test cases under {}", args.data.display()));
    }
    Ok(Selection {
        cases,
        ops,
        other_types,
        setup,
    })
}

/// Runs every selected case (in parallel; holding the device lock in
/// device mode), a panic caught as a failure.
fn run_cases(args: &Args, sel: &Selection) -> Result<Vec<(String, Outcome)>, String> {
    let run_one = |dir: &Path| match &sel.setup {
        Some(s) => run_case_on_device(dir, s),
        None => run_case_with(dir, !args.no_specialize),
    };
    let _lock = match &sel.setup {
        Some(_) => Some(device::DeviceLock::acquire(
            &args
                .device_lock
                .clone()
                .unwrap_or_else(device::default_lock_path),
        )?),
        None => None,
    };
    Ok(sel
        .cases
        .par_iter()
        .map(|(name, dir)| {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_one(dir)))
                .unwrap_or_else(|p| Outcome::Fail(format!("PANIC (bug): {}", panic_message(&*p))));
            (name.clone(), r)
        })
        .collect())
}

/// The outcomes counted per op, for the required ops and in all.
struct Counts {
    by_op: BTreeMap<String, Count>,
    req: Count,
    total: Count,
}

impl Counts {
    fn of(sel: &Selection, results: &[(String, Outcome)]) -> Counts {
        let mut by_op: BTreeMap<String, Count> = BTreeMap::new();
        let (mut req, mut total) = (Count::default(), Count::default());
        for (name, r) in results {
            let op = sel.op_of(name);
            by_op.entry(op.clone()).or_default().add(r);
            total.add(r);
            if REQUIRED.contains(&op.as_str()) {
                req.add(r);
            }
        }
        Counts { by_op, req, total }
    }
}

// The report: the per-op table, failures, reasons and totals (the same
// bytes on every run; timing goes to stderr), printed and optionally
// written (`--write-table`).

/// The per-op table (device mode: with the cases not run for their types).
fn report_table(report: &mut String, sel: &Selection, counts: &Counts) {
    use std::fmt::Write;
    if sel.setup.is_some() {
        // The last column: cases not run, for their element types.
        let _ = writeln!(
            report,
            "{:<28} {:>6} {:>6} {:>6} {:>6}",
            "op", "pass", "fail", "unsup", "types"
        );
        let ops: std::collections::BTreeSet<&String> =
            counts.by_op.keys().chain(sel.other_types.keys()).collect();
        for op in ops {
            let (p, f, u) = counts
                .by_op
                .get(op)
                .map_or((0, 0, 0), |c| (c.pass, c.fail, c.unsup));
            let o = sel.other_types.get(op).map_or(0, Vec::len);
            let _ = writeln!(report, " {op:<27} {p:>6} {f:>6} {u:>6} {o:>6}");
        }
    } else {
        let _ = writeln!(
            report,
            "{:<28} {:>6} {:>6} {:>6}",
            "op", "pass", "fail", "unsup"
        );
        for (op, c) in &counts.by_op {
            let mark = if REQUIRED.contains(&op.as_str()) {
                "*"
            } else {
                " "
            };
            let _ = writeln!(
                report,
                "{mark}{:<27} {:>6} {:>6} {:>6}",
                op, c.pass, c.fail, c.unsup
            );
        }
    }
    report.push('\n');
}

/// The failing (and with `--details`, unsupported and left-out) cases.
fn report_cases(report: &mut String, args: &Args, sel: &Selection, results: &[(String, Outcome)]) {
    use std::fmt::Write;
    for (name, r) in results {
        let op = sel.op_of(name);
        match r {
            Outcome::Fail(m)
                if args.details || sel.setup.is_some() || REQUIRED.contains(&op.as_str()) =>
            {
                let _ = writeln!(report, "FAIL  {name} [{op}]: {m}");
            }
            Outcome::Unsupported(m) if args.details => {
                let _ = writeln!(report, "UNSUP {name} [{op}]: {m}");
            }
            _ => {}
        }
    }
    if args.details {
        for (op, names) in &sel.other_types {
            for name in names {
                let _ = writeln!(
                    report,
                    "TYPES {name} [{op}]: element types outside the device mode"
                );
            }
        }
    }
}

/// The totals (device mode: with the reasons for unsupported cases, most
/// frequent first; the timing goes to stderr).
fn report_totals(
    report: &mut String,
    sel: &Selection,
    counts: &Counts,
    results: &[(String, Outcome)],
    elapsed: std::time::Duration,
) {
    use std::fmt::Write;
    let total = &counts.total;
    let Some(s) = &sel.setup else {
        let req = &counts.req;
        report.push('\n');
        let _ = writeln!(
            report,
            "required ops (*): {} passed, {} failed, {} unsupported",
            req.pass, req.fail, req.unsup
        );
        let _ = writeln!(
            report,
            "all cases: {} passed, {} failed, {} unsupported (of {})",
            total.pass,
            total.fail,
            total.unsup,
            results.len()
        );
        return;
    };
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, r) in results {
        if let Outcome::Unsupported(m) = r {
            *reasons.entry(m.as_str()).or_default() += 1;
        }
    }
    let mut reasons: Vec<(&str, usize)> = reasons.into_iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if !reasons.is_empty() {
        report.push('\n');
        let _ = writeln!(report, "unsupported, by reason:");
        for (m, n) in &reasons {
            let _ = writeln!(report, "{n:>6}  {m}");
        }
    }
    report.push('\n');
    let _ = writeln!(
        report,
        "device {}: {} passed, {} failed, {} unsupported (of {} cases of the device ops; {:.1}% pass); {} cases of other element types not run",
        s.target_name,
        total.pass,
        total.fail,
        total.unsup,
        total.total(),
        100.0 * total.pass as f64 / total.total().max(1) as f64,
        sel.other_types.values().map(Vec::len).sum::<usize>()
    );
    // Timing on stderr, so the report itself is the same on every run.
    eprintln!(
        "device run: {} cases in {:.1} s",
        total.total(),
        elapsed.as_secs_f64()
    );
}

/// `--baseline`: every case it lists must pass (1 otherwise); new passes
/// are noted.
fn check_baseline(args: &Args, p: &Path, results: &[(String, Outcome)]) -> Result<i32, String> {
    let text = std::fs::read_to_string(p)
        .map_err(|e| format!("cannot read baseline {}: {e}", p.display()))?;
    let now: HashMap<&str, &Outcome> = results.iter().map(|(n, r)| (n.as_str(), r)).collect();
    let mut regressions = 0;
    let listed = read_baseline(&text);
    for &line in &listed {
        if args
            .filter
            .as_ref()
            .is_some_and(|f| !line.contains(f.as_str()))
        {
            continue;
        }
        match now.get(line) {
            Some(Outcome::Pass) => {}
            Some(r) => {
                regressions += 1;
                println!("REGRESSION {line}: {r:?}");
            }
            None => {
                regressions += 1;
                println!("REGRESSION {line}: case missing");
            }
        }
    }
    let new: Vec<&str> = results
        .iter()
        .filter(|(n, r)| *r == Outcome::Pass && !listed.contains(&n.as_str()))
        .map(|(n, _)| n.as_str())
        .collect();
    if !new.is_empty() {
        println!(
            "note: {} case(s) pass that the baseline does not list (regenerate it with --write-baseline): {}",
            new.len(),
            new.join(", ")
        );
    }
    if regressions > 0 {
        println!("{regressions} baseline case(s) no longer pass");
        return Ok(1);
    }
    println!("baseline: no regressions");
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_ir::diag::Diagnostic;
    use ipu_ir::types::Loc;

    #[test]
    fn the_reason_is_the_first_line_of_the_first_error() {
        let diags = [
            Diagnostic::new(Severity::Warning, Loc::UNKNOWN, "a warning"),
            Diagnostic::new(
                Severity::Error,
                Loc::UNKNOWN,
                "'nn.foo' op is not lowered\ndetails",
            ),
            Diagnostic::new(Severity::Error, Loc::UNKNOWN, "a later error"),
        ];
        assert_eq!(
            first_error_line(&diags).as_deref(),
            Some("'nn.foo' op is not lowered")
        );
        assert_eq!(first_error_line(&diags[..1]), None);
    }

    #[test]
    fn baselines_skip_comments_and_blank_lines() {
        assert_eq!(
            read_baseline("# header\n\ntest_a\n  test_b  \n#x\n"),
            ["test_a", "test_b"]
        );
    }

    #[test]
    fn the_device_ops_are_ops_the_importer_maps() {
        for op in DEVICE_OPS {
            assert!(
                ipu_onnx::import::operator_attributes(op, 21).is_some(),
                "{op} is no ONNX operator"
            );
        }
    }
}
