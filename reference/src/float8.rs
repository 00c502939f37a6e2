//! Exact FP8 (OCP `E4M3FN`, `E5M2`), f16 and bf16 rounding.
//!
//! FP8 conversions follow the OCP 8-bit floating point specification as
//! implemented by `ml_dtypes` and ONNX's `Cast`: round to nearest, ties to
//! even, on the exact value; then
//! - `E4M3FN` (bias 7, 3 mantissa bits, no infinities, one NaN pattern per
//!   sign `S.1111.111`): a result above 448 becomes NaN (non-saturating) or
//!   ±448 (saturating); ±inf behaves like an overflow.
//! - `E5M2` (bias 15, 2 mantissa bits, IEEE-like with ±inf): a result above
//!   57344 becomes ±inf (non-saturating) or ±57344 (saturating); ±inf stays
//!   ±inf unless saturating.
//!
//! A per-tensor power-of-two scale `s` gives the logical value
//! `fp8 * 2^s`; encoding divides by `2^s` exactly before rounding.

use crate::dtype::ElementType;

/// Narrow floating-point formats: the OCP FP8 pair of the dialect
/// (`E4M3FN`, `E5M2`) plus the other ONNX narrow floats the importer
/// accepts (`E4M3FNUZ`, `E5M2FNUZ`, 4-bit `E2M1FN`, exponent-only
/// `E8M0FNU`). All round to nearest even except `E8M0FNU`, which rounds up
/// (ONNX `Cast` default `round_mode = "up"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8Format {
    /// 1 sign, 4 exponent (bias 7), 3 mantissa bits; finite + NaN only.
    E4M3FN,
    /// 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like.
    E5M2,
    /// bias 8, 3 mantissa bits; single NaN 0x80, no -0, no inf.
    E4M3FNUZ,
    /// bias 16, 2 mantissa bits; single NaN 0x80, no -0, no inf.
    E5M2FNUZ,
    /// 4-bit: 1 sign, 2 exponent (bias 1), 1 mantissa; no inf/NaN
    /// (always saturates; NaN encodes as 0b1000 like the ONNX reference).
    E2M1FN,
    /// Unsigned exponent-only `2^(code-127)`; 0xFF is NaN.
    E8M0FNU,
}

/// Exact power of two as `f64` (for `n` in the normal `f64` range).
#[inline]
fn pow2(n: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&n));
    f64::from_bits(((n + 1023) as u64) << 52)
}

impl Fp8Format {
    /// All formats.
    pub const ALL: [Fp8Format; 6] = [
        Fp8Format::E4M3FN,
        Fp8Format::E5M2,
        Fp8Format::E4M3FNUZ,
        Fp8Format::E5M2FNUZ,
        Fp8Format::E2M1FN,
        Fp8Format::E8M0FNU,
    ];

    #[inline]
    fn mant_bits(self) -> i32 {
        match self {
            Fp8Format::E4M3FN | Fp8Format::E4M3FNUZ => 3,
            Fp8Format::E5M2 | Fp8Format::E5M2FNUZ => 2,
            Fp8Format::E2M1FN => 1,
            Fp8Format::E8M0FNU => 0,
        }
    }

    #[inline]
    fn bias(self) -> i32 {
        match self {
            Fp8Format::E4M3FN => 7,
            Fp8Format::E5M2 => 15,
            Fp8Format::E4M3FNUZ => 8,
            Fp8Format::E5M2FNUZ => 16,
            Fp8Format::E2M1FN => 1,
            Fp8Format::E8M0FNU => 127,
        }
    }

    /// Width of a code in bits (8, or 4 for `E2M1FN`).
    pub fn bits(self) -> u32 {
        if self == Fp8Format::E2M1FN {
            4
        } else {
            8
        }
    }

    #[inline]
    fn sign_bit(self) -> u8 {
        match self {
            Fp8Format::E2M1FN => 0x08,
            Fp8Format::E8M0FNU => 0,
            _ => 0x80,
        }
    }

    #[inline]
    fn is_fnuz(self) -> bool {
        matches!(self, Fp8Format::E4M3FNUZ | Fp8Format::E5M2FNUZ)
    }

    /// The largest finite magnitude.
    pub fn max_finite(self) -> f32 {
        match self {
            Fp8Format::E4M3FN => 448.0,
            Fp8Format::E5M2 | Fp8Format::E5M2FNUZ => 57344.0,
            Fp8Format::E4M3FNUZ => 240.0,
            Fp8Format::E2M1FN => 6.0,
            Fp8Format::E8M0FNU => pow2(127) as f32,
        }
    }

    /// Code of the largest finite positive value.
    pub fn max_code(self) -> u8 {
        match self {
            Fp8Format::E4M3FN => 0x7E,
            Fp8Format::E5M2 => 0x7B,
            Fp8Format::E4M3FNUZ | Fp8Format::E5M2FNUZ => 0x7F,
            Fp8Format::E2M1FN => 0x07,
            Fp8Format::E8M0FNU => 0xFE,
        }
    }

    /// The canonical positive NaN code (`E2M1FN` has none: its NaN
    /// stand-in 0b1000 is returned).
    pub fn nan_code(self) -> u8 {
        match self {
            Fp8Format::E4M3FN => 0x7F,
            Fp8Format::E5M2 => 0x7E,
            Fp8Format::E4M3FNUZ | Fp8Format::E5M2FNUZ => 0x80,
            Fp8Format::E2M1FN => 0x08,
            Fp8Format::E8M0FNU => 0xFF,
        }
    }

    /// Code produced for a positive overflow when not saturating
    /// (NaN, or +inf for E5M2; E2M1FN always saturates).
    pub fn overflow_code(self) -> u8 {
        match self {
            Fp8Format::E5M2 => 0x7C,
            Fp8Format::E2M1FN => 0x07,
            f => f.nan_code(),
        }
    }

    /// The matching element type.
    pub fn element_type(self) -> ElementType {
        match self {
            Fp8Format::E4M3FN => ElementType::F8E4M3FN,
            Fp8Format::E5M2 => ElementType::F8E5M2,
            Fp8Format::E4M3FNUZ => ElementType::F8E4M3FNUZ,
            Fp8Format::E5M2FNUZ => ElementType::F8E5M2FNUZ,
            Fp8Format::E2M1FN => ElementType::F4E2M1FN,
            Fp8Format::E8M0FNU => ElementType::F8E8M0FNU,
        }
    }

    /// True if `code` encodes a NaN.
    pub fn is_nan(self, code: u8) -> bool {
        match self {
            Fp8Format::E4M3FN => code & 0x7F == 0x7F,
            Fp8Format::E5M2 => code & 0x7F > 0x7C,
            Fp8Format::E4M3FNUZ | Fp8Format::E5M2FNUZ => code == 0x80,
            Fp8Format::E2M1FN => false,
            Fp8Format::E8M0FNU => code == 0xFF,
        }
    }

    /// Decode a code to its exact value.
    pub fn decode(self, code: u8) -> f32 {
        if self == Fp8Format::E8M0FNU {
            return if code == 0xFF {
                f32::NAN
            } else {
                pow2(code as i32 - 127) as f32
            };
        }
        if self.is_nan(code) {
            return f32::NAN;
        }
        let m = self.mant_bits();
        let sb = self.sign_bit();
        let code = code & (sb | (sb - 1));
        let neg = code & sb != 0;
        let mag_bits = code & (sb - 1);
        let e = (mag_bits >> m) as i32;
        let mant = (mag_bits & ((1u8 << m) - 1)) as i32;
        let mag: f64 = if self == Fp8Format::E5M2 && e == 31 {
            f64::INFINITY // mant == 0 (NaN handled above)
        } else if e == 0 {
            mant as f64 * pow2(1 - self.bias() - m)
        } else {
            ((1 << m) + mant) as f64 * pow2(e - self.bias() - m)
        };
        let v = mag as f32;
        if neg {
            -v
        } else {
            v
        }
    }

    /// Decode with a power-of-two scale: `decode(code) * 2^scale`.
    pub fn decode_scaled(self, code: u8, scale: i32) -> f32 {
        let v = self.decode(code) as f64;
        (v * pow2(scale.clamp(-500, 500))) as f32
    }

    /// Encode `x` (rounding to nearest even; `E8M0FNU` rounds up).
    pub fn encode(self, x: f32, saturate: bool) -> u8 {
        self.encode_scaled(x, saturate, 0)
    }

    fn encode_e8m0(self, a: f64, saturate: bool) -> u8 {
        // a > 0, finite: smallest power of two >= a.
        let bits = a.to_bits();
        let mut e = ((bits >> 52) & 0x7FF) as i32 - 1023;
        if bits & ((1u64 << 52) - 1) != 0 {
            e += 1;
        }
        if e < -127 {
            0
        } else if e > 127 {
            if saturate {
                self.max_code()
            } else {
                self.nan_code()
            }
        } else {
            (e + 127) as u8
        }
    }

    /// Encode `x / 2^scale`, so that `decode_scaled(code, scale)`
    /// approximates `x`.
    pub fn encode_scaled(self, x: f32, saturate: bool, scale: i32) -> u8 {
        match self.encode_ocp_bits(x, saturate, scale) {
            Some(code) => code,
            None => self.encode_general(x, saturate, scale),
        }
    }

    /// [`Self::encode_scaled`] for every format and value, in `f64`.
    fn encode_general(self, x: f32, saturate: bool, scale: i32) -> u8 {
        let saturate = saturate || self == Fp8Format::E2M1FN;
        let sb = self.sign_bit();
        let neg = x.is_sign_negative();
        let sign = if neg && !self.is_fnuz() { sb } else { 0 };
        if x.is_nan() {
            return match self {
                Fp8Format::E4M3FN | Fp8Format::E5M2 => sign | self.nan_code(),
                f => f.nan_code(),
            };
        }
        let overflow = |sign: u8| -> u8 {
            if saturate {
                sign | self.max_code()
            } else if self.is_fnuz() || self == Fp8Format::E8M0FNU {
                self.nan_code()
            } else {
                sign | self.overflow_code()
            }
        };
        if self == Fp8Format::E8M0FNU {
            if neg && x != 0.0 {
                return self.nan_code(); // unsigned format
            }
            if x.is_infinite() {
                return overflow(0);
            }
            let a = (x as f64) * pow2((-scale).clamp(-500, 500));
            return self.encode_e8m0(a.max(f64::MIN_POSITIVE), saturate);
        }
        let sign = if neg { sb } else { 0 };
        let zero = if self.is_fnuz() { 0 } else { sign };
        if x.is_infinite() {
            return overflow(sign);
        }
        // Exact: f32 -> f64 and multiplication by a power of two.
        let a = (x as f64).abs() * pow2((-scale).clamp(-500, 500));
        if a == 0.0 {
            return zero;
        }
        let m = self.mant_bits();
        let emin = 1 - self.bias();
        let e = (((a.to_bits() >> 52) & 0x7FF) as i32 - 1023).max(emin);
        let ulp = pow2(e - m);
        let r = (a / ulp).round_ties_even();
        let v = r * ulp;
        if v > self.max_finite() as f64 {
            return overflow(sign);
        }
        if v == 0.0 {
            return zero;
        }
        if v < pow2(emin) {
            // Subnormal: mantissa counts units of 2^(emin - m).
            return sign | r as u8;
        }
        let e2 = ((v.to_bits() >> 52) & 0x7FF) as i32 - 1023;
        let mant = (v / pow2(e2 - m)) as i32 - (1 << m);
        sign | ((((e2 + self.bias()) << m) | mant) as u8)
    }

    /// [`Self::encode_scaled`] for `E4M3FN` and `E5M2` on the bits of a
    /// normal `x` (the weights a model casts), in integer arithmetic: the
    /// same round to nearest even, overflow and underflow; `None` for
    /// another format, a zero, subnormal, infinite or NaN `x`, or a scale
    /// beyond +-500, which the general path takes.
    #[inline]
    fn encode_ocp_bits(self, x: f32, saturate: bool, scale: i32) -> Option<u8> {
        // (mantissa bits, bias, the largest exponent field, whether its
        // all-ones mantissa is NaN rather than a finite value)
        let (m, bias, ef_max, top_nan) = match self {
            Fp8Format::E4M3FN => (3u32, 7i32, 15i32, true),
            Fp8Format::E5M2 => (2, 15, 30, false),
            _ => return None,
        };
        let bits = x.to_bits();
        let field = ((bits >> 23) & 0xFF) as i32;
        if field == 0 || field == 0xFF || !(-500..=500).contains(&scale) {
            return None;
        }
        let sign = if bits >> 31 != 0 { 0x80u8 } else { 0 };
        let emin = 1 - bias;
        // |x| / 2^scale = 1.M * 2^e, exactly.
        let mut e = field - 127 - scale;
        let frac = bits & 0x7F_FFFF;
        // Rounds `sig` to nearest even after dropping its low `sh` bits.
        let round = |sig: u32, sh: u32| -> u32 {
            let q = sig >> sh;
            let rem = sig & ((1u32 << sh) - 1);
            let half = 1u32 << (sh - 1);
            q + u32::from(rem > half || (rem == half && q & 1 == 1))
        };
        if e < emin {
            // Subnormal: units of 2^(emin - m); 1 << m is the smallest normal,
            // whose code is the same number.
            let sh = (23 - m as i32 + (emin - e)) as u32;
            if sh > 25 {
                // Below half the smallest subnormal: zero, with the sign.
                return Some(sign);
            }
            let r = round(frac | 0x80_0000, sh);
            return Some(sign | r as u8);
        }
        let mut q = round(frac, 23 - m);
        if q == 1 << m {
            q = 0;
            e += 1;
        }
        let ef = e + bias;
        let over = ef > ef_max || (top_nan && ef == ef_max && q == (1 << m) - 1);
        if over {
            return Some(
                sign | if saturate {
                    self.max_code()
                } else {
                    self.overflow_code()
                },
            );
        }
        Some(sign | ((ef as u32) << m | q) as u8)
    }

    /// `decode_scaled` of every code: a table to look codes up in.
    pub fn decode_table(self, scale: i32) -> [f32; 256] {
        std::array::from_fn(|c| self.decode_scaled(c as u8, scale))
    }

    /// Round `x` to the nearest value representable as `code * 2^scale`.
    #[inline]
    pub fn round(self, x: f32, saturate: bool, scale: i32) -> f32 {
        self.decode_scaled(self.encode_scaled(x, saturate, scale), scale)
    }
}

/// Round an `f32` to the given element type (floats: nearest even; FP8
/// non-saturating with scale 0; integer types: unchanged).
#[inline]
pub fn round_to_type(x: f32, ty: ElementType) -> f32 {
    match ty {
        ElementType::F16 => half::f16::from_f32(x).to_f32(),
        ElementType::BF16 => half::bf16::from_f32(x).to_f32(),
        t => match t.fp8_format() {
            Some(f) => f.round(x, false, 0),
            None => x,
        },
    }
}

/// Round every element of a slice in place (see [`round_to_type`]).
pub fn round_slice(data: &mut [f32], ty: ElementType) {
    match ty {
        ElementType::F32 | ElementType::F64 => {}
        _ => data.iter_mut().for_each(|v| *v = round_to_type(*v, ty)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMATS: [Fp8Format; 5] = [
        Fp8Format::E4M3FN,
        Fp8Format::E5M2,
        Fp8Format::E4M3FNUZ,
        Fp8Format::E5M2FNUZ,
        Fp8Format::E2M1FN,
    ];

    fn codes(f: Fp8Format) -> std::ops::RangeInclusive<u8> {
        0..=(((1u16 << f.bits()) - 1) as u8)
    }

    #[test]
    fn known_values() {
        let f = Fp8Format::E4M3FN;
        assert_eq!(f.decode(0x38), 1.0);
        assert_eq!(f.decode(0x7E), 448.0);
        assert_eq!(f.decode(0xFE), -448.0);
        assert_eq!(f.decode(0x08), 2f32.powi(-6));
        assert_eq!(f.decode(0x01), 2f32.powi(-9));
        assert_eq!(f.decode(0x07), 7.0 * 2f32.powi(-9));
        assert!(f.decode(0x7F).is_nan() && f.decode(0xFF).is_nan());
        assert_eq!(f.decode(0x78), 256.0);
        let g = Fp8Format::E5M2;
        assert_eq!(g.decode(0x3C), 1.0);
        assert_eq!(g.decode(0x7B), 57344.0);
        assert_eq!(g.decode(0x7C), f32::INFINITY);
        assert_eq!(g.decode(0xFC), f32::NEG_INFINITY);
        assert!(g.decode(0x7D).is_nan() && g.decode(0x7E).is_nan() && g.decode(0x7F).is_nan());
        assert_eq!(g.decode(0x04), 2f32.powi(-14));
        assert_eq!(g.decode(0x01), 2f32.powi(-16));
        assert_eq!(g.decode(0x80).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn all_codes_round_trip() {
        for f in FORMATS {
            let mut nans = 0;
            for code in codes(f) {
                let v = f.decode(code);
                if v.is_nan() {
                    nans += 1;
                    assert!(f.is_nan(code));
                    assert!(f.is_nan(f.encode(v, false)));
                    continue;
                }
                assert!(!f.is_nan(code));
                for sat in [false, true] {
                    if v.is_infinite() && sat {
                        assert_eq!(f.encode(v, sat), (code & f.sign_bit()) | f.max_code());
                    } else {
                        assert_eq!(f.encode(v, sat), code, "{f:?} code {code:#x} value {v}");
                    }
                }
                // Every scale round-trips too.
                for s in [-7, -1, 1, 5] {
                    let scaled = f.decode_scaled(code, s);
                    if v.is_finite() {
                        assert_eq!(scaled, v * 2f32.powi(s));
                        assert_eq!(f.encode_scaled(scaled, false, s), code);
                    }
                }
            }
            let want = match f {
                Fp8Format::E4M3FN => 2,
                Fp8Format::E5M2 => 6,
                Fp8Format::E2M1FN => 0,
                _ => 1,
            };
            assert_eq!(nans, want, "{f:?}");
        }
    }

    /// Between each pair of adjacent finite codes, the midpoint rounds to the
    /// code with an even mantissa, and values just off the midpoint go to the
    /// nearer one.
    #[test]
    fn midpoints_round_to_even() {
        for f in FORMATS {
            let sb = f.sign_bit();
            let mut finite: Vec<(f32, u8)> = (0u8..sb)
                .map(|c| (f.decode(c), c))
                .filter(|(v, _)| v.is_finite())
                .collect();
            finite.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
            for w in finite.windows(2) {
                let ((lo, lc), (hi, hc)) = (w[0], w[1]);
                let mid = (lo + hi) / 2.0; // exact in f32
                let even = if lc & 1 == 0 { lc } else { hc };
                for (sign, s) in [(1.0f32, 0u8), (-1.0, sb)] {
                    // FNUZ has no negative zero: values rounding to 0 give 0x00.
                    let with = |c: u8| if c == 0 && f.is_fnuz() { 0 } else { s | c };
                    assert_eq!(f.encode(sign * mid, false), with(even), "{f:?} mid {mid}");
                    let below = f32::from_bits(mid.to_bits() - 1);
                    let above = f32::from_bits(mid.to_bits() + 1);
                    assert_eq!(f.encode(sign * below, false), with(lc));
                    assert_eq!(f.encode(sign * above, false), with(hc));
                }
            }
        }
    }

    /// The integer path of `E4M3FN` and `E5M2` gives the general path's
    /// code: every exponent the scales reach, each with mantissas at and
    /// around every rounding boundary and a spread of others, both signs,
    /// saturating or not.
    #[test]
    fn integer_path_matches_general() {
        let mut checked = 0u64;
        for f in [Fp8Format::E4M3FN, Fp8Format::E5M2] {
            let m = f.mant_bits() as u32;
            for scale in [-500, -40, -9, -3, -1, 0, 1, 2, 7, 12, 40, 500] {
                for field in 1u32..255 {
                    // Boundaries sit at multiples of 2^(23 - m - k) for the
                    // normal (k = 0) and each subnormal shift (k > 0).
                    let mut fracs: Vec<u32> = (0..=8u32)
                        .flat_map(|k| {
                            let sh = (23 - m + k).min(23);
                            let unit = 1u32 << sh;
                            (0..(1u32 << (23 - sh)).min(64)).flat_map(move |i| {
                                let b = i * unit + unit / 2;
                                [b.wrapping_sub(1), b, b + 1, i * unit]
                            })
                        })
                        .collect();
                    fracs.extend((0..64u32).map(|i| i.wrapping_mul(0x9E37_79B9) >> 9));
                    fracs.push(0x7F_FFFF);
                    for frac in fracs {
                        let frac = frac & 0x7F_FFFF;
                        for sign in [0u32, 1] {
                            let x = f32::from_bits(sign << 31 | field << 23 | frac);
                            for sat in [false, true] {
                                let general = f.encode_general(x, sat, scale);
                                // A normal x within the scales: the integer path takes it.
                                assert_eq!(
                                    f.encode_ocp_bits(x, sat, scale),
                                    Some(general),
                                    "{f:?} x {x:e} ({:#x}) scale {scale} saturate {sat}",
                                    x.to_bits()
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 1_000_000, "{checked}");
    }

    #[test]
    fn decode_table_is_decode_scaled() {
        for f in Fp8Format::ALL {
            for s in [-12, 0, 3] {
                let t = f.decode_table(s);
                for c in 0..=255u8 {
                    let (a, b) = (t[c as usize], f.decode_scaled(c, s));
                    assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
                }
            }
        }
    }

    #[test]
    fn overflow_and_saturation() {
        let f = Fp8Format::E4M3FN;
        // 464 is the midpoint between 448 and the (absent) 480: ties to even 448.
        assert_eq!(f.encode(464.0, false), 0x7E);
        assert_eq!(f.encode(464.1, false), 0x7F);
        assert_eq!(f.encode(464.1, true), 0x7E);
        assert_eq!(f.encode(-1e9, false), 0xFF);
        assert_eq!(f.encode(-1e9, true), 0xFE);
        assert_eq!(f.encode(f32::INFINITY, false), 0x7F);
        assert_eq!(f.encode(f32::NEG_INFINITY, true), 0xFE);
        let g = Fp8Format::E5M2;
        // 61440 is the midpoint between 57344 and 65536 (odd mantissa below): inf.
        assert_eq!(g.encode(61439.0, false), 0x7B);
        assert_eq!(g.encode(61440.0, false), 0x7C);
        assert_eq!(g.encode(61440.0, true), 0x7B);
        assert_eq!(g.encode(-1e9, false), 0xFC);
        assert_eq!(g.encode(f32::INFINITY, false), 0x7C);
        assert_eq!(g.encode(f32::INFINITY, true), 0x7B);
        assert_eq!(g.encode(f32::NAN, true), 0x7E);
    }

    #[test]
    fn other_onnx_formats() {
        let f = Fp8Format::E4M3FNUZ;
        assert_eq!(f.decode(0x7F), 240.0);
        assert!(f.decode(0x80).is_nan());
        assert_eq!(f.encode(-1e-7, false), 0x00);
        assert_eq!(f.encode(f32::INFINITY, true), 0x7F);
        assert_eq!(f.encode(f32::INFINITY, false), 0x80);
        assert_eq!(f.encode(-1e6, true), 0xFF);
        assert_eq!(f.encode(0.5, false), 0x38);
        assert_eq!(f.encode(1.0, false), 0x40);
        let g = Fp8Format::E5M2FNUZ;
        assert_eq!(g.decode(0x40), 1.0);
        assert_eq!(g.encode(f32::NAN, false), 0x80);
        let h = Fp8Format::E2M1FN;
        let vals: Vec<f32> = (0..8).map(|c| h.decode(c)).collect();
        assert_eq!(vals, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(h.encode(-3.5, false), 0x0E); // tie to even: -4
        assert_eq!(h.encode(1e6, false), 0x07);
        assert_eq!(h.encode(f32::NEG_INFINITY, false), 0x0F);
        let e = Fp8Format::E8M0FNU;
        assert_eq!(e.decode(127), 1.0);
        assert_eq!(e.encode(1.1, true), 128); // rounds up to 2
        assert_eq!(e.encode(0.25, true), 125);
        assert_eq!(e.encode(0.0, true), 0);
        assert!(e.decode(0xFF).is_nan());
        for c in 0..0xFFu8 {
            assert_eq!(e.encode(e.decode(c), true), c);
        }
    }

    #[test]
    fn underflow() {
        let f = Fp8Format::E4M3FN;
        let tiny = 2f32.powi(-9);
        assert_eq!(f.encode(tiny / 2.0, false), 0x00); // tie to even zero
        assert_eq!(f.encode(tiny * 0.51, false), 0x01);
        assert_eq!(f.encode(-tiny / 4.0, false), 0x80);
        assert_eq!(f.encode(tiny * 1.5, false), 0x02); // tie to even
        let g = Fp8Format::E5M2;
        let tiny = 2f32.powi(-16);
        assert_eq!(g.encode(tiny * 2.5, false), 0x02);
        assert_eq!(g.encode(tiny * 3.5, false), 0x04);
    }

    #[test]
    fn scaled_encoding() {
        let f = Fp8Format::E4M3FN;
        // 1000 overflows unscaled but fits with scale 2 (1000/4 = 250 -> 256).
        assert_eq!(f.encode(1000.0, false), 0x7F);
        let c = f.encode_scaled(1000.0, false, 2);
        assert_eq!(f.decode(c), 256.0);
        assert_eq!(f.decode_scaled(c, 2), 1024.0);
        assert_eq!(f.round(1000.0, false, 2), 1024.0);
        assert_eq!(f.round(0.001, false, -12), 0.0009765625);
    }

    #[test]
    fn half_types_round_to_nearest_even() {
        // 1 + 2^-11 is the midpoint between 1 and 1 + 2^-10 in f16.
        assert_eq!(round_to_type(1.0 + 2f32.powi(-11), ElementType::F16), 1.0);
        let x = 1.0 + 3.0 * 2f32.powi(-11);
        assert_eq!(
            round_to_type(x, ElementType::F16),
            1.0 + 2.0 * 2f32.powi(-10)
        );
        assert_eq!(round_to_type(1.0 + 2f32.powi(-8), ElementType::BF16), 1.0);
        assert_eq!(round_to_type(70000.0, ElementType::F16), f32::INFINITY);
        assert_eq!(round_to_type(1.5, ElementType::F32), 1.5);
    }
}
