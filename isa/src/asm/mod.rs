//! The assembler: source text (with parameters) to an ELF relocatable object
//! plus kernel metadata.
//!
//! Stages: the logos lexer splits the source into lines of tokens;
//! [`expand`] applies macros, `.rept` and `.if`; the lalrpop grammar parses
//! each line; two passes over the lines then lay out sections (pass 1
//! defines labels, pass 2 encodes with every label known). References the
//! object cannot resolve itself become relocations. Errors are values with
//! a source span, rendered at file:line:col by codespan-reporting.

pub mod ast;
pub mod expand;
pub mod lexer;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused)]
    grammar,
    "/asm/grammar.rs"
);

use std::collections::{BTreeMap, BTreeSet, HashMap};

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;

use crate::elf::{
    KernelMeta, ObjSection, ObjSymbol, ObjectFile, Reloc, RelocKind, RelocTarget, SymKind,
};
use crate::encode::{self, Operand as EncOperand, BUNDLE_BIT};
use crate::table::{by_mnemonic, info, Kind, Op, OpInfo, Slot};
use ast::{BinOp, Body, Expr, Instr, Line, Operand, Span, UnOp};
use lexer::{lex_lines, SpTok, Tok};

/// One assembly error at a source span.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AsmError {
    pub span: Span,
    pub message: String,
}

impl AsmError {
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        AsmError {
            span,
            message: message.into(),
        }
    }
}

/// All errors of one assembly, with the source needed to show them.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{}", self.render())]
pub struct AsmErrors {
    pub file: String,
    pub text: String,
    pub errors: Vec<AsmError>,
}

impl AsmErrors {
    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map(|p| p + 1).unwrap_or(0) + 1;
        (line, col)
    }

    /// The codespan diagnostics of every error.
    pub fn diagnostics(&self) -> Vec<Diagnostic<()>> {
        self.errors
            .iter()
            .map(|e| {
                Diagnostic::error()
                    .with_message(e.message.clone())
                    .with_labels(vec![Label::primary(
                        (),
                        e.span.start..e.span.end.max(e.span.start),
                    )])
            })
            .collect()
    }

    /// Writes the errors to a colour-capable writer (the CLI's stderr).
    pub fn emit(&self, w: &mut dyn term::termcolor::WriteColor) {
        let file = SimpleFile::new(self.file.as_str(), self.text.as_str());
        let config = term::Config::default();
        for d in self.diagnostics() {
            let _ = term::emit(w, &config, &file, &d);
        }
    }

    /// Plain-text rendering: `error: msg` then `┌─ file:line:col` and the
    /// source line with a caret.
    pub fn render(&self) -> String {
        let mut buf = term::termcolor::NoColor::new(Vec::new());
        self.emit(&mut buf);
        String::from_utf8_lossy(&buf.into_inner()).into_owned()
    }
}

/// Parses an expression from tokens.
pub fn parse_expr(toks: &[SpTok]) -> Result<Expr, AsmError> {
    let end = toks.last().map(|t| t.end).unwrap_or(0);
    grammar::ExprParser::new()
        .parse(
            toks.iter()
                .map(|t| Ok::<_, ()>((t.start, t.tok.clone(), t.end))),
        )
        .map_err(|e| parse_error(e, end))
}

fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Ident(s) | Tok::Directive(s) => s.clone(),
        Tok::Int(v) => v.to_string(),
        Tok::Reg(r) => {
            let c = if r.is_m { 'm' } else { 'a' };
            if r.lo == r.hi {
                format!("${c}{}", r.lo)
            } else {
                format!("${c}{}:{}", r.lo, r.hi)
            }
        }
        Tok::Str(s) => format!("{s:?}"),
        Tok::MacroArg(s) => format!("\\{s}"),
        other => format!("{other:?}"),
    }
}

fn parse_error(e: lalrpop_util::ParseError<usize, Tok, ()>, end: usize) -> AsmError {
    use lalrpop_util::ParseError as P;
    match e {
        P::UnrecognizedToken {
            token: (l, t, r),
            expected,
        } => {
            let exp = if expected.is_empty() {
                String::new()
            } else {
                format!(", expected one of {}", expected.join(" "))
            };
            AsmError::new(
                Span::new(l, r),
                format!("unexpected `{}`{exp}", tok_text(&t)),
            )
        }
        P::UnrecognizedEof { location, expected } => {
            let loc = location.max(end);
            AsmError::new(
                Span::new(loc, loc),
                format!(
                    "unexpected end of line, expected one of {}",
                    expected.join(" ")
                ),
            )
        }
        P::ExtraToken { token: (l, t, r) } => {
            AsmError::new(Span::new(l, r), format!("unexpected `{}`", tok_text(&t)))
        }
        P::InvalidToken { location } => {
            AsmError::new(Span::new(location, location + 1), "invalid token")
        }
        P::User { .. } => AsmError::new(Span::new(end, end), "parse error"),
    }
}

fn op_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::And => "&",
        BinOp::Or => "|",
        BinOp::Xor => "^",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
    }
}

/// One operation of an assembly-time expression: integers are signed 64-bit
/// and a result outside that range is an error, never a wrapped value.
fn bin(op: BinOp, a: i64, b: i64, span: Span) -> Result<i64, AsmError> {
    let overflow = || {
        AsmError::new(
            span,
            format!(
                "`{a} {} {b}` overflows a signed 64-bit integer",
                op_text(op)
            ),
        )
    };
    Ok(match op {
        BinOp::Add => a.checked_add(b).ok_or_else(overflow)?,
        BinOp::Sub => a.checked_sub(b).ok_or_else(overflow)?,
        BinOp::Mul => a.checked_mul(b).ok_or_else(overflow)?,
        BinOp::Div | BinOp::Rem if b == 0 => return Err(AsmError::new(span, "division by zero")),
        BinOp::Div => a.checked_div(b).ok_or_else(overflow)?,
        BinOp::Rem => a.checked_rem(b).ok_or_else(overflow)?,
        BinOp::Shl | BinOp::Shr if !(0..64).contains(&b) => {
            return Err(AsmError::new(
                span,
                format!("shift by {b}: the amount must be 0 to 63"),
            ))
        }
        // a * 2^b, which must fit (no bit shifted out, the sign kept).
        BinOp::Shl => i64::try_from((a as i128) << b).map_err(|_| overflow())?,
        BinOp::Shr => a >> b,
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Eq => (a == b) as i64,
        BinOp::Ne => (a != b) as i64,
        BinOp::Lt => (a < b) as i64,
        BinOp::Le => (a <= b) as i64,
        BinOp::Gt => (a > b) as i64,
        BinOp::Ge => (a >= b) as i64,
    })
}

fn neg(v: i64, span: Span) -> Result<i64, AsmError> {
    v.checked_neg()
        .ok_or_else(|| AsmError::new(span, format!("`-({v})` overflows a signed 64-bit integer")))
}

/// Evaluates an expression that may only use constants.
pub fn eval_const(e: &Expr, consts: &HashMap<String, i64>) -> Result<i64, AsmError> {
    match e {
        Expr::Int(v, _) => Ok(*v),
        Expr::Sym(n, s) => consts.get(n).copied().ok_or_else(|| {
            AsmError::new(
                *s,
                format!("`{n}` is not a constant defined before this line"),
            )
        }),
        Expr::Here(s) => Err(AsmError::new(*s, "`.` is not a constant here")),
        Expr::Un(UnOp::Neg, a, s) => neg(eval_const(a, consts)?, *s),
        Expr::Un(UnOp::Not, a, _) => Ok(!eval_const(a, consts)?),
        Expr::Bin(op, a, b, s) => bin(*op, eval_const(a, consts)?, eval_const(b, consts)?, *s),
    }
}

/// A value during assembly: absolute, relative to a section, or external.
#[derive(Clone, Debug, PartialEq)]
enum Val {
    Abs(i64),
    Rel(usize, i64),
    Ext(String, i64),
}

/// A relocation an operand needs, before its offset is known.
type PendingReloc = Option<(RelocKind, Val)>;

/// An assembled kernel: the object and its metadata.
#[derive(Clone, Debug)]
pub struct Assembled {
    pub object: ObjectFile,
    pub meta: KernelMeta,
}

impl Assembled {
    /// The ELF relocatable object bytes (metadata embedded in `.ipu.kernel`).
    pub fn elf_bytes(&self) -> Vec<u8> {
        self.object.to_elf()
    }
}

/// Assembles `text` (named `file` in diagnostics) with parameter values
/// that override the source's `.param` defaults.
pub fn assemble(
    file: &str,
    text: &str,
    params: &BTreeMap<String, i64>,
) -> Result<Assembled, AsmErrors> {
    let fail = |errors: Vec<AsmError>| AsmErrors {
        file: file.to_string(),
        text: text.to_string(),
        errors,
    };
    let lines = lex_lines(text).map_err(|(s, e)| {
        let word = text.get(s..e).unwrap_or("");
        let msg = if word.starts_with(|c: char| c.is_ascii_digit()) {
            format!("`{word}` is not an integer literal that fits in a signed 64-bit value")
        } else {
            "unexpected character".to_string()
        };
        fail(vec![AsmError::new(Span::new(s, e), msg)])
    })?;
    let mut exp = expand::Expander::new(params);
    let mut expanded = Vec::new();
    exp.expand(&lines, &mut expanded, 0);
    if !exp.errors.is_empty() {
        return Err(fail(exp.errors));
    }
    for name in params.keys() {
        if !exp.bound_params.contains_key(name) {
            return Err(fail(vec![AsmError::new(
                Span::default(),
                format!("parameter `{name}` is not declared by `.param` in {file}"),
            )]));
        }
    }
    let mut parsed = Vec::new();
    let mut errors = Vec::new();
    let parser = grammar::LineParser::new();
    for l in expanded.iter().filter(|l| !l.is_empty()) {
        let end = l.last().map(|t| t.end).unwrap_or(0);
        match parser.parse(
            l.iter()
                .map(|t| Ok::<_, ()>((t.start, t.tok.clone(), t.end))),
        ) {
            Ok(line) => parsed.push(line),
            Err(e) => errors.push(parse_error(e, end)),
        }
    }
    if !errors.is_empty() {
        return Err(fail(errors));
    }
    let mut a = Asm::new(params, text);
    a.pass(&parsed, 1);
    if a.errors.is_empty() {
        a.pass(&parsed, 2);
        a.check_rpt_nesting();
        a.check_cycles();
    }
    if !a.errors.is_empty() {
        return Err(fail(a.errors));
    }
    Ok(a.finish(file, exp.bound_params))
}

/// The value of a `.cycles` formula.
fn cycles_of(formula: &str, consts: &HashMap<String, i64>) -> Result<i64, AsmError> {
    let lines = lex_lines(formula)
        .map_err(|(s, e)| AsmError::new(Span::new(s, e), "unexpected character"))?;
    let toks: Vec<SpTok> = lines.into_iter().flatten().collect();
    eval_const(&parse_expr(&toks)?, consts)
}

/// The byte offset a span starts at, clamped to the source.
fn start_of(span: &Span, source: &str) -> usize {
    span.start.min(source.len())
}

struct SecBuild {
    name: String,
    exec: bool,
    write: bool,
    align: u32,
    data: Vec<u8>,
    relocs: Vec<Reloc>,
}

struct Asm<'a> {
    params: &'a BTreeMap<String, i64>,
    source: &'a str,
    pass: u8,
    consts: HashMap<String, i64>,
    labels: HashMap<String, (usize, u32)>,
    label_order: Vec<String>,
    sections: Vec<SecBuild>,
    cur: Option<usize>,
    errors: Vec<AsmError>,
    globals: BTreeSet<String>,
    global_spans: Vec<(String, Span)>,
    types: HashMap<String, SymKind>,
    sizes: HashMap<String, u32>,
    regs: BTreeSet<String>,
    cycles: Option<(String, Span)>,
    /// Every `rpt` of pass 2: section, offset, end of its body, span.
    rpts: Vec<(usize, u32, u32, Span)>,
}

fn section_flags(name: &str) -> (bool, bool) {
    let exec = name == ".text" || name.starts_with(".text.");
    (exec, !exec)
}

impl<'a> Asm<'a> {
    fn new(params: &'a BTreeMap<String, i64>, source: &'a str) -> Self {
        Asm {
            params,
            source,
            pass: 1,
            consts: HashMap::new(),
            labels: HashMap::new(),
            label_order: Vec::new(),
            sections: Vec::new(),
            cur: None,
            errors: Vec::new(),
            globals: BTreeSet::new(),
            global_spans: Vec::new(),
            types: HashMap::new(),
            sizes: HashMap::new(),
            regs: BTreeSet::new(),
            cycles: None,
            rpts: Vec::new(),
        }
    }

    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.errors.push(AsmError::new(span, msg));
    }

    fn section(&mut self, name: &str, flags: Option<&str>) -> usize {
        if let Some(i) = self.sections.iter().position(|s| s.name == name) {
            return i;
        }
        let (mut exec, mut write) = section_flags(name);
        if let Some(f) = flags {
            exec = f.contains('x');
            write = f.contains('w');
        }
        self.sections.push(SecBuild {
            name: name.to_string(),
            exec,
            write,
            align: 4,
            data: Vec::new(),
            relocs: Vec::new(),
        });
        self.sections.len() - 1
    }

    fn cur(&mut self) -> usize {
        match self.cur {
            Some(c) => c,
            None => {
                let c = self.section(".text", None);
                self.cur = Some(c);
                c
            }
        }
    }

    fn here(&mut self) -> (usize, u32) {
        let c = self.cur();
        (c, self.sections[c].data.len() as u32)
    }

    /// Evaluates an operand expression. An address (a label plus or minus
    /// a constant) must stay within the 32-bit range relocations carry.
    fn eval(&self, e: &Expr) -> Result<Val, AsmError> {
        let v = self.eval_unchecked(e)?;
        match v {
            Val::Rel(_, x) | Val::Ext(_, x) if i32::try_from(x).is_err() => Err(AsmError::new(
                e.span(),
                format!("the address offset {x} does not fit in 32 bits"),
            )),
            v => Ok(v),
        }
    }

    fn eval_unchecked(&self, e: &Expr) -> Result<Val, AsmError> {
        Ok(match e {
            Expr::Int(v, _) => Val::Abs(*v),
            Expr::Sym(n, _) => {
                if let Some(v) = self.consts.get(n) {
                    Val::Abs(*v)
                } else if let Some((s, o)) = self.labels.get(n) {
                    Val::Rel(*s, *o as i64)
                } else if self.pass == 1 {
                    Val::Abs(0)
                } else {
                    Val::Ext(n.clone(), 0)
                }
            }
            Expr::Here(_) => match self.cur {
                Some(c) => Val::Rel(c, self.sections[c].data.len() as i64),
                None => Val::Rel(0, 0),
            },
            Expr::Un(op, a, s) => match (op, self.eval(a)?) {
                (UnOp::Neg, Val::Abs(v)) => Val::Abs(neg(v, *s)?),
                (UnOp::Not, Val::Abs(v)) => Val::Abs(!v),
                _ => return Err(AsmError::new(*s, "this operation needs a constant operand")),
            },
            Expr::Bin(op, a, b, s) => match (op, self.eval(a)?, self.eval(b)?) {
                (_, Val::Abs(x), Val::Abs(y)) => Val::Abs(bin(*op, x, y, *s)?),
                (BinOp::Add, Val::Rel(sec, x), Val::Abs(y))
                | (BinOp::Add, Val::Abs(y), Val::Rel(sec, x)) => {
                    Val::Rel(sec, bin(BinOp::Add, x, y, *s)?)
                }
                (BinOp::Sub, Val::Rel(sec, x), Val::Abs(y)) => {
                    Val::Rel(sec, bin(BinOp::Sub, x, y, *s)?)
                }
                (BinOp::Add, Val::Ext(n, x), Val::Abs(y))
                | (BinOp::Add, Val::Abs(y), Val::Ext(n, x)) => {
                    Val::Ext(n, bin(BinOp::Add, x, y, *s)?)
                }
                (BinOp::Sub, Val::Ext(n, x), Val::Abs(y)) => {
                    Val::Ext(n, bin(BinOp::Sub, x, y, *s)?)
                }
                (BinOp::Sub, Val::Rel(s1, x), Val::Rel(s2, y)) if s1 == s2 => {
                    Val::Abs(bin(BinOp::Sub, x, y, *s)?)
                }
                _ => {
                    return Err(AsmError::new(
                        *s,
                        "this expression cannot be computed at assembly or link time",
                    ))
                }
            },
        })
    }

    fn eval_abs(&self, e: &Expr) -> Result<i64, AsmError> {
        match self.eval(e)? {
            Val::Abs(v) => Ok(v),
            _ => Err(AsmError::new(e.span(), "expected a constant")),
        }
    }

    fn emit(&mut self, bytes: &[u8]) {
        let c = self.cur();
        self.sections[c].data.extend_from_slice(bytes);
    }

    fn reloc(&mut self, offset: u32, kind: RelocKind, v: Val) {
        if self.pass != 2 {
            return;
        }
        let c = self.cur();
        let (target, addend) = match v {
            Val::Rel(s, o) => (RelocTarget::Section(s), o),
            Val::Ext(n, o) => (RelocTarget::Symbol(n), o),
            Val::Abs(_) => return,
        };
        self.sections[c].relocs.push(Reloc {
            offset,
            kind,
            target,
            addend,
        });
    }

    fn pass(&mut self, lines: &[Line], pass: u8) {
        self.pass = pass;
        self.consts.clear();
        self.cur = None;
        for s in &mut self.sections {
            s.data.clear();
            s.relocs.clear();
        }
        for line in lines {
            for (name, span) in &line.labels {
                let here = self.here();
                if pass == 1 {
                    if self.labels.contains_key(name) || self.consts.contains_key(name) {
                        self.err(*span, format!("symbol `{name}` is defined twice"));
                    } else {
                        self.labels.insert(name.clone(), here);
                        self.label_order.push(name.clone());
                    }
                }
            }
            match &line.body {
                None => {}
                Some(Body::Instr(i)) => self.instr(i, None),
                Some(Body::Bundle(a, b, span)) => self.instr(a, Some((b, *span))),
                Some(Body::Directive(d, span, args)) => self.directive(d, *span, args),
            }
        }
    }

    /// Converts written operands to encoder operands for one candidate form,
    /// or says why they do not fit.
    fn operands(
        &mut self,
        o: &OpInfo,
        ops: &[Operand],
        pc: u32,
    ) -> Result<(Vec<EncOperand>, PendingReloc), Option<AsmError>> {
        if ops.len() != o.operands.len() {
            return Err(None);
        }
        let mut out = Vec::new();
        let mut reloc = None;
        for (k, op) in o.operands.iter().zip(ops) {
            let v = match (k, op) {
                (Kind::M, Operand::Reg(r, _)) if r.is_m => EncOperand::Reg(r.lo),
                (Kind::A, Operand::Reg(r, _)) if !r.is_m && r.hi == r.lo => EncOperand::Reg(r.lo),
                (Kind::A2, Operand::Reg(r, _)) if !r.is_m && r.hi == r.lo + 1 => {
                    EncOperand::Reg(r.lo)
                }
                (Kind::A4, Operand::Reg(r, _)) if !r.is_m && r.hi == r.lo + 3 => {
                    EncOperand::Reg(r.lo)
                }
                (
                    Kind::Mem | Kind::Post8 | Kind::Post16,
                    Operand::Mem {
                        base,
                        offset,
                        negate,
                        post,
                        span,
                    },
                ) => {
                    if !base.is_m {
                        return Err(Some(AsmError::new(
                            *span,
                            "the base of a memory operand must be an $m register",
                        )));
                    }
                    let off = match offset {
                        Some(e) => self.eval_abs(e).map_err(Some)?,
                        None => 0,
                    };
                    EncOperand::Mem {
                        base: base.lo,
                        offset: if *negate {
                            neg(off, *span).map_err(Some)?
                        } else {
                            off
                        },
                        post: *post,
                    }
                }
                (Kind::Simm | Kind::Uimm, Operand::Expr(e)) => match self.eval(e).map_err(Some)? {
                    Val::Abs(v) => EncOperand::Imm(v),
                    v if matches!(o.op, Op::SetziM | Op::SetziA) => {
                        reloc = Some((RelocKind::Abs20, v));
                        EncOperand::Imm(0)
                    }
                    _ => {
                        return Err(Some(AsmError::new(
                            e.span(),
                            "this operand must be a constant (only `setzi` takes an address)",
                        )))
                    }
                },
                (Kind::Target, Operand::Expr(e)) => match self.eval(e).map_err(Some)? {
                    Val::Rel(s, t) if Some(s) == self.cur => {
                        let d = t - pc as i64;
                        if d % 4 != 0 {
                            return Err(Some(AsmError::new(
                                e.span(),
                                "branch target is not word-aligned",
                            )));
                        }
                        EncOperand::Imm(d / 4)
                    }
                    Val::Abs(_) if self.pass == 1 => EncOperand::Imm(0),
                    Val::Abs(v) => {
                        return Err(Some(AsmError::new(
                            e.span(),
                            format!("branch target must be a label, found the constant {v}"),
                        )))
                    }
                    v => {
                        reloc = Some((RelocKind::Pcrel, v));
                        EncOperand::Imm(0)
                    }
                },
                (Kind::RptEnd, Operand::Expr(e)) => match self.eval(e).map_err(Some)? {
                    Val::Rel(s, t) if Some(s) == self.cur => {
                        let d = t - pc as i64 - 4;
                        if d <= 0 || d % 4 != 0 {
                            return Err(Some(AsmError::new(
                                e.span(),
                                "the repeat body must end after the `rpt` on a word boundary",
                            )));
                        }
                        EncOperand::Imm(d / 4)
                    }
                    Val::Abs(_) if self.pass == 1 => EncOperand::Imm(1),
                    _ => {
                        return Err(Some(AsmError::new(
                            e.span(),
                            "the end of a repeat body must be a label in the same section",
                        )))
                    }
                },
                _ => return Err(None),
            };
            out.push(v);
        }
        Ok((out, reloc))
    }

    fn encode_one(&mut self, i: &Instr, pc: u32) -> Option<(u32, Op, PendingReloc)> {
        let cands = by_mnemonic(&i.mnemonic);
        if cands.is_empty() {
            self.err(i.span, format!("unknown instruction `{}`", i.mnemonic));
            return None;
        }
        for o in cands {
            match self.operands(o, &i.operands, pc) {
                Ok((ops, reloc)) => {
                    for op in &i.operands {
                        if let Operand::Reg(r, _) = op {
                            for n in r.lo..=r.hi {
                                self.regs
                                    .insert(format!("${}{n}", if r.is_m { 'm' } else { 'a' }));
                            }
                        }
                        if let Operand::Mem { base, .. } = op {
                            self.regs.insert(format!("$m{}", base.lo));
                        }
                    }
                    return match encode::encode(o.op, &ops) {
                        Ok(w) => Some((w, o.op, reloc)),
                        Err(e) => {
                            let span = match &e {
                                encode::EncodeError::Operand { index, .. } => {
                                    i.operands.get(*index).map(|o| o.span()).unwrap_or(i.span)
                                }
                                _ => i.span,
                            };
                            self.err(span, e.to_string());
                            None
                        }
                    };
                }
                Err(Some(e)) => {
                    self.errors.push(e);
                    return None;
                }
                Err(None) => {}
            }
        }
        let forms: Vec<String> = cands
            .iter()
            .map(|o| {
                let ks: Vec<&str> = o.operands.iter().map(|k| encode::kind_name(*k)).collect();
                format!("`{} {}`", o.mnemonic, ks.join(", "))
            })
            .collect();
        let span = i
            .operands
            .first()
            .map(|f| {
                Span::new(
                    f.span().start,
                    i.operands
                        .last()
                        .map(|l| l.span().end)
                        .unwrap_or(f.span().end),
                )
            })
            .unwrap_or(i.span);
        self.err(
            span,
            format!(
                "`{}` does not take these operands; it takes {}",
                i.mnemonic,
                forms.join(" or ")
            ),
        );
        None
    }

    fn instr(&mut self, a: &Instr, b: Option<(&Instr, Span)>) {
        let (_, pc) = self.here();
        let Some((mut w1, op1, r1)) = self.encode_one(a, pc) else {
            self.emit(&[0; 4]);
            if b.is_some() {
                self.emit(&[0; 4]);
            }
            return;
        };
        if let Some((b, span)) = b {
            if info(op1).slot != Slot::Mem {
                self.err(a.span, format!("`{}` is an arithmetic-slot instruction; a bundle is `{{ memory ; arithmetic }}`", a.mnemonic));
            }
            if matches!(op1, Op::Rpt) {
                self.err(span, "`rpt` cannot be bundled");
            }
            w1 |= BUNDLE_BIT;
            self.emit(&w1.to_le_bytes());
            if let Some((k, v)) = r1 {
                self.reloc(pc, k, v);
            }
            match self.encode_one(b, pc + 4) {
                Some((w2, op2, r2)) => {
                    if info(op2).slot != Slot::Arith {
                        self.err(b.span, format!("`{}` is a memory-slot instruction and cannot be the second half of a bundle", b.mnemonic));
                    }
                    self.emit(&w2.to_le_bytes());
                    if let Some((k, v)) = r2 {
                        self.reloc(pc + 4, k, v);
                    }
                }
                None => self.emit(&[0; 4]),
            }
        } else {
            if op1 == Op::Rpt && self.pass == 2 {
                if let Ok(d) = encode::decode(w1) {
                    let c = self.cur();
                    let end = pc + 4 + 4 * d.imm as u32;
                    self.rpts.push((c, pc, end, a.span));
                }
            }
            self.emit(&w1.to_le_bytes());
            if let Some((k, v)) = r1 {
                self.reloc(pc, k, v);
            }
        }
    }

    /// The `.cycles` formula must evaluate with the final constants.
    fn check_cycles(&mut self) {
        let Some((f, span)) = self.cycles.clone() else {
            return;
        };
        if let Err(e) = cycles_of(&f, &self.consts) {
            self.err(span, format!("the `.cycles` formula `{f}`: {e}"));
        }
    }

    /// A context has one repeat state, so a `rpt` inside another's body
    /// would fault when it issues: refuse it here.
    fn check_rpt_nesting(&mut self) {
        let mut rpts = self.rpts.clone();
        rpts.sort_by_key(|r| (r.0, r.1));
        for (k, &(sec, _, end, outer)) in rpts.iter().enumerate() {
            for &(s2, at, _, span) in &rpts[k + 1..] {
                if s2 != sec || at >= end {
                    break;
                }
                let line = self.source[..start_of(&outer, self.source)]
                    .matches('\n')
                    .count()
                    + 1;
                self.err(
                    span,
                    format!("`rpt` inside the repeat body of the `rpt` at line {line}; repeats do not nest"),
                );
            }
        }
    }

    fn sym_arg(&mut self, args: &[Operand], i: usize, span: Span) -> Option<String> {
        match args.get(i) {
            Some(Operand::Expr(Expr::Sym(n, _))) => Some(n.clone()),
            _ => {
                self.err(span, "expected a symbol name");
                None
            }
        }
    }

    fn directive(&mut self, d: &str, span: Span, args: &[Operand]) {
        match d {
            ".section" => {
                let name = match args.first() {
                    Some(Operand::Expr(Expr::Sym(n, _))) => n.clone(),
                    Some(Operand::Expr(Expr::Here(_))) | None => {
                        self.err(span, "`.section` needs a name");
                        return;
                    }
                    Some(Operand::Str(s, _) | Operand::Dotted(s, _)) => s.clone(),
                    Some(o) => {
                        self.err(o.span(), "expected a section name");
                        return;
                    }
                };
                let flags = match args.get(1) {
                    Some(Operand::Str(f, _)) => Some(f.as_str()),
                    _ => None,
                };
                let s = self.section(&name, flags);
                self.cur = Some(s);
            }
            ".text" => self.cur = Some(self.section(".text", None)),
            ".data" => self.cur = Some(self.section(".data", None)),
            ".globl" | ".global" => {
                for a in args {
                    match a {
                        Operand::Expr(Expr::Sym(n, s)) => {
                            if self.pass == 1 {
                                self.globals.insert(n.clone());
                                self.global_spans.push((n.clone(), *s));
                            }
                        }
                        o => self.err(o.span(), "expected a symbol name"),
                    }
                }
            }
            ".type" => {
                let Some(n) = self.sym_arg(args, 0, span) else {
                    return;
                };
                let k = match args.get(1) {
                    Some(Operand::Type(t, _)) if t == "function" => SymKind::Func,
                    Some(Operand::Type(t, _)) if t == "object" => SymKind::Object,
                    _ => {
                        self.err(span, "expected `@function` or `@object`");
                        return;
                    }
                };
                self.types.insert(n, k);
            }
            ".size" => {
                let Some(n) = self.sym_arg(args, 0, span) else {
                    return;
                };
                match args.get(1) {
                    Some(Operand::Expr(e)) => match self.eval_abs(e) {
                        Ok(v) => match u32::try_from(v) {
                            Ok(v) => {
                                self.sizes.insert(n, v);
                            }
                            Err(_) => self.err(e.span(), format!("size {v} is out of range")),
                        },
                        Err(e) => self.errors.push(e),
                    },
                    _ => self.err(span, "`.size` takes a symbol and a size"),
                }
            }
            ".align" | ".balign" => {
                let n = match args.first() {
                    Some(Operand::Expr(e)) => match self.eval_abs(e) {
                        Ok(v) => v,
                        Err(e) => return self.errors.push(e),
                    },
                    _ => return self.err(span, "`.align` takes a byte alignment"),
                };
                if n <= 0 || n & (n - 1) != 0 || n > 4096 {
                    return self.err(
                        span,
                        format!("alignment {n} is not a power of two up to 4096"),
                    );
                }
                let c = self.cur();
                let s = &mut self.sections[c];
                s.align = s.align.max(n as u32);
                while !s.data.len().is_multiple_of(n as usize) {
                    s.data.push(0);
                }
            }
            ".word" | ".half" | ".byte" => {
                let size = match d {
                    ".word" => 4,
                    ".half" => 2,
                    _ => 1,
                };
                for a in args {
                    let Operand::Expr(e) = a else {
                        self.err(a.span(), "expected an expression");
                        continue;
                    };
                    let (_, off) = self.here();
                    match self.eval(e) {
                        Ok(Val::Abs(v)) => {
                            let lo = -(1i128 << (size * 8 - 1));
                            let hi = (1i128 << (size * 8)) - 1;
                            if !(lo..=hi).contains(&(v as i128)) {
                                self.err(
                                    e.span(),
                                    format!("value {v} does not fit in {size} bytes"),
                                );
                            }
                            self.emit(&v.to_le_bytes()[..size]);
                        }
                        Ok(v) if size == 4 => {
                            self.emit(&[0; 4]);
                            self.reloc(off, RelocKind::Abs32, v);
                        }
                        Ok(_) => {
                            self.err(e.span(), "only `.word` can hold an address");
                            self.emit(&vec![0; size]);
                        }
                        Err(er) => {
                            self.errors.push(er);
                            self.emit(&vec![0; size]);
                        }
                    }
                }
            }
            ".zero" | ".space" => match args.first() {
                Some(Operand::Expr(e)) => match self.eval_abs(e) {
                    Ok(n) if (0..=1 << 24).contains(&n) => self.emit(&vec![0; n as usize]),
                    Ok(n) => self.err(e.span(), format!("size {n} is out of range")),
                    Err(e) => self.errors.push(e),
                },
                _ => self.err(span, "`.zero` takes a size"),
            },
            ".set" | ".equ" | ".param" => {
                let (Some(Operand::Expr(Expr::Sym(n, nspan))), Some(Operand::Expr(e))) =
                    (args.first(), args.get(1))
                else {
                    return self.err(span, format!("`{d}` takes a name and a value"));
                };
                if self.labels.contains_key(n) {
                    return self.err(*nspan, format!("`{n}` is already a label"));
                }
                let given = if d == ".param" {
                    self.params.get(n).copied()
                } else {
                    None
                };
                let v = match given {
                    Some(v) => v,
                    None => match self.eval_abs(e) {
                        Ok(v) => v,
                        Err(e) => return self.errors.push(e),
                    },
                };
                self.consts.insert(n.clone(), v);
            }
            ".cycles" => match args.first() {
                Some(Operand::Str(s, sp)) => self.cycles = Some((s.clone(), *sp)),
                _ => self.err(span, "`.cycles` takes a formula in quotes"),
            },
            _ => self.err(span, format!("unknown directive `{d}`")),
        }
    }

    fn finish(mut self, file: &str, params: BTreeMap<String, i64>) -> Assembled {
        let mut symbols = Vec::new();
        for name in &self.label_order {
            let (s, off) = self.labels[name];
            let global = self.globals.contains(name);
            symbols.push(ObjSymbol {
                name: name.clone(),
                section: Some(s),
                value: off,
                size: self.sizes.get(name).copied().unwrap_or(0),
                global,
                kind: self
                    .types
                    .get(name)
                    .copied()
                    .unwrap_or(if self.sections[s].exec {
                        SymKind::Func
                    } else {
                        SymKind::Object
                    }),
            });
        }
        // Globals that are not defined here are references to other objects.
        for (g, _) in &self.global_spans {
            if !self.labels.contains_key(g) {
                symbols.push(ObjSymbol {
                    name: g.clone(),
                    section: None,
                    value: 0,
                    size: 0,
                    global: true,
                    kind: SymKind::NoType,
                });
            }
        }
        let mut used_ext = BTreeSet::new();
        for s in &self.sections {
            for r in &s.relocs {
                if let RelocTarget::Symbol(n) = &r.target {
                    used_ext.insert(n.clone());
                }
            }
        }
        for n in used_ext {
            if !symbols.iter().any(|s| s.name == n) {
                symbols.push(ObjSymbol {
                    name: n,
                    section: None,
                    value: 0,
                    size: 0,
                    global: true,
                    kind: SymKind::NoType,
                });
            }
        }
        let cycles_value = self
            .cycles
            .as_ref()
            .and_then(|(f, _)| cycles_of(f, &self.consts).ok());
        let sections: Vec<ObjSection> = self
            .sections
            .drain(..)
            .map(|s| ObjSection {
                name: s.name,
                exec: s.exec,
                write: s.write,
                align: s.align,
                data: s.data,
                relocs: s.relocs,
            })
            .collect();
        let code_size = sections
            .iter()
            .filter(|s| s.exec)
            .map(|s| s.data.len() as u32)
            .sum();
        let entry_points = symbols
            .iter()
            .filter(|s| s.global && s.section.is_some_and(|i| sections[i].exec))
            .map(|s| crate::elf::EntryPoint {
                name: s.name.clone(),
                section: sections[s.section.unwrap_or(0)].name.clone(),
                offset: s.value,
            })
            .collect();
        let name = symbols
            .iter()
            .find(|s| s.global && s.kind == SymKind::Func)
            .map(|s| s.name.clone())
            .unwrap_or_else(|| file.to_string());
        let meta = KernelMeta {
            name,
            source: file.to_string(),
            params,
            entry_points,
            registers_used: self.regs.iter().cloned().collect(),
            code_size,
            cycles_formula: self.cycles.map(|(f, _)| f),
            cycles: cycles_value,
            source_sha256: crate::kernels::sha256_hex(self.source.as_bytes()),
        };
        Assembled {
            object: ObjectFile {
                sections,
                symbols,
                meta: Some(meta.clone()),
            },
            meta,
        }
    }
}
