//! The one limit on the size of a tensor the reference builds.
//!
//! A tensor's size comes from its input (a declared shape, a constant's
//! type, a pad amount), so every place that allocates one checks
//! [`check_tensor_size`] first and fails with an error naming what it was
//! building and the bytes it needed, instead of aborting the process when
//! the allocation fails. The limit counts the reference's own storage: 4
//! bytes per element of a float tensor (held as `f32`), 8 per element of an
//! integer or boolean one (held as `i64`).
//!
//! The default, [`DEFAULT_MAX_TENSOR_BYTES`] (4 GiB), is far above any
//! tensor a device-sized model holds and leaves room for several live
//! tensors on a 24 GiB host; the environment variable
//! `IPU_MAX_TENSOR_BYTES` (a byte count) sets another.

use std::sync::OnceLock;

use crate::dtype::ElementType;
use crate::error::EvalError;

/// The environment variable that overrides the limit (a number of bytes).
pub const MAX_TENSOR_BYTES_VAR: &str = "IPU_MAX_TENSOR_BYTES";

/// The limit when [`MAX_TENSOR_BYTES_VAR`] is not set: 4 GiB.
pub const DEFAULT_MAX_TENSOR_BYTES: u64 = 4 << 30;

/// Bytes the reference stores per element of `dtype`.
pub fn storage_bytes_per_element(dtype: ElementType) -> u64 {
    if dtype.is_float() {
        4
    } else {
        8
    }
}

/// Bytes the reference needs for a tensor of `shape` and `dtype`; `None`
/// when the count overflows `u64`. An empty tensor whose other dimensions
/// multiply past `u64` counts as overflowing too: its element count taken in
/// another order (a reversed or permuted shape) would overflow.
pub fn storage_bytes(shape: &[usize], dtype: ElementType) -> Option<u64> {
    let nonzero = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(storage_bytes_per_element(dtype), |a, &d| {
            a.checked_mul(d as u64)
        })?;
    Some(if shape.contains(&0) { 0 } else { nonzero })
}

/// The limit in force: [`MAX_TENSOR_BYTES_VAR`] if set, else the default.
pub fn max_tensor_bytes() -> Result<u64, EvalError> {
    static LIMIT: OnceLock<Result<u64, String>> = OnceLock::new();
    LIMIT
        .get_or_init(|| match std::env::var(MAX_TENSOR_BYTES_VAR) {
            Err(_) => Ok(DEFAULT_MAX_TENSOR_BYTES),
            Ok(v) => v
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("{MAX_TENSOR_BYTES_VAR}='{v}' is not a number of bytes")),
        })
        .clone()
        .map_err(EvalError::Tensor)
}

/// Error unless a tensor of `shape` and `dtype` fits the limit in force;
/// `what` names the op or value being built.
pub fn check_tensor_size(what: &str, shape: &[usize], dtype: ElementType) -> Result<(), EvalError> {
    check_tensor_size_within(what, shape, dtype, max_tensor_bytes()?)
}

/// [`check_tensor_size`] against an explicit `limit`.
pub fn check_tensor_size_within(
    what: &str,
    shape: &[usize],
    dtype: ElementType,
    limit: u64,
) -> Result<(), EvalError> {
    match storage_bytes(shape, dtype) {
        Some(bytes) if bytes <= limit => Ok(()),
        bytes => Err(EvalError::TooLarge {
            what: what.to_string(),
            ty: crate::TensorType::new(shape.to_vec(), dtype).to_string(),
            bytes: bytes.map_or_else(|| "more than 2^64".to_string(), |b| b.to_string()),
            limit,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_reference_storage() {
        assert_eq!(storage_bytes(&[10, 3], ElementType::F16), Some(120));
        assert_eq!(storage_bytes(&[10, 3], ElementType::I8), Some(240));
        assert_eq!(storage_bytes(&[], ElementType::F32), Some(4));
        assert_eq!(storage_bytes(&[usize::MAX, 4], ElementType::F32), None);
        assert_eq!(storage_bytes(&[0, 1 << 40], ElementType::F32), Some(0));
        // Empty, but the rest overflows: refused in any order.
        assert_eq!(
            storage_bytes(&[0, 1 << 40, 1 << 40], ElementType::F32),
            None
        );
        assert_eq!(
            storage_bytes(&[1 << 40, 1 << 40, 0], ElementType::F32),
            None
        );
    }

    #[test]
    fn npy_fortran_order_empty_shape_whose_reverse_overflows_is_refused() {
        // Found by the `npy` fuzz target: shape (0, ..., 2^40, ...) in
        // Fortran order is decoded as its reverse, whose running product
        // overflowed before reaching the 0.
        let header = "{'descr': '<f2', 'fortran_order': True, 'shape': (0, 32, 3, 1099511627776, 1099511627776, 2), }\n";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        let e = crate::npy::parse_npy(&bytes).unwrap_err().to_string();
        assert!(e.contains("more than 2^64 bytes"), "{e}");
    }

    #[test]
    fn refuses_past_the_limit_naming_what_and_bytes() {
        assert!(check_tensor_size_within("pad", &[256], ElementType::F32, 1024).is_ok());
        let e = check_tensor_size_within("pad", &[257], ElementType::F32, 1024).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("pad: "), "{msg}");
        assert!(msg.contains("tensor<257xf32> needs 1028 bytes"), "{msg}");
        assert!(msg.contains("limit of 1024 bytes"), "{msg}");
        let e = check_tensor_size_within("c", &[usize::MAX, 8], ElementType::I64, 1 << 40)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 2^64 bytes"), "{e}");
    }

    #[test]
    fn evaluation_refuses_a_result_over_the_limit_before_allocating() {
        // Pad to 2^40 elements (4 TiB of f32): refused, not aborted.
        let x = crate::Tensor::from_f32(vec![1], ElementType::F32, vec![1.0]).unwrap();
        let pad = crate::OpKind::Pad {
            low: vec![0],
            high: vec![(1 << 40) - 1],
            mode: crate::PadMode::Constant,
            value: 0.0,
        };
        match crate::evaluate(&pad, &[&x]) {
            Err(EvalError::TooLarge { what, bytes, .. }) => {
                assert_eq!(what, "pad");
                assert_eq!(bytes, (4u64 << 40).to_string());
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }

    #[test]
    fn npy_data_over_the_limit_is_refused_before_decoding() {
        // A header claiming 2^31 int8 values (16 GiB as the reference's i64)
        // over 2^31 bytes is never decoded: the header alone is refused.
        let mut header =
            "{'descr': '|i1', 'fortran_order': False, 'shape': (2147483648,), }".to_string();
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut big = b"\x93NUMPY\x01\x00".to_vec();
        big.extend_from_slice(&(header.len() as u16).to_le_bytes());
        big.extend_from_slice(header.as_bytes());
        let e = crate::npy::parse_npy(&big).unwrap_err().to_string();
        assert!(e.contains("needs 17179869184 bytes"), "{e}");
    }

    #[test]
    fn a_40_gb_tensor_is_over_the_default() {
        let e = check_tensor_size_within(
            "constant",
            &[10_000_000_000],
            ElementType::F32,
            DEFAULT_MAX_TENSOR_BYTES,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("needs 40000000000 bytes"), "{e}");
    }
}
