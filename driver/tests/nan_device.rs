//! NaN and infinities end to end: models compiled for test16 and run on the
//! chip simulator through the driver's loader with NaN, -NaN, +-inf and -0
//! among their inputs agree with the reference interpreter (NaN meets NaN,
//! an infinity the same infinity; `ipu_driver::device::compare`). A device
//! relu turned NaN into 0 before the simulator followed IEEE and ONNX.

use std::collections::BTreeMap;

use ipu_driver::device::{bytes_to_tensor, compare, run_on_chip, tensor_to_bytes};
use ipu_package::{Direction, Package};
use ipu_reference::Tensor;
use ipu_target::Target;

mod common;

const TARGET: &str = "test16";

fn compile(src: &str) -> Package {
    common::compile("nan.mlir", src, TARGET)
}

/// Small finite values with specials at every `every`-th element of the
/// first input (the others finite, so each special's effect is its own).
fn input(n: usize, seed: usize, every: Option<usize>) -> Vec<f32> {
    let specials = [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0];
    (0..n)
        .map(|i| match every {
            Some(e) if i % e == 3 => specials[(i / e) % specials.len()],
            _ => ((i * 37 + seed * 11) % 17) as f32 / 16.0 - 0.5,
        })
        .collect()
}

/// Runs `src` on the device and the reference with specials in its first
/// input; every output must agree; returns the number of NaN outputs.
fn device_agrees_with_reference(src: &str, every: usize) -> usize {
    let pkg = compile(src);
    let mut tensors = Vec::new();
    let mut bytes = BTreeMap::new();
    for (k, s) in pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction.to_device())
        .enumerate()
    {
        let shape: Vec<usize> = s.shape.iter().map(|&d| d as usize).collect();
        let n = shape.iter().product();
        let ty = ipu_driver::device::reference_type(s.host_type());
        let v = input(n, k, (k == 0).then_some(every));
        let t = Tensor::from_f32(shape, ty, v).unwrap();
        bytes.insert(s.name.clone(), tensor_to_bytes(&t, s.host_type()).unwrap());
        tensors.push(t);
    }
    let t = Target::load(TARGET).unwrap();
    let run = run_on_chip(&pkg, &t, &bytes, "main", 10_000_000).unwrap();
    assert!(run.hardware_pass(), "{:?}", run.faults);
    let want = common::interpret("nan.mlir", src, &tensors);
    let mut nans = 0;
    for (s, w) in pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction == Direction::Output)
        .zip(&want)
    {
        let got =
            bytes_to_tensor(&run.outputs[&s.name], w.shape(), s.element, w.fp8_scale()).unwrap();
        let c = compare(&got, w, s.element);
        assert!(c.pass(), "output {}: {:?}", s.name, c.failures);
        nans += w.to_f32_vec().iter().filter(|x| x.is_nan()).count();
    }
    nans
}

#[test]
fn relu_keeps_nan_and_infinity() {
    let src = r#"func.func @main(%x: tensor<16x64xf16> {ipu.name = "x"}) -> (tensor<16x64xf16> {ipu.name = "y"}) {
  %y = nn.relu %x : tensor<16x64xf16>
  return %y : tensor<16x64xf16>
}"#;
    assert!(
        device_agrees_with_reference(src, 7) > 0,
        "NaN inputs give NaN outputs"
    );
}

#[test]
fn matmul_bias_and_gelu_propagate_nan_and_infinity() {
    let src = r#"func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf16> {ipu.name = "w1"}, %b1: tensor<128xf16> {ipu.name = "b1"}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf16>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}"#;
    // A special in every row of x: whole output rows are NaN (an inf
    // times weights of both signs, or times zero, included).
    assert!(device_agrees_with_reference(src, 61) >= 128);
}
