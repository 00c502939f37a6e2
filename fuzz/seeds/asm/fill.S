# Fills a buffer of G 64-bit granules with a 32-bit pattern (0: zero-fill).
# State ($m0): +0 out. Call: `call $m15, fill`; returns with `jmp $m15`.

        .param G, 128
        .param VALUE, 0
        .if G <= 0
        .error "G must be positive"
        .endif
        .set G_LO, G / 6
        .set REMG, G % 6
        .cycles "20 + 6 * (14 + G_LO + (REMG > 0))"

        .text
        .globl fill
        .type fill, @function
        .align 8
fill:
        setzi $m1, fill_worker
        .rept 6
        run $m1, $m0
        .endr
        sync 0
        jmp $m15
        .size fill, . - fill

        .type fill_worker, @function
        .align 8
fill_worker:
        setzi $m7, G_LO
        mul $m5, $m1, $m7
        min $m6, $m1, REMG
        add $m5, $m5, $m6
        shl $m5, $m5, 3
        cmplt $m6, $m1, REMG
        add $m6, $m6, $m7
        brz $m6, fill_done
        ld32 $m4, [$m0+0]
        add $m4, $m4, $m5
        setzi $a0, VALUE & 0xfffff
        sethi $a0, (VALUE >> 16) & 0xffff
        mova $a1, $a0
        rpt $m6, fill_loop_end
        st64 $a0:1, [$m4+=8]
fill_loop_end:
fill_done:
        exit
        .size fill_worker, . - fill_worker
