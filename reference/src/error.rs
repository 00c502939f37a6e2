//! Evaluation errors.

use crate::dtype::ElementType;

/// Error from shape inference or evaluation of an op. Never a panic.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("{op}: expected {expected} operand(s), got {got}")]
    Arity {
        op: &'static str,
        expected: String,
        got: usize,
    },
    #[error("{op}: {message}")]
    Shape { op: &'static str, message: String },
    #[error("{op}: unsupported element type {ty}{detail}")]
    Type {
        op: &'static str,
        ty: ElementType,
        detail: String,
    },
    #[error("{op}: {message}")]
    Attribute { op: &'static str, message: String },
    #[error("{op}: index {index} out of range for dimension of size {size}")]
    IndexOutOfRange {
        op: &'static str,
        index: i64,
        size: usize,
    },
    #[error("{op}: integer division by zero")]
    DivisionByZero { op: &'static str },
    #[error("tensor: {0}")]
    Tensor(String),
    /// A tensor over [`crate::limits::max_tensor_bytes`], refused before allocating it.
    #[error("{what}: {ty} needs {bytes} bytes, more than the limit of {limit} bytes per tensor (the environment variable IPU_MAX_TENSOR_BYTES sets another)")]
    TooLarge {
        what: String,
        ty: String,
        bytes: String,
        limit: u64,
    },
}

impl EvalError {
    pub(crate) fn shape(op: &'static str, message: impl Into<String>) -> Self {
        EvalError::Shape {
            op,
            message: message.into(),
        }
    }
    pub(crate) fn attr(op: &'static str, message: impl Into<String>) -> Self {
        EvalError::Attribute {
            op,
            message: message.into(),
        }
    }
    pub(crate) fn ty(op: &'static str, ty: ElementType, detail: impl Into<String>) -> Self {
        let d = detail.into();
        EvalError::Type {
            op,
            ty,
            detail: if d.is_empty() { d } else { format!(" ({d})") },
        }
    }
}
