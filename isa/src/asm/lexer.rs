//! The assembly lexer (logos). Newlines are tokens because the language is
//! line-oriented; `#` and `//` start comments.

use logos::Logos;

/// A register token: `$m3`, `$a4`, `$a4:5`, `$a4:7`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegTok {
    pub is_m: bool,
    pub lo: u8,
    pub hi: u8,
}

fn parse_reg(lex: &mut logos::Lexer<Tok>) -> Option<RegTok> {
    let s = &lex.slice()[1..];
    let is_m = s.starts_with('m');
    let body = &s[1..];
    let (lo, hi) = match body.split_once(':') {
        Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
        None => {
            let v: u8 = body.parse().ok()?;
            (v, v)
        }
    };
    if is_m && lo != hi {
        return None;
    }
    Some(RegTok { is_m, lo, hi })
}

fn parse_int(lex: &mut logos::Lexer<Tok>) -> Option<i64> {
    let s = lex.slice().replace('_', "");
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h.to_string(), 16)
    } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        (b.to_string(), 2)
    } else {
        (s, 10)
    };
    // Literals are signed 64-bit values: a larger one is an error, not a
    // value wrapped to a negative one.
    u64::from_str_radix(&digits, radix)
        .ok()
        .and_then(|v| i64::try_from(v).ok())
}

fn parse_str(lex: &mut logos::Lexer<Tok>) -> String {
    let s = lex.slice();
    let inner = &s[1..s.len() - 1];
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Tokens of the assembly language.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r]+")]
#[logos(skip r"(#|//)[^\n]*")]
pub enum Tok {
    #[token("\n")]
    Newline,
    // Dots inside, so that a section name (`.text.gemm`) is one token.
    #[regex(r"\.[A-Za-z_][A-Za-z0-9_.]*", |l| l.slice().to_string())]
    Directive(String),
    #[regex(r"[A-Za-z_][A-Za-z0-9_.]*", |l| l.slice().to_string())]
    Ident(String),
    #[regex(r"\$[am][0-9]+(:[0-9]+)?", parse_reg)]
    Reg(RegTok),
    #[regex(r"[0-9][0-9a-fA-FxXbB_]*", parse_int)]
    Int(i64),
    #[regex(r#""([^"\\\n]|\\.)*""#, parse_str)]
    Str(String),
    #[regex(r"\\([A-Za-z_][A-Za-z0-9_]*|@)", |l| l.slice()[1..].to_string())]
    MacroArg(String),
    #[token(".")]
    Dot,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("[")]
    LBrack,
    #[token("]")]
    RBrack,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(";")]
    Semi,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("~")]
    Tilde,
    #[token("+=")]
    PlusEq,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("@")]
    At,
    #[token("=")]
    Eq,
}

/// A token with its byte span in the source.
#[derive(Clone, Debug, PartialEq)]
pub struct SpTok {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// Lexes a whole source into lines of tokens. Errors carry the byte span of
/// the offending text.
pub fn lex_lines(src: &str) -> Result<Vec<Vec<SpTok>>, (usize, usize)> {
    let mut lines = vec![Vec::new()];
    let mut lex = Tok::lexer(src);
    while let Some(t) = lex.next() {
        let span = lex.span();
        match t {
            Ok(Tok::Newline) => lines.push(Vec::new()),
            Ok(tok) => lines.last_mut().expect("one line at least").push(SpTok {
                tok,
                start: span.start,
                end: span.end,
            }),
            Err(()) => return Err((span.start, span.end)),
        }
    }
    Ok(lines)
}
