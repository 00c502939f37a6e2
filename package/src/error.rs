//! Why a package was refused.

use crate::{EM_IPU, FORMAT_VERSION, MIN_FORMAT_VERSION};

/// Every way reading (or validating) a package can fail. Messages name
/// the section, image, tile or stream at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackageError {
    #[error("file is too short to be a package ({0} bytes; an ELF header is 64)")]
    TooShort(usize),
    #[error("not an ELF file: bad magic {0:02x?} (expected 7f 45 4c 46)")]
    BadMagic([u8; 4]),
    #[error("unsupported ELF kind: {0} (a package is 64-bit little-endian ELF version 1)")]
    ElfKind(String),
    #[error("ELF e_machine {0:#06x} is not an IPU package (expected {EM_IPU:#06x})")]
    WrongMachine(u16),
    #[error(
        "ELF e_type {0} is not an IPU package (expected ET_EXEC = 2; tile objects are ET_REL)"
    )]
    WrongType(u16),
    #[error("malformed ELF structure: {0}")]
    Elf(String),
    #[error("section {name} (offset {offset}, size {size}) lies outside the {file_len}-byte file")]
    SectionOutOfRange {
        name: String,
        offset: u64,
        size: u64,
        file_len: usize,
    },
    #[error("required section {0} is missing")]
    MissingSection(String),
    #[error("section {0} appears more than once")]
    DuplicateSection(String),
    #[error("package note is malformed: {0}")]
    BadNote(String),
    #[error(
        "unsupported package format version {0} (this reader supports versions {MIN_FORMAT_VERSION} to {FORMAT_VERSION})"
    )]
    UnsupportedVersion(u32),
    #[error("checksum mismatch in section {0}: the file is damaged")]
    ChecksumMismatch(String),
    #[error("file checksum mismatch outside the checked sections (ELF headers, section table or padding): the file is damaged")]
    FileChecksumMismatch,
    #[error("metadata section does not parse: {0}")]
    MetadataParse(String),
    #[error("section {section} holds {found} bytes but the metadata describes {expected}")]
    SectionSize {
        section: String,
        found: u64,
        expected: u64,
    },
    #[error("tile {tile} in {context} is out of range (the target has {tile_count} tiles)")]
    TileOutOfRange {
        tile: u64,
        tile_count: u32,
        context: String,
    },
    #[error("tile {tile} is assigned to both image {first} and image {second}")]
    TileInTwoImages {
        tile: u32,
        first: usize,
        second: usize,
    },
    #[error("image {image}: {what} [{start:#x}, {end:#x}) lies outside tile memory [{mem_start:#x}, {mem_end:#x})")]
    ImageOutOfMemory {
        image: usize,
        what: String,
        start: u64,
        end: u64,
        mem_start: u64,
        mem_end: u64,
    },
    #[error("image {image}: {first} overlaps {second}")]
    ImageOverlap {
        image: usize,
        first: String,
        second: String,
    },
    #[error("stream `{stream}`: {message}")]
    Stream { stream: String, message: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("invalid package: {0}")]
    Invalid(String),
}
