//! Fuzz target: any text given to the assembler (`ipu-as`; also the
//! kernels' and the machine stage's assembler) gives an object or
//! diagnostics, never a panic or a hang. An object that assembles is
//! written as ELF and read back (the same bytes), and its sections
//! disassembled.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

fuzz_target!(|data: &[u8]| {
    ipu_fuzz::init();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match ipu_isa::asm::assemble("fuzz.S", text, &BTreeMap::new()) {
        Ok(a) => {
            let elf = a.elf_bytes();
            let back =
                ipu_isa::elf::ObjectFile::from_elf(&elf).expect("an assembled object reads back");
            assert_eq!(back.to_elf(), elf, "an object read back writes other bytes");
            for s in a.object.sections.iter().filter(|s| s.exec) {
                let _ = ipu_isa::disasm::disassemble_text(&s.data, 0, true);
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
