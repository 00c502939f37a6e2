# Casts between f32, f16, bf16, f8E4M3FN and f8E5M2.
#
# Rounding is to nearest even; conversions to FP8 saturate (ONNX
# `saturate=1`), and FP8 values carry a power-of-two scale: an FP8 element q
# stands for q * 2^scale. Conversions from bf16 to FP8 go through f32 and
# from FP8 to bf16 through f32 (both exact steps), FP8 to FP8 through f16.
# Buffers hold whole groups (8 elements for FP8 either side, else 4 or 2);
# the compiler pads N up to one.
# State ($m0): +0 in, +4 out, +8 scale (the FP8 side's; for FP8 -> FP8 the
# input's), +12 output scale (FP8 -> FP8 only).
# Call: `call $m15, cast`; returns with `jmp $m15`.
#
# FROM / TO: 0 f32, 1 f16, 2 bf16, 3 f8E4M3FN, 4 f8E5M2.

        .param FROM, 0
        .param TO, 1
        .param N, 1024

        .set GROUP, 0
        .if (FROM == 0) & (TO == 0)
        .set GROUP, 2
        .set GLEN, 2
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        st64 $a0:1, [$m4+=8]
        .endm
        .endif
        .if (FROM == 0) & (TO == 1)
        .set GROUP, 4
        .set GLEN, 5
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        ld64 $a2:3, [$m2+=8]
        cvt.f32.f16 $a4, $a0:1
        cvt.f32.f16 $a5, $a2:3
        st64 $a4:5, [$m4+=8]
        .endm
        .endif
        .if (FROM == 0) & (TO == 2)
        .set GROUP, 4
        .set GLEN, 5
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        ld64 $a2:3, [$m2+=8]
        cvt.f32.bf16 $a4, $a0:1
        cvt.f32.bf16 $a5, $a2:3
        st64 $a4:5, [$m4+=8]
        .endm
        .endif
        .if (FROM == 0) & (TO == 3)
        .set GROUP, 8
        .set GLEN, 12
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        ld64 $a2:3, [$m2+=8]
        ld64 $a4:5, [$m2+=8]
        ld64 $a6:7, [$m2+=8]
        cvt.f32.f8e4 $a8, $a0:1
        cvt.f32.f8e4 $a9, $a2:3
        pack16 $a10, $a8, $a9
        cvt.f32.f8e4 $a8, $a4:5
        cvt.f32.f8e4 $a9, $a6:7
        pack16 $a11, $a8, $a9
        st64 $a10:11, [$m4+=8]
        .endm
        .endif
        .if (FROM == 0) & (TO == 4)
        .set GROUP, 8
        .set GLEN, 12
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        ld64 $a2:3, [$m2+=8]
        ld64 $a4:5, [$m2+=8]
        ld64 $a6:7, [$m2+=8]
        cvt.f32.f8e5 $a8, $a0:1
        cvt.f32.f8e5 $a9, $a2:3
        pack16 $a10, $a8, $a9
        cvt.f32.f8e5 $a8, $a4:5
        cvt.f32.f8e5 $a9, $a6:7
        pack16 $a11, $a8, $a9
        st64 $a10:11, [$m4+=8]
        .endm
        .endif
        .if (FROM == 1) & (TO == 0)
        .set GROUP, 4
        .set GLEN, 5
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        cvt.f16.f32 $a2:3, $a0
        cvt.f16.f32 $a4:5, $a1
        st64 $a2:3, [$m4+=8]
        st64 $a4:5, [$m4+=8]
        .endm
        .endif
        .if (FROM == 1) & (TO == 1)
        .set GROUP, 4
        .set GLEN, 2
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        st64 $a0:1, [$m4+=8]
        .endm
        .endif
        .if (FROM == 1) & (TO == 2)
        .set GROUP, 4
        .set GLEN, 4
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        cvt.f16.bf16 $a2, $a0
        cvt.f16.bf16 $a3, $a1
        st64 $a2:3, [$m4+=8]
        .endm
        .endif
        .if (FROM == 1) & (TO == 3)
        .set GROUP, 8
        .set GLEN, 6
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        ld64 $a2:3, [$m2+=8]
        cvt.f16.f8e4 $a4, $a0:1
        cvt.f16.f8e4 $a5, $a2:3
        st64 $a4:5, [$m4+=8]
        .endm
        .endif
        .if (FROM == 1) & (TO == 4)
        .set GROUP, 8
        .set GLEN, 6
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        ld64 $a2:3, [$m2+=8]
        cvt.f16.f8e5 $a4, $a0:1
        cvt.f16.f8e5 $a5, $a2:3
        st64 $a4:5, [$m4+=8]
        .endm
        .endif
        .if (FROM == 2) & (TO == 0)
        .set GROUP, 4
        .set GLEN, 5
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        cvt.bf16.f32 $a2:3, $a0
        cvt.bf16.f32 $a4:5, $a1
        st64 $a2:3, [$m4+=8]
        st64 $a4:5, [$m4+=8]
        .endm
        .endif
        .if (FROM == 2) & (TO == 1)
        .set GROUP, 4
        .set GLEN, 4
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        cvt.bf16.f16 $a2, $a0
        cvt.bf16.f16 $a3, $a1
        st64 $a2:3, [$m4+=8]
        .endm
        .endif
        .if (FROM == 2) & (TO == 2)
        .set GROUP, 4
        .set GLEN, 2
        .macro CONVERT
        ld64 $a0:1, [$m2+=8]
        st64 $a0:1, [$m4+=8]
        .endm
        .endif
        .if (FROM == 2) & (TO == 3)
        .set GROUP, 8
        .set GLEN, 14
        .macro CONVERT
        setscl $m8
        ld64 $a12:13, [$m2+=8]
        ld64 $a14:15, [$m2+=8]
        cvt.bf16.f32 $a0:1, $a12
        cvt.bf16.f32 $a2:3, $a13
        cvt.bf16.f32 $a4:5, $a14
        cvt.bf16.f32 $a6:7, $a15
        cvt.f32.f8e4 $a8, $a0:1
        cvt.f32.f8e4 $a9, $a2:3
        pack16 $a10, $a8, $a9
        cvt.f32.f8e4 $a8, $a4:5
        cvt.f32.f8e4 $a9, $a6:7
        pack16 $a11, $a8, $a9
        st64 $a10:11, [$m4+=8]
        .endm
        .endif
        .if (FROM == 2) & (TO == 4)
        .set GROUP, 8
        .set GLEN, 14
        .macro CONVERT
        setscl $m8
        ld64 $a12:13, [$m2+=8]
        ld64 $a14:15, [$m2+=8]
        cvt.bf16.f32 $a0:1, $a12
        cvt.bf16.f32 $a2:3, $a13
        cvt.bf16.f32 $a4:5, $a14
        cvt.bf16.f32 $a6:7, $a15
        cvt.f32.f8e5 $a8, $a0:1
        cvt.f32.f8e5 $a9, $a2:3
        pack16 $a10, $a8, $a9
        cvt.f32.f8e5 $a8, $a4:5
        cvt.f32.f8e5 $a9, $a6:7
        pack16 $a11, $a8, $a9
        st64 $a10:11, [$m4+=8]
        .endm
        .endif
        .if (FROM == 3) & (TO == 0)
        .set GROUP, 8
        .set GLEN, 12
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e4.f32 $a2:3, $a0
        hi16 $a10, $a0
        cvt.f8e4.f32 $a4:5, $a10
        cvt.f8e4.f32 $a6:7, $a1
        hi16 $a10, $a1
        cvt.f8e4.f32 $a8:9, $a10
        st64 $a2:3, [$m4+=8]
        st64 $a4:5, [$m4+=8]
        st64 $a6:7, [$m4+=8]
        st64 $a8:9, [$m4+=8]
        .endm
        .endif
        .if (FROM == 3) & (TO == 1)
        .set GROUP, 8
        .set GLEN, 6
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e4.f16 $a2:3, $a0
        cvt.f8e4.f16 $a4:5, $a1
        st64 $a2:3, [$m4+=8]
        st64 $a4:5, [$m4+=8]
        .endm
        .endif
        .if (FROM == 3) & (TO == 2)
        .set GROUP, 8
        .set GLEN, 14
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e4.f32 $a2:3, $a0
        hi16 $a10, $a0
        cvt.f8e4.f32 $a4:5, $a10
        cvt.f8e4.f32 $a6:7, $a1
        hi16 $a10, $a1
        cvt.f8e4.f32 $a8:9, $a10
        cvt.f32.bf16 $a12, $a2:3
        cvt.f32.bf16 $a13, $a4:5
        cvt.f32.bf16 $a14, $a6:7
        cvt.f32.bf16 $a15, $a8:9
        st64 $a12:13, [$m4+=8]
        st64 $a14:15, [$m4+=8]
        .endm
        .endif
        .if (FROM == 3) & (TO == 3)
        .set GROUP, 8
        .set GLEN, 8
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e4.f16 $a2:3, $a0
        cvt.f8e4.f16 $a4:5, $a1
        setscl $m9
        cvt.f16.f8e4 $a6, $a2:3
        cvt.f16.f8e4 $a7, $a4:5
        st64 $a6:7, [$m4+=8]
        .endm
        .endif
        .if (FROM == 3) & (TO == 4)
        .set GROUP, 8
        .set GLEN, 8
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e4.f16 $a2:3, $a0
        cvt.f8e4.f16 $a4:5, $a1
        setscl $m9
        cvt.f16.f8e5 $a6, $a2:3
        cvt.f16.f8e5 $a7, $a4:5
        st64 $a6:7, [$m4+=8]
        .endm
        .endif
        .if (FROM == 4) & (TO == 0)
        .set GROUP, 8
        .set GLEN, 12
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e5.f32 $a2:3, $a0
        hi16 $a10, $a0
        cvt.f8e5.f32 $a4:5, $a10
        cvt.f8e5.f32 $a6:7, $a1
        hi16 $a10, $a1
        cvt.f8e5.f32 $a8:9, $a10
        st64 $a2:3, [$m4+=8]
        st64 $a4:5, [$m4+=8]
        st64 $a6:7, [$m4+=8]
        st64 $a8:9, [$m4+=8]
        .endm
        .endif
        .if (FROM == 4) & (TO == 1)
        .set GROUP, 8
        .set GLEN, 6
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e5.f16 $a2:3, $a0
        cvt.f8e5.f16 $a4:5, $a1
        st64 $a2:3, [$m4+=8]
        st64 $a4:5, [$m4+=8]
        .endm
        .endif
        .if (FROM == 4) & (TO == 2)
        .set GROUP, 8
        .set GLEN, 14
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e5.f32 $a2:3, $a0
        hi16 $a10, $a0
        cvt.f8e5.f32 $a4:5, $a10
        cvt.f8e5.f32 $a6:7, $a1
        hi16 $a10, $a1
        cvt.f8e5.f32 $a8:9, $a10
        cvt.f32.bf16 $a12, $a2:3
        cvt.f32.bf16 $a13, $a4:5
        cvt.f32.bf16 $a14, $a6:7
        cvt.f32.bf16 $a15, $a8:9
        st64 $a12:13, [$m4+=8]
        st64 $a14:15, [$m4+=8]
        .endm
        .endif
        .if (FROM == 4) & (TO == 3)
        .set GROUP, 8
        .set GLEN, 8
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e5.f16 $a2:3, $a0
        cvt.f8e5.f16 $a4:5, $a1
        setscl $m9
        cvt.f16.f8e4 $a6, $a2:3
        cvt.f16.f8e4 $a7, $a4:5
        st64 $a6:7, [$m4+=8]
        .endm
        .endif
        .if (FROM == 4) & (TO == 4)
        .set GROUP, 8
        .set GLEN, 8
        .macro CONVERT
        setscl $m8
        ld64 $a0:1, [$m2+=8]
        cvt.f8e5.f16 $a2:3, $a0
        cvt.f8e5.f16 $a4:5, $a1
        setscl $m9
        cvt.f16.f8e5 $a6, $a2:3
        cvt.f16.f8e5 $a7, $a4:5
        st64 $a6:7, [$m4+=8]
        .endm
        .endif
        .if GROUP == 0
        .error "FROM and TO must be 0..4"
        .endif
        .set NG, (N + GROUP - 1) / GROUP
        .set NG_LO, NG / 6
        .set REMG, NG % 6
        .set EB_IN, (FROM == 0) * 4 + ((FROM == 1) | (FROM == 2)) * 2 + (FROM >= 3)
        .set EB_OUT, (TO == 0) * 4 + ((TO == 1) | (TO == 2)) * 2 + (TO >= 3)
        .cycles "20 + 6 * (20 + GLEN * (NG_LO + (REMG > 0)))"

        .text
        .globl cast
        .type cast, @function
        .align 8
cast:
        setzi $m1, cast_worker
        .rept 6
        run $m1, $m0
        .endr
        sync 0
        jmp $m15
        .size cast, . - cast

        .type cast_worker, @function
        .align 8
cast_worker:
        setzi $m7, NG_LO
        mul $m5, $m1, $m7
        min $m6, $m1, REMG
        add $m5, $m5, $m6
        cmplt $m6, $m1, REMG
        add $m6, $m6, $m7
        brz $m6, cast_done
        ld32 $m2, [$m0+0]
        ld32 $m4, [$m0+4]
        ld32 $m8, [$m0+8]
        ld32 $m9, [$m0+12]
        mul $m7, $m5, GROUP * EB_IN
        add $m2, $m2, $m7
        mul $m7, $m5, GROUP * EB_OUT
        add $m4, $m4, $m7
        rpt $m6, cast_loop_end
        CONVERT
cast_loop_end:
cast_done:
        exit
        .size cast_worker, . - cast_worker
