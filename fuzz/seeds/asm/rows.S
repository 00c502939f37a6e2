# Row kernels over an R x C matrix of f32 (or f16 for sums and maxima):
# reductions and the pieces of softmax and layer_norm.
#
# Rows are stored with a stride of whole 64-bit granules (C padded up); the
# reductions read exactly C elements, so padding may hold anything.
# State ($m0): +0 in0 (R x C), +4 in1 (per-row f32 scalars or [mean, rstd]
# pairs), +8 gamma (C), +12 beta (C), +16 out.
# Call: `call $m15, rows`; returns with `jmp $m15`.
#
# OP 0 row_sum:         out[r] = sum_c x[r][c]                        (f32 out)
# OP 1 row_max:         out[r] = max_c x[r][c]                        (f32 out)
# OP 2 softmax_exp:     y[r][c] = exp(x[r][c] - in1[r]) to out (R x C), and the
#                       row sums to in1[r] (overwriting the maxima)
# OP 3 row_scale_recip: y[r][c] = x[r][c] * (1 / in1[r])              (softmax normalise)
# OP 4 ln_moments:      out[r] = [mean, 1 / sqrt(var + EPS)] (biased variance)
# OP 5 ln_apply:        y[r][c] = (x[r][c] - mean) * rstd * gamma[c] + beta[c]
# OP 6 add_row_vector:  y[r][c] = x[r][c] + v[c]   (v at +8, e.g. a bias)
# OP 7 mul_row_vector:  y[r][c] = x[r][c] * v[c]   (v at +8)
# TYPE: 0 f32, 1 f16 (OP 0, 1, 6 and 7).
# INV_C and EPS are f32 bit patterns of 1/C and epsilon (OP 4).

        .param OP, 0
        .param TYPE, 0
        .param R, 8
        .param C, 64
        .param INV_C, 0x3c800000
        .param EPS, 0x3727c5ac

        .if (OP < 0) | (OP > 7)
        .error "OP must be 0..7"
        .endif
        .if (TYPE == 1) & (OP > 1) & (OP < 6)
        .error "f16 rows are supported for row_sum, row_max and the row-vector ops only"
        .endif
        .if (OP == 6) & (TYPE == 0)
        .define VOP f32v2add
        .endif
        .if (OP == 6) & (TYPE == 1)
        .define VOP f16v4add
        .endif
        .if (OP == 7) & (TYPE == 0)
        .define VOP f32v2mul
        .endif
        .if (OP == 7) & (TYPE == 1)
        .define VOP f16v4mul
        .endif
        .if (R <= 0) | (C <= 0)
        .error "R and C must be positive"
        .endif
        .set EPG, 2 + 2 * TYPE           # elements per granule
        .set GR, (C + EPG - 1) / EPG      # granules per row
        .set FULL, C / EPG                # granules with no padding
        .set TAIL, C % EPG                # valid elements in the last granule
        .set ROWB, GR * 8
        .set R_LO, R / 6
        .set REM, R % 6
        .set RPW, R_LO + (REM > 0)
        .cycles "20 + 6 * (16 + RPW * (12 + 4 * GR))"

# Loads the constant -inf into registers p and q.
        .macro NEGINF p, q
        setzi \p, 0
        sethi \p, 0xff80
        mova \q, \p
        .endm

# Sum (f32 result in $a6) of one f32 row at $m2; $m2 ends at the next row.
        .macro SUM_F32 vop, sop, init
        .if \init
        NEGINF $a4, $a5
        mov64 $a0:1, $a4:5
        .else
        zero64 $a4:5
        zero64 $a0:1
        .endif
        .if FULL > 0
        setzi $m10, FULL
        rpt $m10, sum_end_\@
        { ld64 $a0:1, [$m2+=8] ; \vop $a4:5, $a4:5, $a0:1 }
sum_end_\@:
        \vop $a4:5, $a4:5, $a0:1
        .endif
        .if \init
        f32v2hmax $a6, $a4:5
        .else
        f32v2hadd $a6, $a4:5
        .endif
        .if TAIL
        ld32 $a0, [$m2+=8]
        \sop $a6, $a6, $a0
        .endif
        .endm

# The same for an f16 row: four halves per granule, reduced in f32.
        .macro SUM_F16 hop, sop, init
        .if \init
        NEGINF $a6, $a2
        .else
        setzi $a6, 0
        setzi $a2, 0
        .endif
        .if FULL > 0
        setzi $m10, FULL
        rpt $m10, hsum_end_\@
        { ld64 $a0:1, [$m2+=8] ; \sop $a6, $a6, $a2 }
        { nop ; \hop $a2, $a0:1 }
hsum_end_\@:
        \sop $a6, $a6, $a2
        .endif
        .if TAIL
        ld64 $a0:1, [$m2+=8]
        cvt.f16.f32 $a2:3, $a0
        \sop $a6, $a6, $a2
        .if TAIL > 1
        \sop $a6, $a6, $a3
        .endif
        .if TAIL > 2
        cvt.f16.f32 $a2:3, $a1
        \sop $a6, $a6, $a2
        .endif
        .endif
        .endm

        .text
        .globl rows
        .type rows, @function
        .align 8
rows:
        setzi $m1, rows_worker
        .rept 6
        run $m1, $m0
        .endr
        sync 0
        jmp $m15
        .size rows, . - rows

        .type rows_worker, @function
        .align 8
rows_worker:
        setzi $m7, R_LO
        mul $m5, $m1, $m7
        min $m6, $m1, REM
        add $m5, $m5, $m6              # first row
        cmplt $m6, $m1, REM
        add $m6, $m6, $m7              # rows
        brz $m6, rows_done
        ld32 $m2, [$m0+0]
        setzi $m7, ROWB
        mul $m8, $m5, $m7
        add $m2, $m2, $m8              # x row
        ld32 $m9, [$m0+16]
        .if (OP == 2) | (OP == 3) | (OP == 5) | (OP >= 6)
        add $m9, $m9, $m8              # y row
        .endif
        ld32 $m3, [$m0+4]
        .if OP == 4
        shl $m7, $m5, 3
        add $m9, $m9, $m7              # [mean, rstd] out
        .endif
        .if OP == 5
        shl $m7, $m5, 3
        .else
        shl $m7, $m5, 2
        .endif
        add $m3, $m3, $m7              # per-row scalars
        .if OP < 2
        shl $m7, $m5, 2
        add $m9, $m9, $m7
        .endif
row:
        .if (OP == 0) & (TYPE == 0)
        SUM_F32 f32v2add, f32add, 0
        st32 $a6, [$m9+=4]
        .endif
        .if (OP == 1) & (TYPE == 0)
        SUM_F32 f32v2max, f32max, 1
        st32 $a6, [$m9+=4]
        .endif
        .if (OP == 0) & (TYPE == 1)
        SUM_F16 f16v4hadd, f32add, 0
        st32 $a6, [$m9+=4]
        .endif
        .if (OP == 1) & (TYPE == 1)
        SUM_F16 f16v4hmax, f32max, 1
        st32 $a6, [$m9+=4]
        .endif
        .if OP == 2
        # y = exp(x - max); the sum covers the C valid elements only.
        ld32 $a8, [$m3+0]
        f32v2dup $a8:9, $a8
        zero64 $a6:7
        .if FULL > 0
        setzi $m10, FULL
        rpt $m10, sx_end
        ld64 $a0:1, [$m2+=8]
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2exp $a4:5, $a2:3
        { st64 $a4:5, [$m9+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
sx_end:
        .endif
        f32v2hadd $a6, $a6:7
        .if TAIL
        ld64 $a0:1, [$m2+=8]
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2exp $a4:5, $a2:3
        { st64 $a4:5, [$m9+=8] ; f32add $a6, $a6, $a4 }
        .endif
        st32 $a6, [$m3+=4]
        .endif
        .if OP == 3
        ld32 $a8, [$m3+=4]
        setzi $a9, 0
        sethi $a9, 0x3f80
        f32div $a8, $a9, $a8
        f32v2dup $a8:9, $a8
        ld64 $a0:1, [$m2+=8]
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, sc_end
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; f32v2mul $a4:5, $a0:1, $a8:9 }
sc_end:
        .endif
        f32v2mul $a4:5, $a0:1, $a8:9
        st64 $a4:5, [$m9+=8]
        .endif
        .if OP == 4
        # Pass 1: the mean.
        SUM_F32 f32v2add, f32add, 0
        setzi $a10, INV_C & 0xfffff
        sethi $a10, (INV_C >> 16) & 0xffff
        f32mul $a8, $a6, $a10
        f32v2dup $a8:9, $a8
        # Pass 2: the variance about it.
        setzi $m7, ROWB
        sub $m2, $m2, $m7
        zero64 $a4:5
        .if FULL > 0
        setzi $m10, FULL
        rpt $m10, mv_end
        ld64 $a0:1, [$m2+=8]
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2fma $a4:5, $a2:3, $a2:3
mv_end:
        .endif
        f32v2hadd $a6, $a4:5
        .if TAIL
        ld32 $a0, [$m2+=8]
        f32sub $a2, $a0, $a8
        f32mul $a2, $a2, $a2
        f32add $a6, $a6, $a2
        .endif
        f32mul $a6, $a6, $a10
        setzi $a11, EPS & 0xfffff
        sethi $a11, (EPS >> 16) & 0xffff
        f32add $a6, $a6, $a11
        f32v2dup $a6:7, $a6
        f32v2rsqrt $a6:7, $a6:7
        mova $a9, $a6
        st64 $a8:9, [$m9+=8]
        .endif
        .if OP == 5
        # t = x * rstd - mean * rstd; y = t * gamma + beta.
        ld64 $a8:9, [$m3+=8]
        f32mul $a10, $a8, $a9
        f32v2dup $a10:11, $a10
        f32v2neg $a10:11, $a10:11
        f32v2dup $a8:9, $a9
        ld32 $m11, [$m0+8]
        ld32 $m12, [$m0+12]
        setzi $m10, GR
        rpt $m10, ap_end
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m11+=8]
        { ld64 $a4:5, [$m12+=8] ; mov64 $a6:7, $a10:11 }
        f32v2fma $a6:7, $a0:1, $a8:9
        f32v2fma $a4:5, $a6:7, $a2:3
        st64 $a4:5, [$m9+=8]
ap_end:
        .endif
        .if OP >= 6
        ld32 $m11, [$m0+8]
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m11+=8]
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, rv_end
        { ld2st64 $a0:1, [$m2+=8], $a2:3, [$m11+=8], $a4:5, [$m9+=8] ; VOP $a4:5, $a0:1, $a2:3 }
rv_end:
        .endif
        VOP $a4:5, $a0:1, $a2:3
        st64 $a4:5, [$m9+=8]
        .endif
        add $m6, $m6, -1
        brnz $m6, row
rows_done:
        exit
        .size rows_worker, . - rows_worker
