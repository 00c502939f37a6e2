//! The syntax tree of one assembly line, as the grammar builds it.

use super::lexer::RegTok;

/// A byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Int(i64, Span),
    Sym(String, Span),
    /// The location counter `.`.
    Here(Span),
    Un(UnOp, Box<Expr>, Span),
    Bin(BinOp, Box<Expr>, Box<Expr>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Int(_, s)
            | Expr::Sym(_, s)
            | Expr::Here(s)
            | Expr::Un(_, _, s)
            | Expr::Bin(_, _, _, s) => *s,
        }
    }
}

/// An operand as written.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Reg(RegTok, Span),
    /// `[$m]`, `[$m+e]`, `[$m-e]`, `[$m+=e]`.
    Mem {
        base: RegTok,
        offset: Option<Expr>,
        negate: bool,
        post: bool,
        span: Span,
    },
    Str(String, Span),
    /// `@function`, `@object` (for `.type`).
    Type(String, Span),
    /// A name starting with a dot, as a section name (`.text.gemm`).
    Dotted(String, Span),
    Expr(Expr),
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Reg(_, s)
            | Operand::Str(_, s)
            | Operand::Type(_, s)
            | Operand::Dotted(_, s) => *s,
            Operand::Mem { span, .. } => *span,
            Operand::Expr(e) => e.span(),
        }
    }
}

/// A mnemonic with its operands.
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    pub mnemonic: String,
    pub span: Span,
    pub operands: Vec<Operand>,
}

/// What a line holds after its labels.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    Instr(Instr),
    Bundle(Instr, Instr, Span),
    Directive(String, Span, Vec<Operand>),
}

/// One line: labels then an optional body.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub labels: Vec<(String, Span)>,
    pub body: Option<Body>,
}
