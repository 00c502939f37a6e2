//! The exchange stage's program model, and the plain pieces every stage
//! after `nn` shares.
//!
//! `convert-tile-to-exchange` builds a [`Program`] (buffers, host streams,
//! constants, and the supersteps: compute sets of per-tile kernel calls and
//! exchange phases of transfers between buffers) and writes it as IR with
//! [`Program::emit`]; `convert-exchange-to-machine` reads it back with
//! [`Program::read`] and nothing else. [`Program::check`] refuses a program
//! whose phases no longer deliver what its compute sets read.
//!
//! - the program by job: [`mod@model`] (the data), [`transfers`] (transfers
//!   as runs), [`mod@write`] and [`mod@read`] (the `exchange` dialect),
//!   [`mod@check`];
//! - [`records`]: the call of every library kernel with its state record,
//!   checked against the ISA's layout; [`kernel_cycles`] (the ISA's), a
//!   call's cost by the kernel's own formula;
//! - [`view`]: a view's element map (transpose, slice, broadcast...), as
//!   the device ops describe it and the builder resolves it;
//! - [`target`] (which machine a module is compiled for), [`geometry`]
//!   (blocks, rectangles, runs), [`gemm`] (the AMP GEMM's rules), [`elem`]
//!   (element-type conversions).
//!
//! Depends on the IR, the dialects, the ISA, the target and the exchange
//! scheduler (`ipu-exchange-schedule`) only: no op family and no pass.

pub mod check;
pub mod elem;
pub mod expand;
pub mod gemm;
pub mod geometry;
pub mod model;
pub mod read;
pub mod records;
pub mod target;
pub mod transfers;
pub mod view;
pub mod write;

/// A call's cycles by the kernel's own `.cycles` formula: the ISA's
/// memoised [`ipu_isa::kernels::cycles`], the one cost model of compute.
pub use ipu_isa::kernels::cycles as kernel_cycles;
pub use model::*;
pub use transfers::{compress, expand};
