# Comparisons of f32 or f16 values into booleans (one byte 0/1 per
# element), and boolean logic on such bytes: out = OP(in0[, in1]).
#
# OP: 0 eq, 1 lt, 2 gt (TYPE 0 f32, 1 f16; IEEE: NaN compares false,
#     -0 == +0); 3 and, 4 or (binary), 5 not (unary) on booleans (any
#     non-zero byte is true; results are 0/1).
# State ($m0): +0 in0, +4 in1 (binary ops), +8 out.
# Call: `call $m15, compare`; returns with `jmp $m15`.
#
# Buffers: the inputs hold ceil(N * element bytes / 8) 64-bit granules, in
# the interleaved region for binary ops (two loads per bundle); out holds
# ceil(N / 8) granules. Bytes of out past N are written with unspecified
# 0/1 values. No input is read past its last granule.
#
# Comparisons work in units of 8 elements (one granule of out, 4 granules
# of f32 or 2 of f16 per input): the full units are split over the six
# workers, and worker 5 (the last) also does the final partial unit of RG
# granules, if any. A unit of f32 is 6 bundles (4 compares, 2 packs), of
# f16 2 bundles (2 compares; the store rides on the next loads). Logic ops
# stream one granule (8 booleans) per bundle, as `elementwise` does.

        .param OP, 0
        .param TYPE, 0
        .param N, 1024

        .if N <= 0
        .error "N must be positive"
        .endif
        .if (OP < 0) | (OP > 5)
        .error "unknown OP"
        .endif
        .if (TYPE < 0) | (TYPE > 1)
        .error "TYPE must be 0 (f32) or 1 (f16)"
        .endif
        .set LOGIC, OP >= 3

        .if LOGIC == 0
        .if (TYPE == 0) & (OP == 0)
        .define CMPI f32v2cmpeq
        .endif
        .if (TYPE == 0) & (OP != 0)
        .define CMPI f32v2cmplt
        .endif
        .if (TYPE == 1) & (OP == 0)
        .define CMPI f16v4cmpeq
        .endif
        .if (TYPE == 1) & (OP != 0)
        .define CMPI f16v4cmplt
        .endif
        .set EB, 4 - 2 * TYPE
        .set G, (N * EB + 7) / 8
        # Input granules per unit of 8 elements, and the shift of a unit's bytes.
        .set PER, 4 - 2 * TYPE
        .set USHIFT, 5 - TYPE
        .set UF, G / PER
        .set RG, G % PER
        .set UF_LO, UF / 6
        .set REMU, UF % 6
        # Cycles: workers 1..5 start 1, 2, 9, 10, 11 cycles after worker 0
        # and issues every 6 cycles: setup and exit 16 issues, the loop 3 +
        # IPU per unit, the partial unit TAILC after a check of 2.
        .set IPU, 6 - 4 * TYPE
        .set TAILC, (TYPE == 0) * (5 + 2 * RG) + (TYPE == 1) * 5
        .set CHECK, 2 * (RG > 0)
        .set C0, UF_LO + (REMU > 0)
        .set W0, 16 + CHECK + (C0 > 0) * (3 + IPU * C0)
        .set W5, 16 + CHECK + (UF_LO > 0) * (3 + IPU * UF_LO) + (RG > 0) * TAILC
        .set OFF0, (REMU > 0) * (REMU - 1 + 6 * (REMU >= 4)) + (REMU == 0) * 10
        .set T0, 3 + OFF0 + 6 * W0
        .set T5, 14 + 6 * W5
        .cycles "T0 + (T5 > T0) * (T5 - T0)"
        .else
        .if OP == 3
        .define VOP i1v8and
        .set ARITY, 2
        .endif
        .if OP == 4
        .define VOP i1v8or
        .set ARITY, 2
        .endif
        .if OP == 5
        .define VOP i1v8not
        .set ARITY, 1
        .endif
        .set G, (N + 7) / 8
        .set G_LO, G / 6
        .set REMG, G % 6
        .set T0, (REMG > 0) * (2 + REMG + 6 * (REMG >= 4) + 6 * (20 + G_LO))
        .set T5, 14 + 6 * (19 + G_LO)
        .cycles "T0 + (T5 > T0) * (T5 - T0)"
        .endif

        .text
        .globl compare
        .type compare, @function
        .align 8
compare:
        setzi $m1, compare_worker
        .rept 6
        run $m1, $m0
        .endr
        sync 0
        jmp $m15
        .size compare, . - compare

        .type compare_worker, @function
        .align 8
compare_worker:
        .if LOGIC == 0
        setzi $m7, UF_LO
        mul $m5, $m1, $m7
        min $m6, $m1, REMU
        add $m5, $m5, $m6              # first unit
        cmplt $m6, $m1, REMU
        add $m6, $m6, $m7              # units
        # gt compares the other way round: in1 < in0.
        .if OP == 2
        ld32 $m2, [$m0+4]
        ld32 $m3, [$m0+0]
        .else
        ld32 $m2, [$m0+0]
        ld32 $m3, [$m0+4]
        .endif
        ld32 $m4, [$m0+8]
        shl $m7, $m5, USHIFT
        add $m2, $m2, $m7
        add $m3, $m3, $m7
        shl $m7, $m5, 3
        add $m4, $m4, $m7
        brz $m6, cmp_tail
        add $m6, $m6, -1
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8]
        .if TYPE == 0
        rpt $m6, cmp_loop_end
        { ld2x64 $a4:5, [$m2+=8], $a6:7, [$m3+=8] ; CMPI $a8, $a0:1, $a2:3 }
        { ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8] ; CMPI $a9, $a4:5, $a6:7 }
        { ld2x64 $a4:5, [$m2+=8], $a6:7, [$m3+=8] ; CMPI $a10, $a0:1, $a2:3 }
        { ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8] ; CMPI $a11, $a4:5, $a6:7 }
        pack16 $a12, $a8, $a9
        { st64 $a12:13, [$m4+=8] ; pack16 $a13, $a10, $a11 }
cmp_loop_end:
        # The last unit loads nothing after its own granules.
        { ld2x64 $a4:5, [$m2+=8], $a6:7, [$m3+=8] ; CMPI $a8, $a0:1, $a2:3 }
        { ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8] ; CMPI $a9, $a4:5, $a6:7 }
        { ld2x64 $a4:5, [$m2+=8], $a6:7, [$m3+=8] ; CMPI $a10, $a0:1, $a2:3 }
        CMPI $a11, $a4:5, $a6:7
        pack16 $a12, $a8, $a9
        { st64 $a12:13, [$m4+=8] ; pack16 $a13, $a10, $a11 }
        .else
        rpt $m6, cmp_loop_end
        { ld2x64 $a4:5, [$m2+=8], $a6:7, [$m3+=8] ; CMPI $a8, $a0:1, $a2:3 }
        { ld2st64 $a0:1, [$m2+=8], $a2:3, [$m3+=8], $a8:9, [$m4+=8] ; CMPI $a9, $a4:5, $a6:7 }
cmp_loop_end:
        { ld2x64 $a4:5, [$m2+=8], $a6:7, [$m3+=8] ; CMPI $a8, $a0:1, $a2:3 }
        { st64 $a8:9, [$m4+=8] ; CMPI $a9, $a4:5, $a6:7 }
        .endif
cmp_tail:
        .if RG > 0
        # Worker 5 ends at the partial unit: its pointers are there.
        cmpeq $m7, $m1, 5
        brz $m7, cmp_done
        zero64 $a8:9
        zero64 $a10:11
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8]
        CMPI $a8, $a0:1, $a2:3
        .if RG > 1
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8]
        CMPI $a9, $a0:1, $a2:3
        .endif
        .if RG > 2
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8]
        CMPI $a10, $a0:1, $a2:3
        .endif
        .if TYPE == 0
        pack16 $a12, $a8, $a9
        pack16 $a13, $a10, $a11
        st64 $a12:13, [$m4+=8]
        .else
        st64 $a8:9, [$m4+=8]
        .endif
        .endif
cmp_done:
        exit
        .else
        # Logic: one granule of 8 booleans per bundle.
        setzi $m7, G_LO
        mul $m5, $m1, $m7
        min $m6, $m1, REMG
        add $m5, $m5, $m6
        shl $m5, $m5, 3
        cmplt $m6, $m1, REMG
        add $m6, $m6, $m7
        brz $m6, logic_done
        ld32 $m2, [$m0+0]
        ld32 $m3, [$m0+4]
        ld32 $m4, [$m0+8]
        add $m2, $m2, $m5
        add $m3, $m3, $m5
        add $m4, $m4, $m5
        add $m6, $m6, -1
        .if ARITY == 2
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8]
        rpt $m6, logic_loop_end
        { ld2st64 $a0:1, [$m2+=8], $a2:3, [$m3+=8], $a4:5, [$m4+=8] ; VOP $a4:5, $a0:1, $a2:3 }
logic_loop_end:
        VOP $a4:5, $a0:1, $a2:3
        .else
        ld64 $a0:1, [$m2+=8]
        rpt $m6, logic_loop_end
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m4+=8] ; VOP $a4:5, $a0:1 }
logic_loop_end:
        VOP $a4:5, $a0:1
        .endif
        st64 $a4:5, [$m4+=8]
logic_done:
        exit
        .endif
        .size compare_worker, . - compare_worker
