//! Fuzz target: any bytes given to the ONNX importer the way
//! `ipu-translate --import-onnx` does (decode, map, emit `nn` IR, verify,
//! print) give IR or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ipu_fuzz::init();
    let Ok(model) = ipu_onnx::decode_model(data) else {
        return;
    };
    // Symbolic dimensions get a small size, as `--default-dim` gives them.
    let opts = ipu_onnx::ImportOptions {
        default_dim: Some(3),
        ..Default::default()
    };
    let Ok(graph) = ipu_onnx::import_model(&model, &opts) else {
        return;
    };
    let mut cx = ipu_ir::Context::new(ipu_fuzz::registry());
    let Ok(module) = ipu_onnx::emit::emit_graph(&mut cx, &graph, "fuzz.onnx") else {
        return;
    };
    if ipu_ir::verify::verify(&cx, module).is_ok() {
        let _ = ipu_ir::printer::op_to_string(&cx, module, Default::default());
    }
});
