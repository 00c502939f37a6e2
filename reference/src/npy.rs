//! `.npy` (NumPy array file) reading and writing.
//!
//! Supported descriptors: `<f4`, `<f2`, `<f8` (read/written at f32
//! precision), `<i1`..`<i8`, `<u1`..`<u8`, `|b1`, either byte order, C or
//! Fortran order. NumPy has no bf16/FP8 dtypes, so this crate's convention
//! is a one-field structured dtype whose field name is the element type
//! and whose field holds the raw bits:
//! `[('bf16', '<u2')]`, `[('f8E4M3FN', '|u1')]`, `[('f8E5M2', '|u1')]`;
//! the other narrow ONNX types follow the same pattern (`f8E4M3FNUZ`,
//! `f8E5M2FNUZ`, `f4E2M1FN`, `f8E8M0FNU` as `|u1` codes, one per byte;
//! `i4`/`i2` as `|i1`, `ui4`/`ui2` as `|u1`, one value per byte);
//! an FP8 tensor with a non-zero scale `s` uses the field name
//! `'f8E4M3FN*2^s'` (e.g. `'f8E5M2*2^-3'`). NumPy loads such files as
//! structured arrays (`a['bf16']` gives the bits).

use std::path::Path;

use crate::dtype::ElementType;
use crate::error::EvalError;
use crate::tensor::{Tensor, TensorData};

/// Error reading or writing a `.npy` file.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("not a valid .npy file: {0}")]
    Format(String),
    #[error("unsupported .npy dtype `{0}`")]
    UnsupportedDtype(String),
    #[error("{0}")]
    Tensor(#[from] EvalError),
}

const MAGIC: &[u8] = b"\x93NUMPY";

/// Read a `.npy` file.
pub fn read_npy(path: impl AsRef<Path>) -> Result<Tensor, NpyError> {
    let p = path.as_ref();
    let bytes = std::fs::read(p).map_err(|source| NpyError::Io {
        path: p.display().to_string(),
        source,
    })?;
    parse_npy(&bytes)
}

/// Write a `.npy` file (atomically: the old file or the complete new one).
pub fn write_npy(path: impl AsRef<Path>, t: &Tensor) -> Result<(), NpyError> {
    let p = path.as_ref();
    ipu_files::write_atomic(p, to_npy_bytes(t)).map_err(|source| NpyError::Io {
        path: p.display().to_string(),
        source,
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Float,
    Int,
    Uint,
    Bool,
    Bits(ElementType, i32),
}

struct Descr {
    kind: Kind,
    size: usize,
    big_endian: bool,
}

fn fmt_err(m: impl Into<String>) -> NpyError {
    NpyError::Format(m.into())
}

/// Value of `key` in the header dict, as raw text up to the matching
/// close bracket / quote / comma.
fn header_value<'a>(header: &'a str, key: &str) -> Result<&'a str, NpyError> {
    let pat_sq = format!("'{key}'");
    let pat_dq = format!("\"{key}\"");
    let start = header
        .find(&pat_sq)
        .map(|i| i + pat_sq.len())
        .or_else(|| header.find(&pat_dq).map(|i| i + pat_dq.len()))
        .ok_or_else(|| fmt_err(format!("header has no '{key}' key")))?;
    let rest = header[start..].trim_start();
    let rest = rest
        .strip_prefix(':')
        .ok_or_else(|| fmt_err(format!("malformed header near '{key}'")))?
        .trim_start();
    // Find the end of the value: balanced brackets, quotes respected.
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, c) in rest.char_indices() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '(' | '[' => depth += 1,
                ')' | ']' => {
                    depth -= 1;
                    if depth < 0 {
                        return Ok(rest[..i].trim());
                    }
                }
                ',' | '}' if depth == 0 => return Ok(rest[..i].trim()),
                _ => {}
            },
        }
    }
    Err(fmt_err(format!("unterminated value for '{key}'")))
}

/// Checks that the header is one dict with exactly the keys `descr`,
/// `fortran_order` and `shape`, each once. numpy refuses other keys but
/// takes the last of two equal ones; a reader that took the first would see
/// another array than numpy does, so a repeated key is refused.
fn check_header_keys(header: &str) -> Result<(), NpyError> {
    let body = header
        .trim_end_matches(['\n', ' ', '\0'])
        .trim_start()
        .strip_prefix('{')
        .and_then(|r| r.trim_end().strip_suffix('}'))
        .ok_or_else(|| fmt_err("header is not a dict"))?;
    let mut keys: Vec<&str> = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, None::<usize>);
    let mut expect_key = true;
    for (i, c) in body.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
                if let Some(st) = start.take() {
                    // A quoted string at the top level where a key belongs.
                    if body[i + 1..].trim_start().starts_with(':') {
                        keys.push(&body[st..i]);
                        expect_key = false;
                    }
                }
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                if depth == 0 && expect_key {
                    start = Some(i + 1);
                }
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => expect_key = true,
            _ => {}
        }
    }
    for k in &keys {
        if keys.iter().filter(|x| *x == k).count() > 1 {
            return Err(fmt_err(format!("header key '{k}' appears more than once")));
        }
        if !matches!(*k, "descr" | "fortran_order" | "shape") {
            return Err(fmt_err(format!("header has an unknown key '{k}'")));
        }
    }
    if keys.len() != 3 {
        return Err(fmt_err(
            "header must have exactly the keys 'descr', 'fortran_order' and 'shape'",
        ));
    }
    Ok(())
}

fn unquote(s: &str) -> Option<&str> {
    let s = s.trim();
    s.strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .or_else(|| s.strip_prefix('"').and_then(|r| r.strip_suffix('"')))
}

fn parse_simple_descr(d: &str) -> Result<Descr, NpyError> {
    let unsupported = || NpyError::UnsupportedDtype(d.to_string());
    let mut chars = d.chars();
    let order = chars.next().ok_or_else(unsupported)?;
    let big_endian = match order {
        '<' | '|' | '=' => false,
        '>' => true,
        _ => return Err(unsupported()),
    };
    let code = chars.next().ok_or_else(unsupported)?;
    let size: usize = chars.as_str().parse().map_err(|_| unsupported())?;
    let kind = match (code, size) {
        ('f', 2 | 4 | 8) => Kind::Float,
        ('i', 1 | 2 | 4 | 8) => Kind::Int,
        ('u', 1 | 2 | 4 | 8) => Kind::Uint,
        ('b', 1) => Kind::Bool,
        _ => return Err(unsupported()),
    };
    Ok(Descr {
        kind,
        size,
        big_endian,
    })
}

fn parse_descr(d: &str) -> Result<Descr, NpyError> {
    if let Some(s) = unquote(d) {
        return parse_simple_descr(s);
    }
    // Structured: [('name', '<u2')]
    let inner = d
        .trim()
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .map(str::trim)
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.trim_end().trim_end_matches(',').strip_suffix(')'))
        .ok_or_else(|| NpyError::UnsupportedDtype(d.to_string()))?;
    let mut parts = inner.splitn(2, ',');
    let name = parts.next().and_then(unquote);
    let sub = parts.next().and_then(unquote);
    let (Some(name), Some(sub)) = (name, sub) else {
        return Err(NpyError::UnsupportedDtype(d.to_string()));
    };
    let (tyname, scale) = match name.split_once("*2^") {
        Some((t, s)) => (
            t,
            s.parse::<i32>()
                .map_err(|_| NpyError::UnsupportedDtype(d.to_string()))?,
        ),
        None => (name, 0),
    };
    let ty: ElementType = tyname
        .parse()
        .map_err(|_| NpyError::UnsupportedDtype(d.to_string()))?;
    let base = parse_simple_descr(sub)?;
    let ok = match ty {
        ElementType::BF16 => base.size == 2 && scale == 0 && base.kind == Kind::Uint,
        t if t.is_fp8() => base.size == 1 && base.kind == Kind::Uint,
        ElementType::I4 | ElementType::I2 => base.size == 1 && scale == 0 && base.kind == Kind::Int,
        ElementType::U4 | ElementType::U2 => {
            base.size == 1 && scale == 0 && base.kind == Kind::Uint
        }
        _ => false,
    };
    if !ok {
        return Err(NpyError::UnsupportedDtype(d.to_string()));
    }
    Ok(Descr {
        kind: Kind::Bits(ty, scale),
        size: base.size,
        big_endian: base.big_endian,
    })
}

fn parse_shape(s: &str) -> Result<Vec<usize>, NpyError> {
    let inner = s
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| fmt_err(format!("bad shape `{s}`")))?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.trim_end_matches('L')
                .parse::<usize>()
                .map_err(|_| fmt_err(format!("bad shape `{s}`")))
        })
        .collect()
}

/// Parse the bytes of a `.npy` file.
pub fn parse_npy(bytes: &[u8]) -> Result<Tensor, NpyError> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(fmt_err("missing \\x93NUMPY magic"));
    }
    let major = bytes[6];
    let (hlen, hstart) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(fmt_err("truncated header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(fmt_err(format!("unsupported format version {v}"))),
    };
    let hend = hstart
        .checked_add(hlen)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| fmt_err("truncated header"))?;
    let header =
        std::str::from_utf8(&bytes[hstart..hend]).map_err(|_| fmt_err("header is not UTF-8"))?;
    check_header_keys(header)?;
    let descr = parse_descr(header_value(header, "descr")?)?;
    let fortran = match header_value(header, "fortran_order")? {
        "True" => true,
        "False" => false,
        v => return Err(fmt_err(format!("bad fortran_order `{v}`"))),
    };
    let shape = parse_shape(header_value(header, "shape")?)?;
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| fmt_err(format!("shape {shape:?} overflows")))?;
    // The reference holds floats as f32 and integers as i64: up to 8 bytes
    // per byte of the file, so the limit is checked before decoding.
    let stored = match descr.kind {
        Kind::Float => ElementType::F32,
        Kind::Bits(t, _) => t,
        _ => ElementType::I64,
    };
    crate::limits::check_tensor_size(".npy data", &shape, stored)?;
    let payload = &bytes[hend..];
    let need = n
        .checked_mul(descr.size)
        .ok_or_else(|| fmt_err("data size overflows"))?;
    if payload.len() < need {
        return Err(fmt_err(format!(
            "data truncated: need {need} bytes, have {}",
            payload.len()
        )));
    }
    // Stricter than numpy, which ignores what follows the data: bytes after
    // it mean the header and the file disagree (a shape cut short, two
    // files run together), so the values cannot be trusted.
    if payload.len() > need {
        return Err(fmt_err(format!(
            "{} bytes after the data: the header's shape and dtype say {need} bytes",
            payload.len() - need
        )));
    }
    let word = |i: usize| -> u64 {
        let b = &payload[i * descr.size..(i + 1) * descr.size];
        let mut v = 0u64;
        if descr.big_endian {
            for &x in b {
                v = (v << 8) | x as u64;
            }
        } else {
            for &x in b.iter().rev() {
                v = (v << 8) | x as u64;
            }
        }
        v
    };
    let sext = |v: u64| -> i64 {
        let bits = descr.size * 8;
        ((v << (64 - bits)) as i64) >> (64 - bits)
    };
    // In Fortran order the data is the C-order data of the reversed shape.
    let file_shape: Vec<usize> = if fortran {
        shape.iter().rev().copied().collect()
    } else {
        shape.clone()
    };
    let t = match descr.kind {
        Kind::Float => {
            let (ty, v): (ElementType, Vec<f32>) = match descr.size {
                2 => (
                    ElementType::F16,
                    (0..n)
                        .map(|i| half::f16::from_bits(word(i) as u16).to_f32())
                        .collect(),
                ),
                4 => (
                    ElementType::F32,
                    (0..n).map(|i| f32::from_bits(word(i) as u32)).collect(),
                ),
                _ => (
                    ElementType::F64,
                    (0..n).map(|i| f64::from_bits(word(i)) as f32).collect(),
                ),
            };
            Tensor::raw(file_shape, ty, TensorData::F32(v))
        }
        Kind::Int | Kind::Uint | Kind::Bool => {
            let ty = match (descr.kind, descr.size) {
                (Kind::Bool, _) => ElementType::I1,
                (Kind::Int, 1) => ElementType::I8,
                (Kind::Int, 2) => ElementType::I16,
                (Kind::Int, 4) => ElementType::I32,
                (Kind::Int, _) => ElementType::I64,
                (_, 1) => ElementType::U8,
                (_, 2) => ElementType::U16,
                (_, 4) => ElementType::U32,
                _ => ElementType::U64,
            };
            let v: Vec<i64> = (0..n)
                .map(|i| {
                    let w = word(i);
                    match descr.kind {
                        Kind::Int => sext(w),
                        Kind::Bool => (w != 0) as i64,
                        _ => w as i64,
                    }
                })
                .collect();
            Tensor::raw(file_shape, ty, TensorData::I64(v))
        }
        Kind::Bits(ElementType::BF16, _) => Tensor::raw(
            file_shape,
            ElementType::BF16,
            TensorData::F32(
                (0..n)
                    .map(|i| half::bf16::from_bits(word(i) as u16).to_f32())
                    .collect(),
            ),
        ),
        Kind::Bits(
            ty @ (ElementType::I4 | ElementType::I2 | ElementType::U4 | ElementType::U2),
            _,
        ) => {
            let v: Vec<i64> = payload[..n]
                .iter()
                .map(|&b| {
                    let w = if matches!(ty, ElementType::I4 | ElementType::I2) {
                        b as i8 as i64
                    } else {
                        b as i64
                    };
                    ty.wrap_int(w)
                })
                .collect();
            Tensor::raw(file_shape, ty, TensorData::I64(v))
        }
        Kind::Bits(ty, scale) => {
            let fmt = ty
                .fp8_format()
                .ok_or_else(|| NpyError::UnsupportedDtype(ty.to_string()))?;
            let codes: Vec<u8> = payload[..n].to_vec();
            Tensor::from_fp8_codes(file_shape, fmt, &codes, scale)?
        }
    };
    if fortran && t.rank() > 1 {
        let perm: Vec<usize> = (0..t.rank()).rev().collect();
        return Ok(crate::evaluate(&crate::OpKind::Transpose { perm }, &[&t])?);
    }
    Ok(t)
}

fn descr_of(t: &Tensor) -> String {
    match t.dtype() {
        ElementType::F32 => "'<f4'".into(),
        ElementType::F16 => "'<f2'".into(),
        ElementType::F64 => "'<f8'".into(),
        ElementType::BF16 => "[('bf16', '<u2')]".into(),
        ElementType::I4 | ElementType::I2 => format!("[('{}', '|i1')]", t.dtype()),
        ElementType::U4 | ElementType::U2 => format!("[('{}', '|u1')]", t.dtype()),
        ElementType::F8E4M3FN
        | ElementType::F8E5M2
        | ElementType::F8E4M3FNUZ
        | ElementType::F8E5M2FNUZ
        | ElementType::F4E2M1FN
        | ElementType::F8E8M0FNU => {
            if t.fp8_scale() == 0 {
                format!("[('{}', '|u1')]", t.dtype())
            } else {
                format!("[('{}*2^{}', '|u1')]", t.dtype(), t.fp8_scale())
            }
        }
        ElementType::I1 => "'|b1'".into(),
        ElementType::I8 => "'|i1'".into(),
        ElementType::I16 => "'<i2'".into(),
        ElementType::I32 => "'<i4'".into(),
        ElementType::I64 => "'<i8'".into(),
        ElementType::U8 => "'|u1'".into(),
        ElementType::U16 => "'<u2'".into(),
        ElementType::U32 => "'<u4'".into(),
        ElementType::U64 => "'<u8'".into(),
    }
}

/// Serialize a tensor as `.npy` bytes (format 1.0, C order).
pub fn to_npy_bytes(t: &Tensor) -> Vec<u8> {
    let shape = match t.rank() {
        0 => "()".to_string(),
        1 => format!("({},)", t.shape()[0]),
        _ => format!(
            "({})",
            t.shape()
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': {}, 'fortran_order': False, 'shape': {}, }}",
        descr_of(t),
        shape
    );
    let (version, prefix) = if header.len() + 11 < 65536 {
        (1u8, 10)
    } else {
        (2u8, 12)
    };
    let total = (prefix + header.len() + 1).div_ceil(64) * 64;
    while prefix + header.len() + 1 < total {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(total + t.numel() * t.dtype().byte_size());
    out.extend_from_slice(MAGIC);
    out.push(version);
    out.push(0);
    if version == 1 {
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    match t.data() {
        TensorData::F32(v) => match t.dtype() {
            ElementType::F16 => v.iter().for_each(|&x| {
                out.extend_from_slice(&half::f16::from_f32(x).to_bits().to_le_bytes())
            }),
            ElementType::BF16 => v.iter().for_each(|&x| {
                out.extend_from_slice(&half::bf16::from_f32(x).to_bits().to_le_bytes())
            }),
            ElementType::F64 => v
                .iter()
                .for_each(|&x| out.extend_from_slice(&(x as f64).to_le_bytes())),
            d if d.is_fp8() => out.extend(t.fp8_codes().unwrap_or_default()),
            _ => v
                .iter()
                .for_each(|&x| out.extend_from_slice(&x.to_le_bytes())),
        },
        TensorData::I64(v) => {
            let size = t.dtype().byte_size();
            for &x in v {
                out.extend_from_slice(&x.to_le_bytes()[..size]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::float8::Fp8Format;

    fn round_trip(t: &Tensor) -> Tensor {
        let bytes = to_npy_bytes(t);
        assert_eq!(&bytes[..6], MAGIC);
        let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        parse_npy(&bytes).unwrap()
    }

    #[test]
    fn round_trips_all_types() {
        let vals = vec![0.0f32, 1.5, -2.25, 3.0, 100.0, -0.5];
        for ty in ElementType::ALL {
            let t = Tensor::from_f32(vec![2, 3], ty, vals.clone()).unwrap();
            let back = round_trip(&t);
            assert_eq!(back.ty(), t.ty());
            let bits = |t: &Tensor| -> Vec<u64> {
                match t.data() {
                    TensorData::F32(v) => v.iter().map(|x| x.to_bits() as u64).collect(),
                    TensorData::I64(v) => v.iter().map(|&x| x as u64).collect(),
                }
            };
            assert_eq!(bits(&back), bits(&t), "{ty}");
        }
        let s =
            Tensor::from_fp8_codes(vec![3], Fp8Format::E4M3FN, &[0x38, 0x01, 0xFE], -4).unwrap();
        assert_eq!(round_trip(&s), s);
        let scalar = Tensor::scalar_i64(-7);
        assert_eq!(round_trip(&scalar), scalar);
    }

    #[test]
    fn reads_numpy_written_header_and_fortran_order() {
        // Header as numpy writes it for np.arange(6, dtype='>i2').reshape(2, 3, order='F').
        let mut h = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }".to_string();
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[1, 0]);
        bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
        bytes.extend_from_slice(h.as_bytes());
        // Fortran order: column-major data of [[0,1,2],[3,4,5]] = 0,3,1,4,2,5.
        for v in [0i16, 3, 1, 4, 2, 5] {
            bytes.extend_from_slice(&v.to_be_bytes());
        }
        let t = parse_npy(&bytes).unwrap();
        assert_eq!(t.shape(), &[2, 3]);
        assert_eq!(t.dtype(), ElementType::I16);
        assert_eq!(t.as_i64().unwrap(), &[0, 1, 2, 3, 4, 5]);
    }

    /// The header and the file must agree: no bytes after the data, no
    /// repeated or unknown header keys (issue 32 finding 6).
    #[test]
    fn strict_about_trailing_bytes_and_header_keys() {
        let t = Tensor::from_f32(vec![2], ElementType::F32, vec![1.0, 2.0]).unwrap();
        let good = to_npy_bytes(&t);
        assert!(parse_npy(&good).is_ok());
        let mut extra = good.clone();
        extra.extend_from_slice(&[0, 0, 0, 0]);
        let e = parse_npy(&extra).unwrap_err().to_string();
        assert!(e.contains("4 bytes after the data"), "{e}");
        let with_header = |h: &str| {
            let mut b = b"\x93NUMPY\x01\x00".to_vec();
            let mut h = h.to_string();
            while (10 + h.len() + 1) % 64 != 0 {
                h.push(' ');
            }
            h.push('\n');
            b.extend_from_slice(&(h.len() as u16).to_le_bytes());
            b.extend_from_slice(h.as_bytes());
            b.extend_from_slice(&[0u8; 8]);
            b
        };
        let ok = with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }");
        assert!(parse_npy(&ok).is_ok());
        let dup =
            with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (2,), }");
        let e = parse_npy(&dup).unwrap_err().to_string();
        assert!(e.contains("'shape' appears more than once"), "{e}");
        let unknown =
            with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}");
        let e = parse_npy(&unknown).unwrap_err().to_string();
        assert!(e.contains("unknown key 'extra'"), "{e}");
        let structured =
            with_header("{'descr': [('bf16', '<u2')], 'fortran_order': False, 'shape': (4,)}");
        assert!(parse_npy(&structured).is_ok());
    }

    #[test]
    fn errors_are_values() {
        assert!(matches!(parse_npy(b"hello"), Err(NpyError::Format(_))));
        let t = Tensor::from_f32(vec![4], ElementType::F32, vec![1.0; 4]).unwrap();
        let mut b = to_npy_bytes(&t);
        b.truncate(b.len() - 1);
        assert!(parse_npy(&b).unwrap_err().to_string().contains("truncated"));
        let mut bad = to_npy_bytes(&t);
        let at = bad.windows(3).position(|w| w == b"<f4").unwrap();
        bad[at + 1] = b'c';
        assert!(matches!(
            parse_npy(&bad),
            Err(NpyError::UnsupportedDtype(_))
        ));
        for cut in 0..70 {
            let b = to_npy_bytes(&t);
            let _ = parse_npy(&b[..cut.min(b.len())]);
        }
        // Random byte mutations of valid files: errors or tensors, never panics.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let samples = [
            to_npy_bytes(&t),
            to_npy_bytes(&Tensor::from_f32(vec![2, 3], ElementType::BF16, vec![1.0; 6]).unwrap()),
            to_npy_bytes(&Tensor::from_fp8_codes(vec![3], Fp8Format::E5M2, &[1, 2, 3], 2).unwrap()),
        ];
        for base in &samples {
            for _ in 0..3000 {
                let mut b = base.clone();
                for _ in 0..4 {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let i = (state as usize) % b.len();
                    b[i] = (state >> 32) as u8;
                }
                let _ = parse_npy(&b);
            }
        }
        assert!(read_npy("/nonexistent/x.npy")
            .unwrap_err()
            .to_string()
            .contains("/nonexistent/x.npy"));
    }
}
