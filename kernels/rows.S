# Row kernels: reductions, softmax, layer norm and row-vector broadcasts
# over R rows of C elements, f32 or f16.
#
# Two shapes of work:
# * I = 1 (rows): row r is the C contiguous elements at in0 + r * C * EB;
#   rows are whole 64-bit granules (C * EB a multiple of 8).
# * I > 1 (columns, f32 only): in0 is R x C x I (row pitch IP elements,
#   IP = I unless given) and the op runs along C for each of the I
#   columns, two columns (one granule) at a time; the result of a
#   reduction is R x I. An odd I needs R = 1 (the last granule is half
#   used; its second lane is neither stored nor meaningful).
# Work is split over the six workers by rows (I = 1) or by granule columns.
#
# State ($m0): +0 in0, +4 in1 (OP 10's row pairs), +8 gamma or the row
# vector, +12 beta, +16 out. A cut row op's statistics and last pass (OP 8,
# 10, 11, 13) take six such records of 24 bytes instead, one per worker:
# the words moved on to its first row, +20 its rows (the compiler splits
# them, `ipu_isa::kernels::rows_parts`), so a worker only loads its own.
# Call: `call $m15, rows`; returns with `jmp $m15`.
#
# OP 0 sum:            out[r][i] = SCALE * sum_c x[r][c][i]   (SCALE: f32 bits; 1/C for a mean)
# OP 1 max:            out[r][i] = max_c x[r][c][i]
# OP 2 min:            out[r][i] = min_c x[r][c][i]
#                      (in f32; OUT is the output type: 0 f32, 1 f16)
# OP 3 softmax:        y[r][c][i] = exp(x - max_c x) / sum_c exp(x - max_c x)
# OP 4 log_softmax:    y[r][c][i] = x - max_c x - log(sum_c exp(x - max_c x))
# OP 5 layer_norm:     y[r][c] = (x[r][c] - mean) * rstd [* gamma[c]] [+ beta[c]],
#                      mean and biased variance over the row, rstd = 1 / sqrt(var + EPS)
#                      (GAMMA, BETA: 0 or 1; INV_C, EPS: f32 bits of 1/C and epsilon)
# OP 6 add_row_vector: y[r][c] = x[r][c] + v[c]   (v at +8, e.g. a bias)
# OP 7 mul_row_vector: y[r][c] = x[r][c] * v[c]   (v at +8)
# Softmax of rows cut over tiles, in three steps (rows, I = 1):
# OP 8 softmax_stats:  out[r] = [m, s]: m = max_c x[r][c], s = sum_c exp(x[r][c] - m) (f32 pairs);
#                      with EXPS, also e[r][c] = exp(x[r][c] - m) at +8 (x's type; may be x);
#                      with a prologue (f32, PRE: WIDEN, MUL or MASK) of t in place of x:
#                      t = widen(x * MULV) + v[c], each step rounded as the op it does
#                      (x f16 with WIDEN, multiplied in x's type by the f32 bits MULV
#                      with MUL, widened exactly, the row vector v of C f32 at +4 added
#                      with MASK; f32 x and v then read with paired loads), t stored at
#                      +12 (f32 rows) in the pass taking the max
# OP 9 softmax_combine: in0 holds C groups of R [m, s] pairs (one group per piece of the rows,
#                      GP * 8 bytes apart, GP = R unless given; f32): out[r] = [M, 1 / S],
#                      or [M + log S, -] with LOG, M = max m, S = sum s * exp(m - M)
# OP 10 softmax_apply: y[r][c] = exp(x[r][c] - M) / S, or x[r][c] - (M + log S) with LOG,
#                      the row's pair from OP 9 at +4; with EXPS (not LOG), +0 holds OP 8's
#                      e = exp(x - m) of the piece's own max m, whose [m, s] pairs are at +8:
#                      y[r][c] = e[r][c] * (exp(m - M) / S), one multiply per element (out may be e)
# Layer norm of rows cut over tiles, likewise:
# OP 11 ln_stats:      out[r] = [mean, var] of the row piece (f32 pairs; INV_C = 1/C);
#                      with ADD (f32) of s = x + y, y at +4, s stored at +8 as it is summed
# OP 12 ln_combine:    in0 holds C groups of R [mean, var] pairs of equal pieces (GP * 8
#                      bytes apart, as for OP 9): out[r] =
#                      [mean, rstd] of the whole row (INV_C = 1/C, the groups; EPS; f32)
# OP 13 ln_apply:      y[r][c] = (x[r][c] - mean) * rstd [* gamma[c]] [+ beta[c]], the
#                      row's pair from OP 12 at +4 (gamma and beta: the piece's columns)
# CAST (cast.S's TO codes) and SCL: the last pass writes its result cast, the same
# rounding of the same f32 values as the cast after it: OP 10 with EXPS (f32) to f16
# (CAST 1), OP 13 (f32, C a multiple of 4) to f8E4M3FN or f8E5M2 (3, 4) at scale SCL.
# The combining ops (9, 12) work on two groups at a time (one in each lane: groups k
# and k + C/2 of a row). With P > 1 (parts: P divides C, R * P <= 6) each row's groups
# are cut into P parts of C / P: R * P workers each combine a part into its partial
# pair ([M, S] or [mean, var], at +4's (r * P + p) * 8), then R workers each merge
# their row's P partial pairs the same way (layer norm: INV_Q and INV_P, f32 bits of
# 1 / (C / P) and 1 / P; equal parts, so the merge is exact algebra).
# TYPE: 0 f32, 1 f16. Softmax and layer norm over f16 rows use f16 vector
# arithmetic with sums kept in f32 (layer norm's statistics in f32 about
# the mean rounded to f16, corrected for that rounding); row-vector ops
# read x and v from the interleaved region (two loads per bundle) and, for
# them alone, rows may end in a partly used granule.

        .param OP, 0
        .param TYPE, 0
        .param OUT, 0
        .param R, 8
        .param C, 64
        .param I, 1
        .param IP, 0
        .param SCALE, 0x3f800000
        .param INV_C, 0x3c800000
        .param EPS, 0x3727c5ac
        .param GAMMA, 0
        .param BETA, 0
        .param LOG, 0
        .param GP, 0
        .param EXPS, 0
        .param P, 1
        .param INV_Q, 0
        .param INV_P, 0
        .param CAST, 0
        .param SCL, 0
        .param ADD, 0
        .param WIDEN, 0
        .param MUL, 0
        .param MULV, 0
        .param MASK, 0

        .if (OP < 0) | (OP > 13)
        .error "OP must be 0..13"
        .endif
        .if (TYPE < 0) | (TYPE > 1) | (OUT < 0) | (OUT > 1)
        .error "TYPE and OUT must be 0 (f32) or 1 (f16)"
        .endif
        .if (R <= 0) | (C <= 0) | (I <= 0)
        .error "R, C and I must be positive"
        .endif
        .set EB, 4 - 2 * TYPE             # element bytes
        .set EPG, 8 / EB                  # elements per granule
        .set VERT, (I > 1) | (IP > 1)
        .set RV_MAX, 16
        .set RV_UNROLL, 0
        .set RED, OP < 3                  # a reduction
        .set RVEC, (OP == 6) | (OP == 7)  # a row-vector op
        .if (LOG != 0) & ((OP < 9) | (LOG != 1))
        .error "LOG (0 or 1) is for softmax_combine and softmax_apply"
        .endif
        .if (EXPS != 0) & ((EXPS != 1) | ((OP != 8) & (OP != 10)) | ((OP == 10) & (LOG != 0)))
        .error "EXPS (0 or 1) is for softmax_stats and softmax_apply without LOG"
        .endif
        .set PAIRS_IN, (OP == 9) | (OP == 12)  # reads C groups of R pairs
        .if PAIRS_IN & (TYPE != 0)
        .error "the combining ops read f32 pairs"
        .endif
        .set GPV, GP + (GP == 0) * R      # pairs from one group to the next
        .if (GP != 0) & ((PAIRS_IN == 0) | (GP < R))
        .error "GP (the group pitch, at least R) is for the combining ops"
        .endif
        .if PAIRS_IN & (GPV * 8 >= 16384)
        .error "the combining ops' groups must be under 16384 bytes apart (GP, or R, < 2048)"
        .endif
        .set GSTEP, GPV * 8               # bytes from one group of pairs to the next
        .if P < 1
        .error "P must be positive"
        .endif
        .set PARTS, P > 1
        .if PARTS & ((PAIRS_IN == 0) | (C % P != 0) | (R * P > 6))
        .error "P (parts of each row's C groups: a divisor of C, R * P at most 6) is for the combining ops"
        .endif
        .if PARTS & (C * GSTEP >= 1 << 20)
        .error "a row's groups span too many bytes for the parts' addresses (C * GP * 8 < 2^20)"
        .endif
        .if PARTS & (OP == 12) & ((INV_Q == 0) | (INV_P == 0))
        .error "layer norm's combine in parts needs INV_Q and INV_P (f32 bits of 1 / (C / P) and 1 / P)"
        .endif
        .if ((PARTS == 0) | (OP != 12)) & ((INV_Q != 0) | (INV_P != 0))
        .error "INV_Q and INV_P are for layer norm's combine in parts"
        .endif
        # CAST: the result cast on the way out (cast.S's TO codes), as the
        # cast after the op would: softmax_apply's exponentials to f16 (1),
        # ln_apply's f32 rows to FP8 (3 f8E4M3FN, 4 f8E5M2; SCL its scale).
        .if (CAST != 0) & (CAST != 1) & (CAST != 3) & (CAST != 4)
        .error "CAST is 0, 1 (f16), 3 (f8E4M3FN) or 4 (f8E5M2)"
        .endif
        .if (CAST == 1) & ((OP != 10) | (TYPE != 0) | (EXPS == 0))
        .error "CAST 1 (f16) is for softmax_apply of f32 exponentials (EXPS)"
        .endif
        .if (CAST >= 3) & ((OP != 13) | (TYPE != 0) | ((C / 2) % 2 != 0))
        .error "CAST 3 and 4 (FP8) are for ln_apply of f32 rows of whole pairs of granules"
        .endif
        .if (SCL != 0) & (CAST < 3)
        .error "SCL is the FP8 scale of CAST 3 and 4"
        .endif
        # ADD: ln_stats of s = x + y (f32), y at +4, s stored at +8 (the add
        # before it done in its first pass, as elementwise.S adds).
        .if (ADD != 0) & ((ADD != 1) | (OP != 11) | (TYPE != 0))
        .error "ADD (0 or 1) is for ln_stats of f32 rows"
        .endif
        # The prologue of softmax_stats (f32): t = widen(x * MULV) + v, stored
        # at +12, the max and exp passes over t.
        .if (WIDEN < 0) | (WIDEN > 1) | (MUL < 0) | (MUL > 1) | (MASK < 0) | (MASK > 1)
        .error "WIDEN, MUL and MASK are 0 or 1"
        .endif
        .set PRE, WIDEN | MUL | MASK
        .if PRE & ((OP != 8) | (TYPE != 0))
        .error "WIDEN, MUL and MASK (a prologue) are for softmax_stats in f32"
        .endif
        .if (MUL == 0) & (MULV != 0)
        .error "MULV is MUL's multiplier"
        .endif
        .set GX, C / (2 + 2 * WIDEN)      # granules of a prologue's x row
        .if PRE & ((C % (2 + 2 * WIDEN) != 0) | (GX < 2))
        .error "a prologue's rows are two or more whole granules of x (C a multiple of 4, 8 or more, with WIDEN, else of 2, 4 or more)"
        .endif
        .set OSH, (CAST == 1) + 2 * (CAST >= 3)   # a cast row is the f32 row's bytes >> OSH
        # A cut row op's statistics and last pass (OP 8, 10, 11, 13) take one
        # record per worker: the five words moved on to its first row, and
        # its rows (ipu_isa::kernels::rows_parts).
        .set WREC, (OP == 8) | (OP == 10) | (OP == 11) | (OP == 13)
        .if (OP != 0) & (SCALE != 0x3f800000)
        .error "SCALE is for sums"
        .endif
        .if ((OP == 5) | (OP == 13)) & ((GAMMA < 0) | (GAMMA > 1) | (BETA < 0) | (BETA > 1))
        .error "GAMMA and BETA are 0 or 1"
        .endif
        .if (OP != 5) & (OP != 13) & ((GAMMA != 0) | (BETA != 0))
        .error "GAMMA and BETA are for layer norm"
        .endif
        .if (RED == 0) & (OUT != 0)
        .error "OUT is for reductions (the other ops write their input type)"
        .endif

        # Rows (I = 1).
        .if RVEC
        .set GR, (C + EPG - 1) / EPG      # granules per row (the last may be partly used)
        .else
        .set GR, C / EPG
        .if (VERT == 0) & (PAIRS_IN == 0) & (C % EPG != 0)
        .error "rows must be whole 64-bit granules (C * element bytes a multiple of 8)"
        .endif
        .endif
        .set ROWB, GR * 8
        .set OB, 4 - 2 * OUT              # output element bytes of a reduction

        # Columns (I > 1).
        .set IPV, IP + (IP == 0) * I      # row pitch in elements
        .set PITCH, IPV * 4
        .set GI, (I + 1) / 2              # granule columns per row
        .set TAIL, I % 2
        .set ROWSTEP, C * PITCH           # bytes from one row of x to the next
        .if VERT
        .if TYPE != 0
        .error "columns (I > 1) are f32"
        .endif
        .if OP > 4
        .error "layer norm, row-vector and cut-softmax ops run along rows (I = 1)"
        .endif
        .if (IPV < I) | (IPV % 2 != 0)
        .error "the row pitch IP must be even and at least I"
        .endif
        .if TAIL & ((R > 1) | (RED == 0))
        .error "an odd I is for one row of a reduction"
        .endif
        .if (OP > 2) & (IPV != I)
        .error "softmax columns are stored without padding (IP = I)"
        .endif
        .if PITCH >= 16384
        .error "the row pitch must be under 16384 bytes (post-increment range)"
        .endif
        .endif

        .set ITEMS, (VERT == 0) * R + VERT * R * GI
        .set I_LO, ITEMS / 6
        .set REM, ITEMS % 6
        .set IPW, I_LO + (REM > 0)        # items of the busiest worker

        # The cycle formula: worker issue turns (6 cycles each; the busiest
        # worker's setup and items, counted from the code below) and the
        # supervisor's start and sync.
        # Turns of FOLD over n granules, of HSUM16, and of a loop over the
        # granules of a row after the first (its setzi and rpt) at k per granule.
        .set FOLD_GR, (GR == 1) + 3 * (GR == 2) + (GR > 2) * (GR + 3)
        .set FOLD_C, (C == 1) + 3 * (C == 2) + (C > 2) * (C + 3)
        .set HSUM, 3 + (GR > 1) * (2 * GR - 1)
        .set SCALED, (OP == 0) & (SCALE != 0x3f800000)
        .if VERT == 0
        .if RED
        .if (TYPE == 1) & (OP == 0)
        .set BODY, HSUM
        .else
        .set BODY, FOLD_GR + 1 + 2 * (OP == 2)
        .endif
        .set ITEM, BODY + SCALED + 3 + (OUT == 1)
        .set SETUP, 15 + 2 * SCALED
        .endif
        .if (OP == 3) | (OP == 4)
        .set ITEM, 16 + (OP == 4) * (1 + GR * (TYPE == 0)) + FOLD_GR + (GR > 1) * (4 + (4 + TYPE) * (GR - 1) + (GR - 1))
        .set SETUP, 14
        .endif
        .if (OP == 5) & (TYPE == 0)
        .set ITEM, 19 + 3 * (GAMMA | BETA) + FOLD_GR + (GR > 1) * (4 + 2 * (GR - 1) + (2 + (GAMMA | BETA)) * (GR - 1))
        .set SETUP, 18
        .endif
        .if (OP == 5) & (TYPE == 1)
        .set ITEM, 28 + 3 * (GAMMA | BETA) + HSUM + (GR > 1) * (4 + 5 * (GR - 1) + (3 + (GAMMA | BETA)) * (GR - 1))
        .set SETUP, 18
        .endif
        .if RVEC
        # Rows of up to RV_MAX granules: one repeat, the granules unrolled.
        .set RV_UNROLL, GR <= RV_MAX
        .set ITEM, RV_UNROLL * (GR + 2) + (1 - RV_UNROLL) * (5 + (GR > 1) * (1 + GR))
        .set SETUP, 15 + RV_UNROLL
        .endif
        .if OP == 8
        .set ITEM, 12 + FOLD_GR + (GR > 1) * (2 + (4 + TYPE) * (GR - 1))
        .set SETUP, 15 + 2 * EXPS
        .endif
        .if (OP == 8) & (TYPE == 0) & (GR >= 3)
        .set ITEM, GR + 11 + 4 * (GR - 1)
        .set SETUP, 18 + 2 * EXPS
        .endif
        # A prologue: PRE_G's issues per granule of x (PG), the pass taking t
        # and its max, then the exp pass.
        .set PG, WIDEN * (MUL + 4 + 2 * MASK) + (1 - WIDEN) * (2 + (MUL & MASK))
        .if PRE
        .set ITEM, 1 + (GX > 2) + GX * PG - WIDEN * MASK + 4 * GR + 4
        .endif
        # The combining ops, a row of n groups (C, or with parts C / P, then
        # P): the fold (PF), the pass over two groups at a time (SS for
        # softmax, DV for layer norm) and the finish.
        .set NA, C / P
        .set HA, NA / 2
        .set PFA, (NA == 1) + (NA > 1) * (NA <= 8) * (NA + 1) + (NA > 8) * (NA + 3)
        .set SSA, (NA >= 2) * (5 * HA + 5 + 2 * (HA > 4)) + (NA % 2) * 6 + (NA == 1)
        .set DVA, (NA >= 2) * (2 * HA + 3 + 2 * (HA > 4)) + (NA % 2) * 4 + (NA == 1)
        .set HB, P / 2
        .set PFB, (P == 1) + (P > 1) * (P <= 8) * (P + 1) + (P > 8) * (P + 3)
        .set SSB, (P >= 2) * (5 * HB + 5 + 2 * (HB > 4)) + (P % 2) * 6 + (P == 1)
        .set DVB, (P >= 2) * (2 * HB + 3 + 2 * (HB > 4)) + (P % 2) * 4 + (P == 1)
        .if OP == 9
        .set ITEM, PFA + SSA + 9
        .set SETUP, 13
        .endif
        .if (OP == 10) & (EXPS == 0)
        .set ITEM, 10 - 4 * LOG + (GR > 1) * (2 + (4 - 3 * LOG) * (GR - 1))
        .set SETUP, 17
        .endif
        .if (OP == 10) & EXPS
        .set ITEM, 10 + (GR > 1) * GR + (CAST == 1) * (GR - 1)
        .set SETUP, 19
        .endif
        .if (OP == 11) & (TYPE == 0)
        .set ITEM, 9 + FOLD_GR + (GR > 1) * (1 + 2 * (GR - 1))
        .endif
        .if ADD
        .set ITEM, 11 + (GR > 1) * (2 * GR - 1 + 2 * (GR > 2)) + (GR > 1) * (1 + 2 * (GR - 1))
        .endif
        .if (OP == 11) & (TYPE == 1)
        .set ITEM, 25 + HSUM + (GR > 1) * (2 + 5 * (GR - 1))
        .endif
        .if OP == 12
        .set ITEM, PFA + DVA + 13
        .endif
        .if (OP == 13) & (TYPE == 0) & (CAST == 0)
        .set ITEM, 8 + 3 * (GAMMA | BETA) + (GR > 1) * (2 + (2 + (GAMMA | BETA)) * (GR - 1))
        .endif
        .if (OP == 13) & (CAST >= 3)
        .set ITEM, 5 + (GR > 2) + (GR / 2) * (7 + 2 * (GAMMA | BETA))
        .endif
        .if (OP == 13) & (TYPE == 1)
        .set ITEM, 13 + 3 * (GAMMA | BETA) + (GR > 1) * (2 + (3 + (GAMMA | BETA)) * (GR - 1))
        .endif
        .if OP >= 11
        .set SETUP, 17 + 5 * (CAST >= 3) + 4 * ADD
        .endif
        .else
        .if RED
        .set ITEM, 6 + FOLD_C + SCALED + (OUT == 1) + 3 * TAIL + 5 * (R > 1)
        .set SETUP, 29 + 3 * SCALED
        .else
        .set ITEM, 18 + 2 * (OP == 4) + FOLD_C + (C > 1) * (4 + 6 * (C - 1)) + 5 * (R > 1)
        .set SETUP, 24
        .endif
        .endif
        .set SETUP, SETUP - 4 * (ITEMS <= 6)   # the short prologue of one item a worker
        .if WREC
        # Its own record: its rows, and its words where its first row is.
        .set SETUP, 5 + (OP == 8) * (EXPS + 3 * ((TYPE == 0) & (GR >= 3) & (PRE == 0))) + (OP == 10) * (1 + EXPS) + (OP == 11) * (2 + 2 * ADD) + (OP == 13) * (1 + 5 * (CAST >= 3))
        .if PRE
        .set SETUP, SETUP + 3 + 2 * MASK + 3 * MUL + (GX > 2)
        .endif
        .endif
        .set CYC, 14 + 6 * (SETUP + IPW * ITEM)
        .if WREC & (REM == 0)
        # The supervisor moves $m0 on between its runs: the last worker,
        # as busy as the first, starts three of its turns later.
        .set CYC, CYC + 18
        .endif
        .if PARTS
        # Two rounds: each of R * P workers one part of a row, then each of
        # R workers merging its row's P parts.
        .set ROUND1, 6 * (9 + 5 * (R > 1) + 2 * (OP == 12) + PFA + (OP == 9) * (SSA + 4) + (OP == 12) * (DVA + 7))
        .set ROUND2, 6 * (4 + 4 * (R > 1) + 4 * (OP == 12) + PFB + (OP == 9) * (SSB + 6) + (OP == 12) * (DVB + 10))
        .set CYC, 14 + R * P + ROUND1 + R + ROUND2
        .endif
        .cycles "CYC"

        .if OP == 0
        .define VOP f32v2add
        .endif
        .if (OP == 1) & (TYPE == 0)
        .define VOP f32v2max
        .endif
        .if (OP == 1) & (TYPE == 1)
        .define VOP f16v4max
        .endif
        .if (OP == 2) & (TYPE == 0)
        .define VOP f32v2min
        .endif
        .if (OP == 2) & (TYPE == 1)
        .define VOP f16v4min
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

# The rest of a softmax statistics row after its first exp ($a4:5; $a6:7
# the sum so far, $a8:9 the max m in both lanes, $m13 the granules left):
# each further granule loaded from [\src], its exp added in (and stored
# with EXPS), then the row's [m, s] stored.
        .macro EXP_SUM src
        rpt $m13, exp_sum_end_\@
        .if EXPS
        { ldst64 $a0:1, [\src+=8], $a4:5, [$m11+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
        .else
        { ld64 $a0:1, [\src+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
        .endif
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2exp $a4:5, $a2:3
exp_sum_end_\@:
        .if EXPS
        { st64 $a4:5, [$m11+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
        .else
        f32v2add $a6:7, $a6:7, $a4:5
        .endif
        { st64 $a12:13, [$m9+=8] ; f32v2hadd $a13, $a6:7 }   # [m, s]
        .endm

# $a4:5 = vop over n granules from $m2 (which advances by step each).
        .macro FOLD vop, n, step
        ld64 $a4:5, [$m2+=\step]
        .if \n > 1
        ld64 $a0:1, [$m2+=\step]
        .if \n > 2
        setzi $m10, \n - 2
        rpt $m10, fold_end_\@
        { ld64 $a0:1, [$m2+=\step] ; \vop $a4:5, $a4:5, $a0:1 }
fold_end_\@:
        .endif
        \vop $a4:5, $a4:5, $a0:1
        .endif
        .endm

# $a6 = the f32 sum of the GR f16 granules of the row at $m2.
        .macro HSUM16
        { ld64 $a0:1, [$m2+=8] ; zero64 $a6:7 }
        .if GR > 1
        { setzi $m10, GR - 1 ; f16v4hadd $a2, $a0:1 }
        rpt $m10, hsum_end_\@
        { ld64 $a0:1, [$m2+=8] ; f32add $a6, $a6, $a2 }
        f16v4hadd $a2, $a0:1
hsum_end_\@:
        .else
        f16v4hadd $a2, $a0:1
        .endif
        f32add $a6, $a6, $a2
        .endm

# Loads the f32 bit pattern v into register a.
        .macro LDF a, v
        setzi \a, (\v) & 0xfffff
        sethi \a, ((\v) >> 16) & 0xffff
        .endm

# The combining ops' rows. Groups of [a, b] f32 pairs, `step` bytes
# apart, from $m3 (which advances): $a4:5 = vop over n of them (unrolled up
# to 8).
        .macro PFOLD vop, n, step
        ld64 $a4:5, [$m3+=\step]
        .if \n > 1
        ld64 $a0:1, [$m3+=\step]
        .if \n > 8
        setzi $m10, \n - 2
        rpt $m10, pfold_end_\@
        { ld64 $a0:1, [$m3+=\step] ; \vop $a4:5, $a4:5, $a0:1 }
pfold_end_\@:
        .else
        .rept \n - 2
        { ld64 $a0:1, [$m3+=\step] ; \vop $a4:5, $a4:5, $a0:1 }
        .endr
        .endif
        \vop $a4:5, $a4:5, $a0:1
        .endif
        .endm

# One turn group of SM_SUMS: groups k and k + n / 2 in the two lanes.
        .macro SMS_BODY step
        { ld32 $a0, [$m3+=\step] ; f32v2exp $a4:5, $a4:5 }
        { ld32 $a1, [$m4+=\step] ; f32v2fma $a6:7, $a4:5, $a2:3 }
        ld32 $a2, [$m11+=\step]
        { ld32 $a3, [$m12+=\step] ; f32v2sub $a4:5, $a0:1, $a8:9 }
        .endm

# $a6:7 (add the lanes) = sum of s * exp(m - M) over the n [m, s] pairs
# from $m3, M in $a8:9; groups k and k + n / 2 share the vector
# instructions ($m13 = (n / 2) * step), an odd last one alone.
        .macro SM_SUMS n, step
        .if \n >= 2
        { add $m4, $m3, $m13 ; zero64 $a6:7 }
        add $m11, $m3, 4
        add $m12, $m4, 4
        ld32 $a0, [$m3+=\step]
        ld32 $a1, [$m4+=\step]
        ld32 $a2, [$m11+=\step]
        { ld32 $a3, [$m12+=\step] ; f32v2sub $a4:5, $a0:1, $a8:9 }
        .if \n / 2 > 4
        setzi $m10, \n / 2 - 1
        rpt $m10, sms_end_\@
        SMS_BODY \step
sms_end_\@:
        .else
        .rept \n / 2 - 1
        SMS_BODY \step
        .endr
        .endif
        f32v2exp $a4:5, $a4:5
        f32v2fma $a6:7, $a4:5, $a2:3
        .else
        zero64 $a6:7
        .endif
        .if \n % 2
        .if \n >= 2
        ld64 $a0:1, [$m4+0]
        .else
        ld64 $a0:1, [$m3+0]
        .endif
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2exp $a2:3, $a2:3
        f32mul $a2, $a2, $a1
        f32add $a6, $a6, $a2
        .endif
        .endm

# $a6:7 (add the lanes) = sum of (mean - M)^2 over the n [mean, var] pairs
# from $m3, M in $a8:9; groups k and k + n / 2 in the two lanes ($m13 =
# (n / 2) * step), an odd last one alone.
        .macro LN_DEVS n, step
        .if \n >= 2
        { add $m4, $m3, $m13 ; zero64 $a6:7 }
        ld32 $a0, [$m3+=\step]
        ld32 $a1, [$m4+=\step]
        .if \n / 2 > 4
        setzi $m10, \n / 2 - 1
        rpt $m10, lnd_end_\@
        { ld32 $a0, [$m3+=\step] ; f32v2sub $a2:3, $a0:1, $a8:9 }
        { ld32 $a1, [$m4+=\step] ; f32v2fma $a6:7, $a2:3, $a2:3 }
lnd_end_\@:
        .else
        .rept \n / 2 - 1
        { ld32 $a0, [$m3+=\step] ; f32v2sub $a2:3, $a0:1, $a8:9 }
        { ld32 $a1, [$m4+=\step] ; f32v2fma $a6:7, $a2:3, $a2:3 }
        .endr
        .endif
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2fma $a6:7, $a2:3, $a2:3
        .else
        zero64 $a6:7
        .endif
        .if \n % 2
        .if \n >= 2
        ld32 $a0, [$m4+0]
        .else
        ld32 $a0, [$m3+0]
        .endif
        f32sub $a2, $a0, $a8
        f32mul $a2, $a2, $a2
        f32add $a6, $a6, $a2
        .endif
        .endm

# A row's n [m, s] pairs at $m2 (step apart) combined into [M, S] (final
# 0), [M, 1 / S], or [M + log S, -] (LOG), stored at $m9 (+= 8).
        .macro SM_ROW n, step, final
        mov $m3, $m2
        PFOLD f32v2max, \n, \step
        { mov $m3, $m2 ; f32v2dup $a8:9, $a4 }
        SM_SUMS \n, \step
        f32v2hadd $a7, $a6:7
        .if \final & (LOG == 0)
        f32v2recip $a6:7, $a6:7
        .endif
        .if \final & LOG
        f32v2log $a6:7, $a6:7
        { st64 $a6:7, [$m9+=8] ; f32add $a6, $a8, $a7 }
        .else
        { st64 $a6:7, [$m9+=8] ; mova $a6, $a8 }
        .endif
        .endm

# A row's n [mean, var] pairs of equal pieces at $m2 (step apart; $a14 =
# 1 / n) combined into [mean, var] (final 0) or [mean, rstd] (EPS in
# $a15), stored at $m9 (+= 8).
        .macro LN_ROW n, step, final
        mov $m3, $m2
        PFOLD f32v2add, \n, \step      # [sum of means, sum of variances]
        f32mul $a8, $a4, $a14          # mean
        { mov $m3, $m2 ; f32v2dup $a8:9, $a8 }
        LN_DEVS \n, \step
        f32v2hadd $a6, $a6:7
        f32add $a6, $a6, $a5
        f32mul $a6, $a6, $a14          # var: the mean of (variance + (mean - the mean)^2)
        .if \final
        f32add $a6, $a6, $a15
        f32v2rsqrt $a6:7, $a6:7
        .endif
        { st64 $a8:9, [$m9+=8] ; mova $a9, $a6 }
        .endm

# Layer norm's moments of the f32 row at $m2: mean in $a8:9 (both lanes),
# biased variance in $a6; $m2 back at the row's start.
        .macro LN_MOMENTS32
        mov $m3, $m2
        FOLD f32v2add, GR, 8
        f32v2hadd $a6, $a4:5
        f32mul $a8, $a6, $a14          # mean
        { mov $m2, $m3 ; f32v2dup $a8:9, $a8 }
        # variance about the mean
        { ld64 $a0:1, [$m2+=8] ; zero64 $a4:5 }
        f32v2sub $a2:3, $a0:1, $a8:9
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, ln_var_end_\@
        { ld64 $a0:1, [$m2+=8] ; f32v2fma $a4:5, $a2:3, $a2:3 }
        f32v2sub $a2:3, $a0:1, $a8:9
ln_var_end_\@:
        .endif
        f32v2fma $a4:5, $a2:3, $a2:3
        f32v2hadd $a6, $a4:5
        f32mul $a6, $a6, $a14
        mov $m2, $m3
        .endm

# ln_stats' variance of the f32 row at `ptr` about the mean in $a6 (the
# order of LN_MOMENTS32), [mean, var] stored at $m9, the row count $m6
# stepped; `end` labels the repeat's end.
        .macro LN_VAR_PAIR ptr, end
        { ld64 $a0:1, [\ptr+=8] ; f32v2dup $a8:9, $a6 }
        .if GR > 1
        { setzi $m10, GR - 1 ; zero64 $a4:5 }
        f32v2sub $a2:3, $a0:1, $a8:9
        rpt $m10, \end
        { ld64 $a0:1, [\ptr+=8] ; f32v2fma $a4:5, $a2:3, $a2:3 }
        f32v2sub $a2:3, $a0:1, $a8:9
\end:
        .else
        zero64 $a4:5
        f32v2sub $a2:3, $a0:1, $a8:9
        .endif
        f32v2fma $a4:5, $a2:3, $a2:3
        { add $m6, $m6, -1 ; f32v2hadd $a7, $a4:5 }
        { st64 $a6:7, [$m9+=8] ; f32mul $a7, $a7, $a14 }   # var
        .endm

# The same for an f16 row: $a8:9 holds m' = the mean rounded to f16 (four
# lanes), $a12 m' - mean, $a6 the biased variance (about m', corrected).
        .macro LN_MOMENTS16
        mov $m3, $m2
        HSUM16
        f32mul $a6, $a6, $a14          # mean m
        f16v4dup $a8:9, $a6            # m' = m rounded to f16
        cvt.f16.f32 $a2:3, $a8
        { mov $m2, $m3 ; f32sub $a12, $a2, $a6 }   # m' - m
        # sum of (x - m')^2 in f32
        { ld64 $a0:1, [$m2+=8] ; zero64 $a4:5 }
        f16v4sub $a2:3, $a0:1, $a8:9
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, lnh_var_end_\@
        { ld64 $a0:1, [$m2+=8] ; cvt.f16.f32 $a6:7, $a2 }
        cvt.f16.f32 $a10:11, $a3
        f32v2fma $a4:5, $a6:7, $a6:7
        f32v2fma $a4:5, $a10:11, $a10:11
        f16v4sub $a2:3, $a0:1, $a8:9
lnh_var_end_\@:
        .endif
        cvt.f16.f32 $a6:7, $a2
        cvt.f16.f32 $a10:11, $a3
        f32v2fma $a4:5, $a6:7, $a6:7
        f32v2fma $a4:5, $a10:11, $a10:11
        f32v2hadd $a6, $a4:5
        f32mul $a6, $a6, $a14          # mean of (x - m')^2
        f32mul $a13, $a12, $a12
        f32sub $a6, $a6, $a13          # var = that - (m - m')^2
        mov $m2, $m3
        .endm

# t = (x - mean) * rstd from x in $a0:1 into $a2:3 (`vsub`, `vmul`: the
# f32v2 or f16v4 forms), loading the next gamma into `g` and beta into
# $a4:5 beside it, as the specialisation has them.
        .macro LN_T vsub, vmul, g
        .if GAMMA
        { ld64 \g, [$m11+=8] ; \vsub $a2:3, $a0:1, $a8:9 }
        .else
        \vsub $a2:3, $a0:1, $a8:9
        .endif
        .if BETA
        { ld64 $a4:5, [$m12+=8] ; \vmul $a2:3, $a2:3, $a10:11 }
        .else
        \vmul $a2:3, $a2:3, $a10:11
        .endif
        .endm

# $a4:5 = `op` a, b, storing the previous y from $a4:5 beside it and, unless
# `last`, loading the next x into $a0:1.
        .macro LN_STORE last, op, a, b
        .if \last
        { st64 $a4:5, [$m9+=8] ; \op $a4:5, \a, \b }
        .else
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; \op $a4:5, \a, \b }
        .endif
        .endm

# y = t * gamma + beta (as the specialisation has them) from t in $a2:3,
# gamma in `g` and beta in $a4:5, with LN_STORE's store and load.
        .macro LN_Y last, vfma, vmul, vadd, g
        .if GAMMA & BETA
        LN_STORE \last, \vfma, $a2:3, \g
        .endif
        .if GAMMA & (BETA == 0)
        LN_STORE \last, \vmul, $a2:3, \g
        .endif
        .if (GAMMA == 0) & BETA
        LN_STORE \last, \vadd, $a4:5, $a2:3
        .endif
        .endm

# y = (x - mean) * rstd [* gamma] [+ beta] for the f32 row at $m2 into $m9,
# from $a8:9 = mean and $a10:11 = rstd (both lanes); gamma and beta from
# the record's +8 and +12.
        .macro LN_NORM32
        .if GAMMA | BETA
        ld32 $m11, [$m0+8]
        ld32 $m12, [$m0+12]
        # y = t * gamma + beta, t = (x - mean) * rstd
        ld64 $a0:1, [$m2+=8]
        LN_T f32v2sub, f32v2mul, $a12:13
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, ln_apply_end_\@
        LN_Y 0, f32v2fma, f32v2mul, f32v2add, $a12:13
        LN_T f32v2sub, f32v2mul, $a12:13
ln_apply_end_\@:
        .endif
        LN_Y 1, f32v2fma, f32v2mul, f32v2add, $a12:13
        .else
        # y = (x - mean) * rstd
        ld64 $a0:1, [$m2+=8]
        f32v2sub $a2:3, $a0:1, $a8:9
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, ln_norm_end_\@
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; f32v2mul $a4:5, $a2:3, $a10:11 }
        f32v2sub $a2:3, $a0:1, $a8:9
ln_norm_end_\@:
        .endif
        { st64 $a4:5, [$m9+=8] ; f32v2mul $a4:5, $a2:3, $a10:11 }
        .endif
        .endm

# The same for an f16 row, from $a8:9 = m' (mean rounded to f16), $a10:11 =
# rstd and $a12:13 = (m' - mean) * rstd, four f16 lanes each.
        .macro LN_NORM16
        # t = (x - m') * rstd + c = (x - m) * rstd; y = t * gamma + beta
        .if GAMMA | BETA
        ld32 $m11, [$m0+8]
        ld32 $m12, [$m0+12]
        ld64 $a0:1, [$m2+=8]
        LN_T f16v4sub, f16v4mul, $a6:7
        f16v4add $a2:3, $a2:3, $a12:13
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, lnh_apply_end_\@
        LN_Y 0, f16v4fma, f16v4mul, f16v4add, $a6:7
        LN_T f16v4sub, f16v4mul, $a6:7
        f16v4add $a2:3, $a2:3, $a12:13
lnh_apply_end_\@:
        .endif
        LN_Y 1, f16v4fma, f16v4mul, f16v4add, $a6:7
        .else
        ld64 $a0:1, [$m2+=8]
        f16v4sub $a2:3, $a0:1, $a8:9
        f16v4mul $a2:3, $a2:3, $a10:11
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, lnh_norm_end_\@
        { ldst64 $a0:1, [$m2+=8], $a2:3, [$m9+=8] ; f16v4add $a2:3, $a2:3, $a12:13 }
        f16v4sub $a2:3, $a0:1, $a8:9
        f16v4mul $a2:3, $a2:3, $a10:11
lnh_norm_end_\@:
        .endif
        { st64 $a2:3, [$m9+=8] ; f16v4add $a2:3, $a2:3, $a12:13 }
        .endif
        .endm

# ln_apply's f32 granule y (as LN_NORM32) cast to FP8 into the low half of
# \dst; the next granule of x loaded (ldx 1) into $a0:1, or (ldx 0, the
# row's last) the row counted. Gamma and beta from $m11 and $m12.
        .if CAST >= 3
        .if CAST == 3
        .define CVT8 cvt.f32.f8e4
        .else
        .define CVT8 cvt.f32.f8e5
        .endif
        .if GAMMA & BETA
        .define LN8Y f32v2fma $a4:5, $a2:3, $a12:13
        .endif
        .if GAMMA & (BETA == 0)
        .define LN8Y f32v2mul $a4:5, $a2:3, $a12:13
        .endif
        .if (GAMMA == 0) & BETA
        .define LN8Y f32v2add $a4:5, $a4:5, $a2:3
        .endif
        .endif
        .macro LN8 dst, ldx
        .if GAMMA
        { ld64 $a12:13, [$m11+=8] ; f32v2sub $a2:3, $a0:1, $a8:9 }
        .else
        f32v2sub $a2:3, $a0:1, $a8:9
        .endif
        .if GAMMA | BETA
        .if BETA
        { ld64 $a4:5, [$m12+=8] ; f32v2mul $a2:3, $a2:3, $a10:11 }
        .else
        f32v2mul $a2:3, $a2:3, $a10:11
        .endif
        .if \ldx == 1
        { ld64 $a0:1, [$m2+=8] ; LN8Y }
        .else
        { add $m6, $m6, -1 ; LN8Y }
        .endif
        CVT8 \dst, $a4:5
        .else
        .if \ldx == 1
        { ld64 $a0:1, [$m2+=8] ; f32v2mul $a2:3, $a2:3, $a10:11 }
        .else
        { add $m6, $m6, -1 ; f32v2mul $a2:3, $a2:3, $a10:11 }
        .endif
        CVT8 \dst, $a2:3
        .endif
        .endm

# One granule of a prologue's row of x (in $a0:1) into t, stored at $m4
# (+= 8), and the row's max in $a10:11 (first: the granule's own); next:
# the row's next granule of x loaded into $a0:1. The scalar multiplier is
# in $a14:15, v read at $m5 (+= 8).
        .if MUL
        .define XLO $a12
        .define XHI $a13
        .else
        .define XLO $a0
        .define XHI $a1
        .endif
        .macro PRE_G first, next
        .if WIDEN
        .if MUL
        .if \next
        { ld64 $a0:1, [$m2+=8] ; f16v4mul $a12:13, $a0:1, $a14:15 }
        .else
        f16v4mul $a12:13, $a0:1, $a14:15
        .endif
        .endif
        .if MASK
        { ld64 $a6:7, [$m5+=8] ; cvt.f16.f32 $a2:3, XLO }
        { ld64 $a8:9, [$m5+=8] ; cvt.f16.f32 $a4:5, XHI }
        .if \next & (MUL == 0)
        { ld64 $a0:1, [$m2+=8] ; f32v2add $a2:3, $a2:3, $a6:7 }
        .else
        f32v2add $a2:3, $a2:3, $a6:7
        .endif
        { st64 $a2:3, [$m4+=8] ; f32v2add $a4:5, $a4:5, $a8:9 }
        .if \first
        { st64 $a4:5, [$m4+=8] ; f32v2max $a10:11, $a2:3, $a4:5 }
        .else
        { st64 $a4:5, [$m4+=8] ; f32v2max $a10:11, $a10:11, $a2:3 }
        f32v2max $a10:11, $a10:11, $a4:5
        .endif
        .else
        cvt.f16.f32 $a2:3, XLO
        .if \next & (MUL == 0)
        { ld64 $a0:1, [$m2+=8] ; cvt.f16.f32 $a4:5, XHI }
        .else
        cvt.f16.f32 $a4:5, XHI
        .endif
        .if \first
        { st64 $a2:3, [$m4+=8] ; f32v2max $a10:11, $a2:3, $a4:5 }
        st64 $a4:5, [$m4+=8]
        .else
        { st64 $a2:3, [$m4+=8] ; f32v2max $a10:11, $a10:11, $a2:3 }
        { st64 $a4:5, [$m4+=8] ; f32v2max $a10:11, $a10:11, $a4:5 }
        .endif
        .endif
        .else
        # f32 x: t = x [* MULV] [+ v]; with v, x's granule and v's are
        # loaded together ($a0:1, $a6:7), one ahead.
        .if MASK
        .if MUL
        f32v2mul $a2:3, $a0:1, $a14:15
        .if \next
        { ld2x64 $a0:1, [$m2+=8], $a6:7, [$m5+=8] ; f32v2add $a2:3, $a2:3, $a6:7 }
        .else
        f32v2add $a2:3, $a2:3, $a6:7
        .endif
        .else
        .if \next
        { ld2x64 $a0:1, [$m2+=8], $a6:7, [$m5+=8] ; f32v2add $a2:3, $a0:1, $a6:7 }
        .else
        f32v2add $a2:3, $a0:1, $a6:7
        .endif
        .endif
        .else
        .if \next
        { ld64 $a0:1, [$m2+=8] ; f32v2mul $a2:3, $a0:1, $a14:15 }
        .else
        f32v2mul $a2:3, $a0:1, $a14:15
        .endif
        .endif
        .if \first
        { st64 $a2:3, [$m4+=8] ; mov64 $a10:11, $a2:3 }
        .else
        { st64 $a2:3, [$m4+=8] ; f32v2max $a10:11, $a10:11, $a2:3 }
        .endif
        .endif
        .endm

        .text
        .globl rows
        .type rows, @function
        .align 8
rows:
        .if PARTS
        setzi $m1, rows_part
        .rept R * P
        run $m1, $m0
        .endr
        sync 0
        setzi $m1, rows_merge
        .rept R
        run $m1, $m0
        .endr
        .else
        setzi $m1, rows_worker
        .rept 6
        run $m1, $m0
        .if WREC
        add $m0, $m0, 24
        .endif
        .endr
        .endif
        sync 0
        jmp $m15
        .size rows, . - rows

        .if PARTS
# Round 1: worker w, row r = w / P, part p = w % P: its Q = C / P groups
# (from group p * Q) combined into its partial pair at +4's w * 8.
        .type rows_part, @function
        .align 8
rows_part:
        .if R > 1
        mul $m7, $m1, (32 + P - 1) / P
        shr $m7, $m7, 5                # r
        setzi $m10, C * GSTEP - 8
        mul $m7, $m7, $m10
        .endif
        setzi $m8, NA * GSTEP
        mul $m8, $m1, $m8
        ld32 $m2, [$m0+0]
        add $m2, $m2, $m8              # w * Q * GSTEP
        .if R > 1
        sub $m2, $m2, $m7              # - r * (C * GSTEP - 8): p * Q * GSTEP + r * 8
        .endif
        ld32 $m9, [$m0+4]
        shl $m10, $m1, 3
        add $m9, $m9, $m10
        setzi $m13, HA * GSTEP
        .if OP == 12
        LDF $a14, INV_Q
        LN_ROW NA, GSTEP, 0
        .else
        SM_ROW NA, GSTEP, 0
        .endif
        exit
        .size rows_part, . - rows_part

# Round 2: worker r merges row r's P partial pairs.
        .type rows_merge, @function
        .align 8
rows_merge:
        ld32 $m2, [$m0+4]
        ld32 $m9, [$m0+16]
        .if R > 1
        mul $m7, $m1, P * 8
        add $m2, $m2, $m7
        shl $m7, $m1, 3
        add $m9, $m9, $m7
        .endif
        setzi $m13, HB * 8
        .if OP == 12
        LDF $a14, INV_P
        LDF $a15, EPS
        LN_ROW P, 8, 1
        .else
        SM_ROW P, 8, 1
        .endif
        exit
        .size rows_merge, . - rows_merge
        .endif

        .type rows_worker, @function
        .align 8
rows_worker:
        .if WREC
        ld32 $m6, [$m0+20]             # its rows (its record's words at them)
        brz $m6, rows_done
        .endif
        .if (WREC == 0) & (ITEMS <= 6)
        cmplt $m6, $m1, ITEMS          # one item, the worker's own, or none
        brz $m6, rows_done
        mov $m5, $m1
        .endif
        .if (WREC == 0) & (ITEMS > 6)
        setzi $m7, I_LO
        mul $m5, $m1, $m7
        min $m6, $m1, REM
        add $m5, $m5, $m6              # first item
        cmplt $m6, $m1, REM
        add $m6, $m6, $m7              # items
        brz $m6, rows_done
        .endif
        ld32 $m2, [$m0+0]
        ld32 $m9, [$m0+16]
        .if SCALED
        LDF $a13, SCALE
        .endif

# ---------------------------------------------------------------- rows
        .if VERT == 0
        .if WREC
        .if ((OP == 8) & EXPS) | ADD
        ld32 $m11, [$m0+8]             # e row, or s row
        .endif
        .if PRE
        ld32 $m4, [$m0+12]             # t row
        .endif
        .if MASK
        ld32 $m14, [$m0+4]             # v
        .endif
        .if ADD
        ld32 $m4, [$m0+4]              # y row
        .endif
        .if (OP == 10) | (OP == 13)
        ld32 $m3, [$m0+4]              # the row's pair
        .endif
        .if (OP == 10) & EXPS
        ld32 $m4, [$m0+8]              # the piece's own [m, s]
        .endif
        .else
        .if PAIRS_IN
        shl $m8, $m5, 3
        add $m2, $m2, $m8              # the row's pair in the first group
        add $m9, $m9, $m8              # out pair
        setzi $m13, HA * GSTEP
        .else
        setzi $m7, ROWB
        mul $m8, $m5, $m7
        add $m2, $m2, $m8              # x row
        .endif
        .if RED
        .if OB == 4
        shl $m7, $m5, 2
        .else
        shl $m7, $m5, 1
        .endif
        add $m9, $m9, $m7              # out element
        .endif
        .if (OP == 8) | (OP == 11)
        shl $m7, $m5, 3
        add $m9, $m9, $m7              # out pair
        .endif
        .if ADD
        ld32 $m4, [$m0+4]
        add $m4, $m4, $m8              # y row
        ld32 $m11, [$m0+8]
        add $m11, $m11, $m8            # s row
        .endif
        .if (OP == 8) & EXPS
        ld32 $m11, [$m0+8]
        add $m11, $m11, $m8            # e row
        .endif
        .if (RED == 0) & (OP < 8)
        add $m9, $m9, $m8              # y row
        .endif
        .if (OP == 10) | (OP == 13)
        .if CAST
        shr $m7, $m8, OSH
        add $m9, $m9, $m7              # y row (of the cast type)
        .else
        add $m9, $m9, $m8              # y row
        .endif
        ld32 $m3, [$m0+4]
        shl $m7, $m5, 3
        add $m3, $m3, $m7              # the row's pair
        .endif
        .if (OP == 10) & EXPS
        ld32 $m4, [$m0+8]
        add $m4, $m4, $m7              # the piece's own [m, s]
        .endif
        .endif
        .if CAST >= 3
        ld32 $m13, [$m0+8]             # gamma
        ld32 $m14, [$m0+12]            # beta
        setzi $m7, SCL & 0xfffff
        sethi $m7, (SCL >> 16) & 0xffff
        setscl $m7
        .endif
        .if (OP == 5) | (OP == 11) | (OP == 12)
        LDF $a14, INV_C
        .endif
        .if (OP == 5) | (OP == 12)
        LDF $a15, EPS
        .endif

        .if RED
row_red:
        .if (TYPE == 1) & (OP == 0)
        HSUM16
        .else
        FOLD VOP, GR, 8
        .if (OP == 0) & (TYPE == 0)
        f32v2hadd $a6, $a4:5
        .endif
        .if (OP == 1) & (TYPE == 0)
        f32v2hmax $a6, $a4:5
        .endif
        .if (OP == 1) & (TYPE == 1)
        f16v4hmax $a6, $a4:5
        .endif
        .if (OP == 2) & (TYPE == 0)
        f32v2neg $a4:5, $a4:5
        f32v2hmax $a6, $a4:5
        f32v2neg $a6:7, $a6:7
        .endif
        .if (OP == 2) & (TYPE == 1)
        f16v4neg $a4:5, $a4:5
        f16v4hmax $a6, $a4:5
        f32v2neg $a6:7, $a6:7
        .endif
        .endif
        .if SCALED
        f32mul $a6, $a6, $a13
        .endif
        .if OB == 4
        add $m6, $m6, -1
        st32 $a6, [$m9+=4]
        .else
        { add $m6, $m6, -1 ; cvt.f32.f16 $a6, $a6:7 }
        mov $m10, $a6
        st16 $m10, [$m9+=2]
        .endif
        brnz $m6, row_red
        .endif

        .if ((OP == 3) | (OP == 4)) & (TYPE == 0)
row_sm:
        mov $m3, $m2                   # x row start
        FOLD f32v2max, GR, 8
        f32v2hmax $a8, $a4:5
        { mov $m2, $m3 ; f32v2dup $a8:9, $a8 }
        # exp pass: e = exp(x - m) (stored for softmax), s = sum e
        { ld64 $a0:1, [$m2+=8] ; zero64 $a6:7 }
        f32v2sub $a2:3, $a0:1, $a8:9
        { mov $m4, $m9 ; f32v2exp $a4:5, $a2:3 }
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, sm_exp_end
        .if OP == 3
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
        .else
        { ld64 $a0:1, [$m2+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
        .endif
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2exp $a4:5, $a2:3
sm_exp_end:
        .endif
        .if OP == 3
        { st64 $a4:5, [$m9+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
        f32v2hadd $a6, $a6:7
        f32v2recip $a6:7, $a6:7
        { mov $m11, $m4 ; f32v2dup $a10:11, $a6 }
        ld64 $a0:1, [$m4+=8]
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, sm_scale_end
        { ldst64 $a0:1, [$m4+=8], $a4:5, [$m11+=8] ; f32v2mul $a4:5, $a0:1, $a10:11 }
sm_scale_end:
        .endif
        { st64 $a4:5, [$m11+=8] ; f32v2mul $a4:5, $a0:1, $a10:11 }
        .else
        f32v2add $a6:7, $a6:7, $a4:5
        f32v2hadd $a6, $a6:7
        f32v2log $a6:7, $a6:7
        mov $m2, $m3
        # y = (x - m) - log s: x - m is exact near m, m + log s need not be.
        f32v2dup $a10:11, $a6
        ld64 $a0:1, [$m2+=8]
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, lsm_sub_end
        f32v2sub $a2:3, $a0:1, $a8:9
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; f32v2sub $a4:5, $a2:3, $a10:11 }
lsm_sub_end:
        .endif
        f32v2sub $a2:3, $a0:1, $a8:9
        { st64 $a4:5, [$m9+=8] ; f32v2sub $a4:5, $a2:3, $a10:11 }
        .endif
        add $m6, $m6, -1
        brnz $m6, row_sm
        .endif

        .if ((OP == 3) | (OP == 4)) & (TYPE == 1)
row_smh:
        mov $m3, $m2
        FOLD f16v4max, GR, 8
        f16v4hmax $a12, $a4:5          # m (f32, an f16 value)
        { mov $m2, $m3 ; f16v4dup $a8:9, $a12 }
        { ld64 $a0:1, [$m2+=8] ; zero64 $a6:7 }
        f16v4sub $a2:3, $a0:1, $a8:9
        { mov $m4, $m9 ; f16v4exp $a4:5, $a2:3 }
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, smh_exp_end
        .if OP == 3
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; f16v4hadd $a10, $a4:5 }
        .else
        { ld64 $a0:1, [$m2+=8] ; f16v4hadd $a10, $a4:5 }
        .endif
        f32add $a6, $a6, $a10
        f16v4sub $a2:3, $a0:1, $a8:9
        f16v4exp $a4:5, $a2:3
smh_exp_end:
        .endif
        .if OP == 3
        { st64 $a4:5, [$m9+=8] ; f16v4hadd $a10, $a4:5 }
        .else
        f16v4hadd $a10, $a4:5
        .endif
        f32add $a6, $a6, $a10          # s (f32)
        .if OP == 3
        f32v2recip $a6:7, $a6:7
        { mov $m11, $m4 ; f16v4dup $a10:11, $a6 }
        ld64 $a0:1, [$m4+=8]
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, smh_scale_end
        { ldst64 $a0:1, [$m4+=8], $a4:5, [$m11+=8] ; f16v4mul $a4:5, $a0:1, $a10:11 }
smh_scale_end:
        .endif
        { st64 $a4:5, [$m11+=8] ; f16v4mul $a4:5, $a0:1, $a10:11 }
        .else
        f32v2log $a6:7, $a6:7
        { mov $m2, $m3 ; f32add $a6, $a6, $a12 }
        f16v4dup $a10:11, $a6           # c = m + log s, rounded to f16
        ld64 $a0:1, [$m2+=8]
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, lsmh_sub_end
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; f16v4sub $a4:5, $a0:1, $a10:11 }
lsmh_sub_end:
        .endif
        { st64 $a4:5, [$m9+=8] ; f16v4sub $a4:5, $a0:1, $a10:11 }
        .endif
        add $m6, $m6, -1
        brnz $m6, row_smh
        .endif

        .if (OP == 5) & (TYPE == 0)
row_ln:
        LN_MOMENTS32
        f32add $a6, $a6, $a15
        f32v2rsqrt $a6:7, $a6:7
        f32v2dup $a10:11, $a6          # rstd
        LN_NORM32
        add $m6, $m6, -1
        brnz $m6, row_ln
        .endif

        .if (OP == 5) & (TYPE == 1)
row_lnh:
        LN_MOMENTS16
        f32add $a6, $a6, $a15
        f32v2rsqrt $a6:7, $a6:7
        f32mul $a12, $a12, $a6         # c = (m' - m) * rstd
        f16v4dup $a10:11, $a6          # rstd
        f16v4dup $a12:13, $a12
        LN_NORM16
        add $m6, $m6, -1
        brnz $m6, row_lnh
        .endif

        .if ADD
# s = x + y stored as the sum is taken (its loads one granule ahead, none
# past the row), then LN_MOMENTS32's arithmetic on s, as row_lst32.
row_lsa:
        mov $m3, $m11                  # the row's s
        { ld2x64 $a0:1, [$m2+=8], $a2:3, [$m4+=8] ; zero64 $a4:5 }
        .if GR > 1
        { ld2x64 $a0:1, [$m2+=8], $a2:3, [$m4+=8] ; f32v2add $a10:11, $a0:1, $a2:3 }
        .if GR > 2
        setzi $m10, GR - 2
        rpt $m10, lsa_sum_end
        { st64 $a10:11, [$m11+=8] ; f32v2add $a4:5, $a4:5, $a10:11 }
        { ld2x64 $a0:1, [$m2+=8], $a2:3, [$m4+=8] ; f32v2add $a10:11, $a0:1, $a2:3 }
lsa_sum_end:
        .endif
        { st64 $a10:11, [$m11+=8] ; f32v2add $a4:5, $a4:5, $a10:11 }
        .endif
        f32v2add $a10:11, $a0:1, $a2:3
        { st64 $a10:11, [$m11+=8] ; f32v2add $a4:5, $a4:5, $a10:11 }
        f32v2hadd $a6, $a4:5
        f32mul $a6, $a6, $a14          # mean
        LN_VAR_PAIR $m3, lsa_end
        brnz $m6, row_lsa
        .endif

        .if (OP == 11) & (TYPE == 0) & (ADD == 0)
# LN_MOMENTS32's arithmetic, in that order, into [mean, var] = $a6:7; the
# variance pass ends at the next row.
row_lst32:
        mov $m3, $m2
        FOLD f32v2add, GR, 8
        f32v2hadd $a6, $a4:5
        { mov $m2, $m3 ; f32mul $a6, $a6, $a14 }       # mean
        LN_VAR_PAIR $m2, lst32_end
        brnz $m6, row_lst32
        .endif

        .if (OP == 11) & (TYPE == 1)
row_lst:
        LN_MOMENTS16
        cvt.f16.f32 $a2:3, $a8
        f32sub $a2, $a2, $a12          # mean = m' - (m' - mean)
        mova $a7, $a6
        mova $a6, $a2
        setzi $m10, ROWB
        add $m2, $m2, $m10             # next row
        add $m6, $m6, -1
        st64 $a6:7, [$m9+=8]
        brnz $m6, row_lst
        .endif

        .if OP == 12
row_lcb:
        LN_ROW C, GSTEP, 1
        add $m2, $m2, 8
        add $m6, $m6, -1
        brnz $m6, row_lcb
        .endif

        .if (OP == 13) & (CAST >= 3)
        setzi $m10, GR / 2 - 1
row_lap8:
        ld64 $a6:7, [$m3+=8]           # [mean, rstd]
        { mov $m11, $m13 ; f32v2dup $a8:9, $a6 }
        { mov $m12, $m14 ; f32v2dup $a10:11, $a7 }
        ld64 $a0:1, [$m2+=8]
        .if GR > 2
        rpt $m10, lap8_end
        LN8 $a6, 1
        LN8 $a7, 1
        { st32 $a6, [$m9+=4] ; pack16 $a6, $a6, $a7 }
lap8_end:
        .endif
        LN8 $a6, 1
        LN8 $a7, 0
        { st32 $a6, [$m9+=4] ; pack16 $a6, $a6, $a7 }
        brnz $m6, row_lap8
        .endif

        .if (OP == 13) & (CAST == 0)
row_lap:
        ld64 $a6:7, [$m3+=8]           # [mean, rstd]
        .if TYPE == 0
        f32v2dup $a8:9, $a6
        f32v2dup $a10:11, $a7
        LN_NORM32
        .else
        f16v4dup $a8:9, $a6            # m'
        cvt.f16.f32 $a2:3, $a8
        f32sub $a12, $a2, $a6
        f32mul $a12, $a12, $a7         # c = (m' - mean) * rstd
        f16v4dup $a10:11, $a7
        f16v4dup $a12:13, $a12
        LN_NORM16
        .endif
        add $m6, $m6, -1
        brnz $m6, row_lap
        .endif

        .if (OP == 8) & PRE
# The prologue's rows: t = widen(x * MULV) + v stored at $m4 as its max is
# taken (PRE_G), then the exp pass over t from $m3 (as row_st32's, its sum
# starting at the first granule's exponentials: 0 + e is e).
        .if MUL
        LDF $a13, MULV
        .if WIDEN
        f16v4dup $a14:15, $a13         # MULV in four f16 lanes
        .else
        f32v2dup $a14:15, $a13
        .endif
        .endif
        .if GX > 2
        setzi $m12, GX - 2
        .endif
        setzi $m13, GR - 2
        mov $m3, $m4                   # the row's t, for the exp pass (which ends at the next)
        .if MASK
        mov $m5, $m14                  # v (again for each row in the exp pass)
        .endif
row_pre:
        .if MASK & (WIDEN == 0)
        ld2x64 $a0:1, [$m2+=8], $a6:7, [$m5+=8]
        .else
        ld64 $a0:1, [$m2+=8]
        .endif
        PRE_G 1, 1
        .if GX > 2
        rpt $m12, pre_end
        PRE_G 0, 1
pre_end:
        .endif
        PRE_G 0, 0
        { ld64 $a0:1, [$m3+=8] ; f32v2hmax $a12, $a10:11 }   # m
        { add $m6, $m6, -1 ; f32v2dup $a8:9, $a12 }
        .if MASK
        { mov $m5, $m14 ; f32v2sub $a2:3, $a0:1, $a8:9 }
        .else
        f32v2sub $a2:3, $a0:1, $a8:9
        .endif
        { ld64 $a0:1, [$m3+=8] ; f32v2exp $a6:7, $a2:3 }
        f32v2sub $a2:3, $a0:1, $a8:9
        .if EXPS
        { st64 $a6:7, [$m11+=8] ; f32v2exp $a4:5, $a2:3 }
        .else
        f32v2exp $a4:5, $a2:3
        .endif
        EXP_SUM $m3
        brnz $m6, row_pre
        .endif

        .if (OP == 8) & (TYPE == 0) & (GR >= 3) & (PRE == 0)
# The f32 rows below, the loop counts in registers and each row's max
# taken through $m3 (both pointers end at the next row).
        setzi $m12, GR - 2
        setzi $m13, GR - 1
        mov $m3, $m2
row_st32:
        { ld64 $a4:5, [$m3+=8] ; zero64 $a6:7 }
        ld64 $a0:1, [$m3+=8]
        rpt $m12, st32_max_end
        { ld64 $a0:1, [$m3+=8] ; f32v2max $a4:5, $a4:5, $a0:1 }
st32_max_end:
        f32v2max $a4:5, $a4:5, $a0:1
        f32v2hmax $a12, $a4:5          # m
        { ld64 $a0:1, [$m2+=8] ; f32v2dup $a8:9, $a12 }
        { add $m6, $m6, -1 ; f32v2sub $a2:3, $a0:1, $a8:9 }
        f32v2exp $a4:5, $a2:3
        EXP_SUM $m2
        brnz $m6, row_st32
        .endif

        .if (OP == 8) & ((TYPE == 1) | (GR < 3)) & (PRE == 0)
row_st:
        mov $m3, $m2
        .if TYPE == 0
        FOLD f32v2max, GR, 8
        f32v2hmax $a12, $a4:5          # m
        { mov $m2, $m3 ; f32v2dup $a8:9, $a12 }
        { ld64 $a0:1, [$m2+=8] ; zero64 $a6:7 }
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2exp $a4:5, $a2:3
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, st_exp_end
        .if EXPS
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m11+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
        .else
        { ld64 $a0:1, [$m2+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
        .endif
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2exp $a4:5, $a2:3
st_exp_end:
        .endif
        .if EXPS
        { st64 $a4:5, [$m11+=8] ; f32v2add $a6:7, $a6:7, $a4:5 }
        .else
        f32v2add $a6:7, $a6:7, $a4:5
        .endif
        f32v2hadd $a7, $a6:7           # s
        .else
        FOLD f16v4max, GR, 8
        f16v4hmax $a12, $a4:5          # m (an f16 value)
        { mov $m2, $m3 ; f16v4dup $a8:9, $a12 }
        { ld64 $a0:1, [$m2+=8] ; zero64 $a6:7 }
        f16v4sub $a2:3, $a0:1, $a8:9
        f16v4exp $a4:5, $a2:3
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, sth_exp_end
        .if EXPS
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m11+=8] ; f16v4hadd $a10, $a4:5 }
        .else
        { ld64 $a0:1, [$m2+=8] ; f16v4hadd $a10, $a4:5 }
        .endif
        f32add $a6, $a6, $a10
        f16v4sub $a2:3, $a0:1, $a8:9
        f16v4exp $a4:5, $a2:3
sth_exp_end:
        .endif
        .if EXPS
        { st64 $a4:5, [$m11+=8] ; f16v4hadd $a10, $a4:5 }
        .else
        f16v4hadd $a10, $a4:5
        .endif
        f32add $a7, $a6, $a10          # s
        .endif
        { add $m6, $m6, -1 ; mova $a6, $a12 }
        st64 $a6:7, [$m9+=8]
        brnz $m6, row_st
        .endif

        .if OP == 9
row_cb:
        SM_ROW C, GSTEP, 1
        add $m2, $m2, 8
        add $m6, $m6, -1
        brnz $m6, row_cb
        .endif

        .if OP == 10
        .if TYPE == 0
        .define SUBV f32v2sub
        .define EXPV f32v2exp
        .define MULV f32v2mul
        .define DUPV f32v2dup
        .else
        .define SUBV f16v4sub
        .define EXPV f16v4exp
        .define MULV f16v4mul
        .define DUPV f16v4dup
        .endif
row_ap:
        ld64 $a10:11, [$m3+=8]
        .if EXPS
        # f = exp(m - M) / S, m the piece's own max: y = e * f.
        ld64 $a0:1, [$m4+=8]
        f32v2sub $a2:3, $a0:1, $a10:11
        f32v2exp $a2:3, $a2:3
        { ld64 $a0:1, [$m2+=8] ; f32mul $a2, $a2, $a11 }
        .if CAST == 1
        # y = e * f rounded to f16 as the cast after it would.
        { add $m6, $m6, -1 ; DUPV $a10:11, $a2 }
        .if GR > 1
        { setzi $m10, GR - 1 ; MULV $a4:5, $a0:1, $a10:11 }
        rpt $m10, apc_end
        { ld64 $a0:1, [$m2+=8] ; cvt.f32.f16 $a6, $a4:5 }
        { st32 $a6, [$m9+=4] ; MULV $a4:5, $a0:1, $a10:11 }
apc_end:
        .else
        MULV $a4:5, $a0:1, $a10:11
        .endif
        { st32 $a6, [$m9+=4] ; cvt.f32.f16 $a6, $a4:5 }
        .else
        .if GR > 1
        { setzi $m10, GR - 1 ; DUPV $a10:11, $a2 }
        rpt $m10, ape_end
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; MULV $a4:5, $a0:1, $a10:11 }
ape_end:
        .else
        DUPV $a10:11, $a2
        .endif
        { st64 $a4:5, [$m9+=8] ; MULV $a4:5, $a0:1, $a10:11 }
        .endif
        .endif
        .if (LOG == 0) & (EXPS == 0)
        DUPV $a8:9, $a10               # M
        DUPV $a10:11, $a11             # 1 / S
        ld64 $a0:1, [$m2+=8]
        SUBV $a2:3, $a0:1, $a8:9
        EXPV $a2:3, $a2:3
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, ap_end
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; MULV $a4:5, $a2:3, $a10:11 }
        SUBV $a2:3, $a0:1, $a8:9
        EXPV $a2:3, $a2:3
ap_end:
        .endif
        { st64 $a4:5, [$m9+=8] ; MULV $a4:5, $a2:3, $a10:11 }
        .endif
        .if LOG
        DUPV $a10:11, $a10             # M + log S
        ld64 $a0:1, [$m2+=8]
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, lap_end
        { ldst64 $a0:1, [$m2+=8], $a4:5, [$m9+=8] ; SUBV $a4:5, $a0:1, $a10:11 }
lap_end:
        .endif
        { st64 $a4:5, [$m9+=8] ; SUBV $a4:5, $a0:1, $a10:11 }
        .endif
        .if CAST == 0
        add $m6, $m6, -1
        .endif
        brnz $m6, row_ap
        .endif

        .if RVEC
        ld32 $m11, [$m0+8]
        .if RV_UNROLL
        # One repeat over the rows, a row's granules unrolled: the last
        # granule's op and store share a bundle.
        rpt $m6, rvu_end
        mov $m12, $m11
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m12+=8]
        .rept GR - 1
        { ld2st64 $a0:1, [$m2+=8], $a2:3, [$m12+=8], $a4:5, [$m9+=8] ; VOP $a4:5, $a0:1, $a2:3 }
        .endr
        { st64 $a4:5, [$m9+=8] ; VOP $a4:5, $a0:1, $a2:3 }
rvu_end:
        .else
row_vec:
        mov $m12, $m11
        ld2x64 $a0:1, [$m2+=8], $a2:3, [$m12+=8]
        .if GR > 1
        setzi $m10, GR - 1
        rpt $m10, rv_end
        { ld2st64 $a0:1, [$m2+=8], $a2:3, [$m12+=8], $a4:5, [$m9+=8] ; VOP $a4:5, $a0:1, $a2:3 }
rv_end:
        .endif
        { st64 $a4:5, [$m9+=8] ; VOP $a4:5, $a0:1, $a2:3 }
        add $m6, $m6, -1
        brnz $m6, row_vec
        .endif
        .endif

# ------------------------------------------------------------- columns
        .else
        # item k = (row, granule column): r0 = k / GI, j = k % GI
        setzi $m7, GI
        divu $m8, $m5, $m7
        mul $m13, $m8, $m7
        sub $m13, $m5, $m13            # j
        setzi $m7, ROWSTEP
        mul $m10, $m8, $m7
        add $m3, $m2, $m10
        shl $m10, $m13, 3
        add $m3, $m3, $m10             # x column
        setzi $m14, ROWSTEP - GI * 8   # from past the last column to the next row
        .if RED
        setzi $m7, I
        mul $m10, $m8, $m7
        shl $m11, $m13, 1
        add $m10, $m10, $m11
        .if OB == 4
        shl $m10, $m10, 2
        .else
        shl $m10, $m10, 1
        .endif
        add $m9, $m9, $m10             # out
        .else
        sub $m12, $m9, $m2             # y - x
        .endif
        .if SCALED
        f32v2dup $a12:13, $a13
        .endif

        .if RED
col_red:
        mov $m2, $m3
        FOLD VOP, C, PITCH
        .if SCALED
        f32v2mul $a4:5, $a4:5, $a12:13
        .endif
        .if OB == 2
        cvt.f32.f16 $a6, $a4:5
        .endif
        .if TAIL
        cmpeq $m10, $m13, GI - 1
        brnz $m10, col_tail
        .endif
        .if OB == 4
        st64 $a4:5, [$m9+=8]
        .else
        st32 $a6, [$m9+=4]
        .endif
        .if TAIL
        br col_next
col_tail:
        .if OB == 4
        st32 $a4, [$m9+=4]
        .else
        mov $m10, $a6
        st16 $m10, [$m9+=2]
        .endif
col_next:
        .endif
        .else
col_sm:
        mov $m2, $m3
        add $m4, $m3, $m12             # y column
        FOLD f32v2max, C, PITCH
        { mov $m2, $m3 ; mov64 $a8:9, $a4:5 }        # m per column
        { mov $m9, $m4 ; zero64 $a6:7 }
        ld64 $a0:1, [$m2+=PITCH]
        f32v2sub $a2:3, $a0:1, $a8:9
        f32v2exp $a4:5, $a2:3
        .if C > 1
        setzi $m10, C - 1
        rpt $m10, csm_exp_end
        { ld64 $a0:1, [$m2+=PITCH] ; f32v2add $a6:7, $a6:7, $a4:5 }
        .if OP == 3
        { st64 $a4:5, [$m9+=PITCH] ; f32v2sub $a2:3, $a0:1, $a8:9 }
        .else
        f32v2sub $a2:3, $a0:1, $a8:9
        .endif
        f32v2exp $a4:5, $a2:3
csm_exp_end:
        .endif
        .if OP == 3
        { st64 $a4:5, [$m9+=PITCH] ; f32v2add $a6:7, $a6:7, $a4:5 }
        f32v2recip $a10:11, $a6:7
        mov $m9, $m4
        ld64 $a0:1, [$m4+=PITCH]
        .if C > 1
        setzi $m10, C - 1
        rpt $m10, csm_scale_end
        { ld64 $a0:1, [$m4+=PITCH] ; f32v2mul $a4:5, $a0:1, $a10:11 }
        st64 $a4:5, [$m9+=PITCH]
csm_scale_end:
        .endif
        { st64 $a4:5, [$m9+=PITCH] ; f32v2mul $a4:5, $a0:1, $a10:11 }
        .else
        f32v2add $a6:7, $a6:7, $a4:5
        f32v2log $a6:7, $a6:7
        f32v2add $a10:11, $a6:7, $a8:9   # c = m + log s
        mov $m2, $m3
        mov $m9, $m4
        ld64 $a0:1, [$m2+=PITCH]
        .if C > 1
        setzi $m10, C - 1
        rpt $m10, clsm_sub_end
        { ld64 $a0:1, [$m2+=PITCH] ; f32v2sub $a4:5, $a0:1, $a10:11 }
        st64 $a4:5, [$m9+=PITCH]
clsm_sub_end:
        .endif
        { st64 $a4:5, [$m9+=PITCH] ; f32v2sub $a4:5, $a0:1, $a10:11 }
        .endif
        .endif
        # next granule column (and row)
        add $m13, $m13, 1
        add $m3, $m3, 8
        .if R > 1
        cmpeq $m10, $m13, GI
        mul $m11, $m10, $m14
        add $m3, $m3, $m11
        mul $m10, $m10, GI
        sub $m13, $m13, $m10
        .endif
        add $m6, $m6, -1
        .if RED
        brnz $m6, col_red
        .else
        brnz $m6, col_sm
        .endif
        .endif
rows_done:
        exit
        .size rows_worker, . - rows_worker
