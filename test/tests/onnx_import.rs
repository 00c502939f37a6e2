//! ONNX models imported to the nn dialect: snapshots of the IR, and the
//! imported IR computes what the mapped graph computes.

use ipu_ir::printer::PrintOptions;
use ipu_onnx::import::{import_file, ImportOptions};
use std::path::PathBuf;

fn input(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../lit/Target/ONNX/Inputs")
        .join(name)
}

#[test]
fn mlp_imports_to_nn_ir() {
    let g = import_file(input("mlp.onnx"), &ImportOptions::default()).unwrap();
    let mut cx = ipu_test::context();
    let m = ipu_onnx::emit::emit_graph(&mut cx, &g, "mlp.onnx").unwrap();
    ipu_ir::verify::verify(&cx, m).unwrap();
    // The weights blob is named after the initializer; bias stays inline only if small.
    assert!(cx.resources.get("fc_weight").is_some());
    cx.resources.side_file = Some("mlp.weights".into());
    insta::assert_snapshot!(ipu_test::print(
        &cx,
        m,
        PrintOptions {
            generic: false,
            debug_info: true
        }
    ));
}

#[test]
fn imported_ir_computes_what_the_mapped_graph_computes() {
    let g = import_file(input("mlp.onnx"), &ImportOptions::default()).unwrap();
    let mut cx = ipu_test::context();
    let m = ipu_onnx::emit::emit_graph(&mut cx, &g, "mlp.onnx").unwrap();
    let x = ipu_reference::npy::read_npy(input("mlp_x.npy")).unwrap();
    let direct = g.run(std::slice::from_ref(&x)).unwrap();
    let f = cx.nested_ops(m)[0];
    let via_ir = ipu_dialects::interpret::interpret(&cx, f, &[x]).unwrap();
    assert_eq!(direct, via_ir);
    // relu(x W + b) is non-negative and not all zero.
    let v = via_ir[0].to_f32_vec();
    assert!(v.iter().all(|&y| y >= 0.0) && v.iter().any(|&y| y > 0.0));
}

#[test]
fn bad_models_are_errors_naming_what_is_wrong() {
    let e = import_file(input("unsupported.onnx"), &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Det") && e.contains("the_det") && e.contains("opset 13"),
        "{e}"
    );
    let e = import_file(input("truncated.onnx"), &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("malformed ONNX protobuf"), "{e}");
    let e = import_file(input("dynamic.onnx"), &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("batch"), "{e}");
}
