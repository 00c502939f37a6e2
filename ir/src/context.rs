//! The IR store: interned types, attributes and locations, and dense arenas
//! of operations, blocks, regions and SSA values addressed by `u32` ids.
//!
//! Operations within a block form an intrusive doubly-linked list, so insertion
//! and erasure are O(1); every value keeps its use list, so replacing all uses
//! is proportional to the number of uses.

use crate::intern::{Interner, StrInterner};
use crate::opdef::{OpDef, OpDefId, Registry, Trait};
use crate::types::*;
use smallvec::SmallVec;
use std::sync::Arc;

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Op(pub(crate) u32);
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Block(pub(crate) u32);
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Region(pub(crate) u32);
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Value(pub(crate) u32);
/// An interned operation name (`dialect.op`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct OpName(pub(crate) u32);

const NONE: u32 = u32::MAX;

impl Op {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl Value {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl Block {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl Region {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a value is defined.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ValueDef {
    Result(Op, u32),
    BlockArg(Block, u32),
}

/// One use of a value: operand `index` of `op`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Use {
    pub op: Op,
    pub index: u32,
}

pub(crate) struct OpData {
    pub(crate) name: OpName,
    pub(crate) operands: SmallVec<[Value; 3]>,
    pub(crate) first_result: u32,
    pub(crate) num_results: u32,
    pub(crate) first_region: u32,
    pub(crate) num_regions: u32,
    pub(crate) successors: Box<[Block]>,
    pub(crate) attrs: Attr,
    pub(crate) loc: Loc,
    pub(crate) parent: u32,
    pub(crate) prev: u32,
    pub(crate) next: u32,
    pub(crate) erased: bool,
}

pub(crate) struct ValueData {
    pub(crate) ty: Type,
    pub(crate) def: ValueDef,
    pub(crate) uses: SmallVec<[Use; 1]>,
}

pub(crate) struct BlockData {
    pub(crate) args: Vec<Value>,
    pub(crate) first: u32,
    pub(crate) last: u32,
    pub(crate) parent: u32,
}

pub(crate) struct RegionData {
    pub(crate) blocks: Vec<Block>,
    pub(crate) parent: u32,
}

struct OpNameData {
    name: Sym,
    def: Option<OpDefId>,
}

/// Everything needed to create an operation.
pub struct OperationState {
    pub name: OpName,
    pub loc: Loc,
    pub operands: SmallVec<[Value; 3]>,
    pub result_types: SmallVec<[Type; 2]>,
    pub attrs: Attr,
    pub num_regions: u32,
    pub successors: Vec<Block>,
}

impl OperationState {
    pub fn new(name: OpName, loc: Loc) -> Self {
        OperationState {
            name,
            loc,
            operands: SmallVec::new(),
            result_types: SmallVec::new(),
            attrs: Attr::EMPTY_DICT,
            num_regions: 0,
            successors: Vec::new(),
        }
    }
}

/// Owner of all IR: the interners, the registry and the op/block/region/value arenas.
pub struct Context {
    registry: Arc<Registry>,
    strs: StrInterner,
    types: Interner<TypeKind>,
    attrs: Interner<AttrKind>,
    locs: Interner<LocKind>,
    op_names: Vec<OpNameData>,
    op_name_by_sym: rustc_hash::FxHashMap<Sym, OpName>,
    pub(crate) ops: Vec<OpData>,
    pub(crate) values: Vec<ValueData>,
    pub(crate) blocks: Vec<BlockData>,
    pub(crate) regions: Vec<RegionData>,
    /// Named blobs referenced by `dense_resource<name>` attributes.
    pub resources: crate::resources::ResourceTable,
    arg_locs: rustc_hash::FxHashMap<Value, Loc>,
    /// Warnings and remarks emitted by passes, drained by the tool that runs them.
    pub diagnostics: Vec<crate::diag::Diagnostic>,
    /// Accept ops of dialects the registry does not know.
    pub allow_unregistered: bool,
}

impl Context {
    pub fn new(registry: Arc<Registry>) -> Context {
        let mut cx = Context {
            registry,
            strs: StrInterner::new(),
            types: Interner::new(),
            attrs: Interner::new(),
            locs: Interner::new(),
            op_names: Vec::new(),
            op_name_by_sym: Default::default(),
            ops: Vec::new(),
            values: Vec::new(),
            blocks: Vec::new(),
            regions: Vec::new(),
            resources: Default::default(),
            arg_locs: Default::default(),
            diagnostics: Vec::new(),
            allow_unregistered: false,
        };
        for (i, t) in preinterned_types().into_iter().enumerate() {
            let id = cx.types.intern(t);
            debug_assert_eq!(id as usize, i);
        }
        debug_assert_eq!(Type::PREINTERNED, preinterned_types().len());
        for (i, a) in preinterned_attrs().into_iter().enumerate() {
            let id = cx.attrs.intern(a);
            debug_assert_eq!(id as usize, i);
        }
        debug_assert_eq!(Attr::PREINTERNED, preinterned_attrs().len());
        cx.locs.intern(LocKind::Unknown);
        cx
    }

    /// Room for about `ops` more operations (their results and locations)
    /// without growing the arenas: a parser reserves one per line, so a
    /// large file's arenas are allocated once instead of doubling (each
    /// doubling copies the arena and leaves the old one to the heap).
    pub fn reserve_ops(&mut self, ops: usize) {
        self.ops.reserve(ops);
        self.values.reserve(ops);
        self.locs.reserve(ops);
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    // ---- interning -------------------------------------------------------

    pub fn sym(&mut self, s: &str) -> Sym {
        Sym(self.strs.intern(s))
    }
    pub fn lookup_sym(&self, s: &str) -> Option<Sym> {
        self.strs.lookup(s).map(Sym)
    }
    pub fn str(&self, s: Sym) -> &str {
        self.strs.get(s.0)
    }
    pub fn ty(&mut self, kind: TypeKind) -> Type {
        Type(self.types.intern(kind))
    }
    pub fn type_kind(&self, t: Type) -> &TypeKind {
        self.types.get(t.0)
    }
    pub fn attr(&mut self, kind: AttrKind) -> Attr {
        Attr(self.attrs.intern(kind))
    }
    pub fn attr_kind(&self, a: Attr) -> &AttrKind {
        self.attrs.get(a.0)
    }
    /// A `dense_resource` attribute of type `ty` whose elements are `bytes`,
    /// held as the blob `name` (64-byte aligned) of the resource table; a
    /// blob of that name already there is replaced, so callers pick unused
    /// names.
    pub fn resource_attr(&mut self, name: &str, ty: Type, bytes: &[u8]) -> Attr {
        self.resources.insert(
            name,
            crate::resources::Blob {
                alignment: 64,
                data: bytes.into(),
            },
        );
        let handle = self.sym(name);
        self.attr(AttrKind::DenseResource { ty, handle })
    }
    pub fn loc(&mut self, kind: LocKind) -> Loc {
        Loc(self.locs.intern(kind))
    }
    pub fn loc_kind(&self, l: Loc) -> &LocKind {
        self.locs.get(l.0)
    }

    pub fn integer_type(&mut self, width: u32) -> Type {
        self.ty(TypeKind::Integer {
            width,
            signedness: Signedness::Signless,
        })
    }
    pub fn tensor_type(&mut self, shape: &[i64], element: Type) -> Type {
        self.ty(TypeKind::Tensor {
            shape: shape.into(),
            element,
            encoding: None,
        })
    }
    pub fn function_type(&mut self, inputs: Vec<Type>, results: Vec<Type>) -> Type {
        self.ty(TypeKind::Function { inputs, results })
    }
    pub fn int_attr(&mut self, value: i128, ty: Type) -> Attr {
        self.attr(AttrKind::Integer { value, ty })
    }
    pub fn i64_attr(&mut self, value: i64) -> Attr {
        self.int_attr(value as i128, Type::I64)
    }
    pub fn float_attr(&mut self, value: f64, ty: Type) -> Attr {
        let rounded = crate::numeric::round_to_float_type(self.type_kind(ty), value);
        self.attr(AttrKind::Float {
            bits: rounded.to_bits(),
            ty,
        })
    }
    pub fn string_attr(&mut self, s: &str) -> Attr {
        self.attr(AttrKind::String(s.into()))
    }
    pub fn bool_attr(&mut self, b: bool) -> Attr {
        if b {
            Attr::TRUE
        } else {
            Attr::FALSE
        }
    }
    pub fn type_attr(&mut self, t: Type) -> Attr {
        self.attr(AttrKind::Type(t))
    }
    pub fn i64_array_attr(&mut self, items: Vec<i64>) -> Attr {
        self.attr(AttrKind::I64Array(items))
    }
    pub fn get_i64_array_attr(&self, op: Op, name: &str) -> Option<&[i64]> {
        match self.attr_kind(self.get_attr(op, name)?) {
            AttrKind::I64Array(v) => Some(v),
            _ => None,
        }
    }
    pub fn array_attr(&mut self, items: Vec<Attr>) -> Attr {
        self.attr(AttrKind::Array(items))
    }
    pub fn symbol_ref_attr(&mut self, name: &str) -> Attr {
        let root = self.sym(name);
        self.attr(AttrKind::SymbolRef {
            root,
            nested: Vec::new(),
        })
    }
    /// A dictionary from entries in any order; later duplicates win.
    pub fn dict_attr(&mut self, mut entries: Vec<(Sym, Attr)>) -> Attr {
        if entries.is_empty() {
            return Attr::EMPTY_DICT;
        }
        // Stable sort keeps the last duplicate last; dedup keeps the first, so reverse first.
        entries.reverse();
        entries.sort_by(|a, b| self.str(a.0).cmp(self.str(b.0)));
        entries.dedup_by_key(|e| e.0);
        self.attr(AttrKind::Dictionary(entries))
    }
    pub fn file_loc(&mut self, file: &str, line: u32, col: u32) -> Loc {
        let file = self.sym(file);
        self.loc(LocKind::FileLineCol { file, line, col })
    }
    pub fn name_loc(&mut self, name: &str, child: Loc) -> Loc {
        let name = self.sym(name);
        self.loc(LocKind::Name { name, child })
    }
    pub fn fused_loc(&mut self, mut locs: Vec<Loc>) -> Loc {
        locs.dedup();
        locs.retain(|l| *l != Loc::UNKNOWN);
        match locs.len() {
            0 => Loc::UNKNOWN,
            1 => locs[0],
            _ => self.loc(LocKind::Fused {
                locs,
                metadata: None,
            }),
        }
    }

    /// The shape of a tensor-typed value (empty for other values).
    pub fn value_shape(&self, v: Value) -> Vec<i64> {
        self.tensor_parts(self.value_type(v))
            .map(|(s, _)| s.to_vec())
            .unwrap_or_default()
    }

    /// Element type and shape of a tensor type.
    pub fn tensor_parts(&self, t: Type) -> Option<(&[i64], Type)> {
        match self.type_kind(t) {
            TypeKind::Tensor { shape, element, .. } => Some((shape, *element)),
            _ => None,
        }
    }

    // ---- op names --------------------------------------------------------

    pub fn op_name(&mut self, name: &str) -> OpName {
        let sym = self.sym(name);
        if let Some(&n) = self.op_name_by_sym.get(&sym) {
            return n;
        }
        let def = self.registry.lookup(name);
        let id = OpName(self.op_names.len() as u32);
        self.op_names.push(OpNameData { name: sym, def });
        self.op_name_by_sym.insert(sym, id);
        id
    }
    pub fn op_name_str(&self, name: OpName) -> &str {
        self.str(self.op_names[name.0 as usize].name)
    }
    pub fn op_name_def(&self, name: OpName) -> Option<&'static OpDef> {
        self.op_names[name.0 as usize]
            .def
            .map(|d| self.registry.def(d))
    }
    pub(crate) fn op_name_def_id(&self, name: OpName) -> Option<OpDefId> {
        self.op_names[name.0 as usize].def
    }

    // ---- ops -------------------------------------------------------------

    pub fn create_op(&mut self, state: OperationState) -> Op {
        let op = Op(self.ops.len() as u32);
        let first_result = self.values.len() as u32;
        for (i, &ty) in state.result_types.iter().enumerate() {
            self.values.push(ValueData {
                ty,
                def: ValueDef::Result(op, i as u32),
                uses: SmallVec::new(),
            });
        }
        let first_region = self.regions.len() as u32;
        for _ in 0..state.num_regions {
            self.regions.push(RegionData {
                blocks: Vec::new(),
                parent: op.0,
            });
        }
        for (i, &v) in state.operands.iter().enumerate() {
            self.values[v.index()].uses.push(Use {
                op,
                index: i as u32,
            });
        }
        self.ops.push(OpData {
            name: state.name,
            operands: state.operands,
            first_result,
            num_results: state.result_types.len() as u32,
            first_region,
            num_regions: state.num_regions,
            successors: state.successors.into_boxed_slice(),
            attrs: state.attrs,
            loc: state.loc,
            parent: NONE,
            prev: NONE,
            next: NONE,
            erased: false,
        });
        op
    }

    pub(crate) fn opd(&self, op: Op) -> &OpData {
        &self.ops[op.index()]
    }

    pub fn name(&self, op: Op) -> OpName {
        self.opd(op).name
    }
    pub fn name_str(&self, op: Op) -> &str {
        self.op_name_str(self.opd(op).name)
    }
    pub fn def(&self, op: Op) -> Option<&'static OpDef> {
        self.op_name_def(self.opd(op).name)
    }
    pub fn is(&self, op: Op, name: &str) -> bool {
        self.name_str(op) == name
    }
    pub fn has_trait(&self, op: Op, t: Trait) -> bool {
        self.def(op).is_some_and(|d| d.has_trait(t))
    }
    pub fn is_registered(&self, op: Op) -> bool {
        self.op_name_def_id(self.opd(op).name).is_some()
    }
    pub fn op_loc(&self, op: Op) -> Loc {
        self.opd(op).loc
    }
    pub fn set_op_loc(&mut self, op: Op, loc: Loc) {
        self.ops[op.index()].loc = loc;
    }
    pub fn is_erased(&self, op: Op) -> bool {
        self.opd(op).erased
    }

    pub fn operands(&self, op: Op) -> &[Value] {
        &self.opd(op).operands
    }
    pub fn operand(&self, op: Op, i: usize) -> Value {
        self.opd(op).operands[i]
    }
    pub fn set_operand(&mut self, op: Op, i: usize, v: Value) {
        let old = self.ops[op.index()].operands[i];
        if old == v {
            return;
        }
        self.remove_use(old, op, i as u32);
        self.ops[op.index()].operands[i] = v;
        self.values[v.index()].uses.push(Use {
            op,
            index: i as u32,
        });
    }
    pub fn set_operands(&mut self, op: Op, operands: &[Value]) {
        let old = std::mem::take(&mut self.ops[op.index()].operands);
        for (i, v) in old.iter().enumerate() {
            self.remove_use(*v, op, i as u32);
        }
        for (i, &v) in operands.iter().enumerate() {
            self.values[v.index()].uses.push(Use {
                op,
                index: i as u32,
            });
        }
        self.ops[op.index()].operands = operands.into();
    }
    fn remove_use(&mut self, v: Value, op: Op, index: u32) {
        let uses = &mut self.values[v.index()].uses;
        if let Some(pos) = uses.iter().position(|u| u.op == op && u.index == index) {
            uses.swap_remove(pos);
        }
    }

    pub fn num_results(&self, op: Op) -> usize {
        self.opd(op).num_results as usize
    }
    pub fn result(&self, op: Op, i: usize) -> Value {
        debug_assert!(i < self.num_results(op));
        Value(self.opd(op).first_result + i as u32)
    }
    pub fn results(
        &self,
        op: Op,
    ) -> impl DoubleEndedIterator<Item = Value> + ExactSizeIterator + Clone {
        let d = self.opd(op);
        (d.first_result..d.first_result + d.num_results).map(Value)
    }
    pub fn result_types(&self, op: Op) -> impl ExactSizeIterator<Item = Type> + '_ {
        self.results(op).map(|v| self.value_type(v))
    }
    pub fn operand_types(&self, op: Op) -> impl ExactSizeIterator<Item = Type> + '_ {
        self.operands(op).iter().map(|&v| self.value_type(v))
    }

    pub fn num_regions(&self, op: Op) -> usize {
        self.opd(op).num_regions as usize
    }
    pub fn region(&self, op: Op, i: usize) -> Region {
        debug_assert!(i < self.num_regions(op));
        Region(self.opd(op).first_region + i as u32)
    }
    pub fn regions(
        &self,
        op: Op,
    ) -> impl DoubleEndedIterator<Item = Region> + ExactSizeIterator + Clone {
        let d = self.opd(op);
        (d.first_region..d.first_region + d.num_regions).map(Region)
    }
    pub fn successors(&self, op: Op) -> &[Block] {
        &self.opd(op).successors
    }
    pub fn set_successor(&mut self, op: Op, i: usize, b: Block) {
        self.ops[op.index()].successors[i] = b;
    }

    pub fn attrs(&self, op: Op) -> Attr {
        self.opd(op).attrs
    }
    pub fn attr_entries(&self, op: Op) -> &[(Sym, Attr)] {
        match self.attr_kind(self.opd(op).attrs) {
            AttrKind::Dictionary(e) => e,
            _ => &[],
        }
    }
    pub fn set_attrs(&mut self, op: Op, dict: Attr) {
        debug_assert!(matches!(self.attr_kind(dict), AttrKind::Dictionary(_)));
        self.ops[op.index()].attrs = dict;
    }
    pub fn get_attr(&self, op: Op, name: &str) -> Option<Attr> {
        let sym = self.lookup_sym(name)?;
        self.attr_entries(op)
            .iter()
            .find(|(n, _)| *n == sym)
            .map(|e| e.1)
    }
    pub fn set_attr(&mut self, op: Op, name: &str, value: Attr) {
        let sym = self.sym(name);
        let mut entries = self.attr_entries(op).to_vec();
        match entries.iter_mut().find(|(n, _)| *n == sym) {
            Some(e) => e.1 = value,
            None => entries.push((sym, value)),
        }
        let dict = self.dict_attr(entries);
        self.set_attrs(op, dict);
    }
    pub fn remove_attr(&mut self, op: Op, name: &str) -> Option<Attr> {
        let old = self.get_attr(op, name)?;
        let sym = self.lookup_sym(name)?;
        let entries: Vec<_> = self
            .attr_entries(op)
            .iter()
            .copied()
            .filter(|(n, _)| *n != sym)
            .collect();
        let dict = self.dict_attr(entries);
        self.set_attrs(op, dict);
        Some(old)
    }
    pub fn get_str_attr(&self, op: Op, name: &str) -> Option<&str> {
        match self.attr_kind(self.get_attr(op, name)?) {
            AttrKind::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn get_int_attr(&self, op: Op, name: &str) -> Option<i128> {
        match self.attr_kind(self.get_attr(op, name)?) {
            AttrKind::Integer { value, .. } => Some(*value),
            _ => None,
        }
    }

    // ---- structure -------------------------------------------------------

    pub fn parent_block(&self, op: Op) -> Option<Block> {
        let p = self.opd(op).parent;
        (p != NONE).then_some(Block(p))
    }
    pub fn parent_op(&self, op: Op) -> Option<Op> {
        let b = self.parent_block(op)?;
        self.block_parent_op(b)
    }
    pub fn next_op(&self, op: Op) -> Option<Op> {
        let n = self.opd(op).next;
        (n != NONE).then_some(Op(n))
    }
    pub fn prev_op(&self, op: Op) -> Option<Op> {
        let n = self.opd(op).prev;
        (n != NONE).then_some(Op(n))
    }
    pub fn block_parent_region(&self, b: Block) -> Option<Region> {
        let p = self.blocks[b.index()].parent;
        (p != NONE).then_some(Region(p))
    }
    pub fn block_parent_op(&self, b: Block) -> Option<Op> {
        self.block_parent_region(b)
            .and_then(|r| self.region_parent_op(r))
    }
    pub fn region_parent_op(&self, r: Region) -> Option<Op> {
        let p = self.regions[r.index()].parent;
        (p != NONE).then_some(Op(p))
    }
    pub fn region_blocks(&self, r: Region) -> &[Block] {
        &self.regions[r.index()].blocks
    }
    pub fn region_is_empty(&self, r: Region) -> bool {
        self.regions[r.index()].blocks.is_empty()
    }
    pub fn entry_block(&self, r: Region) -> Option<Block> {
        self.regions[r.index()].blocks.first().copied()
    }
    pub fn block_args(&self, b: Block) -> &[Value] {
        &self.blocks[b.index()].args
    }
    pub fn first_op(&self, b: Block) -> Option<Op> {
        let f = self.blocks[b.index()].first;
        (f != NONE).then_some(Op(f))
    }
    pub fn last_op(&self, b: Block) -> Option<Op> {
        let f = self.blocks[b.index()].last;
        (f != NONE).then_some(Op(f))
    }
    pub fn block_ops(&self, b: Block) -> BlockOps<'_> {
        BlockOps {
            cx: self,
            next: self.blocks[b.index()].first,
        }
    }
    /// Ops of a block, collected so the block may be mutated while iterating.
    pub fn block_ops_vec(&self, b: Block) -> Vec<Op> {
        self.block_ops(b).collect()
    }

    /// Appends a new block with arguments of the given types and locations.
    pub fn create_block(&mut self, region: Region, arg_types: &[(Type, Loc)]) -> Block {
        let b = self.create_detached_block(arg_types);
        self.append_block(region, b);
        b
    }
    pub fn create_detached_block(&mut self, arg_types: &[(Type, Loc)]) -> Block {
        let b = Block(self.blocks.len() as u32);
        self.blocks.push(BlockData {
            args: Vec::with_capacity(arg_types.len()),
            first: NONE,
            last: NONE,
            parent: NONE,
        });
        for &(ty, loc) in arg_types {
            self.add_block_arg(b, ty, loc);
        }
        b
    }
    pub fn append_block(&mut self, region: Region, b: Block) {
        self.blocks[b.index()].parent = region.0;
        self.regions[region.index()].blocks.push(b);
    }
    pub fn add_block_arg(&mut self, b: Block, ty: Type, loc: Loc) -> Value {
        let v = Value(self.values.len() as u32);
        let idx = self.blocks[b.index()].args.len() as u32;
        self.values.push(ValueData {
            ty,
            def: ValueDef::BlockArg(b, idx),
            uses: SmallVec::new(),
        });
        self.blocks[b.index()].args.push(v);
        self.arg_locs.insert(v, loc);
        v
    }
    pub fn set_block_arg_loc(&mut self, v: Value, loc: Loc) {
        self.arg_locs.insert(v, loc);
    }
    pub fn block_arg_loc(&self, v: Value) -> Loc {
        self.arg_locs.get(&v).copied().unwrap_or(Loc::UNKNOWN)
    }

    /// Appends a detached op at the end of `block`.
    pub fn append_op(&mut self, block: Block, op: Op) {
        debug_assert_eq!(self.opd(op).parent, NONE);
        let last = self.blocks[block.index()].last;
        {
            let d = &mut self.ops[op.index()];
            d.parent = block.0;
            d.prev = last;
            d.next = NONE;
        }
        if last == NONE {
            self.blocks[block.index()].first = op.0;
        } else {
            self.ops[last as usize].next = op.0;
        }
        self.blocks[block.index()].last = op.0;
    }
    /// Inserts a detached op right before `before`.
    pub fn insert_op_before(&mut self, before: Op, op: Op) {
        let block = self.opd(before).parent;
        let prev = self.opd(before).prev;
        {
            let d = &mut self.ops[op.index()];
            d.parent = block;
            d.prev = prev;
            d.next = before.0;
        }
        self.ops[before.index()].prev = op.0;
        if prev == NONE {
            self.blocks[block as usize].first = op.0;
        } else {
            self.ops[prev as usize].next = op.0;
        }
    }
    /// Inserts a detached op at the start of `block`.
    pub fn prepend_op(&mut self, block: Block, op: Op) {
        match self.first_op(block) {
            Some(first) => self.insert_op_before(first, op),
            None => self.append_op(block, op),
        }
    }
    /// Unlinks an op from its block, keeping it and its uses alive.
    pub fn detach_op(&mut self, op: Op) {
        let d = self.opd(op);
        let (parent, prev, next) = (d.parent, d.prev, d.next);
        if parent == NONE {
            return;
        }
        if prev == NONE {
            self.blocks[parent as usize].first = next;
        } else {
            self.ops[prev as usize].next = next;
        }
        if next == NONE {
            self.blocks[parent as usize].last = prev;
        } else {
            self.ops[next as usize].prev = prev;
        }
        let d = &mut self.ops[op.index()];
        d.parent = NONE;
        d.prev = NONE;
        d.next = NONE;
    }
    /// Erases an op and everything nested in it. Its results must be unused
    /// by ops outside it.
    pub fn erase_op(&mut self, op: Op) {
        self.detach_op(op);
        let mut stack = vec![op];
        let mut all = Vec::new();
        while let Some(o) = stack.pop() {
            all.push(o);
            for r in self.regions(o) {
                for &b in self.region_blocks(r) {
                    stack.extend(self.block_ops(b));
                }
            }
        }
        for o in all {
            let operands = std::mem::take(&mut self.ops[o.index()].operands);
            for (i, v) in operands.iter().enumerate() {
                self.remove_use(*v, o, i as u32);
            }
            self.ops[o.index()].erased = true;
        }
    }

    pub fn value_type(&self, v: Value) -> Type {
        self.values[v.index()].ty
    }
    pub fn set_value_type(&mut self, v: Value, ty: Type) {
        self.values[v.index()].ty = ty;
    }
    pub fn value_def(&self, v: Value) -> ValueDef {
        self.values[v.index()].def
    }
    pub fn defining_op(&self, v: Value) -> Option<Op> {
        match self.value_def(v) {
            ValueDef::Result(op, _) => Some(op),
            ValueDef::BlockArg(..) => None,
        }
    }
    pub fn uses(&self, v: Value) -> &[Use] {
        &self.values[v.index()].uses
    }
    pub fn has_uses(&self, v: Value) -> bool {
        !self.values[v.index()].uses.is_empty()
    }
    pub fn replace_all_uses(&mut self, from: Value, to: Value) {
        if from == to {
            return;
        }
        let uses = std::mem::take(&mut self.values[from.index()].uses);
        for u in &uses {
            self.ops[u.op.index()].operands[u.index as usize] = to;
        }
        self.values[to.index()].uses.extend(uses);
    }
    /// Replaces every result of `op` with `values` and erases `op`.
    pub fn replace_op(&mut self, op: Op, values: &[Value]) {
        let results: Vec<Value> = self.results(op).collect();
        debug_assert_eq!(results.len(), values.len());
        for (r, &v) in results.iter().zip(values) {
            self.replace_all_uses(*r, v);
        }
        self.erase_op(op);
    }
    /// The block that defines `v` (its parent block for a result).
    pub fn value_block(&self, v: Value) -> Option<Block> {
        match self.value_def(v) {
            ValueDef::Result(op, _) => self.parent_block(op),
            ValueDef::BlockArg(b, _) => Some(b),
        }
    }

    /// True when `op` is `ancestor` or nested inside it.
    pub fn is_ancestor(&self, ancestor: Op, mut op: Op) -> bool {
        loop {
            if op == ancestor {
                return true;
            }
            match self.parent_op(op) {
                Some(p) => op = p,
                None => return false,
            }
        }
    }

    /// Visits `root` and every op nested in it, parents before children.
    pub fn walk_preorder(&self, root: Op, f: &mut impl FnMut(Op)) {
        f(root);
        for r in self.regions(root) {
            for &b in self.region_blocks(r) {
                for op in self.block_ops(b) {
                    self.walk_preorder(op, f);
                }
            }
        }
    }
    /// Every op nested in `root` and `root` itself, children before parents.
    pub fn collect_postorder(&self, root: Op) -> Vec<Op> {
        let mut out = Vec::new();
        self.postorder_into(root, &mut out);
        out
    }
    fn postorder_into(&self, root: Op, out: &mut Vec<Op>) {
        for r in self.regions(root) {
            for &b in self.region_blocks(r) {
                for op in self.block_ops(b) {
                    self.postorder_into(op, out);
                }
            }
        }
        out.push(root);
    }
    /// Ops directly inside the regions of `op`.
    pub fn nested_ops(&self, op: Op) -> Vec<Op> {
        let mut out = Vec::new();
        for r in self.regions(op) {
            for &b in self.region_blocks(r) {
                out.extend(self.block_ops(b));
            }
        }
        out
    }
    /// The op that owns the symbol table `op` sits in.
    pub fn nearest_symbol_table(&self, mut op: Op) -> Option<Op> {
        loop {
            op = self.parent_op(op)?;
            if self.has_trait(op, Trait::SymbolTable) {
                return Some(op);
            }
        }
    }
    /// Finds the op with `sym_name == name` directly inside symbol table `table`.
    pub fn lookup_symbol(&self, table: Op, name: &str) -> Option<Op> {
        self.nested_ops(table)
            .into_iter()
            .find(|&o| self.get_str_attr(o, "sym_name") == Some(name))
    }
    /// Number of ops ever created (erased ones included); ids are below this.
    pub fn op_capacity(&self) -> usize {
        self.ops.len()
    }
    pub fn value_capacity(&self) -> usize {
        self.values.len()
    }
}

pub struct BlockOps<'a> {
    cx: &'a Context,
    next: u32,
}

impl Iterator for BlockOps<'_> {
    type Item = Op;
    fn next(&mut self) -> Option<Op> {
        if self.next == NONE {
            return None;
        }
        let op = Op(self.next);
        self.next = self.cx.ops[op.index()].next;
        Some(op)
    }
}
