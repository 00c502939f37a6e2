//! Semantic checks of a package: everything a loader relies on.

use std::collections::BTreeSet;

use crate::model::{Direction, ImageGroup, Package, TileSet};
use crate::{PackageError, MAX_GRID_DIMS, MAX_STREAM_TRANSFERS, MAX_TILES};

/// Marks a tile that runs no image.
const IDLE: u32 = u32::MAX;

impl Package {
    /// Checks the package is loadable: the target geometry is sane, every
    /// tile index is in range and runs at most one image, every image lies
    /// inside tile memory without overlapping itself and defines every
    /// entry point inside its code, and every stream transfer fits both its
    /// tile's memory and its host buffer (output buffers are covered exactly
    /// once). The reader runs this after the checksums.
    pub fn validate(&self) -> Result<(), PackageError> {
        let t = &self.meta.target;
        if t.tile_count == 0 || t.tile_count > MAX_TILES {
            return Err(PackageError::Invalid(format!(
                "tile count {} is outside 1..={MAX_TILES}",
                t.tile_count
            )));
        }
        if t.memory_bytes == 0 || t.memory_end() > 1u64 << 32 {
            return Err(PackageError::Invalid(format!(
                "tile memory [{:#x}, {:#x}) is empty or beyond the 32-bit address space",
                t.memory_base,
                t.memory_end()
            )));
        }
        if let Some(src) = &self.meta.source {
            if crate::Digest::of(src.as_bytes()) != self.meta.source_sha256 {
                return Err(PackageError::Invalid(format!(
                    "the source text hashes to {}, not to the source hash {}",
                    crate::Digest::of(src.as_bytes()),
                    self.meta.source_sha256
                )));
            }
        }
        let mut names = BTreeSet::new();
        let mut commands = BTreeSet::new();
        for e in &self.meta.entry_points {
            if e.name.is_empty() || !names.insert(e.name.as_str()) {
                return Err(PackageError::Invalid(format!(
                    "entry point name `{}` is empty or declared twice",
                    e.name
                )));
            }
            if !commands.insert(e.command) {
                return Err(PackageError::Invalid(format!(
                    "entry point `{}` reuses command {}",
                    e.name, e.command
                )));
            }
        }

        let mut owner = vec![IDLE; t.tile_count as usize];
        for (i, g) in self.images.iter().enumerate() {
            if g.tiles.is_empty() {
                return Err(PackageError::Invalid(format!("image {i} runs on no tile")));
            }
            check_tiles(&g.tiles, t.tile_count, || {
                format!("the tile set of image {i}")
            })?;
            for tile in g.tiles.iter() {
                let o = &mut owner[tile as usize];
                if *o == i as u32 {
                    return Err(PackageError::Invalid(format!(
                        "tile {tile} is listed twice in the tile set of image {i}"
                    )));
                }
                if *o != IDLE {
                    return Err(PackageError::TileInTwoImages {
                        tile,
                        first: *o as usize,
                        second: i,
                    });
                }
                *o = i as u32;
            }
            self.check_image(i, g)?;
        }

        // Every stream's and probe's layout checked in parallel; the errors
        // are taken in declaration order below, after each one's own checks.
        use rayon::prelude::*;
        let probe_what =
            |i: usize, p: &crate::model::Probe| format!("probe {i} ({} at {})", p.op, p.source);
        let (stream_checks, probe_checks) = rayon::join(
            || {
                self.meta
                    .streams
                    .par_iter()
                    .map(|s| check_stream(s, &s.name, t, &owner))
                    .collect::<Vec<_>>()
            },
            || {
                self.meta
                    .probes
                    .par_iter()
                    .enumerate()
                    .map(|(i, p)| check_stream(&p.stream, &probe_what(i, p), t, &owner))
                    .collect::<Vec<_>>()
            },
        );
        let mut stream_names = BTreeSet::new();
        for (s, checked) in self.meta.streams.iter().zip(stream_checks) {
            if s.name.is_empty() || !stream_names.insert(s.name.as_str()) {
                return Err(PackageError::Stream {
                    stream: s.name.clone(),
                    message: "stream name is empty or declared twice".into(),
                });
            }
            checked?;
        }
        let steps = self.meta.steps.len();
        for ((i, p), checked) in self.meta.probes.iter().enumerate().zip(probe_checks) {
            let what = probe_what(i, p);
            if p.step as usize >= steps {
                return Err(PackageError::Stream {
                    stream: what,
                    message: format!(
                        "probes after step {}, but the program has {steps} steps",
                        p.step
                    ),
                });
            }
            // A probe's layout is an output stream named after its source.
            if p.stream.direction != Direction::Output || p.stream.name != p.source {
                return Err(PackageError::Stream {
                    stream: what,
                    message: format!(
                        "a probe's layout must be an output stream named after its source, not {} stream `{}`",
                        p.stream.direction, p.stream.name
                    ),
                });
            }
            checked?;
        }
        Ok(())
    }

    fn check_image(&self, i: usize, g: &ImageGroup) -> Result<(), PackageError> {
        let image = &g.image;
        let t = &self.meta.target;
        let mem = (u64::from(t.memory_base), t.memory_end());
        let mut shared: Vec<Range> = Vec::new();
        add_range(
            &mut shared,
            i,
            mem,
            Part::Code,
            image.code_address,
            image.code.len(),
        )?;
        for (k, d) in image.data.iter().enumerate() {
            if d.bytes.is_empty() {
                return Err(PackageError::Invalid(format!(
                    "image {i}: {} is empty",
                    Part::Data(k)
                )));
            }
            add_range(&mut shared, i, mem, Part::Data(k), d.address, d.bytes.len())?;
        }
        for (k, z) in image.zero.iter().enumerate() {
            if z.len == 0 {
                return Err(PackageError::Invalid(format!(
                    "image {i}: {} is empty",
                    Part::Zero(k)
                )));
            }
            add_range(
                &mut shared,
                i,
                mem,
                Part::Zero(k),
                z.address,
                z.len as usize,
            )?;
        }
        check_overlap(i, &mut shared)?;

        for (&tile, segments) in &g.tile_data {
            if !g.tiles.contains(tile) {
                return Err(PackageError::Invalid(format!(
                    "image {i} holds data for tile {tile}, which does not run it"
                )));
            }
            if segments.is_empty() {
                return Err(PackageError::Invalid(format!(
                    "image {i}: tile {tile} has an empty list of data segments"
                )));
            }
            let mut ranges = shared.clone();
            for (k, d) in segments.iter().enumerate() {
                let part = Part::TileData(tile, k);
                if d.bytes.is_empty() {
                    return Err(PackageError::Invalid(format!("image {i}: {part} is empty")));
                }
                add_range(&mut ranges, i, mem, part, d.address, d.bytes.len())?;
            }
            check_overlap(i, &mut ranges)?;
        }

        let code_start = u64::from(image.code_address);
        let code_end = code_start + image.code.len() as u64;
        for (name, &addr) in &image.entries {
            if !self.meta.entry_points.iter().any(|e| &e.name == name) {
                return Err(PackageError::Invalid(format!(
                    "image {i}: entry `{name}` is not a declared entry point"
                )));
            }
            if u64::from(addr) < code_start || u64::from(addr) >= code_end {
                return Err(PackageError::Invalid(format!(
                    "image {i}: entry `{name}` at {addr:#x} lies outside its code [{code_start:#x}, {code_end:#x})"
                )));
            }
        }
        for e in &self.meta.entry_points {
            if !image.entries.contains_key(&e.name) {
                return Err(PackageError::Invalid(format!(
                    "image {i} does not define entry point `{}`",
                    e.name
                )));
            }
        }
        Ok(())
    }
}

/// Every run well-formed and inside `0..tile_count`.
/// Checks one stream's layout (for a host stream or a probe, named `what`):
/// transfers inside tile memory on tiles that run an image, inside the host
/// buffer, and an output's host bytes covered exactly once.
fn check_stream(
    s: &crate::model::HostStream,
    what: &str,
    t: &crate::model::TargetInfo,
    owner: &[u32],
) -> Result<(), PackageError> {
    let err = |message: String| PackageError::Stream {
        stream: what.to_string(),
        message,
    };
    let host_len = s
        .byte_len()
        .ok_or_else(|| err("the buffer size overflows 64 bits".into()))?;
    if let Some(h) = s.host_element {
        if !h.converts_to(s.element, s.direction) && h.widens_exactly_to(s.element) {
            return Err(err(format!(
                "a stream of direction `{}` converts host {h} elements to {}; an output stream \
                 converts only to 8- or 16-bit integers",
                s.direction, s.element
            )));
        }
        if !h.widens_exactly_to(s.element) {
            return Err(err(format!(
                "the conversion of host {h} elements to {} is not an exact widening, nor its inverse \
                 (f8E4M3FN, f8E5M2, i8 or ui8 to f16 or f32, f16, bf16, i16 or ui16 to f32)",
                s.element
            )));
        }
    }
    let mut count = 0u64;
    for p in &s.layout {
        match p {
            crate::StreamPiece::Regular { tiles, .. } => {
                check_tiles(tiles, t.tile_count, || format!("stream `{what}`"))?;
                count += tiles.len();
            }
            crate::StreamPiece::Single(_) => count += 1,
            crate::StreamPiece::Grid { first, dims } => {
                if dims.len() > MAX_GRID_DIMS {
                    return Err(err(format!(
                        "a grid piece has {} dimensions, more than the limit of {MAX_GRID_DIMS}",
                        dims.len()
                    )));
                }
                let Some((last, _, _)) = crate::StreamPiece::grid_last(first, dims) else {
                    return Err(err(format!(
                        "a grid piece from tile {} has a dimension of count 0",
                        first.tile
                    )));
                };
                if last >= u64::from(t.tile_count) {
                    return Err(PackageError::TileOutOfRange {
                        tile: last,
                        tile_count: t.tile_count,
                        context: format!("stream `{what}`"),
                    });
                }
                count = count.saturating_add(p.transfer_count());
            }
        }
    }
    if count > MAX_STREAM_TRANSFERS {
        return Err(err(format!(
            "the layout has {count} transfers, more than the limit of {MAX_STREAM_TRANSFERS}"
        )));
    }
    // An output's host bytes, a bit each, to see them written exactly once
    // without sorting (when the buffer is not too large for that).
    let output = s.direction == Direction::Output;
    let mut bits = HostBits::new(if output { host_len } else { 0 });
    for piece in &s.layout {
        // A grid of an input is checked at its corners; a grid that fails
        // there (or an output's) is walked, for the first bad transfer.
        if !output && grid_is_valid(piece, t, owner, host_len) {
            continue;
        }
        piece.each_transfer(&mut |tr| {
            if tr.tile >= t.tile_count {
                return Err(PackageError::TileOutOfRange {
                    tile: u64::from(tr.tile),
                    tile_count: t.tile_count,
                    context: format!("stream `{what}`"),
                });
            }
            if tr.len == 0 {
                return Err(err(format!("an empty transfer to tile {}", tr.tile)));
            }
            let tile_end = u64::from(tr.tile_address) + u64::from(tr.len);
            if u64::from(tr.tile_address) < u64::from(t.memory_base) || tile_end > t.memory_end() {
                return Err(err(format!(
                    "tile {} range [{:#x}, {tile_end:#x}) lies outside tile memory [{:#x}, {:#x})",
                    tr.tile,
                    tr.tile_address,
                    t.memory_base,
                    t.memory_end()
                )));
            }
            let host_end = tr
                .host_offset
                .checked_add(u64::from(tr.len))
                .filter(|&e| e <= host_len)
                .ok_or_else(|| {
                    err(format!(
                        "tile {} host range at offset {} (+{}) exceeds the {host_len}-byte buffer",
                        tr.tile, tr.host_offset, tr.len
                    ))
                })?;
            if owner[tr.tile as usize] == IDLE {
                return Err(err(format!("tile {} runs no image", tr.tile)));
            }
            if output {
                bits.mark(tr.host_offset, host_end);
            }
            Ok(())
        })?;
    }
    if output && !bits.all_once() {
        // Not written exactly once: the ranges in order, for the message.
        let mut host_ranges = Vec::new();
        for tr in s.transfers() {
            host_ranges.push((tr.host_offset, tr.host_offset + u64::from(tr.len), tr.tile));
        }
        ordered_cover(&mut host_ranges, host_len).map_err(err)?;
    }
    Ok(())
}

/// Whether every transfer of grid `piece` passes [`check_stream`]'s checks
/// of one transfer (a tile in range running an image, a non-empty range
/// inside its memory and inside the `host_len`-byte buffer). No step is
/// negative, so each transfer lies between the first and the last: those
/// two are checked, and each tile the grid reaches.
fn grid_is_valid(
    piece: &crate::StreamPiece,
    t: &crate::model::TargetInfo,
    owner: &[u32],
    host_len: u64,
) -> bool {
    let crate::StreamPiece::Grid { first, dims } = piece else {
        return false;
    };
    let Some((tile, address, host)) = crate::StreamPiece::grid_last(first, dims) else {
        return false;
    };
    let len = u64::from(first.len);
    let inside = len > 0
        && tile < u64::from(t.tile_count)
        && u64::from(first.tile_address) >= u64::from(t.memory_base)
        && address + len <= t.memory_end()
        && host.checked_add(len).is_some_and(|e| e <= host_len);
    if !inside {
        return false;
    }
    // The tiles: the first stepped by each dimension that moves to another.
    let mut tiles = vec![u64::from(first.tile)];
    for d in dims.iter().filter(|d| d.tile_step > 0) {
        let before = tiles.len();
        for i in 1..u64::from(d.count) {
            for k in 0..before {
                tiles.push(tiles[k] + i * u64::from(d.tile_step));
            }
        }
    }
    tiles.iter().all(|&x| owner[x as usize] != IDLE)
}

/// Checks that `ranges` (start, end, tile) write each byte of a host buffer
/// of `len` bytes exactly once, in order.
fn ordered_cover(ranges: &mut [(u64, u64, u32)], len: u64) -> Result<(), String> {
    ranges.sort_unstable();
    let mut covered = 0u64;
    for &(start, end, tile) in ranges.iter() {
        if start < covered {
            return Err(format!(
                "host bytes [{start}, {}) are written by more than one tile (tile {tile} among them)",
                covered.min(end)
            ));
        }
        if start > covered {
            return Err(format!(
                "host bytes [{covered}, {start}) are written by no tile"
            ));
        }
        covered = end;
    }
    if covered != len {
        return Err(format!(
            "host bytes [{covered}, {len}) are written by no tile"
        ));
    }
    Ok(())
}

/// A bit per host byte of an output stream: whether its transfers write
/// each byte exactly once. Past [`HostBits::MAX_BYTES`] it keeps nothing
/// and answers no (the caller then checks the ranges in order).
struct HostBits {
    words: Vec<u64>,
    len: u64,
    /// Some byte written twice, or the buffer too large to track.
    unsure: bool,
}

impl HostBits {
    const MAX_BYTES: u64 = 256 << 20;

    fn new(len: u64) -> HostBits {
        let unsure = len > Self::MAX_BYTES;
        let words = if unsure {
            Vec::new()
        } else {
            vec![0; len.div_ceil(64) as usize]
        };
        HostBits { words, len, unsure }
    }

    /// Marks bytes [s, e), s < e <= len.
    fn mark(&mut self, s: u64, e: u64) {
        if self.unsure {
            return;
        }
        let mut at = s;
        while at < e {
            let (i, lo) = ((at / 64) as usize, at % 64);
            let hi = (e - at + lo).min(64);
            let m = (u64::MAX >> (64 - (hi - lo))) << lo;
            if self.words[i] & m != 0 {
                self.unsure = true;
                return;
            }
            self.words[i] |= m;
            at += hi - lo;
        }
    }

    /// Whether every byte was written, and none twice.
    fn all_once(&self) -> bool {
        if self.unsure {
            return false;
        }
        let full = (self.len / 64) as usize;
        let rest = self.len % 64;
        self.words[..full].iter().all(|&w| w == u64::MAX)
            && (rest == 0 || self.words[full] == (1u64 << rest) - 1)
    }
}

fn check_tiles(
    tiles: &TileSet,
    tile_count: u32,
    context: impl Fn() -> String,
) -> Result<(), PackageError> {
    for r in &tiles.runs {
        if r.count == 0 || (r.count > 1 && r.step == 0) {
            return Err(PackageError::Invalid(format!(
                "{}: tile run from {} has count {} and step {}",
                context(),
                r.first,
                r.count,
                r.step
            )));
        }
        let last = u64::from(r.first) + u64::from(r.count - 1) * u64::from(r.step);
        if last >= u64::from(tile_count) {
            return Err(PackageError::TileOutOfRange {
                tile: last,
                tile_count,
                context: context(),
            });
        }
    }
    Ok(())
}

/// Which part of an image a range is (named lazily, for errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Code,
    Data(usize),
    Zero(usize),
    TileData(u32, usize),
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Part::Code => f.write_str("code"),
            Part::Data(k) => write!(f, "data segment {k}"),
            Part::Zero(k) => write!(f, "zero range {k}"),
            Part::TileData(t, k) => write!(f, "tile {t} data segment {k}"),
        }
    }
}

/// (start, end, part)
type Range = (u64, u64, Part);

fn add_range(
    ranges: &mut Vec<Range>,
    image: usize,
    (mem_start, mem_end): (u64, u64),
    part: Part,
    start: u32,
    len: usize,
) -> Result<(), PackageError> {
    let start = u64::from(start);
    let end = start + len as u64;
    if start < mem_start || end > mem_end {
        return Err(PackageError::ImageOutOfMemory {
            image,
            what: part.to_string(),
            start,
            end,
            mem_start,
            mem_end,
        });
    }
    if len > 0 {
        ranges.push((start, end, part));
    }
    Ok(())
}

fn check_overlap(image: usize, ranges: &mut [Range]) -> Result<(), PackageError> {
    ranges.sort_unstable();
    let mut furthest: Option<(u64, Part)> = None;
    for &(start, end, part) in ranges.iter() {
        if let Some((fend, fpart)) = furthest {
            if start < fend {
                return Err(PackageError::ImageOverlap {
                    image,
                    first: fpart.to_string(),
                    second: part.to_string(),
                });
            }
        }
        if furthest.is_none_or(|(fend, _)| end > fend) {
            furthest = Some((end, part));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_bits_agree_with_the_ordered_cover() {
        let mut x = 3u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let (mut ok, mut bad) = (0, 0);
        for _ in 0..5000 {
            let len = next(400);
            // A partition of the buffer, shuffled, then sometimes disturbed.
            let mut ranges = Vec::new();
            let mut at = 0;
            while at < len {
                let n = (1 + next(100)).min(len - at);
                ranges.push((at, at + n, next(4) as u32));
                at += n;
            }
            for i in (1..ranges.len()).rev() {
                ranges.swap(i, next(i as u64 + 1) as usize);
            }
            match next(4) {
                0 if !ranges.is_empty() => {
                    let i = next(ranges.len() as u64) as usize;
                    ranges.remove(i);
                }
                1 if len > 0 => {
                    let s = next(len);
                    ranges.push((s, (s + 1 + next(9)).min(len), 9));
                }
                _ => {}
            }
            let mut bits = HostBits::new(len);
            for &(s, e, _) in &ranges {
                bits.mark(s, e);
            }
            let want = ordered_cover(&mut ranges, len).is_ok();
            assert_eq!(bits.all_once(), want, "{ranges:?} {len}");
            if want {
                ok += 1;
            } else {
                bad += 1;
            }
        }
        assert!(ok > 100 && bad > 100, "{ok} {bad}");
    }

    /// A grid passes at its corners exactly when each of its transfers
    /// passes on its own (random grids, some reaching past the memory, the
    /// host buffer or the tiles, or onto an idle tile).
    #[test]
    fn grids_checked_at_their_corners_as_transfer_by_transfer() {
        let mut x = 11u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m.max(1)
        };
        let t = crate::model::TargetInfo {
            name: "t".into(),
            description_sha256: crate::Digest::default(),
            tile_count: 40,
            memory_base: 0x1000,
            memory_bytes: 0x1000,
        };
        let mut owner = vec![0u32; 40];
        owner[37] = IDLE;
        let host_len = 4000;
        let (mut good, mut bad) = (0, 0);
        for _ in 0..20000 {
            let first = crate::Transfer {
                tile: next(30) as u32,
                tile_address: 0xf00 + next(0x400) as u32,
                host_offset: next(2000),
                len: next(64) as u32,
            };
            let dims: Vec<crate::GridDim> = (0..1 + next(3))
                .map(|_| crate::GridDim {
                    count: next(5) as u32,
                    tile_step: [0, 0, 1, 3][next(4) as usize],
                    address_step: next(300) as u32,
                    host_step: next(600),
                })
                .collect();
            let piece = crate::StreamPiece::Grid { first, dims };
            let each_ok = piece
                .each_transfer(&mut |tr| {
                    let ok = tr.tile < t.tile_count
                        && tr.len > 0
                        && tr.tile_address >= t.memory_base
                        && u64::from(tr.tile_address) + u64::from(tr.len) <= t.memory_end()
                        && tr.host_offset + u64::from(tr.len) <= host_len
                        && owner[tr.tile as usize] != IDLE;
                    if ok {
                        Ok(())
                    } else {
                        Err(())
                    }
                })
                .is_ok();
            // A grid with an empty dimension stands for no transfer: the
            // corners refuse it, and the walk then passes it.
            if piece.transfer_count() == 0 {
                continue;
            }
            assert_eq!(
                grid_is_valid(&piece, &t, &owner, host_len),
                each_ok,
                "{piece:?}"
            );
            if each_ok {
                good += 1;
            } else {
                bad += 1;
            }
        }
        assert!(good > 1000 && bad > 1000, "{good} {bad}");
    }
}
