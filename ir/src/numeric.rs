//! Rounding of literal values to the builtin floating-point types, so that a
//! float attribute always holds a value its type can represent.

use crate::types::TypeKind;

/// A binary minifloat format: exponent bits, mantissa bits, and how it ends.
#[derive(Copy, Clone, Debug)]
pub struct MiniFloat {
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
    /// `true` for the OCP "FN" formats: no infinities, only the all-ones
    /// pattern is NaN, so the top exponent holds finite values.
    pub finite_only: bool,
}

pub const F8E4M3FN: MiniFloat = MiniFloat {
    exponent_bits: 4,
    mantissa_bits: 3,
    finite_only: true,
};
pub const F8E5M2: MiniFloat = MiniFloat {
    exponent_bits: 5,
    mantissa_bits: 2,
    finite_only: false,
};

impl MiniFloat {
    fn bias(self) -> i32 {
        (1 << (self.exponent_bits - 1)) - 1
    }

    /// Largest finite value.
    pub fn max_finite(self) -> f64 {
        let mbits = self.mantissa_bits as i32;
        let (max_exp, max_mant) = if self.finite_only {
            // The all-ones exponent is usable except for mantissa all-ones (NaN).
            (
                (1 << self.exponent_bits) - 1 - self.bias(),
                (1 << mbits) - 2,
            )
        } else {
            (
                (1 << self.exponent_bits) - 2 - self.bias(),
                (1 << mbits) - 1,
            )
        };
        (1.0 + max_mant as f64 / (1 << mbits) as f64) * 2f64.powi(max_exp)
    }

    /// Rounds to the nearest representable value, ties to even. Values beyond
    /// the range become infinity (or NaN for finite-only formats) unless
    /// `saturate`, which clamps them to the largest finite value.
    pub fn round(self, x: f64, saturate: bool) -> f64 {
        if x.is_nan() {
            return f64::NAN;
        }
        let max = self.max_finite();
        if x.is_infinite() {
            return match (saturate, self.finite_only) {
                (true, _) => max.copysign(x),
                (false, true) => f64::NAN,
                (false, false) => x,
            };
        }
        let mbits = self.mantissa_bits as i32;
        let min_normal_exp = 1 - self.bias();
        let a = x.abs();
        if a == 0.0 {
            return x;
        }
        // Quantum: spacing of representable values around `a`.
        let e = (a.log2().floor() as i32).max(min_normal_exp);
        let quantum = 2f64.powi(e - mbits);
        let scaled = a / quantum;
        let mut r = scaled.round();
        if (scaled - scaled.trunc() - 0.5).abs() == 0.0 && r % 2.0 != 0.0 {
            r -= 1.0; // tie: round half to even
        }
        let rounded = r * quantum;
        // The overflow threshold is halfway between max and the next step.
        let step_at_max = 2f64.powi(max.log2().floor() as i32 - mbits);
        if rounded > max {
            if saturate {
                return max.copysign(x);
            }
            if a >= max + step_at_max / 2.0 {
                return if self.finite_only {
                    f64::NAN
                } else {
                    f64::INFINITY.copysign(x)
                };
            }
            return max.copysign(x);
        }
        rounded.copysign(x)
    }

    /// Encodes an already representable value as its bit pattern.
    pub fn encode(self, x: f64) -> u8 {
        let ebits = self.exponent_bits;
        let mbits = self.mantissa_bits;
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        if x.is_nan() {
            return 0x7f; // canonical NaN in both OCP formats (E5M2: exp all ones, mantissa != 0)
        }
        let a = x.abs();
        if a.is_infinite() {
            return sign | (((1u8 << ebits) - 1) << mbits);
        }
        if a == 0.0 {
            return sign;
        }
        let bias = self.bias();
        let e = a.log2().floor() as i32;
        if e < 1 - bias {
            let m = (a / 2f64.powi(1 - bias - mbits as i32)).round() as u8;
            return sign | m;
        }
        let m = ((a / 2f64.powi(e) - 1.0) * (1u32 << mbits) as f64).round() as u8;
        sign | (((e + bias) as u8) << mbits) | m
    }

    pub fn decode(self, bits: u8) -> f64 {
        let ebits = self.exponent_bits;
        let mbits = self.mantissa_bits;
        let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
        let e = ((bits >> mbits) & ((1 << ebits) - 1) as u8) as i32;
        let m = (bits & ((1 << mbits) - 1) as u8) as f64;
        let emax = (1 << ebits) - 1;
        if self.finite_only {
            if e == emax && m as u32 == (1 << mbits) - 1 {
                return f64::NAN;
            }
        } else if e == emax {
            return if m == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        let bias = self.bias();
        if e == 0 {
            sign * m * 2f64.powi(1 - bias - mbits as i32)
        } else {
            sign * (1.0 + m / (1u32 << mbits) as f64) * 2f64.powi(e - bias)
        }
    }
}

/// Rounds `x` to the value set of a float type (round to nearest even;
/// out-of-range FP8 values saturate, as MLIR's APFloat conversion of literals does not
/// allow them: the parser reports them before calling this).
pub fn round_to_float_type(kind: &TypeKind, x: f64) -> f64 {
    match kind {
        TypeKind::F16 => half::f16::from_f64(x).to_f64(),
        TypeKind::BF16 => half::bf16::from_f64(x).to_f64(),
        TypeKind::F32 => x as f32 as f64,
        TypeKind::F8E4M3FN => F8E4M3FN.round(x, false),
        TypeKind::F8E5M2 => F8E5M2.round(x, false),
        _ => x,
    }
}

/// Encodes a value of a float type as its little-endian storage bytes.
pub fn float_to_bytes(kind: &TypeKind, x: f64, out: &mut Vec<u8>) {
    match kind {
        TypeKind::F16 => out.extend_from_slice(&half::f16::from_f64(x).to_le_bytes()),
        TypeKind::BF16 => out.extend_from_slice(&half::bf16::from_f64(x).to_le_bytes()),
        TypeKind::F32 => out.extend_from_slice(&(x as f32).to_le_bytes()),
        TypeKind::F8E4M3FN => out.push(F8E4M3FN.encode(F8E4M3FN.round(x, false))),
        TypeKind::F8E5M2 => out.push(F8E5M2.encode(F8E5M2.round(x, false))),
        _ => out.extend_from_slice(&x.to_le_bytes()),
    }
}

/// Decodes one element of a float type from its storage bytes.
pub fn float_from_bytes(kind: &TypeKind, b: &[u8]) -> f64 {
    match kind {
        TypeKind::F16 => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
        TypeKind::BF16 => half::bf16::from_le_bytes([b[0], b[1]]).to_f64(),
        TypeKind::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        TypeKind::F8E4M3FN => F8E4M3FN.decode(b[0]),
        TypeKind::F8E5M2 => F8E5M2.decode(b[0]),
        _ => f64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])),
    }
}

/// Bytes one element of a scalar type occupies in dense storage.
pub fn storage_bytes(kind: &TypeKind) -> Option<usize> {
    let bits = kind.bit_width()?;
    Some((bits as usize).div_ceil(8).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_round_trips_every_finite_code() {
        for fmt in [F8E4M3FN, F8E5M2] {
            for bits in 0u8..=255 {
                let v = fmt.decode(bits);
                if v.is_nan() {
                    continue;
                }
                assert_eq!(fmt.round(v, false), v, "{fmt:?} {bits:#x}");
                assert_eq!(fmt.encode(v), bits, "{fmt:?} {bits:#x} {v}");
            }
        }
    }

    #[test]
    fn fp8_limits_follow_the_ocp_spec() {
        assert_eq!(F8E4M3FN.max_finite(), 448.0);
        assert_eq!(F8E5M2.max_finite(), 57344.0);
        assert!(F8E4M3FN.round(1000.0, false).is_nan());
        assert_eq!(F8E4M3FN.round(1000.0, true), 448.0);
        assert_eq!(F8E5M2.round(1e6, false), f64::INFINITY);
        // 464 is halfway between 448 (even mantissa) and 480 (the NaN code): ties
        // to even keep 448; anything above overflows, as in ml_dtypes.
        assert_eq!(F8E4M3FN.round(464.0, false), 448.0);
        assert!(F8E4M3FN.round(464.5, false).is_nan());
        // E5M2: 61440 is halfway between 57344 (odd mantissa) and 65536: overflows.
        assert_eq!(F8E5M2.round(61439.0, false), 57344.0);
        assert_eq!(F8E5M2.round(61440.0, false), f64::INFINITY);
        // Ties to even: 1.0625 lies between 1.0 and 1.125 (E4M3 step 0.125).
        assert_eq!(F8E4M3FN.round(1.0625, false), 1.0);
        assert_eq!(F8E4M3FN.round(1.1875, false), 1.25);
        // Smallest subnormal of E4M3FN is 2^-9.
        assert_eq!(F8E4M3FN.decode(1), 2f64.powi(-9));
    }
}
