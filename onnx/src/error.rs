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
    /// Every op type of a model the importer does not map, found before
    /// any node is mapped: one entry per (domain, op type).
    #[error("{}", unsupported_listing(.0))]
    UnsupportedOps(Vec<UnsupportedOp>),
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

/// One op type of a model the importer has no mapping for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedOp {
    /// The op's domain ("" for the default ONNX domain).
    pub domain: String,
    pub op_type: String,
    /// The model's opset of that domain (0 when the model imports none).
    pub opset: i64,
    /// The name of the first node of this type (graph order, subgraphs
    /// after their node).
    pub first_node: String,
    /// How many nodes of this type the model has (subgraphs included).
    pub count: usize,
}

impl std::fmt::Display for UnsupportedOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.domain.is_empty() {
            write!(f, "{} (opset {})", self.op_type, self.opset)?;
        } else {
            write!(f, "{}:{} (opset {})", self.domain, self.op_type, self.opset)?;
        }
        match self.count {
            1 => write!(f, ", node `{}`", self.first_node),
            n => write!(f, ", {n} nodes, the first `{}`", self.first_node),
        }
    }
}

fn unsupported_listing(ops: &[UnsupportedOp]) -> String {
    let items: Vec<String> = ops.iter().map(|o| o.to_string()).collect();
    format!(
        "the model has {} op type{} the importer does not map: {}",
        ops.len(),
        if ops.len() == 1 { "" } else { "s" },
        items.join("; ")
    )
}
