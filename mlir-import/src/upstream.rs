//! The upstream side: parsing with MLIR through melior, and turning
//! upstream locations, diagnostics, types and attributes into ours.

use crate::convert::Importer;
use ipu_ir::types::LocKind;
use ipu_ir::{Attr, Context, Diagnostic, Loc, Op, Severity, Type};
use melior::diagnostic::DiagnosticSeverity;
use melior::dialect::DialectRegistry;
use melior::ir::operation::OperationLike;
use melior::ir::{Attribute as MAttr, Location, Module, Type as MType};
use std::cell::RefCell;
use std::rc::Rc;

/// The printed form of an upstream object; melior's `to_string` panics if
/// a printed chunk is not UTF-8, this does not.
pub(crate) fn text(x: impl std::fmt::Display) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = write!(s, "{x}");
    s
}

/// Deepest location nesting converted; deeper parts become unknown.
const MAX_LOC_DEPTH: usize = 64;

/// An upstream location detached from the upstream context.
#[derive(Clone, Debug)]
pub(crate) enum PlainLoc {
    Unknown,
    File {
        file: String,
        line: u32,
        col: u32,
    },
    Name {
        name: String,
        child: Box<PlainLoc>,
    },
    Fused(Vec<PlainLoc>),
    CallSite {
        callee: Box<PlainLoc>,
        caller: Box<PlainLoc>,
    },
}

pub(crate) fn plain_loc(l: Location<'_>) -> PlainLoc {
    plain_loc_at(l, 0)
}

fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn plain_loc_at(l: Location<'_>, depth: usize) -> PlainLoc {
    if depth > MAX_LOC_DEPTH {
        return PlainLoc::Unknown;
    }
    if l.is_file_line_col_range() {
        let file = l
            .file_line_col_range_filename()
            .as_string_ref()
            .as_str()
            .unwrap_or("")
            .to_string();
        PlainLoc::File {
            file,
            line: to_u32(l.file_line_col_range_start_line()),
            col: to_u32(l.file_line_col_range_start_column()),
        }
    } else if l.is_name() {
        PlainLoc::Name {
            name: l
                .name_value()
                .as_string_ref()
                .as_str()
                .unwrap_or("")
                .to_string(),
            child: Box::new(plain_loc_at(l.name_child_location(), depth + 1)),
        }
    } else if l.is_fused() {
        let n = l.fused_num_locations();
        PlainLoc::Fused(
            (0..n)
                .map(|i| plain_loc_at(l.fused_location(i), depth + 1))
                .collect(),
        )
    } else if l.is_call_site() {
        PlainLoc::CallSite {
            callee: Box::new(plain_loc_at(l.call_site_callee(), depth + 1)),
            caller: Box::new(plain_loc_at(l.call_site_caller(), depth + 1)),
        }
    } else {
        PlainLoc::Unknown
    }
}

/// Our location for an upstream one; the parsed buffer (which upstream
/// names "-") is named `filename`.
pub(crate) fn ir_loc(cx: &mut Context, filename: &str, l: &PlainLoc) -> Loc {
    match l {
        PlainLoc::Unknown => Loc::UNKNOWN,
        PlainLoc::File { file, line, col } => {
            let f = if file.is_empty() || file == "-" {
                filename
            } else {
                file
            };
            cx.file_loc(f, *line, *col)
        }
        PlainLoc::Name { name, child } => {
            let c = ir_loc(cx, filename, child);
            cx.name_loc(name, c)
        }
        PlainLoc::Fused(locs) => {
            let locs = locs.iter().map(|l| ir_loc(cx, filename, l)).collect();
            cx.fused_loc(locs)
        }
        PlainLoc::CallSite { callee, caller } => {
            let callee = ir_loc(cx, filename, callee);
            let caller = ir_loc(cx, filename, caller);
            cx.loc(LocKind::CallSite { callee, caller })
        }
    }
}

/// Our type for an upstream one (through the shared textual form).
pub(crate) fn ir_type(cx: &mut Context, t: MType<'_>) -> Result<Type, String> {
    let text = text(t);
    ipu_ir::parser::parse_type(cx, &text).map_err(|_| format!("type '{text}' has no IR equivalent"))
}

/// Our attribute for an upstream one (through the shared textual form).
pub(crate) fn ir_attr(cx: &mut Context, a: MAttr<'_>) -> Result<Attr, String> {
    let text = text(a);
    ipu_ir::parser::parse_attribute(cx, &text).map_err(|d| {
        let shown: String = text.chars().take(80).collect();
        format!("attribute '{shown}' has no IR equivalent: {}", d.message)
    })
}

struct Captured {
    severity: Severity,
    loc: PlainLoc,
    message: String,
    notes: Vec<(PlainLoc, String)>,
}

fn severity(s: DiagnosticSeverity) -> Severity {
    match s {
        DiagnosticSeverity::Error => Severity::Error,
        DiagnosticSeverity::Warning => Severity::Warning,
        DiagnosticSeverity::Remark => Severity::Remark,
        DiagnosticSeverity::Note => Severity::Note,
    }
}

/// Parses `source` with upstream MLIR and imports it.
pub(crate) fn import(cx: &mut Context, filename: &str, source: &str) -> Result<Op, Diagnostic> {
    if let Some(at) = source.find('\0') {
        // melior hands the text over as a C string.
        let before = &source[..at];
        let line = before.matches('\n').count() + 1;
        let col = at - before.rfind('\n').map_or(0, |p| p + 1) + 1;
        let loc = cx.file_loc(filename, to_u32(line), to_u32(col));
        return Err(Diagnostic::error(loc, "the input holds a NUL character"));
    }
    let registry = DialectRegistry::new();
    melior::utility::register_all_dialects(&registry);
    let context = melior::Context::new_with_registry(&registry, false);
    context.load_all_available_dialects();

    let captured: Rc<RefCell<Vec<Captured>>> = Rc::default();
    let sink = captured.clone();
    let handler = context.attach_diagnostic_handler(move |d| {
        let notes = (0..d.note_count())
            .filter_map(|i| d.note(i).ok())
            .map(|n| (plain_loc(n.location()), text(&n)))
            .collect();
        sink.borrow_mut().push(Captured {
            severity: severity(d.severity()),
            loc: plain_loc(d.location()),
            message: text(&d),
            notes,
        });
        true
    });
    let module = Module::parse(&context, source);
    let result = match module {
        Some(module) => imported(cx, filename, &module, &captured),
        None => Err(parse_failure(cx, filename, &captured)),
    };
    context.detach_diagnostic_handler(handler);
    result
}

/// The first upstream error (else the first diagnostic) as ours, with its
/// notes; `fallback` when upstream said nothing.
fn first_error(
    cx: &mut Context,
    filename: &str,
    captured: &RefCell<Vec<Captured>>,
    fallback: Loc,
    what: &str,
) -> Diagnostic {
    let diags = std::mem::take(&mut *captured.borrow_mut());
    let Some(d) = diags
        .iter()
        .find(|d| d.severity == Severity::Error)
        .or(diags.first())
    else {
        return Diagnostic::error(fallback, format!("upstream MLIR: {what}"));
    };
    let loc = ir_loc(cx, filename, &d.loc);
    let mut out = Diagnostic::error(loc, format!("upstream MLIR: {}", d.message));
    for (l, m) in &d.notes {
        let l = ir_loc(cx, filename, l);
        out = out.with_note(l, m.clone());
    }
    out
}

fn parse_failure(
    cx: &mut Context,
    filename: &str,
    captured: &RefCell<Vec<Captured>>,
) -> Diagnostic {
    let fallback = cx.file_loc(filename, 1, 1);
    first_error(cx, filename, captured, fallback, "the input does not parse")
}

fn imported(
    cx: &mut Context,
    filename: &str,
    module: &Module<'_>,
    captured: &RefCell<Vec<Captured>>,
) -> Result<Op, Diagnostic> {
    if !module.as_operation().verify() {
        let fallback = ir_loc(cx, filename, &plain_loc(module.as_operation().location()));
        return Err(first_error(
            cx,
            filename,
            captured,
            fallback,
            "the input does not verify",
        ));
    }
    let mut importer = Importer::new(cx, filename);
    importer.module(module.as_operation())
}
