//! Diagnostics: errors, warnings, remarks and notes attached to locations,
//! rendered with codespan-reporting as `file:line:col` with the source line
//! and a caret whenever the location points into a loaded file.

use crate::context::Context;
use crate::types::{Loc, LocKind};
use codespan_reporting::diagnostic::{self as cs, Label};
use codespan_reporting::files;
use codespan_reporting::term;
use std::fmt;
use std::sync::Arc;

#[derive(Copy, Clone, PartialEq, Eq, Debug, PartialOrd, Ord, Hash)]
pub enum Severity {
    Note,
    Remark,
    Warning,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Note => "note",
            Severity::Remark => "remark",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub loc: Loc,
    pub message: String,
    /// Attached notes, each at its own location.
    pub notes: Vec<Diagnostic>,
}

impl Diagnostic {
    pub fn new(severity: Severity, loc: Loc, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            loc,
            message: message.into(),
            notes: Vec::new(),
        }
    }
    pub fn error(loc: Loc, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, loc, message)
    }
    pub fn warning(loc: Loc, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, loc, message)
    }
    pub fn remark(loc: Loc, message: impl Into<String>) -> Self {
        Self::new(Severity::Remark, loc, message)
    }
    pub fn with_note(mut self, loc: Loc, message: impl Into<String>) -> Self {
        self.notes
            .push(Diagnostic::new(Severity::Note, loc, message));
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity, self.message)
    }
}

/// A position in a loaded source file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SourcePos {
    pub file: usize,
    pub line: u32,
    pub col: u32,
    pub offset: usize,
}

/// The source files diagnostics can point into.
#[derive(Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

/// One loaded file. Where its lines start is worked out on the first
/// diagnostic that needs it: a run that reports nothing never pays for it.
struct SourceFile {
    name: String,
    text: Text,
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

/// A file's text, shared with the tool that read it (an `Arc<String>` is
/// made from the `String` read without copying its bytes).
enum Text {
    Str(Arc<str>),
    String(Arc<String>),
}

impl Text {
    fn as_str(&self) -> &str {
        match self {
            Text::Str(s) => s,
            Text::String(s) => s,
        }
    }
}

impl SourceFile {
    fn line_starts(&self) -> &[usize] {
        self.line_starts
            .get_or_init(|| codespan_reporting::files::line_starts(self.text.as_str()).collect())
    }

    /// Where line `index` starts (the text's end for the line after the
    /// last), as codespan's `SimpleFile` answers.
    fn line_start(&self, index: usize) -> Result<usize, files::Error> {
        let starts = self.line_starts();
        match index.cmp(&starts.len()) {
            std::cmp::Ordering::Less => Ok(starts[index]),
            std::cmp::Ordering::Equal => Ok(self.text.as_str().len()),
            std::cmp::Ordering::Greater => Err(files::Error::LineTooLarge {
                given: index,
                max: starts.len() - 1,
            }),
        }
    }
}

impl<'a> files::Files<'a> for SourceMap {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, files::Error> {
        Ok(&self.file(id)?.name)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, files::Error> {
        Ok(self.file(id)?.text.as_str())
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, files::Error> {
        Ok(self
            .file(id)?
            .line_starts()
            .binary_search(&byte_index)
            .unwrap_or_else(|next| next - 1))
    }

    fn line_range(
        &'a self,
        id: usize,
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, files::Error> {
        let f = self.file(id)?;
        Ok(f.line_start(line_index)?..f.line_start(line_index + 1)?)
    }
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    fn file(&self, id: usize) -> Result<&SourceFile, files::Error> {
        self.files.get(id).ok_or(files::Error::FileMissing)
    }

    pub fn add(&mut self, name: &str, text: Arc<str>) -> usize {
        self.push(name, Text::Str(text))
    }

    /// [`SourceMap::add`] of text held as an `Arc<String>` (a `String`
    /// read from a file becomes one without copying it).
    pub fn add_string(&mut self, name: &str, text: Arc<String>) -> usize {
        self.push(name, Text::String(text))
    }

    fn push(&mut self, name: &str, text: Text) -> usize {
        self.files.push(SourceFile {
            name: name.to_string(),
            text,
            line_starts: std::sync::OnceLock::new(),
        });
        self.files.len() - 1
    }

    pub fn text(&self, file: usize) -> &str {
        self.files.get(file).map_or("", |f| f.text.as_str())
    }

    /// Resolves a location to a position in a loaded file. Name locations
    /// resolve through their child, call sites through the callee, fused
    /// locations through their first resolvable part.
    pub fn resolve(&self, cx: &Context, loc: Loc) -> Option<SourcePos> {
        match cx.loc_kind(loc) {
            LocKind::FileLineCol { file, line, col } => {
                let name = cx.str(*file);
                // The most recently added buffer of that name wins (split-input-file chunks).
                let fid = self.files.iter().rposition(|f| f.name == name)?;
                let starts = self.files[fid].line_starts();
                let line_start = *starts.get((*line as usize).checked_sub(1)?)?;
                let text = self.text(fid);
                let offset = (line_start + (*col as usize).saturating_sub(1)).min(text.len());
                Some(SourcePos {
                    file: fid,
                    line: *line,
                    col: *col,
                    offset,
                })
            }
            LocKind::Name { child, .. } => self.resolve(cx, *child),
            LocKind::CallSite { callee, .. } => self.resolve(cx, *callee),
            LocKind::Fused { locs, .. } => locs.iter().find_map(|l| self.resolve(cx, *l)),
            LocKind::Unknown => None,
        }
    }

    /// Renders a diagnostic and its notes to `out`.
    pub fn render(&self, cx: &Context, d: &Diagnostic, out: &mut dyn term::termcolor::WriteColor) {
        self.render_one(cx, d, out);
        for n in &d.notes {
            self.render_one(cx, n, out);
        }
    }

    /// Renders into a plain string (no colours).
    pub fn render_to_string(&self, cx: &Context, d: &Diagnostic) -> String {
        let mut buf = term::termcolor::NoColor::new(Vec::new());
        self.render(cx, d, &mut buf);
        String::from_utf8_lossy(&buf.into_inner()).into_owned()
    }

    fn render_one(&self, cx: &Context, d: &Diagnostic, out: &mut dyn term::termcolor::WriteColor) {
        let severity = match d.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
            Severity::Remark => cs::Severity::Help,
            Severity::Note => cs::Severity::Note,
        };
        let mut diag = cs::Diagnostic::new(severity).with_message(&d.message);
        match self.resolve(cx, d.loc) {
            Some(pos) => {
                let text = self.text(pos.file);
                let end = token_end(text, pos.offset);
                diag = diag.with_labels(vec![Label::primary(pos.file, pos.offset..end)]);
            }
            None => {
                diag = diag.with_notes(vec![format!("at {}", print_loc(cx, d.loc))]);
            }
        }
        let config = term::Config::default();
        // A failing writer (closed pipe) leaves nothing more to report to.
        let _ = term::emit(out, &config, self, &diag);
    }
}

/// End of the token starting at `start`, for the caret's width.
fn token_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    if start >= bytes.len() {
        return start;
    }
    let ident = |c: u8| c.is_ascii_alphanumeric() || b"_.$-".contains(&c);
    let mut end = start;
    if matches!(bytes[end], b'%' | b'@' | b'^' | b'#' | b'!') || ident(bytes[end]) {
        end += 1;
        while end < bytes.len() && ident(bytes[end]) {
            end += 1;
        }
    } else {
        end += 1;
        while end < bytes.len() && !text.is_char_boundary(end) {
            end += 1;
        }
    }
    end
}

/// A location without its file names: `12:3`, `"node"(1:1)`. Keys an op
/// across two parses of one model (the compile's, and a reference's that
/// read the text under another name).
pub fn loc_key(cx: &Context, loc: Loc) -> String {
    use crate::types::LocKind;
    match cx.loc_kind(loc) {
        LocKind::Unknown => "?".into(),
        LocKind::FileLineCol { line, col, .. } => format!("{line}:{col}"),
        LocKind::Name { name, child } => format!("{:?}({})", cx.str(*name), loc_key(cx, *child)),
        LocKind::CallSite { callee, caller } => {
            format!("{} at {}", loc_key(cx, *callee), loc_key(cx, *caller))
        }
        LocKind::Fused { locs, .. } => {
            let ks: Vec<String> = locs.iter().map(|&l| loc_key(cx, l)).collect();
            format!("fused[{}]", ks.join(", "))
        }
    }
}

/// The keys inside a fused location's key (`fused[a, b]` gives `a`, `b`;
/// [`loc_key`]'s form), or `None` for a key that is not a fused one.
pub fn fused_key_parts(key: &str) -> Option<Vec<&str>> {
    let inner = key.strip_prefix("fused[")?.strip_suffix(']')?;
    Some(inner.split(", ").collect())
}

/// The key of an op of a callee as it runs in one call: `key` (its own,
/// [`loc_key`]'s form) at the call whose key is `call` (a call site's form,
/// `callee at caller`; each location of a fused key gets the call).
pub fn key_in_call(key: &str, call: &str) -> String {
    match fused_key_parts(key) {
        Some(parts) => {
            let ps: Vec<String> = parts.iter().map(|p| format!("{p} at {call}")).collect();
            format!("fused[{}]", ps.join(", "))
        }
        None => format!("{key} at {call}"),
    }
}

/// A location in MLIR's textual form, without the `loc(...)` wrapper.
pub fn print_loc(cx: &Context, loc: Loc) -> String {
    let mut s = String::new();
    crate::printer::write_loc_body(cx, loc, &mut s);
    s
}
