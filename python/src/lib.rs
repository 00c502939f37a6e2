//! `ipu_stack._native`: the compiler and the simulated device for Python,
//! a thin layer over `ipu_driver::api` (the Python package `ipu_stack`
//! wraps it in its public functions and exception classes).
//!
//! This crate is the only place that knows Python. Every failure is a
//! `NativeError(kind, message, location, rendered)`, never a crash; the GIL
//! is released while compiling and running (`Python::detach`), and
//! progress is reported to an optional Python callable. Tensors cross as
//! NumPy arrays: `float32` both ways as plain values (one copy each way,
//! into the tensor the reference and the device read, and out of the run's
//! result), every other element type as `.npy` bytes, the one format
//! `ipu-run` reads and writes, so an output is the very file `ipu-run
//! --output-dir` writes.

use ipu_driver::api::{self, ApiError, CompileOptions, Model, RunOptions, RunResult};
use ipu_package::Package;
use ipu_reference::{ElementType, Tensor, TensorData};
use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{IntoPyArray, PyReadonlyArrayDyn};
use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

create_exception!(
    _native,
    NativeError,
    pyo3::exceptions::PyException,
    "A failure of the compiler or the device: args are (kind, message, location, rendered)."
);

/// What went wrong, for the Python exception class: `model` (the model
/// does not read, verify or import), `compile`, `input` (an input's name,
/// shape or type), `device` (the run), `io`.
fn error(kind: &str, e: ApiError) -> PyErr {
    NativeError::new_err((kind.to_string(), e.message, e.location, e.rendered))
}

fn registry() -> Arc<ipu_ir::Registry> {
    ipu_driver::full_registry()
}

/// The folder a model's weights side file is read from.
fn base_dir(base: Option<PathBuf>) -> PathBuf {
    base.unwrap_or_else(|| PathBuf::from("."))
}

/// Calls `progress(stage, done, total)` from a thread without the GIL;
/// an exception in it is printed (as Python prints one it cannot raise)
/// and the work goes on.
fn report_progress(progress: &Option<Py<PyAny>>, stage: &str, done: usize, total: usize) {
    if let Some(p) = progress {
        Python::attach(|py| {
            if let Err(e) = p.call1(py, (stage, done, total)) {
                e.print(py);
            }
        });
    }
}

/// A compiled model: the package, the model it checks against, and what
/// the compile kept.
#[pyclass(frozen, module = "ipu_stack._native")]
struct Compiled {
    state: Mutex<State>,
}

struct State {
    name: String,
    package: Package,
    model: Model,
    memory: Option<api::MemoryReport>,
    ir: Vec<(String, String)>,
    notes: Vec<String>,
    seconds: f64,
}

impl Compiled {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves data that was only read.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One input from Python: a `float32` array, or `.npy` bytes.
fn input_tensor(name: &str, v: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let bad = |m: String| error("input", ApiError::plain(format!("input '{name}': {m}")));
    if let Ok(b) = v.cast::<PyBytes>() {
        return ipu_reference::npy::parse_npy(b.as_bytes()).map_err(|e| bad(e.to_string()));
    }
    let a: PyReadonlyArrayDyn<'_, f32> = v
        .extract()
        .map_err(|_| bad("expected a float32 NumPy array or .npy bytes".into()))?;
    let shape = a.as_array().shape().to_vec();
    let data = match a.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => a.as_array().iter().copied().collect(),
    };
    Tensor::from_f32(shape, ElementType::F32, data).map_err(|e| bad(e.to_string()))
}

/// An output for Python: a `float32` array, or its `.npy` bytes.
fn output_object(py: Python<'_>, t: &Tensor) -> PyResult<Py<PyAny>> {
    if let (ElementType::F32, TensorData::F32(v)) = (t.dtype(), t.data()) {
        let a = ArrayD::from_shape_vec(IxDyn(t.shape()), v.clone())
            .map_err(|e| error("device", ApiError::plain(e.to_string())))?;
        return Ok(a.into_pyarray(py).into_any().unbind());
    }
    Ok(PyBytes::new(py, &ipu_reference::npy::to_npy_bytes(t))
        .into_any()
        .unbind())
}

#[pymethods]
impl Compiled {
    /// The package's name in the verdict line (`package=NAME`).
    #[getter]
    fn name(&self) -> String {
        self.lock().name.clone()
    }

    /// Seconds the compile took (0 for a loaded package).
    #[getter]
    fn compile_seconds(&self) -> f64 {
        self.lock().seconds
    }

    /// Warnings and remarks of the compile, rendered.
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.lock().notes.clone()
    }

    #[getter]
    fn target(&self) -> String {
        self.lock().package.meta.target.name.clone()
    }

    #[getter]
    fn tiles(&self) -> u32 {
        self.lock().package.meta.target.tile_count
    }

    /// The stages whose IR was kept, in order.
    fn stages(&self) -> Vec<String> {
        let s = self.lock();
        let mut v: Vec<String> = s.ir.iter().map(|(k, _)| k.clone()).collect();
        if !v.iter().any(|k| k == "machine") {
            v.push("machine".into());
        }
        v
    }

    /// The IR of `stage` as text (`nn`, `tile`, `exchange`, `machine`).
    fn ir(&self, py: Python<'_>, stage: &str) -> PyResult<String> {
        let s = self.lock();
        if let Some((_, text)) = s.ir.iter().find(|(k, _)| k == stage) {
            return Ok(text.clone());
        }
        match stage {
            "machine" => Ok(py.detach(|| api::package_ir(&registry(), &s.package, &s.name))),
            "nn" | "source" => Ok(s.model.text.to_string()),
            _ => Err(error(
                "compile",
                ApiError::plain(format!(
                    "no IR kept for stage '{stage}' (stages: nn, tile, exchange, machine; compile with keep_ir=True)"
                )),
            )),
        }
    }

    /// The entry function's inputs: `(name, element type, shape)` each.
    #[pyo3(signature = (entry=None))]
    fn inputs(&self, entry: Option<String>) -> PyResult<Vec<(String, String, Vec<usize>)>> {
        let s = self.lock();
        let v = s
            .model
            .inputs(entry.as_deref())
            .map_err(|e| error("model", e))?;
        Ok(v.into_iter()
            .map(|(n, t)| (n, t.dtype.to_string(), t.shape))
            .collect())
    }

    /// The package as `.ipuexe` bytes.
    fn package_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let s = self.lock();
        let b = s
            .package
            .try_to_elf_bytes()
            .map_err(|e| error("io", ApiError::plain(e.to_string())))?;
        Ok(PyBytes::new(py, &b))
    }

    /// The compile's memory report as JSON (`None` for a loaded package).
    fn memory_json(&self) -> Option<String> {
        self.lock().memory.as_ref().map(api::memory_json)
    }

    /// Runs on the simulated device. `inputs` maps names to `float32`
    /// arrays or `.npy` bytes; inputs not given take their default, else
    /// random values from `seed`, as `ipu-run` does.
    #[pyo3(signature = (inputs, seed=0, check_ops=false, max_cycles=1_000_000_000, device_lock=None, entry=None, target=None, progress=None, runs=1))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyDict>,
        seed: u64,
        check_ops: bool,
        max_cycles: u64,
        device_lock: Option<PathBuf>,
        entry: Option<String>,
        target: Option<String>,
        progress: Option<Py<PyAny>>,
        runs: usize,
    ) -> PyResult<Run> {
        let mut given = BTreeMap::new();
        for (k, v) in inputs.iter() {
            let name: String = k.extract()?;
            let t = input_tensor(&name, &v)?;
            given.insert(name, t);
        }
        let s = self.lock();
        let opts = RunOptions {
            entry,
            seed,
            max_cycles,
            check_ops,
            device_lock,
            package_name: s.name.clone(),
            target,
            runs: runs.max(1),
            memory: s.memory.clone(),
        };
        let r = py.detach(|| {
            report_progress(&progress, "run", 0, 1);
            let r = api::run(&s.package, &s.model, given, &opts);
            report_progress(&progress, "run", 1, 1);
            r
        });
        Ok(Run {
            result: r.map_err(|e| error("input", e))?,
        })
    }

    /// The Chrome trace (Perfetto) of `run`, as `ipu-run --profile` writes it.
    fn profile(&self, run: &Run) -> String {
        let s = self.lock();
        api::profile(&s.package, &run.result, &s.name, s.memory.as_ref())
    }

    /// Writes `dir/report.html` (and the memory report beside it) for
    /// `run`, as `ipu-run --report DIR`; returns the files written.
    fn write_report(&self, py: Python<'_>, run: &Run, dir: PathBuf) -> PyResult<Vec<PathBuf>> {
        let s = self.lock();
        py.detach(|| api::write_report(&dir, &s.name, &s.package, &run.result, s.memory.as_ref()))
            .map_err(|e| error("io", e))
    }
}

/// One run's outputs and verdict.
#[pyclass(frozen, module = "ipu_stack._native")]
struct Run {
    result: RunResult,
}

#[pymethods]
impl Run {
    /// The lines `ipu-run` prints on stdout (verdict lines, per-op table).
    #[getter]
    fn lines(&self) -> Vec<String> {
        self.result.lines.clone()
    }

    /// What `ipu-run` prints on stderr.
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.result.notes.clone()
    }

    #[getter]
    fn passed(&self) -> bool {
        self.result.passed()
    }

    #[getter]
    fn hardware(&self) -> bool {
        self.result.hardware
    }

    #[getter]
    fn numerical(&self) -> bool {
        self.result.numerical
    }

    #[getter]
    fn cycles(&self) -> u64 {
        self.result.cycles
    }

    #[getter]
    fn max_abs_error(&self) -> f64 {
        self.result.max_abs_error
    }

    /// `[(name, float32 array or .npy bytes)]` in result order.
    fn outputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .result
            .outputs
            .iter()
            .map(|(n, t)| Ok((n.clone(), output_object(py, t)?)))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Output `name` as the `.npy` bytes `ipu-run --output-dir` writes.
    fn npy<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let (_, t) = self
            .result
            .outputs
            .iter()
            .find(|(n, _)| n == name)
            .ok_or_else(|| {
                error(
                    "input",
                    ApiError::plain(format!("no output named '{name}'")),
                )
            })?;
        Ok(PyBytes::new(py, &ipu_reference::npy::to_npy_bytes(t)))
    }

    /// The per-op checks (with `check_ops`): one dict per op.
    fn op_checks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = PyList::empty(py);
        for r in self.result.op_rows.iter().flatten() {
            let d = PyDict::new(py);
            d.set_item("index", r.index)?;
            d.set_item("op", &r.op)?;
            d.set_item("location", &r.location)?;
            d.set_item("type", &r.ty)?;
            if let Some(o) = &r.observed {
                d.set_item("max_abs_error", o.max_abs_error)?;
                d.set_item("tolerance", o.tolerance)?;
                d.set_item("passed", o.pass())?;
            } else {
                d.set_item("passed", py.None())?;
            }
            rows.append(d)?;
        }
        Ok(rows)
    }
}

/// What a compile keeps beside its package.
struct CompileKept {
    memory: Option<api::MemoryReport>,
    ir: Vec<(String, String)>,
    notes: Vec<String>,
    seconds: f64,
}

fn new_compiled(
    name: String,
    package: Package,
    model: Model,
    compiled: Option<CompileKept>,
) -> Compiled {
    let (memory, ir, notes, seconds) = match compiled {
        Some(c) => (c.memory, c.ir, c.notes, c.seconds),
        None => (None, Vec::new(), Vec::new(), 0.0),
    };
    Compiled {
        state: Mutex::new(State {
            name,
            package,
            model,
            memory,
            ir,
            notes,
            seconds,
        }),
    }
}

/// Compiles `nn` IR text (named `name`; its weights side file read from
/// `base`) for `target`: the stages of `ipu-lower-to-machine`, or `pipeline`.
#[pyfunction]
#[pyo3(signature = (text, name, base=None, target=None, pipeline=None, keep_ir=true, progress=None))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    text: String,
    name: String,
    base: Option<PathBuf>,
    target: Option<String>,
    pipeline: Option<String>,
    keep_ir: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<Compiled> {
    let base = base_dir(base);
    let opts = CompileOptions {
        target,
        pipeline,
        keep_ir,
    };
    py.detach(|| {
        let registry = registry();
        let model = Model::from_text(&registry, &name, text.into(), &base)
            .map_err(|e| error("model", e))?;
        let mut report =
            |stage: &str, done: usize, total: usize| report_progress(&progress, stage, done, total);
        let c =
            api::compile(&registry, &model, &opts, &mut report).map_err(|e| error("compile", e))?;
        let kept = CompileKept {
            memory: c.memory,
            ir: c.ir,
            notes: c.notes,
            seconds: c.seconds,
        };
        Ok(new_compiled(name, c.package, model, Some(kept)))
    })
}

/// Reads `.ipuexe` bytes (named `name`), with the model they carry.
#[pyfunction]
#[pyo3(signature = (data, name, base=None))]
fn load(py: Python<'_>, data: Vec<u8>, name: String, base: Option<PathBuf>) -> PyResult<Compiled> {
    let base = base_dir(base);
    py.detach(|| {
        let (pkg, model) =
            api::read_package(&registry(), &name, &data, &base).map_err(|e| error("model", e))?;
        Ok(new_compiled(name, pkg, model, None))
    })
}

/// An ONNX model's bytes as `nn` IR text; with the importer's warnings.
#[pyfunction]
#[pyo3(signature = (data, name, input_shapes=None, default_dim=None, weights_precision=None, outline_layers=false))]
fn import_onnx(
    py: Python<'_>,
    data: Vec<u8>,
    name: String,
    input_shapes: Option<BTreeMap<String, Vec<usize>>>,
    default_dim: Option<usize>,
    weights_precision: Option<String>,
    outline_layers: bool,
) -> PyResult<(String, Vec<String>)> {
    let weights_precision = match weights_precision {
        Some(p) => p.parse().map_err(|e: String| {
            error(
                "options",
                ApiError::plain(format!("weights_precision: {e}")),
            )
        })?,
        None => Default::default(),
    };
    let opts = ipu_onnx::import::ImportOptions {
        input_shapes: input_shapes.unwrap_or_default().into_iter().collect(),
        default_dim,
        weights_precision,
        outline_layers,
        ..Default::default()
    };
    py.detach(|| api::import_onnx(&registry(), &data, &name, &opts))
        .map_err(|e| error("model", e))
}

/// `ipu-opt --pass-pipeline PIPELINE` on IR text: the result's text.
#[pyfunction]
#[pyo3(signature = (text, pipeline, name="<python>".to_string(), base=None, target=None))]
fn opt(
    py: Python<'_>,
    text: String,
    pipeline: String,
    name: String,
    base: Option<PathBuf>,
    target: Option<String>,
) -> PyResult<String> {
    let base = base_dir(base);
    py.detach(|| {
        api::opt(
            &registry(),
            &name,
            text.into(),
            Path::new(&base),
            &pipeline,
            target.as_deref(),
        )
    })
    .map_err(|e| error("compile", e))
}

/// The registered passes and pipelines: `(argument, description)` each.
#[pyfunction]
fn passes() -> Vec<(String, String)> {
    let r = registry();
    let mut v: Vec<(String, String)> = r
        .passes()
        .iter()
        .map(|p| (p.argument.to_string(), p.description.to_string()))
        .collect();
    v.extend(
        r.pipelines()
            .iter()
            .map(|p| (p.argument.to_string(), p.description.to_string())),
    );
    v
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NativeError", m.py().get_type::<NativeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Compiled>()?;
    m.add_class::<Run>()?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(import_onnx, m)?)?;
    m.add_function(wrap_pyfunction!(opt, m)?)?;
    m.add_function(wrap_pyfunction!(passes, m)?)?;
    Ok(())
}
