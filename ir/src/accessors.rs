//! Typed op views: one declaration gives an op its [`OpDef`] and a typed
//! accessor struct, as MLIR's ODS gives every op `getLhs()` and
//! `getAxisAttr()`, so passes never read attributes or compare op names by
//! string key.
//!
//! [`declare_op!`](crate::declare_op) takes the op's operands and
//! attributes once: their names become both the `OpDef`'s operand and
//! attribute names (which the assembly format, parser and verifier use) and
//! the accessors' names, so the two cannot drift. For
//!
//! ```ignore
//! declare_op! {
//!     pub static SOFTMAX: Softmax = "nn.softmax" {
//!         operands: [input: TENSOR],
//!         attributes: [axis: i64 [I64_ATTR]],
//!         summary: "Softmax along `axis`.",
//!         results: RESULT,
//!     }
//! }
//! ```
//!
//! the view is `Softmax(Op)` with `Softmax::cast(cx, op) -> Option<Softmax>`
//! (the one place its name is compared), `input(cx) -> Value` and
//! `axis(cx) -> i64`. An attribute's Rust type says how it is read
//! ([`AttrValue`]): `bool` is a flag (absent: false), `Option<T>` an optional
//! attribute, `= default` an optional one with a default; the others are
//! required. Accessors read verified ops: the verifier has already checked
//! every declared attribute against its constraint, so a required attribute
//! that is missing or of another kind is a bug in a pass, not an input error.

use crate::context::{Context, Op};
use crate::types::{Attr, AttrKind, Sym, Type};

/// What every typed view is: generic code (a matcher over several ops)
/// takes the view type as a parameter, `fn inner<V: OpView>(..) -> Option<V>`.
pub trait OpView: Copy {
    /// The op's name.
    const NAME: &'static str;
    /// The view of `op`, which the caller has checked is this op.
    fn wrap(op: Op) -> Self;
    fn op(self) -> Op;
    /// The view of `op` if it is this op.
    fn cast(cx: &Context, op: Op) -> Option<Self> {
        (cx.name_str(op) == Self::NAME).then(|| Self::wrap(op))
    }
}

/// How an attribute of a declared op is read into a Rust value.
pub trait AttrValue<'a>: Sized {
    /// Whether the op may leave the attribute out (the `OpDef`'s `optional`).
    const OPTIONAL: bool = false;
    /// The value of a present attribute; `None` if it is of another kind.
    fn from_attr(cx: &'a Context, a: Attr) -> Option<Self>;
    /// The value of an absent attribute, for types that have one.
    fn absent() -> Option<Self> {
        None
    }
}

impl<'a> AttrValue<'a> for Attr {
    fn from_attr(_: &'a Context, a: Attr) -> Option<Self> {
        Some(a)
    }
}

impl<'a> AttrValue<'a> for i64 {
    fn from_attr(cx: &'a Context, a: Attr) -> Option<Self> {
        match cx.attr_kind(a) {
            AttrKind::Integer { value, .. } => i64::try_from(*value).ok(),
            _ => None,
        }
    }
}

impl<'a> AttrValue<'a> for f64 {
    fn from_attr(cx: &'a Context, a: Attr) -> Option<Self> {
        match cx.attr_kind(a) {
            AttrKind::Float { bits, .. } => Some(f64::from_bits(*bits)),
            _ => None,
        }
    }
}

impl<'a> AttrValue<'a> for f32 {
    fn from_attr(cx: &'a Context, a: Attr) -> Option<Self> {
        f64::from_attr(cx, a).map(|v| v as f32)
    }
}

/// A flag: present (unit, or `true`) or absent; `false` counts as absent.
impl<'a> AttrValue<'a> for bool {
    const OPTIONAL: bool = true;
    fn from_attr(_: &'a Context, a: Attr) -> Option<Self> {
        Some(a != Attr::FALSE)
    }
    fn absent() -> Option<Self> {
        Some(false)
    }
}

impl<'a> AttrValue<'a> for &'a str {
    fn from_attr(cx: &'a Context, a: Attr) -> Option<Self> {
        match cx.attr_kind(a) {
            AttrKind::String(s) => Some(s),
            _ => None,
        }
    }
}

impl<'a> AttrValue<'a> for &'a [i64] {
    fn from_attr(cx: &'a Context, a: Attr) -> Option<Self> {
        match cx.attr_kind(a) {
            AttrKind::I64Array(v) => Some(v),
            _ => None,
        }
    }
}

/// A type attribute's type.
impl<'a> AttrValue<'a> for Type {
    fn from_attr(cx: &'a Context, a: Attr) -> Option<Self> {
        match cx.attr_kind(a) {
            AttrKind::Type(t) => Some(*t),
            _ => None,
        }
    }
}

/// A flat symbol reference's name.
impl<'a> AttrValue<'a> for Sym {
    fn from_attr(cx: &'a Context, a: Attr) -> Option<Self> {
        match cx.attr_kind(a) {
            AttrKind::SymbolRef { root, nested } if nested.is_empty() => Some(*root),
            _ => None,
        }
    }
}

impl<'a, T: AttrValue<'a>> AttrValue<'a> for Option<T> {
    const OPTIONAL: bool = true;
    fn from_attr(cx: &'a Context, a: Attr) -> Option<Self> {
        T::from_attr(cx, a).map(Some)
    }
    fn absent() -> Option<Self> {
        Some(None)
    }
}

/// A declared attribute's value, `None` only when it is missing or of
/// another kind than declared (an op the verifier has not passed).
pub fn read<'a, T: AttrValue<'a>>(cx: &'a Context, op: Op, name: &str) -> Option<T> {
    match cx.get_attr(op, name) {
        Some(a) => T::from_attr(cx, a),
        None => T::absent(),
    }
}

/// A required attribute a verified op lacks: a bug in whatever made the op.
#[cold]
pub fn malformed(cx: &Context, op: Op, name: &str) -> ! {
    panic!(
        "'{}' has no valid attribute '{name}': typed accessors read verified ops",
        cx.name_str(op)
    )
}

/// Declares an op once: its [`OpDef`](crate::opdef::OpDef) static and its
/// typed view (see the [module docs](crate::accessors)).
///
/// - `operands: [a: C, b: C]` single operands with their type constraints,
///   then optionally `variadic: [rest: C]`, a variadic group after them;
/// - `attributes: [name: T [constraint]]`, `name: T [constraint] = default`,
///   and `rust_name = "ir-name": T [constraint]` for a name that is a Rust
///   keyword (`fn`, `type`);
/// - every other `OpDef` field as `field: value`.
#[macro_export]
macro_rules! declare_op {
    (
        $(#[$meta:meta])*
        $vis:vis static $stat:ident : $view:ident = $name:literal {
            operands: [ $($opnd:ident : $oc:expr),* $(,)? ],
            $(variadic: [ $var:ident : $vc:expr $(,)? ],)?
            attributes: [ $( $attr:ident $(= $aname:literal)? : $aty:ty [ $ac:expr ] $(= $def:expr)? ),* $(,)? ],
            $($field:ident : $value:expr),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis static $stat: $crate::opdef::OpDef = $crate::opdef::OpDef {
            name: $name,
            operands: &[
                $($crate::opdef::ValueDef {
                    name: stringify!($opnd),
                    arity: $crate::opdef::Arity::Single,
                    constraint: $oc,
                },)*
                $($crate::opdef::ValueDef {
                    name: stringify!($var),
                    arity: $crate::opdef::Arity::Variadic,
                    constraint: $vc,
                },)?
            ],
            attributes: &[
                $($crate::opdef::AttrDef {
                    name: $crate::__attr_name!($attr $(, $aname)?),
                    optional: $crate::__attr_optional!($aty $(, $def)?),
                    constraint: $ac,
                },)*
            ],
            $($field: $value,)*
            ..$crate::opdef::OpDef::EMPTY
        };

        #[doc = concat!("Typed view of a `", $name, "` op ([`", stringify!($stat), "`]).")]
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        $vis struct $view(pub $crate::context::Op);

        impl $crate::accessors::OpView for $view {
            const NAME: &'static str = $name;
            fn wrap(op: $crate::context::Op) -> Self {
                Self(op)
            }
            fn op(self) -> $crate::context::Op {
                self.0
            }
        }

        #[allow(dead_code)]
        impl $view {
            /// The op's name.
            pub const NAME: &'static str = $name;
            /// How many operands precede the variadic group, if any.
            const SINGLE_OPERANDS: usize = $crate::__count!($($opnd)*);

            /// The op's declaration.
            pub fn def() -> &'static $crate::opdef::OpDef {
                &$stat
            }

            /// The view of `op` if it is this op.
            #[allow(clippy::self_named_constructors)]
            pub fn cast(cx: &$crate::context::Context, op: $crate::context::Op) -> Option<Self> {
                Self::isa(cx, op).then_some(Self(op))
            }

            /// Whether `op` is this op.
            pub fn isa(cx: &$crate::context::Context, op: $crate::context::Op) -> bool {
                cx.name_str(op) == $name
            }

            pub fn op(self) -> $crate::context::Op {
                self.0
            }

            $crate::__operand_getters!(0usize; $($opnd),*);

            $(
                /// The variadic operand group.
                pub fn $var(self, cx: &$crate::context::Context) -> &[$crate::context::Value] {
                    &cx.operands(self.0)[Self::SINGLE_OPERANDS..]
                }
            )?

            $(
                pub fn $attr(self, cx: &$crate::context::Context) -> $aty {
                    let name = $crate::__attr_name!($attr $(, $aname)?);
                    $crate::__attr_read!(cx, self.0, name, $aty $(, $def)?)
                        .unwrap_or_else(|| $crate::accessors::malformed(cx, self.0, name))
                }
            )*
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __attr_name {
    ($attr:ident) => {
        stringify!($attr)
    };
    ($attr:ident, $name:literal) => {
        $name
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __attr_optional {
    ($ty:ty) => {
        <$ty as $crate::accessors::AttrValue<'static>>::OPTIONAL
    };
    ($ty:ty, $def:expr) => {
        true
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __attr_read {
    ($cx:expr, $op:expr, $name:expr, $ty:ty) => {
        $crate::accessors::read::<$ty>($cx, $op, $name)
    };
    ($cx:expr, $op:expr, $name:expr, $ty:ty, $def:expr) => {
        match $cx.get_attr($op, $name) {
            Some(a) => <$ty as $crate::accessors::AttrValue<'_>>::from_attr($cx, a),
            None => Some($def),
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __count {
    () => {
        0usize
    };
    ($first:ident $($rest:ident)*) => {
        1usize + $crate::__count!($($rest)*)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __operand_getters {
    ($i:expr;) => {};
    ($i:expr; $first:ident $(, $rest:ident)*) => {
        pub fn $first(self, cx: &$crate::context::Context) -> $crate::context::Value {
            cx.operand(self.0, $i)
        }
        $crate::__operand_getters!($i + 1; $($rest),*);
    };
}

#[cfg(test)]
mod tests {
    use crate::context::{Context, OperationState};
    use crate::opdef::{constraints, Arity, Dialect, Registry};
    use crate::types::{Attr, Type};
    use std::sync::Arc;

    crate::declare_op! {
        pub static PROBE: Probe = "acc.probe" {
            operands: [lhs: constraints::ANY_TYPE, rhs: constraints::ANY_TYPE],
            variadic: [rest: constraints::ANY_TYPE],
            attributes: [
                axis: i64 [constraints::INTEGER_ATTR],
                ty = "type": Option<Type> [constraints::ANY_ATTR],
                flag: bool [constraints::ANY_ATTR],
                mode: &str [constraints::STRING_ATTR] = "constant",
                dims: &[i64] [constraints::ANY_ATTR],
            ],
            summary: "An op exercising every kind of accessor.",
        }
    }

    static ACC: Dialect = Dialect {
        name: "acc",
        description: "",
        ops: &[&PROBE],
        materialize_constant: None,
    };

    #[test]
    fn one_declaration_names_the_opdef_and_the_accessors() {
        let names: Vec<_> = PROBE.operands.iter().map(|o| (o.name, o.arity)).collect();
        assert_eq!(
            names,
            [
                ("lhs", Arity::Single),
                ("rhs", Arity::Single),
                ("rest", Arity::Variadic)
            ]
        );
        let attrs: Vec<_> = PROBE
            .attributes
            .iter()
            .map(|a| (a.name, a.optional))
            .collect();
        assert_eq!(
            attrs,
            [
                ("axis", false),
                ("type", true),
                ("flag", true),
                ("mode", true),
                ("dims", false)
            ]
        );

        let mut registry = Registry::new();
        registry.register_dialect(&ACC);
        let mut cx = Context::new(Arc::new(registry));
        let loc = cx.file_loc("t", 1, 1);
        let b = cx.create_detached_block(&[(Type::F32, loc), (Type::I64, loc), (Type::I1, loc)]);
        let args = cx.block_args(b).to_vec();
        let mut st = OperationState::new(cx.op_name("acc.probe"), loc);
        st.operands.extend_from_slice(&args);
        let (axis, dims) = (cx.i64_attr(-3), cx.i64_array_attr(vec![1, 2]));
        let entries = vec![
            (cx.sym("axis"), axis),
            (cx.sym("dims"), dims),
            (cx.sym("flag"), Attr::UNIT),
        ];
        st.attrs = cx.dict_attr(entries);
        let op = cx.create_op(st);

        let p = Probe::cast(&cx, op).expect("an acc.probe");
        assert_eq!((p.lhs(&cx), p.rhs(&cx)), (args[0], args[1]));
        assert_eq!(p.rest(&cx), &args[2..]);
        assert_eq!(p.axis(&cx), -3);
        assert_eq!(p.ty(&cx), None);
        assert!(p.flag(&cx));
        assert_eq!(p.mode(&cx), "constant");
        assert_eq!(p.dims(&cx), &[1, 2]);
        let t = cx.type_attr(Type::F16);
        cx.set_attr(op, "type", t);
        assert_eq!(Probe(op).ty(&cx), Some(Type::F16));
        cx.set_attr(op, "flag", Attr::FALSE);
        assert!(!Probe(op).flag(&cx));
    }
}
