//! `ipu-ir`: the MLIR-style IR core of the IPU compiler.
//!
//! - [`context`]: the IR store (interned types/attributes/locations, op, block,
//!   region and value arenas with use lists);
//! - [`opdef`]: op declarations and the registry of dialects, passes and pipelines;
//! - [`accessors`]: `declare_op!`, an op's declaration with its typed view;
//! - [`parser`], [`printer`], [`format`]: the textual form, generic and custom;
//! - [`verify`]: structural and op-specific verification;
//! - [`diag`]: diagnostics rendered at `file:line:col`;
//! - [`pass`], [`rewrite`]: the pass manager and the greedy rewrite driver.

pub mod accessors;
pub mod builtin;
pub mod constant;
pub mod context;
pub mod diag;
pub mod format;
mod intern;
pub mod lexer;
pub mod numeric;
pub mod opdef;
pub mod parser;
pub mod pass;
pub mod printer;
pub mod resources;
pub mod rewrite;
pub mod types;
pub mod verify;

pub use context::{Block, Context, Op, OpName, OperationState, Region, Use, Value, ValueDef};
pub use diag::{Diagnostic, Severity, SourceMap};
pub use opdef::{Dialect, OpDef, Registry, Trait};
pub use types::{Attr, AttrKind, Loc, LocKind, Sym, Type, TypeKind};
