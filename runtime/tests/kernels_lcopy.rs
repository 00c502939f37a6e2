//! The local-copy kernel (`lcopy.S`) on many stepped groups of transfers:
//! every byte it must copy is copied, no other byte changes, and its cycle
//! formula (`LocalCopy::cost_spec`) tracks the simulator.

mod common;

use std::collections::BTreeMap;

use common::{config, CODE, DATA, STATE};
use ipu_isa::asm::assemble;
use ipu_isa::kernels::{assemble_kernel, LocalCopy, RecordWord};
use ipu_isa::link::{link, LinkLayout};
use ipu_runtime::{NoExchange, Outcome, Tile};
use rand::{Rng, SeedableRng};

/// Bytes of the source and destination areas (destination right after).
const AREA: u32 = 0x8000;

/// One group: (count, len, src_step, dst_step, repeat, rsrc_step,
/// rdst_step, src_off, dst_off), offsets from the areas' middles so that
/// negative steps stay inside.
type Group = (i64, i64, i64, i64, i64, i64, i64, i64, i64);

struct CopyRun {
    cycles: u64,
    formula: i64,
}

/// Runs one group on random bytes and checks the destination byte for byte.
fn check_copy(g: Group, seed: u64) -> CopyRun {
    let (count, len, ss, ds, repeat, rss, rds, so, doff) = g;
    let lc = LocalCopy::new(count, len, ss, ds, repeat, rss, rds, (so, doff))
        .unwrap_or_else(|| panic!("{g:?} fits the record"));
    let params = lc.spec().params;
    let kernel = assemble_kernel("lcopy", &params).unwrap_or_else(|e| panic!("{e}"));
    let cost = assemble_kernel("lcopy", &lc.cost_spec().params).unwrap_or_else(|e| panic!("{e}"));
    let harness = assemble(
        "harness.S",
        &format!(
            ".globl main\nmain: setzi $m1, {STATE}\n mov $m0, $m1\n call $m15, lcopy\n halt\n"
        ),
        &BTreeMap::new(),
    )
    .unwrap();
    let cfg = config();
    let img = link(
        &[("main", &harness.object), ("lcopy", &kernel.object)],
        &LinkLayout::new(CODE, cfg.memory_end()),
    )
    .unwrap();
    let mut t = Tile::new(cfg);
    t.load(&img).unwrap();
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let src_area: Vec<u8> = (0..AREA).map(|_| r.gen()).collect();
    let dst_area: Vec<u8> = (0..AREA).map(|_| r.gen()).collect();
    let (src_base, dst_base) = (DATA, DATA + AREA);
    t.write(src_base, &src_area).unwrap();
    t.write(dst_base, &dst_area).unwrap();
    let mid = i64::from(AREA / 2);
    let (src0, dst0) = (mid + so, mid + doff);
    let mut want = dst_area.clone();
    for row in 0..repeat {
        for c in 0..count {
            let s = (src0 + row * rss + c * ss) as usize;
            let d = (dst0 + row * rds + c * ds) as usize;
            want[d..d + len as usize].copy_from_slice(&src_area[s..s + len as usize]);
        }
    }
    let mut state = Vec::new();
    let (src_addr, dst_addr) = (i64::from(src_base) + src0, i64::from(dst_base) + dst0);
    for w in lc.record() {
        let v = match w {
            RecordWord::Src(rel) => (src_addr + rel) as u32,
            RecordWord::Dst(rel) => (dst_addr + rel) as u32,
            RecordWord::Val(v) => v,
        };
        state.extend(v.to_le_bytes());
    }
    t.write(STATE, &state).unwrap();
    t.start(img.symbol("main").unwrap(), 0);
    let o = t
        .run_to_halt(&mut NoExchange, 100_000_000)
        .unwrap_or_else(|f| panic!("{g:?}: {f}"));
    assert_eq!(o, Outcome::Halted);
    let got = t.read(dst_base, AREA as usize).unwrap().to_vec();
    if let Some(i) = (0..AREA as usize).find(|&i| got[i] != want[i]) {
        panic!(
            "{g:?} (align {}, parts {:?}): destination byte {} is {:#x}, want {:#x}",
            lc.align,
            lc.parts(),
            i as i64 - dst0,
            got[i],
            want[i]
        );
    }
    assert_eq!(
        t.read(src_base, AREA as usize).unwrap(),
        &src_area[..],
        "{g:?}: the source changed"
    );
    CopyRun {
        // The harness's own three issues are the caller's, as in a compiled program.
        cycles: t.cycle(),
        formula: cost.meta.cycles.expect("lcopy declares .cycles"),
    }
}

/// The shapes the exchange stage makes: contiguous blocks, row pieces,
/// element-wise transpositions (2-byte elements stepping by a row), negative
/// steps, odd lengths and offsets, few transfers of many words.
fn groups() -> Vec<Group> {
    let mut g = vec![
        (1, 8, 0, 0, 1, 0, 0, 0, 0),
        (1, 4096, 0, 0, 1, 0, 0, -2048, 0),
        (1, 1000, 0, 0, 1, 0, 0, 4, 12),
        (1, 37, 0, 0, 1, 0, 0, 3, 1),
        (3, 256, 512, 256, 1, 0, 0, 0, 0),
        (7, 96, 128, 96, 1, 0, 0, 0, 0),
        (13, 512, 512, 1024, 1, 0, 0, -4096, -4096),
        (64, 64, 128, 64, 1, 0, 0, 0, 0),
        (32, 32, 32, 64, 4, 1024, 2048, -4096, -4096),
        (5, 6, 10, 6, 3, 2, 30, 0, 0),
        (100, 1, 3, 1, 1, 0, 0, 0, 0),
        (16, 16, -32, 16, 1, 0, 0, 0, -256),
        // One word per transfer, neither side stepping by one word.
        (20, 2, 6, 10, 7, 2, 200, -1024, -1024),
        (12, 8, -16, 24, 9, 8, 288, 0, -2048),
        (40, 1, 3, 5, 1, 0, 0, 1, 3),
    ];
    // 2-byte elements: a 32 x 24 block transposed (count along a source
    // column, repeated over the columns), and the reverse walk.
    for (rows, cols) in [(32i64, 24i64), (8, 8), (64, 16), (5, 3)] {
        g.push((rows, 2, 2 * cols, 2, cols, 2, 2 * rows, -1024, -1024));
        g.push((cols, 2, 2, 2 * rows, rows, 2 * cols, 2, -1024, -1024));
    }
    // Transpositions whose 2 x 2 blocks are not 4-aligned: one element at a time.
    g.push((8, 2, 16, 2, 8, 2, 16, -1022, -1024));
    g.push((8, 2, 16, 2, 8, 2, 18, -1024, -1024));
    // 4- and 8-byte elements and rows.
    for e in [4i64, 8] {
        g.push((24, e, 24 * e, e, 16, e, 24 * e, -2048, -2048));
        g.push((16, 3 * e, 8 * e, 3 * e, 5, 128 * e, 48 * e, -2048, -2048));
    }
    g
}

#[test]
fn lcopy_copies_every_group_exactly() {
    for (i, g) in groups().into_iter().enumerate() {
        check_copy(g, 7000 + i as u64);
    }
}

#[test]
fn lcopy_cycle_formula_tracks_the_simulator() {
    let mut off = Vec::new();
    for (i, g) in groups().into_iter().enumerate() {
        let run = check_copy(g, 9000 + i as u64);
        let ratio = run.formula as f64 / run.cycles as f64;
        if !(0.95..=1.05).contains(&ratio) {
            off.push(format!(
                "{g:?}: simulated {}, formula {}",
                run.cycles, run.formula
            ));
        }
    }
    assert!(
        off.is_empty(),
        "formula off by more than 5%:\n{}",
        off.join("\n")
    );
}

/// A group whose figures do not fit the record is refused, not wrapped.
#[test]
fn lcopy_refuses_groups_that_do_not_fit() {
    assert!(LocalCopy::new(0, 8, 8, 8, 1, 0, 0, (0, 0)).is_none());
    assert!(LocalCopy::new(1, 8, 8, 8, 1, 1 << 31, 0, (0, 0)).is_none());
    assert!(LocalCopy::new(1 << 20, 8, 8, 8, 1 << 20, 0, 0, (0, 0)).is_none());
    let lc = LocalCopy::new(4, 6, 6, 6, 1, 0, 0, (2, 0)).unwrap();
    assert_eq!((lc.align, lc.words, lc.pairs), (2, 3, false));
    // A 2-byte transposition goes by 2 x 2 blocks, either way round.
    let t = LocalCopy::new(16, 2, 32, 2, 16, 2, 32, (0, 0)).unwrap();
    assert_eq!((t.pairs, t.count, t.repeat), (true, 8, 8));
    let t = LocalCopy::new(16, 2, 2, 32, 16, 32, 2, (0, 0)).unwrap();
    assert_eq!((t.pairs, t.count, t.repeat), (true, 8, 8));
}
