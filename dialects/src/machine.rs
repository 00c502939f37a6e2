//! The `machine` dialect: what each tile holds. The memory maps (tiles
//! whose buffers sit at the same addresses share one `machine.memory_map`,
//! printed once with the set of tiles it covers), the code images
//! (`machine.code`), and a whole executable package as IR:
//!
//! * `machine.package`: the metadata (target, compiler version, source hash
//!   and text, entry points, step summaries); exactly one per module;
//! * `machine.host_stream`: one per host stream (name, direction, element
//!   type, shape, layout pieces);
//! * `machine.probe`: where an op's result can be read (step, op, source
//!   location, element type, shape, layout pieces): the debug section;
//! * `machine.image`: one per image group, printed once with its tile set
//!   (`"0 to 1471 step 2"`): code address, code bytes, entries, zero ranges
//!   and shared data segments;
//! * `machine.tile_data`: one per data segment a single tile holds (tile,
//!   address, bytes), belonging to the group that runs the tile.
//!
//! Addresses are hex strings (`"0x4c000"`), byte contents hex strings
//! (`"0x0102..."`; beyond [`MAX_STRING_PIECE`] bytes, like a long source
//! text, an array of string pieces to concatenate), sizes `i64` integers; host offsets and strides (`u64`)
//! are `i64` with the same bits. [`emit_package`] writes these ops,
//! [`read_package`] reads them back (exactly: `read(emit(p)) == p` for every
//! valid package) and checks the result with `Package::validate`; anything
//! malformed is a diagnostic at the op.

use std::collections::BTreeMap;

use ipu_ir::context::{Block, Context, Op, OperationState};
use ipu_ir::declare_op;
use ipu_ir::diag::Diagnostic;
use ipu_ir::opdef::{constraints, AttrConstraint, Dialect};
use ipu_ir::types::{Attr, AttrKind, Loc};
use ipu_package::{
    DataSegment, Digest, Direction, ElementType, EntryPoint, GridDim, HostStream, ImageGroup,
    Metadata, Package, PackageError, Probe, StepKind, StepSummary, StreamPiece, TargetInfo,
    TileImage, TileRun, TileSet, Transfer, ZeroRange,
};

const I64_ATTR: AttrConstraint = AttrConstraint {
    description: "64-bit integer attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Integer { ty, .. } if *ty == ipu_ir::Type::I64),
};

const STRING_ARRAY_ATTR: AttrConstraint = AttrConstraint {
    description: "array of string attributes",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Array(items) if items.iter().all(|&i| as_str(cx, i).is_some())),
};

/// The readable listings (memory maps, code, exchange rows): their `tiles`
/// is a tile set of at least one tile, their sizes are not negative.
fn verify_listing(cx: &Context, op: Op) -> Result<(), Diagnostic> {
    let f = Fields { cx, op };
    let tiles = f.with("tiles", parse_tiles(f.str("tiles")?))?;
    if tiles.is_empty() {
        return Err(f.err("attribute 'tiles' must name at least one tile"));
    }
    for name in ["used", "free", "code_bytes"] {
        if cx.get_attr(op, name).is_some() {
            f.int::<u32>(name)?;
        }
    }
    Ok(())
}

declare_op! {
    pub static MEMORY_MAP: MemoryMap = "machine.memory_map" {
        operands: [],
        attributes: [
            tiles: &str [constraints::STRING_ATTR],
            used: i64 [I64_ATTR],
            free: i64 [I64_ATTR],
            buffers: Attr [STRING_ARRAY_ATTR],
        ],
        summary: "The data memory of a set of tiles: every buffer with its address, size and what it holds \
                  (buffers whose lifetimes do not overlap share addresses), the bytes used and still free.",
        assembly_format: Some("attr-dict"),
        verify: Some(verify_listing),
    }
}

declare_op! {
    pub static CODE: Code = "machine.code" {
        operands: [],
        attributes: [
            tiles: &str [constraints::STRING_ATTR],
            kernels: Attr [STRING_ARRAY_ATTR],
            code_bytes: i64 [I64_ATTR],
            exec: &str [constraints::STRING_ATTR],
            program: Option<Attr> [STRING_ARRAY_ATTR],
        ],
        summary: "The code image of a set of tiles: the kernel specialisations linked into it, its size, its \
                  executable ranges, and the program its supervisor runs (one entry per superstep: the kernels it \
                  calls, or the exchange row it runs, then the sync).",
        assembly_format: Some("attr-dict"),
        verify: Some(verify_listing),
    }
}

declare_op! {
    pub static EXCHANGE_ROW: ExchangeRow = "machine.exchange_row" {
        operands: [],
        attributes: [
            tiles: &str [constraints::STRING_ATTR],
            phase: &str [constraints::STRING_ATTR],
            entries: Attr [STRING_ARRAY_ATTR],
        ],
        summary: "A readable copy of the exchange-table row a set of tiles runs in one exchange phase (printed \
                  on request): each entry with its cycle from the engine's start, `send`, `select` (the sender \
                  this tile's port listens to from then on) or `capture` (bytes written from the port, or from \
                  the supertile partner's port).",
        assembly_format: Some("attr-dict"),
        verify: Some(verify_listing),
    }
}

const DICT_ATTR: AttrConstraint = AttrConstraint {
    description: "dictionary attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Dictionary(_)),
};
const I64_ARRAY: AttrConstraint = AttrConstraint {
    description: "array<i64: ...> attribute",
    check: |cx, a| matches!(cx.attr_kind(a), AttrKind::I64Array(_)),
};

/// A string, or (for text longer than [`MAX_STRING_PIECE`] bytes) an array
/// of strings whose concatenation is the text.
const LONG_STRING_ATTR: AttrConstraint = AttrConstraint {
    description: "string attribute, or array of string attributes (a long string in pieces)",
    // Checked piece by piece: the pieces are not joined (a blob's text is large).
    check: |cx, a| is_long_str(cx, a),
};

/// The longest string literal the package ops print: longer strings (code,
/// data bytes, source text) are printed as arrays of pieces of at most this
/// many bytes, so that no single token is huge (the IR lexer of a debug
/// build recurses per character of a token).
pub const MAX_STRING_PIECE: usize = 8 * 1024;
/// The most escaped bytes (`\0A`, `\22`, non-ASCII...) a printed piece
/// holds (each costs the debug lexer several stack frames).
pub const MAX_STRING_ESCAPES: usize = 1024;

/// `s` as a string attribute, or as an array of pieces (split at character
/// boundaries) when longer than [`MAX_STRING_PIECE`].
fn long_string_attr(cx: &mut Context, s: &str) -> Attr {
    let escaped = |b: &u8| !(0x20..=0x7e).contains(b) || *b == b'"' || *b == b'\\';
    let fits = |t: &str| {
        t.len() <= MAX_STRING_PIECE && t.bytes().filter(escaped).count() <= MAX_STRING_ESCAPES
    };
    if fits(s) {
        return cx.string_attr(s);
    }
    let mut pieces = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        // Up to MAX_STRING_PIECE bytes and MAX_STRING_ESCAPES escaped ones.
        let mut end = 0;
        let mut escapes = 0;
        for (i, b) in rest.bytes().enumerate().take(MAX_STRING_PIECE) {
            if escaped(&b) {
                escapes += 1;
                if escapes > MAX_STRING_ESCAPES {
                    break;
                }
            }
            end = i + 1;
        }
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if end == 0 {
            end = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        pieces.push(cx.string_attr(&rest[..end]));
        rest = &rest[end..];
    }
    cx.array_attr(pieces)
}

/// `bytes` as [`hex_bytes`] text in a [`LONG_STRING_ATTR`]: the pieces
/// [`long_string_attr`] would cut, made without the whole text (hex digits
/// need no escapes).
fn hex_attr(cx: &mut Context, bytes: &[u8]) -> Attr {
    intern_hex(cx, hex_text(bytes))
}

/// `bytes` as hex text: one string (`0x...`), or for text longer than
/// [`MAX_STRING_PIECE`] bytes its pieces, the first with the `0x`.
enum HexText {
    One(String),
    Pieces(Vec<String>),
}

fn hex_text(bytes: &[u8]) -> HexText {
    if 2 + 2 * bytes.len() <= MAX_STRING_PIECE {
        return HexText::One(hex_bytes(bytes));
    }
    let first = (MAX_STRING_PIECE - 2) / 2;
    let mut pieces = vec![hex_bytes(&bytes[..first])];
    for chunk in bytes[first..].chunks(MAX_STRING_PIECE / 2) {
        let mut text = Vec::with_capacity(2 * chunk.len());
        hex_digits_into(chunk, &mut text);
        pieces.push(String::from_utf8(text).expect("hex digits are ASCII"));
    }
    HexText::Pieces(pieces)
}

/// The text's attribute; the strings move into the context (hex text is
/// large: not copied again).
fn intern_hex(cx: &mut Context, text: HexText) -> Attr {
    let owned = |cx: &mut Context, s: String| cx.attr(AttrKind::String(s.into_boxed_str()));
    match text {
        HexText::One(s) => owned(cx, s),
        HexText::Pieces(ps) => {
            let pieces = ps.into_iter().map(|p| owned(cx, p)).collect();
            cx.array_attr(pieces)
        }
    }
}

/// The hex attributes of byte blobs taken in order, their text made a batch
/// at a time in parallel, a batch ahead of the attributes (which are still
/// made in order) by a thread of its own; on a rayon pool's thread, which
/// must not wait for work its own pool is to do, each batch is made when
/// it is needed instead.
struct HexQueue<'env> {
    source: HexSource<'env>,
    ready: std::collections::VecDeque<HexText>,
}

/// Where a [`HexQueue`]'s batches come from.
enum HexSource<'env> {
    Ahead(std::sync::mpsc::Receiver<Vec<HexText>>),
    Inline(std::iter::Peekable<std::vec::IntoIter<&'env [u8]>>),
}

impl<'env> HexQueue<'env> {
    /// About this many bytes' text is made at once (bounds the memory it holds).
    const BATCH_BYTES: usize = 4 << 20;

    /// The text of the next batch of `rest`, in order (None when it is empty).
    fn batch(
        rest: &mut std::iter::Peekable<std::vec::IntoIter<&'env [u8]>>,
    ) -> Option<Vec<HexText>> {
        use rayon::prelude::*;
        rest.peek()?;
        let mut batch = Vec::new();
        let mut size = 0;
        for b in rest.by_ref() {
            size += b.len();
            batch.push(b);
            if size >= Self::BATCH_BYTES {
                break;
            }
        }
        Some(batch.par_iter().map(|b| hex_text(b)).collect())
    }

    /// Starts making the text of `blobs` (on a thread of `scope` unless
    /// this is a pool's thread).
    fn new<'scope>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        blobs: Vec<&'env [u8]>,
    ) -> Self {
        let mut rest = blobs.into_iter().peekable();
        if rayon::current_thread_index().is_some() {
            return HexQueue {
                source: HexSource::Inline(rest),
                ready: Default::default(),
            };
        }
        // One batch waiting, one being made: the rest wait for the reader.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        scope.spawn(move || {
            while let Some(texts) = Self::batch(&mut rest) {
                // The reader has stopped: nothing more is needed.
                if tx.send(texts).is_err() {
                    break;
                }
            }
        });
        HexQueue {
            source: HexSource::Ahead(rx),
            ready: Default::default(),
        }
    }

    /// The next blob's attribute; `bytes` is that blob, its text made here
    /// should the queue have run out.
    fn next(&mut self, cx: &mut Context, bytes: &[u8]) -> Attr {
        if self.ready.is_empty() {
            let batch = match &mut self.source {
                HexSource::Ahead(rx) => rx.recv().ok(),
                HexSource::Inline(rest) => Self::batch(rest),
            };
            if let Some(batch) = batch {
                self.ready = batch.into();
            }
        }
        match self.ready.pop_front() {
            Some(text) => intern_hex(cx, text),
            // More blobs asked for than listed: made here, in turn.
            None => hex_attr(cx, bytes),
        }
    }
}

/// The pieces of a [`LONG_STRING_ATTR`] attribute (one for a string).
fn str_pieces(cx: &Context, a: Attr) -> Option<Vec<&str>> {
    match cx.attr_kind(a) {
        AttrKind::String(s) => Some(vec![&**s]),
        AttrKind::Array(items) => items.iter().map(|&i| as_str(cx, i)).collect(),
        _ => None,
    }
}

/// The bytes of `0x...` hex text given in pieces, appended to `out` when
/// given (else only checked); the number of bytes. Errors are
/// [`parse_hex_bytes`]'s for the whole text.
fn hex_pieces(pieces: &[&str], mut out: Option<&mut Vec<u8>>) -> Result<usize, String> {
    let mut fast = || -> Option<usize> {
        let (head, tail) = pieces.split_first()?;
        let body = head.strip_prefix("0x")?;
        let total: usize = body.len() + tail.iter().map(|p| p.len()).sum::<usize>();
        if !total.is_multiple_of(2) {
            return None;
        }
        if let Some(o) = out.as_deref_mut() {
            o.reserve(total / 2);
        }
        // A digit left over from a piece of odd length, waiting for its pair.
        let mut high: Option<u8> = None;
        for piece in std::iter::once(body).chain(tail.iter().copied()) {
            let mut b = piece.as_bytes();
            if let (Some(h), Some((&c, rest))) = (high, b.split_first()) {
                let d = hex_digit(c)?;
                if let Some(o) = out.as_deref_mut() {
                    o.push(h << 4 | d);
                }
                high = None;
                b = rest;
            }
            let pairs = b.chunks_exact(2);
            if let [c] = pairs.remainder() {
                high = Some(hex_digit(*c)?);
            }
            match out.as_deref_mut() {
                Some(o) => {
                    for p in pairs {
                        let (h, l) = (HEX_VALUES[p[0] as usize], HEX_VALUES[p[1] as usize]);
                        if (h | l) == NOT_HEX {
                            return None;
                        }
                        o.push(h << 4 | l);
                    }
                }
                None => {
                    if !all_hex_digits(&b[..b.len() & !1]) {
                        return None;
                    }
                }
            }
        }
        Some(total / 2)
    };
    match fast() {
        Some(n) => Ok(n),
        // Malformed: the whole text, for the exact message.
        None => parse_hex_bytes(&pieces.concat()).map(|b| b.len()),
    }
}

/// The bytes of a hex [`LONG_STRING_ATTR`] attribute.
fn hex_attr_bytes(cx: &Context, a: Attr) -> Option<Result<Vec<u8>, String>> {
    let pieces = str_pieces(cx, a)?;
    let mut out = Vec::new();
    Some(hex_pieces(&pieces, Some(&mut out)).map(|_| out))
}

/// Whether `a` is a [`LONG_STRING_ATTR`]: a string, or an array of strings.
fn is_long_str(cx: &Context, a: Attr) -> bool {
    match cx.attr_kind(a) {
        AttrKind::String(_) => true,
        AttrKind::Array(items) => items.iter().all(|&i| as_str(cx, i).is_some()),
        _ => false,
    }
}

/// The text of a [`LONG_STRING_ATTR`] attribute.
fn long_str(cx: &Context, a: Attr) -> Option<std::borrow::Cow<'_, str>> {
    match cx.attr_kind(a) {
        AttrKind::String(s) => Some(std::borrow::Cow::Borrowed(s)),
        AttrKind::Array(items) => {
            let mut out = String::new();
            for &i in items {
                out.push_str(as_str(cx, i)?);
            }
            Some(std::borrow::Cow::Owned(out))
        }
        _ => None,
    }
}

declare_op! {
    pub static PACKAGE: PackageOp = "machine.package" {
        operands: [],
        attributes: [
            target: &str [constraints::STRING_ATTR],
            target_sha256: &str [constraints::STRING_ATTR],
            tile_count: i64 [I64_ATTR],
            memory_base: &str [constraints::STRING_ATTR],
            memory_bytes: i64 [I64_ATTR],
            compiler_version: &str [constraints::STRING_ATTR],
            source_sha256: &str [constraints::STRING_ATTR],
            entry_points: Attr [constraints::DICT_ARRAY_ATTR],
            steps: Attr [constraints::DICT_ARRAY_ATTR],
            source: Option<Attr> [LONG_STRING_ATTR],
        ],
        summary: "The metadata of an executable package: the target (name, SHA-256 of its description, tile count, \
                  memory base and size), the compiler version, the SHA-256 and (optionally) the text of the nn-dialect \
                  source, the entry points ({name, command, phases}) and the step summaries ({kind, label, cycles?, bound?}: the estimate and the roofline bound). \
                  One per module; the `machine.host_stream`, `machine.image` and `machine.tile_data` ops of the module \
                  are the rest of the package.",
        assembly_format: Some("$target attr-dict"),
        verify: Some(|cx, op| decode_package(cx, op).map(|_| ())),
    }
}

declare_op! {
    pub static HOST_STREAM: HostStreamOp = "machine.host_stream" {
        operands: [],
        attributes: [
            name: &str [constraints::STRING_ATTR],
            direction: &str [constraints::STRING_ATTR],
            element: &str [constraints::STRING_ATTR],
            shape: &[i64] [I64_ARRAY],
            layout: Attr [constraints::DICT_ARRAY_ATTR],
            host_element: Option<&str> [constraints::STRING_ATTR],
        ],
        summary: "A host stream of the package: its name, direction (input, output, or load: written once when the \
                  program is loaded), element type, shape and layout \
                  (a load or input stream with `host_element` takes the host's elements of that type, widened \
                  exactly to `element` as it is written; an output stream with one gives the host its 8- or 16-bit \
                  integers, each tile element checked to be one and narrowed; the layout's offsets are of the \
                  tiles' buffer) \
                  (pieces {tile, address, offset, len} or {tiles, address, offset, stride, len}: the i-th tile of \
                  `tiles` moves `len` bytes at `address` to/from host bytes offset + i * stride).",
        assembly_format: Some("$name attr-dict"),
        verify: Some(|cx, op| decode_stream(cx, op).map(|_| ())),
    }
}

declare_op! {
    pub static PROBE: ProbeOp = "machine.probe" {
        operands: [],
        attributes: [
            step: i64 [I64_ATTR],
            source_op = "op": &str [constraints::STRING_ATTR],
            source: &str [constraints::STRING_ATTR],
            element: &str [constraints::STRING_ATTR],
            shape: &[i64] [I64_ARRAY],
            layout: Attr [constraints::DICT_ARRAY_ATTR],
        ],
        summary: "Where an op's result can be read (debug information for per-op checks; a plain run ignores it): at \
                  the end of step `step`, the tile bytes of `layout` (as for machine.host_stream) hold the value of \
                  element type `element` and shape `shape` that op `op` at `source` made.",
        assembly_format: Some("attr-dict"),
        verify: Some(|cx, op| decode_probe(cx, op).map(|_| ())),
    }
}

declare_op! {
    pub static IMAGE: Image = "machine.image" {
        operands: [],
        attributes: [
            tiles: &str [constraints::STRING_ATTR],
            code_address: &str [constraints::STRING_ATTR],
            code: Attr [LONG_STRING_ATTR],
            entries: Attr [DICT_ATTR],
            zero: Attr [constraints::DICT_ARRAY_ATTR],
            data: Attr [constraints::DICT_ARRAY_ATTR],
        ],
        summary: "An image group of the package: the tiles running it, its code address and bytes, entry points \
                  (name -> address), zero ranges ({address, len}) and the data segments every tile of the group holds \
                  ({address, bytes}).",
        assembly_format: Some("`tiles` $tiles attr-dict"),
        verify: Some(|cx, op| decode_image(cx, op).map(|_| ())),
    }
}

declare_op! {
    pub static TILE_DATA: TileData = "machine.tile_data" {
        operands: [],
        attributes: [
            tile: i64 [I64_ATTR],
            address: &str [constraints::STRING_ATTR],
            bytes: Attr [LONG_STRING_ATTR],
        ],
        summary: "A data segment only one tile holds (weights, tables): the tile, the address and the bytes. It \
                  belongs to the image group that runs the tile.",
        assembly_format: Some("attr-dict"),
        verify: Some(|cx, op| decode_tile_data(cx, op, false).map(|_| ())),
    }
}

pub static MACHINE_DIALECT: Dialect = Dialect {
    name: "machine",
    description:
        "Per-tile code images and memory maps of the machine, and whole executable packages.",
    ops: &[
        &MEMORY_MAP,
        &CODE,
        &EXCHANGE_ROW,
        &PACKAGE,
        &HOST_STREAM,
        &PROBE,
        &IMAGE,
        &TILE_DATA,
    ],
    materialize_constant: None,
};

// ---------------------------------------------------------------------------
// Text forms of the values.

/// `0x` and lower-case hex digits, two per byte.
pub fn hex_bytes(bytes: &[u8]) -> String {
    let mut s = Vec::with_capacity(2 + 2 * bytes.len());
    s.extend_from_slice(b"0x");
    hex_digits_into(bytes, &mut s);
    String::from_utf8(s).expect("hex digits are ASCII")
}

/// Appends each byte's two lower-case hex digits to `out`.
fn hex_digits_into(bytes: &[u8], out: &mut Vec<u8>) {
    // Each byte's two digits, looked up whole.
    const PAIRS: [[u8; 2]; 256] = {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut t = [[0u8; 2]; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = [DIGITS[i >> 4], DIGITS[i & 15]];
            i += 1;
        }
        t
    };
    let at = out.len();
    out.resize(at + 2 * bytes.len(), 0);
    for (d, &b) in out[at..].chunks_exact_mut(2).zip(bytes) {
        d.copy_from_slice(&PAIRS[b as usize]);
    }
}

/// Each character's hex value, or [`NOT_HEX`].
const HEX_VALUES: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};
const NOT_HEX: u8 = 0xff;

/// Whether every byte of `b` is a hex digit (the set [`HEX_VALUES`]
/// takes), checked a chunk at a time without a branch per byte.
fn all_hex_digits(b: &[u8]) -> bool {
    let is_hex = |c: u8| (c.wrapping_sub(b'0') < 10) | ((c | 0x20).wrapping_sub(b'a') < 6);
    b.chunks(64)
        .all(|chunk| chunk.iter().fold(true, |ok, &c| ok & is_hex(c)))
}

fn hex_digit(c: u8) -> Option<u8> {
    match HEX_VALUES[c as usize] {
        NOT_HEX => None,
        d => Some(d),
    }
}

/// The bytes of `0x...` (an even number of hex digits; `0x` alone is empty).
pub fn parse_hex_bytes(s: &str) -> Result<Vec<u8>, String> {
    let body = s.strip_prefix("0x").ok_or_else(|| {
        format!(
            "bytes must be written `0x` followed by hex digits, got `{}`",
            clip(s)
        )
    })?;
    let b = body.as_bytes();
    if b.len() % 2 != 0 {
        return Err(format!(
            "odd number of hex digits ({}): every byte takes two",
            b.len()
        ));
    }
    let mut out = Vec::with_capacity(b.len() / 2);
    for (i, pair) in b.chunks_exact(2).enumerate() {
        match (hex_digit(pair[0]), hex_digit(pair[1])) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => {
                let k = if hex_digit(pair[0]).is_none() {
                    2 * i
                } else {
                    2 * i + 1
                };
                return Err(format!(
                    "invalid hex digit `{}` at position {} of the bytes",
                    body[k..].chars().next().unwrap_or('?'),
                    k
                ));
            }
        }
    }
    Ok(out)
}

fn clip(s: &str) -> String {
    if s.len() <= 40 {
        s.to_string()
    } else {
        let mut end = 40;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    }
}

/// `0x4c000`.
pub fn hex_address(a: u32) -> String {
    format!("{a:#x}")
}

/// A 32-bit address written `0x...` (hex).
pub fn parse_address(s: &str) -> Result<u32, String> {
    let body = s.strip_prefix("0x").ok_or_else(|| {
        format!(
            "an address is written `0x` and hex digits, got `{}`",
            clip(s)
        )
    })?;
    if body.is_empty() || !body.bytes().all(|c| hex_digit(c).is_some()) {
        return Err(format!("`{}` is not a hex address", clip(s)));
    }
    u32::from_str_radix(body, 16).map_err(|_| format!("address `{}` does not fit 32 bits", clip(s)))
}

fn parse_digest(s: &str) -> Result<Digest, String> {
    let b = s.as_bytes();
    if b.len() != 64 || !b.iter().all(|&c| hex_digit(c).is_some()) {
        return Err(format!("a SHA-256 is 64 hex digits, got `{}`", clip(s)));
    }
    let mut d = [0u8; 32];
    for (i, pair) in b.chunks_exact(2).enumerate() {
        d[i] = hex_digit(pair[0]).unwrap_or(0) << 4 | hex_digit(pair[1]).unwrap_or(0);
    }
    Ok(Digest(d))
}

/// A tile set in `TileSet`'s `Display` form (`0 to 1471 step 2, 5, 7 to 9`,
/// `none`); a single-tile run whose step is not 1 is written `5 step 3`,
/// so that every valid set prints and parses back identically.
pub fn tiles_to_string(t: &TileSet) -> String {
    if t.runs.iter().all(|r| r.count != 1 || r.step == 1) {
        return t.to_string();
    }
    let parts: Vec<String> = t
        .runs
        .iter()
        .map(|r| {
            if r.count == 1 && r.step != 1 {
                format!("{} step {}", r.first, r.step)
            } else {
                TileSet { runs: vec![*r] }.to_string()
            }
        })
        .collect();
    parts.join(", ")
}

/// Parses [`tiles_to_string`]'s form.
pub fn parse_tiles(s: &str) -> Result<TileSet, String> {
    let s = s.trim();
    if s == "none" {
        return Ok(TileSet::new());
    }
    let num = |w: &str| -> Result<u32, String> {
        w.parse::<u32>()
            .map_err(|_| format!("`{w}` is not a tile number in the tile set `{}`", clip(s)))
    };
    let mut runs = Vec::new();
    for part in s.split(',') {
        let words: Vec<&str> = part.split_whitespace().collect();
        let run = match words[..] {
            [a] => TileRun {
                first: num(a)?,
                count: 1,
                step: 1,
            },
            [a, "step", st] => TileRun {
                first: num(a)?,
                count: 1,
                step: num(st)?,
            },
            [a, "to", b] | [a, "to", b, "step", _] => {
                let (first, last) = (num(a)?, num(b)?);
                let step = if words.len() == 5 { num(words[4])? } else { 1 };
                if last <= first || step == 0 || (last - first) % step != 0 {
                    return Err(format!(
                        "`{}` is not a run: it needs first < last and a step >= 1 dividing last - first",
                        part.trim()
                    ));
                }
                // `0 to 4294967295` holds one tile more than a u32 counts.
                let count = ((last - first) / step).checked_add(1).ok_or_else(|| {
                    format!("`{}` holds more than {} tiles", part.trim(), u32::MAX)
                })?;
                TileRun { first, count, step }
            }
            _ => {
                return Err(format!(
                    "`{}` is not `N`, `A to B` or `A to B step S` in the tile set `{}`",
                    part.trim(),
                    clip(s)
                ))
            }
        };
        runs.push(run);
    }
    Ok(TileSet { runs })
}

fn step_kind(s: &str) -> Option<StepKind> {
    [
        StepKind::Compute,
        StepKind::Sync,
        StepKind::Exchange,
        StepKind::HostExchange,
    ]
    .into_iter()
    .find(|k| k.to_string() == s)
}

// ---------------------------------------------------------------------------
// Emitting.

fn build(cx: &mut Context, name: &str, attrs: Vec<(&str, Attr)>, loc: Loc) -> Op {
    let n = cx.op_name(name);
    let mut st = OperationState::new(n, loc);
    let entries = attrs.into_iter().map(|(k, v)| (cx.sym(k), v)).collect();
    st.attrs = cx.dict_attr(entries);
    cx.create_op(st)
}

fn dict(cx: &mut Context, entries: Vec<(&str, Attr)>) -> Attr {
    let entries = entries.into_iter().map(|(k, v)| (cx.sym(k), v)).collect();
    cx.dict_attr(entries)
}

/// A `u64` as an `i64` attribute with the same bits.
fn u64_attr(cx: &mut Context, v: u64) -> Attr {
    cx.i64_attr(v as i64)
}

/// Appends to `block` the ops that represent `pkg`: one `machine.package`,
/// one `machine.host_stream` per stream, and per image group one
/// `machine.image` followed by its `machine.tile_data` ops (tile order, then
/// segment order), all at `loc`.
pub fn emit_package(cx: &mut Context, block: Block, pkg: &Package, loc: Loc) {
    let m = &pkg.meta;
    let mut attrs = Vec::new();
    let v = cx.string_attr(&m.target.name);
    attrs.push(("target", v));
    let v = cx.string_attr(&m.target.description_sha256.to_hex());
    attrs.push(("target_sha256", v));
    let v = cx.i64_attr(i64::from(m.target.tile_count));
    attrs.push(("tile_count", v));
    let v = cx.string_attr(&hex_address(m.target.memory_base));
    attrs.push(("memory_base", v));
    let v = cx.i64_attr(i64::from(m.target.memory_bytes));
    attrs.push(("memory_bytes", v));
    let v = cx.string_attr(&m.compiler_version);
    attrs.push(("compiler_version", v));
    let v = cx.string_attr(&m.source_sha256.to_hex());
    attrs.push(("source_sha256", v));
    let entries: Vec<Attr> = m
        .entry_points
        .iter()
        .map(|e| {
            let n = cx.string_attr(&e.name);
            let c = cx.i64_attr(i64::from(e.command));
            let p = cx.i64_attr(i64::from(e.phases));
            dict(cx, vec![("name", n), ("command", c), ("phases", p)])
        })
        .collect();
    let v = cx.array_attr(entries);
    attrs.push(("entry_points", v));
    let steps: Vec<Attr> = m
        .steps
        .iter()
        .map(|s| {
            let k = cx.string_attr(&s.kind.to_string());
            let l = cx.string_attr(&s.label);
            let mut e = vec![("kind", k), ("label", l)];
            if let Some(c) = s.cycles {
                e.push(("cycles", u64_attr(cx, c)));
            }
            if let Some(b) = s.bound {
                e.push(("bound", u64_attr(cx, b)));
            }
            dict(cx, e)
        })
        .collect();
    let v = cx.array_attr(steps);
    attrs.push(("steps", v));
    if let Some(src) = &m.source {
        let v = long_string_attr(cx, src);
        attrs.push(("source", v));
    }
    let op = build(cx, PACKAGE.name, attrs, loc);
    cx.append_op(block, op);

    for s in &m.streams {
        let name = cx.string_attr(&s.name);
        let dir = cx.string_attr(&s.direction.to_string());
        let mut attrs = vec![("name", name), ("direction", dir)];
        attrs.extend(stream_attrs(cx, s));
        if let Some(h) = s.host_element {
            attrs.push(("host_element", cx.string_attr(h.name())));
        }
        let op = build(cx, HOST_STREAM.name, attrs, loc);
        cx.append_op(block, op);
    }
    for p in &m.probes {
        let step = cx.i64_attr(i64::from(p.step));
        let o = cx.string_attr(&p.op);
        let src = cx.string_attr(&p.source);
        let mut attrs = vec![("step", step), ("op", o), ("source", src)];
        attrs.extend(stream_attrs(cx, &p.stream));
        let op = build(cx, PROBE.name, attrs, loc);
        cx.append_op(block, op);
    }

    // Every blob's hex text, in the order the ops below take them.
    let mut blobs: Vec<&[u8]> = Vec::new();
    for g in &pkg.images {
        blobs.push(&g.image.code);
        blobs.extend(g.image.data.iter().map(|d| &d.bytes[..]));
        for segments in g.tile_data.values() {
            blobs.extend(segments.iter().map(|d| &d.bytes[..]));
        }
    }
    std::thread::scope(|scope| {
        let mut hex = HexQueue::new(scope, blobs);
        for g in &pkg.images {
            let img = &g.image;
            let tiles = cx.string_attr(&tiles_to_string(&g.tiles));
            let ca = cx.string_attr(&hex_address(img.code_address));
            let code = hex.next(cx, &img.code);
            let entries: Vec<(ipu_ir::Sym, Attr)> = img
                .entries
                .iter()
                .map(|(n, &a)| {
                    let v = cx.string_attr(&hex_address(a));
                    (cx.sym(n), v)
                })
                .collect();
            let entries = cx.dict_attr(entries);
            let zero: Vec<Attr> = img
                .zero
                .iter()
                .map(|z| {
                    let a = cx.string_attr(&hex_address(z.address));
                    let l = cx.i64_attr(i64::from(z.len));
                    dict(cx, vec![("address", a), ("len", l)])
                })
                .collect();
            let zero = cx.array_attr(zero);
            let data: Vec<Attr> = img
                .data
                .iter()
                .map(|d| {
                    let a = cx.string_attr(&hex_address(d.address));
                    let b = hex.next(cx, &d.bytes);
                    dict(cx, vec![("address", a), ("bytes", b)])
                })
                .collect();
            let data = cx.array_attr(data);
            let op = build(
                cx,
                IMAGE.name,
                vec![
                    ("tiles", tiles),
                    ("code_address", ca),
                    ("code", code),
                    ("entries", entries),
                    ("zero", zero),
                    ("data", data),
                ],
                loc,
            );
            cx.append_op(block, op);
            for (&tile, segments) in &g.tile_data {
                for d in segments {
                    let t = cx.i64_attr(i64::from(tile));
                    let a = cx.string_attr(&hex_address(d.address));
                    let b = hex.next(cx, &d.bytes);
                    let op = build(
                        cx,
                        TILE_DATA.name,
                        vec![("tile", t), ("address", a), ("bytes", b)],
                        loc,
                    );
                    cx.append_op(block, op);
                }
            }
        }
    });
}

// ---------------------------------------------------------------------------
// Reading.

/// Reads the attributes of one op, with errors at the op.
struct Fields<'a> {
    cx: &'a Context,
    op: Op,
}

impl<'a> Fields<'a> {
    fn err(&self, msg: impl std::fmt::Display) -> Diagnostic {
        Diagnostic::error(
            self.cx.op_loc(self.op),
            format!("'{}' op {msg}", self.cx.name_str(self.op)),
        )
    }
    fn attr(&self, name: &str) -> Result<Attr, Diagnostic> {
        self.cx
            .get_attr(self.op, name)
            .ok_or_else(|| self.err(format!("requires attribute '{name}'")))
    }
    fn str(&self, name: &str) -> Result<&'a str, Diagnostic> {
        let a = self.attr(name)?;
        as_str(self.cx, a).ok_or_else(|| self.err(format!("attribute '{name}' must be a string")))
    }
    fn int<T: TryFrom<i128>>(&self, name: &str) -> Result<T, Diagnostic> {
        let a = self.attr(name)?;
        as_int(self.cx, a)
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| {
                self.err(format!(
                    "attribute '{name}' must be an integer in the range of {}, not {}",
                    std::any::type_name::<T>(),
                    ipu_ir::printer::attr_to_string(self.cx, a)
                ))
            })
    }
    /// A string attribute or an array of string pieces.
    fn long_str(&self, name: &str) -> Result<std::borrow::Cow<'a, str>, Diagnostic> {
        let a = self.attr(name)?;
        long_str(self.cx, a).ok_or_else(|| {
            self.err(format!(
                "attribute '{name}' must be a string or an array of strings"
            ))
        })
    }
    /// The bytes of a hex string (or pieces), decoded into `out` when given.
    fn hex(&self, name: &str, out: Option<&mut Vec<u8>>) -> Result<usize, Diagnostic> {
        let a = self.attr(name)?;
        let pieces = str_pieces(self.cx, a).ok_or_else(|| {
            self.err(format!(
                "attribute '{name}' must be a string or an array of strings"
            ))
        })?;
        self.with(name, hex_pieces(&pieces, out))
    }
    fn with<T>(&self, name: &str, r: Result<T, String>) -> Result<T, Diagnostic> {
        r.map_err(|m| self.err(format!("attribute '{name}': {m}")))
    }
    fn dicts(&self, name: &'static str) -> Result<Vec<Entries<'a>>, Diagnostic> {
        let a = self.attr(name)?;
        let AttrKind::Array(items) = self.cx.attr_kind(a) else {
            return Err(self.err(format!(
                "attribute '{name}' must be an array of dictionaries"
            )));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, &item)| match self.cx.attr_kind(item) {
                AttrKind::Dictionary(e) => Ok(Entries {
                    cx: self.cx,
                    entries: e,
                    list: name,
                    index: i,
                }),
                _ => Err(self.err(format!(
                    "attribute '{name}': element {i} is not a dictionary"
                ))),
            })
            .collect()
    }
}

fn as_str(cx: &Context, a: Attr) -> Option<&str> {
    match cx.attr_kind(a) {
        AttrKind::String(s) => Some(s),
        _ => None,
    }
}

fn as_int(cx: &Context, a: Attr) -> Option<i128> {
    match cx.attr_kind(a) {
        AttrKind::Integer { value, .. } => Some(*value),
        _ => None,
    }
}

/// The entries of one dictionary in an array attribute; errors are strings
/// the caller places at its op.
struct Entries<'a> {
    cx: &'a Context,
    entries: &'a [(ipu_ir::Sym, Attr)],
    /// The array attribute and the index in it (named only in errors).
    list: &'static str,
    index: usize,
}

impl<'a> Entries<'a> {
    /// `layout[3]`.
    fn what(&self) -> String {
        format!("{}[{}]", self.list, self.index)
    }
    fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| self.cx.str(*k) == key)
    }
    fn get(&self, key: &str) -> Result<Attr, String> {
        self.entries
            .iter()
            .find(|(k, _)| self.cx.str(*k) == key)
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("{} has no `{key}`", self.what()))
    }
    fn str(&self, key: &str) -> Result<&'a str, String> {
        let a = self.get(key)?;
        as_str(self.cx, a).ok_or_else(|| format!("{}: `{key}` must be a string", self.what()))
    }
    fn int<T: TryFrom<i128>>(&self, key: &str) -> Result<T, String> {
        let a = self.get(key)?;
        as_int(self.cx, a)
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| {
                format!(
                    "{}: `{key}` must be an integer in the range of {}, not {}",
                    self.what(),
                    std::any::type_name::<T>(),
                    ipu_ir::printer::attr_to_string(self.cx, a)
                )
            })
    }
    /// A `u64` stored as an `i64` with the same bits.
    fn u64(&self, key: &str) -> Result<u64, String> {
        self.int::<i64>(key).map(|v| v as u64)
    }
    fn address(&self, key: &str) -> Result<u32, String> {
        parse_address(self.str(key)?).map_err(|m| format!("{}: `{key}`: {m}", self.what()))
    }
    /// A grid's dimensions: an array of `array<i64: count, tile step,
    /// address step, offset step>`, the count at least 1, the steps not
    /// negative (the offset step is a `u64` with the same bits).
    fn grid_dims(&self, key: &str) -> Result<Vec<GridDim>, String> {
        let a = self.get(key)?;
        let AttrKind::Array(items) = self.cx.attr_kind(a) else {
            return Err(format!(
                "{}: `{key}` must be an array of array<i64: count, tile step, address step, offset step>",
                self.what()
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, &item)| {
                let at = || format!("{}: `{key}`[{i}]", self.what());
                let AttrKind::I64Array(v) = self.cx.attr_kind(item) else {
                    return Err(format!(
                        "{} must be array<i64: count, tile step, address step, offset step>",
                        at()
                    ));
                };
                let &[count, tile_step, address_step, host_step] = &v[..] else {
                    return Err(format!(
                        "{} has {} values, not 4 (count, tile step, address step, offset step)",
                        at(),
                        v.len()
                    ));
                };
                let u32_of = |what: &str, x: i64| {
                    u32::try_from(x)
                        .map_err(|_| format!("{}: {what} {x} is outside 0..={}", at(), u32::MAX))
                };
                let count = u32_of("count", count)?;
                if count == 0 {
                    return Err(format!(
                        "{}: count 0 (a dimension repeats at least once)",
                        at()
                    ));
                }
                Ok(GridDim {
                    count,
                    tile_step: u32_of("tile step", tile_step)?,
                    address_step: u32_of("address step", address_step)?,
                    host_step: host_step as u64,
                })
            })
            .collect()
    }
    /// Refuses keys outside `allowed` (a typo must not pass silently).
    fn only(&self, allowed: &[&str]) -> Result<(), String> {
        for (k, _) in self.entries {
            let k = self.cx.str(*k);
            if !allowed.contains(&k) {
                return Err(format!(
                    "{} has an unknown key `{k}` (expected {})",
                    self.what(),
                    allowed.join(", ")
                ));
            }
        }
        Ok(())
    }
}

fn decode_package(cx: &Context, op: Op) -> Result<Metadata, Diagnostic> {
    let f = Fields { cx, op };
    let digest = |name: &str| f.with(name, parse_digest(f.str(name)?));
    let target = TargetInfo {
        name: f.str("target")?.to_string(),
        description_sha256: digest("target_sha256")?,
        tile_count: f.int("tile_count")?,
        memory_base: f.with("memory_base", parse_address(f.str("memory_base")?))?,
        memory_bytes: f.int("memory_bytes")?,
    };
    let entry_points = f
        .dicts("entry_points")?
        .iter()
        .map(|e| {
            e.only(&["name", "command", "phases"])?;
            Ok(EntryPoint {
                name: e.str("name")?.to_string(),
                command: e.int("command")?,
                phases: e.int("phases")?,
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|m| f.err(m))?;
    let steps = f
        .dicts("steps")?
        .iter()
        .map(|e| {
            e.only(&["kind", "label", "cycles", "bound"])?;
            let kind = e.str("kind")?;
            Ok(StepSummary {
                kind: step_kind(kind).ok_or_else(|| {
                    format!(
                        "{}: unknown step kind `{kind}` (compute, sync, exchange, host_exchange)",
                        e.what()
                    )
                })?,
                label: e.str("label")?.to_string(),
                cycles: if e.has("cycles") {
                    Some(e.u64("cycles")?)
                } else {
                    None
                },
                bound: if e.has("bound") {
                    Some(e.u64("bound")?)
                } else {
                    None
                },
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|m| f.err(m))?;
    let source = match cx.get_attr(op, "source") {
        None => None,
        Some(_) => Some(f.long_str("source")?.into_owned()),
    };
    Ok(Metadata {
        target,
        compiler_version: f.str("compiler_version")?.to_string(),
        source_sha256: digest("source_sha256")?,
        entry_points,
        streams: Vec::new(),
        steps,
        source,
        probes: Vec::new(),
    })
}

/// `element`, `shape` and `layout` of a stream's op.
fn stream_attrs(cx: &mut Context, s: &HostStream) -> Vec<(&'static str, Attr)> {
    let el = cx.string_attr(s.element.name());
    let shape = cx.i64_array_attr(s.shape.iter().map(|&d| d as i64).collect());
    let pieces: Vec<Attr> = s
        .layout
        .iter()
        .map(|p| match p {
            StreamPiece::Single(t) => {
                let tile = cx.i64_attr(i64::from(t.tile));
                let a = cx.string_attr(&hex_address(t.tile_address));
                let o = u64_attr(cx, t.host_offset);
                let l = cx.i64_attr(i64::from(t.len));
                dict(
                    cx,
                    vec![("tile", tile), ("address", a), ("offset", o), ("len", l)],
                )
            }
            StreamPiece::Regular {
                tiles,
                tile_address,
                host_offset,
                host_stride,
                len,
            } => {
                let t = cx.string_attr(&tiles_to_string(tiles));
                let a = cx.string_attr(&hex_address(*tile_address));
                let o = u64_attr(cx, *host_offset);
                let st = u64_attr(cx, *host_stride);
                let l = cx.i64_attr(i64::from(*len));
                dict(
                    cx,
                    vec![
                        ("tiles", t),
                        ("address", a),
                        ("offset", o),
                        ("stride", st),
                        ("len", l),
                    ],
                )
            }
            StreamPiece::Grid { first, dims } => {
                let tile = cx.i64_attr(i64::from(first.tile));
                let a = cx.string_attr(&hex_address(first.tile_address));
                let o = u64_attr(cx, first.host_offset);
                let l = cx.i64_attr(i64::from(first.len));
                let dims: Vec<Attr> = dims
                    .iter()
                    .map(|d| {
                        cx.i64_array_attr(vec![
                            i64::from(d.count),
                            i64::from(d.tile_step),
                            i64::from(d.address_step),
                            d.host_step as i64,
                        ])
                    })
                    .collect();
                let r = cx.array_attr(dims);
                dict(
                    cx,
                    vec![
                        ("tile", tile),
                        ("address", a),
                        ("offset", o),
                        ("len", l),
                        ("repeat", r),
                    ],
                )
            }
        })
        .collect();
    let layout = cx.array_attr(pieces);
    vec![("element", el), ("shape", shape), ("layout", layout)]
}

fn decode_stream(cx: &Context, op: Op) -> Result<HostStream, Diagnostic> {
    let f = Fields { cx, op };
    let direction = match f.str("direction")? {
        "input" => Direction::Input,
        "output" => Direction::Output,
        "load" => Direction::Load,
        d => {
            return Err(f.err(format!(
                "attribute 'direction': `{d}` is not `input`, `output` or `load`"
            )))
        }
    };
    let name = f.str("name")?.to_string();
    let mut s = decode_layout(cx, op, name, direction)?;
    if cx.get_attr(op, "host_element").is_some() {
        let h: ElementType = f.with("host_element", f.str("host_element")?.parse())?;
        if !h.converts_to(s.element, direction) {
            return Err(f.err(format!(
                "attribute 'host_element': host {h} elements to {} in a stream of direction `{direction}`: \
                 a load or input stream converts only by an exact widening, an output stream only by its \
                 inverse to an 8- or 16-bit integer",
                s.element
            )));
        }
        s.host_element = Some(h);
    }
    Ok(s)
}

/// A probe: where an op's result is complete ([`PROBE`]).
fn decode_probe(cx: &Context, op: Op) -> Result<Probe, Diagnostic> {
    let f = Fields { cx, op };
    let step = f.int("step")?;
    let source = f.str("source")?.to_string();
    let stream = decode_layout(cx, op, source.clone(), Direction::Output)?;
    Ok(Probe {
        step,
        op: f.str("op")?.to_string(),
        source,
        stream,
    })
}

/// The element type, shape and layout of a stream's or probe's op.
fn decode_layout(
    cx: &Context,
    op: Op,
    name: String,
    direction: Direction,
) -> Result<HostStream, Diagnostic> {
    let f = Fields { cx, op };
    let element: ElementType = f.with("element", f.str("element")?.parse())?;
    let shape = match cx.attr_kind(f.attr("shape")?) {
        AttrKind::I64Array(v) => v.iter().map(|&d| d as u64).collect(),
        _ => return Err(f.err("attribute 'shape' must be array<i64: ...>")),
    };
    let layout = f
        .dicts("layout")?
        .iter()
        .map(|e| {
            if e.has("repeat") {
                e.only(&["tile", "address", "offset", "len", "repeat"])?;
                Ok(StreamPiece::Grid {
                    first: Transfer {
                        tile: e.int("tile")?,
                        tile_address: e.address("address")?,
                        host_offset: e.u64("offset")?,
                        len: e.int("len")?,
                    },
                    dims: e.grid_dims("repeat")?,
                })
            } else if e.has("tiles") {
                e.only(&["tiles", "address", "offset", "stride", "len"])?;
                Ok(StreamPiece::Regular {
                    tiles: parse_tiles(e.str("tiles")?)
                        .map_err(|m| format!("{}: {m}", e.what()))?,
                    tile_address: e.address("address")?,
                    host_offset: e.u64("offset")?,
                    host_stride: e.u64("stride")?,
                    len: e.int("len")?,
                })
            } else {
                e.only(&["tile", "address", "offset", "len"])?;
                Ok(StreamPiece::Single(Transfer {
                    tile: e.int("tile")?,
                    tile_address: e.address("address")?,
                    host_offset: e.u64("offset")?,
                    len: e.int("len")?,
                }))
            }
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|m| f.err(m))?;
    Ok(HostStream {
        name,
        direction,
        element,
        shape,
        layout,
        host_element: None,
    })
}

fn decode_image(cx: &Context, op: Op) -> Result<ImageGroup, Diagnostic> {
    let f = Fields { cx, op };
    let tiles = f.with("tiles", parse_tiles(f.str("tiles")?))?;
    let code_address = f.with("code_address", parse_address(f.str("code_address")?))?;
    let mut code = Vec::new();
    f.hex("code", Some(&mut code))?;
    let AttrKind::Dictionary(es) = cx.attr_kind(f.attr("entries")?) else {
        return Err(f.err("attribute 'entries' must be a dictionary of name = \"0x address\""));
    };
    let mut entries = BTreeMap::new();
    for (k, v) in es {
        let name = cx.str(*k);
        let a = as_str(cx, *v)
            .ok_or_else(|| format!("entry `{name}` must be a hex address string"))
            .and_then(|s| parse_address(s).map_err(|m| format!("entry `{name}`: {m}")));
        entries.insert(name.to_string(), f.with("entries", a)?);
    }
    let zero = f
        .dicts("zero")?
        .iter()
        .map(|e| {
            e.only(&["address", "len"])?;
            Ok(ZeroRange {
                address: e.address("address")?,
                len: e.int("len")?,
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|m| f.err(m))?;
    let data = f
        .dicts("data")?
        .iter()
        .map(|e| {
            e.only(&["address", "bytes"])?;
            Ok(DataSegment {
                address: e.address("address")?,
                bytes: hex_attr_bytes(e.cx, e.get("bytes")?)
                    .ok_or_else(|| {
                        format!(
                            "{}: `bytes` must be a string or an array of strings",
                            e.what()
                        )
                    })?
                    .map_err(|m| format!("{}: `bytes`: {m}", e.what()))?,
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|m| f.err(m))?;
    Ok(ImageGroup {
        tiles,
        image: TileImage {
            code_address,
            code,
            data,
            zero,
            entries,
        },
        tile_data: BTreeMap::new(),
    })
}

/// A tile-data op's segment; with `keep` false only checked (the bytes
/// left empty: the verifier needs no copy of them).
fn decode_tile_data(cx: &Context, op: Op, keep: bool) -> Result<(u32, DataSegment), Diagnostic> {
    let f = Fields { cx, op };
    let tile = f.int("tile")?;
    let address = f.with("address", parse_address(f.str("address")?))?;
    let mut bytes = Vec::new();
    f.hex("bytes", keep.then_some(&mut bytes))?;
    Ok((tile, DataSegment { address, bytes }))
}

/// Reads the package the ops of `module`'s body represent (other ops are
/// ignored): exactly one `machine.package`, the streams and image groups
/// in op order, each `machine.tile_data` given to the group running its
/// tile. Malformed attributes, a missing or second `machine.package`, a
/// tile in two groups, tile data for a tile no group runs, and everything
/// `Package::validate` refuses are diagnostics at the op concerned.
pub fn read_package(cx: &Context, module: Op) -> Result<Package, Diagnostic> {
    let body = (cx.num_regions(module) > 0)
        .then(|| cx.entry_block(cx.region(module, 0)))
        .flatten()
        .ok_or_else(|| Diagnostic::error(cx.op_loc(module), "the module has no body"))?;
    let mut meta: Option<(Metadata, Op)> = None;
    let mut streams: Vec<(HostStream, Op)> = Vec::new();
    let mut probes: Vec<Probe> = Vec::new();
    let mut images: Vec<(ImageGroup, Op)> = Vec::new();
    let mut tile_data: Vec<(u32, DataSegment, Op)> = Vec::new();
    for op in cx.block_ops(body) {
        match cx.name_str(op) {
            PackageOp::NAME => {
                if let Some((_, first)) = &meta {
                    return Err(Fields { cx, op }
                        .err("is a second package in the module (a module holds one)")
                        .with_note(cx.op_loc(*first), "the first 'machine.package' is here"));
                }
                meta = Some((decode_package(cx, op)?, op));
            }
            HostStreamOp::NAME => streams.push((decode_stream(cx, op)?, op)),
            ProbeOp::NAME => probes.push(decode_probe(cx, op)?),
            Image::NAME => images.push((decode_image(cx, op)?, op)),
            TileData::NAME => {
                let (t, d) = decode_tile_data(cx, op, true)?;
                tile_data.push((t, d, op));
            }
            _ => {}
        }
    }
    let Some((mut meta, pkg_op)) = meta else {
        return Err(Diagnostic::error(
            cx.op_loc(module),
            "the module holds no 'machine.package' op: it is not a machine-stage package",
        ));
    };
    let tile_count = meta.target.tile_count;
    if tile_count == 0 || tile_count > ipu_package::MAX_TILES {
        return Err(Fields { cx, op: pkg_op }.err(format!(
            "tile count {tile_count} is outside 1..={}",
            ipu_package::MAX_TILES
        )));
    }
    // Which group runs each tile, checked with locations.
    let mut owner: Vec<Option<usize>> = vec![None; tile_count as usize];
    for (i, (g, op)) in images.iter().enumerate() {
        let f = Fields { cx, op: *op };
        for r in &g.tiles.runs {
            match r.last() {
                Some(last) if last < tile_count => {}
                _ => {
                    return Err(f.err(format!(
                        "tile set `{}` goes beyond the last tile {} of the target",
                        tiles_to_string(&g.tiles),
                        tile_count - 1
                    )))
                }
            }
        }
        for t in g.tiles.iter() {
            match owner[t as usize] {
                Some(j) if j == i => {
                    return Err(f.err(format!("lists tile {t} twice in its tile set")));
                }
                Some(j) => {
                    return Err(f
                        .err(format!(
                            "runs tile {t}, which another image group already runs"
                        ))
                        .with_note(
                            cx.op_loc(images[j].1),
                            format!("the group that runs tile {t}"),
                        ));
                }
                None => owner[t as usize] = Some(i),
            }
        }
    }
    for (t, d, op) in tile_data {
        let g = owner.get(t as usize).copied().flatten().ok_or_else(|| {
            Fields { cx, op }.err(format!(
                "holds data for tile {t}, which no image group runs"
            ))
        })?;
        images[g].0.tile_data.entry(t).or_default().push(d);
    }
    meta.streams = streams.iter().map(|(s, _)| s.clone()).collect();
    meta.probes = probes;
    let image_ops: Vec<Op> = images.iter().map(|(_, o)| *o).collect();
    let pkg = Package {
        meta,
        images: images.into_iter().map(|(g, _)| g).collect(),
    };
    pkg.validate().map_err(|e| {
        let at = match &e {
            PackageError::ImageOutOfMemory { image, .. }
            | PackageError::ImageOverlap { image, .. } => image_ops.get(*image).copied(),
            PackageError::TileInTwoImages { second, .. } => image_ops.get(*second).copied(),
            PackageError::Stream { stream, .. } => streams
                .iter()
                .rev()
                .find(|(s, _)| &s.name == stream)
                .map(|(_, o)| *o),
            PackageError::TileOutOfRange { context, .. } => streams
                .iter()
                .find(|(s, _)| *context == format!("stream `{}`", s.name))
                .map(|(_, o)| *o),
            PackageError::Invalid(m) => image_ops
                .iter()
                .enumerate()
                .find(|(i, _)| {
                    m.starts_with(&format!("image {i}:")) || m.starts_with(&format!("image {i} "))
                })
                .map(|(_, o)| *o),
            _ => None,
        };
        // `Invalid` says "invalid package: ..." itself.
        let what = match &e {
            PackageError::Invalid(m) => m.clone(),
            _ => e.to_string(),
        };
        Fields {
            cx,
            op: at.unwrap_or(pkg_op),
        }
        .err(format!("invalid package: {what}"))
    })?;
    Ok(pkg)
}
