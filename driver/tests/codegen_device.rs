//! The code generator end to end: compile small models for a test target,
//! run the package on the chip simulator and compare with the reference.

use ipu_package::{Direction, ElementType, Package};
use ipu_target::Target;
use std::collections::BTreeMap;

mod common;

/// Compiles `src` for `target` down to the exchange stage, then builds the package.
fn compile(src: &str, target: &str) -> Package {
    common::compile("test.mlir", src, target)
}

/// Runs the package with `inputs` (raw bytes per input stream, in order);
/// returns the output streams' bytes and the cycles.
fn run(pkg: &Package, target: &str, inputs: &[Vec<u8>]) -> (Vec<Vec<u8>>, u64) {
    let t = Target::load(target).unwrap();
    let named: BTreeMap<String, Vec<u8>> = pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction.to_device())
        .map(|s| s.name.clone())
        .zip(inputs.iter().cloned())
        .collect();
    let run = ipu_driver::device::run_on_chip(pkg, &t, &named, "main", u64::MAX).unwrap();
    assert!(run.hardware_pass(), "{:?}", run.faults);
    let report = &run.report;
    if std::env::var_os("CODEGEN_TEST_STEPS").is_some() {
        let mut start = 0;
        for (s, step) in report.supersteps.iter().zip(&pkg.meta.steps) {
            eprintln!(
                "{:>6} cycles (estimate {:?}) {}",
                s.end_cycle - start,
                step.cycles,
                step.label
            );
            start = s.release_cycle.unwrap_or(s.end_cycle);
        }
    }
    let outs = pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction == Direction::Output)
        .map(|s| run.outputs[&s.name].clone())
        .collect();
    (outs, report.cycles)
}

fn f16_bytes(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| ipu_isa::float::f16_bits(x).to_le_bytes())
        .collect()
}

fn f16_values(b: &[u8]) -> Vec<f32> {
    b.chunks(2)
        .map(|c| ipu_isa::float::f16_value(u16::from_le_bytes([c[0], c[1]])))
        .collect()
}

fn pattern(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let x = (i as u32)
                .wrapping_mul(2654435761)
                .wrapping_add(seed.wrapping_mul(40503));
            ((x >> 16) % 200) as f32 / 100.0 - 1.0
        })
        .collect()
}

#[test]
fn elementwise_relu_runs_on_test16() {
    let src = r#"func.func @main(%x: tensor<16x64xf16> {ipu.name = "x"}) -> (tensor<16x64xf16> {ipu.name = "y"}) {
  %y = nn.relu %x : tensor<16x64xf16>
  return %y : tensor<16x64xf16>
}"#;
    let pkg = compile(src, "test16");
    assert_eq!(pkg.meta.streams[0].element, ElementType::F16);
    let x = pattern(16 * 64, 1);
    let (outs, cycles) = run(&pkg, "test16", &[f16_bytes(&x)]);
    let y = f16_values(&outs[0]);
    for (a, b) in x.iter().zip(&y) {
        let want = ipu_isa::float::f16_value(ipu_isa::float::f16_bits(a.max(0.0)));
        assert_eq!(want, *b);
    }
    assert!(cycles > 0);
}

#[test]
fn mlp_runs_on_test16() {
    let src = r#"func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf16> {ipu.name = "w1"}, %b1: tensor<128xf16> {ipu.name = "b1"}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf16>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  return %hb : tensor<8x128xf16>
}"#;
    let pkg = compile(src, "test16");
    let x = pattern(8 * 64, 1);
    let w = pattern(64 * 128, 2);
    let b = pattern(128, 3);
    let (outs, _) = run(
        &pkg,
        "test16",
        &[f16_bytes(&x), f16_bytes(&w), f16_bytes(&b)],
    );
    let y = f16_values(&outs[0]);
    let q = |v: f32| ipu_isa::float::f16_value(ipu_isa::float::f16_bits(v));
    let mut worst = 0f32;
    for i in 0..8 {
        for j in 0..128 {
            let mut acc = 0f64;
            for k in 0..64 {
                acc += q(x[i * 64 + k]) as f64 * q(w[k * 128 + j]) as f64;
            }
            let want = q(q(acc as f32) + q(b[j]));
            worst = worst.max((want - y[i * 128 + j]).abs());
        }
    }
    assert!(worst < 0.05, "worst error {worst}");
}

/// Runs `src` on the device and on the reference interpreter with the same
/// (patterned) inputs; returns the largest absolute difference, the largest
/// reference magnitude and the cycles.
fn device_vs_reference(src: &str, target: &str) -> (f32, f32, u64) {
    use ipu_reference::{ElementType as RefType, Tensor};
    let t0 = std::time::Instant::now();
    let pkg = compile(src, target);
    eprintln!(
        "compile {:?}, program groups {}",
        t0.elapsed(),
        pkg.images.len()
    );
    let mut tensors = Vec::new();
    let mut bytes = Vec::new();
    for (i, s) in pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction.to_device())
        .enumerate()
    {
        let shape: Vec<usize> = s.shape.iter().map(|&d| d as usize).collect();
        let n = shape.iter().product();
        let v: Vec<f32> = pattern(n, i as u32 + 1);
        let (ty, enc): (RefType, fn(f32) -> Vec<u8>) = match s.host_type() {
            ElementType::F16 => (RefType::F16, |x| {
                ipu_isa::float::f16_bits(x).to_le_bytes().to_vec()
            }),
            ElementType::F8E4M3FN => (RefType::F8E4M3FN, |x| {
                vec![ipu_isa::float::f8_from_f64(
                    x as f64,
                    0,
                    ipu_isa::float::F8Format::E4M3FN,
                )]
            }),
            other => panic!("no pattern input for {other:?}"),
        };
        let t = Tensor::from_f32(shape, ty, v).unwrap();
        bytes.push(
            t.to_f32_vec()
                .into_iter()
                .flat_map(enc)
                .collect::<Vec<u8>>(),
        );
        tensors.push(t);
    }
    let t1 = std::time::Instant::now();
    let (outs, cycles) = run(&pkg, target, &bytes);
    eprintln!("device run {:?}, {cycles} cycles", t1.elapsed());
    let want = common::interpret("test.mlir", src, &tensors);
    let (mut err, mut mag) = (0f32, 0f32);
    for (w, got) in want.iter().zip(&outs) {
        let values = match w.dtype() {
            ipu_reference::ElementType::F32 => got
                .chunks(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            ipu_reference::ElementType::F8E4M3FN => got
                .iter()
                .map(|&c| ipu_isa::float::f8_to_f64(c, 0, ipu_isa::float::F8Format::E4M3FN) as f32)
                .collect(),
            _ => f16_values(got),
        };
        for (a, b) in w.to_f32_vec().iter().zip(values) {
            err = err.max((a - b).abs());
            mag = mag.max(a.abs());
        }
    }
    (err, mag, cycles)
}

#[test]
fn f8_weights_bias_and_gelu_match_the_reference_on_test16() {
    let src = r#"func.func @main(%x: tensor<8x64xf16> {ipu.name = "x"}, %w1: tensor<64x128xf8E4M3FN> {ipu.name = "w1"}, %b1: tensor<128xf16> {ipu.name = "b1"}) -> (tensor<8x128xf16> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w1 : (tensor<8x64xf16>, tensor<64x128xf8E4M3FN>) -> tensor<8x128xf16>
  %hb = nn.add %h, %b1 : (tensor<8x128xf16>, tensor<128xf16>) -> tensor<8x128xf16>
  %g = nn.gelu %hb : tensor<8x128xf16>
  return %g : tensor<8x128xf16>
}"#;
    let (err, mag, _) = device_vs_reference(src, "test16");
    assert!(
        err <= mag * 4.0 / 1024.0,
        "error {err}, largest magnitude {mag}"
    );
}

/// The bundled MLP on the full chip (slow in debug builds: run with
/// `cargo test --release -p ipu-driver --test codegen_device -- --ignored`).
#[test]
#[ignore]
fn bundled_mlp_runs_on_ipu21() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/mlp.mlir"))
        .unwrap();
    let (err, mag, cycles) = device_vs_reference(&src, "ipu21");
    eprintln!("max abs error {err}, largest magnitude {mag}, {cycles} cycles");
    assert!(
        err <= mag * 4.0 / 1024.0,
        "error {err}, largest magnitude {mag}"
    );
}

#[test]
fn wide_blocks_relu_mul_and_cast_match_the_reference_on_test4() {
    // On 4 tiles every matmul block is wider than 16 columns: B arrives in
    // 16-column blocks and the GEMM writes C row-major, a row jump per row.
    let src = r#"func.func @main(%x: tensor<16x64xf16> {ipu.name = "x"}, %w: tensor<64x128xf16> {ipu.name = "w"}) -> (tensor<16x128xf32> {ipu.name = "y"}) {
  %h = nn.matmul %x, %w : (tensor<16x64xf16>, tensor<64x128xf16>) -> tensor<16x128xf16>
  %r = nn.relu %h : tensor<16x128xf16>
  %m = nn.mul %r, %h : (tensor<16x128xf16>, tensor<16x128xf16>) -> tensor<16x128xf16>
  %c = nn.cast %m : tensor<16x128xf16> -> tensor<16x128xf32>
  return %c : tensor<16x128xf32>
}"#;
    let (err, mag, _) = device_vs_reference(src, "test4");
    assert!(mag > 1.0);
    assert!(
        err <= mag * 4.0 / 1024.0,
        "error {err}, largest magnitude {mag}"
    );
}

#[test]
fn constants_are_loaded_with_the_images() {
    let src = r#"func.func @main(%x: tensor<8x32xf16> {ipu.name = "x"}) -> (tensor<8x32xf16> {ipu.name = "y"}) {
  %b = nn.constant dense<[0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 3.0, 1.0, 0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 3.0, 1.0, 0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 3.0, 1.0, 0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 3.0, 1.0]> : tensor<32xf16>
  %s = nn.constant dense<2.0> : tensor<8x32xf16>
  %y = nn.add %x, %b : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
  %z = nn.mul %y, %s : (tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  return %z : tensor<8x32xf16>
}"#;
    let (err, mag, _) = device_vs_reference(src, "test4");
    assert!(mag > 4.0);
    assert_eq!(err, 0.0);
}

#[test]
fn f8_by_f8_matmul_runs_on_the_f8_amp_mode() {
    // Both operands f8E4M3FN: the AMP's f8 mode, accumulating into f16.
    let src = r#"func.func @main(%x: tensor<8x64xf8E4M3FN> {ipu.name = "x"}, %w: tensor<64x32xf8E4M3FN> {ipu.name = "w"}) -> (tensor<8x32xf16> {ipu.name = "y"}) {
  %y = nn.matmul %x, %w : (tensor<8x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>) -> tensor<8x32xf16>
  return %y : tensor<8x32xf16>
}"#;
    let (err, mag, _) = device_vs_reference(src, "test4");
    assert!(mag > 0.5);
    assert!(err <= mag / 256.0, "error {err}, largest magnitude {mag}");
}
