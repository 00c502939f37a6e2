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
# + ...), as the same adds one partial at a time would be.
#
# TYPE: 0 f32, 1 f16. P: 1 to 64 partials (1 to 6 in the row-split form).
#
# The granule form (C = 0, or GRAN = 1): the granules are split over the
# six workers; each streams its share through P bundles per granule (P + 1
# with a bias): bundle k adds partial k into the running sum and loads
# partial k + 1 of the same granule, the last loads the bias (C > 0), and
# the last of all stores the sum and loads the next granule of c and of
# partial 1. Partial 1 has its own pointer (paired with c's); partials 2..P
# go in groups of up to PG, one pointer per group stepping GB bytes from one
# partial to the next and, from the group's last, back to its first's next
# granule (so P is bounded by the seven group pointers and the 15-bit
# offsets: PG * GB <= 16392 + GB).
#
# With a row-vector addend (C > 0, a bias of C columns): the N
# elements are rows of C (C * element bytes a multiple of 8), and
# out[r][c] = (c + p1 + ... + pP)[r][c] + bias[c], the bias added after the
# last partial and rounded once more, as a separate add of the sum would.
# GRAN 1 splits granules, not rows, over the workers (rows of any length,
# also one row): each worker's granules run in segments up to the row's
# end, the bias pointer going back to the row's start between them. GRAN 0
# (the row-split form) splits rows, each of up to 16 granules, unrolled.
# WIDE (f16 only, P up to 5 in the row-split form) widens that result exactly to f32: 1 stores it at +16
# besides the f16 result at +8, 2 stores only the f32 result, at +8.
# ACT (f16, not with WIDE) applies an activation to that result: 17 GELU,
# 29 GELU in its tanh form (elementwise.S's OP codes; the same instruction
# on the same f16 value, so the same result); TO8 (f16, not with WIDE, P up
# to 5 in the row-split form) stores it also as FP8 (3 f8E4M3FN, 4 f8E5M2) at scale SCL,
# saturating, as cast.S does, at +16 (N bytes), beside the f16 result at +8.
# State with C > 0 or WIDE > 0: +0 c, +4 partials, +8 out, +12 the bias
# (read with ld64: anywhere), +16 the f32 out (WIDE 1) or the FP8 out (TO8;
# else 0). In the row-split form the rows are split over the six workers;
# each streams its rows through P + 1 bundles per granule (+ 2 with WIDE):
# the first adds c and p1 and loads the granule's bias, the next add the
# partials and load their next granules, the last adds the bias, stores the
# sum and loads the next c and last partial; with WIDE two more convert and
# store its two f32 halves.

        .param TYPE, 1
        .param N, 1024
        .param P, 2
        .param C, 0
        .param WIDE, 0
        .param ACT, 0
        .param TO8, 0
        .param SCL, 0
        .param GRAN, 0

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
        .if (P < 1) | (P > 64)
        .error "P must be 1 to 64"
        .endif
        .if (GRAN < 0) | (GRAN > 1)
        .error "GRAN must be 0 or 1"
        .endif
        # The row-split form: a bias, rows split over the workers.
        .set ROWF, (C > 0) & (GRAN == 0)
        .if ROWF & (P > 6)
        .error "the row-split form takes P up to 6"
        .endif
        .if N <= 0
        .error "N must be positive"
        .endif
        .if (C < 0) | (WIDE < 0) | (WIDE > 2)
        .error "C must be 0 or more and WIDE 0 to 2"
        .endif
        .if (WIDE > 0) & (TYPE != 1)
        .error "WIDE widens an f16 sum"
        .endif
        .if (WIDE > 0) & (C == 0)
        .error "WIDE needs the row-vector form (C > 0)"
        .endif
        .if ((ACT != 0) & (ACT != 17) & (ACT != 29)) | ((TO8 != 0) & (TO8 != 3) & (TO8 != 4))
        .error "ACT must be 0, 17 (gelu) or 29 (gelu_tanh) and TO8 0, 3 (f8E4M3FN) or 4 (f8E5M2)"
        .endif
        .set POST, ACT > 0
        .if ((ACT > 0) | (TO8 > 0)) & ((TYPE != 1) | (C == 0) | (WIDE > 0))
        .error "ACT and TO8 take the f16 row-vector form without WIDE"
        .endif
        .if ROWF & (TO8 > 0) & (P > 5)
        .error "the FP8 row-vector form takes P up to 5"
        .endif
        .if ACT == 17
        .define PB_ACT f16v4gelu
        .endif
        .if ACT == 29
        .define PB_ACT f16v4gelutanh
        .endif
        .if TO8 == 3
        .define PB_CVT8 cvt.f16.f8e4
        .endif
        .if TO8 == 4
        .define PB_CVT8 cvt.f16.f8e5
        .endif
        .set BIAS, C > 0
        .if BIAS
        .if (C * EB) % 8 != 0
        .error "C * element bytes must be a multiple of 8"
        .endif
        .if N % C != 0
        .error "N must be whole rows of C"
        .endif
        .if ROWF & (WIDE > 0) & (P > 5)
        .error "the widening row-vector form takes P up to 5"
        .endif
        .endif
        .set GC, (C * EB + 7 * (1 - BIAS)) / 8 + (1 - BIAS)
        .set RB, GC * 8
        .set R, N / (C + (1 - BIAS))
        .if ROWF & (GC > 16)
        .error "the row-split form takes rows of up to 16 granules"
        .endif
        .set R_LO, R / 6
        .set REMR, R % 6
        .set G, (N * EB + 7) / 8
        .set GB, G * 8
        .set G_LO, G / 6
        .set REMG, G % 6
        # A worker's share is counted in 16-bit immediates.
        .if (ROWF == 0) & (G_LO > 32767)
        .error "a worker's share must stay under 32768 granules"
        .endif
        .if ROWF & (R_LO > 32767)
        .error "a worker's share must stay under 32768 rows"
        .endif
        # The granule form's partial groups: up to PG partials a pointer
        # (its steps are 15-bit offsets), NGRP pointers.
        .set PG, (GB <= 16383) * (1 + 16392 / GB) + (GB > 16383)
        .set NGRP, (P - 1 + PG - 1) / PG
        .if (ROWF == 0) & (NGRP > 7)
        .error "P partials of GB bytes need more than seven group pointers"
        .endif
        .if ROWF == 0
        # The granule form: turns per granule (P adds, the bias's, the
        # activation's, the FP8 and f32 stores) and each worker's setup;
        # with a bias its segments (5 turns) and row wraps (3 more). The
        # busiest worker's end, worker w starting w cycles after worker 0,
        # fitted to the simulator.
        .set GTPG, P + BIAS + 2 * (WIDE > 0) + 2 * (ACT > 0) + (TO8 > 0)
        .set GSETUP, 16 + (NGRP > 0) * (NGRP + 1) + BIAS * (9 + (G_LO > 0)) + (WIDE == 1) * 3 + (WIDE == 2) + 7 * (TO8 > 0)
        .set GW, 0
        .set GEND, 0
        .rept 6
        .set GN, G_LO + (GW < REMG)
        .set GS, GW * G_LO + (GW < REMG) * GW + (GW >= REMG) * REMG
        .set GJ, GS % (GC * BIAS + (1 - BIAS))
        .set GWRAPS, BIAS * (GN > 0) * ((GJ + GN - 1) / (GC * BIAS + (1 - BIAS)))
        .set GSEGS, BIAS * (GN > 0) * (GWRAPS + (((GJ + GN - 1) % (GC * BIAS + (1 - BIAS))) != 0) + (GN == 1) * (GJ == 0))
        .set GT, (GN > 0) * (6 * (GSETUP + GN * GTPG + 5 * GSEGS + 3 * GWRAPS) + GW)
        .set GEND, GEND * (GEND >= GT) + GT * (GT > GEND)
        .set GW, GW + 1
        .endr
        .cycles "12 + GEND"
        .else
        # The row-split form: the busiest worker's setup (its
        # instructions less the turns the later-started workers' start
        # hides, one more when all are equally busy and one more when
        # every worker has a row, fitted to the simulator), then P + 1
        # (+ 2 widening) turns per granule of its rows.
        .set TPG, P + 1 + 2 * (WIDE > 0) + 2 * (ACT > 0) + (TO8 > 0)
        .set BSETUP, 15 + (R_LO > 0) + (WIDE == 1) * 3 + (WIDE == 2) + 7 * (TO8 > 0) + (P > 1) * P + (P == 2) + (P >= 3) + (P == 4) + (P >= 5) + (P == 6) + (REMR == 0)
        .cycles "18 + 6 * (BSETUP + TPG * GC * (R_LO + (REMR > 0)))"
        .endif

# The granule form's bundle adding partial k (K) into the sum (`src` the
# sum so far: c for k = 1) and loading partial k + 1 of the same granule
# through its group's pointer (group g: $m7 to $m11, $m14, $m0), stepping
# GB on to the next partial or, from the group's last, back to the group's
# first's next granule.
        .macro GF_LOAD src, ptr
        { ld64 $a2:3, [\ptr+=GIMM] ; VADD $a14:15, \src, $a2:3 }
        .endm
        .macro GF_NEXT src
        .set GI, (K - 1) / PG
        .set GSZ, (P - 1 - GI * PG) * ((P - 1 - GI * PG) < PG) + PG * ((P - 1 - GI * PG) >= PG)
        .set GIMM, GB + (((K - 1) % PG) == (GSZ - 1)) * (8 - GSZ * GB)
        .if GI == 0
        GF_LOAD \src, $m7
        .endif
        .if GI == 1
        GF_LOAD \src, $m8
        .endif
        .if GI == 2
        GF_LOAD \src, $m9
        .endif
        .if GI == 3
        GF_LOAD \src, $m10
        .endif
        .if GI == 4
        GF_LOAD \src, $m11
        .endif
        .if GI == 5
        GF_LOAD \src, $m14
        .endif
        .if GI == 6
        GF_LOAD \src, $m0
        .endif
        .endm

# The granule's last bundle: adds `add` to `src` and, in its memory slot,
# loads the next c and partial 1 and stores the sum (not when a later
# bundle stores it); `last`: the worker's last granule, no loads.
        .macro GF_STORE last, src, add
        .if \last
        .if (WIDE == 2) | POST
        VADD $a14:15, \src, \add
        .else
        { st64 $a14:15, [$m4+=8] ; VADD $a14:15, \src, \add }
        .endif
        .else
        .if (WIDE == 2) | POST
        { ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8] ; VADD $a14:15, \src, \add }
        .else
        { ld2st64 $a0:1, [$m2+=8], $a2:3, [$m3+=8], $a14:15, [$m4+=8] ; VADD $a14:15, \src, \add }
        .endif
        .endif
        .endm

# One granule of the granule form; `last`: the worker's last. The bias
# (into $a4:5) loads with the last partial's add.
        .macro GF_GRAN last
        .set K, 1
        .rept P - 1
        .if K == 1
        GF_NEXT $a0:1
        .else
        GF_NEXT $a14:15
        .endif
        .set K, K + 1
        .endr
        .if BIAS & (P == 1)
        { ld64 $a4:5, [$m12+=8] ; VADD $a14:15, $a0:1, $a2:3 }
        .endif
        .if BIAS & (P > 1)
        { ld64 $a4:5, [$m12+=8] ; VADD $a14:15, $a14:15, $a2:3 }
        .endif
        .if BIAS
        GF_STORE \last, $a14:15, $a4:5
        .endif
        .if (BIAS == 0) & (P == 1)
        GF_STORE \last, $a0:1, $a2:3
        .endif
        .if (BIAS == 0) & (P > 1)
        GF_STORE \last, $a14:15, $a2:3
        .endif
        PB_POST
        .endm

# Partial k's pointer: $m3 (k = 1), $m(k + 5) (k >= 2), each partial one
# block (GB bytes, set in `step`) after the one before.
        .macro PARTIAL_PTRS step
        .if P >= 2
        setzi \step, GB
        add $m7, $m3, \step
        .endif
        .if P >= 3
        add $m8, $m7, \step
        .endif
        .if P >= 4
        add $m9, $m8, \step
        .endif
        .if P >= 5
        add $m10, $m9, \step
        .endif
        .if P >= 6
        add $m11, $m10, \step
        .endif
        .endm

# The first granule's loads: c and partial k in $a(2k):(2k+1).
        .macro FIRST_LOADS
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
        .endm

        # The row-vector form. Registers: c and then the granule's bias
        # $a0:1 (the first add reads c before the bias lands, the last
        # reads the bias before the next c lands), partial k $a(2k):(2k+1),
        # the f32 halves $a12:13 (WIDE, P up to 5), the sum $a14:15;
        # pointers: c $m2, partial 1 $m3 (k >= 2: $m(5 + k)), out $m4, the
        # bias $m12 (back to the row's start after its last granule), the
        # f32 out $m13 (WIDE 1).
        .if WIDE == 2
        .define PB_WOUT $m4
        .else
        .define PB_WOUT $m13
        .endif
        .set PB_BACK, 8 - RB
        # After the bias: the activation, stored in its bundle; then the
        # FP8 conversion, stored in its own; or the two f32 halves.
        .macro PB_POST
        .if ACT > 0
        { st64 $a14:15, [$m4+=8] ; PB_ACT $a14:15, $a14:15 }
        .endif
        .if TO8 > 0
        { st32 $a12, [$m13+=4] ; PB_CVT8 $a12, $a14:15 }
        .endif
        .if WIDE > 0
        { st64 $a12:13, [PB_WOUT+=8] ; cvt.f16.f32 $a12:13, $a14 }
        { st64 $a12:13, [PB_WOUT+=8] ; cvt.f16.f32 $a12:13, $a15 }
        .endif
        .endm
        .if P == 1
        .define PB_LASTP $a2:3
        .define PB_LASTPTR $m3
        .endif
        .if P == 2
        .define PB_LASTP $a4:5
        .define PB_LASTPTR $m7
        .endif
        .if P == 3
        .define PB_LASTP $a6:7
        .define PB_LASTPTR $m8
        .endif
        .if P == 4
        .define PB_LASTP $a8:9
        .define PB_LASTPTR $m9
        .endif
        .if P == 5
        .define PB_LASTP $a10:11
        .define PB_LASTPTR $m10
        .endif
        .if P == 6
        .define PB_LASTP $a12:13
        .define PB_LASTPTR $m11
        .endif
        # Adds partial k (its register `add`), loading partial k - 1's next
        # granule (register `reg`, pointer `ptr`) unless `last`.
        .macro PB_MID last, reg, ptr, add
        .if \last
        VADD $a14:15, $a14:15, \add
        .else
        { ld64 \reg, [\ptr+=8] ; VADD $a14:15, $a14:15, \add }
        .endif
        .endm
        # One granule; `last`: the worker's last (no loads of a next one),
        # `wrap`: the row's last (the bias pointer goes back).
        .macro PB_GRAN last, wrap
        .if GC == 1
        { ld64 $a0:1, [$m12] ; VADD $a14:15, $a0:1, $a2:3 }
        .else
        .if \wrap
        { ld64 $a0:1, [$m12+=PB_BACK] ; VADD $a14:15, $a0:1, $a2:3 }
        .else
        { ld64 $a0:1, [$m12+=8] ; VADD $a14:15, $a0:1, $a2:3 }
        .endif
        .endif
        .if P >= 2
        PB_MID \last, $a2:3, $m3, $a4:5
        .endif
        .if P >= 3
        PB_MID \last, $a4:5, $m7, $a6:7
        .endif
        .if P >= 4
        PB_MID \last, $a6:7, $m8, $a8:9
        .endif
        .if P >= 5
        PB_MID \last, $a8:9, $m9, $a10:11
        .endif
        .if P >= 6
        PB_MID \last, $a10:11, $m10, $a12:13
        .endif
        # The bias added; the next c and last partial loaded, the sum stored.
        .if \last
        .if (WIDE == 2) | POST
        VADD $a14:15, $a14:15, $a0:1
        .else
        { st64 $a14:15, [$m4+=8] ; VADD $a14:15, $a14:15, $a0:1 }
        .endif
        .else
        .if (WIDE == 2) | POST
        { ld2x64 $a0:1, [$m2+=8], PB_LASTP, [PB_LASTPTR+=8] ; VADD $a14:15, $a14:15, $a0:1 }
        .else
        { ld2st64 $a0:1, [$m2+=8], PB_LASTP, [PB_LASTPTR+=8], $a14:15, [$m4+=8] ; VADD $a14:15, $a14:15, $a0:1 }
        .endif
        .endif
        PB_POST
        .endm

        # One row: its granules, the last with the bias pointer going back.
        .macro PB_ROW last
        .rept GC - 1
        PB_GRAN 0, 0
        .endr
        PB_GRAN \last, 1
        .endm

        # The record's pointers advanced to the worker's first granule (its
        # byte offset in $m5): c $m2, partial 1 $m3, out $m4, the bias $m12
        # (at the row's start), the second out $m13; the FP8 scale set.
        .macro RECORD_PTRS
        ld32 $m2, [$m0+0]
        ld32 $m3, [$m0+4]
        ld32 $m4, [$m0+8]
        .if BIAS
        ld32 $m12, [$m0+12]
        .endif
        add $m2, $m2, $m5
        add $m3, $m3, $m5
        .if WIDE == 2
        shl $m14, $m5, 1
        add $m4, $m4, $m14
        .endif
        .if WIDE != 2
        add $m4, $m4, $m5
        .endif
        .if TO8 > 0
        # The FP8 out, one byte an element, at the scale given.
        ld32 $m13, [$m0+16]
        setzi $m14, 1
        shr $m14, $m5, $m14
        add $m13, $m13, $m14
        setzi $m14, 0
        add $m14, $m14, SCL
        setscl $m14
        .endif
        .if WIDE == 1
        ld32 $m13, [$m0+16]
        shl $m14, $m5, 1
        add $m13, $m13, $m14
        .endif
        .endm

        # Its rows less one ($m6; -1: none) and its first row's byte offset
        # ($m5), with the counts as immediates.
        .macro PB_WORKER
        mul $m5, $m1, R_LO
        min $m6, $m1, REMR
        add $m5, $m5, $m6
        cmplt $m6, $m1, REMR
        add $m6, $m6, R_LO - 1
        brneg $m6, pb_done
        mul $m5, $m5, RB
        RECORD_PTRS
        PARTIAL_PTRS $m14
        FIRST_LOADS
        rpt $m6, pb_loop_end
        PB_ROW 0
pb_loop_end:
        PB_ROW 1
pb_done:
        exit
        .endm

        # The granule form's worker: its granules less one ($m6; -1:
        # none) from its first (byte offset $m5); with a bias, the granules
        # to the row's end ($m5) and the bias row's start ($m1).
        .macro GF_WORKER
        mul $m5, $m1, G_LO
        min $m6, $m1, REMG
        add $m5, $m5, $m6
        cmplt $m6, $m1, REMG
        add $m6, $m6, G_LO - 1
        brneg $m6, gf_done
        .if BIAS
        setzi $m15, GC
        remu $m15, $m5, $m15
        .endif
        shl $m5, $m5, 3
        RECORD_PTRS
        .if BIAS
        mov $m1, $m12
        shl $m14, $m15, 3
        add $m12, $m12, $m14
        setzi $m5, GC
        sub $m5, $m5, $m15
        .endif
        # The group pointers: group g's first partial is 2 + g * PG.
        .if P >= 2
        setzi $m15, GB
        add $m7, $m3, $m15
        setzi $m15, PG * GB
        .endif
        .if NGRP >= 2
        add $m8, $m7, $m15
        .endif
        .if NGRP >= 3
        add $m9, $m8, $m15
        .endif
        .if NGRP >= 4
        add $m10, $m9, $m15
        .endif
        .if NGRP >= 5
        add $m11, $m10, $m15
        .endif
        .if NGRP >= 6
        add $m14, $m11, $m15
        .endif
        .if NGRP >= 7
        add $m0, $m14, $m15
        .endif
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m3+=8]
        .if BIAS
        # Segments up to the row's end, the bias going back between them.
gf_seg:
        min $m15, $m6, $m5
        sub $m6, $m6, $m15
        sub $m5, $m5, $m15
        rpt $m15, gf_loop_end
        GF_GRAN 0
gf_loop_end:
        brnz $m5, gf_last
        mov $m12, $m1
        setzi $m5, GC
        brnz $m6, gf_seg
gf_last:
        .else
        rpt $m6, gf_loop_end
        GF_GRAN 0
gf_loop_end:
        .endif
        GF_GRAN 1
gf_done:
        exit
        .endm

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
        .if ROWF
        PB_WORKER
        .else
        GF_WORKER
        .endif
        .size partials_worker, . - partials_worker
