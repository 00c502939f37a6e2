//! The declaration of an imported ONNX op ([`OnnxOp`]: name, opset range,
//! the attributes its converter reads, the converter) and the [`Binder`]
//! a converter reads its node through.
//!
//! The declared attributes are checked before the converter runs: one of
//! the wrong type is an error naming the attribute (the node is named by
//! the caller). The binder's readers refuse an attribute the declaration
//! does not list, so the declaration is the whole of what a converter
//! reads. Attributes the operator's schema has but the declaration omits
//! are accepted and ignored (as they always were); attributes the schema
//! lacks are refused before mapping (`check_attributes`).

use std::ops::Deref;

use super::super::importer::{self, invalid, Importer, NResult};
use crate::model::{Attribute, Graph, Node};

/// Converts one node: reads its operands and attributes through the
/// binder, emits dialect ops into the importer, binds the outputs.
pub(in crate::import) type Convert = fn(&mut Importer, &Binder) -> NResult<()>;

/// The type of a declared attribute, as its reader accepts it: a float
/// may be written as an int, a list of ints as one int.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::import) enum AttrKind {
    Int,
    Float,
    Ints,
    Floats,
    String,
    Tensor,
    Graph,
}

impl AttrKind {
    fn accepts(self, a: &Attribute) -> bool {
        matches!(
            (self, a),
            (AttrKind::Int, Attribute::Int(_))
                | (AttrKind::Float, Attribute::Float(_) | Attribute::Int(_))
                | (AttrKind::Ints, Attribute::Ints(_) | Attribute::Int(_))
                | (AttrKind::Floats, Attribute::Floats(_))
                | (AttrKind::String, Attribute::String(_))
                | (AttrKind::Tensor, Attribute::Tensor(_))
                | (AttrKind::Graph, Attribute::Graph(_))
        )
    }

    /// The words of the readers' error messages (`should be an int`).
    fn described(self) -> &'static str {
        match self {
            AttrKind::Int => "an int",
            AttrKind::Float => "a float",
            AttrKind::Ints => "ints",
            AttrKind::Floats => "floats",
            AttrKind::String => "a string",
            AttrKind::Tensor => "a tensor",
            AttrKind::Graph => "a graph",
        }
    }
}

/// One imported ONNX op over an opset range: `since..=until` (`None`: to
/// the newest opset). An op whose semantics changed between opsets
/// (an attribute became an input) has one entry per range.
pub(in crate::import) struct OnnxOp {
    pub(in crate::import) name: &'static str,
    pub(in crate::import) since: i64,
    pub(in crate::import) until: Option<i64>,
    /// The attributes the converter reads, with their types.
    pub(in crate::import) attrs: &'static [(&'static str, AttrKind)],
    pub(in crate::import) convert: Convert,
}

/// The declaration of `name` from opset `since` on; [`OnnxOp::until`]
/// closes the range.
pub(in crate::import) const fn op(
    name: &'static str,
    since: i64,
    attrs: &'static [(&'static str, AttrKind)],
    convert: Convert,
) -> OnnxOp {
    OnnxOp {
        name,
        since,
        until: None,
        attrs,
        convert,
    }
}

impl OnnxOp {
    /// This declaration up to opset `last` (inclusive).
    pub(in crate::import) const fn until(mut self, last: i64) -> OnnxOp {
        self.until = Some(last);
        self
    }

    pub(in crate::import) fn covers(&self, opset: i64) -> bool {
        self.since <= opset && self.until.is_none_or(|u| opset <= u)
    }
}

/// A node as its converter sees it: the ONNX node (through `Deref`), its
/// name in diagnostics, the model's opset, and typed readers of the
/// attributes its declaration lists.
pub(in crate::import) struct Binder<'a> {
    node: &'a Node,
    pub(in crate::import) name: &'a str,
    pub(in crate::import) opset: i64,
    decl: &'static OnnxOp,
}

impl Deref for Binder<'_> {
    type Target = Node;
    fn deref(&self) -> &Node {
        self.node
    }
}

impl<'a> Binder<'a> {
    /// Binds `node` to its declaration, checking the type of every
    /// declared attribute it has.
    pub(in crate::import) fn new(
        node: &'a Node,
        name: &'a str,
        opset: i64,
        decl: &'static OnnxOp,
    ) -> NResult<Self> {
        for &(key, kind) in decl.attrs {
            if let Some(a) = node.attributes.get(key) {
                if !kind.accepts(a) {
                    return invalid(format!(
                        "attribute `{key}` should be {}, got {a:?}",
                        kind.described()
                    ));
                }
            }
        }
        Ok(Binder {
            node,
            name,
            opset,
            decl,
        })
    }

    /// Error unless the declaration lists `key` as `kind` (`None`: any):
    /// a converter reads only what it declares.
    fn declared(&self, key: &str, kind: Option<AttrKind>) -> NResult<()> {
        let listed = self
            .decl
            .attrs
            .iter()
            .any(|&(k, t)| k == key && kind.is_none_or(|kind| kind == t));
        if listed {
            return Ok(());
        }
        invalid(format!(
            "the mapping of {}-{} reads attribute `{key}` ({kind:?}), which its declaration does not list",
            self.decl.name, self.decl.since
        ))
    }

    /// The attribute `key` as decoded, if present.
    pub(in crate::import) fn attr(&self, key: &str) -> NResult<Option<&'a Attribute>> {
        self.declared(key, None)?;
        Ok(importer::attr(self.node, key))
    }

    pub(in crate::import) fn attr_i(&self, key: &str, default: i64) -> NResult<i64> {
        self.declared(key, Some(AttrKind::Int))?;
        importer::attr_i(self.node, key, default)
    }

    pub(in crate::import) fn attr_f(&self, key: &str, default: f32) -> NResult<f32> {
        self.declared(key, Some(AttrKind::Float))?;
        importer::attr_f(self.node, key, default)
    }

    pub(in crate::import) fn attr_ints(&self, key: &str) -> NResult<Option<Vec<i64>>> {
        self.declared(key, Some(AttrKind::Ints))?;
        importer::attr_ints(self.node, key)
    }

    pub(in crate::import) fn attr_s(&self, key: &str) -> NResult<Option<String>> {
        self.declared(key, Some(AttrKind::String))?;
        importer::attr_s(self.node, key)
    }

    /// The subgraph attribute `key` (required).
    pub(in crate::import) fn attr_graph(&self, key: &str) -> NResult<&'a Graph> {
        self.declared(key, Some(AttrKind::Graph))?;
        match importer::attr(self.node, key) {
            Some(Attribute::Graph(g)) => Ok(g),
            Some(a) => invalid(format!("attribute `{key}` should be a graph, got {a:?}")),
            None => invalid(format!("missing graph attribute `{key}`")),
        }
    }
}
