#![cfg(feature = "mlir")]
//! Upstream MLIR (TOSA, linalg, arith) imported into the nn dialect:
//! printed forms, locations, numerics against the reference interpreter,
//! and diagnostics for what cannot be mapped.

use ipu_dialects::interpret::interpret;
use ipu_ir::printer::{op_to_string, PrintOptions};
use ipu_ir::{Context, Diagnostic, Op};
use ipu_mlir_import::{import_mlir, import_mlir_source};
use ipu_reference::{ElementType, Tensor};
use std::path::PathBuf;
use std::sync::Arc;

fn context() -> Context {
    let mut r = ipu_ir::Registry::new();
    ipu_dialects::register_all_dialects(&mut r);
    Context::new(Arc::new(r))
}

fn input(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/inputs")
        .join(name)
}

fn print(cx: &Context, op: Op, debug_info: bool) -> String {
    op_to_string(
        cx,
        op,
        PrintOptions {
            generic: false,
            debug_info,
        },
    )
}

fn import_file(cx: &mut Context, name: &str) -> Op {
    match import_mlir(cx, input(name)) {
        Ok(m) => m,
        Err(d) => panic!("{name}: {}", render(cx, &d)),
    }
}

fn render(cx: &Context, d: &Diagnostic) -> String {
    format!("{} at {}", d.message, ipu_ir::diag::print_loc(cx, d.loc))
}

fn func(cx: &Context, module: Op, name: &str) -> Op {
    cx.lookup_symbol(module, name)
        .unwrap_or_else(|| panic!("no function @{name}"))
}

fn f32s(shape: Vec<usize>, v: Vec<f32>) -> Tensor {
    Tensor::from_f32(shape, ElementType::F32, v).unwrap()
}

/// Asserts every line of `expected` is a line of `text` (trimmed), in order.
fn assert_lines(text: &str, expected: &[&str]) {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut at = 0;
    for e in expected {
        match lines[at..].iter().position(|l| l == e) {
            Some(p) => at += p + 1,
            None => panic!("missing (in order) line\n  {e}\nin\n{text}"),
        }
    }
}

/// Imports inline text expected to fail; returns the rendered diagnostic.
fn import_error(text: &str) -> String {
    let mut cx = context();
    match import_mlir_source(&mut cx, "err.mlir", text) {
        Ok(m) => panic!("imported:\n{}", print(&cx, m, false)),
        Err(d) => render(&cx, &d),
    }
}

#[test]
fn tosa_mlp_matches_the_nn_model() {
    let mut cx = context();
    let m = import_file(&mut cx, "tosa_mlp.mlir");
    let imported = func(&cx, m, "main");

    let nn_text = std::fs::read_to_string(input("mlp_nn.mlir")).unwrap();
    let mut ncx = context();
    let nm = ipu_ir::parser::parse_source(&mut ncx, "mlp_nn.mlir", &nn_text)
        .unwrap_or_else(|d| panic!("{}", render(&ncx, &d)));
    ipu_ir::verify::verify(&ncx, nm).unwrap();
    let direct = func(&ncx, nm, "main");

    let inputs = [
        f32s(
            vec![2, 4],
            vec![1.0, -2.0, 0.5, 3.0, -0.25, 0.75, 2.0, -1.5],
        ),
        f32s(vec![2, 4], vec![0.0; 8]),
        f32s(
            vec![2, 4],
            vec![10.0, 9.0, -8.0, 7.0, 6.5, -5.5, 4.25, 3.125],
        ),
    ];
    for x in inputs {
        let a = interpret(&cx, imported, std::slice::from_ref(&x)).unwrap();
        let b = interpret(&ncx, direct, std::slice::from_ref(&x)).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].shape(), &[2, 3]);
        assert_eq!(
            a[0].as_f32().unwrap(),
            b[0].as_f32().unwrap(),
            "input {x:?}"
        );
    }
    // A hand check of one output: x = 0 gives relu(b1) @ w2 + b2.
    let y = interpret(&cx, imported, &[f32s(vec![2, 4], vec![0.0; 8])]).unwrap();
    let relu_b1 = [0.1f32, 0.0, 0.3, 0.0, 0.5, 0.0, 0.7, 0.0];
    let w2_col0 = [1.0f32, 0.5, -0.25, 0.0, 1.0, -1.0, 0.5, 0.125];
    let z: f32 = relu_b1.iter().zip(w2_col0).map(|(a, b)| a * b).sum::<f32>() + 0.25;
    let expect = 1.0 / (1.0 + (-z).exp());
    assert!((y[0].as_f32().unwrap()[0] - expect).abs() < 1e-6);
}

#[test]
fn tosa_mlp_keeps_upstream_locations() {
    let mut cx = context();
    let m = import_file(&mut cx, "tosa_mlp.mlir");
    let text = print(&cx, m, true);
    let file = input("tosa_mlp.mlir").to_string_lossy().into_owned();
    assert_lines(
        &text,
        &[
            "func.func @main(%arg0: tensor<2x4xf32> loc(\"x\")) -> tensor<2x3xf32> {",
            "%0 = nn.reshape %arg0 : tensor<2x4xf32> -> tensor<1x2x4xf32> loc(\"mlp.py\":3:7)",
            "%2 = nn.matmul %0, %1 : (tensor<1x2x4xf32>, tensor<1x4x8xf32>) -> tensor<1x2x8xf32> \
             loc(\"fc1\"(\"mlp.py\":4:9))",
            "%4 = nn.add %2, %3 : (tensor<1x2x8xf32>, tensor<1x1x8xf32>) -> tensor<1x2x8xf32> \
             loc(\"fc1.bias\"(\"mlp.py\":4:9))",
            "%5 = nn.relu %4 : tensor<1x2x8xf32> loc(fused[\"mlp.py\":5:5, \"relu\"])",
            "%7 = nn.matmul %5, %6 : (tensor<1x2x8xf32>, tensor<1x8x3xf32>) -> tensor<1x2x3xf32> \
             loc(\"fc2\"(\"mlp.py\":6:9))",
            &format!("%8 = nn.constant dense<0.25> : tensor<1x1x3xf32> loc(\"{file}\":14:9)"),
            &format!("%10 = nn.sigmoid %9 : tensor<1x2x3xf32> loc(\"{file}\":21:9)"),
            &format!("return %11 : tensor<2x3xf32> loc(\"{file}\":23:3)"),
        ],
    );
    // Zero points and shapes leave no op behind.
    assert_eq!(text.matches("nn.constant").count(), 4, "{text}");
    assert!(!text.contains("tosa."), "{text}");
}

#[test]
fn tosa_ops_map_to_nn() {
    let mut cx = context();
    let m = import_file(&mut cx, "tosa_ops.mlir");
    let text = print(&cx, m, false);
    assert_lines(
        &text,
        &[
            "%0 = nn.sub %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "%1 = nn.mul %0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "%2 = nn.reciprocal %1 : tensor<2x3xf32>",
            "%3 = nn.exp %arg0 : tensor<2x3xf32>",
            "%4 = nn.tanh %arg0 : tensor<2x3xf32>",
            "%5 = nn.erf %arg1 : tensor<2x3xf32>",
            "%6 = nn.reduce_sum %arg0 {axes = array<i64: 0>, keepdims} : tensor<2x3xf32> -> tensor<1x3xf32>",
            "%7 = nn.reduce_max %arg0 {axes = array<i64: 1>, keepdims} : tensor<2x3xf32> -> tensor<2x1xf32>",
            "%8 = nn.transpose %arg0 {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>",
        ],
    );
    // tosa.clamp to [-1, 1]: max then min with scalar bounds; f16 x f16 -> f32
    // matmul widens its operands exactly and multiplies in f32; i8 x i8 -> i32
    // mul widens its operand (once: both sides are the same value).
    assert_lines(
        &text,
        &[
            "%9 = nn.constant dense<-1.0> : tensor<f32>",
            "%10 = nn.constant dense<1.0> : tensor<f32>",
            "%11 = nn.max %arg0, %9 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>",
            "%12 = nn.min %11, %10 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>",
            "%13 = nn.sigmoid %12 : tensor<2x3xf32>",
            "%14 = nn.cast %arg3 : tensor<1x2x3xf16> -> tensor<1x2x3xf32>",
            "%15 = nn.cast %arg4 : tensor<1x3x2xf16> -> tensor<1x3x2xf32>",
            "%16 = nn.matmul %14, %15 : (tensor<1x2x3xf32>, tensor<1x3x2xf32>) -> tensor<1x2x2xf32>",
            "%17 = nn.cast %arg2 : tensor<2x3xi8> -> tensor<2x3xi32>",
            "%18 = nn.mul %17, %17 : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>",
            "return %3, %4, %5, %2, %6, %7, %8, %13, %12, %18, %16 : tensor<2x3xf32>, tensor<2x3xf32>, \
             tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x1xf32>, tensor<3x2xf32>, \
             tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi32>, tensor<1x2x2xf32>",
        ],
    );
    // tosa.cast f32 -> i32 goes through i64, clamped to the i32 range.
    for line in [
        "nn.constant dense<-2147483648> : tensor<i64>",
        "nn.constant dense<2147483647> : tensor<i64>",
        " : tensor<6xi64> -> tensor<6xi32>",
        " : tensor<6xi64> -> tensor<6xi8>",
        "nn.cast %arg0 : tensor<6xf32> -> tensor<6xi1>",
        "nn.cast %arg0 : tensor<6xf32> -> tensor<6xf16>",
    ] {
        assert!(text.contains(line), "missing {line} in\n{text}");
    }

    // Numerics through the reference interpreter.
    let f = func(&cx, m, "ops");
    let a = f32s(vec![2, 3], vec![2.5, -2.5, 3.5, 1e10, -0.4, 0.5]);
    let b = f32s(vec![2, 3], vec![1.0, 2.0, -1.0, 0.5, 0.25, 4.0]);
    let i = Tensor::from_i64(vec![2, 3], ElementType::I8, vec![1, -2, 3, 100, -128, 0]).unwrap();
    let h = Tensor::from_f32(
        vec![1, 2, 3],
        ElementType::F16,
        vec![1.0, 2.0, 3.0, 0.5, -1.0, 2048.0],
    )
    .unwrap();
    let g = Tensor::from_f32(
        vec![1, 3, 2],
        ElementType::F16,
        vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0],
    )
    .unwrap();
    let out = interpret(&cx, f, &[a.clone(), b, i, h, g]).unwrap();
    // tosa.clamp [-1, 1].
    assert_eq!(out[8].as_f32().unwrap(), &[1.0, -1.0, 1.0, 1.0, -0.4, 0.5]);
    // i8 * i8 -> i32 does not wrap at 8 bits.
    assert_eq!(out[9].as_i64().unwrap(), &[1, 4, 9, 10000, 16384, 0]);
    // reduce_sum over axis 0, keeping it.
    assert_eq!(out[4].shape(), &[1, 3]);
    assert_eq!(out[4].as_f32().unwrap(), &[2.5 + 1e10, -2.5 - 0.4, 4.0]);
    // Accumulated in f32: 2048.5 is not an f16 but is the f32 result.
    assert_eq!(out[10].as_f32().unwrap(), &[4.0, 5.0, 2048.5, 2047.0]);

    let c = func(&cx, m, "cast");
    let a = f32s(vec![6], vec![2.5, -2.5, 3.5, 1e10, -0.4, -200.7]);
    let i = Tensor::from_i64(vec![6], ElementType::I32, vec![0, 2, -4, 1, 0, 7]).unwrap();
    let out = interpret(&cx, c, &[a, i]).unwrap();
    assert_eq!(
        out[0].as_i64().unwrap(),
        &[2, -2, 4, i32::MAX as i64, 0, -201]
    );
    assert_eq!(out[1].as_i64().unwrap(), &[2, -2, 4, 127, 0, -128]);
    assert_eq!(out[2].as_i64().unwrap(), &[1, 1, 1, 1, 1, 1]);
    // 2 is even, so it is not 2 & 1: i1 is "not zero".
    assert_eq!(out[3].as_i64().unwrap(), &[0, 1, 1, 1, 0, 1]);
    assert_eq!(out[4].dtype(), ElementType::F16);
}

#[test]
fn linalg_maps_to_nn() {
    let mut cx = context();
    let m = import_file(&mut cx, "linalg.mlir");
    let text = print(&cx, m, false);
    assert_lines(
        &text,
        &[
            "func.func @layer(%arg0: tensor<2x4xf32>, %arg1: tensor<4x3xf32>, %arg2: tensor<3xf32>, \
             %arg3: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {",
            // The fill with 0 makes a plain product.
            "%0 = nn.matmul %arg0, %arg1 : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>",
            // The generic's bias map (d0, d1) -> (d1) becomes a 1x3 operand.
            "%1 = nn.reshape %arg2 : tensor<3xf32> -> tensor<1x3xf32>",
            "%2 = nn.add %0, %1 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>",
            "%3 = nn.constant dense<0.0> : tensor<f32>",
            "%4 = nn.max %2, %3 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>",
            "%5 = nn.constant dense<0.5> : tensor<f32>",
            "%6 = nn.mul %4, %5 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>",
            // An init that is not zero is accumulated into.
            "%7 = nn.matmul %arg0, %arg1 : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>",
            "%8 = nn.add %arg3, %7 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "%9 = nn.exp %8 : tensor<2x3xf32>",
            "%10 = nn.add %9, %6 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "return %6, %10 : tensor<2x3xf32>, tensor<2x3xf32>",
            "func.func @batched(%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x4x5xf32>) -> tensor<2x5x3xf32> {",
            "%0 = nn.matmul %arg0, %arg1 : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>",
            "%1 = nn.transpose %0 {permutation = array<i64: 0, 2, 1>} : tensor<2x3x5xf32> -> tensor<2x5x3xf32>",
        ],
    );
    let dbg = print(&cx, m, true);
    assert!(dbg.contains("nn.matmul %arg0, %arg1 : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc(\"layer.py\":7:3)"), "{dbg}");

    // y = max(x w + bias, 0) / 2, checked by hand.
    let x = [1.0f32, 2.0, -1.0, 0.5, -2.0, 0.25, 1.0, 3.0];
    let w = [
        0.5f32, -1.0, 2.0, 1.0, 0.0, -0.5, -1.5, 0.25, 1.0, 2.0, 1.0, 0.0,
    ];
    let bias = [0.5f32, -0.25, 1.0];
    let acc = [1.0f32, 0.0, -1.0, 0.5, 0.25, 2.0];
    let f = func(&cx, m, "layer");
    let out = interpret(
        &cx,
        f,
        &[
            f32s(vec![2, 4], x.to_vec()),
            f32s(vec![4, 3], w.to_vec()),
            f32s(vec![3], bias.to_vec()),
            f32s(vec![2, 3], acc.to_vec()),
        ],
    )
    .unwrap();
    let mut y = Vec::new();
    let mut sum = Vec::new();
    for r in 0..2 {
        for c in 0..3 {
            let p: f32 = (0..4).map(|k| x[r * 4 + k] * w[k * 3 + c]).sum();
            let yy = (p + bias[c]).max(0.0) * 0.5;
            y.push(yy);
            sum.push((acc[r * 3 + c] + p).exp() + yy);
        }
    }
    assert_eq!(out[0].as_f32().unwrap(), &y[..]);
    for (g, e) in out[1].as_f32().unwrap().iter().zip(&sum) {
        assert!((g - e).abs() <= 1e-5 * e.abs().max(1.0), "{g} vs {e}");
    }
}

#[test]
fn linalg_generic_with_transposed_input_and_cast() {
    let text = r#"
#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @g(%a: tensor<3x2xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf16> {
  %e = tensor.empty() : tensor<2x3xf16>
  %r = linalg.generic {indexing_maps = [#t, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<3x2xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf16>) {
  ^bb0(%x: f32, %y: f32, %o: f16):
    %s = arith.subf %x, %y : f32
    %h = arith.truncf %s : f32 to f16
    linalg.yield %h : f16
  } -> tensor<2x3xf16>
  return %r : tensor<2x3xf16>
}
"#;
    let mut cx = context();
    let m = import_mlir_source(&mut cx, "g.mlir", text)
        .unwrap_or_else(|d| panic!("{}", render(&cx, &d)));
    let out = print(&cx, m, false);
    assert_lines(
        &out,
        &[
            "%0 = nn.transpose %arg0 {permutation = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>",
            "%1 = nn.sub %0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "%2 = nn.cast %1 : tensor<2x3xf32> -> tensor<2x3xf16>",
            "return %2 : tensor<2x3xf16>",
        ],
    );
    let f = func(&cx, m, "g");
    let r = interpret(
        &cx,
        f,
        &[
            f32s(vec![3, 2], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            f32s(vec![2, 3], vec![1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
        ],
    )
    .unwrap();
    assert_eq!(r[0].to_f32_vec(), vec![0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
}

#[test]
fn unsupported_ops_are_diagnosed_at_their_location() {
    let e = import_error(
        "func.func @f(%a: tensor<2x3xf32>) -> tensor<2xi32> {\n  \
         %0 = tosa.argmax %a {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2xi32>\n  \
         return %0 : tensor<2xi32>\n}\n",
    );
    assert_eq!(
        e,
        "'tosa.argmax' op is not supported by the MLIR importer at \"err.mlir\":2:8"
    );
    // Inside a generic body, the body op is named.
    let e = import_error(
        "#id = affine_map<(d0) -> (d0)>\n\
         func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  \
         %e = tensor.empty() : tensor<4xf32>\n  \
         %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = [\"parallel\"]} \
         ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {\n  \
         ^bb0(%x: f32, %o: f32):\n    \
         %s = math.sin %x : f32\n    \
         linalg.yield %s : f32\n  \
         } -> tensor<4xf32>\n  \
         return %r : tensor<4xf32>\n}\n",
    );
    assert_eq!(
        e,
        "'math.sin' op is not supported in a linalg.generic body by the MLIR importer at \"err.mlir\":6:10"
    );
    // A reduction body other than one combining op.
    let e = import_error(
        "#id = affine_map<(d0) -> (d0)>\n#r = affine_map<(d0) -> ()>\n\
         func.func @f(%a: tensor<4xf32>, %i: tensor<f32>) -> tensor<f32> {\n  \
         %r = linalg.generic {indexing_maps = [#id, #r], iterator_types = [\"reduction\"]} \
         ins(%a : tensor<4xf32>) outs(%i : tensor<f32>) {\n  \
         ^bb0(%x: f32, %o: f32):\n    \
         %s = arith.mulf %x, %x : f32\n    \
         %t = arith.addf %s, %o : f32\n    \
         linalg.yield %t : f32\n  \
         } -> tensor<f32>\n  \
         return %r : tensor<f32>\n}\n",
    );
    assert_eq!(
        e,
        "'linalg.generic' op has a body that is not one add, mul, maximum or minimum of the input and \
         the accumulator at \"err.mlir\":4:8"
    );
}

#[test]
fn inexact_mappings_are_refused() {
    // A non-zero shift on i32 multiplication.
    let e = import_error(
        "func.func @f(%a: tensor<4xi32>) -> tensor<4xi32> {\n  \
         %s = \"tosa.const\"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>\n  \
         %0 = tosa.mul %a, %a, %s : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>\n  \
         return %0 : tensor<4xi32>\n}\n",
    );
    assert_eq!(
        e,
        "'tosa.mul' op has a non-zero shift, which nn.mul cannot express at \"err.mlir\":3:8"
    );
    // An integer matmul with zero points 0 is exact: nn.matmul takes i32
    // (the i8 operands widened first).
    let mut cx = context();
    let m = import_mlir_source(
        &mut cx,
        "int.mlir",
        "func.func @f(%a: tensor<1x2x2xi8>) -> tensor<1x2x2xi32> {\n  \
         %z = \"tosa.const\"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>\n  \
         %0 = tosa.matmul %a, %a, %z, %z : (tensor<1x2x2xi8>, tensor<1x2x2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2xi32>\n  \
         return %0 : tensor<1x2x2xi32>\n}\n",
    )
    .unwrap_or_else(|d| panic!("{}", render(&cx, &d)));
    let f = func(&cx, m, "f");
    let a = Tensor::from_i64(vec![1, 2, 2], ElementType::I8, vec![1, -2, 3, 4]).unwrap();
    let out = interpret(&cx, f, &[a]).unwrap();
    assert_eq!(out[0].to_i64_vec(), vec![-5, -10, 15, 10]);
    // A matmul accumulating into tensor.empty reads undefined values.
    let e = import_error(
        "func.func @f(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {\n  \
         %e = tensor.empty() : tensor<2x2xf32>\n  \
         %0 = linalg.matmul ins(%a, %a : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>\n  \
         return %0 : tensor<2x2xf32>\n}\n",
    );
    assert_eq!(
        e,
        "'linalg.matmul' op accumulates into an uninitialised tensor (tensor.empty) at \"err.mlir\":3:8"
    );
    // Dynamic shapes have no nn equivalent.
    let e = import_error(
        "func.func @f(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {\n  return %a : tensor<?x3xf32>\n}\n",
    );
    assert!(
        e.contains("argument #0: dynamic dimensions are not supported")
            && e.ends_with("at \"err.mlir\":1:1"),
        "{e}"
    );
    // NaN-ignoring clamp differs from nn's NaN propagation.
    let e = import_error(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  \
         %0 = tosa.clamp %a {min_val = 0.0 : f32, max_val = 1.0 : f32, nan_mode = #tosa.nan_mode<IGNORE>} : (tensor<4xf32>) -> tensor<4xf32>\n  \
         return %0 : tensor<4xf32>\n}\n",
    );
    assert!(
        e.contains("only PROPAGATE maps to nn") && e.ends_with("\"err.mlir\":2:8"),
        "{e}"
    );
}

#[test]
fn upstream_parse_errors_keep_their_location() {
    let e = import_error("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = tosa.exp %a : (tensor<4xf32>) -> tensor<5xf32>\n  return %0 : tensor<4xf32>\n}\n");
    assert_eq!(
        e,
        "upstream MLIR: use of value '%0' expects different type than prior uses: \
         'tensor<4xf32>' vs 'tensor<5xf32>' at \"err.mlir\":3:10"
    );
    // A verifier error, at the op.
    let e = import_error(
        "func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {\n  \
         %0 = tosa.transpose %a {perms = array<i32: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n  \
         return %0 : tensor<3x2xf32>\n}\n",
    );
    assert!(
        e.starts_with("upstream MLIR: ") && e.ends_with("at \"err.mlir\":2:8"),
        "{e}"
    );
    let e = import_error("func.func @f( {\n");
    assert!(
        e.starts_with("upstream MLIR: ") && e.contains("\"err.mlir\":1:"),
        "{e}"
    );
    // An unreadable file.
    let mut cx = context();
    let d = import_mlir(&mut cx, input("no-such-file.mlir")).unwrap_err();
    assert!(d.message.starts_with("cannot read '"), "{}", d.message);
}

#[test]
fn arith_constants_dense_and_splat() {
    let text = "func.func @c() -> (tensor<2x2xf32>, tensor<3xi32>, tensor<2x2xf16>) {\n  \
                %0 = arith.constant dense<[[1.0, 2.0], [3.0, 4.5]]> : tensor<2x2xf32>\n  \
                %1 = arith.constant dense<7> : tensor<3xi32>\n  \
                %2 = arith.constant dense<0x3C00> : tensor<2x2xf16>\n  \
                return %0, %1, %2 : tensor<2x2xf32>, tensor<3xi32>, tensor<2x2xf16>\n}\n";
    let mut cx = context();
    let m = import_mlir_source(&mut cx, "c.mlir", text)
        .unwrap_or_else(|d| panic!("{}", render(&cx, &d)));
    let f = func(&cx, m, "c");
    let out = interpret(&cx, f, &[]).unwrap();
    assert_eq!(out[0].as_f32().unwrap(), &[1.0, 2.0, 3.0, 4.5]);
    assert_eq!(out[1].as_i64().unwrap(), &[7, 7, 7]);
    assert_eq!(out[2].to_f32_vec(), vec![1.0; 4]);
    let printed = print(&cx, m, false);
    assert!(
        printed.contains("nn.constant dense<7> : tensor<3xi32>"),
        "{printed}"
    );
}

#[test]
fn more_ops_compute_what_upstream_means() {
    let mut cx = context();
    let m = import_file(&mut cx, "more_ops.mlir");
    let text = print(&cx, m, false);
    assert_lines(
        &text,
        &[
            "%0 = nn.add %arg0, %arg0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "%0 = nn.max %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "%1 = nn.min %arg0, %arg1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
            "%2 = nn.neg %arg0 : tensor<2x3xf32>",
            "%3 = nn.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
            "%4 = nn.slice %arg0 {ends = array<i64: 1, 3>, starts = array<i64: 0, 1>, steps = array<i64: 1, 1>} \
             : tensor<2x3xf32> -> tensor<1x2xf32>",
            "%10 = nn.reshape %arg2 : tensor<3xf32> -> tensor<1x3xf32>",
            "%11 = nn.broadcast %10 : tensor<1x3xf32> -> tensor<2x3xf32>",
            "%12 = nn.reshape %11 : tensor<2x3xf32> -> tensor<6xf32>",
            "%13 = call @helper(%arg1) : (tensor<2x3xf32>) -> tensor<2x3xf32>",
        ],
    );
    let f = func(&cx, m, "more");
    let a = f32s(vec![2, 3], vec![1.0, -2.0, 3.0, -4.0, 5.0, -6.0]);
    let b = f32s(vec![2, 3], vec![0.5, 0.5, 4.0, -5.0, 5.0, 0.0]);
    let v = f32s(vec![3], vec![7.0, 8.0, 9.0]);
    let out = interpret(&cx, f, &[a, b, v]).unwrap();
    assert_eq!(out[0].as_f32().unwrap(), &[1.0, 0.5, 4.0, -4.0, 5.0, 0.0]);
    assert_eq!(out[1].as_f32().unwrap(), &[0.5, -2.0, 3.0, -5.0, 5.0, -6.0]);
    assert_eq!(out[2].as_f32().unwrap(), &[-1.0, 2.0, -3.0, 4.0, -5.0, 6.0]);
    assert_eq!(out[3].shape(), &[4, 3]);
    assert_eq!(
        out[3].as_f32().unwrap()[6..],
        [0.5, 0.5, 4.0, -5.0, 5.0, 0.0]
    );
    assert_eq!(out[4].as_f32().unwrap(), &[-2.0, 3.0]);
    // select(a > b, a, b) is max here.
    assert_eq!(out[5].as_f32().unwrap(), out[0].as_f32().unwrap());
    assert_eq!(out[6].as_f32().unwrap()[0], 0.0);
    assert_eq!(out[7].as_f32().unwrap(), &[-2.0, -6.0]);
    assert_eq!(out[8].as_f32().unwrap(), &[7.0, 8.0, 9.0, 7.0, 8.0, 9.0]);
    assert_eq!(out[9].shape(), &[6]);
    assert_eq!(
        out[10].as_f32().unwrap(),
        &[1.0, 1.0, 8.0, -10.0, 10.0, 0.0]
    );
}

#[test]
fn unused_index_constants_are_no_error() {
    let text = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  \
                %c = arith.constant 0 : index\n  \
                return %a : tensor<2xf32>\n}\n";
    let mut cx = context();
    let m = import_mlir_source(&mut cx, "i.mlir", text)
        .unwrap_or_else(|d| panic!("{}", render(&cx, &d)));
    assert_lines(&print(&cx, m, false), &["return %arg0 : tensor<2xf32>"]);
    // Used, the constant is the error.
    let e = import_error(
        "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  \
         %c = arith.constant 0 : index\n  \
         %d = tensor.dim %a, %c : tensor<2xf32>\n  \
         return %a : tensor<2xf32>\n}\n",
    );
    assert_eq!(
        e,
        "'tensor.dim' op is not supported by the MLIR importer at \"err.mlir\":3:8"
    );
}

#[test]
fn diagnostics_render_against_the_input_file() {
    let path = input("tosa_mlp.mlir");
    let name = path.to_string_lossy().into_owned();
    let text = std::fs::read_to_string(&path).unwrap();
    let broken = text.replace("tosa.sigmoid", "tosa.argmax");
    let broken = broken.replace(
        "tosa.argmax %ob : (tensor<1x2x3xf32>) -> tensor<1x2x3xf32>",
        "tosa.argmax %ob {axis = 2 : i32} : (tensor<1x2x3xf32>) -> tensor<1x2xi32>",
    );
    let broken = broken.replace(
        "%y = tosa.reshape %y3, %s2 : (tensor<1x2x3xf32>, !tosa.shape<2>) -> tensor<2x3xf32>",
        "%y = tosa.reshape %ob, %s2 : (tensor<1x2x3xf32>, !tosa.shape<2>) -> tensor<2x3xf32>",
    );
    let mut cx = context();
    let d = import_mlir_source(&mut cx, &name, &broken).unwrap_err();
    let mut sources = ipu_ir::SourceMap::new();
    sources.add(&name, broken.clone().into());
    let shown = sources.render_to_string(&cx, &d);
    assert!(
        shown.contains("'tosa.argmax' op is not supported by the MLIR importer"),
        "{shown}"
    );
    assert!(shown.contains(&format!("{name}:21:9")), "{shown}");
    assert!(shown.contains("%y3 = tosa.argmax %ob"), "{shown}");
}

#[test]
fn odd_inputs_give_results_or_diagnostics() {
    let deep_loc = format!(
        "{}\"d.py\":1:1{}",
        "fused[\"a\", ".repeat(200),
        "]".repeat(200)
    );
    let cases = [
        String::new(),
        "module {}".to_string(),
        "\u{0}\u{1}garbage %%%".to_string(),
        "module { module {} }".to_string(),
        "func.func private @decl(tensor<2xf32>) -> tensor<2xf32>".to_string(),
        "func.func @\"\\FF\\00x\"(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }".to_string(),
        "func.func @f(%c: i1, %a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }".to_string(),
        "func.func @f(%a: tensor<*xf32>) -> tensor<*xf32> { return %a : tensor<*xf32> }".to_string(),
        format!(
            "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {{ %0 = tosa.exp %a : (tensor<2xf32>) -> tensor<2xf32> loc({deep_loc}) \
             return %0 : tensor<2xf32> }}"
        ),
        "func.func @f() -> tensor<100000x100000xf32> { %0 = arith.constant dense<1.0> : tensor<100000x100000xf32> \
         return %0 : tensor<100000x100000xf32> }"
            .to_string(),
        "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> { cf.br ^bb1 ^bb1: return %a : tensor<2xf32> }".to_string(),
    ];
    // "" where the input imports, else part of the diagnostic.
    let expected = [
        "",
        "",
        "the input holds a NUL character at \"odd.mlir\":1:1",
        "'builtin.module' op is not supported at module level",
        "@decl is a declaration",
        "'func.func' op has no symbol name the IR can hold",
        "argument #0: expected a ranked tensor, got 'i1'",
        "type '(tensor<*xf32>) -> tensor<*xf32>' has no IR equivalent",
        "",
        "constant is larger than 67108864 elements at \"odd.mlir\":1:52",
        "has several blocks (control flow)",
    ];
    for (i, c) in cases.iter().enumerate() {
        let mut cx = context();
        match import_mlir_source(&mut cx, "odd.mlir", c) {
            Ok(m) => {
                ipu_ir::verify::verify(&cx, m).unwrap();
                assert!(expected[i].is_empty(), "case {i} imported");
            }
            Err(d) => {
                let e = render(&cx, &d);
                assert!(
                    !expected[i].is_empty() && e.contains(expected[i]),
                    "case {i}: {e}"
                );
            }
        }
    }
}

#[test]
fn integer_clamp_and_generic_reading_its_init() {
    let text = r#"
#id = affine_map<(d0) -> (d0)>
func.func @f(%a: tensor<4xi32>, %x: tensor<4xf32>, %acc: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xf32>) {
  %r = tosa.clamp %a {min_val = 0 : i32, max_val = 2147483647 : i32} : (tensor<4xi32>) -> tensor<4xi32>
  %c = tosa.clamp %a {min_val = -3 : i32, max_val = 3 : i32} : (tensor<4xi32>) -> tensor<4xi32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.mulf %in, %in : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %c, %g : tensor<4xi32>, tensor<4xi32>, tensor<4xf32>
}
"#;
    let mut cx = context();
    let m = import_mlir_source(&mut cx, "c.mlir", text)
        .unwrap_or_else(|d| panic!("{}", render(&cx, &d)));
    let printed = print(&cx, m, false);
    assert_lines(
        &printed,
        &[
            "%0 = nn.relu %arg0 : tensor<4xi32>",
            "%1 = nn.constant dense<-3> : tensor<i32>",
            "%2 = nn.constant dense<3> : tensor<i32>",
            "%3 = nn.max %arg0, %1 : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>",
            "%4 = nn.min %3, %2 : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>",
            "%5 = nn.mul %arg1, %arg1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
            "%6 = nn.add %arg2, %5 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
        ],
    );
    let f = func(&cx, m, "f");
    let a = Tensor::from_i64(vec![4], ElementType::I32, vec![-7, -1, 2, 9]).unwrap();
    let out = interpret(
        &cx,
        f,
        &[
            a,
            f32s(vec![4], vec![1.0, 2.0, 3.0, 4.0]),
            f32s(vec![4], vec![0.5, 0.5, 0.5, 0.5]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].as_i64().unwrap(), &[0, 0, 2, 9]);
    assert_eq!(out[1].as_i64().unwrap(), &[-3, -1, 2, 3]);
    assert_eq!(out[2].as_f32().unwrap(), &[1.5, 4.5, 9.5, 16.5]);
}

#[test]
fn linalg_reductions() {
    let mut cx = context();
    let m = import_file(&mut cx, "reduce.mlir");
    let text = print(&cx, m, false);
    assert_lines(
        &text,
        &[
            // Sum into a zero fill: the reduction alone.
            "%0 = nn.reduce_sum %arg0 {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>",
            // Max into -FLT_MAX (not the identity -inf): combined with it.
            "%1 = nn.reduce_max %arg0 {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>",
            "%2 = nn.constant dense<-3.4028235e38> : tensor<3xf32>",
            "%3 = nn.max %2, %1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>",
            // A generic reduction into an argument: added to it.
            "%4 = nn.reduce_sum %arg0 {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>",
            "%5 = nn.add %arg1, %4 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>",
        ],
    );
    let f = func(&cx, m, "r");
    let out = interpret(
        &cx,
        f,
        &[
            f32s(
                vec![2, 3],
                vec![1.0, 2.0, 3.0, -4.0, 5.0, f32::NEG_INFINITY],
            ),
            f32s(vec![2], vec![10.0, 20.0]),
        ],
    )
    .unwrap();
    assert_eq!(out[0].as_f32().unwrap(), &[6.0, f32::NEG_INFINITY]);
    assert_eq!(out[1].as_f32().unwrap(), &[1.0, 5.0, 3.0]);
    assert_eq!(out[2].as_f32().unwrap(), &[16.0, f32::NEG_INFINITY]);
    // -inf everywhere in a column: upstream's init -FLT_MAX wins.
    let out = interpret(
        &cx,
        f,
        &[
            f32s(vec![2, 3], vec![f32::NEG_INFINITY; 6]),
            f32s(vec![2], vec![0.0, 0.0]),
        ],
    )
    .unwrap();
    assert_eq!(out[1].as_f32().unwrap(), &[-f32::MAX; 3]);
}

#[test]
fn upstream_lowered_mlp_matches_the_tosa_import() {
    // The same model after upstream's tosa-to-linalg: batch_matmul into fills,
    // generics with broadcast maps ((d0, 0, d2)), clamp and sigmoid as bodies.
    let mut cx = context();
    let lowered = import_file(&mut cx, "tosa_mlp_linalg.mlir");
    let text = print(&cx, lowered, false);
    assert!(
        !text.contains("tosa.") && !text.contains("linalg."),
        "{text}"
    );
    assert_lines(
        &text,
        &[
            "%0 = nn.reshape %arg0 : tensor<2x4xf32> -> tensor<1x2x4xf32>",
            "%2 = nn.matmul %0, %1 : (tensor<1x2x4xf32>, tensor<1x4x8xf32>) -> tensor<1x2x8xf32>",
            "%4 = nn.reshape %3 : tensor<1x1x8xf32> -> tensor<1x8xf32>",
            "%5 = nn.reshape %4 : tensor<1x8xf32> -> tensor<1x1x8xf32>",
            "%6 = nn.add %2, %5 : (tensor<1x2x8xf32>, tensor<1x1x8xf32>) -> tensor<1x2x8xf32>",
        ],
    );
    let mut tcx = context();
    let tosa = import_file(&mut tcx, "tosa_mlp.mlir");
    let (a, b) = (func(&cx, lowered, "main"), func(&tcx, tosa, "main"));
    for x in [
        vec![1.0, -2.0, 0.5, 3.0, -0.25, 0.75, 2.0, -1.5],
        vec![10.0, 9.0, -8.0, 7.0, 6.5, -5.5, 4.25, 3.125],
    ] {
        let x = f32s(vec![2, 4], x);
        let ya = interpret(&cx, a, std::slice::from_ref(&x)).unwrap();
        let yb = interpret(&tcx, b, std::slice::from_ref(&x)).unwrap();
        for (p, q) in ya[0].as_f32().unwrap().iter().zip(yb[0].as_f32().unwrap()) {
            assert!((p - q).abs() <= 1e-6, "{p} vs {q}");
        }
    }
}
