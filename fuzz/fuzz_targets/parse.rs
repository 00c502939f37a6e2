//! Fuzz target: any byte string given to the parser, verifier and printer
//! yields IR or a diagnostic, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let mut cx = ipu_ir::Context::new(ipu_driver::full_registry());
    cx.allow_unregistered = true;
    if let Ok(m) = ipu_ir::parser::parse_source(&mut cx, "fuzz.mlir", src) {
        if ipu_ir::verify::verify(&cx, m).is_ok() {
            let _ = ipu_ir::printer::op_to_string(&cx, m, Default::default());
            let _ = ipu_ir::printer::op_to_string(
                &cx,
                m,
                ipu_ir::printer::PrintOptions {
                    generic: true,
                    debug_info: true,
                },
            );
        }
    }
});
