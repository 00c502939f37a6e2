# Casts between f32, f16, bf16, f8E4M3FN and f8E5M2, and from i32 and i64
# to f32 and f16.
#
# Rounding is to nearest even; conversions to FP8 saturate (ONNX
# `saturate=1`), or with SAT = 0 (f32 and f16 to FP8) overflow to NaN
# (f8E4M3FN) or infinity (f8E5M2) as ONNX `saturate=0`; FP8 values carry a power-of-two scale: an FP8 element q
# stands for q * 2^scale. Conversions from bf16 to FP8 go through f32 and
# from FP8 to bf16 through f32 (both exact steps), FP8 to FP8 through f16.
# Buffers hold whole groups (8 elements for FP8 either side, else 4 or 2);
# the compiler pads N up to one. A group's loads, conversions and stores
# share bundles (a store sees its own bundle's conversion), so a loop
# turn costs the larger of its memory and arithmetic issues.
# State ($m0): six worker records of 20 bytes, one per worker: +0 its
# input, +4 its output, +8 its groups, +12 the scale (the FP8 side's; for
# FP8 -> FP8 the input's), +16 the output scale (FP8 -> FP8 only). The
# compiler splits the groups (`ipu_isa::kernels::cast_parts`: N / 6 each,
# one more for the first N % 6, in order), so a worker only loads its own.
# Call: `call $m15, cast`; returns with `jmp $m15`.
#
# FROM / TO: 0 f32, 1 f16, 2 bf16, 3 f8E4M3FN, 4 f8E5M2; FROM also 5 i32,
# 6 i64.

        .param FROM, 0
        .param TO, 1
        .param N, 1024
        .param SAT, 1

        .set GROUP, 0
        # PIPE: the loop runs one group's load ahead (the first before it,
        # each next one in the last bundle of the group before; the last
        # turn reads one group past the input, within its slack).
        .set PIPE, 0
        # The FP8 side's conversions, by its format (3 f8E4M3FN, 4 f8E5M2):
        # one CONVERT serves both.
        .if TO == 4
        .define CVT_F32_TO_F8 cvt.f32.f8e5
        .define CVT_F16_TO_F8 cvt.f16.f8e5
        .else
        .define CVT_F32_TO_F8 cvt.f32.f8e4
        .define CVT_F16_TO_F8 cvt.f16.f8e4
        .endif
        .if FROM == 4
        .define CVT_F8_TO_F32 cvt.f8e5.f32
        .define CVT_F8_TO_F16 cvt.f8e5.f16
        .else
        .define CVT_F8_TO_F32 cvt.f8e4.f32
        .define CVT_F8_TO_F16 cvt.f8e4.f16
        .endif
        # And the 16-bit side's (1 f16, 2 bf16).
        .if TO == 2
        .define CVT_F32_TO_H cvt.f32.bf16
        .else
        .define CVT_F32_TO_H cvt.f32.f16
        .endif
        .if FROM == 2
        .define CVT_H_TO_F32 cvt.bf16.f32
        .define CVT_H_TO_H cvt.bf16.f16
        .else
        .define CVT_H_TO_F32 cvt.f16.f32
        .define CVT_H_TO_H cvt.f16.bf16
        .endif
        .if (FROM == 0) & (TO == 0)
        .set GROUP, 2
        .set GLEN, 2
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        st64 $a0:1, [$m4+=8]
        .endm
        .endif
        .if (FROM == 0) & (TO >= 1) & (TO <= 2)
        .set GROUP, 4
        .set GLEN, 3
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        { ld64 $a2:3, [$m2+=8] ; CVT_F32_TO_H $a4, $a0:1 }
        { st64 $a4:5, [$m4+=8] ; CVT_F32_TO_H $a5, $a2:3 }
        .endm
        .endif
        .if (FROM == 0) & (TO >= 3)
        .set GROUP, 8
        .set GLEN, 7
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        { ld64 $a2:3, [$m2+=8] ; CVT_F32_TO_F8 $a8, $a0:1 }
        { ld64 $a4:5, [$m2+=8] ; CVT_F32_TO_F8 $a9, $a2:3 }
        { ld64 $a6:7, [$m2+=8] ; pack16 $a10, $a8, $a9 }
        CVT_F32_TO_F8 $a8, $a4:5
        CVT_F32_TO_F8 $a9, $a6:7
        { st64 $a10:11, [$m4+=8] ; pack16 $a11, $a8, $a9 }
        .endm
        .endif
        .if (FROM >= 1) & (FROM <= 2) & (TO == 0)
        .set GROUP, 4
        .set GLEN, 2
        .set PIPE, 1
        .macro CONVERT
        { st64 $a2:3, [$m4+=8] ; CVT_H_TO_F32 $a2:3, $a0 }
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m4+=8] ; CVT_H_TO_F32 $a4:5, $a1 }
        .endm
        .endif
        .if (FROM >= 1) & (FROM <= 2) & (FROM == TO)
        .set GROUP, 4
        .set GLEN, 2
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        st64 $a0:1, [$m4+=8]
        .endm
        .endif
        .if (FROM >= 1) & (FROM <= 2) & (TO >= 1) & (TO <= 2) & (FROM != TO)
        .set GROUP, 4
        .set GLEN, 3
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        CVT_H_TO_H $a2, $a0
        { st64 $a2:3, [$m4+=8] ; CVT_H_TO_H $a3, $a1 }
        .endm
        .endif
        .if (FROM == 1) & (TO >= 3)
        .set GROUP, 8
        .set GLEN, 3 - (SAT != 0)
        .set PIPE, SAT != 0
        .macro CONVERT
        .if PIPE
        { ld64 $a2:3, [$m2+=8] ; CVT_F16_TO_F8 $a4, $a0:1 }
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m4+=8] ; CVT_F16_TO_F8 $a5, $a2:3 }
        .else
        ld64 $a0:1, [$m2+=8]
        { ld64 $a2:3, [$m2+=8] ; CVT_F16_TO_F8 $a4, $a0:1 }
        { st64 $a4:5, [$m4+=8] ; CVT_F16_TO_F8 $a5, $a2:3 }
        .endif
        .endm
        .endif
        .if (FROM == 2) & (TO >= 3)
        .set GROUP, 8
        .set GLEN, 13
        .macro CONVERT
        ld64 $a12:13, [$m2+=8]
        ld64 $a14:15, [$m2+=8]
        cvt.bf16.f32 $a0:1, $a12
        cvt.bf16.f32 $a2:3, $a13
        cvt.bf16.f32 $a4:5, $a14
        cvt.bf16.f32 $a6:7, $a15
        CVT_F32_TO_F8 $a8, $a0:1
        CVT_F32_TO_F8 $a9, $a2:3
        pack16 $a10, $a8, $a9
        CVT_F32_TO_F8 $a8, $a4:5
        CVT_F32_TO_F8 $a9, $a6:7
        pack16 $a11, $a8, $a9
        st64 $a10:11, [$m4+=8]
        .endm
        .endif
        .if (FROM >= 3) & (FROM <= 4) & (TO == 0)
        .set GROUP, 8
        .set GLEN, 7
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        { st64 $a2:3, [$m4+=8] ; CVT_F8_TO_F32 $a2:3, $a0 }
        hi16 $a10, $a0
        { st64 $a4:5, [$m4+=8] ; CVT_F8_TO_F32 $a4:5, $a10 }
        { st64 $a6:7, [$m4+=8] ; CVT_F8_TO_F32 $a6:7, $a1 }
        hi16 $a10, $a1
        { st64 $a8:9, [$m4+=8] ; CVT_F8_TO_F32 $a8:9, $a10 }
        .endm
        .endif
        .if (FROM >= 3) & (FROM <= 4) & (TO == 1)
        .set GROUP, 8
        .set GLEN, 3
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        { st64 $a2:3, [$m4+=8] ; CVT_F8_TO_F16 $a2:3, $a0 }
        { st64 $a4:5, [$m4+=8] ; CVT_F8_TO_F16 $a4:5, $a1 }
        .endm
        .endif
        .if (FROM >= 3) & (FROM <= 4) & (TO == 2)
        .set GROUP, 8
        .set GLEN, 13
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        CVT_F8_TO_F32 $a2:3, $a0
        hi16 $a10, $a0
        CVT_F8_TO_F32 $a4:5, $a10
        CVT_F8_TO_F32 $a6:7, $a1
        hi16 $a10, $a1
        CVT_F8_TO_F32 $a8:9, $a10
        cvt.f32.bf16 $a12, $a2:3
        cvt.f32.bf16 $a13, $a4:5
        cvt.f32.bf16 $a14, $a6:7
        cvt.f32.bf16 $a15, $a8:9
        st64 $a12:13, [$m4+=8]
        st64 $a14:15, [$m4+=8]
        .endm
        .endif
        .if (FROM >= 3) & (FROM <= 4) & (TO >= 3)
        .set GROUP, 8
        .set GLEN, 8
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        CVT_F8_TO_F16 $a2:3, $a0
        CVT_F8_TO_F16 $a4:5, $a1
        setscl $m9
        CVT_F16_TO_F8 $a6, $a2:3
        CVT_F16_TO_F8 $a7, $a4:5
        st64 $a6:7, [$m4+=8]
        .endm
        .endif
        # From integers (FROM 5 i32, 6 i64; TO f32 or f16): in the integer
        # registers, without branches (a repeat body is straight-line): the
        # magnitude, cut to 32 bits with a sticky bit, normalised to bit 31,
        # rounded to 24 bits (nearest even), exponent and sign added. To f16
        # through f32: exact for every value f16 does not overflow on.
        .if (FROM >= 5) & (FROM <= 6) & (TO <= 1)
        .set GROUP, 2
        .set GLEN, 2 * 97 + 2 * (TO == 1)
        .macro CONVERT
        LOADINT
        ITOF
        .if TO == 0
        st32 $m5, [$m4+=4]
        .else
        mov $a0, $m5
        .endif
        LOADINT
        ITOF
        .if TO == 0
        st32 $m5, [$m4+=4]
        .else
        mov $a1, $m5
        cvt.f32.f16 $a2, $a0:1
        st32 $a2, [$m4+=4]
        .endif
        .endm
        .endif
        # One integer into $m5 (low word) and $m6 (high word).
        .macro LOADINT
        .if FROM == 6
        ld32 $m5, [$m2+=4]
        ld32 $m6, [$m2+=4]
        .else
        ld32 $m5, [$m2+=4]
        sar $m6, $m5, 31
        .endif
        .endm
        # \e = the index of the highest set bit of \x (0 for 0 and 1);
        # \t and \u are scratch; $m3 holds 0.
        .macro MSB e, x, t, u
        mov \t, \x
        shr \u, \t, 16
        cmpult \u, $m3, \u
        shl \u, \u, 4
        shr \t, \t, \u
        mov \e, \u
        shr \u, \t, 8
        cmpult \u, $m3, \u
        shl \u, \u, 3
        shr \t, \t, \u
        add \e, \e, \u
        shr \u, \t, 4
        cmpult \u, $m3, \u
        shl \u, \u, 2
        shr \t, \t, \u
        add \e, \e, \u
        shr \u, \t, 2
        cmpult \u, $m3, \u
        shl \u, \u, 1
        shr \t, \t, \u
        add \e, \e, \u
        shr \u, \t, 1
        cmpult \u, $m3, \u
        add \e, \e, \u
        .endm
        # The signed 64-bit integer $m6:$m5 to the f32 bits in $m5.
        .macro ITOF
        sar $m7, $m6, 31
        xor $m5, $m5, $m7
        xor $m6, $m6, $m7
        sub $m8, $m5, $m7
        cmpult $m9, $m8, $m5
        add $m6, $m6, $m9
        mov $m5, $m8
        # k: the bits the high word adds (0 when it is 0).
        MSB $m10, $m6, $m8, $m9
        cmpult $m9, $m3, $m6
        add $m10, $m10, 1
        mul $m10, $m10, $m9
        # a = the top 32 bits of the magnitude, or-ed with a sticky bit for
        # the rest; shifts by k go in two halves (a shift by 32 is by 0).
        sub $m11, $m3, $m10
        shl $m11, $m6, $m11
        shr $m12, $m10, 1
        sub $m13, $m10, $m12
        shr $m8, $m5, $m12
        shr $m8, $m8, $m13
        or $m11, $m11, $m8
        shl $m8, $m8, $m12
        shl $m8, $m8, $m13
        sub $m8, $m5, $m8
        cmpult $m8, $m3, $m8
        or $m5, $m11, $m8
        # Normalised to bit 31: 24 bits kept, the low 8 round.
        MSB $m6, $m5, $m8, $m9
        sub $m8, $m3, $m6
        add $m8, $m8, -1
        shl $m9, $m5, $m8
        shr $m11, $m9, 8
        and $m12, $m9, 0xff
        add $m13, $m12, -0x81
        sar $m13, $m13, 31
        add $m13, $m13, 1
        cmpeq $m14, $m12, 0x80
        and $m12, $m11, 1
        and $m14, $m14, $m12
        or $m13, $m13, $m14
        add $m11, $m11, $m13
        shr $m12, $m11, 24
        shr $m11, $m11, $m12
        add $m6, $m6, $m12
        # Exponent (q's leading bit adds the last 1) and sign; 0 stays +0.
        add $m6, $m6, $m10
        add $m6, $m6, 126
        shl $m6, $m6, 23
        add $m6, $m6, $m11
        shl $m7, $m7, 31
        or $m6, $m6, $m7
        cmpult $m8, $m3, $m5
        mul $m5, $m6, $m8
        .endm
        # SAT = 0: the saturating conversion gave +-max for every element
        # that overflows, and the overflow code (NaN for f8E4M3FN, infinity
        # for f8E5M2) is max + 1 in both formats: add 1 to those bytes. An
        # element overflows when |x| exceeds $m3 (the largest |x| that
        # rounds to max at this scale) and is no NaN ($m9: infinity's bits).
        .set FIX, (SAT == 0) & (FROM <= 1) & (TO >= 3) & (TO <= 4)
        .if (SAT == 0) & (FIX == 0)
        .error "SAT = 0 is for casts from f32 or f16 to FP8"
        .endif
        .set IEB, 4 - 2 * FROM
        .macro FIXONE i
        .if FROM == 0
        ld32 $m5, [$m2-(32-4*\i)]
        shl $m6, $m5, 1
        shr $m6, $m6, 1
        .else
        ld16 $m5, [$m2-(16-2*\i)]
        and $m6, $m5, 0x7fff
        .endif
        cmpult $m7, $m3, $m6
        cmpult $m11, $m9, $m6
        sub $m7, $m7, $m11
        ld8 $m12, [$m4-(8-\i)]
        add $m12, $m12, $m7
        st8 $m12, [$m4-(8-\i)]
        .endm
        .if FIX
        .set GLEN, GLEN + 8 * (9 - (FROM == 1))
        .endif
        .if GROUP == 0
        .error "FROM must be 0..4 (5, 6: i32, i64 to f32 or f16) and TO 0..4"
        .endif
        .set NG, (N + GROUP - 1) / GROUP
        .set NG_LO, NG / 6
        .set REMG, NG % 6
        .set EB_IN, (FROM == 0) * 4 + ((FROM == 1) | (FROM == 2)) * 2 + ((FROM >= 3) & (FROM <= 4)) + (FROM == 5) * 4 + (FROM == 6) * 8
        .set EB_OUT, (TO == 0) * 4 + ((TO == 1) | (TO == 2)) * 2 + (TO >= 3)
        # One FP8 side: its scale is set once, before the loop (FP8 -> FP8
        # switches between the two scales in the loop).
        .set SCL, (((FROM >= 3) & (FROM <= 4)) + (TO >= 3)) == 1
        # Cycles: the start of the six workers and each one's few set-up
        # issues (its own record, the scale), then GLEN issues a group; when
        # every worker has as many groups, the last started ends last.
        # Fitted to the simulator (cast_cycle_formula_tracks_the_simulator).
        .cycles "50 + 6 * (2 * SCL + PIPE + 15 * FIX + GLEN * (NG_LO + (REMG > 0))) + 20 * (REMG == 0) - 6 * (NG_LO == 0)"

        .text
        .globl cast
        .type cast, @function
        .align 8
cast:
        setzi $m1, cast_worker
        .rept 6
        run $m1, $m0
        add $m0, $m0, 20
        .endr
        sync 0
        jmp $m15
        .size cast, . - cast

        .type cast_worker, @function
        .align 8
cast_worker:
        ld32 $m6, [$m0+8]
        brz $m6, cast_done
        ld32 $m2, [$m0+0]
        ld32 $m4, [$m0+4]
        .if ((FROM >= 3) & (FROM <= 4)) | (TO >= 3)
        ld32 $m8, [$m0+12]
        .endif
        .if ((FROM >= 3) & (FROM <= 4)) & (TO >= 3)
        ld32 $m9, [$m0+16]
        .endif
        .if FROM >= 5
        setzi $m3, 0
        .endif
        .if SCL
        setscl $m8
        .endif
        .if FIX
        # The threshold's bits at scale 0 (f8E5M2's tie rounds up, so its
        # limit is one below), plus the scale in the exponent field.
        .set TBITS, (FROM == 0) * ((TO == 3) * 0x43E80000 + (TO == 4) * 0x476FFFFF) + (FROM == 1) * ((TO == 3) * 0x5F40 + (TO == 4) * 0x7B7F)
        .set IBITS, (FROM == 0) * 0x7F800000 + (FROM == 1) * 0x7C00
        setzi $m3, TBITS & 0xffff
        sethi $m3, TBITS >> 16
        setzi $m9, IBITS & 0xffff
        sethi $m9, IBITS >> 16
        shl $m10, $m8, 23 - 13 * FROM
        add $m3, $m3, $m10
        add $m10, $m9, -1
        min $m3, $m3, $m10
        setzi $m10, 0
        max $m3, $m3, $m10
        .endif
        .if PIPE
        ld64 $a0:1, [$m2+=8]
        .endif
        rpt $m6, cast_loop_end
        CONVERT
        .if FIX
        FIXONE 0
        FIXONE 1
        FIXONE 2
        FIXONE 3
        FIXONE 4
        FIXONE 5
        FIXONE 6
        FIXONE 7
        .endif
cast_loop_end:
cast_done:
        exit
        .size cast_worker, . - cast_worker
