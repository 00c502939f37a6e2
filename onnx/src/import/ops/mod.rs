//! The ONNX op -> dialect op mapping: one declaration ([`OnnxOp`]) per op
//! type and opset range, in files by op family, each with a small
//! converter that reads the node through a typed [`Binder`].
//!
//! Adding an op is adding one entry to its family's `OPS` (and, when it
//! needs more than a line, its converter next to it). A node is looked up
//! by (domain, op type, opset); its declared attributes are type-checked;
//! then its converter runs.

mod activation;
mod composite;
mod constant;
mod control;
mod conv;
mod elementwise;
mod indexing;
mod logic;
mod nn;
mod norm;
mod quantized;
mod reduce;
mod shape;
mod table;

use std::collections::HashMap;
use std::sync::OnceLock;

use ipu_reference::OpKind;

pub(super) use table::{op, AttrKind, Binder, OnnxOp};

use super::importer::{unsupported, Importer, NResult};

/// Every family's declarations (default domain).
const FAMILIES: &[&[OnnxOp]] = &[
    elementwise::OPS,
    logic::OPS,
    reduce::OPS,
    constant::OPS,
    shape::OPS,
    indexing::OPS,
    nn::OPS,
    conv::OPS,
    norm::OPS,
    activation::OPS,
    composite::OPS,
    quantized::OPS,
    control::OPS,
];

/// The default domain's declarations by op type, each op's in opset order.
fn default_domain() -> &'static HashMap<&'static str, Vec<&'static OnnxOp>> {
    static TABLE: OnceLock<HashMap<&'static str, Vec<&'static OnnxOp>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: HashMap<&'static str, Vec<&'static OnnxOp>> = HashMap::new();
        for decl in FAMILIES.iter().flat_map(|f| f.iter()) {
            t.entry(decl.name).or_default().push(decl);
        }
        for versions in t.values_mut() {
            versions.sort_by_key(|d| d.since);
        }
        t
    })
}

/// The declaration that maps `op_type` of `domain` at `opset`. Below an
/// op's first opset its first declaration applies: the importer has
/// always mapped an op the model's opset predates (the schema check takes
/// the op's oldest version then).
pub(super) fn lookup(domain: &str, op_type: &str, opset: i64) -> Option<&'static OnnxOp> {
    if !domain.is_empty() {
        return None;
    }
    let versions = default_domain().get(op_type)?;
    versions
        .iter()
        .find(|d| d.covers(opset))
        .or_else(|| versions.first().filter(|d| opset < d.since))
        .copied()
}

/// Whether the importer maps `op_type` of `domain` at `opset` (to report
/// every unsupported op of a model before mapping any).
pub fn supports(domain: &str, op_type: &str, opset: i64) -> bool {
    lookup(domain, op_type, opset).is_some()
}

impl Importer {
    /// Maps one node: its declaration's converter, after the attribute
    /// types are checked.
    pub(super) fn map_node(&mut self, n: &crate::model::Node, name: &str) -> NResult<()> {
        if !n.domain.is_empty() {
            return unsupported(format!("domain `{}` is not supported", n.domain));
        }
        let Some(decl) = lookup(&n.domain, &n.op_type, self.opset) else {
            return unsupported(format!("no mapping for {}", n.op_type));
        };
        let b = Binder::new(n, name, self.opset, decl)?;
        (decl.convert)(self, &b)
    }
}

/// Where an op's integer list operand (axes, sizes) comes from: an
/// attribute in older opsets, a static input in newer ones.
#[derive(Clone, Copy)]
pub(super) enum IntsFrom {
    Attr(&'static str),
    Input(usize),
}

impl IntsFrom {
    pub(super) fn read(self, im: &Importer, n: &Binder) -> NResult<Option<Vec<i64>>> {
        match self {
            IntsFrom::Attr(key) => n.attr_ints(key),
            IntsFrom::Input(i) => im.static_ints_input(n, i),
        }
    }
}

/// A one-operand op on input 0.
pub(super) fn unary(im: &mut Importer, n: &Binder, op: OpKind) -> NResult<()> {
    let x = im.req(n, 0)?;
    let y = im.op(op, &[x], n.name)?;
    im.bind(n, &[Some(y)])
}

/// A two-operand op on inputs 0 and 1.
pub(super) fn binary(im: &mut Importer, n: &Binder, op: OpKind) -> NResult<()> {
    let a = im.req(n, 0)?;
    let b = im.req(n, 1)?;
    let y = im.op(op, &[a, b], n.name)?;
    im.bind(n, &[Some(y)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each op's declarations cover its opsets once each, from the first
    /// on, with no gap.
    #[test]
    fn opset_ranges_tile() {
        for (name, versions) in default_domain() {
            for w in versions.windows(2) {
                assert_eq!(
                    w[0].until.map(|u| u + 1),
                    Some(w[1].since),
                    "{name}: {}.. and {}.. do not meet",
                    w[0].since,
                    w[1].since
                );
            }
            let last = versions.last().expect("an op has a declaration");
            assert_eq!(last.until, None, "{name}: the newest range is open");
        }
    }

    /// Every declared attribute is one the operator has (in some version):
    /// a misspelt declaration would never see its attribute.
    #[test]
    fn declared_attributes_are_in_the_schema() {
        for (name, versions) in default_domain() {
            for decl in versions {
                for &(key, _) in decl.attrs {
                    let known = (1..=super::super::schema::MAX_OPSET).any(|o| {
                        super::super::operator_attributes(name, o)
                            .is_some_and(|(_, a)| a.contains(&key))
                    });
                    assert!(known, "{name}-{}: `{key}` is not in the schema", decl.since);
                }
            }
        }
    }

    #[test]
    fn lookup_picks_the_range() {
        assert_eq!(lookup("", "Clip", 6).map(|d| d.since), Some(1));
        assert_eq!(lookup("", "Clip", 13).map(|d| d.since), Some(11));
        assert_eq!(lookup("", "Gelu", 17).map(|d| d.since), Some(20));
        assert!(lookup("com.microsoft", "Gelu", 20).is_none());
        assert!(!supports("", "Acos", 22));
    }
}
