//! Errors from loading and validating a target description.

use thiserror::Error;

/// Why a target could not be loaded. Every variant names where the text came from.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TargetError {
    /// Neither a built-in name nor an existing file.
    #[error("unknown target '{name}': not a built-in target ({builtins}) and no such file")]
    Unknown { name: String, builtins: String },
    /// The file exists but could not be read.
    #[error("cannot read target file {path}: {message}")]
    Io { path: String, message: String },
    /// Not valid TOML, a missing or mistyped field, or an unknown key.
    #[error("{origin}: invalid target description: {message}")]
    Parse { origin: String, message: String },
    /// Well-formed but a figure is out of range or inconsistent.
    #[error("{origin}: field `{field}` {message}")]
    Invalid {
        origin: String,
        field: String,
        message: String,
    },
}
