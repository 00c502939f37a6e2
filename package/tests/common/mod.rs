//! Shared fixtures for the package tests.
#![allow(dead_code)]

use std::collections::BTreeMap;

use ipu_package::*;
use object::{Object as _, ObjectSection as _};

pub const BASE: u32 = 0x4_0000;
pub const MEM: u32 = 0x1_0000;

pub fn meta(tile_count: u32) -> Metadata {
    Metadata {
        target: TargetInfo {
            name: "test16".into(),
            description_sha256: Digest::of(b"[chip]\ntiles = 16\n"),
            tile_count,
            memory_base: BASE,
            memory_bytes: MEM,
        },
        compiler_version: "0.1.0".into(),
        source_sha256: Digest::of(b"func.func @main() { }"),
        entry_points: vec![
            EntryPoint {
                name: "initialize".into(),
                command: 0,
                phases: 3,
            },
            EntryPoint {
                name: "run".into(),
                command: 1,
                phases: 5,
            },
        ],
        streams: Vec::new(),
        steps: vec![
            StepSummary {
                kind: StepKind::HostExchange,
                label: "@load_x".into(),
                cycles: Some(120),
                bound: None,
            },
            StepSummary {
                kind: StepKind::Compute,
                label: "@mm0".into(),
                cycles: Some(4096),
                bound: Some(2048),
            },
            StepSummary {
                kind: StepKind::Sync,
                label: "sync".into(),
                cycles: None,
                bound: None,
            },
            StepSummary {
                kind: StepKind::Exchange,
                label: "@x12".into(),
                cycles: Some(711),
                bound: None,
            },
        ],
        source: Some("func.func @main() { }".into()),
        probes: Vec::new(),
    }
}

/// A small program image; `seed` makes distinct images.
pub fn image(seed: u8) -> TileImage {
    let code: Vec<u8> = (0..64u32)
        .map(|i| (i as u8).wrapping_mul(7) ^ seed)
        .collect();
    let mut entries = BTreeMap::new();
    entries.insert("initialize".to_string(), BASE);
    entries.insert("run".to_string(), BASE + 0x10);
    TileImage {
        code_address: BASE,
        code,
        data: vec![
            DataSegment {
                address: BASE + 0x1000,
                bytes: vec![seed; 32],
            },
            DataSegment {
                address: BASE + 0x1100,
                bytes: (0..24).collect(),
            },
        ],
        zero: vec![ZeroRange {
            address: BASE + 0x2000,
            len: 0x400,
        }],
        entries,
    }
}

/// 16 tiles: even tiles run image 1, odd tiles image 2, tile 15 image 3,
/// tiles 0 to 7 with data of their own;
/// one regular input, one broadcast input, one output of single pieces.
pub fn sample() -> Package {
    let mut m = meta(16);
    m.streams = vec![
        HostStream {
            name: "x".into(),
            direction: Direction::Input,
            element: ElementType::F16,
            shape: vec![16, 8],
            host_element: None,
            layout: vec![StreamPiece::Regular {
                tiles: TileSet::range_inclusive(0, 15),
                tile_address: BASE + 0x2000,
                host_offset: 0,
                host_stride: 16,
                len: 16,
            }],
        },
        HostStream {
            name: "w".into(),
            direction: Direction::Input,
            element: ElementType::F8E4M3FN,
            shape: vec![64],
            host_element: None,
            layout: vec![StreamPiece::Regular {
                tiles: TileSet::run(0, 8, 2),
                tile_address: BASE + 0x2100,
                host_offset: 0,
                host_stride: 0,
                len: 64,
            }],
        },
        HostStream {
            name: "y".into(),
            direction: Direction::Output,
            element: ElementType::F32,
            shape: vec![4],
            host_element: None,
            layout: (0..4)
                .map(|t| {
                    StreamPiece::Single(Transfer {
                        tile: t,
                        tile_address: BASE + 0x2200,
                        host_offset: u64::from(t) * 4,
                        len: 4,
                    })
                })
                .collect(),
        },
    ];
    let tiles = (0..16u32).map(|t| {
        let seed = if t == 15 {
            3
        } else if t % 2 == 0 {
            1
        } else {
            2
        };
        (t, tile_image(t, seed))
    });
    Package::from_tile_images(m, tiles)
}

/// What tile `t` of [`sample`] holds: `image(seed)`, plus 16 bytes of its
/// own weights on tiles 0 to 7 (data kept in address order).
pub fn tile_image(t: u32, seed: u8) -> TileImage {
    let mut img = image(seed);
    if t < 8 {
        img.data.push(DataSegment {
            address: BASE + 0x3000,
            bytes: (0..16).map(|i| (t as u8) << 4 | i).collect(),
        });
    }
    img
}

/// (file offset, size) of a section.
pub fn section_range(bytes: &[u8], name: &str) -> (usize, usize) {
    let file = object::File::parse(bytes).expect("parse");
    let s = file.section_by_name(name).expect("section");
    let (o, n) = s.file_range().expect("range");
    (o as usize, n as usize)
}

/// Recomputes the metadata and file checksums after a deliberate edit, so
/// that the semantic checks behind them are reached.
pub fn rehash(bytes: &mut [u8]) {
    let (meta_off, meta_len) = section_range(bytes, META_SECTION);
    let (note_off, _) = section_range(bytes, NOTE_SECTION);
    let meta_sha = Digest::of(&bytes[meta_off..meta_off + meta_len]);
    let at = note_off + NOTE_FILE_SHA_OFFSET;
    bytes[at - 32..at].copy_from_slice(&meta_sha.0);
    bytes[at..at + 32].fill(0);
    let file_sha = Digest::of(bytes);
    bytes[at..at + 32].copy_from_slice(&file_sha.0);
}

/// A fixed-seed SplitMix64 generator.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
