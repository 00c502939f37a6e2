//! Fuzz target: any bytes given to the ONNX importer the way
//! `ipu-translate --import-onnx` does (decode, map, emit `nn` IR, verify,
//! print) give IR or an error, never a panic; graph output names that pass
//! `ipu-run`'s result-name check stay inside the output folder.
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
    // Graph output names become result names, and with --output-dir file
    // names: the check `ipu-run` makes must hold for any of them.
    if let Some(f) = cx
        .nested_ops(module)
        .into_iter()
        .find(|&o| cx.is(o, "func.func"))
    {
        let count = ipu_dialects::func::function_type(&cx, f).map_or(0, |(_, r)| r.len());
        let names: Vec<String> = (0..count)
            .map(|i| ipu_driver::load::value_name(&cx, f, "res_attrs", i, "result"))
            .collect();
        if ipu_driver::names::check_result_names(&names, true).is_none() {
            for n in &names {
                let file = std::path::Path::new("/out").join(format!("{n}.npy"));
                assert_eq!(file.parent(), Some(std::path::Path::new("/out")), "{n:?}");
            }
        }
    }
});
