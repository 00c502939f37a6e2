//! `test-emit-diagnostics`: emits the diagnostics that ops ask for through
//! `test.error`, `test.warning` and `test.remark` string attributes (an
//! error fails the pass). A test utility, like MLIR's test passes: it lets
//! lit tests check every diagnostic severity and the failure paths.

use ipu_ir::pass::{Pass, PassInfo, PassOptions};
use ipu_ir::{Context, Diagnostic, Op, Severity};

pub const INFO: PassInfo = PassInfo {
    argument: "test-emit-diagnostics",
    name: "TestEmitDiagnostics",
    description:
        "Test utility: emit an error, warning or remark at every op that carries a test.error, \
                  test.warning or test.remark string attribute; an error fails the pass.",
    anchor: None,
    options: &[],
    create: |_: &PassOptions| Ok(Box::new(TestEmitDiagnostics)),
};

struct TestEmitDiagnostics;

impl Pass for TestEmitDiagnostics {
    fn run(&mut self, cx: &mut Context, op: Op) -> Result<(), Diagnostic> {
        let mut ops = Vec::new();
        cx.walk_preorder(op, &mut |o| ops.push(o));
        let mut error = None;
        for o in ops {
            for (attr, severity) in [
                ("test.remark", Severity::Remark),
                ("test.warning", Severity::Warning),
                ("test.error", Severity::Error),
            ] {
                if let Some(msg) = cx.get_str_attr(o, attr).map(str::to_string) {
                    let d = Diagnostic::new(severity, cx.op_loc(o), msg)
                        .with_note(cx.op_loc(op), "emitted while running on this op");
                    if severity == Severity::Error {
                        error.get_or_insert(d);
                    } else {
                        cx.diagnostics.push(d);
                    }
                }
            }
        }
        error.map_or(Ok(()), Err)
    }
}
