//! GEMM kernels on random inputs against a Rust reference of their math,
//! for several specialisations including odd M and small K / N.

mod common;

use std::collections::BTreeMap;

use common::{config, CODE, DATA, STATE};
use ipu_isa::asm::assemble;
use ipu_isa::float::{f16_bits, f16_value, f8_from_f64, f8_to_f64, F8Format};
use ipu_isa::kernels::assemble_kernel;
use ipu_isa::link::{link, LinkLayout};
use ipu_runtime::{NoExchange, Outcome, Tile};
use rand::{Rng, SeedableRng};

const A: u32 = DATA;

struct GemmRun {
    /// With PRE, the cycles after the prologue (`gemm_amp` itself).
    cycles: u64,
    /// With PRE, the cycles of the prologue (`gemm_amp_pre`).
    prologue: u64,
    macs: u64,
    /// The kernel's `.cycles` formula for these parameters.
    formula: i64,
}

/// Runs gemm_amp (TYPE, M, K, N) on random data and checks every output.
fn check_gemm(ty: i64, m: usize, k: usize, n: usize, scale: i32, seed: u64) -> GemmRun {
    check_gemm_kc(ty, m, k, k, n, scale, seed)
}

/// The same with K processed in chunks of `kc` (A stored as K/kc chunks of M x kc).
fn check_gemm_kc(
    ty: i64,
    m: usize,
    k: usize,
    kc: usize,
    n: usize,
    scale: i32,
    seed: u64,
) -> GemmRun {
    check_gemm_full(ty, m, k, kc, n, scale, seed, 0, 0)
}

/// Where the harness stores the cycle counter after a PRE kernel's prologue.
const PROLOGUE_END: u32 = STATE + 0x800;

/// [`check_gemm_kc`]; with `pre` (the kernel's PRE, 1 or 2), its prologue
/// `gemm_amp_pre` is called first, and then `gemm_amp` with the same state;
/// with `bt` 1, B is given transposed (N x K row-major; the kernel's BT, K
/// in one chunk).
#[allow(clippy::too_many_arguments)]
fn check_gemm_full(
    ty: i64,
    m: usize,
    k: usize,
    kc: usize,
    n: usize,
    scale: i32,
    seed: u64,
    pre: i64,
    bt: i64,
) -> GemmRun {
    let params: BTreeMap<String, i64> = [
        ("TYPE", ty),
        ("M", m as i64),
        ("K", k as i64),
        ("KC", kc as i64),
        ("N", n as i64),
        ("PRE", pre),
        ("BT", bt),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), *b))
    .collect();
    let kernel = assemble_kernel("gemm_amp", &params).unwrap_or_else(|e| panic!("{e}"));
    // With PRE: the prologue, the cycle counter stored (two issues, taken
    // off the count), then the kernel.
    let prologue = if pre != 0 {
        format!(
            " call $m15, gemm_amp_pre\n getc $m1\n setzi $m2, {PROLOGUE_END}\n st32 $m1, [$m2+0]\n setzi $m0, {STATE}\n"
        )
    } else {
        String::new()
    };
    let harness = assemble(
        "harness.S",
        &format!(".globl main\nmain: setzi $m0, {STATE}\n{prologue} call $m15, gemm_amp\n halt\n"),
        &BTreeMap::new(),
    )
    .unwrap();
    let cfg = config();
    let img = link(
        &[("main", &harness.object), ("gemm", &kernel.object)],
        &LinkLayout::new(CODE, cfg.memory_end()),
    )
    .unwrap();
    let mut t = Tile::new(cfg);
    t.load(&img).unwrap();
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let f8 = match ty {
        2 => Some(F8Format::E4M3FN),
        3 => Some(F8Format::E5M2),
        _ => None,
    };
    let pb = if ty == 0 || ty == 4 { 4 } else { 2 };
    let value = |r: &mut rand::rngs::StdRng| -> (Vec<u8>, f64) {
        let v: f64 = r.gen_range(-1.0..1.0);
        match f8 {
            Some(f) => {
                let q = f8_from_f64(v * 8.0, 0, f);
                (vec![q], f8_to_f64(q, 0, f))
            }
            None if ty == 4 => {
                let x = v as f32;
                (x.to_le_bytes().to_vec(), x as f64)
            }
            None => {
                let b = f16_bits(v as f32);
                (b.to_le_bytes().to_vec(), f16_value(b) as f64)
            }
        }
    };
    let (mut ael, mut av) = (Vec::new(), Vec::new());
    for _ in 0..m * k {
        let (b, v) = value(&mut r);
        ael.push(b);
        av.push(v);
    }
    // Stored as K/kc chunks of M x kc.
    let mut ab = Vec::new();
    for c in 0..k / kc {
        for row in 0..m {
            for kk in 0..kc {
                ab.extend(&ael[row * k + c * kc + kk]);
            }
        }
    }
    // B blocked: [n/16][k][16]; with BT, B^T: [n][k].
    let (mut bb, mut bv) = (Vec::new(), Vec::new());
    for _ in 0..n * k {
        let (b, v) = value(&mut r);
        bb.extend(b);
        bv.push(v);
    }
    let b_addr = A + ((ab.len() as u32 + 64 + 15) & !15);
    let c_addr = b_addr + ((bb.len() as u32 + 8 * m as u32 + 64 + 15) & !15);
    // The accumulator T after C, when the specialisation has one.
    let t_addr = c_addr + (((n * m * pb) as u32 + 64 + 15) & !15);
    let spec_acc = ipu_isa::kernels::KernelSpec {
        source: "gemm_amp",
        entry: "gemm_amp",
        params: params.clone(),
    }
    .gemm_accumulator_bytes();
    t.write(A, &ab).unwrap();
    t.write(b_addr, &bb).unwrap();
    let mut state = Vec::new();
    for v in [A, b_addr, c_addr, scale as u32] {
        state.extend(v.to_le_bytes());
    }
    if spec_acc.is_some() {
        state.extend(t_addr.to_le_bytes());
    }
    t.write(STATE, &state).unwrap();
    t.start(img.symbol("main").unwrap(), 0);
    let o = t
        .run_to_halt(&mut NoExchange, 100_000_000)
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(o, Outcome::Halted);
    let out = t.read(c_addr, n * m * pb).unwrap().to_vec();
    let s = 2f64.powi(scale);
    for nb in 0..n / 16 {
        for row in 0..m {
            for c in 0..16 {
                let mut want = 0.0;
                let mut mag = 0.0;
                for kk in 0..k {
                    let w = if bt == 1 {
                        bv[(nb * 16 + c) * k + kk]
                    } else {
                        bv[nb * k * 16 + kk * 16 + c]
                    };
                    let p = av[row * k + kk] * w * s;
                    want += p;
                    mag += p.abs();
                }
                // C is M x N row-major.
                let idx = row * n + nb * 16 + c;
                let got = if pb == 4 {
                    f32::from_le_bytes(out[4 * idx..4 * idx + 4].try_into().unwrap()) as f64
                } else {
                    f16_value(u16::from_le_bytes([out[2 * idx], out[2 * idx + 1]])) as f64
                };
                // f32 accumulation: k roundings; f16 output: one more rounding.
                // f16 partials are also rounded once per K-chunk.
                let tol = k as f64 * 6e-8 * mag
                    + if pb == 2 {
                        (k / kc - 1) as f64 * 4.9e-4 * mag
                    } else {
                        0.0
                    }
                    + if pb == 2 {
                        4.9e-4 * want.abs() + 6e-8
                    } else {
                        1e-30
                    };
                assert!((got - want).abs() <= tol, "TYPE {ty} M{m} K{k} N{n}: C[{nb}][{row}][{c}] = {got}, want {want} (tol {tol})");
            }
        }
    }
    eprintln!(
        "TYPE {ty} M{m} K{k} KC{kc} N{n}: {} cycles, formula {:?}",
        t.cycle(),
        kernel.meta.cycles
    );
    let prologue = if pre != 0 {
        u32::from_le_bytes(t.read(PROLOGUE_END, 4).unwrap().try_into().unwrap()) as u64
    } else {
        0
    };
    GemmRun {
        // The harness's own three issues between the two calls are not the kernel's.
        cycles: t.cycle() - prologue - if pre != 0 { 3 } else { 0 },
        prologue,
        macs: t.stats().amp_macs,
        formula: kernel.meta.cycles.expect("gemm_amp declares .cycles"),
    }
}

#[test]
fn gemm_f16_f16_partials() {
    check_gemm(1, 64, 128, 32, 0, 1);
    check_gemm(1, 13, 16, 16, 0, 2);
    check_gemm(1, 5, 64, 48, 0, 3);
    check_gemm(1, 46, 64, 80, 0, 13);
}

#[test]
fn gemm_f16_f32_partials() {
    check_gemm(0, 64, 128, 32, 0, 4);
    check_gemm(0, 7, 32, 16, 0, 5);
    check_gemm(0, 1, 16, 32, 0, 6);
}

#[test]
fn gemm_f8_scaled() {
    check_gemm(2, 64, 256, 32, -3, 7);
    check_gemm(3, 64, 256, 32, -4, 8);
    check_gemm(2, 11, 32, 16, 2, 9);
    check_gemm(3, 23, 96, 64, 0, 10);
}

#[test]
fn gemm_with_b_transposed() {
    // (TYPE, M, K, N): every type, one and several column blocks, rows
    // fewer than and not a multiple of the workers, K up to a bank.
    for (seed, &(ty, m, k, n)) in [
        (1i64, 37usize, 64usize, 16usize),
        (1, 13, 128, 48),
        (0, 7, 32, 32),
        (2, 27, 256, 16),
        (3, 5, 96, 64),
        (4, 6, 64, 32),
    ]
    .iter()
    .enumerate()
    {
        // FP8 modes take a scale; the others have none.
        let scale = if matches!(ty, 2 | 3) { -1 } else { 0 };
        let run = check_gemm_full(ty, m, k, k, n, scale, 40 + seed as u64, 0, 1);
        let ratio = run.formula as f64 / run.cycles as f64;
        assert!(
            (0.95..=1.05).contains(&ratio),
            "TYPE {ty} M{m} K{k} N{n} BT: simulated {}, formula {}",
            run.cycles,
            run.formula
        );
    }
    // K in chunks cannot be given transposed.
    let p: BTreeMap<String, i64> = [
        ("TYPE", 1),
        ("M", 8),
        ("K", 256),
        ("KC", 128),
        ("N", 16),
        ("BT", 1),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), *b))
    .collect();
    let e = assemble_kernel("gemm_amp", &p).unwrap_err().to_string();
    assert!(e.contains("BT is 0 or 1, and takes K in one chunk"), "{e}");
}

#[test]
fn gemm_k_in_chunks_accumulates() {
    check_gemm_kc(1, 20, 256, 64, 32, 0, 21);
    check_gemm_kc(0, 13, 96, 32, 16, 0, 22);
    check_gemm_kc(2, 30, 512, 256, 32, -5, 23);
    check_gemm_kc(3, 7, 96, 32, 48, 1, 24);
    check_gemm_kc(1, 64, 768, 128, 16, 0, 25);
}

#[test]
fn gemm_parameter_errors_are_diagnostics() {
    let p = |k: i64| -> BTreeMap<String, i64> {
        [("TYPE", 1), ("M", 8), ("K", k), ("N", 16)]
            .iter()
            .map(|(a, b)| (a.to_string(), *b))
            .collect()
    };
    let e = assemble_kernel("gemm_amp", &p(20)).unwrap_err().to_string();
    assert!(
        e.contains("K must be a positive multiple of the K-block"),
        "{e}"
    );
    assert!(e.contains("kernels/gemm_amp.S:"), "{e}");
    let e = assemble_kernel("gemm_amp", &p(256))
        .unwrap_err()
        .to_string();
    assert!(e.contains("4 KiB"), "{e}");
}

/// Reports (does not assert) the efficiency of the benchmark shapes; the
/// benchmark binary measures them for real.
#[test]
fn gemm_benchmark_shapes_are_correct() {
    let r = check_gemm(1, 64, 128, 128, 0, 11);
    eprintln!(
        "f16 64x128x128: {} cycles, {:.1} MACs/cycle",
        r.cycles,
        r.macs as f64 / r.cycles as f64
    );
    let r = check_gemm(2, 64, 256, 128, -2, 12);
    eprintln!(
        "f8 64x256x128: {} cycles, {:.1} MACs/cycle",
        r.cycles,
        r.macs as f64 / r.cycles as f64
    );
}

/// The `.cycles` formula the planner and the roofline estimates use agrees
/// with the simulated kernel within 5% over every data type, worker split
/// (fewer rows than workers, rows not a multiple of six), K-chunking and
/// overlapped or supervisor-loaded weight blocks.
#[test]
fn gemm_cycle_formula_tracks_the_simulator() {
    let mut off = Vec::new();
    let mut seed = 100;
    for (ty, kb) in [(0i64, 16usize), (1, 16), (2, 32), (4, 8)] {
        for m in [1usize, 4, 6, 8, 13, 37] {
            for (k, kc) in [(kb, kb), (4 * kb, 4 * kb), (8 * kb, 2 * kb)] {
                for n in [16usize, 48] {
                    seed += 1;
                    let run = check_gemm_kc(ty, m, k, kc, n, 0, seed);
                    let formula = run.formula as f64;
                    let ratio = formula / run.cycles as f64;
                    if !(0.95..=1.05).contains(&ratio) {
                        off.push(format!(
                            "TYPE {ty} M{m} K{k} KC{kc} N{n}: simulated {}, formula {formula}",
                            run.cycles
                        ));
                    }
                    // With the prologue run first: the kernel by its own
                    // formula, the prologue by what PRE takes off it.
                    for level in [1, 2] {
                        let pre = check_gemm_full(ty, m, k, kc, n, 0, seed, level, 0);
                        let main = pre.formula as f64;
                        let prologue = formula - main;
                        for (what, f, sim) in [
                            ("gemm_amp", main, pre.cycles),
                            ("gemm_amp_pre", prologue, pre.prologue),
                        ] {
                            if !(0.95..=1.05).contains(&(f / sim as f64)) {
                                off.push(format!(
                                    "TYPE {ty} M{m} K{k} KC{kc} N{n} PRE {level}: {what} simulated {sim}, formula {f}"
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(
        off.is_empty(),
        "formula off by more than 5%:\n{}",
        off.join("\n")
    );
}
