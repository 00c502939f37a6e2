//! The whole-chip simulator: supersteps, exchange timing, faults,
//! determinism across thread counts, and a full 1472-tile chip.

use std::collections::BTreeMap;

use ipu_isa::asm::assemble;
use ipu_isa::link::{link, LinkLayout, TileImage};
use ipu_runtime::chip::fabric::{Fabric, PortState, RouteModel};
use ipu_runtime::chip::{Chip, ChipConfig, ChipError, ChipFault, ChipOutcome, ChipReport};
use ipu_runtime::{ExchangePort, FaultKind};
use ipu_target::Target;

const SRC: u32 = 0x90000;
const DST: u32 = 0xA0000;
const OUT: u32 = 0xB0000;

fn target(name: &str) -> Target {
    Target::load(name).unwrap()
}

fn image(t: &Target, src: &str, params: &[(&str, i64)]) -> TileImage {
    let params: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let a = assemble("chip.S", src, &params).unwrap_or_else(|e| panic!("{e}"));
    link(
        &[("t", &a.object)],
        &LinkLayout::new(t.memory.base_address as u32, t.memory_end() as u32),
    )
    .unwrap()
}

fn load(chip: &mut Chip, tile: u32, img: &TileImage) {
    chip.load(tile, img).unwrap();
    chip.start(tile, img.symbol("main").unwrap(), 0).unwrap();
}

fn words(n: u32, seed: u32) -> Vec<u8> {
    (0..n)
        .flat_map(|k| {
            (seed.wrapping_mul(0x9e37_79b9) ^ (k + 1).wrapping_mul(0x85eb_ca6b)).to_le_bytes()
        })
        .collect()
}

/// Sends N words from SRC after the sync, one every `GAP + 2` cycles
/// (`GAP` = -1: back to back). First send at release + 1.
const SENDER: &str = "
        .param N, 8
        .param GAP, -1
        .param ADDR, 0x90000
        .globl main
main:   sync 1
        setzi $m2, ADDR
        .rept N
        send [$m2+=4]
        .if GAP >= 0
        delay GAP
        .endif
        .endr
        halt
";

/// Selects FROM and receives N words into DST, the first at release + 3 + D,
/// one every `GAP + 2` cycles.
const RECEIVER: &str = "
        .param N, 8
        .param GAP, -1
        .param FROM, 0
        .param D, 0
        .globl main
main:   sync 1
        setzi $m3, FROM
        recvsel $m3
        setzi $m2, 0xA0000
        .if D > 0
        delay D - 1
        .endif
        .rept N
        recv [$m2+=4]
        .if GAP >= 0
        delay GAP
        .endif
        .endr
        halt
";

/// The receiver's `D` so that its k-th receive is at send k + latency.
/// Sends: release + 1 + k*s; receives: release + 3 + D + k*s.
fn d_for(latency: u32) -> i64 {
    latency as i64 - 2
}

fn pair(
    tname: &str,
    n: i64,
    gap: i64,
    d_shift: i64,
) -> (Chip, Result<ChipReport, ipu_runtime::chip::RunError>) {
    let t = target(tname);
    let mut chip = Chip::new(&t).unwrap();
    let lat = t.route_latency(0, 1);
    load(&mut chip, 0, &image(&t, SENDER, &[("N", n), ("GAP", gap)]));
    load(
        &mut chip,
        1,
        &image(
            &t,
            RECEIVER,
            &[
                ("N", n),
                ("GAP", gap),
                ("FROM", 0),
                ("D", d_for(lat) + d_shift),
            ],
        ),
    );
    chip.write(0, SRC, &words(n as u32, 7)).unwrap();
    let r = chip.run(1_000_000);
    (chip, r)
}

#[test]
fn config_follows_the_target() {
    for name in ["test4", "test16", "ipu21"] {
        let t = target(name);
        let c = ChipConfig::from_target(&t).unwrap();
        assert_eq!(c.tiles, t.tiles());
        assert_eq!(c.sync_cycles, t.exchange.sync_cycles as u64);
        assert_eq!(c.memory_end as u64, t.memory_end());
        let step = (t.tiles() / 97).max(1);
        for s in (0..t.tiles()).step_by(step as usize) {
            for d in (0..t.tiles()).step_by(step as usize) {
                assert_eq!(
                    c.route.latency(s, d),
                    t.route_latency(s, d),
                    "{name} {s}->{d}"
                );
            }
        }
        assert_eq!(c.route.max_latency(), t.max_route_latency());
    }
}

#[test]
fn tile_zero_sends_words_to_tile_one_back_to_back() {
    let (chip, r) = pair("test4", 8, -1, 0);
    let r = r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.outcome, ChipOutcome::Halted);
    assert_eq!(chip.read(1, DST, 32).unwrap(), &words(8, 7)[..]);
    // Both tiles sync at cycle 1 (`sync 1` issues in cycle 0); release 1 + 90.
    assert_eq!(r.supersteps[0].end_cycle, 1);
    assert_eq!(r.supersteps[0].release_cycle, Some(91));
    assert_eq!(r.supersteps.len(), 2);
    assert_eq!(r.tiles[0].words_sent, 8);
    assert_eq!(r.tiles[1].words_received, 8);
    // The sends were at 92..100: the committed words carry their cycles.
    let sent: Vec<u64> = chip.fabric().sent_by(0).iter().map(|w| w.0).collect();
    assert_eq!(sent, (92..100).collect::<Vec<_>>());
    // Receiver: 91 setzi, 92 recvsel, 93 setzi, 94 delay 3, recv at 98..105, halt 106.
    assert_eq!(r.tiles[1].cycles, 107);
    assert_eq!(r.tiles[1].active_cycles, 107 - 90);
    assert_eq!(r.cycles, 107);
}

#[test]
fn scheduled_sends_with_gaps_and_far_columns() {
    // test16: tile 0 to tile 13 is three columns away: latency 7.
    for (gap, to) in [(0i64, 1u32), (3, 1), (5, 13)] {
        let t = target("test16");
        let mut chip = Chip::new(&t).unwrap();
        let lat = t.route_latency(0, to);
        load(&mut chip, 0, &image(&t, SENDER, &[("N", 5), ("GAP", gap)]));
        load(
            &mut chip,
            to,
            &image(&t, RECEIVER, &[("N", 5), ("GAP", gap), ("D", d_for(lat))]),
        );
        chip.write(0, SRC, &words(5, 3)).unwrap();
        let r = chip.run(1_000_000).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.outcome, ChipOutcome::Halted);
        assert_eq!(
            chip.read(to, DST, 20).unwrap(),
            &words(5, 3)[..],
            "gap {gap} to {to}"
        );
        assert_eq!(r.tiles[to as usize].words_received, 5);
    }
}

#[test]
fn relay_forwards_words_within_one_phase() {
    // Tile 1 receives each word from tile 0 and sends it on in the next
    // cycle; tile 2 (another column) receives it from tile 1. Sends depend
    // on receives of the same phase, so no sends-first pass could run this.
    let t = target("test4");
    let mut chip = Chip::new(&t).unwrap();
    let relay = "
        .param N, 6
        .globl main
main:   sync 1
        setzi $m3, 0
        recvsel $m3
        setzi $m2, 0xA0000
        delay 3
        .rept N
        recv [$m2]
        send [$m2+=4]
        .endr
        halt
";
    assert_eq!(t.route_latency(1, 2), 7);
    load(&mut chip, 0, &image(&t, SENDER, &[("N", 6), ("GAP", 0)]));
    load(&mut chip, 1, &image(&t, relay, &[("N", 6)]));
    // Relay sends at 99 + 2k; tile 2's receives at 91 + 3 + D + 2k = 106 + 2k.
    load(
        &mut chip,
        2,
        &image(
            &t,
            RECEIVER,
            &[("N", 6), ("GAP", 0), ("FROM", 1), ("D", 12)],
        ),
    );
    chip.write(0, SRC, &words(6, 5)).unwrap();
    let r = chip.run(1_000_000).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.outcome, ChipOutcome::Halted);
    assert_eq!(chip.read(1, DST, 24).unwrap(), &words(6, 5)[..]);
    assert_eq!(chip.read(2, DST, 24).unwrap(), &words(6, 5)[..]);
    let relay_sends: Vec<u64> = chip.fabric().sent_by(1).iter().map(|w| w.0).collect();
    assert_eq!(relay_sends, vec![99, 101, 103, 105, 107, 109]);
    assert!(r.rounds > 2, "the relay needs several rounds: {}", r.rounds);
}

#[test]
fn multicast_to_every_other_tile() {
    let t = target("test16");
    let mut chip = Chip::new(&t).unwrap();
    load(&mut chip, 0, &image(&t, SENDER, &[("N", 12)]));
    for r in 1..16 {
        let lat = t.route_latency(0, r);
        load(
            &mut chip,
            r,
            &image(&t, RECEIVER, &[("N", 12), ("D", d_for(lat))]),
        );
    }
    chip.write(0, SRC, &words(12, 99)).unwrap();
    let rep = chip.run(1_000_000).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rep.outcome, ChipOutcome::Halted);
    assert!(
        t.route_latency(0, 15) > t.route_latency(0, 1),
        "latencies differ"
    );
    for r in 1..16 {
        assert_eq!(
            chip.read(r, DST, 48).unwrap(),
            &words(12, 99)[..],
            "tile {r}"
        );
        assert_eq!(rep.tiles[r as usize].words_received, 12);
    }
    assert_eq!(rep.total_words_sent(), 12, "one send for all receivers");
}

/// Superstep 0: six workers write (ctx + 1) * (tile + 1) to SRC. Sync.
/// Superstep 1: ring exchange, tile t sends its six words to t + 1 while
/// receiving its predecessor's. Sync. Superstep 2: the supervisor doubles
/// the received words into OUT.
const RING: &str = "
        .param PRED, 0
        .param WAIT, 0
        .globl main
main:   setzi $m2, work
        .rept 6
        run $m2, $m2
        .endr
        sync 1
        setzi $m5, 0x90000
        setzi $m6, 0xA0000
        setzi $m3, PRED
        recvsel $m3
        .rept 6
        send [$m5+=4]
        .endr
        .rept WAIT
        nop
        .endr
        .rept 6
        recv [$m6+=4]
        .endr
        sync 1
        setzi $m6, 0xA0000
        setzi $m7, 0xB0000
        setzi $m8, 6
        rpt $m8, dbl
        ld32 $m9, [$m6+=4]
        add $m9, $m9, $m9
        st32 $m9, [$m7+=4]
dbl:    halt
work:   gettile $m2
        add $m2, $m2, 1
        add $m3, $m1, 1
        mul $m4, $m2, $m3
        shl $m5, $m1, 2
        setzi $m6, 0x90000
        add $m6, $m6, $m5
        st32 $m4, [$m6]
        exit
";

fn ring_chip(t: &Target) -> Chip {
    let n = t.tiles();
    let mut chip = Chip::new(t).unwrap();
    let images: Vec<TileImage> = (0..n)
        .map(|tile| {
            let pred = (tile + n - 1) % n;
            // Sends at release + 4 + k, receives at release + 10 + WAIT + k.
            let wait = t.route_latency(pred, tile) as i64 - 6;
            image(t, RING, &[("PRED", pred as i64), ("WAIT", wait)])
        })
        .collect();
    let refs: Vec<Option<&TileImage>> = images.iter().map(Some).collect();
    chip.load_and_start(&refs, "main", 0).unwrap();
    assert!(matches!(
        Chip::new(t).unwrap().load_and_start(&refs, "nope", 0),
        Err(ChipError::NoEntry { tile: 0, .. })
    ));
    chip
}

fn check_ring(chip: &Chip, t: &Target, r: &ChipReport) {
    let n = t.tiles();
    assert_eq!(r.outcome, ChipOutcome::Halted);
    for tile in 0..n {
        let pred = (tile + n - 1) % n;
        for k in 0..6 {
            let want = (k + 1) * (pred + 1);
            assert_eq!(
                chip.read_u32(tile, DST + 4 * k).unwrap(),
                want,
                "tile {tile}"
            );
            assert_eq!(
                chip.read_u32(tile, OUT + 4 * k).unwrap(),
                2 * want,
                "tile {tile}"
            );
        }
    }
    assert_eq!(r.supersteps.len(), 3);
    for s in &r.supersteps[..2] {
        assert_eq!(
            s.release_cycle,
            Some(s.end_cycle + t.exchange.sync_cycles as u64)
        );
        assert_eq!(s.tiles_synced, n);
    }
    assert!(r.supersteps[1].end_cycle > r.supersteps[0].release_cycle.unwrap());
    assert!(r.supersteps[2].end_cycle > r.supersteps[1].release_cycle.unwrap());
    assert_eq!(r.supersteps[2].end_cycle, r.cycles);
    for tr in &r.tiles {
        assert_eq!(tr.words_sent, 6);
        assert_eq!(tr.words_received, 6);
        assert!(tr.active_cycles < tr.cycles);
        assert!(tr.instructions > 30);
    }
}

#[test]
fn supersteps_compute_sync_exchange_compute() {
    for name in ["test4", "test16"] {
        let t = target(name);
        let mut chip = ring_chip(&t);
        let r = chip.run(10_000_000).unwrap_or_else(|e| panic!("{e}"));
        check_ring(&chip, &t, &r);
    }
}

#[test]
fn deterministic_for_any_thread_count() {
    let t = target("test16");
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut chip = ring_chip(&t);
            let mut r = chip.run(10_000_000).unwrap();
            check_ring(&chip, &t, &r);
            r.wall_seconds = 0.0;
            let mem: Vec<Vec<u8>> = (0..16)
                .map(|k| chip.read(k, SRC, 0x20100).unwrap().to_vec())
                .collect();
            // A faulting program too: the same faults, the same order.
            let (_, e) = pair("test16", 8, -1, -1);
            let mut e = e.unwrap_err();
            e.report.wall_seconds = 0.0;
            (r, mem, e)
        })
    };
    let (a, b) = (run(1), run(2));
    assert_eq!(a.0, b.0);
    assert!(a.1 == b.1);
    assert_eq!(a.2, b.2);
    let c = run(3);
    assert_eq!(a.0, c.0);
}

#[test]
fn receive_one_cycle_early_finds_no_word() {
    let (_, r) = pair("test4", 8, -1, -1);
    let e = r.unwrap_err();
    let f = e.first();
    // 91 setzi, 92 recvsel, 93 setzi, 94 delay 2, first recv at 97: it
    // needs a send at 91, but the first send is at 92.
    assert_eq!((f.tile(), f.cycle()), (1, 97));
    let ChipFault::Tile(f) = f else { panic!("{f}") };
    assert_eq!(f.kind, FaultKind::NoData { sender: 0 });
    assert!(f.instruction.starts_with("recv"), "{}", f.instruction);
    assert_eq!(e.faults.len(), 1);
    assert_eq!(e.report.outcome, ChipOutcome::Faulted);
    assert!(e.to_string().contains("tile 1"), "{e}");
}

#[test]
fn receive_one_cycle_late_takes_the_next_word_then_faults() {
    // Like hardware: a late receiver sees the stream shifted by one word,
    // and its last receive finds nothing.
    let (chip, r) = pair("test4", 8, -1, 1);
    let e = r.unwrap_err();
    let f = e.first();
    // Receives at 99..106 take the sends of 93..100; the last send is at 99.
    assert_eq!((f.tile(), f.cycle()), (1, 106));
    assert!(matches!(f, ChipFault::Tile(t) if t.kind == FaultKind::NoData { sender: 0 }));
    assert_eq!(chip.read(1, DST, 28).unwrap(), &words(8, 7)[4..]);
}

#[test]
fn receive_from_a_tile_that_does_not_exist() {
    let t = target("test4");
    let mut chip = Chip::new(&t).unwrap();
    load(&mut chip, 0, &image(&t, SENDER, &[("N", 2)]));
    load(
        &mut chip,
        1,
        &image(&t, RECEIVER, &[("N", 2), ("FROM", 9), ("D", 4)]),
    );
    let e = chip.run(1_000_000).unwrap_err();
    assert!(
        matches!(e.first(), ChipFault::Tile(f) if f.tile == 1 && f.cycle == 98 && f.kind == FaultKind::NoData { sender: 9 }),
        "{e}"
    );
}

#[test]
fn out_of_range_send_address_is_a_tile_fault() {
    let t = target("test4");
    let mut chip = Chip::new(&t).unwrap();
    load(
        &mut chip,
        0,
        &image(&t, SENDER, &[("N", 2), ("ADDR", 0xF0000)]),
    );
    load(&mut chip, 1, &image(&t, RECEIVER, &[("N", 2), ("D", 4)]));
    let e = chip.run(1_000_000).unwrap_err();
    assert_eq!(e.faults.len(), 1, "{:?}", e.faults);
    let ChipFault::Tile(f) = e.first() else {
        panic!("{e}")
    };
    assert_eq!((f.tile, f.cycle), (0, 92));
    assert!(
        matches!(f.kind, FaultKind::OutOfBounds { addr: 0xF0000, .. }),
        "{f}"
    );
    assert!(f.instruction.starts_with("send"));
}

/// Tile memory spans the target's `[base_address, base_address + bytes)`:
/// a program's store to address 0 (below test16's base 0x4C000) faults,
/// naming the tile, cycle, pc and instruction, and so does a load past the end.
#[test]
fn accesses_outside_tile_memory_are_tile_faults() {
    let t = target("test16");
    for (src, addr) in [
        (
            ".globl main\nmain: setzi $m1, 0\n st32 $m1, [$m1]\n halt\n",
            0u32,
        ),
        (
            ".globl main\nmain: setzi $m1, 0xe8000\n ld32 $m2, [$m1+0]\n halt\n",
            0xE8000,
        ),
    ] {
        let mut chip = Chip::new(&t).unwrap();
        let img = image(&t, src, &[]);
        load(&mut chip, 5, &img);
        let e = chip.run(1_000_000).unwrap_err();
        let ChipFault::Tile(f) = e.first() else {
            panic!("{e}")
        };
        let pc = img.symbol("main").unwrap() + 4;
        assert_eq!((f.tile, f.cycle, f.pc), (5, 1, pc), "{f}");
        assert_eq!(
            f.kind,
            FaultKind::OutOfBounds {
                addr,
                len: 4,
                base: 0x4C000,
                end: 0xE8000
            }
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!(
                "tile 5, supervisor, pc {pc:#x}, cycle 1: address {addr:#x}"
            )),
            "{msg}"
        );
        assert!(msg.contains("(in `"), "{msg}");
    }
}

#[test]
fn the_earliest_fault_is_reported_first() {
    // After the sync (release 91), tile 2 (no exchange) runs far ahead and
    // faults at cycle 243 in one round; tile 1's receive faults earlier
    // (cycle 97) in a later round. Both are reported, the earlier first.
    let t = target("test4");
    let mut chip = Chip::new(&t).unwrap();
    load(&mut chip, 0, &image(&t, SENDER, &[("N", 8)]));
    load(&mut chip, 1, &image(&t, RECEIVER, &[("N", 8), ("D", 3)]));
    let late = "
        .globl main
main:   sync 1
        setzi $m1, 0
        delay 150
        divu $m2, $m1, $m1
        halt
";
    load(&mut chip, 2, &image(&t, late, &[]));
    let e = chip.run(1_000_000).unwrap_err();
    let at: Vec<(u32, u64)> = e.faults.iter().map(|f| (f.tile(), f.cycle())).collect();
    assert_eq!(at, vec![(1, 97), (2, 243)]);
    assert!(matches!(&e.faults[1], ChipFault::Tile(f) if f.kind == FaultKind::DivideByZero));
}

#[test]
fn fabric_refuses_two_sends_in_one_cycle() {
    // The ISA cannot issue two sends in one cycle (one supervisor issue
    // per cycle), so the fabric's check is exercised through its port; on
    // a tile, the refused `send` faults (see exchange_engine.rs).
    let route = RouteModel::new(4, 2, 6, 8);
    let fabric = Fabric::new(route);
    let mut st = PortState::default();
    let mut p = fabric.port(2, &mut st);
    assert_eq!(p.send(2, 40, 0x11), Ok(()));
    assert_eq!(p.send(2, 40, 0x22), Err(0x11));
    assert_eq!(p.send(2, 41, 0x33), Ok(()));
    assert_eq!(st.outbox, vec![(40, 0x11), (41, 0x33)]);
    assert_eq!(st.words_sent, 2);
}

#[test]
fn fabric_receives_after_the_route_latency_and_multicasts() {
    let route = RouteModel::new(4, 2, 6, 8);
    let mut fabric = Fabric::new(route);
    for s in [0u32, 1] {
        let mut st = PortState::default();
        fabric.port(s, &mut st).send(s, 10, 100 + s).unwrap();
        fabric.commit(s, &mut st);
    }
    let mut st = PortState::default();
    let mut p = fabric.port(3, &mut st);
    // Tiles 0, 1 are one column from tile 3: latency 7.
    assert_eq!(p.receive(3, 16, 0), None, "one cycle early");
    assert_eq!(p.receive(3, 17, 0), Some(100));
    assert!(st.faults.is_empty());
    // Multicast: another receiver takes the same word.
    let mut st2 = PortState::default();
    assert_eq!(fabric.port(2, &mut st2).receive(2, 17, 1), Some(101));
    assert!(st2.faults.is_empty());
    // A receive of a word its sender has not been simulated to yet stalls
    // (no capture, no fault) instead of answering.
    fabric.set_known(1, 10);
    let mut st3 = PortState::default();
    assert_eq!(fabric.port(2, &mut st3).receive(2, 17, 1), None);
    assert_eq!(st3.stalled, Some((17, 1)));
    assert!(st3.faults.is_empty());
    fabric.set_known(1, 11);
    let mut st4 = PortState::default();
    assert_eq!(fabric.port(2, &mut st4).receive(2, 17, 1), Some(101));
    assert_eq!(st4.stalled, None);
}

#[test]
fn host_io_and_errors() {
    let t = target("test4");
    let mut chip = Chip::new(&t).unwrap();
    chip.write(3, 0xE7FFC, &[1, 2, 3, 4]).unwrap();
    assert_eq!(chip.read(3, 0xE7FFC, 4).unwrap(), &[1, 2, 3, 4]);
    assert!(matches!(
        chip.write(3, 0xE7FFE, &[0; 4]),
        Err(ChipError::Outside { .. })
    ));
    assert!(matches!(
        chip.read(0, 0x100, 4),
        Err(ChipError::Outside { .. })
    ));
    assert!(matches!(
        chip.write(4, SRC, &[0]),
        Err(ChipError::NoSuchTile { tile: 4, tiles: 4 })
    ));
    // An image linked below tile memory is refused.
    let a = assemble("x.S", ".globl main\nmain: halt\n", &BTreeMap::new()).unwrap();
    let low = link(&[("t", &a.object)], &LinkLayout::new(0x100, 0xE8000)).unwrap();
    assert!(matches!(chip.load(0, &low), Err(ChipError::Outside { .. })));
}

#[test]
fn idle_and_halted_tiles_do_not_hold_syncs() {
    let t = target("test16");
    let mut chip = Chip::new(&t).unwrap();
    let two_syncs = "
        .globl main
main:   gettile $m1
        rpt $m1, a
        nop
a:      sync 1
        sync 1
        halt
";
    let quit = ".globl main\nmain: setzi $m1, 500\n rpt $m1, e\n nop\ne: halt\n";
    for k in 0..4 {
        load(&mut chip, k, &image(&t, two_syncs, &[]));
    }
    load(&mut chip, 5, &image(&t, quit, &[]));
    let r = chip.run(1_000_000).unwrap();
    assert_eq!(r.outcome, ChipOutcome::Halted);
    // Tile 3 reaches the first sync last: `sync 1` issues in cycle 5.
    assert_eq!(r.supersteps[0].end_cycle, 6);
    assert_eq!(r.supersteps[0].release_cycle, Some(96));
    assert_eq!(r.supersteps[0].tiles_synced, 4);
    assert_eq!(r.supersteps[1].end_cycle, 97);
    assert_eq!(r.tiles[0].cycles, 188);
    assert_eq!(r.tiles[5].cycles, 503);
    assert!(r.tiles[5].halted);
    assert_eq!(r.tiles[9].cycles, 0);
    assert_eq!(r.tiles[0].active_cycles, 188 - (96 - 3) - 90);
}

/// With every tile required at every sync (compiled programs), a tile that
/// halts while the others wait, or still runs when the budget ends while
/// they wait, is a fault naming it, its pc and instruction, and the
/// waiting tiles; nothing hangs and nobody goes on without it.
#[test]
fn a_sync_never_reached_is_a_fault_when_every_tile_must_sync() {
    let t = target("test16");
    let two_syncs = ".globl main\nmain: sync 1\n sync 1\n halt\n";
    let early = ".globl main\nmain: sync 1\n halt\n";
    let spin =
        ".globl main\nmain: sync 1\n setzi $m1, 1\nl: add $m2, $m2, 1\n brnz $m1, l\n halt\n";
    for (culprit, halted) in [(early, true), (spin, false)] {
        let mut chip = Chip::new(&t).unwrap();
        chip.require_all_tiles_at_syncs();
        for k in 0..4 {
            let src = if k == 2 { culprit } else { two_syncs };
            load(&mut chip, k, &image(&t, src, &[]));
        }
        let e = chip.run(100_000).unwrap_err();
        assert_eq!(e.faults.len(), 1, "{:?}", e.faults);
        let ChipFault::SyncNeverReached {
            tile,
            sync,
            halted: h,
            waiting,
            pc,
            instruction,
            ..
        } = e.first()
        else {
            panic!("{e}")
        };
        assert_eq!((*tile, *sync, *h), (2, 1, halted));
        assert_eq!(waiting, &vec![0, 1, 3]);
        let want = if halted { "halt" } else { "add $m2, $m2, 1" };
        assert!(
            instruction == want || (!halted && instruction.starts_with("brnz")),
            "{instruction}"
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("tile 2, supervisor, pc {pc:#x}, cycle "))
                && msg.contains("never reaches the chip-wide sync that ends superstep 1")
                && msg.contains("tiles 0-1, 3 wait"),
            "{msg}"
        );
    }
    // Without the requirement, halted tiles no longer take part.
    let mut chip = Chip::new(&t).unwrap();
    for k in 0..4 {
        let src = if k == 2 { early } else { two_syncs };
        load(&mut chip, k, &image(&t, src, &[]));
    }
    assert_eq!(chip.run(100_000).unwrap().outcome, ChipOutcome::Halted);
}

#[test]
fn cycle_limit_then_continue() {
    let (mut chip, _) = {
        let t = target("test4");
        let mut chip = Chip::new(&t).unwrap();
        load(&mut chip, 0, &image(&t, SENDER, &[("N", 8)]));
        load(&mut chip, 1, &image(&t, RECEIVER, &[("N", 8), ("D", 4)]));
        chip.write(0, SRC, &words(8, 7)).unwrap();
        (chip, ())
    };
    let r = chip.run(95).unwrap();
    assert_eq!(r.outcome, ChipOutcome::CycleLimit);
    assert!(r.cycles <= 95);
    let r = chip.run(u64::MAX).unwrap();
    assert_eq!(r.outcome, ChipOutcome::Halted);
    assert_eq!(chip.read(1, DST, 32).unwrap(), &words(8, 7)[..]);
}

#[test]
fn full_ipu21_chip_loops_and_syncs() {
    let t = target("ipu21");
    let mut chip = Chip::new(&t).unwrap();
    let src = "
        .globl main
main:   gettile $m1
        and $m2, $m1, 15
        add $m2, $m2, 20
        setzi $m3, 0
        rpt $m2, a
        add $m3, $m3, $m1
a:      sync 1
        setzi $m4, 0x90000
        st32 $m3, [$m4]
        halt
";
    let img = image(&t, src, &[]);
    chip.load_all(&img, img.symbol("main").unwrap(), 0).unwrap();
    let r = chip.run(1_000_000).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.outcome, ChipOutcome::Halted);
    assert_eq!(r.tiles.len(), 1472);
    assert_eq!(r.supersteps[0].tiles_synced, 1472);
    // The slowest tiles loop 35 times: `sync 1` issues in cycle 5 + 35.
    assert_eq!(r.supersteps[0].end_cycle, 41);
    for id in [0u32, 1, 15, 16, 777, 1471] {
        let n = (id & 15) + 20;
        assert_eq!(chip.read_u32(id, 0x90000).unwrap(), n * id);
        assert_eq!(r.tiles[id as usize].cycles, 41 + 90 + 3);
    }
}

#[test]
fn ipu21_far_corner_latency() {
    // Tile 0 (column 0) to tile 1471 (column 91): 6 + ceil(91 / 8) = 18.
    let t = target("ipu21");
    let lat = t.route_latency(0, 1471);
    assert_eq!(lat, 18);
    let mut chip = Chip::new(&t).unwrap();
    load(&mut chip, 0, &image(&t, SENDER, &[("N", 4)]));
    for (tile, shift) in [(1471u32, 0i64), (1470, -1)] {
        let d = d_for(t.route_latency(0, tile)) + shift;
        load(&mut chip, tile, &image(&t, RECEIVER, &[("N", 4), ("D", d)]));
    }
    chip.write(0, SRC, &words(4, 1)).unwrap();
    let e = chip.run(1_000_000).unwrap_err();
    // Tile 1470 is one cycle early: its first receive (91 + 3 + 15 = 109)
    // needs a send at 91.
    assert_eq!(e.faults.len(), 1, "{e}");
    assert_eq!((e.first().tile(), e.first().cycle()), (1470, 109));
    // The same without the early receiver completes.
    let mut chip = Chip::new(&t).unwrap();
    load(&mut chip, 0, &image(&t, SENDER, &[("N", 4)]));
    load(
        &mut chip,
        1471,
        &image(&t, RECEIVER, &[("N", 4), ("D", d_for(lat))]),
    );
    chip.write(0, SRC, &words(4, 1)).unwrap();
    chip.run(1_000_000).unwrap();
    assert_eq!(chip.read(1471, DST, 16).unwrap(), &words(4, 1)[..]);
}
