//! Loading IR for the tools: read a file, parse, load the weights side file
//! it names, verify, and pick the entry function.

use ipu_ir::diag::{Diagnostic, SourceMap};
use ipu_ir::{Context, Op, Registry};
use std::sync::Arc;

/// A parsed, verified module with its sources (for diagnostics).
pub struct Loaded {
    pub cx: Context,
    pub sources: SourceMap,
    pub module: Op,
}

/// Why loading failed: an I/O problem or a diagnostic in the input.
pub enum LoadError {
    Io(String),
    Diag(Box<Loaded>, Diagnostic),
}

/// The module attribute naming the weights side file (relative to the IR file).
pub const WEIGHTS_ATTR: &str = "ipu.weights";

pub fn load(registry: &Arc<Registry>, path: &str) -> Result<Loaded, LoadError> {
    let (name, text) = read_text(path).map_err(LoadError::Io)?;
    let base = std::path::Path::new(path)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    load_text(registry, &name, text.into(), base)
}

/// Reads `path` (`-`: standard input) as UTF-8 text; returns the name for
/// diagnostics (`<stdin>` for standard input) and the text.
pub fn read_text(path: &str) -> Result<(String, String), String> {
    let (name, bytes) = read_bytes(path)?;
    let text = utf8_text(&name, bytes)?;
    Ok((name, text))
}

/// Reads `path` (`-`: standard input); returns the name for diagnostics and the bytes.
pub fn read_bytes(path: &str) -> Result<(String, Vec<u8>), String> {
    if path == "-" {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(("<stdin>".to_string(), b))
    } else {
        let b = std::fs::read(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
        Ok((path.to_string(), b))
    }
}

/// `bytes` as text, or an error at the first byte that is not UTF-8, as
/// `name:line:col` (line and column counted as the parser does: 1-based,
/// the column in bytes).
pub fn utf8_text(name: &str, bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line_start = bytes[..bad]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = 1 + bytes[..line_start].iter().filter(|&&b| b == b'\n').count();
        let col = bad - line_start + 1;
        format!(
            "{name}:{line}:{col}: invalid UTF-8 (byte 0x{:02x}); IR text must be UTF-8",
            bytes[bad]
        )
    })
}

/// [`load`] of `text` (named `name` in diagnostics); a weights side file
/// the module names is read relative to `base`.
pub fn load_text(
    registry: &Arc<Registry>,
    name: &str,
    text: Arc<str>,
    base: &std::path::Path,
) -> Result<Loaded, LoadError> {
    let mut sources = SourceMap::new();
    sources.add(name, text.clone());
    let mut cx = Context::new(registry.clone());
    let module = match ipu_ir::parser::parse_source(&mut cx, name, &text) {
        Ok(m) => m,
        Err(d) => {
            let placeholder = ipu_ir::builtin::create_module(&mut cx, ipu_ir::Loc::UNKNOWN);
            return Err(LoadError::Diag(
                Box::new(Loaded {
                    cx,
                    sources,
                    module: placeholder,
                }),
                d,
            ));
        }
    };
    let mut loaded = Loaded {
        cx,
        sources,
        module,
    };
    match read_weights(&mut loaded.cx, module, base) {
        Ok(_) => {}
        Err(WeightsError::Missing(e)) => return Err(LoadError::Io(e)),
        Err(WeightsError::Damaged(d)) => return Err(LoadError::Diag(Box::new(loaded), d)),
    }
    if let Err(d) = ipu_ir::verify::verify(&loaded.cx, module) {
        return Err(LoadError::Diag(Box::new(loaded), d));
    }
    Ok(loaded)
}

/// Why the weights side file a module names was not read.
pub enum WeightsError {
    /// It cannot be read (missing, unreadable).
    Missing(String),
    /// It is not a weights file, or is damaged: a diagnostic at the module.
    Damaged(Diagnostic),
}

/// Reads the weights side file `module` names (`ipu.weights`, relative to
/// `base`) into the context's resources, which then print as references to
/// it, not inline. `Ok(false)` when the module names none.
pub fn read_weights(
    cx: &mut Context,
    module: Op,
    base: &std::path::Path,
) -> Result<bool, WeightsError> {
    let Some(file) = cx.get_str_attr(module, WEIGHTS_ATTR).map(str::to_string) else {
        return Ok(false);
    };
    let full = base.join(&file);
    let bytes = std::fs::read(&full).map_err(|e| {
        WeightsError::Missing(format!(
            "cannot read weights file '{}': {e}",
            full.display()
        ))
    })?;
    if let Err(e) = ipu_ir::resources::side_file::read(&bytes, &mut cx.resources) {
        let loc = cx.op_loc(module);
        return Err(WeightsError::Damaged(Diagnostic::error(
            loc,
            format!("{}: {e}", full.display()),
        )));
    }
    cx.resources.side_file = Some(file);
    Ok(true)
}

/// The function to run: `name` if given, else `@main`, else the only public function.
pub fn entry_function(cx: &Context, module: Op, name: Option<&str>) -> Result<Op, String> {
    let funcs: Vec<Op> = cx
        .nested_ops(module)
        .into_iter()
        .filter(|&o| cx.is(o, "func.func"))
        .collect();
    let by_name = |n: &str| {
        funcs
            .iter()
            .copied()
            .find(|&f| cx.get_str_attr(f, "sym_name") == Some(n))
    };
    if let Some(n) = name {
        return by_name(n).ok_or_else(|| format!("no function named @{n}"));
    }
    if let Some(f) = by_name("main") {
        return Ok(f);
    }
    let public: Vec<Op> = funcs
        .iter()
        .copied()
        .filter(|&f| {
            cx.get_str_attr(f, "sym_visibility")
                .is_none_or(|v| v == "public")
        })
        .collect();
    match public.as_slice() {
        [f] => Ok(*f),
        [] => Err("the module has no public function to run".into()),
        _ => Err("the module has several public functions; choose one with --entry NAME".into()),
    }
}

/// The name of argument or result `i` of `f`: its `ipu.name` attribute, else a default.
pub fn value_name(cx: &Context, f: Op, attrs: &str, i: usize, default_prefix: &str) -> String {
    ipu_dialects::func::io_name(cx, f, attrs, i).unwrap_or_else(|| format!("{default_prefix}{i}"))
}

#[cfg(test)]
mod tests {
    use super::utf8_text;

    #[test]
    fn invalid_utf8_is_located_at_its_first_bad_byte() {
        assert_eq!(utf8_text("f", b"ab\ncd".to_vec()).unwrap(), "ab\ncd");
        let e = utf8_text("f.mlir", b"module {\n  // caf\xc3\xa9 \xff\n}".to_vec()).unwrap_err();
        assert!(
            e.starts_with("f.mlir:2:12: invalid UTF-8 (byte 0xff)"),
            "{e}"
        );
        // A sequence cut short at the end of the text.
        let e = utf8_text("g", b"x\xe2\x82".to_vec()).unwrap_err();
        assert!(e.starts_with("g:1:2: invalid UTF-8 (byte 0xe2)"), "{e}");
    }
}
