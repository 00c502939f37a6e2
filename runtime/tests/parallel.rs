//! Tiles are independent values: many run in parallel on rayon threads, and
//! two tiles exchange words through `ExchangePort` the way the chip
//! simulator will drive them (a send pass filling outboxes, then a receive
//! pass served from them).

mod common;

use std::collections::{BTreeMap, HashMap};

use common::*;
use ipu_runtime::{ExchangePort, Outcome, Tile};
use rayon::prelude::*;

fn assert_send<T: Send>() {}

#[test]
fn tiles_run_in_parallel() {
    assert_send::<Tile>();
    let img = image(
        ".globl main\nmain: gettile $m1\n setzi $m2, 0\n setzi $m3, 1000\n rpt $m3, e\n add $m2, $m2, $m1\ne: setzi $m4, 0x80000\n st32 $m2, [$m4]\n halt\n",
        &[],
    );
    let tiles: Vec<Tile> = (0..64u32)
        .into_par_iter()
        .map(|id| {
            let mut t = Tile::new(config().with_tile_id(id));
            t.load(&img).unwrap();
            t.start(img.symbol("main").unwrap(), 0);
            assert_eq!(
                t.run_to_halt(&mut ipu_runtime::NoExchange, 1_000_000)
                    .unwrap(),
                Outcome::Halted
            );
            t
        })
        .collect();
    for (id, t) in tiles.iter().enumerate() {
        assert_eq!(rd32(t, 0x80000), 1000 * id as u32);
    }
}

/// Records sends per cycle; serves receives from another tile's outbox.
struct Outbox {
    sent: BTreeMap<u64, u32>,
    inbox: HashMap<u32, BTreeMap<u64, u32>>,
    latency: u64,
}

impl ExchangePort for Outbox {
    fn send(&mut self, _tile: u32, cycle: u64, word: u32) -> Result<(), u32> {
        self.sent.insert(cycle, word);
        Ok(())
    }
    fn receive(&mut self, _tile: u32, cycle: u64, sender: u32) -> Option<u32> {
        self.inbox
            .get(&sender)?
            .get(&(cycle.checked_sub(self.latency)?))
            .copied()
    }
}

#[test]
fn two_tiles_exchange_after_a_sync() {
    // Tile 0 sends four words in consecutive cycles after the sync; tile 1
    // selects tile 0 and receives them `latency` cycles later.
    let src = ".globl main\nmain: sync 1\n gettile $m1\n brnz $m1, rx\n setzi $m2, 0x80000\n send [$m2+=4]\n send [$m2+=4]\n send [$m2+=4]\n send [$m2+=4]\n halt\n\
               rx: setzi $m3, 0\n recvsel $m3\n setzi $m2, 0x90000\n delay 3\n recv [$m2+=4]\n recv [$m2+=4]\n recv [$m2+=4]\n recv [$m2+=4]\n halt\n";
    let img = image(src, &[]);
    let mut tiles: Vec<Tile> = (0..2u32)
        .map(|id| {
            let mut t = Tile::new(config().with_tile_id(id));
            t.load(&img).unwrap();
            t.write(0x80000, &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0])
                .unwrap();
            t.start(img.symbol("main").unwrap(), 0);
            t
        })
        .collect();
    // Compute phase: every tile runs to the sync; the chip resumes all at the latest cycle + 90.
    let mut ports: Vec<Outbox> = (0..2)
        .map(|_| Outbox {
            sent: BTreeMap::new(),
            inbox: HashMap::new(),
            latency: 6,
        })
        .collect();
    let cycles: Vec<u64> = tiles
        .par_iter_mut()
        .zip(ports.par_iter_mut())
        .map(|(t, p)| match t.run(p, 1_000_000).unwrap() {
            Outcome::Sync { cycle } => cycle,
            o => panic!("{o:?}"),
        })
        .collect();
    let resume = cycles.iter().max().unwrap() + 90;
    // Exchange phase, pass 1: the sender runs and fills its outbox.
    tiles[0].resume_from_sync(resume);
    assert_eq!(
        tiles[0].run_to_halt(&mut ports[0], 1_000).unwrap(),
        Outcome::Halted
    );
    assert_eq!(ports[0].sent.len(), 4);
    let first = *ports[0].sent.keys().next().unwrap();
    assert_eq!(
        ports[0].sent.keys().copied().collect::<Vec<_>>(),
        (first..first + 4).collect::<Vec<_>>(),
        "one word per cycle"
    );
    // Pass 2: the receiver is served from the sender's outbox.
    let sent = ports[0].sent.clone();
    ports[1].inbox.insert(0, sent);
    tiles[1].resume_from_sync(resume);
    assert_eq!(
        tiles[1].run_to_halt(&mut ports[1], 1_000).unwrap(),
        Outcome::Halted,
        "received at the compiler-fixed cycles"
    );
    for k in 0..4 {
        assert_eq!(rd32(&tiles[1], 0x90000 + 4 * k), k + 1);
    }
    // A receiver scheduled too early finds no word: a fault naming tile 1.
    let mut early = Tile::new(config().with_tile_id(1));
    let img2 = image(&src.replace(" delay 3\n", ""), &[]);
    early.load(&img2).unwrap();
    early.start(img2.symbol("main").unwrap(), 0);
    let mut p = Outbox {
        sent: BTreeMap::new(),
        inbox: HashMap::new(),
        latency: 6,
    };
    assert!(matches!(
        early.run(&mut p, 1_000_000).unwrap(),
        Outcome::Sync { .. }
    ));
    p.inbox.insert(0, ports[0].sent.clone());
    early.resume_from_sync(resume);
    let f = early.run_to_halt(&mut p, 1_000).unwrap_err();
    assert_eq!(f.tile, 1);
    assert!(
        matches!(f.kind, ipu_runtime::FaultKind::NoData { sender: 0 }),
        "{f}"
    );
}
