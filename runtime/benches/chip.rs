//! Whole-chip simulator benchmark (`cargo bench -p ipu-runtime --bench chip`,
//! or `bench/chip.sh [TARGET] [SUPERSTEPS] [ITERS] [WORDS] [ENGINE_BYTES]`): simulated
//! tile-cycles per second on a full chip.
//!
//! Two programs on every tile of the target (ipu21: 1472 tiles):
//! * `bsp`: SUPERSTEPS times { six workers run ITERS LIW bundles; sync;
//!   exchange: tile t sends WORDS words to t + 1 and receives WORDS from
//!   t - 1 at the cycles route latency dictates (even tiles send first,
//!   odd tiles receive first); sync }.
//! * `compute`: the same compute and syncs with no exchange code, which
//!   lets every tile run to its sync without simulation rounds.
//!
//! * `engine`: one exchange phase on exchange engines (`exch`): every tile
//!   sends ENGINE_BYTES (default 26,000: 38 MB over the 1472 tiles of
//!   ipu21, like a phase of the compiler's MLP) to t + 1 and captures its
//!   predecessor's.
//!
//! Reported per program: chip cycles, tile-cycles, instructions, rounds,
//! wall seconds, tile-cycles/s and instructions/s (wall and per CPU
//! second of the process), and the rayon thread count.

use std::collections::BTreeMap;
use std::time::Instant;

use ipu_isa::asm::assemble;
use ipu_isa::link::{link, LinkLayout, TileImage};
use ipu_runtime::chip::{Chip, ChipOutcome};
use ipu_target::Target;

const PROGRAM: &str = "
        .param STEPS, 4
        .param ITERS, 2000
        .param WORDS, 64
        .param PRED, 0
        .param WAIT, 0
        .param ODD, 0
        .param EXCHANGE, 1
        .globl main
main:   setzi $m10, STEPS
step:   setzi $m2, work
        .rept 6
        run $m2, $m2
        .endr
        sync 1
        .if EXCHANGE
        setzi $m5, 0x90000
        setzi $m6, 0xA0000
        setzi $m3, PRED
        recvsel $m3
        setzi $m4, WORDS
        .if ODD
        delay WAIT
        rpt $m4, r1_end
        recv [$m6+=4]
r1_end: rpt $m4, s1_end
        send [$m5+=4]
s1_end: nop
        .else
        rpt $m4, s0_end
        send [$m5+=4]
s0_end: delay WAIT
        rpt $m4, r0_end
        recv [$m6+=4]
r0_end: nop
        .endif
        sync 1
        .endif
        add $m10, $m10, -1
        brnz $m10, step
        halt
work:   setzi $m3, ITERS
        rpt $m3, w_end
        { add $m4, $m4, 3 ; f32v2add $a0:1, $a0:1, $a2:3 }
w_end:  exit
";

fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = s.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn image(t: &Target, params: &[(&str, i64)]) -> TileImage {
    let p: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let a = assemble("bench.S", PROGRAM, &p).unwrap_or_else(|e| panic!("{e}"));
    link(
        &[("b", &a.object)],
        &LinkLayout::new(t.memory.base_address as u32, t.memory_end() as u32),
    )
    .expect("link")
}

fn bench(t: &Target, name: &str, steps: i64, iters: i64, words: i64, exchange: bool) {
    let n = t.tiles();
    let t_build = Instant::now();
    let mut chip = Chip::new(t).expect("chip");
    let mut cache: BTreeMap<(i64, i64, bool), TileImage> = BTreeMap::new();
    for tile in 0..n {
        let pred = (tile + n - 1) % n;
        // Even tiles send from release + 6, then receive; odd tiles receive
        // their even predecessor's words at send + latency, then send.
        let odd = tile % 2 == 1;
        let lat = t.route_latency(pred, tile) as i64;
        let wait = if odd {
            lat - 1
        } else {
            let pp = (pred + n - 1) % n;
            t.route_latency(pp, pred) as i64 + lat - 1
        };
        let img = cache.entry((pred as i64, wait, odd)).or_insert_with(|| {
            image(
                t,
                &[
                    ("STEPS", steps),
                    ("ITERS", iters),
                    ("WORDS", words),
                    ("PRED", pred as i64),
                    ("WAIT", wait),
                    ("ODD", odd as i64),
                    ("EXCHANGE", exchange as i64),
                ],
            )
        });
        chip.load(tile, img).expect("load");
        chip.start(tile, img.symbol("main").unwrap(), 0).unwrap();
        let data: Vec<u8> = (0..words as u32 * 4).map(|b| (b ^ tile) as u8).collect();
        chip.write(tile, 0x90000, &data).unwrap();
    }
    let build = t_build.elapsed().as_secs_f64();
    let c0 = cpu_seconds();
    let r = match chip.run(u64::MAX) {
        Ok(r) => r,
        Err(e) => panic!("{name}: {e}"),
    };
    let cpu = match (c0, cpu_seconds()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => r.wall_seconds,
    };
    assert_eq!(r.outcome, ChipOutcome::Halted);
    if exchange {
        for tile in [0, 1, n / 2, n - 1] {
            let pred = (tile + n - 1) % n;
            let want: Vec<u8> = (0..words as u32 * 4).map(|b| (b ^ pred) as u8).collect();
            assert_eq!(chip.read(tile, 0xA0000, want.len()).unwrap(), &want[..]);
        }
    }
    let tc = r.total_tile_cycles() as f64;
    let ins = r.total_instructions() as f64;
    println!(
        "{name:8} {} tiles, {} supersteps: {} chip cycles, {:.3e} tile-cycles, {:.3e} instructions, {} rounds; build {:.2} s, run {:.2} s wall / {:.2} s CPU; {:.1} M tile-cycles/s wall ({:.1} M per CPU-s), {:.1} M instr/s wall",
        n,
        r.supersteps.len(),
        r.cycles,
        tc,
        ins,
        r.rounds,
        build,
        r.wall_seconds,
        cpu,
        tc / r.wall_seconds / 1e6,
        tc / cpu / 1e6,
        ins / r.wall_seconds / 1e6,
    );
}

fn bench_engine(t: &Target, len: u32) {
    use ipu_isa::exchange_row::{encode_row_bytes, RowEntry};
    let n = t.tiles();
    let src = ".globl main\nmain: setzi $m1, 0xC0000\n exch $m1\n sync 1\n halt\n";
    let a = assemble("engine.S", src, &BTreeMap::new()).expect("assemble");
    let img = link(
        &[("e", &a.object)],
        &LinkLayout::new(t.memory.base_address as u32, t.memory_end() as u32),
    )
    .expect("link");
    let t_build = Instant::now();
    let mut chip = Chip::new(t).expect("chip");
    chip.load_all(&img, img.symbol("main").unwrap(), 0)
        .expect("load");
    for tile in 0..n {
        let pred = (tile + n - 1) % n;
        let row = [
            RowEntry::Select {
                cycle: 0,
                sender: Some(pred),
            },
            RowEntry::Send {
                cycle: 0,
                addr: 0x90000,
                len,
            },
            RowEntry::Capture {
                cycle: t.route_latency(pred, tile),
                addr: 0xA0000,
                len,
                partner: false,
            },
        ];
        chip.write(tile, 0xC0000, &encode_row_bytes(&row)).unwrap();
        let data: Vec<u8> = (0..len).map(|b| (b ^ tile) as u8).collect();
        chip.write(tile, 0x90000, &data).unwrap();
    }
    let build = t_build.elapsed().as_secs_f64();
    let r = chip.run(u64::MAX).unwrap_or_else(|e| panic!("engine: {e}"));
    assert_eq!(r.outcome, ChipOutcome::Halted);
    for tile in [0, 1, n / 2, n - 1] {
        let pred = (tile + n - 1) % n;
        let want: Vec<u8> = (0..len).map(|b| (b ^ pred) as u8).collect();
        assert_eq!(chip.read(tile, 0xA0000, want.len()).unwrap(), &want[..]);
    }
    let moved = r.total_words_sent() as f64 * 4.0;
    println!(
        "engine   {n} tiles, {:.1} MB moved in one phase: {} chip cycles, {} rounds; build {build:.2} s, run {:.3} s wall ({:.0} MB/s)",
        moved / 1e6,
        r.cycles,
        r.rounds,
        r.wall_seconds,
        moved / r.wall_seconds / 1e6,
    );
}

fn main() {
    // `cargo bench` passes `--bench`; positional arguments are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let target = args.first().map_or("ipu21", |s| s.as_str());
    let num = |i: usize, d: i64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (steps, iters, words) = (num(1, 4), num(2, 2000), num(3, 64));
    let t = Target::load(target).expect("target");
    println!(
        "chip simulator, target {target}, rayon threads {}, per superstep: 6 workers x {iters} bundles, {words} words exchanged per tile",
        rayon::current_num_threads()
    );
    bench(&t, "bsp", steps, iters, words, true);
    bench(&t, "compute", steps, iters, words, false);
    bench_engine(&t, num(4, 26_000) as u32);
}
