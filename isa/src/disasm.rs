//! The disassembler: machine words back to assembly text that the assembler
//! accepts, so that assemble -> disassemble -> assemble is byte-identical.
//! Branch targets print as `. + n` (relative to the instruction), and words
//! that are not instructions print as `.word`.

use crate::encode::{decode, Inst, BUNDLE_BIT};
use crate::table::{info, Kind, Slot};

/// Text of one decoded instruction.
pub fn format_inst(inst: &Inst) -> String {
    let o = info(inst.op);
    let mut s = o.mnemonic.to_string();
    let mut field = 0usize;
    for (i, kind) in o.operands.iter().enumerate() {
        s.push_str(if i == 0 { " " } else { ", " });
        let reg = |f: usize| inst.regs[f];
        match kind {
            Kind::M => s.push_str(&format!("$m{}", reg(field))),
            Kind::A => s.push_str(&format!("$a{}", reg(field))),
            Kind::A2 => s.push_str(&format!("$a{}:{}", reg(field), reg(field) + 1)),
            Kind::A4 => s.push_str(&format!("$a{}:{}", reg(field), reg(field) + 3)),
            Kind::Mem => {
                let b = reg(field);
                s.push_str(&match (inst.post, inst.imm) {
                    (true, v) => format!("[$m{b}+={v}]"),
                    (false, 0) => format!("[$m{b}]"),
                    (false, v) if v < 0 => format!("[$m{b}-{}]", -(v as i64)),
                    (false, v) => format!("[$m{b}+{v}]"),
                });
            }
            Kind::Post8 => s.push_str(&format!("[$m{}+=8]", reg(field))),
            Kind::Post16 => s.push_str(&format!("[$m{}+=16]", reg(field))),
            Kind::Simm | Kind::Uimm => s.push_str(&inst.imm.to_string()),
            Kind::Target => s.push_str(&rel(inst.imm as i64 * 4)),
            Kind::RptEnd => s.push_str(&rel(4 + inst.imm as i64 * 4)),
        }
        if kind.takes_field() {
            field += 1;
        }
    }
    s
}

fn rel(bytes: i64) -> String {
    if bytes < 0 {
        format!(". - {}", -bytes)
    } else {
        format!(". + {bytes}")
    }
}

/// One disassembled line: its address, the words it covers, its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub address: u32,
    pub words: Vec<u32>,
    pub text: String,
}

/// Disassembles little-endian code bytes placed at `base`.
pub fn disassemble(code: &[u8], base: u32) -> Vec<Line> {
    let words: Vec<u32> = code
        .chunks(4)
        .map(|c| {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(b)
        })
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let address = base + 4 * i as u32;
        let w = words[i];
        let first = decode(w).ok();
        let second = words.get(i + 1).and_then(|&n| {
            if n & BUNDLE_BIT == 0 {
                decode(n).ok()
            } else {
                None
            }
        });
        let line = match (first, second) {
            (Some(a), Some(b))
                if w & BUNDLE_BIT != 0
                    && info(a.op).slot == Slot::Mem
                    && info(b.op).slot == Slot::Arith =>
            {
                i += 2;
                Line {
                    address,
                    words: vec![w, words[i - 1]],
                    text: format!("{{ {} ; {} }}", format_inst(&a), format_inst(&b)),
                }
            }
            (Some(a), _) if w & BUNDLE_BIT == 0 => {
                i += 1;
                Line {
                    address,
                    words: vec![w],
                    text: format_inst(&a),
                }
            }
            _ => {
                i += 1;
                Line {
                    address,
                    words: vec![w],
                    text: format!(".word {w:#010x}"),
                }
            }
        };
        out.push(line);
    }
    out
}

/// Disassembly as text, one line per instruction or bundle.
pub fn disassemble_text(code: &[u8], base: u32, with_addresses: bool) -> String {
    let mut s = String::new();
    for l in disassemble(code, base) {
        if with_addresses {
            let ws: Vec<String> = l.words.iter().map(|w| format!("{w:08x}")).collect();
            s.push_str(&format!(
                "{:6x}:  {:<18} {}\n",
                l.address,
                ws.join(" "),
                l.text
            ));
        } else {
            s.push_str(&format!("    {}\n", l.text));
        }
    }
    s
}
