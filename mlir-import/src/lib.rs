//! Import of upstream MLIR (func/tosa/linalg/arith) into the nn dialect, behind the `mlir` feature.
