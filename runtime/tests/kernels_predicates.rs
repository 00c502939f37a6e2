//! The comparison, boolean, select, gather, pow and tanh-gelu kernels on
//! the tile simulator against the reference interpreter's evaluation of the
//! op each implements (`ipu_reference::evaluate`), bit for bit: NaN,
//! infinities and signed zeros among the inputs; odd sizes, with the inputs
//! placed so that they end at the end of tile memory (a read past their
//! last granule faults); gather's negative indices and its fault on an
//! index out of range.

mod common;

use ipu_isa::kernels::elementwise_state;

use common::*;
use ipu_isa::float::{f16_bits, f16_value};
use ipu_reference::{evaluate, ElementType as Ty, GeluApproximation, OpKind, Tensor};
use ipu_runtime::{FaultKind, NoExchange, Outcome, Tile};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

const IN1: u32 = DATA;
const IN2: u32 = DATA + 0x10000;
const OUT: u32 = DATA + 0x20000;

fn rng(seed: u64) -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(seed)
}

fn ty_of(ty: i64) -> Ty {
    if ty == 0 {
        Ty::F32
    } else {
        Ty::F16
    }
}

/// Values of type `ty` (0 f32, 1 f16), padded to whole 64-bit granules.
fn encode(v: &[f32], ty: i64) -> Vec<u8> {
    let mut b = if ty == 0 {
        f32_bytes(v)
    } else {
        u16_bytes(&v.iter().map(|&x| f16_bits(x)).collect::<Vec<_>>())
    };
    b.resize(b.len().div_ceil(8) * 8, 0xFF);
    b
}

fn decode(t: &Tile, addr: u32, n: usize, ty: i64) -> Vec<f32> {
    if ty == 0 {
        rd_f32(t, addr, n)
    } else {
        rd_u16(t, addr, n).into_iter().map(f16_value).collect()
    }
}

/// The address at which `bytes` end exactly at the end of tile memory.
fn at_end(bytes: usize) -> u32 {
    config().memory_end() - bytes as u32
}

/// Values with many ties and every special: NaN, infinities, signed zeros.
fn value(r: &mut rand::rngs::StdRng) -> f32 {
    const V: [f32; 10] = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        -3.25,
    ];
    if r.gen_bool(0.7) {
        V[r.gen_range(0..V.len())]
    } else {
        r.gen_range(-4.0..4.0)
    }
}

/// Runs a kernel specialisation and reports its simulated cycles next to
/// its formula (the harness around the call adds a few).
fn run(name: &str, params: &[(&str, i64)], state: &[u32], data: &[(u32, Vec<u8>)]) -> Tile {
    let t = run_kernel(name, name, params, state, data);
    let p: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let k = ipu_isa::kernels::assemble_kernel(name, &p).expect("assembles");
    eprintln!(
        "{}: {} cycles, formula {:?}",
        k.meta.name,
        t.cycle(),
        k.meta.cycles
    );
    t
}

fn bools(t: &Tensor) -> Vec<u8> {
    t.to_i64_vec().iter().map(|&b| b as u8).collect()
}

#[test]
fn comparisons_match_the_reference_with_nan_and_signed_zeros() {
    let mut r = rng(11);
    for ty in [0i64, 1] {
        for n in [
            1usize, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 47, 48, 49, 100, 333,
        ] {
            let x: Vec<f32> = (0..n).map(|_| value(&mut r)).collect();
            let y: Vec<f32> = (0..n).map(|_| value(&mut r)).collect();
            let (xb, yb) = (encode(&x, ty), encode(&y, ty));
            let (tx, ty_) = (
                Tensor::from_f32(vec![n], ty_of(ty), x).unwrap(),
                Tensor::from_f32(vec![n], ty_of(ty), y).unwrap(),
            );
            let a0 = at_end(xb.len());
            for (op, kind) in [(0, OpKind::Equal), (1, OpKind::Less), (2, OpKind::Greater)] {
                let t = run(
                    "compare",
                    &[("OP", op), ("TYPE", ty), ("N", n as i64)],
                    &[a0, IN2, OUT],
                    &[
                        (a0, xb.clone()),
                        (IN2, yb.clone()),
                        (OUT, vec![0xAA; n + 8]),
                    ],
                );
                let want = bools(&evaluate(&kind, &[&tx, &ty_]).unwrap());
                let got = t.read(OUT, n).unwrap();
                assert_eq!(got, &want[..], "{kind:?} type {ty} n {n}");
                let pad = t.read(OUT + n as u32, n.div_ceil(8) * 8 - n).unwrap();
                assert!(pad.iter().all(|&b| b <= 1), "padding is 0/1: {pad:?}");
                assert_eq!(
                    t.read(OUT + (n.div_ceil(8) * 8) as u32, 1).unwrap(),
                    &[0xAA],
                    "nothing past the last granule"
                );
            }
        }
    }
}

#[test]
fn boolean_logic_treats_any_nonzero_byte_as_true() {
    let mut r = rng(12);
    for n in [1usize, 7, 8, 9, 48, 49, 100, 1001] {
        let g = n.div_ceil(8) * 8;
        let byte = |r: &mut rand::rngs::StdRng| [0u8, 0, 1, 1, 2, 0x80, 0xFF][r.gen_range(0..7)];
        let x: Vec<u8> = (0..g).map(|_| byte(&mut r)).collect();
        let y: Vec<u8> = (0..g).map(|_| byte(&mut r)).collect();
        let tb = |v: &[u8]| {
            Tensor::from_bool(vec![n], v[..n].iter().map(|&b| b != 0).collect()).unwrap()
        };
        let (tx, ty) = (tb(&x), tb(&y));
        let a0 = at_end(g);
        for (op, kind) in [(3, OpKind::And), (4, OpKind::Or), (5, OpKind::Not)] {
            let t = run(
                "compare",
                &[("OP", op), ("N", n as i64)],
                &[a0, IN2, OUT],
                &[(a0, x.clone()), (IN2, y.clone())],
            );
            let want = if matches!(kind, OpKind::Not) {
                evaluate(&kind, &[&tx])
            } else {
                evaluate(&kind, &[&tx, &ty])
            }
            .unwrap();
            assert_eq!(t.read(OUT, n).unwrap(), &bools(&want)[..], "{kind:?} n {n}");
        }
    }
}

#[test]
fn select_copies_the_chosen_bits() {
    let mut r = rng(13);
    for ty in [0i64, 1] {
        for n in [
            1usize, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 31, 47, 48, 49, 100, 333,
        ] {
            let c: Vec<u8> = (0..n.div_ceil(8) * 8)
                .map(|_| [0u8, 1, 7, 0x80][r.gen_range(0..4)])
                .collect();
            let a: Vec<f32> = (0..n).map(|_| value(&mut r)).collect();
            let b: Vec<f32> = (0..n).map(|_| value(&mut r)).collect();
            let (ab, bb) = (encode(&a, ty), encode(&b, ty));
            let tc = Tensor::from_bool(vec![n], c[..n].iter().map(|&v| v != 0).collect()).unwrap();
            let ta = Tensor::from_f32(vec![n], ty_of(ty), a).unwrap();
            let tb = Tensor::from_f32(vec![n], ty_of(ty), b).unwrap();
            let want = evaluate(&OpKind::Select, &[&tc, &ta, &tb])
                .unwrap()
                .to_f32_vec();
            // a ends at the end of memory; cond lies below the interleaved
            // region (it is read with single loads).
            let (c0, a0) = (CODE + 0x10000, at_end(ab.len()));
            let t = run(
                "select",
                &[("TYPE", ty), ("N", n as i64)],
                &[c0, a0, IN2, OUT],
                &[(c0, c.clone()), (a0, ab), (IN2, bb)],
            );
            let got = decode(&t, OUT, n, ty);
            for i in 0..n {
                assert!(
                    got[i].to_bits() == want[i].to_bits() || (got[i].is_nan() && want[i].is_nan()),
                    "select type {ty} n {n} [{i}]: {} vs {}",
                    got[i],
                    want[i]
                );
            }
        }
    }
}

#[test]
fn pow_and_gelu_tanh_match_the_reference() {
    let mut r = rng(14);
    // Negative bases with integral exponents, zeros, infinities, NaN.
    let mut x = vec![
        -2.0f32,
        -2.0,
        -2.0,
        0.0,
        -0.0,
        2.0,
        f32::NAN,
        1.0,
        f32::INFINITY,
        -1.0,
    ];
    let mut y = vec![
        3.0f32,
        2.0,
        0.5,
        -1.0,
        -3.0,
        0.5,
        0.0,
        f32::NAN,
        -2.0,
        f32::INFINITY,
    ];
    for _ in 0..87 {
        x.push(r.gen_range(-4.0..4.0));
        y.push(if r.gen_bool(0.5) {
            r.gen_range(-3..4) as f32
        } else {
            r.gen_range(-2.0..2.0)
        });
    }
    let n = x.len();
    for ty in [0i64, 1] {
        let tx = Tensor::from_f32(vec![n], ty_of(ty), x.clone()).unwrap();
        let tyv = Tensor::from_f32(vec![n], ty_of(ty), y.clone()).unwrap();
        let (xb, yb) = (encode(&x, ty), encode(&y, ty));
        for (op, kind) in [
            (6i64, OpKind::Pow),
            (
                29,
                OpKind::Gelu {
                    approximate: GeluApproximation::Tanh,
                },
            ),
        ] {
            let binary = op == 6;
            let t = run(
                "elementwise",
                &[("OP", op), ("TYPE", ty), ("N", n as i64)],
                &elementwise_state(ty, n as u64, IN1, binary.then_some(IN2), OUT),
                &[(IN1, xb.clone()), (IN2, yb.clone())],
            );
            let want = if binary {
                evaluate(&kind, &[&tx, &tyv])
            } else {
                evaluate(&kind, &[&tx])
            }
            .unwrap()
            .to_f32_vec();
            let got = decode(&t, OUT, n, ty);
            for i in 0..n {
                assert!(
                    got[i].to_bits() == want[i].to_bits() || (got[i].is_nan() && want[i].is_nan()),
                    "{kind:?} type {ty} [{i}] of {} {}: {} vs {}",
                    tx.to_f32_vec()[i],
                    tyv.to_f32_vec()[i],
                    got[i],
                    want[i]
                );
            }
        }
    }
}

/// Index bytes (8: i64, 4: i32) of `v`.
fn index_bytes(v: &[i64], ib: usize) -> Vec<u8> {
    let mut b: Vec<u8> = v
        .iter()
        .flat_map(|x| x.to_le_bytes()[..ib].to_vec())
        .collect();
    b.resize(b.len().div_ceil(8) * 8, 0);
    b
}

#[test]
fn gather_rows_with_negative_indices() {
    let mut r = rng(15);
    // (pre, rows D, post elements, bytes per element, indices, index bytes)
    for (p, d, post, eb, ni, ib) in [
        (1usize, 50usize, 6usize, 4usize, 7usize, 8usize),
        (1, 5, 3, 4, 9, 4),
        (2, 4, 3, 2, 5, 8),
        (3, 7, 1, 4, 13, 4),
        (1, 9, 5, 1, 4, 8),
        (2, 3, 8, 2, 1, 4),
        (1, 6, 32, 4, 20, 8),
    ] {
        let rb = post * eb;
        let data: Vec<u8> = (0..p * d * rb).map(|_| r.gen()).collect();
        let idx: Vec<i64> = (0..ni)
            .map(|_| r.gen_range(-(d as i64)..d as i64))
            .collect();
        let mut dbytes = data.clone();
        dbytes.resize(dbytes.len().div_ceil(8) * 8, 0);
        let d0 = at_end(dbytes.len());
        let t = run(
            "gather",
            &[
                ("RB", rb as i64),
                ("D", d as i64),
                ("NI", ni as i64),
                ("P", p as i64),
                ("IB", ib as i64),
            ],
            &[d0, IN2, OUT],
            &[(d0, dbytes), (IN2, index_bytes(&idx, ib))],
        );
        // The reference on the bytes as u8 elements of shape [p, d, rb].
        let td = Tensor::from_i64(
            vec![p, d, rb],
            Ty::U8,
            data.iter().map(|&b| b as i64).collect(),
        )
        .unwrap();
        let it = Tensor::from_i64(
            vec![ni],
            if ib == 8 { Ty::I64 } else { Ty::I32 },
            idx.clone(),
        )
        .unwrap();
        let want: Vec<u8> = evaluate(&OpKind::Gather { axis: 1 }, &[&td, &it])
            .unwrap()
            .to_i64_vec()
            .iter()
            .map(|&v| v as u8)
            .collect();
        assert_eq!(
            t.read(OUT, want.len()).unwrap(),
            &want[..],
            "gather p {p} d {d} rb {rb} indices {idx:?}"
        );
    }
}

/// Runs the gather kernel and returns its fault.
fn gather_fault(idx: &[i64], ib: usize, d: usize) -> FaultKind {
    let params: BTreeMap<String, i64> = [
        ("RB", 8i64),
        ("D", d as i64),
        ("NI", idx.len() as i64),
        ("IB", ib as i64),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), *v))
    .collect();
    let kernel = ipu_isa::kernels::assemble_kernel("gather", &params).unwrap();
    let harness = ipu_isa::asm::assemble(
        "harness.S",
        &format!(".globl main\nmain: setzi $m0, {STATE}\n call $m15, gather\n halt\n"),
        &BTreeMap::new(),
    )
    .unwrap();
    let cfg = config();
    let img = ipu_isa::link::link(
        &[("main", &harness.object), ("gather", &kernel.object)],
        &ipu_isa::link::LinkLayout::new(CODE, cfg.memory_end()),
    )
    .unwrap();
    let mut t = Tile::new(cfg);
    t.load(&img).unwrap();
    let state: Vec<u8> = [IN1, IN2, OUT]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    t.write(STATE, &state).unwrap();
    t.write(IN2, &index_bytes(idx, ib)).unwrap();
    t.start(img.symbol("main").unwrap(), 0);
    match t.run_to_halt(&mut NoExchange, 10_000_000) {
        Err(f) => f.kind,
        Ok(o) => {
            assert_eq!(o, Outcome::Halted);
            panic!("indices {idx:?} (i{}) of an axis of {d}: no fault", ib * 8)
        }
    }
}

#[test]
fn gather_faults_on_an_index_out_of_range() {
    for (idx, ib, want) in [
        (vec![0i64, 4], 8usize, 4i32),
        (vec![-5], 8, -1),
        (vec![1, 2, 3, -4, 7], 4, 7),
        (vec![-6], 4, -2),
        // The high word of an i64 index counts: 2^32 + 1 is not 1.
        (vec![(1i64 << 32) + 1], 8, -1),
        (vec![-(1i64 << 32) + 1], 8, 5),
    ] {
        match gather_fault(&idx, ib, 4) {
            FaultKind::IndexOutOfRange { index, bound } => {
                assert_eq!((index, bound), (want, 4), "indices {idx:?}")
            }
            other => panic!("indices {idx:?}: {other}"),
        }
    }
}
