//! Tests of the exchange scheduler: lower-bound arithmetic on hand-computed
//! phases, scheduler properties on seeded random phases, the verifier on
//! deliberately broken schedules, reuse, rows and summaries.

use super::patterns::{self, Rng};
use super::verify::VerifyError;
use super::*;
use ipu_target::Target;
use std::sync::Arc;

fn target(name: &str) -> Target {
    Target::load(name).unwrap()
}

/// A 64-tile target with ipu21's per-tile figures (16 columns of 4).
fn target64() -> Target {
    let text = include_str!("../../../targets/test16.toml")
        .replace("tiles = 16", "tiles = 64")
        .replace("name = \"test16\"", "name = \"test64\"");
    Target::from_toml_str(&text, "test64").unwrap()
}

fn uni(src: u32, src_off: u32, len: u32, dst: u32, dst_off: u32) -> Transfer {
    Transfer::unicast(src, src_off, len, dst, dst_off)
}

fn multi(src: u32, src_off: u32, len: u32, dsts: &[(u32, u32)]) -> Transfer {
    Transfer {
        src_tile: src,
        src_offset: src_off,
        len,
        dsts: dsts
            .iter()
            .map(|&(tile, offset)| Destination { tile, offset })
            .collect(),
    }
}

fn errors(phase: &Phase, s: &Schedule, t: &Target) -> Vec<VerifyError> {
    verify(phase, s, t).err().unwrap_or_default()
}

// ---- lower bound -------------------------------------------------------

#[test]
fn lower_bound_unicast_rounds_up_words() {
    let t = target("test4");
    let p = Phase::new(vec![uni(0, 0, 10, 1, 0)]);
    let lb = lower_bound(&p, &t).unwrap();
    assert_eq!(lb.cycles, 3); // ceil(10 / 4)
    assert_eq!(lb.bytes_sent[0], 10);
    assert_eq!(lb.bytes_received[1], 10);
}

#[test]
fn lower_bound_counts_a_multicast_once_at_the_sender() {
    let t = target("test4");
    // 16 B to tiles 1, 2, 3: sender 16 B -> 4 cycles; tile 1 gets 16 B on
    // its own (partner 0 takes nothing) -> 4; pair (2,3) shares -> 2.
    let p = Phase::new(vec![multi(0, 0, 16, &[(1, 0), (2, 0), (3, 0)])]);
    let lb = lower_bound(&p, &t).unwrap();
    assert_eq!(lb.bytes_sent[0], 16);
    assert_eq!(lb.bytes_shared, vec![0, 0, 16, 16]);
    assert_eq!(lb.cycles, 4);
    assert_eq!(lb.tile, Some(0));
}

#[test]
fn lower_bound_of_a_gather_is_the_receiver() {
    let t = target("test4");
    let p = Phase::new(vec![
        uni(1, 0, 8, 0, 0),
        uni(2, 0, 8, 0, 8),
        uni(3, 0, 8, 0, 16),
    ]);
    let lb = lower_bound(&p, &t).unwrap();
    assert_eq!(lb.bytes_received[0], 24);
    assert_eq!(lb.cycles, 6); // ceil(24 / 4)
    assert_eq!(lb.tile, Some(0));
}

#[test]
fn lower_bound_uses_8_bytes_per_cycle_for_supertile_shared_receives() {
    let t = target("test4");
    // Tiles 0 and 1 each send 32 B to both tiles of supertile (2, 3):
    // each sender 8 cycles; each receiver 64 B, all shared -> ceil(64 / 8) = 8.
    let p = Phase::new(vec![
        multi(0, 0, 32, &[(2, 0), (3, 0)]),
        multi(1, 0, 32, &[(2, 32), (3, 32)]),
    ]);
    let lb = lower_bound(&p, &t).unwrap();
    assert_eq!(lb.bytes_shared[2], 64);
    assert_eq!(lb.cycles, 8);
    // Mixed: tile 2 also takes 16 private bytes from tile 1.
    let mut p2 = p.clone();
    p2.transfers.push(uni(1, 64, 16, 2, 64));
    let lb2 = lower_bound(&p2, &t).unwrap();
    // Tile 1 sends 48 B -> 12; tile 2: max(ceil(16/4)=4, ceil((16+0+64)/8)=10) = 10.
    assert_eq!(lb2.cycles, 12);
    assert_eq!(lb2.tile, Some(1));
}

#[test]
fn lower_bound_counts_overlapping_sources_once() {
    let t = target("test4");
    let p = Phase::new(vec![uni(0, 0, 8, 1, 0), uni(0, 4, 8, 2, 0)]);
    let lb = lower_bound(&p, &t).unwrap();
    assert_eq!(lb.bytes_sent[0], 12); // bytes [0, 12)
    assert_eq!(lb.cycles, 3);
}

#[test]
fn empty_phase_schedules_to_nothing() {
    let t = target("test4");
    let s = schedule(&Phase::default(), &t).unwrap();
    assert_eq!((s.horizon, s.lower_bound, s.fragments.len()), (0, 0, 0));
    assert_eq!(s.ratio(), 1.0);
    // A zero-length transfer is valid and moves nothing.
    let p = Phase::new(vec![uni(0, 0, 0, 1, 0)]);
    let s = schedule(&p, &t).unwrap();
    assert_eq!(s.horizon, 0);
    assert!(verify(&p, &s, &t).is_ok());
}

// ---- phase validation --------------------------------------------------

#[test]
fn invalid_phases_are_rejected_with_the_transfer() {
    let t = target("test4");
    let cases = [
        (
            Phase::new(vec![uni(4, 0, 4, 1, 0)]),
            "transfer 0: source tile 4 is out of range (target has 4 tiles)",
        ),
        (
            Phase::new(vec![uni(0, 0, 4, 9, 0)]),
            "transfer 0: destination 0 tile 9 is out of range",
        ),
        (
            Phase::new(vec![uni(0, 638_972, 8, 1, 0)]),
            "exceed the tile's 638976 B of SRAM",
        ),
        (
            Phase::new(vec![uni(0, 0, 8, 1, 638_970)]),
            "destination 0 bytes [638970, 638978)",
        ),
        (
            Phase::new(vec![multi(0, 0, 8, &[])]),
            "transfer 0 has no destinations",
        ),
        (
            Phase::new(vec![uni(0, 0, 8, 1, 0), uni(2, 0, 8, 1, 4)]),
            "transfers 0 and 1 both write tile 1 bytes [4, 8)",
        ),
    ];
    for (p, want) in cases {
        let e = schedule(&p, &t).unwrap_err().to_string();
        assert!(e.contains(want), "{e}\n  wanted: {want}");
    }
}

// ---- scheduler properties ----------------------------------------------

fn check_properties(p: &Phase, t: &Target) -> Schedule {
    let s = schedule(p, t).unwrap();
    assert!(verify(p, &s, t).is_ok(), "{:?}", verify(p, &s, t));
    assert!(s.horizon >= s.lower_bound);
    assert_eq!(s.lower_bound, lower_bound(p, t).unwrap().cycles);
    // The selection may trade up to 1% of horizon for smaller rows.
    assert!(s.horizon * 1000 <= s.initial_horizon * (1000 + scheduler::HORIZON_SLACK_PERMILLE));
    s
}

#[test]
fn random_phases_verify_and_respect_the_bound() {
    for (ti, t) in [target("test16"), target64()].iter().enumerate() {
        for seed in 0..12u64 {
            let mut rng = Rng::new(seed * 31 + ti as u64);
            let per_tile = 1 + rng.below(6) as u32;
            let max_len = 4 + rng.below(300) as u32;
            let p = patterns::random(t.tiles(), per_tile, max_len, 3, seed);
            let s = check_properties(&p, t);
            // Random phases are not tight, but a list schedule stays within 2x + latency.
            assert!(
                s.horizon <= 2 * s.lower_bound + t.max_route_latency() as u64,
                "seed {seed}: {s}"
            );
        }
    }
}

#[test]
fn unaligned_lengths_and_odd_offsets_schedule() {
    let t = target("test16");
    let p = Phase::new(vec![
        uni(0, 1, 7, 5, 3),
        uni(0, 9, 1, 5, 11),
        multi(3, 2, 13, &[(4, 1), (5, 20), (9, 7)]),
        uni(15, 0, 4099, 0, 5),
    ]);
    let s = check_properties(&p, &t);
    assert_eq!(s.lower_bound, 4099u64.div_ceil(4));
}

#[test]
fn schedules_are_deterministic_across_thread_counts() {
    let t = target64();
    let p = patterns::random(64, 6, 200, 4, 99);
    let a = schedule(&p, &t).unwrap();
    let b = schedule(&p, &t).unwrap();
    assert_eq!(a, b);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let c = one.install(|| schedule(&p, &t).unwrap());
    assert_eq!(a, c);
    let three = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let d = three.install(|| schedule(&p, &t).unwrap());
    assert_eq!(a, d);
}

#[test]
fn typical_patterns_are_close_to_the_bound() {
    let t = target("ipu21");
    let lat = t.max_route_latency() as u64;
    let n = t.tiles();
    // (phase, allowed horizon - bound beyond the route latency)
    let cases: Vec<(&str, Phase, u64)> = vec![
        ("shift", patterns::shift(n, 1, 512), 0),
        ("pair swap", patterns::pair_swap(n, 256), 0),
        ("all-to-all/8", patterns::all_to_all(n, 8, 256), 8),
        ("gather/16", patterns::gather(n, 16, 256), 8),
    ];
    for (name, p, extra) in cases {
        let s = check_properties(&p, &t);
        assert!(s.horizon <= s.lower_bound + lat + extra, "{name}: {s}");
        assert_eq!(s.kind, ScheduleKind::CompactStreams, "{name}");
    }
}

#[test]
fn broadcast_to_all_tiles_uses_paired_receives() {
    let t = target("test16");
    // 4 senders x 256 B to all 16 tiles: 1024 B per receiver. One port per
    // tile needs 256 cycles; pairs share, bound 128.
    let p = patterns::broadcast(16, 4, 256);
    let s = check_properties(&p, &t);
    assert_eq!(s.lower_bound, 128);
    assert_eq!(s.kind, ScheduleKind::Paired);
    assert!(
        s.horizon <= s.lower_bound + 2 * t.max_route_latency() as u64,
        "{s}"
    );
    assert!(s.fragments.iter().flat_map(|f| &f.receives).any(|r| {
        let d = p.transfers[r.transfer as usize].dsts[r.dst as usize].tile;
        r.port != d
    }));
}

#[test]
fn multicast_sends_shared_bytes_once() {
    let t = target("test16");
    let p = Phase::new(vec![
        multi(0, 0, 64, &[(3, 0), (7, 0), (12, 0)]),
        uni(0, 0, 64, 9, 0),
    ]);
    let s = check_properties(&p, &t);
    // Both transfers read the same bytes: one 16-word stream for all 4 tiles.
    let sent_words: u64 = s.fragments.iter().map(|f| f.words(4)).sum();
    assert_eq!(sent_words, 16);
    assert_eq!(s.horizon, 16 + t.route_latency(0, 12) as u64);
}

// ---- verifier ------------------------------------------------------------

/// Two senders to one receiver and one sender to two receivers, on test4.
fn small() -> (Target, Phase, Schedule) {
    let t = target("test4");
    let p = Phase::new(vec![
        uni(0, 0, 16, 2, 0),
        uni(1, 0, 16, 2, 16),
        uni(0, 16, 8, 3, 0),
    ]);
    let s = schedule(&p, &t).unwrap();
    assert!(verify(&p, &s, &t).is_ok());
    (t, p, s)
}

fn frag_of(s: &Schedule, transfer: u32) -> usize {
    s.fragments
        .iter()
        .position(|f| f.receives.iter().any(|r| r.transfer == transfer))
        .unwrap()
}

/// Moves a fragment (send and selects) to start at `cycle`.
fn move_fragment(s: &mut Schedule, fi: usize, cycle: u64) {
    let f = &mut s.fragments[fi];
    let shift = cycle as i64 - f.send_cycle as i64;
    f.send_cycle = cycle;
    for r in &mut f.receives {
        r.select_cycle = (r.select_cycle as i64 + shift) as u32;
    }
    s.horizon = s.horizon.max(
        f.receives
            .iter()
            .map(|r| u64::from(r.select_cycle) + 4)
            .max()
            .unwrap(),
    );
}

#[test]
fn verifier_catches_two_senders_on_one_receiver() {
    let (t, p, mut s) = small();
    let (a, b) = (frag_of(&s, 0), frag_of(&s, 1));
    let c = s.fragments[a].send_cycle;
    move_fragment(&mut s, b, c);
    let e = errors(&p, &s, &t);
    let hit = e.iter().find_map(|e| match e {
        VerifyError::ReceiverConflict {
            port,
            first_sender,
            second_sender,
            ..
        } => Some((*port, *first_sender, *second_sender)),
        _ => None,
    });
    let (port, s1, s2) = hit.unwrap_or_else(|| panic!("{e:?}"));
    assert_eq!(port, 2);
    assert_ne!(s1, s2);
    let msg = e
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(msg.contains("port 2 hears two senders in cycle"), "{msg}");
}

#[test]
fn verifier_catches_sender_overbooking() {
    let (t, p, mut s) = small();
    let (a, c) = (frag_of(&s, 0), frag_of(&s, 2));
    let at = s.fragments[a].send_cycle + 1;
    move_fragment(&mut s, c, at);
    let e = errors(&p, &s, &t);
    assert!(
        e.iter().any(
            |e| matches!(e, VerifyError::SenderOverlap { tile: 0, cycle, .. } if *cycle == at)
        ),
        "{e:?}"
    );
}

#[test]
fn verifier_catches_a_select_at_the_wrong_cycle() {
    let (t, p, mut s) = small();
    let fi = frag_of(&s, 2);
    s.fragments[fi].receives[0].select_cycle += 1;
    s.horizon += 1;
    let e = errors(&p, &s, &t);
    assert!(
        e.iter().any(|e| matches!(
            e,
            VerifyError::WrongSelectCycle {
                port: 3,
                sender: 0,
                ..
            }
        )),
        "{e:?}"
    );
}

#[test]
fn verifier_catches_missing_and_duplicate_bytes() {
    let (t, p, s) = small();
    let mut missing = s.clone();
    missing.fragments.remove(frag_of(&s, 1));
    let e = errors(&p, &missing, &t);
    assert!(
        e.iter().any(|e| matches!(
            e,
            VerifyError::Uncovered {
                transfer: 1,
                dst: 0,
                tile: 2,
                start: 0,
                end: 16
            }
        )),
        "{e:?}"
    );
    let mut dup = s.clone();
    let fi = frag_of(&s, 2);
    let mut again = dup.fragments[fi].clone();
    let late = dup.horizon + 10;
    again.send_cycle = late;
    again.receives[0].select_cycle = (late + t.route_latency(0, 3) as u64) as u32;
    dup.horizon = u64::from(again.receives[0].select_cycle) + again.words(4);
    dup.fragments.push(again);
    let e = errors(&p, &dup, &t);
    assert!(
        e.iter()
            .any(|e| matches!(e, VerifyError::Duplicate { transfer: 2, .. })),
        "{e:?}"
    );
}

#[test]
fn verifier_checks_coverage_of_pieces_byte_by_byte() {
    // Transfer 0 (16 B, tile 0 -> tile 2) in one fragment; split, cut at
    // either end or overlapped, its destination must be checked range by range.
    let (t, p, s) = small();
    let fi = frag_of(&s, 0);
    let split = |s: &Schedule, first: u32, second_from: u32| {
        let mut out = s.clone();
        let f = out.fragments[fi].clone();
        let mut a = f.clone();
        a.len = first;
        let mut b = f.clone();
        let skip = second_from / 4;
        b.src_offset += second_from;
        b.len = f.len - second_from;
        b.send_cycle += skip as u64;
        for r in &mut b.receives {
            r.select_cycle += skip;
        }
        out.fragments[fi] = a;
        out.fragments.insert(fi + 1, b);
        out
    };
    // Two pieces that cover the bytes once: valid.
    let halves = split(&s, 8, 8);
    assert!(
        verify(&p, &halves, &t).is_ok(),
        "{:?}",
        errors(&p, &halves, &t)
    );
    let uncovered = |e: &[VerifyError]| {
        e.iter()
            .filter_map(|e| match *e {
                VerifyError::Uncovered {
                    transfer: 0,
                    dst: 0,
                    start,
                    end,
                    ..
                } => Some((start, end)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    // One piece short of the end, one piece from byte 4: never received.
    let mut short = s.clone();
    short.fragments[fi].len = 12;
    assert_eq!(uncovered(&errors(&p, &short, &t)), [(12, 16)]);
    let mut late_start = s.clone();
    let f = &mut late_start.fragments[fi];
    (f.src_offset, f.len) = (f.src_offset + 4, 12);
    assert_eq!(uncovered(&errors(&p, &late_start, &t)), [(0, 4)]);
    // A gap between two pieces.
    let gap = split(&s, 4, 8);
    assert_eq!(uncovered(&errors(&p, &gap, &t)), [(4, 8)]);
    // Two pieces that overlap: bytes [4, 8) twice.
    let twice = split(&s, 8, 4);
    assert!(
        errors(&p, &twice, &t).iter().any(|e| matches!(
            e,
            VerifyError::Duplicate {
                transfer: 0,
                dst: 0,
                start: 4,
                end: 8,
                ..
            }
        )),
        "{:?}",
        errors(&p, &twice, &t)
    );
}

#[test]
fn verifier_catches_late_arrivals() {
    let (t, p, mut s) = small();
    s.horizon -= 1;
    let e = errors(&p, &s, &t);
    assert!(
        e.iter().any(|e| matches!(e, VerifyError::Late { .. })),
        "{e:?}"
    );
    assert!(
        e[0].to_string().contains("after the phase ends"),
        "{}",
        e[0]
    );
}

#[test]
fn verifier_catches_bad_ports_and_references() {
    let (t, p, s) = small();
    let fi = frag_of(&s, 2);
    // Tile 3 listening on tile 1's port.
    let mut bad = s.clone();
    bad.fragments[fi].receives[0].port = 1;
    let e = errors(&p, &bad, &t);
    assert!(
        e.iter().any(|e| matches!(
            e,
            VerifyError::BadPort {
                tile: 3,
                port: 1,
                ..
            }
        )),
        "{e:?}"
    );
    // Tile 3 on its partner's port in a compact schedule: not allowed.
    let mut partner = s.clone();
    partner.fragments[fi].receives[0].port = 2;
    let e = errors(&p, &partner, &t);
    assert!(
        e.iter().any(|e| matches!(
            e,
            VerifyError::BadPort {
                tile: 3,
                port: 2,
                paired_allowed: false,
                ..
            }
        )),
        "{e:?}"
    );
    // ...and in a paired schedule only if tile 2 captures the same words.
    partner.kind = ScheduleKind::Paired;
    let e = errors(&p, &partner, &t);
    assert!(
        e.iter().any(|e| matches!(
            e,
            VerifyError::PartnerNotCapturing {
                tile: 3,
                port: 2,
                ..
            }
        )),
        "{e:?}"
    );
    // A receive naming a transfer that does not exist.
    let mut dangling = s.clone();
    dangling.fragments[fi].receives[0].transfer = 7;
    let e = errors(&p, &dangling, &t);
    assert!(
        e.iter()
            .any(|e| matches!(e, VerifyError::BadReference { transfer: 7, .. })),
        "{e:?}"
    );
    // Bytes that are not the transfer's source.
    let mut wrong = s.clone();
    wrong.fragments[fi].src_offset = 100;
    let e = errors(&p, &wrong, &t);
    assert!(
        e.iter()
            .any(|e| matches!(e, VerifyError::NotTransferBytes { transfer: 2, .. })),
        "{e:?}"
    );
}

#[test]
fn verifier_catches_a_wrong_bound_and_an_invalid_phase() {
    let (t, p, mut s) = small();
    s.lower_bound += 1;
    let e = errors(&p, &s, &t);
    assert!(
        e.iter()
            .any(|e| matches!(e, VerifyError::WrongLowerBound { .. })),
        "{e:?}"
    );
    let mut bad_phase = p.clone();
    bad_phase.transfers[0].dsts[0].offset = 638_970;
    let e = errors(&bad_phase, &s, &t);
    assert!(
        matches!(
            e[0],
            VerifyError::Phase(PhaseError::DestOutOfMemory { transfer: 0, .. })
        ),
        "{e:?}"
    );
}

#[test]
fn verifier_catches_a_double_capture() {
    let t = target("test4");
    // Same source bytes to two offsets of tile 1: two separate receives needed.
    let p = Phase::new(vec![uni(0, 0, 8, 1, 0), uni(0, 0, 8, 1, 16)]);
    let s = schedule(&p, &t).unwrap();
    assert!(verify(&p, &s, &t).is_ok());
    assert_eq!(s.horizon, 4 + t.route_latency(0, 1) as u64);
    // Merge both receives into one fragment: tile 1 would write two words per cycle.
    let mut bad = s.clone();
    let second = bad.fragments.remove(1);
    let at = bad.fragments[0].receives[0].select_cycle;
    bad.fragments[0]
        .receives
        .extend(second.receives.iter().map(|r| Receive {
            select_cycle: at,
            ..*r
        }));
    let e = errors(&p, &bad, &t);
    assert!(
        e.iter().any(|e| matches!(
            e,
            VerifyError::DoubleCapture {
                tile: 1,
                port: 1,
                ..
            }
        )),
        "{e:?}"
    );
}

// ---- reuse ----------------------------------------------------------------

#[test]
fn relocated_phase_is_reused() {
    let t = Arc::new(target64());
    let mut sched = ExchangeScheduler::new(t.clone());
    let p = patterns::random(64, 4, 100, 4, 5);
    let first = sched.schedule(&p).unwrap();
    assert_ne!(first.kind, ScheduleKind::Reused);
    let moved = patterns::relocated(&p, 1000);
    let again = sched.schedule(&moved).unwrap();
    assert_eq!(again.kind, ScheduleKind::Reused);
    assert_eq!(again.horizon, first.horizon);
    assert!(verify(&moved, &again, &t).is_ok());
    // Sources moved with their transfers, cycles did not.
    assert_eq!(
        again.fragments[0].src_offset,
        first.fragments[0].src_offset + 1000
    );
    assert_eq!(again.fragments[0].send_cycle, first.fragments[0].send_cycle);
    assert_eq!(sched.stats().reused, 1);
}

#[test]
fn different_phases_are_not_reused() {
    let t = Arc::new(target("test16"));
    let mut sched = ExchangeScheduler::new(t);
    let p = Phase::new(vec![uni(0, 0, 64, 1, 0), uni(2, 0, 64, 3, 0)]);
    sched.schedule(&p).unwrap();
    // A different destination tile.
    let q = Phase::new(vec![uni(0, 0, 64, 1, 0), uni(2, 0, 64, 4, 0)]);
    assert_ne!(sched.schedule(&q).unwrap().kind, ScheduleKind::Reused);
    // A different length.
    let r = Phase::new(vec![uni(0, 0, 64, 1, 0), uni(2, 0, 60, 3, 0)]);
    assert_ne!(sched.schedule(&r).unwrap().kind, ScheduleKind::Reused);
    // Same tiles and lengths but the two sources become identical bytes
    // (multicast structure differs): not the same phase.
    let a = Phase::new(vec![uni(0, 0, 64, 1, 0), uni(0, 64, 64, 2, 0)]);
    let b = Phase::new(vec![uni(0, 0, 64, 1, 0), uni(0, 0, 64, 2, 0)]);
    sched.schedule(&a).unwrap();
    let sb = sched.schedule(&b).unwrap();
    assert_ne!(sb.kind, ScheduleKind::Reused);
    assert_eq!(sb.horizon, 16 + 6); // one multicast send; tiles 0..3 share a column
                                    // The original again (relocated) is reused.
    let p2 = patterns::relocated(&p, 8);
    assert_eq!(sched.schedule(&p2).unwrap().kind, ScheduleKind::Reused);
}

// ---- rows and summary -------------------------------------------------------

#[test]
fn row_words_count_entries() {
    let t = target("test4");
    let p = Phase::new(vec![uni(0, 0, 16, 1, 0)]);
    let s = schedule(&p, &t).unwrap();
    // Sender: header + send entry; receiver: header + select + capture.
    assert_eq!(s.rows.words, vec![4, 6, 0, 0]);
    assert_eq!(
        (
            s.rows.max_row_words,
            s.rows.max_row_tile,
            s.rows.total_words
        ),
        (6, 1, 10)
    );
}

#[test]
fn summary_groups_by_pattern() {
    let sum = summarize(&patterns::pair_swap(1472, 256));
    assert_eq!(sum.groups.len(), 1);
    assert_eq!(
        sum.groups[0].to_string(),
        "tiles 0..1470 step 2 -> +1, 256 B each (736 transfers)"
    );
    let sum = summarize(&patterns::broadcast(1472, 8, 4096));
    assert_eq!(
        sum.lines(10),
        vec!["tiles 0..1288 step 184 -> tiles 0..1471, 4096 B each (8 transfers)"]
    );
    let sum = summarize(&Phase::new(vec![
        uni(3, 0, 8, 7, 0),
        uni(5, 0, 8, 9, 0),
        uni(9, 0, 16, 2, 0),
        uni(20, 0, 8, 24, 0),
    ]));
    let lines = sum.lines(10);
    assert_eq!(
        lines,
        vec![
            "tiles {3, 5, 20} -> +4, 8 B each (3 transfers)",
            "tile 9 -> tile 2, 16 B"
        ]
    );
    assert_eq!(sum.lines(1)[1], "... 1 more groups (1 transfers)");
    assert!(sum
        .to_string()
        .starts_with("4 transfers, 40 B delivered, 2 groups"));
}

// ---- other targets and hostile input ---------------------------------------

#[test]
fn targets_without_multicast_or_pairing() {
    let base = include_str!("../../../targets/test16.toml");
    let no_mc = Target::from_toml_str(
        &base.replace("multicast = true", "multicast = false"),
        "no-mc",
    )
    .unwrap();
    let p = Phase::new(vec![multi(0, 0, 64, &[(2, 0), (3, 0), (9, 0)])]);
    let s = check_properties(&p, &no_mc);
    // Every destination costs its own send: 3 x 16 words.
    assert_eq!(s.lower_bound, 48);
    assert!(s.horizon >= 48);
    let unpaired = Target::from_toml_str(
        &base
            .replace("supertile_tiles = 2", "supertile_tiles = 1")
            .replace(
                "supertile_shared_receive_bytes_per_cycle = 8",
                "supertile_shared_receive_bytes_per_cycle = 4",
            ),
        "unpaired",
    )
    .unwrap();
    let p = patterns::broadcast(16, 4, 256);
    let s = check_properties(&p, &unpaired);
    assert_eq!(s.lower_bound, 256); // 1024 B per receiver at 4 B/cycle
    assert_eq!(s.kind, ScheduleKind::CompactStreams);
}

#[test]
fn verifier_never_panics_on_mangled_schedules() {
    let t = target("test16");
    let p = patterns::random(16, 3, 64, 3, 7);
    let good = schedule(&p, &t).unwrap();
    let mut rng = Rng::new(42);
    let mut caught = 0;
    for _ in 0..400 {
        let mut s = good.clone();
        for _ in 0..1 + rng.below(3) {
            let fi = rng.below(s.fragments.len() as u64) as usize;
            let f = &mut s.fragments[fi];
            let ri = rng.below(f.receives.len() as u64) as usize;
            let big = |r: &mut Rng| {
                if r.below(4) == 0 {
                    u64::MAX - r.below(3)
                } else {
                    r.below(64)
                }
            };
            match rng.below(9) {
                0 => f.send_cycle = big(&mut rng),
                1 => f.receives[ri].select_cycle = super::sat(big(&mut rng)),
                2 => f.receives[ri].port = rng.below(40) as u32,
                3 => f.receives[ri].transfer = rng.below(p.transfers.len() as u64 + 3) as u32,
                4 => f.receives[ri].dst = rng.below(4) as u32,
                5 => f.src_tile = rng.below(20) as u32,
                6 => {
                    f.src_offset = if rng.below(2) == 0 {
                        u32::MAX - 3
                    } else {
                        rng.below(4096) as u32
                    }
                }
                7 => f.len = rng.below(80) as u32,
                _ => {
                    s.fragments.remove(fi);
                }
            }
            if s.fragments.is_empty() {
                break;
            }
        }
        let verdict = verify(&p, &s, &t);
        // The occupancy maps' first check finds what sorting finds.
        assert_eq!(verdict, super::verify::verify_by_sorting(&p, &s, &t));
        if s != good && verdict.is_err() {
            caught += 1;
        }
        // Sizes counted and sizes of the rows built agree, even on junk.
        let stats = super::rows::row_stats(&p, &s.fragments, &t);
        let rows = tile_rows(&p, &s.fragments, &t);
        // Rows made in one pass in cycle order are the rows of sorted groups.
        assert_eq!(rows, super::rows::sorted_rows(&p, &s.fragments, &t));
        let words: Vec<u32> = rows
            .iter()
            .map(|r| {
                let w: u32 = r.iter().map(|e| e.words()).sum();
                if r.is_empty() {
                    0
                } else {
                    w + rows::HEADER_WORDS
                }
            })
            .collect();
        assert_eq!(stats.words, words);
    }
    // Nearly every mutation breaks something; a few are harmless (e.g. same value).
    assert!(caught > 300, "{caught}");
}

#[test]
fn scheduler_never_panics_on_hostile_phases() {
    let t = target("test4");
    let mut rng = Rng::new(3);
    for _ in 0..300 {
        let n = rng.below(5) as usize;
        let transfers = (0..n)
            .map(|_| {
                let pick = |r: &mut Rng, small: u64| {
                    if r.below(5) == 0 {
                        u32::MAX - r.below(2) as u32
                    } else {
                        r.below(small) as u32
                    }
                };
                let dsts = (0..rng.below(4))
                    .map(|_| Destination {
                        tile: pick(&mut rng, 5),
                        offset: pick(&mut rng, 700_000),
                    })
                    .collect();
                Transfer {
                    src_tile: pick(&mut rng, 5),
                    src_offset: pick(&mut rng, 700_000),
                    len: pick(&mut rng, 5000),
                    dsts,
                }
            })
            .collect();
        let p = Phase::new(transfers);
        match schedule(&p, &t) {
            Ok(s) => assert!(verify(&p, &s, &t).is_ok()),
            Err(e) => assert!(matches!(e, ScheduleError::Phase(_)), "{e}"),
        }
        let _ = summarize(&p).to_string();
        let _ = lower_bound(&p, &t);
    }
}

#[test]
fn tile_rows_list_sends_selects_and_captures() {
    let t = target("test16");
    // Tile 0 sends 10 B to tile 5 at offset 100; 0 and 5 are in columns 0 and 1.
    let p = Phase::new(vec![uni(0, 40, 10, 5, 100)]);
    let s = schedule(&p, &t).unwrap();
    let rows = tile_rows(&p, &s.fragments, &t);
    let lat = t.route_latency(0, 5);
    assert_eq!(
        rows[0],
        vec![RowEntry::Send {
            cycle: 0,
            offset: 40,
            len: 10
        }]
    );
    assert_eq!(
        rows[5],
        vec![
            RowEntry::Select {
                cycle: lat,
                sender: 0,
                cycles: 3
            },
            RowEntry::Capture {
                cycle: lat,
                port: 5,
                offset: 100,
                len: 10
            },
        ]
    );
    assert!(rows
        .iter()
        .enumerate()
        .all(|(i, r)| i == 0 || i == 5 || r.is_empty()));
}

#[test]
fn schedule_all_matches_scheduling_one_by_one() {
    let t = Arc::new(target64());
    let a = patterns::random(64, 3, 90, 4, 11);
    let b = patterns::all_to_all(64, 8, 64);
    let phases = vec![
        a.clone(),
        b.clone(),
        patterns::relocated(&a, 512),
        Phase::new(vec![uni(0, 0, 8, 99, 0)]), // invalid: tile 99
        patterns::relocated(&b, 4),
        a.clone(),
    ];
    let mut one = ExchangeScheduler::new(t.clone());
    let sequential: Vec<_> = phases.iter().map(|p| one.schedule(p)).collect();
    let mut many = ExchangeScheduler::new(t);
    let parallel = many.schedule_all(&phases);
    assert_eq!(sequential, parallel);
    let kinds: Vec<_> = parallel
        .iter()
        .map(|r| r.as_ref().map(|s| s.kind).ok())
        .collect();
    assert_eq!(kinds[2], Some(ScheduleKind::Reused));
    assert_eq!(kinds[3], None);
    assert_eq!(kinds[4], Some(ScheduleKind::Reused));
    assert_eq!(kinds[5], Some(ScheduleKind::Reused));
    assert_eq!(one.stats(), many.stats());
}

#[test]
fn grid_allgather_is_close_to_the_pair_bound() {
    let t = target64();
    // 8 x 8 grid: row pieces go to both tiles of each pair, column pieces do not.
    let p = patterns::grid_allgather(8, 8, 64, 128);
    let s = check_properties(&p, &t);
    let lb = lower_bound(&p, &t).unwrap();
    // Tile 0 gets 7 x 64 B of row pieces (6 shared with tile 1) and 7 x 128 B of column pieces.
    assert_eq!(lb.bytes_received[0], 7 * 64 + 7 * 128);
    assert_eq!(lb.bytes_shared[0], 6 * 64);
    assert_eq!(s.kind, ScheduleKind::Paired);
    assert!(s.ratio() < 1.25, "{s}");
}

#[test]
fn random_pair_heavy_multicasts_verify() {
    let t = target64();
    for seed in 0..10u64 {
        let mut rng = Rng::new(seed + 1000);
        let mut transfers = Vec::new();
        let mut next_dst = vec![0u32; 64];
        for s in 0..64u32 {
            for k in 0..1 + rng.below(3) as u32 {
                // A few supertile pairs (both tiles) plus maybe one single tile.
                let mut dsts: Vec<u32> = Vec::new();
                for _ in 0..1 + rng.below(4) {
                    let e = 2 * rng.below(32) as u32;
                    dsts.extend([e, e + 1]);
                }
                if rng.below(2) == 0 {
                    dsts.push(rng.below(64) as u32);
                }
                dsts.sort_unstable();
                dsts.dedup();
                let len = 4 + rng.below(200) as u32;
                let d = dsts
                    .iter()
                    .map(|&tile| {
                        let offset = 300_000 + next_dst[tile as usize];
                        next_dst[tile as usize] += len.next_multiple_of(4);
                        Destination { tile, offset }
                    })
                    .collect();
                transfers.push(Transfer {
                    src_tile: s,
                    src_offset: k * 256,
                    len,
                    dsts: d,
                });
            }
        }
        let p = Phase::new(transfers);
        let s = check_properties(&p, &t);
        let again = schedule(&p, &t).unwrap();
        assert_eq!(s, again, "seed {seed}");
        assert!(
            s.horizon <= 2 * s.lower_bound + t.max_route_latency() as u64,
            "seed {seed}: {s}"
        );
    }
}

#[test]
fn listing_shows_every_fragment() {
    let (t, p, s) = small();
    let text = s.listing(&p, t.exchange_word_bytes());
    assert_eq!(text.lines().count(), s.fragments.len());
    // test4: 2 columns of 2 tiles; tiles 0, 1 -> 2, 3 cross one column (latency 7).
    // Tile 2 takes 8 words from two senders back to back: the bound (8) + 7.
    assert_eq!(s.horizon, 15);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(&"tile 1 cycles 0..4 bytes 0..16 -> t2 at 7 [transfer 1.0]"),
        "{text}"
    );
    assert!(
        lines.contains(&"tile 0 cycles 4..8 bytes 0..16 -> t2 at 11 [transfer 0.0]"),
        "{text}"
    );
}

#[test]
fn patterns_never_panic_on_edge_sizes() {
    let t = target("test4");
    for tiles in [0u32, 1, 3, 4] {
        for big in [0u32, 1, 7, u32::MAX] {
            let phases = [
                patterns::shift(tiles, big, 8),
                patterns::pair_swap(tiles, 8),
                patterns::all_to_all(tiles, big, 8),
                patterns::broadcast(tiles, big.min(8), 8),
                patterns::group_broadcast(tiles, big.min(8), 2, 8),
                patterns::gather(tiles, big, 8),
                patterns::grid_allgather(tiles.min(2), big.min(2), 8, 8),
                patterns::random(tiles, 2, 16, 2, big as u64),
                patterns::random_hot(tiles, 2, 16, big, 2, 1),
            ];
            for p in &phases {
                // Valid or rejected with an error; never a panic.
                if let Ok(s) = schedule(p, &t) {
                    assert!(verify(p, &s, &t).is_ok());
                }
            }
        }
    }
}

#[test]
fn an_unvalidated_target_does_not_panic() {
    // Target fields are public: a caller may zero them after loading.
    let mut t = target("test16");
    t.chip.tiles_per_column = 0;
    t.exchange.send_bytes_per_cycle = 0;
    t.exchange.receive_bytes_per_cycle = 0;
    t.exchange.supertile_shared_receive_bytes_per_cycle = 0;
    t.exchange.route_latency_columns_per_cycle = 0;
    let p = patterns::broadcast(16, 2, 64);
    if let Ok(s) = schedule(&p, &t) {
        let _ = verify(&p, &s, &t);
    }
    let _ = lower_bound(&p, &t);
}

#[test]
fn summary_folds_periodic_tile_sets() {
    let sum = summarize(&patterns::all_to_all(1472, 16, 512));
    let lines = sum.lines(2);
    assert_eq!(
        lines[0],
        "tiles {0..14} every 16 x92 -> +1, 512 B each (1380 transfers)"
    );
    let shown: usize = sum.groups[..2].iter().map(|g| g.transfers).sum();
    assert_eq!(
        lines[2],
        format!("... 28 more groups ({} transfers)", 22080 - shown)
    );
    assert_eq!(
        summary::fmt_tiles(&[0, 1, 4, 5, 8, 9]),
        "tiles {0..1} every 4 x3"
    );
    assert_eq!(summary::fmt_tiles(&[0, 1, 4, 5]), "tiles {0..1, 4..5}");
}

// ---- fast paths against plain references ----------------------------------

/// A phase with repeated sources: some transfers share source bytes, some
/// destinations take the same bytes twice at two offsets.
fn repeated_sources(tiles: u32, seed: u64) -> Phase {
    let mut rng = Rng::new(seed);
    let mut v = Vec::new();
    for i in 0..200u32 {
        let src = rng.below(tiles as u64) as u32;
        // Few distinct offsets and lengths, so sources repeat across transfers.
        let (off, len) = (rng.below(4) as u32 * 64, 16 + rng.below(3) as u32 * 16);
        let dsts: Vec<(u32, u32)> = (0..1 + rng.below(6))
            .map(|k| {
                (
                    rng.below(tiles as u64) as u32,
                    4096 + (i * 8 + k as u32) * 64,
                )
            })
            .collect();
        v.push(multi(src, off, len, &dsts));
    }
    Phase::new(v)
}

/// (source tile, source offset, length, receivers) of a job.
type RefJob = (u32, u32, u32, Vec<(u32, u32, u32)>);

/// `build_jobs` as first written: a set of (job, tile) pairs taken, and each
/// receiver joins the first job of its source that lacks its tile.
fn reference_jobs(phase: &Phase, multicast: bool) -> Vec<RefJob> {
    use std::collections::{HashMap, HashSet};
    let mut jobs: Vec<RefJob> = Vec::new();
    let mut by_source: HashMap<(u32, u32, u32), Vec<usize>> = HashMap::new();
    let mut taken: HashSet<(usize, u32)> = HashSet::new();
    for (ti, t) in phase.transfers.iter().enumerate() {
        if t.len == 0 {
            continue;
        }
        for (di, d) in t.dsts.iter().enumerate() {
            let rec = (ti as u32, di as u32, d.tile);
            let slot = by_source
                .entry((t.src_tile, t.src_offset, t.len))
                .or_default();
            let existing = slot
                .iter()
                .copied()
                .find(|&j| multicast && !taken.contains(&(j, d.tile)));
            let j = existing.unwrap_or_else(|| {
                slot.push(jobs.len());
                jobs.push((t.src_tile, t.src_offset, t.len, Vec::new()));
                jobs.len() - 1
            });
            jobs[j].3.push(rec);
            taken.insert((j, d.tile));
        }
    }
    for j in &mut jobs {
        j.3.sort_unstable_by_key(|r| (r.2, r.0, r.1));
    }
    jobs
}

#[test]
fn jobs_match_the_first_free_job_rule() {
    for seed in 0..8 {
        let p = repeated_sources(16, seed);
        for multicast in [true, false] {
            let got: Vec<_> = phase::build_jobs(&p, multicast)
                .into_iter()
                .map(|j| (j.src_tile, j.src_offset, j.len, j.receivers))
                .collect();
            assert_eq!(got, reference_jobs(&p, multicast), "seed {seed}");
        }
    }
}

/// Row sizes counted the plain way: every event in one list per kind,
/// sorted as a whole, merged.
fn reference_row_words(phase: &Phase, fragments: &[Fragment], word: u64, n: usize) -> Vec<u32> {
    let (mut sends, mut selects, mut captures) = (Vec::new(), Vec::new(), Vec::new());
    for f in fragments {
        let w = (f.len as u64).div_ceil(word);
        let src = f.src_offset as u64;
        sends.push((
            f.src_tile,
            f.send_cycle,
            f.send_cycle + w,
            src,
            src + f.len as u64,
        ));
        for r in &f.receives {
            let t = &phase.transfers[r.transfer as usize];
            let d = t.dsts[r.dst as usize];
            let at = d.offset as u64 + (src - t.src_offset as u64);
            let start = u64::from(r.select_cycle);
            let end = start + w;
            selects.push((r.port, start, end, f.src_tile));
            captures.push((d.tile, r.port, start, end, at, at + f.len as u64));
        }
    }
    sends.sort_unstable();
    selects.sort_unstable();
    selects.dedup();
    captures.sort_unstable();
    let mut words = vec![0u32; n];
    let mut add = |t: u32, w: u32| {
        let x = &mut words[t as usize];
        *x = if *x == 0 { rows::HEADER_WORDS } else { *x } + w;
    };
    let mut last: Option<(u32, u64, u64, u64, u64)> = None;
    for s in sends {
        match &mut last {
            Some(p) if p.0 == s.0 && p.2 == s.1 && p.4 == s.3 && (p.4 - p.3) % word == 0 => {
                (p.2, p.4) = (s.2, s.4)
            }
            _ => {
                add(s.0, rows::SEND_WORDS);
                last = Some(s);
            }
        }
    }
    let mut last: Option<(u32, u64, u64, u32)> = None;
    for s in selects {
        match &mut last {
            Some(p) if p.0 == s.0 && p.2 == s.1 && p.3 == s.3 => p.2 = s.2,
            _ => {
                add(s.0, rows::SELECT_WORDS);
                last = Some(s);
            }
        }
    }
    let mut last: Option<(u32, u32, u64, u64, u64, u64)> = None;
    for c in captures {
        match &mut last {
            Some(p)
                if p.0 == c.0
                    && p.1 == c.1
                    && p.3 == c.2
                    && p.5 == c.4
                    && (p.5 - p.4) % word == 0 =>
            {
                (p.3, p.5) = (c.3, c.5)
            }
            _ => {
                add(c.0, rows::CAPTURE_WORDS);
                last = Some(c);
            }
        }
    }
    words
}

#[test]
fn rows_match_a_plain_sort_of_every_event() {
    let t = target64();
    let phases = [
        patterns::random(64, 6, 200, 3, 21),
        patterns::grid_allgather(8, 8, 64, 96),
        patterns::group_broadcast(64, 8, 3, 128),
        repeated_sources(64, 3),
    ];
    for p in &phases {
        let s = schedule(p, &t).unwrap();
        let words = reference_row_words(p, &s.fragments, 4, 64);
        assert_eq!(s.rows.words, words);
        // The rows themselves have those sizes, header included.
        let rows = tile_rows(p, &s.fragments, &t);
        for (tile, row) in rows.iter().enumerate() {
            let w: u32 = row.iter().map(|e| e.words()).sum();
            let header = if row.is_empty() {
                0
            } else {
                rows::HEADER_WORDS
            };
            assert_eq!(w + header, words[tile], "tile {tile}");
            assert!(row.windows(2).all(|e| e[0].cycle() <= e[1].cycle()));
        }
    }
}

#[test]
fn relocated_schedules_pass_the_full_verifier() {
    let t = Arc::new(target64());
    let phases = [
        patterns::random(64, 5, 120, 4, 8),
        patterns::grid_allgather(8, 8, 64, 96),
        repeated_sources(64, 5),
    ];
    for p in &phases {
        let mut sched = ExchangeScheduler::new(t.clone());
        let first = sched.schedule(p).unwrap();
        for delta in [4, 1000, 40_000] {
            let moved = patterns::relocated(p, delta);
            let again = sched.schedule(&moved).unwrap();
            assert_eq!(again.kind, ScheduleKind::Reused);
            assert_eq!(again.horizon, first.horizon);
            assert_eq!(verify(&moved, &again, &t), Ok(()));
            assert_eq!(again.rows, rows::row_stats(&moved, &again.fragments, &t));
        }
        assert_eq!(sched.stats().rejected, 0);
    }
}

#[test]
fn schedule_memo_all_matches_schedule_memo_one_by_one() {
    use super::scheduler::Memo;
    let t = Arc::new(target64());
    let a = patterns::random(64, 3, 90, 4, 21);
    let b = patterns::all_to_all(64, 8, 64);
    let c = patterns::grid_allgather(8, 8, 64, 96);
    let phases = vec![
        a.clone(),
        b.clone(),
        patterns::relocated(&a, 512),
        a.clone(),                             // exact repeat: the memo answers
        Phase::new(vec![uni(0, 0, 8, 99, 0)]), // invalid: tile 99
        c.clone(),
        patterns::relocated(&b, 4),
        patterns::relocated(&a, 512), // repeat of a relocation
        patterns::relocated(&c, 40),
        Phase::new(vec![uni(0, 0, 8, 99, 0)]), // invalid again
        b.clone(),
    ];
    let one_by_one = |memo: &Memo, list: &[Phase], s: &mut ExchangeScheduler| {
        list.iter()
            .map(|p| s.schedule_memo_in(memo, p))
            .collect::<Vec<_>>()
    };
    let seq_memo = Memo::default();
    let mut seq = ExchangeScheduler::new(t.clone());
    let sequential = one_by_one(&seq_memo, &phases, &mut seq);
    let flags: Vec<_> = sequential
        .iter()
        .map(|r| r.as_ref().map(|(s, known)| (s.kind, *known)).ok())
        .collect();
    assert_eq!(flags[3], Some((flags[0].unwrap().0, true)));
    assert_eq!(flags[2], Some((ScheduleKind::Reused, false)));
    assert_eq!(flags[4], None);
    assert_eq!(flags[7], Some((ScheduleKind::Reused, true)));
    assert_eq!(flags[8], Some((ScheduleKind::Reused, false)));
    assert_eq!(flags[10], Some((flags[1].unwrap().0, true)));
    let plain = |r: &[Result<(Arc<Schedule>, bool), ScheduleError>]| {
        r.iter()
            .map(|x| {
                x.as_ref()
                    .map(|(s, k)| ((**s).clone(), *k))
                    .map_err(Clone::clone)
            })
            .collect::<Vec<_>>()
    };
    // Outside any pool (the fresh schedules start on the global pool as
    // the phases are queued), and on pools of 1, 2 and 4 threads (made
    // when the queue is answered).
    {
        let memo = Memo::default();
        let mut s = ExchangeScheduler::new(t.clone());
        let outside = s.schedule_memo_all_in(&memo, &phases);
        assert_eq!(plain(&outside), plain(&sequential), "global pool");
        assert_eq!(s.stats(), seq.stats(), "global pool");
    }
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        // One batch, and the same phases in two batches (a repeat and a
        // relocation in the second answered from the first's work).
        for split in [phases.len(), 5] {
            let memo = Memo::default();
            let mut s = ExchangeScheduler::new(t.clone());
            let mut batched = pool.install(|| s.schedule_memo_all_in(&memo, &phases[..split]));
            batched.extend(pool.install(|| s.schedule_memo_all_in(&memo, &phases[split..])));
            assert_eq!(
                plain(&batched),
                plain(&sequential),
                "{threads} threads, split {split}"
            );
            assert_eq!(s.stats(), seq.stats(), "{threads} threads, split {split}");
            // A later stage asking again is answered by the memo, alike.
            let again = pool.install(|| s.schedule_memo_all_in(&memo, &phases));
            let mut seq_again = ExchangeScheduler::new(t.clone());
            let expect = one_by_one(&seq_memo, &phases, &mut seq_again);
            assert_eq!(plain(&again), plain(&expect));
            assert_eq!(s.stats(), seq.stats());
        }
    }
}
