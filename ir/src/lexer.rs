//! The IR lexer (logos). Tokens borrow from the source; the parser may
//! re-lex from any byte offset, which is how `4x8xf32` dimension lists are
//! split the way MLIR does.

use logos::Logos;

#[derive(Logos, Copy, Clone, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip r"//[^\n]*")]
pub enum Tok {
    #[regex(r"%[A-Za-z0-9_$.\-]+(#[0-9]+)?")]
    ValueId,
    #[regex(r"\^[A-Za-z0-9_$.\-]+")]
    BlockId,
    #[regex(r"@[A-Za-z_$.][A-Za-z0-9_$.\-]*")]
    #[regex(r#"@"([^"\\\n]|\\.)*""#)]
    SymbolRef,
    #[regex(r"#[A-Za-z_][A-Za-z0-9_$.\-]*")]
    HashId,
    #[regex(r"![A-Za-z_][A-Za-z0-9_$.\-]*")]
    BangId,
    #[regex(r"[A-Za-z_][A-Za-z0-9_$.]*")]
    BareId,
    #[regex(r"[0-9]+")]
    #[regex(r"0x[0-9a-fA-F]+")]
    Integer,
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?")]
    Float,
    #[regex(r#""([^"\\\n]|\\.)*""#)]
    String,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LSquare,
    #[token("]")]
    RSquare,
    #[token("<")]
    Less,
    #[token(">")]
    Greater,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("::")]
    ColonColon,
    #[token("=")]
    Equal,
    #[token("->")]
    Arrow,
    #[token("-")]
    Minus,
    #[token("+")]
    Plus,
    #[token("?")]
    Question,
    #[token("*")]
    Star,
    #[token("|")]
    Pipe,
    #[token("{-#")]
    FileMetadataBegin,
    #[token("#-}")]
    FileMetadataEnd,
    Eof,
    Error,
}

impl Tok {
    pub fn describe(self) -> &'static str {
        match self {
            Tok::ValueId => "SSA value",
            Tok::BlockId => "block name",
            Tok::SymbolRef => "symbol reference",
            Tok::HashId => "attribute alias",
            Tok::BangId => "type alias",
            Tok::BareId => "identifier",
            Tok::Integer => "integer",
            Tok::Float => "float",
            Tok::String => "string",
            Tok::LParen => "'('",
            Tok::RParen => "')'",
            Tok::LBrace => "'{'",
            Tok::RBrace => "'}'",
            Tok::LSquare => "'['",
            Tok::RSquare => "']'",
            Tok::Less => "'<'",
            Tok::Greater => "'>'",
            Tok::Comma => "','",
            Tok::Colon => "':'",
            Tok::ColonColon => "'::'",
            Tok::Equal => "'='",
            Tok::Arrow => "'->'",
            Tok::Minus => "'-'",
            Tok::Plus => "'+'",
            Tok::Question => "'?'",
            Tok::Star => "'*'",
            Tok::Pipe => "'|'",
            Tok::FileMetadataBegin => "'{-#'",
            Tok::FileMetadataEnd => "'#-}'",
            Tok::Eof => "end of file",
            Tok::Error => "invalid character",
        }
    }
}

/// A token: its kind and byte range in the source.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Tok,
    pub start: u32,
    pub end: u32,
}

pub struct Lexer<'s> {
    src: &'s str,
    inner: logos::Lexer<'s, Tok>,
    base: usize,
}

impl<'s> Lexer<'s> {
    pub fn new(src: &'s str) -> Self {
        Lexer {
            src,
            inner: Tok::lexer(src),
            base: 0,
        }
    }

    pub fn src(&self) -> &'s str {
        self.src
    }

    /// Restarts lexing at byte `offset`.
    pub fn reset(&mut self, offset: usize) {
        self.base = offset.min(self.src.len());
        self.inner = Tok::lexer(&self.src[self.base..]);
    }

    pub fn next_token(&mut self) -> Token {
        match self.inner.next() {
            None => Token {
                kind: Tok::Eof,
                start: self.src.len() as u32,
                end: self.src.len() as u32,
            },
            Some(r) => {
                let span = self.inner.span();
                Token {
                    kind: r.unwrap_or(Tok::Error),
                    start: (self.base + span.start) as u32,
                    end: (self.base + span.end) as u32,
                }
            }
        }
    }
}

/// Decodes the body of a string literal (without quotes): `\n`, `\t`, `\"`,
/// `\\` and two-digit hex escapes, as MLIR's lexer does.
pub fn unescape(body: &str) -> Result<Vec<u8>, String> {
    let b = body.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = *b.get(i + 1).ok_or("unterminated escape")?;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'"' => out.push(b'"'),
            b'\\' => out.push(b'\\'),
            _ => {
                let hex = body.get(i + 1..i + 3).ok_or("invalid escape")?;
                let v =
                    u8::from_str_radix(hex, 16).map_err(|_| format!("invalid escape '\\{hex}'"))?;
                out.push(v);
                i += 3;
                continue;
            }
        }
        i += 2;
    }
    Ok(out)
}

/// Escapes a string for printing inside double quotes, as MLIR does:
/// backslashes doubled, other non-printable bytes and `"` as two hex digits.
pub fn escape_into(s: &[u8], out: &mut String) {
    let mut rest = s;
    while !rest.is_empty() {
        // Runs of printable bytes are copied whole.
        let n = plain_prefix(rest);
        if n > 0 {
            // Printable ASCII is valid UTF-8.
            out.push_str(std::str::from_utf8(&rest[..n]).unwrap_or_default());
            rest = &rest[n..];
            continue;
        }
        match rest[0] {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\22"),
            c => {
                use std::fmt::Write;
                let _ = write!(out, "\\{c:02X}");
            }
        }
        rest = &rest[1..];
    }
}

/// The length of `s`'s leading run of bytes printed as themselves
/// (printable ASCII but the backslash and `"`), found a chunk at a time: long hex
/// text is nothing but such bytes.
fn plain_prefix(s: &[u8]) -> usize {
    let plain = |c: u8| (c.wrapping_sub(0x20) < 0x5f) & (c != b'\\') & (c != b'"');
    let mut n = 0;
    for chunk in s.chunks(32) {
        if chunk.iter().fold(true, |ok, &c| ok & plain(c)) {
            n += chunk.len();
        } else {
            return n + chunk.iter().position(|&c| !plain(c)).unwrap_or(chunk.len());
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte by byte, as the printer escaped before runs were found in chunks.
    fn escaped_one_by_one(s: &[u8]) -> String {
        let mut out = String::new();
        for &c in s {
            match c {
                b'\\' => out.push_str("\\\\"),
                b'"' => out.push_str("\\22"),
                0x20..=0x7e => out.push(c as char),
                _ => out.push_str(&format!("\\{c:02X}")),
            }
        }
        out
    }

    #[test]
    fn escapes_at_every_chunk_position() {
        for special in [b'\\', b'"', b'\n', 0x1f, 0x7f, 0x80, 0xff] {
            for at in [0, 1, 30, 31, 32, 33, 63, 64, 65, 99] {
                let mut s: Vec<u8> = (0..100u8).map(|i| b'a' + i % 26).collect();
                s[at] = special;
                s[(at + 37) % 100] = special;
                let mut out = String::new();
                escape_into(&s, &mut out);
                assert_eq!(out, escaped_one_by_one(&s), "{special:#x} at {at}");
                assert_eq!(unescape(&out).unwrap(), s, "{special:#x} at {at}");
            }
        }
        let mut out = String::new();
        escape_into(b"", &mut out);
        assert_eq!(out, "");
    }
}
