//! Issue 32: ipu-as's object file is the old one or the complete new one
//! whenever the assembler is killed (SIGKILL at 50 seeded random points,
//! writes slowed by `IPU_TEST_WRITE_DELAY_US`; see `ipu_files::kill_test`).

use ipu_files::kill_test::{kill_during_write, Writer};
use std::path::Path;
use std::process::Command;

#[test]
fn ipu_as_object_and_metadata() {
    let d = std::env::temp_dir().join(format!("ipu-kill-as-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let src = d.join("k.S");
    // Enough code for an object of a few chunks.
    let mut text = String::from(".text\n");
    for i in 0..2000 {
        text.push_str(&format!("l{i}: add $m1, $m1, {}\n", i % 100));
    }
    std::fs::write(&src, text).unwrap();
    let (obj, meta) = (d.join("k.o"), d.join("k.json"));
    let cmd = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ipu-as"));
        c.arg(&src).arg("-o").arg(&obj).arg("--meta").arg(&meta);
        c
    };
    let targets = [
        (obj.clone(), b"old object".to_vec()),
        (meta.clone(), b"old metadata".to_vec()),
    ];
    let w = Writer {
        name: "ipu-as",
        command: &cmd,
        targets: &targets,
    };
    let o = kill_during_write(&w, 50, 7).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "ipu-as: {} old, {} new, {} kills mid-write",
        o.old, o.new, o.mid_write
    );
    assert!(Path::new(&obj).exists());
    let _ = std::fs::remove_dir_all(d);
}
