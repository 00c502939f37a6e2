//! The IR parser: MLIR's generic operation form for every op, each
//! registered op's custom form (declarative format or hand-written hook),
//! types, attributes, locations, aliases and the resource section.
//!
//! Names are resolved per region scope; forward references become
//! placeholders that the definition replaces. Every error is a
//! [`Diagnostic`] at the offending token; the parser never panics.

use crate::context::{Block, Context, Op, OpName, OperationState, Value};
use crate::diag::Diagnostic;
use crate::lexer::{unescape, Lexer, Tok, Token};
use crate::numeric;
use crate::opdef::{OpDef, Trait};
use crate::resources::Blob;
use crate::types::*;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

pub type PResult<T> = Result<T, Diagnostic>;

const PLACEHOLDER_OP: &str = "builtin.unresolved_forward_reference";

#[derive(Copy, Clone)]
struct ValueEntry {
    first: Value,
    count: u32,
    /// Set for forward references not yet defined.
    placeholder: bool,
    /// Where it was first used (placeholders) or defined.
    pos: u32,
}

#[derive(Copy, Clone)]
struct BlockEntry {
    block: Block,
    defined: bool,
    pos: u32,
}

struct Scope<'s> {
    values: FxHashMap<&'s str, ValueEntry>,
    isolated: bool,
}

struct RegionScope<'s> {
    blocks: FxHashMap<&'s str, BlockEntry>,
}

/// A reference to an SSA value as written: `%name` or `%name#3`.
#[derive(Copy, Clone, Debug)]
pub struct OperandRef<'s> {
    pub name: &'s str,
    pub index: u32,
    pub pos: u32,
}

pub struct Parser<'s, 'c> {
    pub cx: &'c mut Context,
    lex: Lexer<'s>,
    tok: Token,
    src: &'s str,
    file: Sym,
    line_starts: Vec<u32>,
    /// Lines of the file before `src` (a `--split-input-file` chunk starts at a later line).
    first_line: u32,
    scopes: Vec<Scope<'s>>,
    region_scopes: Vec<RegionScope<'s>>,
    attr_aliases: FxHashMap<&'s str, Attr>,
    type_aliases: FxHashMap<&'s str, Type>,
    loc_aliases: FxHashMap<&'s str, Loc>,
    /// Ops and block arguments whose `loc(#alias)` names an alias defined later.
    deferred_locs: Vec<(DeferredLoc, &'s str, u32)>,
    default_dialects: Vec<&'static str>,
    /// Current nesting of regions, attributes, types and locations.
    depth: u32,
}

/// Deepest nesting accepted, so that recursion stays far from the stack's end.
pub const MAX_NESTING: u32 = 128;

#[derive(Copy, Clone)]
enum DeferredLoc {
    Op(Op),
    Arg(Value),
}

/// Parses a whole source buffer into a `builtin.module`, wrapping top-level
/// ops in one when the buffer does not hold exactly one module.
pub fn parse_source(cx: &mut Context, filename: &str, src: &str) -> PResult<Op> {
    Parser::new(cx, filename, src).parse_top_level()
}

/// [`parse_source`] of a part of a file that starts after its first
/// `first_line` lines: locations count lines of the whole file.
pub fn parse_source_at(
    cx: &mut Context,
    filename: &str,
    src: &str,
    first_line: u32,
) -> PResult<Op> {
    let mut p = Parser::new(cx, filename, src);
    p.first_line = first_line;
    p.parse_top_level()
}

/// Parses a type from text (for tools and tests).
pub fn parse_type(cx: &mut Context, src: &str) -> PResult<Type> {
    let mut p = Parser::new(cx, "<type>", src);
    let t = p.parse_type()?;
    p.expect_eof()?;
    Ok(t)
}

/// Parses an attribute from text (for tools and tests).
pub fn parse_attribute(cx: &mut Context, src: &str) -> PResult<Attr> {
    let mut p = Parser::new(cx, "<attribute>", src);
    let a = p.parse_attribute()?;
    p.expect_eof()?;
    Ok(a)
}

impl<'s, 'c> Parser<'s, 'c> {
    pub fn new(cx: &'c mut Context, filename: &str, src: &'s str) -> Self {
        let mut lex = Lexer::new(src);
        let tok = lex.next_token();
        let file = cx.sym(filename);
        let mut line_starts = vec![0u32];
        line_starts.extend(
            src.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        cx.reserve_ops(line_starts.len());
        Parser {
            cx,
            lex,
            tok,
            src,
            file,
            line_starts,
            first_line: 0,
            scopes: vec![Scope {
                values: FxHashMap::default(),
                isolated: true,
            }],
            region_scopes: vec![RegionScope {
                blocks: FxHashMap::default(),
            }],
            attr_aliases: FxHashMap::default(),
            type_aliases: FxHashMap::default(),
            loc_aliases: FxHashMap::default(),
            deferred_locs: Vec::new(),
            default_dialects: Vec::new(),
            depth: 0,
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(
                self.error_here(format!("nesting is deeper than the limit of {MAX_NESTING}"))
            );
        }
        Ok(())
    }

    // ---- tokens and locations -------------------------------------------

    pub(crate) fn bump(&mut self) -> Token {
        let t = self.tok;
        self.tok = self.lex.next_token();
        t
    }
    fn text(&self, t: Token) -> &'s str {
        &self.src[t.start as usize..t.end as usize]
    }
    pub(crate) fn cur_text(&self) -> &'s str {
        self.text(self.tok)
    }
    pub fn peek(&self) -> Tok {
        self.tok.kind
    }
    /// The location of byte offset `pos`.
    pub fn loc_at(&mut self, pos: u32) -> Loc {
        let line = match self.line_starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let col = pos - self.line_starts[line] + 1;
        self.cx.loc(LocKind::FileLineCol {
            file: self.file,
            line: self.first_line + line as u32 + 1,
            col,
        })
    }
    pub fn cur_loc(&mut self) -> Loc {
        self.loc_at(self.tok.start)
    }
    pub fn error_here(&mut self, msg: impl Into<String>) -> Diagnostic {
        let loc = self.cur_loc();
        Diagnostic::error(loc, msg)
    }
    fn error_at(&mut self, pos: u32, msg: impl Into<String>) -> Diagnostic {
        let loc = self.loc_at(pos);
        Diagnostic::error(loc, msg)
    }
    fn expected(&mut self, what: &str) -> Diagnostic {
        let found = match self.tok.kind {
            Tok::Eof => "end of file".to_string(),
            Tok::Error => format!("invalid character '{}'", self.cur_text()),
            _ => format!("'{}'", self.cur_text()),
        };
        self.error_here(format!("expected {what}, found {found}"))
    }
    pub fn consume_if(&mut self, k: Tok) -> bool {
        if self.tok.kind == k {
            self.bump();
            true
        } else {
            false
        }
    }
    pub fn expect(&mut self, k: Tok) -> PResult<Token> {
        if self.tok.kind == k {
            Ok(self.bump())
        } else {
            Err(self.expected(k.describe()))
        }
    }
    pub fn expect_eof(&mut self) -> PResult<()> {
        if self.tok.kind == Tok::Eof {
            Ok(())
        } else {
            Err(self.expected("end of input"))
        }
    }
    /// Consumes keyword `kw` if it is next.
    pub fn consume_keyword(&mut self, kw: &str) -> bool {
        if self.tok.kind == Tok::BareId && self.cur_text() == kw {
            self.bump();
            true
        } else {
            false
        }
    }
    pub fn expect_keyword(&mut self, kw: &str) -> PResult<()> {
        if self.consume_keyword(kw) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{kw}'")))
        }
    }
    /// Consumes a literal of a declarative format: punctuation or keyword.
    pub fn expect_literal(&mut self, lit: &str) -> PResult<()> {
        if self.consume_literal(lit) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{lit}'")))
        }
    }
    pub fn consume_literal(&mut self, lit: &str) -> bool {
        if self.tok.kind != Tok::Eof && self.cur_text() == lit {
            self.bump();
            true
        } else {
            false
        }
    }
    pub fn parse_string(&mut self) -> PResult<String> {
        if self.tok.kind != Tok::String {
            return Err(self.expected("string"));
        }
        let t = self.bump();
        let body = &self.text(t)[1..(t.end - t.start) as usize - 1];
        let bytes = unescape(body).map_err(|e| self.error_at(t.start, e))?;
        String::from_utf8(bytes).map_err(|_| self.error_at(t.start, "string is not valid UTF-8"))
    }
    pub fn parse_bare_id(&mut self) -> PResult<&'s str> {
        if self.tok.kind != Tok::BareId {
            return Err(self.expected("identifier"));
        }
        let t = self.bump();
        Ok(self.text(t))
    }
    /// `@name` or `@"name"`, returned without the `@`.
    pub fn parse_symbol_name(&mut self) -> PResult<String> {
        if self.tok.kind != Tok::SymbolRef {
            return Err(self.expected("symbol name"));
        }
        let t = self.bump();
        let text = &self.text(t)[1..];
        if let Some(body) = text.strip_prefix('"') {
            let bytes = unescape(&body[..body.len() - 1]).map_err(|e| self.error_at(t.start, e))?;
            String::from_utf8(bytes).map_err(|_| self.error_at(t.start, "symbol is not UTF-8"))
        } else {
            Ok(text.to_string())
        }
    }

    fn parse_integer_token(&mut self, negative: bool) -> PResult<i128> {
        let t = self.expect(Tok::Integer)?;
        let text = self.text(t);
        let v = if let Some(hex) = text.strip_prefix("0x") {
            i128::from_str_radix(hex, 16)
        } else {
            text.parse::<i128>()
        };
        let v = v.map_err(|_| self.error_at(t.start, "integer literal is too large"))?;
        Ok(if negative { -v } else { v })
    }

    /// An integer literal, optionally negative.
    pub fn parse_integer(&mut self) -> PResult<i64> {
        let start = self.tok.start;
        let neg = self.consume_if(Tok::Minus);
        let v = self.parse_integer_token(neg)?;
        i64::try_from(v).map_err(|_| self.error_at(start, "integer does not fit in 64 bits"))
    }

    // ---- top level --------------------------------------------------------

    fn parse_top_level(mut self) -> PResult<Op> {
        let top = self.cx.create_detached_block(&[]);
        while self.tok.kind != Tok::Eof {
            match self.tok.kind {
                Tok::HashId => self.parse_attr_alias_def()?,
                Tok::BangId => self.parse_type_alias_def()?,
                Tok::FileMetadataBegin => self.parse_file_metadata()?,
                _ => {
                    let op = self.parse_operation()?;
                    self.cx.append_op(top, op);
                }
            }
        }
        self.finish_scope(0)?;
        self.check_region_blocks()?;
        let ops = self.cx.block_ops_vec(top);
        let module = if ops.len() == 1 && self.cx.is(ops[0], "builtin.module") {
            self.cx.detach_op(ops[0]);
            ops[0]
        } else {
            // An implicit module sits where its first op starts.
            let loc = match ops.first() {
                Some(&first) => self.cx.op_loc(first),
                None => self.loc_at(0),
            };
            let module = crate::builtin::create_module(self.cx, loc);
            let body = self
                .cx
                .entry_block(self.cx.region(module, 0))
                .expect("module body");
            for op in ops {
                self.cx.detach_op(op);
                self.cx.append_op(body, op);
            }
            module
        };
        for (target, name, pos) in std::mem::take(&mut self.deferred_locs) {
            let Some(&loc) = self.loc_aliases.get(name) else {
                return Err(self.error_at(pos, format!("undefined location alias '#{name}'")));
            };
            match target {
                DeferredLoc::Op(op) => self.cx.set_op_loc(op, loc),
                DeferredLoc::Arg(v) => self.cx.set_block_arg_loc(v, loc),
            }
        }
        Ok(module)
    }

    fn parse_attr_alias_def(&mut self) -> PResult<()> {
        let t = self.bump();
        let name = &self.text(t)[1..];
        if name.contains('.') {
            return Err(self.error_at(t.start, "attribute alias names may not contain '.'"));
        }
        self.expect(Tok::Equal)?;
        if self.attr_aliases.contains_key(name) || self.loc_aliases.contains_key(name) {
            return Err(self.error_at(
                t.start,
                format!("redefinition of attribute alias '#{name}'"),
            ));
        }
        if self.tok.kind == Tok::BareId && self.cur_text() == "loc" {
            let loc = self.parse_trailing_loc_body()?;
            self.loc_aliases.insert(name, loc);
        } else {
            let a = self.parse_attribute()?;
            self.attr_aliases.insert(name, a);
        }
        Ok(())
    }

    fn parse_type_alias_def(&mut self) -> PResult<()> {
        let t = self.bump();
        let name = &self.text(t)[1..];
        if name.contains('.') {
            return Err(self.error_at(t.start, "type alias names may not contain '.'"));
        }
        self.expect(Tok::Equal)?;
        let ty = self.parse_type()?;
        if self.type_aliases.insert(name, ty).is_some() {
            return Err(self.error_at(t.start, format!("redefinition of type alias '!{name}'")));
        }
        Ok(())
    }

    /// `{-# dialect_resources: { builtin: { name: "0x..." } } #-}`
    fn parse_file_metadata(&mut self) -> PResult<()> {
        self.bump();
        loop {
            let key = self.parse_bare_id()?;
            self.expect(Tok::Colon)?;
            self.expect(Tok::LBrace)?;
            let is_dialect = key == "dialect_resources";
            if !is_dialect && key != "external_resources" {
                return Err(self.error_here(format!("unknown file metadata key '{key}'")));
            }
            while self.tok.kind != Tok::RBrace {
                let _dialect = self.parse_bare_id()?;
                self.expect(Tok::Colon)?;
                self.expect(Tok::LBrace)?;
                while self.tok.kind != Tok::RBrace {
                    let name_tok = self.tok;
                    let name = match self.tok.kind {
                        Tok::BareId => self.parse_bare_id()?.to_string(),
                        Tok::String => self.parse_string()?,
                        _ => return Err(self.expected("resource name")),
                    };
                    self.expect(Tok::Colon)?;
                    let value = self.parse_string()?;
                    if is_dialect {
                        let blob =
                            decode_blob(&value).map_err(|e| self.error_at(name_tok.start, e))?;
                        self.cx.resources.insert(&name, blob);
                    }
                    if !self.consume_if(Tok::Comma) {
                        break;
                    }
                }
                self.expect(Tok::RBrace)?;
                if !self.consume_if(Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::RBrace)?;
            if !self.consume_if(Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::FileMetadataEnd)?;
        Ok(())
    }

    // ---- scopes -----------------------------------------------------------

    fn push_scope(&mut self, isolated: bool) {
        self.scopes.push(Scope {
            values: FxHashMap::default(),
            isolated,
        });
    }

    /// Pops scopes down to `depth`, reporting forward references never defined.
    fn finish_scope(&mut self, depth: usize) -> PResult<()> {
        while self.scopes.len() > depth {
            let scope = self.scopes.pop().expect("scope");
            let mut missing: Vec<_> = scope
                .values
                .iter()
                .filter(|(_, e)| e.placeholder)
                .map(|(n, e)| (e.pos, *n))
                .collect();
            missing.sort();
            if let Some(&(pos, name)) = missing.first() {
                return Err(
                    self.error_at(pos, format!("use of undeclared SSA value name '{name}'"))
                );
            }
            if depth == 0 {
                break;
            }
        }
        Ok(())
    }

    fn lookup_value(&self, name: &str) -> Option<ValueEntry> {
        for s in self.scopes.iter().rev() {
            if let Some(e) = s.values.get(name) {
                return Some(*e);
            }
            if s.isolated {
                break;
            }
        }
        None
    }

    /// Resolves a use of `%name#index` with the type the user expects.
    pub fn resolve_operand(&mut self, r: OperandRef<'s>, ty: Type) -> PResult<Value> {
        let v = match self.lookup_value(r.name) {
            Some(e) => {
                if r.index >= e.count {
                    return Err(self.error_at(
                        r.pos,
                        format!(
                            "reference to invalid result number: '{}#{}' ({} results)",
                            r.name, r.index, e.count
                        ),
                    ));
                }
                Value(e.first.0 + r.index)
            }
            None => {
                if r.index > 0 {
                    return Err(self.error_at(
                        r.pos,
                        format!(
                            "forward reference '{}#{}' with a result number is not supported",
                            r.name, r.index
                        ),
                    ));
                }
                // Forward reference: a placeholder the definition will replace.
                let name = self.cx.op_name(PLACEHOLDER_OP);
                let loc = self.loc_at(r.pos);
                let mut st = OperationState::new(name, loc);
                st.result_types.push(ty);
                let ph = self.cx.create_op(st);
                let v = self.cx.result(ph, 0);
                let scope = self.scopes.last_mut().expect("scope");
                scope.values.insert(
                    r.name,
                    ValueEntry {
                        first: v,
                        count: 1,
                        placeholder: true,
                        pos: r.pos,
                    },
                );
                v
            }
        };
        let actual = self.cx.value_type(v);
        if actual != ty {
            let (a, b) = (
                crate::printer::type_to_string(self.cx, ty),
                crate::printer::type_to_string(self.cx, actual),
            );
            return Err(self.error_at(
                r.pos,
                format!(
                    "use of value '{}' expects different type than prior uses: '{a}' vs '{b}'",
                    r.name
                ),
            ));
        }
        Ok(v)
    }

    /// Binds `name` to `count` values starting at `first` in the innermost scope.
    fn define_values(&mut self, name: &'s str, first: Value, count: u32, pos: u32) -> PResult<()> {
        let existing = self.scopes.last().and_then(|s| s.values.get(name).copied());
        if let Some(e) = existing {
            if !e.placeholder {
                return Err(self
                    .error_at(pos, format!("redefinition of SSA value '{name}'"))
                    .with_note_at(self, e.pos, "previously defined here"));
            }
            if count != 1 && e.count == 1 {
                // A forward reference can only name result 0; fine as long as types agree.
            }
            let (ty_ph, ty_def) = (self.cx.value_type(e.first), self.cx.value_type(first));
            if ty_ph != ty_def {
                let (a, b) = (
                    crate::printer::type_to_string(self.cx, ty_def),
                    crate::printer::type_to_string(self.cx, ty_ph),
                );
                return Err(self.error_at(
                    pos,
                    format!("definition of SSA value '{name}#0' has type '{a}', but it was used as '{b}'"),
                ));
            }
            let ph_op = self.cx.defining_op(e.first).expect("placeholder op");
            self.cx.replace_all_uses(e.first, first);
            self.cx.erase_op(ph_op);
        } else {
            // A use in an enclosing scope's placeholder could also be this name: MLIR
            // resolves forward references region-locally, and so do we.
        }
        let scope = self.scopes.last_mut().expect("scope");
        scope.values.insert(
            name,
            ValueEntry {
                first,
                count,
                placeholder: false,
                pos,
            },
        );
        Ok(())
    }

    fn block_ref(&mut self, name: &'s str, pos: u32) -> Block {
        let rs = self.region_scopes.last_mut().expect("region scope");
        if let Some(e) = rs.blocks.get(name) {
            return e.block;
        }
        let b = self.cx.create_detached_block(&[]);
        let rs = self.region_scopes.last_mut().expect("region scope");
        rs.blocks.insert(
            name,
            BlockEntry {
                block: b,
                defined: false,
                pos,
            },
        );
        b
    }

    fn check_region_blocks(&mut self) -> PResult<()> {
        let rs = self.region_scopes.pop().expect("region scope");
        let mut undefined: Vec<_> = rs
            .blocks
            .iter()
            .filter(|(_, e)| !e.defined)
            .map(|(n, e)| (e.pos, *n))
            .collect();
        undefined.sort();
        if let Some(&(pos, name)) = undefined.first() {
            return Err(self.error_at(pos, format!("reference to an undefined block '{name}'")));
        }
        Ok(())
    }

    // ---- operations -------------------------------------------------------

    /// Parses one operation (with its result bindings and trailing location).
    pub fn parse_operation(&mut self) -> PResult<Op> {
        let start = self.tok.start;
        let loc = self.loc_at(start);
        let mut bindings: SmallVec<[(&'s str, u32, u32); 2]> = SmallVec::new();
        let mut num_bound = 0u32;
        if self.tok.kind == Tok::ValueId {
            loop {
                let t = self.expect(Tok::ValueId)?;
                let name = self.text(t);
                if name.contains('#') {
                    return Err(
                        self.error_at(t.start, "result names may not carry a result number")
                    );
                }
                let mut count = 1;
                if self.consume_if(Tok::Colon) {
                    let n = self.parse_integer_token(false)?;
                    if n < 1 || n > u32::MAX as i128 {
                        return Err(self.error_at(t.start, "expected a positive result count"));
                    }
                    count = n as u32;
                }
                bindings.push((name, count, t.start));
                num_bound += count;
                if !self.consume_if(Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::Equal)?;
        }
        let op = match self.tok.kind {
            Tok::String => self.parse_generic_op(loc)?,
            Tok::BareId => self.parse_custom_op(loc)?,
            _ => return Err(self.expected("operation name")),
        };
        if !bindings.is_empty() {
            let n = self.cx.num_results(op) as u32;
            if n != num_bound {
                return Err(self.error_at(
                    start,
                    format!("operation defines {n} results but was provided {num_bound} to bind"),
                ));
            }
            let mut next = 0u32;
            for (name, count, pos) in bindings {
                let first = self.cx.result(op, next as usize);
                self.define_values(name, first, count, pos)?;
                next += count;
            }
        }
        self.parse_optional_trailing_loc(DeferredLoc::Op(op))?;
        Ok(op)
    }

    /// `loc(...)` after an op or block argument, if present.
    fn parse_optional_trailing_loc(&mut self, target: DeferredLoc) -> PResult<()> {
        if !(self.tok.kind == Tok::BareId && self.cur_text() == "loc") {
            return Ok(());
        }
        self.bump();
        self.expect(Tok::LParen)?;
        if self.tok.kind == Tok::HashId {
            let t = self.bump();
            let name = &self.text(t)[1..];
            match self.loc_aliases.get(name) {
                Some(&l) => self.set_loc(target, l),
                None => self.deferred_locs.push((target, name, t.start)),
            }
        } else {
            let l = self.parse_loc_body()?;
            self.set_loc(target, l);
        }
        self.expect(Tok::RParen)?;
        Ok(())
    }

    fn set_loc(&mut self, target: DeferredLoc, l: Loc) {
        match target {
            DeferredLoc::Op(op) => self.cx.set_op_loc(op, l),
            DeferredLoc::Arg(v) => self.cx.set_block_arg_loc(v, l),
        }
    }

    /// `loc(body)` as a whole.
    fn parse_trailing_loc_body(&mut self) -> PResult<Loc> {
        self.expect_keyword("loc")?;
        self.expect(Tok::LParen)?;
        let l = self.parse_loc_body()?;
        self.expect(Tok::RParen)?;
        Ok(l)
    }

    pub(crate) fn parse_loc_body(&mut self) -> PResult<Loc> {
        self.enter()?;
        let r = self.parse_loc_body_nested();
        self.depth -= 1;
        r
    }

    fn parse_loc_body_nested(&mut self) -> PResult<Loc> {
        match self.tok.kind {
            Tok::BareId if self.cur_text() == "unknown" => {
                self.bump();
                Ok(Loc::UNKNOWN)
            }
            Tok::BareId if self.cur_text() == "fused" => {
                self.bump();
                let metadata = if self.consume_if(Tok::Less) {
                    let a = self.parse_attribute()?;
                    self.expect(Tok::Greater)?;
                    Some(a)
                } else {
                    None
                };
                self.expect(Tok::LSquare)?;
                let mut locs = Vec::new();
                loop {
                    locs.push(self.parse_loc_body()?);
                    if !self.consume_if(Tok::Comma) {
                        break;
                    }
                }
                self.expect(Tok::RSquare)?;
                Ok(self.cx.loc(LocKind::Fused { locs, metadata }))
            }
            Tok::BareId if self.cur_text() == "callsite" => {
                self.bump();
                self.expect(Tok::LParen)?;
                let callee = self.parse_loc_body()?;
                self.expect_keyword("at")?;
                let caller = self.parse_loc_body()?;
                self.expect(Tok::RParen)?;
                Ok(self.cx.loc(LocKind::CallSite { callee, caller }))
            }
            Tok::HashId => {
                let t = self.bump();
                let name = &self.text(t)[1..];
                match self.loc_aliases.get(name) {
                    Some(&l) => Ok(l),
                    None => {
                        Err(self.error_at(t.start, format!("undefined location alias '#{name}'")))
                    }
                }
            }
            Tok::String => {
                let s = self.parse_string()?;
                if self.consume_if(Tok::Colon) {
                    let line = self.parse_integer()?;
                    self.expect(Tok::Colon)?;
                    let col = self.parse_integer()?;
                    let (Ok(line), Ok(col)) = (u32::try_from(line), u32::try_from(col)) else {
                        return Err(
                            self.error_here("line and column must be non-negative 32-bit integers")
                        );
                    };
                    Ok(self.cx.file_loc(&s, line, col))
                } else {
                    let child = if self.consume_if(Tok::LParen) {
                        let c = self.parse_loc_body()?;
                        self.expect(Tok::RParen)?;
                        c
                    } else {
                        Loc::UNKNOWN
                    };
                    Ok(self.cx.name_loc(&s, child))
                }
            }
            _ => Err(self.expected("location")),
        }
    }

    fn lookup_op_name(&mut self, text: &str) -> OpName {
        self.cx.op_name(text)
    }

    fn parse_generic_op(&mut self, loc: Loc) -> PResult<Op> {
        let name_tok = self.tok;
        let name_str = self.parse_string()?;
        if name_str.is_empty() {
            return Err(self.error_at(name_tok.start, "empty operation name is invalid"));
        }
        let name = self.lookup_op_name(&name_str);
        let def = self.cx.op_name_def(name);
        if def.is_none() && !self.cx.allow_unregistered {
            let dialect = name_str.split('.').next().unwrap_or("");
            let msg = if self.cx.registry().dialect(dialect).is_some() {
                format!("unregistered operation '{name_str}' found in dialect ('{dialect}') that does not allow unknown operations")
            } else {
                format!("operation being parsed with an unregistered dialect '{dialect}'; use --allow-unregistered-dialect to allow it")
            };
            return Err(self.error_at(name_tok.start, msg));
        }
        let mut st = OperationState::new(name, loc);
        // Operands.
        self.expect(Tok::LParen)?;
        let mut refs: SmallVec<[OperandRef<'s>; 4]> = SmallVec::new();
        if self.tok.kind != Tok::RParen {
            loop {
                refs.push(self.parse_operand_ref()?);
                if !self.consume_if(Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(Tok::RParen)?;
        // Successors.
        if self.consume_if(Tok::LSquare) {
            loop {
                let t = self.expect(Tok::BlockId)?;
                let b = self.block_ref(self.text(t), t.start);
                st.successors.push(b);
                if !self.consume_if(Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::RSquare)?;
        }
        let mut entries: Vec<(Sym, Attr)> = Vec::new();
        // Properties.
        if self.tok.kind == Tok::Less {
            self.bump();
            let a = self.parse_attribute()?;
            match self.cx.attr_kind(a) {
                AttrKind::Dictionary(e) => entries.extend_from_slice(e),
                _ => return Err(self.error_here("expected a dictionary of properties")),
            }
            self.expect(Tok::Greater)?;
        }
        // Regions.
        let mut regions: Vec<Vec<Block>> = Vec::new();
        if self.tok.kind == Tok::LParen {
            self.bump();
            let isolated = def.is_some_and(|d| d.has_trait(Trait::IsolatedFromAbove));
            loop {
                regions.push(self.parse_region_blocks(&[], isolated)?);
                if !self.consume_if(Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::RParen)?;
        }
        if self.tok.kind == Tok::LBrace {
            self.parse_attr_dict_into(&mut entries)?;
        }
        self.expect(Tok::Colon)?;
        let ty_pos = self.tok.start;
        let fty = self.parse_type()?;
        let TypeKind::Function { inputs, results } = self.cx.type_kind(fty).clone() else {
            return Err(self.error_at(ty_pos, "expected function type"));
        };
        if inputs.len() != refs.len() {
            return Err(self.error_at(
                ty_pos,
                format!(
                    "expected {} operand type(s) but had {}",
                    refs.len(),
                    inputs.len()
                ),
            ));
        }
        for (r, ty) in refs.iter().zip(inputs) {
            st.operands.push(self.resolve_operand(*r, ty)?);
        }
        st.result_types.extend(results);
        st.attrs = self.cx.dict_attr(entries);
        Ok(self.build_op(st, regions))
    }

    /// Creates the op and moves parsed region blocks into it.
    pub(crate) fn build_op(&mut self, mut st: OperationState, regions: Vec<Vec<Block>>) -> Op {
        st.num_regions = regions.len() as u32;
        let op = self.cx.create_op(st);
        for (i, blocks) in regions.into_iter().enumerate() {
            let r = self.cx.region(op, i);
            for b in blocks {
                self.cx.append_block(r, b);
            }
        }
        op
    }

    fn parse_custom_op(&mut self, loc: Loc) -> PResult<Op> {
        let name_tok = self.bump();
        let written = self.text(name_tok);
        let mut full = written.to_string();
        let mut def = self
            .cx
            .registry()
            .lookup(&full)
            .map(|d| self.cx.registry().def(d));
        if def.is_none() {
            if let Some(dd) = self.default_dialects.last() {
                let candidate = format!("{dd}.{written}");
                if let Some(d) = self.cx.registry().lookup(&candidate) {
                    def = Some(self.cx.registry().def(d));
                    full = candidate;
                }
            }
        }
        if def.is_none() && !written.contains('.') {
            // `module` is the builtin dialect's op, written without prefix.
            let candidate = format!("builtin.{written}");
            if let Some(d) = self.cx.registry().lookup(&candidate) {
                def = Some(self.cx.registry().def(d));
                full = candidate;
            }
        }
        let Some(def) = def else {
            let tried = match self.default_dialects.last() {
                Some(dd) if !written.contains('.') => format!(" (tried '{dd}.{written}' as well)"),
                _ => String::new(),
            };
            return Err(self.error_at(
                name_tok.start,
                format!("custom op '{written}' is unknown{tried}"),
            ));
        };
        let name = self.lookup_op_name(&full);
        let registry = self.cx.registry().clone();
        let mut p = OpParser {
            p: self,
            def,
            state: OperationState::new(name, loc),
            regions: Vec::new(),
            attrs: Vec::new(),
        };
        if let Some(custom) = def.custom_assembly {
            (custom.parse)(&mut p)?;
        } else {
            let id = registry.lookup(&full).expect("registered op");
            let Some(format) = registry.format(id) else {
                return Err(Diagnostic::error(
                    loc,
                    format!("op '{full}' has no custom assembly form; use the generic form"),
                ));
            };
            crate::format::parse_with_format(&mut p, format)?;
        }
        let OpParser {
            mut state,
            regions,
            attrs,
            ..
        } = p;
        state.attrs = self.cx.dict_attr(attrs);
        Ok(self.build_op(state, regions))
    }

    pub fn parse_operand_ref(&mut self) -> PResult<OperandRef<'s>> {
        let t = self.expect(Tok::ValueId)?;
        let text = self.text(t);
        let (name, index) = match text.split_once('#') {
            Some((n, i)) => (
                n,
                i.parse::<u32>()
                    .map_err(|_| self.error_at(t.start, "invalid result number"))?,
            ),
            None => (text, 0),
        };
        Ok(OperandRef {
            name,
            index,
            pos: t.start,
        })
    }

    // ---- regions and blocks -------------------------------------------------

    /// Parses `{ ... }` into its blocks. `entry_args` (name, type, loc) become the
    /// entry block's arguments when the region does not spell its entry block.
    pub fn parse_region_blocks(
        &mut self,
        entry_args: &[(OperandRef<'s>, Type, Loc)],
        isolated: bool,
    ) -> PResult<Vec<Block>> {
        self.enter()?;
        let r = self.parse_region_blocks_nested(entry_args, isolated);
        self.depth -= 1;
        r
    }

    fn parse_region_blocks_nested(
        &mut self,
        entry_args: &[(OperandRef<'s>, Type, Loc)],
        isolated: bool,
    ) -> PResult<Vec<Block>> {
        self.expect(Tok::LBrace)?;
        let depth = self.scopes.len();
        self.push_scope(isolated);
        self.region_scopes.push(RegionScope {
            blocks: FxHashMap::default(),
        });
        let mut blocks = Vec::new();
        let needs_entry = !entry_args.is_empty()
            || (self.tok.kind != Tok::RBrace && self.tok.kind != Tok::BlockId);
        if needs_entry {
            let tys: Vec<(Type, Loc)> = entry_args.iter().map(|(_, t, l)| (*t, *l)).collect();
            let entry = self.cx.create_detached_block(&tys);
            for (i, (r, _, _)) in entry_args.iter().enumerate() {
                let v = self.cx.block_args(entry)[i];
                self.define_values(r.name, v, 1, r.pos)?;
            }
            blocks.push(entry);
            self.parse_block_body(entry)?;
        }
        while self.tok.kind == Tok::BlockId {
            if needs_entry
                && !entry_args.is_empty()
                && blocks.len() == 1
                && self.cx.first_op(blocks[0]).is_none()
            {
                // Entry block arguments come from the op's signature; a labelled first block
                // would be a second block.
            }
            let b = self.parse_block_header()?;
            blocks.push(b);
            self.parse_block_body(b)?;
        }
        self.expect(Tok::RBrace)?;
        self.check_region_blocks()?;
        self.finish_scope(depth)?;
        Ok(blocks)
    }

    fn parse_block_header(&mut self) -> PResult<Block> {
        let t = self.expect(Tok::BlockId)?;
        let name = self.text(t);
        let b = self.block_ref(name, t.start);
        let rs = self.region_scopes.last_mut().expect("region scope");
        let e = rs.blocks.get_mut(name).expect("block entry");
        if e.defined {
            return Err(self.error_at(t.start, format!("redefinition of block '{name}'")));
        }
        e.defined = true;
        e.pos = t.start;
        if self.consume_if(Tok::LParen) && !self.consume_if(Tok::RParen) {
            loop {
                let r = self.parse_operand_ref()?;
                self.expect(Tok::Colon)?;
                let ty = self.parse_type()?;
                let loc = self.loc_at(r.pos);
                let v = self.cx.add_block_arg(b, ty, loc);
                self.parse_optional_trailing_loc(DeferredLoc::Arg(v))?;
                self.define_values(r.name, v, 1, r.pos)?;
                if !self.consume_if(Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::RParen)?;
        }
        self.expect(Tok::Colon)?;
        Ok(b)
    }

    fn parse_block_body(&mut self, b: Block) -> PResult<()> {
        while !matches!(self.tok.kind, Tok::RBrace | Tok::BlockId | Tok::Eof) {
            let op = self.parse_operation()?;
            self.cx.append_op(b, op);
        }
        Ok(())
    }

    // ---- attributes ---------------------------------------------------------

    /// `{name = attr, unit_name, "quoted" = attr}` appended to `entries`.
    pub fn parse_attr_dict_into(&mut self, entries: &mut Vec<(Sym, Attr)>) -> PResult<()> {
        self.expect(Tok::LBrace)?;
        let mut seen: SmallVec<[Sym; 8]> = entries.iter().map(|e| e.0).collect();
        if self.tok.kind != Tok::RBrace {
            loop {
                let t = self.tok;
                let name = match t.kind {
                    Tok::BareId => {
                        self.bump();
                        self.text(t).to_string()
                    }
                    Tok::String => self.parse_string()?,
                    _ => return Err(self.expected("attribute name")),
                };
                if name.is_empty() {
                    return Err(self.error_at(t.start, "expected valid attribute name"));
                }
                let sym = self.cx.sym(&name);
                if seen.contains(&sym) {
                    return Err(self.error_at(
                        t.start,
                        format!("duplicate key '{name}' in dictionary attribute"),
                    ));
                }
                seen.push(sym);
                let value = if self.consume_if(Tok::Equal) {
                    self.parse_attribute()?
                } else {
                    Attr::UNIT
                };
                entries.push((sym, value));
                if !self.consume_if(Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(Tok::RBrace)?;
        Ok(())
    }

    pub fn parse_attribute(&mut self) -> PResult<Attr> {
        self.enter()?;
        let r = self.parse_attribute_nested();
        self.depth -= 1;
        r
    }

    fn parse_attribute_nested(&mut self) -> PResult<Attr> {
        let start = self.tok.start;
        match self.tok.kind {
            Tok::BareId => {
                let text = self.cur_text();
                match text {
                    "true" => {
                        self.bump();
                        Ok(Attr::TRUE)
                    }
                    "false" => {
                        self.bump();
                        Ok(Attr::FALSE)
                    }
                    "unit" => {
                        self.bump();
                        Ok(Attr::UNIT)
                    }
                    "dense" => self.parse_dense(),
                    "array" => {
                        self.bump();
                        self.expect(Tok::Less)?;
                        let t = self.tok;
                        self.expect_keyword("i64").map_err(|_| {
                            self.error_at(
                                t.start,
                                "only array<i64: ...> dense arrays are supported",
                            )
                        })?;
                        let mut items = Vec::new();
                        if self.consume_if(Tok::Colon) {
                            loop {
                                items.push(self.parse_integer()?);
                                if !self.consume_if(Tok::Comma) {
                                    break;
                                }
                            }
                        }
                        self.expect(Tok::Greater)?;
                        Ok(self.cx.attr(AttrKind::I64Array(items)))
                    }
                    "dense_resource" => {
                        self.bump();
                        self.expect(Tok::Less)?;
                        let handle = match self.tok.kind {
                            Tok::BareId => self.parse_bare_id()?.to_string(),
                            Tok::String => self.parse_string()?,
                            _ => return Err(self.expected("resource handle")),
                        };
                        self.expect(Tok::Greater)?;
                        self.expect(Tok::Colon)?;
                        let ty = self.parse_shaped_type_for_elements()?;
                        let handle = self.cx.sym(&handle);
                        Ok(self.cx.attr(AttrKind::DenseResource { ty, handle }))
                    }
                    _ => {
                        let ty = self.parse_type()?;
                        Ok(self.cx.type_attr(ty))
                    }
                }
            }
            Tok::Integer | Tok::Float | Tok::Minus => {
                let neg = self.consume_if(Tok::Minus);
                let lit = self.tok;
                match lit.kind {
                    Tok::Integer => {
                        let is_hex = self.cur_text().starts_with("0x");
                        let v = self.parse_integer_token(neg)?;
                        let ty = if self.consume_if(Tok::Colon) {
                            self.parse_type()?
                        } else {
                            Type::I64
                        };
                        self.make_number_attr(Number::Int(v, is_hex), ty, lit.start)
                    }
                    Tok::Float => {
                        self.bump();
                        let text = self.text(lit);
                        let v: f64 = text.parse().map_err(|_| {
                            self.error_at(lit.start, "invalid floating point literal")
                        })?;
                        let v = if neg { -v } else { v };
                        let ty = if self.consume_if(Tok::Colon) {
                            self.parse_type()?
                        } else {
                            Type::F64
                        };
                        self.make_number_attr(Number::Float(v), ty, lit.start)
                    }
                    _ => Err(self.expected("number after '-'")),
                }
            }
            Tok::String => {
                let s = self.parse_string()?;
                if self.tok.kind == Tok::Colon {
                    // A typed string: the type is accepted and dropped, as it carries no meaning here.
                    self.bump();
                    self.parse_type()?;
                }
                Ok(self.cx.string_attr(&s))
            }
            Tok::LSquare => {
                self.bump();
                let mut items = Vec::new();
                if self.tok.kind != Tok::RSquare {
                    loop {
                        items.push(self.parse_attribute()?);
                        if !self.consume_if(Tok::Comma) {
                            break;
                        }
                    }
                }
                self.expect(Tok::RSquare)?;
                Ok(self.cx.array_attr(items))
            }
            Tok::LBrace => {
                let mut entries = Vec::new();
                self.parse_attr_dict_into(&mut entries)?;
                Ok(self.cx.dict_attr(entries))
            }
            Tok::SymbolRef => {
                let root = self.parse_symbol_name()?;
                let root = self.cx.sym(&root);
                let mut nested = Vec::new();
                while self.consume_if(Tok::ColonColon) {
                    let n = self.parse_symbol_name()?;
                    nested.push(self.cx.sym(&n));
                }
                Ok(self.cx.attr(AttrKind::SymbolRef { root, nested }))
            }
            Tok::HashId => {
                let t = self.bump();
                let name = &self.text(t)[1..];
                if let Some(dot) = name.find('.') {
                    let body = self.parse_dialect_body(&name[dot..])?;
                    let dialect = self.cx.sym(&name[..dot]);
                    return Ok(self.cx.attr(AttrKind::Opaque {
                        dialect,
                        body: body.into(),
                    }));
                }
                if self.tok.kind == Tok::Less && self.tok.start == t.end {
                    let body = self.parse_dialect_body("")?;
                    let dialect = self.cx.sym(name);
                    return Ok(self.cx.attr(AttrKind::Opaque {
                        dialect,
                        body: body.into(),
                    }));
                }
                match self.attr_aliases.get(name) {
                    Some(&a) => Ok(a),
                    None => {
                        Err(self.error_at(start, format!("undefined symbol alias id '{name}'")))
                    }
                }
            }
            Tok::LParen | Tok::BangId => {
                let ty = self.parse_type()?;
                Ok(self.cx.type_attr(ty))
            }
            _ => Err(self.expected("attribute value")),
        }
    }

    fn make_number_attr(&mut self, n: Number, ty: Type, pos: u32) -> PResult<Attr> {
        let kind = self.cx.type_kind(ty).clone();
        match (n, &kind) {
            (Number::Int(v, _), TypeKind::Integer { width, signedness }) => {
                check_int_fits(v, *width, *signedness).map_err(|e| self.error_at(pos, e))?;
                if *width == 1 && *signedness == Signedness::Signless {
                    return Ok(self.cx.bool_attr(v != 0));
                }
                Ok(self.cx.int_attr(v, ty))
            }
            (Number::Int(v, _), TypeKind::Index) => Ok(self.cx.int_attr(v, ty)),
            (Number::Int(v, true), k) if k.is_float() => {
                // Hex literal: the bit pattern of the float.
                let bits = v as u128;
                let x = match k.bit_width() {
                    Some(64) => f64::from_bits(bits as u64),
                    Some(32) => f32::from_bits(bits as u32) as f64,
                    Some(16) if matches!(k, TypeKind::BF16) => {
                        half::bf16::from_bits(bits as u16).to_f64()
                    }
                    Some(16) => half::f16::from_bits(bits as u16).to_f64(),
                    Some(8) => numeric::float_from_bytes(k, &[bits as u8]),
                    _ => 0.0,
                };
                Ok(self.cx.attr(AttrKind::Float {
                    bits: x.to_bits(),
                    ty,
                }))
            }
            (Number::Int(v, false), k) if k.is_float() => {
                self.float_attr_checked(v as f64, ty, pos)
            }
            (Number::Float(x), k) if k.is_float() => self.float_attr_checked(x, ty, pos),
            (Number::Float(_), _) => {
                Err(self.error_at(pos, "floating point value not valid for specified type"))
            }
            (Number::Int(..), _) => {
                Err(self.error_at(pos, "integer literal not valid for specified type"))
            }
        }
    }

    fn float_attr_checked(&mut self, x: f64, ty: Type, pos: u32) -> PResult<Attr> {
        let kind = self.cx.type_kind(ty).clone();
        let r = numeric::round_to_float_type(&kind, x);
        if x.is_finite() && !r.is_finite() {
            let t = crate::printer::type_to_string(self.cx, ty);
            return Err(self.error_at(
                pos,
                format!("floating point value too large for type '{t}'"),
            ));
        }
        Ok(self.cx.float_attr(x, ty))
    }

    /// Parses `<...>` after a dialect attribute/type name, returning the raw text
    /// (prefix included) so it prints back verbatim.
    fn parse_dialect_body(&mut self, prefix: &str) -> PResult<String> {
        let mut body = prefix.to_string();
        if self.tok.kind != Tok::Less {
            return Ok(body);
        }
        let start = self.tok.start as usize;
        let mut depth = 0i32;
        let bytes = self.src.as_bytes();
        let mut i = start;
        let mut in_str = false;
        while i < bytes.len() {
            let c = bytes[i];
            if in_str {
                if c == b'\\' {
                    i += 1;
                } else if c == b'"' {
                    in_str = false;
                }
            } else {
                match c {
                    b'"' => in_str = true,
                    b'<' | b'(' | b'[' | b'{' => depth += 1,
                    b'>' if i > 0 && bytes[i - 1] == b'-' => {}
                    b'>' | b')' | b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        if i >= bytes.len() {
            return Err(self.error_at(start as u32, "unbalanced '<' in dialect attribute or type"));
        }
        body.push_str(&self.src[start..=i]);
        self.lex.reset(i + 1);
        self.tok = self.lex.next_token();
        Ok(body)
    }

    fn parse_shaped_type_for_elements(&mut self) -> PResult<Type> {
        let pos = self.tok.start;
        let ty = self.parse_type()?;
        match self.cx.type_kind(ty) {
            TypeKind::Tensor { shape, .. } if shape.iter().all(|&d| d >= 0) => Ok(ty),
            _ => Err(self.error_at(
                pos,
                "elements attribute must have a statically shaped tensor type",
            )),
        }
    }

    fn parse_dense(&mut self) -> PResult<Attr> {
        self.bump();
        let open = self.expect(Tok::Less)?;
        enum Lit {
            Hex(Vec<u8>),
            Tree(Vec<(Number, u32)>, Option<Vec<usize>>),
        }
        let lit = if self.tok.kind == Tok::String {
            let pos = self.tok.start;
            let s = self.parse_string()?;
            let bytes = s
                .strip_prefix("0x")
                .and_then(decode_hex)
                .ok_or_else(|| self.error_at(pos, "expected a hex string of the form \"0x...\""))?;
            Lit::Hex(bytes)
        } else if self.tok.kind == Tok::Greater {
            Lit::Tree(Vec::new(), Some(vec![0]))
        } else {
            let mut values = Vec::new();
            let shape = self.parse_dense_tree(&mut values, 0)?;
            Lit::Tree(values, shape)
        };
        self.expect(Tok::Greater)?;
        self.expect(Tok::Colon)?;
        let ty = self.parse_shaped_type_for_elements()?;
        let (shape, elem) = self
            .cx
            .tensor_parts(ty)
            .map(|(s, e)| (s.to_vec(), e))
            .expect("tensor");
        let ek = self.cx.type_kind(elem).clone();
        let Some(width) = numeric::storage_bytes(&ek) else {
            return Err(self.error_at(
                open.start,
                "dense elements need an integer or float element type",
            ));
        };
        // The element count (and its bytes) must fit a usize: a huge shape
        // is an error here, never an overflow.
        let count = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
            .filter(|n| n.checked_mul(width).is_some())
            .ok_or_else(|| {
                self.error_at(
                    open.start,
                    "dense elements: the type has more elements than memory can address",
                )
            })?;
        match lit {
            Lit::Hex(bytes) => {
                let splat = bytes.len() == width && count != 1;
                if !splat && bytes.len() != width * count {
                    return Err(self.error_at(
                        open.start,
                        format!(
                            "hex elements hold {} bytes, but the type needs {}",
                            bytes.len(),
                            width * count
                        ),
                    ));
                }
                let data = DenseData {
                    splat,
                    bytes: bytes.into(),
                };
                Ok(self.cx.attr(AttrKind::DenseElements { ty, data }))
            }
            Lit::Tree(values, tree_shape) => {
                let splat = tree_shape.is_none();
                if let Some(ts) = &tree_shape {
                    let want: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
                    let ok = *ts == want || (count == 0 && values.is_empty());
                    if !ok {
                        return Err(self.error_at(
                            open.start,
                            format!("inferred shape of elements literal ([{}]) does not match type ([{}])",
                                ts.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "),
                                want.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
                        ));
                    }
                }
                let mut bytes = Vec::with_capacity(values.len() * width);
                for (n, pos) in values {
                    encode_number(&ek, n, &mut bytes).map_err(|e| self.error_at(pos, e))?;
                }
                let data = DenseData {
                    splat: splat && count != 1,
                    bytes: bytes.into(),
                };
                Ok(self.cx.attr(AttrKind::DenseElements { ty, data }))
            }
        }
    }

    /// Parses a scalar or nested list; returns its shape (`None` for a bare scalar).
    fn parse_dense_tree(
        &mut self,
        out: &mut Vec<(Number, u32)>,
        depth: usize,
    ) -> PResult<Option<Vec<usize>>> {
        if depth > 64 {
            return Err(self.error_here("elements literal nested too deeply"));
        }
        if self.consume_if(Tok::LSquare) {
            let mut sub: Option<Vec<usize>> = None;
            let mut n = 0usize;
            if self.tok.kind != Tok::RSquare {
                loop {
                    let pos = self.tok.start;
                    let s = self.parse_dense_tree(out, depth + 1)?.unwrap_or_default();
                    match &sub {
                        None => sub = Some(s),
                        Some(prev) if *prev != s => return Err(self.error_at(
                            pos,
                            "tensor literal is invalid; ranks are not consistent between elements",
                        )),
                        _ => {}
                    }
                    n += 1;
                    if !self.consume_if(Tok::Comma) {
                        break;
                    }
                }
            }
            self.expect(Tok::RSquare)?;
            let mut shape = vec![n];
            shape.extend(sub.unwrap_or_default());
            return Ok(Some(shape));
        }
        let pos = self.tok.start;
        let n = match self.tok.kind {
            Tok::BareId if self.cur_text() == "true" => {
                self.bump();
                Number::Int(1, false)
            }
            Tok::BareId if self.cur_text() == "false" => {
                self.bump();
                Number::Int(0, false)
            }
            _ => {
                let neg = self.consume_if(Tok::Minus);
                match self.tok.kind {
                    Tok::Integer => {
                        let hex = self.cur_text().starts_with("0x");
                        Number::Int(self.parse_integer_token(neg)?, hex)
                    }
                    Tok::Float => {
                        let t = self.bump();
                        let v: f64 = self.text(t).parse().map_err(|_| {
                            self.error_at(t.start, "invalid floating point literal")
                        })?;
                        Number::Float(if neg { -v } else { v })
                    }
                    _ => return Err(self.expected("element literal")),
                }
            }
        };
        out.push((n, pos));
        Ok(None)
    }

    // ---- types ----------------------------------------------------------------

    pub fn parse_type(&mut self) -> PResult<Type> {
        self.enter()?;
        let r = self.parse_type_nested();
        self.depth -= 1;
        r
    }

    fn parse_type_nested(&mut self) -> PResult<Type> {
        let start = self.tok.start;
        match self.tok.kind {
            Tok::BareId => {
                let t = self.bump();
                let text = self.text(t);
                let simple = match text {
                    "index" => Some(Type::INDEX),
                    "f16" => Some(Type::F16),
                    "bf16" => Some(Type::BF16),
                    "f32" => Some(Type::F32),
                    "f64" => Some(Type::F64),
                    "f8E4M3FN" => Some(Type::F8E4M3FN),
                    "f8E5M2" => Some(Type::F8E5M2),
                    "none" => Some(Type::NONE),
                    _ => None,
                };
                if let Some(ty) = simple {
                    return Ok(ty);
                }
                if text == "tensor" {
                    return self.parse_tensor_type();
                }
                if let Some(ty) = self.integer_type_from(text) {
                    return ty.map_err(|e| self.error_at(start, e));
                }
                Err(self.error_at(start, format!("unknown type '{text}'")))
            }
            Tok::LParen => {
                self.bump();
                let inputs = self.parse_type_list_until(Tok::RParen)?;
                self.expect(Tok::Arrow)?;
                let results = self.parse_function_result_types()?;
                Ok(self.cx.function_type(inputs, results))
            }
            Tok::BangId => {
                let t = self.bump();
                let name = &self.text(t)[1..];
                if let Some(dot) = name.find('.') {
                    let body = self.parse_dialect_body(&name[dot..])?;
                    let dialect = self.cx.sym(&name[..dot]);
                    return Ok(self.cx.ty(TypeKind::Opaque {
                        dialect,
                        body: body.into(),
                    }));
                }
                if self.tok.kind == Tok::Less && self.tok.start == t.end {
                    let body = self.parse_dialect_body("")?;
                    let dialect = self.cx.sym(name);
                    return Ok(self.cx.ty(TypeKind::Opaque {
                        dialect,
                        body: body.into(),
                    }));
                }
                match self.type_aliases.get(name) {
                    Some(&ty) => Ok(ty),
                    None => {
                        Err(self.error_at(start, format!("undefined symbol alias id '{name}'")))
                    }
                }
            }
            _ => Err(self.expected("type")),
        }
    }

    fn integer_type_from(&mut self, text: &str) -> Option<Result<Type, String>> {
        let (signedness, digits) = if let Some(d) = text.strip_prefix("si") {
            (Signedness::Signed, d)
        } else if let Some(d) = text.strip_prefix("ui") {
            (Signedness::Unsigned, d)
        } else if let Some(d) = text.strip_prefix('i') {
            (Signedness::Signless, d)
        } else {
            return None;
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(match digits.parse::<u32>() {
            Ok(w) if (1..=128).contains(&w) => Ok(self.cx.ty(TypeKind::Integer {
                width: w,
                signedness,
            })),
            _ => Err(format!(
                "integer bitwidth must be between 1 and 128, got '{digits}'"
            )),
        })
    }

    /// Types separated by commas up to (and consuming) `close`.
    fn parse_type_list_until(&mut self, close: Tok) -> PResult<Vec<Type>> {
        let mut tys = Vec::new();
        if self.consume_if(close) {
            return Ok(tys);
        }
        loop {
            tys.push(self.parse_type()?);
            if !self.consume_if(Tok::Comma) {
                break;
            }
        }
        self.expect(close)?;
        Ok(tys)
    }

    /// After `->`: one type, or a parenthesised list.
    pub fn parse_function_result_types(&mut self) -> PResult<Vec<Type>> {
        if self.tok.kind == Tok::LParen {
            // `(a, b)` is a list unless it is the input list of a function type.
            let save = self.tok;
            self.bump();
            let tys = self.parse_type_list_until(Tok::RParen)?;
            if self.tok.kind == Tok::Arrow {
                // It was a function type used as a single result.
                self.lex.reset(save.start as usize);
                self.tok = self.lex.next_token();
                return Ok(vec![self.parse_type()?]);
            }
            Ok(tys)
        } else {
            Ok(vec![self.parse_type()?])
        }
    }

    /// A comma-separated list of types (no delimiters).
    pub fn parse_type_list(&mut self) -> PResult<Vec<Type>> {
        let mut tys = vec![self.parse_type()?];
        while self.consume_if(Tok::Comma) {
            tys.push(self.parse_type()?);
        }
        Ok(tys)
    }

    fn parse_tensor_type(&mut self) -> PResult<Type> {
        let open = self.expect(Tok::Less)?;
        if self.tok.kind == Tok::Star {
            return Err(self.error_here("unranked tensors are not supported"));
        }
        // Scan the dimension list by hand: `4x?x8xf32` lexes as one awkward run.
        let bytes = self.src.as_bytes();
        let mut i = open.end as usize;
        let mut shape: SmallVec<[i64; 4]> = SmallVec::new();
        loop {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            let dim_start = i;
            let dim = if i < bytes.len() && bytes[i] == b'?' {
                i += 1;
                DYNAMIC
            } else if i < bytes.len() && bytes[i].is_ascii_digit() {
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                let d = self.src[dim_start..i]
                    .parse::<i64>()
                    .map_err(|_| self.error_at(dim_start as u32, "dimension too large"))?;
                if d > (1i64 << 48) {
                    return Err(self.error_at(dim_start as u32, "dimension too large"));
                }
                d
            } else {
                break;
            };
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i >= bytes.len() || bytes[i] != b'x' {
                return Err(
                    self.error_at(i.min(bytes.len()) as u32, "expected 'x' in dimension list")
                );
            }
            i += 1;
            shape.push(dim);
        }
        self.lex.reset(i);
        self.tok = self.lex.next_token();
        let elem_pos = self.tok.start;
        let element = self.parse_type()?;
        match self.cx.type_kind(element) {
            TypeKind::Tensor { .. } | TypeKind::Function { .. } | TypeKind::None => {
                return Err(self.error_at(elem_pos, "invalid tensor element type"))
            }
            _ => {}
        }
        let encoding = if self.consume_if(Tok::Comma) {
            Some(self.parse_attribute()?)
        } else {
            None
        };
        self.expect(Tok::Greater)?;
        Ok(self.cx.ty(TypeKind::Tensor {
            shape,
            element,
            encoding,
        }))
    }

    pub fn push_default_dialect(&mut self, d: &'static str) {
        self.default_dialects.push(d);
    }
    pub fn pop_default_dialect(&mut self) {
        self.default_dialects.pop();
    }
}

#[derive(Copy, Clone, Debug)]
enum Number {
    /// Value, and whether it was written in hex.
    Int(i128, bool),
    Float(f64),
}

fn check_int_fits(v: i128, width: u32, signedness: Signedness) -> Result<(), String> {
    if width >= 128 {
        return Ok(());
    }
    let (lo, hi) = match signedness {
        Signedness::Signed => (-(1i128 << (width - 1)), (1i128 << (width - 1)) - 1),
        Signedness::Unsigned => (0, (1i128 << width) - 1),
        // Signless integers accept both readings, as MLIR does.
        Signedness::Signless => (-(1i128 << (width - 1)), (1i128 << width) - 1),
    };
    if v < lo || v > hi {
        Err(format!(
            "integer constant out of range for attribute of type 'i{width}'"
        ))
    } else {
        Ok(())
    }
}

fn encode_number(kind: &TypeKind, n: Number, out: &mut Vec<u8>) -> Result<(), String> {
    match kind {
        TypeKind::Integer { width, signedness } => {
            let v = match n {
                Number::Int(v, _) => v,
                Number::Float(_) => {
                    return Err("expected integer elements, but parsed floating-point".into())
                }
            };
            check_int_fits(v, *width, *signedness)?;
            let nbytes = numeric::storage_bytes(kind).unwrap_or(8);
            out.extend_from_slice(&v.to_le_bytes()[..nbytes]);
        }
        TypeKind::Index => {
            let Number::Int(v, _) = n else {
                return Err("expected integer elements, but parsed floating-point".into());
            };
            out.extend_from_slice(&(v as i64).to_le_bytes());
        }
        k if k.is_float() => {
            let x = match n {
                Number::Int(v, true) => {
                    let nbytes = numeric::storage_bytes(k).unwrap_or(8);
                    out.extend_from_slice(&v.to_le_bytes()[..nbytes]);
                    return Ok(());
                }
                Number::Int(v, false) => v as f64,
                Number::Float(x) => x,
            };
            if x.is_finite() && !numeric::round_to_float_type(k, x).is_finite() {
                return Err("floating point value too large for the element type".into());
            }
            numeric::float_to_bytes(k, x, out);
        }
        _ => return Err("unsupported element type".into()),
    }
    Ok(())
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// MLIR's blob encoding: "0x" + 4-byte little-endian alignment + data.
fn decode_blob(s: &str) -> Result<Blob, String> {
    let bytes = s
        .strip_prefix("0x")
        .and_then(decode_hex)
        .ok_or("expected a hex blob of the form \"0x...\"")?;
    if bytes.len() < 4 {
        return Err("resource blob is missing its alignment prefix".into());
    }
    let alignment = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    Ok(Blob {
        alignment,
        data: bytes[4..].into(),
    })
}

trait WithNoteAt {
    fn with_note_at(self, p: &mut Parser<'_, '_>, pos: u32, msg: &str) -> Self;
}
impl WithNoteAt for Diagnostic {
    fn with_note_at(self, p: &mut Parser<'_, '_>, pos: u32, msg: &str) -> Self {
        let loc = p.loc_at(pos);
        self.with_note(loc, msg)
    }
}

/// The parser as seen by an op's custom assembly: the underlying parser
/// plus the operation being built.
pub struct OpParser<'a, 's, 'c> {
    pub p: &'a mut Parser<'s, 'c>,
    pub def: &'static OpDef,
    pub state: OperationState,
    pub regions: Vec<Vec<Block>>,
    pub attrs: Vec<(Sym, Attr)>,
}

impl<'s> OpParser<'_, 's, '_> {
    pub fn cx(&mut self) -> &mut Context {
        self.p.cx
    }
    pub fn add_operand(&mut self, r: OperandRef<'s>, ty: Type) -> PResult<()> {
        let v = self.p.resolve_operand(r, ty)?;
        self.state.operands.push(v);
        Ok(())
    }
    pub fn add_result_type(&mut self, ty: Type) {
        self.state.result_types.push(ty);
    }
    pub fn add_attr(&mut self, name: &str, value: Attr) {
        let sym = self.p.cx.sym(name);
        self.attrs.push((sym, value));
    }
    pub fn add_region(&mut self, blocks: Vec<Block>) {
        self.regions.push(blocks);
    }
    /// `{...}` if present, merged into the op's attributes.
    pub fn parse_optional_attr_dict(&mut self) -> PResult<()> {
        if self.p.peek() == Tok::LBrace {
            let mut entries = std::mem::take(&mut self.attrs);
            self.p.parse_attr_dict_into(&mut entries)?;
            self.attrs = entries;
        }
        Ok(())
    }
    /// `attributes {...}` if present.
    pub fn parse_optional_attr_dict_with_keyword(&mut self) -> PResult<()> {
        if self.p.consume_keyword("attributes") {
            let mut entries = std::mem::take(&mut self.attrs);
            self.p.parse_attr_dict_into(&mut entries)?;
            self.attrs = entries;
        }
        Ok(())
    }
    /// A region whose entry block takes `args`; isolated per the op's traits.
    pub fn parse_region(&mut self, args: &[(OperandRef<'s>, Type, Loc)]) -> PResult<()> {
        let isolated = self.def.has_trait(Trait::IsolatedFromAbove);
        if let Some(d) = self.def.default_dialect {
            self.p.push_default_dialect(d);
        }
        let r = self.p.parse_region_blocks(args, isolated);
        if self.def.default_dialect.is_some() {
            self.p.pop_default_dialect();
        }
        self.regions.push(r?);
        Ok(())
    }
    /// Like [`Parser::parse_optional_trailing_loc`] for a block argument being declared.
    pub fn parse_optional_arg_loc(&mut self) -> PResult<Option<Loc>> {
        if self.p.peek() == Tok::BareId && self.p.cur_text() == "loc" {
            self.p.bump();
            self.p.expect(Tok::LParen)?;
            let l = self.p.parse_loc_body()?;
            self.p.expect(Tok::RParen)?;
            return Ok(Some(l));
        }
        Ok(None)
    }
}
