# Select: out[i] = cond[i] != 0 ? a[i] : b[i] over N elements of f32 or f16,
# cond one byte per element (a boolean; any non-zero byte is true). The
# values' bits are copied unchanged (NaN payloads too).
#
# State ($m0): +0 cond, +4 a, +8 b, +12 out.
# Call: `call $m15, select`; returns with `jmp $m15`.
# TYPE: 0 f32, 1 f16.
#
# Buffers: a, b and out hold ceil(N * element bytes / 8) 64-bit granules,
# a and b in the interleaved region (two loads per bundle); cond holds
# ceil(N / 8) granules. No buffer is read past its last granule.
#
# Work in units of 8 elements (one granule of cond, 4 granules of f32 or 2
# of f16 per value buffer): the full units are split over the six workers,
# and worker 5 (the last) also does the final partial unit of RG granules,
# if any. A unit of f32 is 7 bundles (4 selects, 2 shifts of the mask), of
# f16 3 bundles.

        .param TYPE, 0
        .param N, 1024

        .if N <= 0
        .error "N must be positive"
        .endif
        .if (TYPE < 0) | (TYPE > 1)
        .error "TYPE must be 0 (f32) or 1 (f16)"
        .endif
        .if TYPE == 0
        .define SEL f32v2sel
        .else
        .define SEL f16v4sel
        .endif
        .set EB, 4 - 2 * TYPE
        .set G, (N * EB + 7) / 8
        .set PER, 4 - 2 * TYPE
        .set USHIFT, 5 - TYPE
        .set UF, G / PER
        .set RG, G % PER
        .set UF_LO, UF / 6
        .set REMU, UF % 6
        # Cycles: workers 1..5 start 1, 2, 9, 10, 11 cycles after worker 0
        # and issues every 6 cycles: setup and exit 18 issues, the loop 4 +
        # IPU per unit, the partial unit TAILC after a check of 2.
        .set IPU, 7 - 4 * TYPE
        .set TAILC, (TYPE == 0) * (2 + 3 * RG) + (TYPE == 1) * 4
        .set CHECK, 2 * (RG > 0)
        .set C0, UF_LO + (REMU > 0)
        .set W0, 18 + CHECK + (C0 > 0) * (4 + IPU * C0)
        .set W5, 18 + CHECK + (UF_LO > 0) * (4 + IPU * UF_LO) + (RG > 0) * TAILC
        .set OFF0, (REMU > 0) * (REMU - 1 + 6 * (REMU >= 4)) + (REMU == 0) * 10
        .set T0, 3 + OFF0 + 6 * W0
        .set T5, 14 + 6 * W5
        .cycles "T0 + (T5 > T0) * (T5 - T0)"

        .text
        .globl select
        .type select, @function
        .align 8
select:
        setzi $m1, select_worker
        .rept 6
        run $m1, $m0
        .endr
        sync 0
        jmp $m15
        .size select, . - select

        .type select_worker, @function
        .align 8
select_worker:
        setzi $m7, UF_LO
        mul $m8, $m1, $m7
        min $m6, $m1, REMU
        add $m8, $m8, $m6              # first unit
        cmplt $m6, $m1, REMU
        add $m6, $m6, $m7              # units
        ld32 $m2, [$m0+0]
        ld32 $m3, [$m0+4]
        ld32 $m4, [$m0+8]
        ld32 $m5, [$m0+12]
        shl $m7, $m8, 3
        add $m2, $m2, $m7
        shl $m7, $m8, USHIFT
        add $m3, $m3, $m7
        add $m4, $m4, $m7
        add $m5, $m5, $m7
        brz $m6, sel_tail
        add $m6, $m6, -1
        ld64 $a12:13, [$m2+=8]
        ld2x64 $a0:1, [$m3+=8], $a2:3, [$m4+=8]
        .if TYPE == 0
        rpt $m6, sel_loop_end
        { ld2x64 $a4:5, [$m3+=8], $a6:7, [$m4+=8] ; SEL $a8:9, $a12, $a0:1, $a2:3 }
        { ld2st64 $a0:1, [$m3+=8], $a2:3, [$m4+=8], $a8:9, [$m5+=8] ; hi16 $a14, $a12 }
        { ld2x64 $a4:5, [$m3+=8], $a6:7, [$m4+=8] ; SEL $a10:11, $a14, $a4:5, $a6:7 }
        { ld2st64 $a0:1, [$m3+=8], $a2:3, [$m4+=8], $a10:11, [$m5+=8] ; SEL $a8:9, $a13, $a0:1, $a2:3 }
        { st64 $a8:9, [$m5+=8] ; hi16 $a15, $a13 }
        { ld64 $a12:13, [$m2+=8] ; SEL $a10:11, $a15, $a4:5, $a6:7 }
        st64 $a10:11, [$m5+=8]
sel_loop_end:
        # The last unit loads nothing after its own granules.
        { ld2x64 $a4:5, [$m3+=8], $a6:7, [$m4+=8] ; SEL $a8:9, $a12, $a0:1, $a2:3 }
        { ld2st64 $a0:1, [$m3+=8], $a2:3, [$m4+=8], $a8:9, [$m5+=8] ; hi16 $a14, $a12 }
        { ld2x64 $a4:5, [$m3+=8], $a6:7, [$m4+=8] ; SEL $a10:11, $a14, $a4:5, $a6:7 }
        { st64 $a10:11, [$m5+=8] ; SEL $a8:9, $a13, $a0:1, $a2:3 }
        { st64 $a8:9, [$m5+=8] ; hi16 $a15, $a13 }
        SEL $a10:11, $a15, $a4:5, $a6:7
        st64 $a10:11, [$m5+=8]
        .else
        rpt $m6, sel_loop_end
        { ld2x64 $a4:5, [$m3+=8], $a6:7, [$m4+=8] ; SEL $a8:9, $a12, $a0:1, $a2:3 }
        { ld2st64 $a0:1, [$m3+=8], $a2:3, [$m4+=8], $a8:9, [$m5+=8] ; SEL $a10:11, $a13, $a4:5, $a6:7 }
        ldst64 $a12:13, [$m2+=8], $a10:11, [$m5+=8]
sel_loop_end:
        { ld2x64 $a4:5, [$m3+=8], $a6:7, [$m4+=8] ; SEL $a8:9, $a12, $a0:1, $a2:3 }
        { st64 $a8:9, [$m5+=8] ; SEL $a10:11, $a13, $a4:5, $a6:7 }
        st64 $a10:11, [$m5+=8]
        .endif
sel_tail:
        .if RG > 0
        # Worker 5 ends at the partial unit: its pointers are there.
        cmpeq $m7, $m1, 5
        brz $m7, sel_done
        ld64 $a12:13, [$m2+=8]
        ld2x64 $a0:1, [$m3+=8], $a2:3, [$m4+=8]
        .if TYPE == 0
        hi16 $a14, $a12
        SEL $a8:9, $a12, $a0:1, $a2:3
        st64 $a8:9, [$m5+=8]
        .if RG > 1
        ld2x64 $a0:1, [$m3+=8], $a2:3, [$m4+=8]
        SEL $a8:9, $a14, $a0:1, $a2:3
        st64 $a8:9, [$m5+=8]
        .endif
        .if RG > 2
        ld2x64 $a0:1, [$m3+=8], $a2:3, [$m4+=8]
        SEL $a8:9, $a13, $a0:1, $a2:3
        st64 $a8:9, [$m5+=8]
        .endif
        .else
        SEL $a8:9, $a12, $a0:1, $a2:3
        st64 $a8:9, [$m5+=8]
        .endif
        .endif
sel_done:
        exit
        .size select_worker, . - select_worker
