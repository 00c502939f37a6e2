//! Errors of the ONNX importer.

use ipu_reference::EvalError;

/// An error reading, decoding or mapping an ONNX model. Never a panic.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("malformed ONNX protobuf: {0}")]
    Decode(#[from] prost::DecodeError),
    #[error("invalid model: {0}")]
    Invalid(String),
    #[error("tensor `{name}`: {message}")]
    Tensor { name: String, message: String },
    #[error("unsupported op {op_type} (node `{node}`, opset {opset}): {reason}")]
    Unsupported {
        op_type: String,
        node: String,
        opset: i64,
        reason: String,
    },
    #[error("{op_type} (node `{node}`, opset {opset}): {message}")]
    Node {
        op_type: String,
        node: String,
        opset: i64,
        message: String,
    },
    #[error("running `{node}`: {source}")]
    Eval { node: String, source: EvalError },
    #[error("input `{name}`: {message}")]
    Input { name: String, message: String },
    #[error("graph output `{name}`: {message}")]
    Output { name: String, message: String },
}
