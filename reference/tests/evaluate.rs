use ipu_reference::*;
use ElementType::*;

fn f32t(shape: &[usize], v: Vec<f32>) -> Tensor {
    Tensor::from_f32(shape.to_vec(), F32, v).unwrap()
}
fn i64t(shape: &[usize], v: Vec<i64>) -> Tensor {
    Tensor::from_i64(shape.to_vec(), I64, v).unwrap()
}
fn seq(n: usize, scale: f32) -> Vec<f32> {
    // Deterministic pseudo-random values in [-scale, scale].
    let mut s = 0x2545F491u32;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}
fn ev(op: OpKind, ins: &[&Tensor]) -> Tensor {
    evaluate(&op, ins).unwrap()
}

#[test]
fn matmul_matches_naive_with_batch_broadcast() {
    let (b, m, k, n) = (3, 5, 37, 300);
    let a = f32t(&[b, 1, m, k], seq(b * m * k, 1.0));
    let w = f32t(&[2, k, n], seq(2 * k * n, 1.0));
    let r = ev(OpKind::MatMul, &[&a, &w]);
    assert_eq!(r.shape(), &[b, 2, m, n]);
    let (av, wv, rv) = (
        a.as_f32().unwrap(),
        w.as_f32().unwrap(),
        r.as_f32().unwrap(),
    );
    for bi in 0..b {
        for wi in 0..2 {
            for i in 0..m {
                for j in 0..n {
                    let mut s = 0f64;
                    for kk in 0..k {
                        s += av[(bi * m + i) * k + kk] as f64 * wv[(wi * k + kk) * n + j] as f64;
                    }
                    assert_eq!(rv[((bi * 2 + wi) * m + i) * n + j], s as f32);
                }
            }
        }
    }
}

#[test]
fn integer_matmul_is_exact_and_wraps_to_its_type() {
    let (b, m, k, n) = (2, 3, 5, 4);
    let av: Vec<i64> = (0..(b * m * k) as i64)
        .map(|i| (i * 37) % 255 - 127)
        .collect();
    let wv: Vec<i64> = (0..(k * n) as i64).map(|i| (i * 53) % 255 - 127).collect();
    let a = Tensor::from_i64(vec![b, m, k], I32, av.clone()).unwrap();
    let w = Tensor::from_i64(vec![k, n], I32, wv.clone()).unwrap();
    let r = ev(OpKind::MatMul, &[&a, &w]);
    assert_eq!((r.shape(), r.dtype()), (&[b, m, n][..], I32));
    let rv = r.to_i64_vec();
    for bi in 0..b {
        for i in 0..m {
            for j in 0..n {
                let s: i64 = (0..k)
                    .map(|kk| av[(bi * m + i) * k + kk] * wv[kk * n + j])
                    .sum();
                assert_eq!(rv[(bi * m + i) * n + j], s);
            }
        }
    }
    // 3 x 2^30 does not fit in i32: it wraps as numpy's int32 does.
    let big = Tensor::from_i64(vec![1, 3], I32, vec![1 << 30; 3]).unwrap();
    let ones = Tensor::from_i64(vec![3, 1], I32, vec![1; 3]).unwrap();
    let r = ev(OpKind::MatMul, &[&big, &ones]);
    assert_eq!(r.to_i64_vec(), vec![(3i64 << 30) as i32 as i64]);
    let u = Tensor::from_i64(vec![2], U8, vec![200, 100]).unwrap();
    assert_eq!(
        ev(OpKind::MatMul, &[&u, &u]).to_i64_vec(),
        vec![(50000 % 256) as i64]
    );
    let bools = Tensor::from_bool(vec![2], vec![true, false]).unwrap();
    assert!(evaluate(&OpKind::MatMul, &[&bools, &bools]).is_err());
}

#[test]
fn matmul_vectors_and_f16_rounding() {
    let a = f32t(&[3], vec![1.0, 2.0, 3.0]);
    let b = f32t(&[3, 2], vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let r = ev(OpKind::MatMul, &[&a, &b]);
    assert_eq!(r.shape(), &[2]);
    assert_eq!(r.as_f32().unwrap(), &[4.0, 5.0]);
    let dot = ev(OpKind::MatMul, &[&a, &a]);
    assert_eq!(dot.shape(), &[] as &[usize]);
    assert_eq!(dot.as_f32().unwrap(), &[14.0]);
    // f16 result is rounded once from the exact sum: 1 + 2^-11 + 2^-11 = 1 + 2^-10.
    let x = Tensor::from_f32(vec![1, 3], F16, vec![1.0, 2f32.powi(-11), 2f32.powi(-11)]);
    // 2^-11 is representable in f16.
    let x = x.unwrap();
    let ones = Tensor::from_f32(vec![3, 1], F16, vec![1.0; 3]).unwrap();
    let r = ev(OpKind::MatMul, &[&x, &ones]);
    assert_eq!(r.dtype(), F16);
    assert_eq!(r.as_f32().unwrap(), &[1.0 + 2f32.powi(-10)]);
}

#[test]
fn elementwise_broadcasting() {
    let a = f32t(&[2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = f32t(&[3], vec![10.0, 20.0, 30.0]);
    let c = f32t(&[2, 1], vec![2.0, 4.0]);
    assert_eq!(
        ev(OpKind::Add, &[&a, &b]).as_f32().unwrap(),
        &[11., 22., 33., 14., 25., 36.]
    );
    assert_eq!(
        ev(OpKind::Div, &[&a, &c]).as_f32().unwrap(),
        &[0.5, 1., 1.5, 1., 1.25, 1.5]
    );
    let outer = ev(OpKind::Mul, &[&c, &b]);
    assert_eq!(outer.shape(), &[2, 3]);
    assert_eq!(outer.as_f32().unwrap(), &[20., 40., 60., 40., 80., 120.]);
    let m = ev(OpKind::Max, &[&a, &f32t(&[], vec![3.5])]);
    assert_eq!(m.as_f32().unwrap(), &[3.5, 3.5, 3.5, 4., 5., 6.]);
    let lt = ev(OpKind::Less, &[&a, &b]);
    assert_eq!(lt.dtype(), I1);
    assert!(evaluate(&OpKind::Add, &[&a, &f32t(&[2], vec![0.0; 2])]).is_err());
    // Large (parallel path) broadcast agrees with the small path.
    let big = f32t(&[300, 200], seq(60000, 3.0));
    let row = f32t(&[200], seq(200, 1.0));
    let r = ev(OpKind::Sub, &[&big, &row]);
    let (bv, rv, ov) = (
        big.as_f32().unwrap(),
        row.as_f32().unwrap(),
        r.as_f32().unwrap(),
    );
    for i in (0..60000).step_by(997) {
        assert_eq!(ov[i], bv[i] - rv[i % 200]);
    }
}

#[test]
fn integer_arithmetic_wraps_and_errors() {
    let a = Tensor::from_i64(vec![3], I32, vec![i32::MAX as i64, -7, 7]).unwrap();
    let b = Tensor::from_i64(vec![3], I32, vec![1, 2, -2]).unwrap();
    assert_eq!(
        ev(OpKind::Add, &[&a, &b]).as_i64().unwrap(),
        &[i32::MIN as i64, -5, 5]
    );
    assert_eq!(
        ev(OpKind::Div, &[&a, &b]).as_i64().unwrap(),
        &[i32::MAX as i64, -3, -3]
    );
    let z = Tensor::from_i64(vec![3], I32, vec![1, 0, 1]).unwrap();
    assert!(matches!(
        evaluate(&OpKind::Div, &[&a, &z]),
        Err(EvalError::DivisionByZero { .. })
    ));
    let p = ev(
        OpKind::Pow,
        &[&i64t(&[2], vec![3, 2]), &i64t(&[2], vec![4, 10])],
    );
    assert_eq!(p.as_i64().unwrap(), &[81, 1024]);
}

#[test]
fn unary_math() {
    let x = f32t(&[4], vec![-1.0, 0.0, 1.0, 2.0]);
    let e = ev(OpKind::Erf, &[&x]);
    let ev_ = e.as_f32().unwrap();
    assert!((ev_[2] - 0.842_700_8).abs() < 1e-6 && ev_[0] == -ev_[2] && ev_[1] == 0.0);
    let g = ev(
        OpKind::Gelu {
            approximate: GeluApproximation::None,
        },
        &[&x],
    );
    let gt = ev(
        OpKind::Gelu {
            approximate: GeluApproximation::Tanh,
        },
        &[&x],
    );
    let xs = ev(
        OpKind::Mul,
        &[&x, &f32t(&[], vec![std::f32::consts::FRAC_1_SQRT_2])],
    );
    let es = ev(OpKind::Erf, &[&xs]);
    for (i, &v) in x.as_f32().unwrap().iter().enumerate() {
        let exact = 0.5 * v * (1.0 + es.as_f32().unwrap()[i]);
        assert!((g.as_f32().unwrap()[i] - exact).abs() < 1e-6);
        assert!((gt.as_f32().unwrap()[i] - exact).abs() < 1e-3);
    }
    assert_eq!(
        ev(OpKind::Relu, &[&x]).as_f32().unwrap(),
        &[0.0, 0.0, 1.0, 2.0]
    );
    let r = ev(OpKind::Rsqrt, &[&f32t(&[2], vec![4.0, 0.25])]);
    assert_eq!(r.as_f32().unwrap(), &[0.5, 2.0]);
    let t = f32t(&[2], vec![0.0, std::f32::consts::FRAC_PI_2]);
    assert_eq!(ev(OpKind::Sin, &[&t]).as_f32().unwrap(), &[0.0, 1.0]);
    assert_eq!(ev(OpKind::Cos, &[&t]).as_f32().unwrap()[0], 1.0);
    let s = ev(OpKind::Sigmoid, &[&f32t(&[1], vec![0.0])]);
    assert_eq!(s.as_f32().unwrap(), &[0.5]);
    assert!(evaluate(&OpKind::Exp, &[&i64t(&[1], vec![1])]).is_err());
}

#[test]
fn softmax_and_log_softmax() {
    let x = f32t(&[2, 3, 4], seq(24, 5.0));
    for axis in 0..3 {
        let s = ev(OpKind::Softmax { axis }, &[&x]);
        let sums = ev(
            OpKind::Reduce {
                kind: ReduceKind::Sum,
                axes: vec![axis],
                keepdims: false,
            },
            &[&s],
        );
        for v in sums.as_f32().unwrap() {
            assert!((v - 1.0).abs() < 1e-6);
        }
        let l = ev(OpKind::LogSoftmax { axis }, &[&x]);
        let el = ev(OpKind::Exp, &[&l]);
        for (a, b) in el.as_f32().unwrap().iter().zip(s.as_f32().unwrap()) {
            assert!((a - b).abs() < 1e-6);
        }
    }
    // Shift invariance with large values: no overflow.
    let big = f32t(&[3], vec![1000.0, 1001.0, 1002.0]);
    let s = ev(OpKind::Softmax { axis: 0 }, &[&big]);
    let small = ev(
        OpKind::Softmax { axis: 0 },
        &[&f32t(&[3], vec![0.0, 1.0, 2.0])],
    );
    assert_eq!(s.as_f32().unwrap(), small.as_f32().unwrap());
}

#[test]
fn layer_norm_normalizes() {
    let x = f32t(&[4, 2, 8], seq(64, 3.0));
    let scale = f32t(&[8], vec![2.0; 8]);
    let bias = f32t(&[8], vec![1.0; 8]);
    let op = OpKind::LayerNorm {
        axis: 1,
        epsilon: 0.0,
        has_scale: true,
        has_bias: true,
    };
    let y = ev(op, &[&x, &scale, &bias]);
    for row in y.as_f32().unwrap().chunks(16) {
        let mean: f64 = row.iter().map(|&v| (v as f64 - 1.0) / 2.0).sum::<f64>() / 16.0;
        let var: f64 = row
            .iter()
            .map(|&v| ((v as f64 - 1.0) / 2.0).powi(2))
            .sum::<f64>()
            / 16.0;
        assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-5);
    }
    let bad = OpKind::LayerNorm {
        axis: 2,
        epsilon: 1e-5,
        has_scale: true,
        has_bias: false,
    };
    assert!(evaluate(&bad, &[&x, &f32t(&[3], vec![1.0; 3])]).is_err());
}

#[test]
fn reductions() {
    let x = f32t(&[2, 3, 2], (0..12).map(|v| v as f32).collect());
    let r = ev(
        OpKind::Reduce {
            kind: ReduceKind::Sum,
            axes: vec![0, 2],
            keepdims: true,
        },
        &[&x],
    );
    assert_eq!(r.shape(), &[1, 3, 1]);
    assert_eq!(
        r.as_f32().unwrap(),
        &[0. + 1. + 6. + 7., 2. + 3. + 8. + 9., 4. + 5. + 10. + 11.]
    );
    let m = ev(
        OpKind::Reduce {
            kind: ReduceKind::Mean,
            axes: vec![1],
            keepdims: false,
        },
        &[&x],
    );
    assert_eq!(m.shape(), &[2, 2]);
    assert_eq!(m.as_f32().unwrap(), &[2., 3., 8., 9.]);
    let mx = ev(
        OpKind::Reduce {
            kind: ReduceKind::Max,
            axes: vec![0, 1, 2],
            keepdims: false,
        },
        &[&x],
    );
    assert_eq!(mx.as_f32().unwrap(), &[11.]);
    let nan = f32t(&[3], vec![1.0, f32::NAN, 2.0]);
    let mx = ev(
        OpKind::Reduce {
            kind: ReduceKind::Max,
            axes: vec![0],
            keepdims: false,
        },
        &[&nan],
    );
    assert!(mx.as_f32().unwrap()[0].is_nan());
    // f64 accumulation: 1e8 + many ones is exact before the final rounding.
    let mut v = vec![1.0f32; 101];
    v[0] = 1e8;
    let s = ev(
        OpKind::Reduce {
            kind: ReduceKind::Sum,
            axes: vec![0],
            keepdims: false,
        },
        &[&f32t(&[101], v)],
    );
    assert_eq!(s.as_f32().unwrap(), &[100_000_100.0]);
}

#[test]
fn movement_ops() {
    let x = f32t(&[2, 3, 4], (0..24).map(|v| v as f32).collect());
    let t = ev(
        OpKind::Transpose {
            perm: vec![2, 0, 1],
        },
        &[&x],
    );
    assert_eq!(t.shape(), &[4, 2, 3]);
    let tv = t.as_f32().unwrap();
    assert_eq!(tv[(3 * 2 + 1) * 3 + 2], ((3 + 2) * 4 + 3) as f32);
    let s = ev(
        OpKind::Slice {
            starts: vec![1, 2, 3],
            ends: vec![2, -1, 0],
            steps: vec![1, -2, -2],
        },
        &[&x],
    );
    assert_eq!(s.shape(), &[1, 2, 2]);
    assert_eq!(
        s.as_f32().unwrap(),
        &[12. + 8. + 3., 12. + 8. + 1., 12. + 3., 12. + 1.]
    );
    let c = ev(OpKind::Concat { axis: 1 }, &[&x, &x]);
    assert_eq!(c.shape(), &[2, 6, 4]);
    assert_eq!(c.as_f32().unwrap()[12..16], [0., 1., 2., 3.]);
    let b = ev(
        OpKind::Broadcast { shape: vec![2, 3] },
        &[&f32t(&[3], vec![1., 2., 3.])],
    );
    assert_eq!(b.as_f32().unwrap(), &[1., 2., 3., 1., 2., 3.]);
    let r = ev(OpKind::Reshape { shape: vec![6, 4] }, &[&x]);
    assert_eq!(r.as_f32().unwrap(), x.as_f32().unwrap());
    assert!(evaluate(&OpKind::Reshape { shape: vec![5, 5] }, &[&x]).is_err());
}

#[test]
fn gather_and_select() {
    let emb = f32t(&[4, 2], (0..8).map(|v| v as f32).collect());
    let idx = i64t(&[2, 2], vec![3, 0, -1, 1]);
    let g = ev(OpKind::Gather { axis: 0 }, &[&emb, &idx]);
    assert_eq!(g.shape(), &[2, 2, 2]);
    assert_eq!(g.as_f32().unwrap(), &[6., 7., 0., 1., 6., 7., 2., 3.]);
    let g1 = ev(OpKind::Gather { axis: 1 }, &[&emb, &i64t(&[], vec![1])]);
    assert_eq!(g1.as_f32().unwrap(), &[1., 3., 5., 7.]);
    let bad = i64t(&[1], vec![4]);
    assert!(matches!(
        evaluate(&OpKind::Gather { axis: 0 }, &[&emb, &bad]),
        Err(EvalError::IndexOutOfRange {
            index: 4,
            size: 4,
            ..
        })
    ));
    let cond = Tensor::from_bool(vec![2, 1], vec![true, false]).unwrap();
    let s = ev(
        OpKind::Select,
        &[&cond, &f32t(&[2], vec![1., 2.]), &f32t(&[], vec![9.])],
    );
    assert_eq!(s.as_f32().unwrap(), &[1., 2., 9., 9.]);
}

#[test]
fn casts() {
    let x = f32t(&[5], vec![1000.0, -1.7, 0.3, f32::INFINITY, f32::NAN]);
    let sat = ev(
        OpKind::Cast {
            to: F8E4M3FN,
            saturate: true,
            scale: 0,
        },
        &[&x],
    );
    assert_eq!(sat.fp8_codes().unwrap()[..4], [0x7E, 0xBE, 0x2A, 0x7E]);
    let non = ev(
        OpKind::Cast {
            to: F8E4M3FN,
            saturate: false,
            scale: 0,
        },
        &[&x],
    );
    assert!(non.as_f32().unwrap()[0].is_nan());
    let e5 = ev(
        OpKind::Cast {
            to: F8E5M2,
            saturate: false,
            scale: 0,
        },
        &[&x],
    );
    assert_eq!(e5.as_f32().unwrap()[3], f32::INFINITY);
    let scaled = ev(
        OpKind::Cast {
            to: F8E4M3FN,
            saturate: false,
            scale: 2,
        },
        &[&x],
    );
    assert_eq!(scaled.fp8_scale(), 2);
    assert_eq!(scaled.as_f32().unwrap()[0], 1024.0);
    let back = ev(
        OpKind::Cast {
            to: F32,
            saturate: false,
            scale: 0,
        },
        &[&scaled],
    );
    assert_eq!(back.as_f32().unwrap()[0], 1024.0);
    let i = ev(
        OpKind::Cast {
            to: I32,
            saturate: false,
            scale: 0,
        },
        &[&x],
    );
    assert_eq!(i.as_i64().unwrap()[..3], [1000, -1, 0]);
    let b = ev(
        OpKind::Cast {
            to: I1,
            saturate: false,
            scale: 0,
        },
        &[&x],
    );
    assert_eq!(b.as_i64().unwrap(), &[1, 1, 1, 1, 1]);
    let h = ev(
        OpKind::Cast {
            to: BF16,
            saturate: false,
            scale: 0,
        },
        &[&f32t(&[1], vec![1.0 + 3.0 / 256.0])],
    );
    assert_eq!(h.as_f32().unwrap(), &[1.0 + 4.0 / 256.0]);
    assert!(evaluate(
        &OpKind::Cast {
            to: F32,
            saturate: false,
            scale: 3
        },
        &[&x]
    )
    .is_err());
}

#[test]
fn mod_argmax_cumsum_rounding() {
    let a = i64t(&[4], vec![7, -7, 7, -7]);
    let b = i64t(&[4], vec![3, 3, -3, -3]);
    let py = ev(OpKind::Mod { fmod: false }, &[&a, &b]);
    assert_eq!(py.as_i64().unwrap(), &[1, 2, -2, -1]);
    let c = ev(OpKind::Mod { fmod: true }, &[&a, &b]);
    assert_eq!(c.as_i64().unwrap(), &[1, -1, 1, -1]);
    let fm = ev(
        OpKind::Mod { fmod: true },
        &[&f32t(&[2], vec![-5.5, 5.5]), &f32t(&[], vec![2.0])],
    );
    assert_eq!(fm.as_f32().unwrap(), &[-1.5, 1.5]);
    let x = f32t(&[2, 3], vec![1.0, 5.0, 5.0, 9.0, -1.0, 9.0]);
    let am = ev(
        OpKind::ArgMax {
            axis: 1,
            keepdims: false,
            select_last_index: false,
        },
        &[&x],
    );
    assert_eq!(
        (am.shape(), am.as_i64().unwrap()),
        (&[2usize][..], &[1i64, 0][..])
    );
    let aml = ev(
        OpKind::ArgMax {
            axis: 1,
            keepdims: true,
            select_last_index: true,
        },
        &[&x],
    );
    assert_eq!(
        (aml.shape(), aml.as_i64().unwrap()),
        (&[2usize, 1][..], &[2i64, 2][..])
    );
    let an = ev(
        OpKind::ArgMin {
            axis: 0,
            keepdims: false,
            select_last_index: false,
        },
        &[&x],
    );
    assert_eq!(an.as_i64().unwrap(), &[0, 1, 0]);
    let cs = ev(
        OpKind::CumSum {
            axis: 1,
            exclusive: false,
            reverse: false,
        },
        &[&x],
    );
    assert_eq!(cs.as_f32().unwrap(), &[1.0, 6.0, 11.0, 9.0, 8.0, 17.0]);
    let cse = ev(
        OpKind::CumSum {
            axis: 1,
            exclusive: true,
            reverse: true,
        },
        &[&x],
    );
    assert_eq!(cse.as_f32().unwrap(), &[10.0, 5.0, 0.0, 8.0, 9.0, 0.0]);
    let r = f32t(&[5], vec![0.5, 1.5, 2.5, -0.5, -1.7]);
    assert_eq!(
        ev(OpKind::Round, &[&r]).as_f32().unwrap(),
        &[0.0, 2.0, 2.0, -0.0, -2.0]
    );
    assert_eq!(
        ev(OpKind::Floor, &[&r]).as_f32().unwrap(),
        &[0.0, 1.0, 2.0, -1.0, -2.0]
    );
    assert_eq!(
        ev(OpKind::Ceil, &[&r]).as_f32().unwrap(),
        &[1.0, 2.0, 3.0, -0.0, -1.0]
    );
    let p = ev(
        OpKind::Reduce {
            kind: ReduceKind::Prod,
            axes: vec![1],
            keepdims: false,
        },
        &[&x],
    );
    assert_eq!(p.as_f32().unwrap(), &[25.0, -81.0]);
    assert!(matches!(
        evaluate(&OpKind::Mod { fmod: false }, &[&a, &i64t(&[1], vec![0])]),
        Err(EvalError::DivisionByZero { .. })
    ));
}

#[test]
fn pad_gather_elements_topk_cumprod() {
    let x = f32t(&[2, 3], vec![1., 2., 3., 4., 5., 6.]);
    let pad = |mode, low: Vec<i64>, high: Vec<i64>| {
        ev(
            OpKind::Pad {
                low,
                high,
                mode,
                value: 9.0,
            },
            &[&x],
        )
    };
    let c = pad(PadMode::Constant, vec![0, 1], vec![1, 0]);
    assert_eq!(c.shape(), &[3, 4]);
    assert_eq!(
        c.as_f32().unwrap(),
        &[9., 1., 2., 3., 9., 4., 5., 6., 9., 9., 9., 9.]
    );
    let r = pad(PadMode::Reflect, vec![0, 2], vec![0, 2]);
    assert_eq!(r.as_f32().unwrap()[..7], [3., 2., 1., 2., 3., 2., 1.]);
    let e = pad(PadMode::Edge, vec![0, 2], vec![0, 1]);
    assert_eq!(e.as_f32().unwrap()[..6], [1., 1., 1., 2., 3., 3.]);
    let w = pad(PadMode::Wrap, vec![0, 1], vec![0, 1]);
    assert_eq!(w.as_f32().unwrap()[..5], [3., 1., 2., 3., 1.]);
    let crop = pad(PadMode::Constant, vec![-1, 0], vec![0, -2]);
    assert_eq!(
        (crop.shape(), crop.as_f32().unwrap()),
        (&[1usize, 1][..], &[4.0f32][..])
    );
    assert!(evaluate(
        &OpKind::Pad {
            low: vec![0, -4],
            high: vec![0, 0],
            mode: PadMode::Constant,
            value: 0.0
        },
        &[&x]
    )
    .is_err());

    let idx = i64t(&[2, 2], vec![2, 0, -1, 1]);
    let g = ev(OpKind::GatherElements { axis: 1 }, &[&x, &idx]);
    assert_eq!(g.as_f32().unwrap(), &[3., 1., 6., 5.]);
    assert!(evaluate(
        &OpKind::GatherElements { axis: 1 },
        &[&x, &i64t(&[1, 1], vec![3])]
    )
    .is_err());

    let v = f32t(&[2, 4], vec![1., 4., 4., 2., 0., -1., 7., 7.]);
    let t = ev(
        OpKind::TopK {
            axis: 1,
            k: 2,
            largest: true,
        },
        &[&v],
    );
    assert_eq!(t.as_i64().unwrap(), &[1, 2, 2, 3]);
    let s = ev(
        OpKind::TopK {
            axis: 1,
            k: 3,
            largest: false,
        },
        &[&v],
    );
    assert_eq!(s.as_i64().unwrap(), &[0, 3, 1, 1, 0, 2]);
    assert!(evaluate(
        &OpKind::TopK {
            axis: 1,
            k: 5,
            largest: true
        },
        &[&v]
    )
    .is_err());

    let p = ev(
        OpKind::CumProd {
            axis: 1,
            exclusive: false,
            reverse: false,
        },
        &[&x],
    );
    assert_eq!(p.as_f32().unwrap(), &[1., 2., 6., 4., 20., 120.]);
    let pe = ev(
        OpKind::CumProd {
            axis: 0,
            exclusive: true,
            reverse: false,
        },
        &[&x],
    );
    assert_eq!(pe.as_f32().unwrap(), &[1., 1., 1., 1., 2., 3.]);
}

#[test]
fn scatter_ops() {
    let x = f32t(&[2, 3], vec![0.0; 6]);
    let idx = i64t(&[2, 2], vec![2, 0, -1, 2]);
    let upd = f32t(&[2, 2], vec![1., 2., 3., 4.]);
    let s = ev(
        OpKind::ScatterElements {
            axis: 1,
            reduction: ScatterReduction::None,
        },
        &[&x, &idx, &upd],
    );
    // Row 1 writes index 2 twice: the later update wins.
    assert_eq!(s.as_f32().unwrap(), &[2., 0., 1., 0., 0., 4.]);
    let a = ev(
        OpKind::ScatterElements {
            axis: 1,
            reduction: ScatterReduction::Add,
        },
        &[&x, &idx, &upd],
    );
    assert_eq!(a.as_f32().unwrap(), &[2., 0., 1., 0., 0., 7.]);
    let bad = i64t(&[2, 2], vec![3, 0, 0, 0]);
    assert!(evaluate(
        &OpKind::ScatterElements {
            axis: 1,
            reduction: ScatterReduction::None
        },
        &[&x, &bad, &upd]
    )
    .is_err());
    // ScatterND: replace row 1, then multiply element [0, 2].
    let rows = i64t(&[1, 1], vec![1]);
    let r = ev(
        OpKind::ScatterNd {
            reduction: ScatterReduction::None,
        },
        &[&x, &rows, &f32t(&[1, 3], vec![5., 6., 7.])],
    );
    assert_eq!(r.as_f32().unwrap(), &[0., 0., 0., 5., 6., 7.]);
    let el = i64t(&[1, 2], vec![1, -1]);
    let m = ev(
        OpKind::ScatterNd {
            reduction: ScatterReduction::Mul,
        },
        &[&r, &el, &f32t(&[1], vec![2.])],
    );
    assert_eq!(m.as_f32().unwrap(), &[0., 0., 0., 5., 6., 14.]);
    assert!(evaluate(
        &OpKind::ScatterNd {
            reduction: ScatterReduction::None
        },
        &[&x, &el, &f32t(&[2], vec![1., 2.])]
    )
    .is_err());
}

fn resize_op(shape: &[usize], scales: &[f64], mode: ResizeMode, antialias: bool) -> OpKind {
    OpKind::Resize {
        shape: shape.to_vec(),
        scales: scales.to_vec(),
        coordinate: ResizeCoordinate::HalfPixel,
        roi: vec![],
        extrapolation_value: 0.0,
        mode,
        nearest: NearestMode::RoundPreferFloor,
        antialias,
        cubic_coeff_a: -0.75,
        exclude_outside: false,
    }
}

/// Cubic resize weights (a = -0.75) against the kernel worked by hand, and
/// scales at the edge of f64: an error or a value, never a panic.
#[test]
fn resize_cubic_weights_and_extreme_scales() {
    // Half-pixel, scale 2: output 1 reads coordinate 0.25, between 0 and
    // 1; the taps -1..2 are clamped to the input's edge (indices 0, 0, 1, 2).
    let x = f32t(&[1, 1, 4], vec![1.0, 2.0, 4.0, 8.0]);
    let y = ev(
        resize_op(&[1, 1, 8], &[1.0, 1.0, 2.0], ResizeMode::Cubic, false),
        &[&x],
    );
    let a = -0.75f64;
    let w = |d: f64| {
        let d = d.abs();
        if d <= 1.0 {
            ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0
        } else {
            ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a
        }
    };
    let r = 0.25f64;
    let want = w(1.0 + r) * 1.0 + w(r) * 1.0 + w(1.0 - r) * 2.0 + w(2.0 - r) * 4.0;
    assert_eq!(y.as_f32().unwrap()[1], want as f32);
    // A scale of 1e-300: the coordinates are far past the input (the edge
    // is read); antialiased, its kernel would be wider than any allocation.
    let tiny = [1.0, 1.0, 1e-300];
    let y = ev(
        resize_op(&[1, 1, 1], &tiny, ResizeMode::Linear, false),
        &[&x],
    );
    assert_eq!(y.as_f32().unwrap(), &[8.0]);
    let e = evaluate(
        &resize_op(&[1, 1, 1], &tiny, ResizeMode::Linear, true),
        &[&x],
    )
    .unwrap_err();
    assert!(e.to_string().contains("antialiased"), "{e}");
}

/// `cast_fp8_codes` gives the codes the `Cast` result stores, for values
/// that round, overflow, underflow, saturate, and for infinities and NaNs
/// of either sign (the result stores a NaN as the format's positive NaN).
#[test]
fn cast_fp8_codes_are_the_cast_results_codes() {
    let mut v = seq(5000, 600.0);
    v.extend([
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1e-30,
        -3e-9,
        464.0,
        61440.0,
        1e38,
    ]);
    let x = f32t(&[v.len()], v);
    for to in [F8E4M3FN, F8E5M2] {
        for saturate in [false, true] {
            for scale in [-6, 0, 3] {
                let cast = ev(
                    OpKind::Cast {
                        to,
                        saturate,
                        scale,
                    },
                    &[&x],
                );
                let want = cast.fp8_codes().unwrap();
                let got = eval::cast_fp8_codes(&x, to, saturate, scale).unwrap();
                assert_eq!(got, want, "{to:?} saturate {saturate} scale {scale}");
            }
        }
    }
    assert!(eval::cast_fp8_codes(&x, F16, false, 0).is_none());
}
