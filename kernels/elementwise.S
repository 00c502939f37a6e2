# Elementwise arithmetic over flat buffers: out = OP(in0[, in1]).
#
# Buffers hold G = ceil(N * element bytes / 8) 64-bit granules (the compiler
# pads N up to a granule; padding lanes are computed and stored too, so
# `out` must be padded as well). Inputs in the interleaved region when the
# op is binary (two loads per bundle).
# State ($m0): six worker records of 16 bytes, one per worker: +0 its in0,
# +4 its in1 (binary ops), +8 its out, +12 its granules. The compiler
# splits the granules (`ipu_isa::kernels::elementwise_parts`: G / 6 each,
# one more for the first G % 6, in order), so a worker only loads its own.
# Call: `call $m15, elementwise`; returns with `jmp $m15`.
#
# The granules are split over the six workers; each streams its share
# through one bundle per granule: the arithmetic slot works on the granule
# the previous bundle loaded, and the memory slot stores that result while
# loading the next granule.
#
# OP: 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow (binary);
#     16 relu, 17 gelu, 18 exp, 19 tanh, 20 erf, 21 rsqrt, 22 sqrt, 23 neg,
#     24 abs, 25 sigmoid, 26 recip, 27 log, 28 copy, 29 gelu (tanh form)
#     (unary).
# TYPE: 0 f32, 1 f16.

        .param OP, 0
        .param TYPE, 0
        .param N, 1024

        .set ARITY, 0
        .if (TYPE == 0) & (OP == 0)
        .define VOP f32v2add
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 0) & (OP == 1)
        .define VOP f32v2sub
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 0) & (OP == 2)
        .define VOP f32v2mul
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 0) & (OP == 3)
        .define VOP f32v2div
        .set ARITY, 2
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 4)
        .define VOP f32v2max
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 0) & (OP == 5)
        .define VOP f32v2min
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 0) & (OP == 6)
        .define VOP f32v2pow
        .set ARITY, 2
        .set COST, 3
        .endif
        .if (TYPE == 0) & (OP == 16)
        .define VOP f32v2relu
        .set ARITY, 1
        .set COST, 1
        .endif
        .if (TYPE == 0) & (OP == 17)
        .define VOP f32v2gelu
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 18)
        .define VOP f32v2exp
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 19)
        .define VOP f32v2tanh
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 20)
        .define VOP f32v2erf
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 21)
        .define VOP f32v2rsqrt
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 22)
        .define VOP f32v2sqrt
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 23)
        .define VOP f32v2neg
        .set ARITY, 1
        .set COST, 1
        .endif
        .if (TYPE == 0) & (OP == 24)
        .define VOP f32v2abs
        .set ARITY, 1
        .set COST, 1
        .endif
        .if (TYPE == 0) & (OP == 25)
        .define VOP f32v2sigmoid
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 26)
        .define VOP f32v2recip
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 27)
        .define VOP f32v2log
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 0) & (OP == 28)
        .define VOP mov64
        .set ARITY, 1
        .set COST, 1
        .endif
        .if (TYPE == 0) & (OP == 29)
        .define VOP f32v2gelutanh
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 0)
        .define VOP f16v4add
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 1) & (OP == 1)
        .define VOP f16v4sub
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 1) & (OP == 2)
        .define VOP f16v4mul
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 1) & (OP == 3)
        .define VOP f16v4div
        .set ARITY, 2
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 4)
        .define VOP f16v4max
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 1) & (OP == 5)
        .define VOP f16v4min
        .set ARITY, 2
        .set COST, 1
        .endif
        .if (TYPE == 1) & (OP == 6)
        .define VOP f16v4pow
        .set ARITY, 2
        .set COST, 3
        .endif
        .if (TYPE == 1) & (OP == 16)
        .define VOP f16v4relu
        .set ARITY, 1
        .set COST, 1
        .endif
        .if (TYPE == 1) & (OP == 17)
        .define VOP f16v4gelu
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 18)
        .define VOP f16v4exp
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 19)
        .define VOP f16v4tanh
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 20)
        .define VOP f16v4erf
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 21)
        .define VOP f16v4rsqrt
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 22)
        .define VOP f16v4sqrt
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 23)
        .define VOP f16v4neg
        .set ARITY, 1
        .set COST, 1
        .endif
        .if (TYPE == 1) & (OP == 24)
        .define VOP f16v4abs
        .set ARITY, 1
        .set COST, 1
        .endif
        .if (TYPE == 1) & (OP == 25)
        .define VOP f16v4sigmoid
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 26)
        .define VOP f16v4recip
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 27)
        .define VOP f16v4log
        .set ARITY, 1
        .set COST, 2
        .endif
        .if (TYPE == 1) & (OP == 28)
        .define VOP mov64
        .set ARITY, 1
        .set COST, 1
        .endif
        .if (TYPE == 1) & (OP == 29)
        .define VOP f16v4gelutanh
        .set ARITY, 1
        .set COST, 2
        .endif
        .if ARITY == 0
        .error "unknown OP / TYPE combination"
        .endif
        .if N <= 0
        .error "N must be positive"
        .endif
        .set EB, 4 - 2 * TYPE
        .set G, (N * EB + 7) / 8
        .set G_LO, G / 6
        .set REMG, G % 6
        # Cycles: the six workers' start, each one's few set-up issues (its
        # own record), COST issues a granule; when every worker has as
        # many granules, the last started ends last. Fitted to the
        # simulator (elementwise_cycle_formula_tracks_the_simulator).
        .cycles "8 + 6 * (11 + (ARITY == 2) + COST * (G_LO + (REMG > 0))) + 8 * (REMG == 0) - 12 * (G_LO == 0)"

        .text
        .globl elementwise
        .type elementwise, @function
        .align 8
elementwise:
        setzi $m1, elementwise_worker
        .rept 6
        run $m1, $m0
        add $m0, $m0, 16
        .endr
        sync 0
        jmp $m15
        .size elementwise, . - elementwise

        .type elementwise_worker, @function
        .align 8
elementwise_worker:
        ld32 $m6, [$m0+12]
        brz $m6, ew_done
        ld32 $m2, [$m0+0]
        .if ARITY == 2
        ld32 $m3, [$m0+4]
        .endif
        ld32 $m4, [$m0+8]
        add $m6, $m6, -1
        .if ARITY == 2
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8]
        rpt $m6, ew_loop_end
        { ld2st64 $a0:1, [$m2+=8], $a2:3, [$m3+=8], $a4:5, [$m4+=8] ; VOP $a4:5, $a0:1, $a2:3 }
ew_loop_end:
        VOP $a4:5, $a0:1, $a2:3
        .else
        ld64 $a0:1, [$m2+=8]
        rpt $m6, ew_loop_end
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m4+=8] ; VOP $a4:5, $a0:1 }
ew_loop_end:
        VOP $a4:5, $a0:1
        .endif
        st64 $a4:5, [$m4+=8]
ew_done:
        exit
        .size elementwise_worker, . - elementwise_worker
