//! Assembler, disassembler, ELF and linker tests.

use std::collections::BTreeMap;

use ipu_isa::asm::assemble;
use ipu_isa::disasm::disassemble_text;
use ipu_isa::elf::{ObjectFile, RelocKind, RelocTarget};
use ipu_isa::kernels::{assemble_kernel, KernelCache, SOURCES};
use ipu_isa::link::{link, LinkError, LinkLayout};
use ipu_isa::{Kind, OPS};

fn asm(src: &str) -> ipu_isa::asm::Assembled {
    assemble("t.S", src, &BTreeMap::new()).unwrap_or_else(|e| panic!("{e}"))
}

fn params(p: &[(&str, i64)]) -> BTreeMap<String, i64> {
    p.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn code(a: &ipu_isa::asm::Assembled) -> Vec<u8> {
    a.object
        .sections
        .iter()
        .filter(|s| s.exec)
        .flat_map(|s| s.data.clone())
        .collect()
}

/// One line per instruction form, with operands in range.
fn every_form() -> String {
    let mut s = String::from(".text\nstart:\n");
    for (n, o) in OPS.iter().enumerate() {
        let ops: Vec<String> = o
            .operands
            .iter()
            .enumerate()
            .map(|(i, k)| match k {
                Kind::M => format!("$m{}", (n + i) % 16),
                Kind::A => format!("$a{}", (n + 3 * i) % 16),
                Kind::A2 => {
                    let r = (2 * (n + i)) % 16;
                    format!("$a{}:{}", r, r + 1)
                }
                Kind::A4 => "$a8:11".to_string(),
                Kind::Mem => ["[$m3]", "[$m4+12]", "[$m5-8]", "[$m6+=-16]"][n % 4].to_string(),
                Kind::Post8 => format!("[$m{}+=8]", (n + i) % 16),
                Kind::Post16 => "[$m2+=16]".to_string(),
                Kind::Simm => "-77".to_string(),
                Kind::Uimm => "300".to_string(),
                Kind::Target => "start".to_string(),
                Kind::RptEnd => "end".to_string(),
            })
            .collect();
        s.push_str(&format!("    {} {}\n", o.mnemonic, ops.join(", ")));
    }
    s.push_str("    { ld64 $a0:1, [$m1+=8] ; f32v2add $a2:3, $a0:1, $a4:5 }\n    { nop ; amp.f16f16 $a0:1, $a2:3, $a4:5 }\nend:\n    .word 0x7f000000\n");
    s
}

#[test]
fn assemble_disassemble_assemble_is_byte_identical() {
    let a = asm(&every_form());
    let bytes = code(&a);
    let text = disassemble_text(&bytes, 0, false);
    let b = asm(&text);
    assert_eq!(bytes, code(&b), "{text}");
    // Every op appears in the disassembly.
    for o in OPS {
        assert!(
            text.contains(&format!(" {} ", o.mnemonic))
                || text.contains(&format!(" {}\n", o.mnemonic)),
            "{}",
            o.mnemonic
        );
    }
}

#[test]
fn exch_assembles_disassembles_and_round_trips() {
    let a = asm(".text\nmain:\n    setzi $m7, 0xc0000\n    exch $m7\n    sync 1\n");
    let bytes = code(&a);
    let w = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    // Opcode 59, the register in the first field.
    assert_eq!(w, 59 << 24 | 7 << 20);
    let i = ipu_isa::decode(w).unwrap();
    assert_eq!(i.op, ipu_isa::Op::Exch);
    assert_eq!(ipu_isa::info(i.op).ctx, ipu_isa::table::Ctx::Supervisor);
    let text = disassemble_text(&bytes, 0, false);
    assert!(text.contains("exch $m7"), "{text}");
    assert_eq!(code(&asm(&text)), bytes);
    assert!(assemble("t.S", "exch $a1\n", &BTreeMap::new()).is_err());
}

#[test]
fn library_kernels_round_trip_through_the_disassembler() {
    let specs: Vec<(&str, BTreeMap<String, i64>)> = vec![
        (
            "gemm_amp",
            params(&[("TYPE", 0), ("M", 20), ("K", 32), ("N", 32)]),
        ),
        (
            "gemm_amp",
            params(&[("TYPE", 3), ("M", 64), ("K", 256), ("N", 128)]),
        ),
        ("elementwise", params(&[("OP", 17), ("TYPE", 1), ("N", 99)])),
        ("cast", params(&[("FROM", 0), ("TO", 3), ("N", 64)])),
        ("rows", params(&[("OP", 4), ("R", 5), ("C", 10)])),
        ("fill", params(&[("G", 5)])),
        ("elementwise", params(&[("OP", 6), ("TYPE", 0), ("N", 9)])),
        ("elementwise", params(&[("OP", 29), ("TYPE", 1), ("N", 9)])),
        ("compare", params(&[("OP", 2), ("TYPE", 0), ("N", 37)])),
        ("compare", params(&[("OP", 0), ("TYPE", 1), ("N", 9)])),
        ("compare", params(&[("OP", 5), ("N", 20)])),
        ("select", params(&[("TYPE", 0), ("N", 45)])),
        ("select", params(&[("TYPE", 1), ("N", 7)])),
        (
            "gather",
            params(&[("RB", 24), ("D", 50), ("NI", 7), ("IB", 8)]),
        ),
        (
            "gather",
            params(&[("RB", 6), ("D", 5), ("NI", 3), ("P", 2), ("IB", 4)]),
        ),
        ("lcopy", params(&[("A", 8)])),
        ("lcopy", params(&[("A", 4)])),
        ("lcopy", params(&[("A", 2)])),
        ("lcopy", params(&[("A", 1)])),
        ("lcopy", params(&[("A", 2), ("T", 1)])),
        ("partials", params(&[("TYPE", 1), ("N", 416), ("P", 2)])),
        ("partials", params(&[("TYPE", 0), ("N", 13), ("P", 6)])),
        ("partials", params(&[("TYPE", 1), ("N", 4), ("P", 1)])),
        ("intew", params(&[("OP", 3), ("W", 8), ("N", 5)])),
        ("intew", params(&[("OP", 6), ("W", 8), ("N", 3)])),
        ("intew", params(&[("OP", 12), ("W", 4), ("N", 7)])),
        ("intew", params(&[("OP", 18), ("W", 2), ("N", 9)])),
        ("intew", params(&[("OP", 22), ("N", 4), ("L", 3), ("I", 2)])),
    ];
    for (name, p) in specs {
        let a = assemble_kernel(name, &p).unwrap();
        let bytes = code(&a);
        let b = asm(&disassemble_text(&bytes, 0, false));
        assert_eq!(bytes, code(&b), "{name}");
        assert!(a.meta.code_size as usize == bytes.len());
        assert!(a.meta.cycles.is_some(), "{name} has a cycle formula");
    }
    assert_eq!(SOURCES.len(), 12);
}

#[test]
fn macros_rept_if_define_and_params() {
    let src = "
        .param COUNT, 3
        .set TOTAL, 0
        .macro ADDN reg, n
        add \\reg, \\reg, \\n
        .endm
        .define ZERO $m0
        .globl f
f:
        .set I, 0
        .rept COUNT
        ADDN $m1, I
        .set I, I + 1
        .endr
        .if COUNT > 2
        setzi ZERO, 1
        .else
        setzi ZERO, 2
        .endif
        .macro LOOP
        rpt $m2, e_\\@
        nop
e_\\@:
        .endm
        LOOP
        LOOP
        .cycles \"COUNT * 10 + 1\"
";
    let a = assemble("t.S", src, &BTreeMap::new()).unwrap();
    let text = disassemble_text(&code(&a), 0, false);
    assert_eq!(text.matches("add $m1, $m1,").count(), 3, "{text}");
    assert!(text.contains("add $m1, $m1, 2"));
    assert!(text.contains("setzi $m0, 1"));
    assert_eq!(text.matches("rpt $m2, . + 8").count(), 2, "{text}");
    assert_eq!(a.meta.cycles, Some(31));
    assert_eq!(a.meta.params.get("COUNT"), Some(&3));
    let b = assemble("t.S", src, &params(&[("COUNT", 1)])).unwrap();
    let text = disassemble_text(&code(&b), 0, false);
    assert_eq!(text.matches("add $m1, $m1,").count(), 1);
    assert!(text.contains("setzi $m0, 2"));
    assert_eq!(b.meta.cycles, Some(11));
    assert!(b.meta.registers_used.contains(&"$m1".to_string()));
}

fn error_of(src: &str) -> (String, Vec<(usize, usize)>) {
    let e = assemble("bad.S", src, &BTreeMap::new()).unwrap_err();
    let pos = e.errors.iter().map(|x| e.line_col(x.span.start)).collect();
    (e.render(), pos)
}

#[test]
fn assembler_errors_point_at_the_source() {
    let cases: &[(&str, &str, (usize, usize))] = &[
        ("nop\n  frob $m1\n", "unknown instruction `frob`", (2, 3)),
        ("add $m1, $m2\n", "does not take these operands", (1, 5)),
        (
            "ld64 $a1:2, [$m0]\n",
            "cannot start a register pair",
            (1, 6),
        ),
        (
            "add $m1, $m2, 70000\n",
            "does not fit in 16 signed bits",
            (1, 15),
        ),
        ("x:\nx:\n", "defined twice", (2, 1)),
        (
            "{ f32v2add $a0:1, $a0:1, $a0:1 ; nop }\n",
            "arithmetic-slot instruction",
            (1, 3),
        ),
        (".rept 2\nnop\n", "no matching `.endr`", (1, 1)),
        (".error \"nope\"\n", "nope", (1, 1)),
        ("nop\n.bogus 1\n", "unknown directive `.bogus`", (2, 1)),
        (
            "rpt $m1, 12\n",
            "end of a repeat body must be a label",
            (1, 10),
        ),
        ("nop ?\n", "unexpected character", (1, 5)),
        ("ld64 $a0:1, [$m1 +\n", "unexpected end of line", (1, 19)),
        (".set X, Y + 1\n", "`Y` is not a constant", (1, 9)),
        (".if 1\nnop\n", "no matching `.endif`", (1, 1)),
    ];
    for (src, msg, at) in cases {
        let (text, pos) = error_of(src);
        assert!(text.contains(msg), "{src:?}: {text}");
        assert_eq!(pos.first(), Some(at), "{src:?}: {text}");
        assert!(text.contains(&format!("bad.S:{}:{}", at.0, at.1)), "{text}");
    }
    let (text, _) = error_of(".rept 100000\n.rept 100000\nnop\n.endr\n.endr\n");
    assert!(text.contains("more than"), "{text}");
    assert!(
        text.matches("error").count() < 5,
        "one error, not thousands"
    );
    let e = assemble("bad.S", ".param A, 1\n", &params(&[("B", 2)])).unwrap_err();
    assert!(e.render().contains("parameter `B` is not declared"));
}

#[test]
fn elf_objects_round_trip_and_are_refused_when_damaged() {
    let a = asm(".globl f, ext\n.text\nf: setzi $m1, data\n call $m15, ext\n br f\n.data\ndata: .word f, 7\n");
    let bytes = a.elf_bytes();
    assert_eq!(
        u16::from_le_bytes([bytes[18], bytes[19]]),
        ipu_isa::elf::EM_IPU
    );
    let back = ObjectFile::from_elf(&bytes).unwrap();
    assert_eq!(back.sections, a.object.sections);
    assert_eq!(back.meta, a.object.meta);
    let text = back.sections.iter().find(|s| s.exec).unwrap();
    let kinds: Vec<RelocKind> = text.relocs.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, vec![RelocKind::Abs20, RelocKind::Pcrel]);
    assert!(matches!(&text.relocs[1].target, RelocTarget::Symbol(s) if s == "ext"));
    // Damaged inputs are errors, not panics.
    assert!(ObjectFile::from_elf(&bytes[..40]).is_err());
    assert!(ObjectFile::from_elf(b"not an elf at all").is_err());
    let mut wrong = bytes.clone();
    wrong[18] = 0x3e;
    wrong[19] = 0;
    assert!(ObjectFile::from_elf(&wrong)
        .unwrap_err()
        .to_string()
        .contains("machine"));
    for cut in [60, 200, bytes.len() - 10] {
        let mut d = bytes.clone();
        d.truncate(cut);
        let _ = ObjectFile::from_elf(&d);
    }
}

/// llvm-readelf and llvm-objdump read the objects (skipped when absent).
#[test]
fn llvm_tools_read_the_objects() {
    let a = assemble_kernel(
        "gemm_amp",
        &params(&[("TYPE", 1), ("M", 8), ("K", 16), ("N", 16)]),
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("ipu-as-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("k.o");
    std::fs::write(&path, a.elf_bytes()).unwrap();
    for (tool, args, want) in [
        ("llvm-readelf", vec!["-h", "-s"], "gemm_amp"),
        ("llvm-objdump", vec!["-h"], ".text"),
    ] {
        match std::process::Command::new(tool)
            .args(&args)
            .arg(&path)
            .output()
        {
            Ok(out) => {
                let s = String::from_utf8_lossy(&out.stdout);
                assert!(
                    out.status.success(),
                    "{tool}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert!(s.contains(want), "{tool}: {s}");
            }
            Err(_) => eprintln!("{tool} not installed; skipped"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn linker_places_objects_and_resolves_relocations() {
    let a = asm(".globl main\n.text\nmain: setzi $m0, table\n call $m15, helper\n halt\n.data\ntable: .word helper, main + 4\n");
    let b = asm(".globl helper\n.text\nhelper: nop\n jmp $m15\n");
    let img = link(
        &[("a", &a.object), ("b", &b.object)],
        &LinkLayout::new(0x200, 1 << 16),
    )
    .unwrap();
    let main = img.symbol("main").unwrap();
    let helper = img.symbol("helper").unwrap();
    assert_eq!(main, 0x200);
    assert_eq!(img.symbol("b.helper"), Some(helper));
    assert!(helper >= main + 12 && helper.is_multiple_of(8));
    let table = img.symbol("a.table").unwrap();
    assert!(table >= helper + 8, "data after code");
    let word = |addr: u32| -> u32 {
        let s = img
            .segments
            .iter()
            .find(|s| s.address <= addr && addr < s.address + s.bytes.len() as u32)
            .unwrap();
        let o = (addr - s.address) as usize;
        u32::from_le_bytes(s.bytes[o..o + 4].try_into().unwrap())
    };
    assert_eq!(word(table), helper);
    assert_eq!(word(table + 4), main + 4);
    let setzi = ipu_isa::decode(word(main)).unwrap();
    assert_eq!(setzi.imm as u32, table);
    let call = ipu_isa::decode(word(main + 4)).unwrap();
    assert_eq!((main + 4) as i64 + call.imm as i64 * 4, helper as i64);
    assert_eq!(img.code_size, 12 + 8);
    assert_eq!(img.exec_ranges.first().map(|r| r.start), Some(0x200));
    // Errors.
    let c = asm(".globl main\nmain: call $m15, missing\n");
    assert!(matches!(
        link(&[("c", &c.object)], &LinkLayout::new(0, 1 << 16)),
        Err(LinkError::Undefined { .. })
    ));
    // Two objects may define the same global (two specialisations of one
    // kernel): each is reached by its qualified name, the plain one is gone...
    let twice = link(
        &[("a", &a.object), ("a2", &a.object), ("b", &b.object)],
        &LinkLayout::new(0, 1 << 16),
    )
    .unwrap();
    assert!(twice.symbol("a.main").is_some() && twice.symbol("a2.main").is_some());
    assert_ne!(twice.symbol("a.main"), twice.symbol("a2.main"));
    assert_eq!(twice.symbol("main"), None);
    // ...and referring to it by the plain name is an error.
    let caller = asm(".globl start\nstart: call $m15, main\n");
    assert!(matches!(
        link(
            &[
                ("a", &a.object),
                ("a2", &a.object),
                ("b", &b.object),
                ("c", &caller.object)
            ],
            &LinkLayout::new(0, 1 << 16)
        ),
        Err(LinkError::Duplicate(_))
    ));
    assert!(matches!(
        link(
            &[("a", &a.object), ("b", &b.object)],
            &LinkLayout::new(0, 16)
        ),
        Err(LinkError::TooBig { .. })
    ));
}

#[test]
fn kernel_cache_is_content_addressed_and_safe_under_concurrency() {
    let dir = std::env::temp_dir().join(format!("ipu-kernel-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = KernelCache::new(&dir);
    let p = params(&[("OP", 0), ("TYPE", 0), ("N", 64)]);
    let first = cache.get("elementwise", &p).unwrap();
    assert!(!first.hit);
    assert!(first.dir.join("kernel.o").exists() && first.dir.join("kernel.json").exists());
    assert_eq!(first.dir.file_name().unwrap().to_str().unwrap().len(), 64);
    let second = cache.get("elementwise", &p).unwrap();
    assert!(second.hit);
    assert_eq!(second.object.sections, first.object.sections);
    let other = cache
        .get("elementwise", &params(&[("OP", 1), ("TYPE", 0), ("N", 64)]))
        .unwrap();
    assert_ne!(other.key, first.key);
    // Many builds of one new entry at once: all succeed with the same bytes.
    let p2 = params(&[("G", 77)]);
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|_| s.spawn(|| KernelCache::new(&dir).get("fill", &p2).unwrap()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in &results {
        assert_eq!(r.object.sections, results[0].object.sections);
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
    // A damaged entry is rebuilt, not trusted.
    std::fs::write(first.dir.join("kernel.o"), b"garbage").unwrap();
    let again = cache.get("elementwise", &p).unwrap();
    assert!(!again.hit);
    assert!(
        cache.get("elementwise", &p).unwrap().hit,
        "the rebuilt entry is stored"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn typed_kernel_specs_assemble() {
    use ipu_isa::kernels::{ElemType, EwOp, GemmType, KernelSpec, RowOp, RowWalk};
    let specs = [
        KernelSpec::gemm(GemmType::F16F16, 46, 64, 80),
        KernelSpec::gemm(GemmType::F8E4M3FN, 64, 256, 128),
        KernelSpec::gemm_chunked(GemmType::F16F32, 64, 768, 64, 64),
        KernelSpec::elementwise(EwOp::Gelu, ElemType::F16, 1000),
        KernelSpec::cast(ElemType::Bf16, ElemType::F8E5M2, 24),
        KernelSpec::rows(RowOp::LayerNorm, ElemType::F32, 4, 768, 1e-5),
        KernelSpec::softmax(false, ElemType::F16, 4, 768, RowWalk::Rows),
        KernelSpec::row_reduce(
            RowOp::Sum,
            ElemType::F32,
            ElemType::F16,
            1,
            3,
            RowWalk::Columns { inner: 5, pitch: 6 },
            Some(1.0 / 3.0),
        ),
        KernelSpec::fill(10, 0),
    ];
    for s in &specs {
        let a = s.assemble().unwrap_or_else(|e| panic!("{}: {e}", s.name()));
        assert_eq!(a.meta.name, s.name());
        assert!(a.meta.entry_points.iter().any(|e| e.name == s.entry));
    }
    assert_eq!(specs[0].name(), "gemm_f16_interleaved_k64_c80_r7_r8_m46");
    assert_eq!(
        specs[2].name(),
        "gemm_f16f32_interleaved_k768_kc64_c64_r10_r11_m64"
    );
    assert_eq!(specs[5].name(), "rows_layer_norm_f32_r4_c768_eps3727c5ac");
    assert_eq!(specs[7].name(), "rows_sum_f32_to_f16_r1_c3_i5_p6_x3eaaaaab");
    assert!(EwOp::Max.is_binary() && !EwOp::Exp.is_binary());
}
