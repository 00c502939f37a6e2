//! Shared helpers for the driver's device tests: a model compiled to a
//! package the way `ipu-run` compiles an `.mlir` model (to the exchange
//! stage, then the machine stage's package builder), and the reference
//! interpreter's results for the same model.
#![allow(dead_code)]

use ipu_ir::pass::PassManager;
use ipu_ir::{Context, Op};
use ipu_lowering::exchange_to_machine::Summary;
use ipu_package::Package;
use ipu_reference::Tensor;
use ipu_target::Target;
use std::sync::Arc;

/// Parses `src` (named `file` in locations) and returns it with its
/// `func.func`.
fn parse(file: &str, src: &str) -> (Context, Op) {
    let mut cx = Context::new(ipu_driver::full_registry());
    let m = ipu_ir::parser::parse_source(&mut cx, file, src).unwrap();
    (cx, m)
}

fn entry(cx: &Context, m: Op) -> Op {
    cx.nested_ops(m)
        .into_iter()
        .find(|&o| cx.is(o, "func.func"))
        .unwrap()
}

/// Compiles `src` for `target` down to the exchange stage, then builds the
/// package; returns it with the machine stage's summary (its memory report).
pub fn compile_with_summary(file: &str, src: &str, target: &str) -> (Package, Summary) {
    let (mut cx, m) = parse(file, src);
    let registry = ipu_driver::full_registry();
    let mut pm = PassManager::new("builtin.module");
    pm.add_pipeline(
        &registry,
        &format!("builtin.module(canonicalize,convert-nn-to-tile{{target={target}}},convert-tile-to-exchange{{target={target}}})"),
    )
    .unwrap();
    pm.run(&mut cx, m, &mut std::io::sink())
        .unwrap_or_else(|d| panic!("{d}"));
    let f = entry(&cx, m);
    let t = Arc::new(Target::load(target).unwrap());
    let (pkg, _, summary) = ipu_lowering::exchange_to_machine::build_package(&cx, f, &t)
        .unwrap_or_else(|d| panic!("{d}"));
    (pkg, summary)
}

/// [`compile_with_summary`]'s package.
pub fn compile(file: &str, src: &str, target: &str) -> Package {
    compile_with_summary(file, src, target).0
}

/// The reference interpreter's results of `src`'s function on `inputs`.
pub fn interpret(file: &str, src: &str, inputs: &[Tensor]) -> Vec<Tensor> {
    let (cx, m) = parse(file, src);
    let f = entry(&cx, m);
    ipu_dialects::interpret::interpret(&cx, f, inputs).unwrap()
}
