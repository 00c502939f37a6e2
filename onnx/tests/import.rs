//! Importer tests on models built in memory with the generated protobuf
//! types.

use ipu_onnx::proto::{self, attribute_proto::AttributeType};
use ipu_onnx::{
    decode_model, decode_tensor, encode_tensor, import_model, ImportOptions, OnnxError,
};
use ipu_reference::{evaluate, ElementType, Fp8Format, GeluApproximation, OpKind, Tensor};
use prost::Message;

fn a_int(name: &str, v: i64) -> proto::AttributeProto {
    proto::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i: v,
        ..Default::default()
    }
}
fn a_ints(name: &str, v: &[i64]) -> proto::AttributeProto {
    proto::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Ints as i32,
        ints: v.to_vec(),
        ..Default::default()
    }
}
fn a_float(name: &str, v: f32) -> proto::AttributeProto {
    proto::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Float as i32,
        f: v,
        ..Default::default()
    }
}
fn a_str(name: &str, v: &str) -> proto::AttributeProto {
    proto::AttributeProto {
        name: name.into(),
        r#type: AttributeType::String as i32,
        s: v.as_bytes().to_vec(),
        ..Default::default()
    }
}
fn a_tensor(name: &str, t: &Tensor) -> proto::AttributeProto {
    proto::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Tensor as i32,
        t: Some(encode_tensor("", t)),
        ..Default::default()
    }
}
fn node(
    op: &str,
    name: &str,
    ins: &[&str],
    outs: &[&str],
    attrs: Vec<proto::AttributeProto>,
) -> proto::NodeProto {
    proto::NodeProto {
        op_type: op.into(),
        name: name.into(),
        input: ins.iter().map(|s| s.to_string()).collect(),
        output: outs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}
enum D {
    N(i64),
    P(&'static str),
}
fn vi(name: &str, elem: i32, dims: &[D]) -> proto::ValueInfoProto {
    use proto::tensor_shape_proto::{dimension::Value, Dimension};
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                D::N(n) => Value::DimValue(*n),
                D::P(p) => Value::DimParam(p.to_string()),
            }),
            ..Default::default()
        })
        .collect();
    proto::ValueInfoProto {
        name: name.into(),
        r#type: Some(proto::TypeProto {
            value: Some(proto::type_proto::Value::TensorType(
                proto::type_proto::Tensor {
                    elem_type: elem,
                    shape: Some(proto::TensorShapeProto { dim }),
                },
            )),
            ..Default::default()
        }),
        ..Default::default()
    }
}
fn out(name: &str) -> proto::ValueInfoProto {
    proto::ValueInfoProto {
        name: name.into(),
        ..Default::default()
    }
}
fn model(
    opset: i64,
    nodes: Vec<proto::NodeProto>,
    inputs: Vec<proto::ValueInfoProto>,
    outputs: &[&str],
    inits: &[(&str, &Tensor)],
) -> Vec<u8> {
    proto::ModelProto {
        ir_version: 8,
        opset_import: vec![proto::OperatorSetIdProto {
            domain: String::new(),
            version: opset,
        }],
        graph: Some(proto::GraphProto {
            node: nodes,
            name: "g".into(),
            initializer: inits.iter().map(|(n, t)| encode_tensor(n, t)).collect(),
            input: inputs,
            output: outputs.iter().map(|n| out(n)).collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}
fn f32t(shape: &[usize], v: Vec<f32>) -> Tensor {
    Tensor::from_f32(shape.to_vec(), ElementType::F32, v).unwrap()
}
fn i64t(shape: &[usize], v: Vec<i64>) -> Tensor {
    Tensor::from_i64(shape.to_vec(), ElementType::I64, v).unwrap()
}
fn ramp(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919) % 23) as f32 / 7.0 - 1.5)
        .collect()
}
fn run(bytes: &[u8], opts: &ImportOptions, inputs: &[Tensor]) -> Vec<Tensor> {
    let m = decode_model(bytes).unwrap();
    let g = import_model(&m, opts).unwrap();
    g.run(inputs).unwrap()
}
fn ev(op: OpKind, ins: &[&Tensor]) -> Tensor {
    evaluate(&op, ins).unwrap()
}
const F: i32 = 1;
const I64: i32 = 7;

#[test]
fn mlp_block_matches_direct_evaluation() {
    let w = f32t(&[4, 3], ramp(12));
    let b = f32t(&[3], vec![0.5, -0.25, 1.0]);
    let bytes = model(
        20,
        vec![
            node("MatMul", "mm", &["x", "w"], &["h"], vec![]),
            node("Add", "add", &["h", "b"], &["hb"], vec![]),
            node(
                "Gelu",
                "gelu",
                &["hb"],
                &["g"],
                vec![a_str("approximate", "tanh")],
            ),
            node("Softmax", "sm", &["g"], &["y"], vec![]),
        ],
        vec![vi("x", F, &[D::N(2), D::N(4)])],
        &["y"],
        &[("w", &w), ("b", &b)],
    );
    let x = f32t(&[2, 4], ramp(8));
    let got = run(&bytes, &ImportOptions::default(), std::slice::from_ref(&x));
    let h = ev(OpKind::MatMul, &[&x, &w]);
    let hb = ev(OpKind::Add, &[&h, &b]);
    let g = ev(
        OpKind::Gelu {
            approximate: GeluApproximation::Tanh,
        },
        &[&hb],
    );
    let y = ev(OpKind::Softmax { axis: 1 }, &[&g]);
    assert_eq!(got, vec![y]);
    let graph = import_model(&decode_model(&bytes).unwrap(), &ImportOptions::default()).unwrap();
    let names: Vec<&str> = graph.nodes.iter().map(|n| n.op.name()).collect();
    assert_eq!(
        names,
        ["constant", "constant", "matmul", "add", "gelu", "softmax"]
    );
    assert_eq!(graph.values[graph.outputs[0]].name, "y");
    assert_eq!(graph.values[graph.outputs[0]].ty.shape, vec![2, 3]);
}

#[test]
fn shape_arithmetic_folds_to_constants() {
    // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))
    let bytes = model(
        13,
        vec![
            node("Shape", "shape", &["x"], &["s"], vec![]),
            node("Gather", "g", &["s", "zero"], &["d0"], vec![]),
            node("Unsqueeze", "u", &["d0", "axes0"], &["d0v"], vec![]),
            node(
                "Concat",
                "c",
                &["d0v", "minus1"],
                &["target"],
                vec![a_int("axis", 0)],
            ),
            node("Reshape", "r", &["x", "target"], &["y"], vec![]),
        ],
        vec![vi("x", F, &[D::N(2), D::N(3), D::N(4)])],
        &["y"],
        &[
            ("zero", &i64t(&[], vec![0])),
            ("axes0", &i64t(&[1], vec![0])),
            ("minus1", &i64t(&[1], vec![-1])),
        ],
    );
    let graph = import_model(&decode_model(&bytes).unwrap(), &ImportOptions::default()).unwrap();
    assert_eq!(graph.nodes.len(), 1, "{:?}", graph.nodes);
    assert_eq!(graph.nodes[0].op, OpKind::Reshape { shape: vec![2, 12] });
    assert_eq!(
        graph.to_string(),
        "graph(%0: tensor<2x3x4xf32>) -> (tensor<2x12xf32>) {\n  \
         %1 = reshape %0 {shape = [2, 12]} : tensor<2x12xf32>  // r\n  \
         return %1\n}"
    );
}

#[test]
fn opset_differences() {
    let x = f32t(&[2, 3, 4], ramp(24));
    // Softmax: opset 11 normalizes the flattened [2, 12] rows, opset 13 axis -1.
    for (opset, expect_axis_len) in [(11, 12), (13, 4)] {
        let bytes = model(
            opset,
            vec![node(
                "Softmax",
                "s",
                &["x"],
                &["y"],
                vec![a_int("axis", if opset == 11 { 1 } else { -1 })],
            )],
            vec![vi("x", F, &[D::N(2), D::N(3), D::N(4)])],
            &["y"],
            &[],
        );
        let y = run(&bytes, &ImportOptions::default(), std::slice::from_ref(&x)).remove(0);
        for row in y.as_f32().unwrap().chunks(expect_axis_len) {
            let s: f32 = row.iter().sum();
            assert!((s - 1.0).abs() < 1e-5, "opset {opset}");
        }
    }
    // ReduceSum: axes attribute (opset 11) vs input (opset 13) agree.
    let attr_form = model(
        11,
        vec![node(
            "ReduceSum",
            "r",
            &["x"],
            &["y"],
            vec![a_ints("axes", &[-1]), a_int("keepdims", 0)],
        )],
        vec![vi("x", F, &[D::N(2), D::N(3), D::N(4)])],
        &["y"],
        &[],
    );
    let input_form = model(
        13,
        vec![node(
            "ReduceSum",
            "r",
            &["x", "axes"],
            &["y"],
            vec![a_int("keepdims", 0)],
        )],
        vec![vi("x", F, &[D::N(2), D::N(3), D::N(4)])],
        &["y"],
        &[("axes", &i64t(&[1], vec![2]))],
    );
    let o = ImportOptions::default();
    let a = run(&attr_form, &o, std::slice::from_ref(&x));
    let b = run(&input_form, &o, std::slice::from_ref(&x));
    assert_eq!(a, b);
    assert_eq!(a[0].shape(), &[2, 3]);
    // Slice: attributes (opset 9) vs inputs (opset 13) with a negative step.
    let s9 = model(
        9,
        vec![node(
            "Slice",
            "s",
            &["x"],
            &["y"],
            vec![
                a_ints("starts", &[1, 1]),
                a_ints("ends", &[100, -1]),
                a_ints("axes", &[0, 2]),
            ],
        )],
        vec![vi("x", F, &[D::N(2), D::N(3), D::N(4)])],
        &["y"],
        &[],
    );
    let y9 = run(&s9, &o, std::slice::from_ref(&x)).remove(0);
    assert_eq!(y9.shape(), &[1, 3, 2]);
    assert_eq!(y9.as_f32().unwrap()[..2], x.as_f32().unwrap()[13..15]);
    let s13 = model(
        13,
        vec![node(
            "Slice",
            "s",
            &["x", "st", "en", "ax", "sp"],
            &["y"],
            vec![],
        )],
        vec![vi("x", F, &[D::N(2), D::N(3), D::N(4)])],
        &["y"],
        &[
            ("st", &i64t(&[1], vec![-1])),
            ("en", &i64t(&[1], vec![i64::MIN])),
            ("ax", &i64t(&[1], vec![2])),
            ("sp", &i64t(&[1], vec![-1])),
        ],
    );
    let y13 = run(&s13, &o, std::slice::from_ref(&x)).remove(0);
    assert_eq!(y13.shape(), &[2, 3, 4]);
    let xv = x.as_f32().unwrap();
    assert_eq!(y13.as_f32().unwrap()[0..4], [xv[3], xv[2], xv[1], xv[0]]);
}

#[test]
fn gemm_and_layer_norm_outputs() {
    let a = f32t(&[3, 2], ramp(6));
    let b = f32t(&[4, 3], ramp(12));
    let c = f32t(&[4], vec![1.0, 2.0, 3.0, 4.0]);
    let bytes = model(
        13,
        vec![node(
            "Gemm",
            "gemm",
            &["a", "b", "c"],
            &["y"],
            vec![
                a_int("transA", 1),
                a_int("transB", 1),
                a_float("alpha", 0.5),
                a_float("beta", 2.0),
            ],
        )],
        vec![vi("a", F, &[D::N(3), D::N(2)])],
        &["y"],
        &[("b", &b), ("c", &c)],
    );
    let y = run(&bytes, &ImportOptions::default(), std::slice::from_ref(&a)).remove(0);
    assert_eq!(y.shape(), &[2, 4]);
    let (av, bv) = (a.as_f32().unwrap(), b.as_f32().unwrap());
    for i in 0..2 {
        for j in 0..4 {
            let s: f32 = (0..3).map(|k| av[k * 2 + i] * bv[j * 3 + k]).sum();
            let want = 0.5 * s + 2.0 * c.as_f32().unwrap()[j];
            assert!((y.as_f32().unwrap()[i * 4 + j] - want).abs() < 1e-5);
        }
    }
    let scale = f32t(&[4], vec![1.0, 2.0, 1.0, 0.5]);
    let ln = model(
        17,
        vec![node(
            "LayerNormalization",
            "ln",
            &["x", "s"],
            &["y", "mean", "inv"],
            vec![a_float("epsilon", 1e-3)],
        )],
        vec![vi("x", F, &[D::N(2), D::N(4)])],
        &["y", "mean", "inv"],
        &[("s", &scale)],
    );
    let x = f32t(&[2, 4], ramp(8));
    let outs = run(&ln, &ImportOptions::default(), std::slice::from_ref(&x));
    assert_eq!(outs[1].shape(), &[2, 1]);
    let xv = x.as_f32().unwrap();
    for r in 0..2 {
        let row = &xv[r * 4..r * 4 + 4];
        let mean = row.iter().sum::<f32>() / 4.0;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 4.0;
        assert!((outs[1].as_f32().unwrap()[r] - mean).abs() < 1e-6);
        assert!((outs[2].as_f32().unwrap()[r] - 1.0 / (var + 1e-3).sqrt()).abs() < 1e-4);
        let y1 = (row[1] - mean) / (var + 1e-3).sqrt() * 2.0;
        assert!((outs[0].as_f32().unwrap()[r * 4 + 1] - y1).abs() < 1e-5);
    }
}

#[test]
fn errors_name_op_node_and_opset() {
    let bytes = model(
        17,
        vec![node("NoSuchOp", "my_op", &["x", "x"], &["y"], vec![])],
        vec![vi("x", F, &[D::N(1), D::N(1), D::N(3), D::N(3)])],
        &["y"],
        &[],
    );
    let e = import_model(&decode_model(&bytes).unwrap(), &ImportOptions::default()).unwrap_err();
    let OnnxError::UnsupportedOps(ops) = &e else {
        panic!("unexpected {e:?}");
    };
    let o = &ops[0];
    assert_eq!(
        (o.op_type.as_str(), o.first_node.as_str(), o.opset, o.count),
        ("NoSuchOp", "my_op", 17, 1)
    );
    let msg = e.to_string();
    assert!(
        msg.contains("NoSuchOp") && msg.contains("my_op") && msg.contains("17"),
        "{msg}"
    );
    // A shape error is a Node error with context.
    let bad = model(
        13,
        vec![node("Add", "bad_add", &["x", "w"], &["y"], vec![])],
        vec![vi("x", F, &[D::N(2), D::N(3)])],
        &["y"],
        &[("w", &f32t(&[4], vec![0.0; 4]))],
    );
    let e = import_model(&decode_model(&bad).unwrap(), &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(e, OnnxError::Node { .. }) && e.to_string().contains("bad_add"),
        "{e}"
    );
}

#[test]
fn dynamic_dims_and_static_operands() {
    let bytes = model(
        14,
        vec![node("Reshape", "r", &["x", "shape"], &["y"], vec![])],
        vec![
            vi("x", F, &[D::P("batch"), D::N(6)]),
            vi("shape", I64, &[D::N(2)]),
        ],
        &["y"],
        &[],
    );
    let m = decode_model(&bytes).unwrap();
    let e = import_model(&m, &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(e, OnnxError::Input { ref name, .. } if name == "x"),
        "{e}"
    );
    let mut o = ImportOptions::default();
    o.input_shapes.insert("x".into(), vec![2, 6]);
    let e = import_model(&m, &o).unwrap_err();
    assert!(
        matches!(e, OnnxError::Unsupported { .. }) && e.to_string().contains("constant"),
        "{e}"
    );
    let shape = i64t(&[2], vec![3, -1]);
    o.static_inputs.insert("shape".into(), shape.clone());
    let g = import_model(&m, &o).unwrap();
    let x = f32t(&[2, 6], ramp(12));
    let y = g.run(&[x.clone(), shape]).unwrap().remove(0);
    assert_eq!(y.shape(), &[3, 4]);
    assert_eq!(y.as_f32(), x.as_f32());
    // Specialization flows through integer shape arithmetic: shape * [1, 2].
    let chained = model(
        14,
        vec![
            node("Mul", "m", &["shape", "k"], &["s2"], vec![]),
            node("Reshape", "r", &["x", "s2"], &["y"], vec![]),
        ],
        vec![
            vi("x", F, &[D::N(2), D::N(6)]),
            vi("shape", I64, &[D::N(2)]),
        ],
        &["y"],
        &[("k", &i64t(&[2], vec![1, 2]))],
    );
    let mut o2 = ImportOptions::default();
    o2.static_inputs
        .insert("shape".into(), i64t(&[2], vec![6, 1]));
    let g2 = import_model(&decode_model(&chained).unwrap(), &o2).unwrap();
    assert_eq!(g2.values[g2.outputs[0]].ty.shape, vec![6, 2]);
    // The same value may be listed twice as a graph output.
    let twice = model(
        13,
        vec![node("Relu", "r", &["x"], &["y"], vec![])],
        vec![vi("x", F, &[D::N(2)])],
        &["y", "y", "x"],
        &[],
    );
    let outs = run(
        &twice,
        &ImportOptions::default(),
        &[f32t(&[2], vec![-1.0, 2.0])],
    );
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0].as_f32().unwrap(), &[0.0, 2.0]);
    assert_eq!(outs[2].as_f32().unwrap(), &[-1.0, 2.0]);
    // Wrong input type at run time is an error, not a panic.
    assert!(g
        .run(&[f32t(&[12], ramp(12)), i64t(&[2], vec![3, 4])])
        .is_err());
}

#[test]
fn tensor_proto_typed_fields_and_raw_data() {
    for ty in ElementType::ALL {
        // (E8M0 is unsigned: no negative values.)
        let t = Tensor::from_f32(vec![2, 2], ty, vec![1.0, -2.0, 0.5, 3.0]).unwrap();
        let t = if ty == ElementType::F8E8M0FNU {
            Tensor::from_f32(vec![2, 2], ty, vec![1.0, 2.0, 0.5, 4.0]).unwrap()
        } else {
            t
        };
        let p = encode_tensor("t", &t);
        assert_eq!(decode_tensor(&p).unwrap(), t, "{ty}");
    }
    let mk = |dt: i32| proto::TensorProto {
        dims: vec![3],
        data_type: dt,
        name: "t".into(),
        ..Default::default()
    };
    let mut p = mk(10); // FLOAT16 in int32_data (bit patterns)
    p.int32_data = vec![0x3C00, 0xC000, 0x3800];
    assert_eq!(
        decode_tensor(&p).unwrap().as_f32().unwrap(),
        &[1.0, -2.0, 0.5]
    );
    let mut p = mk(16); // BFLOAT16
    p.int32_data = vec![0x3F80, 0xC000, 0x3F00];
    assert_eq!(
        decode_tensor(&p).unwrap().as_f32().unwrap(),
        &[1.0, -2.0, 0.5]
    );
    let mut p = mk(17); // FLOAT8E4M3FN
    p.int32_data = vec![0x38, 0x7E, 0xFF];
    let t = decode_tensor(&p).unwrap();
    assert_eq!(t.fp8_codes().unwrap()[..2], [0x38, 0x7E]);
    assert!(t.as_f32().unwrap()[2].is_nan());
    let mut p = mk(19); // FLOAT8E5M2 in raw_data
    p.raw_data = vec![0x3C, 0x7C, 0x01];
    assert_eq!(
        decode_tensor(&p).unwrap().as_f32().unwrap(),
        &[1.0, f32::INFINITY, 2f32.powi(-16)]
    );
    let mut p = mk(9); // BOOL
    p.int32_data = vec![1, 0, 1];
    assert_eq!(decode_tensor(&p).unwrap().as_i64().unwrap(), &[1, 0, 1]);
    let mut p = mk(3); // INT8 raw
    p.raw_data = vec![0xFF, 0x80, 0x7F];
    assert_eq!(
        decode_tensor(&p).unwrap().as_i64().unwrap(),
        &[-1, -128, 127]
    );
    let mut p = mk(22); // INT4, packed LSB first: [-1, 7, -8]
    p.raw_data = vec![0x7F, 0x08];
    assert_eq!(decode_tensor(&p).unwrap().as_i64().unwrap(), &[-1, 7, -8]);
    let mut p = mk(21); // UINT4 in int32_data, two per entry
    p.int32_data = vec![0xF1, 0x03];
    assert_eq!(decode_tensor(&p).unwrap().as_i64().unwrap(), &[1, 15, 3]);
    let mut p = mk(26); // INT2: [1, -2, -1] = 0b11_10_01
    p.raw_data = vec![0b0011_1001];
    assert_eq!(decode_tensor(&p).unwrap().as_i64().unwrap(), &[1, -2, -1]);
    let mut p = mk(23); // FLOAT4E2M1: 0x1 = 0.5, 0xF = -6, 0x7 = 6
    p.raw_data = vec![0xF1, 0x07];
    assert_eq!(
        decode_tensor(&p).unwrap().as_f32().unwrap(),
        &[0.5, -6.0, 6.0]
    );
    let mut p = mk(18); // FLOAT8E4M3FNUZ: 0x80 is the only NaN
    p.raw_data = vec![0x40, 0x80, 0x7F];
    let v = decode_tensor(&p).unwrap();
    let v = v.as_f32().unwrap();
    assert!(v[0] == 1.0 && v[1].is_nan() && v[2] == 240.0);
    let mut p = mk(11); // DOUBLE
    p.double_data = vec![0.25, -1.0, 8.0];
    assert_eq!(
        decode_tensor(&p).unwrap().as_f32().unwrap(),
        &[0.25, -1.0, 8.0]
    );
    let mut p = mk(13); // UINT64
    p.uint64_data = vec![1, 2, 3];
    assert_eq!(decode_tensor(&p).unwrap().as_i64().unwrap(), &[1, 2, 3]);
    // Errors.
    let mut p = mk(1);
    p.float_data = vec![1.0];
    assert!(decode_tensor(&p)
        .unwrap_err()
        .to_string()
        .contains("float_data has 1 values"));
    let mut p = mk(1);
    p.raw_data = vec![0; 5];
    assert!(decode_tensor(&p)
        .unwrap_err()
        .to_string()
        .contains("raw_data has 5 bytes"));
    let mut p = mk(8);
    p.string_data = vec![b"a".to_vec()];
    assert!(decode_tensor(&p)
        .unwrap_err()
        .to_string()
        .contains("STRING"));
    let mut p = mk(1);
    p.dims = vec![-1];
    assert!(decode_tensor(&p).is_err());
    let mut p = mk(1);
    p.dims = vec![i64::MAX, i64::MAX];
    assert!(decode_tensor(&p).is_err());
    let _ = Fp8Format::E5M2;
}

#[test]
fn constant_cast_where_and_fp8() {
    let bytes = model(
        19,
        vec![
            node(
                "Constant",
                "c",
                &[],
                &["k"],
                vec![a_tensor("value", &f32t(&[2], vec![500.0, -0.3]))],
            ),
            node(
                "Cast",
                "to8",
                &["k"],
                &["k8"],
                vec![a_int("to", 17), a_int("saturate", 1)],
            ),
            node("Cast", "back", &["k8"], &["kf"], vec![a_int("to", 1)]),
            node("Less", "lt", &["x", "kf"], &["m"], vec![]),
            node("Where", "w", &["m", "x", "kf"], &["y"], vec![]),
        ],
        vec![vi("x", F, &[D::N(2)])],
        &["y", "k8"],
        &[],
    );
    let outs = run(
        &bytes,
        &ImportOptions::default(),
        &[f32t(&[2], vec![1.0, 1.0])],
    );
    assert_eq!(outs[1].dtype(), ElementType::F8E4M3FN);
    assert_eq!(outs[1].fp8_codes().unwrap(), vec![0x7E, 0xAA]);
    // kf = [448, -0.3125]; x < kf ? x : kf
    assert_eq!(outs[0].as_f32().unwrap(), &[1.0, -0.3125]);
    // The whole Constant/Cast chain is folded: only the comparison and select run.
    let g = import_model(&decode_model(&bytes).unwrap(), &ImportOptions::default()).unwrap();
    let ops: Vec<&str> = g.nodes.iter().map(|n| n.op.name()).collect();
    assert_eq!(
        ops.iter().filter(|o| **o != "constant").count(),
        2,
        "{ops:?}"
    );
}

#[test]
fn malformed_models_are_errors_not_panics() {
    let w = f32t(&[4, 3], ramp(12));
    let bytes = model(
        13,
        vec![
            node("MatMul", "mm", &["x", "w"], &["h"], vec![]),
            node("Softmax", "sm", &["h"], &["y"], vec![a_int("axis", -1)]),
        ],
        vec![vi("x", F, &[D::N(2), D::N(4)])],
        &["y"],
        &[("w", &w)],
    );
    let opts = ImportOptions::default();
    let x = f32t(&[2, 4], ramp(8));
    for cut in 0..bytes.len() {
        if let Ok(m) = decode_model(&bytes[..cut]) {
            if let Ok(g) = import_model(&m, &opts) {
                let _ = g.run(std::slice::from_ref(&x));
            }
        }
    }
    let mut state = 0x9E3779B9u32;
    for _ in 0..3000 {
        let mut b = bytes.clone();
        for _ in 0..3 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let i = state as usize % b.len();
            b[i] = (state >> 8) as u8;
        }
        if let Ok(m) = decode_model(&b) {
            if let Ok(g) = import_model(&m, &opts) {
                let _ = g.run(std::slice::from_ref(&x));
            }
        }
    }
    assert!(matches!(
        decode_model(b"\xff\xff\xff"),
        Err(OnnxError::Decode(_))
    ));
    assert!(matches!(
        decode_model(&proto::ModelProto::default().encode_to_vec()),
        Err(OnnxError::Invalid(_))
    ));
}

#[test]
fn einsum_lowers_to_matmul_transpose_and_diagonal() {
    let q = f32t(&[2, 3, 4, 5], ramp(120));
    let k = f32t(&[2, 3, 6, 5], ramp(180));
    let bytes = model(
        12,
        vec![node(
            "Einsum",
            "e",
            &["q", "k"],
            &["y"],
            vec![a_str("equation", "bhqd, bhkd -> bhqk")],
        )],
        vec![
            vi("q", F, &[D::N(2), D::N(3), D::N(4), D::N(5)]),
            vi("k", F, &[D::N(2), D::N(3), D::N(6), D::N(5)]),
        ],
        &["y"],
        &[],
    );
    let y = run(&bytes, &ImportOptions::default(), &[q.clone(), k.clone()]).remove(0);
    let kt = ev(
        OpKind::Transpose {
            perm: vec![0, 1, 3, 2],
        },
        &[&k],
    );
    let want = ev(OpKind::MatMul, &[&q, &kt]);
    assert_eq!(y, want);
    // Implicit output and a trace.
    let m = f32t(&[3, 3], ramp(9));
    let trace = model(
        12,
        vec![node(
            "Einsum",
            "t",
            &["m"],
            &["y"],
            vec![a_str("equation", "ii")],
        )],
        vec![vi("m", F, &[D::N(3), D::N(3)])],
        &["y"],
        &[],
    );
    let t = run(&trace, &ImportOptions::default(), std::slice::from_ref(&m)).remove(0);
    let mv = m.as_f32().unwrap();
    assert_eq!(t.shape(), &[] as &[usize]);
    assert!((t.as_f32().unwrap()[0] - (mv[0] + mv[4] + mv[8])).abs() < 1e-6);
}

#[test]
fn an_initializer_named_like_an_input_is_its_default_from_ir_4() {
    let bias = f32t(&[3], vec![1.0, 2.0, 3.0]);
    let bytes = model(
        13,
        vec![node("Add", "add", &["x", "b"], &["y"], vec![])],
        vec![vi("x", F, &[D::N(2), D::N(3)]), vi("b", F, &[D::N(3)])],
        &["y"],
        &[("b", &bias)],
    );
    let mut m = decode_model(&bytes).unwrap();
    let g = import_model(&m, &ImportOptions::default()).unwrap();
    assert_eq!(g.inputs.len(), 2, "the input stays an input");
    assert_eq!(g.input_defaults, vec![None, Some(bias.clone())]);
    let x = f32t(&[2, 3], vec![0.0; 6]);
    let other = f32t(&[3], vec![10.0, 20.0, 30.0]);
    let y = g.run(&[x.clone(), other]).unwrap().remove(0);
    assert_eq!(y.as_f32().unwrap(), &[10.0, 20.0, 30.0, 10.0, 20.0, 30.0]);
    // Before IR version 4 every initializer is listed as an input, and is a constant.
    m.ir_version = 3;
    let g = import_model(&m, &ImportOptions::default()).unwrap();
    assert_eq!(g.inputs.len(), 1);
    let y = g.run(&[x]).unwrap().remove(0);
    assert_eq!(y.as_f32().unwrap(), &[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
}

#[test]
fn malformed_graphs_are_refused_at_the_node() {
    let softmax = |attrs| {
        model(
            13,
            vec![node("Softmax", "sm", &["x"], &["y"], attrs)],
            vec![vi("x", F, &[D::N(2), D::N(3)])],
            &["y"],
            &[],
        )
    };
    let import =
        |b: &[u8]| decode_model(b).and_then(|m| import_model(&m, &ImportOptions::default()));
    let e = import(&softmax(vec![a_int("Axis", 0)]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`Axis` is not an attribute of Softmax-13"),
        "{e}"
    );
    let e = import(&softmax(vec![a_int("axis", 0), a_int("axis", 1)]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("node `sm`") && e.contains("attribute `axis` is given more than once"),
        "{e}"
    );
    let two = model(
        13,
        vec![
            node("Relu", "first", &["x"], &["y"], vec![]),
            node("Neg", "second", &["x"], &["y"], vec![]),
        ],
        vec![vi("x", F, &[D::N(2)])],
        &["y"],
        &[],
    );
    let e = import(&two).unwrap_err().to_string();
    assert!(
        e.contains("node `second`") && e.contains("already written by node `first`"),
        "{e}"
    );
    let writes_input = model(
        13,
        vec![node("Relu", "r", &["x"], &["x"], vec![])],
        vec![vi("x", F, &[D::N(2)])],
        &["x"],
        &[],
    );
    let e = import(&writes_input).unwrap_err().to_string();
    assert!(e.contains("already written by a graph input"), "{e}");
    for opset in [0, ipu_onnx::import::MAX_OPSET + 1, 999] {
        let b = model(
            opset,
            vec![node("Relu", "r", &["x"], &["y"], vec![])],
            vec![vi("x", F, &[D::N(2)])],
            &["y"],
            &[],
        );
        let e = import(&b).unwrap_err().to_string();
        assert!(
            e.contains(&format!("opset {opset} of the default domain")),
            "{e}"
        );
    }
}

#[test]
fn tensor_data_past_the_size_limit_is_refused_before_decoding() {
    // 2^31 INT2 codes would be 16 GiB as the reference's i64: refused by the header alone.
    let t = proto::TensorProto {
        dims: vec![1 << 31],
        data_type: 26,
        name: "w".into(),
        ..Default::default()
    };
    let e = decode_tensor(&t).unwrap_err().to_string();
    assert!(
        e.contains("tensor `w`") && e.contains("needs 17179869184 bytes"),
        "{e}"
    );
}

#[test]
fn gather_nd_with_batch_dims_and_negative_indices() {
    // data [2, 3, 4], batch_dims 1, indices [2, 2, 1]: rows of each batch.
    let data = f32t(&[2, 3, 4], (0..24).map(|i| i as f32).collect());
    let bytes = model(
        13,
        vec![node(
            "GatherND",
            "gnd",
            &["data", "idx"],
            &["y"],
            vec![a_int("batch_dims", 1)],
        )],
        vec![
            vi("data", F, &[D::N(2), D::N(3), D::N(4)]),
            vi("idx", I64, &[D::N(2), D::N(2), D::N(1)]),
        ],
        &["y"],
        &[],
    );
    let idx = i64t(&[2, 2, 1], vec![2, 0, -1, 1]);
    let y = &run(&bytes, &ImportOptions::default(), &[data.clone(), idx])[0];
    assert_eq!(y.shape(), &[2, 2, 4]);
    let row = |b: usize, r: usize| (0..4).map(move |c| ((b * 3 + r) * 4 + c) as f32);
    let want: Vec<f32> = row(0, 2)
        .chain(row(0, 0))
        .chain(row(1, 2))
        .chain(row(1, 1))
        .collect();
    assert_eq!(y.to_f32_vec(), want);

    // Full tuples (k = rank) pick elements; no batch dims.
    let bytes = model(
        13,
        vec![node("GatherND", "gnd", &["data", "idx"], &["y"], vec![])],
        vec![
            vi("data", F, &[D::N(2), D::N(3), D::N(4)]),
            vi("idx", I64, &[D::N(2), D::N(3)]),
        ],
        &["y"],
        &[],
    );
    let idx = i64t(&[2, 3], vec![1, 2, 3, -2, 0, -1]);
    let y = &run(
        &bytes,
        &ImportOptions::default(),
        &[data.clone(), idx.clone()],
    )[0];
    assert_eq!(y.to_f32_vec(), vec![23.0, 3.0]);

    // Out of range: refused when the graph runs, and at import when known.
    let bad = i64t(&[2, 3], vec![1, 3, 0, 0, 0, 0]);
    let m = decode_model(&bytes).unwrap();
    let g = import_model(&m, &ImportOptions::default()).unwrap();
    assert!(g.run(&[data.clone(), bad.clone()]).is_err());
    let mut opts = ImportOptions::default();
    opts.static_inputs.insert("idx".into(), bad);
    let e = import_model(&m, &opts).unwrap_err().to_string();
    assert!(
        e.contains("index 3 (tuple 0, position 1) is out of range for dimension 1 of size 3"),
        "{e}"
    );
}

#[test]
fn gather_nd_shape_errors_name_the_rule() {
    let bytes = model(
        13,
        vec![node("GatherND", "gnd", &["data", "idx"], &["y"], vec![])],
        vec![
            vi("data", F, &[D::N(2), D::N(3)]),
            vi("idx", I64, &[D::N(1), D::N(3)]),
        ],
        &["y"],
        &[],
    );
    let e = import_model(&decode_model(&bytes).unwrap(), &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("last dimension 3 must be in [1, 2]"), "{e}");
}

#[test]
fn non_zero_of_a_known_tensor_folds() {
    let bytes = model(
        13,
        vec![node("NonZero", "nz", &["x"], &["y"], vec![])],
        vec![vi("x", F, &[D::N(2), D::N(3)])],
        &["y"],
        &[],
    );
    let m = decode_model(&bytes).unwrap();
    let x = f32t(&[2, 3], vec![0.0, 1.5, 0.0, -2.0, 0.0, f32::NAN]);
    let mut opts = ImportOptions::default();
    opts.static_inputs.insert("x".into(), x.clone());
    let g = import_model(&m, &opts).unwrap();
    let y = &g.run(&[x]).unwrap()[0];
    assert_eq!(y.shape(), &[2, 3]);
    assert_eq!(y.to_i64_vec(), vec![0, 1, 1, 1, 0, 2]);
    let e = import_model(&m, &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(e, OnnxError::Unsupported { .. }) && e.to_string().contains("not known at import"),
        "{e}"
    );
}

#[test]
fn matmul_integer_subtracts_row_and_column_zero_points_exactly() {
    const U8: i32 = 2;
    let bytes = model(
        10,
        vec![node(
            "MatMulInteger",
            "mmi",
            &["a", "b", "za", "zb"],
            &["y"],
            vec![],
        )],
        vec![
            vi("a", U8, &[D::N(2), D::N(3)]),
            vi("b", U8, &[D::N(3), D::N(2)]),
            vi("za", U8, &[D::N(2)]),
            vi("zb", U8, &[D::N(2)]),
        ],
        &["y"],
        &[],
    );
    let u8t = |s: &[usize], v: Vec<i64>| Tensor::from_i64(s.to_vec(), ElementType::U8, v).unwrap();
    let a = u8t(&[2, 3], vec![255, 0, 10, 1, 2, 3]);
    let b = u8t(&[3, 2], vec![255, 0, 1, 2, 3, 4]);
    let (za, zb) = (u8t(&[2], vec![0, 1]), u8t(&[2], vec![128, 0]));
    let y = &run(&bytes, &ImportOptions::default(), &[a, b, za, zb])[0];
    assert_eq!(y.dtype(), ElementType::I32);
    // Row 0: a - 0, row 1: a - 1; column 0: b - 128, column 1: b - 0.
    let ac = [[255, 0, 10], [0, 1, 2]];
    let bc = [[127, 0], [-127, 2], [-125, 4]];
    let want: Vec<i64> = (0..4)
        .map(|e| (0..3).map(|k| ac[e / 2][k] * bc[k][e % 2]).sum())
        .collect();
    assert_eq!(want, [31135, 40, -377, 10]);
    assert_eq!(y.to_i64_vec(), want);
}

#[test]
fn qlinear_matmul_requantizes_with_rounding_and_saturation() {
    const U8: i32 = 2;
    let bytes = model(
        21,
        vec![node(
            "QLinearMatMul",
            "qmm",
            &["a", "sa", "za", "b", "sb", "zb", "sy", "zy"],
            &["y"],
            vec![],
        )],
        vec![
            vi("a", U8, &[D::N(1), D::N(2)]),
            vi("b", U8, &[D::N(2), D::N(3)]),
        ],
        &["y"],
        &[
            ("sa", &f32t(&[], vec![0.5])),
            (
                "za",
                &Tensor::from_i64(vec![], ElementType::U8, vec![10]).unwrap(),
            ),
            ("sb", &f32t(&[], vec![0.5])),
            (
                "zb",
                &Tensor::from_i64(vec![], ElementType::U8, vec![0]).unwrap(),
            ),
            ("sy", &f32t(&[], vec![1.0])),
            (
                "zy",
                &Tensor::from_i64(vec![], ElementType::U8, vec![100]).unwrap(),
            ),
        ],
    );
    let a = Tensor::from_i64(vec![1, 2], ElementType::U8, vec![12, 12]).unwrap();
    let b = Tensor::from_i64(vec![2, 3], ElementType::U8, vec![1, 2, 255, 1, 3, 255]).unwrap();
    let y = &run(&bytes, &ImportOptions::default(), &[a, b])[0];
    assert_eq!(y.dtype(), ElementType::U8);
    // (a - 10) = [2, 2]; C = [4, 10, 1020]; C * 0.25 + 100 = [101, 102.5, 355]:
    // the tie rounds to even, 355 saturates.
    assert_eq!(y.to_i64_vec(), vec![101, 102, 255]);
}

fn a_graph(name: &str, g: proto::GraphProto) -> proto::AttributeProto {
    proto::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Graph as i32,
        g: Some(g),
        ..Default::default()
    }
}
fn subgraph(
    name: &str,
    nodes: Vec<proto::NodeProto>,
    inputs: Vec<proto::ValueInfoProto>,
    outputs: Vec<proto::ValueInfoProto>,
) -> proto::GraphProto {
    proto::GraphProto {
        name: name.into(),
        node: nodes,
        input: inputs,
        output: outputs,
        ..Default::default()
    }
}
const BOOL: i32 = 9;

#[test]
fn if_on_a_known_condition_is_its_branch_inlined() {
    // then: x + 1 (x from the enclosing graph); else: x * 3.
    let branch = |op: &str, k: f32, out_name: &str| {
        subgraph(
            out_name,
            vec![
                node(
                    "Constant",
                    "",
                    &[],
                    &[&format!("{out_name}_k")],
                    vec![a_tensor("value", &f32t(&[], vec![k]))],
                ),
                node(
                    op,
                    "",
                    &["x", &format!("{out_name}_k")],
                    &[out_name],
                    vec![],
                ),
            ],
            vec![],
            vec![out(out_name)],
        )
    };
    let bytes = model(
        13,
        vec![node(
            "If",
            "if",
            &["c"],
            &["y"],
            vec![
                a_graph("then_branch", branch("Add", 1.0, "t")),
                a_graph("else_branch", branch("Mul", 3.0, "e")),
            ],
        )],
        vec![vi("c", BOOL, &[]), vi("x", F, &[D::N(2)])],
        &["y"],
        &[],
    );
    let m = decode_model(&bytes).unwrap();
    let x = f32t(&[2], vec![1.0, 2.0]);
    for (c, want) in [(true, vec![2.0, 3.0]), (false, vec![3.0, 6.0])] {
        let ct = Tensor::from_bool(vec![], vec![c]).unwrap();
        let mut opts = ImportOptions::default();
        opts.static_inputs.insert("c".into(), ct.clone());
        let g = import_model(&m, &opts).unwrap();
        assert_eq!(g.run(&[ct, x.clone()]).unwrap()[0].to_f32_vec(), want);
    }
    let e = import_model(&m, &ImportOptions::default()).unwrap_err();
    assert!(
        matches!(e, OnnxError::Unsupported { .. })
            && e.to_string()
                .contains("the condition `c` is not known at import"),
        "{e}"
    );
}

/// `Loop(M, cond, acc)`: acc += x[i]; scan out acc; cond_out = i < stop
/// (`stop` an initializer of the body).
fn loop_model(stop: i64) -> Vec<u8> {
    let body = proto::GraphProto {
        name: "body".into(),
        node: vec![
            node("Unsqueeze", "", &["i", "axes"], &["i1"], vec![]),
            node("Add", "", &["i1", "one"], &["i2"], vec![]),
            node("Slice", "", &["x", "i1", "i2"], &["xi"], vec![]),
            node("Add", "", &["acc", "xi"], &["acc_out"], vec![]),
            node("Identity", "", &["acc_out"], &["scan"], vec![]),
            node("Less", "", &["i", "stop"], &["cond_out"], vec![]),
        ],
        initializer: vec![
            encode_tensor("axes", &i64t(&[1], vec![0])),
            encode_tensor("one", &i64t(&[1], vec![1])),
            encode_tensor("stop", &i64t(&[], vec![stop])),
        ],
        input: vec![
            vi("i", I64, &[]),
            vi("cond", BOOL, &[]),
            vi("acc", F, &[D::N(1)]),
        ],
        output: vec![out("cond_out"), out("acc_out"), vi("scan", F, &[D::N(1)])],
        ..Default::default()
    };
    model(
        13,
        vec![node(
            "Loop",
            "loop",
            &["m", "c", "acc0"],
            &["acc", "scans"],
            vec![a_graph("body", body)],
        )],
        vec![vi("x", F, &[D::N(5)])],
        &["acc", "scans"],
        &[
            ("m", &i64t(&[], vec![4])),
            ("c", &Tensor::from_bool(vec![], vec![true]).unwrap()),
            ("acc0", &f32t(&[1], vec![10.0])),
        ],
    )
}

#[test]
fn loop_with_known_trip_count_and_conditions_unrolls() {
    let x = f32t(&[5], vec![1.0, 2.0, 3.0, 4.0, 5.0]);
    // The trip count (4) ends it.
    let got = run(
        &loop_model(100),
        &ImportOptions::default(),
        std::slice::from_ref(&x),
    );
    assert_eq!(got[0].to_f32_vec(), vec![20.0]);
    assert_eq!(got[1].shape(), &[4, 1]);
    assert_eq!(got[1].to_f32_vec(), vec![11.0, 13.0, 16.0, 20.0]);
    // The body's condition ends it: iterations 0 and 1 run (cond_out = i < 1).
    let got = run(
        &loop_model(1),
        &ImportOptions::default(),
        std::slice::from_ref(&x),
    );
    assert_eq!(got[1].to_f32_vec(), vec![11.0, 13.0]);
    // The condition is checked after each iteration: one runs.
    let got = run(
        &loop_model(-1),
        &ImportOptions::default(),
        std::slice::from_ref(&x),
    );
    assert_eq!(got[1].shape(), &[1, 1]);
    // No iteration (M = 0): the carried value is the initial one, the scan
    // output is empty with the body's declared type.
    let bytes = loop_model(5);
    let mut m = decode_model(&bytes).unwrap();
    m.graph.initializers.retain(|(n, _)| n != "m");
    m.graph.initializers.push(("m".into(), i64t(&[], vec![0])));
    let g = import_model(&m, &ImportOptions::default()).unwrap();
    let got = g.run(std::slice::from_ref(&x)).unwrap();
    assert_eq!(got[0].to_f32_vec(), vec![10.0]);
    assert_eq!(got[1].shape(), &[0, 1]);
}

#[test]
fn loop_errors_name_the_body_node() {
    let bytes = loop_model(100);
    let mut m = decode_model(&bytes).unwrap();
    // A body node that does not type-check: acc (f32) + axes (i64).
    let loop_node = m.graph.nodes[0].clone();
    let ipu_onnx::model::Attribute::Graph(mut body) = loop_node.attributes["body"].clone() else {
        panic!("no body");
    };
    body.nodes[3].inputs[1] = "axes".into();
    body.nodes[3].name = "bad_add".into();
    m.graph.nodes[0]
        .attributes
        .insert("body".into(), ipu_onnx::model::Attribute::Graph(body));
    let e = import_model(&m, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("node `loop/iteration0/bad_add` (Add)"), "{e}");
}

/// `Scan` summing the rows of x (a running sum as the scan output).
fn scan_model(
    opset: i64,
    attrs: Vec<proto::AttributeProto>,
    x_dims: &[i64],
    s_dims: &[i64],
) -> Vec<u8> {
    let body = subgraph(
        "body",
        vec![
            node("Add", "", &["sum_in", "row"], &["sum_out"], vec![]),
            node("Identity", "", &["sum_out"], &["scan_out"], vec![]),
        ],
        vec![vi("sum_in", F, &[D::N(2)]), vi("row", F, &[D::N(2)])],
        vec![out("sum_out"), out("scan_out")],
    );
    let mut attrs = attrs;
    attrs.push(a_graph("body", body));
    attrs.push(a_int("num_scan_inputs", 1));
    let ins: &[&str] = if opset < 9 {
        &["", "s", "x"]
    } else {
        &["s", "x"]
    };
    let dims = |v: &[i64]| v.iter().map(|&n| D::N(n)).collect::<Vec<_>>();
    model(
        opset,
        vec![node("Scan", "scan", ins, &["y", "z"], attrs)],
        vec![vi("s", F, &dims(s_dims)), vi("x", F, &dims(x_dims))],
        &["y", "z"],
        &[],
    )
}

#[test]
fn scan_unrolls_over_its_static_length() {
    let x = f32t(&[3, 2], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let s = f32t(&[2], vec![0.5, 0.5]);
    let bytes = scan_model(9, vec![], &[3, 2], &[2]);
    let got = run(&bytes, &ImportOptions::default(), &[s.clone(), x.clone()]);
    assert_eq!(got[0].to_f32_vec(), vec![9.5, 12.5]);
    assert_eq!(got[1].to_f32_vec(), vec![1.5, 2.5, 4.5, 6.5, 9.5, 12.5]);
    // The input read from its end, the output stacked on axis 1 and reversed.
    let bytes = scan_model(
        9,
        vec![
            a_ints("scan_input_directions", &[1]),
            a_ints("scan_output_axes", &[1]),
            a_ints("scan_output_directions", &[1]),
        ],
        &[3, 2],
        &[2],
    );
    let got = run(&bytes, &ImportOptions::default(), &[s.clone(), x.clone()]);
    assert_eq!(got[1].shape(), &[2, 3]);
    // Steps: rows 2, 1, 0 -> sums [5.5, 6.5], [8.5, 10.5], [9.5, 12.5]; reversed.
    assert_eq!(got[1].to_f32_vec(), vec![9.5, 8.5, 5.5, 12.5, 10.5, 6.5]);
    // Opset 8: a batch dimension first, each batch scanned on its own.
    let bytes = scan_model(8, vec![], &[2, 3, 2], &[2, 2]);
    let xb = f32t(&[2, 3, 2], (1..=12).map(|v| v as f32).collect());
    let sb = f32t(&[2, 2], vec![0.0, 0.0, 100.0, 100.0]);
    let got = run(&bytes, &ImportOptions::default(), &[sb, xb]);
    assert_eq!(got[0].to_f32_vec(), vec![9.0, 12.0, 127.0, 130.0]);
    assert_eq!(got[1].shape(), &[2, 3, 2]);
}

/// A model with several unmapped op types gets one error listing each
/// type once (its opset, first node and count), subgraphs and other
/// domains included, in order of first appearance; the mapped nodes
/// around them do not stop the listing.
#[test]
fn every_unsupported_op_is_listed_at_once() {
    let mut custom = node("FancyOp", "", &["x"], &["c"], vec![]);
    custom.domain = "com.example".into();
    let branch = proto::GraphProto {
        name: "then".into(),
        node: vec![node("Frobnicate", "inner_frob", &["x"], &["t"], vec![])],
        output: vec![out("t")],
        ..Default::default()
    };
    let cond = Tensor::from_bool(vec![], vec![true]).unwrap();
    let if_node = node(
        "If",
        "branch",
        &["cond"],
        &["z"],
        vec![
            proto::AttributeProto {
                name: "then_branch".into(),
                r#type: AttributeType::Graph as i32,
                g: Some(branch.clone()),
                ..Default::default()
            },
            proto::AttributeProto {
                name: "else_branch".into(),
                r#type: AttributeType::Graph as i32,
                g: Some(branch),
                ..Default::default()
            },
        ],
    );
    let bytes = model(
        17,
        vec![
            node("Relu", "ok", &["x"], &["r"], vec![]),
            node("Frobnicate", "/backbone/frob_1", &["r"], &["a"], vec![]),
            node("Twiddle", "", &["a"], &["b"], vec![]),
            node("Frobnicate", "/backbone/frob_2", &["b"], &["d"], vec![]),
            custom,
            if_node,
        ],
        vec![vi("x", F, &[D::N(2), D::N(3)])],
        &["d", "c", "z"],
        &[("cond", &cond)],
    );
    let e = import_model(&decode_model(&bytes).unwrap(), &ImportOptions::default()).unwrap_err();
    let OnnxError::UnsupportedOps(ops) = &e else {
        panic!("unexpected {e:?}");
    };
    let got: Vec<(&str, &str, i64, &str, usize)> = ops
        .iter()
        .map(|o| {
            (
                o.domain.as_str(),
                o.op_type.as_str(),
                o.opset,
                o.first_node.as_str(),
                o.count,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("", "Frobnicate", 17, "/backbone/frob_1", 4),
            ("", "Twiddle", 17, "Twiddle_2", 1),
            ("com.example", "FancyOp", 0, "FancyOp_4", 1),
        ]
    );
    let msg = e.to_string();
    assert!(msg.starts_with("the model has 3 op types"), "{msg}");
    assert!(
        msg.contains("Frobnicate (opset 17), 4 nodes, the first `/backbone/frob_1`"),
        "{msg}"
    );
    assert!(
        msg.contains("com.example:FancyOp (opset 0), node `FancyOp_4`"),
        "{msg}"
    );
    assert_eq!(
        ipu_onnx::import::unsupported_ops(&decode_model(&bytes).unwrap()).len(),
        3
    );
}

/// A direct 2-D conv: `x` [N, C, H, W], `w` [M, C/g, KH, KW], pads
/// (top, left, bottom, right), in f64.
#[allow(clippy::too_many_arguments)]
fn naive_conv2d(
    x: &[f32],
    xs: [usize; 4],
    w: &[f32],
    ws: [usize; 4],
    stride: [usize; 2],
    dil: [usize; 2],
    pads: [usize; 4],
    group: usize,
) -> (Vec<f32>, [usize; 4]) {
    let [n, c, h, wd] = xs;
    let [m, cg, kh, kw] = ws;
    let oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) / stride[0] + 1;
    let ow = (wd + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) / stride[1] + 1;
    let mg = m / group;
    let mut y = vec![0f32; n * m * oh * ow];
    for b in 0..n {
        for oc in 0..m {
            let g = oc / mg;
            for i in 0..oh {
                for j in 0..ow {
                    let mut acc = 0f64;
                    for ci in 0..cg {
                        for ki in 0..kh {
                            for kj in 0..kw {
                                let r = (i * stride[0] + ki * dil[0]) as i64 - pads[0] as i64;
                                let s = (j * stride[1] + kj * dil[1]) as i64 - pads[1] as i64;
                                if r < 0 || s < 0 || r >= h as i64 || s >= wd as i64 {
                                    continue;
                                }
                                let xv =
                                    x[((b * c + g * cg + ci) * h + r as usize) * wd + s as usize];
                                let wv = w[((oc * cg + ci) * kh + ki) * kw + kj];
                                acc += xv as f64 * wv as f64;
                            }
                        }
                    }
                    y[((b * m + oc) * oh + i) * ow + j] = acc as f32;
                }
            }
        }
    }
    (y, [n, m, oh, ow])
}

/// A conv test: attributes, the explicit pads they amount to, the
/// strides, the dilations.
type ConvCase = (
    Vec<proto::AttributeProto>,
    [usize; 4],
    [usize; 2],
    [usize; 2],
);

/// `Conv` with groups, strides, dilations and explicit or automatic pads
/// against a direct computation; the bias is added per output channel.
#[test]
fn conv_matches_a_direct_computation() {
    let x = f32t(&[1, 4, 7, 6], ramp(168));
    let w = f32t(&[6, 2, 3, 2], ramp(72).iter().map(|v| v * 0.5).collect());
    let b = f32t(&[6], vec![0.5, -1.0, 0.25, 0.0, 2.0, -0.75]);
    let cases: Vec<ConvCase> = vec![
        (
            vec![a_ints("pads", &[1, 0, 2, 1]), a_ints("strides", &[2, 1])],
            [1, 0, 2, 1],
            [2, 1],
            [1, 1],
        ),
        (
            vec![
                a_ints("dilations", &[2, 1]),
                a_ints("kernel_shape", &[3, 2]),
            ],
            [0; 4],
            [1, 1],
            [2, 1],
        ),
        // SAME_UPPER: out = ceil(in / stride), the pads split evenly.
        (
            vec![a_str("auto_pad", "SAME_UPPER"), a_ints("strides", &[2, 2])],
            [1, 0, 1, 0],
            [2, 2],
            [1, 1],
        ),
        (
            // SAME_LOWER: an odd pad total puts the extra one low.
            vec![a_str("auto_pad", "SAME_LOWER")],
            [1, 1, 1, 0],
            [1, 1],
            [1, 1],
        ),
        (vec![a_str("auto_pad", "VALID")], [0; 4], [1, 1], [1, 1]),
    ];
    for (attrs, pads, stride, dil) in cases {
        let mut attrs = attrs;
        attrs.push(a_int("group", 2));
        let bytes = model(
            11,
            vec![node("Conv", "conv", &["x", "w", "b"], &["y"], attrs)],
            vec![vi("x", F, &[D::N(1), D::N(4), D::N(7), D::N(6)])],
            &["y"],
            &[("w", &w), ("b", &b)],
        );
        let got = run(&bytes, &ImportOptions::default(), std::slice::from_ref(&x)).remove(0);
        let (want, shape) = naive_conv2d(
            x.as_f32().unwrap(),
            [1, 4, 7, 6],
            w.as_f32().unwrap(),
            [6, 2, 3, 2],
            stride,
            dil,
            pads,
            2,
        );
        assert_eq!(got.shape(), &shape, "pads {pads:?}");
        let plane = shape[2] * shape[3];
        for (i, (g, v)) in got.as_f32().unwrap().iter().zip(&want).enumerate() {
            let bias = b.as_f32().unwrap()[(i / plane) % 6];
            assert_eq!(*g, v + bias, "pads {pads:?} element {i}");
        }
    }
}

/// A `BatchNormalization` right after a `Conv` with constant weights is
/// folded into it: one conv and one bias addition, no normalization ops,
/// and the values of the conv followed by the normalization.
#[test]
fn batch_norm_folds_into_the_conv_before_it() {
    let x = f32t(&[2, 3, 5, 5], ramp(150));
    let w = f32t(&[4, 3, 3, 3], ramp(108).iter().map(|v| v * 0.25).collect());
    let stats: Vec<Tensor> = [
        vec![1.5f32, 0.5, -1.0, 2.0],
        vec![0.1, -0.2, 0.3, 0.0],
        vec![0.25, -0.5, 1.0, 0.0],
        vec![1.0, 2.0, 0.5, 4.0],
    ]
    .into_iter()
    .map(|v| f32t(&[4], v))
    .collect();
    let inits: Vec<(&str, &Tensor)> = vec![
        ("w", &w),
        ("scale", &stats[0]),
        ("beta", &stats[1]),
        ("mean", &stats[2]),
        ("var", &stats[3]),
    ];
    let bn_inputs = ["c", "scale", "beta", "mean", "var"];
    let conv = |out: &str| {
        node(
            "Conv",
            "conv",
            &["x", "w"],
            &[out],
            vec![a_ints("pads", &[1; 4])],
        )
    };
    let bn = || node("BatchNormalization", "bn", &bn_inputs, &["y"], vec![]);
    let input = || vec![vi("x", F, &[D::N(2), D::N(3), D::N(5), D::N(5)])];
    let bytes = model(15, vec![conv("c"), bn()], input(), &["y"], &inits);
    let g = import_model(&decode_model(&bytes).unwrap(), &ImportOptions::default()).unwrap();
    let kinds: Vec<&str> = g
        .nodes
        .iter()
        .filter(|n| !matches!(n.op, OpKind::Constant(_)))
        .map(|n| n.op.name())
        .collect();
    assert_eq!(kinds, vec!["conv", "add"], "{g}");
    let got = g.run(std::slice::from_ref(&x)).unwrap().remove(0);
    // The same model with the normalization kept apart (its input is the
    // conv's result plus 0, not the conv's): the values agree to rounding.
    let zero = f32t(&[], vec![0.0]);
    let mut apart_inits = inits.clone();
    apart_inits.push(("zero", &zero));
    let plus0 = node("Add", "plus0", &["c0", "zero"], &["c"], vec![]);
    let apart = model(
        15,
        vec![conv("c0"), plus0, bn()],
        input(),
        &["y"],
        &apart_inits,
    );
    let want = run(&apart, &ImportOptions::default(), std::slice::from_ref(&x)).remove(0);
    assert_eq!(got.shape(), want.shape());
    // A conv result that something else reads too is not folded (the conv
    // would be computed twice): the normalization stays.
    let shared = model(15, vec![conv("c"), bn()], input(), &["y", "c"], &inits);
    let g2 = import_model(&decode_model(&shared).unwrap(), &ImportOptions::default()).unwrap();
    let convs = g2.nodes.iter().filter(|n| n.op.name() == "conv").count();
    assert_eq!(convs, 1, "{g2}");
    assert!(g2.nodes.iter().any(|n| n.op.name() == "sub"), "{g2}");
    let scale = want
        .as_f32()
        .unwrap()
        .iter()
        .fold(0f32, |m, v| m.max(v.abs()));
    for (a, b) in got.as_f32().unwrap().iter().zip(want.as_f32().unwrap()) {
        assert!((a - b).abs() <= 1e-5 * scale, "{a} vs {b}");
    }
}

/// A constant-zero `Pad` of the spatial axes that only a `Conv` reads (how
/// exporters write TensorFlow's SAME padding) becomes the conv's own pads:
/// no pad op left, the values of the pad then the conv. A pad with another
/// value, on the channel axis, or read by something else too, stays.
#[test]
fn zero_pad_before_a_conv_becomes_its_pads() {
    let x = f32t(&[1, 2, 5, 6], ramp(60));
    let w = f32t(&[3, 2, 3, 3], ramp(54).iter().map(|v| v * 0.5).collect());
    let build = |pads: &[i64], value: f32, outputs: &[&str]| {
        let pads = i64t(&[8], pads.to_vec());
        let v = f32t(&[], vec![value]);
        let conv = node(
            "Conv",
            "conv",
            &["p", "w"],
            &["y"],
            vec![a_ints("strides", &[2, 2]), a_ints("pads", &[0, 1, 0, 0])],
        );
        let pad = node("Pad", "pad", &["x", "pads", "v"], &["p"], vec![]);
        let input = vec![vi("x", F, &[D::N(1), D::N(2), D::N(5), D::N(6)])];
        let inits = [("w", &w), ("pads", &pads), ("v", &v)];
        model(17, vec![pad, conv], input, outputs, &inits)
    };
    let ops = |bytes: &[u8]| {
        let g = import_model(&decode_model(bytes).unwrap(), &ImportOptions::default()).unwrap();
        let convs: Vec<Vec<usize>> = g
            .nodes
            .iter()
            .filter_map(|n| match &n.op {
                OpKind::Conv { pads, .. } => Some(pads.clone()),
                _ => None,
            })
            .collect();
        let pads = g.nodes.iter().filter(|n| n.op.name() == "pad").count();
        (
            convs,
            pads,
            g.run(std::slice::from_ref(&x)).unwrap().remove(0),
        )
    };
    // TensorFlow's SAME for a 3x3 kernel at stride 2: one more row and
    // column after than before.
    let same = [0, 0, 0, 1, 0, 0, 1, 1];
    let (convs, pads, fused) = ops(&build(&same, 0.0, &["y"]));
    assert_eq!((convs, pads), (vec![vec![0, 2, 1, 1]], 0));
    // Read by a graph output too: the pad stays and the conv reads it.
    let (convs, pads, apart) = ops(&build(&same, 0.0, &["y", "p"]));
    assert_eq!((convs, pads), (vec![vec![0, 1, 0, 0]], 1));
    assert_eq!(fused.shape(), apart.shape());
    for (a, b) in fused.as_f32().unwrap().iter().zip(apart.as_f32().unwrap()) {
        assert!((a - b).abs() <= 1e-5, "{a} vs {b}");
    }
    // Another pad value, or a crop (a negative pad): not the conv's pads.
    assert_eq!(ops(&build(&same, 1.0, &["y"])).1, 1);
    assert_eq!(ops(&build(&[0, 0, -1, 0, 0, 0, 0, 1], 0.0, &["y"])).1, 1);
}

/// `MaxPool` and `AveragePool` with pads, strides and `ceil_mode`, and the
/// average's two divisors, against values worked by hand.
#[test]
fn pools_follow_ceil_mode_and_count_include_pad() {
    // 1x1x5: [1, 2, 3, 4, 5], kernel 2, stride 2, pads (1, 0).
    let x = f32t(&[1, 1, 5], vec![1.0, 2.0, 3.0, 4.0, 5.0]);
    let pool = |op: &str, extra: Vec<proto::AttributeProto>| {
        let mut attrs = vec![
            a_ints("kernel_shape", &[2]),
            a_ints("strides", &[2]),
            a_ints("pads", &[1, 0]),
        ];
        attrs.extend(extra);
        let bytes = model(
            19,
            vec![node(op, "pool", &["x"], &["y"], attrs)],
            vec![vi("x", F, &[D::N(1), D::N(1), D::N(5)])],
            &["y"],
            &[],
        );
        let y = run(&bytes, &ImportOptions::default(), std::slice::from_ref(&x)).remove(0);
        y.as_f32().unwrap().to_vec()
    };
    // Windows [-1, 0], [1, 2], [3, 4]: floor mode has 3 outputs.
    assert_eq!(pool("MaxPool", vec![]), vec![1.0, 3.0, 5.0]);
    // The Indices output: where each maximum is in the input.
    let with_indices = model(
        19,
        vec![node(
            "MaxPool",
            "pool",
            &["x"],
            &["y", "i"],
            vec![
                a_ints("kernel_shape", &[2]),
                a_ints("strides", &[2]),
                a_ints("pads", &[1, 0]),
            ],
        )],
        vec![vi("x", F, &[D::N(1), D::N(1), D::N(5)])],
        &["i"],
        &[],
    );
    let i = run(
        &with_indices,
        &ImportOptions::default(),
        std::slice::from_ref(&x),
    )
    .remove(0);
    assert_eq!(i.as_i64().unwrap(), &[0, 2, 4]);
    assert_eq!(pool("AveragePool", vec![]), vec![1.0, 2.5, 4.5]);
    assert_eq!(
        pool("AveragePool", vec![a_int("count_include_pad", 1)]),
        vec![0.5, 2.5, 4.5]
    );
    // Padded length 6: ceil mode adds no window starting past the input.
    assert_eq!(
        pool("MaxPool", vec![a_int("ceil_mode", 1)]),
        vec![1.0, 3.0, 5.0]
    );
    // Without the pad, ceil mode keeps the partial last window [4, 5).
    let bytes = model(
        19,
        vec![node(
            "AveragePool",
            "pool",
            &["x"],
            &["y"],
            vec![
                a_ints("kernel_shape", &[2]),
                a_ints("strides", &[2]),
                a_int("ceil_mode", 1),
                a_int("count_include_pad", 1),
            ],
        )],
        vec![vi("x", F, &[D::N(1), D::N(1), D::N(5)])],
        &["y"],
        &[],
    );
    let y = run(&bytes, &ImportOptions::default(), std::slice::from_ref(&x)).remove(0);
    assert_eq!(y.as_f32().unwrap(), &[1.5, 3.5, 5.0]);
}

/// `ConvTranspose` scatters each input element through the kernel; with
/// `output_shape` the pads follow from the wanted size.
#[test]
fn conv_transpose_scatters_through_the_kernel() {
    let x = f32t(&[1, 1, 3], vec![1.0, 2.0, 3.0]);
    let w = f32t(&[1, 2, 2], vec![1.0, 10.0, 100.0, 1000.0]);
    let bytes = |attrs: Vec<proto::AttributeProto>| {
        model(
            11,
            vec![node("ConvTranspose", "ct", &["x", "w"], &["y"], attrs)],
            vec![vi("x", F, &[D::N(1), D::N(1), D::N(3)])],
            &["y"],
            &[("w", &w)],
        )
    };
    // Stride 2, kernel 2: [x0, 10 x0, x1, 10 x1, x2, 10 x2] per channel.
    let y = run(
        &bytes(vec![a_ints("strides", &[2])]),
        &ImportOptions::default(),
        std::slice::from_ref(&x),
    )
    .remove(0);
    assert_eq!(y.shape(), &[1, 2, 6]);
    assert_eq!(
        y.as_f32().unwrap(),
        &[1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 100.0, 1000.0, 200.0, 2000.0, 300.0, 3000.0]
    );
    // Stride 1: overlapping taps add; output_shape 3 crops one (high).
    let y = run(
        &bytes(vec![a_ints("output_shape", &[3])]),
        &ImportOptions::default(),
        std::slice::from_ref(&x),
    )
    .remove(0);
    assert_eq!(y.shape(), &[1, 2, 3]);
    assert_eq!(
        y.as_f32().unwrap(),
        &[1.0, 12.0, 23.0, 100.0, 1200.0, 2300.0]
    );
}

/// A conv whose output would be enormous is refused with a diagnostic
/// naming the node, not an abort.
#[test]
fn huge_windows_are_diagnostics() {
    let w = f32t(&[1, 1, 1], vec![1.0]);
    let bytes = model(
        11,
        vec![node(
            "Conv",
            "wide",
            &["x", "w"],
            &["y"],
            vec![a_ints("pads", &[2_000_000_000, 2_000_000_000])],
        )],
        vec![vi("x", F, &[D::N(4096), D::N(1), D::N(4)])],
        &["y"],
        &[("w", &w)],
    );
    let g = import_model(&decode_model(&bytes).unwrap(), &ImportOptions::default()).unwrap();
    let x = Tensor::zeros(vec![4096, 1, 4], ElementType::F32);
    let e = g.run(&[x]).unwrap_err();
    assert!(e.to_string().contains("wide"), "{e}");
}

/// `Resize`: nearest (its index rounding, coordinate transformation) and
/// linear, from scales or sizes, against values worked by hand; a size
/// past the tensor-size limit is a diagnostic before allocation.
#[test]
fn resize_nearest_and_linear() {
    let x = f32t(&[1, 1, 2], vec![1.0, 3.0]);
    let resize =
        |attrs: Vec<proto::AttributeProto>, scales: Option<Vec<f32>>, sizes: Option<Vec<i64>>| {
            let s = scales.map(|v| f32t(&[3], v));
            let z = sizes.map(|v| i64t(&[3], v));
            let mut inits: Vec<(&str, &Tensor)> = Vec::new();
            if let Some(s) = &s {
                inits.push(("scales", s));
            }
            if let Some(z) = &z {
                inits.push(("sizes", z));
            }
            let ins: &[&str] = if z.is_some() {
                &["x", "", "", "sizes"]
            } else {
                &["x", "", "scales"]
            };
            model(
                19,
                vec![node("Resize", "rs", ins, &["y"], attrs)],
                vec![vi("x", F, &[D::N(1), D::N(1), D::N(2)])],
                &["y"],
                &inits,
            )
        };
    let run1 = |bytes: Vec<u8>| {
        run(&bytes, &ImportOptions::default(), std::slice::from_ref(&x))
            .remove(0)
            .as_f32()
            .unwrap()
            .to_vec()
    };
    // Asymmetric nearest, scale 2: output x reads input x / 2, floored.
    let nearest = vec![
        a_str("coordinate_transformation_mode", "asymmetric"),
        a_str("nearest_mode", "floor"),
    ];
    assert_eq!(
        run1(resize(nearest, Some(vec![1.0, 1.0, 2.0]), None)),
        vec![1.0, 1.0, 3.0, 3.0]
    );
    // Linear, align_corners, 4 outputs: input coordinates 0, 1/3, 2/3, 1.
    let linear = vec![
        a_str("mode", "linear"),
        a_str("coordinate_transformation_mode", "align_corners"),
    ];
    let y = run1(resize(linear, None, Some(vec![1, 1, 4])));
    let want = [1.0f32, 1.0 + 2.0 / 3.0, 1.0 + 4.0 / 3.0, 3.0];
    for (g, w) in y.iter().zip(want) {
        assert!((g - w).abs() <= 1e-6, "{y:?}");
    }
    // Half-pixel linear, scale 2: coordinates -0.25 (clamped), 0.25, 0.75,
    // 1.25 (clamped).
    let y = run1(resize(
        vec![a_str("mode", "linear")],
        Some(vec![1.0, 1.0, 2.0]),
        None,
    ));
    assert_eq!(y, vec![1.0, 1.5, 2.5, 3.0]);
    // 2^31 - 1 f32 elements: refused before allocation, naming the node.
    let huge = resize(vec![], None, Some(vec![1, 1, i32::MAX as i64]));
    let g = import_model(&decode_model(&huge).unwrap(), &ImportOptions::default()).unwrap();
    let e = g.run(std::slice::from_ref(&x)).unwrap_err();
    assert!(e.to_string().contains("rs"), "{e}");
}

/// `--weights-precision f8E4M3FN` on x = Gather(emb, ids); y = x W + b: W,
/// the matmul's constant right-hand operand, is read through a saturating
/// cast to f8E4M3FN at scale 2^-7 (max |w| = 3: 3 x 2^7 = 384 <= 448 <
/// 768), x through a cast to f16, and the f16 product is cast back to f32;
/// the embedding table and the bias stay f32 constants.
#[test]
fn weights_precision_f8_casts_matmul_weights_only() {
    use ipu_onnx::import::precision::fp8_weight_scale;
    use ipu_onnx::WeightsPrecision;
    let w_values = vec![0.5, -0.25, 0.10546875, 0.1, 1.5, -3.0, 0.0, 0.0001];
    let w = f32t(&[2, 4], w_values.clone());
    let emb = f32t(&[5, 2], ramp(10));
    let b = f32t(&[4], vec![0.5, -0.25, 1.0, 2.0]);
    let bytes = model(
        17,
        vec![
            node("Gather", "gather", &["emb", "ids"], &["x"], vec![]),
            node("MatMul", "mm", &["x", "w"], &["h"], vec![]),
            node("Add", "add", &["h", "b"], &["y"], vec![]),
        ],
        vec![vi("ids", I64, &[D::N(3)])],
        &["y"],
        &[("emb", &emb), ("w", &w), ("b", &b)],
    );
    let opts = ImportOptions {
        weights_precision: WeightsPrecision::F8E4M3FN,
        ..Default::default()
    };
    let g = import_model(&decode_model(&bytes).unwrap(), &opts).unwrap();
    let casts: Vec<_> = g
        .nodes
        .iter()
        .filter(|n| matches!(n.op, OpKind::Cast { .. }))
        .collect();
    let to = |n: &ipu_onnx::MappedNode| match n.op {
        OpKind::Cast { to, .. } => to,
        _ => unreachable!(),
    };
    // x to f16, W to f8E4M3FN, the product back to f32.
    let kinds: Vec<ElementType> = casts.iter().map(|n| to(n)).collect();
    assert_eq!(
        kinds,
        [ElementType::F8E4M3FN, ElementType::F16, ElementType::F32]
    );
    let cast = casts[0];
    assert_eq!(
        cast.op,
        OpKind::Cast {
            to: ElementType::F8E4M3FN,
            saturate: true,
            scale: -7
        }
    );
    // The cast reads the constant W and feeds the matmul's right operand.
    let producer = |v: usize| g.nodes.iter().find(|n| n.outputs[0] == v).unwrap();
    assert_eq!(producer(cast.inputs[0]).op, OpKind::Constant(w.clone()));
    let mm = g.nodes.iter().find(|n| n.op == OpKind::MatMul).unwrap();
    assert_eq!(mm.inputs[0], casts[1].outputs[0]);
    assert_eq!(mm.inputs[1], cast.outputs[0]);
    assert_eq!(mm.outputs[0], casts[2].inputs[0]);
    assert_eq!(g.values[mm.outputs[0]].ty.dtype, ElementType::F16);
    // Every other constant is still f32: the table and the bias.
    let mut f32_constants: Vec<Tensor> = g
        .nodes
        .iter()
        .filter_map(|n| match &n.op {
            OpKind::Constant(t) if *t != w => Some(t.clone()),
            _ => None,
        })
        .collect();
    f32_constants.sort_by_key(|t| t.numel());
    assert_eq!(f32_constants, vec![b.clone(), emb.clone()]);
    // The codes, checked against ml_dtypes' float8_e4m3fn of w x 2^7:
    // 64, -32, 13.5 -> 14 (tie to even), 12.8 -> 13, 192, -384, 0 and
    // 0.0128 -> 7 x 2^-9 (subnormal).
    let w8 = ev(cast.op.clone(), &[&w]);
    let codes = [0x68, 0xE0, 0x56, 0x55, 0x74, 0xFC, 0x00, 0x07];
    assert_eq!(w8.fp8_codes().unwrap(), codes);
    assert_eq!(w8.fp8_scale(), -7);
    assert_eq!(fp8_weight_scale(&w_values, Fp8Format::E4M3FN), -7);
    // The graph computes with the FP8 weights (logical value code x 2^-7).
    let ids = i64t(&[3], vec![4, 0, 2]);
    let got = g.run(std::slice::from_ref(&ids)).unwrap();
    let wq = Tensor::from_fp8_codes(vec![2, 4], Fp8Format::E4M3FN, &codes, -7).unwrap();
    let x = ev(OpKind::Gather { axis: 0 }, &[&emb, &ids]);
    let cast_to = |to| OpKind::Cast {
        to,
        saturate: false,
        scale: 0,
    };
    let x16 = ev(cast_to(ElementType::F16), &[&x]);
    let h = ev(
        cast_to(ElementType::F32),
        &[&ev(OpKind::MatMul, &[&x16, &wq])],
    );
    let want = ev(OpKind::Add, &[&h, &b]);
    assert_eq!(got, vec![want]);
    // The default keeps W in f32 and adds no cast.
    let plain = import_model(&decode_model(&bytes).unwrap(), &ImportOptions::default()).unwrap();
    assert!(plain
        .nodes
        .iter()
        .all(|n| !matches!(n.op, OpKind::Cast { .. })));
}

/// The scale rule at its edges: the largest magnitude lands in (224, 448].
#[test]
fn fp8_weight_scale_keeps_the_largest_magnitude_below_448() {
    use ipu_onnx::import::precision::fp8_weight_scale;
    let s = |v: &[f32]| fp8_weight_scale(v, Fp8Format::E4M3FN);
    assert_eq!(s(&[448.0]), 0);
    assert_eq!(s(&[-448.5]), 1);
    assert_eq!(s(&[224.0]), -1);
    assert_eq!(s(&[224.01]), 0);
    assert_eq!(s(&[1.0, -0.5]), -8); // 256 <= 448 < 512
    assert_eq!(s(&[0.0, -0.0]), 0);
    assert_eq!(s(&[f32::NAN, f32::INFINITY, 2.0]), -7); // finite values only
}

/// A precision the importer does not know is refused, listing those it does.
#[test]
fn weights_precision_refuses_unknown_names() {
    use ipu_onnx::WeightsPrecision;
    assert_eq!(
        "f8E4M3FN".parse::<WeightsPrecision>(),
        Ok(WeightsPrecision::F8E4M3FN)
    );
    assert_eq!("f32".parse::<WeightsPrecision>(), Ok(WeightsPrecision::F32));
    let e = "fp8".parse::<WeightsPrecision>().unwrap_err();
    assert_eq!(
        e,
        "unknown weights precision 'fp8'; accepted: f32, f8E4M3FN (default f32)"
    );
}

/// Nodes and initializers of a model of dense layers.
#[derive(Default)]
struct Dense {
    nodes: Vec<proto::NodeProto>,
    inits: Vec<(String, Tensor)>,
}

impl Dense {
    /// Appends layer `scope` (`tag` names its values): `x` times its weight
    /// (`[rows, cols]`, a ramp from `skip`, over 8), plus a bias of 0.125
    /// each, then `act`. Returns its output's name.
    fn layer(
        &mut self,
        scope: &str,
        tag: &str,
        x: &str,
        dims: [usize; 2],
        skip: usize,
        act: &str,
    ) -> String {
        let [w, b, h, hb, y] = ["w", "b", "h", "hb", "y"].map(|v| format!("{v}{tag}"));
        let nodes = [
            ("MatMul", "fc/MatMul", [x, w.as_str()], h.as_str()),
            ("Add", "fc/Add", [h.as_str(), b.as_str()], hb.as_str()),
        ];
        for (op, name, ins, out) in nodes {
            let name = format!("{scope}/{name}");
            self.nodes.push(node(op, &name, &ins, &[out], vec![]));
        }
        let name = format!("{scope}/act/{act}");
        self.nodes.push(node(act, &name, &[&hb], &[&y], vec![]));
        let wv: Vec<f32> = ramp(dims[0] * dims[1] + skip)
            .into_iter()
            .skip(skip)
            .map(|v| v / 8.0)
            .collect();
        self.inits.push((w, f32t(&dims, wv)));
        self.inits.push((b, f32t(&[dims[1]], vec![0.125; dims[1]])));
        y
    }

    /// The model of input `x` (2x16) and output `y`, and a value of `x`.
    fn finish(self, y: &str) -> (Vec<u8>, Vec<Tensor>) {
        let refs: Vec<(&str, &Tensor)> = self.inits.iter().map(|(n, t)| (n.as_str(), t)).collect();
        let bytes = model(
            17,
            self.nodes,
            vec![vi("x", F, &[D::N(2), D::N(16)])],
            &[y],
            &refs,
        );
        (bytes, vec![f32t(&[2, 16], ramp(32))])
    }
}

/// Three layers of one scope (`/enc/layer.K/`), each a matmul by its own
/// weight, a bias equal in every layer and a tanh, then a fourth scoped
/// layer that ends in a sigmoid: `outline_layers` finds the three alike.
fn layered_model() -> (Vec<u8>, Vec<Tensor>) {
    let mut m = Dense::default();
    let mut x = "x".to_string();
    for k in 0..4 {
        let act = if k == 3 { "Sigmoid" } else { "Tanh" };
        x = m.layer(
            &format!("/enc/layer.{k}"),
            &k.to_string(),
            &x,
            [16, 16],
            k,
            act,
        );
    }
    m.finish(&x)
}

#[test]
fn repeated_layers_are_outlined_as_one_function() {
    let (bytes, inputs) = layered_model();
    let g = import_outlined(&bytes);
    let [o] = &g.outlines[..] else {
        panic!("one class of three layers alike: {:?}", g.outlines)
    };
    assert_eq!(o.scope, "/enc/layer.");
    assert_eq!(
        o.nodes.len(),
        3,
        "the sigmoid layer differs and stays inline"
    );
    // The weight differs per layer (a parameter); the bias is one constant.
    assert_eq!(o.fixed, vec![false, true]);
    // The emitted module: one function, three calls, the same numbers as
    // the graph imported without outlining.
    let (text, got) = emit_and_interpret(&g, &inputs);
    assert_eq!(
        text.matches("func.func private @enc_layer(").count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches("call @enc_layer(").count(), 3, "{text}");
    assert_eq!(text.matches("nn.sigmoid").count(), 1, "{text}");
    assert_eq!(text.matches("ipu.weight").count(), 1, "{text}");
    let inline = run(&bytes, &ImportOptions::default(), &inputs);
    assert_eq!(got, inline);
}

/// The model imported with `outline_layers`.
fn import_outlined(bytes: &[u8]) -> ipu_onnx::MappedGraph {
    let m = decode_model(bytes).unwrap();
    let opts = ImportOptions {
        outline_layers: true,
        ..Default::default()
    };
    import_model(&m, &opts).unwrap()
}

/// `g` emitted as IR (verified): its text, and `main` interpreted on
/// `inputs`.
fn emit_and_interpret(g: &ipu_onnx::MappedGraph, inputs: &[Tensor]) -> (String, Vec<Tensor>) {
    let mut r = ipu_ir::Registry::new();
    ipu_dialects::register_all_dialects(&mut r);
    let mut cx = ipu_ir::Context::new(std::sync::Arc::new(r));
    let module = ipu_onnx::emit::emit_graph(&mut cx, g, "m.onnx").unwrap();
    ipu_ir::verify::verify(&cx, module).unwrap();
    let text = ipu_ir::printer::op_to_string(&cx, module, Default::default());
    let main = cx.lookup_symbol(module, "main").unwrap();
    let got = ipu_dialects::interpret::interpret(&cx, main, inputs).unwrap();
    (text, got)
}

/// Two stages as a ResNet's (`/net/stages.S/layers.K/`): each stage's
/// layer 0 changes the width, so it is alike to no other; stage 0's layers
/// 1-2 are alike, and stage 1's layers 1-2 (tanh) and 3-4 (sigmoid) are two
/// classes of one scope.
fn staged_model() -> (Vec<u8>, Vec<Tensor>) {
    let mut m = Dense::default();
    let mut x = "x".to_string();
    let mut width = 16;
    for (st, layers, first_width) in [(0, 3, 8), (1, 5, 4)] {
        for k in 0..layers {
            let out_width = if k == 0 { first_width } else { width };
            let act = if k >= 3 { "Sigmoid" } else { "Tanh" };
            let scope = format!("/net/stages.{st}/layers.{k}");
            let dims = [width, out_width];
            x = m.layer(&scope, &format!("{st}_{k}"), &x, dims, 7 * k + st, act);
            width = out_width;
        }
    }
    m.finish(&x)
}

#[test]
fn alike_sibling_layers_of_every_scope_are_outlined_by_class() {
    let (bytes, inputs) = staged_model();
    let g = import_outlined(&bytes);
    // The stages differ, so each stage's layers are searched.
    let classes: Vec<(&str, usize)> = g
        .outlines
        .iter()
        .map(|o| (o.scope.as_str(), o.nodes.len()))
        .collect();
    assert_eq!(
        classes,
        [
            ("/net/stages.0/layers.", 2),
            ("/net/stages.1/layers.", 2),
            ("/net/stages.1/layers.", 2)
        ]
    );
    let (text, got) = emit_and_interpret(&g, &inputs);
    for (f, calls) in [
        ("net_stages_0_layers", 2),
        ("net_stages_1_layers", 2),
        ("net_stages_1_layers_1", 2),
    ] {
        assert_eq!(
            text.matches(&format!("func.func private @{f}(")).count(),
            1,
            "{text}"
        );
        assert_eq!(
            text.matches(&format!("call @{f}(")).count(),
            calls,
            "{text}"
        );
    }
    // Each stage's layer 0 stays inline (a tanh each); one per function.
    assert_eq!(text.matches("nn.tanh").count(), 2 + 2, "{text}");
    assert_eq!(text.matches("nn.sigmoid").count(), 1, "{text}");
    let inline = run(&bytes, &ImportOptions::default(), &inputs);
    assert_eq!(got, inline);
}

#[test]
fn a_layer_reading_another_layers_inner_value_stays_inline() {
    let (bytes, inputs) = layered_model();
    let mut m = decode_model(&bytes).unwrap();
    // Layer 2 adds layer 0's pre-activation to its own: layer 0 then hands
    // two values out, and is not a call; layers 1 and 2 differ (2 reads an
    // input 1 does not), so nothing is outlined.
    let add = &mut m.graph.nodes[7];
    assert_eq!(add.op_type, "Add");
    add.inputs[1] = "hb0".into();
    let opts = ImportOptions {
        outline_layers: true,
        ..Default::default()
    };
    let g = import_model(&m, &opts).unwrap();
    assert!(g.outlines.is_empty(), "{:?}", g.outlines);
    assert_eq!(g.run(&inputs).unwrap(), run_model(&m, &inputs));
}

fn run_model(m: &ipu_onnx::Model, inputs: &[Tensor]) -> Vec<Tensor> {
    import_model(m, &ImportOptions::default())
        .unwrap()
        .run(inputs)
        .unwrap()
}

/// Three layers as torch's dynamo exporter writes them: nodes named by op
/// alone (`node_MatMul_1`), each layer's weight under a name that tells no
/// scope (`val_1`), its bias under its module's (`enc.layer.1.fc.bias`),
/// then a tanh that reads a one-element constant; before them a scale by a
/// module parameter outside the layers (`emb.norm.weight`).
fn dynamo_layered_model() -> (Vec<u8>, Vec<Tensor>) {
    let mut nodes = vec![node(
        "Mul",
        "node_Mul_0",
        &["x", "emb.norm.weight"],
        &["e"],
        vec![],
    )];
    let mut inits = vec![
        ("emb.norm.weight".to_string(), f32t(&[16], vec![0.5; 16])),
        ("val_half".to_string(), f32t(&[], vec![0.5])),
    ];
    let mut x = "e".to_string();
    for k in 0..3 {
        let [h, hb, t, y] = ["h", "hb", "t", "y"].map(|v| format!("{v}{k}"));
        let (wn, bn) = (format!("val_{k}"), format!("enc.layer.{k}.fc.bias"));
        let steps: [(&str, &str, [&str; 2], &str); 3] = [
            ("MatMul", "MatMul", [&x, &wn], &h),
            ("Add", "Add", [&h, &bn], &hb),
            ("Mul", "Mul", [&hb, "val_half"], &t),
        ];
        for (op, name, ins, out) in steps {
            nodes.push(node(op, &format!("node_{name}_{k}"), &ins, &[out], vec![]));
        }
        nodes.push(node(
            "Tanh",
            &format!("node_tanh_{k}"),
            &[&t],
            &[&y],
            vec![],
        ));
        let wv: Vec<f32> = ramp(256 + k).into_iter().skip(k).map(|v| v / 8.0).collect();
        inits.push((wn, f32t(&[16, 16], wv)));
        inits.push((bn, f32t(&[16], vec![0.125 * (k as f32 + 1.0); 16])));
        x = y;
    }
    nodes.push(node("Sigmoid", "node_sigmoid", &[&x], &["out"], vec![]));
    let refs: Vec<(&str, &Tensor)> = inits.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let bytes = model(
        17,
        nodes,
        vec![vi("x", F, &[D::N(2), D::N(16)])],
        &["out"],
        &refs,
    );
    (bytes, vec![f32t(&[2, 16], ramp(32))])
}

#[test]
fn dynamo_layers_are_found_from_their_parameters_names() {
    let (bytes, inputs) = dynamo_layered_model();
    let g = import_outlined(&bytes);
    let [o] = &g.outlines[..] else {
        panic!("one class of three layers alike: {:?}", g.outlines)
    };
    assert_eq!(o.scope, "enc.layer.");
    assert_eq!(o.nodes.len(), 3, "all three layers");
    // Each layer: its matmul, its bias add, the scale and the tanh that
    // end it; the scale by `emb.norm.weight` and the sigmoid stay outside.
    let names =
        |ns: &[usize]| -> Vec<String> { ns.iter().map(|&n| g.nodes[n].name.clone()).collect() };
    let layer1: Vec<String> = names(&o.nodes[1])
        .into_iter()
        .filter(|n| n.starts_with("node_"))
        .collect();
    assert_eq!(
        layer1,
        ["node_MatMul_1", "node_Add_1", "node_Mul_1", "node_tanh_1"]
    );
    let (text, got) = emit_and_interpret(&g, &inputs);
    assert_eq!(text.matches("call @enc_layer(").count(), 3, "{text}");
    assert_eq!(text.matches("nn.sigmoid").count(), 1, "{text}");
    let inline = run(&bytes, &ImportOptions::default(), &inputs);
    assert_eq!(got, inline);
}
