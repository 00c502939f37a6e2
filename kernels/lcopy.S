# Local copy of a stepped group of byte runs within the tile (the exchange
# stage's `exchange.copy` runs): REPEAT rows of COUNT transfers of W words of
# A bytes; transfer (r, c) copies [src + r * RSRC + c * SRC, + W * A) to
# [dst + r * RDST + c * DST, ...), src and dst the first transfer's
# addresses. A (8, 4, 2, 1) divides every address,
# step and length; steps are signed. Worker k copies its part: from
# transfer (ROW_k, FIRST_k) on (linear index r * COUNT + c), TN_k transfers,
# of each the WN_k words from byte OFF_k (the caller splits either the
# transfers or, when there are few, the words of each: `LocalCopy::parts`).
# State ($m0): +0 COUNT, +4 SRC, +8 DST, +12 RSRC, +16 RDST, then at
# +20 + 16 k: the source and destination of worker k's first row (its
# words' byte offset OFF_k included), FIRST_k | TN_k << 16, WN_k (TN_k = 0:
# nothing). Call: `call $m15, lcopy`; returns with `jmp $m15`.
#
# T = 1 (A = 2) transposes 2-byte elements by 2 x 2 blocks: see below.
# The code depends on A and T alone. TN, WN, SEGS and WALK enter only the
# `.cycles` formula: the busiest worker's transfers, words per transfer,
# rows touched, and how one-word transfers walk (1: DST = A, 2: SRC = A, 0:
# neither); a caller that estimates passes them.

        .param A, 8
        .param TN, 1
        .param WN, 1
        .param SEGS, 1
        .param WALK, 0
        .param T, 0
        .if (A != 1) & (A != 2) & (A != 4) & (A != 8)
        .error "A must be 1, 2, 4 or 8"
        .endif
        .if (T != 0) & ((T != 1) | (A != 2))
        .error "T (2 x 2 transposition) is 0, or 1 with A = 2"
        .endif
        .if (TN < 0) | (WN < 1) | (SEGS < 0)
        .error "TN, SEGS must be >= 0 and WN >= 1"
        .endif
        # The load and store of one A-byte word (A < 8: through $m8).
        .if A == 4
        .define LDW ld32
        .define STW st32
        .else
        .if A == 2
        .define LDW ld16
        .define STW st16
        .else
        .define LDW ld8
        .define STW st8
        .endif
        .endif
        .set LOG2A, (A == 2) + 2 * (A == 4) + 3 * (A == 8)
        # Worker issues: 16 to set up and exit; per row 9 (multi-word
        # transfers), 15 or 13 (one word; WALK 1: 13), and 6 more
        # between rows; per transfer 4 (one word, WALK 0), 3 (WALK 1, 2),
        # else 6 + W (A = 8) or 5 + 2 * W.
        .set ONE, WN == 1
        .set PER, ONE * (4 - (WALK > 0)) + (1 - ONE) * ((A == 8) * (6 + WN) + (A != 8) * (5 + 2 * WN))
        .set SEG, (1 - ONE) * 9 + ONE * (15 - 2 * (WALK == 1))
        # T = 1: each transfer is a 2 x 2 block, 6 issues; 12 to set up and
        # exit, 11 per row (a pair of rows), 6 between rows.
        .if T == 1
        .set PER, 6
        .set SEG, 11
        .set SETUP, 12
        .else
        .set SETUP, 16
        .endif
        .cycles "6 + 6 * (TN > 0) * (SETUP + SEGS * SEG + (SEGS - 1) * 6 + TN * PER) + 6 * (TN == 0) * 9"

        .text
        .globl lcopy
        .type lcopy, @function
        .align 8
lcopy:
        setzi $m1, lcopy_worker
        .rept 6
        run $m1, $m0
        .endr
        sync 0
        jmp $m15
        .size lcopy, . - lcopy

        .type lcopy_worker, @function
        .align 8
lcopy_worker:
        shl $m2, $m1, 4
        add $m2, $m2, $m0              # this worker's part, at +20
        ld32 $m9, [$m2+20]             # source row start
        ld32 $m10, [$m2+24]            # destination row start
        ld16 $m8, [$m2+28]             # first transfer in the row
        ld32 $m4, [$m2+32]             # words per transfer
        ld16 $m2, [$m2+30]             # transfers
        brz $m2, lcopy_done
        ld32 $m6, [$m0+0]              # COUNT
        ld32 $m12, [$m0+4]             # SRC
        ld32 $m13, [$m0+8]             # DST
        .if T == 1
        # Transfer (r, c) is the block of rows 2r, 2r + 1 and columns 2c,
        # 2c + 1: SRC steps one column, DST is the odd row's offset.
lcopy_row:
        mul $m3, $m8, $m12
        shl $m3, $m3, 1
        add $m3, $m3, $m9              # source of block (r, c)
        shl $m11, $m8, 2
        add $m11, $m11, $m10           # its even row's destination
        add $m5, $m11, $m13            # its odd row's
        sub $m7, $m6, $m8
        min $m7, $m7, $m2              # blocks in this row pair
        sub $m2, $m2, $m7
        rpt $m7, lcopy_pair_end
        ld32 $a0, [$m3+0]
        add $m3, $m3, $m12
        { ld32 $a1, [$m3+0] ; hi16 $a2, $a0 }
        { add $m3, $m3, $m12 ; pack16 $a4, $a0, $a1 }
        { st32 $a4, [$m11+=4] ; hi16 $a3, $a1 }
        { st32 $a5, [$m5+=4] ; pack16 $a5, $a2, $a3 }
lcopy_pair_end:
        .else
        # A multi-word transfer leaves its pointers wn * A on: step by the rest.
        shl $m5, $m4, LOG2A
        sub $m14, $m12, $m5            # SRC - wn * A
        sub $m5, $m13, $m5             # DST - wn * A
        add $m1, $m4, -1               # wn - 1
lcopy_row:
        mul $m3, $m8, $m12
        add $m3, $m3, $m9              # source of transfer (r, c)
        mul $m11, $m8, $m13
        add $m11, $m11, $m10           # its destination
        sub $m7, $m6, $m8
        min $m7, $m7, $m2              # transfers in this row
        sub $m2, $m2, $m7
        brnz $m1, lcopy_runs
        # One word per transfer: the side that steps by one word post-increments.
        cmpeq $m8, $m13, A
        brnz $m8, lcopy_dst_walk
        cmpeq $m8, $m12, A
        brnz $m8, lcopy_src_walk
        rpt $m7, lcopy_elem_end
        .if A == 8
        ld64 $a0:1, [$m3+0]
        .else
        LDW $m8, [$m3+0]
        .endif
        add $m3, $m3, $m12
        .if A == 8
        st64 $a0:1, [$m11+0]
        .else
        STW $m8, [$m11+0]
        .endif
        add $m11, $m11, $m13
lcopy_elem_end:
        br lcopy_next
lcopy_dst_walk:
        rpt $m7, lcopy_dst_end
        .if A == 8
        ld64 $a0:1, [$m3+0]
        .else
        LDW $m8, [$m3+0]
        .endif
        add $m3, $m3, $m12
        .if A == 8
        st64 $a0:1, [$m11+=8]
        .else
        STW $m8, [$m11+=A]
        .endif
lcopy_dst_end:
        br lcopy_next
lcopy_src_walk:
        rpt $m7, lcopy_src_end
        .if A == 8
        ld64 $a0:1, [$m3+=8]
        .else
        LDW $m8, [$m3+=A]
        .endif
        .if A == 8
        st64 $a0:1, [$m11+0]
        .else
        STW $m8, [$m11+0]
        .endif
        add $m11, $m11, $m13
lcopy_src_end:
        br lcopy_next
lcopy_runs:
        .if A == 8
        ld64 $a0:1, [$m3+=8]
        rpt $m1, lcopy_words_end
        { ldst64 $a0:1, [$m3+=8], $a4:5, [$m11+=8] ; mov64 $a4:5, $a0:1 }
lcopy_words_end:
        { st64 $a4:5, [$m11+=8] ; mov64 $a4:5, $a0:1 }
        .else
        rpt $m4, lcopy_words_end
        LDW $m8, [$m3+=A]
        STW $m8, [$m11+=A]
lcopy_words_end:
        .endif
        add $m3, $m3, $m14
        add $m11, $m11, $m5
        add $m7, $m7, -1
        brnz $m7, lcopy_runs
        .endif
lcopy_next:
        brz $m2, lcopy_done
        ld32 $m7, [$m0+12]
        add $m9, $m9, $m7
        ld32 $m7, [$m0+16]
        add $m10, $m10, $m7
        setzi $m8, 0
        br lcopy_row
lcopy_done:
        exit
        .size lcopy_worker, . - lcopy_worker
