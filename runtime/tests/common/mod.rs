//! Helpers shared by the simulator tests: assemble, link, load and run.
#![allow(dead_code)]

use std::collections::BTreeMap;

use ipu_isa::asm::assemble;
use ipu_isa::link::{link, LinkLayout, TileImage};
use ipu_runtime::{ExchangePort, Fault, NoExchange, Outcome, Tile, TileConfig};

/// The tile the tests run on: ipu21's, from its target file. Its memory is
/// [0x4C000, 0xE8000), interleaved from 0x80000; the addresses below are
/// chosen inside it (checked by [`config`]).
pub fn config() -> TileConfig {
    let t = ipu_target::Target::load("ipu21").expect("the ipu21 target");
    let c = TileConfig::from_target(&t).expect("a tile configuration");
    assert!(
        c.memory_base <= CODE && STATE < c.interleaved_start && DATA >= c.interleaved_start,
        "the tests' addresses no longer fit ipu21's memory layout: {c:?}"
    );
    c
}

/// Where test programs put their code (just above the memory base).
pub const CODE: u32 = 0x4C100;
/// Where kernel tests put the kernel state (below the interleaved region).
pub const STATE: u32 = 0x7F000;
/// The first data address tests use (the start of the interleaved region).
pub const DATA: u32 = 0x80000;

pub fn image(src: &str, params: &[(&str, i64)]) -> TileImage {
    let params: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let a = assemble("test.S", src, &params).unwrap_or_else(|e| panic!("{e}"));
    link(
        &[("t", &a.object)],
        &LinkLayout::new(CODE, config().memory_end()),
    )
    .unwrap()
}

pub fn tile_with(src: &str, params: &[(&str, i64)]) -> (Tile, TileImage) {
    let img = image(src, params);
    let mut t = Tile::new(config());
    t.load(&img).unwrap();
    (t, img)
}

/// Runs `src` from its `main` symbol with `$m0 = arg`.
pub fn run_with(src: &str, arg: u32, setup: impl FnOnce(&mut Tile)) -> Result<Tile, Fault> {
    run_port(src, arg, setup, &mut NoExchange)
}

pub fn run_port(
    src: &str,
    arg: u32,
    setup: impl FnOnce(&mut Tile),
    port: &mut dyn ExchangePort,
) -> Result<Tile, Fault> {
    let (mut t, img) = tile_with(src, &[]);
    setup(&mut t);
    t.start(img.symbol("main").expect("main"), arg);
    let o = t.run_to_halt(port, 10_000_000)?;
    assert_eq!(o, Outcome::Halted);
    Ok(t)
}

pub fn rd32(t: &Tile, addr: u32) -> u32 {
    let b = t.read(addr, 4).unwrap();
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

pub fn wr_f32(t: &mut Tile, addr: u32, v: &[f32]) {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    t.write(addr, &b).unwrap();
}

pub fn rd_f32(t: &Tile, addr: u32, n: usize) -> Vec<f32> {
    t.read(addr, 4 * n)
        .unwrap()
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn wr_u16(t: &mut Tile, addr: u32, v: &[u16]) {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    t.write(addr, &b).unwrap();
}

pub fn rd_u16(t: &Tile, addr: u32, n: usize) -> Vec<u16> {
    t.read(addr, 2 * n)
        .unwrap()
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// Assembles library kernel `name` with `params`, links it with a harness
/// that calls `entry` with `$m0 = STATE`, writes `state` and `data`, runs.
pub fn run_kernel(
    name: &str,
    entry: &str,
    params: &[(&str, i64)],
    state: &[u32],
    data: &[(u32, Vec<u8>)],
) -> Tile {
    let params: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let kernel = ipu_isa::kernels::assemble_kernel(name, &params).unwrap_or_else(|e| panic!("{e}"));
    let harness = assemble(
        "harness.S",
        &format!(".globl main\nmain: setzi $m0, {STATE}\n call $m15, {entry}\n halt\n"),
        &BTreeMap::new(),
    )
    .unwrap();
    let cfg = config();
    let img = link(
        &[("main", &harness.object), (name, &kernel.object)],
        &LinkLayout::new(CODE, cfg.memory_end()),
    )
    .unwrap();
    let mut t = Tile::new(cfg);
    t.load(&img).unwrap();
    let sb: Vec<u8> = state.iter().flat_map(|w| w.to_le_bytes()).collect();
    t.write(STATE, &sb).unwrap();
    for (a, b) in data {
        t.write(*a, b).unwrap();
    }
    t.start(img.symbol("main").unwrap(), 0);
    let o = t
        .run_to_halt(&mut NoExchange, 100_000_000)
        .unwrap_or_else(|f| panic!("{name} {params:?}: {f}"));
    assert_eq!(o, Outcome::Halted);
    t
}

pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn u16_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The f32 special values, with finite ones around them.
pub fn f32_specials() -> [f32; 10] {
    [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1.5,
        -2.5,
        f32::MAX,
        -1e-40,
    ]
}

/// Runs `cast.S` from type code `from` to `to` over `n` elements: `bytes`
/// written at `input`, the result at `out`, the record's scales (the FP8
/// side's, and FP8 -> FP8's output scale).
pub fn run_cast(
    (from, to, n): (usize, usize, usize),
    (input, out): (u32, u32),
    bytes: Vec<u8>,
    (scale, out_scale): (i32, i32),
) -> Tile {
    let state = ipu_isa::kernels::cast_state(
        from as i64,
        to as i64,
        n as u64,
        input,
        out,
        scale,
        out_scale,
    );
    run_kernel(
        "cast",
        "cast",
        &[("FROM", from as i64), ("TO", to as i64), ("N", n as i64)],
        &state,
        &[(input, bytes)],
    )
}

/// Runs `copy2d.S` on the GEMM's blocked output of m x n 2-byte elements
/// (n / 16 blocks of m x 16) at `input` into row-major order at `out`, and
/// reads that back.
pub fn copy2d_gemm_to_rows(
    m: usize,
    n: usize,
    blocked: &[u16],
    (input, out): (u32, u32),
) -> Vec<u16> {
    let g = 16 * 2 / 8;
    let spec =
        ipu_isa::kernels::KernelSpec::copy2d(n / 16, m, g, (g * 8, m * g * 8), (n * 2, g * 8));
    let p: Vec<(&str, i64)> = spec.params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let t = run_kernel(
        "copy2d",
        "copy2d",
        &p,
        &[input, out],
        &[(input, u16_bytes(blocked))],
    );
    rd_u16(&t, out, m * n)
}
