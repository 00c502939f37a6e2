//! Memory accounting of the machine stage: every byte of every tile by what
//! it holds, the bytes alive at every superstep, the tiles that hold the
//! most and the tensors in them, and the diagnostic of a tile that does not
//! fit (`docs/report.md`).
//!
//! A tile's SRAM is cut into regions that cover it exactly once, from the
//! memory base to its end: the code image, the pointer table and kernel
//! records, the exchange rows and the unused rest of the code reserve; then
//! the data memory, where each byte belongs to the buffer placed there (to
//! the longest-lived one when buffers that are never alive together share
//! it) or is free. The categories are sums of regions, so they add up to
//! the tile's memory by construction of the cut, and a test checks the cut
//! itself against the package (`tests` below and `driver/tests`).

use super::storage::Buffer;
use super::TileWork;
use ipu_ir::types::LocKind;
use ipu_ir::{Context, Diagnostic, Loc, Op};
use ipu_package::{StepSummary, TileSet};
use ipu_program::{BufId, Program, Step};
use ipu_target::Target;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What a byte of tile memory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// The linked supervisor program and kernels (with the linker's data
    /// sections and the alignment up to the pointer table).
    Code,
    /// The pointer table, the kernels' state records and the GEMM's worker
    /// records.
    KernelRecords,
    /// Exchange-table rows (and the one empty row idle phases point at).
    ExchangeRows,
    /// Host inputs and constants: what the host streams in before the run
    /// or the image carries.
    WeightsConstants,
    /// Op results and the operand buffers exchange phases fill.
    Activations,
    /// Matmul partial sums (the GEMM's own and those received for split K).
    Partials,
    /// Re-layout and conversion buffers a kernel reads instead of its
    /// operand (`rhs_f16`, `lhs_chunks`, `rhs_blocked`, `result_blocked`).
    Scratch,
    /// Always 0: kernels are called through the link register `$m15` and
    /// keep their state in registers and records; there is no memory stack.
    Stack,
    /// Gaps among code, records and rows, and the alignment before the
    /// tile's data (data is never placed there).
    FreeCodeReserve,
    /// Data memory no buffer uses.
    Free,
}

pub const CATEGORY_COUNT: usize = 10;

impl Category {
    pub const ALL: [Category; CATEGORY_COUNT] = [
        Category::Code,
        Category::KernelRecords,
        Category::ExchangeRows,
        Category::WeightsConstants,
        Category::Activations,
        Category::Partials,
        Category::Scratch,
        Category::Stack,
        Category::FreeCodeReserve,
        Category::Free,
    ];

    /// The key in the JSON report.
    pub fn key(self) -> &'static str {
        match self {
            Category::Code => "code",
            Category::KernelRecords => "kernel_records",
            Category::ExchangeRows => "exchange_rows",
            Category::WeightsConstants => "weights_constants",
            Category::Activations => "activations",
            Category::Partials => "partials",
            Category::Scratch => "scratch",
            Category::Stack => "stack",
            Category::FreeCodeReserve => "free_code_reserve",
            Category::Free => "free",
        }
    }

    /// A readable name.
    pub fn title(self) -> &'static str {
        match self {
            Category::Code => "code",
            Category::KernelRecords => "pointer table and kernel records",
            Category::ExchangeRows => "exchange rows",
            Category::WeightsConstants => "weights and constants",
            Category::Activations => "activations",
            Category::Partials => "partials",
            Category::Scratch => "re-layout scratch",
            Category::Stack => "stack",
            Category::FreeCodeReserve => "free (code reserve)",
            Category::Free => "free",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// Bytes nothing holds.
    pub fn is_free(self) -> bool {
        matches!(self, Category::FreeCodeReserve | Category::Free)
    }
}

/// One program buffer, as the report names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferInfo {
    pub name: String,
    pub category: Category,
    /// Bytes the program asks for on each tile (before the kernels' slack).
    pub bytes: u64,
    /// What fills it: the compute set's op (`tile.matmul`), `host input x`
    /// or `constant`.
    pub op: String,
    /// The source op's location, `file:line:col`.
    pub loc: String,
    /// Tiles holding a block of it.
    pub tiles: usize,
}

/// A buffer's facts the overflow diagnostic needs beyond [`BufferInfo`].
#[derive(Clone, Debug)]
pub(crate) struct BufferFacts {
    pub info: BufferInfo,
    pub ir_loc: Loc,
    /// Element bytes, for values streamed or loaded (others: unknown).
    pub elem_bytes: Option<u64>,
    /// Dimensions of such a value its mapping does not split: (dim, size).
    pub unsplit: Vec<(usize, i64)>,
}

/// A range of one tile's memory and what holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub len: u64,
    pub category: Category,
    /// The buffer (index in [`MemoryReport::buffers`]) owning a data region.
    pub buffer: Option<usize>,
}

/// A buffer placed on a tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Index in [`MemoryReport::buffers`].
    pub buffer: usize,
    pub address: u64,
    /// Bytes reserved (the program's bytes and the kernels' slack).
    pub bytes: u64,
    /// First and last superstep it is alive (`last` = the number of
    /// supersteps for a result read back after the run).
    pub first: u32,
    pub last: u32,
}

/// One tile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileMemory {
    pub tile: u32,
    /// The tile runs a program.
    pub started: bool,
    /// Bytes per category, in [`Category::ALL`] order.
    pub bytes: [u64; CATEGORY_COUNT],
    /// The cut of the tile's memory, by address, covering it exactly once.
    pub regions: Vec<Region>,
    /// Data bytes alive in each superstep, and after the last sync (the
    /// results read back): `steps.len() + 1` entries.
    pub live: Vec<u64>,
    pub placements: Vec<Placement>,
}

impl TileMemory {
    /// Bytes held (every category but the free ones).
    pub fn used(&self) -> u64 {
        Category::ALL
            .iter()
            .filter(|c| !c.is_free())
            .map(|c| self.bytes[c.index()])
            .sum()
    }

    /// Code, records and rows: resident for the whole run.
    pub fn resident(&self) -> u64 {
        [
            Category::Code,
            Category::KernelRecords,
            Category::ExchangeRows,
        ]
        .iter()
        .map(|c| self.bytes[c.index()])
        .sum()
    }

    /// Bytes in use in superstep `s`: the resident part and the live data.
    pub fn in_use(&self, s: usize) -> u64 {
        self.resident() + self.live.get(s).copied().unwrap_or(0)
    }

    /// The superstep with the most live data (the first of equals).
    pub fn peak_step(&self) -> usize {
        let mut best = 0;
        for (s, &v) in self.live.iter().enumerate() {
            if v > self.live[best] {
                best = s;
            }
        }
        best
    }
}

/// The memory of every tile of a compiled program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    pub target: String,
    pub memory_base: u64,
    /// SRAM bytes per tile.
    pub tile_bytes: u64,
    /// Superstep labels (`x0 operand #0 of s1 tile.matmul`, `s1 tile.matmul`).
    pub steps: Vec<String>,
    pub buffers: Vec<BufferInfo>,
    /// Every tile of the target, in order.
    pub tiles: Vec<TileMemory>,
    /// Functions called several times whose calls run as one subroutine.
    pub functions: Vec<FunctionMemory>,
    /// Each parameter loaded from the host: how many times its bytes are
    /// held over the tiles.
    pub weights: Vec<WeightCopies>,
}

/// A called function's program bytes: its code once, and what each call
/// adds on the tile that holds the most of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionMemory {
    pub name: String,
    pub calls: usize,
    /// Calls run as its subroutine (the others are expanded inline).
    pub outlined: usize,
    /// The subroutine's supervisor code on the program that has the most of it.
    pub code_bytes: u64,
    /// Per call, on the tile where it is most: the call's table slots and
    /// its records' patch blocks.
    pub per_call_bytes: u64,
}

/// A parameter's bytes in tile memory against its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WeightCopies {
    pub name: String,
    /// Bytes of the tensor in the tiles' element type.
    pub bytes: u64,
    /// Bytes held over all tiles.
    pub held: u64,
    /// The host gives it narrower (the tiles hold it widened at load).
    pub widened: bool,
}

/// Tiles with the same memory: the same buffers at the same addresses.
#[derive(Clone, Debug)]
pub struct TileGroup<'a> {
    pub tiles: Vec<u32>,
    pub memory: &'a TileMemory,
}

impl MemoryReport {
    /// Bytes per category over all tiles.
    pub fn totals(&self) -> [u64; CATEGORY_COUNT] {
        let mut t = [0; CATEGORY_COUNT];
        for m in &self.tiles {
            for (i, b) in m.bytes.iter().enumerate() {
                t[i] += b;
            }
        }
        t
    }

    /// The label of superstep `s` (or of the results after the last sync).
    pub fn step_label(&self, s: usize) -> &str {
        self.steps
            .get(s)
            .map(String::as_str)
            .unwrap_or("end (results)")
    }

    /// The step label's first word (`x0`, `s1.reduce`, `end`).
    pub fn step_name(&self, s: usize) -> &str {
        self.step_label(s).split(' ').next().unwrap_or("")
    }

    /// Per superstep (and after the last sync): the tile with the most bytes
    /// in use and those bytes, and the bytes in use on all tiles.
    pub fn in_use_by_step(&self) -> Vec<(u32, u64, u64)> {
        (0..=self.steps.len())
            .map(|s| {
                let mut best = (0, 0);
                let mut all = 0;
                for m in &self.tiles {
                    let v = m.in_use(s);
                    all += v;
                    if v > best.1 {
                        best = (m.tile, v);
                    }
                }
                (best.0, best.1, all)
            })
            .collect()
    }

    /// Live data bytes per superstep and category, summed over tiles.
    pub fn live_by_category(&self) -> Vec<[u64; CATEGORY_COUNT]> {
        let mut out = vec![[0; CATEGORY_COUNT]; self.steps.len() + 1];
        for m in &self.tiles {
            for p in &m.placements {
                let c = self.buffers[p.buffer].category.index();
                for row in out
                    .iter_mut()
                    .take(p.last as usize + 1)
                    .skip(p.first as usize)
                {
                    row[c] += p.bytes;
                }
            }
        }
        out
    }

    /// Tiles grouped by identical memory, the most used first (then by
    /// first tile).
    pub fn groups(&self) -> Vec<TileGroup<'_>> {
        // (buffer, address, bytes) of every placement, and the categories.
        type Layout = (Vec<(usize, u64, u64)>, [u64; CATEGORY_COUNT]);
        let mut by: BTreeMap<Layout, Vec<usize>> = BTreeMap::new();
        for (i, m) in self.tiles.iter().enumerate() {
            let sig = m
                .placements
                .iter()
                .map(|p| (p.buffer, p.address, p.bytes))
                .collect();
            by.entry((sig, m.bytes)).or_default().push(i);
        }
        let mut groups: Vec<TileGroup<'_>> = by
            .into_values()
            .map(|ix| TileGroup {
                tiles: ix.iter().map(|&i| self.tiles[i].tile).collect(),
                memory: &self.tiles[ix[0]],
            })
            .collect();
        groups.sort_by(|a, b| {
            b.memory
                .used()
                .cmp(&a.memory.used())
                .then(a.tiles[0].cmp(&b.tiles[0]))
        });
        groups
    }

    /// The readable summary: categories, live bytes per superstep, and the
    /// groups of tiles that hold the most with the tensors in them.
    pub fn summary_text(&self, largest: usize) -> String {
        let mut s = String::new();
        let started = self.tiles.iter().filter(|t| t.started).count();
        let _ = writeln!(
            s,
            "memory report: target {}, {} tiles ({started} running a program), {} B each (data after each tile's code, records and rows)",
            self.target,
            self.tiles.len(),
            self.tile_bytes,
        );
        let totals = self.totals();
        let chip = self.tile_bytes * self.tiles.len() as u64;
        let _ = writeln!(
            s,
            "\n{:<34} {:>14} {:>7} {:>12} {:>6}",
            "category", "all tiles B", "%", "max tile B", "tile"
        );
        for c in Category::ALL {
            let (mt, mv) = self
                .tiles
                .iter()
                .map(|m| (m.tile, m.bytes[c.index()]))
                .fold((0, 0), |a, b| if b.1 > a.1 { b } else { a });
            let _ = writeln!(
                s,
                "{:<34} {:>14} {:>6.2}% {:>12} {:>6}",
                c.title(),
                totals[c.index()],
                100.0 * totals[c.index()] as f64 / chip.max(1) as f64,
                mv,
                mt
            );
        }
        let _ = writeln!(
            s,
            "{:<34} {:>14} {:>6.2}%",
            "total",
            totals.iter().sum::<u64>(),
            100.0 * totals.iter().sum::<u64>() as f64 / chip.max(1) as f64
        );
        let _ = writeln!(
            s,
            "\nbytes in use per superstep (code, records and rows, and the live data):"
        );
        let _ = writeln!(
            s,
            "{:<12} {:>12} {:>6} {:>16}  label",
            "superstep", "max tile B", "tile", "all tiles B"
        );
        for (i, (t, v, all)) in self.in_use_by_step().into_iter().enumerate() {
            let _ = writeln!(
                s,
                "{:<12} {:>12} {:>6} {:>16}  {}",
                self.step_name(i),
                v,
                t,
                all,
                self.step_label(i)
            );
        }
        if !self.functions.is_empty() {
            let _ = writeln!(
                s,
                "\nfunctions called as subroutines (code once; each call its table slots and patch blocks):"
            );
            for f in &self.functions {
                let _ = writeln!(
                    s,
                    "  @{}: {} calls, {} as the subroutine; code {} B, per call {} B on its fullest tile",
                    f.name, f.calls, f.outlined, f.code_bytes, f.per_call_bytes
                );
            }
        }
        if !self.weights.is_empty() {
            let _ = writeln!(
                s,
                "\nparameters held on the tiles (copies: bytes held / the tensor's bytes):"
            );
            for w in &self.weights {
                let _ = writeln!(
                    s,
                    "  {:<24} {:>12} B  x{:.2}{}",
                    w.name,
                    w.bytes,
                    w.held as f64 / w.bytes.max(1) as f64,
                    if w.widened { " (widened at load)" } else { "" }
                );
            }
        }
        let _ = writeln!(
            s,
            "\nthe fullest tiles (tiles with the same buffers at the same addresses together):"
        );
        for g in self.groups().into_iter().take(largest) {
            let m = g.memory;
            let peak = m.peak_step();
            let set = TileSet::from_tiles(g.tiles.iter().copied());
            let which = match g.tiles.len() {
                1 => format!("tile {set}"),
                n => format!("tiles {set} ({n} tiles)"),
            };
            let _ = writeln!(
                s,
                "{which}: {} B used, {} B free; most live data in {}: {} B",
                m.used(),
                m.bytes[Category::Free.index()],
                self.step_name(peak),
                m.live[peak]
            );
            let mut ps: Vec<&Placement> = m.placements.iter().collect();
            ps.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.address.cmp(&b.address)));
            for p in ps {
                let b = &self.buffers[p.buffer];
                let _ = writeln!(
                    s,
                    "  {:#x} {:>8} B  {:<18} {:<22} {}..{}  {} at {}",
                    p.address,
                    p.bytes,
                    b.name,
                    b.category.title(),
                    self.step_name(p.first as usize),
                    self.step_name(p.last as usize),
                    b.op,
                    b.loc
                );
            }
        }
        s
    }
}

/// `file:line:col` of a location (its first file position), or `unknown`.
pub fn loc_text(cx: &Context, loc: Loc) -> String {
    fn find(cx: &Context, loc: Loc) -> Option<String> {
        match cx.loc_kind(loc) {
            LocKind::FileLineCol { file, line, col } => {
                Some(format!("{}:{line}:{col}", cx.str(*file)))
            }
            LocKind::Name { child, .. } => find(cx, *child),
            LocKind::CallSite { callee, .. } => find(cx, *callee),
            LocKind::Fused { locs, .. } => locs.iter().find_map(|l| find(cx, *l)),
            LocKind::Unknown => None,
        }
    }
    find(cx, loc).unwrap_or_else(|| "unknown".into())
}

/// The category of a buffer named by the exchange stage: host inputs and
/// constants by the program's lists, the rest by the suffix
/// `convert-tile-to-exchange` gives it (`s1.partials`, `s1.rhs_f16`);
/// a name it does not give (a hand-written program) counts as activations.
fn category_of(name: &str, host: bool) -> Category {
    if host {
        return Category::WeightsConstants;
    }
    let suffix = name.split_once('.').map_or("", |(_, s)| s);
    if suffix.starts_with("partials") {
        Category::Partials
    } else if suffix.starts_with("lhs_")
        || suffix.starts_with("rhs_")
        || suffix.ends_with("_blocked")
    {
        Category::Scratch
    } else {
        Category::Activations
    }
}

/// Per buffer, the label of the first compute set whose calls use it (a
/// buffer of an op whose superstep joined another's is named after its
/// own set).
fn first_writers(program: &Program) -> Vec<Option<&str>> {
    let mut out = vec![None; program.buffers.len()];
    for s in &program.steps {
        let Step::Compute(c) = s else { continue };
        for v in &c.vertices {
            for w in &v.call.record {
                if let ipu_program::Word::Buf(x, _) = *w {
                    if let Some(o @ None) = out.get_mut(x) {
                        *o = Some(c.label.as_str());
                    }
                }
            }
        }
    }
    out
}

/// What the report and the diagnostics know of every program buffer.
pub(crate) fn buffer_facts(cx: &Context, f: Op, program: &Program) -> Vec<BufferFacts> {
    let mut placed: BTreeMap<BufId, (ipu_program::Placed, String)> = BTreeMap::new();
    // A stored value's home, and the operand buffers it is placed in.
    let mut weights: Vec<BufId> = Vec::new();
    let mut store = |at: &ipu_program::Stored, what: String, weight: bool| {
        let as_placed = |buffer| ipu_program::Placed {
            buffer,
            mapping: at.home.as_ref().map_or_else(
                || ipu_dialects::tile::Mapping {
                    grid: vec![1; at.shape.len()],
                    first_tile: 0,
                    stride: 1,
                },
                |(_, m)| m.clone(),
            ),
            ty: at.ty,
            shape: at.shape.clone(),
            elem_bytes: at.elem_bytes,
            loc: at.loc,
        };
        if let Some((b, _)) = &at.home {
            placed.insert(*b, (as_placed(*b), what.clone()));
            if weight {
                weights.push(*b);
            }
        }
        for p in &at.placements {
            placed.insert(p.buffer, (as_placed(p.buffer), format!("{what} (placed)")));
            weights.push(p.buffer);
        }
    };
    for i in &program.inputs {
        let name = ipu_dialects::func::io_name(cx, f, "arg_attrs", i.arg)
            .unwrap_or_else(|| format!("arg{}", i.arg));
        store(&i.at, format!("host input {name}"), i.load);
    }
    for c in &program.constants {
        store(&c.at, "constant".to_string(), true);
    }
    // Parameters and constants count as weights; activations streamed in
    // each run as activations.
    let mut host = vec![false; program.buffers.len()];
    for b in weights {
        if let Some(h) = host.get_mut(b) {
            *h = true;
        }
    }
    let writers = first_writers(program);
    for o in &program.outputs {
        placed
            .entry(o.at.buffer)
            .or_insert((o.at.clone(), String::new()));
    }
    // Compute sets by name, for the op that fills `s<set>.*`.
    let sets: BTreeMap<&str, &str> = program
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Compute(c) => Some((c.name.as_str(), c.label.as_str())),
            Step::Exchange(_) | Step::Call(_) => None,
        })
        .collect();
    program
        .buffers
        .iter()
        .enumerate()
        .map(|(id, d)| {
            let at = placed.get(&id);
            let is_host = host[id];
            let op = match at {
                Some((_, op)) if !op.is_empty() => op.clone(),
                _ => {
                    let set = d.name.split('.').next().unwrap_or("");
                    sets.get(set)
                        .map(|l| l.to_string())
                        .or_else(|| writers[id].map(str::to_string))
                        .unwrap_or_else(|| "?".to_string())
                }
            };
            let (elem_bytes, unsplit) = match at {
                Some((p, _)) => (
                    Some(p.elem_bytes),
                    p.shape
                        .iter()
                        .enumerate()
                        .filter(|&(i, &n)| n > 1 && p.mapping.grid.get(i).is_none_or(|&g| g <= 1))
                        .map(|(i, &n)| (i, n))
                        .collect(),
                ),
                None => (None, Vec::new()),
            };
            BufferFacts {
                info: BufferInfo {
                    name: d.name.clone(),
                    category: category_of(&d.name, is_host),
                    bytes: d.bytes,
                    op,
                    loc: loc_text(cx, d.loc),
                    tiles: d.tiles.len(),
                },
                ir_loc: d.loc,
                elem_bytes,
                unsplit,
            }
        })
        .collect()
}

/// What the pointer table, records and rows of one tile occupy.
#[derive(Clone, Debug, Default)]
pub(crate) struct TableLayout {
    /// Where the code ends and the pointer table starts.
    pub table: u64,
    /// (address, bytes, category) of the table, each record and each row.
    pub spans: Vec<(u64, u64, Category)>,
}

/// The memory of one tile: its regions, categories and live bytes.
fn tile_memory(
    target: &Target,
    tile: u32,
    work: Option<(&TileWork, &[u64], &TableLayout)>,
    buffers: &[BufferInfo],
    nsteps: usize,
) -> TileMemory {
    let base = target.memory.base_address;
    // Data starts where the tile's code and tables end (aligned as
    // placement aligned it).
    let reserve_end = work.map_or(base, |(_, _, t)| {
        let table_end = t
            .spans
            .iter()
            .map(|&(a, len, _)| a + len)
            .max()
            .unwrap_or(t.table);
        crate::emit::data_base_of(target, table_end)
    });
    let end = target.memory_end();
    let mut regions: Vec<Region> = Vec::new();
    let push = |regions: &mut Vec<Region>, start: u64, len: u64, c: Category, b: Option<usize>| {
        if len == 0 {
            return;
        }
        match regions.last_mut() {
            Some(r) if r.category == c && r.buffer == b && r.start + r.len == start => r.len += len,
            _ => regions.push(Region {
                start,
                len,
                category: c,
                buffer: b,
            }),
        }
    };
    let mut placements = Vec::new();
    let mut live = vec![0; nsteps + 1];
    match work {
        None => {
            push(
                &mut regions,
                base,
                reserve_end - base,
                Category::FreeCodeReserve,
                None,
            );
            push(
                &mut regions,
                reserve_end,
                end - reserve_end,
                Category::Free,
                None,
            );
        }
        Some((w, addrs, table)) => {
            // The code reserve: code, then the table's spans in address order.
            push(&mut regions, base, table.table - base, Category::Code, None);
            let mut spans = table.spans.clone();
            spans.sort();
            let mut at = table.table;
            for &(a, len, c) in &spans {
                push(
                    &mut regions,
                    at,
                    a.saturating_sub(at),
                    Category::FreeCodeReserve,
                    None,
                );
                push(&mut regions, a, len, c, None);
                at = at.max(a + len);
            }
            push(
                &mut regions,
                at,
                reserve_end.saturating_sub(at),
                Category::FreeCodeReserve,
                None,
            );
            // Data: each elementary range to the longest-lived buffer on it.
            let clamp = |b: &Buffer| (b.first as usize, (b.last as usize).min(nsteps));
            let mut cuts: Vec<u64> = vec![reserve_end, end];
            for (i, b) in w.bufs.iter().enumerate() {
                cuts.push(addrs[i]);
                cuts.push(addrs[i] + b.size);
                let (first, last) = clamp(b);
                placements.push(Placement {
                    buffer: w.ids[i],
                    address: addrs[i],
                    bytes: b.size,
                    first: first as u32,
                    last: last as u32,
                });
                // A call frame's buffer only in the calls that use it (its
                // spans, each step once).
                let whole = [(b.first, b.last)];
                let spans = if b.spans.is_empty() {
                    &whole[..]
                } else {
                    &b.spans[..]
                };
                for &(a, z) in spans {
                    let (a, z) = ((a as usize).max(first), (z as usize).min(last));
                    for v in live.iter_mut().take(z + 1).skip(a) {
                        *v += b.size;
                    }
                }
            }
            cuts.retain(|&c| c >= reserve_end && c <= end);
            cuts.sort_unstable();
            cuts.dedup();
            // Swept in address order: the buffers covering each elementary
            // range are those that start at or below it and end above it.
            let key = |i: usize| {
                let (f, l) = clamp(&w.bufs[i]);
                (l - f, std::cmp::Reverse(i))
            };
            let mut by_start: Vec<usize> =
                (0..w.bufs.len()).filter(|&i| w.bufs[i].size > 0).collect();
            by_start.sort_unstable_by_key(|&i| addrs[i]);
            let mut next = 0;
            let mut covering: std::collections::BTreeSet<((usize, std::cmp::Reverse<usize>), u64)> =
                std::collections::BTreeSet::new();
            let mut ends: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>> =
                std::collections::BinaryHeap::new();
            for win in cuts.windows(2) {
                let (lo, hi) = (win[0], win[1]);
                while let Some(&i) = by_start.get(next).filter(|&&i| addrs[i] <= lo) {
                    let e = addrs[i] + w.bufs[i].size;
                    covering.insert((key(i), e));
                    ends.push(std::cmp::Reverse((e, i)));
                    next += 1;
                }
                while let Some(&std::cmp::Reverse((e, i))) = ends.peek().filter(|x| x.0 .0 < hi) {
                    covering.remove(&(key(i), e));
                    ends.pop();
                }
                let owner = covering.last().map(|&((_, std::cmp::Reverse(i)), _)| i);
                match owner {
                    Some(i) => {
                        let b = w.ids[i];
                        push(&mut regions, lo, hi - lo, buffers[b].category, Some(b))
                    }
                    None => push(&mut regions, lo, hi - lo, Category::Free, None),
                }
            }
        }
    }
    let mut bytes = [0; CATEGORY_COUNT];
    for r in &regions {
        bytes[r.category.index()] += r.len;
    }
    TileMemory {
        tile,
        started: work.is_some(),
        bytes,
        regions,
        live,
        placements,
    }
}

/// The report of a placed program. `tables` holds each started tile's
/// pointer table, records and rows; `addrs` its buffers' addresses.
pub(crate) fn report(
    target: &Target,
    tiles: &BTreeMap<u32, TileWork>,
    addrs: &BTreeMap<u32, Vec<u64>>,
    tables: &BTreeMap<u32, TableLayout>,
    facts: &[BufferFacts],
    steps: &[StepSummary],
) -> MemoryReport {
    let buffers: Vec<BufferInfo> = facts.iter().map(|f| f.info.clone()).collect();
    let nsteps = steps.len();
    // Each tile on its own, collected in tile order.
    use rayon::prelude::*;
    let out: Vec<_> = (0..target.tiles())
        .into_par_iter()
        .map(|t| {
            let work = match (tiles.get(&t), addrs.get(&t), tables.get(&t)) {
                (Some(w), Some(a), Some(tb)) => Some((w, a.as_slice(), tb)),
                _ => None,
            };
            tile_memory(target, t, work, &buffers, nsteps)
        })
        .collect();
    MemoryReport {
        target: target.name.clone(),
        memory_base: target.memory.base_address,
        tile_bytes: target.sram_bytes(),
        steps: steps.iter().map(|s| s.label.clone()).collect(),
        buffers,
        tiles: out,
        ..MemoryReport::default()
    }
}

/// The error for tile `tile` whose data does not fit (`why`): the largest
/// buffers, and a note at the source op of each saying what it holds and
/// what would make it smaller.
pub(crate) fn does_not_fit(
    loc: Loc,
    target: &Target,
    tile: u32,
    why: &str,
    work: &TileWork,
    facts: &[BufferFacts],
    steps: &[StepSummary],
) -> Diagnostic {
    let mut largest: Vec<usize> = (0..work.bufs.len()).collect();
    largest.sort_by(|&a, &b| {
        work.bufs[b]
            .size
            .cmp(&work.bufs[a].size)
            .then(work.bufs[a].name.cmp(&work.bufs[b].name))
    });
    largest.truncate(3);
    let held: Vec<String> = largest
        .iter()
        .map(|&i| format!("{} ({} B)", work.bufs[i].name, work.bufs[i].size))
        .collect();
    // What fills the tile: its buffers' bytes by category (each buffer
    // counted whole, whether or not it shares bytes with another).
    let mut by_cat = [(0u64, 0usize); CATEGORY_COUNT];
    for (i, b) in work.bufs.iter().enumerate() {
        let e = &mut by_cat[facts[work.ids[i]].info.category.index()];
        e.0 += b.size;
        e.1 += 1;
    }
    let fill: Vec<String> = Category::ALL
        .iter()
        .filter(|c| by_cat[c.index()].1 > 0)
        .map(|c| {
            let (bytes, n) = by_cat[c.index()];
            format!("{} {bytes} B in {n}", c.title())
        })
        .collect();
    let mut d = Diagnostic::error(
        loc,
        format!(
            "tile {tile} does not fit: {why}; largest buffers: {}; its buffers by category: {}",
            held.join(", "),
            fill.join(", ")
        ),
    );
    let step = |s: u32| -> &str {
        steps
            .get(s as usize)
            .and_then(|st| st.label.split(' ').next())
            .unwrap_or("end")
    };
    for &i in &largest {
        let b = &work.bufs[i];
        let f = &facts[work.ids[i]];
        let mut help = Vec::new();
        let all = target.tiles() as usize;
        if f.info.tiles < all {
            help.push(format!(
                "more tiles (its blocks are on {} of the {all} tiles)",
                f.info.tiles
            ));
            if let Some(&(dim, n)) = f.unsplit.first() {
                help.push(format!(
                    "a split along dimension {dim} too ({n} elements, unsplit now)"
                ));
            }
        }
        match f.elem_bytes {
            Some(4) => help.push("a 16-bit element type (f16, bf16), half the bytes".into()),
            Some(2) => help.push("an 8-bit element type (FP8), half the bytes".into()),
            _ => {}
        }
        let help = if help.is_empty() {
            "every tile already holds a block of it: fewer values alive together, or a target with more memory per tile".to_string()
        } else {
            help.join("; ")
        };
        d = d.with_note(
            f.ir_loc,
            format!(
                "{} ({} B, {}) is filled by {}, alive from {} to {}; would help: {help}",
                b.name,
                b.size,
                f.info.category.title(),
                f.info.op,
                step(b.first),
                step(b.last.min(steps.len() as u32)),
            ),
        );
    }
    d
}

thread_local! {
    static COLLECTED: RefCell<Option<Vec<MemoryReport>>> = const { RefCell::new(None) };
}

/// Runs `body` and returns, with its result, the memory reports of the
/// machine-stage builds it made on this thread (the pass pushes one per
/// function it compiles while collection is on).
pub fn collecting<T>(body: impl FnOnce() -> T) -> (T, Vec<MemoryReport>) {
    let outer = COLLECTED.with(|c| c.borrow_mut().replace(Vec::new()));
    let r = body();
    let got = COLLECTED.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (r, got.unwrap_or_default())
}

/// Keeps `report` when a caller of [`collecting`] asked for it.
pub(crate) fn offer(report: MemoryReport) {
    COLLECTED.with(|c| {
        if let Some(v) = c.borrow_mut().as_mut() {
            v.push(report);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_classified_by_what_they_hold() {
        assert_eq!(category_of("input0", true), Category::WeightsConstants);
        assert_eq!(category_of("s1.partials", false), Category::Partials);
        assert_eq!(category_of("s1.partials_in", false), Category::Partials);
        assert_eq!(category_of("s1.rhs_f16", false), Category::Scratch);
        assert_eq!(category_of("s1.lhs_chunks", false), Category::Scratch);
        assert_eq!(category_of("s4.result_blocked", false), Category::Scratch);
        assert_eq!(category_of("s1.result", false), Category::Activations);
        assert_eq!(category_of("s2.operand1", false), Category::Activations);
    }

    #[test]
    fn a_tile_without_a_program_is_all_free() {
        let t = Target::load("test16").unwrap();
        let m = tile_memory(&t, 3, None, &[], 4);
        // No program, so no code reserve: one free region over all of it.
        assert_eq!(m.regions.len(), 1);
        assert_eq!(m.regions[0].category, Category::Free);
        assert_eq!(m.regions[0].start, t.memory.base_address);
        assert_eq!(m.regions.iter().map(|r| r.len).sum::<u64>(), t.sram_bytes());
        assert_eq!(m.live, vec![0; 5]);
    }
}
