//! A load stream's host-side conversion (format 5): written and read back,
//! dropped by the older formats, and refused when damaged or not an exact
//! widening.

mod common;

use common::*;
use ipu_package::*;

/// [`sample`] with `w` a load stream of f16 elements that the host supplies
/// as f8E4M3FN (64 elements: 128 bytes placed, 64 bytes from the host).
fn widened() -> Package {
    let mut p = sample();
    let w = &mut p.meta.streams[1];
    w.direction = Direction::Load;
    w.element = ElementType::F16;
    w.host_element = Some(ElementType::F8E4M3FN);
    w.layout = vec![StreamPiece::Regular {
        tiles: TileSet::run(0, 8, 2),
        tile_address: BASE + 0x2100,
        host_offset: 0,
        host_stride: 0,
        len: 128,
    }];
    p
}

#[test]
fn a_conversion_is_written_and_read_back() {
    let p = widened();
    p.validate().unwrap();
    let q = Package::from_elf_bytes(&p.to_elf_bytes()).unwrap();
    assert_eq!(q, p);
    let w = &q.meta.streams[1];
    assert_eq!(w.host_element, Some(ElementType::F8E4M3FN));
    assert_eq!(w.host_type(), ElementType::F8E4M3FN);
    assert_eq!((w.host_byte_len(), w.byte_len()), (Some(64), Some(128)));
    assert_eq!(w.type_string(), "tensor<64xf8E4M3FN>");
    // Streams without one are as they were.
    assert_eq!(q.meta.streams[0].host_element, None);
}

/// The file of `p` with the last bytes of its metadata replaced by `tail`
/// and its checksums sealed again, as a damaged writer might leave it.
fn with_meta_tail(p: &Package, tail: &[u8]) -> Vec<u8> {
    let mut b = p.to_elf_bytes();
    let (off, len) = section_range(&b, META_SECTION);
    b[off + len - tail.len()..off + len].copy_from_slice(tail);
    rehash(&mut b);
    b
}

#[test]
fn a_damaged_conversion_is_refused() {
    let p = widened();
    // The record: one conversion, of stream 1, from element variant 3
    // (f8E4M3FN).
    let ok = with_meta_tail(&p, &[1, 1, 3]);
    assert_eq!(Package::from_elf_bytes(&ok).unwrap(), p);
    // A conversion of a stream the package does not have.
    let err = Package::from_elf_bytes(&with_meta_tail(&p, &[1, 9, 3])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "metadata section does not parse: a conversion names stream 9, but the package has 3 streams"
    );
    // An element type no reader knows.
    let err = Package::from_elf_bytes(&with_meta_tail(&p, &[1, 1, 42])).unwrap_err();
    assert!(matches!(err, PackageError::MetadataParse(_)), "{err}");
    // A conversion that is no exact widening (f8E4M3FN elements from f32).
    let err = Package::from_elf_bytes(&with_meta_tail(&p, &[1, 1, 0])).unwrap_err();
    assert!(
        err.to_string().contains(
            "stream `w`: the conversion of host f32 elements to f16 is not an exact widening"
        ),
        "{err}"
    );
}

#[test]
fn a_cut_conversion_list_is_refused() {
    // Two records announced, one present: refused, not a panic.
    let b = with_meta_tail(&widened(), &[2, 1, 3]);
    assert!(matches!(
        Package::from_elf_bytes(&b),
        Err(PackageError::MetadataParse(_))
    ));
}

#[test]
fn streams_convert_only_exactly_and_outputs_only_to_integers() {
    let mut p = widened();
    p.meta.streams[1].direction = Direction::Input;
    p.validate().unwrap();
    let mut p = widened();
    p.meta.streams[1].direction = Direction::Output;
    let err = p.validate().unwrap_err().to_string();
    assert!(
        err.contains(
            "a stream of direction `output` converts host f8E4M3FN elements to f16; an output stream \
             converts only to 8- or 16-bit integers"
        ),
        "{err}"
    );
    // An output narrowed to i8 (the inverse of i8's widening to f16),
    // read from one tile, is written and read back.
    p.meta.streams[1].host_element = Some(ElementType::I8);
    p.meta.streams[1].layout = vec![StreamPiece::Regular {
        tiles: TileSet::run(0, 1, 1),
        tile_address: BASE + 0x2100,
        host_offset: 0,
        host_stride: 0,
        len: 128,
    }];
    p.validate().unwrap();
    let q = Package::from_elf_bytes(&p.to_elf_bytes()).unwrap();
    assert_eq!(q.meta.streams[1].host_element, Some(ElementType::I8));
    assert_eq!(q.meta.streams[1].host_byte_len(), Some(64));
    let mut p = widened();
    p.meta.streams[1].host_element = Some(ElementType::BF16);
    let err = p.validate().unwrap_err().to_string();
    assert!(err.contains("not an exact widening"), "{err}");
    for (h, d, exact) in [
        (ElementType::F8E4M3FN, ElementType::F16, true),
        (ElementType::F8E5M2, ElementType::F32, true),
        (ElementType::BF16, ElementType::F32, true),
        (ElementType::F16, ElementType::F32, true),
        (ElementType::BF16, ElementType::F16, false),
        (ElementType::F16, ElementType::F8E4M3FN, false),
        (ElementType::I8, ElementType::I32, false),
        (ElementType::I8, ElementType::F16, true),
        (ElementType::U8, ElementType::F32, true),
        (ElementType::I16, ElementType::F32, true),
        (ElementType::U16, ElementType::F16, false),
    ] {
        assert_eq!(h.widens_exactly_to(d), exact, "{h} -> {d}");
        let narrows = exact
            && matches!(
                h,
                ElementType::I8 | ElementType::U8 | ElementType::I16 | ElementType::U16
            );
        assert_eq!(h.converts_to(d, Direction::Output), narrows, "{d} -> {h}");
    }
}
