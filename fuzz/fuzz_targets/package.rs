//! Fuzz target: any bytes read as an `.ipuexe` package the way `ipu-run`
//! and `ipu-translate --from-ipuexe` read one give a package or an error,
//! never a panic. The bytes are tried as they are and with their metadata
//! and file checksums made right, so mutations reach the decoder and the
//! validator. A package that reads is written again (the same package),
//! shown as machine-stage IR and read back from it (the same package), and,
//! for a small built-in target, loaded and run on the chip simulator for a
//! bounded number of cycles: faults are values, not panics.
#![no_main]

use ipu_package::{Direction, Package};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

/// Cycles a fuzzed package may run: enough for the seed packages' programs.
const MAX_CYCLES: u64 = 200_000;

fn check(pkg: &Package) {
    let _ = pkg.dump();
    let bytes = pkg.to_elf_bytes();
    let again = Package::from_elf_bytes(&bytes)
        .expect("a package the reader accepted, written again, reads");
    assert!(again == *pkg, "a package written and read again differs");

    let mut cx = ipu_ir::Context::new(ipu_fuzz::registry());
    let loc = cx.file_loc("fuzz.ipuexe", 0, 0);
    let module = ipu_ir::builtin::create_module(&mut cx, loc);
    let body = cx
        .entry_block(cx.region(module, 0))
        .expect("a module has a body");
    ipu_dialects::machine::emit_package(&mut cx, body, pkg, loc);
    let _ = ipu_ir::printer::op_to_string(&cx, module, Default::default());
    let read =
        ipu_dialects::machine::read_package(&cx, module).expect("an emitted package reads back");
    assert!(
        read == *pkg,
        "a package emitted as IR and read back differs"
    );

    // What `ipu-run` does with a package: run it on the target it names
    // (only the small ones here, to keep each execution short).
    let t = &pkg.meta.target;
    if !matches!(t.name.as_str(), "test4" | "test16") {
        return;
    }
    let Some(Ok(target)) = ipu_target::Target::builtin(&t.name) else {
        return;
    };
    if target.tiles() != t.tile_count
        || target.memory.base_address != u64::from(t.memory_base)
        || target.sram_bytes() != u64::from(t.memory_bytes)
    {
        return;
    }
    let mut inputs = BTreeMap::new();
    for s in pkg
        .meta
        .streams
        .iter()
        .filter(|s| s.direction == Direction::Input)
    {
        let Some(len) = s.byte_len() else { return };
        if len > 1 << 20 {
            return;
        }
        inputs.insert(s.name.clone(), vec![0u8; len as usize]);
    }
    let _ = ipu_driver::device::run_on_chip(pkg, &target, &inputs, "main", MAX_CYCLES);
}

fuzz_target!(|data: &[u8]| {
    ipu_fuzz::init();
    if let Ok(pkg) = Package::from_elf_bytes(data) {
        check(&pkg);
    }
    if let Some(sealed) = ipu_fuzz::reseal::reseal(data) {
        if let Ok(pkg) = Package::from_elf_bytes(&sealed) {
            check(&pkg);
        }
    }
});
