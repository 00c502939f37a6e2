//! The exchange engine (`exch` and exchange-table rows) on the chip
//! simulator: exact data and cycles, multicast, partner ports, sender
//! switches, partial words, faults, the per-superstep figures, and the same
//! results for any thread count.

use std::collections::BTreeMap;

use ipu_isa::asm::assemble;
use ipu_isa::exchange_row::{encode_row_bytes, RowEntry, RowError};
use ipu_isa::link::{link, LinkLayout, TileImage};
use ipu_runtime::chip::{Chip, ChipConfig, ChipFault, ChipOutcome, ChipReport, RunError};
use ipu_runtime::FaultKind;
use ipu_target::Target;

const SRC: u32 = 0x90000;
const DST: u32 = 0xA0000;
const ROW: u32 = 0xC0000;
/// Code starts at the memory base of the test targets (0x4C000): `setzi`
/// there, the `exch` at 0x4C004.
const EXCH_PC: u32 = 0x4C004;

/// `exch` issues in cycle 1: T0 = 1 + 1 + 100 = 102 on every tile. `sync 1`
/// issues in cycle 2, so a tile arrives at max(3, E).
const PROG: &str = "
        .param ROWA, 0xC0000
        .globl main
main:   setzi $m1, ROWA
        exch $m1
        sync 1
        halt
";
const T0: u64 = 102;

fn target(name: &str) -> Target {
    Target::load(name).unwrap()
}

fn image(t: &Target, src: &str, params: &[(&str, i64)]) -> TileImage {
    let params: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let a = assemble("engine.S", src, &params).unwrap_or_else(|e| panic!("{e}"));
    link(
        &[("t", &a.object)],
        &LinkLayout::new(t.memory.base_address as u32, t.memory_end() as u32),
    )
    .unwrap()
}

fn bytes(n: u32, seed: u32) -> Vec<u8> {
    (0..n)
        .map(|k| (seed.wrapping_mul(0x9e37_79b9) ^ (k + 1).wrapping_mul(0x85eb_ca6b)) as u8)
        .map(|b| b.wrapping_add(1))
        .collect()
}

fn sel(cycle: u32, sender: u32) -> RowEntry {
    RowEntry::Select {
        cycle,
        sender: Some(sender),
    }
}

fn send(cycle: u32, addr: u32, len: u32) -> RowEntry {
    RowEntry::Send { cycle, addr, len }
}

fn cap(cycle: u32, addr: u32, len: u32) -> RowEntry {
    RowEntry::Capture {
        cycle,
        addr,
        len,
        partner: false,
    }
}

fn cap_partner(cycle: u32, addr: u32, len: u32) -> RowEntry {
    RowEntry::Capture {
        cycle,
        addr,
        len,
        partner: true,
    }
}

/// A chip running [`PROG`] on the tiles of `rows`, each with its row at
/// ROW and `bytes(1024, tile)` at SRC.
fn chip_with(t: &Target, rows: &[(u32, Vec<RowEntry>)]) -> Chip {
    let mut chip = Chip::new(t).unwrap();
    load_rows(&mut chip, t, rows);
    chip
}

fn load_rows(chip: &mut Chip, t: &Target, rows: &[(u32, Vec<RowEntry>)]) {
    let img = image(t, PROG, &[]);
    for (tile, row) in rows {
        chip.load(*tile, &img).unwrap();
        chip.start(*tile, img.symbol("main").unwrap(), 0).unwrap();
        chip.write(*tile, ROW, &encode_row_bytes(row)).unwrap();
        chip.write(*tile, SRC, &bytes(1024, *tile)).unwrap();
    }
}

fn run(chip: &mut Chip) -> ChipReport {
    chip.run(1_000_000).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn unicast_with_exact_data_and_cycles() {
    let t = target("test4");
    assert_eq!(t.route_latency(0, 1), 6);
    let mut chip = chip_with(
        &t,
        &[
            (0, vec![send(0, SRC, 32)]),
            (1, vec![sel(0, 0), cap(6, DST, 32)]),
        ],
    );
    // Stopped early, the engine's sends are in the fabric as one run and
    // nothing is captured yet.
    let r = chip.run(2).unwrap();
    assert_eq!(r.outcome, ChipOutcome::CycleLimit);
    let runs = chip.fabric().engine_runs(0);
    assert_eq!((runs.len(), runs[0].start, runs[0].words), (1, T0, 8));
    assert_eq!(
        chip.fabric().sent_at(0, T0 + 7),
        Some(u32::from_le_bytes(bytes(32, 0)[28..].try_into().unwrap()))
    );
    assert_eq!(chip.read(1, DST, 4).unwrap(), &[0; 4]);
    let r = run(&mut chip);
    assert_eq!(r.outcome, ChipOutcome::Halted);
    assert_eq!(chip.read(1, DST, 32).unwrap(), &bytes(32, 0)[..]);
    // Sender: words at T0 .. T0 + 8, E = 110. Receiver: words at
    // T0 + 6 .. T0 + 14, E = 116. The sync ends at the later E.
    assert_eq!(chip.tile(0).unwrap().engine_end(), T0 + 8);
    assert_eq!(chip.tile(1).unwrap().engine_end(), T0 + 14);
    assert_eq!(r.supersteps.len(), 2);
    let s = &r.supersteps[0];
    assert_eq!(
        (s.end_cycle, s.release_cycle, s.tiles_synced),
        (116, Some(206), 2)
    );
    // `halt` issues at the release.
    assert_eq!((r.tiles[0].cycles, r.tiles[1].cycles), (207, 207));
    assert_eq!((r.tiles[0].words_sent, r.tiles[1].words_received), (8, 8));
    assert_eq!((r.tiles[0].words_received, r.tiles[1].words_sent), (0, 0));
    // Per-superstep figures: setzi, exch, sync; then halt.
    let a = s.tiles[0];
    assert_eq!(
        (a.tile, a.arrival, a.halted, a.issue_cycles, a.instructions),
        (0, 110, false, 3, 3)
    );
    assert_eq!((a.words_sent, a.words_received), (8, 0));
    let b = s.tiles[1];
    assert_eq!(
        (b.tile, b.arrival, b.words_sent, b.words_received),
        (1, 116, 0, 8)
    );
    assert_eq!(s.tiles.len(), 2, "idle tiles have no record");
    let last = &r.supersteps[1];
    assert_eq!(last.release_cycle, None);
    assert_eq!(last.tiles[1].arrival, 207);
    assert!(last.tiles[1].halted);
    assert_eq!(
        (last.tiles[1].instructions, last.tiles[1].words_received),
        (1, 0)
    );
}

#[test]
fn engine_words_reach_recv_instructions() {
    // Tile 1 receives tile 0's engine words with `recv`: the first at
    // T0 + latency = 108 (`delay 104` issues in cycle 3).
    let t = target("test4");
    let mut chip = chip_with(&t, &[(0, vec![send(0, SRC, 32)])]);
    let rx = "
        .globl main
main:   setzi $m3, 0
        recvsel $m3
        setzi $m2, 0xA0000
        delay 104
        .rept 8
        recv [$m2+=4]
        .endr
        halt
";
    let img = image(&t, rx, &[]);
    chip.load(1, &img).unwrap();
    chip.start(1, img.symbol("main").unwrap(), 0).unwrap();
    let r = run(&mut chip);
    assert_eq!(chip.read(1, DST, 32).unwrap(), &bytes(32, 0)[..]);
    assert_eq!(r.tiles[1].words_received, 8);
    assert_eq!(r.supersteps[0].tiles[1].arrival, 117);
    assert!(r.supersteps[0].tiles[1].halted);
}

#[test]
fn multicast_to_every_other_tile() {
    let t = target("test16");
    let mut rows = vec![(0, vec![send(0, SRC, 40)])];
    for r in 1..16 {
        let lat = t.route_latency(0, r);
        rows.push((r, vec![sel(0, 0), cap(lat, DST, 40)]));
    }
    assert!(t.route_latency(0, 15) > t.route_latency(0, 1));
    let mut chip = chip_with(&t, &rows);
    let rep = run(&mut chip);
    for r in 1..16u32 {
        assert_eq!(
            chip.read(r, DST, 40).unwrap(),
            &bytes(40, 0)[..],
            "tile {r}"
        );
        assert_eq!(rep.tiles[r as usize].words_received, 10);
    }
    assert_eq!(rep.total_words_sent(), 10, "one send for all receivers");
    let far = t.route_latency(0, 15) as u64;
    assert_eq!(rep.supersteps[0].end_cycle, T0 + far + 10);
}

#[test]
fn paired_capture_from_the_partner_port() {
    // test4: tiles 2 and 3 are supertile partners. Tile 2's port listens
    // to tile 0, tile 3's to tile 1; each tile captures both ports.
    let t = target("test4");
    assert_eq!(t.exchange.supertile_tiles, 2);
    let (l0, l1) = (t.route_latency(0, 2), t.route_latency(1, 3));
    let mut chip = chip_with(
        &t,
        &[
            (0, vec![send(0, SRC, 16)]),
            (1, vec![send(0, SRC, 16)]),
            (
                2,
                vec![
                    sel(0, 0),
                    cap(l0, DST, 16),
                    cap_partner(l1, DST + 0x100, 16),
                ],
            ),
            (
                3,
                vec![
                    sel(0, 1),
                    cap_partner(l0, DST, 16),
                    cap(l1, DST + 0x100, 16),
                ],
            ),
        ],
    );
    let r = run(&mut chip);
    for tile in [2, 3] {
        assert_eq!(chip.read(tile, DST, 16).unwrap(), &bytes(16, 0)[..]);
        assert_eq!(chip.read(tile, DST + 0x100, 16).unwrap(), &bytes(16, 1)[..]);
        assert_eq!(r.tiles[tile as usize].words_received, 8);
    }
}

#[test]
fn sender_switch_in_the_middle_of_a_row() {
    // Tile 3 listens to tile 0, then from relative cycle 10 to tile 1; one
    // capture of 16 words from cycle 7 (latency 7 from both) takes words
    // 0..3 from tile 0 and 3..16 from tile 1.
    let t = target("test4");
    assert_eq!((t.route_latency(0, 3), t.route_latency(1, 3)), (7, 7));
    let mut chip = chip_with(
        &t,
        &[
            (0, vec![send(0, SRC, 64)]),
            (1, vec![send(0, SRC, 64)]),
            (3, vec![sel(0, 0), cap(7, DST, 64), sel(10, 1)]),
        ],
    );
    run(&mut chip);
    let got = chip.read(3, DST, 64).unwrap();
    assert_eq!(&got[..12], &bytes(64, 0)[..12]);
    assert_eq!(&got[12..], &bytes(64, 1)[12..]);
}

#[test]
fn partial_last_words_leave_neighbours_untouched() {
    let t = target("test4");
    let mut chip = chip_with(
        &t,
        &[
            // 7 bytes from an odd address: two words, the second padded.
            (0, vec![send(0, SRC + 3, 7), send(2, SRC + 20, 1)]),
            (1, vec![sel(0, 0), cap(6, DST + 1, 7), cap(8, DST + 13, 1)]),
        ],
    );
    chip.write(1, DST, &[0xEE; 32]).unwrap();
    run(&mut chip);
    let got = chip.read(1, DST, 32).unwrap();
    let src = bytes(1024, 0);
    assert_eq!(got[0], 0xEE);
    assert_eq!(&got[1..8], &src[3..10]);
    assert_eq!(&got[8..13], &[0xEE; 5]);
    assert_eq!(got[13], src[20]);
    assert_eq!(&got[14..], &[0xEE; 18]);
}

fn capture_fault(e: &RunError) -> (u32, u64, u32, Option<u32>, u32, u32, u32) {
    match e.first() {
        ChipFault::Capture {
            tile,
            cycle,
            port,
            sender,
            addr,
            len,
            pc,
            instruction,
        } => {
            assert_eq!(instruction, "exch $m1", "the fault names the `exch`");
            (*tile, *cycle, *port, *sender, *addr, *len, *pc)
        }
        f => panic!("{f}"),
    }
}

#[test]
fn a_capture_at_a_wrong_cycle_is_a_fault() {
    let t = target("test4");
    // One cycle early: the first word (cycle 107) needs a send at 101.
    let mut chip = chip_with(
        &t,
        &[
            (0, vec![send(0, SRC, 32)]),
            (1, vec![sel(0, 0), cap(5, DST, 32)]),
        ],
    );
    let e = chip.run(1_000_000).unwrap_err();
    assert_eq!(capture_fault(&e), (1, T0 + 5, 1, Some(0), DST, 32, EXCH_PC));
    assert_eq!(e.faults.len(), 1);
    assert_eq!(e.report.outcome, ChipOutcome::Faulted);
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("tile 1, supervisor, pc {EXCH_PC:#x}, cycle 107:"))
            && msg.contains("from tile 0")
            && msg.ends_with("(in `exch $m1`)"),
        "{msg}"
    );
    // One cycle late: seven words arrive, the last (cycle 116) finds none.
    let mut chip = chip_with(
        &t,
        &[
            (0, vec![send(0, SRC, 32)]),
            (1, vec![sel(0, 0), cap(7, DST, 32)]),
        ],
    );
    let e = chip.run(1_000_000).unwrap_err();
    assert_eq!(capture_fault(&e).1, T0 + 14);
    assert_eq!(chip.read(1, DST, 28).unwrap(), &bytes(32, 0)[4..]);
    // Before any select: no sender.
    let mut chip = chip_with(
        &t,
        &[
            (0, vec![send(0, SRC, 32)]),
            (1, vec![cap(6, DST, 32), sel(10, 0)]),
        ],
    );
    let e = chip.run(1_000_000).unwrap_err();
    assert_eq!(capture_fault(&e), (1, T0 + 6, 1, None, DST, 32, EXCH_PC));
    assert!(e.to_string().contains("no sender"), "{e}");
}

#[test]
fn an_engine_send_and_a_send_instruction_in_one_cycle_fault() {
    // The engine sends in 102..110; `send` issues in cycle 104.
    let t = target("test4");
    let mut chip = Chip::new(&t).unwrap();
    let src = "
        .globl main
main:   setzi $m1, 0xC0000
        exch $m1
        setzi $m2, 0x90000
        delay 100
        send [$m2]
        sync 1
        halt
";
    let img = image(&t, src, &[]);
    chip.load(0, &img).unwrap();
    chip.start(0, img.symbol("main").unwrap(), 0).unwrap();
    chip.write(0, ROW, &encode_row_bytes(&[send(0, SRC, 32)]))
        .unwrap();
    chip.write(0, SRC, &bytes(64, 0)).unwrap();
    let e = chip.run(1_000_000).unwrap_err();
    let w = |k: usize| {
        let b = bytes(64, 0);
        u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
    };
    let ChipFault::Tile(f) = e.first() else {
        panic!("{e}")
    };
    assert_eq!((f.tile, f.cycle), (0, 104));
    assert_eq!(
        f.kind,
        FaultKind::DoubleSend {
            first: w(2),
            second: w(0)
        }
    );
    assert_eq!(f.instruction, "send [$m2]");
    assert!(e.to_string().contains("pc 0x"), "{e}");
}

fn row_fault(rows: &[(u32, Vec<RowEntry>)], cfg: Option<ChipConfig>) -> FaultKind {
    let t = target("test4");
    let mut chip = match cfg {
        Some(c) => Chip::with_config(c),
        None => Chip::new(&t).unwrap(),
    };
    load_rows(&mut chip, &t, rows);
    let e = chip.run(1_000_000).unwrap_err();
    assert_eq!(e.faults.len(), 1, "{e}");
    match e.first() {
        ChipFault::Tile(f) => {
            assert_eq!((f.tile, f.cycle, f.pc), (rows[0].0, 1, EXCH_PC));
            assert_eq!(f.instruction, "exch $m1");
            f.kind.clone()
        }
        f => panic!("{f}"),
    }
}

#[test]
fn malformed_rows_fault_when_exch_issues() {
    let bad = |row: Vec<RowEntry>| row_fault(&[(1, row)], None);
    let row = |e: RowError| FaultKind::ExchRow(e);
    assert_eq!(
        bad(vec![send(0, SRC, 0)]),
        row(RowError::ZeroLength { entry: 0 })
    );
    assert_eq!(
        bad(vec![sel(0, 0), cap(0, DST, 0)]),
        row(RowError::ZeroLength { entry: 1 })
    );
    assert_eq!(
        bad(vec![send(0, 0xE7FF0, 32)]),
        row(RowError::RangeOutside {
            entry: 0,
            addr: 0xE7FF0,
            len: 32
        })
    );
    // Below the memory base (0x4C000).
    assert_eq!(
        bad(vec![cap(0, 0x1000, 4)]),
        row(RowError::RangeOutside {
            entry: 0,
            addr: 0x1000,
            len: 4
        })
    );
    assert_eq!(
        bad(vec![cap(0, 0x4C002, 4)]),
        row(RowError::CaptureIntoCode {
            entry: 0,
            addr: 0x4C002,
            len: 4
        })
    );
    assert_eq!(
        bad(vec![send(0, SRC, 12), send(2, SRC, 4)]),
        row(RowError::SendOverlap { entry: 1, cycle: 2 })
    );
    // Two captures on one port in one cycle; the partner port is another port.
    assert_eq!(
        bad(vec![cap(0, DST, 12), cap(2, DST + 64, 4)]),
        row(RowError::CaptureOverlap { entry: 1, cycle: 2 })
    );
    assert_eq!(
        bad(vec![send(5, SRC, 4), sel(4, 0)]),
        row(RowError::OutOfOrder {
            entry: 1,
            cycle: 4,
            previous: 5
        })
    );
    assert_eq!(
        bad(vec![send(0x3FFF_FFFF, SRC, 8)]),
        row(RowError::CycleOverflow {
            entry: 0,
            cycle: 0x3FFF_FFFF,
            words: 2
        })
    );
    // Kind 3, a row running off the end of memory, a misaligned row.
    let raw = |words: &[u32], at: u32| {
        let t = target("test4");
        let mut chip = Chip::new(&t).unwrap();
        let src = format!(".globl main\nmain: setzi $m1, {at}\n exch $m1\n sync 1\n halt\n");
        let img = image(&t, &src, &[]);
        chip.load(2, &img).unwrap();
        chip.start(2, img.symbol("main").unwrap(), 0).unwrap();
        let b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        if at >= 0x4C000 {
            chip.write(2, at & !3, &b).unwrap();
        }
        let e = chip.run(1_000_000).unwrap_err();
        match e.first() {
            ChipFault::Tile(f) if f.cycle == 1 && f.tile == 2 => f.kind.clone(),
            f => panic!("{f}"),
        }
    };
    assert_eq!(
        raw(&[1, 3 << 30, 0, 0], ROW),
        row(RowError::BadKind { entry: 0 })
    );
    assert_eq!(
        raw(&[2, 2 << 30, SRC, 4], 0xE7FF0),
        row(RowError::Outside { addr: 0xE7FF0 })
    );
    assert_eq!(
        raw(&[0, 0], ROW + 2),
        row(RowError::Misaligned { addr: ROW + 2 })
    );
    assert_eq!(raw(&[0], 0x1000), row(RowError::Outside { addr: 0x1000 }));
    // Partner captures need supertile pairs.
    let mut cfg = ChipConfig::from_target(&target("test4")).unwrap();
    cfg.supertile_tiles = 1;
    assert_eq!(
        row_fault(&[(1, vec![cap_partner(0, DST, 4)])], Some(cfg)),
        row(RowError::NoPartner { entry: 0 })
    );
}

#[test]
fn exch_while_running_and_halt_before_the_end_fault() {
    let t = target("test4");
    for (src, cycle, want) in [
        (
            ".globl main\nmain: setzi $m1, 0xC0000\n exch $m1\n delay 50\n exch $m1\n halt\n",
            53,
            FaultKind::EngineBusy { end: T0 + 8 },
        ),
        (
            ".globl main\nmain: setzi $m1, 0xC0000\n exch $m1\n sync 0\n halt\n",
            3,
            FaultKind::HaltWithEngine { end: T0 + 8 },
        ),
    ] {
        let mut chip = Chip::new(&t).unwrap();
        let img = image(&t, src, &[]);
        chip.load(0, &img).unwrap();
        chip.start(0, img.symbol("main").unwrap(), 0).unwrap();
        chip.write(0, ROW, &encode_row_bytes(&[send(0, SRC, 32)]))
            .unwrap();
        let e = chip.run(1_000_000).unwrap_err();
        assert!(
            matches!(e.first(), ChipFault::Tile(f) if f.kind == want && f.cycle == cycle),
            "{e}"
        );
    }
}

/// Every tile of test16 sends 100 + 8k bytes (k = tile) to the next tile,
/// which captures them, except tiles 4 and 8: they listen to tile 0 and
/// capture its first 100 bytes; their partners 5 and 9 also capture those
/// from the partner port. With `bad`, tiles 6 and 11 capture a cycle early.
fn ring(bad: bool) -> (Chip, Result<ChipReport, RunError>) {
    let t = target("test16");
    let n = t.tiles();
    let rows: Vec<(u32, Vec<RowEntry>)> = (0..n)
        .map(|k| {
            let pred = (k + n - 1) % n;
            let len = 100 + 8 * pred;
            let mut lat = t.route_latency(pred, k);
            if bad && (k == 6 || k == 11) {
                lat -= 1;
            }
            let mut row = vec![sel(0, pred), send(0, SRC, 100 + 8 * k), cap(lat, DST, len)];
            if k == 4 || k == 8 {
                let lat = t.route_latency(0, k);
                row = vec![sel(0, 0), send(0, SRC, 100 + 8 * k), cap(lat, DST, 100)];
            }
            if k == 5 || k == 9 {
                row.push(cap_partner(t.route_latency(0, k - 1), DST + 0x1000, 100));
            }
            (k, row)
        })
        .collect();
    let mut chip = chip_with(&t, &rows);
    let r = chip.run(1_000_000);
    (chip, r)
}

#[test]
fn ring_exchange_and_identical_results_for_any_thread_count() {
    let go = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let (chip, r) = ring(false);
            let mut r = r.unwrap_or_else(|e| panic!("{e}"));
            r.wall_seconds = 0.0;
            let mem: Vec<Vec<u8>> = (0..16)
                .map(|k| chip.read(k, DST, 0x1100).unwrap().to_vec())
                .collect();
            let (chip2, e) = ring(true);
            let mut e = e.unwrap_err();
            e.report.wall_seconds = 0.0;
            let mem2: Vec<Vec<u8>> = (0..16)
                .map(|k| chip2.read(k, DST, 0x1100).unwrap().to_vec())
                .collect();
            (r, mem, e, mem2)
        })
    };
    let a = go(1);
    for k in 0..16u32 {
        let pred = (k + 15) % 16;
        let len = (100 + 8 * pred) as usize;
        let want = &bytes(1024, pred)[..len];
        if k == 4 || k == 8 {
            assert_eq!(&a.1[k as usize][..100], &bytes(1024, 0)[..100]);
            continue;
        }
        assert_eq!(&a.1[k as usize][..len], want, "tile {k}");
    }
    for k in [5usize, 9] {
        assert_eq!(&a.1[k][0x1000..0x1064], &bytes(1024, 0)[..100], "tile {k}");
    }
    let faults: Vec<(u32, u64)> = a.2.faults.iter().map(|f| (f.tile(), f.cycle())).collect();
    assert!(faults.iter().any(|f| f.0 == 6) && faults.iter().any(|f| f.0 == 11));
    let b = go(4);
    assert_eq!(a.0, b.0);
    assert!(a.1 == b.1);
    assert_eq!(a.2, b.2);
    assert!(a.3 == b.3);
}

/// Random rows on test16 against a word-by-word oracle written from the
/// row format alone: every tile streams 400 words from relative cycle 0,
/// switches its port between random senders (or none) at random cycles,
/// and captures random lengths at random cycles and alignments from its own
/// or its partner's port. Memory, faults and sync cycles must agree.
#[test]
fn random_rows_against_a_word_by_word_oracle() {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    const STREAM: u32 = 400;
    let t = target("test16");
    let n = t.tiles();
    for seed in 0..12u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        // Even seeds: no "no sender" selects, captures inside the streams
        // (every latency on test16 is 6 or 7): no faults.
        let clean = seed % 2 == 0;
        // Per tile: (selects, captures) in relative cycles.
        let mut selects: Vec<Vec<(u32, Option<u32>)>> = Vec::new();
        let mut captures: Vec<Vec<(u32, bool, u32, u32)>> = Vec::new();
        let mut rows: Vec<(u32, Vec<RowEntry>)> = Vec::new();
        for tile in 0..n {
            let mut sel_v = Vec::new();
            let mut c = rng.gen_range(0..5);
            while c < STREAM + 40 {
                let s = if !clean && rng.gen_bool(0.05) {
                    None
                } else {
                    Some(rng.gen_range(0..n))
                };
                sel_v.push((c, s));
                c += rng.gen_range(1..60);
            }
            let mut cap_v = Vec::new();
            let mut slot = 0u32;
            for partner in [false, true] {
                let mut c = rng.gen_range(0..10) + if clean { 7 } else { 0 };
                loop {
                    let len = rng.gen_range(1..60u32);
                    if c + len.div_ceil(4) > if clean { STREAM + 6 } else { STREAM + 30 } {
                        break;
                    }
                    let addr = DST + 128 * slot + rng.gen_range(0..4);
                    slot += 1;
                    cap_v.push((c, partner, addr, len));
                    c += len.div_ceil(4) + rng.gen_range(0..20);
                }
            }
            let mut row: Vec<RowEntry> = vec![send(0, SRC, 4 * STREAM)];
            row.extend(
                sel_v
                    .iter()
                    .map(|&(cycle, sender)| RowEntry::Select { cycle, sender }),
            );
            row.extend(
                cap_v
                    .iter()
                    .map(|&(cycle, partner, addr, len)| RowEntry::Capture {
                        cycle,
                        addr,
                        len,
                        partner,
                    }),
            );
            row.sort_by_key(|e| e.cycle());
            // The oracle follows the row's entry order for faults.
            let cap_sorted: Vec<(u32, bool, u32, u32)> = row
                .iter()
                .filter_map(|e| match *e {
                    RowEntry::Capture {
                        cycle,
                        addr,
                        len,
                        partner,
                    } => Some((cycle, partner, addr, len)),
                    _ => None,
                })
                .collect();
            selects.push(sel_v);
            captures.push(cap_sorted);
            rows.push((tile, row));
        }
        let mut chip = chip_with(&t, &rows);
        for k in 0..n {
            chip.write(k, SRC, &bytes(4 * STREAM, k)).unwrap();
        }
        let before: Vec<Vec<u8>> = (0..n)
            .map(|k| chip.read(k, DST, 128 * 128).unwrap().to_vec())
            .collect();
        let result = chip.run(1_000_000);
        // The oracle.
        let src: Vec<Vec<u8>> = (0..n).map(|k| bytes(4 * STREAM, k)).collect();
        let mut mem = before;
        let mut faults: Vec<(u64, u32, Option<u32>, u32, u32)> = Vec::new();
        let mut ends = vec![T0 + STREAM as u64; n as usize];
        for r in 0..n {
            for &(c, partner, addr, len) in &captures[r as usize] {
                let p = if partner { r ^ 1 } else { r };
                let words = len.div_ceil(4);
                ends[r as usize] = ends[r as usize].max(T0 + (c + words) as u64);
                for k in 0..words {
                    let t_abs = T0 + (c + k) as u64;
                    let rel = c + k;
                    let s = selects[p as usize]
                        .iter()
                        .rev()
                        .find(|x| x.0 <= rel)
                        .and_then(|x| x.1);
                    let Some(s) = s else {
                        faults.push((t_abs, r, None, addr, len));
                        break;
                    };
                    let lat = t.route_latency(s, p);
                    let sent = rel as i64 - lat as i64;
                    if sent < 0 || sent >= STREAM as i64 {
                        faults.push((t_abs, r, Some(s), addr, len));
                        break;
                    }
                    for b in 0..4u32 {
                        if 4 * k + b < len {
                            let o = (addr - DST + 4 * k + b) as usize;
                            mem[r as usize][o] = src[s as usize][(4 * sent as u32 + b) as usize];
                        }
                    }
                }
            }
        }
        faults.sort_by_key(|f| (f.0, f.1));
        for k in 0..n {
            assert!(
                chip.read(k, DST, 128 * 128).unwrap() == &mem[k as usize][..],
                "seed {seed} tile {k}"
            );
        }
        assert_eq!(result.is_ok(), clean, "seed {seed}");
        match result {
            Ok(r) => {
                assert!(faults.is_empty(), "seed {seed}: {faults:?}");
                let arrivals: Vec<u64> = r.supersteps[0].tiles.iter().map(|x| x.arrival).collect();
                assert_eq!(arrivals, ends, "seed {seed}");
            }
            Err(e) => {
                let got: Vec<(u64, u32, Option<u32>, u32, u32)> = e
                    .faults
                    .iter()
                    .map(|f| match f {
                        ChipFault::Capture {
                            tile,
                            cycle,
                            sender,
                            addr,
                            len,
                            pc,
                            ..
                        } => {
                            assert_eq!(*pc, EXCH_PC);
                            (*cycle, *tile, *sender, *addr, *len)
                        }
                        f => panic!("seed {seed}: {f}"),
                    })
                    .collect();
                assert_eq!(got, faults, "seed {seed}");
            }
        }
    }
}

/// Two senders selected on one port in one cycle, with a capture then: the
/// receiver would take two words in that cycle. A fault of the receiving
/// tile at that cycle, charged to its `exch`; a select that switches
/// senders in a later cycle is fine (see `sender_switch_in_the_middle_of_a_row`).
#[test]
fn two_senders_selected_on_one_port_in_one_cycle_is_a_fault() {
    let t = target("test4");
    let mut chip = chip_with(
        &t,
        &[
            (0, vec![send(0, SRC, 32)]),
            (2, vec![send(0, SRC, 32)]),
            (1, vec![sel(6, 0), sel(6, 2), cap(6, DST, 32)]),
        ],
    );
    let e = chip.run(1_000_000).unwrap_err();
    assert_eq!(e.faults.len(), 1, "{:?}", e.faults);
    match e.first() {
        ChipFault::TwoSenders {
            receiver,
            cycle,
            port,
            first,
            second,
            pc,
            instruction,
        } => {
            assert_eq!((*receiver, *cycle, *port), (1, T0 + 6, 1));
            assert_eq!((*first, *second), (0, 2));
            assert_eq!((*pc, instruction.as_str()), (EXCH_PC, "exch $m1"));
        }
        f => panic!("{f}"),
    }
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!(
            "tile 1, supervisor, pc {EXCH_PC:#x}, cycle {}:",
            T0 + 6
        )) && msg.contains("senders 0 and 2"),
        "{msg}"
    );
    // The same selects with the capture a cycle later: by then only tile 2
    // (latency 7 to tile 1, in the next column) is selected.
    assert_eq!(t.route_latency(2, 1), 7);
    let mut chip = chip_with(
        &t,
        &[
            (0, vec![send(0, SRC, 32)]),
            (2, vec![send(0, SRC, 32)]),
            (1, vec![sel(6, 0), sel(6, 2), cap(7, DST, 32)]),
        ],
    );
    run(&mut chip);
    assert_eq!(chip.read(1, DST, 32).unwrap(), &bytes(1024, 2)[..32]);
}
