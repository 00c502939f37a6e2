//! The second half of the code generator: storage placement, the
//! supervisor programs and their linking, the per-tile tables (kernel
//! records and exchange rows), host stream layouts and the package.

use super::memory::{self, BufferFacts, Category, TableLayout};
use super::storage::place;
use super::streams::Addresses;
use super::{
    timed_phase, Call, CodeSummary, Kernel, MemoryMap, Plan, Stats, StreamSpec, Summary, TileWork,
    Word,
};
use ipu_exchange_schedule::RowEntry;
use ipu_ir::{Context, Diagnostic, Op};
use ipu_isa::kernels::KernelCache;
use ipu_isa::link::{link, LinkLayout};
use ipu_package::{
    DataSegment, Digest, EntryPoint, HostStream, Metadata, Package, Probe, StepSummary, TargetInfo,
    TileImage,
};
use ipu_program::records;
use ipu_target::Target;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Encodes one tile's row at absolute addresses: each entry's offset is
/// relative to the address `base` gives for its buffer.
pub(crate) fn encode_row(
    tile: u32,
    entries: &[(RowEntry, Option<u32>)],
    base: &dyn Fn(Option<u32>) -> u64,
) -> Result<Vec<u32>, String> {
    use ipu_isa::exchange_row::{RowEntry as Hw, MAX_CYCLE};
    // A value saturated at u32::MAX (rows::sat) fails these checks too.
    let cycle = |c: u32| -> Result<u32, String> {
        if u64::from(c) > MAX_CYCLE {
            return Err(format!("cycle {c} of an exchange row does not fit 30 bits"));
        }
        Ok(c)
    };
    let addr = |a: u64| -> Result<u32, String> {
        match u32::try_from(a) {
            Ok(a) if a != u32::MAX => Ok(a),
            _ => Err(format!("address {a:#x} out of range")),
        }
    };
    let len = |l: u32| -> Result<u32, String> {
        if l == 0 || l >= 1 << 31 {
            return Err(format!("length {l} of an exchange row entry out of range"));
        }
        Ok(l)
    };
    let mut hw = Vec::with_capacity(entries.len());
    for &(e, buf) in entries {
        hw.push(match e {
            RowEntry::Select {
                cycle: c, sender, ..
            } => Hw::Select {
                cycle: cycle(c)?,
                sender: Some(sender),
            },
            RowEntry::Capture {
                cycle: c,
                port,
                offset,
                len: l,
            } => Hw::Capture {
                cycle: cycle(c)?,
                addr: addr(base(buf) + u64::from(offset))?,
                len: len(l)?,
                partner: port != tile,
            },
            RowEntry::Send {
                cycle: c,
                offset,
                len: l,
            } => Hw::Send {
                cycle: cycle(c)?,
                addr: addr(base(buf) + u64::from(offset))?,
                len: len(l)?,
            },
        });
    }
    Ok(ipu_isa::exchange_row::encode_row(&hw))
}

/// One tile's row, readably: `@cycle send 0xADDR N B`, `@cycle select tile S`,
/// `@cycle capture 0xADDR N B` (`from partner` for the partner's port).
fn describe_row(
    tile: u32,
    entries: &[(RowEntry, Option<u32>)],
    base: &dyn Fn(Option<u32>) -> u64,
) -> Vec<String> {
    entries
        .iter()
        .map(|&(e, buf)| match e {
            RowEntry::Send { cycle, offset, len } => {
                format!("@{cycle} send {:#x} {len} B", base(buf) + u64::from(offset))
            }
            RowEntry::Select { cycle, sender, .. } => format!("@{cycle} select tile {sender}"),
            RowEntry::Capture {
                cycle,
                port,
                offset,
                len,
            } => {
                let from = if port != tile { " from partner" } else { "" };
                format!(
                    "@{cycle} capture {:#x} {len} B{from}",
                    base(buf) + u64::from(offset)
                )
            }
        })
        .collect()
}

/// The name a call's kernel is linked under, and its entry symbol.
fn link_name(k: &Kernel) -> (String, &'static str) {
    match k {
        Kernel::Lib(spec) => (spec.name(), spec.entry),
        Kernel::Memcpy => ("main".to_string(), "memcpy"),
    }
}

/// A call run as a subroutine: its steps and the subroutine's number.
pub(crate) type Outlined = (std::ops::Range<usize>, usize);

/// Table slots a step takes: one per exchange, one per kernel call.
fn step_slots(step: &StepShape) -> u64 {
    match step {
        StepShape::Compute(calls) => calls.len() as u64,
        StepShape::Exchange(_) => 1,
    }
}

/// The most table slots a subroutine reaches from its frame's base: its
/// loads take a signed 15-bit byte offset.
const MAX_FRAME_SLOTS: u64 = 4000;

/// The calls run as subroutines: of each callee's calls, those whose steps
/// every tile runs as the callee's first call's (the same shape, so the
/// same table slots from the call's first), when there are two or more:
/// their code is emitted once per program and called with the call's base
/// in the table. Either every tile runs a call's steps as the subroutine or
/// none does, so each exchange of it starts at the same cycle on every
/// tile.
fn outlined_calls(shapes: &[Shape], calls: &[(std::ops::Range<usize>, u32)]) -> Vec<Outlined> {
    let mut distinct: Vec<&Shape> = shapes.iter().collect();
    distinct.sort();
    distinct.dedup();
    let mut out = Vec::new();
    let mut callees: Vec<u32> = calls.iter().map(|c| c.1).collect();
    callees.sort_unstable();
    callees.dedup();
    for callee in callees {
        let of: Vec<&std::ops::Range<usize>> = calls
            .iter()
            .filter(|c| c.1 == callee)
            .map(|c| &c.0)
            .collect();
        let first = of[0];
        let fits = distinct
            .iter()
            .all(|sh| sh[first.clone()].iter().map(step_slots).sum::<u64>() <= MAX_FRAME_SLOTS);
        // Work run ahead in the exchange before a call (a prologue or a
        // copy) would read the call's slots outside the subroutine.
        let clear = |r: &std::ops::Range<usize>| {
            r.start == 0
                || distinct
                    .iter()
                    .all(|sh| !matches!(&sh[r.start - 1], StepShape::Exchange(a) if !a.is_empty()))
        };
        let alike: Vec<&std::ops::Range<usize>> = of
            .iter()
            .copied()
            .filter(|r| {
                r.len() == first.len()
                    && clear(r)
                    && distinct
                        .iter()
                        .all(|sh| sh[(*r).clone()] == sh[first.clone()])
            })
            .collect();
        if fits && clear(first) && alike.len() >= 2 {
            let id = out.iter().map(|o: &Outlined| o.1 + 1).max().unwrap_or(0);
            out.extend(alike.into_iter().map(|r| (r.clone(), id)));
        }
    }
    out.sort_by_key(|o| o.0.start);
    out
}

/// Where a supervisor program finds a table slot: at its address, or (in
/// a subroutine) at its offset from the call's base, kept at `frame`.
#[derive(Clone, Copy)]
enum SlotAt<'a> {
    /// In the tile's table (at the symbol [`TABLE_SYMBOL`]).
    Table,
    /// In subroutine `.0`, whose record words `.1` patches.
    Frame(usize, &'a Patches),
}

impl SlotAt<'_> {
    /// Instructions loading slot `slot`'s pointer into `$m0`.
    fn load(self, slot: u64) -> String {
        match self {
            SlotAt::Table => {
                format!(
                    "    setzi $m1, {TABLE_SYMBOL}+{:#x}\n    ld32 $m0, [$m1+0]\n",
                    4 * slot
                )
            }
            SlotAt::Frame(..) => format!(
                "    setzi $m1, frame\n    ld32 $m1, [$m1+0]\n    ld32 $m0, [$m1+{}]\n",
                4 * slot
            ),
        }
    }

    /// Instructions loading the record of kernel-call slot `slot` into
    /// `$m0`: in a subroutine, a slot whose record names the call's own
    /// parameters points at the call's patch block (the shared record's
    /// address, then the words to write into it, in order).
    fn record(self, slot: u64) -> String {
        let mut s = self.load(slot);
        if let SlotAt::Frame(id, patches) = self {
            if let Some(words) = patches.get(&(id, slot)) {
                s.push_str("    ld32 $m2, [$m0+0]\n");
                for (i, w) in words.iter().enumerate() {
                    s.push_str(&format!(
                        "    ld32 $m3, [$m0+{}]\n    st32 $m3, [$m2+{}]\n",
                        4 * (i + 1),
                        4 * u64::from(*w)
                    ));
                }
                s.push_str("    mov $m0, $m2\n");
            }
        }
        s
    }
}

/// Appends the code of `steps` (the first numbered `first`), their slots
/// counted from `slot`.
fn steps_text(s: &mut String, steps: &[StepShape], first: usize, slot: &mut u64, at: SlotAt) {
    let call = |s: &mut String, slot: u64, c: &str| {
        s.push_str(&at.record(slot));
        s.push_str(&format!("    call $m15, {c}\n"));
    };
    for (i, step) in steps.iter().enumerate() {
        let i = first + i;
        match step {
            StepShape::Compute(calls) => {
                s.push_str(&format!("    # superstep {i}: compute\n"));
                for entry in calls {
                    // A call run during the phase before still has its slot here.
                    if let Some((c, pre)) = entry {
                        if let Some(p) = pre {
                            call(s, *slot, p);
                        }
                        call(s, *slot, c);
                    }
                    *slot += 1;
                }
            }
            StepShape::Exchange(ahead) => {
                s.push_str(&format!("    # superstep {i}: exchange\n"));
                s.push_str(&at.load(*slot));
                s.push_str("    exch $m0\n");
                *slot += 1;
                // The next superstep's calls start at the next slot.
                for (p, k) in ahead {
                    call(s, *slot + *k as u64, p);
                }
            }
        }
        s.push_str("    sync 1\n");
    }
}

/// Subroutine `id`, the steps `r` of a call: its code, and the table slots
/// of a call.
fn sub_text(
    steps: &[StepShape],
    r: &std::ops::Range<usize>,
    id: usize,
    patches: &Patches,
) -> (String, u64) {
    let mut rel = 0u64;
    let mut body = format!(
        "call_{id}:\n    setzi $m1, frame\n    st32 $m0, [$m1+0]\n    st32 $m15, [$m1+4]\n"
    );
    let at = SlotAt::Frame(id, patches);
    steps_text(&mut body, &steps[r.clone()], r.start, &mut rel, at);
    body.push_str("    setzi $m1, frame\n    ld32 $m15, [$m1+4]\n    jmp $m15\n");
    (body, rel)
}

/// The report's figures of each called function (`callees` by number):
/// its calls, its subroutine's code (the largest over the programs) and
/// what each call adds on the tile where that is most.
fn function_memory(
    codes: &[TileCode],
    calls: &[(std::ops::Range<usize>, u32)],
    callees: &[String],
    outlined: &[Outlined],
) -> Vec<memory::FunctionMemory> {
    let mut out = Vec::new();
    for (k, name) in callees.iter().enumerate() {
        let of: Vec<&std::ops::Range<usize>> = calls
            .iter()
            .filter(|c| c.1 as usize == k)
            .map(|c| &c.0)
            .collect();
        let Some(first) = of.first() else { continue };
        let sub = outlined.iter().find(|o| o.0 == **first).map(|o| o.1);
        let mut f = memory::FunctionMemory {
            name: name.clone(),
            calls: of.len(),
            outlined: outlined.iter().filter(|o| Some(o.1) == sub).count(),
            ..Default::default()
        };
        for (shape, patches) in codes {
            let slots: u64 = shape[(*first).clone()].iter().map(step_slots).sum();
            let mut per_call = 4 * slots;
            if let Some(id) = sub {
                let (body, _) = sub_text(shape, first, id, patches);
                // One 32-bit word per instruction line (not labels or comments).
                let words = body
                    .lines()
                    .filter(|l| l.starts_with("    ") && !l.trim_start().starts_with('#'))
                    .count() as u64;
                f.code_bytes = f.code_bytes.max(4 * words);
                let blocks = patches.range((id, 0)..=(id, u64::MAX));
                per_call += blocks.map(|(_, w)| 4 * (1 + w.len() as u64)).sum::<u64>();
            }
            f.per_call_bytes = f.per_call_bytes.max(per_call);
        }
        out.push(f);
    }
    out
}

/// Each parameter loaded from the host, its tensor's bytes against the
/// bytes its copies hold over the tiles.
fn weight_copies(streams: &[StreamSpec]) -> Vec<memory::WeightCopies> {
    streams
        .iter()
        .filter(|s| s.direction == ipu_package::Direction::Load)
        .map(|s| {
            let elems = |b: &ipu_program::geometry::Block| -> u64 {
                b.lo.iter()
                    .zip(&b.hi)
                    .map(|(l, h)| (h - l).max(0) as u64)
                    .product()
            };
            let eb = s.at.elem_bytes.max(0) as u64;
            memory::WeightCopies {
                name: s.name.clone(),
                bytes: elems(&s.at.whole) * eb,
                held: s.at.rects.iter().map(|r| elems(&r.0) * eb).sum(),
                widened: s.host_ty.is_some(),
            }
        })
        .collect()
}

/// The supervisor program of a tile: per superstep, its calls (each
/// loading its record pointer from the table; a call's split-off prologue
/// just before it, with the same record), or its exchange row and then the
/// prologues of the next superstep's calls that run ahead; then the
/// chip-wide sync. A call in `outlined` is a call of its subroutine with
/// the address of the call's first table slot (`$m0`), which the
/// subroutine keeps at `frame` beside its return address.
fn main_text(steps: &[StepShape], outlined: &[Outlined], patches: &Patches) -> String {
    let mut s = String::from(
        "# Generated by convert-exchange-to-machine: one superstep per sync.\n\
         .globl main\nmain:\n",
    );
    let mut subs: BTreeMap<usize, String> = BTreeMap::new();
    let mut slot = 0u64;
    let mut i = 0;
    while i < steps.len() {
        let Some((r, id)) = outlined.iter().find(|o| o.0.start == i) else {
            steps_text(&mut s, &steps[i..i + 1], i, &mut slot, SlotAt::Table);
            i += 1;
            continue;
        };
        s.push_str(&format!(
            "    # supersteps {} to {}: call_{id}\n    setzi $m0, {TABLE_SYMBOL}+{:#x}\n    call $m15, call_{id}\n",
            r.start,
            r.end - 1,
            4 * slot
        ));
        let (body, rel) = sub_text(steps, r, *id, patches);
        subs.entry(*id).or_insert(body);
        slot += rel;
        i = r.end;
    }
    s.push_str(
        "    halt\n\n\
         # Byte copy (record: src, dst, len) for operand runs that stay on the tile.\n\
         .globl memcpy\nmemcpy:\n\
         \x20   ld32 $m1, [$m0+0]\n    ld32 $m2, [$m0+4]\n    ld32 $m3, [$m0+8]\n\
         \x20   rpt $m3, memcpy_end\n    ld8 $m4, [$m1+=1]\n    st8 $m4, [$m2+=1]\n\
         memcpy_end:\n    jmp $m15\n",
    );
    if !subs.is_empty() {
        s.push_str(
            "\n# Calls run as subroutines: each call's table base and return address at frame.\n",
        );
        for body in subs.values() {
            s.push_str(body);
        }
        s.push_str("    .data\n    .align 8\nframe:\n    .word 0, 0\n");
    }
    s
}

/// A superstep of a tile program's shape.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum StepShape {
    /// Kernel calls (`<link name>.<entry>`), each with its prologue's when
    /// that runs just before it; `None` for a call run during the phase
    /// before.
    Compute(Vec<Option<Names>>),
    /// An exchange, then the calls that run whole in it and the prologues
    /// that run ahead of the next superstep's calls, each with its call's
    /// index there.
    Exchange(Vec<(Arc<str>, usize)>),
}

/// A kernel call's `<link name>.<entry>` and its prologue's, if any.
type Names = (Arc<str>, Option<Arc<str>>);

/// A tile program's shape: per superstep, its kernel calls or an exchange.
type Shape = Vec<StepShape>;
/// The record words a subroutine writes before a call (the words that name
/// a call's own parameters): per (subroutine, slot from the call's first),
/// the word indices.
type Patches = BTreeMap<(usize, u64), Vec<u16>>;
/// What a tile runs: its shape and the record words its subroutines patch.
type TileCode = (Shape, Patches);
/// A shape to link: its tiles and kernels.
type Linking<'a> = (
    &'a TileCode,
    &'a Vec<u32>,
    BTreeMap<String, ipu_isa::kernels::KernelSpec>,
);

/// A tile to encode: its number, work, shape and constant blocks.
type TileToEncode<'a> = (u32, &'a TileWork, &'a TileCode, Vec<(usize, Vec<u8>)>);

/// A memory layout (address, size, name per buffer) and its tiles and bytes used.
type Layouts = BTreeMap<Vec<(u64, u64, String)>, (Vec<u32>, u64)>;

/// Where a tile's data may start: after its code, pointer table, kernel
/// records and exchange rows (`program_end`), aligned for the widest load
/// (placement aligns buffers relative to it, so a 128-bit load of a buffer
/// is as aligned as with the region's own start).
pub(crate) fn data_base_of(target: &Target, program_end: u64) -> u64 {
    let m = &target.memory;
    let align = (u64::from(m.load_bits.max(m.interleaved_load_bits)) / 8).max(8);
    program_end.max(m.base_address).div_ceil(align) * align
}

/// Places every tile's buffers above its program (`program_end`, where
/// its code, records and rows end): `(tile, addresses, data bytes used)`.
fn place_tiles(
    cx: &Context,
    f: Op,
    target: &Target,
    tiles: &BTreeMap<u32, TileWork>,
    program_end: &BTreeMap<u32, u64>,
    facts: &[BufferFacts],
    steps: &[ipu_package::StepSummary],
) -> Result<(Addresses, BTreeMap<u32, u64>), Diagnostic> {
    let base = target.memory.base_address;
    let end = target.memory_end();
    // Each tile placed on its own; the first tile that does not fit is reported.
    let place_tile = |(&t, w): (&u32, &TileWork)| -> Result<(Vec<u64>, u64), Diagnostic> {
        let refuse =
            |why: &str| memory::does_not_fit(cx.op_loc(f), target, t, why, w, facts, steps);
        let data_base = data_base_of(target, program_end[&t]);
        let program = data_base - base;
        if data_base > end {
            return Err(refuse(&format!(
                "its code, kernel records and exchange rows need {program} bytes, more than its {} B of SRAM",
                target.sram_bytes()
            )));
        }
        let il = target
            .memory
            .interleaved_start
            .unwrap_or(data_base)
            .clamp(data_base, end);
        let (offs, used) = place(&w.bufs);
        let addrs: Vec<u64> = if il + used <= end {
            offs.iter().map(|o| il + o).collect()
        } else {
            // Split: what needs 128-bit loads above, the rest below.
            let pick = |want: bool| -> Vec<usize> {
                (0..w.bufs.len())
                    .filter(|&i| w.interleaved[i] == want)
                    .collect()
            };
            let (hi, lo) = (pick(true), pick(false));
            let sub = |ix: &[usize]| {
                let bs: Vec<_> = ix.iter().map(|&i| w.bufs[i].clone()).collect();
                place(&bs)
            };
            let ((ho, hu), (lo_off, lu)) = (sub(&hi), sub(&lo));
            // Else the rest also in the interleaved region's spare bytes.
            let shared = (il + hu <= end && data_base + lu > il).then(|| {
                let floors: Vec<u64> = w
                    .interleaved
                    .iter()
                    .map(|&i| if i { il - data_base } else { 0 })
                    .collect();
                super::storage::place_from(&w.bufs, &floors)
            });
            if let Some((offs, used)) = shared.filter(|s| data_base + s.1 <= end) {
                return Ok((offs.iter().map(|o| data_base + o).collect(), used));
            }
            if il + hu > end || data_base + lu > il {
                let why = if il + hu > end {
                    format!(
                        "the buffers its kernels read with 128-bit loads need {hu} bytes, but its interleaved region (above its code, records and rows) has {}",
                        end - il
                    )
                } else {
                    format!(
                        "its data needs {} bytes, but it has {} ({} B of SRAM less {program} B for its code, kernel records and exchange rows)",
                        hu + lu,
                        end - data_base,
                        target.sram_bytes()
                    )
                };
                return Err(refuse(&why));
            }
            let mut a = vec![0; w.bufs.len()];
            for (k, &i) in hi.iter().enumerate() {
                a[i] = il + ho[k];
            }
            for (k, &i) in lo.iter().enumerate() {
                a[i] = data_base + lo_off[k];
            }
            a
        };
        Ok((addrs, used))
    };
    let placed: Vec<_> = tiles
        .iter()
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(place_tile)
        .collect();
    let mut out = BTreeMap::new();
    let mut used_by = BTreeMap::new();
    for (&t, r) in tiles.keys().zip(placed) {
        let (addrs, used) = r?;
        used_by.insert(t, used);
        out.insert(t, addrs);
    }
    Ok((out, used_by))
}

/// Turns a planned program into the package.
pub(crate) fn build_package_from(
    cx: &Context,
    f: Op,
    target: &Arc<Target>,
    plan: Plan,
    readable_rows: bool,
) -> Result<(Package, Stats, Summary), Diagnostic> {
    let Plan {
        tiles,
        init,
        steps,
        streams,
        probes,
        facts,
        calls,
        callees,
    } = plan;
    let mut init_by_tile: BTreeMap<u32, Vec<(usize, Vec<u8>)>> = BTreeMap::new();
    for (t, b, bytes) in init {
        init_by_tile.entry(t).or_default().push((b, bytes));
    }
    let loc = cx.op_loc(f);
    let nsteps = steps.len();
    let base = target.memory.base_address;
    // Each tile's program shape and patches, once (tiles in order).
    let (shapes, outlined) = tile_codes(&tiles, &steps, &calls, loc)?;
    let mut codes = Vec::new();
    let images = timed_phase("link", || {
        let cache = KernelCache::from_env();
        let mut objects: BTreeMap<String, ipu_isa::elf::ObjectFile> = BTreeMap::new();
        let mut by_shape: BTreeMap<&TileCode, Vec<u32>> = BTreeMap::new();
        for (&t, shape) in tiles.keys().zip(&shapes) {
            by_shape.entry(shape).or_default().push(t);
        }
        // Per shape, its kernels; their objects are fetched in shape order
        // (the cache may build them), then each shape is linked on its own.
        let mut linking = Vec::with_capacity(by_shape.len());
        for (&shape, members) in &by_shape {
            // Tiles of one shape call the same kernels: the first one's suffice.
            let mut specs = BTreeMap::new();
            for cs in tiles[&members[0]].calls.values() {
                for c in cs.iter() {
                    if let Kernel::Lib(spec) = &c.kernel {
                        specs.entry(spec.name()).or_insert_with(|| (**spec).clone());
                    }
                }
            }
            for (name, spec) in &specs {
                if !objects.contains_key(name) {
                    let k = cache
                        .get_spec(spec)
                        .map_err(|e| Diagnostic::error(loc, format!("kernel {name}: {e}")))?;
                    objects.insert(name.clone(), k.object);
                }
            }
            linking.push((shape, members, specs));
        }
        let done: Vec<_> = linking
            .into_par_iter()
            .map(|l| link_shape(target, loc, &steps, &outlined, &objects, l))
            .collect();
        // shape -> (linked image, table address); the first shape that fails is reported.
        let mut linked = BTreeMap::new();
        for (&shape, r) in by_shape.keys().zip(done) {
            let (image, table, code) = r?;
            codes.push(code);
            linked.insert(shape, (image, table));
        }
        Ok(linked)
    })?;
    // Each tile's program (code, table, records, rows) is sized before its
    // data is placed, so the data starts where the program ends.
    let program_end: BTreeMap<u32, u64> = tiles
        .iter()
        .zip(&shapes)
        .map(|((&t, w), code)| {
            let roles = slot_roles(w, &steps, &outlined, &code.1);
            (t, images[&code].1 + table_bytes(w, &steps, &roles))
        })
        .collect();
    let (addrs, used_by) = timed_phase("place_storage", || {
        place_tiles(cx, f, target, &tiles, &program_end, &facts, &steps)
    })?;
    let max_data = used_by.values().copied().max().unwrap_or(0);
    let mut summary = Summary {
        memory_maps: memory_maps(target, &tiles, &program_end, &addrs, &used_by),
        code: codes,
        ..Summary::default()
    };
    let mut stats = Stats {
        tiles: tiles.len() as u64,
        supersteps: nsteps as u64,
        max_data_bytes: max_data,
        ..Stats::default()
    };
    // (step, readable entries) -> tiles
    let mut readable: BTreeMap<(usize, Vec<String>), Vec<u32>> = BTreeMap::new();
    // Per tile, where its table, records and rows went (the memory report).
    let mut tables: BTreeMap<u32, TableLayout> = BTreeMap::new();
    let host_stream = |s: &StreamSpec| host_stream_of(cx, loc, &addrs, s);
    let package = timed_phase("encode", || {
        // Tiles are encoded in parallel (each on its own), then collected in
        // tile order: the first tile that fails is the one reported.
        let work: Vec<_> = tiles
            .iter()
            .zip(&shapes)
            .map(|((&t, w), shape)| (t, w, shape, init_by_tile.remove(&t).unwrap_or_default()))
            .collect();
        let encode = |(t, w, code, init): TileToEncode<'_>| {
            let (image, table) = &images[&code];
            encode_tile(EncodeTile {
                roles: slot_roles(w, &steps, &outlined, &code.1),
                target,
                loc,
                steps: &steps,
                readable_rows,
                t,
                w,
                image,
                table: *table,
                addrs: &addrs[&t],
                init,
            })
        };
        let (encoded, streams) = rayon::join(
            || work.into_par_iter().map(encode).collect::<Vec<_>>(),
            || {
                let hs = streams.par_iter().map(host_stream).collect::<Vec<_>>();
                let ps = probes
                    .par_iter()
                    .map(|(step, op, source, s)| {
                        Ok(Probe {
                            step: *step,
                            op: op.clone(),
                            source: source.clone(),
                            stream: host_stream(s)?,
                        })
                    })
                    .collect::<Vec<Result<Probe, Diagnostic>>>();
                // The source's hash (its text printed) alongside the tiles, too.
                let source = Digest::of(source_text(cx, f).as_bytes());
                (hs, ps, source)
            },
        );
        let mut out: Vec<(u32, TileImage)> = Vec::with_capacity(encoded.len());
        for e in encoded {
            let e = e?;
            for (s, text) in e.readable {
                readable.entry((s, text)).or_default().push(e.tile);
            }
            tables.insert(e.tile, e.layout);
            stats.max_code_bytes = stats.max_code_bytes.max(e.code_bytes);
            stats.max_table_bytes = stats.max_table_bytes.max(e.table_bytes);
            out.push((e.tile, e.image));
        }
        let (hs, probes, source_sha256) = streams;
        let hs = hs.into_iter().collect::<Result<Vec<_>, _>>()?;
        let probes = probes.into_iter().collect::<Result<Vec<_>, _>>()?;
        let meta = Metadata {
            target: TargetInfo {
                name: target.name.clone(),
                description_sha256: Digest::of(target.source_text.as_bytes()),
                tile_count: target.tiles(),
                memory_base: base as u32,
                memory_bytes: target.sram_bytes() as u32,
            },
            compiler_version: env!("CARGO_PKG_VERSION").to_string(),
            source_sha256,
            entry_points: vec![EntryPoint {
                name: "main".into(),
                command: 0,
                phases: nsteps as u32,
            }],
            streams: hs,
            steps: steps.clone(),
            source: None,
            probes,
        };
        let pkg = Package::from_tile_images(meta, out);
        pkg.validate().map_err(|e| {
            Diagnostic::error(loc, format!("the generated package is invalid: {e}"))
        })?;
        Ok(pkg)
    })?;
    stats.groups = package.images.len() as u64;
    summary.memory = memory::report(target, &tiles, &addrs, &tables, &facts, &steps);
    summary.memory.functions = function_memory(&shapes, &calls, &callees, &outlined);
    summary.memory.weights = weight_copies(&streams);
    // The tiles' work is large and no longer needed: freed in parallel, and
    // before the package's IR is made (so that can reuse the memory).
    tiles
        .into_values()
        .collect::<Vec<_>>()
        .into_par_iter()
        .for_each(drop);
    sort_summary(&mut summary, readable, &steps);
    Ok((package, stats, summary))
}

/// The memory map of each group of tiles whose buffers lie alike, the
/// largest groups first.
fn memory_maps(
    target: &Target,
    tiles: &BTreeMap<u32, TileWork>,
    program_end: &BTreeMap<u32, u64>,
    addrs: &Addresses,
    used_by: &BTreeMap<u32, u64>,
) -> Vec<MemoryMap> {
    let mut maps = Vec::new();
    let end = target.memory_end();
    // Data memory of a tile: what its program leaves.
    let capacity = |t: &u32| end.saturating_sub(data_base_of(target, program_end[t]));
    let mut groups: Layouts = BTreeMap::new();
    for (&t, w) in tiles {
        let mut layout: Vec<(u64, u64, String)> = w
            .bufs
            .iter()
            .zip(&addrs[&t])
            .map(|(b, &a)| (a, b.size, b.name.clone()))
            .collect();
        layout.sort();
        let e = groups.entry(layout).or_insert((Vec::new(), 0));
        e.0.push(t);
        e.1 = e.1.max(used_by[&t]);
    }
    for (layout, (ts, used)) in groups {
        let room = ts.iter().map(capacity).min().unwrap_or(0);
        maps.push(MemoryMap {
            tiles: ts,
            used,
            free: room.saturating_sub(used),
            buffers: layout
                .into_iter()
                .map(|(a, size, name)| format!("{a:#x} {size} B {name}"))
                .collect(),
        });
    }
    maps.sort_by(|a, b| {
        b.tiles
            .len()
            .cmp(&a.tiles.len())
            .then(a.tiles[0].cmp(&b.tiles[0]))
    });
    maps
}

/// Each kernel's [`Names`] (`<link name>.<entry>` and its prologue's),
/// made once per distinct kernel rather than per call on every tile.
struct KernelNames<'a> {
    /// By the spec's address: a vertex's calls share its spec on every
    /// tile, as a repeated step's calls share their first step's.
    by_addr: rustc_hash::FxHashMap<usize, Names>,
    /// By value: equal specs made apart (each tile's local copies).
    by_value: rustc_hash::FxHashMap<&'a ipu_isa::kernels::KernelSpec, Names>,
    memcpy: Names,
}

impl<'a> KernelNames<'a> {
    /// The names of every kernel the tiles call.
    fn of(tiles: &'a BTreeMap<u32, TileWork>) -> Self {
        let (n, e) = link_name(&Kernel::Memcpy);
        let mut names = KernelNames {
            by_addr: Default::default(),
            by_value: Default::default(),
            memcpy: (format!("{n}.{e}").into(), None),
        };
        for c in tiles
            .values()
            .flat_map(|w| w.calls.values())
            .flat_map(|cs| cs.iter())
        {
            if let Kernel::Lib(spec) = &c.kernel {
                let by_value = &mut names.by_value;
                names
                    .by_addr
                    .entry(Arc::as_ptr(spec) as usize)
                    .or_insert_with(|| {
                        by_value
                            .entry(&**spec)
                            .or_insert_with(|| {
                                let (n, e) = link_name(&c.kernel);
                                let pro = records::prologue(spec)
                                    .map(|p| format!("{n}.{}", p.entry).into());
                                (format!("{n}.{e}").into(), pro)
                            })
                            .clone()
                    });
            }
        }
        names
    }

    /// Call `c`'s names ([`Self::of`] saw its kernel).
    fn of_call(&self, c: &Call) -> Names {
        match &c.kernel {
            Kernel::Lib(spec) => self.by_addr[&(Arc::as_ptr(spec) as usize)].clone(),
            Kernel::Memcpy => self.memcpy.clone(),
        }
    }
}

/// Each tile's program (in tile order): its shape and the record words
/// its subroutines patch; and the calls run as subroutines.
fn tile_codes(
    tiles: &BTreeMap<u32, TileWork>,
    steps: &[StepSummary],
    calls: &[(std::ops::Range<usize>, u32)],
    loc: ipu_ir::Loc,
) -> Result<(Vec<TileCode>, Vec<Outlined>), Diagnostic> {
    let names = KernelNames::of(tiles);
    let shapes: Vec<Shape> = tiles
        .values()
        .collect::<Vec<_>>()
        .par_iter()
        .map(|w| tile_shape(w, steps, &names))
        .collect();
    let outlined = outlined_calls(&shapes, calls);
    let codes = tiles
        .values()
        .zip(shapes)
        .map(|(w, shape)| {
            let p = tile_patches(w, &shape, &outlined).map_err(|m| Diagnostic::error(loc, m))?;
            Ok((shape, p))
        })
        .collect::<Result<_, Diagnostic>>()?;
    Ok((codes, outlined))
}

/// A tile's program shape: per superstep, its kernel calls or an exchange.
fn tile_shape(w: &TileWork, steps: &[StepSummary], kernels: &KernelNames<'_>) -> Shape {
    let nsteps = steps.len();
    let names = |c: &Call| kernels.of_call(c);
    (0..nsteps)
        .map(|s| match steps[s].kind {
            ipu_package::StepKind::Exchange => {
                let next = w.calls.get(&(s + 1)).map_or(&[][..], |v| v.as_slice());
                let mut out: Vec<(Arc<str>, usize)> = Vec::new();
                for &k in w.during.get(&s).into_iter().flatten() {
                    if let Some(c) = next.get(k) {
                        out.push((names(c).0, k));
                    }
                }
                for &k in w.ahead.get(&s).into_iter().flatten() {
                    if let Some(p) = next.get(k).and_then(|c| names(c).1) {
                        out.push((p, k));
                    }
                }
                StepShape::Exchange(out)
            }
            _ => {
                fn before(m: &BTreeMap<usize, Vec<usize>>, s: usize) -> &[usize] {
                    s.checked_sub(1)
                        .and_then(|p| m.get(&p))
                        .map_or(&[][..], |v| v.as_slice())
                }
                let (ahead, during) = (before(&w.ahead, s), before(&w.during, s));
                StepShape::Compute(
                    w.calls
                        .get(&s)
                        .map(|cs| {
                            cs.iter()
                                .enumerate()
                                .map(|(k, c)| {
                                    if during.contains(&k) {
                                        return None;
                                    }
                                    let (n, pre) = names(c);
                                    Some((n, pre.filter(|_| !ahead.contains(&k))))
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                )
            }
        })
        .collect()
}

/// A shape's program as the summary prints it: per superstep, its label
/// and what runs.
fn program_lines(shape: &Shape, steps: &[StepSummary], outlined: &[Outlined]) -> Vec<String> {
    shape
        .iter()
        .zip(steps)
        .enumerate()
        .map(|(i, (calls, step))| {
            let label = step.label.split(' ').next().unwrap_or("");
            // A step of a call run as a subroutine names it.
            let label = match outlined.iter().find(|o| o.0.contains(&i)) {
                Some((_, id)) => format!("{label} (call_{id})"),
                None => label.to_string(),
            };
            match calls {
                StepShape::Exchange(ahead) if ahead.is_empty() => format!("{label}: exch"),
                StepShape::Exchange(ahead) => {
                    let pre: Vec<&str> = ahead.iter().map(|(p, _)| &**p).collect();
                    format!("{label}: exch, {}", pre.join(", "))
                }
                StepShape::Compute(c) if c.iter().all(Option::is_none) => {
                    format!("{label}: -")
                }
                StepShape::Compute(c) => {
                    let names: Vec<String> = c
                        .iter()
                        .flatten()
                        .map(|(n, pre)| match pre {
                            Some(p) => format!("{p}, {n}"),
                            None => n.to_string(),
                        })
                        .collect();
                    format!("{label}: {}", names.join(", "))
                }
            }
        })
        .collect()
}

/// The package's description of stream `s`.
fn host_stream_of(
    cx: &Context,
    loc: ipu_ir::Loc,
    addrs: &Addresses,
    s: &StreamSpec,
) -> Result<HostStream, Diagnostic> {
    let element_of = |t: ipu_ir::Type| {
        let (_, e) = cx
            .tensor_parts(t)
            .ok_or_else(|| Diagnostic::error(loc, format!("stream {} is not a tensor", s.name)))?;
        ipu_program::elem::host_element(cx.type_kind(e)).ok_or_else(|| {
            Diagnostic::error(
                loc,
                format!(
                    "stream {} has an element type without a host format",
                    s.name
                ),
            )
        })
    };
    let element = element_of(s.ty)?;
    // A parameter the host widens at load: its host format beside.
    let host_element = s.host_ty.map(element_of).transpose()?;
    Ok(HostStream {
        name: s.name.clone(),
        direction: s.direction,
        element,
        shape: s.shape.iter().map(|&d| d as u64).collect(),
        host_element,
        layout: super::streams::stream_layout(&s.at, addrs),
    })
}

/// The symbol of a tile's table of record pointers: the supervisor
/// program loads its slots at offsets from it, and the linker places it.
const TABLE_SYMBOL: &str = "__table";

/// The object defining [`TABLE_SYMBOL`]: an empty, 8-byte aligned data
/// section, linked after everything else.
fn table_object() -> &'static ipu_isa::elf::ObjectFile {
    static TABLE: std::sync::OnceLock<ipu_isa::elf::ObjectFile> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let text = format!("    .data\n    .align 8\n    .globl {TABLE_SYMBOL}\n{TABLE_SYMBOL}:\n");
        ipu_isa::asm::assemble("table.S", &text, &BTreeMap::new())
            .expect("the table's object assembles")
            .object
    })
}

/// Links the supervisor program of one shape with its kernels (`objects`,
/// by name), its table placed just after the code: the image, the table's
/// address, and its code summary.
fn link_shape(
    target: &Target,
    loc: ipu_ir::Loc,
    steps: &[StepSummary],
    outlined: &[Outlined],
    objects: &BTreeMap<String, ipu_isa::elf::ObjectFile>,
    ((shape, patches), members, specs): Linking<'_>,
) -> Result<(ipu_isa::link::TileImage, u64, CodeSummary), Diagnostic> {
    let base = target.memory.base_address;
    let layout = LinkLayout::new(base as u32, target.memory_end() as u32);
    let text = main_text(shape, outlined, patches);
    let main = ipu_isa::asm::assemble("main.S", &text, &BTreeMap::new()).map_err(|e| {
        Diagnostic::error(
            loc,
            format!("the supervisor program does not assemble: {e}"),
        )
    })?;
    let mut objs: Vec<(&str, &ipu_isa::elf::ObjectFile)> = vec![("main", &main.object)];
    for name in specs.keys() {
        objs.push((name.as_str(), &objects[name]));
    }
    // Last, so the table starts at the first 8-byte boundary after the
    // code and the data (the linker places data after all code).
    objs.push(("table", table_object()));
    let image = link(&objs, &layout)
        .map_err(|e| Diagnostic::error(loc, format!("linking tile {}: {e}", members[0])))?;
    let table = image.symbol(TABLE_SYMBOL).ok_or_else(|| {
        Diagnostic::error(
            loc,
            format!("linking tile {}: no {TABLE_SYMBOL}", members[0]),
        )
    })? as u64;
    let mut kernels: Vec<String> = specs.into_keys().collect();
    kernels.insert(0, "main".into());
    let program = program_lines(shape, steps, outlined);
    let code = CodeSummary {
        tiles: members.clone(),
        kernels,
        program,
        code_bytes: image.code_size as u64,
        exec: image
            .exec_ranges
            .iter()
            .map(|r| format!("{:#x} to {:#x}", r.start, r.end))
            .collect::<Vec<_>>()
            .join(", "),
    };
    Ok((image, table, code))
}

/// The readable exchange rows (per step and entries, their tiles) grouped
/// by phase into the summary, and the code summaries in order: the
/// largest groups first.
fn sort_summary(
    summary: &mut Summary,
    readable: BTreeMap<(usize, Vec<String>), Vec<u32>>,
    steps: &[StepSummary],
) {
    for ((s, text), tiles) in readable {
        let phase = steps[s].label.split(' ').next().unwrap_or("").to_string();
        match summary.rows.last_mut() {
            Some((p, groups)) if *p == phase => groups.push((tiles, text)),
            _ => summary.rows.push((phase, vec![(tiles, text)])),
        }
    }
    for (_, groups) in &mut summary.rows {
        groups.sort_by(|a, b| a.0[0].cmp(&b.0[0]));
    }
    summary.code.sort_by(|a, b| {
        b.tiles
            .len()
            .cmp(&a.tiles.len())
            .then(a.tiles[0].cmp(&b.tiles[0]))
    });
}

/// The function's text, for the package's source hash.
fn source_text(cx: &Context, f: Op) -> String {
    let mut p = ipu_ir::printer::Printer::new(cx, Default::default());
    let _ = p.print_top(f);
    p.finish()
}

/// Appends the `n` words `words` to `out`, little-endian.
fn put_words(out: &mut Vec<u8>, n: usize, words: impl Iterator<Item = u32>) {
    let at = out.len();
    out.resize(at + 4 * n, 0);
    for (d, w) in out[at..].chunks_exact_mut(4).zip(words) {
        d.copy_from_slice(&w.to_le_bytes());
    }
}

/// What [`encode_tile`] needs of one tile and of the program.
struct EncodeTile<'a> {
    target: &'a Target,
    loc: ipu_ir::Loc,
    steps: &'a [ipu_package::StepSummary],
    readable_rows: bool,
    t: u32,
    w: &'a TileWork,
    image: &'a ipu_isa::link::TileImage,
    /// Where the tile's pointer table starts (after its code).
    table: u64,
    /// The address of each of the tile's buffers.
    addrs: &'a [u64],
    /// Constant blocks loaded with the image: (buffer, bytes).
    init: Vec<(usize, Vec<u8>)>,
    /// Per table slot, whether its record is patched per call.
    roles: Vec<SlotRole<'a>>,
}

/// One tile's image, with what the summaries and the memory report need.
struct EncodedTile {
    tile: u32,
    image: TileImage,
    layout: TableLayout,
    /// (step, readable entries) of each of its rows, when asked for.
    readable: Vec<(usize, Vec<String>)>,
    code_bytes: u64,
    table_bytes: u64,
}

/// A tile's table slots in program order: one per exchange step, one per
/// kernel call of a compute step (`(step, call)`).
fn table_slots<'a>(w: &'a TileWork, steps: &[StepSummary]) -> Vec<(usize, Option<&'a Call>)> {
    let mut slots = Vec::new();
    for (s, step) in steps.iter().enumerate() {
        match step.kind {
            ipu_package::StepKind::Exchange => slots.push((s, None)),
            _ => {
                for c in w.calls.get(&s).map(|v| v.as_slice()).unwrap_or(&[]) {
                    slots.push((s, Some(c)));
                }
            }
        }
    }
    slots
}

/// A table slot's record: stored as it is, or (a call run as a subroutine,
/// its record naming the call's own parameters) one record for all calls
/// of the subroutine, stored at the first call's slot (`template`), each
/// call's slot pointing at a block of that record's address and the call's
/// values of `words`, which the subroutine writes into it before the call.
#[derive(Clone, Copy, Debug)]
enum SlotRole<'a> {
    Plain,
    Patched { template: usize, words: &'a [u16] },
}

/// The record words each subroutine of a tile patches: per call run as a
/// subroutine, each kernel call's record compared with the first call's at
/// the same slot, word by word (buffers as the tile's local indices: a
/// frame buffer is the same at every call, a parameter's is not).
fn tile_patches(w: &TileWork, shape: &Shape, outlined: &[Outlined]) -> Result<Patches, String> {
    let mut out = Patches::new();
    let mut first: BTreeMap<usize, &std::ops::Range<usize>> = BTreeMap::new();
    let none: &[Call] = &[];
    for (r, id) in outlined {
        let r0 = *first.entry(*id).or_insert(r);
        let mut q = 0u64;
        for i in 0..r.len() {
            let (s0, s1) = (r0.start + i, r.start + i);
            if let StepShape::Exchange(_) = shape[s0] {
                q += 1;
                continue;
            }
            let c0 = w.calls.get(&s0).map_or(none, |v| v.as_slice());
            let c1 = w.calls.get(&s1).map_or(none, |v| v.as_slice());
            if c0.len() != c1.len() {
                return Err(format!(
                    "superstep {s1} runs other calls than superstep {s0}, its subroutine's"
                ));
            }
            for (j, (a, b)) in c0.iter().zip(c1).enumerate() {
                if a.kernel != b.kernel
                    || a.record.len() != b.record.len()
                    || a.scratch != b.scratch
                {
                    return Err(format!("superstep {s1}'s call {j} differs in kind from superstep {s0}'s, its subroutine's"));
                }
                let diff = a
                    .record
                    .iter()
                    .zip(&b.record)
                    .enumerate()
                    .filter(|(_, (x, y))| x != y);
                let diff: Vec<u16> = diff.map(|(k, _)| k as u16).collect();
                if !diff.is_empty() {
                    let e = out.entry((*id, q + j as u64)).or_default();
                    e.extend(diff);
                    e.sort_unstable();
                    e.dedup();
                }
            }
            q += c0.len() as u64;
        }
    }
    Ok(out)
}

/// Each table slot's [`SlotRole`] on a tile (slots as [`table_slots`] orders them).
fn slot_roles<'a>(
    w: &TileWork,
    steps: &[StepSummary],
    outlined: &[Outlined],
    patches: &'a Patches,
) -> Vec<SlotRole<'a>> {
    let mut start = Vec::with_capacity(steps.len());
    let mut n = 0usize;
    for (s, step) in steps.iter().enumerate() {
        start.push(n);
        n += match step.kind {
            ipu_package::StepKind::Exchange => 1,
            _ => w.calls.get(&s).map_or(0, |v| v.len()),
        };
    }
    let mut roles = vec![SlotRole::Plain; n];
    if patches.is_empty() {
        return roles;
    }
    let mut first: BTreeMap<usize, usize> = BTreeMap::new();
    for (r, id) in outlined {
        let base = start[r.start];
        let template = *first.entry(*id).or_insert(base);
        for (&(_, q), words) in patches.range((*id, 0)..=(*id, u64::MAX)) {
            roles[base + q as usize] = SlotRole::Patched {
                template: template + q as usize,
                words,
            };
        }
    }
    roles
}

/// A tile's kernel records and exchange rows stored so far, by content
/// (their buffers as the tile's local indices): an equal one is stored once
/// and every slot that needs it points there. A repeated layer's calls,
/// one frame of buffers for all of them (`Program::fold_frames`), have
/// equal records and rows wherever they touch no parameter.
#[derive(Default)]
struct Shared<'a> {
    records: rustc_hash::FxHashMap<(&'a [Word], usize), u32>,
    rows: rustc_hash::FxHashMap<RowKey<'a>, u32>,
}

/// A row as a [`Shared`] key: equal rows are equal keys, but only its
/// length and a few entries are hashed (a busy tile's rows run to hundreds
/// of entries, and hashing each whole, twice per tile, was a few percent
/// of the whole compile).
struct RowKey<'a>(&'a [(RowEntry, Option<u32>)]);

/// A repeated step's row is its first step's, shared: the same slice is
/// equal without comparing its entries.
impl PartialEq for RowKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0) || self.0 == other.0
    }
}

impl Eq for RowKey<'_> {}

impl std::hash::Hash for RowKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        const SAMPLES: usize = 8;
        let (r, n) = (self.0, self.0.len());
        n.hash(h);
        if n <= SAMPLES {
            r.hash(h);
        } else {
            // The first, the last and evenly spaced ones between.
            for k in 0..SAMPLES {
                r[k * (n - 1) / (SAMPLES - 1)].hash(h);
            }
        }
    }
}

/// The bytes [`encode_tile`] writes after a tile's code: its pointer
/// table, the empty row, its kernel records (with their scratch) and its
/// exchange rows. None of it depends on where the data lies, so it is
/// known before storage placement.
fn table_bytes(w: &TileWork, steps: &[StepSummary], roles: &[SlotRole<'_>]) -> u64 {
    let slots = table_slots(w, steps);
    let mut bytes = 4 * slots.len() as u64 + 4;
    let mut shared = Shared::default();
    for (i, (s, call)) in slots.iter().enumerate() {
        let record = |c: &Call| 4 * c.record.len() as u64 + c.scratch as u64;
        bytes += match (roles.get(i), call) {
            // A patched record: stored at its first call's slot; a block per call.
            (Some(SlotRole::Patched { template, words }), Some(c)) => {
                let own = if *template == i { record(c) } else { 0 };
                own + 4 * (1 + words.len() as u64)
            }
            (_, Some(c)) if shared.records.insert((&c.record, c.scratch), 0).is_some() => 0,
            (_, Some(c)) => record(c),
            (_, None) => w.rows.get(s).map_or(0, |entries| {
                if shared.rows.insert(RowKey(&entries[..]), 0).is_some() {
                    return 0;
                }
                let words: u64 = entries
                    .iter()
                    .map(|(e, _)| match e {
                        RowEntry::Select { .. } => 2,
                        _ => 3,
                    })
                    .sum();
                4 * (1 + words)
            }),
        };
    }
    bytes
}

/// Encodes one tile: its pointer table, kernel records and exchange rows
/// after its code, its code and data segments.
fn encode_tile(e: EncodeTile<'_>) -> Result<EncodedTile, Diagnostic> {
    let EncodeTile {
        target,
        loc,
        steps,
        readable_rows,
        t,
        w,
        image,
        table,
        addrs: a,
        init,
        roles,
    } = e;
    let base = target.memory.base_address;
    let buf = |b: usize| a[b];
    // Slots in program order; records and rows after the table.
    let slots = table_slots(w, steps);
    // The table's pointers first (filled in at the end), then records and rows.
    let mut data: Vec<u8> = vec![0; 4 * slots.len()];
    let after_table = table + 4 * slots.len() as u64;
    let mut ptrs = Vec::with_capacity(slots.len());
    let empty_row_at = after_table;
    data.extend(0u32.to_le_bytes());
    let mut layout = TableLayout {
        table,
        spans: vec![
            (table, 4 * slots.len() as u64, Category::KernelRecords),
            (empty_row_at, 4, Category::ExchangeRows),
        ],
    };
    let mut readable = Vec::new();
    let mut shared = Shared::default();
    // Where each patched record's shared copy is (by its template's slot).
    let mut templates: BTreeMap<usize, u32> = BTreeMap::new();
    let value = |word: &Word| match *word {
        Word::Val(v) => v,
        Word::Buf(b, off) => (buf(b) + off as u64) as u32,
    };
    for (i, (s, call)) in slots.iter().enumerate() {
        let at = table + data.len() as u64;
        match call {
            Some(c) if matches!(roles.get(i), Some(SlotRole::Patched { .. })) => {
                let Some(SlotRole::Patched { template, words }) = roles.get(i) else {
                    unreachable!("matched above")
                };
                if *template == i {
                    // The shared record, never shared by content: calls write into it.
                    put_words(&mut data, c.record.len(), c.record.iter().map(value));
                    data.resize(data.len() + c.scratch, 0);
                    let len = table + data.len() as u64 - at;
                    layout.spans.push((at, len, Category::KernelRecords));
                    templates.insert(i, at as u32);
                }
                let record = *templates.get(template).ok_or_else(|| {
                    Diagnostic::error(
                        loc,
                        format!("tile {t}: a call's record is patched before its first call"),
                    )
                })?;
                // The call's patch block: the record's address, then its own words.
                let block = table + data.len() as u64;
                let own = words.iter().map(|&k| value(&c.record[k as usize]));
                put_words(
                    &mut data,
                    1 + words.len(),
                    std::iter::once(record).chain(own),
                );
                layout
                    .spans
                    .push((block, 4 * (1 + words.len() as u64), Category::KernelRecords));
                ptrs.push(block as u32);
            }
            Some(c) => {
                if let Some(&p) = shared.records.get(&(&c.record[..], c.scratch)) {
                    ptrs.push(p);
                    continue;
                }
                shared.records.insert((&c.record, c.scratch), at as u32);
                let words = c.record.iter().map(|word| match *word {
                    Word::Val(v) => v,
                    Word::Buf(b, off) => (buf(b) + off as u64) as u32,
                });
                put_words(&mut data, c.record.len(), words);
                data.resize(data.len() + c.scratch, 0);
                let len = table + data.len() as u64 - at;
                layout.spans.push((at, len, Category::KernelRecords));
                ptrs.push(at as u32);
            }
            None => match w.rows.get(s) {
                Some(entries) => {
                    let base = |b: Option<u32>| b.map_or(0, |b| buf(b as usize));
                    if readable_rows {
                        readable.push((*s, describe_row(t, entries, &base)));
                    }
                    if let Some(&p) = shared.rows.get(&RowKey(entries)) {
                        ptrs.push(p);
                        continue;
                    }
                    shared.rows.insert(RowKey(&entries[..]), at as u32);
                    let words = encode_row(t, entries, &base).map_err(|m| {
                        Diagnostic::error(loc, format!("tile {t}, {}: {m}", steps[*s].label))
                    })?;
                    layout
                        .spans
                        .push((at, 4 * words.len() as u64, Category::ExchangeRows));
                    put_words(&mut data, words.len(), words.iter().copied());
                    ptrs.push(at as u32);
                }
                None => ptrs.push(empty_row_at as u32),
            },
        }
    }
    for (d, p) in data.chunks_exact_mut(4).zip(&ptrs) {
        d.copy_from_slice(&p.to_le_bytes());
    }
    let code_bytes = table - base;
    let used = code_bytes + data.len() as u64;
    // The data was placed above the program's size as `table_bytes`
    // counted it; the limit is this tile's lowest data byte.
    let room = a
        .iter()
        .copied()
        .min()
        .unwrap_or_else(|| target.memory_end())
        - base;
    if used > room {
        return Err(Diagnostic::error(
            loc,
            format!(
                "tile {t}: its code ({code_bytes} B), kernel records and exchange rows ({} B) need {used} bytes, but its data starts {room} bytes above the base (their size was counted wrong)",
                data.len()
            ),
        ));
    }
    // Code: the executable segments from the base; the rest is data.
    let mut code: Vec<u8> = Vec::new();
    let mut segs: Vec<DataSegment> = Vec::new();
    for s in &image.segments {
        if s.exec {
            let off = (s.address as u64 - base) as usize;
            if code.len() < off {
                code.resize(off, 0);
            }
            code.truncate(off);
            code.extend(&s.bytes);
        } else if !s.bytes.is_empty() {
            segs.push(DataSegment {
                address: s.address,
                bytes: s.bytes.clone(),
            });
        }
    }
    let table_bytes = data.len() as u64;
    segs.push(DataSegment {
        address: table as u32,
        bytes: data,
    });
    for (b, bytes) in init {
        segs.push(DataSegment {
            address: buf(b) as u32,
            bytes,
        });
    }
    let mut entries = BTreeMap::new();
    entries.insert(
        "main".to_string(),
        image
            .symbol("main.main")
            .ok_or_else(|| Diagnostic::error(loc, "the supervisor program has no main"))?,
    );
    Ok(EncodedTile {
        tile: t,
        image: TileImage {
            code_address: base as u32,
            code,
            data: segs,
            zero: Vec::new(),
            entries,
        },
        layout,
        readable,
        code_bytes: image.code_size as u64,
        table_bytes,
    })
}
