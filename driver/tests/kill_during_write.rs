//! Issue 32: every file a tool writes is the old file or the complete new
//! one, whenever the tool dies. Each writing command is killed (SIGKILL)
//! 50 times at seeded random points over its measured run time, its writes
//! slowed by the test hook `IPU_TEST_WRITE_DELAY_US` so that kills land
//! mid-write; every target must then be byte-equal to its old or its new
//! content (`ipu_files::kill_test`). ipu-as has the same test in `isa/tests`.

use ipu_files::kill_test::{kill_during_write, Writer};
use std::path::{Path, PathBuf};
use std::process::Command;

const TRIALS: usize = 50;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ipu-kill-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tool(name: &str) -> Command {
    let exe = match name {
        "ipu-opt" => env!("CARGO_BIN_EXE_ipu-opt"),
        "ipu-translate" => env!("CARGO_BIN_EXE_ipu-translate"),
        _ => env!("CARGO_BIN_EXE_ipu-run"),
    };
    let mut c = Command::new(exe);
    c.env("IPU_KERNEL_CACHE", repo().join("target/kernel-cache"));
    c
}

/// Old contents: a recognisable line, different in length from any output.
fn old(name: &str) -> Vec<u8> {
    format!("old {name}, to be kept or replaced whole\n").into_bytes()
}

fn check(name: &str, command: &dyn Fn() -> Command, files: &[PathBuf], seed: u64) {
    let targets: Vec<(PathBuf, Vec<u8>)> = files
        .iter()
        .map(|f| (f.clone(), old(&f.display().to_string())))
        .collect();
    let w = Writer {
        name,
        command,
        targets: &targets,
    };
    match kill_during_write(&w, TRIALS, seed) {
        Ok(o) => eprintln!(
            "{name}: {} old, {} new, {} kills mid-write",
            o.old, o.new, o.mid_write
        ),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn ipu_opt_output_and_memory_report() {
    let d = scratch("opt");
    let input = repo().join("lit/Runtime/Inputs/check-ops.mlir");
    let (out, mem) = (d.join("m.mlir"), d.join("mem.json"));
    let cmd = || {
        let mut c = tool("ipu-opt");
        c.args(["--target", "test4", "--ipu-lower-to-machine"])
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .arg(format!("--memory-report={}", mem.display()));
        c
    };
    check(
        "ipu-opt",
        &cmd,
        &[out.clone(), mem.clone(), d.join("mem.txt")],
        1,
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn ipu_translate_import_and_packages() {
    let d = scratch("translate");
    let onnx = repo().join("lit/Target/ONNX/Inputs/mlp.onnx");
    let (ir, weights) = (d.join("mlp.mlir"), d.join("mlp.mlir.weights"));
    let import = || {
        let mut c = tool("ipu-translate");
        c.arg("--import-onnx").arg(&onnx).arg("-o").arg(&ir);
        c
    };
    check(
        "ipu-translate --import-onnx",
        &import,
        &[ir.clone(), weights],
        2,
    );

    let machine = repo().join("lit/Runtime/Inputs/relu.machine.mlir");
    let pkg = d.join("relu.ipuexe");
    let to = || {
        let mut c = tool("ipu-translate");
        c.arg("--to-ipuexe").arg(&machine).arg("-o").arg(&pkg);
        c
    };
    check(
        "ipu-translate --to-ipuexe",
        &to,
        std::slice::from_ref(&pkg),
        3,
    );
    // The last kill may have left the old contents: the reader's trials
    // below read a whole package.
    let o = to().output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let back = d.join("back.mlir");
    let from = || {
        let mut c = tool("ipu-translate");
        c.arg("--from-ipuexe").arg(&pkg).arg("-o").arg(&back);
        c
    };
    check(
        "ipu-translate --from-ipuexe",
        &from,
        std::slice::from_ref(&back),
        4,
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn ipu_run_results_profile_package_and_report() {
    let d = scratch("run");
    let model = repo().join("lit/Runtime/Inputs/check-ops.mlir");
    for dir in ["out", "report", "ref"] {
        std::fs::create_dir_all(d.join(dir)).unwrap();
    }
    let reference = || {
        let mut c = tool("ipu-run");
        c.arg("--reference-only")
            .arg(&model)
            .arg("--output-dir")
            .arg(d.join("ref"));
        c
    };
    check(
        "ipu-run --reference-only",
        &reference,
        &[d.join("ref/z.npy")],
        5,
    );
    let device = || {
        let mut c = tool("ipu-run");
        c.args(["--target", "test4"])
            .arg(&model)
            .arg("--device-lock")
            .arg(d.join("lock"))
            .arg("--output-dir")
            .arg(d.join("out"))
            .arg("--profile")
            .arg(d.join("p.json"))
            .arg("--write-package")
            .arg(d.join("p.ipuexe"))
            .arg("--report")
            .arg(d.join("report"));
        c
    };
    let files = [
        d.join("out/z.npy"),
        d.join("p.json"),
        d.join("p.ipuexe"),
        d.join("report/report.html"),
        d.join("report/memory.json"),
        d.join("report/memory.txt"),
    ];
    check("ipu-run", &device, &files, 6);
    let _ = std::fs::remove_dir_all(d);
}
