//! The ONNX backend node-test runner's logic (used by the
//! `onnx-conformance` binary): run one case directory, compare outputs
//! like ONNX's backend runner (rtol 1e-3, atol 1e-7; FP8 and other
//! narrow floats bit-exact, any NaN matching any NaN), and name the op a
//! case tests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ipu_reference::{Tensor, TensorData};

use crate::model::ValueKind;
use crate::{import_model, read_model, read_tensor_pb, ImportOptions, OnnxError};

/// The ops the importer is required to support (issue 3).
pub const REQUIRED: &[&str] = &[
    "MatMul",
    "Gemm",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Sqrt",
    "Erf",
    "Tanh",
    "Exp",
    "Log",
    "Neg",
    "Relu",
    "Gelu",
    "Softmax",
    "LogSoftmax",
    "LayerNormalization",
    "ReduceMean",
    "ReduceSum",
    "ReduceMax",
    "Transpose",
    "Reshape",
    "Unsqueeze",
    "Squeeze",
    "Concat",
    "Slice",
    "Gather",
    "Cast",
    "CastLike",
    "Constant",
    "Identity",
    "Where",
    "Shape",
    "Reciprocal",
    "Sigmoid",
    "Max",
    "Min",
    "Equal",
    "Less",
];

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Pass,
    Fail(String),
    Unsupported(String),
}

pub const RTOL: f64 = 1e-3;
pub const ATOL: f64 = 1e-7;

pub fn compare(got: &Tensor, want: &Tensor) -> Result<(), String> {
    if got.shape() != want.shape() {
        return Err(format!(
            "shape {:?}, expected {:?}",
            got.shape(),
            want.shape()
        ));
    }
    if got.dtype() != want.dtype() {
        return Err(format!("type {}, expected {}", got.dtype(), want.dtype()));
    }
    if let (Some(a), Some(b)) = (got.fp8_codes(), want.fp8_codes()) {
        let fmt = got.dtype().fp8_format();
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            let both_nan = fmt.is_some_and(|f| f.is_nan(*x) && f.is_nan(*y));
            if x != y && !both_nan {
                return Err(format!("element {i}: code {x:#04x}, expected {y:#04x}"));
            }
        }
        return Ok(());
    }
    match (got.data(), want.data()) {
        (TensorData::F32(a), TensorData::F32(b)) => {
            for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
                let ok = (x.is_nan() && y.is_nan())
                    || x == y
                    || ((x as f64 - y as f64).abs() <= ATOL + RTOL * (y as f64).abs());
                if !ok {
                    return Err(format!("element {i}: {x}, expected {y}"));
                }
            }
            Ok(())
        }
        (TensorData::I64(a), TensorData::I64(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if x != y {
                    return Err(format!("element {i}: {x}, expected {y}"));
                }
            }
            Ok(())
        }
        _ => Err("storage kind differs".into()),
    }
}

fn numbered_files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<(usize, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name
                .strip_prefix(prefix)?
                .strip_suffix(".pb")?
                .parse()
                .ok()?;
            Some((n, e.path()))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

/// The outcome of an import error: unsupported (an op, a type or a
/// feature the importer lacks) or a failure.
pub fn classify(e: OnnxError) -> Outcome {
    let msg = e.to_string();
    match e {
        OnnxError::Unsupported { .. } | OnnxError::UnsupportedOps(_) => Outcome::Unsupported(msg),
        _ if msg.contains("unsupported data type")
            || msg.contains("external data")
            || msg.contains("unsupported element type") =>
        {
            Outcome::Unsupported(msg)
        }
        _ => Outcome::Fail(msg),
    }
}

/// One test data set of a case, imported: the graph (specialized to the
/// set's input values where an operand must be static), its inputs in the
/// order of the graph's non-initializer inputs, and the expected outputs.
pub struct ImportedSet {
    /// The data set's directory name (`test_data_set_0`, ...).
    pub name: String,
    pub graph: crate::MappedGraph,
    pub inputs: Vec<Tensor>,
    pub expected: Vec<Tensor>,
}

/// Run one case. Graph inputs are given to the importer as
/// `static_inputs` (used only where an operand must be static, e.g. a
/// reshape target fed as a graph input) when `specialize` is set.
pub fn run_case(dir: &Path) -> Outcome {
    run_case_with(dir, true)
}

/// [`run_case`] with the input specialization switchable.
pub fn run_case_with(dir: &Path, specialize: bool) -> Outcome {
    let sets = match import_case(dir, specialize) {
        Ok(s) => s,
        Err(o) => return o,
    };
    for set in &sets {
        match run_set(set) {
            Outcome::Pass => {}
            other => return other,
        }
    }
    Outcome::Pass
}

/// Reads a case directory and imports the model once per test data set.
/// `Err` is the case's outcome when it cannot be imported (unsupported
/// input kinds, ops or types; a damaged case).
pub fn import_case(dir: &Path, specialize: bool) -> Result<Vec<ImportedSet>, Outcome> {
    let model = read_model(dir.join("model.onnx")).map_err(classify)?;
    for d in model.graph.inputs.iter().chain(&model.graph.outputs) {
        if !matches!(d.kind, ValueKind::Tensor | ValueKind::Unknown) {
            return Err(Outcome::Unsupported(format!(
                "`{}` is {:?}-typed",
                d.name, d.kind
            )));
        }
    }
    let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_"))
        })
        .collect();
    sets.sort();
    if sets.is_empty() {
        return Err(Outcome::Fail("no test_data_set_* directory".into()));
    }
    sets.iter()
        .map(|set| import_set(&model, set, specialize))
        .collect()
}

fn import_set(model: &crate::Model, set: &Path, specialize: bool) -> Result<ImportedSet, Outcome> {
    let read_all = |prefix: &str| -> Result<Vec<Tensor>, Outcome> {
        numbered_files(set, prefix)
            .iter()
            .map(|p| read_tensor_pb(p).map(|(_, t)| t).map_err(classify))
            .collect()
    };
    let inputs = read_all("input_")?;
    let expected = read_all("output_")?;
    // Graph inputs that are not initializers, in order, take input_i.pb.
    let inits: std::collections::HashSet<&str> = model
        .graph
        .initializers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    let names: Vec<&str> = model
        .graph
        .inputs
        .iter()
        .map(|d| d.name.as_str())
        .filter(|n| !inits.contains(n))
        .collect();
    if names.len() != inputs.len() {
        return Err(Outcome::Fail(format!(
            "model has {} inputs, test data {}",
            names.len(),
            inputs.len()
        )));
    }
    let mut opts = ImportOptions::default();
    for (n, t) in names.iter().zip(&inputs) {
        opts.input_shapes.insert(n.to_string(), t.shape().to_vec());
        if specialize {
            opts.static_inputs.insert(n.to_string(), t.clone());
        }
    }
    let graph = import_model(model, &opts).map_err(classify)?;
    Ok(ImportedSet {
        name: set
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        graph,
        inputs,
        expected,
    })
}

fn run_set(set: &ImportedSet) -> Outcome {
    let got = match run_through_ir(&set.graph, &set.inputs) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    compare_outputs(&got, &set.expected)
}

/// Compares every output with its expected value ([`compare`]).
pub fn compare_outputs(got: &[Tensor], expected: &[Tensor]) -> Outcome {
    if got.len() != expected.len() {
        return Outcome::Fail(format!(
            "{} outputs, expected {}",
            got.len(),
            expected.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(expected).enumerate() {
        if let Err(m) = compare(g, w) {
            return Outcome::Fail(format!("output {i}: {m}"));
        }
    }
    Outcome::Pass
}

/// The op a case tests: the op of its single node, or for `_expanded`
/// (function-body) variants the op of the case they expand.
pub fn case_ops(cases: &[(String, PathBuf)]) -> HashMap<String, String> {
    let mut single = HashMap::new();
    let mut first = HashMap::new();
    for (name, dir) in cases {
        if let Ok(m) = read_model(dir.join("model.onnx")) {
            if let Some(n) = m.graph.nodes.first() {
                first.insert(name.clone(), n.op_type.clone());
            }
            if m.graph.nodes.len() == 1 {
                single.insert(name.clone(), m.graph.nodes[0].op_type.clone());
            }
        }
    }
    cases
        .iter()
        .map(|(name, _)| {
            let op = single.get(name).cloned().or_else(|| {
                let base = name.split("_expanded").next().unwrap_or(name);
                single.get(base).cloned()
            });
            let op = op
                .or_else(|| first.get(name).map(|o| format!("{o}+")))
                .unwrap_or_else(|| "?".into());
            (name.clone(), op)
        })
        .collect()
}

/// The registry of the dialects the IR path needs, built once.
fn registry() -> std::sync::Arc<ipu_ir::Registry> {
    static REGISTRY: std::sync::OnceLock<std::sync::Arc<ipu_ir::Registry>> =
        std::sync::OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let mut r = ipu_ir::Registry::new();
            ipu_dialects::register_all_dialects(&mut r);
            std::sync::Arc::new(r)
        })
        .clone()
}

/// Emits the mapped graph as `nn` IR, verifies it, and runs it on the
/// reference interpreter over the IR: the path every imported model takes.
pub fn run_through_ir(
    graph: &crate::MappedGraph,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>, Outcome> {
    let mut cx = ipu_ir::Context::new(registry());
    let module = emit_verified(&mut cx, graph)?;
    let f = cx.nested_ops(module)[0];
    ipu_dialects::interpret::interpret(&cx, f, inputs)
        .map_err(|d| Outcome::Fail(format!("interpreter: {}", d.message)))
}

/// Emits the mapped graph as an `nn` IR module in `cx` (whose registry
/// must hold the `nn` and `func` dialects) and verifies it. A type the IR
/// lacks is unsupported; anything else wrong is a failure.
pub fn emit_verified(
    cx: &mut ipu_ir::Context,
    graph: &crate::MappedGraph,
) -> Result<ipu_ir::Op, Outcome> {
    let module = crate::emit::emit_graph(cx, graph, "model.onnx").map_err(|e| {
        if e.contains("which the IR lacks") {
            Outcome::Unsupported(format!("nn dialect: {e}"))
        } else {
            Outcome::Fail(format!("emitting nn IR: {e}"))
        }
    })?;
    ipu_ir::verify::verify(cx, module)
        .map_err(|d| Outcome::Fail(format!("imported IR does not verify: {d}")))?;
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_reference::ElementType;

    fn f(v: Vec<f32>) -> Tensor {
        Tensor::from_f32(vec![v.len()], ElementType::F32, v).unwrap()
    }

    #[test]
    fn tolerance_matches_the_onnx_runner() {
        assert!(compare(&f(vec![1000.0]), &f(vec![1000.9])).is_ok());
        assert!(compare(&f(vec![1000.0]), &f(vec![1001.1])).is_err());
        assert!(compare(&f(vec![0.0]), &f(vec![5e-8])).is_ok());
        assert!(compare(&f(vec![0.0]), &f(vec![2e-7])).is_err());
        assert!(compare(
            &f(vec![f32::NAN, f32::INFINITY]),
            &f(vec![f32::NAN, f32::INFINITY])
        )
        .is_ok());
        assert!(compare(&f(vec![f32::NAN]), &f(vec![1.0])).is_err());
        assert!(compare(&f(vec![1.0, 2.0]), &f(vec![1.0])).is_err());
        let i = Tensor::from_i64(vec![1], ElementType::I64, vec![1]).unwrap();
        assert!(compare(&f(vec![1.0]), &i).unwrap_err().contains("type"));
    }

    #[test]
    fn fp8_is_bit_exact() {
        let a = Tensor::from_f32(vec![1], ElementType::F8E5M2, vec![1.0]).unwrap();
        let b = Tensor::from_f32(vec![1], ElementType::F8E5M2, vec![1.25]).unwrap();
        assert!(compare(&a, &a).is_ok());
        // 1.25 is within rtol of nothing here, but any code difference fails.
        assert!(compare(&a, &b).is_err());
        let nan = Tensor::from_f32(vec![1], ElementType::F8E4M3FN, vec![f32::NAN]).unwrap();
        assert!(compare(&nan, &nan).is_ok());
    }

    #[test]
    fn missing_case_is_a_failure_not_a_panic() {
        let r = run_case(Path::new("/nonexistent/case"));
        assert!(matches!(r, Outcome::Fail(_)), "{r:?}");
    }
}
