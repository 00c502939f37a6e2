//! Import of upstream MLIR (func/tosa/linalg/arith/tensor/math) into the
//! `nn` dialect, behind the `mlir` feature.
//!
//! With the feature on, the input is parsed by upstream MLIR (through
//! `melior`, every upstream dialect registered) and walked op by op; each
//! supported op becomes one or a few `nn` ops with the same numerics, and
//! keeps its upstream location (`file:line:col`, names, fused and call-site
//! locations). Anything that cannot be mapped exactly is a [`Diagnostic`]
//! naming the op, at its location.
//!
//! Without the feature the crate needs no LLVM: [`import_mlir`] and
//! [`import_mlir_source`] exist but always return an error saying so, and
//! [`ENABLED`] is false.

use ipu_ir::{Context, Diagnostic, Op};
use std::path::Path;

#[cfg(feature = "mlir")]
mod convert;
#[cfg(feature = "mlir")]
mod upstream;

/// Whether this build can import MLIR (the `mlir` feature).
pub const ENABLED: bool = cfg!(feature = "mlir");

/// Reads and imports an upstream MLIR file: a new `builtin.module` of
/// `func.func`s of `nn` ops, verified.
pub fn import_mlir(cx: &mut Context, path: impl AsRef<Path>) -> Result<Op, Diagnostic> {
    let path = path.as_ref();
    let name = path.to_string_lossy().into_owned();
    match std::fs::read_to_string(path) {
        Ok(text) => import_mlir_source(cx, &name, &text),
        Err(e) => Err(Diagnostic::error(
            ipu_ir::Loc::UNKNOWN,
            format!("cannot read '{name}': {e}"),
        )),
    }
}

/// Imports upstream MLIR text; `filename` names the buffer in locations.
#[cfg(feature = "mlir")]
pub fn import_mlir_source(
    cx: &mut Context,
    filename: &str,
    source: &str,
) -> Result<Op, Diagnostic> {
    upstream::import(cx, filename, source)
}

/// Imports upstream MLIR text; without the `mlir` feature this is an error.
#[cfg(not(feature = "mlir"))]
pub fn import_mlir_source(
    cx: &mut Context,
    filename: &str,
    _source: &str,
) -> Result<Op, Diagnostic> {
    let loc = cx.file_loc(filename, 1, 1);
    Err(Diagnostic::error(
        loc,
        "MLIR import is not available: ipu-mlir-import was built without the `mlir` feature \
         (it needs LLVM/MLIR 22, see scripts/install-mlir-dev.sh)",
    ))
}
