//! The plain data model of a package: what the compiler's machine stage
//! fills in and what the runtime loads.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// A SHA-256 digest.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// Lower-case hex, 64 characters.
    pub fn to_hex(&self) -> String {
        use fmt::Write as _;
        let mut s = String::with_capacity(64);
        for b in self.0 {
            let _ = write!(s, "{b:02x}");
        }
        s
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

/// An arithmetic run of tiles: `first, first + step, ...` (`count` tiles).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TileRun {
    pub first: u32,
    pub count: u32,
    /// Distance between consecutive tiles; ignored when `count == 1`.
    pub step: u32,
}

impl TileRun {
    /// The last tile of the run, `None` when empty, degenerate (step 0 with
    /// more than one tile) or overflowing.
    pub fn last(&self) -> Option<u32> {
        if self.count == 0 || (self.count > 1 && self.step == 0) {
            return None;
        }
        let span = u64::from(self.count - 1) * u64::from(self.step);
        u32::try_from(u64::from(self.first) + span).ok()
    }
}

/// A set of tiles written compactly as arithmetic runs
/// (`0 to 1471 step 2`), in the order the runs are listed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TileSet {
    pub runs: Vec<TileRun>,
}

impl TileSet {
    /// The empty set.
    pub fn new() -> TileSet {
        TileSet::default()
    }

    /// One tile.
    pub fn single(tile: u32) -> TileSet {
        TileSet::run(tile, 1, 1)
    }

    /// `count` tiles from `first` by `step`.
    pub fn run(first: u32, count: u32, step: u32) -> TileSet {
        TileSet {
            runs: vec![TileRun { first, count, step }],
        }
    }

    /// Tiles `first..=last` (inclusive, like the IR's `first to last`).
    pub fn range_inclusive(first: u32, last: u32) -> TileSet {
        if last < first {
            return TileSet::new();
        }
        TileSet::run(first, last - first + 1, 1)
    }

    /// Sorts and deduplicates `tiles` and compresses them greedily into
    /// arithmetic runs (deterministic: the same tiles give the same runs).
    pub fn from_tiles(tiles: impl IntoIterator<Item = u32>) -> TileSet {
        let mut t: Vec<u32> = tiles.into_iter().collect();
        t.sort_unstable();
        t.dedup();
        let mut runs = Vec::new();
        let mut i = 0;
        while i < t.len() {
            if i + 1 == t.len() {
                runs.push(TileRun {
                    first: t[i],
                    count: 1,
                    step: 1,
                });
                break;
            }
            let step = t[i + 1] - t[i];
            let mut j = i + 1;
            while j + 1 < t.len() && t[j + 1] - t[j] == step {
                j += 1;
            }
            let count = (j - i + 1) as u32;
            // A pair with a large gap is better as two singles followed by a
            // possible run starting at the second one.
            if count == 2 && step != 1 {
                runs.push(TileRun {
                    first: t[i],
                    count: 1,
                    step: 1,
                });
                i += 1;
                continue;
            }
            runs.push(TileRun {
                first: t[i],
                count,
                step,
            });
            i = j + 1;
        }
        TileSet { runs }
    }

    /// Number of tiles counted with multiplicity.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|r| u64::from(r.count)).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tiles, run by run. Iterating a set that has not been validated
    /// may be long (a run may claim `u32::MAX` tiles); a run whose tiles
    /// overflow `u32` stops at the overflow.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|r| {
            (0..r.count).map_while(move |i| {
                let t = u64::from(r.first) + u64::from(i) * u64::from(r.step);
                u32::try_from(t).ok()
            })
        })
    }

    /// Whether `tile` is in the set.
    pub fn contains(&self, tile: u32) -> bool {
        self.runs.iter().any(|r| {
            if r.count == 0 || tile < r.first {
                return false;
            }
            let d = tile - r.first;
            if r.step == 0 {
                return d == 0;
            }
            let q = d / r.step;
            q * r.step == d && u64::from(q) < u64::from(r.count)
        })
    }
}

impl fmt::Display for TileSet {
    /// `0 to 1471 step 2, 5, 7 to 9`; `none` for the empty set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.runs.is_empty() {
            return f.write_str("none");
        }
        for (i, r) in self.runs.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match (r.count, r.last()) {
                (1, _) => write!(f, "{}", r.first)?,
                (_, Some(last)) if r.step == 1 => write!(f, "{} to {last}", r.first)?,
                (_, Some(last)) => write!(f, "{} to {last} step {}", r.first, r.step)?,
                _ => write!(f, "<invalid run {} x{} step {}>", r.first, r.count, r.step)?,
            }
        }
        Ok(())
    }
}

/// Element types of host streams (spelled as in the IR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ElementType {
    F32,
    F16,
    BF16,
    F8E4M3FN,
    F8E5M2,
    I64,
    I32,
    I16,
    I8,
    U32,
    U16,
    U8,
    /// `i1`, stored as one byte.
    Bool,
}

impl ElementType {
    /// Bytes per element in host and tile memory.
    pub fn size_bytes(self) -> u64 {
        match self {
            ElementType::I64 => 8,
            ElementType::F32 | ElementType::I32 | ElementType::U32 => 4,
            ElementType::F16 | ElementType::BF16 | ElementType::I16 | ElementType::U16 => 2,
            ElementType::F8E4M3FN
            | ElementType::F8E5M2
            | ElementType::I8
            | ElementType::U8
            | ElementType::Bool => 1,
        }
    }

    /// The IR spelling (`f16`, `f8E4M3FN`, `ui8`, `i1`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ElementType::F32 => "f32",
            ElementType::F16 => "f16",
            ElementType::BF16 => "bf16",
            ElementType::F8E4M3FN => "f8E4M3FN",
            ElementType::F8E5M2 => "f8E5M2",
            ElementType::I64 => "i64",
            ElementType::I32 => "i32",
            ElementType::I16 => "i16",
            ElementType::I8 => "i8",
            ElementType::U32 => "ui32",
            ElementType::U16 => "ui16",
            ElementType::U8 => "ui8",
            ElementType::Bool => "i1",
        }
    }

    /// Whether a load stream may carry host elements of this type to the
    /// tiles as `device` elements: exact widenings only (every value of one
    /// is a value of the other), so the loader's conversion loses nothing.
    /// 8- and 16-bit integers widen to the floats that hold them (the
    /// quantized weights the tiles compute on as floats).
    pub fn widens_exactly_to(self, device: ElementType) -> bool {
        use ElementType::*;
        matches!(
            (self, device),
            (F8E4M3FN | F8E5M2 | I8 | U8, F16 | F32) | (F16 | BF16 | I16 | U16, F32)
        )
    }

    /// Whether a stream of `direction` may carry host elements of this
    /// type as `device` elements on the tiles: a load or input stream
    /// widens them exactly ([`ElementType::widens_exactly_to`]); an output
    /// stream narrows the tiles' floats back to 8- or 16-bit integers (the
    /// inverse of their exact widening), each element checked by the host
    /// to be an integer of this type (otherwise the run fails, naming the
    /// stream and the element).
    pub fn converts_to(self, device: ElementType, direction: Direction) -> bool {
        use ElementType::*;
        self.widens_exactly_to(device)
            && (direction.to_device() || matches!(self, I8 | U8 | I16 | U16))
    }

    /// All element types.
    pub const ALL: [ElementType; 13] = [
        ElementType::F32,
        ElementType::F16,
        ElementType::BF16,
        ElementType::F8E4M3FN,
        ElementType::F8E5M2,
        ElementType::I64,
        ElementType::I32,
        ElementType::I16,
        ElementType::I8,
        ElementType::U32,
        ElementType::U16,
        ElementType::U8,
        ElementType::Bool,
    ];
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ElementType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ElementType::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| format!("unknown element type `{s}`"))
    }
}

/// Which way a host stream flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// Host buffer -> tiles, before every run.
    Input,
    /// Tiles -> host buffer.
    Output,
    /// Host buffer -> tiles once, when the program is loaded (parameters:
    /// weights the runs read where they were put).
    Load,
}

impl Direction {
    /// Whether the stream carries host data to the tiles.
    pub fn to_device(self) -> bool {
        matches!(self, Direction::Input | Direction::Load)
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Input => "input",
            Direction::Output => "output",
            Direction::Load => "load",
        })
    }
}

/// One contiguous byte range moved between a host buffer and one tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Transfer {
    pub tile: u32,
    /// Address in the tile's memory.
    pub tile_address: u32,
    /// Byte offset in the host buffer.
    pub host_offset: u64,
    /// Bytes.
    pub len: u32,
}

/// One dimension of a [`StreamPiece::Grid`]: `count` repetitions of
/// everything inside it, each `tile_step` tiles, `address_step` tile-memory
/// bytes and `host_step` host bytes after the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GridDim {
    pub count: u32,
    pub tile_step: u32,
    pub address_step: u32,
    pub host_step: u64,
}

/// A part of a stream's layout: one transfer, a regular pattern covering a
/// tile set without one entry per tile, or a grid (since format 4).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StreamPiece {
    Single(Transfer),
    /// The `i`-th tile of `tiles` (in iteration order) moves `len` bytes at
    /// `tile_address` to/from host bytes `host_offset + i * host_stride`.
    /// A stride of 0 broadcasts the same bytes (inputs only).
    Regular {
        tiles: TileSet,
        tile_address: u32,
        host_offset: u64,
        host_stride: u64,
        len: u32,
    },
    /// `first`, repeated over `dims` (outermost first): the transfer at
    /// index `(i_0, i_1, ...)` moves `first.len` bytes at tile
    /// `first.tile + sum(i_k * tile_step_k)`, address
    /// `first.tile_address + sum(i_k * address_step_k)`, host offset
    /// `first.host_offset + sum(i_k * host_step_k)`; transfers in
    /// lexicographic index order. Steps are never negative, so `first` is
    /// the lowest of each and [`StreamPiece::last_transfer`] the highest.
    Grid {
        first: Transfer,
        dims: Vec<GridDim>,
    },
}

impl StreamPiece {
    /// How many transfers the piece stands for (saturating).
    pub fn transfer_count(&self) -> u64 {
        match self {
            StreamPiece::Single(_) => 1,
            StreamPiece::Regular { tiles, .. } => tiles.len(),
            StreamPiece::Grid { dims, .. } => dims
                .iter()
                .fold(1u64, |n, d| n.saturating_mul(u64::from(d.count))),
        }
    }

    /// A grid's transfer with every index at its highest, in `u64` (so it
    /// cannot overflow): (tile, tile address, host offset); `None` for an
    /// empty dimension.
    pub fn grid_last(first: &Transfer, dims: &[GridDim]) -> Option<(u64, u64, u64)> {
        let (mut t, mut a, mut h) = (
            u64::from(first.tile),
            u64::from(first.tile_address),
            u128::from(first.host_offset),
        );
        for d in dims {
            let n = u64::from(d.count.checked_sub(1)?);
            t += n * u64::from(d.tile_step);
            a += n * u64::from(d.address_step);
            h += u128::from(n) * u128::from(d.host_step);
        }
        Some((t, a, u64::try_from(h).unwrap_or(u64::MAX)))
    }

    /// Calls `f` with each of [`StreamPiece::transfers`] in turn, until it
    /// fails. A grid none of whose offsets overflow is walked without
    /// dividing per transfer.
    pub fn each_transfer<E>(&self, f: &mut impl FnMut(Transfer) -> Result<(), E>) -> Result<(), E> {
        if let StreamPiece::Grid { first, dims } = self {
            let fits = StreamPiece::grid_last(first, dims)
                .is_some_and(|(t, a, _)| t <= u64::from(u32::MAX) && a <= u64::from(u32::MAX))
                && dims
                    .iter()
                    .try_fold(u128::from(first.host_offset), |h, d| {
                        Some(h + u128::from(d.count.checked_sub(1)?) * u128::from(d.host_step))
                    })
                    .is_some_and(|h| h <= u128::from(u64::MAX));
            if fits {
                return grid_each(*first, dims, f);
            }
        }
        for t in self.transfers() {
            f(t)?;
        }
        Ok(())
    }

    /// The transfers this piece stands for. Offsets that overflow `u64`
    /// saturate (validation refuses them first).
    pub fn transfers(&self) -> Box<dyn Iterator<Item = Transfer> + '_> {
        match self {
            StreamPiece::Grid { first, dims } => {
                let total = self.transfer_count();
                Box::new((0..total).map(move |mut k| {
                    let mut t = *first;
                    // Mixed-radix digits of k, innermost dimension first.
                    for d in dims.iter().rev() {
                        let n = u64::from(d.count);
                        let i = k % n;
                        k /= n;
                        t.tile = t
                            .tile
                            .saturating_add((i as u32).saturating_mul(d.tile_step));
                        t.tile_address = t
                            .tile_address
                            .saturating_add((i as u32).saturating_mul(d.address_step));
                        t.host_offset = t.host_offset.saturating_add(i.saturating_mul(d.host_step));
                    }
                    t
                }))
            }
            StreamPiece::Single(t) => Box::new(std::iter::once(*t)),
            StreamPiece::Regular {
                tiles,
                tile_address,
                host_offset,
                host_stride,
                len,
            } => Box::new(tiles.iter().enumerate().map(move |(i, tile)| {
                Transfer {
                    tile,
                    tile_address: *tile_address,
                    host_offset: host_stride
                        .saturating_mul(i as u64)
                        .saturating_add(*host_offset),
                    len: *len,
                }
            })),
        }
    }
}

/// A host stream: a named host buffer and where its bytes live on tiles.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostStream {
    pub name: String,
    pub direction: Direction,
    /// The element type in tile memory (and of the layout's host offsets).
    pub element: ElementType,
    pub shape: Vec<u64>,
    pub layout: Vec<StreamPiece>,
    /// The element type of the host's buffer when it is not `element`: a
    /// load or input stream's host elements are widened exactly to
    /// `element` before the layout places them; an output stream's tile
    /// elements (exact integers held as floats) are narrowed to it as the
    /// host reads them ([`ElementType::converts_to`]; format 5, encoded
    /// beside the metadata, not in it, so older formats read unchanged).
    #[serde(skip)]
    pub host_element: Option<ElementType>,
}

impl HostStream {
    /// The element type of the host's buffer.
    pub fn host_type(&self) -> ElementType {
        self.host_element.unwrap_or(self.element)
    }

    /// Bytes of the buffer the host supplies or receives (`None` on
    /// overflow): [`HostStream::byte_len`] at the host's element type.
    pub fn host_byte_len(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(self.host_type().size_bytes(), |acc, &d| acc.checked_mul(d))
    }

    /// Bytes of the buffer the layout places (the host's buffer, converted
    /// when `host_element` is set; `None` on overflow).
    pub fn byte_len(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(self.element.size_bytes(), |acc, &d| acc.checked_mul(d))
    }

    /// Every transfer of the layout, piece by piece.
    pub fn transfers(&self) -> impl Iterator<Item = Transfer> + '_ {
        self.layout.iter().flat_map(|p| p.transfers())
    }

    /// Calls `f` with each of [`HostStream::transfers`] in turn, until it
    /// fails (grids walked without a division per transfer).
    pub fn each_transfer<E>(&self, f: &mut impl FnMut(Transfer) -> Result<(), E>) -> Result<(), E> {
        self.layout.iter().try_for_each(|p| p.each_transfer(f))
    }

    /// `tensor<128x768xf16>` (the host's element type).
    pub fn type_string(&self) -> String {
        let mut s = String::from("tensor<");
        for d in &self.shape {
            s.push_str(&d.to_string());
            s.push('x');
        }
        s.push_str(self.host_type().name());
        s.push('>');
        s
    }
}

/// A grid's transfers in [`StreamPiece::transfers`]'s order (the last
/// dimension innermost), when no offset overflows.
fn grid_each<E>(
    at: Transfer,
    dims: &[GridDim],
    f: &mut impl FnMut(Transfer) -> Result<(), E>,
) -> Result<(), E> {
    let Some((d, inner)) = dims.split_first() else {
        return f(at);
    };
    let mut t = at;
    for i in 0..d.count {
        if i > 0 {
            t.tile += d.tile_step;
            t.tile_address += d.address_step;
            t.host_offset += d.host_step;
        }
        grid_each(t, inner, f)?;
    }
    Ok(())
}

/// A host-callable program (`initialize`, `run`, ...).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EntryPoint {
    pub name: String,
    /// The command number the host sends to start it.
    pub command: u32,
    /// Bulk-synchronous phases (sync-separated supersteps) it runs.
    pub phases: u32,
}

/// Kinds of program steps in the optional summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StepKind {
    Compute,
    Sync,
    Exchange,
    HostExchange,
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StepKind::Compute => "compute",
            StepKind::Sync => "sync",
            StepKind::Exchange => "exchange",
            StepKind::HostExchange => "host_exchange",
        })
    }
}

/// One step of the program, for humans and profilers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StepSummary {
    pub kind: StepKind,
    /// The IR symbol or a short description (`@mm0`, `@x12`).
    pub label: String,
    /// Estimated cycles of the step, when known.
    pub cycles: Option<u64>,
    /// The step's roofline bound in cycles, its sync included: a compute
    /// set's work at the peak rate of the model's types over every tile (no
    /// plan does it faster); an exchange phase's endpoint bound, the most
    /// bytes one tile sends or receives in the transfers this plan makes
    /// (another plan may move fewer). `None` in files before format 3 and
    /// when the compiler did not compute one.
    pub bound: Option<u64>,
}

/// What the package was compiled for.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TargetInfo {
    pub name: String,
    /// SHA-256 of the target description file's text.
    pub description_sha256: Digest,
    pub tile_count: u32,
    /// First address of tile memory.
    pub memory_base: u32,
    /// Bytes of memory per tile.
    pub memory_bytes: u32,
}

impl TargetInfo {
    /// One past the last tile memory address (`u64`: it may be `2^32`).
    pub fn memory_end(&self) -> u64 {
        u64::from(self.memory_base) + u64::from(self.memory_bytes)
    }
}

/// Everything about a package that is not tile bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Metadata {
    pub target: TargetInfo,
    pub compiler_version: String,
    /// SHA-256 of the input IR text.
    pub source_sha256: Digest,
    pub entry_points: Vec<EntryPoint>,
    pub streams: Vec<HostStream>,
    /// Optional per-step program summary (may be empty).
    pub steps: Vec<StepSummary>,
    /// The `nn`-dialect IR text the package was compiled from: the
    /// reference model `ipu-run` checks the device results against
    /// (`None` in format-1 files and when the compiler leaves it out).
    /// Its SHA-256 is normally `source_sha256`.
    #[serde(default)]
    pub source: Option<String>,
    /// Where each op's result is complete (debug information for per-op
    /// checks, `ipu-run --check-ops`); kept in its own section,
    /// `.ipu.debug`, which a plain run ignores. Empty when there is none.
    #[serde(skip)]
    pub probes: Vec<Probe>,
}

/// Where an op's result can be read: at the end of step `step` (after that
/// superstep's sync, before the next one starts), the tiles' bytes that
/// `stream` describes hold it (an output stream's layout).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Probe {
    pub step: u32,
    /// The op that made the value (`tile.map`).
    pub op: String,
    /// Its location in the compiled model, without file names (`12:3`).
    pub source: String,
    pub stream: HostStream,
}

/// Initialised bytes at an address.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DataSegment {
    pub address: u32,
    pub bytes: Vec<u8>,
}

/// A zero-filled address range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ZeroRange {
    pub address: u32,
    pub len: u32,
}

/// What one tile's memory holds at load time. Exchange and instruction
/// streams are ordinary code or data here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TileImage {
    pub code_address: u32,
    pub code: Vec<u8>,
    pub data: Vec<DataSegment>,
    pub zero: Vec<ZeroRange>,
    /// Entry point name -> code address; every entry point of the
    /// metadata must be present.
    pub entries: BTreeMap<String, u32>,
}

impl TileImage {
    /// Bytes the image occupies in tile memory (code + data + zero).
    pub fn footprint(&self) -> u64 {
        self.code.len() as u64
            + self.data.iter().map(|d| d.bytes.len() as u64).sum::<u64>()
            + self.zero.iter().map(|z| u64::from(z.len)).sum::<u64>()
    }
}

/// A program shared by a set of tiles: what every one of them holds
/// (`image`, stored once) plus data only some of them hold (weights,
/// exchange tables), by tile.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ImageGroup {
    pub tiles: TileSet,
    /// Code, shared data, zero ranges and entries of every tile of the group.
    pub image: TileImage,
    /// Additional data segments of single tiles; every key is a tile of
    /// `tiles`, every list non-empty.
    pub tile_data: BTreeMap<u32, Vec<DataSegment>>,
}

impl ImageGroup {
    /// A group whose tiles hold exactly `image`.
    pub fn shared(tiles: TileSet, image: TileImage) -> ImageGroup {
        ImageGroup {
            tiles,
            image,
            tile_data: BTreeMap::new(),
        }
    }
}

/// A whole executable package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    pub meta: Metadata,
    /// Distinct programs, each with its tiles; a tile is in at most one
    /// group, and tiles in none are idle.
    pub images: Vec<ImageGroup>,
}

/// What makes tiles share a program: everything but the data segments.
type ProgramKey<'a> = (u32, &'a [u8], &'a [ZeroRange], &'a BTreeMap<String, u32>);

impl Package {
    /// Builds the groups from one full image per tile. Tiles with the same
    /// code, code address, zero ranges and entries share a group; the data
    /// segments every tile of a group holds identically are stored once in
    /// the group's image, the rest per tile. Groups are ordered by their
    /// lowest tile; a tile listed twice keeps its last image.
    /// [`Package::tile_image`] gives each image back (data in address
    /// order).
    pub fn from_tile_images(
        meta: Metadata,
        tiles: impl IntoIterator<Item = (u32, TileImage)>,
    ) -> Package {
        let by_tile: BTreeMap<u32, TileImage> = tiles.into_iter().collect();
        // Each tile's group, in tile order (groups by their lowest tile).
        let mut count = 0;
        let group_of: Vec<usize> = {
            let mut index: HashMap<ProgramKey<'_>, usize> = HashMap::new();
            by_tile
                .values()
                .map(|image| {
                    let key = (
                        image.code_address,
                        &image.code[..],
                        &image.zero[..],
                        &image.entries,
                    );
                    *index.entry(key).or_insert_with(|| {
                        count += 1;
                        count - 1
                    })
                })
                .collect()
        };
        let mut groups: Vec<Vec<(u32, TileImage)>> = (0..count).map(|_| Vec::new()).collect();
        for ((tile, image), g) in by_tile.into_iter().zip(group_of) {
            groups[g].push((tile, image));
        }
        // Segments are compared whole (address first): a tile holds few.
        let holds = |img: &TileImage, d: &DataSegment| img.data.iter().any(|x| x == d);
        let images = groups
            .into_iter()
            .map(|mut members| {
                let tiles = TileSet::from_tiles(members.iter().map(|(t, _)| *t));
                let (first_tile, first) = members.remove(0);
                // The first tile's segments every other member holds too are
                // shared (once each); the rest of every tile's are its own.
                let mut shared: Vec<DataSegment> = Vec::new();
                let mut first_own: Vec<DataSegment> = Vec::new();
                for d in first.data {
                    if shared.contains(&d) {
                        continue;
                    }
                    if members.iter().all(|(_, img)| holds(img, &d)) {
                        shared.push(d);
                    } else {
                        first_own.push(d);
                    }
                }
                let mut tile_data = BTreeMap::new();
                if !first_own.is_empty() {
                    tile_data.insert(first_tile, first_own);
                }
                for (tile, img) in members {
                    let own: Vec<DataSegment> = img
                        .data
                        .into_iter()
                        .filter(|d| !shared.contains(d))
                        .collect();
                    if !own.is_empty() {
                        tile_data.insert(tile, own);
                    }
                }
                ImageGroup {
                    tiles,
                    image: TileImage {
                        code_address: first.code_address,
                        code: first.code,
                        data: shared,
                        zero: first.zero,
                        entries: first.entries,
                    },
                    tile_data,
                }
            })
            .collect();
        Package { meta, images }
    }

    /// The index of the group a tile runs, `None` for an idle tile.
    pub fn group_of_tile(&self, tile: u32) -> Option<usize> {
        self.images.iter().position(|g| g.tiles.contains(tile))
    }

    /// Everything a tile holds at load time: its group's image plus its
    /// own data, data segments sorted by address. `None` for an idle tile.
    pub fn tile_image(&self, tile: u32) -> Option<TileImage> {
        let g = &self.images[self.group_of_tile(tile)?];
        let mut image = g.image.clone();
        if let Some(own) = g.tile_data.get(&tile) {
            image.data.extend(own.iter().cloned());
        }
        image.data.sort_by_key(|d| d.address);
        Some(image)
    }

    /// Bytes of tile contents stored in the package (shared bytes once).
    pub fn stored_bytes(&self) -> u64 {
        self.images
            .iter()
            .map(|g| {
                let own: u64 = g
                    .tile_data
                    .values()
                    .flatten()
                    .map(|d| d.bytes.len() as u64)
                    .sum();
                g.image.code.len() as u64
                    + g.image
                        .data
                        .iter()
                        .map(|d| d.bytes.len() as u64)
                        .sum::<u64>()
                    + own
            })
            .sum()
    }

    /// For every tile `0..tile_count`, the index of the image group it
    /// runs (`None`: idle). Tiles outside the range are ignored; on a
    /// tile listed twice the later group wins (validation refuses both).
    pub fn tile_table(&self) -> Vec<Option<usize>> {
        let n = self.meta.target.tile_count.min(crate::MAX_TILES) as usize;
        let mut table = vec![None; n];
        for (i, g) in self.images.iter().enumerate() {
            for r in &g.tiles.runs {
                if r.last().is_none_or(|l| l as usize >= n) {
                    continue;
                }
                for t in (TileSet { runs: vec![*r] }).iter() {
                    table[t as usize] = Some(i);
                }
            }
        }
        table
    }

    /// Reads and checks a package file.
    pub fn read_file(path: impl AsRef<std::path::Path>) -> Result<Package, crate::PackageError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| crate::PackageError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Package::from_elf_bytes(&bytes)
    }

    /// Validates and writes a package file (atomically: the old file or
    /// the complete new one).
    pub fn write_file(&self, path: impl AsRef<std::path::Path>) -> Result<(), crate::PackageError> {
        let path = path.as_ref();
        let bytes = self.try_to_elf_bytes()?;
        ipu_files::write_atomic(path, bytes).map_err(|e| crate::PackageError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_transfer_walks_a_grid_as_transfers_lists_it() {
        let mut x = 7u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for case in 0..2000 {
            // Some grids reach past u32 addresses or u64 host offsets (saturated).
            let big = case % 5 == 0;
            let first = Transfer {
                tile: next(1500) as u32,
                tile_address: if big {
                    u32::MAX - next(1000) as u32
                } else {
                    next(1 << 20) as u32
                },
                host_offset: if big {
                    u64::MAX - next(1 << 20)
                } else {
                    next(1 << 30)
                },
                len: 1 + next(64) as u32,
            };
            let dims: Vec<GridDim> = (0..1 + next(4))
                .map(|_| GridDim {
                    count: next(5) as u32,
                    tile_step: next(3) as u32,
                    address_step: next(300) as u32,
                    host_step: next(5000),
                })
                .collect();
            let p = StreamPiece::Grid { first, dims };
            let mut walked = Vec::new();
            p.each_transfer(&mut |t| {
                walked.push(t);
                Ok::<_, ()>(())
            })
            .unwrap();
            assert_eq!(walked, p.transfers().collect::<Vec<_>>(), "{p:?}");
        }
    }
}
