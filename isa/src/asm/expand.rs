//! Macro expansion: `.macro`/`.endm`, `.rept`/`.endr`, `.if`/`.else`/`.endif`,
//! `.define` (token substitution)
//! and `.error`, applied to lines of tokens before parsing. Constants
//! (`.set`, `.equ`, `.param`) are tracked here too, so that conditions and
//! repeat counts can use them; their lines stay in the stream for the
//! assembler, which evaluates them again in order.

use std::collections::{BTreeMap, HashMap};

use super::ast::{Expr, Span};
use super::lexer::{SpTok, Tok};
use super::{eval_const, parse_expr, AsmError};

struct Macro {
    params: Vec<String>,
    body: Vec<Vec<SpTok>>,
}

/// Expands a lexed source into plain lines.
pub struct Expander<'a> {
    params: &'a BTreeMap<String, i64>,
    consts: HashMap<String, i64>,
    macros: HashMap<String, Macro>,
    defines: HashMap<String, Vec<SpTok>>,
    /// Set when the expansion ran away; everything stops.
    aborted: bool,
    /// Macro expansions so far (`\@` expands to this count).
    expansions: usize,
    /// Tokens looked at, repeat iterations and macro body tokens copied so
    /// far (see [`MAX_WORK`]).
    work: usize,
    /// Tokens in the expanded output so far (see [`MAX_TOKENS`]).
    tokens: usize,
    /// Bytes of token text copied so far (see [`MAX_BYTES`]).
    bytes: usize,
    pub errors: Vec<AsmError>,
    /// Parameters as finally bound (given or defaulted), for the metadata.
    pub bound_params: BTreeMap<String, i64>,
}

/// Nesting of macro invocations, `.rept` and `.if` blocks.
pub const MAX_DEPTH: usize = 64;
/// Expanded lines a source may produce (a bound on runaway `.rept` nests).
pub const MAX_LINES: usize = 1_000_000;
/// Tokens one line may hold after substitution (`.define` bodies and
/// macro arguments included): substitution that doubles a line per level
/// stops here, long before its size is a problem.
pub const MAX_LINE_TOKENS: usize = 4096;
/// Tokens the whole expansion may produce.
pub const MAX_TOKENS: usize = 4_000_000;
/// Bytes one identifier pasted together from macro arguments may reach
/// (`lbl_\x\y`): pasting can double a name per recursion level without
/// adding a token.
pub const MAX_IDENT_BYTES: usize = 1024;
/// Bytes of token text the expansion may copy in all, temporaries of macro
/// bodies with their arguments substituted included: with the token limits
/// this keeps the whole expansion within a few hundred megabytes (the
/// library's largest kernels copy well under a megabyte).
pub const MAX_BYTES: usize = 64 << 20;
/// Steps of expansion in all: one per token of every line looked at, per
/// token of a macro body copied for an invocation, and per repeat
/// iteration. A bound on expansions that produce nothing (nested `.rept`
/// of empty bodies, recursion under a false `.if`); the library's largest
/// kernels take about 40,000.
pub const MAX_WORK: usize = 8_000_000;

fn line_span(line: &[SpTok]) -> Span {
    match (line.first(), line.last()) {
        (Some(a), Some(b)) => Span::new(a.start, b.end),
        _ => Span::default(),
    }
}

fn directive(line: &[SpTok]) -> Option<&str> {
    match line.first() {
        Some(SpTok {
            tok: Tok::Directive(d),
            ..
        }) => Some(d.as_str()),
        _ => None,
    }
}

/// Splits tokens at top-level commas.
pub fn split_commas(toks: &[SpTok]) -> Vec<Vec<SpTok>> {
    let mut out = vec![Vec::new()];
    let mut depth = 0i32;
    for t in toks {
        match t.tok {
            Tok::LParen | Tok::LBrack => depth += 1,
            Tok::RParen | Tok::RBrack => depth -= 1,
            Tok::Comma if depth == 0 => {
                out.push(Vec::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().expect("nonempty").push(t.clone());
    }
    if out.len() == 1 && out[0].is_empty() {
        out.clear();
    }
    out
}

/// Why a substituted line was refused: too many tokens, or an identifier
/// pasted together from arguments grew too long.
enum Runaway {
    Tokens,
    Ident,
}

/// Substitutes macro arguments (and `\@`) into one body line. An argument
/// written right against an identifier (`end_\x`, `\x_end`) is pasted into it.
/// Refused when the line would pass [`MAX_LINE_TOKENS`] or a pasted
/// identifier [`MAX_IDENT_BYTES`].
fn substitute_args(
    line: &[SpTok],
    params: &[String],
    args: &[Vec<SpTok>],
    unique: usize,
) -> Result<Vec<SpTok>, Runaway> {
    let mut out: Vec<SpTok> = Vec::new();
    let mut prev_end = usize::MAX;
    for t in line {
        let repl: Vec<SpTok> = match &t.tok {
            Tok::MacroArg(a) if a == "@" => vec![SpTok {
                tok: Tok::Ident(format!("{unique}")),
                start: t.start,
                end: t.end,
            }],
            Tok::MacroArg(a) => match params.iter().position(|p| p == a) {
                Some(pi) => args.get(pi).cloned().unwrap_or_default(),
                None => vec![t.clone()],
            },
            _ => vec![t.clone()],
        };
        let touching = prev_end == t.start;
        prev_end = t.end;
        if touching && repl.len() == 1 {
            let next = match &repl[0].tok {
                Tok::Ident(n) => Some(n.clone()),
                Tok::Int(v) => Some(v.to_string()),
                _ => None,
            };
            if let (
                Some(SpTok {
                    tok: Tok::Ident(last),
                    end,
                    ..
                }),
                Some(next),
            ) = (out.last_mut(), next)
            {
                // Pasting doubles an identifier per level of a recursion
                // like `m \a\a` without adding tokens: bounded by bytes.
                if last.len() + next.len() > MAX_IDENT_BYTES {
                    return Err(Runaway::Ident);
                }
                last.push_str(&next);
                *end = t.end;
                continue;
            }
        }
        if out.len() + repl.len() > MAX_LINE_TOKENS {
            return Err(Runaway::Tokens);
        }
        out.extend(repl);
    }
    Ok(out)
}

/// Bytes of text a line of tokens holds (identifiers, strings, directives;
/// one for every other token), the measure of [`MAX_BYTES`].
fn text_bytes(line: &[SpTok]) -> usize {
    line.iter()
        .map(|t| match &t.tok {
            Tok::Ident(s) | Tok::Str(s) | Tok::Directive(s) | Tok::MacroArg(s) => s.len() + 1,
            _ => 1,
        })
        .sum()
}

impl<'a> Expander<'a> {
    pub fn new(params: &'a BTreeMap<String, i64>) -> Self {
        Expander {
            params,
            consts: HashMap::new(),
            macros: HashMap::new(),
            defines: HashMap::new(),
            expansions: 0,
            work: 0,
            tokens: 0,
            bytes: 0,
            aborted: false,
            errors: Vec::new(),
            bound_params: BTreeMap::new(),
        }
    }

    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.errors.push(AsmError::new(span, msg));
    }

    /// Reports a runaway expansion at `span` and stops everything.
    fn abort(&mut self, span: Span, msg: impl Into<String>) {
        self.err(span, msg);
        self.aborted = true;
    }

    /// Counts `n` units of work; false (after aborting) past [`MAX_WORK`].
    fn spend(&mut self, n: usize, span: Span) -> bool {
        self.work += n;
        if self.work > MAX_WORK && !self.aborted {
            self.abort(
                span,
                format!("the expansion takes more than {MAX_WORK} steps (runaway `.rept` or macro recursion?)"),
            );
        }
        !self.aborted
    }

    fn eval(&mut self, toks: &[SpTok], span: Span) -> Option<i64> {
        if toks.is_empty() {
            self.err(span, "expected an expression");
            return None;
        }
        let e: Expr = match parse_expr(toks) {
            Ok(e) => e,
            Err(e) => {
                self.errors.push(e);
                return None;
            }
        };
        match eval_const(&e, &self.consts) {
            Ok(v) => Some(v),
            Err(e) => {
                self.errors.push(e);
                None
            }
        }
    }

    /// Finds the end of a block opened at `lines[start]`: returns the index
    /// of the closing directive and of a top-level `.else`, if any.
    fn block_end(
        &mut self,
        lines: &[Vec<SpTok>],
        start: usize,
        open: &[&str],
        close: &str,
    ) -> Option<(usize, Option<usize>)> {
        let mut depth = 0;
        let mut else_at = None;
        for (i, l) in lines.iter().enumerate().skip(start + 1) {
            match directive(l) {
                Some(d) if open.contains(&d) => depth += 1,
                Some(d) if d == close => {
                    if depth == 0 {
                        return Some((i, else_at));
                    }
                    depth -= 1;
                }
                Some(".else") if depth == 0 && close == ".endif" => else_at = Some(i),
                _ => {}
            }
        }
        self.err(
            line_span(&lines[start]),
            format!("this block has no matching `{close}`"),
        );
        None
    }

    /// Replaces `.define`d names by their tokens; `None` when the line
    /// would pass [`MAX_LINE_TOKENS`].
    fn substitute(&self, line: &[SpTok]) -> Option<Vec<SpTok>> {
        let mut out = Vec::with_capacity(line.len());
        for t in line {
            match &t.tok {
                Tok::Ident(n) if self.defines.contains_key(n) => {
                    let body = &self.defines[n];
                    if out.len() + body.len() > MAX_LINE_TOKENS {
                        return None;
                    }
                    out.extend(body.iter().cloned())
                }
                _ if out.len() >= MAX_LINE_TOKENS => return None,
                _ => out.push(t.clone()),
            }
        }
        Some(out)
    }

    fn too_long(&mut self, span: Span, what: &str) {
        self.abort(
            span,
            format!(
                "{what} more than {MAX_LINE_TOKENS} tokens (runaway `.define` or macro argument?)"
            ),
        );
    }

    /// Appends an expanded line to `out`, within [`MAX_TOKENS`].
    fn emit(&mut self, line: Vec<SpTok>, out: &mut Vec<Vec<SpTok>>) {
        self.tokens += line.len();
        if self.tokens > MAX_TOKENS {
            let span = line_span(&line);
            self.abort(
                span,
                format!("the expansion produces more than {MAX_TOKENS} tokens"),
            );
            return;
        }
        out.push(line);
    }

    /// Counts the text of a copied line against [`MAX_BYTES`]; false (after
    /// aborting) past it.
    fn copy_bytes(&mut self, line: &[SpTok], span: Span) -> bool {
        self.bytes += text_bytes(line);
        if self.bytes > MAX_BYTES && !self.aborted {
            self.abort(
                span,
                format!("the expansion copies more than {MAX_BYTES} bytes of text (runaway macro recursion?)"),
            );
        }
        !self.aborted
    }

    /// Expands `lines` into `out`.
    pub fn expand(&mut self, lines: &[Vec<SpTok>], out: &mut Vec<Vec<SpTok>>, depth: usize) {
        if depth > MAX_DEPTH {
            // Stops everything: a macro that invokes itself twice would
            // otherwise report this 2^MAX_DEPTH times.
            let span = lines.first().map(|l| line_span(l)).unwrap_or_default();
            self.abort(
                span,
                format!("macros, `.rept` and `.if` nested more than {MAX_DEPTH} deep"),
            );
            return;
        }
        let mut i = 0;
        while i < lines.len() {
            if !self.within_budget(&lines[i], out) {
                return;
            }
            let Some(line) = self.with_defines(&lines[i]) else {
                return;
            };
            let next = match directive(&line) {
                Some(".define") => self.define(&line).map(|()| i + 1),
                Some(".macro") => self.define_macro(lines, i, &line),
                Some(".rept") => self.repeat(lines, i, &line, out, depth),
                Some(".if") => self.conditional(lines, i, &line, out, depth),
                Some(d @ (".endm" | ".endr" | ".endif" | ".else")) => {
                    self.err(
                        line_span(&line),
                        format!("`{d}` without an opening directive"),
                    );
                    Some(i + 1)
                }
                Some(".error") => {
                    self.error_directive(&line);
                    Some(i + 1)
                }
                Some(".set" | ".equ" | ".param") => {
                    self.constant(&line);
                    self.emit(line, out);
                    Some(i + 1)
                }
                _ => self.invocation(line, out, depth).map(|()| i + 1),
            };
            match next {
                Some(n) => i = n,
                None => return,
            }
        }
    }

    /// Charges a line against the work and line limits; false when the
    /// expansion is (now) aborted.
    fn within_budget(&mut self, line: &[SpTok], out: &[Vec<SpTok>]) -> bool {
        if self.aborted || !self.spend(line.len().max(1), line_span(line)) {
            return false;
        }
        if out.len() > MAX_LINES {
            self.abort(
                line_span(line),
                format!("the expansion produces more than {MAX_LINES} lines"),
            );
            return false;
        }
        true
    }

    /// `line` with `.define`d names substituted (a `.define` line itself
    /// as written); `None` after aborting on a line that grew too long.
    fn with_defines(&mut self, line: &[SpTok]) -> Option<Vec<SpTok>> {
        if self.defines.is_empty() || directive(line) == Some(".define") {
            return Some(line.to_vec());
        }
        match self.substitute(line) {
            Some(l) if self.copy_bytes(&l, line_span(line)) => Some(l),
            Some(_) => None,
            None => {
                self.too_long(
                    line_span(line),
                    "with `.define`s substituted, this line has",
                );
                None
            }
        }
    }

    /// `.define NAME tokens...`; `None` after aborting.
    fn define(&mut self, line: &[SpTok]) -> Option<()> {
        let span = line_span(line);
        match line.get(1) {
            Some(SpTok {
                tok: Tok::Ident(n), ..
            }) => match self.substitute(&line[2..]) {
                Some(body) => {
                    self.defines.insert(n.clone(), body);
                }
                None => {
                    self.too_long(span, &format!("`.define {n}` expands to"));
                    return None;
                }
            },
            _ => self.err(span, "`.define` takes a name and replacement tokens"),
        }
        Some(())
    }

    /// `.macro name params...` up to its `.endm`; the index after it.
    fn define_macro(&mut self, lines: &[Vec<SpTok>], i: usize, line: &[SpTok]) -> Option<usize> {
        let (end, _) = self.block_end(lines, i, &[".macro"], ".endm")?;
        let args = split_commas(&line[1..]);
        let mut names = Vec::new();
        let mut name = None;
        // `.macro name a, b`: the first group is `name a`.
        for (k, g) in args.iter().enumerate() {
            for (j, t) in g.iter().enumerate() {
                match &t.tok {
                    Tok::Ident(s) if k == 0 && j == 0 => name = Some(s.clone()),
                    Tok::Ident(s) => names.push(s.clone()),
                    _ => self.err(Span::new(t.start, t.end), "expected a macro parameter name"),
                }
            }
        }
        match name {
            Some(n) => {
                let body = lines[i + 1..end].to_vec();
                self.macros.insert(
                    n,
                    Macro {
                        params: names,
                        body,
                    },
                );
            }
            None => self.err(line_span(line), "`.macro` needs a name"),
        }
        Some(end + 1)
    }

    /// `.rept N` up to its `.endr`, expanded N times; the index after it.
    fn repeat(
        &mut self,
        lines: &[Vec<SpTok>],
        i: usize,
        line: &[SpTok],
        out: &mut Vec<Vec<SpTok>>,
        depth: usize,
    ) -> Option<usize> {
        let span = line_span(line);
        let (end, _) = self.block_end(lines, i, &[".rept"], ".endr")?;
        let count = self.eval(&line[1..], span).unwrap_or(0);
        if !(0..=1_000_000).contains(&count) {
            self.err(span, format!("repeat count {count} is out of range"));
        } else {
            for _ in 0..count {
                if !self.spend(1, span) {
                    return None;
                }
                self.expand(&lines[i + 1..end], out, depth + 1);
            }
        }
        Some(end + 1)
    }

    /// `.if`/`.else`/`.endif`: the taken branch expanded; the index after it.
    fn conditional(
        &mut self,
        lines: &[Vec<SpTok>],
        i: usize,
        line: &[SpTok],
        out: &mut Vec<Vec<SpTok>>,
        depth: usize,
    ) -> Option<usize> {
        let (end, else_at) = self.block_end(lines, i, &[".if"], ".endif")?;
        let cond = self.eval(&line[1..], line_span(line)).unwrap_or(0);
        let then_end = else_at.unwrap_or(end);
        if cond != 0 {
            self.expand(&lines[i + 1..then_end], out, depth + 1);
        } else if let Some(e) = else_at {
            self.expand(&lines[e + 1..end], out, depth + 1);
        }
        Some(end + 1)
    }

    /// `.error "message"`: an error at the line.
    fn error_directive(&mut self, line: &[SpTok]) {
        let msg = match line.get(1) {
            Some(SpTok {
                tok: Tok::Str(s), ..
            }) => s.clone(),
            _ => "`.error` reached".to_string(),
        };
        self.err(line_span(line), msg);
    }

    /// `.set`/`.equ`/`.param NAME, value`: tracked for conditions and counts
    /// (the line itself stays for the assembler).
    fn constant(&mut self, line: &[SpTok]) {
        let span = line_span(line);
        let Some(d) = directive(line).map(str::to_string) else {
            return;
        };
        let groups = split_commas(&line[1..]);
        let name = match (groups.first().map(|g| g.as_slice()), groups.len()) {
            (
                Some(
                    [SpTok {
                        tok: Tok::Ident(name),
                        ..
                    }],
                ),
                2,
            ) => name.clone(),
            _ => {
                self.err(span, format!("`{d}` takes a name and a value"));
                return;
            }
        };
        let given = if d == ".param" {
            self.params.get(&name).copied()
        } else {
            None
        };
        let v = match given {
            Some(v) => Some(v),
            None => self.eval(&groups[1], span),
        };
        if let Some(v) = v {
            self.consts.insert(name.clone(), v);
            if d == ".param" {
                self.bound_params.insert(name, v);
            }
        }
    }

    /// Any other line: a macro invocation (possibly after labels) expanded,
    /// or the line itself emitted. `None` after aborting.
    fn invocation(
        &mut self,
        line: Vec<SpTok>,
        out: &mut Vec<Vec<SpTok>>,
        depth: usize,
    ) -> Option<()> {
        let span = line_span(&line);
        let mut k = 0;
        while let (
            Some(SpTok {
                tok: Tok::Ident(_), ..
            }),
            Some(SpTok {
                tok: Tok::Colon, ..
            }),
        ) = (line.get(k), line.get(k + 1))
        {
            k += 2;
        }
        let invoked = match line.get(k) {
            Some(SpTok {
                tok: Tok::Ident(n), ..
            }) => self
                .macros
                .get(n)
                .map(|m| (m.params.clone(), m.body.clone())),
            _ => None,
        };
        let Some((params, body)) = invoked else {
            self.emit(line, out);
            return Some(());
        };
        if k > 0 {
            self.emit(line[..k].to_vec(), out);
        }
        let args = split_commas(&line[k + 1..]);
        if args.len() > params.len() {
            self.err(
                span,
                format!(
                    "macro takes {} arguments, {} given",
                    params.len(),
                    args.len()
                ),
            );
        }
        let copied = body.iter().map(|l| l.len().max(1)).sum();
        if !self.spend(copied, span) {
            return None;
        }
        self.expansions += 1;
        let unique = self.expansions;
        let mut subst: Vec<Vec<SpTok>> = Vec::with_capacity(body.len());
        for bl in &body {
            match substitute_args(bl, &params, &args, unique) {
                Ok(l) => {
                    if !self.copy_bytes(&l, line_span(bl)) {
                        return None;
                    }
                    subst.push(l)
                }
                Err(Runaway::Tokens) => {
                    self.too_long(
                        line_span(bl),
                        "with the macro's arguments substituted, this line has",
                    );
                    return None;
                }
                Err(Runaway::Ident) => {
                    self.abort(
                        line_span(bl),
                        format!("with the macro's arguments pasted in, an identifier on this line grows past {MAX_IDENT_BYTES} bytes (runaway macro recursion?)"),
                    );
                    return None;
                }
            }
        }
        self.expand(&subst, out, depth + 1);
        Some(())
    }
}
