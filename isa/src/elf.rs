//! The relocatable object model and its ELF form.
//!
//! Objects are 32-bit little-endian ELF (`ET_REL`) with this project's own
//! `e_machine` ([`EM_IPU`]), written with the `object` crate and readable by
//! `llvm-readelf` / `llvm-objdump -h`. Kernel metadata travels inside the
//! object as JSON in a non-allocated `.ipu.kernel` section, so an object is
//! self-describing; the same JSON is also written beside it as kernel.json.

use std::collections::{BTreeMap, HashMap};

use object::write::{Object as WObject, Relocation as WReloc, Symbol as WSymbol, SymbolSection};
use object::{
    Architecture, BinaryFormat, Endianness, Object as _, ObjectSection as _, ObjectSymbol as _,
    RelocationFlags, RelocationTarget, SectionFlags, SectionKind, SymbolFlags, SymbolKind,
    SymbolScope,
};

/// `e_machine` of tile objects (an unassigned value: "IP").
pub const EM_IPU: u16 = 0x4950;
/// Name of the metadata section.
pub const META_SECTION: &str = ".ipu.kernel";

/// Relocation kinds (their ELF `r_type` is the discriminant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RelocKind {
    /// A 32-bit absolute address in a data word.
    Abs32 = 1,
    /// The 20-bit unsigned immediate of a `setzi` (absolute address).
    Abs20 = 2,
    /// The branch-target field of a branch or call (words, pc-relative).
    Pcrel = 3,
}

impl RelocKind {
    pub fn from_r_type(t: u32) -> Option<RelocKind> {
        match t {
            1 => Some(RelocKind::Abs32),
            2 => Some(RelocKind::Abs20),
            3 => Some(RelocKind::Pcrel),
            _ => None,
        }
    }
}

/// What a relocation refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelocTarget {
    /// A symbol by name (defined in this object or another).
    Symbol(String),
    /// The start of a section of this object.
    Section(usize),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    pub offset: u32,
    pub kind: RelocKind,
    pub target: RelocTarget,
    pub addend: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjSection {
    pub name: String,
    pub exec: bool,
    pub write: bool,
    pub align: u32,
    pub data: Vec<u8>,
    pub relocs: Vec<Reloc>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SymKind {
    Func,
    Object,
    NoType,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjSymbol {
    pub name: String,
    /// Index into the object's sections; `None` for an undefined symbol.
    pub section: Option<usize>,
    pub value: u32,
    pub size: u32,
    pub global: bool,
    pub kind: SymKind,
}

/// An entry point of a kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EntryPoint {
    pub name: String,
    pub section: String,
    pub offset: u32,
}

/// What the compiler needs to know about an assembled kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KernelMeta {
    pub name: String,
    pub source: String,
    pub params: BTreeMap<String, i64>,
    pub entry_points: Vec<EntryPoint>,
    pub registers_used: Vec<String>,
    pub code_size: u32,
    /// The `.cycles` formula as written (over the parameters).
    pub cycles_formula: Option<String>,
    /// The formula evaluated with this specialisation's parameters.
    pub cycles: Option<i64>,
    pub source_sha256: String,
}

/// A relocatable object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectFile {
    pub sections: Vec<ObjSection>,
    pub symbols: Vec<ObjSymbol>,
    pub meta: Option<KernelMeta>,
}

/// Why an object file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    #[error("not a readable ELF file: {0}")]
    Parse(#[from] object::Error),
    #[error("ELF machine {0:#x} is not a tile object (expected {EM_IPU:#x})")]
    Machine(u16),
    #[error("relocation type {0} is unknown")]
    RelocType(u32),
    #[error("malformed object: {0}")]
    Malformed(String),
}

impl ObjectFile {
    /// The ELF bytes.
    pub fn to_elf(&self) -> Vec<u8> {
        // RISC-V 32 gives the writer a 32-bit little-endian RELA layout; the
        // machine field is replaced by ours below.
        let mut obj = WObject::new(BinaryFormat::Elf, Architecture::Riscv32, Endianness::Little);
        let mut ids = Vec::new();
        for s in &self.sections {
            let kind = if s.exec {
                SectionKind::Text
            } else if s.write {
                SectionKind::Data
            } else {
                SectionKind::ReadOnlyData
            };
            let id = obj.add_section(Vec::new(), s.name.as_bytes().to_vec(), kind);
            obj.section_mut(id)
                .set_data(s.data.clone(), s.align.max(1) as u64);
            ids.push(id);
        }
        if let Some(meta) = &self.meta {
            let id = obj.add_section(
                Vec::new(),
                META_SECTION.as_bytes().to_vec(),
                SectionKind::Other,
            );
            let json = serde_json::to_vec_pretty(meta).unwrap_or_default();
            obj.section_mut(id).set_data(json, 1);
        }
        let mut sym_ids = HashMap::new();
        for s in &self.symbols {
            let section = match s.section {
                Some(i) => SymbolSection::Section(ids[i]),
                None => SymbolSection::Undefined,
            };
            let id = obj.add_symbol(WSymbol {
                name: s.name.as_bytes().to_vec(),
                value: s.value as u64,
                size: s.size as u64,
                kind: match s.kind {
                    SymKind::Func => SymbolKind::Text,
                    SymKind::Object => SymbolKind::Data,
                    SymKind::NoType => SymbolKind::Unknown,
                },
                scope: if s.global {
                    SymbolScope::Linkage
                } else {
                    SymbolScope::Compilation
                },
                weak: false,
                section,
                flags: SymbolFlags::None,
            });
            sym_ids.insert(s.name.clone(), id);
        }
        for (si, s) in self.sections.iter().enumerate() {
            for r in &s.relocs {
                let symbol = match &r.target {
                    RelocTarget::Section(i) => obj.section_symbol(ids[*i]),
                    RelocTarget::Symbol(n) => match sym_ids.get(n) {
                        Some(id) => *id,
                        None => continue,
                    },
                };
                let _ = obj.add_relocation(
                    ids[si],
                    WReloc {
                        offset: r.offset as u64,
                        symbol,
                        addend: r.addend,
                        flags: RelocationFlags::Elf {
                            r_type: r.kind as u32,
                        },
                    },
                );
            }
        }
        let mut bytes = obj.write().unwrap_or_default();
        if bytes.len() > 20 {
            bytes[18..20].copy_from_slice(&EM_IPU.to_le_bytes());
        }
        bytes
    }

    /// Reads an object back from ELF bytes, checking it is a tile object.
    pub fn from_elf(bytes: &[u8]) -> Result<ObjectFile, ElfError> {
        if bytes.len() < 20 || &bytes[..4] != b"\x7fELF" {
            return Err(ElfError::Malformed("no ELF header".into()));
        }
        let machine = u16::from_le_bytes([bytes[18], bytes[19]]);
        if machine != EM_IPU {
            return Err(ElfError::Machine(machine));
        }
        let file = object::read::elf::ElfFile32::<Endianness>::parse(bytes)?;
        let mut sections = Vec::new();
        let mut index_map = HashMap::new();
        let mut meta = None;
        for s in file.sections() {
            let name = s.name()?.to_string();
            if name == META_SECTION {
                meta = serde_json::from_slice(s.data()?).ok();
                continue;
            }
            let SectionFlags::Elf { sh_flags } = s.flags() else {
                continue;
            };
            if sh_flags & object::elf::SHF_ALLOC as u64 == 0 {
                continue;
            }
            index_map.insert(s.index(), sections.len());
            sections.push(ObjSection {
                name,
                exec: sh_flags & object::elf::SHF_EXECINSTR as u64 != 0,
                write: sh_flags & object::elf::SHF_WRITE as u64 != 0,
                align: s.align().max(1) as u32,
                data: s.data()?.to_vec(),
                relocs: Vec::new(),
            });
        }
        let mut symbols = Vec::new();
        for sym in file.symbols() {
            if matches!(sym.kind(), SymbolKind::Section | SymbolKind::File)
                || sym.name()?.is_empty()
            {
                continue;
            }
            let section = match sym.section_index() {
                Some(i) => Some(*index_map.get(&i).ok_or_else(|| {
                    ElfError::Malformed(format!(
                        "symbol {} in an unknown section",
                        sym.name().unwrap_or("?")
                    ))
                })?),
                None => None,
            };
            symbols.push(ObjSymbol {
                name: sym.name()?.to_string(),
                section,
                value: sym.address() as u32,
                size: sym.size() as u32,
                global: sym.is_global(),
                kind: match sym.kind() {
                    SymbolKind::Text => SymKind::Func,
                    SymbolKind::Data => SymKind::Object,
                    _ => SymKind::NoType,
                },
            });
        }
        for s in file.sections() {
            let Some(&mine) = index_map.get(&s.index()) else {
                continue;
            };
            for (offset, r) in s.relocations() {
                let RelocationFlags::Elf { r_type } = r.flags() else {
                    return Err(ElfError::Malformed("non-ELF relocation".into()));
                };
                let kind = RelocKind::from_r_type(r_type).ok_or(ElfError::RelocType(r_type))?;
                let RelocationTarget::Symbol(si) = r.target() else {
                    return Err(ElfError::Malformed("relocation without a symbol".into()));
                };
                let sym = file.symbol_by_index(si)?;
                let target = if sym.kind() == SymbolKind::Section {
                    let idx = sym
                        .section_index()
                        .and_then(|i| index_map.get(&i))
                        .ok_or_else(|| {
                            ElfError::Malformed("relocation against an unknown section".into())
                        })?;
                    RelocTarget::Section(*idx)
                } else {
                    RelocTarget::Symbol(sym.name()?.to_string())
                };
                sections[mine].relocs.push(Reloc {
                    offset: offset as u32,
                    kind,
                    target,
                    addend: r.addend(),
                });
            }
        }
        Ok(ObjectFile {
            sections,
            symbols,
            meta,
        })
    }
}
