//! Rewrites the metadata and whole-file SHA-256 of a (mutated) package, so
//! the fuzzer's changes to the ELF structure and to `.ipu.meta` get past the
//! checksums and reach the metadata decoder and the validator. Image and
//! tile sections keep their own checksums (recorded inside the metadata).

use ipu_package::{META_SECTION, NOTE_FILE_SHA_OFFSET, NOTE_LEN, NOTE_SECTION};
use sha2::{Digest as _, Sha256};

/// Offset of the metadata SHA-256 inside the note: header, owner, version, flags.
const NOTE_META_SHA_OFFSET: usize = NOTE_FILE_SHA_OFFSET - 32;

fn le(bytes: &[u8], at: usize, n: usize) -> Option<u64> {
    let b = bytes.get(at..at.checked_add(n)?)?;
    Some(b.iter().rev().fold(0u64, |a, &x| (a << 8) | u64::from(x)))
}

/// (offset, size) of the sections named `.note.ipu.package` and `.ipu.meta`,
/// read from a 64-bit little-endian ELF section table; `None` where the
/// table or the names are out of the file.
fn find_sections(bytes: &[u8]) -> Option<((usize, usize), (usize, usize))> {
    let shoff = le(bytes, 0x28, 8)? as usize;
    let shentsize = le(bytes, 0x3A, 2)? as usize;
    let shnum = le(bytes, 0x3C, 2)? as usize;
    let shstrndx = le(bytes, 0x3E, 2)? as usize;
    if shentsize < 0x28 || shnum > 4096 {
        return None;
    }
    let header = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    let strtab = le(bytes, header(shstrndx)?.checked_add(0x18)?, 8)? as usize;
    let (mut note, mut meta) = (None, None);
    for i in 1..shnum {
        let h = header(i)?;
        let name_at = strtab.checked_add(le(bytes, h, 4)? as usize)?;
        let offset = le(bytes, h + 0x18, 8)? as usize;
        let size = le(bytes, h + 0x20, 8)? as usize;
        let name = bytes.get(name_at..)?;
        let name = &name[..name.iter().position(|&c| c == 0)?];
        if name == NOTE_SECTION.as_bytes() {
            note = Some((offset, size));
        } else if name == META_SECTION.as_bytes() {
            meta = Some((offset, size));
        }
    }
    Some((note?, meta?))
}

/// `bytes` with the note's metadata and file checksums made right, or
/// `None` when the note or the metadata section cannot be found.
pub fn reseal(bytes: &[u8]) -> Option<Vec<u8>> {
    let ((note, note_len), (meta, meta_len)) = find_sections(bytes)?;
    if note_len != NOTE_LEN || note.checked_add(NOTE_LEN)? > bytes.len() {
        return None;
    }
    let meta_bytes = bytes.get(meta..meta.checked_add(meta_len)?)?;
    let meta_sha: [u8; 32] = Sha256::digest(meta_bytes).into();
    let mut out = bytes.to_vec();
    out[note + NOTE_META_SHA_OFFSET..note + NOTE_META_SHA_OFFSET + 32].copy_from_slice(&meta_sha);
    let at = note + NOTE_FILE_SHA_OFFSET;
    out[at..at + 32].fill(0);
    let file_sha: [u8; 32] = Sha256::digest(&out).into();
    out[at..at + 32].copy_from_slice(&file_sha);
    Some(out)
}
