//! Decoding an ONNX file into a plain graph (no protobuf types).

use std::collections::HashMap;

use ipu_reference::{ElementType, Fp8Format, Tensor};
use prost::Message;

use crate::error::OnnxError;
use crate::proto;

/// ONNX `TensorProto.DataType` values this importer knows by name.
pub fn data_type_name(dt: i32) -> &'static str {
    match dt {
        0 => "UNDEFINED",
        1 => "FLOAT",
        2 => "UINT8",
        3 => "INT8",
        4 => "UINT16",
        5 => "INT16",
        6 => "INT32",
        7 => "INT64",
        8 => "STRING",
        9 => "BOOL",
        10 => "FLOAT16",
        11 => "DOUBLE",
        12 => "UINT32",
        13 => "UINT64",
        14 => "COMPLEX64",
        15 => "COMPLEX128",
        16 => "BFLOAT16",
        17 => "FLOAT8E4M3FN",
        18 => "FLOAT8E4M3FNUZ",
        19 => "FLOAT8E5M2",
        20 => "FLOAT8E5M2FNUZ",
        21 => "UINT4",
        22 => "INT4",
        23 => "FLOAT4E2M1",
        24 => "FLOAT8E8M0",
        25 => "UINT2",
        26 => "INT2",
        _ => "unknown",
    }
}

/// Map an ONNX data type to an element type.
pub fn element_type(dt: i32) -> Option<ElementType> {
    Some(match dt {
        1 => ElementType::F32,
        2 => ElementType::U8,
        3 => ElementType::I8,
        4 => ElementType::U16,
        5 => ElementType::I16,
        6 => ElementType::I32,
        7 => ElementType::I64,
        9 => ElementType::I1,
        10 => ElementType::F16,
        11 => ElementType::F64,
        12 => ElementType::U32,
        13 => ElementType::U64,
        16 => ElementType::BF16,
        17 => ElementType::F8E4M3FN,
        18 => ElementType::F8E4M3FNUZ,
        19 => ElementType::F8E5M2,
        20 => ElementType::F8E5M2FNUZ,
        21 => ElementType::U4,
        22 => ElementType::I4,
        23 => ElementType::F4E2M1FN,
        24 => ElementType::F8E8M0FNU,
        25 => ElementType::U2,
        26 => ElementType::I2,
        _ => return None,
    })
}

/// The ONNX data type of an element type.
pub fn onnx_data_type(t: ElementType) -> i32 {
    match t {
        ElementType::F32 => 1,
        ElementType::U8 => 2,
        ElementType::I8 => 3,
        ElementType::U16 => 4,
        ElementType::I16 => 5,
        ElementType::I32 => 6,
        ElementType::I64 => 7,
        ElementType::I1 => 9,
        ElementType::F16 => 10,
        ElementType::F64 => 11,
        ElementType::U32 => 12,
        ElementType::U64 => 13,
        ElementType::BF16 => 16,
        ElementType::F8E4M3FN => 17,
        ElementType::F8E4M3FNUZ => 18,
        ElementType::F8E5M2 => 19,
        ElementType::F8E5M2FNUZ => 20,
        ElementType::U4 => 21,
        ElementType::I4 => 22,
        ElementType::F4E2M1FN => 23,
        ElementType::F8E8M0FNU => 24,
        ElementType::U2 => 25,
        ElementType::I2 => 26,
    }
}

/// One dimension of a declared value type.
#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    Known(usize),
    Symbolic(String),
    /// A `dim_value` below zero: no tensor has it.
    Negative(i64),
    Unknown,
}

impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Known(n) => write!(f, "{n}"),
            Dim::Symbolic(p) => write!(f, "`{p}`"),
            Dim::Negative(n) => write!(f, "{n}"),
            Dim::Unknown => write!(f, "unknown"),
        }
    }
}

/// Kind of a declared value's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    Tensor,
    Sequence,
    Map,
    Optional,
    SparseTensor,
    /// No type declared.
    Unknown,
}

/// A declared graph input/output.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueDecl {
    pub name: String,
    pub kind: ValueKind,
    /// ONNX data type (0 if not declared).
    pub data_type: i32,
    /// `None` if the rank is unknown.
    pub dims: Option<Vec<Dim>>,
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attribute {
    Float(f32),
    Int(i64),
    String(Vec<u8>),
    Tensor(Tensor),
    Floats(Vec<f32>),
    Ints(Vec<i64>),
    Strings(Vec<Vec<u8>>),
    /// A subgraph (`If` branches, a `Loop` body).
    Graph(Box<Graph>),
    /// A kind this importer does not decode (graph lists, sparse tensors,
    /// type protos, ...), with the ONNX attribute type number.
    Other(i32),
}

/// A graph node.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub name: String,
    pub op_type: String,
    pub domain: String,
    /// Input value names ("" = absent optional input).
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub attributes: HashMap<String, Attribute>,
}

/// A decoded graph.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Graph {
    pub name: String,
    pub nodes: Vec<Node>,
    pub initializers: Vec<(String, Tensor)>,
    pub inputs: Vec<ValueDecl>,
    pub outputs: Vec<ValueDecl>,
}

/// A decoded model.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub ir_version: i64,
    pub producer: String,
    /// Opset version per domain ("" is the default ONNX domain).
    pub opsets: HashMap<String, i64>,
    pub graph: Graph,
}

impl Model {
    /// Opset version of the default domain.
    pub fn default_opset(&self) -> i64 {
        default_opset(&self.opsets)
    }
}

/// Read and decode an `.onnx` file.
pub fn read_model(path: impl AsRef<std::path::Path>) -> Result<Model, OnnxError> {
    let p = path.as_ref();
    let bytes = std::fs::read(p).map_err(|source| OnnxError::Io {
        path: p.display().to_string(),
        source,
    })?;
    decode_model(&bytes)
}

/// Decode the bytes of an `.onnx` file.
pub fn decode_model(bytes: &[u8]) -> Result<Model, OnnxError> {
    let m = proto::ModelProto::decode(bytes)?;
    let mut opsets = HashMap::new();
    for o in &m.opset_import {
        let d = if o.domain == "ai.onnx" {
            String::new()
        } else {
            o.domain.clone()
        };
        opsets.insert(d, o.version);
    }
    let graph = m
        .graph
        .as_ref()
        .ok_or_else(|| OnnxError::Invalid("model has no graph".into()))?;
    let opset = default_opset(&opsets);
    Ok(Model {
        ir_version: m.ir_version,
        producer: m.producer_name.clone(),
        opsets,
        graph: decode_graph(graph, opset)?,
    })
}

/// Opset version of the default domain (1 when the model names none).
fn default_opset(opsets: &HashMap<String, i64>) -> i64 {
    opsets.get("").copied().unwrap_or(1)
}

fn decode_value(v: &proto::ValueInfoProto) -> ValueDecl {
    use proto::type_proto::Value as V;
    let value = v.r#type.as_ref().and_then(|t| t.value.as_ref());
    let kind = match value {
        Some(V::TensorType(_)) => ValueKind::Tensor,
        Some(V::SequenceType(_)) => ValueKind::Sequence,
        Some(V::MapType(_)) => ValueKind::Map,
        Some(V::OptionalType(_)) => ValueKind::Optional,
        Some(V::SparseTensorType(_)) => ValueKind::SparseTensor,
        None => ValueKind::Unknown,
    };
    let (data_type, dims) = match value {
        Some(V::TensorType(tt)) => (
            tt.elem_type,
            tt.shape.as_ref().map(|s| {
                s.dim
                    .iter()
                    .map(|d| match &d.value {
                        Some(proto::tensor_shape_proto::dimension::Value::DimValue(n)) => {
                            usize::try_from(*n).map_or(Dim::Negative(*n), Dim::Known)
                        }
                        Some(proto::tensor_shape_proto::dimension::Value::DimParam(p)) => {
                            Dim::Symbolic(p.clone())
                        }
                        _ => Dim::Unknown,
                    })
                    .collect()
            }),
        ),
        _ => (0, None),
    };
    ValueDecl {
        name: v.name.clone(),
        kind,
        data_type,
        dims,
    }
}

fn decode_attribute(a: &proto::AttributeProto, opset: i64) -> Result<Attribute, OnnxError> {
    use proto::attribute_proto::AttributeType as T;
    let ty = T::try_from(a.r#type).unwrap_or(T::Undefined);
    Ok(match ty {
        T::Graph => match &a.g {
            Some(g) => Attribute::Graph(Box::new(decode_graph(g, opset)?)),
            None => {
                return Err(OnnxError::Invalid(format!(
                    "attribute `{}` has no graph",
                    a.name
                )))
            }
        },
        T::Float => Attribute::Float(a.f),
        T::Int => Attribute::Int(a.i),
        T::String => Attribute::String(a.s.clone()),
        T::Tensor => match &a.t {
            Some(t) => Attribute::Tensor(decode_tensor(t)?),
            None => {
                return Err(OnnxError::Invalid(format!(
                    "attribute `{}` has no tensor",
                    a.name
                )))
            }
        },
        T::Floats => Attribute::Floats(a.floats.clone()),
        T::Ints => Attribute::Ints(a.ints.clone()),
        T::Strings => Attribute::Strings(a.strings.clone()),
        T::Undefined => {
            // IR < 0.0.2 heuristics: infer from the populated field.
            if !a.ints.is_empty() {
                Attribute::Ints(a.ints.clone())
            } else if !a.floats.is_empty() {
                Attribute::Floats(a.floats.clone())
            } else if let Some(t) = &a.t {
                Attribute::Tensor(decode_tensor(t)?)
            } else if !a.s.is_empty() {
                Attribute::String(a.s.clone())
            } else if a.f != 0.0 {
                Attribute::Float(a.f)
            } else {
                Attribute::Int(a.i)
            }
        }
        other => Attribute::Other(other as i32),
    })
}

/// The name a node is reported by: its own, or `<op type>_<index>`.
pub fn node_label(n: &proto::NodeProto, i: usize) -> String {
    if n.name.is_empty() {
        format!("{}_{i}", n.op_type)
    } else {
        n.name.clone()
    }
}

fn decode_graph(g: &proto::GraphProto, opset: i64) -> Result<Graph, OnnxError> {
    let mut nodes = Vec::with_capacity(g.node.len());
    for (i, n) in g.node.iter().enumerate() {
        let mut attributes = HashMap::new();
        for a in &n.attribute {
            if attributes
                .insert(a.name.clone(), decode_attribute(a, opset)?)
                .is_some()
            {
                return Err(OnnxError::Node {
                    op_type: n.op_type.clone(),
                    node: node_label(n, i),
                    opset,
                    message: format!("attribute `{}` is given more than once", a.name),
                });
            }
        }
        nodes.push(Node {
            name: n.name.clone(),
            op_type: n.op_type.clone(),
            domain: if n.domain == "ai.onnx" {
                String::new()
            } else {
                n.domain.clone()
            },
            inputs: n.input.clone(),
            outputs: n.output.clone(),
            attributes,
        });
    }
    let initializers = g
        .initializer
        .iter()
        .map(|t| Ok((t.name.clone(), decode_tensor(t)?)))
        .collect::<Result<Vec<_>, OnnxError>>()?;
    Ok(Graph {
        name: g.name.clone(),
        nodes,
        initializers,
        inputs: g.input.iter().map(decode_value).collect(),
        outputs: g.output.iter().map(decode_value).collect(),
    })
}

/// Why a tensor stored outside the model file is refused. External data is
/// not read at all (nothing outside the paths on the command line is
/// opened); a `location` that would leave the model's folder (absolute, or
/// with `..`), which onnxruntime refuses too, is named as such.
fn external_data_refusal(t: &proto::TensorProto) -> String {
    let location = t
        .external_data
        .iter()
        .find(|e| e.key == "location")
        .map(|e| e.value.as_str());
    match location {
        Some(loc)
            if loc.starts_with(['/', '\\'])
                || loc.split(['/', '\\']).any(|c| c == "..")
                || loc.get(1..2) == Some(":") =>
        {
            format!(
                "external data location '{}' is outside the model's folder (an absolute path, or one that climbs out with '..'): refused",
                loc.escape_debug()
            )
        }
        Some(loc) => format!(
            "external data (location '{}') is not supported: save the model with its tensors inside it",
            loc.escape_debug()
        ),
        None => "external data is not supported".into(),
    }
}

/// Convert a `TensorProto` (raw_data or typed fields) to a [`Tensor`].
pub fn decode_tensor(t: &proto::TensorProto) -> Result<Tensor, OnnxError> {
    let err = |m: String| OnnxError::Tensor {
        name: t.name.clone(),
        message: m,
    };
    if t.data_location == proto::tensor_proto::DataLocation::External as i32
        || !t.external_data.is_empty()
    {
        return Err(err(external_data_refusal(t)));
    }
    let ty = element_type(t.data_type).ok_or_else(|| {
        err(format!(
            "unsupported data type {} ({})",
            data_type_name(t.data_type),
            t.data_type
        ))
    })?;
    let mut shape = Vec::with_capacity(t.dims.len());
    for &d in &t.dims {
        if d < 0 {
            return Err(err(format!("negative dimension {d}")));
        }
        shape.push(d as usize);
    }
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| err(format!("shape {shape:?} overflows")))?;
    let tensor_err = |e: ipu_reference::EvalError| err(e.to_string());
    // Packed codes widen up to 32 times in the reference (2-bit to i64).
    ipu_reference::check_tensor_size("tensor data", &shape, ty).map_err(tensor_err)?;
    let bits = ty.bit_width();
    // Typed fields with their own representation.
    if t.raw_data.is_empty() && n > 0 {
        let check = |len: usize, field: &str| -> Result<(), OnnxError> {
            if len == n {
                Ok(())
            } else {
                Err(err(format!("{field} has {len} values, shape needs {n}")))
            }
        };
        let typed = match ty {
            ElementType::F32 => {
                check(t.float_data.len(), "float_data")?;
                Some(Tensor::from_f32(shape.clone(), ty, t.float_data.clone()))
            }
            ElementType::F64 => {
                check(t.double_data.len(), "double_data")?;
                let v = t.double_data.iter().map(|&v| v as f32).collect();
                Some(Tensor::from_f32(shape.clone(), ty, v))
            }
            ElementType::I64 => {
                check(t.int64_data.len(), "int64_data")?;
                Some(Tensor::from_i64(shape.clone(), ty, t.int64_data.clone()))
            }
            ElementType::U32 | ElementType::U64 => {
                check(t.uint64_data.len(), "uint64_data")?;
                let v = t.uint64_data.iter().map(|&v| v as i64).collect();
                Some(Tensor::from_i64(shape.clone(), ty, v))
            }
            _ => None,
        };
        if let Some(r) = typed {
            return r.map_err(tensor_err);
        }
    }
    // Everything else is a sequence of little-endian words (or packed
    // sub-byte codes), from raw_data or int32_data.
    let words: Vec<u64> = if !t.raw_data.is_empty() || n == 0 {
        let raw = &t.raw_data;
        let need = n
            .checked_mul(bits)
            .map(|b| b.div_ceil(8))
            .ok_or_else(|| err("size overflows".into()))?;
        if raw.len() != need {
            return Err(err(format!(
                "raw_data has {} bytes, {n} x {ty} needs {need}",
                raw.len()
            )));
        }
        if bits < 8 {
            unpack(raw, bits, n)
        } else {
            let size = bits / 8;
            raw.chunks_exact(size)
                .map(|c| c.iter().rev().fold(0u64, |v, &b| (v << 8) | b as u64))
                .collect()
        }
    } else if bits < 8 {
        let per = 8 / bits;
        let need = n.div_ceil(per);
        if t.int32_data.len() != need {
            return Err(err(format!(
                "int32_data has {} values, {n} x {ty} needs {need}",
                t.int32_data.len()
            )));
        }
        let bytes: Vec<u8> = t.int32_data.iter().map(|&v| v as u8).collect();
        unpack(&bytes, bits, n)
    } else {
        if t.int32_data.len() != n {
            return Err(err(format!(
                "int32_data has {} values, shape needs {n}",
                t.int32_data.len()
            )));
        }
        t.int32_data.iter().map(|&v| v as u32 as u64).collect()
    };
    let r = match ty {
        ElementType::F32 => {
            let v = words.iter().map(|&w| f32::from_bits(w as u32)).collect();
            Tensor::from_f32(shape, ty, v)
        }
        ElementType::F64 => {
            let v = words.iter().map(|&w| f64::from_bits(w) as f32).collect();
            Tensor::from_f32(shape, ty, v)
        }
        ElementType::F16 => {
            let v = words
                .iter()
                .map(|&w| half::f16::from_bits(w as u16).to_f32())
                .collect();
            Tensor::from_f32(shape, ty, v)
        }
        ElementType::BF16 => {
            let v = words
                .iter()
                .map(|&w| half::bf16::from_bits(w as u16).to_f32())
                .collect();
            Tensor::from_f32(shape, ty, v)
        }
        t if t.is_fp8() => {
            let codes: Vec<u8> = words.iter().map(|&w| w as u8).collect();
            let fmt = t.fp8_format().unwrap_or(Fp8Format::E4M3FN);
            Tensor::from_fp8_codes(shape, fmt, &codes, 0)
        }
        _ => {
            let signed = matches!(
                ty,
                ElementType::I2
                    | ElementType::I4
                    | ElementType::I8
                    | ElementType::I16
                    | ElementType::I32
                    | ElementType::I64
            );
            let w = bits.max(1);
            let v = words
                .iter()
                .map(|&x| {
                    if signed && w < 64 {
                        ((x << (64 - w)) as i64) >> (64 - w)
                    } else {
                        x as i64
                    }
                })
                .collect();
            Tensor::from_i64(shape, ty, v)
        }
    };
    r.map_err(tensor_err)
}

/// Unpack `n` codes of `bits` (< 8) bits each, LSB first within a byte.
fn unpack(bytes: &[u8], bits: usize, n: usize) -> Vec<u64> {
    let mask = (1u16 << bits) as u8 - 1;
    (0..n)
        .map(|i| {
            let bit = i * bits;
            ((bytes[bit / 8] >> (bit % 8)) & mask) as u64
        })
        .collect()
}

/// The `ValueInfoProto` declaring a graph input or output `name` of `t`'s
/// element type and static shape (for tests and tools that write models).
pub fn encode_value_info(name: &str, t: &Tensor) -> proto::ValueInfoProto {
    use proto::tensor_shape_proto::{dimension::Value, Dimension};
    proto::ValueInfoProto {
        name: name.into(),
        r#type: Some(proto::TypeProto {
            value: Some(proto::type_proto::Value::TensorType(
                proto::type_proto::Tensor {
                    elem_type: onnx_data_type(t.dtype()),
                    shape: Some(proto::TensorShapeProto {
                        dim: t
                            .shape()
                            .iter()
                            .map(|&d| Dimension {
                                value: Some(Value::DimValue(d as i64)),
                                ..Default::default()
                            })
                            .collect(),
                    }),
                },
            )),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Encode a [`Tensor`] as a `TensorProto` with `raw_data` (for tests and
/// tools that write models).
pub fn encode_tensor(name: &str, t: &Tensor) -> proto::TensorProto {
    let mut raw = Vec::with_capacity(t.numel() * t.dtype().byte_size());
    match t.data() {
        ipu_reference::TensorData::F32(v) => match t.dtype() {
            ElementType::F16 => v.iter().for_each(|&x| {
                raw.extend_from_slice(&half::f16::from_f32(x).to_bits().to_le_bytes())
            }),
            ElementType::BF16 => v.iter().for_each(|&x| {
                raw.extend_from_slice(&half::bf16::from_f32(x).to_bits().to_le_bytes())
            }),
            ElementType::F64 => v
                .iter()
                .for_each(|&x| raw.extend_from_slice(&(x as f64).to_le_bytes())),
            d if d.is_fp8() => raw.extend(t.fp8_codes().unwrap_or_default()),
            _ => v
                .iter()
                .for_each(|&x| raw.extend_from_slice(&x.to_le_bytes())),
        },
        ipu_reference::TensorData::I64(v) => {
            let size = t.dtype().byte_size();
            v.iter()
                .for_each(|&x| raw.extend_from_slice(&x.to_le_bytes()[..size]));
        }
    }
    let bits = t.dtype().bit_width();
    if bits < 8 {
        // One code per byte so far: pack LSB first.
        let mask = ((1u16 << bits) - 1) as u8;
        let mut packed = vec![0u8; (raw.len() * bits).div_ceil(8)];
        for (i, &c) in raw.iter().enumerate() {
            let bit = i * bits;
            packed[bit / 8] |= (c & mask) << (bit % 8);
        }
        raw = packed;
    }
    proto::TensorProto {
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: onnx_data_type(t.dtype()),
        name: name.to_string(),
        raw_data: raw,
        ..Default::default()
    }
}

/// Read a serialized `TensorProto` file (the `input_*.pb`/`output_*.pb`
/// files of the ONNX backend tests).
pub fn read_tensor_pb(path: impl AsRef<std::path::Path>) -> Result<(String, Tensor), OnnxError> {
    let p = path.as_ref();
    let bytes = std::fs::read(p).map_err(|source| OnnxError::Io {
        path: p.display().to_string(),
        source,
    })?;
    let t = proto::TensorProto::decode(bytes.as_slice())?;
    Ok((t.name.clone(), decode_tensor(&t)?))
}
