//! f32 to FP8 as the tile's conversions do it, by integer arithmetic on
//! the bits.
//!
//! [`ipu_isa::float::f8_from_f64`] defines the conversion (`x * 2^-scale`,
//! round to nearest even, saturating, NaN kept); it works in `f64` with
//! logarithms and powers, which made the FP8 casts of a model a large
//! share of a simulation. An f32 scaled by a power of two is exact, so the
//! same code falls out of the significand and exponent directly. The
//! reference itself still converts what this does not take (NaN,
//! infinities, scales so large that they leave `f64`'s range); a test
//! compares the two over every f16 and a sweep of f32 values and scales.

use ipu_isa::float::{f8_from_f64, F8Format};

/// The FP8 code of `x * 2^-scale` (what `f8_from_f64(x as f64, scale,
/// fmt)` returns).
#[inline]
pub(super) fn f8_code(x: f32, scale: i32, fmt: F8Format) -> u8 {
    // Mantissa bits, exponent bias, code of the largest finite value.
    let (m, bias, max_code) = match fmt {
        F8Format::E4M3FN => (3i32, 7i32, 0x7ei32),
        F8Format::E5M2 => (2, 15, 0x7b),
    };
    let b = x.to_bits();
    let sign = ((b >> 24) & 0x80) as u8;
    let abs = b & 0x7fff_ffff;
    if abs >= 0x7f80_0000 || !(-200..=200).contains(&scale) {
        return f8_from_f64(x as f64, scale, fmt);
    }
    if abs == 0 {
        return sign;
    }
    // |x| = sig * 2^(e - 150) with bit 23 of `sig` set.
    let (e, sig) = match abs >> 23 {
        0 => {
            let lz = abs.leading_zeros() - 8;
            (1 - lz as i32, abs << lz)
        }
        e => (e as i32, (abs & 0x7f_ffff) | 0x80_0000),
    };
    // floor(log2 |x * 2^-scale|), and the FP8 exponent it falls under
    // (subnormals share the least one).
    let ex = e - 127 - scale;
    let eq = ex.max(1 - bias);
    // The value in units of that exponent's quantum 2^(eq - m), rounded
    // to nearest even: `sig` shifted right by `shift` (at least 23 - m).
    let shift = 23 + eq - m - ex;
    let q = if shift >= 32 {
        0
    } else {
        let q = sig >> shift;
        let rem = sig & ((1u32 << shift) - 1);
        let half = 1u32 << (shift - 1);
        q + (rem > half || (rem == half && q & 1 == 1)) as u32
    };
    if q == 0 {
        return sign;
    }
    // Codes grow with the value: a value past the largest saturates.
    let code = ((eq + bias) << m) + q as i32 - (1 << m);
    sign | code.min(max_code) as u8
}

#[cfg(test)]
mod tests {
    use super::f8_code;
    use ipu_isa::float::{f8_from_f64, F8Format};

    fn check(x: f32, scale: i32) {
        for fmt in [F8Format::E4M3FN, F8Format::E5M2] {
            let want = f8_from_f64(x as f64, scale, fmt);
            assert_eq!(
                f8_code(x, scale, fmt),
                want,
                "{x:e} ({:#010x}) scale {scale} {fmt:?}",
                x.to_bits()
            );
        }
    }

    /// Every f16 value (what `f16 -> f8` converts, every tie included)
    /// at the scales around zero, and at the edges of the fast path's range.
    #[test]
    fn every_f16_matches_the_reference() {
        for h in 0..=u16::MAX {
            let x = half::f16::from_bits(h).to_f32();
            for scale in (-12..=12).chain([-201, -200, -150, 150, 199, 200, 201, 5000]) {
                check(x, scale);
            }
        }
    }

    /// f32 values across the whole range (subnormals, ties, the
    /// saturation edge, NaNs, infinities) at a few scales.
    #[test]
    fn f32_sweep_matches_the_reference() {
        // (A prime step: every exponent, with varied significands.)
        let mut bits: Vec<u32> = (0..=u32::MAX).step_by(65521).collect();
        bits.extend([
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7f80_0001,
        ]);
        // 448 and 57344 (the largest values), and their neighbours and
        // midpoints to the next codes.
        for v in [
            448f32,
            464.0,
            480.0,
            57344.0,
            61440.0,
            65536.0,
            2f32.powi(-9),
        ] {
            for d in -2i32..=2 {
                bits.push((v.to_bits() as i32 + d) as u32);
            }
        }
        for b in bits {
            for scale in [-150, -20, -3, -1, 0, 1, 7, 30, 150] {
                check(f32::from_bits(b), scale);
            }
        }
    }
}
