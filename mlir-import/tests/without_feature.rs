#![cfg(not(feature = "mlir"))]
//! Without the `mlir` feature the importer is present but says it is off.

use std::sync::Arc;

#[test]
fn import_says_the_feature_is_off() {
    let mut r = ipu_ir::Registry::new();
    ipu_dialects::register_all_dialects(&mut r);
    let mut cx = ipu_ir::Context::new(Arc::new(r));
    const { assert!(!ipu_mlir_import::ENABLED) };
    let d = ipu_mlir_import::import_mlir_source(&mut cx, "m.mlir", "func.func @f() { return }")
        .unwrap_err();
    assert!(
        d.message.contains("built without the `mlir` feature"),
        "{}",
        d.message
    );
    assert_eq!(ipu_ir::diag::print_loc(&cx, d.loc), "\"m.mlir\":1:1");
}
