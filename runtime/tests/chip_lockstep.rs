//! The chip simulator against an independent oracle: the same tiles run
//! one cycle at a time in lockstep on one thread, with one shared list of
//! sends. Random exchange programs (streaming senders, receivers switching
//! senders at random cycles while their workers keep the barrel busy,
//! relays, occasional bad receives) must give identical memory, cycles
//! and first faults.

use std::collections::BTreeMap;

use ipu_isa::asm::assemble;
use ipu_isa::link::{link, LinkLayout, TileImage};
use ipu_runtime::chip::{Chip, ChipConfig, ChipFault, ChipOutcome};
use ipu_runtime::{ExchangePort, Fault, Outcome, Tile};
use ipu_target::Target;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const STREAMERS: u32 = 5;
const STREAM: u32 = 1200;

fn image(t: &Target, src: &str) -> TileImage {
    let a = assemble("lockstep.S", src, &BTreeMap::new()).unwrap_or_else(|e| panic!("{e}\n{src}"));
    link(
        &[("t", &a.object)],
        &LinkLayout::new(t.memory.base_address as u32, t.memory_end() as u32),
    )
    .unwrap()
}

fn program(tile: u32, tiles: u32, rng: &mut StdRng, bad: bool) -> String {
    if tile < STREAMERS {
        return format!(
            ".globl main\nmain: sync 1\n setzi $m2, 0x90000\n setzi $m5, {STREAM}\n rpt $m5, e\n send [$m2+=4]\ne: sync 1\n halt\n"
        );
    }
    let mut s = String::from(".globl main\nmain: sync 1\n setzi $m3, 0xA0000\n");
    let workers = rng.gen_range(0..=6);
    if workers > 0 {
        s += " setzi $m2, w\n";
        for _ in 0..workers {
            s += " run $m2, $m2\n";
        }
    }
    s += &format!(
        " setzi $m4, {}\n recvsel $m4\n delay 8\n",
        rng.gen_range(0..STREAMERS)
    );
    let bad_at = if bad {
        rng.gen_range(0..40)
    } else {
        usize::MAX
    };
    for k in 0..40 {
        if k == bad_at {
            // A sender that never sends.
            let quiet = rng.gen_range(STREAMERS..tiles);
            s += &format!(" setzi $m4, {quiet}\n recvsel $m4\n recv [$m3+=4]\n");
            continue;
        }
        match rng.gen_range(0..10) {
            0 => {
                s += &format!(
                    " setzi $m4, {}\n recvsel $m4\n",
                    rng.gen_range(0..STREAMERS)
                )
            }
            1..=4 => s += " recv [$m3+=4]\n",
            5 => s += " recv [$m3]\n add $m3, $m3, 4\n",
            6 => s += &format!(" delay {}\n", rng.gen_range(0..5)),
            7 => s += " send [$m3-4]\n",
            8 => s += " nop\n",
            _ => s += " recv [$m3+=4]\n send [$m3-4]\n",
        }
    }
    s += " sync 1\n halt\n";
    s += &format!(
        "w: setzi $m3, {}\n rpt $m3, we\n add $m4, $m4, 1\nwe: exit\n",
        rng.gen_range(1..30)
    );
    s
}

struct SeqPort<'a> {
    cfg: &'a ChipConfig,
    sent: &'a mut Vec<Vec<(u64, u32)>>,
}

impl ExchangePort for SeqPort<'_> {
    fn send(&mut self, tile: u32, cycle: u64, word: u32) -> Result<(), u32> {
        self.sent[tile as usize].push((cycle, word));
        Ok(())
    }
    fn receive(&mut self, tile: u32, cycle: u64, sender: u32) -> Option<u32> {
        let v = self.sent.get(sender as usize)?;
        let at = cycle.checked_sub(self.cfg.route.latency(sender, tile) as u64)?;
        v.iter().find(|w| w.0 == at).map(|w| w.1)
    }
}

/// Lockstep: every tile advances one cycle per step, in tile order.
fn oracle(t: &Target, images: &[TileImage], inputs: &[Vec<u8>]) -> (Vec<Tile>, Vec<Fault>) {
    let cfg = ChipConfig::from_target(t).unwrap();
    let mut tiles: Vec<Tile> = (0..cfg.tiles)
        .map(|id| {
            let mut tl = Tile::new(cfg.tile_config(id));
            tl.load(&images[id as usize]).unwrap();
            tl.write(0x90000, &inputs[id as usize]).unwrap();
            tl.start(images[id as usize].symbol("main").unwrap(), 0);
            tl
        })
        .collect();
    let mut sent = vec![Vec::new(); cfg.tiles as usize];
    let mut state: Vec<Option<Outcome>> = vec![None; tiles.len()];
    let mut c = 0u64;
    loop {
        let mut faults = Vec::new();
        for (k, tl) in tiles.iter_mut().enumerate() {
            if state[k].is_some() || tl.cycle() > c {
                continue;
            }
            let mut port = SeqPort {
                cfg: &cfg,
                sent: &mut sent,
            };
            match tl.run(&mut port, c + 1 - tl.cycle()) {
                Ok(Outcome::CycleLimit) => {}
                Ok(o) => state[k] = Some(o),
                Err(f) => faults.push(f),
            }
        }
        if !faults.is_empty() {
            return (tiles, faults);
        }
        if state.iter().all(|s| s.is_some()) {
            let syncs: Vec<u64> = state
                .iter()
                .filter_map(|s| match s {
                    Some(Outcome::Sync { cycle }) => Some(*cycle),
                    _ => None,
                })
                .collect();
            let Some(&last) = syncs.iter().max() else {
                return (tiles, Vec::new());
            };
            for (k, tl) in tiles.iter_mut().enumerate() {
                if let Some(Outcome::Sync { .. }) = state[k] {
                    tl.resume_from_sync(last + cfg.sync_cycles);
                    state[k] = None;
                }
            }
            c = last + cfg.sync_cycles;
            continue;
        }
        c += 1;
        assert!(c < 100_000, "oracle runaway");
    }
}

#[test]
fn chip_matches_a_lockstep_oracle_on_random_exchange_programs() {
    let t = Target::load("test16").unwrap();
    let (mut ok, mut faulted) = (0, 0);
    for seed in 0..24u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let bad = seed % 4 == 3;
        let images: Vec<TileImage> = (0..t.tiles())
            .map(|k| image(&t, &program(k, t.tiles(), &mut rng, bad)))
            .collect();
        let inputs: Vec<Vec<u8>> = (0..t.tiles())
            .map(|k| (0..STREAM * 4).map(|b| (b * 7 + k * 13) as u8).collect())
            .collect();
        let (otiles, ofaults) = oracle(&t, &images, &inputs);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut chip = Chip::new(&t).unwrap();
            for k in 0..t.tiles() {
                chip.load(k, &images[k as usize]).unwrap();
                chip.write(k, 0x90000, &inputs[k as usize]).unwrap();
                chip.start(k, images[k as usize].symbol("main").unwrap(), 0)
                    .unwrap();
            }
            let r = pool.install(|| chip.run(1_000_000));
            match r {
                Ok(rep) => {
                    assert!(
                        ofaults.is_empty(),
                        "seed {seed}: oracle faulted: {ofaults:?}"
                    );
                    assert_eq!(rep.outcome, ChipOutcome::Halted);
                    for (k, ot) in otiles.iter().enumerate() {
                        assert_eq!(rep.tiles[k].cycles, ot.cycle(), "seed {seed} tile {k}");
                        assert_eq!(rep.tiles[k].stats, ot.stats(), "seed {seed} tile {k}");
                        assert!(
                            chip.read(k as u32, 0xA0000, 1024).unwrap()
                                == ot.read(0xA0000, 1024).unwrap(),
                            "seed {seed} tile {k}: received words differ"
                        );
                        assert_eq!(chip.tile(k as u32).unwrap().m_regs(6), ot.m_regs(6));
                    }
                    if threads == 1 {
                        ok += 1;
                    }
                }
                Err(e) => {
                    let first = e.first().cycle();
                    let at_first: Vec<&ChipFault> =
                        e.faults.iter().filter(|f| f.cycle() == first).collect();
                    let want: Vec<ChipFault> =
                        ofaults.iter().cloned().map(ChipFault::Tile).collect();
                    let got: Vec<ChipFault> = at_first.into_iter().cloned().collect();
                    assert_eq!(got, want, "seed {seed}");
                    if threads == 1 {
                        faulted += 1;
                    }
                }
            }
        }
    }
    // The generator must exercise both paths.
    assert!(ok >= 10 && faulted >= 3, "ok {ok}, faulted {faulted}");
}
