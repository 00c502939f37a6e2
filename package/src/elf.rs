//! The ELF form of a package: writer and checking reader.

use std::collections::BTreeMap;

use object::elf;
use object::read::elf::{FileHeader as _, SectionHeader as _};
use object::write::elf::{FileHeader, SectionHeader, Writer};
use object::{Endianness, LittleEndian};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::model::{
    DataSegment, Digest, ImageGroup, Metadata, Package, TileImage, TileSet, ZeroRange,
};
use crate::{
    image_section_name, tile_section_name, PackageError, DEBUG_SECTION, EM_IPU, FORMAT_VERSION,
    META_SECTION, MIN_FORMAT_VERSION, NOTE_SECTION,
};

/// Owner name of the package note (NUL-terminated in the file).
pub const NOTE_OWNER: &[u8] = b"IPU\0";
/// Note type of the package note.
pub const NT_IPU_PACKAGE: u32 = 1;
/// Bytes of the package note's descriptor: version, flags, metadata
/// SHA-256, file SHA-256.
pub const NOTE_DESC_LEN: usize = 4 + 4 + 32 + 32;
/// Bytes of the whole note (header, owner, descriptor).
pub const NOTE_LEN: usize = 12 + NOTE_OWNER.len() + NOTE_DESC_LEN;
/// Offset of the file SHA-256 inside the note section's data.
pub const NOTE_FILE_SHA_OFFSET: usize = 12 + NOTE_OWNER.len() + 4 + 4 + 32;

/// One image as described in `.ipu.meta`; its bytes (code, then every data
/// segment in order) are the section `.ipu.image.N`.
#[derive(Serialize, Deserialize)]
struct ImageRecord {
    tiles: TileSet,
    code_address: u32,
    code_len: u32,
    /// (address, length) of each data segment.
    data: Vec<(u32, u32)>,
    zero: Vec<ZeroRange>,
    entries: BTreeMap<String, u32>,
    sha256: Digest,
    /// Tiles with data of their own, in tile order.
    tile_data: Vec<TileDataRecord>,
}

/// One tile's own data segments; their bytes, in order, are the section
/// `.ipu.tile.T`.
#[derive(Serialize, Deserialize)]
struct TileDataRecord {
    tile: u32,
    /// (address, length) of each data segment.
    segments: Vec<(u32, u32)>,
    sha256: Digest,
}

/// The content of `.ipu.meta` (postcard-encoded).
#[derive(Deserialize)]
struct MetaSection {
    meta: Metadata,
    images: Vec<ImageRecord>,
}

/// A step summary before format 3: [`StepSummary`] without `bound`.
#[derive(Serialize, Deserialize)]
struct StepSummaryV2 {
    kind: crate::model::StepKind,
    label: String,
    cycles: Option<u64>,
}

impl From<StepSummaryV2> for crate::model::StepSummary {
    fn from(s: StepSummaryV2) -> crate::model::StepSummary {
        crate::model::StepSummary {
            kind: s.kind,
            label: s.label,
            cycles: s.cycles,
            bound: None,
        }
    }
}

fn steps_v2(steps: &[crate::model::StepSummary]) -> Vec<StepSummaryV2> {
    steps
        .iter()
        .map(|s| StepSummaryV2 {
            kind: s.kind,
            label: s.label.clone(),
            cycles: s.cycles,
        })
        .collect()
}

/// Format 1's metadata: [`Metadata`] without `source`, its steps without
/// `bound`.
#[derive(Deserialize)]
struct MetadataV1 {
    target: crate::model::TargetInfo,
    compiler_version: String,
    source_sha256: Digest,
    entry_points: Vec<crate::model::EntryPoint>,
    streams: Vec<crate::model::HostStream>,
    steps: Vec<StepSummaryV2>,
}

/// Format 1's `.ipu.meta`.
#[derive(Deserialize)]
struct MetaSectionV1 {
    meta: MetadataV1,
    images: Vec<ImageRecord>,
}

impl From<MetaSectionV1> for MetaSection {
    fn from(v: MetaSectionV1) -> MetaSection {
        let m = v.meta;
        MetaSection {
            meta: Metadata {
                target: m.target,
                compiler_version: m.compiler_version,
                source_sha256: m.source_sha256,
                entry_points: m.entry_points,
                streams: m.streams,
                steps: m.steps.into_iter().map(Into::into).collect(),
                source: None,
                probes: Vec::new(),
            },
            images: v.images,
        }
    }
}

/// Format 2's metadata: [`Metadata`] with its steps without `bound`.
#[derive(Deserialize)]
struct MetadataV2 {
    target: crate::model::TargetInfo,
    compiler_version: String,
    source_sha256: Digest,
    entry_points: Vec<crate::model::EntryPoint>,
    streams: Vec<crate::model::HostStream>,
    steps: Vec<StepSummaryV2>,
    source: Option<String>,
}

/// Format 2's `.ipu.meta`.
#[derive(Deserialize)]
struct MetaSectionV2 {
    meta: MetadataV2,
    images: Vec<ImageRecord>,
}

impl From<MetaSectionV2> for MetaSection {
    fn from(v: MetaSectionV2) -> MetaSection {
        let m = v.meta;
        MetaSection {
            meta: Metadata {
                target: m.target,
                compiler_version: m.compiler_version,
                source_sha256: m.source_sha256,
                entry_points: m.entry_points,
                streams: m.streams,
                steps: m.steps.into_iter().map(Into::into).collect(),
                source: m.source,
                probes: Vec::new(),
            },
            images: v.images,
        }
    }
}

/// Format 1's and 2's `.ipu.meta` for writing: the metadata fields as a
/// tuple (postcard encodes a struct as its fields in order, like a tuple);
/// `source` only in format 2.
#[derive(Serialize)]
#[allow(clippy::type_complexity)]
struct MetaSectionOldRef<'a> {
    meta: (
        &'a crate::model::TargetInfo,
        &'a String,
        &'a Digest,
        &'a Vec<crate::model::EntryPoint>,
        &'a Vec<crate::model::HostStream>,
        Vec<StepSummaryV2>,
    ),
    images: Vec<ImageRecord>,
}

/// Format 2's `.ipu.meta` for writing.
#[derive(Serialize)]
#[allow(clippy::type_complexity)]
struct MetaSectionV2Ref<'a> {
    meta: (
        &'a crate::model::TargetInfo,
        &'a String,
        &'a Digest,
        &'a Vec<crate::model::EntryPoint>,
        &'a Vec<crate::model::HostStream>,
        Vec<StepSummaryV2>,
        &'a Option<String>,
    ),
    images: Vec<ImageRecord>,
}

/// The same, borrowing the metadata for writing (identical encoding;
/// formats 3 and 4).
#[derive(Serialize)]
struct MetaSectionRef<'a> {
    meta: &'a Metadata,
    images: Vec<ImageRecord>,
}

/// One load stream's host-side conversion (format 5): the index of the
/// stream in `Metadata::streams` and the element type the host supplies.
#[derive(Serialize, Deserialize)]
struct ConversionRecord {
    stream: u32,
    host_element: crate::model::ElementType,
}

/// Format 5's `.ipu.meta`: format 4's, then the streams' conversions.
#[derive(Deserialize)]
struct MetaSectionV5 {
    meta: Metadata,
    images: Vec<ImageRecord>,
    conversions: Vec<ConversionRecord>,
}

/// Format 5's `.ipu.meta` for writing.
#[derive(Serialize)]
struct MetaSectionV5Ref<'a> {
    meta: &'a Metadata,
    images: Vec<ImageRecord>,
    conversions: Vec<ConversionRecord>,
}

impl MetaSectionV5 {
    /// The metadata with each conversion on its stream; a conversion of no
    /// stream, or a second one of a stream, is damage.
    fn into_section(self) -> Result<MetaSection, PackageError> {
        let mut meta = self.meta;
        for c in self.conversions {
            let n = meta.streams.len();
            let s = meta.streams.get_mut(c.stream as usize).ok_or_else(|| {
                PackageError::MetadataParse(format!(
                    "a conversion names stream {}, but the package has {n} streams",
                    c.stream
                ))
            })?;
            if s.host_element.replace(c.host_element).is_some() {
                return Err(PackageError::MetadataParse(format!(
                    "stream `{}` has two conversions",
                    s.name
                )));
            }
        }
        Ok(MetaSection {
            meta,
            images: self.images,
        })
    }
}

fn segment_records(segments: &[DataSegment]) -> Vec<(u32, u32)> {
    segments
        .iter()
        .map(|d| (d.address, d.bytes.len() as u32))
        .collect()
}

/// Splits a section's bytes into segments; `None` when the lengths do not
/// add up to the section size.
fn split_segments(mut bytes: &[u8], records: &[(u32, u32)]) -> Option<Vec<DataSegment>> {
    let mut out = Vec::with_capacity(records.len().min(bytes.len()));
    for &(address, len) in records {
        if len as usize > bytes.len() {
            return None;
        }
        let (seg, rest) = bytes.split_at(len as usize);
        out.push(DataSegment {
            address,
            bytes: seg.to_vec(),
        });
        bytes = rest;
    }
    bytes.is_empty().then_some(out)
}

fn total_len(first: u32, records: &[(u32, u32)]) -> u64 {
    records.iter().fold(u64::from(first), |a, &(_, len)| {
        a.saturating_add(u64::from(len))
    })
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Package {
    /// The package as ELF bytes. Deterministic: the same package always
    /// gives the same bytes. It does not validate; see
    /// [`Package::try_to_elf_bytes`].
    pub fn to_elf_bytes(&self) -> Vec<u8> {
        self.to_elf_bytes_version(FORMAT_VERSION)
    }

    /// The file in format `version` (1: without `source`; 1 and 2:
    /// without the steps' `bound`; 1 to 3 must not hold grid pieces; 1 to 4
    /// drop the streams' conversions; for tests of the reader's
    /// compatibility).
    pub(crate) fn to_elf_bytes_version(&self, version: u32) -> Vec<u8> {
        let mut images = Vec::with_capacity(self.images.len());
        // (section name, bytes) of every image and tile-data section.
        let mut contents: Vec<(String, Vec<u8>)> = Vec::new();
        let mut tile_contents: Vec<(String, Vec<u8>)> = Vec::new();
        for (i, g) in self.images.iter().enumerate() {
            let img = &g.image;
            let mut bytes = img.code.clone();
            for d in &img.data {
                bytes.extend_from_slice(&d.bytes);
            }
            let mut tile_data = Vec::with_capacity(g.tile_data.len());
            for (&tile, segments) in &g.tile_data {
                let mut own = Vec::with_capacity(segments.iter().map(|d| d.bytes.len()).sum());
                for d in segments {
                    own.extend_from_slice(&d.bytes);
                }
                tile_data.push(TileDataRecord {
                    tile,
                    segments: segment_records(segments),
                    sha256: Digest::of(&own),
                });
                tile_contents.push((tile_section_name(tile), own));
            }
            images.push(ImageRecord {
                tiles: g.tiles.clone(),
                code_address: img.code_address,
                code_len: img.code.len() as u32,
                data: segment_records(&img.data),
                zero: img.zero.clone(),
                entries: img.entries.clone(),
                sha256: Digest::of(&bytes),
                tile_data,
            });
            contents.push((image_section_name(i), bytes));
        }
        contents.extend(tile_contents);
        if !self.meta.probes.is_empty() && version > 1 {
            let debug =
                postcard::to_stdvec(&self.meta.probes).expect("postcard encodes every probe");
            contents.push((DEBUG_SECTION.to_string(), debug));
        }
        let m = &self.meta;
        let meta = if version == 1 {
            postcard::to_stdvec(&MetaSectionOldRef {
                meta: (
                    &m.target,
                    &m.compiler_version,
                    &m.source_sha256,
                    &m.entry_points,
                    &m.streams,
                    steps_v2(&m.steps),
                ),
                images,
            })
        } else if version == 2 {
            postcard::to_stdvec(&MetaSectionV2Ref {
                meta: (
                    &m.target,
                    &m.compiler_version,
                    &m.source_sha256,
                    &m.entry_points,
                    &m.streams,
                    steps_v2(&m.steps),
                    &m.source,
                ),
                images,
            })
        } else if version <= 4 {
            postcard::to_stdvec(&MetaSectionRef { meta: m, images })
        } else {
            let conversions = m
                .streams
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    s.host_element.map(|host_element| ConversionRecord {
                        stream: i as u32,
                        host_element,
                    })
                })
                .collect();
            postcard::to_stdvec(&MetaSectionV5Ref {
                meta: m,
                images,
                conversions,
            })
        }
        .expect("postcard encodes every metadata value");

        let mut note = Vec::with_capacity(NOTE_LEN);
        note.extend_from_slice(&(NOTE_OWNER.len() as u32).to_le_bytes());
        note.extend_from_slice(&(NOTE_DESC_LEN as u32).to_le_bytes());
        note.extend_from_slice(&NT_IPU_PACKAGE.to_le_bytes());
        note.extend_from_slice(NOTE_OWNER);
        note.extend_from_slice(&version.to_le_bytes());
        note.extend_from_slice(&0u32.to_le_bytes());
        note.extend_from_slice(&Digest::of(&meta).0);
        note.extend_from_slice(&[0; 32]); // file hash, patched below
        debug_assert_eq!(note.len(), NOTE_LEN);

        let mut out = Vec::new();
        let note_offset;
        {
            let mut w = Writer::new(Endianness::Little, true, &mut out);
            w.reserve_file_header();
            let note_name = w.add_section_name(NOTE_SECTION.as_bytes());
            let meta_name = w.add_section_name(META_SECTION.as_bytes());
            let img_names: Vec<_> = contents
                .iter()
                .map(|(n, _)| w.add_section_name(n.as_bytes()))
                .collect();
            w.reserve_section_index(); // note
            w.reserve_section_index(); // meta
            for _ in &contents {
                w.reserve_section_index();
            }
            w.reserve_shstrtab_section_index();
            note_offset = w.reserve(note.len(), 8);
            let meta_offset = w.reserve(meta.len(), 8);
            let img_offsets: Vec<usize> = contents
                .iter()
                .map(|(_, c)| w.reserve(c.len(), 8))
                .collect();
            w.reserve_shstrtab();
            w.reserve_section_headers();

            w.write_file_header(&FileHeader {
                os_abi: elf::ELFOSABI_NONE,
                abi_version: 0,
                e_type: elf::ET_EXEC,
                e_machine: EM_IPU,
                e_entry: 0,
                e_flags: 0,
            })
            .expect("writing to a Vec cannot fail");
            w.write_align(8);
            w.write(&note);
            w.write_align(8);
            w.write(&meta);
            for (_, c) in &contents {
                w.write_align(8);
                w.write(c);
            }
            w.write_shstrtab();
            w.write_null_section_header();
            w.write_section_header(&SectionHeader {
                name: Some(note_name),
                sh_type: elf::SHT_NOTE,
                sh_flags: 0,
                sh_addr: 0,
                sh_offset: note_offset as u64,
                sh_size: note.len() as u64,
                sh_link: 0,
                sh_info: 0,
                sh_addralign: 4,
                sh_entsize: 0,
            });
            w.write_section_header(&SectionHeader {
                name: Some(meta_name),
                sh_type: elf::SHT_PROGBITS,
                sh_flags: 0,
                sh_addr: 0,
                sh_offset: meta_offset as u64,
                sh_size: meta.len() as u64,
                sh_link: 0,
                sh_info: 0,
                sh_addralign: 8,
                sh_entsize: 0,
            });
            for (((_, c), off), name) in contents.iter().zip(&img_offsets).zip(img_names) {
                w.write_section_header(&SectionHeader {
                    name: Some(name),
                    sh_type: elf::SHT_PROGBITS,
                    sh_flags: 0,
                    sh_addr: 0,
                    sh_offset: *off as u64,
                    sh_size: c.len() as u64,
                    sh_link: 0,
                    sh_info: 0,
                    sh_addralign: 8,
                    sh_entsize: 0,
                });
            }
            w.write_shstrtab_section_header();
        }
        let at = note_offset + NOTE_FILE_SHA_OFFSET;
        let file_sha = Digest::of(&out);
        out[at..at + 32].copy_from_slice(&file_sha.0);
        out
    }

    /// Validates, then writes.
    pub fn try_to_elf_bytes(&self) -> Result<Vec<u8>, PackageError> {
        self.validate()?;
        Ok(self.to_elf_bytes())
    }

    /// Reads and checks a package: ELF identity, format version, the
    /// checksum of every section and of the whole file, the metadata, then
    /// [`Package::validate`]. Never panics, whatever the bytes.
    pub fn from_elf_bytes(bytes: &[u8]) -> Result<Package, PackageError> {
        if bytes.len() < 64 {
            return Err(PackageError::TooShort(bytes.len()));
        }
        if bytes[..4] != elf::ELFMAG {
            return Err(PackageError::BadMagic([
                bytes[0], bytes[1], bytes[2], bytes[3],
            ]));
        }
        if bytes[4] != elf::ELFCLASS64 {
            return Err(PackageError::ElfKind(format!("class {}", bytes[4])));
        }
        if bytes[5] != elf::ELFDATA2LSB {
            return Err(PackageError::ElfKind(format!("data encoding {}", bytes[5])));
        }
        if bytes[6] != elf::EV_CURRENT {
            return Err(PackageError::ElfKind(format!("ident version {}", bytes[6])));
        }
        let machine = u16::from_le_bytes([bytes[18], bytes[19]]);
        if machine != EM_IPU {
            return Err(PackageError::WrongMachine(machine));
        }
        let e_type = u16::from_le_bytes([bytes[16], bytes[17]]);
        if e_type != elf::ET_EXEC {
            return Err(PackageError::WrongType(e_type));
        }
        // The `object` reader wants its headers aligned; copy when the
        // caller's slice is not.
        let aligned;
        let data: &[u8] = if bytes.as_ptr().align_offset(8) == 0 {
            bytes
        } else {
            aligned = AlignedCopy::new(bytes);
            aligned.bytes()
        };
        read_checked(data)
    }
}

/// A copy of a byte slice starting on an 8-byte boundary.
struct AlignedCopy {
    words: Vec<u64>,
    len: usize,
}

impl AlignedCopy {
    fn new(bytes: &[u8]) -> AlignedCopy {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        object::pod::bytes_of_slice_mut(&mut words[..])[..bytes.len()].copy_from_slice(bytes);
        AlignedCopy {
            words,
            len: bytes.len(),
        }
    }

    fn bytes(&self) -> &[u8] {
        &object::pod::bytes_of_slice(&self.words[..])[..self.len]
    }
}

fn elf_err(what: &str, e: object::Error) -> PackageError {
    PackageError::Elf(format!("{what}: {e}"))
}

fn read_checked(data: &[u8]) -> Result<Package, PackageError> {
    let le = LittleEndian;
    let header =
        elf::FileHeader64::<LittleEndian>::parse(data).map_err(|e| elf_err("file header", e))?;
    let table = header
        .sections(le, data)
        .map_err(|e| elf_err("section table", e))?;

    // Our sections by name: (file offset, contents).
    let mut found: BTreeMap<String, (u64, &[u8])> = BTreeMap::new();
    for (i, sh) in table.iter().enumerate().skip(1) {
        let name = table
            .section_name(le, sh)
            .map_err(|e| elf_err(&format!("name of section {i}"), e))?;
        let name = String::from_utf8_lossy(name).into_owned();
        let (offset, size) = (sh.sh_offset(le), sh.sh_size(le));
        let contents = if sh.sh_type(le) == elf::SHT_NOBITS {
            &[][..]
        } else {
            match offset.checked_add(size) {
                Some(end) if end <= data.len() as u64 => &data[offset as usize..end as usize],
                _ => {
                    return Err(PackageError::SectionOutOfRange {
                        name,
                        offset,
                        size,
                        file_len: data.len(),
                    })
                }
            }
        };
        if name.starts_with(".ipu.") || name == NOTE_SECTION {
            if found.contains_key(&name) {
                return Err(PackageError::DuplicateSection(name));
            }
            found.insert(name, (offset, contents));
        }
    }
    fn take<'d>(
        found: &mut BTreeMap<String, (u64, &'d [u8])>,
        name: &str,
    ) -> Result<(u64, &'d [u8]), PackageError> {
        found
            .remove(name)
            .ok_or_else(|| PackageError::MissingSection(name.to_string()))
    }

    let (note_offset, note) = take(&mut found, NOTE_SECTION)?;
    let (version, flags, meta_sha, file_sha) = parse_note(note)?;
    if !(MIN_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(PackageError::UnsupportedVersion(version));
    }
    if flags != 0 {
        return Err(PackageError::BadNote(format!("unknown flags {flags:#x}")));
    }
    let (_, meta_bytes) = take(&mut found, META_SECTION)?;
    if Digest::of(meta_bytes) != meta_sha {
        return Err(PackageError::ChecksumMismatch(META_SECTION.to_string()));
    }
    let parse = |e: postcard::Error| PackageError::MetadataParse(e.to_string());
    let (ms, rest): (MetaSection, &[u8]) = if version == 1 {
        postcard::take_from_bytes::<MetaSectionV1>(meta_bytes)
            .map(|(m, r)| (m.into(), r))
            .map_err(parse)?
    } else if version == 2 {
        postcard::take_from_bytes::<MetaSectionV2>(meta_bytes)
            .map(|(m, r)| (m.into(), r))
            .map_err(parse)?
    } else if version <= 4 {
        postcard::take_from_bytes(meta_bytes).map_err(parse)?
    } else {
        match postcard::take_from_bytes::<MetaSectionV5>(meta_bytes) {
            Ok((m, r)) => (m.into_section()?, r),
            // Name the conversions when all before them reads.
            Err(e) if postcard::take_from_bytes::<MetaSection>(meta_bytes).is_ok() => {
                return Err(PackageError::MetadataParse(format!(
                    "the streams' conversions do not parse (an element type this reader does not know, \
                     or cut short): {e}"
                )))
            }
            Err(e) => return Err(parse(e)),
        }
    };
    if !rest.is_empty() {
        return Err(PackageError::MetadataParse(format!(
            "{} trailing bytes after the metadata",
            rest.len()
        )));
    }

    let mut images = Vec::with_capacity(ms.images.len().min(found.len()));
    let mut tiles_with_data = BTreeMap::new();
    for (i, rec) in ms.images.into_iter().enumerate() {
        let name = image_section_name(i);
        let (_, bytes) = take(&mut found, &name)?;
        let bytes = checked_contents(name, bytes, rec.code_len, &rec.data, rec.sha256)?;
        let (code, rest) = bytes.split_at(rec.code_len as usize);
        let data = split_segments(rest, &rec.data).ok_or_else(|| {
            PackageError::MetadataParse(format!("image {i}: segment lengths do not add up"))
        })?;
        let mut tile_data = BTreeMap::new();
        for td in rec.tile_data {
            if let Some(other) = tiles_with_data.insert(td.tile, i) {
                return Err(PackageError::Invalid(format!(
                    "tile {} has data of its own in image {other} and image {i}",
                    td.tile
                )));
            }
            let name = tile_section_name(td.tile);
            let (_, bytes) = take(&mut found, &name)?;
            let bytes = checked_contents(name, bytes, 0, &td.segments, td.sha256)?;
            let segments = split_segments(bytes, &td.segments).ok_or_else(|| {
                PackageError::MetadataParse(format!(
                    "tile {}: segment lengths do not add up",
                    td.tile
                ))
            })?;
            tile_data.insert(td.tile, segments);
        }
        images.push(ImageGroup {
            tiles: rec.tiles,
            image: TileImage {
                code_address: rec.code_address,
                code: code.to_vec(),
                data,
                zero: rec.zero,
                entries: rec.entries,
            },
            tile_data,
        });
    }
    let mut meta = ms.meta;
    if let Some((_, debug)) = found.remove(DEBUG_SECTION) {
        meta.probes = postcard::from_bytes(debug)
            .map_err(|e| PackageError::MetadataParse(format!("section {DEBUG_SECTION}: {e}")))?;
    }
    if let Some(extra) = found.keys().next() {
        return Err(PackageError::Invalid(format!(
            "section {extra} is not described by the metadata"
        )));
    }
    // Grid pieces came with format 4: an older file holding one is damaged.
    let has_grid = |s: &crate::model::HostStream| {
        s.layout
            .iter()
            .any(|p| matches!(p, crate::StreamPiece::Grid { .. }))
    };
    if version < 4
        && (meta.streams.iter().any(has_grid) || meta.probes.iter().any(|p| has_grid(&p.stream)))
    {
        return Err(PackageError::MetadataParse(format!(
            "a format-{version} file holds a grid layout piece (format 4 and later)"
        )));
    }

    // The whole file, with the file-hash field read as zeros.
    let at = note_offset as usize + NOTE_FILE_SHA_OFFSET;
    let mut h = Sha256::new();
    h.update(&data[..at]);
    h.update([0u8; 32]);
    h.update(&data[at + 32..]);
    if Digest(h.finalize().into()) != file_sha {
        return Err(PackageError::FileChecksumMismatch);
    }

    let package = Package { meta, images };
    package.validate()?;
    Ok(package)
}

/// A section's bytes after checking its size against the metadata
/// (`first` bytes plus the segment lengths) and its checksum.
fn checked_contents<'d>(
    name: String,
    bytes: &'d [u8],
    first: u32,
    segments: &[(u32, u32)],
    sha256: Digest,
) -> Result<&'d [u8], PackageError> {
    let expected = total_len(first, segments);
    if bytes.len() as u64 != expected {
        return Err(PackageError::SectionSize {
            section: name,
            found: bytes.len() as u64,
            expected,
        });
    }
    if Digest::of(bytes) != sha256 {
        return Err(PackageError::ChecksumMismatch(name));
    }
    Ok(bytes)
}

/// (format version, flags, metadata SHA-256, file SHA-256).
fn parse_note(note: &[u8]) -> Result<(u32, u32, Digest, Digest), PackageError> {
    let bad = |m: String| Err(PackageError::BadNote(m));
    if note.len() != NOTE_LEN {
        return bad(format!("{} bytes, expected {NOTE_LEN}", note.len()));
    }
    let (namesz, descsz, ty) = (le32(note, 0), le32(note, 4), le32(note, 8));
    if namesz as usize != NOTE_OWNER.len() || &note[12..16] != NOTE_OWNER {
        return bad("owner is not \"IPU\"".to_string());
    }
    if descsz as usize != NOTE_DESC_LEN {
        return bad(format!(
            "descriptor of {descsz} bytes, expected {NOTE_DESC_LEN}"
        ));
    }
    if ty != NT_IPU_PACKAGE {
        return bad(format!("note type {ty}, expected {NT_IPU_PACKAGE}"));
    }
    let version = le32(note, 16);
    let flags = le32(note, 20);
    let mut meta = [0u8; 32];
    meta.copy_from_slice(&note[24..56]);
    let mut file = [0u8; 32];
    file.copy_from_slice(&note[56..88]);
    Ok((version, flags, Digest(meta), Digest(file)))
}

#[cfg(test)]
mod tests {
    use super::{ConversionRecord, MetaSectionV5};
    use crate::model::*;
    use crate::META_SECTION;

    fn sample(source: Option<String>) -> Package {
        let meta = Metadata {
            target: TargetInfo {
                name: "test4".into(),
                description_sha256: Digest::of(b"t"),
                tile_count: 4,
                memory_base: 0x1000,
                memory_bytes: 0x1000,
            },
            compiler_version: "0.1.0".into(),
            source_sha256: Digest::of(b"func.func @main() { }"),
            entry_points: vec![EntryPoint {
                name: "main".into(),
                command: 0,
                phases: 1,
            }],
            streams: Vec::new(),
            steps: vec![StepSummary {
                kind: StepKind::Compute,
                label: "s0 tile.matmul".into(),
                cycles: Some(1200),
                bound: Some(700),
            }],
            source,
            probes: Vec::new(),
        };
        let image = TileImage {
            code_address: 0x1000,
            code: vec![1, 2, 3, 4],
            data: vec![DataSegment {
                address: 0x1800,
                bytes: vec![9; 8],
            }],
            zero: Vec::new(),
            entries: [("main".to_string(), 0x1000)].into_iter().collect(),
        };
        Package::from_tile_images(meta, (0..2).map(|t| (t, image.clone())))
    }

    #[test]
    fn format_1_files_still_read_without_source() {
        let p = sample(Some("func.func @main() { }".into()));
        let v1 = p.to_elf_bytes_version(1);
        let back = Package::from_elf_bytes(&v1).unwrap();
        assert_eq!(back.meta.source, None);
        let mut expected = p.clone();
        expected.meta.source = None;
        expected.meta.steps[0].bound = None;
        assert_eq!(back, expected);
        // Version 2 keeps the source, not the steps' bounds.
        let v2 = p.to_elf_bytes_version(2);
        let mut expected = p.clone();
        expected.meta.steps[0].bound = None;
        assert_eq!(Package::from_elf_bytes(&v2).unwrap(), expected);
        // Version 3 keeps both.
        let v3 = p.to_elf_bytes();
        assert_eq!(Package::from_elf_bytes(&v3).unwrap(), p);
    }

    /// A load stream of 2x16 f32 on tiles 0 and 1, as one grid: per tile
    /// (host step 64) two 32-byte rows (address step 64, host step 32).
    fn grid_stream() -> HostStream {
        HostStream {
            name: "w".into(),
            direction: Direction::Load,
            element: ElementType::F32,
            shape: vec![2, 32],
            host_element: None,
            layout: vec![StreamPiece::Grid {
                first: Transfer {
                    tile: 0,
                    tile_address: 0x1900,
                    host_offset: 0,
                    len: 32,
                },
                dims: vec![
                    GridDim {
                        count: 2,
                        tile_step: 1,
                        address_step: 0,
                        host_step: 128,
                    },
                    GridDim {
                        count: 2,
                        tile_step: 0,
                        address_step: 64,
                        host_step: 32,
                    },
                ],
            }],
        }
    }

    #[test]
    fn grid_pieces_round_trip_in_format_4_and_expand_in_index_order() {
        let mut p = sample(None);
        p.meta.streams.push(grid_stream());
        let bytes = p.to_elf_bytes();
        assert_eq!(Package::from_elf_bytes(&bytes).unwrap(), p);
        let ts: Vec<(u32, u32, u64)> = p.meta.streams[0]
            .transfers()
            .map(|t| (t.tile, t.tile_address, t.host_offset))
            .collect();
        assert_eq!(
            ts,
            [
                (0, 0x1900, 0),
                (0, 0x1940, 32),
                (1, 0x1900, 128),
                (1, 0x1940, 160)
            ]
        );
        assert_eq!(p.meta.streams[0].layout[0].transfer_count(), 4);
        let text = p.dump();
        assert!(
            text.contains("w load   tensor<2x32xf32> (256 bytes, 4 transfers)")
                && text.contains(
                    "tile 0 @0x1900 <-> host [0, +32) x2 (tile +1, @+0x0, host +128) x2 (tile +0, @+0x40, host +32)"
                ),
            "{text}"
        );
    }

    #[test]
    fn an_older_file_holding_a_grid_is_refused() {
        let mut p = sample(None);
        p.meta.streams.push(grid_stream());
        let v3 = p.to_elf_bytes_version(3);
        let err = Package::from_elf_bytes(&v3).unwrap_err();
        assert!(
            err.to_string()
                .contains("a format-3 file holds a grid layout piece"),
            "{err}"
        );
        // Without grids a format-3 file still reads.
        let q = sample(None);
        assert_eq!(
            Package::from_elf_bytes(&q.to_elf_bytes_version(3)).unwrap(),
            q
        );
    }

    #[test]
    fn conversions_are_format_5_and_older_formats_read_unchanged() {
        let q = sample(None);
        let meta_len = |b: &[u8]| {
            let f = object::File::parse(b).unwrap();
            use object::{Object as _, ObjectSection as _};
            f.section_by_name(META_SECTION).unwrap().size()
        };
        // Format 5's metadata is format 4's and then the conversions: none
        // is one byte (the count).
        let (v5, v4) = (q.to_elf_bytes(), q.to_elf_bytes_version(4));
        assert_eq!(meta_len(&v5), meta_len(&v4) + 1);
        assert_eq!(Package::from_elf_bytes(&v4).unwrap(), q);
        // A stream's conversion, twice: the second is refused.
        let mut p = sample(None);
        let mut w = grid_stream();
        w.element = ElementType::F32;
        w.host_element = Some(ElementType::F16);
        p.meta.streams.push(w);
        let section = MetaSectionV5 {
            meta: p.meta.clone(),
            images: Vec::new(),
            conversions: vec![
                ConversionRecord {
                    stream: 0,
                    host_element: ElementType::F16,
                },
                ConversionRecord {
                    stream: 0,
                    host_element: ElementType::F16,
                },
            ],
        };
        let mut meta = section.meta.clone();
        meta.streams[0].host_element = None;
        let err = MetaSectionV5 { meta, ..section }
            .into_section()
            .err()
            .expect("refused");
        assert!(
            err.to_string().contains("stream `w` has two conversions"),
            "{err}"
        );
    }

    #[test]
    fn malformed_grids_fail_validation() {
        let with = |edit: &dyn Fn(&mut Vec<GridDim>)| {
            let mut p = sample(None);
            let mut s = grid_stream();
            if let StreamPiece::Grid { dims, .. } = &mut s.layout[0] {
                edit(dims);
            }
            p.meta.streams.push(s);
            p.validate().unwrap_err().to_string()
        };
        let e = with(&|d| d[1].count = 0);
        assert!(e.contains("dimension of count 0"), "{e}");
        // Tile 0 + 3 steps of 1: tile 3 runs no image; 4 is past the count.
        let e = with(&|d| d[0].count = 4);
        assert!(
            e.contains("host range") || e.contains("runs no image"),
            "{e}"
        );
        let e = with(&|d| d[0].tile_step = 4);
        assert!(e.contains("tile 4") && e.contains("4 tiles"), "{e}");
        let e = with(&|d| d[1].address_step = 0x800);
        assert!(e.contains("outside tile memory"), "{e}");
        let e = with(&|d| {
            for _ in 0..7 {
                d.push(GridDim {
                    count: 1,
                    tile_step: 0,
                    address_step: 0,
                    host_step: 0,
                });
            }
        });
        assert!(e.contains("9 dimensions, more than the limit of 8"), "{e}");
    }

    #[test]
    fn a_source_must_match_its_hash() {
        let p = sample(Some("func.func @other() { }".into()));
        let err = p.validate().unwrap_err();
        assert!(err.to_string().contains("source text hashes to"), "{err}");
        assert!(Package::from_elf_bytes(&p.to_elf_bytes()).is_err());
    }
}
