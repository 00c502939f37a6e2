//! Benchmarks of the tile simulator (`cargo bench -p ipu-runtime`, or
//! `bench/isa.sh`): simulated instructions per second on one core, and each
//! GEMM kernel's achieved MACs/cycle against the AMP peak on one tile.

use std::collections::BTreeMap;
use std::time::Instant;

use ipu_isa::asm::assemble;
use ipu_isa::kernels::assemble_kernel;
use ipu_isa::link::{link, LinkLayout, TileImage};
use ipu_runtime::{NoExchange, Tile, TileConfig};

/// CPU time of this thread in seconds (from /proc; wall time as a fallback),
/// so that a loaded machine does not understate the simulator's speed.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Runs `f`, returning (wall seconds, CPU seconds).
fn timed(f: impl FnOnce()) -> (f64, f64) {
    let c0 = cpu_seconds();
    let start = Instant::now();
    f();
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (c0, cpu_seconds()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => wall,
    };
    (wall, cpu)
}

/// The tile benchmarked: ipu21's figures, from its target file. The
/// programs below keep their data in its interleaved region (from 0x80000)
/// and the GEMM state just below it.
fn config() -> TileConfig {
    let t = ipu_target::Target::load("ipu21").expect("the ipu21 target");
    TileConfig::from_target(&t).expect("tile configuration")
}

fn image(objects: &[(&str, &ipu_isa::elf::ObjectFile)]) -> TileImage {
    let c = config();
    link(
        objects,
        &LinkLayout::new(c.memory_base + 0x100, c.memory_end()),
    )
    .expect("link")
}

/// Six workers, each a hardware loop of LIW bundles (integer + f32 vector).
fn instruction_rate() {
    let src = "
        .globl main
main:   setzi $m2, w
        .rept 6
        run $m2, $m2
        .endr
        sync 0
        setzi $m3, 100000
        rpt $m3, s_end
        add $m4, $m4, 1
s_end:  halt
w:      setzi $m3, 1000000
        setzi $m5, 0x80000
        shl $m6, $m1, 6
        add $m5, $m5, $m6
        rpt $m3, w_end
        { add $m4, $m4, 3 ; f32v2add $a0:1, $a0:1, $a2:3 }
        { ld64 $a2:3, [$m5+8] ; f32v2mul $a4:5, $a0:1, $a2:3 }
        { st64 $a4:5, [$m5+16] ; f16v4add $a6:7, $a6:7, $a2:3 }
        { xor $m7, $m7, $m4 ; f32v2max $a0:1, $a0:1, $a4:5 }
w_end:  exit
";
    let a = assemble("bench.S", src, &BTreeMap::new()).expect("assemble");
    let img = image(&[("b", &a.object)]);
    let mut best = 0f64;
    let mut best_wall = 0f64;
    let mut last = (0, 0);
    for _ in 0..3 {
        let mut t = Tile::new(config());
        t.load(&img).expect("load");
        t.start(img.symbol("main").expect("main"), 0);
        let (wall, cpu) = timed(|| {
            t.run_to_halt(&mut NoExchange, u64::MAX).expect("run");
        });
        let s = t.stats();
        best = best.max(s.instructions as f64 / cpu);
        best_wall = best_wall.max(s.instructions as f64 / wall);
        last = (s.instructions, t.cycle());
    }
    println!(
        "simulator, six workers of LIW bundles: {:.1} M simulated instructions per CPU-second on one core ({:.1} M per wall second; {} instructions, {} cycles per run, best of 3)",
        best / 1e6,
        best_wall / 1e6,
        last.0,
        last.1
    );
}

fn gemm(name: &str, ty: i64, m: i64, k: i64, n: i64, peak: f64) {
    let params: BTreeMap<String, i64> = [("TYPE", ty), ("M", m), ("K", k), ("N", n)]
        .iter()
        .map(|(a, b)| (a.to_string(), *b))
        .collect();
    let kernel = assemble_kernel("gemm_amp", &params).expect("kernel");
    let harness = assemble(
        "h.S",
        ".globl main\nmain: setzi $m0, 0x7F000\n call $m15, gemm_amp\n halt\n",
        &BTreeMap::new(),
    )
    .expect("harness");
    let img = image(&[("main", &harness.object), ("gemm", &kernel.object)]);
    let mut t = Tile::new(config());
    t.load(&img).expect("load");
    let (a, b, c) = (0x80000u32, 0xA0000u32, 0xC0000u32);
    let state: Vec<u8> = [a, b, c, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
    t.write(0x7F000, &state).expect("state");
    // Inputs: small finite values (1.0 in f16 / f8 E4M3 / E5M2).
    let one: &[u8] = match ty {
        0 | 1 => &[0x00, 0x3c],
        2 => &[0x38],
        _ => &[0x3c],
    };
    let eb = one.len() as i64;
    t.write(a, &one.repeat((m * k) as usize)).expect("A");
    t.write(b, &one.repeat((k * n) as usize)).expect("B");
    t.start(img.symbol("main").expect("main"), 0);
    let (_, secs) = timed(|| {
        t.run_to_halt(&mut NoExchange, u64::MAX).expect("run");
    });
    let cycles = t.cycle() as f64;
    let macs = (m * k * n) as f64;
    let rate = macs / cycles;
    let _ = eb;
    println!(
        "{name:<44} {m}x{k}x{n}: {cycles:>7} cycles, {rate:6.1} MACs/cycle of {peak:>3} peak = {:5.1}%  (formula {} cycles; simulated at {:.0} M instr/s)",
        100.0 * rate / peak,
        kernel.meta.cycles.unwrap_or(0),
        t.stats().instructions as f64 / secs / 1e6
    );
}

/// The supervisor alone: an integer loop, one instruction per cycle.
fn supervisor_rate() {
    let src = ".globl main\nmain: setzi $m3, 0\n sethi $m3, 0x40\n rpt $m3, e\n add $m4, $m4, 1\n xor $m5, $m5, $m4\n add $m6, $m6, $m5\n shl $m7, $m6, 1\ne: halt\n";
    let a = assemble("s.S", src, &BTreeMap::new()).expect("assemble");
    let img = image(&[("s", &a.object)]);
    let mut t = Tile::new(config());
    t.load(&img).expect("load");
    t.start(img.symbol("main").expect("main"), 0);
    let (wall, cpu) = timed(|| {
        t.run_to_halt(&mut NoExchange, u64::MAX).expect("run");
    });
    let n = t.stats().instructions as f64;
    println!("simulator, supervisor integer loop: {:.1} M instructions per CPU-second ({:.1} M per wall second)", n / cpu / 1e6, n / wall / 1e6);
}

fn main() {
    // IPU_BENCH=simulator runs only the simulator-speed part (for profiling).
    let only_sim = std::env::var("IPU_BENCH").is_ok_and(|v| v == "simulator");
    supervisor_rate();
    instruction_rate();
    if only_sim {
        return;
    }
    gemm(
        "gemm f16 -> f32 partials (amp.f16f32)",
        0,
        64,
        128,
        128,
        32.0,
    );
    gemm(
        "gemm f16 -> f16 partials (amp.f16f16)",
        1,
        64,
        128,
        128,
        64.0,
    );
    gemm(
        "gemm f8 E4M3FN -> f16 (amp.f8e4f16)",
        2,
        64,
        256,
        128,
        128.0,
    );
    gemm("gemm f8 E5M2 -> f16 (amp.f8e5f16)", 3, 64, 256, 128, 128.0);
}
