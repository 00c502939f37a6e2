//! The IR printer: custom forms driven by each op's declaration, MLIR's
//! generic form on request (or for unregistered ops), optional locations.
//! Output streams to a writer in chunks, so printing a huge module never
//! holds its whole text in memory.

use crate::context::{Block, Context, Op, Region, Value, ValueDef};
use crate::lexer::escape_into;
use crate::numeric;
use crate::opdef::Trait;
use crate::types::*;
use std::fmt::Write as _;

#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// Print every op in MLIR's generic form.
    pub generic: bool,
    /// Print `loc(...)` after ops and block arguments.
    pub debug_info: bool,
}

#[derive(Copy, Clone, Default)]
struct NameSlot {
    /// 0: unnamed, 1: `%N`, 2: `%argN`.
    kind: u8,
    num: u32,
    /// Result number for multi-result ops, `u32::MAX` otherwise.
    sub: u32,
}

pub struct Printer<'a> {
    pub cx: &'a Context,
    pub opts: PrintOptions,
    out: String,
    sink: Option<&'a mut dyn std::io::Write>,
    io_error: Option<std::io::Error>,
    indent: usize,
    names: Vec<NameSlot>,
    block_names: rustc_hash::FxHashMap<Block, u32>,
    default_dialects: Vec<&'static str>,
}

const FLUSH_AT: usize = 1 << 16;

impl<'a> Printer<'a> {
    pub fn new(cx: &'a Context, opts: PrintOptions) -> Self {
        Printer {
            cx,
            opts,
            out: String::new(),
            sink: None,
            io_error: None,
            indent: 0,
            names: Vec::new(),
            block_names: Default::default(),
            default_dialects: Vec::new(),
        }
    }

    /// A printer that writes its output to `sink` as it goes.
    pub fn with_sink(
        cx: &'a Context,
        opts: PrintOptions,
        sink: &'a mut dyn std::io::Write,
    ) -> Self {
        let mut p = Self::new(cx, opts);
        p.sink = Some(sink);
        p
    }

    /// Prints `op` (and everything nested) followed by a newline.
    pub fn print_top(&mut self, op: Op) -> std::io::Result<()> {
        self.number_values(op);
        // Ops printed alone still see the default dialect of their parent.
        let mut p = self.cx.parent_op(op);
        let mut defaults = Vec::new();
        while let Some(o) = p {
            if let Some(d) = self.cx.def(o).and_then(|d| d.default_dialect) {
                defaults.push(d);
            }
            p = self.cx.parent_op(o);
        }
        defaults.reverse();
        self.default_dialects = defaults;
        let _ = self.print_op(op);
        self.out.push('\n');
        if self.cx.resources.blobs.is_empty() || self.cx.parent_op(op).is_some() {
            return self.flush();
        }
        self.print_resources();
        self.flush()
    }

    /// Everything printed so far, when there is no sink.
    pub fn finish(self) -> String {
        self.out
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(sink) = self.sink.as_mut() {
            if self.io_error.is_none() {
                if let Err(e) = sink.write_all(self.out.as_bytes()) {
                    self.io_error = Some(e);
                }
            }
            self.out.clear();
        }
        match self.io_error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn maybe_flush(&mut self) {
        if self.out.len() >= FLUSH_AT && self.sink.is_some() {
            let _ = self.flush().map_err(|e| self.io_error = Some(e));
        }
    }

    fn print_resources(&mut self) {
        if self.cx.resources.side_file.is_some() {
            return;
        }
        self.out
            .push_str("\n{-#\n  dialect_resources: {\n    builtin: {\n");
        let n = self.cx.resources.blobs.len();
        for (i, (name, blob)) in self.cx.resources.blobs.iter().enumerate() {
            let _ = write!(self.out, "      {name}: \"0x");
            for b in blob.alignment.to_le_bytes().iter().chain(blob.data.iter()) {
                let _ = write!(self.out, "{b:02X}");
            }
            self.out.push('"');
            if i + 1 < n {
                self.out.push(',');
            }
            self.out.push('\n');
        }
        self.out.push_str("    }\n  }\n#-}\n");
    }

    // ---- naming ---------------------------------------------------------------

    fn number_values(&mut self, root: Op) {
        self.names = vec![NameSlot::default(); self.cx.value_capacity()];
        let mut stack: Vec<(Region, u32, u32)> = Vec::new();
        let (nv, na) = (0u32, 0u32);
        // The root's own results are named as in an enclosing scope.
        for (i, r) in self.cx.results(root).enumerate() {
            self.names[r.index()] = NameSlot {
                kind: 1,
                num: 0,
                sub: if self.cx.num_results(root) > 1 {
                    i as u32
                } else {
                    u32::MAX
                },
            };
        }
        let nv = nv + (self.cx.num_results(root) > 0) as u32;
        for r in self.cx.regions(root).rev() {
            stack.push((r, nv, na));
        }
        while let Some((region, mut nv, mut na)) = stack.pop() {
            if let Some(parent) = self.cx.region_parent_op(region) {
                // Names restart inside isolated ops. In the generic form, only for ops
                // upstream MLIR also knows to be isolated: to it, ours are unregistered
                // and must not shadow outer names.
                let restarts = self.cx.has_trait(parent, Trait::IsolatedFromAbove)
                    && (!self.opts.generic
                        || matches!(self.cx.name_str(parent), "builtin.module" | "func.func"));
                if restarts {
                    nv = 0;
                    na = 0;
                }
            }
            let blocks = self.cx.region_blocks(region);
            for (bi, &b) in blocks.iter().enumerate() {
                self.block_names.insert(b, bi as u32);
                for &a in self.cx.block_args(b) {
                    self.names[a.index()] = if bi == 0 {
                        na += 1;
                        NameSlot {
                            kind: 2,
                            num: na - 1,
                            sub: u32::MAX,
                        }
                    } else {
                        nv += 1;
                        NameSlot {
                            kind: 1,
                            num: nv - 1,
                            sub: u32::MAX,
                        }
                    };
                }
                for op in self.cx.block_ops(b) {
                    let n = self.cx.num_results(op);
                    if n == 0 {
                        continue;
                    }
                    for (i, r) in self.cx.results(op).enumerate() {
                        self.names[r.index()] = NameSlot {
                            kind: 1,
                            num: nv,
                            sub: if n > 1 { i as u32 } else { u32::MAX },
                        };
                    }
                    nv += 1;
                }
            }
            let mut nested = Vec::new();
            for &b in blocks {
                for op in self.cx.block_ops(b) {
                    nested.extend(self.cx.regions(op));
                }
            }
            for r in nested.into_iter().rev() {
                stack.push((r, nv, na));
            }
        }
    }

    // ---- primitives -------------------------------------------------------------

    pub fn write(&mut self, s: &str) {
        self.out.push_str(s);
    }
    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
    }

    pub fn print_value(&mut self, v: Value) {
        let slot = self.names.get(v.index()).copied().unwrap_or_default();
        match slot.kind {
            1 => {
                let _ = write!(self.out, "%{}", slot.num);
                if slot.sub != u32::MAX {
                    let _ = write!(self.out, "#{}", slot.sub);
                }
            }
            2 => {
                let _ = write!(self.out, "%arg{}", slot.num);
            }
            _ => self.out.push_str("<<UNKNOWN SSA VALUE>>"),
        }
    }

    pub fn print_values(&mut self, vs: &[Value]) {
        for (i, &v) in vs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.print_value(v);
        }
    }

    pub fn print_type(&mut self, t: Type) {
        write_type(self.cx, t, &mut self.out);
    }

    pub fn print_types(&mut self, ts: impl IntoIterator<Item = Type>) {
        for (i, t) in ts.into_iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.print_type(t);
        }
    }

    pub fn print_attr(&mut self, a: Attr) {
        write_attr(self.cx, a, &mut self.out);
    }

    pub fn print_symbol_name(&mut self, s: &str) {
        self.out.push('@');
        write_symbol(s, &mut self.out);
    }

    pub fn print_block_name(&mut self, b: Block) {
        let n = self.block_names.get(&b).copied().unwrap_or(u32::MAX);
        let _ = write!(self.out, "^bb{n}");
    }

    /// `%arg0: type` (with its location when printing debug info).
    pub fn print_arg_decl(&mut self, v: Value) {
        self.print_value(v);
        self.out.push_str(": ");
        self.print_type(self.cx.value_type(v));
        if self.opts.debug_info {
            self.out.push(' ');
            self.print_loc(self.cx.block_arg_loc(v));
        }
    }

    pub fn print_loc(&mut self, l: Loc) {
        self.out.push_str("loc(");
        write_loc_body(self.cx, l, &mut self.out);
        self.out.push(')');
    }

    /// ` {a = 1, b}` with the attributes of `op` not in `elided`; nothing if empty.
    pub fn print_attr_dict(&mut self, op: Op, elided: &[&str]) {
        self.print_attr_entries(op, elided, "");
    }

    /// ` attributes {a = 1}` with the attributes not in `elided`; nothing if empty.
    pub fn print_attr_dict_with_keyword(&mut self, op: Op, elided: &[&str]) {
        self.print_attr_entries(op, elided, " attributes");
    }

    fn print_attr_entries(&mut self, op: Op, elided: &[&str], keyword: &str) {
        let cx = self.cx;
        let entries: Vec<_> = cx
            .attr_entries(op)
            .iter()
            .filter(|(n, _)| !elided.contains(&cx.str(*n)))
            .collect();
        if entries.is_empty() {
            return;
        }
        self.out.push_str(keyword);
        self.out.push_str(" {");
        for (i, (n, a)) in entries.into_iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            write_dict_entry(cx, *n, *a, &mut self.out);
        }
        self.out.push('}');
    }

    /// `{ ... }` holding a region's blocks. `print_entry_args` prints the entry
    /// block's header when it has arguments; `print_empty_block` prints the
    /// header of an empty entry block so that the block survives a round trip.
    pub fn print_region(&mut self, r: Region, print_entry_args: bool, print_empty_block: bool) {
        self.out.push('{');
        let blocks = self.cx.region_blocks(r).to_vec();
        for (i, &b) in blocks.iter().enumerate() {
            let args = self.cx.block_args(b);
            let empty = self.cx.first_op(b).is_none();
            let header = i > 0
                || (print_entry_args && !args.is_empty())
                || (print_empty_block && empty && args.is_empty());
            if header {
                self.newline();
                self.print_block_name(b);
                let args = self.cx.block_args(b).to_vec();
                if !args.is_empty() {
                    self.out.push('(');
                    for (j, &a) in args.iter().enumerate() {
                        if j > 0 {
                            self.out.push_str(", ");
                        }
                        self.print_arg_decl(a);
                    }
                    self.out.push(')');
                }
                self.out.push(':');
            }
            self.indent += 1;
            let mut op = self.cx.first_op(b);
            while let Some(o) = op {
                self.newline();
                let _ = self.print_op(o);
                self.maybe_flush();
                op = self.cx.next_op(o);
            }
            self.indent -= 1;
        }
        self.newline();
        self.out.push('}');
    }

    // ---- operations -----------------------------------------------------------

    /// Prints one op (no leading indentation, no trailing newline).
    pub fn print_op(&mut self, op: Op) -> std::fmt::Result {
        let n = self.cx.num_results(op);
        if n > 0 {
            let first = self.cx.result(op, 0);
            let slot = self.names.get(first.index()).copied().unwrap_or_default();
            if slot.kind == 1 {
                let _ = write!(self.out, "%{}", slot.num);
            } else {
                self.out.push_str("<<UNKNOWN SSA VALUE>>");
            }
            if n > 1 {
                let _ = write!(self.out, ":{n}");
            }
            self.out.push_str(" = ");
        }
        let def = self.cx.def(op);
        let registry = self.cx.registry().clone();
        let custom = def.filter(|_| !self.opts.generic).and_then(|d| {
            if d.custom_assembly.is_some() {
                Some((d, None))
            } else {
                let id = registry.lookup(d.name)?;
                registry.format(id).map(|f| (d, Some(f)))
            }
        });
        match custom {
            Some((d, fmt)) => {
                let name = d.name;
                let short = match name.split_once('.') {
                    Some((dialect, rest)) if self.default_dialects.last() == Some(&dialect) => rest,
                    Some(("builtin", rest)) => rest,
                    _ => name,
                };
                self.out.push_str(short);
                if let Some(dd) = d.default_dialect {
                    self.default_dialects.push(dd);
                }
                let r = match (d.custom_assembly, fmt) {
                    (Some(c), _) => (c.print)(self, op),
                    (None, Some(f)) => crate::format::print_with_format(self, op, f),
                    (None, None) => Ok(()),
                };
                if d.default_dialect.is_some() {
                    self.default_dialects.pop();
                }
                r?;
            }
            None => self.print_generic(op),
        }
        if self.opts.debug_info {
            self.out.push(' ');
            self.print_loc(self.cx.op_loc(op));
        }
        Ok(())
    }

    fn print_generic(&mut self, op: Op) {
        let cx = self.cx;
        self.out.push('"');
        escape_into(cx.name_str(op).as_bytes(), &mut self.out);
        self.out.push_str("\"(");
        let operands = cx.operands(op).to_vec();
        self.print_values(&operands);
        self.out.push(')');
        let succs = cx.successors(op).to_vec();
        if !succs.is_empty() {
            self.out.push('[');
            for (i, &b) in succs.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.print_block_name(b);
            }
            self.out.push(']');
        }
        // Declared attributes are properties (`<{...}>`), the rest discardable.
        let def = cx.def(op);
        let (props, rest): (Vec<_>, Vec<_>) = cx
            .attr_entries(op)
            .iter()
            .partition(|(n, _)| def.is_some_and(|d| d.attribute(cx.str(*n)).is_some()));
        if !props.is_empty() {
            self.out.push_str(" <{");
            for (i, (n, a)) in props.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                write_dict_entry(cx, *n, *a, &mut self.out);
            }
            self.out.push_str("}>");
        }
        let nr = cx.num_regions(op);
        if nr > 0 {
            self.out.push_str(" (");
            let saved = std::mem::take(&mut self.default_dialects);
            for (i, r) in cx.regions(op).enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                self.print_region(r, true, true);
            }
            self.default_dialects = saved;
            self.out.push(')');
        }
        if !rest.is_empty() {
            self.out.push_str(" {");
            for (i, (n, a)) in rest.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                write_dict_entry(cx, *n, *a, &mut self.out);
            }
            self.out.push('}');
        }
        self.out.push_str(" : (");
        self.print_types(cx.operand_types(op));
        self.out.push_str(") -> ");
        let results: Vec<Type> = cx.result_types(op).collect();
        write_result_types(cx, &results, &mut self.out);
    }
}

/// `-> t` part of a function type: one type bare, otherwise parenthesised.
fn write_result_types(cx: &Context, results: &[Type], out: &mut String) {
    let bare = results.len() == 1 && !matches!(cx.type_kind(results[0]), TypeKind::Function { .. });
    if bare {
        write_type(cx, results[0], out);
    } else {
        out.push('(');
        for (i, &t) in results.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_type(cx, t, out);
        }
        out.push(')');
    }
}

pub fn type_to_string(cx: &Context, t: Type) -> String {
    let mut s = String::new();
    write_type(cx, t, &mut s);
    s
}

pub fn attr_to_string(cx: &Context, a: Attr) -> String {
    let mut s = String::new();
    write_attr(cx, a, &mut s);
    s
}

/// Prints `op` alone (generic or custom form) into a string.
pub fn op_to_string(cx: &Context, op: Op, opts: PrintOptions) -> String {
    let mut p = Printer::new(cx, opts);
    let _ = p.print_top(op);
    p.finish()
}

pub fn write_type(cx: &Context, t: Type, out: &mut String) {
    match cx.type_kind(t) {
        TypeKind::None => out.push_str("none"),
        TypeKind::Index => out.push_str("index"),
        TypeKind::F16 => out.push_str("f16"),
        TypeKind::BF16 => out.push_str("bf16"),
        TypeKind::F32 => out.push_str("f32"),
        TypeKind::F64 => out.push_str("f64"),
        TypeKind::F8E4M3FN => out.push_str("f8E4M3FN"),
        TypeKind::F8E5M2 => out.push_str("f8E5M2"),
        TypeKind::Integer {
            width: 64,
            signedness: Signedness::Signless,
        } => out.push_str("i64"),
        TypeKind::Integer { width, signedness } => {
            let prefix = match signedness {
                Signedness::Signless => "i",
                Signedness::Signed => "si",
                Signedness::Unsigned => "ui",
            };
            let _ = write!(out, "{prefix}{width}");
        }
        TypeKind::Tensor {
            shape,
            element,
            encoding,
        } => {
            out.push_str("tensor<");
            for &d in shape {
                if d == DYNAMIC {
                    out.push('?');
                } else {
                    let _ = write!(out, "{d}");
                }
                out.push('x');
            }
            write_type(cx, *element, out);
            if let Some(e) = encoding {
                out.push_str(", ");
                write_attr(cx, *e, out);
            }
            out.push('>');
        }
        TypeKind::Function { inputs, results } => {
            out.push('(');
            for (i, &t) in inputs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_type(cx, t, out);
            }
            out.push_str(") -> ");
            write_result_types(cx, results, out);
        }
        TypeKind::Opaque { dialect, body } => {
            out.push('!');
            out.push_str(cx.str(*dialect));
            out.push_str(body);
        }
    }
}

fn is_bare_identifier(s: &str) -> bool {
    let mut chars = s.bytes();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && chars.all(|c| c.is_ascii_alphanumeric() || b"_$.".contains(&c))
}

fn write_symbol(s: &str, out: &mut String) {
    if is_bare_identifier(s) {
        out.push_str(s);
    } else {
        out.push('"');
        escape_into(s.as_bytes(), out);
        out.push('"');
    }
}

fn write_dict_entry(cx: &Context, n: Sym, a: Attr, out: &mut String) {
    write_symbol(cx.str(n), out);
    if a != Attr::UNIT {
        out.push_str(" = ");
        write_attr(cx, a, out);
    }
}

/// A float in a form MLIR's lexer reads back to the same value of `kind`.
pub fn format_float(kind: &TypeKind, x: f64) -> String {
    if !x.is_finite() {
        let mut bytes = Vec::new();
        numeric::float_to_bytes(kind, x, &mut bytes);
        let mut s = String::from("0x");
        for b in bytes.iter().rev() {
            let _ = write!(s, "{b:02X}");
        }
        return s;
    }
    match kind {
        TypeKind::F64 => shortest(x),
        // Every value of the narrower types is an f32, so f32's shortest form round-trips.
        _ => shortest(x as f32),
    }
}

fn shortest<T: std::fmt::Display + std::fmt::LowerExp + Into<f64> + Copy>(x: T) -> String {
    let a = x.into().abs();
    let mut s = if a == 0.0 || (1e-4..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    };
    match s.find('e') {
        Some(e) if !s[..e].contains('.') => s.insert_str(e, ".0"),
        None if !s.contains('.') => s.push_str(".0"),
        _ => {}
    }
    s
}

pub fn write_attr(cx: &Context, a: Attr, out: &mut String) {
    match cx.attr_kind(a) {
        AttrKind::Unit => out.push_str("unit"),
        AttrKind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        AttrKind::Integer { value, ty } => {
            // i128 formatting is slow; almost every value fits an i64.
            match i64::try_from(*value) {
                Ok(v) => {
                    let _ = write!(out, "{v} : ");
                }
                Err(_) => {
                    let _ = write!(out, "{value} : ");
                }
            }
            write_type(cx, *ty, out);
        }
        AttrKind::Float { bits, ty } => {
            out.push_str(&format_float(cx.type_kind(*ty), f64::from_bits(*bits)));
            out.push_str(" : ");
            write_type(cx, *ty, out);
        }
        AttrKind::String(s) => {
            out.push('"');
            escape_into(s.as_bytes(), out);
            out.push('"');
        }
        AttrKind::Type(t) => write_type(cx, *t, out),
        AttrKind::Array(items) => {
            out.push('[');
            for (i, &it) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_attr(cx, it, out);
            }
            out.push(']');
        }
        AttrKind::I64Array(items) => {
            out.push_str("array<i64");
            for (i, v) in items.iter().enumerate() {
                out.push_str(if i == 0 { ": " } else { ", " });
                let _ = write!(out, "{v}");
            }
            out.push('>');
        }
        AttrKind::Dictionary(entries) => {
            out.push('{');
            for (i, (n, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_dict_entry(cx, *n, *v, out);
            }
            out.push('}');
        }
        AttrKind::SymbolRef { root, nested } => {
            out.push('@');
            write_symbol(cx.str(*root), out);
            for n in nested {
                out.push_str("::@");
                write_symbol(cx.str(*n), out);
            }
        }
        AttrKind::DenseElements { ty, data } => {
            out.push_str("dense<");
            write_dense(cx, *ty, data, out);
            out.push_str("> : ");
            write_type(cx, *ty, out);
        }
        AttrKind::DenseResource { ty, handle } => {
            out.push_str("dense_resource<");
            write_symbol(cx.str(*handle), out);
            out.push_str("> : ");
            write_type(cx, *ty, out);
        }
        AttrKind::Opaque { dialect, body } => {
            out.push('#');
            out.push_str(cx.str(*dialect));
            out.push_str(body);
        }
    }
}

/// Elements past this count print as one hex blob.
const HEX_ELEMENTS_ABOVE: usize = 256;

fn write_dense(cx: &Context, ty: Type, data: &DenseData, out: &mut String) {
    let Some((shape, elem)) = cx.tensor_parts(ty) else {
        return;
    };
    let ek = cx.type_kind(elem);
    let width = numeric::storage_bytes(ek).unwrap_or(1);
    // An empty tensor prints as `dense<>`, as MLIR prints it: nested
    // brackets would be one `[]` per row, however many rows its shape has.
    if shape.iter().any(|&d| d <= 0) {
        return;
    }
    let count = shape
        .iter()
        .fold(1usize, |a, &d| a.saturating_mul(d as usize));
    let element = |i: usize, out: &mut String| {
        let b = &data.bytes[i * width..(i + 1) * width];
        match ek {
            TypeKind::Integer {
                width: 1,
                signedness: Signedness::Signless,
            } => out.push_str(if b[0] != 0 { "true" } else { "false" }),
            TypeKind::Integer {
                width: w,
                signedness,
            } => {
                let mut buf = [0u8; 16];
                buf[..b.len()].copy_from_slice(b);
                let raw = i128::from_le_bytes(buf);
                let bits = *w as i128;
                let v = if *signedness == Signedness::Unsigned || bits >= 128 {
                    raw
                } else {
                    // Sign-extend from the element width.
                    (raw << (128 - bits)) >> (128 - bits)
                };
                let _ = write!(out, "{v}");
            }
            TypeKind::Index => {
                let _ = write!(
                    out,
                    "{}",
                    i64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
                );
            }
            k => out.push_str(&format_float(k, numeric::float_from_bytes(k, b))),
        }
    };
    if data.splat {
        element(0, out);
        return;
    }
    if count > HEX_ELEMENTS_ABOVE {
        out.push_str("\"0x");
        for b in data.bytes.iter() {
            let _ = write!(out, "{b:02X}");
        }
        out.push('"');
        return;
    }
    if shape.is_empty() {
        element(0, out);
        return;
    }
    // Nested brackets following the shape.
    fn rec(shape: &[i64], base: usize, out: &mut String, element: &dyn Fn(usize, &mut String)) {
        out.push('[');
        let inner: usize = shape[1..].iter().map(|&d| d.max(0) as usize).product();
        for i in 0..shape[0].max(0) as usize {
            if i > 0 {
                out.push_str(", ");
            }
            if shape.len() == 1 {
                element(base + i, out);
            } else {
                rec(&shape[1..], base + i * inner, out, element);
            }
        }
        out.push(']');
    }
    rec(shape, 0, out, &element);
}

pub fn write_loc_body(cx: &Context, l: Loc, out: &mut String) {
    match cx.loc_kind(l) {
        LocKind::Unknown => out.push_str("unknown"),
        LocKind::FileLineCol { file, line, col } => {
            out.push('"');
            escape_into(cx.str(*file).as_bytes(), out);
            let _ = write!(out, "\":{line}:{col}");
        }
        LocKind::Name { name, child } => {
            out.push('"');
            escape_into(cx.str(*name).as_bytes(), out);
            out.push('"');
            if *child != Loc::UNKNOWN {
                out.push('(');
                write_loc_body(cx, *child, out);
                out.push(')');
            }
        }
        LocKind::Fused { locs, metadata } => {
            out.push_str("fused");
            if let Some(m) = metadata {
                out.push('<');
                write_attr(cx, *m, out);
                out.push('>');
            }
            out.push('[');
            for (i, &x) in locs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_loc_body(cx, x, out);
            }
            out.push(']');
        }
        LocKind::CallSite { callee, caller } => {
            out.push_str("callsite(");
            write_loc_body(cx, *callee, out);
            out.push_str(" at ");
            write_loc_body(cx, *caller, out);
            out.push(')');
        }
    }
}

/// Whether `v` is a result (vs. a block argument); used by custom printers.
pub fn is_result(cx: &Context, v: Value) -> bool {
    matches!(cx.value_def(v), ValueDef::Result(..))
}
