//! Number formats shared by the simulator, the kernel tests and the compiler:
//! OCP FP8 (`f8E4M3FN`, `f8E5M2`) with a power-of-two scale, rounding to
//! nearest even and saturating as ONNX `Cast(saturate=1)` does (a value
//! beyond the largest finite one, infinities included, becomes that value).

/// An FP8 element format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum F8Format {
    /// 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; max 448.
    E4M3FN,
    /// 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like; max 57344.
    E5M2,
}

impl F8Format {
    fn params(self) -> (i32, i32, f64) {
        match self {
            F8Format::E4M3FN => (3, 7, 448.0),
            F8Format::E5M2 => (2, 15, 57344.0),
        }
    }
    /// The canonical NaN encoding (positive).
    pub fn nan(self) -> u8 {
        match self {
            F8Format::E4M3FN => 0x7f,
            F8Format::E5M2 => 0x7e,
        }
    }
    /// Largest finite value.
    pub fn max(self) -> f64 {
        self.params().2
    }
}

/// Converts `x * 2^-scale` to FP8: round to nearest even, saturating (an
/// infinity becomes the largest finite value of its sign); NaN keeps its
/// sign (0x7f/0xff for E4M3FN, 0x7e/0xfe for E5M2), as the reference's
/// `Fp8Format::encode_scaled` and ml_dtypes do.
pub fn f8_from_f64(x: f64, scale: i32, fmt: F8Format) -> u8 {
    let (m, bias, max) = fmt.params();
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    if x.is_nan() {
        return sign | fmt.nan();
    }
    // Scales beyond any format's range saturate or flush anyway.
    let scale = scale.clamp(-4096, 4096);
    let a = (x.abs() * 2f64.powi(-scale)).min(f64::MAX);
    if a == 0.0 {
        return sign;
    }
    let emin = 1 - bias;
    let e = (a.log2().floor() as i32).max(emin);
    // Correct floor(log2) for values where log2 rounds across an integer.
    let e = if a < 2f64.powi(e) && e > emin {
        e - 1
    } else {
        e
    };
    let e = if a >= 2f64.powi(e + 1) { e + 1 } else { e };
    let quantum = 2f64.powi(e - m);
    let v = (a / quantum).round_ties_even() * quantum;
    let v = if v > max || a.is_infinite() { max } else { v };
    if v == 0.0 {
        return sign;
    }
    let code = if v < 2f64.powi(emin) {
        (v / 2f64.powi(emin - m)) as u32
    } else {
        let e2 = v.log2().floor() as i32;
        let e2 = if v < 2f64.powi(e2) {
            e2 - 1
        } else if v >= 2f64.powi(e2 + 1) {
            e2 + 1
        } else {
            e2
        };
        let mant = (v / 2f64.powi(e2 - m)) as u32 - (1 << m);
        (((e2 + bias) as u32) << m) | mant
    };
    sign | code as u8
}

/// Decodes FP8 to f64 (exact), multiplied by `2^scale`.
pub fn f8_to_f64(q: u8, scale: i32, fmt: F8Format) -> f64 {
    let (m, bias, _) = fmt.params();
    let sign = if q & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((q & 0x7f) >> m) as i32;
    let mant = (q & ((1 << m) - 1)) as i32;
    let all_ones = (1 << (7 - m)) - 1;
    match fmt {
        F8Format::E4M3FN if e == all_ones && mant == (1 << m) - 1 => return f64::NAN,
        F8Format::E5M2 if e == all_ones => {
            return if mant == 0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        _ => {}
    }
    let v = if e == 0 {
        mant as f64 * 2f64.powi(1 - bias - m)
    } else {
        (mant + (1 << m)) as f64 * 2f64.powi(e - bias - m)
    };
    sign * v * 2f64.powi(scale.clamp(-4096, 4096))
}

/// Table of the 256 FP8 values of a format (scale 0) as f32.
pub fn f8_table(fmt: F8Format) -> [f32; 256] {
    let mut t = [0f32; 256];
    for (i, v) in t.iter_mut().enumerate() {
        *v = f8_to_f64(i as u8, 0, fmt) as f32;
    }
    t
}

/// f32 -> f16 bits, round to nearest even (overflow to infinity, NaN kept
/// quiet). Written out (rather than calling `half`) so the simulator's hot
/// loops inline it; tested against `half` below.
#[inline]
pub fn f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let abs = b & 0x7fff_ffff;
    if abs >= 0x7f80_0000 {
        // Infinity or NaN (keep a quiet NaN with the top mantissa bits).
        return sign
            | if abs > 0x7f80_0000 {
                0x7e00 | ((abs >> 13) & 0x3ff) as u16
            } else {
                0x7c00
            };
    }
    if abs >= 0x4780_0000 {
        // >= 65536: overflows (65520 and up round to infinity too, below).
        return sign | 0x7c00;
    }
    if abs < 0x3880_0000 {
        // Below the smallest normal f16 (2^-14): a subnormal or zero.
        if abs < 0x3300_0000 {
            // Below half the smallest subnormal (2^-25): rounds to zero,
            // except exactly 2^-25 which ties to even (zero) as well.
            return sign;
        }
        let e = abs >> 23;
        let m = (abs & 0x7f_ffff) | 0x80_0000;
        // Bits to drop so that one unit is 2^-24, the f16 subnormal step.
        let drop = 126 - e;
        let q = m >> drop;
        let rem = m & ((1 << drop) - 1);
        let half = 1 << (drop - 1);
        let q = if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        };
        return sign | q as u16;
    }
    // Normal: rebias the exponent and round the mantissa to 10 bits.
    let v = abs - 0x3800_0000; // exponent bias 127 -> 15
    let q = v >> 13;
    let rem = v & 0x1fff;
    let q = if rem > 0x1000 || (rem == 0x1000 && q & 1 == 1) {
        q + 1
    } else {
        q
    };
    sign | q as u16
}

/// f16 bits -> f32 (exact).
#[inline]
pub fn f16_value(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let exp = (h >> 10) & 0x1f;
    let man = h & 0x3ff;
    let bits = if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else if exp != 0 {
        sign | ((exp + 112) << 23) | (man << 13)
    } else {
        let v = man as f32 * (1.0 / 16_777_216.0);
        return if sign != 0 { -v } else { v };
    };
    f32::from_bits(bits)
}

/// f32 -> bf16 bits, round to nearest even.
#[inline]
pub fn bf16_bits(x: f32) -> u16 {
    half::bf16::from_f32(x).to_bits()
}

/// bf16 bits -> f32 (exact).
#[inline]
pub fn bf16_value(b: u16) -> f32 {
    half::bf16::from_bits(b).to_f32()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e4m3_known_values() {
        let f = F8Format::E4M3FN;
        assert_eq!(f8_from_f64(1.0, 0, f), 0x38);
        assert_eq!(f8_from_f64(448.0, 0, f), 0x7e);
        assert_eq!(f8_from_f64(1e6, 0, f), 0x7e);
        assert_eq!(f8_from_f64(f64::INFINITY, 0, f), 0x7e);
        assert_eq!(f8_from_f64(-1e6, 0, f), 0xfe);
        assert_eq!(f8_from_f64(f64::NAN, 0, f), 0x7f);
        assert_eq!(f8_from_f64(-f64::NAN, 0, f), 0xff);
        assert_eq!(f8_from_f64(f64::NEG_INFINITY, 0, f), 0xfe);
        // Smallest subnormal 2^-9; half of it rounds to even (zero).
        assert_eq!(f8_from_f64(2f64.powi(-9), 0, f), 0x01);
        assert_eq!(f8_from_f64(2f64.powi(-10), 0, f), 0x00);
        // 1.0625 is halfway between 1.0 and 1.125: ties to even -> 1.0.
        assert_eq!(f8_from_f64(1.0625, 0, f), 0x38);
        assert_eq!(f8_from_f64(1.1875, 0, f), 0x3a);
        // Scale: x = q * 2^scale.
        assert_eq!(f8_from_f64(4.0, 2, f), 0x38);
        assert_eq!(f8_to_f64(0x38, 2, f), 4.0);
    }

    #[test]
    fn e5m2_known_values() {
        let f = F8Format::E5M2;
        assert_eq!(f8_from_f64(1.0, 0, f), 0x3c);
        assert_eq!(f8_from_f64(57344.0, 0, f), 0x7b);
        assert_eq!(f8_from_f64(1e9, 0, f), 0x7b);
        assert_eq!(f8_to_f64(0x7c, 0, f), f64::INFINITY);
        assert_eq!(f8_from_f64(f64::INFINITY, 0, f), 0x7b);
        assert_eq!(f8_from_f64(f64::NEG_INFINITY, 0, f), 0xfb);
        assert_eq!(f8_from_f64(f64::NAN, 0, f), 0x7e);
        assert_eq!(f8_from_f64(-f64::NAN, 0, f), 0xfe);
        assert_eq!(f8_from_f64(2f64.powi(-16), 0, f), 0x01);
    }

    /// The inlined f16 conversions agree with `half` everywhere.
    #[test]
    fn f16_conversions_match_half() {
        for h in 0..=u16::MAX {
            let a = f16_value(h);
            let b = half::f16::from_bits(h).to_f32();
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{h:#x}"
            );
        }
        let mut x = 0x1234_5678u32;
        let check = |f: f32| {
            let a = f16_bits(f);
            let b = half::f16::from_f32(f).to_bits();
            assert!(
                a == b || (f.is_nan() && a & 0x7c00 == 0x7c00 && a & 0x3ff != 0),
                "{f:e} ({:#x}): {a:#x} vs {b:#x}",
                f.to_bits()
            );
        };
        for _ in 0..2_000_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            check(f32::from_bits(x));
            // Values near the f16 range, where rounding matters most.
            check(f32::from_bits(0x3300_0000 + x % 0x1500_0000));
        }
        for b in [
            0x3300_0000u32,
            0x3300_0001,
            0x3380_0000,
            0x387f_ffff,
            0x3880_0000,
            0x477f_efff,
            0x477f_f000,
            0x4780_0000,
        ] {
            check(f32::from_bits(b));
            check(-f32::from_bits(b));
        }
    }

    /// Every finite code decodes and re-encodes to itself.
    #[test]
    fn every_code_round_trips() {
        for fmt in [F8Format::E4M3FN, F8Format::E5M2] {
            for q in 0..=255u8 {
                let v = f8_to_f64(q, 0, fmt);
                if v.is_finite() {
                    let back = f8_from_f64(v, 0, fmt);
                    if v == 0.0 {
                        assert_eq!(back & 0x7f, 0);
                    } else {
                        assert_eq!(back, q, "{fmt:?} {q:#x} {v}");
                    }
                }
            }
        }
    }
}
