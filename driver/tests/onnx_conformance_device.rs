//! `onnx-conformance --device`: node-test case directories written here
//! (model + one test data set) are compiled for test16, run on the chip
//! simulator and compared with their expected outputs.

use std::path::{Path, PathBuf};

use ipu_driver::conformance::{run_case_on_device, DeviceSetup};
use ipu_onnx::conformance::Outcome;
use ipu_onnx::{encode_tensor, proto};
use ipu_reference::{ElementType, Tensor};
use prost::Message;

fn value_info(name: &str, t: &Tensor) -> proto::ValueInfoProto {
    use proto::tensor_shape_proto::{dimension::Value, Dimension};
    proto::ValueInfoProto {
        name: name.into(),
        r#type: Some(proto::TypeProto {
            value: Some(proto::type_proto::Value::TensorType(
                proto::type_proto::Tensor {
                    elem_type: ipu_onnx::model::onnx_data_type(t.dtype()),
                    shape: Some(proto::TensorShapeProto {
                        dim: t
                            .shape()
                            .iter()
                            .map(|&d| Dimension {
                                value: Some(Value::DimValue(d as i64)),
                                ..Default::default()
                            })
                            .collect(),
                    }),
                },
            )),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Writes a one-node case `name` under `root`: the model, and
/// `test_data_set_0` with the inputs and expected outputs.
fn write_case(
    root: &Path,
    name: &str,
    op: (&str, &str),
    inputs: &[(&str, Tensor)],
    outputs: &[(&str, Tensor)],
) -> PathBuf {
    let dir = root.join(name);
    let set = dir.join("test_data_set_0");
    std::fs::create_dir_all(&set).unwrap();
    let model = proto::ModelProto {
        ir_version: 8,
        opset_import: vec![proto::OperatorSetIdProto {
            domain: op.1.into(),
            version: 17,
        }],
        graph: Some(proto::GraphProto {
            node: vec![proto::NodeProto {
                op_type: op.0.into(),
                domain: op.1.into(),
                input: inputs.iter().map(|(n, _)| n.to_string()).collect(),
                output: outputs.iter().map(|(n, _)| n.to_string()).collect(),
                ..Default::default()
            }],
            input: inputs.iter().map(|(n, t)| value_info(n, t)).collect(),
            output: outputs.iter().map(|(n, t)| value_info(n, t)).collect(),
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
    let dir = write_case(
        &root,
        "test_relu_u8",
        ("Relu", ""),
        &[("x", u.clone())],
        &[("y", u)],
    );
    assert!(!ipu_driver::conformance::in_device_types(&dir));
    let _ = std::fs::remove_dir_all(root);
}
