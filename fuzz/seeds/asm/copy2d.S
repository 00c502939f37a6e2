# Strided copy of BLOCKS x R rows of G 64-bit granules: converts between
# layouts, e.g. the GEMM's blocked C (N/16 blocks of M x 16) to row-major
# M x N (BLOCKS = N/16, R = M, G = 16 * element bytes / 8, SRC_ROW = G * 8,
# SRC_BLOCK = M * G * 8, DST_ROW = N * element bytes, DST_BLOCK = G * 8).
# Strides are in bytes, multiples of 8.
# State ($m0): +0 src, +4 dst. Call: `call $m15, copy2d`; returns with `jmp $m15`.

        .param BLOCKS, 1
        .param R, 1
        .param G, 1
        .param SRC_ROW, 8
        .param DST_ROW, 8
        .param SRC_BLOCK, 0
        .param DST_BLOCK, 0
        .if (BLOCKS <= 0) | (R <= 0) | (G <= 0)
        .error "BLOCKS, R and G must be positive"
        .endif
        .if (SRC_ROW % 8 != 0) | (DST_ROW % 8 != 0) | (SRC_BLOCK % 8 != 0) | (DST_BLOCK % 8 != 0)
        .error "strides must be multiples of 8 bytes"
        .endif
        .set ROWS, BLOCKS * R
        .set R_LO, ROWS / 6
        .set REM, ROWS % 6
        .cycles "20 + 6 * (16 + (R_LO + (REM > 0)) * (10 + G))"

        .text
        .globl copy2d
        .type copy2d, @function
        .align 8
copy2d:
        setzi $m1, copy2d_worker
        .rept 6
        run $m1, $m0
        .endr
        sync 0
        jmp $m15
        .size copy2d, . - copy2d

        .type copy2d_worker, @function
        .align 8
copy2d_worker:
        setzi $m7, R_LO
        mul $m5, $m1, $m7
        min $m6, $m1, REM
        add $m5, $m5, $m6              # first linear row
        cmplt $m6, $m1, REM
        add $m6, $m6, $m7              # rows
        brz $m6, copy_done
        setzi $m7, R
        divu $m8, $m5, $m7             # block
        remu $m9, $m5, $m7             # row in block
copy_row:
        # Addresses of (block, row).
        setzi $m10, SRC_BLOCK
        mul $m2, $m8, $m10
        setzi $m10, SRC_ROW
        mul $m10, $m9, $m10
        add $m2, $m2, $m10
        ld32 $m10, [$m0+0]
        add $m2, $m2, $m10
        setzi $m10, DST_BLOCK
        mul $m4, $m8, $m10
        setzi $m10, DST_ROW
        mul $m10, $m9, $m10
        add $m4, $m4, $m10
        ld32 $m10, [$m0+4]
        add $m4, $m4, $m10
        ld64 $a0:1, [$m2+=8]
        .if G > 1
        setzi $m10, G - 1
        rpt $m10, copy_end
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m4+=8] ; mov64 $a4:5, $a0:1 }
copy_end:
        .endif
        mov64 $a4:5, $a0:1
        st64 $a4:5, [$m4+=8]
        # Next (block, row).
        add $m9, $m9, 1
        cmpeq $m10, $m9, R
        brz $m10, same_block
        setzi $m9, 0
        add $m8, $m8, 1
same_block:
        add $m6, $m6, -1
        brnz $m6, copy_row
copy_done:
        exit
        .size copy2d_worker, . - copy2d_worker
