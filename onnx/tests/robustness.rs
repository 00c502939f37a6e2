//! Random (mostly invalid) single-node models for every mapped op type:
//! importing and running them must return errors, never panic.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ipu_onnx::proto::{self, attribute_proto::AttributeType};
use ipu_onnx::{decode_model, encode_tensor, encode_value_info, import_model, ImportOptions};
use ipu_reference::{ElementType, Tensor};
use prost::Message;

const OPS: &[&str] = &[
    "Abs",
    "Add",
    "And",
    "ArgMax",
    "ArgMin",
    "Attention",
    "AveragePool",
    "BatchNormalization",
    "Cast",
    "CastLike",
    "Ceil",
    "Celu",
    "Clip",
    "Concat",
    "Constant",
    "ConstantOfShape",
    "Conv",
    "ConvInteger",
    "ConvTranspose",
    "CumProd",
    "CumSum",
    "DepthToSpace",
    "DequantizeLinear",
    "Div",
    "Dropout",
    "DynamicQuantizeLinear",
    "Elu",
    "Equal",
    "Erf",
    "Exp",
    "Expand",
    "EyeLike",
    "Flatten",
    "Floor",
    "Gather",
    "GatherElements",
    "GatherND",
    "Gelu",
    "Gemm",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Greater",
    "GreaterOrEqual",
    "HardSigmoid",
    "HardSwish",
    "Hardmax",
    "Identity",
    "If",
    "InstanceNormalization",
    "IsInf",
    "IsNaN",
    "LayerNormalization",
    "LeakyRelu",
    "Less",
    "LessOrEqual",
    "Log",
    "LogSoftmax",
    "Loop",
    "LpNormalization",
    "MatMul",
    "MatMulInteger",
    "Max",
    "MaxPool",
    "Mean",
    "Min",
    "Mish",
    "Mod",
    "Mul",
    "Neg",
    "NegativeLogLikelihoodLoss",
    "NonZero",
    "Not",
    "OneHot",
    "Or",
    "PRelu",
    "Pad",
    "Pow",
    "QLinearConv",
    "QLinearMatMul",
    "QuantizeLinear",
    "RMSNormalization",
    "Range",
    "Reciprocal",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
    "Relu",
    "Reshape",
    "Resize",
    "RotaryEmbedding",
    "Round",
    "Scan",
    "Selu",
    "Shape",
    "Shrink",
    "Sigmoid",
    "Sign",
    "Size",
    "Slice",
    "Softmax",
    "SoftmaxCrossEntropyLoss",
    "Softplus",
    "Softsign",
    "SpaceToDepth",
    "Split",
    "Sqrt",
    "Squeeze",
    "Sub",
    "Sum",
    "Swish",
    "Tanh",
    "ThresholdedRelu",
    "Tile",
    "TopK",
    "Transpose",
    "Trilu",
    "Unsqueeze",
    "Upsample",
    "Where",
    "Xor",
];

const INT_ATTRS: &[&str] = &[
    "axis",
    "keepdims",
    "to",
    "saturate",
    "transA",
    "transB",
    "allowzero",
    "k",
    "largest",
    "select_last_index",
    "exclusive",
    "reverse",
    "upper",
    "blocksize",
    "num_outputs",
    "p",
    "q_num_heads",
    "kv_num_heads",
    "is_causal",
    "qk_matmul_output_mode",
    "num_heads",
    "rotary_embedding_dim",
    "interleaved",
    "block_size",
    "output_dtype",
    "stash_type",
    "ignore_index",
    "noop_with_empty_axes",
    "start",
    "end",
    "fmod",
    "detect_positive",
    "group",
    "ceil_mode",
    "count_include_pad",
];
const INTS_ATTRS: &[&str] = &[
    "axes",
    "perm",
    "pads",
    "starts",
    "ends",
    "split",
    "shape",
    "strides",
    "dilations",
    "kernel_shape",
    "output_padding",
    "output_shape",
];
const FLOAT_ATTRS: &[&str] = &[
    "alpha", "beta", "epsilon", "scale", "softcap", "value", "min", "max",
];
const STR_ATTRS: &[(&str, &[&str])] = &[
    (
        "mode",
        &["constant", "reflect", "edge", "wrap", "CRD", "bogus"],
    ),
    ("approximate", &["none", "tanh", "x"]),
    (
        "auto_pad",
        &["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "x"],
    ),
    ("reduction", &["none", "sum", "mean", "max"]),
    (
        "equation",
        &[
            "ij,jk->ik",
            "ii->i",
            "...ii->...i",
            "i,i",
            "ab->ba",
            "a...,b...->...",
            "x",
            "ij,jk",
            "->",
        ],
    ),
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn int(&mut self) -> i64 {
        match self.below(8) {
            0 => i64::MAX,
            1 => i64::MIN,
            2 => -(self.below(4) as i64) - 1,
            _ => self.below(5) as i64,
        }
    }
}

fn attr(rng: &mut Rng) -> proto::AttributeProto {
    let mut a = proto::AttributeProto::default();
    match rng.below(4) {
        0 => {
            a.name = INT_ATTRS[rng.below(INT_ATTRS.len() as u64) as usize].into();
            a.r#type = AttributeType::Int as i32;
            a.i = rng.int();
        }
        1 => {
            a.name = INTS_ATTRS[rng.below(INTS_ATTRS.len() as u64) as usize].into();
            a.r#type = AttributeType::Ints as i32;
            a.ints = (0..rng.below(5)).map(|_| rng.int()).collect();
        }
        2 => {
            a.name = FLOAT_ATTRS[rng.below(FLOAT_ATTRS.len() as u64) as usize].into();
            a.r#type = AttributeType::Float as i32;
            a.f = [0.0, 1.0, -1.0, 0.5, f32::NAN, 1e30][rng.below(6) as usize];
        }
        _ => {
            let (name, vals) = STR_ATTRS[rng.below(STR_ATTRS.len() as u64) as usize];
            a.name = name.into();
            a.r#type = AttributeType::String as i32;
            a.s = vals[rng.below(vals.len() as u64) as usize]
                .as_bytes()
                .to_vec();
        }
    }
    a
}

fn random_tensor(rng: &mut Rng) -> Tensor {
    let rank = rng.below(5) as usize;
    let shape: Vec<usize> = (0..rank).map(|_| rng.below(4) as usize).collect();
    let n: usize = shape.iter().product();
    match rng.below(5) {
        3 => {
            Tensor::from_i64(shape, ElementType::I32, (0..n).map(|_| rng.int()).collect()).unwrap()
        }
        4 => Tensor::from_f32(
            shape,
            ElementType::F16,
            (0..n).map(|_| rng.int() as f32 / 3.0).collect(),
        )
        .unwrap(),
        0 => Tensor::from_f32(
            shape,
            ElementType::F32,
            (0..n).map(|_| rng.int() as f32 / 3.0).collect(),
        )
        .unwrap(),
        1 => {
            Tensor::from_i64(shape, ElementType::I64, (0..n).map(|_| rng.int()).collect()).unwrap()
        }
        _ => Tensor::from_bool(shape, (0..n).map(|_| rng.below(2) == 1).collect()).unwrap(),
    }
}

#[test]
fn random_nodes_never_panic() {
    // IPU_FUZZ_TRIALS / IPU_FUZZ_SEED widen the search locally.
    let trials: usize = std::env::var("IPU_FUZZ_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let seed: u64 = std::env::var("IPU_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x1234_5678_9ABC_DEF1);
    let mut rng = Rng(seed | 1);
    let mut panics = Vec::new();
    for op in OPS {
        for trial in 0..trials {
            let n_in = rng.below(5) as usize;
            let mut inputs = Vec::new();
            let mut inits = Vec::new();
            let mut names = Vec::new();
            let mut values = Vec::new();
            for i in 0..n_in {
                let t = random_tensor(&mut rng);
                let name = format!("i{i}");
                if rng.below(2) == 0 {
                    inits.push(encode_tensor(&name, &t));
                } else {
                    inputs.push(encode_value_info(&name, &t));
                    values.push(t);
                }
                names.push(if rng.below(10) == 0 {
                    String::new()
                } else {
                    name
                });
            }
            let opset = [9, 11, 13, 17, 18, 21, 23][rng.below(7) as usize];
            // Mostly attributes the operator has (each once), so the mapping
            // is reached; sometimes any, which the schema check refuses.
            let known = ipu_onnx::import::operator_attributes(op, opset).map(|(_, a)| a);
            let any = rng.below(10) == 0;
            let mut attrs: Vec<proto::AttributeProto> = Vec::new();
            for _ in 0..rng.below(4) {
                let a = attr(&mut rng);
                let fits = known.is_none_or(|k| k.contains(&a.name.as_str()));
                if any || (fits && !attrs.iter().any(|b| b.name == a.name)) {
                    attrs.push(a);
                }
            }
            let n_out = 1 + rng.below(3) as usize;
            let outs: Vec<String> = (0..n_out).map(|i| format!("o{i}")).collect();
            let model = proto::ModelProto {
                ir_version: 8,
                opset_import: vec![proto::OperatorSetIdProto {
                    domain: String::new(),
                    version: opset,
                }],
                graph: Some(proto::GraphProto {
                    node: vec![proto::NodeProto {
                        op_type: op.to_string(),
                        input: names,
                        output: outs.clone(),
                        attribute: attrs,
                        ..Default::default()
                    }],
                    initializer: inits,
                    input: inputs,
                    output: outs
                        .iter()
                        .map(|o| proto::ValueInfoProto {
                            name: o.clone(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }),
                ..Default::default()
            };
            let bytes = model.encode_to_vec();
            let r = catch_unwind(AssertUnwindSafe(|| {
                // A repeated attribute is refused when decoding.
                let Ok(m) = decode_model(&bytes) else {
                    return;
                };
                if let Ok(g) = import_model(&m, &ImportOptions::default()) {
                    let _ = g.run(&values);
                }
            }));
            if r.is_err() {
                panics.push(format!("{op} trial {trial}"));
            }
        }
    }
    assert!(panics.is_empty(), "panics: {panics:?}");
}
