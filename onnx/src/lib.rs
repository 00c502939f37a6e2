//! ONNX import without protoc: the ONNX protobuf schema subset is compiled
//! at build time (protox + prost-build), models decode to a plain
//! [`model::Model`], and [`import::import_model`] maps them onto the
//! `tensor` dialect's op set ([`ipu_reference::OpKind`]) as a
//! [`import::MappedGraph`], which [`import::MappedGraph::run`] executes on
//! the reference evaluator.

pub mod conformance;
pub mod error;
pub mod import;
pub mod model;

/// Generated protobuf message types (subset of `onnx.proto`).
pub mod proto {
    #![allow(clippy::all, missing_docs)]
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
}

pub use error::OnnxError;
pub use import::{
    import_file, import_model, ImportOptions, MappedGraph, MappedNode, ValueId, ValueInfo,
};
pub use model::{decode_model, decode_tensor, encode_tensor, read_model, read_tensor_pb, Model};
