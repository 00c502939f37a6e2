//! `evaluate` on random ops, attributes and operands (mostly invalid):
//! every outcome is a value, never a panic. The dialect interpreter passes
//! user-written IR straight to `evaluate`, so this matters.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ipu_reference::*;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn small(&mut self) -> i64 {
        match self.below(10) {
            0 => i64::MAX,
            1 => i64::MIN,
            _ => self.below(9) as i64 - 4,
        }
    }
    fn usize(&mut self) -> usize {
        if self.below(20) == 0 {
            usize::MAX / 3
        } else {
            self.below(5) as usize
        }
    }
    fn vec_usize(&mut self) -> Vec<usize> {
        (0..self.below(5)).map(|_| self.usize()).collect()
    }
    fn vec_i64(&mut self) -> Vec<i64> {
        (0..self.below(5)).map(|_| self.small()).collect()
    }
    fn bool(&mut self) -> bool {
        self.below(2) == 1
    }
    fn dtype(&mut self) -> ElementType {
        ElementType::ALL[self.below(ElementType::ALL.len() as u64) as usize]
    }
}

fn tensor(rng: &mut Rng) -> Tensor {
    let rank = rng.below(5) as usize;
    let shape: Vec<usize> = (0..rank).map(|_| rng.below(4) as usize).collect();
    let n: usize = shape.iter().product();
    let ty = rng.dtype();
    let vals: Vec<f32> = (0..n)
        .map(|_| [0.0, 1.0, -2.5, 3.0, f32::NAN, f32::INFINITY, 1e30][rng.below(7) as usize])
        .collect();
    Tensor::from_f32(shape, ty, vals).unwrap()
}

fn op(rng: &mut Rng) -> OpKind {
    let axis = rng.usize();
    match rng.below(53) {
        48 => OpKind::Conv {
            strides: rng.vec_usize(),
            dilations: rng.vec_usize(),
            pads: rng.vec_usize(),
            group: rng.usize(),
        },
        49 => OpKind::ConvTranspose {
            strides: rng.vec_usize(),
            dilations: rng.vec_usize(),
            pads: rng.vec_usize(),
            output_padding: rng.vec_usize(),
            group: rng.usize(),
        },
        50 => OpKind::MaxPool {
            kernel: rng.vec_usize(),
            strides: rng.vec_usize(),
            dilations: rng.vec_usize(),
            pads: rng.vec_usize(),
            ceil_mode: rng.bool(),
            indices: rng.bool(),
        },
        51 => OpKind::AvgPool {
            kernel: rng.vec_usize(),
            strides: rng.vec_usize(),
            dilations: rng.vec_usize(),
            pads: rng.vec_usize(),
            ceil_mode: rng.bool(),
            count_include_pad: rng.bool(),
        },
        52 => OpKind::Resize {
            shape: rng.vec_usize(),
            scales: (0..rng.below(5))
                .map(|_| [0.5, 2.0, -1.0, 0.0, f64::NAN, 1e300][rng.below(6) as usize])
                .collect(),
            coordinate: ResizeCoordinate::NAMES[rng.below(6) as usize].1,
            roi: (0..rng.below(9))
                .map(|_| [0.0, 0.5, 1.0, -1.0, f64::NAN][rng.below(5) as usize])
                .collect(),
            extrapolation_value: 0.0,
            mode: ResizeMode::NAMES[rng.below(3) as usize].1,
            nearest: NearestMode::NAMES[rng.below(4) as usize].1,
            antialias: rng.bool(),
            cubic_coeff_a: [-0.75, -0.5, f64::NAN][rng.below(3) as usize],
            exclude_outside: rng.bool(),
        },
        44 => OpKind::ScatterElements {
            axis,
            reduction: [
                ScatterReduction::None,
                ScatterReduction::Add,
                ScatterReduction::Max,
            ][rng.below(3) as usize],
        },
        45 => OpKind::ScatterNd {
            reduction: ScatterReduction::Mul,
        },
        46 => OpKind::Sin,
        47 => OpKind::Cos,
        0 => OpKind::Constant(tensor(rng)),
        1 => OpKind::MatMul,
        2 => OpKind::Add,
        3 => OpKind::Sub,
        4 => OpKind::Mul,
        5 => OpKind::Div,
        6 => OpKind::Max,
        7 => OpKind::Min,
        8 => OpKind::Pow,
        9 => OpKind::Mod { fmod: rng.bool() },
        10 => OpKind::Equal,
        11 => OpKind::Less,
        12 => OpKind::And,
        13 => OpKind::Not,
        14 => OpKind::Neg,
        15 => OpKind::Abs,
        16 => OpKind::Exp,
        17 => OpKind::Rsqrt,
        18 => OpKind::Erf,
        19 => OpKind::Round,
        20 => OpKind::Gelu {
            approximate: GeluApproximation::Tanh,
        },
        21 => OpKind::Softmax { axis },
        22 => OpKind::LogSoftmax { axis },
        23 => OpKind::LayerNorm {
            axis,
            epsilon: 1e-5,
            has_scale: rng.bool(),
            has_bias: rng.bool(),
        },
        24 => OpKind::Reduce {
            kind: [
                ReduceKind::Sum,
                ReduceKind::Mean,
                ReduceKind::Max,
                ReduceKind::Min,
                ReduceKind::Prod,
            ][rng.below(5) as usize],
            axes: rng.vec_usize(),
            keepdims: rng.bool(),
        },
        25 => OpKind::ArgMax {
            axis,
            keepdims: rng.bool(),
            select_last_index: rng.bool(),
        },
        26 => OpKind::ArgMin {
            axis,
            keepdims: rng.bool(),
            select_last_index: rng.bool(),
        },
        27 => OpKind::CumSum {
            axis,
            exclusive: rng.bool(),
            reverse: rng.bool(),
        },
        28 => OpKind::CumProd {
            axis,
            exclusive: rng.bool(),
            reverse: rng.bool(),
        },
        29 => OpKind::Pad {
            low: rng.vec_i64(),
            high: rng.vec_i64(),
            mode: [
                PadMode::Constant,
                PadMode::Reflect,
                PadMode::Edge,
                PadMode::Wrap,
            ][rng.below(4) as usize],
            value: 0.5,
        },
        30 => OpKind::GatherElements { axis },
        31 => OpKind::TopK {
            axis,
            k: rng.usize(),
            largest: rng.bool(),
        },
        32 => OpKind::Transpose {
            perm: rng.vec_usize(),
        },
        33 => OpKind::Reshape {
            shape: rng.vec_usize(),
        },
        34 => OpKind::Broadcast {
            shape: rng.vec_usize(),
        },
        35 => OpKind::Slice {
            starts: rng.vec_i64(),
            ends: rng.vec_i64(),
            steps: rng.vec_i64(),
        },
        36 => OpKind::Concat { axis },
        37 => OpKind::Gather { axis },
        38 => OpKind::Select,
        39 => OpKind::Cast {
            to: rng.dtype(),
            saturate: rng.bool(),
            scale: rng.small() as i32,
        },
        40 => OpKind::Sigmoid,
        41 => OpKind::Relu,
        42 => OpKind::Floor,
        _ => OpKind::Reciprocal,
    }
}

#[test]
fn random_ops_never_panic() {
    let trials: usize = std::env::var("IPU_FUZZ_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let seed: u64 = std::env::var("IPU_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let mut rng = Rng(seed | 1);
    let mut panics = Vec::new();
    for _ in 0..trials {
        let o = op(&mut rng);
        let n = rng.below(4) as usize;
        let mut ins: Vec<Tensor> = (0..n).map(|_| tensor(&mut rng)).collect();
        // Often make operands agree, to get past the type checks.
        if n > 1 && rng.bool() {
            let first = ins[0].clone();
            for t in ins.iter_mut().skip(1) {
                if rng.bool() {
                    *t = first.clone();
                }
            }
        }
        let refs: Vec<&Tensor> = ins.iter().collect();
        if catch_unwind(AssertUnwindSafe(|| {
            let _ = infer_type(&o, &ins.iter().map(|t| t.ty()).collect::<Vec<_>>());
            let _ = evaluate(&o, &refs);
        }))
        .is_err()
        {
            panics.push(format!(
                "{o:?} on {:?}",
                ins.iter().map(|t| t.ty()).collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        panics.is_empty(),
        "{} panics, first: {:?}",
        panics.len(),
        &panics[..panics.len().min(5)]
    );
}
