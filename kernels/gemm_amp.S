# GEMM on the AMP (accumulating matrix product unit).
#
#   C[m][n] = sum_k A[m][k] * B[k][n]          (M x N row-major partials)
#
# K is processed in NKC = K / KC chunks of KC (KC x 16 weights fill at most
# one 4 KiB AMP bank), N in NB = N / 16 column blocks of 16; the blocks run
# column block by column block, the K-chunks of each one after another.
# Layouts (all in the interleaved region):
#   A: NKC chunks of M x KC (row-major within a chunk; for NKC = 1 simply
#      M x K row-major), input type; KC a multiple of the K-block; 8 bytes of
#      readable slack after A.
#   B: N/16 x NKC blocks of KC x 16, in that order, each block contiguous
#      (so B is N/16 column blocks of K x 16, one after another);
#      8*M bytes of readable slack after B. With BT (K in one chunk), each
#      block is held column by column instead, 16 columns of K (`ampswapt`):
#      B is then B^T, N x K row-major.
#   C: M x N row-major partials (f32 or f16); 8 bytes of readable slack.
#   T (only with K-chunks and more than one column block, TMP = 1): M x 16
#      partials, 8 bytes of readable slack: the K-chunks of a column block
#      but the last accumulate there, the last one adds T into C's columns.
# State ($m0 at entry, 4-aligned): +0 A, +4 B, +8 C, +12 f8 scale
#   (s_A + s_B), [+16 T with TMP], then six RSZ-byte worker records the
#   kernel fills in itself (GEMM_STATE_BYTES in ipu_isa::kernels).
# Call: `call $m15, <entry>`; returns with `jmp $m15`. Uses $m0-$m14.
#
# How it reaches the AMP's peak: the M rows are split over the six workers;
# each worker streams its rows through the AMP (one AMP instruction per
# bundle, its partials drained during the next row and stored by the same
# bundle), and while it does, the memory slots it does not need for inputs
# and outputs load the *next* weight block into the AMP's shadow bank
# (`ldxw`/`wld64`), so the supervisor only swaps banks between blocks: it
# starts the workers back to back and writes their next block's records
# while they run (it issues only once one exits; a worker with a row fewer
# exits a row early and so hides that work). With
# more than one column block a row's 16 outputs are followed by a jump of
# the output pointer to the next row of C (one issue per row).

        .param TYPE, 1          # 0: f16 in, f32 partials; 1: f16 in, f16 partials;
                                # 2: f8E4M3FN in, f16 out; 3: f8E5M2 in, f16 out;
                                # 4: f32 in, f32 partials
        .param M, 64
        .param K, 128
        .param N, 128
        .param KC, 0                     # K-chunk; 0: all of K in one chunk
        .param BT, 0                     # 1: B given transposed (N x K row-major)
        .param PRE, 0                    # 1: the prologue (the worker records and the
                                         # first weight block) is the entry gemm_amp_pre,
                                         # run with the same state before gemm_amp;
                                         # 2: the prologue is the worker records only
        .param NXT, 0                    # 1 (one block, OVERLAP): the workers load the next
                                         # GEMM's first block (the state's word after the
                                         # scale) into the shadow bank instead of this one's
        .param HAVE, 0                   # 1 (one block): the first block is in the shadow
                                         # bank already (a previous call's NXT loaded it)

# TYPE's AMP mode: its instruction (AMPOP), K per issue (KPI), partials
# per issue (PPI), input element bytes (EB) and partial bytes (PB).
        .macro AMP_MODE type, op, kpi, ppi, eb, pb
        .if TYPE == \type
        .define AMPOP \op
        .set KPI, \kpi
        .set PPI, \ppi
        .set EB, \eb
        .set PB, \pb
        .endif
        .endm
        AMP_MODE 0, amp.f16f32, 2, 2, 2, 4
        AMP_MODE 1, amp.f16f16, 4, 4, 2, 2
        AMP_MODE 2, amp.f8e4f16, 8, 4, 1, 2
        AMP_MODE 3, amp.f8e5f16, 8, 4, 1, 2
        AMP_MODE 4, amp.f32f32, 1, 2, 4, 4
        .if (TYPE < 0) | (TYPE > 4)
        .error "TYPE must be 0, 1, 2, 3 or 4"
        .endif

        .set KB, KPI * 16 / PPI          # the K-block
        .if KC == 0
        .set KC, K
        .endif
        .if (KC <= 0) | (K % KC != 0)
        .error "KC must divide K"
        .endif
        .set NKC, K / KC
        .set KPH, KC / KPI               # AMP instructions per row and chunk
        .set DRAIN, 16 / PPI             # instructions that drain a row
        .set BLOCK, KC * 16 * EB         # bytes of one weight block
        .set NB, N / 16
        .set WORDS, BLOCK / 8
        .set WPR, (WORDS + M - 1) / M    # next-block weight words loaded per row
        .set XEVERY, 8 / (KPI * EB)      # AMP instructions per 64-bit input load
        .set OVERLAP, WPR <= KPH - DRAIN - (NKC > 1)
        .set R_LO, M / 6
        .set REM, M % 6
        .set FIRSTW, BLOCK * (NB * NKC > 1)
        .set TMP, (NKC > 1) & (NB > 1)   # K-chunks accumulate in T
        .set SKIP, (N - 16) * PB         # from a row's 16 outputs to the next row of C
        .set WREC, 16 + 4 * TMP + 4 * NXT  # the worker records
        .set RSZ, 40                     # bytes of one worker record
        .set HAVE_C, 4                   # what HAVE takes off besides the block's loads

        .if (KC % KB != 0) | (K <= 0)
        .error "K must be a positive multiple of the K-block"
        .endif
        .if (N % 16 != 0) | (N <= 0)
        .error "N must be a positive multiple of 16"
        .endif
        .if BLOCK > 4096
        .error "KC x 16 weights must fit one 4 KiB AMP bank (choose a K-chunk KC)"
        .endif
        .if M <= 0
        .error "M must be positive"
        .endif
        .if N * PB > 32767
        .error "N x the partials' bytes must stay below 32 KiB (a row of C)"
        .endif
        .if (BT < 0) | (BT > 1) | (BT & (NKC > 1))
        .error "BT is 0 or 1, and takes K in one chunk"
        .endif
        .if (PRE < 0) | (PRE > 2)
        .error "PRE must be 0, 1 or 2"
        .endif
        .if (NXT < 0) | (NXT > 1) | (HAVE < 0) | (HAVE > 1)
        .error "NXT and HAVE are 0 or 1"
        .endif
        .if (NXT | HAVE) & (NB * NKC > 1)
        .error "NXT and HAVE are for a GEMM of one weight block"
        .endif
        .if NXT & (OVERLAP == 0)
        .error "NXT needs the workers to load the next block (OVERLAP)"
        .endif
        .if HAVE & (PRE == 1)
        .error "HAVE has no first block to split off (PRE = 1)"
        .endif

        # Cycles: the records and the first block by the supervisor; per
        # block, six barrel slots per instruction of the busiest worker
        # (the first started, or when REM == 0 the last started too, which
        # ends its block later) plus the run/sync overhead; the blocks after
        # the first are loaded by the supervisor unless the workers overlap
        # them. Fitted to the simulator (runtime/tests/kernels_gemm.rs checks
        # it within 5%; with fewer rows than workers, the last started ends
        # last). With PRE the prologue gemm_amp_pre is what PRE takes off
        # the formula: with PRE = 1 the first two (150 + BLOCK / 16: the
        # split moves some of the supervisor's set-up out of the 100), and
        # gemm_amp only reloads the next block's source; with PRE = 2 the
        # records (about 145), and gemm_amp loads the first block.
        # HID: the supervisor's cycles between blocks that a worker with a
        # row fewer hides (it exits a row early and frees its barrel slot):
        # the records' advance (HID_A) or what that row leaves free.
        .set HID_A, 36 + 30 * (NKC > 1) + 8 * TMP
        .set HID_F, (6 - REM) * KPH * 3 / 4
        .set HID, (R_LO > 0) * (REM > 0) * (HID_F + (HID_A < HID_F) * (HID_A - HID_F))
        .cycles "8 + HID - HAVE * (BLOCK / 16 + HAVE_C) + (PRE == 0) * (119 + 13 * TMP + BLOCK / 16) - 50 * (PRE == 1) + (PRE == 2) * (BLOCK / 16 - 44) + NB * NKC * (4 * (R_LO == 0) * (REM - 1) + 6 * (KPH * (R_LO + (REM > 0)) + DRAIN) + 135 - 6 * (1 + 2 * ((TYPE != 2) & (TYPE != 3)) + (NB > 1) * (TMP == 0)) + 7 * (REM == 0) - 4 * (R_LO == 0) - HID * 6 / 5 + 46 * (NKC > 1) + (NB > 1) * 6 * (R_LO + (REM > 0))) + TMP * (78 * NB - 30 - 18 * NB * NKC) + (NB * NKC - 1) * (1 - OVERLAP) * BLOCK / 16 + BT * NB * NKC"

# One row: KPH bundles. FIRST = 1 for a worker's first row (nothing drained
# yet); ACC = 1 when adding to C (the partials of each row stream in through
# $a4:5, one bundle ahead of the AMP instruction that adds them).
        .macro ROW first, acc
        .set P, 0
        .rept KPH
        .set S, (P < DRAIN) & (\first == 0)
        .set X, (P % XEVERY) == (XEVERY - 1)
        .set L, \acc & ((P < DRAIN - 1) | (P == KPH - 1))
        .set W, OVERLAP & (P >= DRAIN) & (P < DRAIN + WPR) & ((\acc == 0) | (P < KPH - 1))
        .if S & X & L
        { ld2st64 $a2:3, [$m5+=8], $a4:5, [$m9+=8], $a0:1, [$m6+=8] ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .if S & X & (L == 0)
        { ldst64 $a2:3, [$m5+=8], $a0:1, [$m6+=8] ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .if S & (X == 0) & L
        { ldst64 $a4:5, [$m9+=8], $a0:1, [$m6+=8] ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .if S & (X == 0) & (L == 0)
        { st64 $a0:1, [$m6+=8] ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .if (S == 0) & X & L
        { ld2x64 $a2:3, [$m5+=8], $a4:5, [$m9+=8] ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .if (S == 0) & X & (L == 0) & W
        { ldxw $a2:3, [$m5+=8], [$m7+=8], $m8 ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .if (S == 0) & X & (L == 0) & (W == 0)
        { ld64 $a2:3, [$m5+=8] ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .if (S == 0) & (X == 0) & L
        { ld64 $a4:5, [$m9+=8] ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .if (S == 0) & (X == 0) & (L == 0) & W
        { wld64 [$m7+=8], $m8 ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .if (S == 0) & (X == 0) & (L == 0) & (W == 0)
        { nop ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endif
        .set P, P + 1
        .endr
        # After a row's outputs are stored: on to the next row of C.
        .if (NB > 1) & (\first == 0) & TMP
        add $m6, $m6, $m11
        .endif
        .if (NB > 1) & (\first == 0) & (TMP == 0)
        add $m6, $m6, SKIP
        .endif
        .endm

# The prologue: the six workers' records and the first weight block,
# loaded by the supervisor into the shadow bank and swapped in. A worker's
# record: +0 x, +4 rows, +8 out, +12 next-weights source, +16 shadow offset,
# +20 scale, +24 accumulate (a K-chunk after the first), +28 partials in,
# +32 the jump from a row's outputs to the next row's, +36 its first row in
# C's current column block. The records need only the state's addresses,
# the block B's data, so the code generator may run gemm_amp_pre while the
# exchange before the call's superstep is still delivering A (PRE = 1) or
# A and B (PRE = 2).
        .macro RECORDS
        ld32 $m1, [$m0+0]
        .if NXT
        ld32 $m2, [$m0+16]             # the next GEMM's B: its first block
        .else
        ld32 $m2, [$m0+4]
        .endif
        ld32 $m3, [$m0+8]
        ld32 $m4, [$m0+12]
        .if TMP
        ld32 $m5, [$m0+16]
        .endif
        add $m10, $m0, WREC
        setzi $m11, 0
        setzi $m12, 6
        rpt $m12, fill_end
        mul $m13, $m11, R_LO
        min $m14, $m11, REM
        add $m13, $m13, $m14
        cmplt $m14, $m11, REM
        add $m14, $m14, R_LO - 1
        st32 $m14, [$m10+4]
        mul $m14, $m13, KC * EB
        add $m14, $m14, $m1
        st32 $m14, [$m10+0]
        setzi $m14, 0
        st32 $m14, [$m10+24]
        mul $m14, $m13, N * PB
        add $m14, $m14, $m3
        st32 $m14, [$m10+36]
        .if TMP
        mul $m14, $m13, 16 * PB
        add $m14, $m14, $m5
        .endif
        st32 $m14, [$m10+8]
        st32 $m14, [$m10+28]
        setzi $m14, SKIP * (TMP == 0)
        st32 $m14, [$m10+32]
        mul $m14, $m13, WPR * 8
        st32 $m14, [$m10+16]
        add $m14, $m14, $m2
        add $m14, $m14, FIRSTW
        st32 $m14, [$m10+12]
        st32 $m4, [$m10+20]
        add $m10, $m10, RSZ
        add $m11, $m11, 1
fill_end:
        .endm

        # Streams the weight block at $m5 into the AMP's shadow bank, by the
        # supervisor ($m5 ends past it); `end` labels the loop's end.
        .macro LOADBLOCK end
        setzi $m6, 0
        setzi $m7, BLOCK / 16
        rpt $m7, \end
        wld128 [$m5+=16], $m6
\end:
        .endm

        # Swaps the shadow bank in (column by column with BT).
        .macro SWAPBLOCK
        .if BT
        setzi $m6, KC
        ampswapt $m6
        .else
        ampswap
        .endif
        .endm

        # The first weight block, by the supervisor.
        .macro FIRSTBLOCK
        .if HAVE == 0
        ld32 $m5, [$m0+4]
        LOADBLOCK load0_end
        .endif
        SWAPBLOCK
        .endm

        .text
        .globl gemm_amp
        .type gemm_amp, @function
        .align 8
gemm_amp:
        .if PRE == 0
        RECORDS
        .endif
        .if PRE != 1
        FIRSTBLOCK
        .else
        # The next block's source, as the prologue's load left it.
        ld32 $m5, [$m0+4]
        add $m5, $m5, BLOCK
        .endif
        setzi $m9, NB * NKC
        setzi $m8, gemm_amp_worker
        setzi $m1, 0                   # K-chunk of the next block
block:
        # The six workers, started back to back (their records' addresses
        # in registers first: an add between two runs waits for a free
        # barrel slot once workers run).
        add $m10, $m0, WREC
        add $m11, $m10, RSZ
        add $m12, $m11, RSZ
        add $m13, $m12, RSZ
        add $m14, $m13, RSZ
        add $m6, $m14, RSZ
        # With fewer rows than workers only those with a row are started.
        run $m8, $m10
        .if M > 1
        run $m8, $m11
        .endif
        .if M > 2
        run $m8, $m12
        .endif
        .if M > 3
        run $m8, $m13
        .endif
        .if M > 4
        run $m8, $m14
        .endif
        .if M > 5
        run $m8, $m6
        .endif
        .if R_LO == 0
        # Barrel slots are free at once: the records may change only after
        # every worker has read its own.
        sync 0
        .endif
        add $m9, $m9, -1
        brz $m9, last
        # The next block's records. With a row for every worker this is
        # issued while they run: the supervisor gets a barrel slot only
        # once one exits, which is after its own record loads and, as they
        # started within one barrel turn, after every worker's.
        # The next block: another K-chunk of the same columns (inputs move
        # on by one chunk, outputs stay and are added to), or the first
        # chunk of the next 16 columns (inputs back to chunk 0, outputs on
        # by 16 columns). With TMP the chunks but the last go to T and the
        # last adds T into C ($m4: 0 keep, 1 into C, 2 a new column block).
        .if NKC > 1
        add $m1, $m1, 1
        cmpeq $m13, $m1, NKC
        brz $m13, next_chunk
        setzi $m1, 0
        setzi $m2, 0
        setzi $m13, (NKC - 1) * M * KC * EB
        sub $m2, $m2, $m13
        setzi $m11, 16 * PB
        setzi $m3, 0
        setzi $m4, 2
        br deltas_done
next_chunk:
        setzi $m2, M * KC * EB
        setzi $m11, 0
        setzi $m3, 1
        cmpeq $m4, $m1, NKC - 1
deltas_done:
        .else
        setzi $m11, 16 * PB
        .endif
        # Weight sources move by one block (back to block 0 when the next
        # block is the last one).
        setzi $m12, BLOCK
        cmpeq $m13, $m9, 1
        brz $m13, advance
        setzi $m12, 0
        setzi $m13, NB * NKC * BLOCK - BLOCK
        sub $m12, $m12, $m13
advance:
        # $m10 at each record's +12 (its last word written), so the
        # store moves it on to the next record.
        add $m10, $m0, WREC + 12
        setzi $m13, 6
        rpt $m13, advance_end
        .if NKC > 1
        ld32 $m14, [$m10-12]
        add $m14, $m14, $m2
        st32 $m14, [$m10-12]
        st32 $m3, [$m10+12]
        .endif
        .if TMP == 0
        ld32 $m14, [$m10-4]
        add $m14, $m14, $m11
        st32 $m14, [$m10-4]
        .endif
        ld32 $m14, [$m10+0]
        add $m14, $m14, $m12
        st32 $m14, [$m10+=RSZ]
advance_end:
        .if TMP
        brz $m4, advanced
        add $m10, $m0, WREC
        setzi $m13, 6
        cmpeq $m14, $m4, 1
        brz $m14, new_columns
        # The last K-chunk: out of T into C's rows, jumping row to row.
        setzi $m11, SKIP
        rpt $m13, into_c_end
        ld32 $m14, [$m10+36]
        st32 $m14, [$m10+8]
        st32 $m11, [$m10+32]
        add $m10, $m10, RSZ
into_c_end:
        br advanced
new_columns:
        # A new column block: its first chunk into T again.
        setzi $m11, 0
        rpt $m13, new_columns_end
        ld32 $m14, [$m10+36]
        add $m14, $m14, 16 * PB
        st32 $m14, [$m10+36]
        ld32 $m14, [$m10+28]
        st32 $m14, [$m10+8]
        st32 $m11, [$m10+32]
        add $m10, $m10, RSZ
new_columns_end:
        .endif
advanced:
        .if R_LO > 0
        sync 0
        .endif
        .if OVERLAP == 0
        LOADBLOCK loadn_end
        .endif
        SWAPBLOCK
        br block
last:
        .if R_LO > 0
        sync 0
        .endif
        jmp $m15
        .size gemm_amp, . - gemm_amp

        .if PRE
        .globl gemm_amp_pre
        .type gemm_amp_pre, @function
        .align 8
gemm_amp_pre:
        RECORDS
        .if PRE == 1
        FIRSTBLOCK
        .endif
        jmp $m15
        .size gemm_amp_pre, . - gemm_amp_pre
        .endif

        .type gemm_amp_worker, @function
        .align 8
gemm_amp_worker:
        ld32 $m3, [$m0+4]              # rows - 1 (only workers with rows run)
        ld32 $m5, [$m0+0]
        ld32 $m6, [$m0+8]
        ld32 $m7, [$m0+12]
        ld32 $m8, [$m0+16]
        .if (TYPE == 2) | (TYPE == 3)
        ld32 $m9, [$m0+20]             # only the f8 modes read the scale
        setscl $m9
        .endif
        setzi $m2, KPH
        ampk $m2
        .if (NB > 1) & TMP
        ld32 $m11, [$m0+32]            # from a row's outputs to the next row's
        .endif
        .if NKC > 1
        ld32 $m9, [$m0+28]             # partials in (accumulating chunks)
        ld32 $m10, [$m0+24]
        brnz $m10, accumulate
        .endif
        { ld64 $a2:3, [$m5+=8] ; zero64 $a4:5 }
        ROW 1, 0
        rpt $m3, rows_end
        ROW 0, 0
rows_end:
        .if NKC > 1
        br drain
accumulate:
        ld2x64 $a2:3, [$m5+=8], $a4:5, [$m9+=8]
        ROW 1, 1
        rpt $m3, acc_rows_end
        ROW 0, 1
acc_rows_end:
        .endif
drain:
        .rept DRAIN
        { st64 $a0:1, [$m6+=8] ; AMPOP $a0:1, $a2:3, $a4:5 }
        .endr
        exit
        .size gemm_amp_worker, . - gemm_amp_worker
