//! The `ipu-as` command line: assembling with parameters, metadata,
//! disassembly, the kernel cache, and diagnostics at file:line:col.

use std::process::Command;

fn ipu_as() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ipu-as"))
}

#[test]
fn assembles_disassembles_and_reports_errors() {
    let dir = std::env::temp_dir().join(format!("ipu-as-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("k.S");
    std::fs::write(&src, ".param N, 2\n.globl k\n.type k, @function\nk: setzi $m1, N\n .rept N\n add $m1, $m1, 1\n .endr\n jmp $m15\n.size k, . - k\n.cycles \"N + 2\"\n").unwrap();
    let obj = dir.join("k.o");
    let meta = dir.join("k.json");
    let out = ipu_as()
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .arg("-D")
        .arg("N=3")
        .arg("--meta")
        .arg(&meta)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&meta).unwrap()).unwrap();
    assert_eq!(m["params"]["N"], 3);
    assert_eq!(m["cycles"], 5);
    assert_eq!(m["code_size"], 20);
    assert_eq!(m["entry_points"][0]["name"], "k");
    let out = ipu_as().arg("--disassemble").arg(&obj).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert_eq!(text.matches("add $m1, $m1, 1").count(), 3, "{text}");
    assert!(text.contains("jmp $m15"));

    let bad = dir.join("bad.S");
    std::fs::write(&bad, "nop\n  ld64 $a1:2, [$m0]\n").unwrap();
    let out = ipu_as()
        .arg(&bad)
        .arg("-o")
        .arg(dir.join("bad.o"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.S:2:8"), "{err}");
    assert!(err.contains("cannot start a register pair"), "{err}");
    assert!(!err.contains("panicked"));

    // Objects that are not tile objects are refused with a message.
    std::fs::write(dir.join("junk.o"), b"\x7fELFjunk").unwrap();
    let out = ipu_as()
        .arg("--disassemble")
        .arg(dir.join("junk.o"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("error"));

    // The kernel cache, moved by IPU_KERNEL_CACHE.
    let cache = dir.join("cache");
    for expect in ["assembled", "cached"] {
        let out = ipu_as()
            .env("IPU_KERNEL_CACHE", &cache)
            .args([
                "--kernel", "gemm_amp", "-D", "TYPE=1", "-D", "M=46", "-D", "K=64", "-D", "N=80",
            ])
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            s.starts_with("gemm_f16_interleaved_k64_c80_r7_r8_m46 "),
            "{s}"
        );
        assert!(s.contains(expect), "{s}");
    }
    let entries: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert_eq!(entries.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
