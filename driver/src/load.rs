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

pub fn load(
    registry: &Arc<Registry>,
    path: &str,
    allow_external_weights: bool,
) -> Result<Loaded, LoadError> {
    let (name, text) = read_text(path).map_err(LoadError::Io)?;
    let base = std::path::Path::new(path)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    load_text(registry, &name, text.into(), base, allow_external_weights)
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
/// the module names is read relative to `base` ([`read_weights`]).
pub fn load_text(
    registry: &Arc<Registry>,
    name: &str,
    text: Arc<str>,
    base: &std::path::Path,
    allow_external_weights: bool,
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
    match read_weights(&mut loaded.cx, module, base, allow_external_weights) {
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
    /// It is not a weights file, is damaged, is not the file the IR was
    /// written with, or lies outside the IR's folder: a diagnostic at the module.
    Damaged(Diagnostic),
}

/// The module attributes binding the weights file to the IR: its size in
/// bytes and its SHA-256 (lowercase hex). A run refuses a file that differs.
pub const WEIGHTS_SIZE_ATTR: &str = "ipu.weights_size";
pub const WEIGHTS_SHA256_ATTR: &str = "ipu.weights_sha256";

/// Whether `file`, a path a model names, stays inside the folder it is
/// resolved in: relative, and no `..` component.
pub fn is_contained(file: &str) -> bool {
    use std::path::Component::{CurDir, Normal};
    let p = std::path::Path::new(file);
    // Only plain names (and `.`), and at least one name: `.` alone is the
    // folder itself, no file.
    p.components().all(|c| matches!(c, Normal(_) | CurDir))
        && p.components().any(|c| matches!(c, Normal(_)))
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Reads the weights side file `module` names (`ipu.weights`, relative to
/// `base`) into the context's resources, which then print as references to
/// it, not inline. `Ok(false)` when the module names none. The file must be
/// inside `base`'s folder (unless `allow_external`) and have the size and
/// SHA-256 the module records.
pub fn read_weights(
    cx: &mut Context,
    module: Op,
    base: &std::path::Path,
    allow_external: bool,
) -> Result<bool, WeightsError> {
    let Some(file) = cx.get_str_attr(module, WEIGHTS_ATTR).map(str::to_string) else {
        return Ok(false);
    };
    let refuse = |cx: &Context, message: String| {
        WeightsError::Damaged(Diagnostic::error(cx.op_loc(module), message))
    };
    if !allow_external && !is_contained(&file) {
        return Err(refuse(
            cx,
            format!("{WEIGHTS_ATTR} = \"{file}\" is not inside the IR's folder (an absolute path, or one that climbs out with '..'); pass --allow-external-weights to read it"),
        ));
    }
    let expected_sha = cx
        .get_str_attr(module, WEIGHTS_SHA256_ATTR)
        .map(str::to_string);
    let expected_size = cx.get_int_attr(module, WEIGHTS_SIZE_ATTR);
    let (Some(expected_sha), Some(expected_size)) = (expected_sha, expected_size) else {
        return Err(refuse(
            cx,
            format!("{WEIGHTS_ATTR} = \"{file}\" comes without the file's size and SHA-256 ({WEIGHTS_SIZE_ATTR}, {WEIGHTS_SHA256_ATTR}), so nothing ties the file to this IR; import the model again with ipu-translate"),
        ));
    };
    let full = base.join(&file);
    let bytes = std::fs::read(&full).map_err(|e| {
        WeightsError::Missing(format!(
            "cannot read weights file '{}': {e}",
            full.display()
        ))
    })?;
    let sha = sha256_hex(&bytes);
    if sha != expected_sha || i128::try_from(bytes.len()).ok() != Some(expected_size) {
        return Err(refuse(
            cx,
            format!(
                "{}: not the weights file this IR was written with: it has SHA-256 {sha} ({} bytes), the IR expects SHA-256 {expected_sha} ({expected_size} bytes)",
                full.display(),
                bytes.len()
            ),
        ));
    }
    if let Err(e) = ipu_ir::resources::side_file::read(&bytes, &mut cx.resources) {
        return Err(refuse(cx, format!("{}: {e}", full.display())));
    }
    cx.resources.side_file = Some(file);
    Ok(true)
}

/// Binds `module` to the weights `bytes` it will be written with: the file
/// as `reference` (relative to the IR's folder), its size and SHA-256.
pub fn bind_weights(cx: &mut Context, module: Op, reference: &str, bytes: &[u8]) {
    let a = cx.string_attr(reference);
    cx.set_attr(module, WEIGHTS_ATTR, a);
    let a = cx.i64_attr(i64::try_from(bytes.len()).unwrap_or(i64::MAX));
    cx.set_attr(module, WEIGHTS_SIZE_ATTR, a);
    let a = cx.string_attr(&sha256_hex(bytes));
    cx.set_attr(module, WEIGHTS_SHA256_ATTR, a);
    cx.resources.side_file = Some(reference.to_string());
}

/// The path of `weights` relative to the folder of the IR file `ir` (`-`:
/// the current folder), for the module to record; lexical, through the
/// absolute forms of both. A file outside the IR's folder needs
/// `allow_external` (its reference then climbs with `..`).
pub fn weights_reference(ir: &str, weights: &str, allow_external: bool) -> Result<String, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
    let ir_dir = if ir == "-" {
        cwd.clone()
    } else {
        normalize(&cwd.join(ir))
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_else(|| cwd.clone())
    };
    let w = normalize(&cwd.join(weights));
    if w == ir_dir {
        return Err(format!(
            "the weights file '{weights}' names the IR's folder ('{}'), not a file in it",
            ir_dir.display()
        ));
    }
    if let Ok(inside) = w.strip_prefix(&ir_dir) {
        return Ok(inside.to_string_lossy().into_owned());
    }
    if !allow_external {
        return Err(format!(
            "the weights file '{weights}' is not in the folder of the IR ('{}') or below it, so the IR could not find it from there; write it beside the IR, or pass --allow-external-weights",
            ir_dir.display()
        ));
    }
    // Climb from the IR's folder to the common ancestor, then down.
    let common = ir_dir
        .ancestors()
        .find(|a| w.starts_with(a))
        .unwrap_or(std::path::Path::new("/"));
    let ups = ir_dir
        .strip_prefix(common)
        .map_or(0, |r| r.components().count());
    let mut rel = std::path::PathBuf::new();
    for _ in 0..ups {
        rel.push("..");
    }
    rel.push(w.strip_prefix(common).unwrap_or(&w));
    Ok(rel.to_string_lossy().into_owned())
}

/// `p` with `.` and `..` components resolved lexically.
fn normalize(p: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
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

#[cfg(test)]
mod weights_tests {
    use super::{is_contained, weights_reference};

    #[test]
    fn references_stay_inside_the_ir_folder_unless_allowed() {
        assert!(is_contained("w.bin") && is_contained("sub/w.bin") && is_contained("./w"));
        assert!(!is_contained("../w.bin") && !is_contained("/etc/passwd") && !is_contained(""));
        assert!(!is_contained("sub/../../w") && !is_contained(".") && !is_contained("./."));
        assert_eq!(
            weights_reference("a.mlir", "a.mlir.weights", false).unwrap(),
            "a.mlir.weights"
        );
        assert_eq!(
            weights_reference("sub/a.mlir", "sub/w/x.bin", false).unwrap(),
            "w/x.bin"
        );
        let e = weights_reference("sub/a.mlir", "other/w.bin", false).unwrap_err();
        assert!(e.contains("--allow-external-weights"), "{e}");
        assert_eq!(
            weights_reference("sub/a.mlir", "other/w.bin", true).unwrap(),
            "../other/w.bin"
        );
        assert_eq!(weights_reference("-", "w.bin", false).unwrap(), "w.bin");
        // The IR's own folder is no weights file (found by the `paths` fuzz target).
        for (ir, w) in [
            ("a.mlir", ""),
            ("sub/a.mlir", "sub"),
            ("sub/a.mlir", "sub/x/.."),
        ] {
            let e = weights_reference(ir, w, true).unwrap_err();
            assert!(e.contains("not a file"), "{e}");
        }
    }
}
