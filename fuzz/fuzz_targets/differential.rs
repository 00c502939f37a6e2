//! Differential fuzz target: a small valid `nn` program generated from the
//! bytes (`ipu_fuzz::nn_gen`) is compiled for test4 by the tools' pipeline
//! (`ipu-lower-to-machine`), run on the chip simulator, and its outputs are
//! compared with the reference interpreter's at the tolerance `ipu-run`
//! uses. A diagnostic from the compiler (an op or type the device does not
//! take) is fine; a program the verifier refuses, a device fault, a run
//! that does not finish, an output beyond the tolerance or a panic is a
//! finding.
#![no_main]

use ipu_driver::device;
use ipu_driver::run::{random_tensor, SplitMix};
use ipu_package::Direction;
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::sync::Arc;

const TARGET: &str = "test4";
/// Far more than any generated program needs (a few thousand cycles).
const MAX_CYCLES: u64 = 5_000_000;

fn load(text: &Arc<str>) -> ipu_driver::load::Loaded {
    match ipu_driver::load::load_text(
        &ipu_fuzz::registry(),
        "fuzz.mlir",
        text.clone(),
        std::path::Path::new("."),
        false,
    ) {
        Ok(l) => l,
        Err(ipu_driver::load::LoadError::Diag(_, d)) => {
            panic!("generated program does not verify: {d}\n{text}")
        }
        Err(ipu_driver::load::LoadError::Io(e)) => panic!("{e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    ipu_fuzz::init();
    let program = ipu_fuzz::nn_gen::generate(data);
    let text: Arc<str> = program.text.into();

    // The reference run.
    let reference = load(&text);
    let cx = &reference.cx;
    let f = ipu_driver::load::entry_function(cx, reference.module, None).expect("@main");
    let (arg_types, _) = ipu_dialects::func::function_type(cx, f).expect("a signature");
    let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mut rng = SplitMix::new(seed);
    let inputs: Vec<(String, ipu_reference::Tensor)> = arg_types
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let ty = ipu_dialects::nn::tensor_type(cx, t).expect("a tensor argument");
            let name = ipu_driver::load::value_name(cx, f, "arg_attrs", i, "arg");
            (name, random_tensor(&ty, &mut rng).expect("random values"))
        })
        .collect();
    let tensors: Vec<_> = inputs.iter().map(|(_, t)| t.clone()).collect();
    let Ok(ref_outputs) = ipu_dialects::interpret::interpret(cx, f, &tensors) else {
        // The reference refuses it (a limit): so would `ipu-run`.
        return;
    };
    let precision = device::computed_precision(cx, f);

    // The device run: compile, as `ipu-run` does.
    let mut compiled = load(&text);
    let a = compiled.cx.string_attr(TARGET);
    compiled
        .cx
        .set_attr(compiled.module, ipu_lowering::target::TARGET_ATTR, a);
    let mut pm = ipu_ir::pass::PassManager::new("builtin.module");
    pm.add_by_name(&ipu_fuzz::registry(), "ipu-lower-to-machine", "")
        .expect("the pipeline exists");
    let trace = std::env::var_os("IPU_FUZZ_TRACE").is_some();
    if let Err(d) = pm.run(&mut compiled.cx, compiled.module, &mut std::io::sink()) {
        // A lowering diagnostic: the device does not take this program.
        if trace {
            eprintln!("refused: {d}\n{text}");
        }
        return;
    }
    let pkg = ipu_dialects::machine::read_package(&compiled.cx, compiled.module)
        .unwrap_or_else(|d| panic!("the compiled module holds no valid package: {d}\n{text}"));
    let target = ipu_target::Target::load(TARGET).expect("test4 loads");
    let streams = |dir: Direction| -> Vec<&ipu_package::HostStream> {
        pkg.meta
            .streams
            .iter()
            .filter(|s| s.direction == dir)
            .collect()
    };
    let mut host = BTreeMap::new();
    for (name, t) in &inputs {
        // An input no result depends on has no stream (`ipu-run` sends nothing).
        let Some(s) = streams(Direction::Input)
            .into_iter()
            .find(|s| &s.name == name)
        else {
            continue;
        };
        host.insert(
            s.name.clone(),
            device::tensor_to_bytes(t, s.host_type()).expect("stream bytes"),
        );
    }
    let run = device::run_on_chip_probed(&pkg, &target, &host, "main", MAX_CYCLES, true)
        .unwrap_or_else(|e| panic!("the package does not load: {e}\n{text}"));
    assert!(
        run.hardware_pass(),
        "device faults or no finish within {MAX_CYCLES} cycles: {:?}\n{text}",
        device::describe_faults(&run.faults)
    );
    if trace {
        eprintln!("ran: {} cycles\n{text}", run.report.cycles);
    }
    // Every op on the device's values of its operands (`ipu-run
    // --check-ops`): each op's own error, not what an ill-conditioned op
    // (a log of a small f16 sum) makes of its inputs' rounding.
    let probed = ipu_driver::check_ops::Probed::new(&pkg, &run.probes);
    let (rows, local_outputs) = ipu_driver::check_ops::check_ops(cx, f, &tensors, &probed)
        .unwrap_or_else(|e| panic!("per-op checks: {e}\n{text}"));
    if let Some(r) = ipu_driver::check_ops::first_failure(&rows) {
        panic!(
            "{} at {} ({}) is outside its tolerance: {:?}\ninputs: {:?}\n{text}",
            r.op,
            r.location,
            r.ty,
            r.observed,
            tensors.iter().map(|t| t.to_f32_vec()).collect::<Vec<_>>()
        );
    }
    assert_eq!(local_outputs.len(), ref_outputs.len());
    // The outputs against the reference walked on the device's values.
    for (i, r) in local_outputs.iter().enumerate() {
        let name = ipu_driver::load::value_name(cx, f, "res_attrs", i, "result");
        let s = streams(Direction::Output)
            .into_iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no output stream for '{name}'\n{text}"));
        let dev =
            device::bytes_to_tensor(&run.outputs[&s.name], r.shape(), s.element, r.fp8_scale())
                .expect("output bytes");
        let compared = device::compared_type(s.element, precision.get(i).copied().flatten());
        let c = device::compare(&dev, r, compared);
        assert!(
            c.pass(),
            "output '{name}': {} elements beyond the tolerance {:e} (largest error {}; first: {:?})\ninputs: {:?}\n{text}",
            c.failure_count,
            c.tolerance,
            c.max_abs_error,
            c.failures,
            tensors.iter().map(|t| t.to_f32_vec()).collect::<Vec<_>>()
        );
    }
});
