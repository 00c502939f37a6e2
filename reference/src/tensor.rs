//! The reference tensor value.

use crate::dtype::ElementType;
use crate::error::EvalError;
use crate::float8::{round_to_type, Fp8Format};

/// Storage of a tensor's elements.
///
/// Floating-point tensors (any float [`ElementType`]) hold `f32` values that
/// are already exactly representable in the element type (for FP8: the
/// logical value `fp8 * 2^scale`). Integer and boolean tensors hold `i64`
/// values already wrapped to the element type's range.
#[derive(Clone, Debug, PartialEq)]
pub enum TensorData {
    F32(Vec<f32>),
    I64(Vec<i64>),
}

impl TensorData {
    pub fn len(&self) -> usize {
        match self {
            TensorData::F32(v) => v.len(),
            TensorData::I64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Shape and element type of a tensor value, without data.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub shape: Vec<usize>,
    pub dtype: ElementType,
}

impl TensorType {
    pub fn new(shape: Vec<usize>, dtype: ElementType) -> Self {
        TensorType { shape, dtype }
    }
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
}

impl std::fmt::Display for TensorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tensor<")?;
        for d in &self.shape {
            write!(f, "{d}x")?;
        }
        write!(f, "{}>", self.dtype)
    }
}

/// A ranked tensor value: shape, element type, data (row-major).
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    shape: Vec<usize>,
    dtype: ElementType,
    fp8_scale: i32,
    data: TensorData,
}

fn check_len(shape: &[usize], len: usize) -> Result<(), EvalError> {
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= crate::ops::MAX_ELEMENTS)
        .ok_or_else(|| EvalError::Tensor(format!("shape {shape:?} is too large")))?;
    if n != len {
        return Err(EvalError::Tensor(format!(
            "shape {shape:?} needs {n} elements, got {len}"
        )));
    }
    Ok(())
}

impl Tensor {
    /// A float tensor; values are rounded to `dtype` (FP8: non-saturating).
    /// An integer `dtype` converts by truncation toward zero.
    pub fn from_f32(
        shape: Vec<usize>,
        dtype: ElementType,
        mut data: Vec<f32>,
    ) -> Result<Tensor, EvalError> {
        check_len(&shape, data.len())?;
        if dtype.is_integer() {
            let ints = data
                .iter()
                .map(|&v| dtype.wrap_int(f32_to_i64(v)))
                .collect();
            return Ok(Tensor::raw(shape, dtype, TensorData::I64(ints)));
        }
        crate::float8::round_slice(&mut data, dtype);
        Ok(Tensor::raw(shape, dtype, TensorData::F32(data)))
    }

    /// An integer tensor; values are wrapped to `dtype` (a float `dtype`
    /// converts and rounds).
    pub fn from_i64(
        shape: Vec<usize>,
        dtype: ElementType,
        data: Vec<i64>,
    ) -> Result<Tensor, EvalError> {
        check_len(&shape, data.len())?;
        if dtype.is_float() {
            let f = data
                .iter()
                .map(|&v| round_to_type(v as f32, dtype))
                .collect();
            return Ok(Tensor::raw(shape, dtype, TensorData::F32(f)));
        }
        let d = data.into_iter().map(|v| dtype.wrap_int(v)).collect();
        Ok(Tensor::raw(shape, dtype, TensorData::I64(d)))
    }

    /// A boolean (`i1`) tensor.
    pub fn from_bool(shape: Vec<usize>, data: Vec<bool>) -> Result<Tensor, EvalError> {
        check_len(&shape, data.len())?;
        Ok(Tensor::raw(
            shape,
            ElementType::I1,
            TensorData::I64(data.into_iter().map(i64::from).collect()),
        ))
    }

    /// An FP8 tensor from raw codes and a power-of-two scale
    /// (logical value = decode(code) * 2^scale).
    pub fn from_fp8_codes(
        shape: Vec<usize>,
        format: Fp8Format,
        codes: &[u8],
        scale: i32,
    ) -> Result<Tensor, EvalError> {
        check_len(&shape, codes.len())?;
        let table = format.decode_table(scale);
        let data = codes.iter().map(|&c| table[c as usize]).collect();
        let mut t = Tensor::raw(shape, format.element_type(), TensorData::F32(data));
        t.fp8_scale = scale;
        Ok(t)
    }

    /// A rank-0 `f32` tensor.
    pub fn scalar_f32(v: f32) -> Tensor {
        Tensor::raw(vec![], ElementType::F32, TensorData::F32(vec![v]))
    }

    /// A rank-0 `i64` tensor.
    pub fn scalar_i64(v: i64) -> Tensor {
        Tensor::raw(vec![], ElementType::I64, TensorData::I64(vec![v]))
    }

    /// A zero-filled tensor (callers check the size; see
    /// [`crate::ops::MAX_ELEMENTS`]).
    pub fn zeros(shape: Vec<usize>, dtype: ElementType) -> Tensor {
        let n = shape.iter().product();
        let data = if dtype.is_float() {
            TensorData::F32(vec![0.0; n])
        } else {
            TensorData::I64(vec![0; n])
        };
        Tensor::raw(shape, dtype, data)
    }

    /// Build from parts that already satisfy the invariants (values rounded
    /// to the type, storage kind matching the type, length matching shape).
    pub(crate) fn raw(shape: Vec<usize>, dtype: ElementType, data: TensorData) -> Tensor {
        debug_assert_eq!(shape.iter().product::<usize>(), data.len());
        debug_assert_eq!(dtype.is_float(), matches!(data, TensorData::F32(_)));
        Tensor {
            shape,
            dtype,
            fp8_scale: 0,
            data,
        }
    }

    pub(crate) fn with_scale(mut self, scale: i32) -> Tensor {
        self.fp8_scale = scale;
        self
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn dtype(&self) -> ElementType {
        self.dtype
    }
    /// Type (shape and element type) of this tensor.
    pub fn ty(&self) -> TensorType {
        TensorType::new(self.shape.clone(), self.dtype)
    }
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    pub fn numel(&self) -> usize {
        self.data.len()
    }
    /// Power-of-two scale of an FP8 tensor (0 for other types).
    pub fn fp8_scale(&self) -> i32 {
        self.fp8_scale
    }
    pub fn data(&self) -> &TensorData {
        &self.data
    }
    pub fn into_data(self) -> TensorData {
        self.data
    }
    /// Float storage, if this is a float tensor.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match &self.data {
            TensorData::F32(v) => Some(v),
            TensorData::I64(_) => None,
        }
    }
    /// Integer storage, if this is an integer or boolean tensor.
    pub fn as_i64(&self) -> Option<&[i64]> {
        match &self.data {
            TensorData::I64(v) => Some(v),
            TensorData::F32(_) => None,
        }
    }
    /// All values as `f32` (integers converted).
    pub fn to_f32_vec(&self) -> Vec<f32> {
        match &self.data {
            TensorData::F32(v) => v.clone(),
            TensorData::I64(v) => v.iter().map(|&x| x as f32).collect(),
        }
    }
    /// All values as `i64` (floats truncated toward zero).
    pub fn to_i64_vec(&self) -> Vec<i64> {
        match &self.data {
            TensorData::F32(v) => v.iter().map(|&x| f32_to_i64(x)).collect(),
            TensorData::I64(v) => v.clone(),
        }
    }
    /// FP8 codes of an FP8 tensor.
    pub fn fp8_codes(&self) -> Option<Vec<u8>> {
        let f = self.dtype.fp8_format()?;
        let v = self.as_f32()?;
        Some(
            v.iter()
                .map(|&x| f.encode_scaled(x, false, self.fp8_scale))
                .collect(),
        )
    }
    /// Same data, new shape (element count must match).
    pub fn reshaped(&self, shape: Vec<usize>) -> Result<Tensor, EvalError> {
        check_len(&shape, self.numel())?;
        Ok(Tensor {
            shape,
            dtype: self.dtype,
            fp8_scale: self.fp8_scale,
            data: self.data.clone(),
        })
    }
}

/// Truncate toward zero; NaN -> 0; saturates at the `i64` range.
#[inline]
pub(crate) fn f32_to_i64(v: f32) -> i64 {
    v as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_check_lengths_and_round() {
        assert!(Tensor::from_f32(vec![2, 2], ElementType::F32, vec![1.0; 3]).is_err());
        let t = Tensor::from_f32(vec![2], ElementType::BF16, vec![1.0 + 1.0 / 512.0, 3.0]).unwrap();
        assert_eq!(t.as_f32().unwrap(), &[1.0, 3.0]);
        let i = Tensor::from_i64(vec![2], ElementType::I32, vec![1 << 32, -1]).unwrap();
        assert_eq!(i.as_i64().unwrap(), &[0, -1]);
        let f = Tensor::from_f32(vec![2], ElementType::I32, vec![-2.7, 2.7]).unwrap();
        assert_eq!(f.as_i64().unwrap(), &[-2, 2]);
        assert!(Tensor::from_f32(vec![usize::MAX, 3], ElementType::F32, vec![]).is_err());
    }

    #[test]
    fn fp8_codes_round_trip_with_scale() {
        let codes: Vec<u8> = (0..=255).collect();
        let t = Tensor::from_fp8_codes(vec![256], Fp8Format::E5M2, &codes, -3).unwrap();
        let back = t.fp8_codes().unwrap();
        for (a, b) in codes.iter().zip(&back) {
            if Fp8Format::E5M2.is_nan(*a) {
                assert!(Fp8Format::E5M2.is_nan(*b));
            } else {
                assert_eq!(a, b);
            }
        }
    }
}
