//! `partials.S`: split-K partial sums added up in one pass. Its result is
//! byte for byte that of the same adds made one partial at a time
//! (((c + p1) + p2) + ..., each rounded), padding lanes included, and its
//! cycle formula tracks the simulated run.

mod common;

use common::*;
use ipu_isa::float::{f16_bits, f16_value};
use ipu_isa::kernels::assemble_kernel;
use rand::{Rng, SeedableRng};

const C: u32 = DATA;
const PARTIALS: u32 = DATA + 0x10000;
const OUT: u32 = DATA + 0x30000;

/// Runs `partials` on random c and partials; returns (c, partials, out)
/// as lanes of f64 (every lane of every granule) and the simulated cycles.
fn run(ty: i64, n: usize, p: usize, in_place: bool, seed: u64) -> (Vec<u8>, Vec<u8>, Vec<u8>, u64) {
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let eb = if ty == 0 { 4 } else { 2 };
    let gb = (n * eb).div_ceil(8) * 8;
    let lanes = gb / eb;
    let enc = |v: f32| -> Vec<u8> {
        if ty == 0 {
            v.to_le_bytes().to_vec()
        } else {
            f16_bits(v).to_le_bytes().to_vec()
        }
    };
    let mut gen = |count: usize| -> Vec<u8> {
        (0..count)
            .flat_map(|_| enc(r.gen_range(-4.0f32..4.0)))
            .collect()
    };
    let c = gen(lanes);
    let parts = gen(lanes * p);
    let out = if in_place { C } else { OUT };
    let t = run_kernel(
        "partials",
        "partials",
        &[("TYPE", ty), ("N", n as i64), ("P", p as i64)],
        &[C, PARTIALS, out],
        &[(C, c.clone()), (PARTIALS, parts.clone())],
    );
    let got = t.read(out, gb).unwrap().to_vec();
    (c, parts, got, t.cycle())
}

/// ((c + p1) + p2) + ..., rounded after each add, lane by lane.
fn sequential(ty: i64, c: &[u8], parts: &[u8], p: usize) -> Vec<u8> {
    let eb = if ty == 0 { 4 } else { 2 };
    let lanes = c.len() / eb;
    let lane = |b: &[u8], i: usize| -> f32 {
        if ty == 0 {
            f32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
        } else {
            f16_value(u16::from_le_bytes([b[2 * i], b[2 * i + 1]]))
        }
    };
    let mut out = Vec::with_capacity(c.len());
    for i in 0..lanes {
        let mut acc = lane(c, i);
        for k in 0..p {
            let s = acc + lane(parts, k * lanes + i);
            acc = if ty == 0 { s } else { f16_value(f16_bits(s)) };
        }
        if ty == 0 {
            out.extend_from_slice(&acc.to_le_bytes());
        } else {
            out.extend_from_slice(&f16_bits(acc).to_le_bytes());
        }
    }
    out
}

#[test]
fn partials_equal_the_adds_one_at_a_time() {
    let mut seed = 1;
    for p in 1..=6 {
        for (ty, n) in [
            (1i64, 416usize),
            (1, 4),
            (1, 333),
            (0, 1000),
            (0, 7),
            (0, 208),
        ] {
            for in_place in [false, true] {
                seed += 1;
                let (c, parts, got, _) = run(ty, n, p, in_place, seed);
                let want = sequential(ty, &c, &parts, p);
                assert_eq!(got, want, "TYPE {ty} N {n} P {p} in place {in_place}");
            }
        }
    }
}

#[test]
fn partials_rounds_after_every_add() {
    // 2048 + 1 + 1 in f16: (2048 + 1) rounds to 2048 (ties to even), twice;
    // adding 1 + 1 first would give 2050.
    let v = |x: f32| f16_bits(x).to_le_bytes().to_vec();
    let c: Vec<u8> = (0..4).flat_map(|_| v(2048.0)).collect();
    let parts: Vec<u8> = (0..8).flat_map(|_| v(1.0)).collect();
    let t = run_kernel(
        "partials",
        "partials",
        &[("TYPE", 1), ("N", 4), ("P", 2)],
        &[C, PARTIALS, OUT],
        &[(C, c), (PARTIALS, parts)],
    );
    assert_eq!(rd_u16(&t, OUT, 4), vec![f16_bits(2048.0); 4]);
}

#[test]
fn partials_cycle_formula_tracks_the_simulator() {
    for p in 1..=6 {
        // Blocks of at least a granule per worker (the split-K blocks).
        for (ty, n) in [(1i64, 416usize), (1, 96), (1, 3000), (0, 1000), (0, 208)] {
            let params: std::collections::BTreeMap<String, i64> =
                [("TYPE", ty), ("N", n as i64), ("P", p as i64)]
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect();
            let formula = assemble_kernel("partials", &params)
                .unwrap()
                .meta
                .cycles
                .unwrap() as u64;
            let (_, _, _, simulated) = run(ty, n, p, true, 7);
            let ratio = formula as f64 / simulated as f64;
            assert!(
                (0.97..=1.03).contains(&ratio),
                "TYPE {ty} N {n} P {p}: formula {formula}, simulated {simulated}"
            );
        }
    }
}
