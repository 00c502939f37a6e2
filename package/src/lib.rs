//! The `.ipuexe` executable package.
//!
//! A package is a 64-bit little-endian ELF file (`ET_EXEC`, `e_machine`
//! [`EM_IPU`]) holding:
//!
//! * `.note.ipu.package` — an `SHT_NOTE` with owner `IPU`, type
//!   [`NT_IPU_PACKAGE`]: the format version, the SHA-256 of `.ipu.meta` and
//!   the SHA-256 of the whole file (taken with that field zeroed);
//! * `.ipu.meta` — the [`Metadata`] plus one record per distinct image
//!   (its tile set, addresses, segment lengths, entries and SHA-256),
//!   postcard-encoded;
//! * `.ipu.image.N` — the bytes of image group `N`, shared by all its
//!   tiles: its code followed by its shared data segments. Tiles sharing a
//!   program share one section;
//! * `.ipu.tile.T` — the data segments only tile `T` holds (weights,
//!   exchange tables), for tiles that have any;
//! * `.ipu.debug` — optional: the [`Probe`]s (where each op's result can be
//!   read, for per-op checks), postcard-encoded; covered by the file's
//!   SHA-256, ignored by a plain run.
//!
//! [`Package::to_elf_bytes`] writes it deterministically;
//! [`Package::from_elf_bytes`] checks everything and refuses a damaged file
//! with a [`PackageError`]. `FORMAT.md` beside this crate describes the
//! layout.

mod dump;
mod elf;
mod error;
mod model;
mod validate;

pub use elf::{NOTE_DESC_LEN, NOTE_FILE_SHA_OFFSET, NOTE_LEN, NOTE_OWNER, NT_IPU_PACKAGE};
pub use error::PackageError;
pub use model::{
    DataSegment, Digest, Direction, ElementType, EntryPoint, GridDim, HostStream, ImageGroup,
    Metadata, Package, Probe, StepKind, StepSummary, StreamPiece, TargetInfo, TileImage, TileRun,
    TileSet, Transfer, ZeroRange,
};

/// `e_machine` of IPU ELF files: an unassigned value spelling "IP", shared
/// with the assembler's relocatable tile objects (`ET_REL`); a package is
/// `ET_EXEC`.
pub const EM_IPU: u16 = 0x4950;
/// The package format version this crate writes (and the newest it reads).
/// Version 2 added `Metadata::source`, version 3 `StepSummary::bound`,
/// version 4 `StreamPiece::Grid`, version 5 `HostStream::host_element`
/// (a load stream's host-side conversion).
pub const FORMAT_VERSION: u32 = 5;
/// The oldest format version this crate reads (version 1: no `source`).
pub const MIN_FORMAT_VERSION: u32 = 1;
/// Name of the note section carrying version and checksums.
pub const NOTE_SECTION: &str = ".note.ipu.package";
/// Name of the metadata section.
pub const META_SECTION: &str = ".ipu.meta";
/// Name of the optional debug section (the probes).
pub const DEBUG_SECTION: &str = ".ipu.debug";
/// Prefix of image sections: `.ipu.image.0`, `.ipu.image.1`, ...
pub const IMAGE_SECTION_PREFIX: &str = ".ipu.image.";
/// Largest tile count a package may declare.
pub const MAX_TILES: u32 = 1 << 20;
/// Most transfers one stream layout may expand to.
pub const MAX_STREAM_TRANSFERS: u64 = 1 << 26;
/// Most dimensions of one grid layout piece.
pub const MAX_GRID_DIMS: usize = 8;

/// Prefix of per-tile data sections: `.ipu.tile.17`, ...
pub const TILE_SECTION_PREFIX: &str = ".ipu.tile.";

/// Section name of tile `tile`'s own data.
pub fn tile_section_name(tile: u32) -> String {
    format!("{TILE_SECTION_PREFIX}{tile}")
}

/// Section name of distinct image `index`.
pub fn image_section_name(index: usize) -> String {
    format!("{IMAGE_SECTION_PREFIX}{index}")
}
