# Gather (an embedding lookup) on one tile: out[p][k][:] = data[p][j][:]
# for p < P, k < NI, j = indices[k] (negative indices count from the end:
# j = indices[k] + D). Rows are RB bytes.
#
# An index outside [-D, D) is a fault (`bndchk`, "index out of range"):
# the kernel never reads outside `data`.
#
# State ($m0): +0 data (P x D rows), +4 indices (NI integers of IB bytes,
# 8: i64, 4: i32, little-endian), +8 out (P x NI rows).
# Call: `call $m15, gather`; returns with `jmp $m15`.
#
# The P x NI output rows are split over the six workers; each row loads its
# index, checks it and copies the row, in 64-bit granules when RB is a
# multiple of 8 (one bundle per granule), else in the largest units of 4, 2
# or 1 bytes that divide RB (two instructions per unit). Buffers need only
# the alignment of that unit.

        .param RB, 8
        .param D, 1
        .param NI, 1
        .param P, 1
        .param IB, 8

        .if (RB <= 0) | (D <= 0) | (NI <= 0) | (P <= 0)
        .error "RB, D, NI and P must be positive"
        .endif
        .if (IB != 4) & (IB != 8)
        .error "IB (index bytes) must be 4 or 8"
        .endif
        .set R, P * NI
        .set R_LO, R / 6
        .set REM, R % 6
        .set PLANE, D * RB
        .if (PLANE >= 1048576) | (R * RB >= 1048576)
        .error "a buffer of a gather is larger than tile memory"
        .endif
        .if RB % 8 == 0
        .set UNIT, 8
        .else
        .if RB % 4 == 0
        .set UNIT, 4
        .else
        .if RB % 2 == 0
        .set UNIT, 2
        .else
        .set UNIT, 1
        .endif
        .endif
        .endif
        .set UNITS, RB / UNIT
        .set ISHIFT, 2 + (IB == 8)
        # Cycles: workers 1..5 start 1, 2, 9, 10, 11 cycles after worker 0
        # and issues every 6 cycles (divu, remu: 4 turns): setup and exit
        # 29 turns; per row the index, its check and address (13 for i64,
        # 9 for i32), the copy and 5 to step on, 4 more when p steps.
        .set ROWC, 9 + 4 * (IB == 8) + 5
        .if UNIT == 8
        .set COPYC, 2 + (UNITS > 1) * (UNITS + 1)
        .else
        .set COPYC, 2 + 2 * UNITS
        .endif
        .set WRAPS1, (R_LO + 1 + NI - 1) / NI
        .set WRAPS0, (R_LO + NI - 1) / NI
        .set T0, (REM > 0) * (2 + REM + 6 * (REM >= 4) + 6 * (29 + (R_LO + 1) * (ROWC + COPYC) + 4 * WRAPS1))
        .set T5, 14 + 6 * (29 + R_LO * (ROWC + COPYC) + 4 * WRAPS0)
        .cycles "T0 + (T5 > T0) * (T5 - T0)"

        .text
        .globl gather
        .type gather, @function
        .align 8
gather:
        setzi $m1, gather_worker
        .rept 6
        run $m1, $m0
        .endr
        sync 0
        jmp $m15
        .size gather, . - gather

        .type gather_worker, @function
        .align 8
gather_worker:
        setzi $m7, R_LO
        mul $m5, $m1, $m7
        min $m6, $m1, REM
        add $m5, $m5, $m6              # first row
        cmplt $m6, $m1, REM
        add $m6, $m6, $m7              # rows
        brz $m6, g_done
        setzi $m14, NI
        divu $m8, $m5, $m14            # p
        remu $m9, $m5, $m14            # k
        setzi $m7, PLANE
        mul $m8, $m8, $m7
        ld32 $m7, [$m0+0]
        add $m8, $m8, $m7              # data of p
        setzi $m12, RB
        mul $m4, $m5, $m12
        ld32 $m7, [$m0+8]
        add $m4, $m4, $m7              # out row
        ld32 $m10, [$m0+4]
        shl $m7, $m9, ISHIFT
        add $m10, $m10, $m7            # &indices[k]
        setzi $m11, D
g_row:
        ld32 $m2, [$m10+0]
        .if IB == 8
        ld32 $m3, [$m10+4]
        .else
        sar $m3, $m2, 31
        .endif
        add $m10, $m10, IB
        # j = index + D for a negative index (high word all ones).
        cmpeq $m7, $m3, -1
        mul $m13, $m7, $m11
        add $m2, $m2, $m13
        .if IB == 8
        # A high word other than 0 or all ones is out of range: j = ~0.
        cmpeq $m13, $m3, 0
        or $m7, $m7, $m13
        add $m7, $m7, -1
        or $m2, $m2, $m7
        .endif
        bndchk $m2, $m11
        mul $m2, $m2, $m12
        add $m2, $m2, $m8              # data row j of p
        .if UNIT == 8
        ld64 $a0:1, [$m2+=8]
        .if UNITS > 1
        setzi $m7, UNITS - 1
        rpt $m7, g_copy_end
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m4+=8] ; mov64 $a4:5, $a0:1 }
g_copy_end:
        .endif
        { st64 $a4:5, [$m4+=8] ; mov64 $a4:5, $a0:1 }
        .else
        setzi $m7, UNITS
        rpt $m7, g_copy_end
        .if UNIT == 4
        ld32 $m13, [$m2+=4]
        st32 $m13, [$m4+=4]
        .endif
        .if UNIT == 2
        ld16 $m13, [$m2+=2]
        st16 $m13, [$m4+=2]
        .endif
        .if UNIT == 1
        ld8 $m13, [$m2+=1]
        st8 $m13, [$m4+=1]
        .endif
g_copy_end:
        .endif
        # Next (p, k).
        add $m9, $m9, 1
        cmpeq $m7, $m9, $m14
        brz $m7, g_same_p
        setzi $m9, 0
        ld32 $m10, [$m0+4]
        setzi $m7, PLANE
        add $m8, $m8, $m7
g_same_p:
        add $m6, $m6, -1
        brnz $m6, g_row
g_done:
        exit
        .size gather_worker, . - gather_worker
