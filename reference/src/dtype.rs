//! Element types of reference tensors.

use std::fmt;
use std::str::FromStr;

use crate::float8::Fp8Format;

/// Element type of a [`crate::Tensor`].
///
/// The first eight variants are the `tensor` dialect's element types. The
/// remaining ones (`f64` and the narrow/unsigned integers) exist so that the
/// ONNX importer can represent every value of the ONNX node tests; `f64`
/// values are carried at `f32` precision (the reference computes in `f32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    F32,
    F16,
    BF16,
    F8E4M3FN,
    F8E5M2,
    I32,
    I64,
    /// Boolean, stored as 0/1.
    I1,
    F64,
    I8,
    I16,
    U8,
    U16,
    U32,
    U64,
    // Further ONNX narrow types, for import and the ONNX conformance run.
    F8E4M3FNUZ,
    F8E5M2FNUZ,
    F4E2M1FN,
    F8E8M0FNU,
    I4,
    U4,
    I2,
    U2,
}

impl ElementType {
    /// All element types, in declaration order.
    pub const ALL: [ElementType; 23] = [
        ElementType::F32,
        ElementType::F16,
        ElementType::BF16,
        ElementType::F8E4M3FN,
        ElementType::F8E5M2,
        ElementType::I32,
        ElementType::I64,
        ElementType::I1,
        ElementType::F64,
        ElementType::I8,
        ElementType::I16,
        ElementType::U8,
        ElementType::U16,
        ElementType::U32,
        ElementType::U64,
        ElementType::F8E4M3FNUZ,
        ElementType::F8E5M2FNUZ,
        ElementType::F4E2M1FN,
        ElementType::F8E8M0FNU,
        ElementType::I4,
        ElementType::U4,
        ElementType::I2,
        ElementType::U2,
    ];

    /// The MLIR-style spelling (`f32`, `f8E4M3FN`, `i1`, `ui8`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ElementType::F32 => "f32",
            ElementType::F16 => "f16",
            ElementType::BF16 => "bf16",
            ElementType::F8E4M3FN => "f8E4M3FN",
            ElementType::F8E5M2 => "f8E5M2",
            ElementType::I32 => "i32",
            ElementType::I64 => "i64",
            ElementType::I1 => "i1",
            ElementType::F64 => "f64",
            ElementType::I8 => "i8",
            ElementType::I16 => "i16",
            ElementType::U8 => "ui8",
            ElementType::U16 => "ui16",
            ElementType::U32 => "ui32",
            ElementType::U64 => "ui64",
            ElementType::F8E4M3FNUZ => "f8E4M3FNUZ",
            ElementType::F8E5M2FNUZ => "f8E5M2FNUZ",
            ElementType::F4E2M1FN => "f4E2M1FN",
            ElementType::F8E8M0FNU => "f8E8M0FNU",
            ElementType::I4 => "i4",
            ElementType::U4 => "ui4",
            ElementType::I2 => "i2",
            ElementType::U2 => "ui2",
        }
    }

    /// True for floating-point types (values stored as `f32`).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElementType::F32
                | ElementType::F16
                | ElementType::BF16
                | ElementType::F8E4M3FN
                | ElementType::F8E5M2
                | ElementType::F64
                | ElementType::F8E4M3FNUZ
                | ElementType::F8E5M2FNUZ
                | ElementType::F4E2M1FN
                | ElementType::F8E8M0FNU
        )
    }

    /// True for integer and boolean types (values stored as `i64`).
    pub fn is_integer(self) -> bool {
        !self.is_float()
    }

    /// True for the narrow float formats (FP8, FP4, E8M0), which carry a
    /// per-tensor power-of-two scale.
    pub fn is_fp8(self) -> bool {
        self.fp8_format().is_some()
    }

    /// The narrow float format of this type, if it is one.
    pub fn fp8_format(self) -> Option<Fp8Format> {
        match self {
            ElementType::F8E4M3FN => Some(Fp8Format::E4M3FN),
            ElementType::F8E5M2 => Some(Fp8Format::E5M2),
            ElementType::F8E4M3FNUZ => Some(Fp8Format::E4M3FNUZ),
            ElementType::F8E5M2FNUZ => Some(Fp8Format::E5M2FNUZ),
            ElementType::F4E2M1FN => Some(Fp8Format::E2M1FN),
            ElementType::F8E8M0FNU => Some(Fp8Format::E8M0FNU),
            _ => None,
        }
    }

    /// Bits per element (sub-byte types pack in files and ONNX tensors).
    pub fn bit_width(self) -> usize {
        match self {
            ElementType::I1 => 8,
            ElementType::F4E2M1FN | ElementType::I4 | ElementType::U4 => 4,
            ElementType::I2 | ElementType::U2 => 2,
            t => t.byte_size() * 8,
        }
    }

    /// Size of one element in bytes as stored on a device / in a file.
    pub fn byte_size(self) -> usize {
        match self {
            ElementType::F8E4M3FN
            | ElementType::F8E5M2
            | ElementType::I1
            | ElementType::I8
            | ElementType::U8
            | ElementType::F8E4M3FNUZ
            | ElementType::F8E5M2FNUZ
            | ElementType::F4E2M1FN
            | ElementType::F8E8M0FNU
            | ElementType::I4
            | ElementType::U4
            | ElementType::I2
            | ElementType::U2 => 1,
            ElementType::F16 | ElementType::BF16 | ElementType::I16 | ElementType::U16 => 2,
            ElementType::F32 | ElementType::I32 | ElementType::U32 => 4,
            ElementType::F64 | ElementType::I64 | ElementType::U64 => 8,
        }
    }

    /// Wrap an integer into the range of this integer type (two's complement
    /// truncation, like a C cast). Booleans map non-zero to 1.
    /// Float types return the value unchanged.
    #[inline]
    pub fn wrap_int(self, v: i64) -> i64 {
        match self {
            ElementType::I1 => (v != 0) as i64,
            ElementType::I8 => v as i8 as i64,
            ElementType::I16 => v as i16 as i64,
            ElementType::I32 => v as i32 as i64,
            ElementType::U8 => v as u8 as i64,
            ElementType::U16 => v as u16 as i64,
            ElementType::U32 => v as u32 as i64,
            ElementType::I4 => (v << 60) >> 60,
            ElementType::U4 => v & 0xF,
            ElementType::I2 => (v << 62) >> 62,
            ElementType::U2 => v & 0x3,
            _ => v,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error returned when parsing an unknown element type name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown element type `{0}`")]
pub struct UnknownElementType(pub String);

impl FromStr for ElementType {
    type Err = UnknownElementType;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ElementType::ALL
            .iter()
            .copied()
            .find(|t| t.name() == s)
            .ok_or_else(|| UnknownElementType(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in ElementType::ALL {
            assert_eq!(t.name().parse::<ElementType>().unwrap(), t);
        }
        assert!("f7".parse::<ElementType>().is_err());
    }

    #[test]
    fn wrap_int_truncates() {
        assert_eq!(ElementType::I8.wrap_int(200), -56);
        assert_eq!(ElementType::U8.wrap_int(-1), 255);
        assert_eq!(ElementType::I32.wrap_int(1 << 33), 0);
        assert_eq!(ElementType::I1.wrap_int(-7), 1);
        assert_eq!(ElementType::I64.wrap_int(i64::MIN), i64::MIN);
        assert_eq!(ElementType::I4.wrap_int(8), -8);
        assert_eq!(ElementType::I4.wrap_int(-9), 7);
        assert_eq!(ElementType::U4.wrap_int(-9), 7);
        assert_eq!(ElementType::I2.wrap_int(3), -1);
        assert_eq!(ElementType::U2.wrap_int(5), 1);
    }
}
