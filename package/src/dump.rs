//! A human-readable summary of a package.

use std::fmt::{self, Write as _};

use crate::model::{Package, StreamPiece};
use crate::FORMAT_VERSION;

/// Layout pieces printed per stream before eliding the rest.
const MAX_PIECES: usize = 8;
/// Data segments / zero ranges printed per image before eliding.
const MAX_RANGES: usize = 8;

fn short(d: &crate::Digest) -> String {
    d.to_hex()[..16].to_string()
}

impl Package {
    /// The text summary (same as `Display`).
    pub fn dump(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Package {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.meta;
        let t = &m.target;
        writeln!(f, "ipu package (format {FORMAT_VERSION})")?;
        writeln!(
            f,
            "  target {} (description sha256 {}), {} tiles, tile memory [{:#x}, {:#x}) = {} bytes",
            t.name,
            short(&t.description_sha256),
            t.tile_count,
            t.memory_base,
            t.memory_end(),
            t.memory_bytes
        )?;
        writeln!(f, "  compiler {}", m.compiler_version)?;
        writeln!(f, "  source sha256 {}", m.source_sha256)?;
        match &m.source {
            Some(src) => writeln!(
                f,
                "  source text: {} bytes, {} lines",
                src.len(),
                src.lines().count()
            )?,
            None => writeln!(f, "  source text: none")?,
        }

        writeln!(f, "  entry points: {}", m.entry_points.len())?;
        for e in &m.entry_points {
            writeln!(
                f,
                "    {} command={} phases={}",
                e.name, e.command, e.phases
            )?;
        }

        writeln!(f, "  streams: {}", m.streams.len())?;
        for s in &m.streams {
            let bytes = s
                .byte_len()
                .map_or_else(|| "overflowing".to_string(), |b| b.to_string());
            let widened = s
                .host_element
                .map(|_| format!(", widened to {} at load", s.element))
                .unwrap_or_default();
            writeln!(
                f,
                "    {} {:<6} {}{widened} ({} bytes, {} transfers)",
                s.name,
                s.direction.to_string(),
                s.type_string(),
                bytes,
                s.layout.iter().map(|p| p.transfer_count()).sum::<u64>()
            )?;
            for p in s.layout.iter().take(MAX_PIECES) {
                match p {
                    StreamPiece::Single(t) => writeln!(
                        f,
                        "      tile {} @{:#x} <-> host [{}, +{})",
                        t.tile, t.tile_address, t.host_offset, t.len
                    )?,
                    StreamPiece::Regular {
                        tiles,
                        tile_address,
                        host_offset,
                        host_stride,
                        len,
                    } if *host_stride == 0 => writeln!(
                        f,
                        "      tiles {tiles} @{tile_address:#x} <-> host [{host_offset}, +{len}) (broadcast)"
                    )?,
                    StreamPiece::Regular {
                        tiles,
                        tile_address,
                        host_offset,
                        host_stride,
                        len,
                    } => writeln!(
                        f,
                        "      tiles {tiles} @{tile_address:#x} <-> host [{host_offset} + i*{host_stride}, +{len})"
                    )?,
                    StreamPiece::Grid { first: t, dims } => {
                        write!(
                            f,
                            "      tile {} @{:#x} <-> host [{}, +{})",
                            t.tile, t.tile_address, t.host_offset, t.len
                        )?;
                        for d in dims {
                            write!(
                                f,
                                " x{} (tile +{}, @+{:#x}, host +{})",
                                d.count, d.tile_step, d.address_step, d.host_step
                            )?;
                        }
                        writeln!(f)?
                    }
                }
            }
            if s.layout.len() > MAX_PIECES {
                writeln!(f, "      ... {} more pieces", s.layout.len() - MAX_PIECES)?;
            }
        }

        if !m.steps.is_empty() {
            writeln!(f, "  steps: {}", m.steps.len())?;
            for (i, s) in m.steps.iter().enumerate() {
                let cycles = s.cycles.map(|c| format!(" cycles={c}")).unwrap_or_default();
                let bound = s.bound.map(|c| format!(" bound={c}")).unwrap_or_default();
                writeln!(f, "    {i:>4} {} {}{cycles}{bound}", s.kind, s.label)?;
            }
        }

        let used: u64 = self.images.iter().map(|g| g.tiles.len()).sum();
        writeln!(
            f,
            "  images: {} distinct for {} tiles ({} idle), {} bytes stored",
            self.images.len(),
            used,
            u64::from(t.tile_count).saturating_sub(used),
            self.stored_bytes()
        )?;
        for (i, g) in self.images.iter().enumerate() {
            let img = &g.image;
            writeln!(
                f,
                "    image {i}: tiles {} ({} tile{}), shared footprint {} bytes",
                g.tiles,
                g.tiles.len(),
                if g.tiles.len() == 1 { "" } else { "s" },
                img.footprint()
            )?;
            writeln!(
                f,
                "      code [{:#x}, +{}) sha256 {}",
                img.code_address,
                img.code.len(),
                short(&crate::Digest::of(&img.code))
            )?;
            for d in img.data.iter().take(MAX_RANGES) {
                writeln!(f, "      data [{:#x}, +{})", d.address, d.bytes.len())?;
            }
            if img.data.len() > MAX_RANGES {
                writeln!(
                    f,
                    "      ... {} more data segments",
                    img.data.len() - MAX_RANGES
                )?;
            }
            for z in img.zero.iter().take(MAX_RANGES) {
                writeln!(f, "      zero [{:#x}, +{})", z.address, z.len)?;
            }
            if img.zero.len() > MAX_RANGES {
                writeln!(
                    f,
                    "      ... {} more zero ranges",
                    img.zero.len() - MAX_RANGES
                )?;
            }
            if !g.tile_data.is_empty() {
                let segs: usize = g.tile_data.values().map(Vec::len).sum();
                let bytes: usize = g.tile_data.values().flatten().map(|d| d.bytes.len()).sum();
                writeln!(
                    f,
                    "      own data on {} tiles: {segs} segments, {bytes} bytes",
                    g.tile_data.len()
                )?;
                for (tile, list) in g.tile_data.iter().take(MAX_RANGES) {
                    let mut line = format!("        tile {tile}:");
                    for d in list.iter().take(MAX_RANGES) {
                        let _ = write!(line, " [{:#x}, +{})", d.address, d.bytes.len());
                    }
                    if list.len() > MAX_RANGES {
                        let _ = write!(line, " ... {} more", list.len() - MAX_RANGES);
                    }
                    writeln!(f, "{line}")?;
                }
                if g.tile_data.len() > MAX_RANGES {
                    writeln!(
                        f,
                        "        ... {} more tiles",
                        g.tile_data.len() - MAX_RANGES
                    )?;
                }
            }
            if !img.entries.is_empty() {
                let mut line = String::from("      entries");
                for (name, addr) in &img.entries {
                    let _ = write!(line, " {name}@{addr:#x}");
                }
                writeln!(f, "{line}")?;
            }
        }
        Ok(())
    }
}
