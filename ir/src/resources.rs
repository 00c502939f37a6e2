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

    pub fn read(bytes: &[u8], table: &mut ResourceTable) -> Result<(), String> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(8)? != MAGIC {
            return Err("not a weights file (bad magic)".into());
        }
        let count = r.u64()?;
        for _ in 0..count {
            let len = r.u64()? as usize;
            let name = std::str::from_utf8(r.take(len)?)
                .map_err(|_| "blob name is not UTF-8".to_string())?
                .to_string();
            let alignment = u32::from_le_bytes(r.take(4)?.try_into().unwrap_or([0; 4]));
            let size = r.u64()? as usize;
            let data = r.take(size)?.into();
            table.insert(&name, Blob { alignment, data });
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
