//! The instruction table: one declaration per instruction.
//!
//! Every instruction is declared exactly once here, with its mnemonic, issue
//! slot, which contexts may issue it, its opcode (and function code when it
//! shares an opcode), its operand kinds and its cost in issue turns. The
//! encoder, decoder, assembler, disassembler, documentation table and the
//! simulator all follow from this table, so they cannot disagree.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Which half of a bundle an instruction occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Memory / integer / control slot (first word of a bundle).
    Mem,
    /// Arithmetic slot (second word of a bundle); floating point and AMP.
    Arith,
}

/// Which contexts may issue an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    /// Supervisor and workers.
    Any,
    /// Workers only (all floating point: the supervisor has no FPU).
    Worker,
    /// Supervisor only (worker control, sync, exchange).
    Supervisor,
}

/// Operand kinds. Register-like operands (and the base register of memory
/// operands) take the next 4-bit field from bit 23 down; immediates take the
/// bits left below the register fields (and above the function code, if any).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Integer register `$m0..$m15`.
    M,
    /// 32-bit arithmetic register `$a0..$a15`.
    A,
    /// 64-bit arithmetic register pair `$aN:N+1`, N even.
    A2,
    /// 128-bit arithmetic register quad `$aN:N+3`, N a multiple of 4.
    A4,
    /// Memory operand `[$m]`, `[$m+imm]`, `[$m-imm]` or `[$m+=imm]`
    /// (post-increment); the immediate is a signed byte offset.
    Mem,
    /// Memory operand `[$m+=8]`: post-increment by 8 bytes, nothing encoded.
    Post8,
    /// Memory operand `[$m+=16]`: post-increment by 16 bytes, nothing encoded.
    Post16,
    /// Signed immediate.
    Simm,
    /// Unsigned immediate.
    Uimm,
    /// Branch target: signed offset in words from the branch itself.
    Target,
    /// End of a repeat body: unsigned length of the body in words.
    RptEnd,
}

impl Kind {
    /// Whether the operand takes a 4-bit register field.
    pub fn takes_field(self) -> bool {
        matches!(
            self,
            Kind::M | Kind::A | Kind::A2 | Kind::A4 | Kind::Mem | Kind::Post8 | Kind::Post16
        )
    }
}

/// One instruction's declaration.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    pub op: Op,
    pub mnemonic: &'static str,
    pub slot: Slot,
    pub ctx: Ctx,
    /// 7-bit primary opcode (bits 30..24).
    pub opcode: u8,
    /// Function code in bits 7..0 for instructions that share an opcode.
    pub func: Option<u8>,
    pub operands: &'static [Kind],
    /// Issue turns the issuing context is busy (a worker turn is 6 cycles).
    pub cost: u8,
    pub doc: &'static str,
}

macro_rules! isa_table {
    ($( $variant:ident = $mn:literal, $slot:ident, $ctx:ident, $opc:literal $(/ $func:literal)?, [$($k:ident),*], $cost:literal, $doc:literal; )*) => {
        /// Every instruction of the ISA (overloaded mnemonics are separate ops).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Op { $($variant),* }
        impl Op {
            /// Every op, indexed by its discriminant.
            pub const ALL: &'static [Op] = &[$(Op::$variant),*];
            /// Number of ops.
            pub const COUNT: usize = Op::ALL.len();
            /// The op with discriminant `i` (usable in constants).
            pub const fn from_index(i: u8) -> Op {
                Op::ALL[i as usize]
            }
            /// The slot of the op (usable in constants).
            pub const fn slot(self) -> Slot {
                match self { $(Op::$variant => Slot::$slot),* }
            }
        }
        /// The instruction table, in declaration order.
        pub static OPS: &[OpInfo] = &[ $( OpInfo {
            op: Op::$variant, mnemonic: $mn, slot: Slot::$slot, ctx: Ctx::$ctx,
            opcode: $opc, func: isa_table!(@func $($func)?), operands: &[$(Kind::$k),*],
            cost: $cost, doc: $doc,
        } ),* ];
    };
    (@func) => { None };
    (@func $f:literal) => { Some($f) };
}

isa_table! {
    // ---- memory / integer slot: constants and moves
    Nop = "nop", Mem, Any, 0, [], 1, "no operation";
    SetziM = "setzi", Mem, Any, 1, [M, Uimm], 1, "m = zero-extended 20-bit immediate";
    SetziA = "setzi", Mem, Any, 2, [A, Uimm], 1, "a = zero-extended 20-bit immediate (bit pattern)";
    SethiM = "sethi", Mem, Any, 3, [M, Uimm], 1, "m = (m & 0xffff) | imm16 << 16";
    SethiA = "sethi", Mem, Any, 4, [A, Uimm], 1, "a = (a & 0xffff) | imm16 << 16";
    MovMM = "mov", Mem, Any, 5, [M, M], 1, "m = m";
    MovAM = "mov", Mem, Any, 6, [A, M], 1, "a = m (bit copy)";
    MovMA = "mov", Mem, Any, 7, [M, A], 1, "m = a (bit copy)";
    // ---- integer ALU, register forms (opcode 8, function code)
    Add = "add", Mem, Any, 8 / 0, [M, M, M], 1, "d = s + t (wrapping)";
    Sub = "sub", Mem, Any, 8 / 1, [M, M, M], 1, "d = s - t (wrapping)";
    Mul = "mul", Mem, Any, 8 / 2, [M, M, M], 1, "d = s * t (low 32 bits)";
    And = "and", Mem, Any, 8 / 3, [M, M, M], 1, "d = s & t";
    Or = "or", Mem, Any, 8 / 4, [M, M, M], 1, "d = s | t";
    Xor = "xor", Mem, Any, 8 / 5, [M, M, M], 1, "d = s ^ t";
    Shl = "shl", Mem, Any, 8 / 6, [M, M, M], 1, "d = s << (t & 31)";
    Shr = "shr", Mem, Any, 8 / 7, [M, M, M], 1, "d = s >> (t & 31), logical";
    Sar = "sar", Mem, Any, 8 / 8, [M, M, M], 1, "d = s >> (t & 31), arithmetic";
    Min = "min", Mem, Any, 8 / 9, [M, M, M], 1, "d = signed min(s, t)";
    Max = "max", Mem, Any, 8 / 10, [M, M, M], 1, "d = signed max(s, t)";
    Cmpeq = "cmpeq", Mem, Any, 8 / 11, [M, M, M], 1, "d = (s == t) as 1/0";
    Cmplt = "cmplt", Mem, Any, 8 / 12, [M, M, M], 1, "d = (s < t) signed, 1/0";
    Cmpult = "cmpult", Mem, Any, 8 / 13, [M, M, M], 1, "d = (s < t) unsigned, 1/0";
    Divu = "divu", Mem, Any, 8 / 14, [M, M, M], 4, "d = s / t unsigned (t = 0 faults)";
    Remu = "remu", Mem, Any, 8 / 15, [M, M, M], 4, "d = s % t unsigned (t = 0 faults)";
    Bndchk = "bndchk", Mem, Any, 8 / 16, [M, M], 1, "bounds check: fault (index out of range) unless s < t, unsigned (a negative index, as unsigned, is never in range)";
    // ---- integer ALU, immediate forms (16-bit immediate)
    Addi = "add", Mem, Any, 9, [M, M, Simm], 1, "d = s + simm16";
    Andi = "and", Mem, Any, 10, [M, M, Uimm], 1, "d = s & uimm16";
    Ori = "or", Mem, Any, 11, [M, M, Uimm], 1, "d = s | uimm16";
    Shli = "shl", Mem, Any, 12, [M, M, Uimm], 1, "d = s << (imm & 31)";
    Shri = "shr", Mem, Any, 13, [M, M, Uimm], 1, "d = s >> (imm & 31), logical";
    Sari = "sar", Mem, Any, 14, [M, M, Uimm], 1, "d = s >> (imm & 31), arithmetic";
    Muli = "mul", Mem, Any, 15, [M, M, Simm], 1, "d = s * simm16";
    Cmpeqi = "cmpeq", Mem, Any, 16, [M, M, Simm], 1, "d = (s == simm16) as 1/0";
    Cmplti = "cmplt", Mem, Any, 17, [M, M, Simm], 1, "d = (s < simm16) signed, 1/0";
    Mini = "min", Mem, Any, 18, [M, M, Simm], 1, "d = signed min(s, simm16)";
    // ---- loads and stores (address = base + offset, or base then base += imm)
    Ld8 = "ld8", Mem, Any, 20, [M, Mem], 1, "m = zero-extended byte";
    Ld16 = "ld16", Mem, Any, 21, [M, Mem], 1, "m = zero-extended 16 bits (2-aligned)";
    Ld32M = "ld32", Mem, Any, 22, [M, Mem], 1, "m = 32 bits (4-aligned)";
    Ld32A = "ld32", Mem, Any, 23, [A, Mem], 1, "a = 32 bits (4-aligned)";
    Ld64 = "ld64", Mem, Any, 24, [A2, Mem], 1, "a pair = 64 bits (8-aligned)";
    Ld128 = "ld128", Mem, Any, 25, [A4, Mem], 1, "a quad = 128 bits (16-aligned, interleaved region only)";
    St8 = "st8", Mem, Any, 26, [M, Mem], 1, "store low byte of m";
    St16 = "st16", Mem, Any, 27, [M, Mem], 1, "store low 16 bits of m (2-aligned)";
    St32M = "st32", Mem, Any, 28, [M, Mem], 1, "store m (4-aligned)";
    St32A = "st32", Mem, Any, 29, [A, Mem], 1, "store a (4-aligned)";
    St64 = "st64", Mem, Any, 30, [A2, Mem], 1, "store a pair (8-aligned)";
    Ldst64 = "ldst64", Mem, Any, 31, [A2, Post8, A2, Post8], 1, "load a pair from [p+=8] and store a pair to [q+=8] (one load + one store)";
    Ld2st64 = "ld2st64", Mem, Any, 32, [A2, Post8, A2, Post8, A2, Post8], 1, "two 64-bit loads (both addresses in the interleaved region) and one 64-bit store";
    Ld2x64 = "ld2x64", Mem, Any, 33, [A2, Post8, A2, Post8], 1, "two 64-bit loads (both addresses in the interleaved region)";
    Ldxw = "ldxw", Mem, Any, 34, [A2, Post8, Post8, M], 1, "load a pair from [p+=8], and a weight word from [q+=8] (interleaved) into the AMP shadow bank at byte offset m; m += 8";
    Wld64 = "wld64", Mem, Any, 35, [Post8, M], 1, "load a weight word from [p+=8] into the AMP shadow bank at byte offset m; m += 8";
    Wld128 = "wld128", Mem, Any, 36, [Post16, M], 1, "load 16 weight bytes from [p+=16] (interleaved) into the AMP shadow bank at offset m; m += 16";
    Ampswap = "ampswap", Mem, Supervisor, 37, [], 1, "swap the AMP weight banks (shadow becomes active)";
    Ampk = "ampk", Mem, Worker, 38, [M], 1, "set this worker's AMP instructions per output row; clears its accumulators and phase";
    Setscl = "setscl", Mem, Any, 39, [M], 1, "scale register = m (signed power of two for f8 conversions and AMP f8 modes)";
    // ---- control flow
    Br = "br", Mem, Any, 40, [Target], 1, "pc = target";
    Brz = "brz", Mem, Any, 41, [M, Target], 1, "if m == 0: pc = target";
    Brnz = "brnz", Mem, Any, 42, [M, Target], 1, "if m != 0: pc = target";
    Brneg = "brneg", Mem, Any, 43, [M, Target], 1, "if m < 0 (signed): pc = target";
    Call = "call", Mem, Any, 44, [M, Target], 1, "m = address of the next bundle; pc = target";
    Jmp = "jmp", Mem, Any, 45, [M], 1, "pc = m";
    Rpt = "rpt", Mem, Any, 46, [M, RptEnd], 1, "execute the following body (up to the end label) m times with no loop overhead; m = 0 skips it; no nesting";
    Ampswapt = "ampswapt", Mem, Supervisor, 47, [M], 1, "swap the AMP weight banks; the new active bank holds its weights column by column: m rows (K) of column 0, then of column 1, ... (weight (k, c) at element c * m + k)";
    // ---- contexts, sync, exchange
    Run = "run", Mem, Supervisor, 48, [M, M], 1, "start a worker in the lowest free context at pc s with $m0 = t and $m1 = its context number";
    Exit = "exit", Mem, Worker, 49, [], 1, "the worker ends; its context becomes free";
    Sync = "sync", Mem, Supervisor, 50, [Uimm], 1, "0: wait until every worker has exited; 1: also take part in the chip-wide BSP sync";
    Halt = "halt", Mem, Supervisor, 51, [], 1, "end of the tile program (all workers must have exited)";
    Getc = "getc", Mem, Any, 52, [M], 1, "m = cycle counter (low 32 bits)";
    Getid = "getid", Mem, Any, 53, [M], 1, "m = context number (workers 0..5, supervisor 6)";
    Gettile = "gettile", Mem, Any, 54, [M], 1, "m = tile id";
    Delay = "delay", Mem, Supervisor, 55, [Uimm], 1, "the supervisor issues nothing for imm more cycles (exchange timing)";
    Send = "send", Mem, Supervisor, 56, [Mem], 1, "send the 32-bit word at the address to the exchange in this cycle";
    Recv = "recv", Mem, Supervisor, 57, [Mem], 1, "store the 32-bit word arriving in this cycle from the selected sender";
    Recvsel = "recvsel", Mem, Supervisor, 58, [M], 1, "select the tile whose sends this tile receives (0xffffffff: none)";
    Exch = "exch", Mem, Supervisor, 59, [M], 1, "start the exchange engine on the exchange-table row at address m (4-aligned; see section 7)";
    // ---- arithmetic slot: f32 x2
    F32v2add = "f32v2add", Arith, Worker, 64 / 0, [A2, A2, A2], 1, "d = s + t (2 x f32)";
    F32v2sub = "f32v2sub", Arith, Worker, 64 / 1, [A2, A2, A2], 1, "d = s - t";
    F32v2mul = "f32v2mul", Arith, Worker, 64 / 2, [A2, A2, A2], 1, "d = s * t";
    F32v2div = "f32v2div", Arith, Worker, 64 / 3, [A2, A2, A2], 2, "d = s / t";
    F32v2max = "f32v2max", Arith, Worker, 64 / 4, [A2, A2, A2], 1, "d = max(s, t): IEEE 754-2019 maximum (NaN if either is NaN; -0 < +0)";
    F32v2min = "f32v2min", Arith, Worker, 64 / 5, [A2, A2, A2], 1, "d = min(s, t): IEEE 754-2019 minimum (NaN if either is NaN; -0 < +0)";
    F32v2fma = "f32v2fma", Arith, Worker, 64 / 6, [A2, A2, A2], 1, "d = d + s * t (fused, one rounding)";
    F32v2pow = "f32v2pow", Arith, Worker, 64 / 7, [A2, A2, A2], 3, "d = pow(s, t): IEEE 754 pow (C99 special cases: negative s with an integral t gives a signed result, with a non-integral t NaN; pow(s, +-0) = 1 and pow(+1, t) = 1 even for NaN), computed in double and rounded once";
    // ---- arithmetic slot: f16 x4 (computed in f32, rounded to f16 once)
    F16v4add = "f16v4add", Arith, Worker, 65 / 0, [A2, A2, A2], 1, "d = s + t (4 x f16)";
    F16v4sub = "f16v4sub", Arith, Worker, 65 / 1, [A2, A2, A2], 1, "d = s - t";
    F16v4mul = "f16v4mul", Arith, Worker, 65 / 2, [A2, A2, A2], 1, "d = s * t";
    F16v4div = "f16v4div", Arith, Worker, 65 / 3, [A2, A2, A2], 2, "d = s / t";
    F16v4max = "f16v4max", Arith, Worker, 65 / 4, [A2, A2, A2], 1, "d = max(s, t) (IEEE maximum, as f32v2max)";
    F16v4min = "f16v4min", Arith, Worker, 65 / 5, [A2, A2, A2], 1, "d = min(s, t) (IEEE minimum, as f32v2min)";
    F16v4fma = "f16v4fma", Arith, Worker, 65 / 6, [A2, A2, A2], 1, "d = d + s * t (in f32, one rounding to f16)";
    F16v4pow = "f16v4pow", Arith, Worker, 65 / 7, [A2, A2, A2], 3, "d = pow(s, t) as f32v2pow (rounded to f32, then to f16)";
    // ---- unary f32 x2
    F32v2exp = "f32v2exp", Arith, Worker, 66 / 0, [A2, A2], 2, "d = exp(s)";
    F32v2log = "f32v2log", Arith, Worker, 66 / 1, [A2, A2], 2, "d = ln(s)";
    F32v2tanh = "f32v2tanh", Arith, Worker, 66 / 2, [A2, A2], 2, "d = tanh(s)";
    F32v2erf = "f32v2erf", Arith, Worker, 66 / 3, [A2, A2], 2, "d = erf(s)";
    F32v2rsqrt = "f32v2rsqrt", Arith, Worker, 66 / 4, [A2, A2], 2, "d = 1 / sqrt(s)";
    F32v2sqrt = "f32v2sqrt", Arith, Worker, 66 / 5, [A2, A2], 2, "d = sqrt(s)";
    F32v2recip = "f32v2recip", Arith, Worker, 66 / 6, [A2, A2], 2, "d = 1 / s";
    F32v2neg = "f32v2neg", Arith, Worker, 66 / 7, [A2, A2], 1, "d = -s";
    F32v2abs = "f32v2abs", Arith, Worker, 66 / 8, [A2, A2], 1, "d = |s|";
    F32v2sigmoid = "f32v2sigmoid", Arith, Worker, 66 / 9, [A2, A2], 2, "d = 1 / (1 + exp(-s))";
    F32v2gelu = "f32v2gelu", Arith, Worker, 66 / 10, [A2, A2], 2, "d = s * (1 + erf(s / sqrt 2)) / 2";
    F32v2relu = "f32v2relu", Arith, Worker, 66 / 11, [A2, A2], 1, "d = s < 0 ? +0 : s (NaN and -0 stay)";
    F32v2gelutanh = "f32v2gelutanh", Arith, Worker, 66 / 12, [A2, A2], 2, "d = s * (1 + tanh(sqrt(2/pi) * (s + 0.044715 * s^3))) / 2 (gelu, tanh form), computed in double and rounded once";
    // ---- unary f16 x4 (computed in f32, rounded to f16)
    F16v4exp = "f16v4exp", Arith, Worker, 67 / 0, [A2, A2], 2, "d = exp(s)";
    F16v4log = "f16v4log", Arith, Worker, 67 / 1, [A2, A2], 2, "d = ln(s)";
    F16v4tanh = "f16v4tanh", Arith, Worker, 67 / 2, [A2, A2], 2, "d = tanh(s)";
    F16v4erf = "f16v4erf", Arith, Worker, 67 / 3, [A2, A2], 2, "d = erf(s)";
    F16v4rsqrt = "f16v4rsqrt", Arith, Worker, 67 / 4, [A2, A2], 2, "d = 1 / sqrt(s)";
    F16v4sqrt = "f16v4sqrt", Arith, Worker, 67 / 5, [A2, A2], 2, "d = sqrt(s)";
    F16v4recip = "f16v4recip", Arith, Worker, 67 / 6, [A2, A2], 2, "d = 1 / s";
    F16v4neg = "f16v4neg", Arith, Worker, 67 / 7, [A2, A2], 1, "d = -s";
    F16v4abs = "f16v4abs", Arith, Worker, 67 / 8, [A2, A2], 1, "d = |s|";
    F16v4sigmoid = "f16v4sigmoid", Arith, Worker, 67 / 9, [A2, A2], 2, "d = 1 / (1 + exp(-s))";
    F16v4gelu = "f16v4gelu", Arith, Worker, 67 / 10, [A2, A2], 2, "d = s * (1 + erf(s / sqrt 2)) / 2";
    F16v4relu = "f16v4relu", Arith, Worker, 67 / 11, [A2, A2], 1, "d = s < 0 ? +0 : s (NaN and -0 stay)";
    F16v4gelutanh = "f16v4gelutanh", Arith, Worker, 67 / 12, [A2, A2], 2, "d = gelu, tanh form, as f32v2gelutanh (rounded to f32, then to f16)";
    // ---- reductions and scalars
    F32v2hadd = "f32v2hadd", Arith, Worker, 68 / 0, [A, A2], 1, "d = s0 + s1";
    F32v2hmax = "f32v2hmax", Arith, Worker, 68 / 1, [A, A2], 1, "d = max(s0, s1) (IEEE maximum)";
    F16v4hadd = "f16v4hadd", Arith, Worker, 68 / 2, [A, A2], 1, "d (f32) = (s0 + s1) + (s2 + s3), in f32";
    F16v4hmax = "f16v4hmax", Arith, Worker, 68 / 3, [A, A2], 1, "d (f32) = max of the four halves (IEEE maximum)";
    F32add = "f32add", Arith, Worker, 69 / 0, [A, A, A], 1, "d = s + t (f32)";
    F32sub = "f32sub", Arith, Worker, 69 / 1, [A, A, A], 1, "d = s - t";
    F32mul = "f32mul", Arith, Worker, 69 / 2, [A, A, A], 1, "d = s * t";
    F32div = "f32div", Arith, Worker, 69 / 3, [A, A, A], 2, "d = s / t";
    F32max = "f32max", Arith, Worker, 69 / 4, [A, A, A], 1, "d = max(s, t) (IEEE maximum)";
    F32v2dup = "f32v2dup", Arith, Worker, 70 / 0, [A2, A], 1, "d = (s, s)";
    F16v4dup = "f16v4dup", Arith, Worker, 70 / 1, [A2, A], 1, "d = 4 x f16(s), s an f32 rounded to f16";
    Mov64 = "mov64", Arith, Worker, 70 / 2, [A2, A2], 1, "d = s (64-bit copy)";
    Zero64 = "zero64", Arith, Worker, 70 / 3, [A2], 1, "d = 0 (64 bits)";
    MovA = "mova", Arith, Worker, 70 / 4, [A, A], 1, "d = s (32-bit copy)";
    Pack16 = "pack16", Arith, Worker, 70 / 5, [A, A, A], 1, "d = (s & 0xffff) | (t << 16)";
    // ---- conversions: RNE, saturating for f8 (f8 values scaled by 2^scale)
    CvtF32F16 = "cvt.f32.f16", Arith, Worker, 71 / 0, [A, A2], 1, "2 x f32 -> 2 x f16 (RNE, overflow to inf)";
    CvtF16F32 = "cvt.f16.f32", Arith, Worker, 71 / 1, [A2, A], 1, "2 x f16 -> 2 x f32 (exact)";
    CvtF32Bf16 = "cvt.f32.bf16", Arith, Worker, 71 / 2, [A, A2], 1, "2 x f32 -> 2 x bf16 (RNE)";
    CvtBf16F32 = "cvt.bf16.f32", Arith, Worker, 71 / 3, [A2, A], 1, "2 x bf16 -> 2 x f32 (exact)";
    CvtF16Bf16 = "cvt.f16.bf16", Arith, Worker, 71 / 4, [A, A], 1, "2 x f16 -> 2 x bf16 (RNE)";
    CvtBf16F16 = "cvt.bf16.f16", Arith, Worker, 71 / 5, [A, A], 1, "2 x bf16 -> 2 x f16 (RNE, overflow to inf)";
    CvtF32F8e4 = "cvt.f32.f8e4", Arith, Worker, 71 / 6, [A, A2], 1, "2 x f32 -> 2 x f8E4M3FN in the low 16 bits: q = sat(RNE(x * 2^-scale))";
    CvtF32F8e5 = "cvt.f32.f8e5", Arith, Worker, 71 / 7, [A, A2], 1, "2 x f32 -> 2 x f8E5M2 in the low 16 bits: q = sat(RNE(x * 2^-scale))";
    CvtF16F8e4 = "cvt.f16.f8e4", Arith, Worker, 71 / 8, [A, A2], 1, "4 x f16 -> 4 x f8E4M3FN: q = sat(RNE(x * 2^-scale))";
    CvtF16F8e5 = "cvt.f16.f8e5", Arith, Worker, 71 / 9, [A, A2], 1, "4 x f16 -> 4 x f8E5M2: q = sat(RNE(x * 2^-scale))";
    CvtF8e4F16 = "cvt.f8e4.f16", Arith, Worker, 71 / 10, [A2, A], 1, "4 x f8E4M3FN -> 4 x f16: x = q * 2^scale (RNE)";
    CvtF8e5F16 = "cvt.f8e5.f16", Arith, Worker, 71 / 11, [A2, A], 1, "4 x f8E5M2 -> 4 x f16: x = q * 2^scale (RNE)";
    CvtF8e4F32 = "cvt.f8e4.f32", Arith, Worker, 71 / 12, [A2, A], 1, "2 x f8E4M3FN (low 16 bits) -> 2 x f32: x = q * 2^scale";
    CvtF8e5F32 = "cvt.f8e5.f32", Arith, Worker, 71 / 13, [A2, A], 1, "2 x f8E5M2 (low 16 bits) -> 2 x f32: x = q * 2^scale";
    Hi16 = "hi16", Arith, Worker, 71 / 14, [A, A], 1, "d = s >> 16";
    // ---- comparisons, selects and byte logic (results: one byte 0/1 per lane)
    F32v2cmpeq = "f32v2cmpeq", Arith, Worker, 73 / 0, [A, A2, A2], 1, "d = byte k (k = 0, 1) = (s_k == t_k) as 1/0, bytes 2 and 3 zero: IEEE equality (NaN compares false, -0 == +0)";
    F32v2cmplt = "f32v2cmplt", Arith, Worker, 73 / 1, [A, A2, A2], 1, "d = byte k (k = 0, 1) = (s_k < t_k) as 1/0, bytes 2 and 3 zero (NaN compares false)";
    F16v4cmpeq = "f16v4cmpeq", Arith, Worker, 73 / 2, [A, A2, A2], 1, "d = byte k (k = 0..3) = (s_k == t_k) as 1/0 (NaN compares false, -0 == +0)";
    F16v4cmplt = "f16v4cmplt", Arith, Worker, 73 / 3, [A, A2, A2], 1, "d = byte k (k = 0..3) = (s_k < t_k) as 1/0 (NaN compares false)";
    F32v2sel = "f32v2sel", Arith, Worker, 73 / 4, [A2, A, A2, A2], 1, "d_k = byte k of c != 0 ? s_k : t_k (k = 0, 1: the low two bytes of c), bits copied unchanged";
    F16v4sel = "f16v4sel", Arith, Worker, 73 / 5, [A2, A, A2, A2], 1, "d_k = byte k of c != 0 ? s_k : t_k (k = 0..3), bits copied unchanged";
    I1v8and = "i1v8and", Arith, Worker, 73 / 6, [A2, A2, A2], 1, "each of the 8 bytes: d_k = (s_k != 0 and t_k != 0) as 1/0";
    I1v8or = "i1v8or", Arith, Worker, 73 / 7, [A2, A2, A2], 1, "each of the 8 bytes: d_k = (s_k != 0 or t_k != 0) as 1/0";
    I1v8not = "i1v8not", Arith, Worker, 73 / 8, [A2, A2], 1, "each of the 8 bytes: d_k = (s_k == 0) as 1/0";
    // ---- AMP: accumulating matrix product (see docs/isa.md)
    AmpF32F32 = "amp.f32f32", Arith, Worker, 72 / 0, [A2, A2, A2], 1, "AMP, f32 in, f32 partials: 16 MACs";
    AmpF16F32 = "amp.f16f32", Arith, Worker, 72 / 1, [A2, A2, A2], 1, "AMP, f16 in, f32 partials: 32 MACs";
    AmpF16F16 = "amp.f16f16", Arith, Worker, 72 / 2, [A2, A2, A2], 1, "AMP, f16 in, f16 partials: 64 MACs";
    AmpF8e4F16 = "amp.f8e4f16", Arith, Worker, 72 / 3, [A2, A2, A2], 1, "AMP, f8E4M3FN in, f16 partials, scaled: 128 MACs";
    AmpF8e5F16 = "amp.f8e5f16", Arith, Worker, 72 / 4, [A2, A2, A2], 1, "AMP, f8E5M2 in, f16 partials, scaled: 128 MACs";
}

/// The declaration of `op`.
pub fn info(op: Op) -> &'static OpInfo {
    &OPS[op as usize]
}

/// All declarations sharing a mnemonic (overloads are told apart by operands).
pub fn by_mnemonic(mnemonic: &str) -> &'static [&'static OpInfo] {
    static MAP: OnceLock<HashMap<&'static str, Vec<&'static OpInfo>>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut m: HashMap<&'static str, Vec<&'static OpInfo>> = HashMap::new();
        for o in OPS {
            m.entry(o.mnemonic).or_default().push(o);
        }
        m
    })
    .get(mnemonic)
    .map(|v| v.as_slice())
    .unwrap_or(&[])
}

/// The declaration for an (opcode, function code) pair, if any.
pub fn by_code(opcode: u8, func: u8) -> Option<&'static OpInfo> {
    static MAP: OnceLock<Vec<Option<u16>>> = OnceLock::new();
    let map = MAP.get_or_init(|| {
        let mut m = vec![None; 128 * 257];
        for (i, o) in OPS.iter().enumerate() {
            let f = o.func.map(|f| f as usize).unwrap_or(256);
            m[o.opcode as usize * 257 + f] = Some(i as u16);
        }
        m
    });
    let opcode = opcode as usize & 0x7f;
    let has_func = OPS_WITH_FUNC.get_or_init(|| {
        let mut v = [false; 128];
        for o in OPS {
            if o.func.is_some() {
                v[o.opcode as usize] = true;
            }
        }
        v
    })[opcode];
    let f = if has_func { func as usize } else { 256 };
    map[opcode * 257 + f].map(|i| &OPS[i as usize])
}

static OPS_WITH_FUNC: OnceLock<[bool; 128]> = OnceLock::new();

/// MACs per AMP instruction and its other parameters, by AMP op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmpMode {
    /// Input elements consumed per instruction (K advance).
    pub k_per_instr: usize,
    /// Partials output (and input) per instruction.
    pub partials_per_instr: usize,
    /// Bytes per input / weight element.
    pub in_bytes: usize,
    /// Bytes per partial.
    pub partial_bytes: usize,
    /// The K-block: the smallest K a row may have (16 columns x K-block MACs
    /// fill the drain exactly).
    pub k_block: usize,
}

/// Output columns of the AMP.
pub const AMP_COLUMNS: usize = 16;
/// Bytes in one AMP weight bank.
pub const AMP_BANK_BYTES: usize = 4096;

impl AmpMode {
    pub fn of(op: Op) -> Option<AmpMode> {
        let (k, p, ib, pb) = match op {
            Op::AmpF32F32 => (1, 2, 4, 4),
            Op::AmpF16F32 => (2, 2, 2, 4),
            Op::AmpF16F16 => (4, 4, 2, 2),
            Op::AmpF8e4F16 | Op::AmpF8e5F16 => (8, 4, 1, 2),
            _ => return None,
        };
        Some(AmpMode {
            k_per_instr: k,
            partials_per_instr: p,
            in_bytes: ib,
            partial_bytes: pb,
            k_block: k * AMP_COLUMNS / p,
        })
    }
    /// MACs one instruction performs (= the tile's MACs/cycle at full issue).
    pub fn macs(&self) -> usize {
        self.k_per_instr * AMP_COLUMNS
    }
    /// Instructions needed to drain the 16 partials of a row.
    pub fn drain_instrs(&self) -> usize {
        AMP_COLUMNS / self.partials_per_instr
    }
}

/// The instruction table as Markdown (the table in docs/isa.md).
pub fn markdown_table() -> String {
    let mut s = String::from("| mnemonic | operands | slot | issued by | opcode/func | turns | semantics |\n|---|---|---|---|---|---|---|\n");
    for o in OPS {
        let ops: Vec<&str> = o
            .operands
            .iter()
            .map(|k| match k {
                Kind::M => "$m",
                Kind::A => "$a",
                Kind::A2 => "$a:pair",
                Kind::A4 => "$a:quad",
                Kind::Mem => "[$m+imm] or [$m+=imm]",
                Kind::Post8 => "[$m+=8]",
                Kind::Post16 => "[$m+=16]",
                Kind::Simm => "simm",
                Kind::Uimm => "uimm",
                Kind::Target => "label",
                Kind::RptEnd => "end-label",
            })
            .collect();
        let code = match o.func {
            Some(f) => format!("{}/{}", o.opcode, f),
            None => o.opcode.to_string(),
        };
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            o.mnemonic,
            ops.join(", "),
            if o.slot == Slot::Mem { "mem" } else { "arith" },
            match o.ctx {
                Ctx::Any => "any",
                Ctx::Worker => "worker",
                Ctx::Supervisor => "supervisor",
            },
            code,
            o.cost,
            o.doc.replace('|', "\\|")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_are_unique_and_fit() {
        let mut seen = std::collections::HashSet::new();
        for o in OPS {
            assert!(o.opcode < 128, "{}", o.mnemonic);
            assert!(
                seen.insert((o.opcode, o.func)),
                "duplicate code for {}",
                o.mnemonic
            );
            let fields = o.operands.iter().filter(|k| k.takes_field()).count();
            assert!(fields <= 6, "{}", o.mnemonic);
            let imm = o
                .operands
                .iter()
                .any(|k| !k.takes_field() || *k == Kind::Mem);
            if o.func.is_some() {
                assert!(
                    !imm,
                    "{} has both a function code and an immediate",
                    o.mnemonic
                );
                assert!(fields <= 4, "{}", o.mnemonic);
            }
        }
    }

    #[test]
    fn amp_rates_match_the_machine_model() {
        let r = |op| AmpMode::of(op).unwrap();
        assert_eq!(r(Op::AmpF32F32).macs(), 16);
        assert_eq!(r(Op::AmpF16F32).macs(), 32);
        assert_eq!(r(Op::AmpF16F16).macs(), 64);
        assert_eq!(r(Op::AmpF8e4F16).macs(), 128);
        assert_eq!(r(Op::AmpF32F32).k_block, 8);
        assert_eq!(r(Op::AmpF16F32).k_block, 16);
        assert_eq!(r(Op::AmpF16F16).k_block, 16);
        assert_eq!(r(Op::AmpF8e5F16).k_block, 32);
    }
}
