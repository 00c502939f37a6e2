//! Binary encoding of instructions.
//!
//! Every instruction is one 32-bit little-endian word:
//! bit 31 is the bundle bit (set on a memory-slot word whose following word
//! is the arithmetic slot of the same bundle), bits 30..24 the opcode, then
//! 4-bit register fields from bit 23 down, then the immediate in the bits
//! left (or an 8-bit function code in bits 7..0). The layout of each
//! instruction follows from its operand kinds in [`crate::table`].

use crate::table::{by_code, info, Kind, Op, OpInfo};

/// Bit set on the first word of a two-word bundle.
pub const BUNDLE_BIT: u32 = 1 << 31;

/// A decoded instruction: its op and operand values in declaration order of
/// register fields; `imm` holds the immediate (or memory offset) and `post`
/// whether a memory operand post-increments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inst {
    pub op: Op,
    pub regs: [u8; 6],
    pub imm: i32,
    pub post: bool,
}

/// An operand value ready to encode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Reg(u8),
    Mem { base: u8, offset: i64, post: bool },
    Imm(i64),
}

/// Why an instruction cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("`{mnemonic}` takes {expected} operands, found {found}")]
    OperandCount {
        mnemonic: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("operand {index} of `{mnemonic}`: {reason}")]
    Operand {
        mnemonic: &'static str,
        index: usize,
        reason: String,
    },
}

/// Width of the immediate region for an instruction.
pub fn imm_width(o: &OpInfo) -> u32 {
    let fields = o.operands.iter().filter(|k| k.takes_field()).count() as u32;
    24 - 4 * fields
}

fn reg_ok(kind: Kind, r: u8) -> Result<(), String> {
    let ok = match kind {
        Kind::M | Kind::A => r < 16,
        Kind::A2 => r < 16 && r.is_multiple_of(2),
        Kind::A4 => r < 16 && r.is_multiple_of(4),
        _ => r < 16,
    };
    if ok {
        Ok(())
    } else {
        Err(match kind {
            Kind::A2 => {
                format!("$a{r} cannot start a register pair: pairs are $aN:N+1 with N even")
            }
            Kind::A4 => format!(
                "$a{r} cannot start a register quad: quads are $aN:N+3 with N a multiple of 4"
            ),
            _ => format!("register {r} does not exist (there are 16)"),
        })
    }
}

fn fits_signed(v: i64, bits: u32) -> bool {
    let lo = -(1i64 << (bits - 1));
    let hi = (1i64 << (bits - 1)) - 1;
    (lo..=hi).contains(&v)
}

/// Encodes one instruction (without the bundle bit).
pub fn encode(op: Op, operands: &[Operand]) -> Result<u32, EncodeError> {
    let o = info(op);
    if operands.len() != o.operands.len() {
        return Err(EncodeError::OperandCount {
            mnemonic: o.mnemonic,
            expected: o.operands.len(),
            found: operands.len(),
        });
    }
    let width = imm_width(o);
    let mut word = (o.opcode as u32) << 24;
    if let Some(f) = o.func {
        word |= f as u32;
    }
    let mut field = 0u32;
    let err = |index: usize, reason: String| EncodeError::Operand {
        mnemonic: o.mnemonic,
        index,
        reason,
    };
    for (i, (kind, val)) in o.operands.iter().zip(operands).enumerate() {
        let put_field = |word: &mut u32, field: &mut u32, r: u8| {
            *word |= (r as u32 & 0xf) << (20 - 4 * *field);
            *field += 1;
        };
        match (kind, *val) {
            (Kind::M | Kind::A | Kind::A2 | Kind::A4, Operand::Reg(r)) => {
                reg_ok(*kind, r).map_err(|e| err(i, e))?;
                put_field(&mut word, &mut field, r);
            }
            (Kind::Mem, Operand::Mem { base, offset, post }) => {
                reg_ok(Kind::M, base).map_err(|e| err(i, e))?;
                put_field(&mut word, &mut field, base);
                let bits = width - 1;
                if !fits_signed(offset, bits) {
                    return Err(err(
                        i,
                        format!("offset {offset} does not fit in {bits} signed bits"),
                    ));
                }
                word |= (offset as u32) & ((1 << bits) - 1);
                if post {
                    word |= 1 << bits;
                }
            }
            (Kind::Post8 | Kind::Post16, Operand::Mem { base, offset, post }) => {
                let want = if *kind == Kind::Post8 { 8 } else { 16 };
                if !post || offset != want {
                    return Err(err(i, format!("this operand must be `[$mN+={want}]`")));
                }
                reg_ok(Kind::M, base).map_err(|e| err(i, e))?;
                put_field(&mut word, &mut field, base);
            }
            (Kind::Simm | Kind::Target, Operand::Imm(v)) => {
                if !fits_signed(v, width) {
                    return Err(err(
                        i,
                        format!("value {v} does not fit in {width} signed bits"),
                    ));
                }
                word |= (v as u32) & ((1u32 << width) - 1);
            }
            (Kind::RptEnd, Operand::Imm(0)) => {
                return Err(err(i, "a repeat body holds at least one word".to_string()))
            }
            (Kind::Uimm | Kind::RptEnd, Operand::Imm(v)) => {
                if v < 0 || v >= (1i64 << width) {
                    return Err(err(
                        i,
                        format!("value {v} does not fit in {width} unsigned bits"),
                    ));
                }
                word |= v as u32;
            }
            (k, v) => {
                return Err(err(
                    i,
                    format!("expected {}, found {}", kind_name(*k), operand_name(&v)),
                ))
            }
        }
    }
    Ok(word)
}

/// A human name for an operand kind, for diagnostics.
pub fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::M => "an $m register",
        Kind::A => "an $a register",
        Kind::A2 => "an $a register pair ($aN:N+1, N even)",
        Kind::A4 => "an $a register quad ($aN:N+3)",
        Kind::Mem => "a memory operand",
        Kind::Post8 => "`[$mN+=8]`",
        Kind::Post16 => "`[$mN+=16]`",
        Kind::Simm | Kind::Uimm => "an immediate",
        Kind::Target | Kind::RptEnd => "a label",
    }
}

fn operand_name(o: &Operand) -> &'static str {
    match o {
        Operand::Reg(_) => "a register",
        Operand::Mem { .. } => "a memory operand",
        Operand::Imm(_) => "an immediate",
    }
}

/// Why a word does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("word {0:#010x} is not a valid instruction")]
pub struct DecodeError(pub u32);

fn sext(v: u32, bits: u32) -> i32 {
    ((v << (32 - bits)) as i32) >> (32 - bits)
}

/// Decodes one word (the bundle bit is ignored here).
pub fn decode(word: u32) -> Result<Inst, DecodeError> {
    let o = by_code(((word >> 24) & 0x7f) as u8, word as u8).ok_or(DecodeError(word))?;
    let width = imm_width(o);
    let mut inst = Inst {
        op: o.op,
        regs: [0; 6],
        imm: 0,
        post: false,
    };
    let mut field = 0usize;
    let low = word & ((1u32 << width) - 1);
    for kind in o.operands {
        if kind.takes_field() {
            let r = ((word >> (20 - 4 * field as u32)) & 0xf) as u8;
            reg_ok(*kind, r).map_err(|_| DecodeError(word))?;
            inst.regs[field] = r;
            field += 1;
        }
        match kind {
            Kind::Mem => {
                let bits = width - 1;
                inst.imm = sext(low & ((1 << bits) - 1), bits);
                inst.post = low >> bits & 1 == 1;
            }
            Kind::Post8 => inst.post = true,
            Kind::Post16 => inst.post = true,
            Kind::Simm | Kind::Target => inst.imm = sext(low, width),
            Kind::Uimm | Kind::RptEnd => inst.imm = low as i32,
            _ => {}
        }
    }
    // Reserved bits must be zero so that decode -> encode is the identity.
    if encode_inst(&inst) != word & !BUNDLE_BIT {
        return Err(DecodeError(word));
    }
    Ok(inst)
}

/// Re-encodes a decoded instruction (without the bundle bit).
pub fn encode_inst(inst: &Inst) -> u32 {
    let o = info(inst.op);
    // On the stack: the decoder re-encodes every word it decodes.
    let mut ops = [Operand::Imm(0); 8];
    let mut n = 0;
    let mut field = 0;
    for kind in o.operands {
        let v = match kind {
            Kind::M | Kind::A | Kind::A2 | Kind::A4 => {
                field += 1;
                Operand::Reg(inst.regs[field - 1])
            }
            Kind::Mem => {
                field += 1;
                Operand::Mem {
                    base: inst.regs[field - 1],
                    offset: inst.imm as i64,
                    post: inst.post,
                }
            }
            Kind::Post8 | Kind::Post16 => {
                field += 1;
                let offset = if *kind == Kind::Post8 { 8 } else { 16 };
                Operand::Mem {
                    base: inst.regs[field - 1],
                    offset,
                    post: true,
                }
            }
            _ => Operand::Imm(inst.imm as i64),
        };
        let Some(slot) = ops.get_mut(n) else {
            return u32::MAX;
        };
        *slot = v;
        n += 1;
    }
    encode(inst.op, &ops[..n]).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::OPS;

    /// Every instruction with representative operands survives encode/decode.
    #[test]
    fn every_instruction_round_trips() {
        for o in OPS {
            let mut ops = Vec::new();
            for (i, k) in o.operands.iter().enumerate() {
                ops.push(match k {
                    Kind::M | Kind::A => Operand::Reg(3 + i as u8),
                    Kind::A2 => Operand::Reg(2 * i as u8 + 2),
                    Kind::A4 => Operand::Reg(4),
                    Kind::Mem => Operand::Mem {
                        base: 5,
                        offset: -8,
                        post: true,
                    },
                    Kind::Post8 => Operand::Mem {
                        base: 6 + i as u8,
                        offset: 8,
                        post: true,
                    },
                    Kind::Post16 => Operand::Mem {
                        base: 6,
                        offset: 16,
                        post: true,
                    },
                    Kind::Simm | Kind::Target => Operand::Imm(-3),
                    Kind::Uimm | Kind::RptEnd => Operand::Imm(7),
                });
            }
            let w = encode(o.op, &ops).unwrap_or_else(|e| panic!("{}: {e}", o.mnemonic));
            let d = decode(w).unwrap();
            assert_eq!(d.op, o.op, "{}", o.mnemonic);
            assert_eq!(encode_inst(&d), w, "{}", o.mnemonic);
            assert_eq!(decode(w | BUNDLE_BIT).unwrap(), d);
        }
    }

    #[test]
    fn out_of_range_operands_are_errors() {
        assert!(encode(
            Op::Addi,
            &[Operand::Reg(1), Operand::Reg(2), Operand::Imm(40000)]
        )
        .is_err());
        assert!(encode(
            Op::Ld64,
            &[
                Operand::Reg(1),
                Operand::Mem {
                    base: 1,
                    offset: 0,
                    post: false
                }
            ]
        )
        .is_err());
        assert!(encode(Op::Nop, &[Operand::Imm(1)]).is_err());
        assert!(decode(0x7f00_0000).is_err());
    }

    /// A `rpt` with an empty body neither encodes nor decodes.
    #[test]
    fn empty_repeat_body_is_not_an_instruction() {
        let ops = [Operand::Reg(1), Operand::Imm(0)];
        assert!(encode(Op::Rpt, &ops).is_err());
        let one = encode(Op::Rpt, &[Operand::Reg(1), Operand::Imm(1)]).unwrap();
        assert!(decode(one).is_ok());
        assert!(decode(one & !1).is_err());
    }
}
