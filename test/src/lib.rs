//! Helpers shared by the cross-crate integration tests in `tests/`.

use ipu_ir::printer::{PrintOptions, Printer};
use ipu_ir::{Context, Diagnostic, Op};

/// A context with every dialect and pass of the project.
pub fn context() -> Context {
    Context::new(ipu_driver::full_registry())
}

/// Parses and verifies `src`.
pub fn parse(cx: &mut Context, src: &str) -> Result<Op, Diagnostic> {
    let m = ipu_ir::parser::parse_source(cx, "test.mlir", src)?;
    ipu_ir::verify::verify(cx, m)?;
    Ok(m)
}

pub fn print(cx: &Context, op: Op, opts: PrintOptions) -> String {
    let mut p = Printer::new(cx, opts);
    p.print_top(op).expect("printing to a string cannot fail");
    p.finish()
}

/// Every `.mlir` file under `lit/`, split at `// -----`.
pub fn lit_inputs() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../lit");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "mlir") {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                for (i, chunk) in text.split("\n// -----\n").enumerate() {
                    out.push((format!("{}#{i}", p.display()), chunk.to_string()));
                }
            }
        }
    }
    out
}
