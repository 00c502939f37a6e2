//! The fault suite: the MLP of `lit/Runtime/mlp-test16.mlir`, compiled for
//! test16 into a package, with one fault injected into the package (its
//! code, per-tile data or exchange rows, through the `ipu-package` model)
//! and run through the driver's device loader on the chip simulator. Each
//! run must fail its hardware test with a fault message naming the tile,
//! the cycle, the pc and the instruction; a truncated package is refused by
//! the reader. The clean package passes, so each failure is the injection's.

use std::collections::BTreeMap;

use ipu_driver::device::{run_on_chip, DeviceRun};
use ipu_isa::exchange_row::{decode_row, encode_row_bytes, RowEntry};
use ipu_package::{ElementType, Package};
use ipu_runtime::chip::ChipFault;
use ipu_runtime::{EngineRow, ExchangePort, Outcome, Tile, TileConfig};
use ipu_target::Target;

mod common;

const TARGET: &str = "test16";
/// Far more than the MLP needs (a few thousand cycles), so only a fault stops it.
const BUDGET: u64 = 2_000_000;

fn target() -> Target {
    Target::load(TARGET).unwrap()
}

/// The MLP compiled for test16, as `ipu-run` compiles an `.mlir` model.
fn mlp_package() -> Package {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../lit/Runtime/mlp-test16.mlir"
    ))
    .unwrap();
    common::compile("mlp-test16.mlir", &src, TARGET)
}

/// Inputs of small finite values for every input stream.
fn inputs(pkg: &Package) -> BTreeMap<String, Vec<u8>> {
    pkg.meta
        .streams
        .iter()
        .filter(|s| s.direction.to_device())
        .map(|s| {
            let n = s.host_byte_len().unwrap() as usize;
            let bytes = match s.host_type() {
                // 0.25 .. 1.0 in f16; in f8E4M3FN 0.25 .. 0.4375.
                ElementType::F16 => (0..n / 2)
                    .flat_map(|i| (0x3400u16 + (i as u16 % 7) * 0x100).to_le_bytes())
                    .collect(),
                _ => (0..n).map(|i| 0x28 + (i % 7) as u8).collect(),
            };
            (s.name.clone(), bytes)
        })
        .collect()
}

fn run(pkg: &Package) -> DeviceRun {
    run_on_chip(pkg, &target(), &inputs(pkg), "main", BUDGET).unwrap_or_else(|e| panic!("{e}"))
}

/// The package with tile `tile`'s image changed by `edit` (the tile gets
/// its own image group when its code changes).
fn edit_tile(pkg: &Package, tile: u32, edit: impl FnOnce(&mut ipu_package::TileImage)) -> Package {
    let n = pkg.meta.target.tile_count;
    let mut edit = Some(edit);
    let images = (0..n).filter_map(|t| {
        let mut img = pkg.tile_image(t)?;
        if t == tile {
            (edit.take().expect("one tile"))(&mut img);
        }
        Some((t, img))
    });
    let p = Package::from_tile_images(pkg.meta.clone(), images.collect::<Vec<_>>());
    p.validate()
        .unwrap_or_else(|e| panic!("the edited package is invalid: {e}"));
    p
}

/// The simulator's view of a package tile image.
fn link_image(img: &ipu_package::TileImage) -> ipu_isa::link::TileImage {
    let mut segments = vec![ipu_isa::link::Segment {
        address: img.code_address,
        bytes: img.code.clone(),
        exec: true,
    }];
    for d in &img.data {
        segments.push(ipu_isa::link::Segment {
            address: d.address,
            bytes: d.bytes.clone(),
            exec: false,
        });
    }
    let end = img.code_address + img.code.len() as u32;
    ipu_isa::link::TileImage {
        segments,
        symbols: img.entries.clone(),
        exec_ranges: std::iter::once(img.code_address..end).collect(),
        code_size: img.code.len() as u32,
    }
}

/// One exchange row of a tile: where it is, its entries, and the `exch`
/// that starts it.
#[derive(Clone, Debug)]
struct Row {
    addr: u32,
    entries: Vec<RowEntry>,
    exch_pc: u32,
}

/// Records the rows a tile starts.
#[derive(Default)]
struct RowPort(Vec<EngineRow>);

impl ExchangePort for RowPort {
    fn send(&mut self, _: u32, _: u64, _: u32) -> Result<(), u32> {
        Ok(())
    }
    fn receive(&mut self, _: u32, _: u64, _: u32) -> Option<u32> {
        None
    }
    fn start_row(&mut self, _: u32, row: EngineRow) {
        self.0.push(row);
    }
}

/// The exchange rows tile `tile` runs, in order: found by running the tile
/// alone, where the engine started each (the row is checked against what
/// the engine got, and the `exch` at its pc against the instruction).
fn rows_of(pkg: &Package, tile: u32) -> Vec<Row> {
    let img = pkg.tile_image(tile).unwrap();
    let cfg = TileConfig::from_target(&target())
        .unwrap()
        .with_tile_id(tile);
    let sync = cfg.sync_cycles;
    let mut t = Tile::new(cfg);
    let linked = link_image(&img);
    t.load(&linked).unwrap();
    t.start(img.entries["main"], 0);
    let mut port = RowPort::default();
    let mut rows = Vec::new();
    loop {
        match t.run(&mut port, BUDGET).unwrap() {
            Outcome::Sync { cycle } => {
                if let Some(r) = port.0.get(rows.len()) {
                    let word = u32::from_le_bytes(t.read(r.pc, 4).unwrap().try_into().unwrap());
                    let exch = ipu_isa::decode(word).unwrap();
                    assert_eq!(exch.op, ipu_isa::Op::Exch);
                    // (Not the `exch`'s register at the sync: a kernel's
                    // prologue may run after the `exch` and reuse it.)
                    let addr = r.addr;
                    let end = t.config().memory_end();
                    let bytes = t.read(addr, 4096.min((end - addr) as usize)).unwrap();
                    let entries = decode_row(bytes, addr).unwrap();
                    assert_eq!(
                        entries
                            .iter()
                            .filter(|e| matches!(e, RowEntry::Capture { .. }))
                            .count(),
                        r.captures.len(),
                        "the row at {addr:#x} is the one the engine ran"
                    );
                    rows.push(Row {
                        addr,
                        entries,
                        exch_pc: r.pc,
                    });
                }
                t.resume_from_sync(cycle + sync);
            }
            Outcome::Halted => return rows,
            Outcome::CycleLimit => panic!("tile {tile} does not halt alone"),
        }
    }
}

/// Writes `bytes` at `addr` of a tile image (inside one of its segments).
fn poke(img: &mut ipu_package::TileImage, addr: u32, bytes: &[u8]) {
    if addr >= img.code_address && addr < img.code_address + img.code.len() as u32 {
        let o = (addr - img.code_address) as usize;
        img.code[o..o + bytes.len()].copy_from_slice(bytes);
        return;
    }
    for d in &mut img.data {
        if addr >= d.address && (addr - d.address) as usize + bytes.len() <= d.bytes.len() {
            let o = (addr - d.address) as usize;
            d.bytes[o..o + bytes.len()].copy_from_slice(bytes);
            return;
        }
    }
    panic!("{addr:#x} is in no segment of the image");
}

/// The first fault of a failed run, and its message, which must name the
/// tile, the cycle, the pc and the instruction.
fn fault_of(r: &DeviceRun) -> (&ChipFault, String) {
    assert!(!r.hardware_pass(), "the injected fault went unnoticed");
    let f = r.faults.first().expect("a fault");
    let msg = f.to_string();
    let pc = f.pc().expect("a pc");
    assert!(msg.starts_with(&format!("tile {}, ", f.tile())), "{msg}");
    assert!(msg.contains(&format!(", cycle {}:", f.cycle())), "{msg}");
    assert!(msg.contains(&format!("pc {pc:#x}")), "{msg}");
    assert!(msg.ends_with("`)") && msg.contains("(in `"), "{msg}");
    (f, msg)
}

fn instruction_of(f: &ChipFault) -> &str {
    match f {
        ChipFault::Tile(t) => &t.instruction,
        ChipFault::TwoSenders { instruction, .. }
        | ChipFault::Capture { instruction, .. }
        | ChipFault::SyncNeverReached { instruction, .. } => instruction,
        ChipFault::Internal { .. } => "",
    }
}

/// Tiles that capture in their exchange rows, with the rows.
fn receiving_rows(pkg: &Package) -> Vec<(u32, usize, Row)> {
    let mut out = Vec::new();
    for tile in 0..pkg.meta.target.tile_count {
        for (k, row) in rows_of(pkg, tile).into_iter().enumerate() {
            if row
                .entries
                .iter()
                .any(|e| matches!(e, RowEntry::Capture { .. }))
            {
                out.push((tile, k, row));
            }
        }
    }
    out
}

#[test]
fn the_clean_package_passes() {
    let pkg = mlp_package();
    let r = run(&pkg);
    assert!(r.hardware_pass(), "{:?}", r.faults);
    assert!(!receiving_rows(&pkg).is_empty(), "the MLP exchanges data");
}

/// `(pc, instruction)` of every instruction word in a tile's code.
fn code_of(img: &ipu_package::TileImage) -> Vec<(u32, ipu_isa::Inst)> {
    img.code
        .chunks_exact(4)
        .enumerate()
        .filter_map(|(k, w)| {
            let i = ipu_isa::decode(u32::from_le_bytes([w[0], w[1], w[2], w[3]])).ok()?;
            Some((img.code_address + 4 * k as u32, i))
        })
        .collect()
}

fn word(op: ipu_isa::Op, ops: &[ipu_isa::Operand]) -> [u8; 4] {
    ipu_isa::encode(op, ops).unwrap().to_le_bytes()
}

/// Replaces the row at `row.addr` of `tile` by `entries` (no longer than
/// the original: rows are packed).
fn with_row(pkg: &Package, tile: u32, row: &Row, entries: &[RowEntry]) -> Package {
    let old = encode_row_bytes(&row.entries);
    let new = encode_row_bytes(entries);
    assert!(new.len() <= old.len(), "the edited row must fit in place");
    edit_tile(pkg, tile, |img| poke(img, row.addr, &new))
}

/// A capture before its data arrives: a receiving row's selects and
/// captures one cycle early, where the sender sent nothing.
#[test]
fn a_capture_before_the_data_arrives_is_a_fault() {
    let pkg = mlp_package();
    let t = target();
    // A row whose first capture's sender sends nothing one cycle before
    // the word the capture takes first.
    let (tile, row, sender, cap_addr) = receiving_rows(&pkg)
        .into_iter()
        .find_map(|(tile, k, row)| {
            let RowEntry::Select {
                cycle: sc,
                sender: Some(s),
            } = row
                .entries
                .iter()
                .find(|e| matches!(e, RowEntry::Select { .. }))?
            else {
                return None;
            };
            let (cc, addr) = row.entries.iter().find_map(|e| match e {
                RowEntry::Capture {
                    cycle,
                    addr,
                    partner: false,
                    ..
                } => Some((*cycle, *addr)),
                _ => None,
            })?;
            let lat = t.route_latency(*s, tile);
            let needed = (cc as i64) - 1 - lat as i64;
            let sends_then = rows_of(&pkg, *s).get(k)?.entries.iter().any(|e| match e {
                RowEntry::Send { cycle, len, .. } => {
                    (*cycle as i64..*cycle as i64 + len.div_ceil(4) as i64).contains(&needed)
                }
                _ => false,
            });
            (*sc >= 1 && cc >= 1 && !sends_then).then(|| (tile, row.clone(), *s, addr))
        })
        .expect("a receiving row to move");
    let mut entries: Vec<RowEntry> = row
        .entries
        .iter()
        .map(|e| match *e {
            RowEntry::Select { cycle, sender } => RowEntry::Select {
                cycle: cycle - 1,
                sender,
            },
            RowEntry::Capture {
                cycle,
                addr,
                len,
                partner,
            } => RowEntry::Capture {
                cycle: cycle - 1,
                addr,
                len,
                partner,
            },
            e => e,
        })
        .collect();
    entries.sort_by_key(|e| e.cycle());
    let r = run(&with_row(&pkg, tile, &row, &entries));
    let (f, msg) = fault_of(&r);
    let ChipFault::Capture {
        tile: ft,
        sender: fs,
        pc,
        addr,
        ..
    } = f
    else {
        panic!("{msg}")
    };
    // The moved capture: its sender sent nothing for its first word.
    assert_eq!(
        (*ft, *fs, *pc, *addr),
        (tile, Some(sender), row.exch_pc, cap_addr),
        "{msg}"
    );
    assert_eq!(instruction_of(f), "exch $m0", "{msg}");
    assert!(
        msg.contains(&format!("finds no word from tile {sender}")),
        "{msg}"
    );
}

/// Two senders on one receiver in one cycle: a row's second select moved
/// to the cycle of its first, while a capture takes a word then.
#[test]
fn two_senders_on_one_receiver_in_one_cycle_is_a_fault() {
    let pkg = mlp_package();
    let (tile, row) = receiving_rows(&pkg)
        .into_iter()
        .find(|(_, _, r)| {
            r.entries
                .iter()
                .filter(|e| matches!(e, RowEntry::Select { .. }))
                .count()
                >= 2
        })
        .map(|(t, _, r)| (t, r))
        .expect("a row that switches senders");
    let selects: Vec<(u32, u32)> = row
        .entries
        .iter()
        .filter_map(|e| match e {
            RowEntry::Select {
                cycle,
                sender: Some(s),
            } => Some((*cycle, *s)),
            _ => None,
        })
        .collect();
    let (first_cycle, first) = selects[0];
    let (_, second) = selects[1];
    let mut seen = 0;
    let mut entries: Vec<RowEntry> = row
        .entries
        .iter()
        .map(|e| match *e {
            RowEntry::Select { sender, .. } => {
                seen += 1;
                let cycle = if seen == 2 { first_cycle } else { e.cycle() };
                RowEntry::Select { cycle, sender }
            }
            e => e,
        })
        .collect();
    // The second select right after the first (cycle order kept).
    entries.sort_by_key(|e| e.cycle());
    let r = run(&with_row(&pkg, tile, &row, &entries));
    let (f, msg) = fault_of(&r);
    let ChipFault::TwoSenders {
        receiver,
        first: a,
        second: b,
        pc,
        ..
    } = f
    else {
        panic!("{msg}")
    };
    assert_eq!(
        (*receiver, *a, *b, *pc),
        (tile, first, second, row.exch_pc),
        "{msg}"
    );
    assert_eq!(instruction_of(f), "exch $m0");
    assert!(
        msg.contains(&format!("senders {first} and {second}")),
        "{msg}"
    );
}

/// A corrupted exchange row: an entry of the invalid kind 3, refused when
/// its `exch` issues.
#[test]
fn a_corrupted_exchange_row_is_a_fault() {
    let pkg = mlp_package();
    let (tile, _, row) = receiving_rows(&pkg).into_iter().next().unwrap();
    let mut bytes = encode_row_bytes(&row.entries);
    // Word 1 is the first entry's kind << 30 | cycle.
    bytes[7] |= 0xC0;
    let r = run(&edit_tile(&pkg, tile, |img| poke(img, row.addr, &bytes)));
    let (f, msg) = fault_of(&r);
    let ChipFault::Tile(tf) = f else {
        panic!("{msg}")
    };
    assert_eq!((tf.tile, tf.pc), (tile, row.exch_pc), "{msg}");
    assert_eq!(tf.instruction, "exch $m0");
    assert!(
        msg.contains("bad exchange row") && msg.contains("kind 3"),
        "{msg}"
    );
}

/// A load and a store out of range, in the middle of the run: a
/// `ld32 $m0, [$m1]` of a pointer-table slot after the first sync made to
/// read, or write, 2 KiB below it, below the memory base.
#[test]
fn a_load_or_store_out_of_range_is_a_fault() {
    use ipu_isa::{Op, Operand};
    let pkg = mlp_package();
    let tile = 5;
    let img = pkg.tile_image(tile).unwrap();
    let code = code_of(&img);
    let first_sync = code
        .iter()
        .position(|(_, i)| i.op == Op::Sync && i.imm == 1)
        .unwrap();
    let (at, slot) = code[first_sync..]
        .windows(2)
        .find_map(|w| match (w[0].1, w[1].1) {
            (s, l)
                if s.op == Op::SetziM
                    && l.op == Op::Ld32M
                    && l.regs[1] == s.regs[0]
                    && l.imm == 0 =>
            {
                Some((w[1].0, s.imm as u32))
            }
            _ => None,
        })
        .expect("a pointer-table load after the first sync");
    let base = pkg.meta.target.memory_base;
    assert!(
        slot - 2048 < base,
        "2 KiB below the slot is below the memory base"
    );
    let mem = Operand::Mem {
        base: 1,
        offset: -2048,
        post: false,
    };
    for (op, text) in [
        (Op::St32M, "st32 $m0, [$m1-2048]"),
        (Op::Ld32M, "ld32 $m0, [$m1-2048]"),
    ] {
        let w = word(op, &[Operand::Reg(0), mem]);
        let r = run(&edit_tile(&pkg, tile, |img| poke(img, at, &w)));
        let (f, msg) = fault_of(&r);
        let ChipFault::Tile(tf) = f else {
            panic!("{msg}")
        };
        assert_eq!(
            (tf.tile, tf.pc, tf.instruction.as_str()),
            (tile, at, text),
            "{msg}"
        );
        assert!(
            msg.contains(&format!(
                "address {:#x} (+4) is outside tile memory",
                slot - 2048
            )),
            "{msg}"
        );
        assert!(tf.cycle > 0, "mid-run: {msg}");
    }
}

/// A sync never reached: one tile's `sync 1` (one not waiting for its
/// exchange engine) replaced by a `halt`, by a branch to itself, and by a
/// two-instruction loop. The others wait at that sync; the run stops with
/// a fault naming the tile and them, never hangs.
#[test]
fn a_sync_never_reached_is_a_fault() {
    use ipu_isa::{Op, Operand};
    let pkg = mlp_package();
    let tile = 6;
    let img = pkg.tile_image(tile).unwrap();
    let code = code_of(&img);
    // A compute superstep's sync: no `exch` since the sync before it (an
    // exchange's `exch` may be followed by a kernel's prologue call).
    let is_sync = |k: usize| code[k].1.op == Op::Sync && code[k].1.imm == 1;
    let syncs: Vec<usize> = (0..code.len())
        .filter(|&k| is_sync(k))
        .filter(|&k| {
            !code[..k]
                .iter()
                .rev()
                .take_while(|(_, i)| !(i.op == Op::Sync && i.imm == 1))
                .any(|(_, i)| i.op == Op::Exch)
        })
        .collect();
    let k = syncs[0];
    let (at, next) = (code[k].0, code[k + 1].0);
    let index = code[..k]
        .iter()
        .filter(|(_, i)| i.op == Op::Sync && i.imm == 1)
        .count();
    // halt: the others wait at sync `index`, which tile 6 never reaches.
    let halt = word(Op::Halt, &[]);
    let r = run(&edit_tile(&pkg, tile, |img| poke(img, at, &halt)));
    let (f, msg) = fault_of(&r);
    let ChipFault::SyncNeverReached {
        tile: ft,
        sync,
        halted,
        waiting,
        pc,
        ..
    } = f
    else {
        panic!("{msg}")
    };
    assert_eq!((*ft, *sync, *halted, *pc), (tile, index, true, at), "{msg}");
    assert_eq!(instruction_of(f), "halt");
    assert_eq!(waiting.len(), 15, "{msg}");
    assert!(
        msg.contains("never reaches the chip-wide sync that ends superstep")
            && msg.contains("tiles 0-5, 7-15 wait"),
        "{msg}"
    );
    // br .: the tile can never leave; found when it issues.
    let spin = word(Op::Br, &[Operand::Imm(0)]);
    let r = run(&edit_tile(&pkg, tile, |img| poke(img, at, &spin)));
    let (f, msg) = fault_of(&r);
    let ChipFault::Tile(tf) = f else {
        panic!("{msg}")
    };
    assert_eq!(
        (tf.tile, tf.pc, tf.instruction.as_str()),
        (tile, at, "br . + 0"),
        "{msg}"
    );
    assert!(msg.contains("branches to itself"), "{msg}");
    // A loop of two instructions (`nop`, then `br` back to it) runs until
    // the cycle budget: then it is named, with where it stands.
    let nop = word(Op::Nop, &[]);
    let back = word(Op::Br, &[Operand::Imm(-1)]);
    let r = run(&edit_tile(&pkg, tile, |img| {
        poke(img, at, &nop);
        poke(img, next, &back);
    }));
    let (f, msg) = fault_of(&r);
    let ChipFault::SyncNeverReached {
        tile: ft,
        halted,
        pc,
        cycle,
        ..
    } = f
    else {
        panic!("{msg}")
    };
    assert_eq!((*ft, *halted), (tile, false), "{msg}");
    assert!([at, next].contains(pc), "{msg}");
    assert!(*cycle >= BUDGET, "{msg}");
    assert!(
        msg.contains("still running when the cycle budget ran out"),
        "{msg}"
    );
}

/// A truncated image: a package file cut short is refused by the reader
/// with a clear error; a tile's code cut short is refused by validation
/// when it breaks an instruction word, and otherwise runs off its end: a
/// fault naming the tile, cycle and pc.
#[test]
fn a_truncated_image_is_refused_or_faults() {
    let pkg = mlp_package();
    let bytes = pkg.to_elf_bytes();
    assert!(Package::from_elf_bytes(&bytes).is_ok());
    for cut in [bytes.len() - 1, bytes.len() / 2, 200, 10] {
        let e = Package::from_elf_bytes(&bytes[..cut])
            .unwrap_err()
            .to_string();
        // The section table sits at the end: any cut loses it.
        let expected = if cut < 64 {
            "file is too short to be a package"
        } else {
            "malformed ELF structure: section table"
        };
        assert!(e.starts_with(expected), "cut at {cut}: {e}");
    }
    // The code of tile 4 up to (not including) its first `sync 1` or call
    // (a kernel's prologue may be called before the first sync).
    let tile = 4;
    let img = pkg.tile_image(tile).unwrap();
    let code = code_of(&img);
    let k = code
        .iter()
        .position(|(_, i)| matches!(i.op, ipu_isa::Op::Sync | ipu_isa::Op::Call))
        .unwrap();
    let end = code[k].0;
    let short = edit_tile(&pkg, tile, |img| {
        img.code.truncate((end - img.code_address) as usize);
    });
    let r = run(&short);
    let (f, msg) = fault_of(&r);
    let ChipFault::Tile(tf) = f else {
        panic!("{msg}")
    };
    assert_eq!((tf.tile, tf.pc), (tile, end), "{msg}");
    assert!(msg.contains("not in the executable code"), "{msg}");
}
