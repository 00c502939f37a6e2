//! Builtin types, attributes and locations: their interned handles and the
//! plain data behind each handle.

use smallvec::SmallVec;

/// An interned identifier or string.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Sym(pub(crate) u32);

/// An interned type.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Type(pub(crate) u32);

/// An interned attribute.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Attr(pub(crate) u32);

/// An interned source location.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Loc(pub(crate) u32);

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Signedness {
    Signless,
    Signed,
    Unsigned,
}

/// A dynamic dimension in a tensor shape (`?` in the text).
pub const DYNAMIC: i64 = -1;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TypeKind {
    None,
    Index,
    F16,
    BF16,
    F32,
    F64,
    F8E4M3FN,
    F8E5M2,
    Integer {
        width: u32,
        signedness: Signedness,
    },
    Tensor {
        shape: SmallVec<[i64; 4]>,
        element: Type,
        encoding: Option<Attr>,
    },
    Function {
        inputs: Vec<Type>,
        results: Vec<Type>,
    },
    /// A type of a dialect this build does not know: `!dialect.body` or `!dialect<body>`.
    Opaque {
        dialect: Sym,
        body: Box<str>,
    },
}

impl Type {
    pub const NONE: Type = Type(0);
    pub const INDEX: Type = Type(1);
    pub const F16: Type = Type(2);
    pub const BF16: Type = Type(3);
    pub const F32: Type = Type(4);
    pub const F64: Type = Type(5);
    pub const F8E4M3FN: Type = Type(6);
    pub const F8E5M2: Type = Type(7);
    pub const I1: Type = Type(8);
    pub const I8: Type = Type(9);
    pub const I16: Type = Type(10);
    pub const I32: Type = Type(11);
    pub const I64: Type = Type(12);
    pub(crate) const PREINTERNED: usize = 13;
}

pub(crate) fn preinterned_types() -> Vec<TypeKind> {
    let int = |width| TypeKind::Integer {
        width,
        signedness: Signedness::Signless,
    };
    vec![
        TypeKind::None,
        TypeKind::Index,
        TypeKind::F16,
        TypeKind::BF16,
        TypeKind::F32,
        TypeKind::F64,
        TypeKind::F8E4M3FN,
        TypeKind::F8E5M2,
        int(1),
        int(8),
        int(16),
        int(32),
        int(64),
    ]
}

impl TypeKind {
    pub fn is_float(&self) -> bool {
        matches!(
            self,
            TypeKind::F16
                | TypeKind::BF16
                | TypeKind::F32
                | TypeKind::F64
                | TypeKind::F8E4M3FN
                | TypeKind::F8E5M2
        )
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, TypeKind::Integer { .. })
    }

    pub fn is_int_or_index(&self) -> bool {
        matches!(self, TypeKind::Integer { .. } | TypeKind::Index)
    }

    /// Width in bits of a scalar type, `None` for non-scalars.
    pub fn bit_width(&self) -> Option<u32> {
        Some(match self {
            TypeKind::F16 | TypeKind::BF16 => 16,
            TypeKind::F32 => 32,
            TypeKind::F64 | TypeKind::Index => 64,
            TypeKind::F8E4M3FN | TypeKind::F8E5M2 => 8,
            TypeKind::Integer { width, .. } => *width,
            _ => return None,
        })
    }
}

/// Data of a dense elements attribute: little-endian element bytes, each
/// element in `storage_bytes(element type)` bytes.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct DenseData {
    pub splat: bool,
    pub bytes: Box<[u8]>,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum AttrKind {
    Unit,
    Bool(bool),
    Integer {
        value: i128,
        ty: Type,
    },
    /// The value is stored as the bits of an f64 already rounded to `ty`.
    Float {
        bits: u64,
        ty: Type,
    },
    String(Box<str>),
    Type(Type),
    Array(Vec<Attr>),
    /// MLIR's dense array of i64: `array<i64: 1, 2>`.
    I64Array(Vec<i64>),
    /// Entries sorted by name, names unique.
    Dictionary(Vec<(Sym, Attr)>),
    SymbolRef {
        root: Sym,
        nested: Vec<Sym>,
    },
    DenseElements {
        ty: Type,
        data: DenseData,
    },
    /// Elements held in a named blob of the file's resource section or its
    /// weights side file.
    DenseResource {
        ty: Type,
        handle: Sym,
    },
    /// An attribute of a dialect this build does not know: `#dialect.body` or `#dialect<body>`.
    Opaque {
        dialect: Sym,
        body: Box<str>,
    },
}

impl Attr {
    pub const UNIT: Attr = Attr(0);
    pub const TRUE: Attr = Attr(1);
    pub const FALSE: Attr = Attr(2);
    pub const EMPTY_DICT: Attr = Attr(3);
    pub(crate) const PREINTERNED: usize = 4;
}

pub(crate) fn preinterned_attrs() -> Vec<AttrKind> {
    vec![
        AttrKind::Unit,
        AttrKind::Bool(true),
        AttrKind::Bool(false),
        AttrKind::Dictionary(Vec::new()),
    ]
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum LocKind {
    Unknown,
    FileLineCol {
        file: Sym,
        line: u32,
        col: u32,
    },
    Name {
        name: Sym,
        child: Loc,
    },
    Fused {
        locs: Vec<Loc>,
        metadata: Option<Attr>,
    },
    CallSite {
        callee: Loc,
        caller: Loc,
    },
}

impl Loc {
    pub const UNKNOWN: Loc = Loc(0);
}
