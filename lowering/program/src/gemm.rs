//! The AMP GEMM's rules, in one place for the planner, the exchange layout
//! and the kernel calls: which AMP mode a matmul's element types select
//! ([`GemmMode`]), and how a planned block is laid out for the kernel
//! ([`GemmBlocks`]: block sizes, the K-chunk when K x 16 weights exceed an
//! AMP bank, and the layout A is delivered in).

use crate::elem::{amp_class, is_f8, name};
use crate::geometry::Layout;
use ipu_isa::kernels::{ElemType, GemmType};
use ipu_isa::{AMP_BANK_BYTES, AMP_COLUMNS};
use ipu_target::Target;

/// The AMP mode a matmul runs in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct GemmMode {
    /// The kernel's `TYPE`.
    pub ty: GemmType,
    /// What the AMP reads (f8 operands of another format are widened to f16).
    pub input: ElemType,
    /// The partial sums' type.
    pub partials: ElemType,
}

impl GemmMode {
    /// The mode for `a x b -> result`: two FP8 operands of one format use the
    /// f8 mode (f16 partials); f16 operands, or FP8 widened to f16 exactly,
    /// use f16 inputs, with f16 partials for an f16 result and f32 partials
    /// for a wider one; f32 operands the f32 mode.
    pub fn select(a: ElemType, b: ElemType, result: ElemType) -> Result<GemmMode, String> {
        let f16ish = |e: ElemType| is_f8(e) || e == ElemType::F16;
        match (a, b) {
            (ElemType::F8E4M3FN, ElemType::F8E4M3FN) => Ok(GemmMode {
                ty: GemmType::F8E4M3FN,
                input: a,
                partials: ElemType::F16,
            }),
            (ElemType::F8E5M2, ElemType::F8E5M2) => Ok(GemmMode {
                ty: GemmType::F8E5M2,
                input: a,
                partials: ElemType::F16,
            }),
            (ElemType::F32, ElemType::F32) => Ok(GemmMode {
                ty: GemmType::F32F32,
                input: ElemType::F32,
                partials: ElemType::F32,
            }),
            // f16 partials where the result is f16 (the AMP's 64 MACs/cycle
            // mode); f32 partials otherwise, so a wider result is rounded once.
            _ if f16ish(a) && f16ish(b) && result == ElemType::F16 => Ok(GemmMode {
                ty: GemmType::F16F16,
                input: ElemType::F16,
                partials: ElemType::F16,
            }),
            _ if f16ish(a) && f16ish(b) => Ok(GemmMode {
                ty: GemmType::F16F32,
                input: ElemType::F16,
                partials: ElemType::F32,
            }),
            _ => Err(format!(
                "a matmul of {} x {} elements is not lowered yet (f32 x f32, and f16 and f8 operands are)",
                name(a),
                name(b)
            )),
        }
    }

    pub fn input_bytes(self) -> u64 {
        self.input.bytes() as u64
    }

    pub fn partial_bytes(self) -> u64 {
        self.partials.bytes() as u64
    }

    /// The target's AMP mode row for this mode: (input, partials) classes.
    pub fn amp(self) -> (ipu_target::ElemType, ipu_target::ElemType) {
        (amp_class(self.input), amp_class(self.partials))
    }

    /// The K-block of this mode on `target`.
    pub fn k_block(self, target: &Target) -> Option<u64> {
        let (i, p) = self.amp();
        target.amp_mode(i, p).map(|m| m.k_block.max(1) as u64)
    }

    /// The target's one-tile estimate of an `m x k x n` block in this mode.
    pub fn estimate(self, target: &Target, m: u64, k: u64, n: u64) -> Option<u64> {
        match self.input {
            ElemType::F32 => target.gemm_cycles_f32(m, k, n),
            e if is_f8(e) => target.gemm_cycles_f8(m, k, n),
            _ => target.gemm_cycles_f16(m, k, n),
        }
    }
}

/// Columns of one AMP output block (the kernel's N granule).
pub const N_BLOCK: u64 = AMP_COLUMNS as u64;

/// The K-chunk of a GEMM whose per-tile K block is `bk` elements of
/// `in_bytes`: `None` when one K x 16 weight block fits an AMP bank.
pub fn k_chunk(bk: u64, in_bytes: u64) -> Option<u64> {
    let bank = AMP_BANK_BYTES as u64;
    (bk * N_BLOCK * in_bytes > bank).then(|| bank / (N_BLOCK * in_bytes))
}

/// A matmul `[m, k] x [k, n]` (or `batch` of them) cut into a
/// pb x pm x pn x pk grid of blocks, one batch per block along the batch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GemmBlocks {
    pub batch: u64,
    pub m: u64,
    pub k: u64,
    pub n: u64,
    pub pb: u64,
    pub pm: u64,
    pub pn: u64,
    pub pk: u64,
    pub bm: u64,
    pub bk: u64,
    pub bn: u64,
    pub mode: GemmMode,
    /// Whether each operand has the batch dimension (else it is shared).
    pub a_batched: bool,
    pub b_batched: bool,
    /// The operands and result have a batch dimension (rank 3).
    pub ranked_batch: bool,
}

impl GemmBlocks {
    pub fn new(m: u64, k: u64, n: u64, grid: [u64; 3], mode: GemmMode) -> GemmBlocks {
        let [pm, pn, pk] = grid;
        GemmBlocks {
            batch: 1,
            m,
            k,
            n,
            pb: 1,
            pm,
            pn,
            pk,
            // pk shares of a block's rows, one per K tile, are the rows of
            // the result grid's blocks.
            bm: pk * m.div_ceil(pm * pk),
            bk: k.div_ceil(pk),
            bn: n.div_ceil(pn),
            mode,
            a_batched: false,
            b_batched: false,
            ranked_batch: false,
        }
    }

    /// A batch of `batch` matmuls, one per pb = batch groups of tiles.
    pub fn batched(mut self, batch: u64, a_batched: bool, b_batched: bool) -> GemmBlocks {
        self.batch = batch;
        self.pb = batch;
        self.a_batched = a_batched;
        self.b_batched = b_batched;
        self.ranked_batch = true;
        self
    }

    pub fn tiles(&self) -> u64 {
        self.pb * self.pm * self.pn * self.pk
    }

    /// The K-chunk the kernel processes, or `None` for all of K at once.
    pub fn k_chunk(&self) -> Option<u64> {
        k_chunk(self.bk, self.mode.input_bytes())
    }

    /// How each tile's A block is delivered: in K-chunks of the kernel's M
    /// rows when the kernel chunks K, else row-major.
    pub fn a_layout(&self) -> Layout {
        match self.k_chunk() {
            Some(kc) => Layout::Chunks {
                kc: kc as i64,
                rows: self.bm as i64,
            },
            None => Layout::RowMajor,
        }
    }

    /// The layout the GEMM reads B in: 16-column blocks of bk x 16, one
    /// after another (row-major when there is one).
    pub fn b_layout(&self) -> Layout {
        if self.bn > N_BLOCK {
            Layout::Chunks {
                kc: N_BLOCK as i64,
                rows: self.bk as i64,
            }
        } else {
            Layout::RowMajor
        }
    }

    /// Tile of block (batch b, k, i, j), from `first` by `stride`: the pk
    /// K-blocks of row block i next to each other, so that with each one
    /// holding a 1/pk share of the block's rows of the result (split-K
    /// reduced over the K tiles), the result is the (pb x) (pm * pk) x pn
    /// grid ([`GemmBlocks::result_grid`]).
    pub fn tile(&self, first: u64, stride: u64, b: u64, k: u64, i: u64, j: u64) -> u32 {
        (first + ((((b * self.pm + i) * self.pk + k) * self.pn) + j) * stride) as u32
    }

    /// Rows of the result each of a block's pk tiles adds up and holds
    /// (M cut into pm * pk parts; a row block is pk of them).
    pub fn share_rows(&self) -> u64 {
        self.bm / self.pk
    }

    /// The grid of the result: (pb x) (pm * pk) x pn, block (i * pk + k, j)
    /// on the tile of block (k, i, j).
    pub fn result_grid(&self) -> Vec<i64> {
        let rows = vec![(self.pm * self.pk) as i64, self.pn as i64];
        if self.ranked_batch {
            [vec![self.pb as i64], rows].concat()
        } else {
            rows
        }
    }
}
