//! The tile-image linker: places kernel objects into a tile's code memory,
//! places their data after it, resolves relocations and reports the
//! executable ranges and code size.
//!
//! Every object is linked under a caller-chosen name; its symbols are
//! exported as `name.symbol` (so two specialisations of one kernel can share
//! an image) and its global symbols also under their plain names when that
//! is unambiguous.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::elf::{ObjectFile, RelocKind, RelocTarget};
use crate::encode::{decode, encode_inst, BUNDLE_BIT};

/// Where things go in tile memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkLayout {
    /// First byte of code.
    pub code_base: u32,
    /// First byte of data; `None` places data right after the code.
    pub data_base: Option<u32>,
    /// Tile memory size, to refuse images that do not fit.
    pub memory_bytes: u32,
}

impl LinkLayout {
    pub fn new(code_base: u32, memory_bytes: u32) -> Self {
        LinkLayout {
            code_base,
            data_base: None,
            memory_bytes,
        }
    }
}

/// A linked tile image.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileImage {
    /// Placed byte ranges with their contents (code first).
    pub segments: Vec<Segment>,
    /// Every symbol's address (`object.symbol`, and plain global names).
    pub symbols: BTreeMap<String, u32>,
    /// Address ranges holding instructions.
    pub exec_ranges: Vec<Range<u32>>,
    /// Total bytes of code.
    pub code_size: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub address: u32,
    pub bytes: Vec<u8>,
    pub exec: bool,
}

impl TileImage {
    pub fn symbol(&self, name: &str) -> Option<u32> {
        self.symbols.get(name).copied()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("undefined symbol `{symbol}` referenced from `{object}`")]
    Undefined { object: String, symbol: String },
    #[error("symbol `{0}` is defined by more than one object and referred to by its plain name")]
    Duplicate(String),
    #[error("relocation at {object}+{offset:#x}: {reason}")]
    Reloc {
        object: String,
        offset: u32,
        reason: String,
    },
    #[error("the image needs {need} bytes but the tile has {have}")]
    TooBig { need: u64, have: u32 },
}

fn align_up(v: u32, a: u32) -> u32 {
    let a = a.max(1);
    v.div_ceil(a) * a
}

/// Links `objects` (each with a name) into one tile image.
pub fn link(objects: &[(&str, &ObjectFile)], layout: &LinkLayout) -> Result<TileImage, LinkError> {
    // Place sections: all code first, then all data.
    let mut addr = vec![Vec::new(); objects.len()];
    for (oi, (_, o)) in objects.iter().enumerate() {
        addr[oi] = vec![0u32; o.sections.len()];
    }
    let mut at = layout.code_base;
    for exec in [true, false] {
        if !exec {
            if let Some(d) = layout.data_base {
                at = d;
            }
        }
        for (oi, (_, o)) in objects.iter().enumerate() {
            for (si, s) in o.sections.iter().enumerate() {
                if s.exec == exec {
                    at = align_up(at, s.align.clamp(1, 4096).max(if exec { 8 } else { 1 }));
                    addr[oi][si] = at;
                    let end = at as u64 + s.data.len() as u64;
                    if end > layout.memory_bytes as u64 {
                        return Err(LinkError::TooBig {
                            need: end,
                            have: layout.memory_bytes,
                        });
                    }
                    at = end as u32;
                }
            }
        }
    }
    let end = at as u64;
    if end > layout.memory_bytes as u64 {
        return Err(LinkError::TooBig {
            need: end,
            have: layout.memory_bytes,
        });
    }
    // Symbols.
    let mut symbols = BTreeMap::new();
    let mut globals: BTreeMap<String, u32> = BTreeMap::new();
    // A global defined by several objects (two specialisations of one kernel)
    // is fine until something refers to it by its plain name.
    let mut ambiguous: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for (oi, (name, o)) in objects.iter().enumerate() {
        for s in &o.symbols {
            if let Some(si) = s.section {
                let Some(&base) = addr[oi].get(si) else {
                    return Err(LinkError::Reloc {
                        object: name.to_string(),
                        offset: s.value,
                        reason: format!("symbol `{}` in a missing section", s.name),
                    });
                };
                let a = base.wrapping_add(s.value);
                symbols.insert(format!("{name}.{}", s.name), a);
                if s.global && globals.insert(s.name.clone(), a).is_some() {
                    ambiguous.insert(s.name.clone());
                }
            }
        }
    }
    // Relocate.
    let mut segments = Vec::new();
    let mut exec_ranges: Vec<Range<u32>> = Vec::new();
    let mut code_size = 0;
    for (oi, (name, o)) in objects.iter().enumerate() {
        for (si, s) in o.sections.iter().enumerate() {
            let base = addr[oi][si];
            let mut bytes = s.data.clone();
            for r in &s.relocs {
                let target = match &r.target {
                    RelocTarget::Section(i) => {
                        *addr[oi].get(*i).ok_or_else(|| LinkError::Reloc {
                            object: name.to_string(),
                            offset: r.offset,
                            reason: "bad section index".into(),
                        })? as i64
                    }
                    RelocTarget::Symbol(n) => {
                        let local = o
                            .symbols
                            .iter()
                            .find(|x| &x.name == n && x.section.is_some());
                        match local {
                            Some(x) => {
                                addr[oi].get(x.section.unwrap_or(0)).copied().unwrap_or(0) as i64
                                    + x.value as i64
                            }
                            // `object.symbol` names one object's symbol.
                            None if symbols.contains_key(n) => symbols[n] as i64,
                            None if ambiguous.contains(n) => {
                                return Err(LinkError::Duplicate(n.clone()))
                            }
                            None => *globals.get(n).ok_or_else(|| LinkError::Undefined {
                                object: name.to_string(),
                                symbol: n.clone(),
                            })? as i64,
                        }
                    }
                };
                let off = r.offset as usize;
                let err = |reason: String| LinkError::Reloc {
                    object: name.to_string(),
                    offset: r.offset,
                    reason,
                };
                let value = target
                    .checked_add(r.addend)
                    .ok_or_else(|| err(format!("addend {} overflows", r.addend)))?;
                let Some(slot) = bytes.get_mut(off..off.saturating_add(4)) else {
                    return Err(err("offset outside its section".into()));
                };
                let word = u32::from_le_bytes([slot[0], slot[1], slot[2], slot[3]]);
                let new = match r.kind {
                    RelocKind::Abs32 => u32::try_from(value)
                        .map_err(|_| err(format!("address {value:#x} does not fit in 32 bits")))?,
                    RelocKind::Abs20 | RelocKind::Pcrel => {
                        let mut inst = decode(word).map_err(|e| err(e.to_string()))?;
                        inst.imm = if r.kind == RelocKind::Abs20 {
                            if !(0..1 << 20).contains(&value) {
                                return Err(err(format!(
                                    "address {value:#x} does not fit in 20 bits"
                                )));
                            }
                            value as i32
                        } else {
                            let d = value - (base as i64 + r.offset as i64);
                            if d % 4 != 0 {
                                return Err(err("branch target is not word-aligned".into()));
                            }
                            i32::try_from(d / 4)
                                .map_err(|_| err(format!("branch distance {d} does not fit")))?
                        };
                        let w = encode_inst(&inst);
                        if w == u32::MAX || decode(w).map(|d| d.imm) != Ok(inst.imm) {
                            return Err(err(format!(
                                "value {} does not fit the instruction",
                                inst.imm
                            )));
                        }
                        w | (word & BUNDLE_BIT)
                    }
                };
                slot.copy_from_slice(&new.to_le_bytes());
            }
            if s.exec {
                code_size += bytes.len() as u32;
                let r = base..base + bytes.len() as u32;
                match exec_ranges.last_mut() {
                    Some(last) if align_up(last.end, 8) >= r.start => last.end = r.end,
                    _ => exec_ranges.push(r),
                }
            }
            if !bytes.is_empty() {
                segments.push(Segment {
                    address: base,
                    bytes,
                    exec: s.exec,
                });
            }
        }
    }
    for (g, a) in globals {
        if !ambiguous.contains(&g) {
            symbols.entry(g).or_insert(a);
        }
    }
    Ok(TileImage {
        segments,
        symbols,
        exec_ranges,
        code_size,
    })
}
