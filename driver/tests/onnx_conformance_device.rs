//! `onnx-conformance --device`: node-test case directories written here
//! (model + one test data set) are compiled for test16, run on the chip
//! simulator and compared with their expected outputs.

use std::path::{Path, PathBuf};

use ipu_driver::conformance::{run_case_on_device, DeviceSetup};
use ipu_onnx::conformance::Outcome;
use ipu_onnx::{encode_tensor, encode_value_info, proto};
use ipu_reference::{ElementType, Tensor};
use prost::Message;

/// Writes a one-node case `name` under `root`: the model, and
/// `test_data_set_0` with the inputs and expected outputs.
fn write_case(
    root: &Path,
    name: &str,
    op: (&str, &str),
    inputs: &[(&str, Tensor)],
    outputs: &[(&str, Tensor)],
) -> PathBuf {
    let node = proto::NodeProto {
        op_type: op.0.into(),
        domain: op.1.into(),
        input: inputs.iter().map(|(n, _)| n.to_string()).collect(),
        output: outputs.iter().map(|(n, _)| n.to_string()).collect(),
        ..Default::default()
    };
    write_graph_case(root, name, op.1, vec![node], inputs, outputs)
}

/// Writes a case `name` of the graph of `nodes` (opset 17 of `domain`).
fn write_graph_case(
    root: &Path,
    name: &str,
    domain: &str,
    nodes: Vec<proto::NodeProto>,
    inputs: &[(&str, Tensor)],
    outputs: &[(&str, Tensor)],
) -> PathBuf {
    let dir = root.join(name);
    let set = dir.join("test_data_set_0");
    std::fs::create_dir_all(&set).unwrap();
    let model = proto::ModelProto {
        ir_version: 8,
        opset_import: vec![proto::OperatorSetIdProto {
            domain: domain.into(),
            version: 17,
        }],
        graph: Some(proto::GraphProto {
            node: nodes,
            input: inputs
                .iter()
                .map(|(n, t)| encode_value_info(n, t))
                .collect(),
            output: outputs
                .iter()
                .map(|(n, t)| encode_value_info(n, t))
                .collect(),
            ..Default::default()
        }),
        ..Default::default()
    };
    std::fs::write(dir.join("model.onnx"), model.encode_to_vec()).unwrap();
    for (prefix, list) in [("input", inputs), ("output", outputs)] {
        for (i, (n, t)) in list.iter().enumerate() {
            let pb = encode_tensor(n, t).encode_to_vec();
            std::fs::write(set.join(format!("{prefix}_{i}.pb")), pb).unwrap();
        }
    }
    dir
}

fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("onnx-device-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn f32s(shape: &[usize], v: Vec<f32>) -> Tensor {
    Tensor::from_f32(shape.to_vec(), ElementType::F32, v).unwrap()
}

fn setup() -> DeviceSetup {
    DeviceSetup {
        target_name: "test16".into(),
        target: ipu_target::Target::load("test16").unwrap(),
        max_cycles: 10_000_000,
    }
}

fn relu_case(root: &Path, name: &str, expected: impl Fn(f32) -> f32) -> PathBuf {
    let x: Vec<f32> = (0..64).map(|i| (i as f32 - 30.5) / 8.0).collect();
    let y: Vec<f32> = x.iter().map(|&v| expected(v)).collect();
    write_case(
        root,
        name,
        ("Relu", ""),
        &[("x", f32s(&[4, 16], x))],
        &[("y", f32s(&[4, 16], y))],
    )
}

#[test]
fn a_case_the_device_computes_passes() {
    let root = scratch("pass");
    let dir = relu_case(&root, "test_relu_mine", |v| v.max(0.0));
    assert_eq!(run_case_on_device(&dir, &setup()), Outcome::Pass);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn wrong_expected_numbers_fail_with_the_element() {
    let root = scratch("fail");
    // Expected outputs that are not relu's: the device's must not match.
    let dir = relu_case(&root, "test_relu_wrong", |v| v.abs());
    match run_case_on_device(&dir, &setup()) {
        Outcome::Fail(m) => {
            assert!(
                m.contains("output 'y'") && m.contains("beyond the f32 tolerance"),
                "{m}"
            );
            assert!(m.contains("at [0, 0]: device 0, expected 3.8125"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_shape_fed_as_an_input_is_folded_and_not_streamed() {
    let root = scratch("reshape");
    let x: Vec<f32> = (0..48).map(|i| i as f32 * 0.25).collect();
    let shape = Tensor::from_i64(vec![2], ElementType::I64, vec![8, 6]).unwrap();
    let dir = write_case(
        &root,
        "test_reshape_mine",
        ("Reshape", ""),
        &[("data", f32s(&[6, 8], x.clone())), ("shape", shape)],
        &[("reshaped", f32s(&[8, 6], x))],
    );
    assert_eq!(run_case_on_device(&dir, &setup()), Outcome::Pass);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn an_op_the_importer_lacks_is_unsupported_at_import() {
    let root = scratch("import");
    let t = f32s(&[2], vec![1.0, 2.0]);
    let dir = write_case(
        &root,
        "test_custom",
        ("Frobnicate", "com.example"),
        &[("x", t.clone())],
        &[("y", t)],
    );
    match run_case_on_device(&dir, &setup()) {
        Outcome::Unsupported(m) => assert!(m.starts_with("import: "), "{m}"),
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn the_runner_checks_its_baseline_and_writes_a_new_one() {
    let root = scratch("runner");
    let data = root.join("node");
    relu_case(&data, "test_relu", |v| v.max(0.0));
    relu_case(&data, "test_relu_wrong", |v| v.abs());
    let run = |extra: &[&str]| {
        let mut args: Vec<String> = ["onnx-conformance", "--data"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(data.display().to_string());
        args.extend(["--device", "test16", "--device-lock"].map(String::from));
        args.push(root.join("device.lock").display().to_string());
        args.extend(extra.iter().map(|s| s.to_string()));
        ipu_driver::conformance::main(args.into_iter().map(std::ffi::OsString::from))
    };
    let written = root.join("written.txt");
    assert_eq!(run(&["--write-baseline", written.to_str().unwrap()]), 0);
    let text = std::fs::read_to_string(&written).unwrap();
    let cases: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(cases, ["test_relu"]);
    assert_eq!(run(&["--baseline", written.to_str().unwrap()]), 0);
    // The per-op table: Relu's one pass and one failure, and the totals.
    let table = root.join("table.txt");
    assert_eq!(run(&["--write-table", table.to_str().unwrap()]), 0);
    let text = std::fs::read_to_string(&table).unwrap();
    let relu: Vec<&str> = text
        .lines()
        .find(|l| l.trim_start().starts_with("Relu "))
        .unwrap_or_else(|| panic!("no Relu row in {text}"))
        .split_whitespace()
        .collect();
    assert_eq!(relu, ["Relu", "1", "1", "0", "0"]);
    assert!(
        text.contains("device test16: 1 passed, 1 failed, 0 unsupported"),
        "{text}"
    );
    // A baseline case that fails now is a regression.
    let stale = root.join("stale.txt");
    std::fs::write(&stale, "test_relu\ntest_relu_wrong\n").unwrap();
    assert_eq!(run(&["--baseline", stale.to_str().unwrap()]), 1);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn cases_of_other_element_types_are_outside_the_device_mode() {
    let root = scratch("types");
    let f = relu_case(&root, "test_relu_f32", |v| v.max(0.0));
    assert!(ipu_driver::conformance::in_device_types(&f));
    let u = Tensor::from_i64(vec![4], ElementType::U8, vec![1, 2, 3, 4]).unwrap();
    // u8 in and out: the host widens the input and narrows the output.
    let dir = write_case(
        &root,
        "test_relu_u8",
        ("Relu", ""),
        &[("x", u.clone())],
        &[("y", u.clone())],
    );
    assert!(ipu_driver::conformance::in_device_types(&dir));
    // A u32 output has no exact f32 image on the tiles: outside.
    let w = Tensor::from_i64(vec![4], ElementType::U32, vec![1, 2, 3, 4]).unwrap();
    let dir = write_case(
        &root,
        "test_relu_u32",
        ("Relu", ""),
        &[("x", w.clone())],
        &[("y", w)],
    );
    assert!(!ipu_driver::conformance::in_device_types(&dir));
    // A u8 input (the host widens it to f32) with an output of a device
    // type is in the mode; only the graph's declared types are read.
    let f = f32s(&[4], vec![1.0, 2.0, 3.0, 4.0]);
    let dir = write_case(
        &root,
        "test_u8_in",
        ("Cast", ""),
        &[("x", u.clone())],
        &[("y", f)],
    );
    assert!(ipu_driver::conformance::in_device_types(&dir));
    let _ = std::fs::remove_dir_all(root);
}

fn node(
    op: &str,
    inputs: &[&str],
    output: &str,
    attrs: Vec<proto::AttributeProto>,
) -> proto::NodeProto {
    proto::NodeProto {
        op_type: op.into(),
        input: inputs.iter().map(|n| n.to_string()).collect(),
        output: vec![output.into()],
        attribute: attrs,
        ..Default::default()
    }
}

fn int_attr(name: &str, v: i64) -> proto::AttributeProto {
    proto::AttributeProto {
        name: name.into(),
        i: v,
        r#type: proto::attribute_proto::AttributeType::Int as i32,
        ..Default::default()
    }
}

/// A deterministic pattern in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// An f32 model whose every size shares no factor with ipu21's 1472 tiles
/// (2^6 x 23): a 45x77 by 77x51 matmul with a bias, tanh, a layer norm over
/// 51 with scale and bias, a 51x33 matmul and a softmax over 33, compiled
/// for ipu21 and run on the simulated chip against the reference's values.
#[test]
fn an_f32_model_of_sizes_coprime_with_the_tile_count_passes_on_ipu21() {
    use ipu_reference::{evaluate, OpKind};
    let (m, k, n, n2) = (45usize, 77usize, 51usize, 33usize);
    for d in [m, k, n, n2] {
        assert!(d % 2 != 0 && d % 23 != 0, "{d} shares a factor with 1472");
    }
    let x = f32s(&[m, k], values(m * k, 1));
    let w1 = f32s(&[k, n], values(k * n, 2));
    let b1 = f32s(&[n], values(n, 3));
    let gamma = f32s(&[n], values(n, 4).iter().map(|v| 1.0 + v / 2.0).collect());
    let beta = f32s(&[n], values(n, 5));
    let w2 = f32s(&[n, n2], values(n * n2, 6));
    let ev = |kind: OpKind, args: &[&Tensor]| evaluate(&kind, args).unwrap();
    let h = ev(OpKind::MatMul, &[&x, &w1]);
    let hb = ev(OpKind::Add, &[&h, &b1]);
    let t = ev(OpKind::Tanh, &[&hb]);
    let ln = ev(
        OpKind::LayerNorm {
            axis: 1,
            epsilon: 1e-5,
            has_scale: true,
            has_bias: true,
        },
        &[&t, &gamma, &beta],
    );
    let y = ev(OpKind::MatMul, &[&ln, &w2]);
    let s = ev(OpKind::Softmax { axis: 1 }, &[&y]);
    let mut ln_node = node(
        "LayerNormalization",
        &["t", "gamma", "beta"],
        "ln",
        vec![int_attr("axis", -1)],
    );
    ln_node.attribute.push(proto::AttributeProto {
        name: "epsilon".into(),
        f: 1e-5,
        r#type: proto::attribute_proto::AttributeType::Float as i32,
        ..Default::default()
    });
    let nodes = vec![
        node("MatMul", &["x", "w1"], "h", vec![]),
        node("Add", &["h", "b1"], "hb", vec![]),
        node("Tanh", &["hb"], "t", vec![]),
        ln_node,
        node("MatMul", &["ln", "w2"], "y", vec![]),
        node("Softmax", &["y"], "s", vec![int_attr("axis", -1)]),
    ];
    let root = scratch("coprime");
    let dir = write_graph_case(
        &root,
        "test_coprime_mlp",
        "",
        nodes,
        &[
            ("x", x),
            ("w1", w1),
            ("b1", b1),
            ("gamma", gamma),
            ("beta", beta),
            ("w2", w2),
        ],
        &[("s", s)],
    );
    let ipu21 = DeviceSetup {
        target_name: "ipu21".into(),
        target: ipu_target::Target::load("ipu21").unwrap(),
        max_cycles: 10_000_000,
    };
    assert_eq!(run_case_on_device(&dir, &ipu21), Outcome::Pass);
    let _ = std::fs::remove_dir_all(root);
}
