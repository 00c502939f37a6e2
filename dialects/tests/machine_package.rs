//! A package as machine-dialect IR: `Package -> ops -> text -> parse -> ops
//! -> Package` is the identity, and malformed ops are located diagnostics.

use std::collections::BTreeMap;
use std::sync::Arc;

use ipu_dialects::machine::{emit_package, parse_tiles, read_package, tiles_to_string};
use ipu_ir::printer::{PrintOptions, Printer};
use ipu_ir::{Context, Loc, Registry};
use ipu_package::*;

fn registry() -> Arc<Registry> {
    let mut r = Registry::new();
    ipu_dialects::register_all_dialects(&mut r);
    Arc::new(r)
}

const SOURCE: &str = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %y = nn.relu %x : tensor<4xf32>\n  return %y : tensor<4xf32>\n}\n";

fn sample() -> Package {
    let meta = Metadata {
        target: TargetInfo {
            name: "test4".into(),
            description_sha256: Digest::of(b"target text"),
            tile_count: 4,
            memory_base: 0x4c000,
            memory_bytes: 638976,
        },
        compiler_version: "0.1.0".into(),
        source_sha256: Digest::of(SOURCE.as_bytes()),
        entry_points: vec![
            EntryPoint {
                name: "main".into(),
                command: 0,
                phases: 2,
            },
            EntryPoint {
                name: "init \"x\"".into(),
                command: 7,
                phases: 0,
            },
        ],
        streams: vec![
            HostStream {
                name: "x".into(),
                direction: Direction::Input,
                element: ElementType::F32,
                shape: vec![2, 4],
                host_element: None,
                layout: vec![StreamPiece::Regular {
                    tiles: TileSet::run(0, 2, 1),
                    tile_address: 0x90000,
                    host_offset: 0,
                    host_stride: 16,
                    len: 16,
                }],
            },
            HostStream {
                name: "y".into(),
                direction: Direction::Output,
                element: ElementType::F8E4M3FN,
                shape: vec![8],
                host_element: None,
                layout: vec![
                    StreamPiece::Single(Transfer {
                        tile: 1,
                        tile_address: 0xa0000,
                        host_offset: 4,
                        len: 4,
                    }),
                    StreamPiece::Single(Transfer {
                        tile: 0,
                        tile_address: 0xa0000,
                        host_offset: 0,
                        len: 4,
                    }),
                ],
            },
        ],
        steps: vec![
            StepSummary {
                kind: StepKind::Compute,
                label: "@relu".into(),
                cycles: Some(120),
                bound: Some(90),
            },
            StepSummary {
                kind: StepKind::Sync,
                label: "sync".into(),
                cycles: None,
                bound: None,
            },
            StepSummary {
                kind: StepKind::Exchange,
                label: "@x1".into(),
                cycles: Some(u64::MAX),
                bound: None,
            },
        ],
        source: Some(SOURCE.into()),
        probes: Vec::new(),
    };
    let entries: BTreeMap<String, u32> = [
        ("main".to_string(), 0x4c000),
        ("init \"x\"".to_string(), 0x4c004),
    ]
    .into_iter()
    .collect();
    let image = TileImage {
        code_address: 0x4c000,
        code: vec![0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0],
        data: vec![DataSegment {
            address: 0x50000,
            bytes: vec![1, 2, 3],
        }],
        zero: vec![ZeroRange {
            address: 0x60000,
            len: 256,
        }],
        entries,
    };
    let mut g0 = ImageGroup::shared(TileSet::run(0, 2, 1), image.clone());
    g0.tile_data.insert(
        1,
        vec![
            DataSegment {
                address: 0x58000,
                bytes: vec![0xff; 5],
            },
            DataSegment {
                address: 0x57000,
                bytes: vec![0; 1],
            },
        ],
    );
    // A single-tile run with a step other than 1 must come back as it was.
    let g1 = ImageGroup::shared(
        TileSet {
            runs: vec![TileRun {
                first: 3,
                count: 1,
                step: 9,
            }],
        },
        image,
    );
    Package {
        meta,
        images: vec![g0, g1],
    }
}

fn to_text(p: &Package) -> String {
    let mut cx = Context::new(registry());
    let module = ipu_ir::builtin::create_module(&mut cx, Loc::UNKNOWN);
    let body = cx.entry_block(cx.region(module, 0)).unwrap();
    emit_package(&mut cx, body, p, Loc::UNKNOWN);
    ipu_ir::verify::verify(&cx, module).unwrap();
    let mut out = Vec::new();
    let mut pr = Printer::with_sink(&cx, PrintOptions::default(), &mut out);
    pr.print_top(module).unwrap();
    drop(pr);
    String::from_utf8(out).unwrap()
}

fn from_text(text: &str) -> Result<Package, String> {
    let mut cx = Context::new(registry());
    let module = ipu_ir::parser::parse_source(&mut cx, "in.mlir", text).map_err(|d| d.message)?;
    ipu_ir::verify::verify(&cx, module)
        .map_err(|d| format!("{}: {}", loc(&cx, d.loc), d.message))?;
    read_package(&cx, module).map_err(|d| format!("{}: {}", loc(&cx, d.loc), d.message))
}

fn loc(cx: &Context, l: Loc) -> String {
    match cx.loc_kind(l) {
        ipu_ir::LocKind::FileLineCol { line, col, .. } => format!("{line}:{col}"),
        _ => "?".into(),
    }
}

#[test]
fn package_round_trips_through_text() {
    let p = sample();
    p.validate().unwrap();
    let text = to_text(&p);
    assert!(text.contains("machine.package \"test4\""), "{text}");
    assert!(text.contains("machine.image tiles \"0 to 1\""), "{text}");
    assert!(text.contains("tiles \"3 step 9\""), "{text}");
    assert!(text.contains("code = \"0x123456789abcdef0\""), "{text}");
    let back = from_text(&text).unwrap();
    assert_eq!(back, p);
    // And printing again gives the same text.
    assert_eq!(to_text(&back), text);
    // The generic form too.
    let mut cx = Context::new(registry());
    let module = ipu_ir::parser::parse_source(&mut cx, "in.mlir", &text).unwrap();
    let mut out = Vec::new();
    let mut pr = Printer::with_sink(
        &cx,
        PrintOptions {
            generic: true,
            debug_info: false,
        },
        &mut out,
    );
    pr.print_top(module).unwrap();
    drop(pr);
    assert_eq!(from_text(&String::from_utf8(out).unwrap()).unwrap(), p);
}

/// Emitting on every thread of the rayon pool at once (as a test runner
/// or a batch of compiles on the pool does) gives the same text and does
/// not wait on the busy pool for the hex text.
#[test]
fn packages_emitted_on_every_pool_thread_at_once() {
    let p = sample();
    let want = to_text(&p);
    let got = rayon::broadcast(|_| to_text(&p));
    assert!(got.iter().all(|t| *t == want));
}

#[test]
fn package_round_trips_through_elf_and_text() {
    let p = sample();
    let elf = Package::from_elf_bytes(&p.to_elf_bytes()).unwrap();
    assert_eq!(from_text(&to_text(&elf)).unwrap(), p);
}

#[test]
fn tile_sets_parse_back() {
    for s in [
        "none",
        "0",
        "1 to 1471 step 2",
        "5, 7 to 9, 11 step 4",
        "0 to 3, 10 to 20 step 5",
    ] {
        assert_eq!(tiles_to_string(&parse_tiles(s).unwrap()), s);
    }
    for bad in [
        "",
        "1 to 1",
        "3 to 1",
        "0 to 5 step 2",
        "0 to 4 step 0",
        "a",
        "1 too 3",
        "-1",
    ] {
        assert!(parse_tiles(bad).is_err(), "{bad}");
    }
}

/// `text` with `from` replaced once by `to` must fail with `needle` at `at`.
fn refused(from: &str, to: &str, needle: &str, at: &str) {
    let text = to_text(&sample());
    assert!(text.contains(from), "{from} not in\n{text}");
    let bad = text.replacen(from, to, 1);
    let err = from_text(&bad).expect_err(to);
    assert!(err.contains(needle), "{err}");
    assert!(err.starts_with(at), "{err} (expected at {at})");
}

#[test]
fn malformed_ops_are_located() {
    let text = to_text(&sample());
    let line_of = |needle: &str| {
        let l = text.lines().position(|l| l.contains(needle)).unwrap() + 1;
        format!("{l}:")
    };
    let image0 = line_of("machine.image tiles \"0 to 1\"");
    let image1 = line_of("machine.image tiles \"3 step 9\"");
    let pkg = line_of("machine.package");
    let stream_y = line_of("machine.host_stream \"y\"");
    refused(
        "0x123456789abcdef0",
        "0x123456789abcdefg",
        "invalid hex digit `g` at position 15",
        &image0,
    );
    refused(
        "0x123456789abcdef0",
        "0x123456789abcdef",
        "odd number of hex digits",
        &image0,
    );
    refused(
        "tiles \"3 step 9\"",
        "tiles \"1 to 3\"",
        "another image group already runs",
        &image1,
    );
    refused(
        "tiles \"3 step 9\"",
        "tiles \"4\"",
        "beyond the last tile 3",
        &image1,
    );
    refused(
        "code_address = \"0x4c000\"",
        "code_address = \"4c000\"",
        "address",
        &image0,
    );
    refused(
        "element = \"f8E4M3FN\"",
        "element = \"f9\"",
        "unknown element type `f9`",
        &stream_y,
    );
    refused(
        "direction = \"output\"",
        "direction = \"sideways\"",
        "is not `input`, `output` or `load`",
        &stream_y,
    );
    refused(
        "tile_count = 4 : i64",
        "tile_count = 5000000 : i64",
        "tile count",
        &pkg,
    );
    refused(
        "kind = \"sync\"",
        "kind = \"nap\"",
        "unknown step kind",
        &pkg,
    );
    refused(
        "compiler_version = \"0.1.0\", ",
        "",
        "requires attribute 'compiler_version'",
        &pkg,
    );
    // Package::validate's findings are located too: an output written twice.
    refused(
        "offset = 4 : i64, tile = 1",
        "offset = 0 : i64, tile = 1",
        "written by more than one tile",
        &stream_y,
    );
    // Data outside tile memory, in the group's image.
    refused(
        "address = \"0x60000\"",
        "address = \"0xe7f80\"",
        "outside tile memory",
        &image0,
    );
    // Tile data for a tile that runs nothing.
    let td = line_of("machine.tile_data");
    refused(
        "bytes = \"0xffffffffff\", tile = 1 : i64",
        "bytes = \"0xff\", tile = 2 : i64",
        "which no image group runs",
        &td,
    );
    // No package op at all.
    let err = from_text("module {\n}\n").unwrap_err();
    assert!(err.contains("no 'machine.package'"), "{err}");
}

/// A package of the main job's size: 1472 tiles, two groups, 5 KiB of own
/// data per tile. `cargo test -p ipu-dialects --release -- --ignored` for timing.
#[test]
#[ignore]
fn large_package_round_trip_timing() {
    let mut meta = sample().meta;
    meta.target.tile_count = 1472;
    meta.streams.clear();
    let image = TileImage {
        code_address: 0x4c000,
        code: (0..30_000u32).map(|i| i as u8).collect(),
        data: vec![DataSegment {
            address: 0x60000,
            bytes: vec![7; 4096],
        }],
        zero: vec![],
        entries: [
            ("main".to_string(), 0x4c000),
            ("init \"x\"".to_string(), 0x4c004),
        ]
        .into_iter()
        .collect(),
    };
    let tiles = (0..1472u32).map(|t| {
        let mut img = image.clone();
        if t % 2 == 1 {
            img.code[0] = 1;
        }
        img.data.push(DataSegment {
            address: 0x80000,
            bytes: vec![t as u8; 5120],
        });
        (t, img)
    });
    let p = Package::from_tile_images(meta, tiles);
    p.validate().unwrap();
    let t0 = std::time::Instant::now();
    let text = to_text(&p);
    let t1 = t0.elapsed();
    let back = from_text(&text).unwrap();
    let t2 = t0.elapsed() - t1;
    assert_eq!(back, p);
    eprintln!(
        "{} MB of IR: emit+print {:?}, parse+verify+read {:?}",
        text.len() >> 20,
        t1,
        t2
    );
}

#[test]
fn long_strings_are_printed_in_pieces() {
    let mut p = sample();
    p.images[0].image.code = (0..20_000u32).map(|i| (i * 7) as u8).collect();
    p.images[0].image.data[0].address = 0x70000;
    for segs in p.images[0].tile_data.values_mut() {
        for d in segs {
            d.address += 0x20000;
        }
    }
    let src = format!("{SOURCE}// {}\n", "é".repeat(20_000));
    p.meta.source_sha256 = Digest::of(src.as_bytes());
    p.meta.source = Some(src);
    for e in p.images[0].image.entries.values_mut() {
        *e = 0x4c000;
    }
    p.validate().unwrap();
    let text = to_text(&p);
    assert!(text.contains("code = [\"0x"), "code is not in pieces");
    assert!(
        text.contains("source = [\"func.func"),
        "source is not in pieces"
    );
    assert!(text.lines().all(|l| l
        .split('"')
        .all(|piece| piece.len() <= 4 * ipu_dialects::machine::MAX_STRING_PIECE)));
    assert_eq!(from_text(&text).unwrap(), p);
}

/// The hex of a long tile-data segment is checked in chunks: a bad
/// character at any position (chunk edges, a later piece) is refused at the
/// op with its position in the whole text, and upper-case digits pass.
#[test]
fn a_bad_digit_anywhere_in_long_tile_data_is_refused() {
    let mut p = sample();
    let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 13 + 7) as u8).collect();
    p.images[0].tile_data.get_mut(&1).unwrap()[0].bytes = bytes.clone();
    p.validate().unwrap();
    let text = to_text(&p);
    assert_eq!(from_text(&text).unwrap(), p);
    let head = ipu_dialects::machine::hex_bytes(&bytes[..4]);
    let first = text.find(&format!("\"{head}")).expect("the segment's text") + 3;
    let line = format!("{}:", text[..first].lines().count());
    // The first piece holds this many digits after its `0x`.
    let first_len = ipu_dialects::machine::MAX_STRING_PIECE - 2;
    let second = first + first_len + "\", \"".len();
    assert_eq!(&text[second - 4..second], "\", \"");
    let cases = [0, 1, 31, 32, 33, 63, 64, 65, 1000, first_len - 1]
        .map(|k| (first + k, k))
        .into_iter()
        .chain([0, 1, 32, 64, 99].map(|k| (second + k, first_len + k)));
    for (at, k) in cases {
        for bad in [b'g', b'G', b'/', b':', b'@', b'`', b' ', b'~'] {
            let mut t = text.clone().into_bytes();
            t[at] = bad;
            let err = from_text(&String::from_utf8(t).unwrap()).expect_err("a bad digit");
            let want = format!("invalid hex digit `{}` at position {k}", bad as char);
            assert!(err.contains(&want), "{err} (wanted {want})");
            assert!(err.starts_with(&line), "{err} (expected at {line})");
        }
        let mut t = text.clone().into_bytes();
        t[at] = b'F';
        let got = from_text(&String::from_utf8(t).unwrap()).expect("upper-case hex");
        let seg = &got.images[0].tile_data[&1][0].bytes;
        assert_eq!(seg[k / 2] >> (4 * (1 - k % 2)) & 15, 15, "digit {k}");
    }
}
