//! The tile ISA of the project: instruction table, binary encoding, the
//! assembler (`ipu-as`), the disassembler, the tile-image linker, the kernel
//! library with its content-addressed cache, and the number formats the
//! machine uses. See `docs/isa.md` for the architecture itself.

pub mod asm;
pub mod disasm;
pub mod elf;
pub mod encode;
pub mod exchange_row;
pub mod float;
pub mod kernels;
pub mod link;
pub mod table;

pub use encode::{decode, encode, Inst, Operand, BUNDLE_BIT};
pub use table::{info, AmpMode, Kind, Op, OpInfo, Slot, AMP_BANK_BYTES, AMP_COLUMNS, OPS};
