//! Damaged, truncated and inconsistent files are refused with the right
//! error, and nothing panics.

mod common;

use common::*;
use ipu_package::*;

fn read(bytes: &[u8]) -> Result<Package, PackageError> {
    Package::from_elf_bytes(bytes)
}

#[test]
fn every_truncation_is_refused() {
    let bytes = sample().to_elf_bytes();
    for len in 0..bytes.len() {
        let err = read(&bytes[..len]).expect_err(&format!("truncated to {len} bytes"));
        if len < 64 {
            assert_eq!(err, PackageError::TooShort(len));
        }
        assert!(!err.to_string().is_empty());
    }
    // Appended bytes are damage as well.
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(read(&longer), Err(PackageError::FileChecksumMismatch));
}

#[test]
fn every_single_byte_flip_is_refused() {
    let bytes = sample().to_elf_bytes();
    for at in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[at] ^= mask;
            assert!(read(&b).is_err(), "flip {mask:#x} at {at} was accepted");
        }
    }
}

#[test]
fn random_damage_is_refused() {
    let bytes = sample().to_elf_bytes();
    let mut rng = Rng(0x1BADB002);
    for round in 0..3000 {
        let mut b = bytes.clone();
        let n = 1 + rng.below(6);
        for _ in 0..n {
            let at = rng.below(b.len());
            b[at] ^= 1 + rng.below(255) as u8;
        }
        // Occasionally cut the file as well.
        if round % 7 == 0 {
            let len = rng.below(b.len());
            b.truncate(len);
        }
        assert!(read(&b).is_err(), "round {round} was accepted");
    }
}

#[test]
fn flips_inside_each_section_name_that_section() {
    let bytes = sample().to_elf_bytes();
    for (i, name) in [
        ".ipu.image.0",
        ".ipu.image.1",
        ".ipu.image.2",
        ".ipu.tile.0",
        ".ipu.tile.5",
    ]
    .iter()
    .enumerate()
    {
        let (off, len) = section_range(&bytes, name);
        assert!(len > 0, "image {i}");
        for at in off..off + len {
            let mut b = bytes.clone();
            b[at] ^= 0x20;
            assert_eq!(
                read(&b),
                Err(PackageError::ChecksumMismatch(name.to_string())),
                "byte {} of {name}",
                at - off
            );
        }
    }
    let (off, len) = section_range(&bytes, META_SECTION);
    for at in off..off + len {
        let mut b = bytes.clone();
        b[at] ^= 0x04;
        assert_eq!(
            read(&b),
            Err(PackageError::ChecksumMismatch(META_SECTION.to_string()))
        );
    }
}

#[test]
fn flips_inside_the_note_are_named() {
    let bytes = sample().to_elf_bytes();
    let (off, len) = section_range(&bytes, NOTE_SECTION);
    assert_eq!(len, NOTE_LEN);
    for k in 0..len {
        let mut b = bytes.clone();
        b[off + k] ^= 0x40;
        let err = read(&b).unwrap_err();
        match k {
            0..=15 => assert!(matches!(err, PackageError::BadNote(_)), "{k}: {err}"),
            16..=19 => assert!(
                matches!(err, PackageError::UnsupportedVersion(_)),
                "{k}: {err}"
            ),
            20..=23 => assert!(matches!(err, PackageError::BadNote(_)), "{k}: {err}"),
            24..=55 => assert_eq!(
                err,
                PackageError::ChecksumMismatch(META_SECTION.into()),
                "{k}"
            ),
            _ => assert_eq!(err, PackageError::FileChecksumMismatch, "{k}"),
        }
    }
}

#[test]
fn wrong_version_is_refused() {
    let mut b = sample().to_elf_bytes();
    let (off, _) = section_range(&b, NOTE_SECTION);
    b[off + 16..off + 20].copy_from_slice(&6u32.to_le_bytes());
    let err = read(&b).unwrap_err();
    assert_eq!(err, PackageError::UnsupportedVersion(6));
    assert_eq!(
        err.to_string(),
        "unsupported package format version 6 (this reader supports versions 1 to 5)"
    );
    b[off + 16..off + 20].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(read(&b).unwrap_err(), PackageError::UnsupportedVersion(0));
}

#[test]
fn elf_identity_is_checked() {
    let good = sample().to_elf_bytes();

    let mut b = good.clone();
    b[0] = b'M';
    assert_eq!(
        read(&b),
        Err(PackageError::BadMagic([b'M', b'E', b'L', b'F']))
    );
    assert!(
        read(b"MZ\x90\x00 this is not an ELF file at all, it is something else entirely")
            .unwrap_err()
            .to_string()
            .contains("not an ELF file")
    );

    let mut b = good.clone();
    b[4] = 1; // ELFCLASS32
    assert!(matches!(read(&b), Err(PackageError::ElfKind(_))));

    let mut b = good.clone();
    b[5] = 2; // big-endian
    assert!(matches!(read(&b), Err(PackageError::ElfKind(_))));

    let mut b = good.clone();
    b[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    let err = read(&b).unwrap_err();
    assert_eq!(err, PackageError::WrongMachine(62));
    assert!(err.to_string().contains("0x003e"), "{err}");

    let mut b = good.clone();
    b[16..18].copy_from_slice(&1u16.to_le_bytes()); // ET_REL: a tile object
    assert_eq!(read(&b), Err(PackageError::WrongType(1)));
}

/// Patches a 64-bit field of section header `index`.
fn patch_section_header(b: &mut [u8], index: usize, field: usize, value: u64) {
    let shoff = u64::from_le_bytes(b[40..48].try_into().unwrap()) as usize;
    let at = shoff + index * 64 + field;
    b[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

#[test]
fn section_out_of_range_is_named() {
    let good = sample().to_elf_bytes();
    // Section 3 is .ipu.image.0 (null, note, meta, images..., shstrtab).
    let mut b = good.clone();
    patch_section_header(&mut b, 3, 24, 1 << 40); // sh_offset
    match read(&b) {
        Err(PackageError::SectionOutOfRange { name, .. }) => assert_eq!(name, ".ipu.image.0"),
        other => panic!("{other:?}"),
    }
    let mut b = good.clone();
    patch_section_header(&mut b, 2, 32, u64::MAX); // sh_size of .ipu.meta
    match read(&b) {
        Err(PackageError::SectionOutOfRange { name, .. }) => assert_eq!(name, META_SECTION),
        other => panic!("{other:?}"),
    }
    // The section table itself beyond the end.
    let mut b = good;
    let len = b.len() as u64;
    b[40..48].copy_from_slice(&(len - 10).to_le_bytes());
    assert!(matches!(read(&b), Err(PackageError::Elf(_))));
}

#[test]
fn missing_sections_are_named() {
    let good = sample().to_elf_bytes();
    let (off, len) = section_range(&good, ".shstrtab");
    let find = |b: &[u8], s: &str| {
        b[off..off + len]
            .windows(s.len())
            .position(|w| w == s.as_bytes())
            .map(|p| off + p)
            .unwrap()
    };
    for (renamed, missing) in [
        (".ipu.meta", META_SECTION),
        (".note.ipu.package", NOTE_SECTION),
        (".ipu.image.1", ".ipu.image.1"),
        (".ipu.tile.3", ".ipu.tile.3"),
    ] {
        let mut b = good.clone();
        let at = find(&b, renamed);
        b[at + 1] = b'X';
        assert_eq!(
            read(&b),
            Err(PackageError::MissingSection(missing.to_string())),
            "{renamed}"
        );
    }
}

#[test]
fn unparsable_metadata_is_refused() {
    let mut b = sample().to_elf_bytes();
    let (off, len) = section_range(&b, META_SECTION);
    b[off..off + len].fill(0xff);
    rehash(&mut b);
    match read(&b) {
        Err(PackageError::MetadataParse(m)) => assert!(!m.is_empty()),
        other => panic!("{other:?}"),
    }
    // Checksums that agree but metadata cut short.
    let mut b = sample().to_elf_bytes();
    b[off + len / 2..off + len].fill(0);
    rehash(&mut b);
    assert!(read(&b).is_err());
}

#[test]
fn damage_behind_valid_checksums_never_panics() {
    // Flip metadata bytes and re-seal the checksums, so that the decoder and
    // the semantic checks see the damage.
    let bytes = sample().to_elf_bytes();
    let (off, len) = section_range(&bytes, META_SECTION);
    let mut rng = Rng(42);
    let mut refused = 0;
    for _ in 0..2000 {
        let mut b = bytes.clone();
        for _ in 0..1 + rng.below(3) {
            b[off + rng.below(len)] ^= 1 << rng.below(8);
        }
        rehash(&mut b);
        if let Ok(p) = read(&b) {
            // Accepted only if it is a valid package that writes back.
            p.validate().unwrap();
        } else {
            refused += 1;
        }
    }
    assert!(refused > 100, "only {refused} refused");
}

fn write_read(p: &Package) -> PackageError {
    let e1 = p.try_to_elf_bytes().unwrap_err();
    let e2 = read(&p.to_elf_bytes()).unwrap_err();
    assert_eq!(e1, e2);
    e2
}

#[test]
fn tile_index_out_of_range_is_refused() {
    let mut p = sample();
    p.images[2].tiles = TileSet::from_tiles([15, 16]);
    let err = write_read(&p);
    assert!(
        matches!(
            err,
            PackageError::TileOutOfRange {
                tile: 16,
                tile_count: 16,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("image 2"), "{err}");

    let mut p = sample();
    p.meta.streams[2].layout.push(StreamPiece::Single(Transfer {
        tile: 99,
        tile_address: BASE,
        host_offset: 0,
        len: 4,
    }));
    let err = write_read(&p);
    assert!(
        matches!(err, PackageError::TileOutOfRange { tile: 99, .. }),
        "{err}"
    );
}

#[test]
fn tile_in_two_images_is_refused() {
    let mut p = sample();
    p.images[2].tiles = TileSet::from_tiles([14, 15]);
    assert_eq!(
        write_read(&p),
        PackageError::TileInTwoImages {
            tile: 14,
            first: 0,
            second: 2
        }
    );
}

#[test]
fn tile_listed_twice_in_one_image_is_refused() {
    let mut p = sample();
    p.images[2].tiles.runs.push(TileRun {
        first: 15,
        count: 1,
        step: 1,
    });
    assert!(write_read(&p)
        .to_string()
        .contains("tile 15 is listed twice in the tile set of image 2"));
}

#[test]
fn image_overlapping_itself_is_refused() {
    let mut p = sample();
    p.images[1].image.zero.push(ZeroRange {
        address: BASE + 0x1010,
        len: 4,
    });
    let err = write_read(&p);
    assert_eq!(
        err,
        PackageError::ImageOverlap {
            image: 1,
            first: "data segment 0".into(),
            second: "zero range 1".into()
        }
    );
    // Code overlapping data.
    let mut p = sample();
    p.images[0].image.data[0].address = BASE + 0x20;
    assert!(matches!(
        write_read(&p),
        PackageError::ImageOverlap { image: 0, .. }
    ));
}

#[test]
fn image_exceeding_tile_memory_is_refused() {
    let mut p = sample();
    p.images[2].image.zero[0] = ZeroRange {
        address: BASE + MEM - 16,
        len: 32,
    };
    let err = write_read(&p);
    assert!(
        matches!(&err, PackageError::ImageOutOfMemory { image: 2, what, .. } if what == "zero range 0"),
        "{err}"
    );
    assert!(err.to_string().contains("0x50010"), "{err}");
    // Below the memory base.
    let mut p = sample();
    p.images[0].image.data[1].address = 0x100;
    assert!(matches!(
        write_read(&p),
        PackageError::ImageOutOfMemory { image: 0, .. }
    ));
    // Near the top of the address space: no overflow.
    let mut p = sample();
    p.images[0].image.zero[0].address = u32::MAX;
    p.images[0].image.zero[0].len = u32::MAX;
    assert!(matches!(
        write_read(&p),
        PackageError::ImageOutOfMemory { .. }
    ));
}

#[test]
fn entry_points_are_checked() {
    let mut p = sample();
    p.images[0].image.entries.remove("run");
    assert!(write_read(&p)
        .to_string()
        .contains("does not define entry point `run`"));
    let mut p = sample();
    p.images[0].image.entries.insert("run".into(), BASE + 64);
    assert!(write_read(&p).to_string().contains("outside its code"));
    let mut p = sample();
    p.images[0].image.entries.insert("train".into(), BASE);
    assert!(write_read(&p)
        .to_string()
        .contains("not a declared entry point"));
    let mut p = sample();
    p.meta.entry_points[1].command = 0;
    assert!(write_read(&p).to_string().contains("reuses command 0"));
}

#[test]
fn stream_layouts_are_checked() {
    // Host range beyond the buffer.
    let mut p = sample();
    if let StreamPiece::Regular { host_stride, .. } = &mut p.meta.streams[0].layout[0] {
        *host_stride = 17;
    }
    let err = write_read(&p);
    assert!(
        matches!(&err, PackageError::Stream { stream, message } if stream == "x" && message.contains("exceeds the 256-byte buffer")),
        "{err}"
    );
    // Two tiles writing the same output bytes.
    let mut p = sample();
    if let StreamPiece::Single(t) = &mut p.meta.streams[2].layout[1] {
        t.host_offset = 0;
    }
    assert!(write_read(&p).to_string().contains("more than one tile"));
    // Output bytes nobody writes.
    let mut p = sample();
    p.meta.streams[2].layout.pop();
    assert!(write_read(&p)
        .to_string()
        .contains("host bytes [12, 16) are written by no tile"));
    // A tile range outside tile memory.
    let mut p = sample();
    if let StreamPiece::Regular { tile_address, .. } = &mut p.meta.streams[1].layout[0] {
        *tile_address = BASE + MEM - 8;
    }
    assert!(write_read(&p).to_string().contains("outside tile memory"));
    // A stream to an idle tile.
    let mut p = sample();
    p.images.pop();
    assert!(write_read(&p).to_string().contains("tile 15 runs no image"));
    // A degenerate run.
    let mut p = sample();
    p.meta.streams[1].layout[0] = StreamPiece::Regular {
        tiles: TileSet::run(0, 3, 0),
        tile_address: BASE + 0x2100,
        host_offset: 0,
        host_stride: 0,
        len: 64,
    };
    assert!(write_read(&p).to_string().contains("step 0"));
    // Duplicate names and overflowing shapes.
    let mut p = sample();
    p.meta.streams[1].name = "x".into();
    assert!(write_read(&p).to_string().contains("declared twice"));
    let mut p = sample();
    p.meta.streams[0].shape = vec![u64::MAX, 4];
    assert!(write_read(&p).to_string().contains("overflows"));
}

#[test]
fn absurd_target_geometry_is_refused() {
    let mut p = sample();
    p.meta.target.tile_count = u32::MAX;
    assert!(write_read(&p).to_string().contains("tile count"));
    let mut p = sample();
    p.meta.target.memory_base = u32::MAX;
    assert!(write_read(&p).to_string().contains("32-bit address space"));
}

#[test]
fn huge_stream_layouts_are_refused_before_expansion() {
    let mut m = meta(MAX_TILES);
    m.entry_points.clear();
    m.streams.push(HostStream {
        name: "big".into(),
        direction: Direction::Input,
        element: ElementType::U8,
        shape: vec![1 << 20],
        host_element: None,
        layout: vec![
            StreamPiece::Regular {
                tiles: TileSet::run(0, MAX_TILES, 1),
                tile_address: BASE,
                host_offset: 0,
                host_stride: 1,
                len: 1,
            };
            65
        ],
    });
    let p = Package {
        meta: m,
        images: Vec::new(),
    };
    let err = write_read(&p);
    assert!(err.to_string().contains("more than the limit"), "{err}");
}

#[test]
fn per_tile_data_is_checked() {
    // Data for a tile outside the group.
    let mut p = sample();
    let seg = p.images[0].tile_data[&0].clone();
    p.images[0].tile_data.insert(9, seg.clone());
    assert!(write_read(&p)
        .to_string()
        .contains("image 0 holds data for tile 9, which does not run it"));
    // Two groups holding data for one tile: refused when writing through
    // validation, and when reading the raw file.
    let mut p = sample();
    p.images[0].tile_data.insert(1, seg);
    assert!(p.try_to_elf_bytes().is_err());
    assert_eq!(
        read(&p.to_elf_bytes()),
        Err(PackageError::DuplicateSection(".ipu.tile.1".into()))
    );
    // Per-tile data overlapping the group's shared zero range.
    let mut p = sample();
    p.images[1].tile_data.get_mut(&3).unwrap()[0].address = BASE + 0x2010;
    assert_eq!(
        write_read(&p),
        PackageError::ImageOverlap {
            image: 1,
            first: "zero range 0".into(),
            second: "tile 3 data segment 0".into()
        }
    );
    // Per-tile data beyond tile memory.
    let mut p = sample();
    p.images[0].tile_data.get_mut(&4).unwrap()[0].address = BASE + MEM - 1;
    assert!(matches!(
        write_read(&p),
        PackageError::ImageOutOfMemory { image: 0, what, .. } if what == "tile 4 data segment 0"
    ));
    // An empty list.
    let mut p = sample();
    p.images[0].tile_data.insert(8, Vec::new());
    assert!(write_read(&p).to_string().contains("empty list"));
}

#[test]
fn per_tile_section_size_mismatch_is_named() {
    // Grow a tile section's size in the section table so that it no longer
    // matches the metadata (the checksums are resealed).
    let mut b = sample().to_elf_bytes();
    let file = object::File::parse(&*b).unwrap();
    use object::{Object as _, ObjectSection as _};
    let index = file.section_by_name(".ipu.tile.2").unwrap().index().0;
    drop(file);
    patch_section_header(&mut b, index, 32, 15);
    rehash(&mut b);
    assert_eq!(
        read(&b),
        Err(PackageError::SectionSize {
            section: ".ipu.tile.2".into(),
            found: 15,
            expected: 16
        })
    );
}
