//! Op declarations. Each op is declared once as an [`OpDef`]: its operands,
//! results, attributes, regions, traits, verifier, folder and assembly format.
//! The parser, printer and verifier are driven by these declarations.

use crate::context::{Context, Op};
use crate::diag::Diagnostic;
use crate::format::{self, Format};
use crate::pass::{PassInfo, PipelineInfo};
use crate::rewrite::RewritePattern;
use crate::types::{Attr, Loc, Type};
use rustc_hash::FxHashMap;

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Arity {
    Single,
    Optional,
    Variadic,
}

#[derive(Copy, Clone)]
pub struct TypeConstraint {
    pub description: &'static str,
    pub check: fn(&Context, Type) -> bool,
}

#[derive(Copy, Clone)]
pub struct AttrConstraint {
    pub description: &'static str,
    pub check: fn(&Context, Attr) -> bool,
}

/// A declared operand or result group.
#[derive(Copy, Clone)]
pub struct ValueDef {
    pub name: &'static str,
    pub arity: Arity,
    pub constraint: TypeConstraint,
}

/// A declared (inherent) attribute.
#[derive(Copy, Clone)]
pub struct AttrDef {
    pub name: &'static str,
    pub optional: bool,
    pub constraint: AttrConstraint,
}

#[derive(Copy, Clone)]
pub struct RegionDef {
    pub name: &'static str,
    pub arity: Arity,
    pub single_block: bool,
}

#[derive(Copy, Clone)]
pub struct SuccessorDef {
    pub name: &'static str,
    pub arity: Arity,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Trait {
    /// Must be the last op of its block.
    Terminator,
    /// Blocks of its regions need no terminator.
    NoTerminator,
    /// Its regions may not use values defined outside it.
    IsolatedFromAbove,
    /// Its region holds symbols with unique `sym_name`s.
    SymbolTable,
    /// Defines a symbol through `sym_name`.
    Symbol,
    /// No side effects: removable when unused, mergeable by CSE.
    Pure,
    Commutative,
    SameOperandsAndResultType,
    SameOperandsAndResultElementType,
    ConstantLike,
    ReturnLike,
    /// Its regions are graph regions: no dominance order inside them.
    GraphRegion,
}

/// Parser and printer written by hand, for ops whose syntax no declarative
/// format expresses (`func.func`, `builtin.module`).
#[derive(Copy, Clone)]
pub struct CustomAssembly {
    pub parse: fn(&mut crate::parser::OpParser<'_, '_, '_>) -> Result<(), Diagnostic>,
    pub print: fn(&mut crate::printer::Printer<'_>, Op) -> std::fmt::Result,
}

/// A value computed by a folder: an existing SSA value or a constant.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum FoldValue {
    Value(crate::context::Value),
    Constant(Attr),
}

pub enum FoldResult {
    /// Nothing to fold.
    None,
    /// The op was changed in place.
    InPlace,
    /// The op's results are replaced by these.
    Replace(Vec<FoldValue>),
}

/// Returns an op's canonicalization patterns.
pub type PatternsFn = fn() -> Vec<Box<dyn RewritePattern>>;
pub type FoldFn = fn(&mut Context, Op, &[Option<Attr>]) -> FoldResult;
pub type VerifyFn = fn(&Context, Op) -> Result<(), Diagnostic>;

pub struct OpDef {
    pub name: &'static str,
    pub summary: &'static str,
    pub operands: &'static [ValueDef],
    pub results: &'static [ValueDef],
    pub attributes: &'static [AttrDef],
    pub regions: &'static [RegionDef],
    pub successors: &'static [SuccessorDef],
    pub traits: &'static [Trait],
    /// Declarative assembly format in MLIR's syntax, e.g.
    /// `` $lhs `,` $rhs attr-dict `:` type($result) ``.
    pub assembly_format: Option<&'static str>,
    pub custom_assembly: Option<CustomAssembly>,
    /// Dialect whose ops may be written without prefix inside this op's regions.
    pub default_dialect: Option<&'static str>,
    pub verify: Option<VerifyFn>,
    pub fold: Option<FoldFn>,
    pub canonicalization_patterns: Option<PatternsFn>,
}

impl OpDef {
    /// An op with nothing declared; declarations start from it with `..OpDef::EMPTY`.
    pub const EMPTY: OpDef = OpDef {
        name: "",
        summary: "",
        operands: &[],
        results: &[],
        attributes: &[],
        regions: &[],
        successors: &[],
        traits: &[],
        assembly_format: None,
        custom_assembly: None,
        default_dialect: None,
        verify: None,
        fold: None,
        canonicalization_patterns: None,
    };

    pub fn has_trait(&self, t: Trait) -> bool {
        self.traits.contains(&t)
    }

    pub fn dialect(&self) -> &'static str {
        self.name
            .split_once('.')
            .map(|(d, _)| d)
            .unwrap_or(self.name)
    }

    pub fn attribute(&self, name: &str) -> Option<&AttrDef> {
        self.attributes.iter().find(|a| a.name == name)
    }
}

pub type MaterializeConstantFn = fn(&mut Context, Attr, Type, Loc) -> Option<Op>;

pub struct Dialect {
    pub name: &'static str,
    pub description: &'static str,
    pub ops: &'static [&'static OpDef],
    pub materialize_constant: Option<MaterializeConstantFn>,
}

/// Every dialect, op, pass and pipeline a tool knows.
pub struct Registry {
    dialects: Vec<&'static Dialect>,
    ops: Vec<&'static OpDef>,
    formats: Vec<Option<Format>>,
    by_name: FxHashMap<&'static str, u32>,
    pub(crate) passes: Vec<PassInfo>,
    pub(crate) pipelines: Vec<PipelineInfo>,
}

/// Index of a registered op in its [`Registry`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct OpDefId(pub(crate) u32);

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    /// A registry holding the builtin dialect.
    pub fn new() -> Registry {
        let mut r = Registry {
            dialects: Vec::new(),
            ops: Vec::new(),
            formats: Vec::new(),
            by_name: FxHashMap::default(),
            passes: Vec::new(),
            pipelines: Vec::new(),
        };
        r.register_dialect(&crate::builtin::BUILTIN_DIALECT);
        r
    }

    /// Registers a dialect. A malformed assembly format is a bug in the
    /// declaration, reported here (and by every test that builds a registry).
    pub fn register_dialect(&mut self, dialect: &'static Dialect) {
        if self.dialects.iter().any(|d| d.name == dialect.name) {
            return;
        }
        self.dialects.push(dialect);
        for &def in dialect.ops {
            let format = def.assembly_format.map(|f| {
                format::parse_format(def, f)
                    .unwrap_or_else(|e| panic!("invalid assembly format of '{}': {e}", def.name))
            });
            let id = self.ops.len() as u32;
            self.ops.push(def);
            self.formats.push(format);
            self.by_name.insert(def.name, id);
        }
    }

    pub fn register_pass(&mut self, info: PassInfo) {
        self.passes.retain(|p| p.argument != info.argument);
        self.passes.push(info);
    }

    pub fn register_pipeline(&mut self, info: PipelineInfo) {
        self.pipelines.retain(|p| p.argument != info.argument);
        self.pipelines.push(info);
    }

    pub fn lookup(&self, name: &str) -> Option<OpDefId> {
        self.by_name.get(name).map(|&i| OpDefId(i))
    }

    pub fn def(&self, id: OpDefId) -> &'static OpDef {
        self.ops[id.0 as usize]
    }

    pub(crate) fn format(&self, id: OpDefId) -> Option<&Format> {
        self.formats[id.0 as usize].as_ref()
    }

    pub fn dialects(&self) -> &[&'static Dialect] {
        &self.dialects
    }

    pub fn dialect(&self, name: &str) -> Option<&'static Dialect> {
        self.dialects.iter().copied().find(|d| d.name == name)
    }

    pub fn ops(&self) -> &[&'static OpDef] {
        &self.ops
    }

    pub fn passes(&self) -> &[PassInfo] {
        &self.passes
    }

    pub fn pipelines(&self) -> &[PipelineInfo] {
        &self.pipelines
    }

    pub fn pass(&self, argument: &str) -> Option<&PassInfo> {
        self.passes.iter().find(|p| p.argument == argument)
    }

    pub fn pipeline(&self, argument: &str) -> Option<&PipelineInfo> {
        self.pipelines.iter().find(|p| p.argument == argument)
    }
}

/// Common type constraints.
pub mod constraints {
    use super::{AttrConstraint, TypeConstraint};
    use crate::types::{AttrKind, TypeKind};

    pub const ANY_TYPE: TypeConstraint = TypeConstraint {
        description: "any type",
        check: |_, _| true,
    };
    pub const ANY_TENSOR: TypeConstraint = TypeConstraint {
        description: "ranked tensor",
        check: |cx, t| matches!(cx.type_kind(t), TypeKind::Tensor { .. }),
    };
    pub const ANY_FLOAT: TypeConstraint = TypeConstraint {
        description: "floating-point",
        check: |cx, t| cx.type_kind(t).is_float(),
    };
    pub const ANY_INTEGER: TypeConstraint = TypeConstraint {
        description: "integer",
        check: |cx, t| cx.type_kind(t).is_integer(),
    };
    pub const INT_OR_FLOAT_OR_INDEX: TypeConstraint = TypeConstraint {
        description: "integer, index or floating-point",
        check: |cx, t| {
            let k = cx.type_kind(t);
            k.is_float() || k.is_int_or_index()
        },
    };

    pub const ANY_ATTR: AttrConstraint = AttrConstraint {
        description: "any attribute",
        check: |_, _| true,
    };
    pub const STRING_ATTR: AttrConstraint = AttrConstraint {
        description: "string attribute",
        check: |cx, a| matches!(cx.attr_kind(a), AttrKind::String(_)),
    };
    pub const SYMBOL_NAME_ATTR: AttrConstraint = STRING_ATTR;
    pub const FLAT_SYMBOL_REF_ATTR: AttrConstraint = AttrConstraint {
        description: "flat symbol reference attribute",
        check: |cx, a| matches!(cx.attr_kind(a), AttrKind::SymbolRef { nested, .. } if nested.is_empty()),
    };
    pub const INTEGER_ATTR: AttrConstraint = AttrConstraint {
        description: "integer attribute",
        check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Integer { .. }),
    };
    pub const TYPED_ATTR: AttrConstraint = AttrConstraint {
        description: "typed attribute (integer, float or elements)",
        check: |cx, a| {
            matches!(
                cx.attr_kind(a),
                AttrKind::Integer { .. }
                    | AttrKind::Float { .. }
                    | AttrKind::DenseElements { .. }
                    | AttrKind::DenseResource { .. }
            )
        },
    };
    pub const FUNCTION_TYPE_ATTR: AttrConstraint = AttrConstraint {
        description: "type attribute of function type",
        check: |cx, a| match cx.attr_kind(a) {
            AttrKind::Type(t) => matches!(cx.type_kind(*t), TypeKind::Function { .. }),
            _ => false,
        },
    };
    pub const ARRAY_ATTR: AttrConstraint = AttrConstraint {
        description: "array attribute",
        check: |cx, a| matches!(cx.attr_kind(a), AttrKind::Array(_)),
    };
    pub const DICT_ARRAY_ATTR: AttrConstraint = AttrConstraint {
        description: "array of dictionary attributes",
        check: |cx, a| match cx.attr_kind(a) {
            AttrKind::Array(items) => items
                .iter()
                .all(|i| matches!(cx.attr_kind(*i), AttrKind::Dictionary(_))),
            _ => false,
        },
    };
}
