//! 8- and 16-bit integer sums, differences, negations and products that
//! may wrap, on their f32 images (see `quant.rs`).
//!
//! ONNX's integer arithmetic wraps modulo 2^n (a u8 sum of 200 and 100 is
//! 44). The image of such an op is the op on its operands' images, exact
//! while the unwrapped result stays small, reduced into the type's range:
//!
//! * `wrap(x, lo, 2^n)` = `x - 2^n * floor((x - lo) / 2^n)` for an integer
//!   `x` with |x| <= 2^22. The floor is `((x - c) / 2^n + R) - R` with
//!   `c = lo + (2^n - 1) / 2` and `R = 1.5 * 2^23`: `(x - c) / 2^n` is the
//!   floor plus a fraction strictly inside (-1/2, 1/2), never a tie, and
//!   the f32 addition of `R` rounds it to that integer. Every step is exact
//!   (`x - c` is a half-integer below 2^23, the scalings are by powers of
//!   two, the products and differences integers below 2^24).
//! * A sum, difference or negation of 8- or 16-bit values, and a product of
//!   8-bit ones, stays below 2^22 unwrapped: it is one op and a wrap.
//! * A 16-bit product can reach 2^32: each operand is split into bytes,
//!   `a = 256 * ah + al` with `al = wrap(a, 0, 256)`, and
//!   `a * b = al * bl + 256 * (ah * bl + al * bh)` modulo 2^16 (the term
//!   `2^16 * ah * bh` vanishes), the middle sum wrapped modulo 256 first;
//!   no partial result passes 2^17.

use crate::legalize::Rewriter;
use crate::quant::IntRange;
use ipu_ir::{Op, Value};
use ipu_reference::{ElementType, OpKind};

/// The largest unwrapped magnitude [`Rewriter::wrap`] takes.
const WRAP_EXACT: f64 = 4_194_304.0;
/// `1.5 * 2^23`: adding it rounds an f32 below 2^22 to an integer.
const ROUNDER: f32 = 12_582_912.0;

impl Rewriter<'_> {
    /// The image of integer op `d` (`kind` on `images`, its operands'
    /// images), whose exact result `exact` may leave its 8- or 16-bit type:
    /// the result wrapped into the type. None for wider types, a result that
    /// may be NaN, or a product too large for either form above.
    pub(crate) fn wrapped_image(
        &mut self,
        d: Op,
        kind: OpKind,
        images: &[Value],
        exact: IntRange,
    ) -> Result<Option<Value>, String> {
        let Some(ty) = self.elem(self.cx.result(d, 0)).and_then(IntRange::of_type) else {
            return Ok(None);
        };
        let span = ty.hi - ty.lo + 1.0;
        if span > 65_536.0 || exact.nan || !exact.int {
            return Ok(None);
        }
        if exact.abs_max() <= WRAP_EXACT {
            let x = self.emit(kind, images)?;
            return self.wrap(x, ty.lo, span).map(Some);
        }
        if !matches!(kind, OpKind::Mul) || span != 65_536.0 {
            return Ok(None);
        }
        // A 16-bit product by bytes.
        let (al, ah) = self.bytes(images[0])?;
        let (bl, bh) = self.bytes(images[1])?;
        let low = self.emit(OpKind::Mul, &[al, bl])?;
        let cross1 = self.emit(OpKind::Mul, &[ah, bl])?;
        let cross2 = self.emit(OpKind::Mul, &[al, bh])?;
        let cross = self.emit(OpKind::Add, &[cross1, cross2])?;
        let cross = self.wrap(cross, 0.0, 256.0)?;
        let byte = self.fill(vec![], ElementType::F32, 256.0)?;
        let high = self.emit(OpKind::Mul, &[cross, byte])?;
        let sum = self.emit(OpKind::Add, &[low, high])?;
        self.wrap(sum, ty.lo, span).map(Some)
    }

    /// `(al, ah)` with `a = 256 * ah + al`, `0 <= al < 256`, for an integer
    /// image `a` of at most 16 bits.
    fn bytes(&mut self, a: Value) -> Result<(Value, Value), String> {
        let al = self.wrap(a, 0.0, 256.0)?;
        let rest = self.emit(OpKind::Sub, &[a, al])?;
        let inv = self.fill(vec![], ElementType::F32, 1.0 / 256.0)?;
        let ah = self.emit(OpKind::Mul, &[rest, inv])?;
        Ok((al, ah))
    }

    /// Integer image `x` (|x| <= 2^22) modulo `span` (a power of two) into
    /// `[lo, lo + span)`: see the module's notes.
    fn wrap(&mut self, x: Value, lo: f64, span: f64) -> Result<Value, String> {
        let c = self.fill(vec![], ElementType::F32, (lo + (span - 1.0) / 2.0) as f32)?;
        let centred = self.emit(OpKind::Sub, &[x, c])?;
        let inv = self.fill(vec![], ElementType::F32, (1.0 / span) as f32)?;
        let scaled = self.emit(OpKind::Mul, &[centred, inv])?;
        let r = self.fill(vec![], ElementType::F32, ROUNDER)?;
        let up = self.emit(OpKind::Add, &[scaled, r])?;
        let floor = self.emit(OpKind::Sub, &[up, r])?;
        let s = self.fill(vec![], ElementType::F32, span as f32)?;
        let whole = self.emit(OpKind::Mul, &[floor, s])?;
        self.emit(OpKind::Sub, &[x, whole])
    }
}

#[cfg(test)]
mod tests {
    use super::{ROUNDER, WRAP_EXACT};

    /// [`super::Rewriter::wrap`]'s f32 operations, in its order.
    fn wrap(x: f32, lo: f32, span: f32) -> f32 {
        let centred = x - (lo + (span - 1.0) / 2.0);
        let floor = (centred * (1.0 / span) + ROUNDER) - ROUNDER;
        x - floor * span
    }

    /// The reduction is exact modulo arithmetic for every type's range and
    /// every integer up to the bound at its ends and around zero.
    #[test]
    fn wrap_is_exact_modulo() {
        let limit = WRAP_EXACT as i64;
        let xs = (-300_000..300_000)
            .chain(limit - 300_000..=limit)
            .chain(-limit..-limit + 300_000);
        for x in xs {
            for (lo, span) in [(0i64, 256i64), (-128, 256), (0, 65_536), (-32_768, 65_536)] {
                let want = (x - lo).rem_euclid(span) + lo;
                let got = wrap(x as f32, lo as f32, span as f32);
                assert_eq!(got, want as f32, "x {x}, lo {lo}, span {span}");
                assert!(got.to_bits() != (-0.0f32).to_bits(), "x {x}: -0");
            }
        }
    }
}
