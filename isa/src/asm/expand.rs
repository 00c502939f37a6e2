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

/// Substitutes macro arguments (and `\@`) into one body line. An argument
/// written right against an identifier (`end_\x`, `\x_end`) is pasted into it.
/// `None` when the line would pass [`MAX_LINE_TOKENS`].
fn substitute_args(
    line: &[SpTok],
    params: &[String],
    args: &[Vec<SpTok>],
    unique: usize,
) -> Option<Vec<SpTok>> {
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
                last.push_str(&next);
                *end = t.end;
                continue;
            }
        }
        if out.len() + repl.len() > MAX_LINE_TOKENS {
            return None;
        }
        out.extend(repl);
    }
    Some(out)
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
            if self.aborted || !self.spend(lines[i].len().max(1), line_span(&lines[i])) {
                return;
            }
            if out.len() > MAX_LINES {
                self.abort(
                    line_span(&lines[i]),
                    format!("the expansion produces more than {MAX_LINES} lines"),
                );
                return;
            }
            let substituted;
            let line = if self.defines.is_empty() || directive(&lines[i]) == Some(".define") {
                &lines[i]
            } else {
                match self.substitute(&lines[i]) {
                    Some(l) => substituted = l,
                    None => {
                        self.too_long(
                            line_span(&lines[i]),
                            "with `.define`s substituted, this line has",
                        );
                        return;
                    }
                }
                &substituted
            };
            let span = line_span(line);
            match directive(line) {
                Some(".define") => {
                    match line.get(1) {
                        Some(SpTok {
                            tok: Tok::Ident(n), ..
                        }) => match self.substitute(&line[2..]) {
                            Some(body) => {
                                self.defines.insert(n.clone(), body);
                            }
                            None => {
                                self.too_long(span, &format!("`.define {n}` expands to"));
                                return;
                            }
                        },
                        _ => self.err(span, "`.define` takes a name and replacement tokens"),
                    }
                    i += 1;
                }
                Some(".macro") => {
                    let Some((end, _)) = self.block_end(lines, i, &[".macro"], ".endm") else {
                        return;
                    };
                    let args = split_commas(&line[1..]);
                    let mut names = Vec::new();
                    let mut name = None;
                    // `.macro name a, b`: the first group is `name a`.
                    for (k, g) in args.iter().enumerate() {
                        for (j, t) in g.iter().enumerate() {
                            match &t.tok {
                                Tok::Ident(s) if k == 0 && j == 0 => name = Some(s.clone()),
                                Tok::Ident(s) => names.push(s.clone()),
                                _ => self.err(
                                    Span::new(t.start, t.end),
                                    "expected a macro parameter name",
                                ),
                            }
                        }
                    }
                    match name {
                        Some(n) => {
                            self.macros.insert(
                                n,
                                Macro {
                                    params: names,
                                    body: lines[i + 1..end].to_vec(),
                                },
                            );
                        }
                        None => self.err(span, "`.macro` needs a name"),
                    }
                    i = end + 1;
                }
                Some(".rept") => {
                    let Some((end, _)) = self.block_end(lines, i, &[".rept"], ".endr") else {
                        return;
                    };
                    let count = self.eval(&line[1..], span).unwrap_or(0);
                    if !(0..=1_000_000).contains(&count) {
                        self.err(span, format!("repeat count {count} is out of range"));
                    } else {
                        for _ in 0..count {
                            if !self.spend(1, span) {
                                return;
                            }
                            self.expand(&lines[i + 1..end], out, depth + 1);
                        }
                    }
                    i = end + 1;
                }
                Some(".if") => {
                    let Some((end, else_at)) = self.block_end(lines, i, &[".if"], ".endif") else {
                        return;
                    };
                    let cond = self.eval(&line[1..], span).unwrap_or(0);
                    let then_end = else_at.unwrap_or(end);
                    if cond != 0 {
                        self.expand(&lines[i + 1..then_end], out, depth + 1);
                    } else if let Some(e) = else_at {
                        self.expand(&lines[e + 1..end], out, depth + 1);
                    }
                    i = end + 1;
                }
                Some(d @ (".endm" | ".endr" | ".endif" | ".else")) => {
                    self.err(span, format!("`{d}` without an opening directive"));
                    i += 1;
                }
                Some(".error") => {
                    let msg = match line.get(1) {
                        Some(SpTok {
                            tok: Tok::Str(s), ..
                        }) => s.clone(),
                        _ => "`.error` reached".to_string(),
                    };
                    self.err(span, msg);
                    i += 1;
                }
                Some(d @ (".set" | ".equ" | ".param")) => {
                    let d = d.to_string();
                    let groups = split_commas(&line[1..]);
                    match (groups.first().map(|g| g.as_slice()), groups.len()) {
                        (
                            Some(
                                [SpTok {
                                    tok: Tok::Ident(name),
                                    ..
                                }],
                            ),
                            2,
                        ) => {
                            let name = name.clone();
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
                        _ => self.err(span, format!("`{d}` takes a name and a value")),
                    }
                    self.emit(line.clone(), out);
                    i += 1;
                }
                _ => {
                    // A macro invocation, possibly after labels.
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
                    match invoked {
                        Some((params, body)) => {
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
                                return;
                            }
                            self.expansions += 1;
                            let unique = self.expansions;
                            let mut subst: Vec<Vec<SpTok>> = Vec::with_capacity(body.len());
                            for bl in &body {
                                match substitute_args(bl, &params, &args, unique) {
                                    Some(l) => subst.push(l),
                                    None => {
                                        self.too_long(
                                            line_span(bl),
                                            "with the macro's arguments substituted, this line has",
                                        );
                                        return;
                                    }
                                }
                            }
                            self.expand(&subst, out, depth + 1);
                        }
                        None => self.emit(line.clone(), out),
                    }
                    i += 1;
                }
            }
        }
    }
}
