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

fn classify(e: OnnxError) -> Outcome {
    let msg = e.to_string();
    match e {
        OnnxError::Unsupported { .. } => Outcome::Unsupported(msg),
        _ if msg.contains("unsupported data type")
            || msg.contains("external data")
            || msg.contains("unsupported element type") =>
        {
            Outcome::Unsupported(msg)
        }
        _ => Outcome::Fail(msg),
    }
}

/// Run one case. Graph inputs are given to the importer as
/// `static_inputs` (used only where an operand must be static, e.g. a
/// reshape target fed as a graph input) when `specialize` is set.
pub fn run_case(dir: &Path) -> Outcome {
    run_case_with(dir, true)
}

/// [`run_case`] with the input specialization switchable.
pub fn run_case_with(dir: &Path, specialize: bool) -> Outcome {
    let model = match read_model(dir.join("model.onnx")) {
        Ok(m) => m,
        Err(e) => return classify(e),
    };
    for d in model.graph.inputs.iter().chain(&model.graph.outputs) {
        if !matches!(d.kind, ValueKind::Tensor | ValueKind::Unknown) {
            return Outcome::Unsupported(format!("`{}` is {:?}-typed", d.name, d.kind));
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
        return Outcome::Fail("no test_data_set_* directory".into());
    }
    for set in &sets {
        match run_set(&model, set, specialize) {
            Outcome::Pass => {}
            other => return other,
        }
    }
    Outcome::Pass
}

fn run_set(model: &crate::Model, set: &Path, specialize: bool) -> Outcome {
    let mut inputs = Vec::new();
    for p in numbered_files(set, "input_") {
        match read_tensor_pb(&p) {
            Ok((_, t)) => inputs.push(t),
            Err(e) => return classify(e),
        }
    }
    let mut expected = Vec::new();
    for p in numbered_files(set, "output_") {
        match read_tensor_pb(&p) {
            Ok((_, t)) => expected.push(t),
            Err(e) => return classify(e),
        }
    }
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
        return Outcome::Fail(format!(
            "model has {} inputs, test data {}",
            names.len(),
            inputs.len()
        ));
    }
    let mut opts = ImportOptions::default();
    for (n, t) in names.iter().zip(&inputs) {
        opts.input_shapes.insert(n.to_string(), t.shape().to_vec());
        if specialize {
            opts.static_inputs.insert(n.to_string(), t.clone());
        }
    }
    let graph = match import_model(model, &opts) {
        Ok(g) => g,
        Err(e) => return classify(e),
    };
    let got = match run_through_ir(&graph, &inputs) {
        Ok(v) => v,
        Err(outcome) => return outcome,
    };
    if got.len() != expected.len() {
        return Outcome::Fail(format!(
            "{} outputs, expected {}",
            got.len(),
            expected.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(&expected).enumerate() {
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
    let module = crate::emit::emit_graph(&mut cx, graph, "model.onnx").map_err(|e| {
        if e.contains("which the IR lacks") {
            Outcome::Unsupported(format!("nn dialect: {e}"))
        } else {
            Outcome::Fail(format!("emitting nn IR: {e}"))
        }
    })?;
    ipu_ir::verify::verify(&cx, module)
        .map_err(|d| Outcome::Fail(format!("imported IR does not verify: {d}")))?;
    let f = cx.nested_ops(module)[0];
    ipu_dialects::interpret::interpret(&cx, f, inputs)
        .map_err(|d| Outcome::Fail(format!("interpreter: {}", d.message)))
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
