//! ONNX import without protoc: the ONNX protobuf schema subset is compiled
//! at build time (protox + prost-build), models decode to a plain
//! [`model::Model`], [`import::import_model`] maps them onto the `nn`
//! dialect's op set ([`ipu_reference::OpKind`]) as a
//! [`import::MappedGraph`], and [`emit::emit_graph`] writes that as `nn` IR.
//! The conformance runner checks the IR path: import, emit, verify, then
//! the reference interpreter over the IR.

pub mod conformance;
pub mod emit;
pub mod error;
pub mod import;
pub mod model;

/// Generated protobuf message types (subset of `onnx.proto`).
pub mod proto {
    #![allow(clippy::all, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
}

pub use error::{OnnxError, UnsupportedOp};
pub use import::{
    import_file, import_model, ImportOptions, MappedGraph, MappedNode, ValueId, ValueInfo,
    WeightsPrecision,
};
pub use model::{
    decode_model, decode_tensor, encode_tensor, encode_value_info, read_model, read_tensor_pb,
    Model,
};
