# Split-K partial sums added up in one pass: out = c + p1 + ... + pP.
#
# c, out and each partial hold G = ceil(N * element bytes / 8) 64-bit
# granules (padding lanes are added and stored too). The P partials lie one
# after another at `partials` (partial k at + (k - 1) * G * 8), as the
# exchange delivers them. c and the partials are read with paired loads, so
# they must be in the interleaved region; out may be c itself.
# State ($m0): +0 c, +4 partials, +8 out.
# Call: `call $m15, partials`; returns with `jmp $m15`.
#
# The sum is rounded after every add in the order written (((c + p1) + p2)
# + ...), as the same adds one partial at a time would be. The granules are
# split over the six workers; each streams its share through P bundles per
# granule: bundle k adds partial k + 1 into the running sum and loads that
# partial's next granule; the last one adds the last partial, stores the
# sum and loads the next granule of c and of the last partial.
#
# TYPE: 0 f32, 1 f16. P: 1 to 6 partials.

        .param TYPE, 1
        .param N, 1024
        .param P, 2

        .if TYPE == 0
        .define VADD f32v2add
        .set EB, 4
        .endif
        .if TYPE == 1
        .define VADD f16v4add
        .set EB, 2
        .endif
        .if (TYPE < 0) | (TYPE > 1)
        .error "TYPE must be 0 (f32) or 1 (f16)"
        .endif
        .if (P < 1) | (P > 6)
        .error "P must be 1 to 6"
        .endif
        .if N <= 0
        .error "N must be positive"
        .endif
        .set G, (N * EB + 7) / 8
        .set GB, G * 8
        .set G_LO, G / 6
        .set REMG, G % 6
        # Worker turns of the busiest worker: setup (17, plus the partials'
        # pointers and the prologue's loads past the first pair; one more
        # when all workers are equally busy, as the last started then ends
        # last), then P per granule; the supervisor's start and sync.
        .set SETUP, 17 + (P > 1) * P + P / 2 + (REMG == 0)
        .cycles "18 + 6 * (SETUP + P * (G_LO + (REMG > 0)))"

        .text
        .globl partials
        .type partials, @function
        .align 8
partials:
        setzi $m1, partials_worker
        .rept 6
        run $m1, $m0
        .endr
        sync 0
        jmp $m15
        .size partials, . - partials

        .type partials_worker, @function
        .align 8
partials_worker:
        setzi $m7, G_LO
        mul $m5, $m1, $m7
        min $m6, $m1, REMG
        add $m5, $m5, $m6
        shl $m5, $m5, 3
        cmplt $m6, $m1, REMG
        add $m6, $m6, $m7
        brz $m6, pa_done
        ld32 $m2, [$m0+0]
        ld32 $m3, [$m0+4]
        ld32 $m4, [$m0+8]
        add $m2, $m2, $m5
        add $m3, $m3, $m5
        add $m4, $m4, $m5
        # Partial k's pointer: $m3 (k = 1), $m7 + k - 2 (k >= 2).
        .if P >= 2
        setzi $m12, GB
        add $m7, $m3, $m12
        .endif
        .if P >= 3
        add $m8, $m7, $m12
        .endif
        .if P >= 4
        add $m9, $m8, $m12
        .endif
        .if P >= 5
        add $m10, $m9, $m12
        .endif
        .if P >= 6
        add $m11, $m10, $m12
        .endif
        add $m6, $m6, -1
        # The first granule: c and partial k in $a(2k):(2k+1).
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8]
        .if P == 2
        ld64 $a4:5, [$m7+=8]
        .endif
        .if P >= 3
        ld2x64 $a4:5, [$m7+=8], $a6:7, [$m8+=8]
        .endif
        .if P == 4
        ld64 $a8:9, [$m9+=8]
        .endif
        .if P >= 5
        ld2x64 $a8:9, [$m9+=8], $a10:11, [$m10+=8]
        .endif
        .if P == 6
        ld64 $a12:13, [$m11+=8]
        .endif
        rpt $m6, pa_loop_end
        .if P == 1
        { ld2st64 $a0:1, [$m2+=8], $a2:3, [$m3+=8], $a14:15, [$m4+=8] ; VADD $a14:15, $a0:1, $a2:3 }
        .endif
        .if P >= 2
        { ld64 $a2:3, [$m3+=8] ; VADD $a0:1, $a0:1, $a2:3 }
        .endif
        .if P == 2
        { ld2st64 $a0:1, [$m2+=8], $a4:5, [$m7+=8], $a14:15, [$m4+=8] ; VADD $a14:15, $a0:1, $a4:5 }
        .endif
        .if P >= 3
        { ld64 $a4:5, [$m7+=8] ; VADD $a0:1, $a0:1, $a4:5 }
        .endif
        .if P == 3
        { ld2st64 $a0:1, [$m2+=8], $a6:7, [$m8+=8], $a14:15, [$m4+=8] ; VADD $a14:15, $a0:1, $a6:7 }
        .endif
        .if P >= 4
        { ld64 $a6:7, [$m8+=8] ; VADD $a0:1, $a0:1, $a6:7 }
        .endif
        .if P == 4
        { ld2st64 $a0:1, [$m2+=8], $a8:9, [$m9+=8], $a14:15, [$m4+=8] ; VADD $a14:15, $a0:1, $a8:9 }
        .endif
        .if P >= 5
        { ld64 $a8:9, [$m9+=8] ; VADD $a0:1, $a0:1, $a8:9 }
        .endif
        .if P == 5
        { ld2st64 $a0:1, [$m2+=8], $a10:11, [$m10+=8], $a14:15, [$m4+=8] ; VADD $a14:15, $a0:1, $a10:11 }
        .endif
        .if P == 6
        { ld64 $a10:11, [$m10+=8] ; VADD $a0:1, $a0:1, $a10:11 }
        { ld2st64 $a0:1, [$m2+=8], $a12:13, [$m11+=8], $a14:15, [$m4+=8] ; VADD $a14:15, $a0:1, $a12:13 }
        .endif
pa_loop_end:
        # The last granule: its adds, no loads.
        .if P == 1
        VADD $a14:15, $a0:1, $a2:3
        .endif
        .if P >= 2
        VADD $a0:1, $a0:1, $a2:3
        .endif
        .if P == 2
        VADD $a14:15, $a0:1, $a4:5
        .endif
        .if P >= 3
        VADD $a0:1, $a0:1, $a4:5
        .endif
        .if P == 3
        VADD $a14:15, $a0:1, $a6:7
        .endif
        .if P >= 4
        VADD $a0:1, $a0:1, $a6:7
        .endif
        .if P == 4
        VADD $a14:15, $a0:1, $a8:9
        .endif
        .if P >= 5
        VADD $a0:1, $a0:1, $a8:9
        .endif
        .if P == 5
        VADD $a14:15, $a0:1, $a10:11
        .endif
        .if P == 6
        VADD $a0:1, $a0:1, $a10:11
        VADD $a14:15, $a0:1, $a12:13
        .endif
        st64 $a14:15, [$m4+=8]
pa_done:
        exit
        .size partials_worker, . - partials_worker
