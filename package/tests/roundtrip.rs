//! Writing, reading back, determinism, deduplication and the dump.

mod common;

use common::*;
use ipu_package::*;

#[test]
fn round_trip_is_equal() {
    let p = sample();
    p.validate().expect("sample is valid");
    let bytes = p.to_elf_bytes();
    let back = Package::from_elf_bytes(&bytes).expect("reads back");
    assert_eq!(back, p);
    for t in 0..16 {
        let seed = if t == 15 { 3 } else { 1 + (t % 2) as u8 };
        assert_eq!(back.tile_image(t), Some(tile_image(t, seed)), "tile {t}");
    }
    assert_eq!(back.tile_image(16), None);
    assert_eq!(back.group_of_tile(7), Some(1));
}

#[test]
fn writing_is_deterministic() {
    let p = sample();
    let a = p.to_elf_bytes();
    let b = p.clone().to_elf_bytes();
    assert_eq!(a, b);
    // Re-writing what was read gives the same file too.
    let c = Package::from_elf_bytes(&a).unwrap().to_elf_bytes();
    assert_eq!(a, c);
    // A different package gives a different file.
    let mut q = p;
    q.meta.compiler_version = "0.1.1".into();
    assert_ne!(a, q.to_elf_bytes());
}

#[test]
fn identical_images_are_stored_once() {
    let p = sample();
    assert_eq!(p.images.len(), 3);
    assert_eq!(p.images[0].tiles.to_string(), "0 to 14 step 2");
    assert_eq!(p.images[1].tiles.to_string(), "1 to 13 step 2");
    assert_eq!(p.images[2].tiles.to_string(), "15");
    let bytes = p.to_elf_bytes();
    let file = object::File::parse(&*bytes).unwrap();
    use object::{Object as _, ObjectSection as _};
    let names: Vec<String> = file
        .sections()
        .filter_map(|s| s.name().ok().map(str::to_string))
        .filter(|n| n.starts_with(IMAGE_SECTION_PREFIX))
        .collect();
    assert_eq!(names, [".ipu.image.0", ".ipu.image.1", ".ipu.image.2"]);
    assert_eq!(
        p.images[0].tile_data.keys().copied().collect::<Vec<_>>(),
        [0, 2, 4, 6]
    );
    assert_eq!(
        p.images[1].tile_data.keys().copied().collect::<Vec<_>>(),
        [1, 3, 5, 7]
    );
    assert!(p.images[2].tile_data.is_empty());
    // Shared data stays shared: only the weights are per tile.
    assert_eq!(p.images[0].image.data.len(), 2);
    let tiles: Vec<String> = file
        .sections()
        .filter_map(|s| s.name().ok().map(str::to_string))
        .filter(|n| n.starts_with(TILE_SECTION_PREFIX))
        .collect();
    assert_eq!(tiles.len(), 8);
    assert_eq!(tiles[0], ".ipu.tile.0");
    assert_eq!(tiles[4], ".ipu.tile.1");
}

#[test]
fn shared_code_with_per_tile_weights_is_stored_once() {
    let tiles = (0..1472u32).map(|t| {
        let mut img = image(9);
        img.data.push(DataSegment {
            address: BASE + 0x4000,
            bytes: t.to_le_bytes().repeat(8),
        });
        (t, img)
    });
    let p = Package::from_tile_images(meta(1472), tiles);
    assert_eq!(p.images.len(), 1);
    assert_eq!(p.images[0].tiles.to_string(), "0 to 1471");
    assert_eq!(p.images[0].tile_data.len(), 1472);
    // Code and shared data once, 32 bytes per tile.
    assert_eq!(p.stored_bytes(), 64 + 32 + 24 + 1472 * 32);
    let bytes = p.try_to_elf_bytes().unwrap();
    let back = Package::from_elf_bytes(&bytes).unwrap();
    assert_eq!(
        back.tile_image(1000).unwrap().data[2].bytes,
        1000u32.to_le_bytes().repeat(8)
    );
    assert_eq!(back, p);
}

#[test]
fn full_chip_with_few_programs_stays_small() {
    let tiles = (0..1472u32).map(|t| (t, image((t % 4 == 0) as u8)));
    let mut m = meta(1472);
    m.streams.push(HostStream {
        name: "out".into(),
        direction: Direction::Output,
        element: ElementType::BF16,
        shape: vec![1472, 64],
        host_element: None,
        layout: vec![StreamPiece::Regular {
            tiles: TileSet::range_inclusive(0, 1471),
            tile_address: BASE + 0x3000,
            host_offset: 0,
            host_stride: 128,
            len: 128,
        }],
    });
    let p = Package::from_tile_images(m, tiles);
    assert_eq!(p.images.len(), 2);
    assert_eq!(p.images[0].tiles.runs.len(), 1, "{}", p.images[0].tiles);
    assert_eq!(p.images[0].tiles.to_string(), "0 to 1468 step 4");
    let bytes = p.try_to_elf_bytes().unwrap();
    assert!(bytes.len() < 4096, "{} bytes", bytes.len());
    let back = Package::from_elf_bytes(&bytes).unwrap();
    assert_eq!(back, p);
    assert_eq!(back.meta.streams[0].transfers().count(), 1472);
}

#[test]
fn empty_package_round_trips() {
    let mut m = meta(4);
    m.entry_points.clear();
    m.steps.clear();
    let p = Package {
        meta: m,
        images: Vec::new(),
    };
    let bytes = p.try_to_elf_bytes().unwrap();
    assert_eq!(Package::from_elf_bytes(&bytes).unwrap(), p);
}

#[test]
fn unaligned_input_is_read() {
    let p = sample();
    let bytes = p.to_elf_bytes();
    let mut shifted = vec![0u8; bytes.len() + 1];
    shifted[1..].copy_from_slice(&bytes);
    assert_eq!(Package::from_elf_bytes(&shifted[1..]).unwrap(), p);
}

#[test]
fn tile_sets_compress_and_answer_membership() {
    let s = TileSet::from_tiles([9, 0, 2, 4, 6, 7, 8, 100, 0]);
    assert_eq!(s.to_string(), "0 to 6 step 2, 7 to 9, 100");
    assert_eq!(s.iter().collect::<Vec<_>>(), [0, 2, 4, 6, 7, 8, 9, 100]);
    assert!(s.contains(4) && s.contains(100) && !s.contains(5) && !s.contains(101));
    assert_eq!(s.len(), 8);
    assert_eq!(TileSet::from_tiles([3, 50]).to_string(), "3, 50");
    assert_eq!(TileSet::from_tiles([]).to_string(), "none");
    assert_eq!(
        TileSet::from_tiles((0..1472).filter(|t| t % 2 == 1)).to_string(),
        "1 to 1471 step 2"
    );
}

#[test]
fn element_types_parse_and_size() {
    for e in ElementType::ALL {
        assert_eq!(e.name().parse::<ElementType>(), Ok(e));
    }
    assert_eq!(ElementType::F8E5M2.size_bytes(), 1);
    assert_eq!(ElementType::BF16.size_bytes(), 2);
    assert!("f13".parse::<ElementType>().is_err());
}

#[test]
fn dump_summarises_metadata_streams_and_images() {
    let text = sample().dump();
    for needle in [
        "ipu package (format 5)",
        "target test16",
        "16 tiles, tile memory [0x40000, 0x50000) = 65536 bytes",
        "compiler 0.1.0",
        "initialize command=0 phases=3",
        "run command=1 phases=5",
        "x input  tensor<16x8xf16> (256 bytes, 16 transfers)",
        "tiles 0 to 15 @0x42000 <-> host [0 + i*16, +16)",
        "w input  tensor<64xf8E4M3FN> (64 bytes, 8 transfers)",
        "y output tensor<4xf32> (16 bytes, 4 transfers)",
        "tile 3 @0x42200 <-> host [12, +4)",
        "compute @mm0 cycles=4096 bound=2048",
        "images: 3 distinct for 16 tiles (0 idle)",
        "image 0: tiles 0 to 14 step 2 (8 tiles)",
        "code [0x40000, +64)",
        "data [0x41100, +24)",
        "zero [0x42000, +1024)",
        "entries initialize@0x40000 run@0x40010",
        "own data on 4 tiles: 4 segments, 64 bytes",
        "tile 6: [0x43000, +16)",
        "tiles 0 to 14 step 2 @0x42100 <-> host [0, +64) (broadcast)",
        "image 2: tiles 15 (1 tile), shared footprint 1144 bytes",
        "(0 idle), 488 bytes stored",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in:\n{text}");
    }
    assert_eq!(text, format!("{}", sample()));
}

#[test]
fn dump_elides_long_layouts() {
    let mut p = sample();
    p.meta.streams[2].layout = (0..16)
        .map(|t| {
            StreamPiece::Single(Transfer {
                tile: t,
                tile_address: BASE + 0x2200,
                host_offset: u64::from(t),
                len: 1,
            })
        })
        .collect();
    p.meta.streams[2].shape = vec![16];
    p.meta.streams[2].element = ElementType::U8;
    p.validate().unwrap();
    let text = p.dump();
    assert!(text.contains("... 8 more pieces"), "{text}");
}

const READELF: &str = "/usr/lib/llvm-22/bin/llvm-readelf";
const OBJDUMP: &str = "/usr/lib/llvm-22/bin/llvm-objdump";
const OBJCOPY: &str = "/usr/lib/llvm-22/bin/llvm-objcopy";

fn run_tool(tool: &str, args: &[&str], file: &std::path::Path) -> Option<String> {
    if !std::path::Path::new(tool).exists() {
        eprintln!("skipping: {tool} is not installed");
        return None;
    }
    let out = std::process::Command::new(tool)
        .args(args)
        .arg(file)
        .output()
        .expect("run tool");
    assert!(
        out.status.success(),
        "{tool} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn llvm_tools_read_the_package() {
    let dir = std::env::temp_dir().join(format!("ipu-package-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.ipuexe");
    std::fs::write(&path, sample().to_elf_bytes()).unwrap();

    if let Some(s) = run_tool(READELF, &["-S", "-h"], &path) {
        for name in [
            NOTE_SECTION,
            META_SECTION,
            ".ipu.image.0",
            ".ipu.image.2",
            ".ipu.tile.7",
        ] {
            assert!(s.contains(name), "llvm-readelf -S lacks {name}:\n{s}");
        }
        assert!(s.contains("EXEC"), "{s}");
        assert!(s.contains("4950"), "{s}");
        assert!(s.contains("ELF64"), "{s}");
    }
    if let Some(s) = run_tool(READELF, &["-n"], &path) {
        assert!(s.contains("IPU"), "llvm-readelf -n lacks the owner:\n{s}");
        // The descriptor starts with the format version, little-endian.
        assert!(s.contains("description data: 05 00 00 00"), "{s}");
    }
    if let Some(s) = run_tool(OBJDUMP, &["-h"], &path) {
        assert!(s.contains(".ipu.image.1"), "llvm-objdump -h:\n{s}");
        assert!(s.contains(".ipu.meta"), "llvm-objdump -h:\n{s}");
    }
    // The documented section contents: code then shared data; a tile's own
    // data in order.
    let dumped = dir.join("image0.bin");
    let tile2 = dir.join("tile2.bin");
    let spec0 = format!(".ipu.image.0={}", dumped.display());
    let spec2 = format!(".ipu.tile.2={}", tile2.display());
    let copy = dir.join("copy.ipuexe");
    let input = path.display().to_string();
    if run_tool(
        OBJCOPY,
        &["--dump-section", &spec0, "--dump-section", &spec2, &input],
        &copy,
    )
    .is_some()
    {
        let img = image(1);
        let mut expected = img.code.clone();
        for d in &img.data {
            expected.extend_from_slice(&d.bytes);
        }
        assert_eq!(std::fs::read(&dumped).unwrap(), expected);
        assert_eq!(
            std::fs::read(&tile2).unwrap(),
            tile_image(2, 1).data[2].bytes
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tile_table_maps_tiles_to_groups() {
    let p = sample();
    let table = p.tile_table();
    assert_eq!(table.len(), 16);
    assert_eq!(table[0], Some(0));
    assert_eq!(table[13], Some(1));
    assert_eq!(table[15], Some(2));
    let mut q = p;
    q.images.pop();
    assert_eq!(q.tile_table()[15], None);
}

#[test]
fn files_are_written_and_read() {
    let dir = std::env::temp_dir().join(format!("ipu-package-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.ipuexe");
    let p = sample();
    p.write_file(&path).unwrap();
    assert_eq!(Package::read_file(&path).unwrap(), p);
    let missing = dir.join("absent.ipuexe");
    match Package::read_file(&missing) {
        Err(PackageError::Io { path, message }) => {
            assert!(path.ends_with("absent.ipuexe"));
            assert!(!message.is_empty());
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn probes_round_trip_in_the_debug_section() {
    let plain = sample();
    let mut p = plain.clone();
    let mut stream = p.meta.streams[0].clone();
    stream.direction = Direction::Output;
    stream.name = "12:3".into();
    p.meta.probes = vec![Probe {
        step: 1,
        op: "tile.map".into(),
        source: "12:3".into(),
        stream,
    }];
    p.validate().expect("probe is valid");
    let bytes = p.to_elf_bytes();
    let back = Package::from_elf_bytes(&bytes).expect("reads back");
    assert_eq!(back.meta.probes, p.meta.probes);
    // Only a package with probes carries the section.
    let names = |b: &[u8]| {
        use object::{Object as _, ObjectSection as _};
        let f = object::File::parse(b).unwrap();
        f.sections()
            .filter_map(|s| s.name().ok().map(str::to_string))
            .collect::<Vec<_>>()
    };
    assert!(names(&bytes).iter().any(|n| n == DEBUG_SECTION));
    assert!(!names(&plain.to_elf_bytes())
        .iter()
        .any(|n| n == DEBUG_SECTION));
    // A probe's layout is an output stream named after its source.
    let mut q = p.clone();
    q.meta.probes[0].stream.name = "x".into();
    let e = q.validate().unwrap_err().to_string();
    assert!(e.contains("named after its source"), "{e}");
    // A probe past the last step is refused.
    p.meta.probes[0].step = p.meta.steps.len() as u32;
    let e = p.validate().unwrap_err().to_string();
    assert!(e.contains("probe 0 (tile.map at 12:3)"), "{e}");
}
