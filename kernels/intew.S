# Integer and boolean elementwise ops: arithmetic and comparisons of i32
# or i64, select of i32 or i64 values, and the casts between booleans,
# integers and floats that masks, shapes and indices take on their way to
# the float ops.
#
# Integers and shapes are small next to the float tensors, so the kernel
# runs on the supervisor alone (one issue a cycle, no workers started):
# one element a loop turn, straight through the block. Arithmetic wraps
# (two's complement, as the reference interpreter's); division truncates
# towards zero and a zero divisor faults (`divu`); pow of a negative
# exponent is 1 for base 1, +-1 for base -1 and 0 otherwise, and an i64
# exponent above 2^32 - 1 counts as 2^32 - 1 (the reference's cap).
#
# State ($m0): +0 in0, +4 in1 (binary ops and select), +8 in2 (select),
# +12 out. Buffers hold N elements one after another (booleans one byte
# 0/1 each; any non-zero byte reads as true); nothing past the N-th element
# is read or written.
# Call: `call $m15, intew`; returns with `jmp $m15`.
#
# OP: 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow (W-byte integers);
#     8 eq, 9 lt, 10 gt (W-byte integers, or W = 1 booleans, to booleans);
#     12 select (a boolean, then two W-byte integers or W = 1 booleans);
#     16 W-byte integer (or boolean, W = 1) to boolean (x != 0);
#     17 boolean to W-byte integer 0/1;
#     18 boolean to float: W = 4 f32, W = 2 f16 (0.0 / 1.0);
#     19 i32 to i64 (sign extended); 20 i64 to i32 (the low 32 bits);
#     21 any, 22 all: boolean reductions (ONNX ReduceMax, ReduceMin of
#     booleans) of N results, result k = o * I + i (o < N / I, i < I)
#     reducing the L booleans at in0 + (o * L + l) * I + i, l < L;
#     23 f32 to a W-byte integer (towards zero; beyond the i64 range the
#     nearest i64, NaN 0; i32 the i64's low 32 bits, as the reference's
#     cast); 24 f32 to boolean (x != 0; NaN is true).
# W: the integers' bytes, 4 (i32) or 8 (i64); see OP for 16..20.

        .param OP, 0
        .param W, 4
        .param N, 1
        .param L, 1
        .param I, 1

        .if (N <= 0) | (N >= 0x100000)
        .error "N must be 1 .. 2^20 - 1"
        .endif
        .set ARITH, OP <= 6
        .set CMP, (OP >= 8) & (OP <= 10)
        .set SEL, OP == 12
        .if ARITH & (W != 4) & (W != 8)
        .error "W must be 4 (i32) or 8 (i64)"
        .endif
        .if (CMP | SEL) & (W != 1) & (W != 4) & (W != 8)
        .error "W of a comparison or select must be 1 (i1), 4 (i32) or 8 (i64)"
        .endif
        .if (OP == 16) & (W != 1) & (W != 4) & (W != 8)
        .error "W of a cast to boolean must be 1, 4 or 8"
        .endif
        .if (OP == 17) & (W != 4) & (W != 8)
        .error "W of a cast from boolean must be 4 or 8"
        .endif
        .if (OP == 18) & (W != 2) & (W != 4)
        .error "W of a boolean to float must be 4 (f32) or 2 (f16)"
        .endif
        .set RED, (OP == 21) | (OP == 22)
        .if (OP < 0) | ((ARITH | CMP | SEL | RED | ((OP >= 16) & (OP <= 20)) | (OP == 23) | (OP == 24)) == 0)
        .error "OP must be 0..6, 8..10, 12 or 16..24"
        .endif
        .if (OP == 23) & (W != 4) & (W != 8)
        .error "W of a cast from f32 must be 4 (i32) or 8 (i64)"
        .endif
        .if RED & ((L <= 0) | (I <= 0) | (N % I != 0) | (L * N >= 0x100000))
        .error "a boolean reduction needs L, I > 0, N a multiple of I and L * N below 2^20"
        .endif
        # Cycles: the set-up (5), then per element the body's issues (PER,
        # the division and pow bodies at their longest) and the loop's 2.
        .set W8, W == 8
        .set PER, 6 + 3 * W8
        .if OP == 2
        .set PER, 5 + 24 * W8
        .endif
        .if OP == 3
        .set PER, 17 + 1500 * W8
        .endif
        .if (OP == 4) | (OP == 5)
        .set PER, 5 + 9 * W8
        .endif
        .if OP == 6
        .set PER, 13 * 32 + 60 * 32 * W8
        .endif
        .if SEL
        .set PER, 9 + 4 * W8
        .endif
        .if RED
        .set PER, 12 + 7 * L
        .endif
        .if OP == 23
        .set PER, 40
        .endif
        .cycles "6 + N * (PER + 2)"

        # Loads the next integer of \p into \lo (and \hi for i64); a
        # boolean (W = 1) as 0 or 1.
        .macro LDI lo, hi, p
        .if W == 1
        ld8 \lo, [\p+=1]
        cmpeq \lo, \lo, 0
        add \lo, \lo, -1
        and \lo, \lo, 1
        .else
        ld32 \lo, [\p+=4]
        .endif
        .if W8
        ld32 \hi, [\p+=4]
        .endif
        .endm
        # Stores \lo (and \hi for i64) at the output.
        .macro STI lo, hi
        .if W == 1
        st8 \lo, [$m5+=1]
        .else
        st32 \lo, [$m5+=4]
        .endif
        .if W8
        st32 \hi, [$m5+=4]
        .endif
        .endm
        # \r = (a < b) signed, a = \al:\ah, b = \bl:\bh; \t scratch.
        .macro LT64 r, al, ah, bl, bh, t
        cmpeq \t, \ah, \bh
        cmpult \r, \al, \bl
        and \t, \t, \r
        cmplt \r, \ah, \bh
        or \r, \r, \t
        .endm
        # (\rl, \rh) = (\al, \ah) * (\bl, \bh), the low 64 bits; the outputs
        # and \t1..\t4 differ from the inputs.
        .macro MUL64 rl, rh, al, ah, bl, bh, t1, t2, t3, t4
        mul \rh, \al, \bh
        mul \t1, \ah, \bl
        add \rh, \rh, \t1
        and \t1, \al, 0xffff
        shr \t2, \al, 16
        and \t3, \bl, 0xffff
        shr \t4, \bl, 16
        mul \rl, \t1, \t3
        mul \t1, \t1, \t4
        mul \t4, \t2, \t4
        mul \t2, \t2, \t3
        add \t3, \t1, \t2
        cmpult \t1, \t3, \t1
        shl \t1, \t1, 16
        add \t4, \t4, \t1
        shr \t1, \t3, 16
        add \t4, \t4, \t1
        shl \t3, \t3, 16
        add \t2, \rl, \t3
        cmpult \t1, \t2, \rl
        add \t4, \t4, \t1
        add \rh, \rh, \t4
        mov \rl, \t2
        .endm
        # (\lo, \hi) = -(\lo, \hi) where \s is all ones, unchanged where 0.
        .macro NEG64 lo, hi, s, t, u
        xor \lo, \lo, \s
        xor \hi, \hi, \s
        and \t, \s, 1
        add \u, \lo, \t
        cmpult \t, \u, \lo
        add \hi, \hi, \t
        mov \lo, \u
        .endm

        .if (OP <= 2) | (OP == 4) | (OP == 5)
        .if OP == 0
        .define IOP add
        .endif
        .if OP == 1
        .define IOP sub
        .endif
        .if OP == 2
        .define IOP mul
        .endif
        .if OP == 4
        .define IOP max
        .endif
        .if OP == 5
        .define IOP min
        .endif
        .macro BODY
        LDI $m7, $m8, $m2
        LDI $m9, $m10, $m3
        .if W8 == 0
        IOP $m11, $m7, $m9
        .endif
        .if W8 & (OP == 0)
        add $m11, $m7, $m9
        cmpult $m1, $m11, $m7
        add $m12, $m8, $m10
        add $m12, $m12, $m1
        .endif
        .if W8 & (OP == 1)
        sub $m11, $m7, $m9
        cmpult $m1, $m7, $m9
        sub $m12, $m8, $m10
        sub $m12, $m12, $m1
        .endif
        .if W8 & (OP == 2)
        MUL64 $m11, $m12, $m7, $m8, $m9, $m10, $m1, $m6, $m13, $m14
        .endif
        .if W8 & ((OP == 4) | (OP == 5))
        # m = all ones where a < b; max takes b there, min a.
        LT64 $m1, $m7, $m8, $m9, $m10, $m6
        mul $m1, $m1, -1
        xor $m13, $m7, $m9
        and $m13, $m13, $m1
        xor $m14, $m8, $m10
        and $m14, $m14, $m1
        .if OP == 4
        xor $m11, $m7, $m13
        xor $m12, $m8, $m14
        .else
        xor $m11, $m9, $m13
        xor $m12, $m10, $m14
        .endif
        .endif
        STI $m11, $m12
        .endm
        .endif

        .if (OP == 3) & (W8 == 0)
        .macro BODY
        ld32 $m7, [$m2+=4]
        ld32 $m8, [$m3+=4]
        sar $m9, $m7, 31
        sar $m10, $m8, 31
        xor $m11, $m9, $m10
        xor $m7, $m7, $m9
        sub $m7, $m7, $m9
        xor $m8, $m8, $m10
        sub $m8, $m8, $m10
        divu $m7, $m7, $m8
        xor $m7, $m7, $m11
        sub $m7, $m7, $m11
        st32 $m7, [$m5+=4]
        .endm
        .endif

        # i64 division: magnitudes, 64 steps of shift and subtract (the
        # quotient's bits enter the dividend's registers from below), the
        # sign (kept in the output's slot meanwhile).
        .if (OP == 3) & W8
        .macro BODY
        LDI $m7, $m8, $m2
        LDI $m9, $m10, $m3
        or $m1, $m9, $m10
        divu $m1, $m1, $m1
        sar $m11, $m8, 31
        sar $m12, $m10, 31
        xor $m13, $m11, $m12
        st32 $m13, [$m5+0]
        NEG64 $m7, $m8, $m11, $m13, $m14
        NEG64 $m9, $m10, $m12, $m13, $m14
        setzi $m11, 0
        setzi $m12, 0
        setzi $m1, 64
intew_div_step:
        shl $m12, $m12, 1
        shr $m6, $m11, 31
        or $m12, $m12, $m6
        shl $m11, $m11, 1
        shr $m6, $m8, 31
        or $m11, $m11, $m6
        shl $m8, $m8, 1
        shr $m6, $m7, 31
        or $m8, $m8, $m6
        shl $m7, $m7, 1
        cmpult $m6, $m12, $m10
        cmpeq $m13, $m12, $m10
        cmpult $m14, $m11, $m9
        and $m13, $m13, $m14
        or $m6, $m6, $m13
        brnz $m6, intew_div_next
        cmpult $m14, $m11, $m9
        sub $m11, $m11, $m9
        sub $m12, $m12, $m10
        sub $m12, $m12, $m14
        or $m7, $m7, 1
intew_div_next:
        add $m1, $m1, -1
        brnz $m1, intew_div_step
        ld32 $m13, [$m5+0]
        NEG64 $m7, $m8, $m13, $m11, $m12
        STI $m7, $m8
        .endm
        .endif

        # pow: square and multiply over the exponent's bits.
        .if OP == 6
        .macro BODY
        LDI $m7, $m8, $m2
        LDI $m11, $m12, $m3
        .if W8
        brneg $m12, intew_pow_negative
        # An exponent of 2^32 or more counts as 2^32 - 1.
        cmpeq $m1, $m12, 0
        add $m1, $m1, -1
        or $m11, $m11, $m1
        .else
        brneg $m11, intew_pow_negative
        .endif
        setzi $m9, 1
        setzi $m10, 0
intew_pow_bit:
        brz $m11, intew_pow_store
        and $m1, $m11, 1
        brz $m1, intew_pow_square
        .if W8
        MUL64 $m12, $m13, $m9, $m10, $m7, $m8, $m1, $m6, $m14, $m4
        mov $m9, $m12
        mov $m10, $m13
        .else
        mul $m9, $m9, $m7
        .endif
intew_pow_square:
        .if W8
        MUL64 $m12, $m13, $m7, $m8, $m7, $m8, $m1, $m6, $m14, $m4
        mov $m7, $m12
        mov $m8, $m13
        .else
        mul $m7, $m7, $m7
        .endif
        shr $m11, $m11, 1
        br intew_pow_bit
intew_pow_negative:
        # base 1: 1; base -1: -1 for an odd exponent, else 1; else 0.
        .if W8
        cmpeq $m6, $m8, 0
        cmpeq $m1, $m7, 1
        and $m9, $m1, $m6
        cmpeq $m6, $m8, -1
        cmpeq $m1, $m7, -1
        and $m1, $m1, $m6
        .else
        cmpeq $m9, $m7, 1
        cmpeq $m1, $m7, -1
        .endif
        and $m6, $m11, 1
        shl $m6, $m6, 1
        setzi $m10, 1
        sub $m6, $m10, $m6
        mul $m1, $m1, $m6
        add $m9, $m9, $m1
        sar $m10, $m9, 31
intew_pow_store:
        STI $m9, $m10
        .endm
        .endif

        .if CMP
        .macro BODY
        LDI $m7, $m8, $m2
        LDI $m9, $m10, $m3
        .if W8 == 0
        .if OP == 8
        cmpeq $m11, $m7, $m9
        .endif
        .if OP == 9
        cmplt $m11, $m7, $m9
        .endif
        .if OP == 10
        cmplt $m11, $m9, $m7
        .endif
        .else
        .if OP == 8
        cmpeq $m11, $m7, $m9
        cmpeq $m12, $m8, $m10
        and $m11, $m11, $m12
        .endif
        .if OP == 9
        LT64 $m11, $m7, $m8, $m9, $m10, $m12
        .endif
        .if OP == 10
        LT64 $m11, $m9, $m10, $m7, $m8, $m12
        .endif
        .endif
        st8 $m11, [$m5+=1]
        .endm
        .endif

        .if SEL
        .macro BODY
        ld8 $m1, [$m2+=1]
        LDI $m7, $m8, $m3
        LDI $m9, $m10, $m4
        # m = all ones where the condition holds.
        cmpeq $m1, $m1, 0
        add $m1, $m1, -1
        xor $m11, $m7, $m9
        and $m11, $m11, $m1
        xor $m11, $m11, $m9
        .if W8
        xor $m12, $m8, $m10
        and $m12, $m12, $m1
        xor $m12, $m12, $m10
        .endif
        STI $m11, $m12
        .endm
        .endif

        .if OP == 16
        .macro BODY
        .if W == 1
        ld8 $m7, [$m2+=1]
        .else
        LDI $m7, $m8, $m2
        .endif
        .if W8
        or $m7, $m7, $m8
        .endif
        cmpeq $m7, $m7, 0
        add $m7, $m7, -1
        and $m7, $m7, 1
        st8 $m7, [$m5+=1]
        .endm
        .endif

        .if (OP == 17) | (OP == 18)
        .macro BODY
        ld8 $m7, [$m2+=1]
        cmpeq $m7, $m7, 0
        add $m7, $m7, -1
        and $m7, $m7, 1
        .if OP == 17
        setzi $m8, 0
        STI $m7, $m8
        .endif
        .if (OP == 18) & (W == 4)
        mul $m7, $m7, 127
        shl $m7, $m7, 23
        st32 $m7, [$m5+=4]
        .endif
        .if (OP == 18) & (W == 2)
        mul $m7, $m7, 15
        shl $m7, $m7, 10
        st16 $m7, [$m5+=2]
        .endif
        .endm
        .endif

        .if OP == 19
        .macro BODY
        ld32 $m7, [$m2+=4]
        sar $m8, $m7, 31
        st32 $m7, [$m5+=4]
        st32 $m8, [$m5+=4]
        .endm
        .endif

        # A boolean reduction: $m3 counts the results left in the current
        # run of I (the input pointer then skips the other L - 1 rows).
        .if RED
        .macro BODY
        mov $m7, $m2
        setzi $m8, L
        setzi $m9, OP == 22
        setzi $m11, I
intew_red_step:
        ld8 $m10, [$m7+0]
        add $m7, $m7, $m11
        cmpeq $m10, $m10, 0
        add $m10, $m10, -1
        and $m10, $m10, 1
        .if OP == 21
        or $m9, $m9, $m10
        .else
        and $m9, $m9, $m10
        .endif
        add $m8, $m8, -1
        brnz $m8, intew_red_step
        st8 $m9, [$m5+=1]
        add $m2, $m2, 1
        add $m3, $m3, -1
        brnz $m3, intew_red_next
        setzi $m3, I
        setzi $m12, (L - 1) * I
        add $m2, $m2, $m12
intew_red_next:
        .endm
        .endif

        # f32 to integers: the magnitude m x 2^(e - 150) of the 24-bit
        # significand m shifted into 64 bits, then the sign.
        .if OP == 23
        .macro BODY
        ld32 $m7, [$m2+=4]
        sar $m8, $m7, 31
        shr $m9, $m7, 23
        and $m9, $m9, 0xff
        shl $m10, $m7, 9
        shr $m10, $m10, 9
        setzi $m11, 0
        sethi $m11, 0x80
        or $m10, $m10, $m11
        setzi $m11, 0
        setzi $m12, 0
        cmplt $m13, $m9, 127
        brnz $m13, intew_f2i_store
        cmplt $m13, $m9, 190
        brnz $m13, intew_f2i_shift
        # NaN: 0; infinities and |x| >= 2^63: the i64 bound of x's sign.
        cmpeq $m13, $m9, 255
        shl $m14, $m7, 9
        cmpeq $m14, $m14, 0
        cmpeq $m14, $m14, 0
        and $m13, $m13, $m14
        brnz $m13, intew_f2i_store
        add $m14, $m11, -1
        xor $m11, $m8, $m14
        shr $m14, $m14, 1
        xor $m12, $m8, $m14
        br intew_f2i_store
intew_f2i_shift:
        add $m13, $m9, -150
        brneg $m13, intew_f2i_right
        cmplt $m14, $m13, 32
        brz $m14, intew_f2i_high
        shl $m11, $m10, $m13
        setzi $m14, 31
        sub $m14, $m14, $m13
        shr $m12, $m10, 1
        shr $m12, $m12, $m14
        br intew_f2i_sign
intew_f2i_high:
        add $m14, $m13, -32
        shl $m12, $m10, $m14
        br intew_f2i_sign
intew_f2i_right:
        setzi $m14, 0
        sub $m14, $m14, $m13
        shr $m11, $m10, $m14
intew_f2i_sign:
        NEG64 $m11, $m12, $m8, $m13, $m14
intew_f2i_store:
        STI $m11, $m12
        .endm
        .endif

        .if OP == 24
        .macro BODY
        ld32 $m7, [$m2+=4]
        shl $m7, $m7, 1
        cmpeq $m7, $m7, 0
        add $m7, $m7, -1
        and $m7, $m7, 1
        st8 $m7, [$m5+=1]
        .endm
        .endif

        .if OP == 20
        .macro BODY
        ld32 $m7, [$m2+=8]
        st32 $m7, [$m5+=4]
        .endm
        .endif

        .text
        .globl intew
        .type intew, @function
        .align 8
intew:
        ld32 $m2, [$m0+0]
        ld32 $m3, [$m0+4]
        ld32 $m4, [$m0+8]
        ld32 $m5, [$m0+12]
        setzi $m0, N
        .if RED
        setzi $m3, I
        .endif
intew_element:
        BODY
        add $m0, $m0, -1
        brnz $m0, intew_element
        jmp $m15
        .size intew, . - intew
