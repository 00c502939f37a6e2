//! Named binary blobs for large constants: `dense_resource<name>` attributes
//! refer to them. Blobs come from the file's `{-# dialect_resources #-}`
//! section (as in MLIR) or from a weights side file beside the IR.

use std::collections::BTreeMap;
use std::sync::Arc;

/// One blob: its alignment and bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blob {
    pub alignment: u32,
    pub data: Arc<[u8]>,
}

#[derive(Default, Clone, Debug)]
pub struct ResourceTable {
    pub blobs: BTreeMap<String, Blob>,
    /// When set, blobs are written to this side file instead of inline.
    pub side_file: Option<String>,
}

impl ResourceTable {
    pub fn insert(&mut self, name: &str, blob: Blob) {
        self.blobs.insert(name.to_string(), blob);
    }
    pub fn get(&self, name: &str) -> Option<&Blob> {
        self.blobs.get(name)
    }
}

/// The side-file format: the magic `IPUW0001`, a count, then for each blob
/// its name length, name, alignment, byte length and bytes (little endian).
pub mod side_file {
    use super::{Blob, ResourceTable};

    const MAGIC: &[u8; 8] = b"IPUW0001";

    pub fn write(table: &ResourceTable) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(table.blobs.len() as u64).to_le_bytes());
        for (name, blob) in &table.blobs {
            out.extend_from_slice(&(name.len() as u64).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&blob.alignment.to_le_bytes());
            out.extend_from_slice(&(blob.data.len() as u64).to_le_bytes());
            out.extend_from_slice(&blob.data);
        }
        out
    }

    /// Reads a side file into `table`, strictly: the file must be exactly
    /// its blobs (no bytes after the last), and each name appears once (a
    /// second blob of a name would silently replace the first).
    pub fn read(bytes: &[u8], table: &mut ResourceTable) -> Result<(), String> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(8)? != MAGIC {
            return Err("not a weights file (bad magic)".into());
        }
        let count = r.u64()?;
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..count {
            let at = r.pos;
            let len = usize::try_from(r.u64()?).unwrap_or(usize::MAX);
            let name = std::str::from_utf8(r.take(len)?)
                .map_err(|_| format!("blob name at byte {at} is not UTF-8"))?
                .to_string();
            if !seen.insert(name.clone()) {
                return Err(format!("blob '{name}' appears twice (at byte {at})"));
            }
            let alignment = u32::from_le_bytes(r.take(4)?.try_into().unwrap_or([0; 4]));
            let size = usize::try_from(r.u64()?).unwrap_or(usize::MAX);
            let data = r.take(size)?.into();
            table.insert(&name, Blob { alignment, data });
        }
        if r.pos != bytes.len() {
            return Err(format!(
                "{} bytes after the last blob (byte {} of {}): the file is not the one written",
                bytes.len() - r.pos,
                r.pos,
                bytes.len()
            ));
        }
        Ok(())
    }

    struct Reader<'a> {
        bytes: &'a [u8],
        pos: usize,
    }
    impl<'a> Reader<'a> {
        fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
            let end = self
                .pos
                .checked_add(n)
                .filter(|&e| e <= self.bytes.len())
                .ok_or_else(|| format!("weights file truncated at byte {}", self.pos))?;
            let s = &self.bytes[self.pos..end];
            self.pos = end;
            Ok(s)
        }
        fn u64(&mut self) -> Result<u64, String> {
            Ok(u64::from_le_bytes(
                self.take(8)?.try_into().unwrap_or([0; 8]),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> ResourceTable {
        let mut t = ResourceTable::default();
        let blob = |b: &[u8]| Blob {
            alignment: 4,
            data: b.into(),
        };
        t.insert("a", blob(&[1, 2, 3, 4]));
        t.insert("b", blob(&[5, 6]));
        t
    }

    #[test]
    fn side_file_round_trips() {
        let bytes = side_file::write(&table());
        let mut back = ResourceTable::default();
        side_file::read(&bytes, &mut back).unwrap();
        assert_eq!(back.blobs, table().blobs);
    }

    #[test]
    fn side_file_reader_refuses_trailing_bytes_and_duplicates() {
        let mut bytes = side_file::write(&table());
        bytes.push(0);
        let e = side_file::read(&bytes, &mut ResourceTable::default()).unwrap_err();
        assert!(e.contains("1 bytes after the last blob"), "{e}");
        // Rename blob "b" to "a": the same name twice.
        let mut bytes = side_file::write(&table());
        let at = bytes.len() - 2 - 8 - 4 - 1;
        assert_eq!(bytes[at], b'b');
        bytes[at] = b'a';
        let e = side_file::read(&bytes, &mut ResourceTable::default()).unwrap_err();
        assert!(e.contains("blob 'a' appears twice"), "{e}");
        // Cut short.
        let bytes = side_file::write(&table());
        let e =
            side_file::read(&bytes[..bytes.len() - 1], &mut ResourceTable::default()).unwrap_err();
        assert!(e.contains("truncated"), "{e}");
    }
}
